"""What a Wikipedia run is told, parsed once: `timelyqa wikipedia` builds it from its options, the wikipedia flow from
its parameters; each value has one default and one check here."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from timelyqa import checks
from timelyqa.manifest import Manifest
from timelyqa.settings import Settings
from timelyqa.sources import Progress
from timelyqa.wikipedia import options, pipeline, writers
from timelyqa.wikipedia.labels import DOMAIN_CAP, HORIZON

DAYS = 7
"""The window's length when its start is not given: a week, as the weekly deployment reads."""


class WikipediaRequest(Settings):
    """Pages from `dump` or `api`, the window `start`..`end` (a missing end: the last midnight UTC; a missing start:
    `days` before it), the questions' settings, and the release whose rows are answered again."""

    out: checks.OutFolder
    dump: Path | None = None
    api: str | None = None
    start: str | None = None
    end: str | None = None
    days: int = Field(default=DAYS, ge=1, description="the window's days when start is not given")
    seed: int = 0
    cap_per_domain: int = Field(default=DOMAIN_CAP, ge=1, description="most questions per domain")
    horizon_days: int = HORIZON.days
    generator: Literal["template", "llm"] = "template"
    llm_domains: bool = False
    user_agent: str | None = None
    previous: Path | None = None
    llm_secret_block: str | None = None

    @field_validator("api")
    @classmethod
    def _api(cls, api: str | None) -> str | None:
        return None if api is None else checks.http_url(api, "--api")

    @field_validator("horizon_days")
    @classmethod
    def _horizon(cls, days: int) -> int:
        return checks.bounded(days, "--horizon-days", 0, options.MAX_HORIZON_DAYS,
                              "a negative horizon watches nothing; past a year it says nothing of a weekly question")

    @field_validator("previous")
    @classmethod
    def _previous(cls, previous: Path | None) -> Path | None:
        # Not there yet: the weekly flow's first week (nothing to re-check); there: a release or an earlier output.
        return checks.previous_folder(previous) if previous is not None and previous.exists() else previous

    def source(self) -> options.Source:
        """The pages' source: the dump, or the API with its User-Agent (exactly one of them)."""
        return options.source_of(self.dump, self.api, self.user_agent)

    def window(self, now: datetime | None = None) -> tuple[datetime, datetime]:
        return options.window(self.start, self.end, days=self.days, now=now)

    def settings(self, now: datetime | None = None) -> options.Settings:
        """What shapes the output besides the pages; `now` is the clock a window without an end is read at."""
        start, end = self.window(now)
        return options.Settings.of(start=start, end=end, seed=self.seed, cap_per_domain=self.cap_per_domain,
                                   horizon_days=self.horizon_days, generator=self.generator,
                                   llm_domains=self.llm_domains)


def run(request: WikipediaRequest, *, progress: Progress | None = None) -> Manifest:
    """`timelyqa wikipedia`: the whole source in one call, its models checked before any work."""
    if request.previous is not None:  # typed by a person: a folder not there is a mistake, not a first week
        checks.previous_folder(request.previous, "--previous")
    source = request.source()
    settings = request.settings()
    cache = request.out / "llm-cache"
    writer = writers.llm_writer(cache_dir=cache) if settings.generator == "llm" else None
    domains = writers.llm_domains(cache_dir=cache, writer=writer) if settings.llm_domains else None
    return pipeline.run(source, request.out, settings, writer=writer, domains=domains, progress=progress,
                        previous=request.previous)
