"""The source registry: one entry per source says everything the shared code needs to know of it.

A source is one package plus one entry here. The split, the release and its card, the flows, the CLI
and the test of `prefect.yaml` read the entry; nothing else is edited to add a source.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.reasons import Reason
from timelyqa.record import QARecord, polars_schema

if TYPE_CHECKING:
    from timelyqa.crawling import Crawl
    from timelyqa.manifest import Manifest

BUILTIN = ("timelyqa.wikidata.source", "timelyqa.wikipedia.source", "timelyqa.site_tree.source",
           "timelyqa.news.source", "timelyqa.official.source")
"""The modules whose `SOURCE` is registered on first use, in the order sources run in the demo."""
QUESTIONS = "questions"
"""The funnel's last line in every source: the rows written to questions.parquet."""
Progress = Callable[[str, int, int], None]
ROOT = Path(__file__).resolve().parent.parent
"""The repository root, which the registry's input paths are relative to."""


@dataclass(frozen=True)
class Stage:
    """One stage of a source's funnel: the lines it counts, in order, and the reasons it drops for."""

    name: str
    counts: tuple[str, ...] = ()
    reasons: tuple[type[Reason], ...] = ()


@dataclass(frozen=True)
class GroupKey:
    """The rows that must share a split (they share facts): the column the key needs, the key, and it in words."""

    column: str
    expr: pl.Expr
    text: str


@dataclass(frozen=True)
class Deployment:
    """The source's Prefect deployment in prefect.yaml: its name, its flow's entrypoint and default schedule."""

    name: str
    entrypoint: str
    cron: str


@dataclass(frozen=True)
class Card:
    """What the dataset card says of the source: a phrase for its list of sources, and a section of its own."""

    summary: str
    section: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceSpec:
    """Everything the shared code needs to know of one source."""

    name: str
    record: type[QARecord]
    group_key: GroupKey | None
    licence: str
    """The Hub's licence id for the rows (`other` when the terms follow each row's evidence pages)."""
    card: Card
    stages: tuple[Stage, ...]
    deployment: Deployment
    run: Callable[[Sequence[Path], Path, Progress | None, Crawl], Manifest]
    """Run the source with its default settings on inputs like `demo_inputs` into a folder."""
    demo_inputs: tuple[str, ...]
    """The bundled inputs `make demo` runs it on, relative to the repository root."""
    fixtures: tuple[str, ...]
    """Stored inputs in the same real formats, relative to the repository root, that a test runs it on."""
    refresh_to_train: bool = False
    """LiveNewsBench's refresh rule (its section 2.3, "quarterly", here any period): when a release's newest month
    is later than the previous release's, the rows the previous release had in validation or test move to train,
    and rows once in train stay there (timelyqa.split.keep_in_train). Off, the temporal rule alone decides, and a
    row moves with the window (test, then validation, then train)."""
    released: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    """The rows the source's config releases once every row has its split, when that is not all of them (official
    sites: test holds the live questions with their recipes, train and validation the resolved snapshots). A row with
    no fixed answer (`answer` empty) is released in its source's config only, beside what answers it."""

    def demo(self, out: Path, progress: Progress | None = None, *, crawl: Crawl) -> Manifest:
        """The source on its bundled inputs into `out`; a crawled source crawls through `crawl` (the crawler's)."""
        return self.run([ROOT / path for path in self.demo_inputs], out, progress, crawl)

    @cached_property
    def schema(self) -> pl.Schema:
        """The polars schema of questions.parquet, derived from the record model (never written twice)."""
        return polars_schema(self.record)

    @cached_property
    def funnel(self) -> tuple[str, ...]:
        return (*(line for stage in self.stages for line in stage.counts), QUESTIONS)

    @cached_property
    def reasons(self) -> tuple[Reason, ...]:
        """Every reason the source drops for, in stage order."""
        return tuple(reason for stage in self.stages for family in stage.reasons for reason in family)

    @cached_property
    def reason_stage(self) -> dict[str, str]:
        """The stage each reject reason belongs to."""
        return {str(r): stage.name for stage in self.stages for family in stage.reasons for r in family}


_registered: dict[str, SourceSpec] = {}
_loaded = False


def register(spec: SourceSpec) -> SourceSpec:
    """Add a source; its name must be free, its reasons unique within it."""
    other = _registered.get(spec.name)
    if other is not None and other is not spec:
        raise ValueError(f"source {spec.name!r} is registered already")
    values = [str(r) for r in spec.reasons]
    if len(values) != len(set(values)):
        raise ValueError(f"source {spec.name!r}: a reject reason is declared twice")
    _registered[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _registered.pop(name, None)


def sources() -> dict[str, SourceSpec]:
    """Every registered source by name, the built-in ones first."""
    global _loaded
    if not _loaded:
        for module in BUILTIN:
            register(importlib.import_module(module).SOURCE)
        _loaded = True
    return dict(_registered)


def get(name: str) -> SourceSpec:
    found = sources().get(name)
    if found is None:
        raise ConfigError(f"source {name!r} is not registered (known: {', '.join(sorted(sources()))})")
    return found
