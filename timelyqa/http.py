"""The one polite-HTTP retry policy: which answers may pass on their own, how long to wait before asking again
(the server's Retry-After, in seconds or as an HTTP date, else a doubling backoff, always capped), and who the
project's API clients say they are.

Every client that retries uses it: the MediaWiki client, the SPARQL endpoint, the LLM client, the dump mirror
and the Hub publisher. Each keeps its own words for what failed; the policy decides only whether and when.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from timelyqa.errors import TransientSourceError

T = TypeVar("T")

USER_AGENT = "timelyqa/0.1 (+https://github.com/timelyqa/timelyqa)"
"""How the project's API clients name themselves where no operator setting names a contact (Wikimedia's clients
require one: `timelyqa.useragent.wikimedia_user_agent`; crawls use `timelyqa.useragent.user_agent`)."""
TRANSIENT_STATUS = frozenset({408, 425, 429})
"""Statuses below 500 that may pass on their own (timeout, too early, too many requests); every 5xx may too."""


def transient_status(status: int) -> bool:
    """Whether an HTTP status is worth asking again after a wait; any other is an answer about the request."""
    return status in TRANSIENT_STATUS or status >= 500


def retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds a `Retry-After` header asks us to wait, given in seconds or as an HTTP date; None when it is absent
    or unreadable (the caller's own backoff applies). Never negative; the policy caps it."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


def asked_wait(headers: Mapping[str, str]) -> float | None:
    """The wait an answer's headers ask for: OpenAI's `retry-after-ms` when given, else `Retry-After`."""
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return retry_after(headers.get("retry-after"))


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` extra tries after a transient failure, waiting what the server asked or `backoff` seconds doubling
    each time, never more than `max_wait`."""

    retries: int = 4
    backoff: float = 1.0
    max_wait: float = 120.0

    @property
    def tries(self) -> int:
        return self.retries + 1

    def wait(self, attempt: int, asked: float | None = None) -> float:
        """Seconds to wait after failed try number `attempt` (from 0): `asked` (a Retry-After) or the backoff,
        capped at `max_wait`."""
        return min(self.backoff * 2**attempt if asked is None else max(asked, 0.0), self.max_wait)

    def run(self, attempt: Callable[[int], T], *, sleep: Callable[[float], None] = time.sleep,
            on_retry: Callable[[int, TransientSourceError, float], None] | None = None) -> T:
        """`attempt(n)` for n = 0, 1, ... until it returns. A TransientSourceError (its `retry_after` is what the
        server asked) is waited out and tried again while tries remain, then raised as it is, for the caller to
        say what failed in its own words; any other error ends the tries at once. `on_retry(n, error, wait)` runs
        before each wait (to count, to log); `sleep` does the waiting (a client shared by threads may hold them
        all)."""
        for n in range(self.retries + 1):
            try:
                return attempt(n)
            except TransientSourceError as exc:
                if n == self.retries:
                    raise
                wait = self.wait(n, exc.retry_after)
                if on_retry is not None:
                    on_retry(n, exc, wait)
                sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover
