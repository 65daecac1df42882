"""A dump read into a snapshot folder in parts: plan, read each part, join; what the flow maps as tasks and what
runs them one after another in one process. A dump the parts cannot read alike (rapidgzip cannot read it whole,
or an entity repeats across parts) is read by the serial reader, so the files are the same either way."""

from __future__ import annotations

import shutil
from pathlib import Path

from timelyqa.stages import StageWriter
from timelyqa.wikidata import snapshot
from timelyqa.wikidata.reader import PARTS_DIR, PartResult, ReadPlan, plan, read_part
from timelyqa.wikidata.reader_join import join, repeated_across
from timelyqa.wikidata.source import SOURCE

__all__ = ["finish_read", "plan_read", "read_part", "read_parts"]


def plan_read(dump: Path, workdir: Path, name: str, *, rdf: bool, buckets: int | None, parts: int) -> ReadPlan:
    return plan(dump, workdir / name, parts=parts, rdf=rdf,
                buckets=buckets or snapshot.buckets_for(dump.stat().st_size))


def finish_read(todo: ReadPlan, workdir: Path, name: str, results: list[PartResult]) -> Path:
    """The snapshot folder `workdir/name` from the parts, its ledger part `read_{name}` saved as the serial read
    saves it (pipeline.read_snapshot)."""
    folder, dump = Path(todo.folder), Path(todo.dump)
    ledger = StageWriter(SOURCE, workdir.parent, work=workdir)
    with ledger.timed(f"read_{name}"):
        if todo.serial is None and repeated_across(todo, results) is not None:
            todo.serial = f"{dump}: an entity repeats across parts; read by the serial reader"
        if todo.serial is None:
            info = join(todo, results, ledger.reject)
        else:
            shutil.rmtree(folder / PARTS_DIR, ignore_errors=True)
            info = snapshot.read_snapshot(dump, folder, rdf=todo.rdf, reject=ledger.reject, buckets=todo.buckets)
    ledger.count(f"{name}_entities", info.entities)
    ledger.count(f"{name}_triples", info.truthy_triples)
    ledger.save(f"read_{name}")
    return folder


def read_parts(dump: Path, workdir: Path, name: str, *, rdf: bool, buckets: int | None = None,
               parts: int = 1) -> Path:
    """The whole read in this process, its parts one after another."""
    todo = plan_read(dump, workdir, name, rdf=rdf, buckets=buckets, parts=parts)
    results = [] if todo.serial else [read_part(todo, i) for i in range(len(todo.ranges))]
    return finish_read(todo, workdir, name, results)
