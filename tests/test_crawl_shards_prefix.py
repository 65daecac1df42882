"""One site split by path prefix into shards (spiders/shards.py, Plan): each shard a Scrapy process held to its own
paths, a link or a redirect into another shard's path an entry of that shard, rounds until none is new; the merged
crawl has the pages, depths and parents of one process crawling the whole site, also after a kill mid-round."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders import shards
from spiders.guard import HostGuard, Refusal
from spiders.run import command, crawl
from tests.sites import Page, Site, SiteServer, reachable
from tests.test_crawl_shards import frame
from timelyqa.errors import ConfigError

MAX_DEPTH = 6
PREFIXES = ["/a/", "/b/"]
STATS = ("pages", "errors", "pages_per_depth", "redirected")


def crossing_site(subtree: int = 12) -> Site:
    """A site whose shortest paths cross between /a/, /b/ and the rest six times: / -> /a/1 -> /b/1 -> /a/2 ->
    /b/2 -> /r/deep -> /a/3 (/a/4 one click past the limit), while inside /a/ alone /a/2 is 6 clicks away (so
    /b/2 would be past the limit); /a/moved redirects to /b/landing, which /b/1 links too. Each section has a
    subtree of `subtree` pages; every page links home (`/`). Each page's shortest path is unique."""
    chain = {"/": ["/a/1.html", "/r/1.html"], "/a/1.html": ["/b/1.html", "/a/long/1.html", "/a/moved.html",
                                                            "/a/t/0.html"],
             "/a/long/1.html": ["/a/long/2.html"], "/a/long/2.html": ["/a/long/3.html"],
             "/a/long/3.html": ["/a/long/4.html"], "/a/long/4.html": ["/a/2.html"],
             "/b/1.html": ["/a/2.html", "/b/landing.html", "/b/t/0.html"], "/a/2.html": ["/b/2.html"],
             "/b/2.html": ["/r/deep.html"], "/r/deep.html": ["/a/3.html"], "/a/3.html": ["/a/4.html"],
             "/r/1.html": ["/r/t/0.html"], "/b/landing.html": []}
    for section in ("a", "b", "r"):  # a binary tree of `subtree` pages under /<section>/t/
        for i in range(subtree):
            kids = [f"/{section}/t/{c}.html" for c in (2 * i + 1, 2 * i + 2) if c < subtree]
            chain[f"/{section}/t/{i}.html"] = kids
    pages = {path: Page(path, f"Page {path}", f"<p>Code {path.upper()}</p>",
                        [(h, f"to {h}") for h in links] + ([("/", "Home")] if path != "/" else []))
             for path, links in chain.items()}
    pages["/a/moved.html"] = Page("/a/moved.html", "Moved", redirect="/b/landing.html")
    return Site("Crossing", pages)


# --- the plan, the guard, the entries and the merge alone -----------------------------------------------------

