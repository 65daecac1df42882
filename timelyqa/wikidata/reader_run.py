"""A dump read into a snapshot folder in parts: plan, read each part, join; what the flow maps as tasks and what
runs them one after another in one process. A dump the parts cannot read alike (rapidgzip cannot read it whole,
or an entity repeats across parts) is read by the serial reader, so the files are the same either way."""

from __future__ import annotations

import logging
import multiprocessing
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from timelyqa.errors import ConfigError
from timelyqa.stages import StageWriter
from timelyqa.wikidata import snapshot
from timelyqa.wikidata.reader import PARTS_DIR, PartResult, ReadPlan, plan, read_part
from timelyqa.wikidata.reader_join import Joining, finish, prepare, write_bucket
from timelyqa.wikidata.snapshot import Progress
from timelyqa.wikidata.source import SOURCE

T = TypeVar("T")

__all__ = ["finish_join", "finish_read", "plan_read", "prepare_join", "read_part", "read_parts", "write_bucket"]


PART_BYTES = 1 << 30
"""Compressed dump bytes a part reads by default (some 400,000 entities of gzipped JSON, a few minutes)."""
MAX_PARTS = 128
"""Parts a dump is cut into at most by default: each writes a file a bucket, which the join reads."""


MAX_READ_PARTS = 4096


def parts_problem(parts: int | None) -> str | None:
    """What is wrong with a part count a dump is to be read in; None when nothing is."""
    if parts is not None and not 1 <= parts <= MAX_READ_PARTS:
        return f"from 1 to {MAX_READ_PARTS} parts a dump"
    return None


def check_parts(parts: int | None) -> None:
    """A wrong part count stops the run before any work, naming the setting."""
    if (why := parts_problem(parts)) is not None:
        raise ConfigError(f"read_parts={parts}: {why}")


def parts_for(dump_bytes: int) -> int:
    return max(1, min(MAX_PARTS, -(-dump_bytes // PART_BYTES)))


def plan_read(dump: Path, workdir: Path, name: str, *, rdf: bool, buckets: int | None,
              parts: int | None = None, progress: Progress | None = None) -> ReadPlan:
    """The read of `dump` into `workdir/name` in `parts` parts (by default one per PART_BYTES of the dump)."""
    size = dump.stat().st_size
    return plan(dump, workdir / name, parts=parts or parts_for(size), rdf=rdf,
                buckets=buckets or snapshot.buckets_for(size), progress=progress)


def finish_read(todo: ReadPlan, workdir: Path, name: str, results: list[PartResult]) -> Path:
    """The snapshot folder `workdir/name` from the parts, its ledger part `read_{name}` saved as the serial read
    saves it (pipeline.read_snapshot); the buckets one after another (the flow maps them)."""
    joining = prepare_join(todo, results)
    if joining is not None:
        for b in range(todo.buckets):
            write_bucket(todo, results, joining, b)
    return finish_join(todo, workdir, name, results, joining)


def prepare_join(todo: ReadPlan, results: list[PartResult]) -> Joining | None:
    """The join's plan; None when the dump is to be read by the serial reader (rapidgzip could not read it whole,
    or an entity repeats across parts)."""
    return None if todo.serial is not None else prepare(todo, results)


def finish_join(todo: ReadPlan, workdir: Path, name: str, results: list[PartResult], joining: Joining | None) -> Path:
    """After the buckets (or with none, the serial read): the snapshot finished, its ledger part saved."""
    folder, dump = Path(todo.folder), Path(todo.dump)
    ledger = StageWriter.part(SOURCE, workdir)
    if joining is not None:
        info = finish(todo, results, joining, ledger.reject)
    else:
        # The run's log says why this read took one process.
        logging.getLogger(__name__).warning(todo.serial or f"{dump}: an entity repeats across parts; read by the "
                                            "serial reader")
        shutil.rmtree(folder / PARTS_DIR, ignore_errors=True)
        info = snapshot.read_snapshot(dump, folder, rdf=todo.rdf, reject=ledger.reject, buckets=todo.buckets)
    ledger.timings[f"read_{name}"] = round(time.time() - todo.started, 3)  # from the plan: the whole read
    ledger.count(f"{name}_entities", info.entities)
    ledger.count(f"{name}_triples", info.truthy_triples)
    ledger.save(f"read_{name}")
    return folder


def read_parts(dump: Path, workdir: Path, name: str, *, rdf: bool, buckets: int | None = None,
               parts: int | None = None, workers: int = 1, indexing: Progress | None = None,
               progress: Progress | None = None) -> Path:
    """The whole read outside a flow, through the functions the flow's tasks call: the plan, then the parts and
    the buckets' joins on a pool of `workers` processes (at most one a part; 1: in this process, one after
    another), then the finish. `indexing(done, total)`: the stored bytes the plan has read; `progress(done, total)`:
    the decompressed bytes the parts have read."""
    todo = plan_read(dump, workdir, name, rdf=rdf, buckets=buckets, parts=parts, progress=indexing)
    if todo.serial is not None:
        return finish_join(todo, workdir, name, [], None)
    spans = [end - start for start, end in todo.ranges]
    with _pool(min(workers, len(spans))) as lanes:
        results = []
        for result in lanes(read_part, [(todo, i) for i in range(len(spans))]):
            results.append(result)
            if progress is not None:
                progress(sum(spans[:len(results)]), todo.size)
        joining = prepare_join(todo, results)
        if joining is not None:
            list(lanes(write_bucket, [(todo, results, joining, b) for b in range(todo.buckets)]))
    return finish_join(todo, workdir, name, results, joining)


@contextmanager
def _pool(workers: int) -> Iterator[Callable[[Callable[..., T], list[tuple[Any, ...]]], Iterator[T]]]:
    """Calls of one function over argument tuples, results in order: in this process for one worker, else on
    a pool of processes started by a fork server (no fork of a process that holds threads, as a progress bar's)."""
    if workers <= 1:
        yield lambda fn, calls: (fn(*args) for args in calls)
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
        yield lambda fn, calls: pool.map(fn, *zip(*calls, strict=True))
