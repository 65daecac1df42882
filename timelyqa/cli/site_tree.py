"""`timelyqa crawl site-tree`, `timelyqa site-tree` and `timelyqa extract`: crawling a site into pages and a click
graph, questions by click depth from it, and what one page would give."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from timelyqa.cli.common import one_line_errors, print_questions
from timelyqa.errors import ConfigError

if TYPE_CHECKING:
    from timelyqa.site_tree.request import SiteTreeRequest

crawl_app = typer.Typer(help="Crawls of websites (each in its own Scrapy process), into pages and a click graph.",
                        no_args_is_help=True)


class Render(str, Enum):
    auto = "auto"
    never = "never"
    always = "always"


class SiteGenerator(str, Enum):
    template = "template"
    llm = "llm"


@crawl_app.command("site-tree")
def crawl_site_tree(
    roots: Annotated[list[str], typer.Option("--root", help="a root URL; repeat for several sites")],
    out: Annotated[Path, typer.Option(help="folder for pages.parquet, links.parquet, crawl_stats.json")],
    max_depth: Annotated[int, typer.Option(help="most clicks from a root (0 or more)")] = 4,
    max_pages: Annotated[int, typer.Option(help="most pages requested in all (1 or more)")] = 1000,
    allow_path: Annotated[list[str] | None, typer.Option(help="a regex a path must match; repeat for several")]
    = None,
    render: Annotated[Render, typer.Option(help="pages through Chromium: `auto` when the page as served shows "
                                           "scripts build what it shows (see spiders/render.py)")] = Render.auto,
    fresh: Annotated[bool, typer.Option(help="fetch again rather than from the HTTP cache")] = False,
    shard_prefix: Annotated[list[str] | None, typer.Option(
        help="a path prefix (/docs/) crawled by a process of its own, depths still exact; repeat for several "
             "(`/` and the rest stay with the site's own process); a URL names the site of several")] = None,
) -> None:
    """Breadth first from each root, on its own site only, every page at its exact click depth
    (User-Agent from TIMELYQA_CRAWL_USER_AGENT)."""
    from spiders.run import crawl
    from timelyqa.crawling import summary
    from timelyqa.site_tree.request import SiteTreeRequest, crawl_site

    with one_line_errors():
        request = SiteTreeRequest.of(roots=roots, out=out, max_depth=max_depth, max_pages=max_pages,
                                     allow_paths=allow_path or [], render=render.value, fresh=fresh,
                                     shard_prefixes=shard_prefix or [])
        stats = _sharded(request) if request.shard_prefixes else crawl_site(request, crawl=crawl)
    typer.echo(f"{summary(stats)} in {out / 'pages.parquet'}")


def _sharded(request: SiteTreeRequest) -> dict[str, object]:
    """The crawl as shards by path prefix (spiders/shards.py), each round's shards side by side in processes of
    their own, merged into `out`; as the site-tree flow crawls, without Prefect."""
    from concurrent.futures import ThreadPoolExecutor

    from spiders import shards
    from spiders.run import check_roots, summary
    from timelyqa.errors import SourceContractError
    from timelyqa.useragent import user_agent

    roots, out = request.roots or [], request.out
    plan = shards.Plan.of(roots, request.shard_prefixes)  # a wrong prefix stops here, before any request
    check_roots(roots, user_agent=user_agent())

    def crawl_round(todo: list[str]) -> None:
        with ThreadPoolExecutor(max_workers=len(todo)) as pool:
            list(pool.map(lambda key: shards.crawl_shard(plan, key, out, request.max_depth, request.max_pages,
                                                         request.render, fresh=request.fresh), todo))

    folders, rounds = shards.in_rounds(plan, out, request.max_depth, crawl_round)
    stats = shards.merge(folders, out, {"rounds": rounds})
    if not stats.get("pages"):
        raise SourceContractError(f"crawl site_tree fetched nothing: {summary(stats)}")
    return stats


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
    from timelyqa.site_tree.request import SiteTreeRequest, questions

    with one_line_errors():
        request = SiteTreeRequest.of(crawl=crawl_dir, out=out, generator=generator.value, domain=domain, seed=seed,
                                     previous=previous)
        manifest = questions(request)
    print_questions(manifest, out)


def extract_page(
    target: Annotated[str, typer.Argument(metavar="URL|FILE", help="a page's URL, or a file (.html or .html.gz)")],
    url: Annotated[str | None, typer.Option(help="the URL a FILE's page was served at (default: its file:// URL)")]
    = None,
) -> None:
    """Print, as JSON, what the news source would store of one page: title, date, author, host, body text or
    why it is no article, the sha256 of its bytes and its text's length. A URL is fetched once as the crawl would
    (User-Agent from TIMELYQA_CRAWL_USER_AGENT, robots.txt obeyed, redirects followed)."""
    from timelyqa.news import onepage
    from timelyqa.useragent import user_agent

    with one_line_errors():
        if onepage.is_url(target):
            if url is not None:
                raise ConfigError(f"--url names the page of a FILE; {target} is a URL already")
            page = onepage.fetch(target, user_agent())
        else:
            page = onepage.read_file(Path(target), url)
        result = onepage.stored(page)
    typer.echo(json.dumps(result, indent=2, ensure_ascii=False))