def test_a_plan_gives_each_path_one_owner_and_each_shard_the_paths_it_may_fetch() -> None:
    plan = shards.Plan.of(["http://127.0.0.2:8000/", "http://127.0.0.2:8000/b/x"], ["/a/", "/b/", "/a/deep/"])
    assert plan.roots == {"127.0.0.2:8000": ["http://127.0.0.2:8000/"], "127.0.0.2:8000/a/": [],
                          "127.0.0.2:8000/a/deep/": [], "127.0.0.2:8000/b/": ["http://127.0.0.2:8000/b/x"]}
    owners = {u: plan.owner("http://127.0.0.2:8000" + u) for u in ("/", "/a/1", "/a/deep/2", "/b", "/c/")}
    assert owners == {"/": "127.0.0.2:8000", "/a/1": "127.0.0.2:8000/a/", "/a/deep/2": "127.0.0.2:8000/a/deep/",
                      "/b": "127.0.0.2:8000", "/c/": "127.0.0.2:8000"}
    assert plan.owner("http://127.0.0.3:8000/a/") is None, "another site is no shard's"
    for key in plan.roots:  # each path is allowed to exactly the shard that owns it, `/` included
        guard = HostGuard.of(plan.roots[key], allow_hosts=["http://127.0.0.2:8000/"],
                             allow_paths=plan.allow_paths(key))
        for path in ("/", "/a/1", "/a/deep/2", "/b/x", "/b/y", "/c/"):
            refused = guard.refusal("http://127.0.0.2:8000" + path, resolve=False)
            assert (refused is None) == (plan.owner("http://127.0.0.2:8000" + path) == key), (key, path)
            assert refused in (None, Refusal.PATH_NOT_ALLOWED)
    assert plan.pace("127.0.0.2:8000/a/") == {"CONCURRENT_REQUESTS_PER_DOMAIN": 2,
                                              "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0}, "a quarter of 8 and 4"
    assert shards.Plan.of(["http://127.0.0.2:8000/"]).pace("127.0.0.2:8000") == {}, "one shard a host: as before"


@pytest.mark.parametrize(("roots", "prefix", "why"), [
    (["http://h:1/"], "docs/", "'docs/': a path below /"),
    (["http://h:1/"], "/", "'/': a path below /"),
    (["http://h:1/"], "/d/?x=1", "without query"),
    (["http://h:1/", "http://g:1/"], "/d/", "'/d/': several sites are crawled .* name the site"),
    (["http://h:1/"], "http://g:1/d/", "'http://g:1/d/': not on a site crawled"),
])
def test_a_wrong_prefix_stops_the_run_naming_it(roots: list[str], prefix: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why):
        shards.Plan.of(roots, [prefix])
    with pytest.raises(ConfigError, match="named twice"):
        shards.Plan.of(["http://h:1/"], ["/d/", "http://h:1/d/"])


def finished_shard(folder: Path, rows: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True)
    base = {"parent": None, "root_url": "http://h:1/", "error": None, "clickables": [], "status": 200}
    pages = pl.DataFrame([{**base, "final_url": r["url"], **r} for r in rows])
    pages.write_parquet(folder / "fetched.parquet")  # what its crawl wrote, which the rounds read
    pages.write_parquet(folder / "pages.parquet")  # and its extraction stage after it, which the merge reads
    pl.DataFrame(schema={"from": pl.String, "to": pl.String, "text": pl.String, "kind": pl.String}
                 ).write_parquet(folder / "links.parquet")
    (folder / "crawl_stats.json").write_text(json.dumps(
        {"pages": sum(r.get("error") is None for r in rows), "redirected": 0,
         "errors": dict(Counter(str(r["error"]) for r in rows if r.get("error")))}))
    return folder


def test_a_redirect_into_another_shard_is_its_entry_and_in_the_merge_the_edge_one_process_writes(
        tmp_path: Path) -> None:
    plan = shards.Plan.of(["http://h:1/"], ["/b/"])
    moved = {"url": "http://h:1/a/moved", "depth": 2, "parent": "http://h:1/a/1", "status": None,
             "error": "redirect_path_not_allowed", "final_url": "http://h:1/b/landing"}
    rest = finished_shard(tmp_path / "rest", [{"url": "http://h:1/", "depth": 0}, moved])
    b = tmp_path / "b"
    b.mkdir()
    folders = {"h:1": rest, "h:1/b/": b}
    wanted = shards.cross_entries(folders, MAX_DEPTH, plan.owner)
    assert wanted == {"h:1": [], "h:1/b/": [("http://h:1/b/landing", 2, "http://h:1/a/1", "http://h:1/")]}, \
        "at the redirecting page's depth and parent: a redirect is no click"
    b.rmdir()
    finished_shard(b, [{"url": "http://h:1/b/landing", "depth": 2, "parent": "http://h:1/a/1"}])
    stats = shards.merge([rest, b], tmp_path / "crawl")
    assert sorted(pl.read_parquet(tmp_path / "crawl" / "pages.parquet")["url"]) == \
        ["http://h:1/", "http://h:1/b/landing"], "the landing page once, the redirecting page no row"
    assert pl.read_parquet(tmp_path / "crawl" / "links.parquet").rows() == \
        [("http://h:1/a/moved", "http://h:1/b/landing", "", "redirect")]
    assert (stats["errors"], stats["redirected"], stats["pages"]) == ({}, 1, 2)


def test_a_redirect_from_one_sharded_site_to_another_is_that_site_s_entry(tmp_path: Path) -> None:
    moved = {"url": "http://h:1/moved", "depth": 1, "parent": "http://h:1/", "status": None,
             "error": "redirect_off_site", "final_url": "http://g:1/landing"}
    folders = {"h:1": finished_shard(tmp_path / "h", [{"url": "http://h:1/", "depth": 0}, moved]),
               "g:1": finished_shard(tmp_path / "g", [{"url": "http://g:1/", "depth": 0, "root_url": "http://g:1/"}])}
    assert shards.cross_entries(folders, MAX_DEPTH)["g:1"] == [("http://g:1/landing", 1, "http://h:1/",
                                                                "http://h:1/")]


# --- real crawls --------------------------------------------------------------------------------------------

@pytest.fixture
def served() -> Iterator[tuple[Site, SiteServer]]:
    site = crossing_site()
    with SiteServer(site) as web:
        yield site, web


def one_process(web: SiteServer, out: Path) -> dict[str, object]:
    return crawl("site_tree", {"roots": json.dumps([web.url + "/"]), "max_depth": MAX_DEPTH, "max_pages": 1000},
                 out, fresh=True)


def asked(web: SiteServer, since: int) -> Counter[str]:
    return Counter(p for p in web.requests[since:] if p != "/robots.txt")


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.parametrize("runner", [None, "local:2"], ids=["threads", "dask-two-workers"])
def test_one_site_in_three_prefix_shards_gives_the_pages_and_depths_of_one_process(
        prefect_api: None, served: tuple[Site, SiteServer], tmp_path: Path, runner: str | None) -> None:
    from flows.site_tree import site_tree_flow

    site, web = served
    one = one_process(web, tmp_path / "one")
    since = len(web.requests)
    site_tree_flow(out=str(tmp_path / "sharded"), roots=[web.url + "/"], max_depth=MAX_DEPTH, render="never",
                   dask_address=runner, shard_prefixes=PREFIXES)
    merged = tmp_path / "sharded" / "crawl"
    stats = json.loads((merged / "crawl_stats.json").read_text())
    assert frame(merged).equals(frame(tmp_path / "one")), "the same pages, depths, parents and roots"
    want = reachable(site, "/", max_depth=MAX_DEPTH)
    del want["/a/moved.html"]  # a redirect: the page it ends on is the row
    got = {urlsplit(u).path: d for u, d in frame(merged).select("url", "depth").iter_rows()}
    assert got == want and got["/a/2.html"] == 3 and got["/a/3.html"] == 6 and "/a/4.html" not in got
    assert {k: stats[k] for k in STATS} == {k: one[k] for k in STATS}
    assert stats["rounds"] == 7, "one more than the six times the path to /a/3 crosses between shards"
    port = urlsplit(web.url).port
    assert stats["shards"] == {f"127.0.0.1_{port}": 2 + 12 + 1, f"127.0.0.1_{port}_a_": 1 + 4 + 2 + 12,
                               f"127.0.0.1_{port}_b_": 3 + 12}
    fetched = asked(web, since) - Counter({"/": 1})  # the root once more: the check before any work
    assert fetched["/b/landing.html"] == 1 and max(fetched.values()) == 1, "no page asked for twice over the rounds"
    landing = frame(merged).filter(pl.col("url").str.ends_with("/b/landing.html")).row(0, named=True)
    assert (landing["depth"], landing["parent"]) == (2, web.url + "/a/1.html"), "through the redirect, once"
    edges = pl.read_parquet(merged / "links.parquet").filter(pl.col("kind") == "redirect").rows()
    assert edges == [(web.url + "/a/moved.html", web.url + "/b/landing.html", "", "redirect")]
    assert web.requests[since:].count("/robots.txt") >= 3, "each shard read robots.txt itself"
    assert (tmp_path / "sharded" / "questions.parquet").is_file(), "the questions are made from the merged crawl"


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_shard_killed_mid_round_resumes_from_its_journal_and_the_rounds_go_on(
        prefect_api: None, served: tuple[Site, SiteServer], tmp_path: Path) -> None:
    from prefect import flow

    from flows.site_tree import crawl_sites

    site, web = served
    one_process(web, tmp_path / "one")
    out, roots = tmp_path / "crawl", [web.url + "/"]
    plan = shards.Plan.of(roots, PREFIXES)
    args = {"max_depth": MAX_DEPTH, "max_pages": 1000}
    killed = shards.shard_dir(out, plan.owner(web.url + "/a/"))  # type: ignore[arg-type]

    def round_killed_in_a(todo: list[str]) -> None:
        """The rounds as the flow runs them, the /a/ shard's first crawl killed after 5 pages, then the run."""
        for key in todo:
            folder = shards.shard_dir(out, key)
            every = {"roots": json.dumps(plan.roots[key]), "allow_paths": json.dumps(plan.allow_paths(key)),
                     "entries": json.dumps(shards.given(folder)), **args}
            if folder != killed:
                crawl("site_tree", every, folder, settings=plan.pace(key))
                continue
            argv, env = command("site_tree", every, folder, settings=plan.pace(key))
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            journal, deadline = folder / "pages.jsonl", time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if journal.is_file() and journal.read_text().count("\n") >= 5:
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.02)
            proc.wait(timeout=30)
            raise RuntimeError(f"the run died with its shard: exit {proc.returncode}")

    with pytest.raises(RuntimeError, match="exit -9"):
        shards.in_rounds(plan, out, MAX_DEPTH, round_killed_in_a)
    assert not shards.finished(killed) and shards.given(killed), "killed mid-round, its entries given"
    kept = [line for line in (killed / "pages.jsonl").read_text().splitlines() if line.endswith("}")]
    since = len(web.requests)

    stats = flow(crawl_sites)(roots, out, MAX_DEPTH, 1000, "never", shard_prefixes=PREFIXES)
    resumed = (killed / "pages.jsonl").read_text().splitlines()
    assert len(kept) >= 5 and resumed[:len(kept)] == kept, "the killed shard's pages are kept"
    assert max(Counter(json.loads(line).get("url") for line in resumed if "url" in line).values()) == 1
    assert not set(asked(web, since)) & {json.loads(line).get("url", "").removeprefix(web.url) for line in kept}, \
        "and none of them is asked for again"
    assert frame(out).equals(frame(tmp_path / "one")), "the pages, depths and parents of one process"
    assert stats["rounds"] == 6, "the round it died in and the five after it"


