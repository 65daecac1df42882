"""The injected clock (timelyqa.clock, spiders/clock.py): what a run dated by its inputs stamps, and a wrong value
named before any work."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from spiders import clock as crawl_clock
from spiders.run import command
from timelyqa import clock
from timelyqa.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
AT = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)


def test_without_an_injected_clock_the_crawl_stamps_the_real_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(clock.CLOCK_ENV, raising=False)
    stamp = datetime.fromisoformat(crawl_clock.fetched_at())
    assert abs(stamp - datetime.now(UTC)) < timedelta(seconds=5) and stamp.utcoffset() == timedelta(0)


def test_a_fixed_clock_reaches_this_process_and_the_processes_it_starts_and_is_undone_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(clock.CLOCK_ENV, raising=False)
    with clock.fixed(AT.astimezone(timezone(timedelta(hours=-5)))) as at:
        assert at == AT and clock.now() == AT and crawl_clock.fetched_at() == "2026-11-16T09:00:00+00:00"
        child = subprocess.run([sys.executable, "-c", "from spiders.clock import fetched_at; print(fetched_at())"],
                               capture_output=True, text=True, cwd=ROOT, check=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert child.stdout.strip() == "2026-11-16T09:00:00+00:00"
    assert clock.CLOCK_ENV not in os.environ


@pytest.mark.parametrize("value", ["yesterday", "2026-11-16T09:00:00", "2026-13-01T00:00:00+00:00"])
def test_a_wrong_clock_is_named_before_a_crawl_starts(value: str, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv(clock.CLOCK_ENV, value)
    with pytest.raises(ConfigError) as err:
        command("site_tree", {"roots": "[]"}, tmp_path / "crawl")
    assert str(err.value).startswith(f"TIMELYQA_CLOCK={value!r}: not an ISO 8601 moment with its offset")
    assert not (tmp_path / "crawl").exists()
