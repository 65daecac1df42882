"""What an official-site run is told, parsed once: `timelyqa official` builds it from its options, the official
flow from its parameters; each value has one default and one check here."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from timelyqa import checks
from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.official import health, pipeline
from timelyqa.official.clock import parse_at
from timelyqa.official.origin import allow_host
from timelyqa.settings import Settings


class OfficialRequest(Settings):
    """`recipes` (or a bundled world, `bundle`) checked at the clocks `at`, the history in `state` (default
    `out/state`), and the source's rows built into `out`."""

    out: checks.OutFolder
    recipes: Path | None = None
    bundle: Path | None = None
    state: Path | None = None
    at: list[datetime] = Field(default_factory=list, description="clocks to check the recipes at first")
    variables: dict[str, str] = Field(default_factory=dict, description="NAME=VALUE for a recipe's {NAME}")
    broken_after: int = Field(default=health.BROKEN_AFTER, ge=1,
                              description="days in a row of failures that make a recipe broken")
    allow_hosts: list[str] = Field(default_factory=list, description="private hosts recipes may reach")
    repair: bool = False
    llm_secret_block: str | None = None

    @field_validator("state")
    @classmethod
    def _state(cls, state: Path | None) -> Path | None:
        return None if state is None else checks.out_folder(state, "--state")

    @field_validator("at", mode="before")
    @classmethod
    def _at(cls, clocks: Any) -> Any:
        return [clock_of(c) if isinstance(c, str) else c for c in clocks or []]

    @field_validator("allow_hosts")
    @classmethod
    def _hosts(cls, entries: list[str]) -> list[str]:
        try:
            return [allow_host(entry) for entry in entries]
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    @model_validator(mode="after")
    def _one_input(self) -> OfficialRequest:
        if (self.recipes is None) == (self.bundle is None):
            # Both: a run meant for a bundled world must never check the live recipes of a deployment's default.
            both = ("" if self.recipes is None else
                    f" (recipes {self.recipes}, bundle {self.bundle}): set the other null")
            raise ConfigError(f"give recipes (a folder of recipe files) or a bundle, one of them{both}")
        return self

    @property
    def state_dir(self) -> Path:
        return self.state or self.out / "state"


def clock_of(text: str) -> datetime:
    """An evaluation clock as given (ISO with its offset); ConfigError naming `--at` and the text otherwise."""
    try:
        return parse_at(text)
    except ValueError as exc:
        raise ConfigError(f"--at {text!r}: {exc}") from None


def run(request: OfficialRequest, *, crawl: Crawl) -> Manifest:
    """`timelyqa official`: the recipes checked at the request's clocks through `crawl` (none: the history as it
    is), then the rows built."""
    if request.recipes is None:
        raise ConfigError("give --recipes, a recipe file or a folder of them")
    return pipeline.run(request.recipes, request.state_dir, request.out, crawl=crawl, clocks=request.at,
                        variables=request.variables, broken_after=request.broken_after,
                        allow_hosts=request.allow_hosts)
