"""`timelyqa news`: questions about the Current Events Portal's events from the articles they cite."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from timelyqa.cli.common import Generator, one_line_errors, print_funnel


class Archive(str, Enum):
    none = "none"
    wayback = "wayback"
    archive_today = "archive_today"


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
    from spiders.run import crawl
    from timelyqa.news.request import NewsRequest, run

    with one_line_errors():
        request = NewsRequest.of(out=out, api=api, dump=dump, outlets=outlets, start=start, end=end,
                                 generator=generator.value, seed=seed, archive=archive.value,
                                 archive_base=archive_base, user_agent=user_agent)
        manifest = run(request, crawl=crawl)
    print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}; events in "
               f"{out / 'events.parquet'}, articles in {out / 'articles.parquet'}")
