"""The `timelyqa` command: each subcommand runs the same code as its Prefect flow.

The composition root: the one module of `timelyqa` that imports `publish` (releases, the Hub), which the
rest of the core never does (an import-linter contract keeps it so).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from timelyqa import checks
from timelyqa.errors import ConfigError, GateFailed, TimelyQAError
from timelyqa.manifest import Manifest

app = typer.Typer(help="Question-answer datasets whose answers change with the world.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
console = Console(stderr=True)


def _show_version(shown: bool) -> None:
    if shown:
        from timelyqa.manifest import code_version

        typer.echo(f"timelyqa {code_version()}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                               help="print the version and exit")] = False) -> None:
    """Question-answer datasets whose answers change with the world."""


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Bad input and wrong settings end the command with one line naming the cause, not a traceback."""
    try:
        yield
    except TimelyQAError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1 if isinstance(exc, GateFailed) else 2) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        console.print(f"[red]error:[/red] setting {'.'.join(map(str, first['loc']))}: {first['msg']}",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


@app.command()
def wikidata(
    out: Annotated[Path, typer.Option(help="folder for questions.parquet, rejected.parquet, manifest.json")],
    before: Annotated[Path | None, typer.Option(help="Wikidata JSON dump at T0 (plain, .gz or .bz2)")] = None,
    after: Annotated[Path | None, typer.Option(help="Wikidata JSON dump at T1")] = None,
    dumps: Annotated[str | None, typer.Option(help="'latest' (the newest two weekly dumps) or T1's date YYYYMMDD, "
                                              "fetched from --mirror (User-Agent from "
                                              "TIMELYQA_WIKIDATA_MIRROR_USER_AGENT)")] = None,
    mirror: Annotated[str | None, typer.Option(help="dump mirror's wikidatawiki/entities/ URL, for --dumps; "
                                               "default https://dumps.wikimedia.org/wikidatawiki/entities/")] = None,
    cache: Annotated[Path | None, typer.Option(help="where --dumps keeps the dumps; default out/dumps")] = None,
    api: Annotated[str | None, typer.Option(help="instead of dumps: Wikidata's Action API, e.g. "
                                            "https://www.wikidata.org/w/api.php (User-Agent from "
                                            "TIMELYQA_WIKIDATA_API_USER_AGENT), with --since and --until")] = None,
    since: Annotated[str | None, typer.Option(help="with --api: T0, a date or ISO time (UTC when no zone), within "
                                              "the last 30 days")] = None,
    until: Annotated[str | None, typer.Option(help="with --api: T1; answers are as of this moment")] = None,
    endpoint: Annotated[str | None, typer.Option(help="SPARQL endpoint holding T1; default: a local Oxigraph (dumps) "
                                                 "or https://query.wikidata.org/sparql (--api)")] = None,
    endpoint_before: Annotated[str | None, typer.Option(help="SPARQL endpoint holding T0; default: a local "
                                                        "Oxigraph")] = None,
    local_store: Annotated[bool, typer.Option(help="with --api: check T1 on a local Oxigraph of the edited entities "
                                              "and their neighbourhood instead of the endpoint")] = False,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
    seed: Annotated[int, typer.Option(help="seed for every choice among equals")] = 0,
    max_anchors: Annotated[int | None, typer.Option(help="sample this many delta triples (seeded)")] = None,
    previous: Annotated[Path | None, typer.Option(help="the last release: its Wikidata rows are asked again of T1, "
                                                  "and those no longer true are retired")] = None,
) -> None:
    """Questions from the changes between two Wikidata dumps, or in a window of the API (--api --since --until),
    each verified by SPARQL against T1 and T0."""
    from timelyqa.wikidata import incremental
    from timelyqa.wikidata.pipeline import Settings, run

    with _one_line_errors():
        _check_paths(out=out, cache=cache, previous=previous)
        _check_urls(endpoint=endpoint, endpoint_before=endpoint_before, api=api, mirror=mirror)
        settings = Settings(seed=seed, max_anchors=max_anchors)
        way = incremental.mode(before, after, api, since, until, dumps)
        if way == "api":
            if endpoint_before is not None:
                raise ConfigError("--endpoint-before is for dumps: with --api, T0 is checked on a local Oxigraph")
            sparql = endpoint or incremental.DEFAULT_SPARQL
            wd, start, stop = incremental.prepare(api, since, until, user_agent=user_agent,  # type: ignore[arg-type]
                                                  endpoint=sparql)
            with _progress(counted=True) as report:
                manifest = incremental.run(wd, start, stop, out, endpoint=sparql, local_store=local_store,
                                           settings=settings, previous=previous, progress=report)
        else:
            if local_store or user_agent:
                raise ConfigError("--local-store and --user-agent go with --api, not with dumps")
            with _progress() as report:
                before, after = _dump_pair(before, after, dumps, mirror, cache, report)
                manifest = run(before, after, out, endpoint=endpoint, before_endpoint=endpoint_before,
                               settings=settings, progress=report, previous=previous)
    _print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}")


