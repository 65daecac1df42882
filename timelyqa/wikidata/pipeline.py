"""The Wikidata source end to end: two dumps in, verified questions, rejects and a manifest out.

Each stage reads and writes files in a work folder, so that the CLI and the Prefect flow run the
same stages and a flow can retry one without redoing the others.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from datetime import date, datetime
from pathlib import Path

import polars as pl
from pydantic import Field

from timelyqa.errors import ConfigError
from timelyqa.crawling import Crawl
from timelyqa.settings import Settings as BaseSettings
from timelyqa.manifest import Input, Manifest
from timelyqa.sparql import SparqlEndpoint
from timelyqa.stages import StageWriter
from timelyqa.refresh import finish_refresh, forget_refresh
from timelyqa.released import released_rows
from timelyqa.wikidata import delta as delta_rules
from timelyqa.wikidata import batches, partitioned, refresh, verifying
from timelyqa.wikidata import snapshot
from timelyqa.wikidata.dump import check_dump
from timelyqa.wikidata.merge import merge_sorted
from timelyqa.wikidata.graph import Graph
from timelyqa.sources import Progress
from timelyqa.wikidata.source import SOURCE

Progress = snapshot.Progress


class Settings(BaseSettings):
    """What shapes a run's output besides its inputs; recorded in the manifest.
    A wrong value is a one-line ConfigError."""

    seed: int = 0
    max_anchors: int | None = Field(default=None, ge=1, description="sample this many anchors (seeded)")
    fanout_cap: int = Field(default=10_000, ge=2, description="largest subject set held for one (p, o)")
    max_constraints: int = Field(default=4, ge=2, le=8)
    batch_size: int = Field(default=500, ge=1, description="questions per SPARQL verification query")
    concurrency: int = Field(default=2, ge=1, le=8, description="verification queries in flight at once")
    verify_batch: int = Field(default=verifying.BATCH_QUESTIONS, ge=1, description="candidates a verification "
                              "batch checks, on one store")
    subgraphs: bool = Field(default=True, description="a local store holds the subgraph the questions can touch, "
                            "not the whole snapshot")
    synthesis_batch: int = Field(default=batches.BATCH_ROWS, ge=1, description="delta rows a synthesis batch reads")


def check_inputs(before: Path, after: Path, endpoint: str | None, before_endpoint: str | None = None) -> None:
    """Everything that can be wrong before any work: dumps that are missing or not dumps, swapped by the dates in
    their names, a dead endpoint."""
    check_dump(before)
    check_dump(after)
    check_order(before, name_date(before), after, name_date(after))
    for url in (endpoint, before_endpoint):
        if url:
            SparqlEndpoint(url, retries=1, backoff=0.5).ping()


_NAME_DATE = re.compile(r"(?<![0-9])((?:19|20)[0-9]{6})(?![0-9])")


def name_date(dump: Path) -> date | None:
    """The date a dump's file name gives (`wikidata-20260302-all.json.gz`, as Wikimedia names them), if one does."""
    for stamp in _NAME_DATE.findall(Path(dump).name):
        try:
            return datetime.strptime(stamp, "%Y%m%d").date()
        except ValueError:
            continue
    return None


def check_order(before: Path | str, t0: date | datetime | None, after: Path | str,
                t1: date | datetime | None) -> None:
    """A ConfigError when T0 is dated after T1: the delta would run backwards and ask about facts that ended.

    A dump is dated by the date in its file name before any work (Wikimedia's own names carry it), and once read
    by its newest entity modification (`latest-all.json.gz` and renamed files carry none), before the delta."""
    if t0 is not None and t1 is not None and t0 > t1:
        raise ConfigError(f"{before} (T0, {_when(t0)}) is newer than {after} (T1, {_when(t1)}): "
                          "give the older dump first")