# --- the command --------------------------------------------------------------------------------------------

def timelyqa(*args: str) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).with_name("timelyqa")
    return subprocess.run([str(cli), "crawl", "site-tree", *args], capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", "")})


@pytest.mark.slow  # a new interpreter: 8 s under load
def test_a_wrong_shard_prefix_stops_the_command_before_any_request(
        served: tuple[Site, SiteServer], tmp_path: Path) -> None:
    _, web = served
    proc = timelyqa("--root", web.url + "/", "--shard-prefix", "docs", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--shard-prefix 'docs': a path below /" in proc.stderr
    assert web.requests == [] and not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_command_crawls_in_prefix_shards_with_the_depths_of_one_process(
        served: tuple[Site, SiteServer], tmp_path: Path) -> None:
    site, web = served
    proc = timelyqa("--root", web.url + "/", "--shard-prefix", "/a/", "--max-depth", "2", "--out",
                    str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    stats = json.loads((tmp_path / "out" / "crawl_stats.json").read_text())
    want = reachable(site, "/", max_depth=2)
    del want["/a/moved.html"]
    got = {urlsplit(u).path: d for u, d in frame(tmp_path / "out").select("url", "depth").iter_rows()}
    assert got == want and stats["rounds"] == 3, "/ -> /a/1 -> /b/1 and /a/moved's landing, back in the site's own"
    assert f"{len(want)} pages" in proc.stdout
