"""The merged delta in bounded memory: a k-way merge of the sorted buckets, never the whole delta held at once."""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from tests.worldgen import make_world, write_dump
from timelyqa.wikidata import merge, pipeline
from timelyqa.wikidata.delta import compute_delta
from timelyqa.wikidata.merge import merge_sorted
from timelyqa.wikidata.snapshot import read_snapshot


def sorted_parts(tmp_path: Path, rows: int, files: int, seed: int) -> tuple[list[Path], pl.DataFrame]:
    rng = random.Random(seed)
    keys = rng.sample(range(rows * 10), rows)
    whole = pl.DataFrame({"row": keys, "v": [f"value {k}" for k in keys]}, schema={"row": pl.UInt64, "v": pl.String})
    parts = []
    for i, part in enumerate(whole.with_columns(f=pl.Series([rng.randrange(files) for _ in keys]))
                             .partition_by("f", include_key=False)):
        parts.append(tmp_path / f"{i:04d}.parquet")
        part.sort("row").write_parquet(parts[-1], row_group_size=97)
    return parts, whole.sort("row")


@pytest.mark.parametrize("seed", range(3))
def test_the_merge_is_the_sort_holding_a_chunk_a_file(tmp_path: Path, seed: int) -> None:
    parts, expected = sorted_parts(tmp_path, rows=20_000, files=8, seed=seed)
    stats = merge_sorted(parts, tmp_path / "out.parquet", key="row", drop_key=False, chunk_rows=500)
    assert pl.read_parquet(tmp_path / "out.parquet").equals(expected)
    assert stats.rows == 20_000 and stats.files == 8
    # What a user of a full dump pair needs: memory follows the files and the chunk, not the delta.
    assert 0 < stats.peak_rows <= 8 * 500


def test_a_file_far_ahead_of_the_others_waits_on_disk(tmp_path: Path) -> None:
    low, high = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pl.DataFrame({"row": list(range(0, 10_000))}, schema={"row": pl.UInt64}).write_parquet(high)
    pl.DataFrame({"row": list(range(10_000, 10_010))}, schema={"row": pl.UInt64}).write_parquet(low)
    stats = merge_sorted([low, high], tmp_path / "out.parquet", key="row", drop_key=False, chunk_rows=100)
    assert pl.read_parquet(tmp_path / "out.parquet")["row"].to_list() == list(range(10_010))
    assert stats.peak_rows <= 200


def test_no_rows_at_all_gives_an_empty_file_of_the_schema(tmp_path: Path) -> None:
    schema = pl.Schema({"s": pl.String(), "row": pl.UInt64()})
    pl.DataFrame(schema=schema).write_parquet(tmp_path / "0000.parquet")
    merge_sorted([tmp_path / "0000.parquet"], tmp_path / "out.parquet", key="row", schema=schema)
    assert pl.read_parquet(tmp_path / "out.parquet").schema == pl.Schema({"s": pl.String()})
    merge_sorted([], tmp_path / "none.parquet", key="row", schema=schema)
    assert pl.read_parquet(tmp_path / "none.parquet").height == 0


@pytest.mark.slow  # a generated world's delta
def test_the_delta_of_a_generated_world_is_merged_in_bounded_memory(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_world(5, players=400, clubs=40)
    dumps = write_dump(w.t0, tmp_path / "t0.json.gz"), write_dump(w.t1, tmp_path / "t1.json.gz")
    work = tmp_path / "out" / "work"
    folders = []
    for name, dump in zip(("t0", "t1"), dumps, strict=True):
        read_snapshot(dump, work / name, rdf=False, reject=lambda *dropped: None, buckets=16)
        folders.append(work / name)
    whole = [read_snapshot(d, tmp_path / f"one{i}", rdf=False, reject=lambda *dropped: None) and tmp_path / f"one{i}"
             for i, d in enumerate(dumps)]  # one bucket: the triples in dump order
    expected = compute_delta(*(pl.read_parquet(f / "triples.parquet") for f in whole))
    seen: list[merge.MergeStats] = []
    real = merge.merge_sorted

    def spy(*args: object, **kwargs: object) -> merge.MergeStats:
        seen.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return seen[-1]

    monkeypatch.setattr(merge, "CHUNK_ROWS", 4)
    monkeypatch.setattr(pipeline, "merge_sorted", spy)
    got = pipeline.compute_delta(*folders, work)
    assert pl.read_parquet(got).equals(expected)
    (stats,) = seen
    assert stats.rows == expected.height > 200 and stats.files == 16
    assert stats.peak_rows <= 16 * 4 < expected.height / 4
