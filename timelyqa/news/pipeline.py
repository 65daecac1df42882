"""The news source, step by step: portal day pages to events, events to the links to fetch, the crawl's articles
in, questions out.

Each step reads and writes files in the run's folder (`frames.py` names them) and saves its part of the ledger, so
that the CLI, the demo and the Prefect flow run the same steps, and a flow retries one without redoing the others:

1. `read_events`: the day pages in the window, from the MediaWiki API or an export -> `events.parquet`;
2. `plan_links`: each event's cited links on allowed outlets -> `links.parquet`, the others dropped;
3. the crawl (`spiders/news.py`, in its own process: the caller runs it) -> `crawl/articles.parquet` and
   `crawl/dropped.parquet`; `take_articles` brings them in -> `articles.parquet`;
4. `write_questions`: the template generator (offline), or the LLM writer's steps `llm_write` and `llm_check`;
   on both, every candidate passes the question-quality gate (`timelyqa.news.gate`, stage `quality`) before its
   answer is looked for in the article; `finish` writes questions, rejects and the manifest.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from datetime import date, datetime
from xml.etree import ElementTree
from pathlib import Path
from typing import Any, ClassVar, Literal

import polars as pl
from pydantic import Field, model_validator

from timelyqa import clock
from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.files import open_compressed, sha256_file, write_parquet
from timelyqa.llm.client import usage_during
from timelyqa.manifest import Input, Manifest
from timelyqa.settings import Settings as BaseSettings
from timelyqa.news import portal
from timelyqa.news.articles import ArticleReject
from timelyqa.news.frames import (ARTICLE_SCHEMA, ARTICLES, DROP_SCHEMA, DROPPED, EVENT_SCHEMA, EVENTS, LINK_SCHEMA,
                                  LINKS)
from timelyqa.news.llm import NewsLLMWriter, llm_news_writer, pairs
from timelyqa.news.llm import written as llm_written
from timelyqa.news.outlets import Outlets, crawl_args
from timelyqa.news.outlets import plan_links as plan
from timelyqa.news.templates import template_questions
from timelyqa.news.source import ARCHIVE_PORT, SOURCE
from timelyqa.sources import Progress
from timelyqa.stages import LEDGER, StageWriter

CRAWL = "crawl"
WRITTEN, CHECKED = "written.parquet", "checked.parquet"
MAX_DAYS = 366


class Settings(BaseSettings):
    """What shapes a news run besides its inputs; recorded in the manifest. A wrong value, however the settings are
    made, is a one-line ConfigError naming it (`news setting archive 'x': ...`)."""

    NAME: ClassVar[str] = "news"

    start: date
    end: date
    generator: Literal["template", "llm"] = "template"
    seed: int = 0
    archive: Literal["none", "wayback", "archive_today"] = Field(
        default="none", description="fetch each article's archived copy instead of the live page")

    @model_validator(mode="after")
    def _window(self) -> Settings:
        if self.start > self.end:
            raise ValueError(f"--start {self.start} is after --end {self.end}")
        if (self.end - self.start).days >= MAX_DAYS:
            raise ValueError(f"--start {self.start} to --end {self.end}: more than {MAX_DAYS} days; run it in parts")
        return self


def _ledger(out: Path) -> StageWriter:
    return StageWriter(SOURCE, out, work=Path(out) / "work")


def read_events(source: Any, settings: Settings, out: Path) -> Path:
    """The portal's day pages from `settings.start` to `settings.end` -> out/events.parquet."""
    ledger = _ledger(out)
    with ledger.timed("events"):
        events = portal.read_events(source, settings.start, settings.end)
    ledger.take(events)
    target = Path(out) / EVENTS
    write_parquet(events.frame.select(list(EVENT_SCHEMA)).cast(dict(EVENT_SCHEMA)), target)
    ledger.save("events")
    return target


def plan_links(out: Path, outlets: Outlets) -> Path:
    """Each event's cited links on allowed outlets -> out/links.parquet; a link anywhere else is never requested
    and is dropped with its reason."""
    ledger = _ledger(out)
    events = pl.read_parquet(Path(out) / EVENTS)
    links, drops = plan(events, outlets)
    ledger.count("links_cited", int(events.get_column("urls").list.len().sum() or 0))
    ledger.count("links_allowed", links.height)
    _drop(ledger, drops)
    target = Path(out) / LINKS
    write_parquet(links.select(list(LINK_SCHEMA)).cast(dict(LINK_SCHEMA)), target)
    ledger.save("links")
    return target


