"""Synthesis in batches of delta rows: the same candidates and rejects however the delta is cut, each batch's
neighbourhood freed with it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.worldgen import make_world, write_dump
from timelyqa.wikidata import pipeline
from timelyqa.wikidata.pipeline import Settings


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
