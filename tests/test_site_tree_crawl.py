"""The site-tree crawl against local sites it never saw: exactly the reachable allowed pages at their true depths,
and nothing it should not request. Each crawl runs as the product runs it, in its own Scrapy process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders.run import command, crawl
from tests.sites import Page, Site, SiteServer, conference_site, reachable, tree_site
from timelyqa.errors import SourceContractError

pytestmark = pytest.mark.slow  # each test starts Scrapy in a process of its own

BIG = 6 * 1024 * 1024  # over the 5 MiB a page may weigh


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def static(site: Site, offsite: str) -> Site:
    """The site with its script-built menu written as plain anchors (what a crawl that never renders can see),
    plus the bad inputs a static crawl meets: an oversized page, a page too slow to wait for, and a redirect off
    the site."""
    pages = {p: replace(page, links=page.links + page.script_links, script_links=[]) for p, page in site.pages.items()}
    home = pages["/"]
    pages["/"] = replace(home, links=home.links + [("/big", "Big"), ("/slow", "Slow"), ("/moved", "Moved")])
    pages["/big"] = Page("/big", "Big", "<p>too big</p>", size=BIG)
    pages["/slow"] = Page("/slow", "Slow", "<p>slow</p>", delay=3.0)
    pages["/moved"] = Page("/moved", "Moved", redirect=f"{offsite}/elsewhere")
    return replace(site, pages=pages)


def run(server: SiteServer, out: Path, **args: object) -> dict:
    settings = {"roots": json.dumps([server.url + "/"]), "max_depth": 4, "max_pages": 500, "page_timeout": 1,
                **args}
    return crawl("site_tree", settings, out, fresh=True)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Site, list[str], list[str], dict, pl.DataFrame,
                                                                  pl.DataFrame]:
    out = tmp_path_factory.mktemp("crawl")
    with SiteServer(Site("elsewhere", {})) as other:
        site = static(conference_site(offsite=other.url), other.url)
        with SiteServer(site) as server:
            stats = run(server, out)
            asked = list(server.requests)
        return (site, asked, list(other.requests), stats, pl.read_parquet(out / "pages.parquet"),
                pl.read_parquet(out / "links.parquet"))


def test_the_crawl_fetches_exactly_the_reachable_allowed_pages_each_once(crawled: tuple) -> None:
    site, asked, offsite, _, pages, _ = crawled
    want = reachable(site, max_depth=4)
    assert offsite == [], "nothing is asked of another host, not even after a redirect"
    assert "/members/" not in asked and "/members/directory" not in asked, "robots.txt is obeyed"
    pages_asked = [p for p in asked if p != "/robots.txt"]
    again = {p: n for p, n in Counter(pages_asked).items() if n > 1}
    assert again == {"/slow": 2, "/program/posters": 2}, "only a timeout and a 500 are asked again, once"
    assert set(pages_asked) == set(want)
    # a redirect is one row, for the page it ends on (and an edge in links.parquet)
    assert {path_of(u) for u in pages["url"]} == set(want) - {"/dates.html"}


def test_every_page_ends_at_its_true_click_depth(crawled: tuple) -> None:
    site, _, _, _, pages, _ = crawled
    want = reachable(site, max_depth=4)
    depths = {path_of(u): d for u, d in zip(pages["url"], pages["depth"], strict=True)}
    assert depths == {p: want[p] for p in depths}
    # /awards is first reached four clicks deep along a fast chain, and at two behind a slow page: the page it
    # leads to is three clicks deep, and fetched, though the first path would have put it past the limit.
    assert depths["/awards"] == 2 and depths["/awards/best-paper"] == 3
    parents = dict(zip(pages["url"].map_elements(path_of, return_dtype=pl.String()),
                       pages["parent"].map_elements(lambda u: u and path_of(u), return_dtype=pl.String()),
                       strict=True))
    assert parents["/awards"] == "/sponsors" and parents["/"] is None


def test_bad_pages_are_recorded_with_their_reason_and_the_crawl_goes_on(crawled: tuple) -> None:
    _, _, _, stats, pages, _ = crawled
    errors = dict(zip(pages["url"].map_elements(path_of, return_dtype=pl.String()), pages["error"], strict=True))
    assert errors["/program/day-3"] == "http_404" and errors["/program/posters"] == "http_500"
    assert errors["/calls/cfp.pdf"] == "not_html"
    assert errors["/big"] == "body_too_large" and errors["/slow"] == "timeout"
    assert errors["/moved"] == "redirect_off_site"
    assert errors["/papers/p1"] is None and stats["pages"] == pages.filter(pl.col("error").is_null()).height
    assert stats["errors"] == dict(sorted(Counter(e for e in errors.values() if e).items()))
    assert stats["refused"]["off_site"] >= 2 and stats["skipped"]["robots_disallowed"] >= 1


def test_clickables_and_the_click_graph_name_what_a_person_clicks(crawled: tuple) -> None:
    _, _, _, _, pages, links = crawled
    calls = pages.filter(pl.col("url").str.ends_with("/calls")).row(0, named=True)
    kinds = {(path_of(c["href"]), c["kind"]) for c in calls["clickables"]}
    assert ("/registration", "button") in kinds and ("/calls/cfp.pdf", "anchor") in kinds
    assert links.filter(pl.col("to").str.ends_with("/registration"))["kind"].to_list() == ["button"]
    fees = pages.filter(pl.col("url").str.ends_with("/registration")).row(0, named=True)
    assert fees["title"] == "Registration | WebQA 2026"
    assert "EUR 150" in fees["markdown"] and "EUR 150" in fees["text"], "the facts in a table survive extraction"


def test_an_endless_calendar_is_bounded_and_counted(tmp_path: Path) -> None:
    site = conference_site()
    with SiteServer(site) as server:
        stats = run(server, tmp_path / "out", max_depth=40)
        months = [p for p in server.requests if p.startswith("/calendar/")]
    assert len(months) == 13, "the first month and twelve steps after it"
    assert stats["bounded"] == {"calendar_trap": 1}


def test_a_crawl_that_fetches_nothing_fails_loudly(tmp_path: Path) -> None:
    closed = Site("closed", {"/": Page("/", "Closed", "<p>x</p>")}, robots="User-agent: *\nDisallow: /\n")
    with SiteServer(closed) as server, pytest.raises(SourceContractError, match="fetched nothing"):
        run(server, tmp_path / "out")


@pytest.mark.parametrize(("args", "env", "says"), [
    (["--root", "http://127.0.0.1:9/"], {}, "--root http://127.0.0.1:9/: does not answer"),
    (["--root", "ftp://example.org/"], {}, "not an http(s) URL"),
    (["--root", "http://127.0.0.1:9/"], {"TIMELYQA_CRAWL_USER_AGENT": "bot"}, "name a contact"),
])
def test_a_bad_root_or_setting_stops_before_any_work(tmp_path: Path, args: list[str], env: dict[str, str],
                                                     says: str) -> None:
    cli = Path(sys.executable).with_name("timelyqa")
    proc = subprocess.run([str(cli), "crawl", "site-tree", *args, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), **env})
    assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_pages_read_by_extraction_workers_are_those_the_caller_reads_itself(tmp_path: Path) -> None:
    columns = ["url", "depth", "title", "markdown", "text", "facts", "clickables"]
    with SiteServer(tree_site(40, fanout=4)) as server:
        args = {"roots": json.dumps([server.url + "/"]), "max_depth": 4, "max_pages": 100}
        stats = crawl("site_tree", args, tmp_path / "worker", fresh=True)
        crawl("site_tree", args, tmp_path / "inline", fresh=True, settings={"EXTRACT_WORKERS": 0})
    worker, inline = (pl.read_parquet(tmp_path / name / "pages.parquet").select(columns).sort("url")
                      for name in ("worker", "inline"))
    assert stats["pages"] == 40 and stats["extracted"] == 40
    assert worker.equals(inline) and worker["facts"].list.len().min() == 4


def test_a_crawl_killed_and_started_again_loses_no_page_and_fetches_none_twice(tmp_path: Path) -> None:
    site = tree_site(400, fanout=6)
    out = tmp_path / "out"
    with SiteServer(site) as server:
        args = {"roots": json.dumps([server.url + "/"]), "max_depth": 4, "max_pages": 1000, "pattern_budget": 1000}
        argv, env = command("site_tree", args, out)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = out / "pages.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.is_file() and journal.read_text().count("\n") >= 60:
                proc.send_signal(signal.SIGKILL)  # no clean stop: nothing gets to save its state
                break
            time.sleep(0.05)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL, "the crawl was killed mid-way"
        assert not (out / "crawl_stats.json").exists()
        kept = {path_of(json.loads(line)["url"]) for line in journal.read_text().splitlines() if line.endswith("}")}
        before = len(server.requests)
        crawl("site_tree", args, out)
        again = [p for p in server.requests[before:] if p != "/robots.txt"]
    want = reachable(site, max_depth=4)
    assert len(kept) >= 60 and not kept & set(again), "no page the killed crawl had is asked for again"
    assert Counter(again)["/"] == 0 and max(Counter(again).values()) == 1
    pages = pl.read_parquet(out / "pages.parquet")
    assert {path_of(u): d for u, d in zip(pages["url"], pages["depth"], strict=True)} == want, "none lost"


def test_a_redirect_loop_is_a_page_with_its_reason_and_the_crawl_goes_on(tmp_path: Path) -> None:
    looping = Site("loops", {
        "/": Page("/", "Home", "<p>Start.</p>", links=[("/loop-a", "Loop"), ("/fine", "Fine")]),
        "/loop-a": Page("/loop-a", "A", redirect="/loop-b"),
        "/loop-b": Page("/loop-b", "B", redirect="/loop-a"),
        "/fine": Page("/fine", "Fine", "<p>Reached.</p>"),
    })
    with SiteServer(looping) as server:
        stats = run(server, tmp_path / "out")
        hops = Counter(p for p in server.requests if p.startswith("/loop"))
    pages = pl.read_parquet(tmp_path / "out" / "pages.parquet")
    errors = dict(zip(pages["url"].map_elements(path_of, return_dtype=pl.String()), pages["error"], strict=True))
    assert errors["/loop-a"] == "redirect_limit" and errors["/fine"] is None
    assert sum(hops.values()) <= 6, "the loop is cut after a bounded number of hops"
    assert stats["errors"] == {"redirect_limit": 1}


def test_a_page_as_near_through_two_pages_takes_the_first_in_url_order_whichever_answered_first(
        tmp_path: Path) -> None:
    # /x is two clicks from either root: through /b, which answers at once, and through /a, which answers 0.4 s
    # later; the first parent in URL order stands, and its root, down to the page below (so one process and a
    # crawl sharded any way give the same parents)
    site = Site("ties", {
        "/": Page("/", "Home", "<p>One.</p>", links=[("/b", "B")]),
        "/start": Page("/start", "Start", "<p>Two.</p>", links=[("/a", "A")]),
        "/a": Page("/a", "A", "<p>Slow.</p>", links=[("/x", "X")], delay=0.4),
        "/b": Page("/b", "B", "<p>Fast.</p>", links=[("/x", "X")]),
        "/x": Page("/x", "X", "<p>Shared.</p>", links=[("/y", "Y")]),
        "/y": Page("/y", "Y", "<p>Below.</p>"),
    })
    with SiteServer(site) as server:
        run(server, tmp_path / "out", roots=json.dumps([server.url + "/", server.url + "/start"]))
        asked = [p for p in server.requests if p != "/robots.txt"]
    pages = pl.read_parquet(tmp_path / "out" / "pages.parquet")
    rows = {path_of(r["url"]): (r["depth"], r["parent"] and path_of(r["parent"]), path_of(r["root_url"]))
            for r in pages.iter_rows(named=True)}
    assert rows["/x"] == (2, "/a", "/start") and rows["/y"] == (3, "/x", "/start")
    assert rows["/b"] == (1, "/", "/") and max(Counter(asked).values()) == 1