def take_articles(out: Path, crawl: Path | None = None) -> Path:
    """The crawl's kept articles -> out/articles.parquet, and its dropped pages into the ledger with their reasons."""
    crawl = Path(crawl) if crawl is not None else Path(out) / CRAWL
    if not (crawl / ARTICLES).is_file():
        raise ConfigError(f"{crawl}: no {ARTICLES} (not a finished news crawl)")
    ledger = _ledger(out)
    articles = pl.read_parquet(crawl / ARTICLES)
    dropped = pl.read_parquet(crawl / DROPPED) if (crawl / DROPPED).is_file() else pl.DataFrame(schema=DROP_SCHEMA)
    ledger.count("articles_fetched", articles.height + dropped.filter(
        pl.col("reason").is_in([str(ArticleReject.EMPTY_PAGE), str(ArticleReject.NOT_ARTICLE),
                                str(ArticleReject.OUTSIDE_WINDOW)])).height)
    ledger.count("articles_kept", articles.height)
    _drop(ledger, dropped)
    target = Path(out) / ARTICLES
    shutil.copyfile(crawl / ARTICLES, target)
    ledger.save("articles")
    return target


def _drop(ledger: StageWriter, drops: pl.DataFrame) -> None:
    for row in drops.iter_rows(named=True):
        ledger.reject({"url": row["url"], "event_id": row["event_id"], "outlet": row["outlet"]},
                      ArticleReject(row["reason"]), f"{row['url']}: {row['detail']}")


def write_questions(out: Path, settings: Settings) -> Manifest:
    """The template generator's questions from events and articles, and the run's outputs."""
    out = Path(out)
    events, articles = pl.read_parquet(out / EVENTS), pl.read_parquet(out / ARTICLES)
    ledger = _ledger(out)
    with ledger.timed("questions"):
        written = template_questions(events, articles, seed=settings.seed)
    ledger.take(written)
    ledger.save("questions")
    return finish(out, settings, written.records)


def finish(out: Path, settings: Settings, records: list[Any], details: dict[str, Any] | None = None) -> Manifest:
    """Every saved part of the ledger and the records kept -> questions.parquet, rejected.parquet, manifest.json."""
    out = Path(out)
    ledger = StageWriter.resume(SOURCE, out, work=out / "work")
    for record in records:
        ledger.keep(record)
    articles = pl.read_parquet(out / ARTICLES)
    fetched = articles.get_column("fetched_at").drop_nulls()
    as_of = fetched.max() if fetched.len() else clock.now()
    inputs = {name.removesuffix(".parquet"): Input(path=str(out / name), sha256=sha256_file(out / name))
              for name in (EVENTS, LINKS, ARTICLES) if (out / name).is_file()}
    return ledger.finish(as_of=as_of, inputs=inputs, settings=json.loads(settings.model_dump_json()),
                         details=details or {})


def start(out: Path) -> None:
    """Begin a run in `out`: the ledger parts of an earlier run there are cleared, so none is counted twice."""
    shutil.rmtree(Path(out) / "work" / LEDGER, ignore_errors=True)


def crawl_articles(out: Path, outlets: Path, settings: Settings, *, crawl: Crawl, archive_base: str | None = None,
                   tuned: dict[str, Any] | None = None) -> Path:
    """The links fetched by the news spider through `crawl` (the crawler's port) -> out/crawl; with no link to
    fetch, an empty crawl is written without starting one."""
    links, target = Path(out) / LINKS, Path(out) / CRAWL
    args = crawl_args(links, Path(outlets), archive=settings.archive, archive_base=archive_base)
    if pl.read_parquet(links).height == 0:
        target.mkdir(parents=True, exist_ok=True)
        write_parquet(pl.DataFrame(schema=ARTICLE_SCHEMA), target / ARTICLES)
        write_parquet(pl.DataFrame(schema=DROP_SCHEMA), target / DROPPED)
        return target
    crawl("news", args, target, settings=tuned)
    return target


def run(source: Any, outlets: Path, settings: Settings, out: Path, *, crawl: Crawl,
        writer: NewsLLMWriter | None = None, archive_base: str | None = None, tuned: dict[str, Any] | None = None
        ) -> Manifest:
    """Every step in turn, as `timelyqa news` runs them: `source` is what `timelyqa.wikipedia.options.source_of`
    gives (the MediaWiki API or an export), `outlets` the allow-list, `crawl` the crawler; the LLM writer when
    `writer` is given or `settings.generator` is `llm` (its models then named by `TIMELYQA_LLM_*` and
    `TIMELYQA_CHECK_LLM_*`)."""
    out = Path(out)
    Outlets.load(outlets)  # a bad allow-list stops the run before any request
    if settings.generator == "llm" and writer is None:
        writer = llm_news_writer(cache_dir=out / "llm-cache")
    start(out)
    read_events(source, settings, out)
    plan_links(out, Outlets.load(outlets))
    take_articles(out, crawl_articles(out, outlets, settings, crawl=crawl, archive_base=archive_base, tuned=tuned))
    if writer is None:
        return write_questions(out, settings)
    checked = llm_check(llm_write(out, writer), out, writer)
    return llm_finish(checked, out, settings)