def _check_paths(*, out: Path | None = None, previous: Path | None = None, release: bool = False,
                 **folders: Path | None) -> None:
    """The folders a command writes (`--out`, and `folders` by option name) and the release it reads, before any
    work: a file where a folder goes would fail after hours, a wrong `--previous` would re-check nothing."""
    for option, folder in {"out": out, **folders}.items():
        if folder is not None:
            checks.out_folder(folder, _option(option))
    if previous is not None:
        checks.previous_folder(previous, "--previous", runs=not release)


def _check_urls(**urls: str | None) -> None:
    """Every service URL given, by option name: http(s) with a host, never file:// or a bare word."""
    for option, url in urls.items():
        if url is not None:
            checks.http_url(url, _option(option))


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _dump_pair(before: Path | None, after: Path | None, dumps: str | None, mirror: str | None, cache: Path | None,
               report: Any) -> tuple[Path, Path]:
    """Two dumps given by path, or fetched from a mirror by `--dumps` (incremental.mode has made sure it is one)."""
    if dumps is None:
        return before, after  # type: ignore[return-value]
    from timelyqa.wikidata.mirror import Mirror, MirrorSettings, parse_which

    parse_which(dumps)
    with Mirror(MirrorSettings.from_env(url=mirror, cache=cache), progress=report) as source:
        pair = source.fetch_pair(dumps)
    return pair.t0, pair.t1


wikipedia_app = typer.Typer(help="Questions from Wikipedia infobox changes (DailyQA), and their answers on any date.")
app.add_typer(wikipedia_app, name="wikipedia")


class Generator(str, Enum):
    template = "template"
    llm = "llm"


