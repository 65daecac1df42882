"""The Wikidata flow on a Dask LocalCluster of two worker processes: the same files, byte for byte, as on the
flow's own runner; a wrong address refused before any work."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from flows.wikidata import dask_runner, wikidata_flow
from tests.worldgen import make_world, write_dump
from timelyqa.errors import ConfigError

# a Prefect server, two flow runs, a Dask cluster
pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow, pytest.mark.timeout(600)]
FILES = ("work/delta.parquet", "work/candidates.parquet", "work/verified.parquet", "questions.parquet",
         "rejected.parquet")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_dask_workers_write_the_files_the_default_runner_writes(tmp_path: Path) -> None:
    w = make_world(23, players=90, clubs=14)
    t0 = write_dump(w.t0, tmp_path / "wikidata-20260301-all.json.gz")
    t1 = write_dump(w.t1, tmp_path / "wikidata-20260308-all.json.gz")
    runs = {}
    for name, address in (("default", None), ("dask", "local:2")):
        out = tmp_path / name
        # Eight buckets, batches of 15 delta rows and of 9 questions: several partitions a stage, over both workers.
        state = wikidata_flow(before=str(t0), after=str(t1), out=str(out), buckets=8, synthesis_batch=15,
                              verify_batch=9, dask_address=address, return_state=True)
        assert state.is_completed(), state.message
        runs[name] = out
    for f in FILES:
        assert digest(runs["default"] / f) == digest(runs["dask"] / f), f
    assert (runs["dask"] / "questions.parquet").stat().st_size > 2000


@pytest.mark.parametrize("address", ["local:0", "local:two", "scheduler:8786", "tcp://"])
def test_a_wrong_address_is_refused_naming_it(address: str) -> None:
    with pytest.raises(ConfigError, match="dask_address"):
        dask_runner(address)


def test_no_address_and_no_setting_is_the_flows_own_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIMELYQA_DASK_ADDRESS", raising=False)
    assert dask_runner(None) is None and dask_runner("") is None
    monkeypatch.setenv("TIMELYQA_DASK_ADDRESS", "tcp://10.0.0.5:8786")
    assert dask_runner(None).address == "tcp://10.0.0.5:8786"  # type: ignore[union-attr]
