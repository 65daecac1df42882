"""Look-ups into the T1 snapshot for question synthesis, fetched in batches from its parquet tables.

Only the neighbourhood the questions need is held in memory: the triples of given subjects, the
subjects of given (property, object) keys up to a fan-out cap, and labels of the entities involved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from timelyqa.wikidata.values import Kind, split_quantity

Edge = tuple[str, str, Kind]
"""(property, object form, object kind) of a triple whose subject is known."""


class Graph:
    """Truthy T1 triples behind batched prefetches; a look-up of something not prefetched is a bug."""

    def __init__(self, triples: pl.LazyFrame, entities: pl.LazyFrame, *, fanout_cap: int) -> None:
        self._triples, self._entities = triples, entities
        self.fanout_cap = fanout_cap
        self._out: dict[str, list[Edge]] = {}
        self._subjects: dict[tuple[str, str], frozenset[str] | None] = {}
        self.labels: dict[str, str] = {}
        self.aliases: dict[str, list[str]] = {}
        self.modified: dict[str, object] = {}
        self.datatypes: dict[str, str | None] = {}
        self._labelled: set[str] = set()

    @classmethod
    def open(cls, snapshot: Path, *, fanout_cap: int) -> Graph:
        graph = cls(pl.scan_parquet(snapshot / "triples.parquet"), pl.scan_parquet(snapshot / "entities.parquet"),
                    fanout_cap=fanout_cap)
        props = graph._entities.filter(pl.col("id").str.starts_with("P")).select("id", "datatype").collect()
        graph.datatypes = dict(zip(props["id"], props["datatype"], strict=True))
        graph.fetch_labels(props["id"])
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
        rows = self._triples.filter(pl.col("s").is_in(todo)).unique(maintain_order=True).collect()
        for s in todo:
            self._out[s] = []
        mentioned: set[str] = set(todo)
        for s, p, o, kind in rows.iter_rows():
            k = Kind(kind)
            self._out[s].append((p, o, k))
            mentioned.add(p)
            if k is Kind.ENTITY:
                mentioned.add(o)
            elif k is Kind.QUANTITY and (unit := split_quantity(o)[1]):
                mentioned.add(unit)
        self.fetch_labels(mentioned)

    def fetch_subjects(self, keys: Iterable[tuple[str, str]]) -> None:
        """Load the subject sets of these (property, object) keys, None past the fan-out cap."""
        todo = sorted(set(keys) - self._subjects.keys())
        if not todo:
            return
        wanted = pl.DataFrame(todo, schema={"p": pl.String(), "o": pl.String()}, orient="row").lazy()
        found = (self._triples.join(wanted, on=["p", "o"], how="semi")
                 .unique(["s", "p", "o"])
                 .group_by("p", "o").agg(n=pl.len(), subjects=pl.col("s").head(self.fanout_cap + 1))
                 .collect())
        sets: dict[tuple[str, str], frozenset[str] | None] = defaultdict(frozenset)
        for p, o, n, subs in found.iter_rows():
            sets[(p, o)] = frozenset(subs) if n <= self.fanout_cap else None
        for key in todo:
            self._subjects[key] = sets[key]

    def fetch_labels(self, ids: Iterable[str]) -> None:
        todo = sorted(set(ids) - self._labelled)
        if not todo:
            return
        self._labelled.update(todo)
        rows = (self._entities.filter(pl.col("id").is_in(todo)).select("id", "label", "aliases", "modified")
                .collect())
        for eid, label, aliases, modified in rows.iter_rows():
            if label:
                self.labels[eid] = label
            self.aliases[eid] = list(aliases or [])
            self.modified[eid] = modified
