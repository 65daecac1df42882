"""A site-tree crawl sharded by site: each root's site crawled in a Scrapy process and job folder of its own, as
mapped Prefect tasks, then merged; it gives the pages and depths one process crawling every root gives, and a
shard killed mid-way resumes from its own journal while a finished one is not crawled again."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders import shards
from spiders.run import command, crawl
from tests.sites import Page, Site, reachable
from timelyqa.errors import ConfigError
from timelyqa.localsite import LocalSite

COLUMNS = ["url", "depth", "parent", "root_url", "status", "error", "title"]


def tree(folder: Path, name: str, pages: int, fanout: int) -> Site:
    """A site of `pages` static files under `folder` (index.html, item/<i>.html), page i linking its children and
    its parent, and page 1 a shortcut to the last page, so that a page's depth is not its place in the tree."""
    built = {}
    for i in range(pages):
        path = "/index.html" if i == 0 else f"/item/{i}.html"
        links = [(f"/item/{c}.html", f"{name} {c}") for c in range(fanout * i + 1, min(fanout * (i + 1), pages - 1) + 1)]
        if i:
            links.append(("/index.html" if i <= fanout else f"/item/{(i - 1) // fanout}.html", "Up"))
        if i == 1:
            links.append((f"/item/{pages - 1}.html", "Shortcut"))
        built[path] = Page(path, f"{name} {i}", f"<table><tr><th>Code</th><td>{name}-{i:04d}</td></tr></table>", links)
    site = Site(name, built)
    for path, page in built.items():
        (folder / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (folder / path.lstrip("/")).write_text(site.html(page), encoding="utf-8")
    return site


def link(folder: Path, site: Site, path: str, href: str) -> None:
    """Add a link to `href` (another site's page) on the page at `path`, in the file served."""
    page = site.pages[path]
    page.links.append((href, "Elsewhere"))
    (folder / path.lstrip("/")).write_text(site.html(page), encoding="utf-8")


def frame(folder: Path) -> pl.DataFrame:
    return pl.read_parquet(folder / "pages.parquet").select(COLUMNS).sort("url")


def depths(folder: Path, root: str) -> dict[str, int]:
    pages = pl.read_parquet(folder / "pages.parquet").filter(pl.col("url").str.starts_with(root.removesuffix("index.html")))
    return {urlsplit(u).path: d for u, d in zip(pages["url"], pages["depth"], strict=True)}


# --- the merge alone ------------------------------------------------------------------------------------------

def test_roots_are_sharded_by_site_and_two_roots_of_one_site_share_a_shard(tmp_path: Path) -> None:
    by_site = shards.shard_roots(["http://127.0.0.2:8000/", "http://127.0.0.3:8000/a", "http://127.0.0.2:8000/b/"])
    assert by_site == {"127.0.0.2:8000": ["http://127.0.0.2:8000/", "http://127.0.0.2:8000/b/"],
                       "127.0.0.3:8000": ["http://127.0.0.3:8000/a"]}
    assert shards.shard_dir(tmp_path, "127.0.0.2:8000") == tmp_path / "shards" / "127.0.0.2_8000"
    with pytest.raises(ConfigError, match="'ftp://x/': not an http"):
        shards.shard_roots(["ftp://x/"])


def test_stats_of_shards_add_up_as_one_crawl_s() -> None:
    one = {"pages": 3, "bytes": 10, "errors": {"http_404": 1}, "pages_per_depth": {"0": 1, "2": 2}, "rendered": 0}
    two = {"pages": 12, "bytes": 5, "errors": {"http_404": 2, "not_html": 1}, "pages_per_depth": {"0": 1, "10": 11},
           "rendered": 1}
    assert shards.merge_stats([one, two]) == {
        "bytes": 15, "errors": {"http_404": 3, "not_html": 1}, "pages": 15,
        "pages_per_depth": {"0": 2, "2": 2, "10": 11}, "rendered": 1}


def test_an_unfinished_shard_is_never_merged(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pages.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"shards not finished: .*/a"):
        shards.merge([tmp_path / "a"], tmp_path / "crawl")
    assert not (tmp_path / "crawl" / "crawl_stats.json").exists()


# --- real crawls --------------------------------------------------------------------------------------------

@pytest.fixture
def two_sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Site, Path, Site]:
    first, second = tmp_path_factory.mktemp("alpha"), tmp_path_factory.mktemp("beta")
    return first, tree(first, "Alpha", 60, 3), second, tree(second, "Beta", 300, 5)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("runner", [None, "local:2"], ids=["threads", "dask-two-workers"])
