"""The exception vocabulary: each class tells the runner what to do next."""

from __future__ import annotations


class TimelyQAError(Exception):
    """Base class; the message is one line fit to show a user."""


class ConfigError(TimelyQAError):
    """A setting or an input path is wrong: stop before any work, never retry."""


class TransientSourceError(TimelyQAError):
    """A source failed in a way that may pass (timeout, refused connection, 429, 5xx): retry with backoff."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SourceContractError(TimelyQAError):
    """A source answered in a shape we do not understand (HTML for JSON, a cut body): fail that shard, report it."""


class GateFailed(TimelyQAError):
    """A release is worse than its pinned floors."""


def is_transient(exc: BaseException) -> bool:
    """The one retry rule the flows use: only transient source failures are retried."""
    return isinstance(exc, TransientSourceError)