@wikipedia_app.callback(invoke_without_command=True)
def wikipedia(
    ctx: typer.Context,
    dump: Annotated[Path | None, typer.Option(help="MediaWiki XML export or dump with revision history (plain, "
                                              ".bz2, .gz)")] = None,
    api: Annotated[str | None, typer.Option(help="a wiki's Action API, e.g. https://en.wikipedia.org/w/api.php "
                                            "(User-Agent from TIMELYQA_WIKIPEDIA_API_USER_AGENT)")] = None,
    start: Annotated[str | None, typer.Option(help="window start, a date or ISO time (UTC when no zone)")] = None,
    end: Annotated[str | None, typer.Option(help="window end: answers are as of this moment")] = None,
    out: Annotated[Path | None, typer.Option(help="folder for questions.parquet, rejected.parquet, "
                                             "manifest.json")] = None,
    generator: Annotated[Generator, typer.Option(help="template (offline) or llm (TIMELYQA_LLM_* writes, "
                                                  "TIMELYQA_CHECK_LLM_* checks)")] = Generator.template,
    seed: Annotated[int, typer.Option(help="seed for the one key picked per revision and the domain cap")] = 0,
    cap_per_domain: Annotated[int, typer.Option(help="most questions per domain")] = 750,
    horizon_days: Annotated[int, typer.Option(help="days after the end watched for the update frequency")] = 7,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
    llm_domains: Annotated[bool, typer.Option(help="label domains with the model of TIMELYQA_LLM_* (DailyQA's "
                                              "zero-shot way) instead of by rule")] = False,
    previous: Annotated[Path | None, typer.Option(help="the last release: its Wikipedia rows are answered again at "
                                                  "--end from the same dump or API, and those no longer true are "
                                                  "retired")] = None,
) -> None:
    """Questions whose answers are infobox values changed in a window: `--dump FILE` or `--api URL`, `--start`,
    `--end`, `--out`. `timelyqa wikipedia answer` gives released questions their answers on another date."""
    if ctx.invoked_subcommand is not None:
        return
    from timelyqa.wikipedia import options, pipeline, writers

    with _one_line_errors():
        _check_paths(out=out, previous=previous)
        _check_urls(api=api)
        checks.bounded(horizon_days, "--horizon-days", 0, options.MAX_HORIZON_DAYS,
                       "a negative horizon watches nothing; past a year it says nothing of a weekly question")
        source = options.source_of(dump, api, user_agent)
        if start is None or end is None or out is None:
            raise ConfigError("timelyqa wikipedia needs --start, --end and --out")
        settings = options.Settings.of(start=options.parse_moment(start, "--start"),
                                       end=options.parse_moment(end, "--end"), seed=seed, cap_per_domain=cap_per_domain,
                                       horizon_days=horizon_days, generator=generator.value, llm_domains=llm_domains)
        writer = writers.llm_writer(cache_dir=out / "llm-cache") if settings.generator == "llm" else None
        domains = writers.llm_domains(cache_dir=out / "llm-cache", writer=writer) if llm_domains else None
        with _progress(counted=True) as report:
            manifest = pipeline.run(source, out, settings, writer=writer, domains=domains, progress=report,
                                    previous=previous)
    _print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}")


@wikipedia_app.command("answer")
def wikipedia_answer(
    date: Annotated[str, typer.Option(help="the date (or ISO time, UTC when no zone) to answer on")],
    questions: Annotated[Path, typer.Option(help="a source output folder, a release folder or a parquet file")],
    out: Annotated[Path, typer.Option(help="parquet file for the answers")],
    dump: Annotated[Path | None, typer.Option(help="MediaWiki XML dump with revision history")] = None,
    api: Annotated[str | None, typer.Option(help="a wiki's Action API URL")] = None,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
) -> None:
    """Each question's answer on DATE: its infobox value at the page's last revision at or before it."""
    from timelyqa.wikipedia.options import parse_moment, source_of
    from timelyqa.wikipedia.resolve import answer_questions, read_questions, write_answers

    with _one_line_errors():
        checks.out_file(out, "--out")
        _check_urls(api=api)
        source = source_of(dump, api, user_agent)
        when = parse_moment(date, "--date", end_of_day=True)
        frame = read_questions(questions)
        answers = answer_questions(frame, when, dump=source if isinstance(source, Path) else None,
                                   api=None if isinstance(source, Path) else source)
        write_answers(answers, out)
    typer.echo(answers.summary())
    typer.echo(f"answers on {when.isoformat()} in {out}")


@app.command()
def release(
    sources: Annotated[list[Path], typer.Option("--from", help="a source output folder; repeat for several")],
    out: Annotated[Path, typer.Option(help="the release folder (a Hub dataset repository)")],
    version: Annotated[str | None, typer.Option(help="tag; default vYYYY.MM.DD of the newest run's as_of, so the "
                                                "same inputs give the same release")] = None,
    previous: Annotated[Path | None, typer.Option(help="the previous release, if not already in --out")] = None,
    floors: Annotated[Path | None, typer.Option(help="a YAML file of pinned floors (rows per config, the most the "
                                                "question-quality gate may send back, funnel ratios): a release "
                                                "below them is not written, exit 1")] = None,
) -> None:
    """Split, merge and write source outputs as one release in the Hub layout."""
    from publish.gate import Floors
    from publish.release import build_release

    with _one_line_errors():
        _check_paths(out=out, previous=previous, release=True)
        if version is not None:
            checks.release_version(version)
        pinned = Floors.load(floors) if floors is not None else None
        manifest = build_release(sources, out, version=version, previous=previous, floors=pinned)
    typer.echo(f"release {manifest['version']} in {out}; read it with:")
    for config in manifest["configs"]:
        typer.echo(load_line(out, config))