def test_two_sites_sharded_over_two_tasks_give_the_pages_and_depths_of_one_crawl_of_both(
        prefect_api: None, two_sites: tuple[Path, Site, Path, Site], tmp_path: Path, runner: str | None) -> None:
    from flows.site_tree import site_tree_flow

    first, alpha, second, beta = two_sites
    with LocalSite(first, host="127.0.0.2") as a, LocalSite(second, host="127.0.0.3") as b:
        roots, ports = [a.url + "index.html", b.url + "index.html"], (a.port, b.port)
        # each site links once into the other, to a page 4 clicks from its own root and 3 through the link: one
        # process follows both links, and so must the shards (a second round for each)
        link(first, alpha, "/item/5.html", b.url + "item/250.html")
        link(second, beta, "/item/10.html", a.url + "item/58.html")
        one = crawl("site_tree", {"roots": json.dumps(roots), "max_depth": 3, "max_pages": 1000}, tmp_path / "one",
                    fresh=True)
        site_tree_flow(out=str(tmp_path / "sharded"), roots=roots, max_depth=3, max_pages=1000, render="never",
                       dask_address=runner)
    merged = tmp_path / "sharded" / "crawl"
    stats = json.loads((merged / "crawl_stats.json").read_text())
    assert frame(merged).equals(frame(tmp_path / "one")), "the same pages, depths, parents and roots"
    want = [{**reachable(alpha, "/index.html", max_depth=3), "/item/58.html": 3},
            {**reachable(beta, "/index.html", max_depth=3), "/item/250.html": 3}]
    assert depths(merged, roots[0]) == want[0] and depths(merged, roots[1]) == want[1]
    assert depths(merged, roots[1])["/item/299.html"] == 2, "the shortcut's depth, not the tree's"
    across = frame(merged).filter(pl.col("url").str.ends_with("/item/250.html")).row(0, named=True)
    assert (across["root_url"], across["parent"]) == (roots[0], roots[0].replace("index", "item/5"))
    assert {k: stats[k] for k in ("pages", "errors", "pages_per_depth")} == \
        {k: one[k] for k in ("pages", "errors", "pages_per_depth")}
    sites = {f"127.0.0.2_{ports[0]}": len(want[0]), f"127.0.0.3_{ports[1]}": len(want[1])}
    assert stats["shards"] == sites and sorted(p.name for p in (merged / "shards").iterdir()) == sorted(sites)
    assert (tmp_path / "sharded" / "questions.parquet").is_file(), "the questions are made from the merged crawl"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_killed_shard_resumes_from_its_journal_and_a_finished_one_is_not_crawled_again(
        prefect_api: None, two_sites: tuple[Path, Site, Path, Site], tmp_path: Path) -> None:
    from prefect import flow

    from flows.site_tree import crawl_sites

    first, alpha, second, beta = two_sites
    out = tmp_path / "crawl"
    sharded = flow(crawl_sites)
    with LocalSite(first, host="127.0.0.2") as a, LocalSite(second, host="127.0.0.3") as b:
        roots = [a.url + "index.html", b.url + "index.html"]
        args = {"max_depth": 4, "max_pages": 1000}
        # a run killed with the first site's shard finished and the second's mid-way
        done = shards.shard_dir(out, urlsplit(a.url).netloc)
        crawl("site_tree", {"roots": json.dumps(roots[:1]), **args}, done)
        killed = shards.shard_dir(out, urlsplit(b.url).netloc)
        argv, env = command("site_tree", {"roots": json.dumps(roots[1:]), **args}, killed)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal, deadline = killed / "pages.jsonl", time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.is_file() and journal.read_text().count("\n") >= 40:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL and not shards.finished(killed), "the shard was killed mid-way"
        kept = [line for line in journal.read_text().splitlines() if line.endswith("}")]
        finished_at = (done / "crawl_stats.json").stat().st_mtime_ns

        stats = sharded(roots, out, 4, 1000, "never")
        assert (done / "crawl_stats.json").stat().st_mtime_ns == finished_at, "the finished shard was not crawled"
        resumed = journal.read_text().splitlines()
        assert resumed[:len(kept)] == kept, "the killed shard's pages are kept"
        urls = Counter(json.loads(line)["url"] for line in resumed)
        assert len(kept) >= 40 and max(urls.values()) == 1, "and none of them is fetched again"
        assert depths(out, b.url) == reachable(beta, "/index.html", max_depth=4)
        assert depths(out, a.url) == reachable(alpha, "/index.html", max_depth=4)
        assert stats["pages"] == len(reachable(alpha, "/index.html", max_depth=4)) + len(urls)

        # the crawl finished: the next run is a new crawl, every shard crawled again
        sharded(roots, out, 4, 1000, "never")
        assert (done / "crawl_stats.json").stat().st_mtime_ns != finished_at
        assert frame(out).height == stats["pages"]


def shard(folder: Path, pages: list[tuple[str, int | None, list[str]]], root: str) -> Path:
    """A finished shard's folder holding `pages` (url, depth, the hrefs it links to)."""
    folder.mkdir(parents=True)
    rows = [{"url": u, "depth": d, "root_url": root, "error": None,
             "clickables": [{"href": h, "text": "", "kind": "anchor"} for h in hrefs]} for u, d, hrefs in pages]
    pl.DataFrame(rows).write_parquet(folder / "pages.parquet")
    (folder / "crawl_stats.json").write_text("{}")
    return folder


def test_a_link_into_another_shard_is_its_entry_once_even_when_that_shard_never_holds_the_page(
        tmp_path: Path) -> None:
    a, b = "http://127.0.0.2:8000/", "http://127.0.0.3:8000/"
    folders = {"127.0.0.2:8000": shard(tmp_path / "a", [(a, 0, [a + "x", b + "far", b + "near"]),
                                                         (a + "x", 1, [b + "deep"])], a),
               "127.0.0.3:8000": shard(tmp_path / "b", [(b, 0, [b + "near"]), (b + "near", 1, [])], b)}
    wanted = shards.cross_entries(folders, max_depth=1)
    # `far` is 1 click from a's root; `near` is as near from b's own; `deep` would be 2 clicks, past max_depth
    assert wanted == {"127.0.0.2:8000": [], "127.0.0.3:8000": [(b + "far", 1, a, a)]}
    shards.give(folders["127.0.0.3:8000"], wanted["127.0.0.3:8000"])
    assert not shards.finished(folders["127.0.0.3:8000"]), "given an entry, the shard is crawled again"
    (folders["127.0.0.3:8000"] / "crawl_stats.json").write_text("{}")  # it ran: robots.txt refused `far`
    assert shards.cross_entries(folders, max_depth=1) == wanted, "nothing new: no further round"
