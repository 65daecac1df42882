"""Synthesis in batches of delta rows: the same candidates and rejects however the delta is cut, each batch's
neighbourhood freed with it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.worldgen import make_world, write_dump
from timelyqa.wikidata import batches, pipeline
from timelyqa.wikidata import merge as merge_module
from timelyqa.wikidata.graph import Graph
from timelyqa.wikidata.merge import MergeStats
from timelyqa.wikidata.pipeline import Settings

pytestmark = pytest.mark.slow  # generated worlds synthesised many ways: make test, not make check


@pytest.fixture(scope="module")
def delta_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("batches")
    w = make_world(11, players=70, clubs=12)
    work = tmp / "read" / "work"
    t0 = pipeline.read_snapshot(write_dump(w.t0, tmp / "t0.json.gz"), work, "t0", rdf=False)
    t1 = pipeline.read_snapshot(write_dump(w.t1, tmp / "t1.json.gz"), work, "t1", rdf=False)
    return t0, t1, pipeline.compute_delta(t0, t1, work)


def synthesize(tmp: Path, world: tuple[Path, Path, Path], name: str, **settings: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    t0, t1, delta = world
    work = tmp / name / "work"
    work.mkdir(parents=True)
    path = pipeline.synthesize(t1, delta, work, Settings(**settings))
    rejected = pl.read_parquet(work / "ledger" / "synthesize.rejected.parquet")
    return pl.read_parquet(path), rejected


@pytest.mark.parametrize("extra", [{}, {"max_anchors": 25, "seed": 3}])
def test_the_candidates_are_the_same_however_the_delta_is_cut(tmp_path: Path, delta_world: tuple[Path, Path, Path],
                                                            extra: dict[str, int]) -> None:
    whole, whole_rejects = synthesize(tmp_path, delta_world, "whole", **extra)
    assert whole.height > 10 and pl.read_parquet(delta_world[2]).height > 40
    for size in (6, 40):
        cut, cut_rejects = synthesize(tmp_path, delta_world, f"cut{size}", synthesis_batch=size, **extra)
        assert cut.equals(whole), size
        # Drops, misses and repeats: the same rows, the anchors' drops first as one pass over the delta gives them.
        assert cut_rejects.sort(pl.all()).equals(whole_rejects.sort(pl.all())), size
        assert cut_rejects["reason"].to_list()[:5] == whole_rejects["reason"].to_list()[:5]
    assert not (tmp_path / "cut6" / "work" / "candidate-batches").exists()


def test_a_batch_holds_its_own_neighbourhood_and_the_merge_a_chunk_a_batch(
        tmp_path: Path, delta_world: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    graphs: list[Graph] = []
    merges: list[MergeStats] = []
    real_open, real_merge = Graph.open, batches.merge_sorted

    def open_graph(*args: object, **kwargs: object) -> Graph:
        graphs.append(real_open(*args, **kwargs))  # type: ignore[arg-type]
        return graphs[-1]

    def merge(*args: object, **kwargs: object) -> MergeStats:
        merges.append(real_merge(*args, **kwargs))  # type: ignore[arg-type]
        return merges[-1]

    monkeypatch.setattr(Graph, "open", open_graph)
    monkeypatch.setattr(batches, "merge_sorted", merge)
    synthesize(tmp_path, delta_world, "whole")
    whole = len(graphs[0]._out) + len(graphs[0]._subjects)
    graphs.clear()
    monkeypatch.setattr(merge_module, "CHUNK_ROWS", 3)
    cut, _ = synthesize(tmp_path, delta_world, "cut", synthesis_batch=10)
    assert len(graphs) >= 4  # a graph a batch, freed with it
    # What memory holds while a batch runs: its own subjects and subject sets, a fraction of one pass's.
    # What memory holds while a batch runs: its own subjects and subject sets. Most batches hold a fraction of
    # one pass's; a batch whose anchors hop through a country reaches most of this small world, never more.
    sizes = sorted(len(g._out) + len(g._subjects) for g in graphs)
    assert sizes[len(sizes) // 2] < whole / 4 and sizes[-1] <= whole
    stats = merges[-1]
    assert stats.rows >= cut.height and stats.peak_rows <= 3 * stats.files