@app.command()
def publish(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    repo: Annotated[str, typer.Option(help="the Hub dataset repository, ORG/NAME")],
    dry_run: Annotated[bool, typer.Option(help="show what would be uploaded, deleted and tagged; change nothing")] = False,
) -> None:
    """Upload a release as one commit and tag it with its version; the token comes from HF_TOKEN."""
    from publish.hub import publish_release

    with _one_line_errors():
        result = publish_release(release_dir, repo, dry_run=dry_run)
    typer.echo(result.summary())


DEMO_FLOORS = "data/demo-floors.yaml"
"""The floors the demo's release is held to (publish/gate.py)."""


@app.command()
def demo(out: Annotated[Path, typer.Option(help="where the demo writes")] = Path("out/demo")) -> None:
    """The main job on the embedded defaults: every registered source on its bundled inputs, into one release, held
    to the demo's pinned floors (data/demo-floors.yaml): a change that makes the demo's questions fewer or worse
    fails it.

    The demo is dated by its inputs, not the wall clock: its crawls are stamped with the newest moment the bundled
    inputs carry, so the same checkout gives the same release, byte for byte, on any day."""
    from publish.gate import Floors
    from publish.release import build_release
    from timelyqa import clock, demo as steps
    from timelyqa.sources import ROOT, sources

    with _one_line_errors():
        _check_paths(out=out)
        at = steps.inputs_clock()
    specs = sources()
    total = len(specs) + 1
    typer.echo(f"timelyqa demo: {len(specs)} sources on the bundled inputs in data/demo, dated {at.isoformat()} "
               "(the inputs' newest moment, not today)")
    folders = []
    with clock.fixed(at):
        for number, (name, spec) in enumerate(specs.items(), start=1):
            typer.echo(steps.step_header(number, total, spec))
            with _one_line_errors(), _progress(counted=True) as report:
                manifest = spec.demo(out / name, report)
            _print_funnel(manifest)
            typer.echo(f"{manifest.counts['questions']} questions in {out / name / 'questions.parquet'}")
            folders.append(out / name)
        typer.echo(steps.release_header(total, total, folders, out / "release"))
        with _one_line_errors():
            result = build_release(folders, out / "release", floors=Floors.load(ROOT / DEMO_FLOORS), synthetic=True)
    for config in result["configs"]:
        typer.echo(load_line(out / "release", config))
    for line in steps.summary(result, out / "release"):
        typer.echo(line)


review_app = typer.Typer(help="Human review of a release's test rows: accept or reject, never edit (LiveNewsBench's "
                         "human-verified set).", no_args_is_help=True)
app.add_typer(review_app, name="review")


@review_app.command("export")
def review_export(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    config: Annotated[str, typer.Option(help="the config whose test rows to review, e.g. news")],
    out: Annotated[Path, typer.Option(help="JSON lines file for the reviewer")],
    articles: Annotated[Path | None, typer.Option(help="a parquet with columns url and text (the news source's "
                                                  "articles.parquet): adds an excerpt around each answer")] = None,
    force: Annotated[bool, typer.Option(help="overwrite --out if it exists (it may hold a reviewer's decisions)")]
    = False,
) -> None:
    """Write the config's test rows that have no decision yet, each with an empty `decision` to fill with accept or
    reject. An existing --out is never overwritten without --force."""
    from publish.review import export_review

    with _one_line_errors():
        checks.out_file(out, "--out")
        result = export_review(release_dir, config, out, articles=articles, force=force)
    typer.echo(result.summary())


