"""The Wikipedia flow: a dump or the Action API and a window in, checked questions about infobox changes out.

One task per stage, as the Wikidata flow has: the pages fetched (the network), parsed into changes, the
questions written, the questions checked, then labels and outputs; each retries on its own, and an LLM
stage retried pays only for what its cache does not hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, publish_funnel, secret
from timelyqa.manifest import Manifest
from timelyqa.released import released_rows
from timelyqa.wikipedia import options, pipeline, recheck, writers
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
    return recheck.recheck_released(released_rows(previous, "wikipedia"), source, workdir, settings.end)


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def fetch_pages(source: options.Source, workdir: Path, settings: options.Settings) -> Path:
    return pipeline.fetch_pages(source, workdir, settings)


@task(cache_policy=NONE)
def read_changes(pages: Path, workdir: Path, settings: options.Settings, where: str) -> Path:
    return pipeline.read_changes(pages, workdir, settings, where=where)


# The model's key is read inside each task, never passed in: task inputs feed cache keys and flow parameters
# are stored by the API. Replies already given come from the LLM cache, so a retry pays only for the rest.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def write_questions(units: Path, workdir: Path, settings: options.Settings, llm_secret_block: str | None) -> Path:
    return pipeline.write_questions(units, workdir, _writer(workdir, settings, llm_secret_block))


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


@flow(name="wikipedia")
def wikipedia_flow(out: str, dump: str | None = None, api: str | None = None, start: str | None = None,
                   end: str | None = None, days: int = 7, seed: int = 0, cap_per_domain: int = DOMAIN_CAP,
                   horizon_days: int = 7, generator: str = "template", llm_domains: bool = False,
                   user_agent: str | None = None, llm_secret_block: str | None = None,
                   previous: str | None = None) -> dict[str, Any]:
    """Questions whose answers are Wikipedia infobox values changed in a window, as DailyQA makes them.

    The pages come from `dump` (a MediaWiki XML export with history) or `api` (a wiki's api.php, with
    `user_agent` or TIMELYQA_WIKIPEDIA_API_USER_AGENT naming who asks). The window is `start`..`end` (ISO),
    by default the `days` before the last midnight UTC; `horizon_days` after it are read for the update
    frequency. `generator` is `template` (offline) or `llm` (TIMELYQA_LLM_* writes, TIMELYQA_CHECK_LLM_*
    checks; the writer's key may come from the Prefect Secret block `llm_secret_block`). `llm_domains` labels
    domains with the writer's model (DailyQA's zero-shot way) instead of by rule. `previous` is the last release:
    its Wikipedia rows are answered again at `end` from the same dump or API, and those no longer true retired.
    Writes questions.parquet, rejected.parquet and manifest.json into `out`, and returns the manifest.
    """
    window = options.window(start, end, days=days)
    settings = options.Settings.of(start=window[0], end=window[1], seed=seed, cap_per_domain=cap_per_domain,
                                   horizon_days=horizon_days, generator=generator, llm_domains=llm_domains)
    source = options.source_of(dump, api, user_agent)
    out_dir = Path(out)
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    if previous:
        check_previous(Path(previous))
    check_inputs(source, settings)
    pages = fetch_pages(source, workdir, settings)
    units = read_changes(pages, workdir, settings, pipeline.origin(source))
    if previous:
        recheck_released(Path(previous), source, workdir, settings)
    else:
        recheck.forget(workdir)
    written = write_questions(units, workdir, settings, llm_secret_block)
    checked = check_questions(written, workdir, settings, llm_secret_block)
    manifest = write_outputs(source, checked, workdir, out_dir, settings, llm_secret_block)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
