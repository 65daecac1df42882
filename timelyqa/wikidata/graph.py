"""Look-ups into the T1 graph for question synthesis, fetched in batches from a backend.

Only the neighbourhood the questions need is held in memory: the triples of given subjects, the
subjects of given (property, object) keys up to a fan-out cap, and labels of the entities involved.
The backend answers those three look-ups: the T1 snapshot's parquet tables in the dump mode
(`ParquetBackend`), the Wikidata API and a SPARQL endpoint in the incremental mode
(`timelyqa.wikidata.incremental`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Protocol

import polars as pl

from timelyqa.wikidata.values import Kind, split_quantity

Edge = tuple[str, str, Kind]
"""(property, object form, object kind) of a triple whose subject is known."""
Triple = tuple[str, str, str, str]
"""(subject, property, object form, object kind) as the snapshot's triples.parquet holds them."""
EntityRow = tuple[str, str | None, list[str] | None, datetime | None, str | None]
"""(id, English label, English aliases, modified, property datatype) as entities.parquet holds them."""
Key = tuple[str, str]
"""(property, object form)."""


class Backend(Protocol):
    """Where a Graph's look-ups go; each call gets a sorted batch of what is not yet known."""

    def datatypes(self) -> dict[str, str | None]:
        """The datatypes known before any look-up (every property of a snapshot, or none)."""
        ...

    def triples(self, subjects: list[str]) -> Iterable[Triple]:
        """The distinct T1 triples of these subjects."""
        ...

    def subjects(self, keys: list[Key], cap: int) -> dict[Key, frozenset[str] | None]:
        """Every subject of each key in T1, None past `cap` subjects; a key with none may be left out."""
        ...

    def entities(self, ids: list[str]) -> Iterable[EntityRow]:
        """The labels (and aliases, modified, datatype) of those of `ids` that exist in T1."""
        ...


class ParquetBackend:
    """The T1 snapshot's triples.parquet and entities.parquet, scanned lazily for each batch."""

    def __init__(self, triples: pl.LazyFrame, entities: pl.LazyFrame) -> None:
        self._triples, self._entities = triples, entities

    @classmethod
    def open(cls, snapshot: Path) -> ParquetBackend:
        return cls(pl.scan_parquet(snapshot / "triples.parquet"), pl.scan_parquet(snapshot / "entities.parquet"))

    def datatypes(self) -> dict[str, str | None]:
        props = self._entities.filter(pl.col("id").str.starts_with("P")).select("id", "datatype").collect()
        return dict(zip(props["id"], props["datatype"], strict=True))

    def triples(self, subjects: list[str]) -> Iterable[Triple]:
        return self._triples.filter(pl.col("s").is_in(subjects)).unique(maintain_order=True).collect().iter_rows()

    def subjects(self, keys: list[Key], cap: int) -> dict[Key, frozenset[str] | None]:
        wanted = pl.DataFrame(keys, schema={"p": pl.String(), "o": pl.String()}, orient="row").lazy()
        found = (self._triples.join(wanted, on=["p", "o"], how="semi")
                 .unique(["s", "p", "o"])
                 .group_by("p", "o").agg(n=pl.len(), subjects=pl.col("s").head(cap + 1))
                 .collect())
        return {(p, o): frozenset(subs) if n <= cap else None for p, o, n, subs in found.iter_rows()}

    def entities(self, ids: list[str]) -> Iterable[EntityRow]:
        return (self._entities.filter(pl.col("id").is_in(ids)).select("id", "label", "aliases", "modified", "datatype")
                .collect().iter_rows())


class Graph:
    """Truthy T1 triples behind batched prefetches; a look-up of something not prefetched is a bug."""

    def __init__(self, backend: Backend, *, fanout_cap: int) -> None:
        self.backend = backend
        self.fanout_cap = fanout_cap
        self._out: dict[str, list[Edge]] = {}
        self._subjects: dict[Key, frozenset[str] | None] = {}
        self.labels: dict[str, str] = {}
        self.aliases: dict[str, list[str]] = {}
        self.modified: dict[str, object] = {}
        self.datatypes: dict[str, str | None] = {}
        self._labelled: set[str] = set()

    @classmethod
    def open(cls, snapshot: Path, *, fanout_cap: int) -> Graph:
        return cls.over(ParquetBackend.open(snapshot), fanout_cap=fanout_cap)

    @classmethod
    def over(cls, backend: Backend, *, fanout_cap: int) -> Graph:
        graph = cls(backend, fanout_cap=fanout_cap)
        graph.datatypes = backend.datatypes()
        graph.fetch_labels(graph.datatypes)
        return graph

    def out(self, subject: str) -> list[Edge]:
        return self._out[subject]

    def subjects(self, prop: str, obj: str) -> frozenset[str] | None:
        """Every subject with `prop = obj` in T1, or None when there are more than the fan-out cap."""
        return self._subjects[(prop, obj)]

    def fetch_out(self, subjects: Iterable[str]) -> None:
        """Load the triples of these subjects, and the labels of everything they mention."""
        todo = sorted(set(subjects) - self._out.keys())
        if not todo:
            return
        rows = list(self.backend.triples(todo))
        for s in todo:
            self._out[s] = []
        mentioned: set[str] = set(todo)
        for s, p, o, kind in rows:
            k = Kind(kind)
            self._out[s].append((p, o, k))
            mentioned.add(p)
            if k is Kind.ENTITY:
                mentioned.add(o)
            elif k is Kind.QUANTITY and (unit := split_quantity(o)[1]):
                mentioned.add(unit)
        self.fetch_labels(mentioned)

    def fetch_subjects(self, keys: Iterable[Key]) -> None:
        """Load the subject sets of these (property, object) keys, None past the fan-out cap."""
        todo = sorted(set(keys) - self._subjects.keys())
        if not todo:
            return
        sets: dict[Key, frozenset[str] | None] = defaultdict(frozenset)
        sets.update(self.backend.subjects(todo, self.fanout_cap))
        for key in todo:
            self._subjects[key] = sets[key]

    def fetch_labels(self, ids: Iterable[str]) -> None:
        todo = sorted(set(ids) - self._labelled)
        if not todo:
            return
        self._labelled.update(todo)
        for eid, label, aliases, modified, datatype in self.backend.entities(todo):
            if label:
                self.labels[eid] = label
            self.aliases[eid] = list(aliases or [])
            self.modified[eid] = modified
            if datatype is not None:
                self.datatypes.setdefault(eid, datatype)