@review_app.command("import")
def review_import(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="the reviewed JSON lines file")],
    release_dir: Annotated[Path, typer.Option("--release", help="the release folder the rows came from")],
) -> None:
    """Take the accept/reject decisions into the release (kept in its reviews/ folder, applied to later releases)
    and rebuild its human_verified splits, manifest, card and changelog; refuse any other line with its reason."""
    from publish.release import import_review

    with _one_line_errors():
        result, manifest = import_review(file, release_dir)
    for message in result.messages():
        console.print(message, highlight=False, soft_wrap=True, markup=False)
    typer.echo(result.summary())
    verified = {config: sum(manifest["counts"][config].get("human_verified", {}).values())
                for config in manifest["counts"]}
    typer.echo(f"release {manifest['version']} in {release_dir}: human_verified rows "
               + ", ".join(f"{config} {n}" for config, n in sorted(verified.items())))


crawl_app = typer.Typer(help="Crawls of websites (each in its own Scrapy process), into pages and a click graph.",
                        no_args_is_help=True)
app.add_typer(crawl_app, name="crawl")


class Render(str, Enum):
    auto = "auto"
    never = "never"
    always = "always"


@crawl_app.command("site-tree")
def crawl_site_tree(
    roots: Annotated[list[str], typer.Option("--root", help="a root URL; repeat for several sites")],
    out: Annotated[Path, typer.Option(help="folder for pages.parquet, links.parquet, crawl_stats.json")],
    max_depth: Annotated[int, typer.Option(min=0, help="most clicks from a root")] = 4,
    max_pages: Annotated[int, typer.Option(min=1, help="most pages requested in all")] = 1000,
    allow_path: Annotated[list[str] | None, typer.Option(help="a regex a path must match; repeat for several")]
    = None,
    render: Annotated[Render, typer.Option(help="pages through Chromium: `auto` when the page as served shows "
                                           "scripts build what it shows (see spiders/render.py)")] = Render.auto,
    fresh: Annotated[bool, typer.Option(help="fetch again rather than from the HTTP cache")] = False,
) -> None:
    """Breadth first from each root, on its own site only, every page at its exact click depth
    (User-Agent from TIMELYQA_CRAWL_USER_AGENT)."""
    import json

    from spiders.run import check_roots, crawl, summary
    from timelyqa.useragent import user_agent

    with _one_line_errors():
        _check_paths(out=out)
        for root in roots:
            checks.http_url(root, "--root")
        check_roots(roots, user_agent=user_agent())
        stats = crawl("site_tree", {"roots": json.dumps(roots), "max_depth": max_depth, "max_pages": max_pages,
                                    "allow_paths": json.dumps(allow_path or []), "render": render.value},
                      out, fresh=fresh)
    typer.echo(f"{summary(stats)} in {out / 'pages.parquet'}")


class SiteGenerator(str, Enum):
    template = "template"
    llm = "llm"


class Archive(str, Enum):
    none = "none"
    wayback = "wayback"
    archive_today = "archive_today"


