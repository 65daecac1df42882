"""The site-tree flow: each root's site crawled as a shard in its own process (mapped tasks, so a Dask runner
spreads them over machines), the shards merged into one crawl, then questions by click depth from its pages.

The template generator writes the questions in one task; the LLM writer in three (write, verify, finish), each
retried on its own, a retry paying only for the replies its cache does not hold.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prefect import flow, task, unmapped
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, crawl_rows, last_release, publish_funnel, reported, run_name, secret
from flows.fanout import fanout
from spiders import shards
from timelyqa.crawling import check_roots, summary
from timelyqa.useragent import user_agent
from timelyqa.errors import SourceContractError
from timelyqa.localsite import LocalSite
from timelyqa.manifest import Manifest
from timelyqa.site_tree import extract as extraction
from timelyqa.site_tree import llm, pipeline
from timelyqa.site_tree.refresh import released_rows
from timelyqa.site_tree.request import SiteTreeRequest
from timelyqa.site_tree.source import DEMO_PORT


@task
def check_inputs(roots: list[str]) -> None:
    """Fail the run before any work on a root that does not answer or a User-Agent without a contact."""
    check_roots(roots, user_agent=user_agent())


@task(tags=["crawl"], cache_policy=NONE)
def crawl_shard(plan: shards.Plan, key: str, out: Path, max_depth: int, max_pages: int, render: str
                ) -> dict[str, Any]:
    """One shard's crawl in its own process and folder (spiders.shards.crawl_shard): a finished one is not crawled
    again, a killed one resumes from its journal. Its pages' content is read after the rounds, by extract_pages."""
    return shards.crawl_shard(plan, key, out, max_depth, max_pages, render, extract=False)


@task(cache_policy=NONE, task_run_name="extract {crawl_dir.name} rows {part.start}-{part.stop}")
def extract_pages(crawl_dir: Path, part: extraction.Part) -> Path:
    """One partition of a shard's pages read (title, markdown, text, facts) in a process of its own; a partition
    read before is not read again."""
    return extraction.extract_in_process(crawl_dir, [part])[0]


@task(cache_policy=NONE)
def assemble_pages(folders: list[Path]) -> None:
    """Each shard's pages.parquet from its fetched pages and their partitions' content."""
    for folder in folders:
        extraction.assemble(folder)


@task(cache_policy=NONE)
def merge_shards(folders: list[Path], out: Path, rounds: int = 1) -> dict[str, Any]:
    stats = shards.merge(folders, out, {"rounds": rounds})
    create_table_artifact(crawl_rows(stats), key="site-tree-crawl",
                          description="site_tree: what the crawl fetched and why not")
    if not stats.get("pages"):
        raise SourceContractError(f"crawl site_tree fetched nothing: {summary(stats)}")
    return stats


def crawl_sites(roots: list[str], out: Path, max_depth: int, max_pages: int, render: str,
                dask_address: str | None = None, shard_prefixes: list[str] | None = None) -> dict[str, Any]:
    """Crawl each root's site as a shard (`out`/shards/<host>), a site named in `shard_prefixes` as a shard a
    prefix plus its own (spiders.shards.Plan), the shards as mapped tasks on the Dask cluster `dask_address` names
    (flows.fanout.dask_runner) or on the flow's own runner, in rounds until no shard is given a new entry; then read
    the shards' pages' content in partitions (timelyqa/site_tree/extract.py), mapped tasks on the same runner, and
    merge them into `out`. A run over a crawl that finished crawls every shard again; a run over a killed one keeps
    the finished shards and the partitions read."""
    plan = shards.Plan.of(roots, shard_prefixes or [])
    with fanout(dask_address) as lanes:
        def crawl_round(todo: list[str]) -> None:
            lanes.map(crawl_shard, plan=unmapped(plan), key=todo, out=unmapped(out), max_depth=unmapped(max_depth),
                      max_pages=unmapped(max_pages), render=unmapped(render))

        folders, rounds = shards.in_rounds(plan, out, max_depth, crawl_round)
        work = [(folder, part) for folder in folders if extraction.assembled(folder) is None
                for part in extraction.plan(folder)]
        if work:
            lanes.map(extract_pages, crawl_dir=[w[0] for w in work], part=[w[1] for w in work])
    assemble_pages(folders)
    return merge_shards(folders, out, rounds)


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
                   dask_address: str | None = None, shard_prefixes: list[str] | None = None) -> dict[str, Any]:
    """Questions by click depth over whole website trees, as WebWalkerQA makes them.

    Each of `roots` is crawled breadth first on its own site, `max_depth` clicks deep and `max_pages` requests a
    site, each site a shard in a process of its own (on the Dask cluster `dask_address` names, `local:N` or a
    scheduler's address, else TIMELYQA_DASK_ADDRESS's, else side by side here), rendering pages in Chromium by
    `render` (auto, never, always); the User-Agent is TIMELYQA_CRAWL_USER_AGENT's. `site` instead names a folder of a bundled site, served on 127.0.0.1 for the run
    (the demo's). The crawl goes to `out`/crawl, the questions (`domain`, `seed`) to `out`. `generator` is
    `template` (offline) or `llm` (WebWalker's prompts: TIMELYQA_LLM_* writes, TIMELYQA_CHECK_LLM_* verifies; the
    writer's key may come from the Prefect Secret block `llm_secret_block`), its models checked before the crawl.
    `previous`, a release, has its rows of these sites re-checked against the crawl (kept, or retired with why).
    `shard_prefixes` split a site too large for one process by path prefix (`/docs/` for the one site crawled,
    `http://host:port/docs/` for one of several), every page still at its exact depth (spiders/shards.py).
    """
    request = SiteTreeRequest.of(out=out, roots=roots, site=site, max_depth=max_depth, max_pages=max_pages,
                                 render=render, domain=domain, seed=seed, generator=generator,
                                 llm_secret_block=llm_secret_block, previous=previous, dask_address=dask_address,
                                 shard_prefixes=shard_prefixes or [])
    settings = request.settings
    out_dir = request.out
    workdir = out_dir / "work"  # the folder pipeline.run uses: the CLI and the flow leave the same files
    if settings.generator == "llm":
        check_models(out_dir, llm_secret_block)
    with ExitStack() as stack:
        if request.site is not None:
            roots = [stack.enter_context(LocalSite(request.site, port=DEMO_PORT)).url]
        else:
            roots = request.roots
        check_inputs(roots or [])
        crawl_sites(roots or [], out_dir / "crawl", request.max_depth, request.max_pages, request.render,
                    request.dask_address, request.shard_prefixes)
    earlier = last_release(previous)
    if settings.generator == "llm":
        written = write_questions(out_dir / "crawl", workdir, settings, llm_secret_block)
        verified = verify_questions(written, workdir, llm_secret_block)
        manifest = finish(out_dir / "crawl", verified, workdir, out_dir, settings, earlier)
    else:
        manifest = make_questions(out_dir / "crawl", out_dir, settings, earlier)
    publish_funnel(manifest, out=out)
    return manifest.model_dump(mode="json")
