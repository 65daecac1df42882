"""The news flow: the Current Events Portal's day pages, the articles they cite on allowed outlets, questions.

One task per step (timelyqa/news/pipeline.py), each retried on its own: the day pages read (the wiki), the links
planned, the crawl in its own process, the articles taken in, then the questions: the template generator in one
task, the LLM writer in three (write, check, finish), a retry paying only for the replies its cache does not hold.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from datetime import date
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, crawl_rows, publish_funnel, reported, run_clock, run_name, secret
from spiders.run import crawl as run_crawl
from timelyqa.localsite import LocalSite
from timelyqa.manifest import Manifest
from timelyqa.news import pipeline
from timelyqa.news.llm import NewsLLMWriter, llm_news_writer
from timelyqa.news.outlets import Outlets
from timelyqa.news.request import WIKIPEDIA_API, NewsRequest
from timelyqa.news.request import window as days_window
from timelyqa.news.source import ARCHIVE_PORT


@task
def check_inputs(outlets: Path, out: Path) -> None:
    """Fail the run on a bad allow-list before any work; never retried. Starts the run's ledger afresh."""
    Outlets.load(outlets)
    pipeline.start(out)


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def read_events(source: Any, settings: pipeline.Settings, out: Path) -> Path:
    return pipeline.read_events(source, settings, out)


@task(cache_policy=NONE)
def plan_links(out: Path, outlets: Path) -> Path:
    return pipeline.plan_links(out, Outlets.load(outlets))


@task(timeout_seconds=4 * 3600, tags=["crawl"], cache_policy=NONE)
def crawl_articles(out: Path, outlets: Path, settings: pipeline.Settings, archive_base: str | None,
                   tuned: dict[str, Any] | None) -> Path:
    """The crawl in its own process (Twisted's reactor cannot restart); fails when it fetched nothing."""
    crawl = pipeline.crawl_articles(out, outlets, settings, crawl=run_crawl, archive_base=archive_base,
                                   tuned=tuned)
    stats = crawl / "crawl_stats.json"
    if stats.is_file():  # none when no link was to be fetched: no crawl ran
        create_table_artifact(crawl_rows(json.loads(stats.read_text(encoding="utf-8"))), key="news-crawl",
                              description="news: what the crawl fetched and why not")
    return crawl


@task(cache_policy=NONE)
def take_articles(out: Path, crawl: Path) -> Path:
    articles = pipeline.take_articles(out, crawl)
    import polars as pl  # noqa: PLC0415 - only for the artifact

    dropped = pl.read_parquet(crawl / "dropped.parquet").group_by("reason").len().sort("reason")
    rows = [{"what": "articles kept", "count": pl.read_parquet(articles).height},
            *({"what": f"dropped: {reason}", "count": n} for reason, n in dropped.iter_rows())]
    create_table_artifact(rows, key="news-articles", description="news: the articles kept, and the pages dropped")
    return articles


@task(cache_policy=NONE)
def write_questions(out: Path, settings: pipeline.Settings) -> Manifest:
    return pipeline.write_questions(out, settings)


# The model's key is read inside each task, never passed in: task inputs feed cache keys and flow parameters
# are stored by the API.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def llm_write(out: Path, llm_secret_block: str | None) -> Path:
    return pipeline.llm_write(out, _writer(out, llm_secret_block))


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def llm_check(written: Path, out: Path, llm_secret_block: str | None) -> Path:
    return pipeline.llm_check(written, out, _writer(out, llm_secret_block))


@task(cache_policy=NONE)
def llm_finish(checked: Path, out: Path, settings: pipeline.Settings) -> Manifest:
    return pipeline.llm_finish(checked, out, settings)


@task
def check_models(out: Path, llm_secret_block: str | None) -> None:
    """Fail the run before any work when a model is not served or its key is refused; never retried."""
    _writer(out, llm_secret_block)


def _writer(out: Path, block: str | None) -> NewsLLMWriter:
    return llm_news_writer(cache_dir=Path(out) / "llm-cache", api_key=secret(block))


def window(start: str | None, end: str | None, days: int, today: date | None = None) -> tuple[date, date]:
    """The request's window, at the run's scheduled day when `today` is not given (the run's name uses it)."""
    return days_window(start, end, days, today or run_clock().date())


def _name(params: dict[str, Any]) -> str:
    """`news 2026-11-23`, `news 2026-11-17..2026-11-23`, or the bundled archive as given (`news data/demo/news`)."""
    if params.get("archive_dir"):
        return f"news {params['archive_dir']}"
    first, last = window(params.get("start"), params.get("end"), params.get("days", 1))
    return f"news {first}" if first == last else f"news {first}..{last}"


@flow(name="news", flow_run_name=run_name(_name, "news"))
@reported
def news_flow(out: str, api: str | None = WIKIPEDIA_API, dump: str | None = None, archive_dir: str | None = None,
              outlets: str | None = None, start: str | None = None, end: str | None = None, days: int = 1,
              generator: str = "template", seed: int = 0, archive: str = "none", archive_base: str | None = None,
              user_agent: str | None = None, llm_secret_block: str | None = None) -> dict[str, Any]:
    """Questions about the news events of Wikipedia's Current Events Portal, as LiveNewsBench makes them.

    The day pages `start`..`end` (ISO dates; by default the `days` days before today, UTC) come from `api` (a wiki's
    api.php, with `user_agent` or TIMELYQA_WIKIPEDIA_API_USER_AGENT naming who asks) or `dump` (a MediaWiki XML
    export). `archive_dir` instead names a bundled archive (`portal.xml`, `outlets.yaml` and `outlets/<host>/`,
    the demo's is data/demo/news), its outlets served on their loopback hosts for the run and its whole span read.
    Cited links are fetched only on the outlets of `outlets` (a YAML allow-list; default the paper's Figure 4),
    with the crawl's User-Agent (TIMELYQA_CRAWL_USER_AGENT); `archive` (wayback, archive_today) fetches archived
    copies instead, from `archive_base` when given. `generator` is `template` (offline) or `llm` (LiveNewsBench's
    prompts: TIMELYQA_LLM_* writes, TIMELYQA_CHECK_LLM_* checks; the writer's key may come from the Prefect Secret
    block `llm_secret_block`). Writes events, articles, questions, rejects and a manifest into `out`.
    """
    request = NewsRequest.of(out=out, api=None if (dump or archive_dir) else api, dump=dump, archive_dir=archive_dir,
                             outlets=outlets, start=start, end=end, days=days, generator=generator, seed=seed,
                             archive=archive, archive_base=archive_base, user_agent=user_agent,
                             llm_secret_block=llm_secret_block)
    out_dir = request.out
    with ExitStack() as stack:
        source, allow = request.wiki(), request.allow_list()
        settings = request.settings(run_clock().date())
        if request.archive_dir is not None:
            for host in pipeline.archive_hosts(request.archive_dir / "outlets.yaml"):
                stack.enter_context(LocalSite(host, port=ARCHIVE_PORT, host=host.name))
        if settings.generator == "llm":
            check_models(out_dir, llm_secret_block)
        check_inputs(allow, out_dir)
        read_events(source, settings, out_dir)
        plan_links(out_dir, allow)
        crawl = crawl_articles(out_dir, allow, settings, archive_base, request.tuned)
    take_articles(out_dir, crawl)
    if settings.generator == "llm":
        written = llm_write(out_dir, llm_secret_block)
        checked = llm_check(written, out_dir, llm_secret_block)
        manifest = llm_finish(checked, out_dir, settings)
    else:
        manifest = write_questions(out_dir, settings)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
