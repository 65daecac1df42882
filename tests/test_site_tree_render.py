"""Rendering in Chromium: `auto` renders what scripts build, by the written rule, and follows the links only
scripts insert; the browser keeps to the allowed hosts; a page whose scripts never settle is taken as served."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders.render import browser_path
from spiders.run import crawl
from tests.sites import Page, Site, SiteServer, conference_site, reachable

pytestmark = pytest.mark.slow  # Scrapy in its own process, and Chromium

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")


def path_of(url: str) -> str:
    return urlsplit(url).path


def run(server: SiteServer, out: Path, render: str, **args: object) -> tuple[dict, pl.DataFrame]:
    stats = crawl("site_tree", {"roots": json.dumps([server.url + "/"]), "max_depth": 4, "max_pages": 200,
                                "page_timeout": 2, "render": render, **args}, out, fresh=True)
    return stats, pl.read_parquet(out / "pages.parquet")


def test_auto_renders_what_scripts_build_and_follows_the_links_they_insert(tmp_path: Path) -> None:
    site = conference_site()
    with SiteServer(site) as server:
        stats, pages = run(server, tmp_path / "out", "auto")
        asked = [p for p in server.requests if p != "/robots.txt"]
    want = reachable(site, max_depth=4)  # the script-built menu followed
    assert set(asked) == set(want)
    again = {p: n for p, n in Counter(asked).items() if n > 1}
    # the rendered page is fetched once: Chromium is handed the page as served (issue 26); the 500 is retried
    assert again == {"/program/posters": 2}, "a page rendered under auto is fetched once"
    by_path = {path_of(r["url"]): r for r in pages.iter_rows(named=True)}
    assert {p: r["depth"] for p, r in by_path.items()} == {p: want[p] for p in by_path}
    home = by_path["/"]
    assert (home["rendered"], home["render_reason"]) == (True, "script_builds_dom")
    assert {(path_of(c["href"]), c["kind"]) for c in home["clickables"]} >= {("/calls", "script"),
                                                                              ("/news", "anchor")}
    assert all(not r["rendered"] and r["render_reason"] == "no_script"
               for p, r in by_path.items() if p != "/" and r["error"] is None)
    assert stats["rendered"] == 1


def test_always_renders_every_page_in_the_browser_only(tmp_path: Path) -> None:
    site = conference_site()
    with SiteServer(site) as server:
        _, pages = run(server, tmp_path / "out", "always", max_depth=1)
        asked = [p for p in server.requests if p != "/robots.txt"]
    html = pages.filter(pl.col("error").is_null())
    assert html.height >= 5 and html["rendered"].all() and set(html["render_reason"]) == {"render_always"}
    assert Counter(asked)["/"] == 1, "rendered without a plain fetch first"


def _scripted(other: str) -> Site:
    settle_never = ("<div id='ticker'></div><script>setInterval(function () { fetch('/poll?' + Date.now()); }, 100);"
                    "</script>")
    leaks = f"<div id='app'></div><script>fetch('{other}/track'); document.getElementById('app').innerHTML = "
    leaks += "'<a href=\"/inside\">Inside</a>';</script>"
    return Site("scripted", {
        "/": Page("/", "Home", "<p>Start.</p>", links=[("/busy", "Busy"), ("/leaky", "Leaky")]),
        "/busy": Page("/busy", "Busy", "<p>Always polling.</p>" + settle_never),
        "/leaky": Page("/leaky", "Leaky", "<p>Calls home.</p>" + leaks),
        "/inside": Page("/inside", "Inside", "<p>Reached only through a script.</p>"),
        "/poll": Page("/poll", "Poll", "<p>tick</p>"),
    })


def test_the_browser_keeps_to_the_site_and_a_page_that_never_settles_stands_as_served(tmp_path: Path) -> None:
    with SiteServer(Site("other", {})) as other, SiteServer(_scripted(other.url)) as server:
        _, pages = run(server, tmp_path / "out", "auto")
        assert other.requests == [], "Chromium asked nothing of another host"
    by_path = {path_of(r["url"]): r for r in pages.iter_rows(named=True)}
    busy = by_path["/busy"]
    assert (busy["rendered"], busy["render_reason"], busy["error"]) == (False, "render_failed_scripts_never_settle",
                                                                        None)
    assert by_path["/leaky"]["rendered"] and by_path["/inside"]["depth"] == 2


def test_rendering_without_a_browser_stops_before_any_work(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("timelyqa")
    with SiteServer(conference_site()) as server:
        proc = subprocess.run([str(cli), "crawl", "site-tree", "--root", server.url + "/", "--out",
                               str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
                                   "TIMELYQA_CHROMIUM": "/nowhere/chromium"})
        assert [p for p in server.requests if p != "/"] == []
    assert proc.returncode == 2 and "--render auto needs Chromium" in proc.stderr
    assert not (tmp_path / "out" / "pages.parquet").exists()
