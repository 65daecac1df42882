"""`make bench`'s Wikidata-on-a-cluster part: partitions per second on one and two Dask workers, a worker's peak
memory, and the full pair's projection by the formula the README gives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import bench_wikidata  # noqa: E402
from bench_wikidata import FULL_BUCKETS, FULL_DUMP_MB, FULL_ENTITIES_PER_DUMP, project  # noqa: E402

MEASURED = {"scale_triples_per_second_1w": 50_000.0, "scale_triples_per_second_2w": 80_000.0,
            "scale_triples": 4_000_000, "scale_entities": 280_000, "scale_delta_rows": 120_000,
            "scale_read_entities_per_second": 20_000.0, "scale_merge_rows_per_second": 400_000.0,
            "scale_worker_base_mb": 300.0, "scale_worker_mb_per_bucket_mb": 1.5,
            "scale_reader_parts_entities_per_second_1w": 5_000.0, "scale_reader_parts_entities_per_second_2w": 9_000.0,
            "scale_reader_hash_mb_per_second": 1_000.0, "scale_reader_index_mb_per_second_1t": 50.0,
            "scale_reader_index_mb_per_second_2t": 80.0,
            "scale_reader_join_triples_per_second": 2_000_000.0, "scale_reader_finish_entities_per_second": 400_000.0,
            "scale_reader_index_mb": 0.2, "scale_dump_mb": 240.0}


def test_the_projection_is_the_readmes_formula() -> None:
    got = project(MEASURED)
    x_full = 2 * FULL_ENTITIES_PER_DUMP * 4_000_000 / 280_000
    read = FULL_ENTITIES_PER_DUMP / 20_000
    merge = x_full * 0.03 / 400_000
    for n in (16, 64):
        # the plan's one pass: the hash fed from the index's reads, the longer of the two
        parts_read = (max(FULL_DUMP_MB / 1_000, 2 * FULL_DUMP_MB / (50 * n * 0.8))
                      + 2 * FULL_ENTITIES_PER_DUMP / (5_000 * n * 0.9)
                      + x_full / (2_000_000 * n) + FULL_ENTITIES_PER_DUMP / 400_000)
        expected = (parts_read + x_full / (50_000 * n * 0.8) + merge) / 3600
        assert got[f"scale_full_hours_{n}"] == pytest.approx(expected, abs=0.01)
        assert got[f"scale_full_read_hours_{n}"] == pytest.approx(parts_read / 3600, abs=0.001)
        serial = (read + x_full / (50_000 * n * 0.8) + merge) / 3600
        assert got[f"scale_full_hours_{n}_serial_read"] == pytest.approx(serial, abs=0.01)
    assert got["scale_full_hours_64"] < got["scale_full_hours_16"]
    assert got["scale_full_read_hours_64"] < got["scale_full_read_hours_16"]  # the read in parts shrinks with cores
    assert got["scale_full_read_hours"] == pytest.approx(read / 3600, abs=0.01)  # the serial read does not
    assert got["scale_full_worker_peak_mb"] == pytest.approx(300 + 1.5 * FULL_DUMP_MB / FULL_BUCKETS, abs=0.1)


@pytest.mark.slow  # two reads of a small pair, three LocalClusters
def test_the_bench_measures_one_and_two_workers_on_a_small_pair(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    f = bench_wikidata.measure(tmp_path, triples=20_000, buckets=2)
    assert f["scale_partitions_per_second_1w"] > 0 and f["scale_partitions_per_second_2w"] > 0
    assert 15_000 * 2 < f["scale_triples"] < 25_000 * 2 and f["scale_delta_rows"] > 0
    assert f["scale_worker_peak_mb_1w"] > 50  # a worker process's own peak, not the bench's
    assert f["scale_full_hours_64"] <= f["scale_full_hours_16"]
    assert f["scale_reader_same_files_1w"] == f["scale_reader_same_files_2w"] == 1.0
    assert f["scale_reader_mb_per_second_1w"] > 0 and f["scale_reader_parts_entities_per_second_2w"] > 0
    assert f["scale_reader_plan_mb_per_second"] > 0 and f["scale_reader_command_same_files"] == 1.0
    bench_wikidata.report(f)
    out = capsys.readouterr().out
    assert "delta partitions/s" in out and "on 16 cores" in out and "no process over 8 GB" in out
    assert "reader in 4 parts" in out and "the serial reader's files: same" in out and "DIFFERENT" not in out
    assert "plan in one pass" in out and "`timelyqa wikidata`'s read" in out
    assert not (tmp_path / "scale-work").exists()
