"""What a news run is told, parsed once: `timelyqa news` builds it from its options, the news flow from its
parameters; each value has one default and one check here."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from timelyqa import checks
from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.mediawiki.wiki import source_of
from timelyqa.news import pipeline
from timelyqa.news.llm import llm_news_writer
from timelyqa.news.outlets import Outlets
from timelyqa.settings import Settings

WIKIPEDIA_API = "https://en.wikipedia.org/w/api.php"
"""The wiki whose Current Events Portal is read when neither a dump nor another API is named."""


def news_day(text: str | date | None, option: str) -> date | None:
    """A day as given (YYYY-MM-DD), None when not given; ConfigError naming the option and the text otherwise."""
    if text is None or isinstance(text, date):
        return text
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option} {text!r}: not a date (YYYY-MM-DD); news start/end must be ISO dates") from None


def window(start: str | date | None, end: str | date | None, days: int, today: date | None = None
           ) -> tuple[date, date]:
    """`start`..`end`, by default the `days` days before `today` (UTC; in a deployment's run, the day it was scheduled
    for): today's page is still being written."""
    last = news_day(end, "--end") or (today or datetime.now(UTC).date()) - timedelta(days=1)
    return news_day(start, "--start") or last - timedelta(days=days - 1), last


class NewsRequest(Settings):
    """The day pages `start`..`end` (by default the `days` before today) from `api` or `dump`, or a bundled
    `archive_dir`; the articles they cite on the outlets of `outlets`; the questions' settings."""

    out: checks.OutFolder
    api: str | None = None
    dump: Path | None = None
    archive_dir: Path | None = None
    outlets: Path | None = None
    start: date | None = None
    end: date | None = None
    days: int = Field(default=1, ge=1, description="the days read when start and end are not given")
    generator: Literal["template", "llm"] = "template"
    seed: int = 0
    archive: Literal["none", "wayback", "archive_today"] = "none"
    archive_base: str | None = None
    user_agent: str | None = None
    llm_secret_block: str | None = None

    @field_validator("api", "archive_base")
    @classmethod
    def _url(cls, url: str | None, info: Any) -> str | None:
        return None if url is None else checks.http_url(url, "--" + info.field_name.replace("_", "-"))

    @field_validator("start", "end", mode="before")
    @classmethod
    def _day(cls, text: Any, info: Any) -> date | None:
        return news_day(text, "--" + info.field_name)

    def wiki(self) -> Any:
        """Where the day pages come from: the bundled archive's export, the dump, or the API (its User-Agent)."""
        if self.archive_dir is not None:
            return self.archive_dir / "portal.xml"
        return source_of(self.dump, self.api if (self.api or self.dump) else WIKIPEDIA_API, self.user_agent)

    def allow_list(self) -> Path:
        """The outlets' allow-list: as given, else the bundled archive's, else LiveNewsBench's Figure 4."""
        if self.outlets is not None:
            return self.outlets
        if self.archive_dir is not None:
            return self.archive_dir / "outlets.yaml"
        return Outlets.default().source

    def window(self, today: date | None = None) -> tuple[date, date]:
        """The days read: the archive's whole span, or `start`..`end`, by default the `days` days before `today`
        (UTC): today's page is still being written."""
        if self.archive_dir is not None:
            return pipeline.archive_days(self.archive_dir / "portal.xml")
        return window(self.start, self.end, self.days, today)

    def settings(self, today: date | None = None) -> pipeline.Settings:
        first, last = self.window(today)
        return pipeline.Settings.of(start=first, end=last, generator=self.generator, seed=self.seed,
                                    archive=self.archive)

    @property
    def tuned(self) -> dict[str, Any] | None:
        """The crawl's pace: a bundled archive is served here, so no politeness delay is owed to it."""
        return pipeline.LOCAL_PACE if self.archive_dir is not None else None


def run(request: NewsRequest, *, crawl: Crawl) -> Manifest:
    """`timelyqa news`: every step in turn through `crawl`, the models checked before any work."""
    source = request.wiki()
    settings = request.settings()
    writer = llm_news_writer(cache_dir=request.out / "llm-cache") if settings.generator == "llm" else None
    return pipeline.run(source, request.allow_list(), settings, request.out, crawl=crawl, writer=writer,
                        archive_base=request.archive_base, tuned=request.tuned)
