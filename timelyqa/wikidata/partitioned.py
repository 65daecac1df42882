"""Synthesis as partitions a runner may spread out: plan the batches, (sample,) write each batch, merge them.

The CLI runs the partitions one after another; the flow maps them as Prefect tasks, on a Dask cluster when one
is configured. Both call these functions, so both leave the same files byte for byte.
"""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

from timelyqa.errors import ConfigError
from timelyqa.quality import GATE_PASSED, Gate
from timelyqa.stages import StageWriter
from timelyqa.wikidata import batches, snapshot
from timelyqa.wikidata.batches import AnchorKey, BatchResult
from timelyqa.wikidata.gate import RULES
from timelyqa.wikidata.graph import Graph
from timelyqa.wikidata.source import SOURCE
from timelyqa.wikidata.synth import GENERATORS

PARTS = "candidate-batches"


class SynthesisPlan(BaseModel):
    """The delta's slices, one a batch, and the anchors chosen when they are sampled (None: all)."""

    ranges: list[tuple[int, int]]
    chosen: set[AnchorKey] | None = None


def plan(delta_path: Path, workdir: Path, batch_rows: int | None = None) -> SynthesisPlan:
    """The batches of a synthesis, the folder their files go to emptied."""
    shutil.rmtree(workdir / PARTS, ignore_errors=True)
    (workdir / PARTS).mkdir(parents=True)
    return SynthesisPlan(ranges=batches.ranges(delta_path, batch_rows))


def open_graph(t1_dir: Path, fanout_cap: int, graph: Graph | None = None) -> Graph:
    """The graph a batch synthesizes over: the one given (the API mode's), else a fresh one over T1's tables, so
    that a batch's neighbourhood is freed with it."""
    return graph or Graph.open(t1_dir, fanout_cap=fanout_cap)


def batch_anchor_keys(t1_dir: Path, delta_path: Path, span: tuple[int, int], fanout_cap: int,
                      graph: Graph | None = None) -> list[AnchorKey]:
    return batches.anchor_keys(open_graph(t1_dir, fanout_cap, graph), delta_path, *span)


def synthesize_batch(t1_dir: Path, delta_path: Path, workdir: Path, index: int, span: tuple[int, int], *,
                     seed: int, max_constraints: int, fanout_cap: int, chosen: set[AnchorKey] | None,
                     as_of: datetime | None = None, graph: Graph | None = None) -> BatchResult:
    info = snapshot.SnapshotInfo.load(t1_dir)
    return batches.synthesize_batch(open_graph(t1_dir, fanout_cap, graph), delta_path, *span,
                                    workdir / PARTS / f"{index:05d}.parquet", seed=seed,
                                    max_constraints=max_constraints, as_of=as_of or _as_of(info),
                                    snapshot_sha256=info.sha256, chosen=chosen)


def merge(workdir: Path, results: list[BatchResult], ledger: StageWriter | None = None) -> Path:
    """candidates.parquet from the batches' files; their drops and misses, and the merge's, to the run's writer
    in the order one batch over the whole delta gives them."""
    ledger = ledger or StageWriter.part(SOURCE, workdir)
    gate = Gate(RULES)
    path = workdir / "candidates.parquet"
    with ledger.timed("synthesize"):
        for r in results:
            ledger.reject_all(r.dropped)
        for r in results:
            ledger.reject_all(r.missed)
        rejects, _ = batches.merge_candidates([r.part for r in results], path, gate)
        ledger.reject_all(rejects)
        shutil.rmtree(workdir / PARTS, ignore_errors=True)
    ledger.count("anchors", sum(r.anchors for r in results))
    for level in GENERATORS:
        ledger.count(f"candidates_{level}", sum(r.levels.get(level, 0) for r in results))
    ledger.count("rendered", gate.passed + len(gate.dropped))
    ledger.count(GATE_PASSED, gate.passed)
    ledger.save("synthesize")
    return path


def _as_of(info: snapshot.SnapshotInfo) -> datetime:
    """The moment T1's answers hold: its newest modification (the dump's own cut-off)."""
    if not info.newest_modified:
        raise ConfigError(f"{info.path}: no entity carries a modification time; cannot date the snapshot")
    return datetime.fromisoformat(info.newest_modified.replace("Z", "+00:00"))
