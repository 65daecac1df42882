"""The site-tree flow: each root's site crawled as a shard in its own process (mapped tasks, so a Dask runner
spreads them over machines), the shards merged into one crawl, then questions by click depth from its pages.

The template generator writes the questions in one task; the LLM writer in three (write, verify, finish), each
retried on its own, a retry paying only for the replies its cache does not hold.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prefect import flow, task, unmapped
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, crawl_rows, last_release, publish_funnel, reported, run_name, secret
from flows.wikidata import fanout
from spiders import shards
from spiders.run import crawl
from timelyqa.crawling import check_roots, summary
from timelyqa.useragent import user_agent
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.localsite import LocalSite
from timelyqa.manifest import Manifest
from timelyqa.site_tree import llm, pipeline
from timelyqa.site_tree.refresh import released_rows
from timelyqa.site_tree.source import DEMO_PORT


@task
def check_inputs(roots: list[str]) -> None:
    """Fail the run before any work on a root that does not answer or a User-Agent without a contact."""
    check_roots(roots, user_agent=user_agent())


@task(tags=["crawl"], cache_policy=NONE)
def crawl_shard(roots: list[str], out: Path, max_depth: int, max_pages: int, render: str) -> dict[str, Any]:
    """One site's crawl in its own process and folder. A shard that finished in a run that did not is not crawled
    again; one that was killed resumes from its own journal. A shard that fetched nothing is finished too: its
    reasons are in its stats, and the run fails only when every shard fetched nothing."""
    if shards.finished(out):
        return dict(json.loads((out / shards.STATS).read_text(encoding="utf-8")))
    try:
        return crawl("site_tree", {"roots": json.dumps(roots), "max_depth": max_depth, "max_pages": max_pages,
                                   "render": render, "entries": json.dumps(shards.given(out))}, out)
    except SourceContractError:
        if not shards.finished(out):  # the process died before its end: the next run resumes it
            raise
        return dict(json.loads((out / shards.STATS).read_text(encoding="utf-8")))


@task(cache_policy=NONE)
def merge_shards(folders: list[Path], out: Path) -> dict[str, Any]:
    stats = shards.merge(folders, out)
    create_table_artifact(crawl_rows(stats), key="site-tree-crawl",
                          description="site_tree: what the crawl fetched and why not")
    if not stats.get("pages"):
        raise SourceContractError(f"crawl site_tree fetched nothing: {summary(stats)}")
    return stats


def crawl_sites(roots: list[str], out: Path, max_depth: int, max_pages: int, render: str,
                dask_address: str | None = None) -> dict[str, Any]:
    """Crawl each root's site as a shard (`out`/shards/<host>), the shards as mapped tasks on the Dask cluster
    `dask_address` names (flows.wikidata.dask_runner) or on the flow's own runner, then merge them into `out`.
    A run over a crawl that finished crawls every shard again; a run over a killed one keeps the finished shards."""
    by_site = shards.shard_roots(roots)
    folders = {site: shards.shard_dir(out, site) for site in by_site}
    if shards.finished(out):  # the last run over `out` ran to its end: this one is a new crawl of every shard
        for folder in folders.values():
            shards.reset(folder)
    (out / shards.STATS).unlink(missing_ok=True)  # only then: a run killed before this point is new again
    todo = list(by_site)
    with fanout(dask_address) as lanes:
        while todo:  # a round: the shards given new entries by the last one (every shard in the first)
            lanes.map(crawl_shard, roots=[by_site[s] for s in todo], out=[folders[s] for s in todo],
                      max_depth=unmapped(max_depth), max_pages=unmapped(max_pages), render=unmapped(render))
            wanted = shards.cross_entries(folders, max_depth)
            todo = [s for s in by_site if wanted[s] != shards.given(folders[s])]
            for site in todo:
                shards.give(folders[site], wanted[site])
    return merge_shards(list(folders.values()), out)


@task
def check_models(out: Path, llm_secret_block: str | None) -> None:
    """Fail the run before the crawl when a model is not served or its key is refused; never retried."""
    _writer(out / "work", llm_secret_block)


@task
def make_questions(crawl_dir: Path, out: Path, settings: pipeline.Settings, previous: Path | None) -> Manifest:
    return pipeline.run(crawl_dir, out, settings, previous=previous)


# The model's key is read inside each task, never passed in: task inputs feed cache keys and flow parameters
# are stored by the API.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def write_questions(crawl_dir: Path, workdir: Path, settings: pipeline.Settings, llm_secret_block: str | None
                    ) -> Path:
    return pipeline.write_questions(crawl_dir, workdir, settings, _writer(workdir, llm_secret_block))


@task(**RETRY_TRANSIENT, cache_policy=NONE)
def verify_questions(written: Path, workdir: Path, llm_secret_block: str | None) -> Path:
    return pipeline.verify_questions(written, workdir, _writer(workdir, llm_secret_block))


@task(cache_policy=NONE)
def finish(crawl_dir: Path, verified: Path, workdir: Path, out: Path, settings: pipeline.Settings,
           previous: Path | None) -> Manifest:
    earlier = released_rows(previous) if previous is not None else None
    return pipeline.finish(crawl_dir, verified, workdir, out, settings, earlier)


def _writer(workdir: Path, block: str | None) -> llm.SiteLLMWriter:
    return llm.llm_site_writer(cache_dir=workdir / "llm-cache", api_key=secret(block))


def _name(params: dict[str, Any]) -> str:
    """`site-tree www.gnu.org, www.python.org`: the sites crawled, or the bundled site as given
    (`site-tree data/demo/site`)."""
    if params.get("site"):
        return f"site-tree {params['site']}"
    return "site-tree " + ", ".join(urlsplit(root).netloc for root in params["roots"])


@flow(name="site-tree", flow_run_name=run_name(_name, "site-tree"))
@reported
def site_tree_flow(out: str, roots: list[str] | None = None, site: str | None = None, max_depth: int = 4,
                   max_pages: int = 1000, render: str = "auto", domain: str = "other", seed: int = 0,
                   generator: str = "template", llm_secret_block: str | None = None, previous: str | None = None,
                   dask_address: str | None = None) -> dict[str, Any]:
    """Questions by click depth over whole website trees, as WebWalkerQA makes them.

    Each of `roots` is crawled breadth first on its own site, `max_depth` clicks deep and `max_pages` requests a
    site, each site a shard in a process of its own (on the Dask cluster `dask_address` names, `local:N` or a
    scheduler's address, else TIMELYQA_DASK_ADDRESS's, else side by side here), rendering pages in Chromium by
    `render` (auto, never, always); the User-Agent is TIMELYQA_CRAWL_USER_AGENT's. `site` instead names a folder of a bundled site, served on 127.0.0.1 for the run
    (the demo's). The crawl goes to `out`/crawl, the questions (`domain`, `seed`) to `out`. `generator` is
    `template` (offline) or `llm` (WebWalker's prompts: TIMELYQA_LLM_* writes, TIMELYQA_CHECK_LLM_* verifies; the
    writer's key may come from the Prefect Secret block `llm_secret_block`), its models checked before the crawl.
    `previous`, a release, has its rows of these sites re-checked against the crawl (kept, or retired with why).
    """
    if (roots is None) == (site is None):
        raise ConfigError("give roots (a list of URLs) or site (a folder to serve), one of them")
    settings = pipeline.Settings(domain=domain, seed=seed, generator=generator)
    out_dir = Path(out)
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    if settings.generator == "llm":
        check_models(out_dir, llm_secret_block)
    with ExitStack() as stack:
        if site is not None:
            roots = [stack.enter_context(LocalSite(site, port=DEMO_PORT)).url]
        check_inputs(roots or [])
        crawl_sites(roots or [], out_dir / "crawl", max_depth, max_pages, render, dask_address)
    earlier = last_release(previous)
    if settings.generator == "llm":
        written = write_questions(out_dir / "crawl", workdir, settings, llm_secret_block)
        verified = verify_questions(written, workdir, llm_secret_block)
        manifest = finish(out_dir / "crawl", verified, workdir, out_dir, settings, earlier)
    else:
        manifest = make_questions(out_dir / "crawl", out_dir, settings, earlier)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
