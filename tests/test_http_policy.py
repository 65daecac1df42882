"""The one retry policy every HTTP client shares: what retries, how long it waits, when it gives up."""

from __future__ import annotations

import email.utils

import pytest

from timelyqa.errors import ConfigError, TransientSourceError
from timelyqa.http import RetryPolicy, asked_wait, retry_after, transient_status

NOW = 1_800_000_000.0


@pytest.mark.parametrize(("status", "retried"), [(408, True), (425, True), (429, True), (500, True), (503, True),
                                                 (599, True), (400, False), (401, False), (403, False),
                                                 (404, False), (412, False), (200, False)])
def test_which_statuses_are_worth_asking_again(status: int, retried: bool) -> None:
    assert transient_status(status) is retried


@pytest.mark.parametrize(("header", "seconds"), [
    ("7", 7.0), ("0", 0.0), ("-3", 0.0), ("2.5", 2.5),
    (email.utils.formatdate(NOW + 30, usegmt=True), 30.0),  # an HTTP date, less the time until then
    (email.utils.formatdate(NOW - 30, usegmt=True), 0.0),  # a date already past: no wait, never a negative one
    ("soon", None), ("", None), (None, None)])
def test_retry_after_in_seconds_or_as_an_http_date(header: str | None, seconds: float | None) -> None:
    assert retry_after(header, now=lambda: NOW) == seconds


def test_openai_milliseconds_come_before_retry_after() -> None:
    assert asked_wait({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert asked_wait({"retry-after-ms": "bad", "retry-after": "9"}) == 9.0
    assert asked_wait({}) is None


def test_waits_double_from_the_backoff_and_honour_retry_after_up_to_the_cap() -> None:
    policy = RetryPolicy(retries=5, backoff=1.0, max_wait=10.0)
    assert [policy.wait(n) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
    assert policy.wait(0, asked=3.0) == 3.0 and policy.wait(4, asked=0.0) == 0.0
    assert policy.wait(0, asked=3600.0) == 10.0  # a server asking for an hour gets the cap


def test_a_transient_failure_is_tried_again_until_it_passes() -> None:
    waits: list[float] = []
    seen: list[tuple[int, str, float]] = []

    def attempt(n: int) -> str:
        if n < 2:
            raise TransientSourceError(f"HTTP 503 #{n}", retry_after=5.0 if n == 1 else None)
        return "answer"

    result = RetryPolicy(retries=3, backoff=0.5).run(attempt, sleep=waits.append,
                                                     on_retry=lambda n, exc, wait: seen.append((n, str(exc), wait)))
    assert result == "answer"
    assert waits == [0.5, 5.0]
    assert seen == [(0, "HTTP 503 #0", 0.5), (1, "HTTP 503 #1", 5.0)]


def test_the_last_failure_is_raised_as_it_is_after_the_last_try() -> None:
    waits: list[float] = []
    tries: list[int] = []

    def attempt(n: int) -> None:
        tries.append(n)
        raise TransientSourceError(f"HTTP 429 #{n}", retry_after=7.0)

    policy = RetryPolicy(retries=2, backoff=1.0)
    with pytest.raises(TransientSourceError) as caught:
        policy.run(attempt, sleep=waits.append)
    assert tries == [0, 1, 2] and policy.tries == 3
    assert waits == [7.0, 7.0]  # no wait after the last try
    assert str(caught.value) == "HTTP 429 #2" and caught.value.retry_after == 7.0


def test_a_wrong_setting_is_never_retried() -> None:
    waits: list[float] = []

    def attempt(n: int) -> None:
        raise ConfigError("https://example.org/w/api.php refused the request (HTTP 403)")

    with pytest.raises(ConfigError, match="HTTP 403"):
        RetryPolicy(retries=5).run(attempt, sleep=waits.append)
    assert waits == []
