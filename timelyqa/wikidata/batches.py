"""Synthesis in batches of delta rows: each batch filters its rows to anchors and writes its questions, sorted,
to a file of its own; one k-way merge of the files then drops repeats and runs the gate.

A batch needs only the T1 snapshot, its slice of the delta and (when anchors are sampled) the anchors chosen in
it, so that batches run anywhere (Prefect tasks on a Dask cluster) and memory holds one batch's neighbourhood,
never the whole delta. The output is the same however the delta is cut: every question depends only on its
anchor and T1, and the merge restores the one order a sort of all the candidates gives.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from timelyqa.quality import Gate
from timelyqa.reasons import Dropped
from timelyqa.wikidata.candidates import CANDIDATE_SCHEMA, SORT_KEY, Chooser, rendered_rows
from timelyqa.wikidata.filters import anchor_drop
from timelyqa.wikidata.graph import Graph
from timelyqa.wikidata.merge import MergeStats, merge_sorted
from timelyqa.wikidata.synth import GENERATORS, Anchor, Synthesizer
from timelyqa.wikidata.values import Kind, split_quantity

BATCH_ROWS = 20_000
"""Delta rows a synthesis batch reads: its neighbourhood (triples, subject sets, labels) is what memory holds."""
AnchorKey = tuple[str, str, str]


@dataclass
class BatchResult:
    """What one batch gives the run's writer: its drops and misses in order, and its counts."""

    part: Path
    dropped: list[Dropped] = field(default_factory=list)
    missed: list[Dropped] = field(default_factory=list)
    anchors: int = 0
    levels: dict[str, int] = field(default_factory=dict)


def ranges(delta_path: Path, batch_rows: int | None = None) -> list[tuple[int, int]]:
    """The delta cut into (offset, length) slices of `batch_rows` rows (at least one slice, maybe empty)."""
    size = batch_rows or BATCH_ROWS
    n = pl.scan_parquet(delta_path).select(pl.len()).collect().item()
    return [(lo, min(size, n - lo)) for lo in range(0, n, size)] or [(0, 0)]


def _delta_slice(delta_path: Path, lo: int, length: int) -> pl.DataFrame:
    return pl.scan_parquet(delta_path).slice(lo, length).collect()


def _anchors(delta: pl.DataFrame, graph: Graph) -> tuple[list[Anchor], list[Dropped]]:
    units = {split_quantity(o)[1] for o, kind in zip(delta["o"], delta["kind"], strict=True)
             if kind == Kind.QUANTITY}
    # The properties too: a graph that fetches on demand knows no property before it is asked.
    graph.fetch_labels(set(delta["s"]) | set(delta["p"]) | set(delta["o"]) | (units - {None}))
    anchors, dropped = [], []
    for s, p, o, kind, change, _ in delta.iter_rows():
        reason = anchor_drop(s, p, o, Kind(kind), graph)
        if reason is None:
            anchors.append(Anchor(s, p, o, Kind(kind), change))
        else:
            dropped.append(Dropped({"delta_triple": [s, p, o]}, reason[0], reason[1]))
    return anchors, dropped


def anchor_keys(graph: Graph, delta_path: Path, lo: int, length: int) -> list[AnchorKey]:
    """The anchors of one slice, as keys: what sampling chooses among."""
    anchors, _ = _anchors(_delta_slice(delta_path, lo, length), graph)
    return [(a.s, a.p, a.o) for a in anchors]


def sample(keys: list[list[AnchorKey]], *, seed: int, max_anchors: int | None) -> set[AnchorKey] | None:
    """The anchors kept when at most `max_anchors` are wanted: the smallest by a seeded hash, held in a heap of
    `max_anchors`; None when every anchor is kept."""
    if max_anchors is None:
        return None
    def rank(k: AnchorKey) -> bytes:
        return hashlib.blake2b(f"{seed}\x1f{k[0]}\x1f{k[1]}\x1f{k[2]}".encode(), digest_size=8).digest()
    return set(heapq.nsmallest(max_anchors, (k for part in keys for k in part), key=rank))


def synthesize_batch(graph: Graph, delta_path: Path, lo: int, length: int, part: Path, *, seed: int,
                     max_constraints: int, as_of: datetime, snapshot_sha256: str,
                     chosen: set[AnchorKey] | None = None) -> BatchResult:
    """One slice of the delta: anchors (drops kept with their reasons), the chosen among them, their candidates
    rendered and sorted into `part`; nothing is dropped as a repeat or by the gate yet (merge_candidates)."""
    anchors, dropped = _anchors(_delta_slice(delta_path, lo, length), graph)
    if chosen is not None:
        anchors = [a for a in anchors if (a.s, a.p, a.o) in chosen]
    candidates, missed = Synthesizer(graph, seed=seed, max_constraints=max_constraints).run(anchors)
    rendered_rows(candidates, graph, as_of=as_of, snapshot_sha256=snapshot_sha256).write_parquet(part)
    return BatchResult(
        part, dropped,
        [Dropped({"delta_triple": [m.anchor.s, m.anchor.p, m.anchor.o], "level": m.level}, m.reason, m.detail)
         for m in missed],
        len(anchors), {level: sum(c.level == level for c in candidates) for level in GENERATORS})


def merge_candidates(parts: list[Path], out: Path, gate: Gate) -> tuple[list[Dropped], MergeStats]:
    """The batches' rows merged in SORT_KEY order into `out`: a repeated question dropped, then the gate."""
    chooser = Chooser(gate)
    stats = merge_sorted(parts, out, key=SORT_KEY, each=chooser.choose,
                         schema=pl.Schema({**CANDIDATE_SCHEMA, SORT_KEY: pl.String()}))
    return chooser.rejects, stats
