"""The Wikipedia flow: a dump or the Action API and a window in, checked questions about infobox changes out.

One task per stage, as the Wikidata flow has: the pages fetched (the network), parsed into changes, the
questions written, the questions checked, then labels and outputs; each retries on its own, and an LLM
stage retried pays only for what its cache does not hold.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NONE

from flows.common import (RETRY_TRANSIENT, last_release, progress_artifact, publish_funnel, reported, run_clock,
                          run_name, secret)
from timelyqa.manifest import Manifest
from timelyqa.refresh import forget_refresh
from timelyqa.released import released_rows
from timelyqa.wikipedia import options, pipeline, refresh, writers
from timelyqa.wikipedia.labels import DOMAIN_CAP


@task
def check_inputs(source: options.Source, settings: options.Settings) -> None:
    """Fail the run on a wrong path or endpoint before any work; never retried."""
    pipeline.open_source(source, settings)


@task
def check_previous(previous: Path) -> int:
    """How many Wikipedia rows the previous release has; a folder that is not a release fails the run before work."""
    return released_rows(previous, "wikipedia").height


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def recheck_released(previous: Path, source: options.Source, workdir: Path, settings: options.Settings) -> Path:
    return refresh.refresh_released(released_rows(previous, "wikipedia"), source, workdir, settings.end)


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def fetch_pages(source: options.Source, workdir: Path, settings: options.Settings) -> Path:
    return pipeline.fetch_pages(source, workdir, settings)


@task(cache_policy=NONE)
def read_changes(pages: Path, workdir: Path, settings: options.Settings, where: str) -> Path:
    # The pages read, as the CLI's counter shows them (their number is not known ahead).
    with progress_artifact("wikipedia-read-changes", f"wikipedia: reading {where}") as report:
        return pipeline.read_changes(pages, workdir, settings, where=where, progress=report)


# The model's key is read inside each task, never passed in: task inputs feed cache keys and flow parameters
# are stored by the API. Replies already given come from the LLM cache, so a retry pays only for the rest.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def write_questions(units: Path, workdir: Path, settings: options.Settings, llm_secret_block: str | None) -> Path:
    return pipeline.write_questions(units, workdir, _writer(workdir, settings, llm_secret_block))


@task(cache_policy=NONE)
def gate_questions(written: Path, workdir: Path) -> Path:
    return pipeline.gate_questions(written, workdir)


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def check_questions(written: Path, workdir: Path, settings: options.Settings, llm_secret_block: str | None) -> Path:
    return pipeline.check_questions(written, workdir, _writer(workdir, settings, llm_secret_block))


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def write_outputs(source: options.Source, checked: Path, workdir: Path, out: Path, settings: options.Settings,
                  llm_secret_block: str | None) -> Manifest:
    domains = None
    if settings.llm_domains:
        domains = writers.llm_domains(cache_dir=workdir / "llm-cache", api_key=secret(llm_secret_block))
    return pipeline.finish(source, checked, workdir, out, settings, domains=domains)


def _writer(workdir: Path, settings: options.Settings, block: str | None) -> writers.Writer:
    if settings.generator == "llm":
        return writers.llm_writer(cache_dir=workdir / "llm-cache", api_key=secret(block))
    return writers.TemplateWriter()


DAYS = 7


def _window(params: dict[str, Any]) -> tuple[datetime, datetime]:
    """The run's window: `start`..`end` as given, by default the `days` before the midnight (UTC) that ends the day
    before the run's scheduled start, so a Monday's run reads the week to Monday 00:00, however late it starts."""
    return options.window(params.get("start"), params.get("end"), days=params.get("days", DAYS), now=run_clock())


def _name(params: dict[str, Any]) -> str:
    start, end = _window(params)
    return f"wikipedia {start:%Y-%m-%d}..{end:%Y-%m-%d}"


@flow(name="wikipedia", flow_run_name=run_name(_name, "wikipedia"))
@reported
def wikipedia_flow(out: str, dump: str | None = None, api: str | None = None, start: str | None = None,
                   end: str | None = None, days: int = DAYS, seed: int = 0, cap_per_domain: int = DOMAIN_CAP,
                   horizon_days: int = 7, generator: str = "template", llm_domains: bool = False,
                   user_agent: str | None = None, llm_secret_block: str | None = None,
                   previous: str | None = None) -> dict[str, Any]:
    """Questions whose answers are Wikipedia infobox values changed in a window, as DailyQA makes them.

    The pages come from `dump` (a MediaWiki XML export with history) or `api` (a wiki's api.php, with
    `user_agent` or TIMELYQA_WIKIPEDIA_API_USER_AGENT naming who asks). The window is `start`..`end` (ISO),
    by default the `days` before the last midnight UTC before the run's scheduled start; `horizon_days` after it
    are read for the update frequency. `generator` is `template` (offline) or `llm` (TIMELYQA_LLM_* writes,
    TIMELYQA_CHECK_LLM_* checks; the writer's key may come from the Prefect Secret block `llm_secret_block`).
    `llm_domains` labels domains with the writer's model (DailyQA's zero-shot way) instead of by rule. `previous`
    is the last release: its Wikipedia rows are answered again at `end` from the same dump or API, and those no
    longer true retired; a folder not there yet is the first week: nothing to re-check.
    Writes questions.parquet, rejected.parquet and manifest.json into `out`, and returns the manifest.
    """
    window = _window({"start": start, "end": end, "days": days})
    settings = options.Settings.of(start=window[0], end=window[1], seed=seed, cap_per_domain=cap_per_domain,
                                   horizon_days=horizon_days, generator=generator, llm_domains=llm_domains)
    source = options.source_of(dump, api, user_agent)
    out_dir = Path(out)
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    prior = last_release(previous)
    if prior:
        check_previous(prior)
    check_inputs(source, settings)
    pages = fetch_pages(source, workdir, settings)
    units = read_changes(pages, workdir, settings, pipeline.origin(source))
    if prior:
        recheck_released(prior, source, workdir, settings)
    else:
        forget_refresh(workdir)
    written = write_questions(units, workdir, settings, llm_secret_block)
    gated = gate_questions(written, workdir)
    checked = check_questions(gated, workdir, settings, llm_secret_block)
    manifest = write_outputs(source, checked, workdir, out_dir, settings, llm_secret_block)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