@app.command()
def news(
    start: Annotated[str, typer.Option(help="the first day (YYYY-MM-DD) whose portal page is read")],
    end: Annotated[str, typer.Option(help="the last day (YYYY-MM-DD)")],
    out: Annotated[Path, typer.Option(help="folder for events, articles, questions, rejects and the manifest")],
    api: Annotated[str | None, typer.Option(help="a wiki's Action API (User-Agent from --user-agent or "
                                            "TIMELYQA_WIKIPEDIA_API_USER_AGENT)")] = None,
    dump: Annotated[Path | None, typer.Option(help="instead of --api: a MediaWiki XML export of the day pages")]
    = None,
    outlets: Annotated[Path | None, typer.Option(help="the allow-list (YAML); default: LiveNewsBench's Figure 4 "
                                                 "outlets")] = None,
    generator: Annotated[Generator, typer.Option(help="template (offline) or llm (TIMELYQA_LLM_* writes, "
                                                  "TIMELYQA_CHECK_LLM_* checks)")] = Generator.template,
    seed: Annotated[int, typer.Option(help="seed for the span each template question masks")] = 0,
    archive: Annotated[Archive, typer.Option(help="fetch each article's archived copy instead of the live page")]
    = Archive.none,
    archive_base: Annotated[str | None, typer.Option(help="the archive's address (default: its public one)")] = None,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
) -> None:
    """Questions about the Current Events Portal's events from the articles they cite on allowed outlets
    (LiveNewsBench): day pages from `--api` (en.wikipedia.org's when neither is given) or `--dump`, links fetched
    only on the outlets of `--outlets` (crawl User-Agent from TIMELYQA_CRAWL_USER_AGENT)."""
    from timelyqa.news import llm, pipeline
    from timelyqa.news.outlets import Outlets
    from timelyqa.wikipedia.options import source_of

    with _one_line_errors():
        _check_paths(out=out)
        _check_urls(api=api, archive_base=archive_base)
        source = source_of(dump, api if (api or dump) else "https://en.wikipedia.org/w/api.php", user_agent)
        settings = pipeline.Settings.of(start=_day(start, "--start"), end=_day(end, "--end"),
                                        generator=generator.value, seed=seed, archive=archive.value)
        allow = outlets or Outlets.default().source
        writer = llm.llm_news_writer(cache_dir=out / "llm-cache") if settings.generator == "llm" else None
        manifest = pipeline.run(source, Path(allow), settings, out, writer=writer, archive_base=archive_base)
    _print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}; events in "
               f"{out / 'events.parquet'}, articles in {out / 'articles.parquet'}")


def _day(text: str, option: str) -> Any:
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option} {text!r}: not a date (YYYY-MM-DD)") from None


@app.command("site-tree")
def site_tree(
    crawl_dir: Annotated[Path, typer.Option("--crawl", help="a finished `timelyqa crawl site-tree` folder")],
    out: Annotated[Path, typer.Option(help="folder for questions.parquet, rejected.parquet, manifest.json")],
    generator: Annotated[SiteGenerator, typer.Option(help="template: facts in tables, definition lists and labelled "
                                                     "fields (offline); llm: WebWalker's prompts (TIMELYQA_LLM_* "
                                                     "writes, TIMELYQA_CHECK_LLM_* verifies)")]
    = SiteGenerator.template,
    domain: Annotated[str, typer.Option(help="conference, organization, education, game or other")] = "other",
    seed: Annotated[int, typer.Option(help="seed for the facts and page pairs chosen")] = 0,
    previous: Annotated[Path | None, typer.Option(help="a release (or earlier output) whose rows of these sites "
                                                  "this crawl re-checks: kept, or retired with why")] = None,
) -> None:
    """Questions by click depth from a crawled site tree, WebWalkerQA's way: single-source at depth 2-4, and
    multi-source from two pages."""
    from timelyqa.site_tree import llm, pipeline

    with _one_line_errors():
        _check_paths(out=out, previous=previous)
        settings = pipeline.Settings(domain=domain, seed=seed, generator=generator.value)
        pipeline.check_crawl(crawl_dir)
        writer = llm.llm_site_writer(cache_dir=out / "llm-cache") if settings.generator == "llm" else None
        manifest = pipeline.run(crawl_dir, out, settings, writer=writer, previous=previous)
    _print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}")


@app.command("extract")
def extract_page(
    target: Annotated[str, typer.Argument(metavar="URL|FILE", help="a page's URL, or a file (.html or .html.gz)")],
    url: Annotated[str | None, typer.Option(help="the URL a FILE's page was served at (default: its file:// URL)")]
    = None,
) -> None:
    """Print, as JSON, what the news source would store of one page: title, date, author, host, body text or
    why it is no article, the sha256 of its bytes and its text's length. A URL is fetched once as the crawl would
    (User-Agent from TIMELYQA_CRAWL_USER_AGENT, robots.txt obeyed, redirects followed)."""
    import json

    from timelyqa.news import onepage
    from timelyqa.useragent import user_agent

    with _one_line_errors():
        if onepage.is_url(target):
            if url is not None:
                raise ConfigError(f"--url names the page of a FILE; {target} is a URL already")
            page = onepage.fetch(target, user_agent())
        else:
            page = onepage.read_file(Path(target), url)
        result = onepage.stored(page)
    typer.echo(json.dumps(result, indent=2, ensure_ascii=False))


