"""Why a request gave no page, in the snake_case reasons crawl stats and pages.parquet carry."""

from __future__ import annotations

from scrapy.exceptions import (CannotResolveHostError, DownloadCancelledError, DownloadConnectionRefusedError,
                               DownloadFailedError, DownloadTimeoutError, IgnoreRequest, ResponseDataLossError)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (DownloadTimeoutError, "timeout"),
    (DownloadConnectionRefusedError, "connection_refused"),
    (CannotResolveHostError, "dns_failure"),
    (DownloadCancelledError, "body_too_large"),  # DOWNLOAD_MAXSIZE cancels the download
    (ResponseDataLossError, "data_loss"),
    (DownloadFailedError, "download_failed"),
)


def failure_reason(failure: Failure) -> str:
    """The reason a request failed; IgnoreRequest says its own (`robots_disallowed`, a guard's, `redirect_limit`)."""
    if failure.check(HttpError):  # an answer Scrapy would not follow or read: a redirect to file:, ftp:, ...
        status = failure.value.response.status
        return "redirect_not_http" if 300 <= status < 400 else f"http_{status}"
    if failure.check(IgnoreRequest):
        text = str(failure.value)
        if "robots.txt" in text.lower():
            return "robots_disallowed"
        if "max redirections" in text.lower():
            return "redirect_limit"
        if "DOWNLOAD_MAXSIZE" in text:  # a body that decompresses past the limit (a gzip or deflate bomb)
            return "body_too_large"
        return text.split(":", 1)[0] if ":" in text else "ignored"
    for kind, reason in _REASONS:
        if failure.check(kind):
            return reason
    return type(failure.value).__name__.lower()
