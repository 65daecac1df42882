"""`timelyqa wikidata` reads each dump in parts on a process pool, through the functions the flow's read tasks call:
with one part or with three, the same snapshot files (the serial reader's) and the same questions, byte for byte."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.test_wikidata_reader import files
from tests.test_wikidata_request import T0, T1, command
from timelyqa.wikidata import pipeline, reader_run

pytestmark = pytest.mark.slow  # two whole runs with a local Oxigraph each: some 20 s


def test_the_command_with_one_and_with_three_parts_writes_the_same_files(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    pools: list[int] = []
    pool = reader_run._pool

    @contextmanager
    def counted(workers: int) -> Any:
        pools.append(workers)
        with pool(workers) as lanes:
            yield lanes

    monkeypatch.setattr(reader_run, "_pool", counted)
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 2)  # two cores, as here
    outs = {}
    for parts in (1, 3):
        outs[parts] = tmp_path / f"parts{parts}"
        code, output = command("--before", T0, "--after", T1, "--out", outs[parts], "--read-parts", parts)
        assert code == 0, output
    assert pools == [1, 1, 2, 2]  # one part: in this process; three: two processes (a core each)
    for name in ("questions.parquet", "rejected.parquet"):
        assert (outs[1] / name).read_bytes() == (outs[3] / name).read_bytes(), name
    assert (outs[1] / "questions.parquet").stat().st_size > 2000
    for name, dump in (("t0", T0), ("t1", T1)):
        serial = pipeline.read_snapshot(dump, tmp_path / "serial", name, rdf=True)
        want = files(serial)
        assert "rdf.nt" in want and "entities.parquet" in want
        assert files(outs[1] / "work" / name) == want == files(outs[3] / "work" / name), name
