"""The clock a run reads: the real one, or the moment a run dated by its inputs (the demo) is given.

A run that must give the same bytes on any day (`timelyqa demo`) sets the clock for its block with `fixed`; every
`now()` in this process reads it, and so does every crawl process started in the block (spiders/clock.py), since
the moment travels in the environment variable TIMELYQA_CLOCK that they inherit. Live runs leave it unset and read
the real clock.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from timelyqa.errors import ConfigError

CLOCK_ENV = "TIMELYQA_CLOCK"


def now() -> datetime:
    """The injected moment when there is one, else the real clock; in UTC."""
    value = os.environ.get(CLOCK_ENV)
    return parse(value) if value else datetime.now(UTC)


def parse(value: str) -> datetime:
    """An ISO 8601 moment with its offset, in UTC; ConfigError naming the variable otherwise."""
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise ConfigError(f"{CLOCK_ENV}={value!r}: not an ISO 8601 moment with its offset "
                          "(e.g. 2026-11-16T09:00:00+00:00)")
    return at.astimezone(UTC)


@contextmanager
def fixed(at: datetime) -> Iterator[datetime]:
    """Within the block, `now()` here and in every crawl process started from here is `at`."""
    if at.tzinfo is None:
        raise ValueError("a fixed clock needs a timezone")
    at = at.astimezone(UTC)
    before = os.environ.get(CLOCK_ENV)
    os.environ[CLOCK_ENV] = at.isoformat()
    try:
        yield at
    finally:
        if before is None:
            os.environ.pop(CLOCK_ENV, None)
        else:
            os.environ[CLOCK_ENV] = before