def _when(moment: date | datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z") if isinstance(moment, datetime) else moment.isoformat()


def check_buckets(buckets: int | None) -> None:
    """A ConfigError, before any work, for a bucket count the snapshot cannot be cut into."""
    if buckets is not None and (not 1 <= buckets <= snapshot.MAX_BUCKETS or buckets & (buckets - 1)):
        raise ConfigError(f"buckets={buckets}: a power of two from 1 to {snapshot.MAX_BUCKETS}")


def read_snapshot(dump: Path, workdir: Path, name: str, *, rdf: bool, progress: Progress | None = None,
                  buckets: int | None = None) -> Path:
    """Stream one dump into `workdir/name`; its triples in `buckets` buckets of subjects (default: by the dump's
    size, snapshot.buckets_for), so that the delta holds one bucket at a time."""
    folder = workdir / name
    ledger = StageWriter.part(SOURCE, workdir)
    with ledger.timed(f"read_{name}"):
        info = snapshot.read_snapshot(dump, folder, rdf=rdf, reject=ledger.reject, progress=progress,
                                      buckets=buckets or snapshot.buckets_for(dump.stat().st_size))
    ledger.count(f"{name}_entities", info.entities)
    ledger.count(f"{name}_triples", info.truthy_triples)
    ledger.save(f"read_{name}")
    return folder


def compute_delta(t0_dir: Path, t1_dir: Path, workdir: Path) -> Path:
    """The delta of two snapshots, one bucket of subjects at a time (the coarser snapshot's buckets), each
    bucket's rows spilled to a file and k-way merged in T1's order: memory holds one bucket pair, then one chunk
    a bucket, never the whole delta. The flow runs the buckets as tasks (delta_bucket), perhaps on a cluster."""
    ledger = StageWriter.part(SOURCE, workdir)
    with ledger.timed("delta"):
        parts, n = delta_buckets(t0_dir, t1_dir, workdir)
        for b in range(n):
            delta_bucket(t0_dir, t1_dir, parts, b, n)
    return merge_delta(workdir, ledger)


def delta_buckets(t0_dir: Path, t1_dir: Path, workdir: Path) -> tuple[Path, int]:
    """The folder the buckets' deltas go to (emptied) and how many buckets: the coarser snapshot's count.
    Refuses a T0 newer than T1 before any work."""
    info0, info1 = snapshot.SnapshotInfo.load(t0_dir), snapshot.SnapshotInfo.load(t1_dir)
    check_order(info0.path, _newest(info0), info1.path, _newest(info1))
    parts = workdir / "delta-buckets"
    shutil.rmtree(parts, ignore_errors=True)
    parts.mkdir(parents=True)
    return parts, min(info0.buckets, info1.buckets)


def delta_bucket(t0_dir: Path, t1_dir: Path, parts: Path, b: int, n: int) -> Path:
    """The delta of bucket `b` of `n`, its rows sorted by their place in T1 (`row`), as `parts/NNNN.parquet`."""
    t0, t1 = snapshot.read_bucket(t0_dir, b, n), snapshot.read_bucket(t1_dir, b, n, rows=True)
    path = parts / f"{b:04d}.parquet"
    delta_rules.delta_rows(t0, t1).write_parquet(path)
    return path


def merge_delta(workdir: Path, ledger: StageWriter | None = None) -> Path:
    """The buckets' deltas k-way merged by `row` into `delta.parquet` (merge.merge_sorted), then removed."""
    ledger = ledger or StageWriter.part(SOURCE, workdir)
    parts = workdir / "delta-buckets"
    path = workdir / "delta.parquet"
    with ledger.timed("delta"):
        stats = merge_sorted(sorted(parts.glob("*.parquet")), path, key="row",
                             schema=pl.Schema({**delta_rules.DELTA_SCHEMA, "row": pl.UInt64()}))
        shutil.rmtree(parts)
    ledger.count("delta_triples", stats.rows)
    ledger.save("delta")
    return path


def synthesize(t1_dir: Path, delta_path: Path, workdir: Path, settings: Settings, *, graph: Graph | None = None,
               as_of: datetime | None = None) -> Path:
    """Filter the delta to anchors, write L1/L2/L3 candidates, one per question, that pass the quality gate (the
    common rules and Wikidata's, timelyqa.wikidata.gate); every drop is kept with its reason.

    In batches of delta rows (timelyqa.wikidata.partitioned: the flow maps the same batches as tasks), each over
    a graph of its own, then one merge: memory holds a batch's neighbourhood, not the whole delta.
    `graph` is the T1 graph to synthesize over (default: the T1 snapshot's own tables), `as_of` the moment the
    answers hold (default: the snapshot's newest modification)."""
    ledger = StageWriter.part(SOURCE, workdir)
    with ledger.timed("synthesize"):
        todo = partitioned.plan(delta_path, workdir, settings.synthesis_batch)
        if settings.max_anchors is not None:
            keys = [partitioned.batch_anchor_keys(t1_dir, delta_path, span, settings.fanout_cap, graph)
                    for span in todo.ranges]
            todo.chosen = batches.sample(keys, seed=settings.seed, max_anchors=settings.max_anchors)
        results = [partitioned.synthesize_batch(t1_dir, delta_path, workdir, i, span, seed=settings.seed,
                                                max_constraints=settings.max_constraints,
                                                fanout_cap=settings.fanout_cap, chosen=todo.chosen, as_of=as_of,
                                                graph=graph)
                   for i, span in enumerate(todo.ranges)]
    return partitioned.merge(workdir, results, ledger)


def verify(candidates: Path, t1_dir: Path, workdir: Path, endpoint: str | None, settings: Settings, *,
           t0_dir: Path, before_endpoint: str | None = None) -> Path:
    """Every candidate, at every level, must return exactly one answer, its own, from a SPARQL endpoint holding T1,
    and must not return that same answer alone from one holding T0: such a question tests nothing new.

    In batches of `settings.verify_batch` candidates (timelyqa.wikidata.verifying: the flow maps the same batches
    as tasks). Without an endpoint, a snapshot is served by a local Oxigraph: of the subgraph a batch's questions
    can touch (`settings.subgraphs`, timelyqa.wikidata.subgraph), else of its whole RDF
    (`read_snapshot(rdf=True)`)."""
    ledger = StageWriter.part(SOURCE, workdir)
    with ledger.timed("verify"):
        results = [verify_batch(candidates, span, t1_dir, t0_dir, workdir, endpoint, before_endpoint, settings)
                   for span in verifying.ranges(candidates, settings.verify_batch)]
    return verifying.finish(candidates, workdir, results, ledger)


def verify_batch(candidates: Path, span: tuple[int, int], t1_dir: Path, t0_dir: Path, workdir: Path,
                 endpoint: str | None, before_endpoint: str | None, settings: Settings) -> verifying.VerifyResult:
    return verifying.verify_batch(candidates, span, t1_dir, t0_dir, workdir, endpoint=endpoint,
                                  before_endpoint=before_endpoint, batch_size=settings.batch_size,
                                  concurrency=settings.concurrency, subgraphs=settings.subgraphs)


def finish(workdir: Path, out: Path, *, settings: Settings | None = None) -> Manifest:
    """Write out/questions.parquet, rejected.parquet and manifest.json from a work folder's stages."""
    t0, t1 = snapshot.SnapshotInfo.load(workdir / "t0"), snapshot.SnapshotInfo.load(workdir / "t1")
    ledger = StageWriter.resume(SOURCE, out, work=workdir)
    ledger.keep_frame(pl.read_parquet(workdir / "verified.parquet"))
    ledger.use({"llm_calls": 0})
    finish_refresh(workdir, out)
    return ledger.finish(as_of=_as_of(t1), inputs={"before": Input(path=t0.path, sha256=t0.sha256),
                                                   "after": Input(path=t1.path, sha256=t1.sha256)},
                         settings=(settings or Settings()).model_dump())


def run(before: Path, after: Path, out: Path, *, endpoint: str | None = None, before_endpoint: str | None = None,
        settings: Settings | None = None, progress: Callable[[str, int, int], None] | None = None,
        previous: Path | None = None) -> Manifest:
    """The whole source: what `timelyqa wikidata` and the `wikidata` flow both do.

    `endpoint` holds T1 and `before_endpoint` T0; a snapshot without one is served by a local Oxigraph. With
    `previous` (a release folder), its Wikidata rows are asked again of T1 (stage `refresh`, wikidata/refresh.py)."""
    settings = settings or Settings()
    before, after, out = Path(before), Path(after), Path(out)
    check_inputs(before, after, endpoint, before_endpoint)
    released = released_rows(previous, SOURCE.name) if previous is not None else None  # a bad folder: before work
    workdir = out / "work"
    def step(name: str) -> Progress | None:
        return (lambda done, total: progress(name, done, total)) if progress else None
    t0 = read_snapshot(before, workdir, "t0", rdf=before_endpoint is None, progress=step(f"reading {before.name}"))
    t1 = read_snapshot(after, workdir, "t1", rdf=endpoint is None, progress=step(f"reading {after.name}"))
    delta = compute_delta(t0, t1, workdir)
    candidates = synthesize(t1, delta, workdir, settings)
    verify(candidates, t1, workdir, endpoint, settings, t0_dir=t0, before_endpoint=before_endpoint)
    if released is not None:
        refresh.refresh_released(released, workdir, endpoint=endpoint, rdf=t1 / "rdf.nt",
                                 concurrency=settings.concurrency)
    else:
        forget_refresh(workdir)
    return finish(workdir, out, settings=settings)


def _newest(info: snapshot.SnapshotInfo) -> datetime | None:
    return datetime.fromisoformat(info.newest_modified.replace("Z", "+00:00")) if info.newest_modified else None


def _as_of(info: snapshot.SnapshotInfo) -> datetime:
    """The moment T1's answers hold: its newest modification (the dump's own cut-off)."""
    return partitioned._as_of(info)


def run_on(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    """The registry's run (SOURCE.run): the two dumps, T0 then T1; nothing is crawled."""
    before, after = inputs
    return run(before, after, out, progress=progress)
