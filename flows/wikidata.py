"""The Wikidata flow: two dumps in, verified questions out, one Prefect task per pipeline stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task

from flows.common import RETRY_TRANSIENT, progress_artifact, publish_funnel, run_name
from timelyqa.manifest import Manifest
from timelyqa.wikidata import pipeline


@task
def check_inputs(before: Path, after: Path, endpoint: str | None, before_endpoint: str | None = None) -> None:
    """Fail the run on a wrong path or endpoint before any work; never retried."""
    pipeline.check_inputs(before, after, endpoint, before_endpoint)


@task(**RETRY_TRANSIENT, task_run_name="read {name}")
def read_snapshot(dump: Path, workdir: Path, name: str, *, rdf: bool) -> Path:
    # The bytes read, as the CLI's bar shows them: a full dump takes hours.
    with progress_artifact(f"wikidata-read-{name}", f"wikidata: reading {dump.name}") as report:
        return pipeline.read_snapshot(dump, workdir, name, rdf=rdf,
                                      progress=lambda done, total: report(dump.name, done, total))


@task(**RETRY_TRANSIENT)
def compute_delta(t0_dir: Path, t1_dir: Path, workdir: Path) -> Path:
    return pipeline.compute_delta(t0_dir, t1_dir, workdir)


@task(**RETRY_TRANSIENT)
def synthesize_questions(t1_dir: Path, delta: Path, workdir: Path, settings: pipeline.Settings) -> Path:
    return pipeline.synthesize(t1_dir, delta, workdir, settings)


@task(**RETRY_TRANSIENT)
def verify_questions(candidates: Path, t1_dir: Path, workdir: Path, endpoint: str | None,
                     settings: pipeline.Settings, *, t0_dir: Path, before_endpoint: str | None = None) -> Path:
    return pipeline.verify(candidates, t1_dir, workdir, endpoint, settings, t0_dir=t0_dir,
                           before_endpoint=before_endpoint)


@task
def write_outputs(workdir: Path, out: Path, settings: pipeline.Settings) -> Manifest:
    return pipeline.finish(workdir, out, settings=settings)


def _window(params: dict[str, Any]) -> str:
    """`2026-11-09..2026-11-16`: the API window's days when the run has one, else the two dumps' names."""
    if params.get("since") and params.get("until"):
        return f"{str(params['since'])[:10]}..{str(params['until'])[:10]}"
    return f"{Path(params['before']).name}..{Path(params['after']).name}"


@flow(name="wikidata", flow_run_name=run_name(lambda p: f"wikidata {_window(p)}", "wikidata"))
def wikidata_flow(before: str, after: str, out: str, endpoint: str | None = None, seed: int = 0,
                  max_anchors: int | None = None, batch_size: int = 500, concurrency: int = 2,
                  before_endpoint: str | None = None) -> dict[str, Any]:
    """Questions whose answers changed between two Wikidata dumps, verified by SPARQL against `after`, and
    dropped when `before` gives the same single answer.

    `endpoint` is a SPARQL endpoint already holding `after`, `before_endpoint` one holding `before`; a dump
    without one is loaded into a local Oxigraph.
    `seed` and `max_anchors` choose which changes become questions; `batch_size` is questions per SPARQL query,
    `concurrency` how many such queries are in flight at once.
    Writes questions.parquet, rejected.parquet and manifest.json into `out`, and returns the manifest.
    """
    before_dump, after_dump, out_dir = Path(before), Path(after), Path(out)
    check_inputs(before_dump, after_dump, endpoint, before_endpoint)
    settings = pipeline.Settings(seed=seed, max_anchors=max_anchors, batch_size=batch_size, concurrency=concurrency)
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    # A snapshot needs RDF only when a local SPARQL endpoint is to be loaded with it.
    t0 = read_snapshot(before_dump, workdir, "t0", rdf=before_endpoint is None)
    t1 = read_snapshot(after_dump, workdir, "t1", rdf=endpoint is None)
    delta = compute_delta(t0, t1, workdir)
    candidates = synthesize_questions(t1, delta, workdir, settings)
    verify_questions(candidates, t1, workdir, endpoint, settings, t0_dir=t0, before_endpoint=before_endpoint)
    manifest = write_outputs(workdir, out_dir, settings)
    publish_funnel(manifest, out=str(out_dir))
    return manifest.model_dump(mode="json")
