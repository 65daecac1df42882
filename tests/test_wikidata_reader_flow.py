"""The Wikidata flow reading each dump in parts, a Prefect task a part, on a Dask LocalCluster of two worker
processes: the snapshot folders the serial reader writes, byte for byte, and the same questions."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.wikidata import wikidata_flow
from tests.test_wikidata_reader import files
from tests.worldgen import make_world, write_dump
from timelyqa.wikidata import pipeline

# a Prefect server, a flow run, a Dask cluster
pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow, pytest.mark.timeout(600)]


def test_dumps_read_in_parts_on_two_dask_workers_give_the_serial_readers_snapshots(tmp_path: Path) -> None:
    w = make_world(23, players=90, clubs=14)
    t0 = write_dump(w.t0, tmp_path / "wikidata-20260301-all.json.gz")
    t1 = write_dump(w.t1, tmp_path / "wikidata-20260308-all.json.gz")
    out = tmp_path / "flow"
    state = wikidata_flow(before=str(t0), after=str(t1), out=str(out), buckets=4, read_parts=5,
                          dask_address="local:2", return_state=True)
    assert state.is_completed(), state.message
    serial = tmp_path / "serial"
    for name, dump in (("t0", t0), ("t1", t1)):
        pipeline.read_snapshot(dump, serial, name, rdf=True, buckets=4)
        want, got = files(serial / name), files(out / "work" / name)
        assert want.keys() == got.keys() and "rdf.nt" in got and "triples.parquet/0003.parquet" in got
        for f in want:
            assert got[f] == want[f], (name, f)
    assert (out / "questions.parquet").stat().st_size > 2000
