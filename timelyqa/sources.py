"""The source registry: one entry per source says everything the shared code needs to know of it.

A source is one package plus one entry: its `SOURCE`, named in the entry-point group `timelyqa.sources` of the
package's metadata (`[project.entry-points."timelyqa.sources"]`). The split, the release and its card, the flows,
the CLI and the test of `prefect.yaml` read the entry; nothing else is edited to add a source. An entry is a pure
description: it names the function that runs the source (`run`, "module:function"), imported only when it runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from dataclasses import dataclass, field
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

GROUP = "timelyqa.sources"
"""The entry-point group sources are discovered from: `name = "package.module:SOURCE"`."""
BUILTIN = ("wikidata", "wikipedia", "site_tree", "news", "official_site")
"""The sources this project ships, in the order they run in the demo; any other comes after them, by name."""
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
    """The source's Prefect deployment: its name, its flow's entrypoint ("module:flow") and default schedule (UTC).

    prefect.yaml lists the built-in sources' deployments; for a source it does not list, `make serve` deploys this
    one with `parameters`, and `make serve-demo` with `demo` over them (the bundled inputs, no network), each writing
    to `out/<source>` (`out/serve-demo/<source>`) unless the parameters say otherwise (scripts/serve.py)."""

    name: str
    entrypoint: str
    cron: str
    parameters: Mapping[str, object] = field(default_factory=dict, hash=False)
    """The flow's parameters when deployed: what it reads live by default."""
    demo: Mapping[str, object] = field(default_factory=dict, hash=False)
    """The parameters `make serve-demo` gives it instead: the source's bundled inputs."""


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
    run: str
    """Where the function is (`"module:function"`) that runs the source with its default settings on inputs like
    `demo_inputs` into a folder: `(inputs, out, progress, crawl) -> Manifest`, `crawl` the crawler's port
    (timelyqa.crawling.Crawl), which a source that crawls nothing leaves alone. Imported when it runs."""
    demo_inputs: tuple[str, ...]
    """The bundled inputs `make demo` runs it on, relative to the repository root."""
    fixtures: tuple[str, ...]
    """Stored inputs in the same real formats, relative to the repository root, that a test runs it on."""
    refresh_to_train: bool = False
    """LiveNewsBench's refresh rule (its section 2.3, "quarterly", here any period): when a release's newest month
    is later than the previous release's, the rows the previous release had in validation or test move to train,
    and rows once in train stay there (timelyqa.split.keep_in_train). Off, the temporal rule alone decides, and a
    row moves with the window (test, then validation, then train)."""
    spider: str | None = None
    """The spider its crawls run: a name in `spiders/` (site_tree, news, official) or "module:Class" for a spider
    of the source's own package (spiders/loader.py); None for a source that crawls nothing."""
    command: str | None = None
    """Where its `timelyqa` command is ("module:attr": a Typer app, or a function Typer makes a command of). The CLI
    registers it for every discovered source that is not built in; the built-ins' name their module of timelyqa.cli.
    Imported when the CLI starts: a light module, importing its pipeline only when the command runs."""
    released: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    """The rows the source's config releases once every row has its split, when that is not all of them (official
    sites: test holds the live questions with their recipes, train and validation the resolved snapshots). A row with
    no fixed answer (`answer` empty) is released in its source's config only, beside what answers it."""

    @property
    def runner(self) -> Callable[[Sequence[Path], Path, Progress | None, Crawl], Manifest]:
        """The function `run` names, imported; ConfigError naming the entry when it is not there."""
        found = load_attr(self.run, f"source {self.name!r}: run")
        if not callable(found):
            raise ConfigError(f"source {self.name!r}: run = {self.run!r} names no function (\"module:function\")")
        return found  # type: ignore[no-any-return]

    def run_on(self, inputs: Sequence[Path], out: Path, progress: Progress | None = None, *, crawl: Crawl
               ) -> Manifest:
        """The source with its default settings on `inputs` into `out`, crawling (if it does) through `crawl`."""
        return self.runner(inputs, out, progress, crawl)

    def demo(self, out: Path, progress: Progress | None = None, *, crawl: Crawl) -> Manifest:
        """The source on its bundled inputs into `out`; a crawled source crawls through `crawl` (the crawler's)."""
        return self.run_on([ROOT / path for path in self.demo_inputs], out, progress, crawl=crawl)

    @property
    def command_object(self) -> object | None:
        """What `command` names, imported (a Typer app or a function); ConfigError naming the entry when it does not
        load, None when the source has no command."""
        if self.command is None:
            return None
        found = load_attr(self.command, f"source {self.name!r}: command")
        if not callable(found):
            raise ConfigError(f"source {self.name!r}: command = {self.command!r} names no Typer app or function "
                              "(\"module:attr\")")
        return found

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
    """Every registered source by name: the built-in ones in the demo's order, then the others by name. The
    entry-point group is read on first use; a broken entry point is a ConfigError naming it."""
    global _loaded
    if not _loaded:
        for spec in discover(entry_points(group=GROUP)):
            register(spec)
        _loaded = True
    order = {name: n for n, name in enumerate(BUILTIN)}
    return dict(sorted(_registered.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def discover(found: Sequence[EntryPoint]) -> list[SourceSpec]:
    """The SourceSpec of each entry point; ConfigError on the first that does not load one, or when a built-in
    source has none (the installed metadata predates the group: reinstall the project)."""
    specs = []
    for point in found:
        try:
            spec = point.load()
        except Exception as exc:  # noqa: BLE001 - any failure to import a plug-in is that entry point's fault
            raise ConfigError(f"entry point {point.name} = {point.value!r} ({GROUP}) does not load: "
                              f"{type(exc).__name__}: {exc}") from None
        if not isinstance(spec, SourceSpec):
            raise ConfigError(f"entry point {point.name} = {point.value!r} ({GROUP}) is a {type(spec).__name__}, "
                              "not a SourceSpec")
        if spec.name != point.name:
            raise ConfigError(f"entry point {point.name} = {point.value!r} ({GROUP}) holds source {spec.name!r}: "
                              "name the entry point after its source")
        specs.append(spec)
    missing = [name for name in BUILTIN if name not in {s.name for s in specs}]
    if missing:
        raise ConfigError(f"no {GROUP} entry point for {', '.join(missing)}: the installed metadata predates them; "
                          "reinstall the project (uv pip install -e .)")
    return specs


def outputs(root: str = "out") -> list[str]:
    """The folder each registered source writes to under `root` (`out/<source>`), in the demo's order: what a release
    reads by default (flows/release.py, `make serve`)."""
    return [f"{root}/{name}" for name in sources()]


def load_attr(reference: str, what: str) -> object:
    """The object `reference` ("module:attr") names, imported; ConfigError naming `what` it is when it does not
    load."""
    module, _, name = reference.partition(":")
    try:
        return getattr(importlib.import_module(module), name) if module and name else None
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{what} = {reference!r} does not load ({type(exc).__name__}: {exc})") from None


def get(name: str) -> SourceSpec:
    found = sources().get(name)
    if found is None:
        raise ConfigError(f"source {name!r} is not registered (known: {', '.join(sorted(sources()))})")
    return found
