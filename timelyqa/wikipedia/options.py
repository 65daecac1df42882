"""What a Wikipedia run is told: where the pages come from and its settings, parsed one way for the CLI and the flow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from timelyqa.errors import ConfigError
from timelyqa.mediawiki.wiki import Wiki as Source, source_of  # noqa: F401 (the run's source, named here too)
from timelyqa.settings import Settings as BaseSettings
from timelyqa.wikipedia.labels import DOMAIN_CAP, HORIZON

MAX_HORIZON_DAYS = 366
"""The longest horizon: it asks whether an answer moves soon after the window (DailyQA watches a week); past a year
`frequent_update` says nothing of a weekly benchmark, and the window's end plus it must stay a date."""


class Settings(BaseSettings):
    """What shapes a run's output besides its pages; recorded in the manifest. `of` (a flow's and the CLI's way)
    turns a wrong value into a one-line ConfigError; built in code, a model's ValidationError says what is wrong."""

    CHECKED_IN_CODE: ClassVar[bool] = False

    start: datetime
    end: datetime
    """Questions are about values changed in (start, end]; answers are as of `end`."""
    seed: int = 0
    cap_per_domain: int = Field(default=DOMAIN_CAP, ge=1, description="most questions per domain")
    horizon_days: int = Field(default=HORIZON.days, ge=0, le=MAX_HORIZON_DAYS,
                              description="days after the end watched for changes")
    generator: Literal["template", "llm"] = "template"
    llm_domains: bool = False

    @model_validator(mode="after")
    def _window(self) -> Settings:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError(f"window {self.start} .. {self.end}: give both ends with a time zone (revisions are "
                             "in UTC)")
        if not self.start < self.end:
            raise ValueError(f"window {self.start.isoformat()} .. {self.end.isoformat()}: the start must come before "
                             "the end")
        return self

    @property
    def horizon(self) -> timedelta:
        return timedelta(days=self.horizon_days)


def parse_moment(text: str, option: str, *, end_of_day: bool = False) -> datetime:
    """'2026-11-16' (midnight UTC, or the day's last second with `end_of_day`) or an ISO time; UTC when no zone."""
    try:
        if len(text) == 10:
            day = datetime.fromisoformat(text).replace(tzinfo=UTC)
            return day + timedelta(days=1, seconds=-1) if end_of_day else day
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option} {text!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def window(start: str | None, end: str | None, *, days: int = 7, now: datetime | None = None
           ) -> tuple[datetime, datetime]:
    """The window from its two ends as given; a missing end is the last midnight UTC, a missing start `days` before."""
    today = (now or datetime.now(UTC)).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    stop = parse_moment(end, "--end") if end else today
    return (parse_moment(start, "--start") if start else stop - timedelta(days=days)), stop