export_app = typer.Typer(help="Rows for RLVR trainers from a release's train split.", no_args_is_help=True)
app.add_typer(export_app, name="export")


def _export(kind: str, release_dir: Path, out: Path, config: str, split: str) -> None:
    from timelyqa import export

    with _one_line_errors():
        _check_paths(out=out)
        exported = (export.export_verl if kind == "verl" else export.export_trl)(release_dir, out, config=config,
                                                                               split=split)
    typer.echo(f"{kind}: {exported.summary()}")


@export_app.command("verl")
def export_verl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """verl rows: data_source, prompt, ability, reward_model, extra_info; score with timelyqa.rewards.compute_score."""
    _export("verl", release_dir, out, config, split)


@export_app.command("trl")
def export_trl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """TRL GRPO rows: a chat prompt plus answer columns; score with timelyqa.rewards.answer_reward."""
    _export("trl", release_dir, out, config, split)


@app.command("eval")
def evaluate(
    release: Annotated[str, typer.Argument(metavar="RELEASE", help="a release folder, or ORG/NAME[@TAG] on the Hub")],
    out: Annotated[Path, typer.Option(help="folder for results.parquet and report.md")],
    predictions: Annotated[Path | None, typer.Option(help="JSON lines {\"id\": ..., \"answer\": ...} that any "
                                                     "agent wrote (or \"completion\": a whole reply)")] = None,
    model: Annotated[str | None, typer.Option(help="the model to ask (else TIMELYQA_LLM_MODEL)")] = None,
    base_url: Annotated[str | None, typer.Option(help="its OpenAI-compatible endpoint (else "
                                                  "TIMELYQA_LLM_BASE_URL)")] = None,
    config: Annotated[list[str] | None, typer.Option(help="a config to score; repeat for several (default: all)")
                      ] = None,
    split: Annotated[str, typer.Option(help="which split")] = "test",
    after: Annotated[str | None, typer.Option(help="a model's training cutoff, YYYY-MM-DD: accuracy on events "
                                               "after it against those before")] = None,
    at: Annotated[str | None, typer.Option(help="the evaluation clock, ISO with its offset (default now)")] = None,
    judge_model: Annotated[str | None, typer.Option(help="a judge for names and text the grader does not accept "
                                                     "(LiveNewsBench's prompt; else TIMELYQA_JUDGE_LLM_MODEL)")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="the judge's endpoint (else "
                                                        "TIMELYQA_JUDGE_LLM_BASE_URL)")] = None,
    var: Annotated[list[str] | None, typer.Option(help="NAME=VALUE for the live questions' recipes (e.g. "
                                                  "site=https://...); repeat for several")] = None,
    allow_host: Annotated[list[str] | None, typer.Option(help="HOST[:PORT] the live questions' recipes may reach "
                                                         "though private (a release's recipes reach public "
                                                         "addresses only); repeat for several")] = None,
) -> None:
    """Score a model on a release: each question asked (or read from --predictions), graded by the release's grader,
    reported by config, source, level and event month."""
    from timelyqa import evaluate as scoring

    with _one_line_errors():
        _check_paths(out=out)
        cutoff = _day(after, "--after") if after else None
        from timelyqa.livecli import variables as parse_variables

        names = parse_variables(var)
        folder, name, revision = _release_folder(release)
        llm = None
        if predictions is None:
            from timelyqa.llm.client import LLM
            from timelyqa.llm.settings import LLMSettings

            llm = LLM(LLMSettings.from_env(model=model, base_url=base_url, cache_dir=out / "llm-cache"))
            llm.preflight()
        elif model or base_url:
            raise ConfigError("--predictions and --model/--base-url: give one way of answering")
        judge = None
        if judge_model or judge_base_url:
            from timelyqa.llm.client import LLM
            from timelyqa.llm.settings import LLMSettings

            judge = LLM(LLMSettings.from_env("TIMELYQA_JUDGE_LLM_", model=judge_model, base_url=judge_base_url,
                                             cache_dir=out / "llm-cache"))
            judge.preflight()
        try:
            done = scoring.evaluate(folder, out, predictions=predictions, llm=llm, configs=config, split=split,
                                    after=cutoff, at=at, release_name=name, revision=revision, judge_llm=judge,
                                    variables=names, allow_hosts=allow_host or ())
        finally:
            for client in (llm, judge):
                if client is not None:
                    client.close()
    typer.echo(done.summary())


