"""What an official-site run is told, parsed once: `timelyqa official` builds it from its options, the official
flow from its parameters; `timelyqa live resolve` and the official-resolve flow build a `ResolveRequest` alike. Each
value has one default and one check here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from timelyqa import checks
from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.official import health, pipeline
from timelyqa.official.catalog import Catalog, load
from timelyqa.official.clock import parse_at
from timelyqa.official.origin import allow_host
from timelyqa.official.pages import PageStore
from timelyqa.official.resolve import resolve as resolve_all
from timelyqa.official.resolve import write_answers
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
        return allowed_hosts(entries)

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


class ResolveRequest(Settings):
    """`recipes` answered at the clock `at` (default: when the run starts) into `out/answers.parquet`, the page
    copies read kept in `out/pages`."""

    recipes: Path
    out: checks.OutFolder
    at: datetime | None = Field(default=None, description="the evaluation clock, ISO with its offset")
    variables: dict[str, str] = Field(default_factory=dict, description="NAME=VALUE for a recipe's {NAME}")
    allow_hosts: list[str] = Field(default_factory=list, description="private hosts recipes may reach")
    allow_workflows: bool = Field(default=False, description="run the Python workflows the operator's files name")
    workflow_timeout: float = Field(default=60.0, ge=1, description="seconds a workflow may run")
    extract_timeout: float = Field(default=10.0, ge=0.1,
                                   description="seconds one recipe may spend reading its pages at a clock")

    @field_validator("at", mode="before")
    @classmethod
    def _at(cls, clock: Any) -> Any:
        return clock_of(clock) if isinstance(clock, str) else clock

    @field_validator("allow_hosts")
    @classmethod
    def _hosts(cls, entries: list[str]) -> list[str]:
        return allowed_hosts(entries)


@dataclass(frozen=True)
class Resolved:
    """What a resolve wrote (answers.parquet), and at which clock."""

    path: Path
    clock: datetime


def recipes_of(request: ResolveRequest) -> Catalog:
    """The request's recipes, and those refused (each with the file and the reason) before any runs."""
    return load(request.recipes, allow_workflows=request.allow_workflows)


def resolve(request: ResolveRequest, catalog: Catalog, *, crawl: Crawl) -> Resolved:
    """Every recipe of the catalog (`recipes_of` the request) at the request's clock, through `crawl`; ConfigError
    when not one recipe is valid."""
    if not catalog.recipes:
        raise ConfigError(f"--recipes {request.recipes}: no valid recipe ({len(catalog.refused)} refused)")
    clock = request.at or datetime.now(UTC)
    answers = resolve_all(catalog.recipes, [clock], request.out / "work", crawl=crawl,
                          store=PageStore(request.out / "pages"), variables=request.variables,
                          workflows=catalog.workflows, workflow_timeout=request.workflow_timeout,
                          allow_hosts=request.allow_hosts, extract_seconds=request.extract_timeout)
    return Resolved(write_answers(answers, request.out), clock)


def allowed_hosts(entries: list[str]) -> list[str]:
    """The hosts the operator lets recipes reach though private (HOST or HOST:PORT), each checked; ConfigError naming
    a bad one."""
    try:
        return [allow_host(entry) for entry in entries]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


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