def llm_write(out: Path, writer: NewsLLMWriter) -> Path:
    """The LLM path's first step: each (event, article) pair judged relevant and given a Q&A pair -> work/written."""
    out = Path(out)
    rows, dropped, counts = pairs(pl.read_parquet(out / EVENTS), pl.read_parquet(out / ARTICLES))
    ledger = _ledger(out)
    with ledger.timed("write"), usage_during(writer.llms, ledger.use):
        done = writer.write(rows)
    for line, n in counts.items():
        ledger.count(line, n)
    ledger.reject_all(dropped)
    ledger.save("write")
    return _rows_out(done, out / "work" / WRITTEN)


def llm_check(written_rows: Path, out: Path, writer: NewsLLMWriter) -> Path:
    """The LLM path's second step: each written pair answered, graded and checked by the checker -> work/checked."""
    ledger = _ledger(out)
    with ledger.timed("check"), usage_during(writer.llms, ledger.use):
        done = writer.check(pl.read_parquet(written_rows).to_dicts())
    ledger.save("check")
    return _rows_out(done, Path(out) / "work" / CHECKED)


def llm_finish(checked: Path, out: Path, settings: Settings) -> Manifest:
    """The checked pairs as records (or rejects with their reasons), and the run's outputs."""
    result = llm_written(pl.read_parquet(checked).to_dicts())
    ledger = _ledger(out)
    ledger.take(result)
    ledger.save("finish")
    return finish(out, settings.model_copy(update={"generator": "llm"}), result.records)


def _rows_out(rows: list[dict[str, Any]], target: Path) -> Path:
    write_parquet(pl.DataFrame(rows, infer_schema_length=None), target)
    return target


def archive_days(export: Path) -> tuple[date, date]:
    """The first and last day of the portal's day pages in an export (a bundled archive runs over all of them)."""
    if not Path(export).is_file():
        raise ConfigError(f"{export}: no such file (an archive's portal export of day pages)")
    days = []
    with open_compressed(Path(export)) as stream:
        for _, node in ElementTree.iterparse(stream):
            if node.tag.rsplit("}", 1)[-1] == "title" and (found := _DAY.match(node.text or "")):
                days.append(datetime.strptime(found.group(1), "%Y %B %d").date())
            node.clear()
    if not days:
        raise ConfigError(f"{export}: no Current events day page in it")
    return min(days), max(days)


def run_archive(export: Path, outlets: Path, out: Path, *, crawl: Crawl, generator: str = "template",
                writer: NewsLLMWriter | None = None, serve: Serve | None = None) -> Manifest:
    """A bundled archive (the demo's, the tests'): the portal's day pages from `export`, and beside the allow-list
    `outlets`, a folder `outlets/<host>/` of each outlet's pages, served on its loopback host at `ARCHIVE_PORT` for
    the run. `serve(folder, host, port)` gives what serves one outlet's folder (LocalSite; a test passes a server
    that records what it was asked); `writer` is an LLM writer, as for `run`."""
    first, last = archive_days(export)
    settings = Settings(start=first, end=last, generator=generator)  # type: ignore[arg-type]
    with ExitStack() as stack:
        for folder in archive_hosts(outlets):
            stack.enter_context((serve or _local_site)(folder, folder.name, ARCHIVE_PORT))
        return run(Path(export), Path(outlets), settings, out, crawl=crawl, writer=writer, tuned=LOCAL_PACE)


Serve = Callable[[Path, str, int], AbstractContextManager[Any]]
"""What serves an archive's outlet: its folder, its loopback host, the port."""


def archive_hosts(outlets: Path) -> list[Path]:
    """The folders `outlets/<host>/` beside an archive's allow-list, one an outlet's host; ConfigError without any."""
    root = Path(outlets).parent / "outlets"
    hosts = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    if not hosts:
        raise ConfigError(f"{root}: no outlet folders (outlets/<host>/) beside {Path(outlets).name}")
    return hosts


def _local_site(folder: Path, host: str, port: int) -> AbstractContextManager[Any]:
    from timelyqa.localsite import LocalSite  # noqa: PLC0415

    return LocalSite(folder, port=port, host=host)


LOCAL_PACE = {"AUTOTHROTTLE_START_DELAY": 0.0, "DOWNLOAD_DELAY": 0.0}
"""A bundled archive on this machine is crawled without waiting between requests."""
_DAY = re.compile(r"^Portal:Current events/(\d{4} [A-Z][a-z]+ \d{1,2})$")


def run_on(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    """The registry's run (SOURCE.run): a bundled archive, its portal export read, its outlets served on their
    loopback hosts, crawled through `crawl`, asked about."""
    portal, outlets = (Path(p) for p in inputs)
    return run_archive(portal, outlets, out, crawl=crawl)