def _release_folder(release: str) -> tuple[Path, str, str | None]:
    """A release folder as given, or ORG/NAME[@TAG] downloaded from the Hub: the folder, its name, its commit."""
    if Path(release).is_dir():
        return Path(release), release, None
    repo, _, tag = release.partition("@")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ConfigError(f"{release}: neither a release folder nor ORG/NAME[@TAG] on the Hub")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    try:
        folder = Path(snapshot_download(repo, repo_type="dataset", revision=tag or None))
    except (RepositoryNotFoundError, LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise ConfigError(f"{release}: cannot download the release ({type(exc).__name__})") from None
    return folder, release, folder.name


@export_app.command("lm-eval")
def export_lm_eval(
    release: Annotated[str, typer.Argument(metavar="RELEASE", help="a release folder, or ORG/NAME[@TAG] on the Hub")],
    out: Annotated[Path, typer.Option(help="folder for the task YAMLs and utils.py (lm_eval --include_path)")],
    split: Annotated[str, typer.Option(help="the split the tasks score")] = "test",
) -> None:
    """lm-evaluation-harness tasks, one per config (timelyqa_<config>): this release's prompt and grader."""
    from timelyqa.evaluate import release_configs
    from timelyqa.harness import write_tasks

    with _one_line_errors():
        _check_paths(out=out)
        folder, name, revision = _release_folder(release)
        configs = release_configs(folder)
        where = str(folder.resolve()) if revision is None else name.partition("@")[0]
        tasks = write_tasks(configs, where, out, split=split, revision=revision)
    typer.echo(f"{len(tasks)} lm-eval tasks in {out}: {', '.join(tasks)}; run them with")
    typer.echo(f"lm_eval --include_path {out} --tasks {tasks[0]} --model local-chat-completions "
               "--model_args model=NAME,base_url=http://HOST/v1/chat/completions --apply_chat_template")


def load_line(release_dir: Path, config: str = "default") -> str:
    return (f'python -c "import datasets; print(datasets.load_dataset(\'{release_dir}\', \'{config}\', '
            f'split=\'test\'))"')


@contextmanager
def _progress(*, counted: bool = False) -> Iterator[Any]:
    """A bar per stage: bytes of input read, or (`counted`) items done when their total is not known ahead."""
    columns = ([TextColumn("{task.description}"), SpinnerColumn(), TextColumn("{task.completed:,.0f}"),
                TimeElapsedColumn()] if counted else
               [TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn()])
    with Progress(*columns, console=console, transient=False, disable=os.environ.get("TIMELYQA_QUIET") == "1") as bar:
        tasks: dict[str, Any] = {}

        def report(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total or None)
            bar.update(tasks[name], completed=done, total=total or None)

        yield report


def _print_funnel(manifest: Manifest) -> None:
    table = Table(title=f"{manifest.source} funnel", show_header=True)
    table.add_column("stage")
    table.add_column("count", justify="right")
    for name, value in manifest.counts.items():
        table.add_row(name, str(value))
    console.print(table)
    if manifest.rejects:
        rejects = Table(title=f"{manifest.source} rejects", show_header=True)
        rejects.add_column("reason")
        rejects.add_column("count", justify="right")
        for reason, n in manifest.rejects.items():
            rejects.add_row(reason, str(n))
        console.print(rejects)


def _register_live() -> None:
    from timelyqa.livecli import live_app, official  # noqa: PLC0415 - a module of its own, added here

    app.add_typer(live_app, name="live")
    app.command("official")(official)


_register_live()

if __name__ == "__main__":
    app()
