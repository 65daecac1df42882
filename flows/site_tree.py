"""The site-tree flow: a crawl of each root in its own process, then questions by click depth from its pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextlib import ExitStack

from prefect import flow, task
from prefect.artifacts import create_table_artifact

from flows.common import publish_funnel
from spiders.run import check_roots, crawl
from spiders.settings import user_agent
from timelyqa.errors import ConfigError
from timelyqa.localsite import LocalSite
from timelyqa.manifest import Manifest
from timelyqa.site_tree import pipeline
from timelyqa.site_tree.source import DEMO_PORT


@task
def check_inputs(roots: list[str]) -> None:
    """Fail the run before any work on a root that does not answer or a User-Agent without a contact."""
    try:
        agent = user_agent()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    check_roots(roots, user_agent=agent)


@task(timeout_seconds=4 * 3600, tags=["crawl"])
def crawl_sites(roots: list[str], out: Path, max_depth: int, max_pages: int, render: str) -> dict[str, Any]:
    """Each crawl in its own process (Twisted's reactor cannot restart); fails when it fetched nothing."""
    stats = crawl("site_tree", {"roots": json.dumps(roots), "max_depth": max_depth, "max_pages": max_pages,
                                "render": render}, out)
    rows = [{"what": "pages", "count": stats["pages"]}, {"what": "bytes", "count": stats["bytes"]},
            {"what": "rendered", "count": stats["rendered"]},
            *({"what": f"depth {d}", "count": n} for d, n in stats["pages_per_depth"].items()),
            *({"what": f"error: {r}", "count": n} for r, n in stats["errors"].items()),
            *({"what": f"refused: {r}", "count": n} for r, n in stats["refused"].items()),
            *({"what": f"bounded: {r}", "count": n} for r, n in stats["bounded"].items())]
    create_table_artifact(rows, key="site-tree-crawl", description="site_tree: what the crawl fetched and why not")
    return stats


@task
def make_questions(crawl_dir: Path, out: Path, settings: pipeline.Settings, previous: Path | None) -> Manifest:
    return pipeline.run(crawl_dir, out, settings, previous=previous)


@flow(name="site-tree")
def site_tree_flow(out: str, roots: list[str] | None = None, site: str | None = None, max_depth: int = 4,
                   max_pages: int = 1000, render: str = "auto", domain: str = "other", seed: int = 0,
                   previous: str | None = None) -> dict[str, Any]:
    """Questions by click depth over whole website trees, as WebWalkerQA makes them.

    Each of `roots` is crawled breadth first on its own site, `max_depth` clicks deep and `max_pages` requests in
    all, rendering pages in Chromium by `render` (auto, never, always); the User-Agent is
    TIMELYQA_CRAWL_USER_AGENT's. `site` instead names a folder of a bundled site, served on 127.0.0.1 for the run
    (the demo's). The crawl goes to `out`/crawl, the questions (`domain`, `seed`) to `out`; `previous`, a release,
    has its rows of these sites re-checked against the crawl (kept, or retired with the reason).
    """
    if (roots is None) == (site is None):
        raise ConfigError("give roots (a list of URLs) or site (a folder to serve), one of them")
    settings = pipeline.Settings(domain=domain, seed=seed)
    out_dir = Path(out)
    with ExitStack() as stack:
        if site is not None:
            roots = [stack.enter_context(LocalSite(site, port=DEMO_PORT)).url]
        check_inputs(roots or [])
        crawl_sites(roots or [], out_dir / "crawl", max_depth, max_pages, render)
    manifest = make_questions(out_dir / "crawl", out_dir, settings, Path(previous) if previous else None)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
