"""The Wikidata flow: two dumps, or a window of the Wikidata API, in; verified questions out; one Prefect task per
pipeline stage."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from prefect import Task, flow, task, unmapped
from prefect.task_runners import TaskRunner

from flows.common import (RETRY_TRANSIENT, ProgressArtifact, last_release, progress_artifact, publish_funnel, reported,
                          run_clock, run_name)
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.refresh import forget_refresh
from timelyqa.released import released_rows
from timelyqa.wikidata import batches, incremental, partitioned, pipeline, reader_run, refresh, verifying
from timelyqa.wikidata.batches import AnchorKey, BatchResult
from timelyqa.wikidata.reader import PartResult, ReadPlan
from timelyqa.wikidata.reader_join import Joining
from timelyqa.wikidata.verifying import VerifyResult
from timelyqa.wikidata.api import DEFAULT_ENDPOINT, WikidataApiSettings
from timelyqa.wikipedia.options import window

DAYS = 7
DASK_ADDRESS_ENV = "TIMELYQA_DASK_ADDRESS"
"""The setting beside the flow's `dask_address`: `local:N` (a LocalCluster of N worker processes on this machine)
or a scheduler's address (`tcp://scheduler:8786`); unset or empty, the flow's own task runner."""


def dask_runner(address: str | None) -> TaskRunner[Any] | None:
    """The DaskTaskRunner `address` names (or the setting when it is None); None for the flow's own runner.
    A wrong value is a ConfigError naming the setting, before any work."""
    address = os.environ.get(DASK_ADDRESS_ENV) if address is None else address
    if not address:
        return None
    from prefect_dask import DaskTaskRunner  # imports dask and distributed: only for a run that uses them

    if address.startswith("local:"):
        workers = address.removeprefix("local:")
        if not workers.isdigit() or not 1 <= int(workers) <= 256:
            raise ConfigError(f"dask_address {address!r}: local:N wants N workers from 1 to 256")
        # One thread a worker: the stages are CPU-bound Python; no dashboard port to collide with another run's.
        return DaskTaskRunner(cluster_kwargs={"n_workers": int(workers), "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None})
    if "://" not in address or not address.split("://", 1)[1]:
        raise ConfigError(f"dask_address {address!r} ({DASK_ADDRESS_ENV}): give local:N or a scheduler address "
                          "such as tcp://scheduler:8786")
    return DaskTaskRunner(address=address)


class Fanout:
    """Runs a stage's partitions as mapped tasks: on the Dask runner when one is configured, else on the flow's
    own runner; results, never futures, cross between stages (prefect #15633)."""

    def __init__(self, runner: TaskRunner[Any] | None) -> None:
        self.runner = runner

    def map(self, stage: Task[..., Any], each: Callable[[int], None] | None = None, **params: Any) -> list[Any]:
        """The stage's results in order; `each(k)` called as the k-th is at hand (a progress report)."""
        futures = self.runner.map(stage, params) if self.runner is not None else stage.map(**params)
        results = []
        for k, f in enumerate(futures):
            results.append(f.result())
            if each is not None:
                each(k)
        return results


@contextmanager
def fanout(address: str | None) -> Iterator[Fanout]:
    runner = dask_runner(address)
    if runner is None:
        yield Fanout(None)
        return
    with runner:
        yield Fanout(runner)


@task
def check_inputs(before: Path, after: Path, endpoint: str | None, before_endpoint: str | None = None) -> None:
    """Fail the run on a wrong path or endpoint before any work; never retried."""
    pipeline.check_inputs(before, after, endpoint, before_endpoint)


@task(**RETRY_TRANSIENT, task_run_name="read {name}")
def read_snapshot(dump: Path, workdir: Path, name: str, *, rdf: bool, buckets: int | None = None) -> Path:
    # The bytes read, as the CLI's bar shows them: a full dump takes hours.
    with progress_artifact(f"wikidata-read-{name}", f"wikidata: reading {dump.name}") as report:
        return pipeline.read_snapshot(dump, workdir, name, rdf=rdf, buckets=buckets,
                                      progress=lambda done, total: report(dump.name, done, total))


@task(task_run_name="index {name}")
def plan_read(dump: Path, workdir: Path, name: str, rdf: bool, buckets: int | None, parts: int | None) -> ReadPlan:
    return reader_run.plan_read(dump, workdir, name, rdf=rdf, buckets=buckets, parts=parts)


@task(**RETRY_TRANSIENT, task_run_name="read {name} part {i}")
def read_part(todo: ReadPlan, name: str, i: int) -> PartResult:
    return reader_run.read_part(todo, i)


@task(task_run_name="plan the join of {name}")
def plan_join(todo: ReadPlan, name: str, results: list[PartResult]) -> Joining | None:
    return reader_run.prepare_join(todo, results)


@task(**RETRY_TRANSIENT, task_run_name="join {name} bucket {b}")
def join_bucket(todo: ReadPlan, name: str, results: list[PartResult], joining: Joining, b: int) -> None:
    reader_run.write_bucket(todo, results, joining, b)


@task(**RETRY_TRANSIENT, task_run_name="read {name}")
def finish_join(todo: ReadPlan, workdir: Path, name: str, results: list[PartResult], joining: Joining | None) -> Path:
    return reader_run.finish_join(todo, workdir, name, results, joining)


def read_over(lanes: Fanout, dumps: list[Path], workdir: Path, rdf: list[bool], buckets: int | None,
              parts: int | None) -> list[Path]:
    """Both dumps read a task a part, then joined a task a bucket (the parts, then the buckets, of both dumps in
    one map, so that neither waits on the other's), finished by a task `read {name}`: the files the serial reader
    writes. A progress artifact a dump counts its parts read."""
    names = ["t0", "t1"][:len(dumps)]
    reports = [ProgressArtifact(f"wikidata-read-{name}", f"wikidata: reading {dump.name}")
               for name, dump in zip(names, dumps, strict=True)]
    plans = lanes.map(plan_read, dump=dumps, workdir=unmapped(workdir), name=names, rdf=rdf,
                      buckets=unmapped(buckets), parts=unmapped(parts))
    todo = [(k, i) for k, p in enumerate(plans) if p.serial is None for i in range(len(p.ranges))]

    def part_read(n: int) -> None:
        k = todo[n][0]
        reports[k]("parts read", sum(1 for j, _ in todo[:n + 1] if j == k), len(plans[k].ranges))

    done = lanes.map(read_part, each=part_read, todo=[plans[k] for k, _ in todo], name=[names[k] for k, _ in todo],
                     i=[i for _, i in todo]) if todo else []
    results = [[r for (k, _), r in zip(todo, done, strict=True) if k == j] for j in range(len(plans))]
    joins = lanes.map(plan_join, todo=plans, name=names, results=results)
    spread = [(k, b) for k, j in enumerate(joins) if j is not None for b in range(plans[k].buckets)]
    if spread:
        lanes.map(join_bucket, todo=[plans[k] for k, _ in spread], name=[names[k] for k, _ in spread],
                  results=[results[k] for k, _ in spread], joining=[joins[k] for k, _ in spread],
                  b=[b for _, b in spread])
    folders = lanes.map(finish_join, todo=plans, workdir=unmapped(workdir), name=names, results=results,
                        joining=joins)
    for report in reports:
        report.finish()
    return folders


@task(**RETRY_TRANSIENT)
def compute_delta(t0_dir: Path, t1_dir: Path, workdir: Path) -> Path:
    return pipeline.compute_delta(t0_dir, t1_dir, workdir)


@task
def plan_delta(t0_dir: Path, t1_dir: Path, workdir: Path) -> tuple[Path, int]:
    return pipeline.delta_buckets(t0_dir, t1_dir, workdir)


@task(task_run_name="delta bucket {b} of {n}")
def delta_bucket(t0_dir: Path, t1_dir: Path, parts: Path, b: int, n: int) -> Path:
    return pipeline.delta_bucket(t0_dir, t1_dir, parts, b, n)


@task
def merge_delta(workdir: Path) -> Path:
    return pipeline.merge_delta(workdir)


def delta_over(lanes: Fanout, t0: Path, t1: Path, workdir: Path) -> Path:
    """The delta, a task a bucket of subjects, then one k-way merge."""
    parts, n = plan_delta(t0, t1, workdir)
    lanes.map(delta_bucket, t0_dir=unmapped(t0), t1_dir=unmapped(t1), parts=unmapped(parts), b=list(range(n)),
              n=unmapped(n))
    return merge_delta(workdir)


@task
def plan_synthesis(delta: Path, workdir: Path, settings: pipeline.Settings) -> partitioned.SynthesisPlan:
    return partitioned.plan(delta, workdir, settings.synthesis_batch)


@task(task_run_name="anchors of delta rows {span}")
def anchor_keys(t1_dir: Path, delta: Path, span: tuple[int, int], fanout_cap: int) -> list[AnchorKey]:
    return partitioned.batch_anchor_keys(t1_dir, delta, span, fanout_cap)


@task(task_run_name="synthesis batch {index}")
def synthesize_batch(t1_dir: Path, delta: Path, workdir: Path, index: int, span: tuple[int, int],
                     settings: pipeline.Settings, chosen: set[AnchorKey] | None) -> BatchResult:
    return partitioned.synthesize_batch(t1_dir, delta, workdir, index, span, seed=settings.seed,
                                        max_constraints=settings.max_constraints, fanout_cap=settings.fanout_cap,
                                        chosen=chosen)


@task
def merge_candidates(workdir: Path, results: list[BatchResult]) -> Path:
    return partitioned.merge(workdir, results)


def synthesize_over(lanes: Fanout, t1: Path, delta: Path, workdir: Path, settings: pipeline.Settings) -> Path:
    """What pipeline.synthesize does, its batches mapped: (anchor keys, a sample,) batches, one merge."""
    todo = plan_synthesis(delta, workdir, settings)
    spans = [tuple(span) for span in todo.ranges]
    if settings.max_anchors is not None:
        keys = lanes.map(anchor_keys, t1_dir=unmapped(t1), delta=unmapped(delta), span=spans,
                         fanout_cap=unmapped(settings.fanout_cap))
        todo.chosen = batches.sample(keys, seed=settings.seed, max_anchors=settings.max_anchors)
    results = lanes.map(synthesize_batch, t1_dir=unmapped(t1), delta=unmapped(delta), workdir=unmapped(workdir),
                        index=list(range(len(spans))), span=spans, settings=unmapped(settings),
                        chosen=unmapped(todo.chosen))
    return merge_candidates(workdir, results)


@task(**RETRY_TRANSIENT)
def verify_questions(candidates: Path, t1_dir: Path, workdir: Path, endpoint: str | None,
                     settings: pipeline.Settings, *, t0_dir: Path, before_endpoint: str | None = None) -> Path:
    return pipeline.verify(candidates, t1_dir, workdir, endpoint, settings, t0_dir=t0_dir,
                           before_endpoint=before_endpoint)


@task(**RETRY_TRANSIENT, task_run_name="verification batch {span}")
def verify_batch(candidates: Path, span: tuple[int, int], t1_dir: Path, t0_dir: Path, workdir: Path,
                 endpoint: str | None, before_endpoint: str | None, settings: pipeline.Settings) -> VerifyResult:
    return pipeline.verify_batch(candidates, span, t1_dir, t0_dir, workdir, endpoint, before_endpoint, settings)


@task
def merge_verdicts(candidates: Path, workdir: Path, results: list[VerifyResult]) -> Path:
    return verifying.finish(candidates, workdir, results)


def verify_over(lanes: Fanout, candidates: Path, t1: Path, t0: Path, workdir: Path, endpoint: str | None,
                before_endpoint: str | None, settings: pipeline.Settings) -> Path:
    """What pipeline.verify does, its batches mapped, each on its own subgraph store or the endpoints."""
    spans = verifying.ranges(candidates, settings.verify_batch)
    results = lanes.map(verify_batch, candidates=unmapped(candidates), span=spans, t1_dir=unmapped(t1),
                        t0_dir=unmapped(t0), workdir=unmapped(workdir), endpoint=unmapped(endpoint),
                        before_endpoint=unmapped(before_endpoint), settings=unmapped(settings))
    return merge_verdicts(candidates, workdir, results)


@task
def check_previous(previous: Path) -> int:
    """How many Wikidata rows the previous release has; a folder that is not a release fails the run before work."""
    return released_rows(previous, "wikidata").height


@task(**RETRY_TRANSIENT)
def recheck_released(previous: Path, workdir: Path, endpoint: str | None, rdf: Path | None,
                     settings: pipeline.Settings) -> Path:
    return refresh.refresh_released(released_rows(previous, "wikidata"), workdir, endpoint=endpoint, rdf=rdf,
                                    concurrency=settings.concurrency)


@task
def write_outputs(workdir: Path, out: Path, settings: pipeline.Settings) -> Manifest:
    return pipeline.finish(workdir, out, settings=settings)


@task
def check_window(api: WikidataApiSettings, since: datetime, until: datetime, endpoint: str) -> None:
    """Fail the run on a wrong window, API or endpoint before any work; never retried."""
    incremental.check_inputs(api, since, until, endpoint)


@task(**RETRY_TRANSIENT)
def fetch_edited(api: WikidataApiSettings, since: datetime, until: datetime, workdir: Path) -> tuple[Path, Path]:
    # The revisions read at both ends, as the CLI's bar counts them: a busy week edits a million entities.
    with progress_artifact("wikidata-fetch", "wikidata: revisions of the edited entities read") as report:
        return incremental.fetch_states(api, since, until, workdir, report)


@task(**RETRY_TRANSIENT)
def synthesize_over_api(t1_dir: Path, t0_dir: Path, delta: Path, workdir: Path, settings: pipeline.Settings,
                        api: WikidataApiSettings, endpoint: str, until: datetime) -> Path:
    return incremental.synthesize(t1_dir, t0_dir, delta, workdir, settings, api=api, endpoint=endpoint, until=until)


@task(**RETRY_TRANSIENT)
def verify_over_api(candidates: Path, workdir: Path, endpoint: str, settings: pipeline.Settings, *,
                    local_store: bool) -> Path:
    t0_store, t1_store = incremental.stores(workdir, local_store=local_store)
    return pipeline.verify(candidates, t1_store, workdir, None if local_store else endpoint, settings,
                           t0_dir=t0_store)


@task
def write_api_outputs(workdir: Path, out: Path, api: WikidataApiSettings, endpoint: str, since: datetime,
                      until: datetime, local_store: bool, settings: pipeline.Settings) -> Manifest:
    return incremental.finish(workdir, out, api=api, endpoint=endpoint, since=since, until=until,
                              local_store=local_store, settings=settings)


def _window(params: dict[str, Any]) -> str:
    """`2026-11-09..2026-11-16`: the two dumps' names when the run has them, else the API window's days."""
    if params.get("before") and params.get("after"):
        return f"{Path(params['before']).name}..{Path(params['after']).name}"
    since, until = api_window(params.get("since"), params.get("until"), days=params.get("days", DAYS))
    return f"{since.isoformat()[:10]}..{until.isoformat()[:10]}"


def api_window(since: str | None, until: str | None, *, days: int) -> tuple[datetime, datetime]:
    """The API window as given, or its missing ends from the run's clock: `until` the last midnight UTC before the
    run's scheduled start, `since` `days` before it (the week before a Monday run)."""
    return window(since, until, days=days, now=run_clock())


@flow(name="wikidata", flow_run_name=run_name(lambda p: f"wikidata {_window(p)}", "wikidata"))
@reported
def wikidata_flow(before: str | None = None, after: str | None = None, out: str = "out/wikidata",
                  endpoint: str | None = None, seed: int = 0, max_anchors: int | None = None, batch_size: int = 500,
                  concurrency: int = 2, before_endpoint: str | None = None, api: str | None = None,
                  since: str | None = None, until: str | None = None, days: int = DAYS, local_store: bool = False,
                  previous: str | None = None, dask_address: str | None = None,
                  synthesis_batch: int = batches.BATCH_ROWS, buckets: int | None = None,
                  verify_batch: int = verifying.BATCH_QUESTIONS, subgraphs: bool = True,
                  read_parts: int | None = None) -> dict[str, Any]:
    """Questions whose answers changed between two Wikidata dumps (`before`, `after`) or in a window of the
    Wikidata API (`api`, `since`, `until`), verified by SPARQL against T1, and dropped when T0 gives the same
    single answer.

    Without dumps, the API window is `since`..`until`, by default the `days` before the last midnight UTC before
    the run's scheduled start, on `api` (by default Wikidata's).
    Dumps: `endpoint` is a SPARQL endpoint already holding `after`, `before_endpoint` one holding `before`; a
    dump without one is loaded into a local Oxigraph.
    API window (T0 within the last 30 days; User-Agent from TIMELYQA_WIKIDATA_API_USER_AGENT): `endpoint`
    (default https://query.wikidata.org/sparql) gives synthesis its subject sets and checks T1, or with
    `local_store` a local Oxigraph of the edited entities and their neighbourhood checks T1; T0 is checked on a
    local Oxigraph of the edited entities at T0 and the same neighbourhood.
    `seed` and `max_anchors` choose which changes become questions; `batch_size` is questions per SPARQL query,
    `concurrency` how many such queries are in flight at once. `previous` is the last release: its Wikidata rows
    are asked again of T1 (of `endpoint`, or a local Oxigraph of `after`; not of an API window's local store, which
    holds only the window's entities), and those no longer true are rejected at stage `refresh` (retired from the
    next release); a `previous` folder that does not exist yet is the first week: nothing to re-check.
    `dask_address` (else the TIMELYQA_DASK_ADDRESS setting) runs the dumps' reads (each in `read_parts` parts of
    its decompressed bytes, by default one per GB of dump, after rapidgzip indexes it on every core), the delta's
    buckets and the synthesis batches (`synthesis_batch` delta rows each; `buckets` of subjects a snapshot is cut
    into, a power of two, by default one per 256 MB of compressed dump) as tasks on a Dask cluster: `local:N`
    starts N worker processes here, `tcp://host:8786` uses a running scheduler whose workers see the same `out`
    folder. The files are the same byte for byte with or without it. Verification runs in batches of `verify_batch`
    candidates too; without an endpoint, each batch asks a local Oxigraph of the subgraph of the snapshot its
    questions can touch (`subgraphs`; off: of the whole snapshot, which a full dump's T1 outgrows).
    Writes questions.parquet, rejected.parquet and manifest.json into `out`, and returns the manifest.
    """
    out_dir = Path(out)
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    settings = pipeline.Settings(seed=seed, max_anchors=max_anchors, batch_size=batch_size, concurrency=concurrency,
                                 synthesis_batch=synthesis_batch, verify_batch=verify_batch, subgraphs=subgraphs)
    dask_runner(dask_address)  # a wrong address or bucket count fails the run here, before any work
    pipeline.check_buckets(buckets)
    reader_run.check_parts(read_parts)
    prior = last_release(previous)
    if before is None and after is None:
        start, stop = api_window(since, until, days=days)
        api, since, until = api or DEFAULT_ENDPOINT, start.isoformat(), stop.isoformat()
    if incremental.mode(before, after, api, since, until) == "api":
        if before_endpoint is not None:
            raise ConfigError("before_endpoint is for dumps: with an API window, T0 is checked on a local Oxigraph")
        sparql = endpoint or incremental.DEFAULT_SPARQL
        wd, start, stop = incremental.prepare(api, since, until, endpoint=sparql)  # type: ignore[arg-type]
        check_window(wd, start, stop, sparql)
        if prior:
            check_previous(prior)
        t0_dump, t1_dump = fetch_edited(wd, start, stop, workdir)
        t0 = read_snapshot(t0_dump, workdir, "t0", rdf=True)
        t1 = read_snapshot(t1_dump, workdir, "t1", rdf=True)
        delta = compute_delta(t0, t1, workdir)
        candidates = synthesize_over_api(t1, t0, delta, workdir, settings, wd, sparql, stop)
        verify_over_api(candidates, workdir, sparql, settings, local_store=local_store)
        if prior and not local_store:
            recheck_released(prior, workdir, sparql, None, settings)
        else:
            forget_refresh(workdir)
        manifest = write_api_outputs(workdir, out_dir, wd, sparql, start, stop, local_store, settings)
    else:
        before_dump, after_dump = Path(before), Path(after)  # type: ignore[arg-type]
        check_inputs(before_dump, after_dump, endpoint, before_endpoint)
        if prior:
            check_previous(prior)
        with fanout(dask_address) as lanes:
            # A snapshot needs RDF only when a local SPARQL endpoint is to be loaded with it.
            t0, t1 = read_over(lanes, [before_dump, after_dump], workdir,
                               [before_endpoint is None, endpoint is None], buckets, read_parts)
            delta = delta_over(lanes, t0, t1, workdir)
            candidates = synthesize_over(lanes, t1, delta, workdir, settings)
            verify_over(lanes, candidates, t1, t0, workdir, endpoint, before_endpoint, settings)
        if prior:
            recheck_released(prior, workdir, endpoint, t1 / "rdf.nt", settings)
        else:
            forget_refresh(workdir)
        manifest = write_outputs(workdir, out_dir, settings)
    publish_funnel(manifest, out=str(out_dir))
    return manifest.model_dump(mode="json")
