"""Rendering under `render: auto` with real Chromium: a page is fetched once (Chromium is handed the response Scrapy
already has, through Playwright's routing, instead of asking the site again), and a rendered page whose script
navigates off the site ends as its row, the off-site host never asked."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders.render import browser_path
from spiders.run import crawl
from tests.hostile_web import HostileServer, page, redirect

pytestmark = [pytest.mark.slow,  # Scrapy and Chromium in a process of their own
              pytest.mark.skipif(browser_path() is None, reason="no Chromium (make test installs it)")]

BUILDS_MENU = ("const a = document.createElement('a'); a.href = '/from-script'; a.textContent = 'Added';"
               "document.getElementById('menu').appendChild(a);")
LONG = "A sentence of the page's own text, long enough that the page is no app shell. " * 4


def path_of(url: str | None) -> str | None:
    return None if url is None else urlsplit(url).path


def test_a_page_rendered_under_auto_is_fetched_once(tmp_path: Path) -> None:
    answers = {"/": page("Home", LONG, links=["/plain"], script=BUILDS_MENU),
               "/plain": page("Plain", LONG), "/from-script": page("Added", LONG)}
    answers["/"] = (200, answers["/"][1], answers["/"][2].replace(b"<ul>", b'<div id="menu"></div><ul>', 1))
    with HostileServer(answers) as server:
        stats = crawl("site_tree", {"roots": json.dumps([server.url + "/"]), "max_depth": 2, "max_pages": 20,
                                    "render": "auto"}, tmp_path / "out", fresh=True)
    pages = pl.read_parquet(tmp_path / "out" / "pages.parquet")
    home = pages.filter(pl.col("url").map_elements(path_of, return_dtype=pl.String()) == "/").row(0, named=True)
    assert home["rendered"] and home["render_reason"] == "script_builds_dom" and home["error"] is None
    assert "/from-script" in {path_of(c["href"]) for c in home["clickables"]}, "the rendered page is read"
    assert server.asked("/") == 1, f"the page is fetched once, not again by Chromium: {server.requests}"
    assert server.asked("/from-script") == 1 and server.asked("/plain") == 1
    assert stats["rendered"] == 1 and stats["pages"] == 3


def test_a_rendered_page_whose_script_navigates_off_site_is_its_row_and_the_other_host_is_never_asked(
        tmp_path: Path) -> None:
    with HostileServer({"/trap": page("Trap", LONG)}) as other:
        leave = f"location.href = '{other.url}/trap';"
        answers = {"/": page("Home", LONG, links=["/leaves", "/stays"]),
                   "/leaves": page("Leaves", LONG, script=f"document.body.appendChild(document.createElement('p'));"
                                                         f"{leave}"),
                   "/stays": page("Stays", LONG)}
        with HostileServer(answers) as server:
            stats = crawl("site_tree", {"roots": json.dumps([server.url + "/"]), "max_depth": 2, "max_pages": 20,
                                        "render": "auto"}, tmp_path / "out", fresh=True)
    pages = pl.read_parquet(tmp_path / "out" / "pages.parquet")
    rows = {path_of(r["url"]): r for r in pages.iter_rows(named=True)}
    assert set(rows) == {"/", "/leaves", "/stays"}
    leaves = rows["/leaves"]
    assert path_of(leaves["final_url"]) == "/leaves" and urlsplit(leaves["final_url"]).netloc == urlsplit(
        server.url).netloc, "the row is the page the crawl asked for, never the off-site one"
    # The page as served stands, and says why: its script took Chromium off the site.
    assert leaves["render_reason"] == "render_failed_navigated_off_site" and not leaves["rendered"]
    assert leaves["error"] is None and leaves["title"] == "Leaves" and "own text" in leaves["text"]
    assert other.requests == [], "nothing is asked of the other host"
    assert server.asked("/leaves") == 1
    assert stats["refused"]["off_site"] >= 1, "the proxy refused Chromium's navigation, and counted it"


def test_under_render_always_a_redirect_chromium_follows_is_an_edge_to_the_one_row_of_its_page(
        tmp_path: Path) -> None:
    answers = {"/": page("Home", LONG, links=["/redirect-me", "/about"]), "/redirect-me": redirect("/about"),
               "/about": page("About", LONG)}
    with HostileServer(answers) as server:
        stats = crawl("site_tree", {"roots": json.dumps([server.url + "/"]), "max_depth": 2, "max_pages": 20,
                                    "render": "always"}, tmp_path / "out", fresh=True)
    pages = pl.read_parquet(tmp_path / "out" / "pages.parquet")
    links = pl.read_parquet(tmp_path / "out" / "links.parquet").filter(pl.col("kind") == "redirect")
    assert sorted(path_of(u) for u in pages["url"]) == ["/", "/about"] and pages["error"].null_count() == 2
    assert pages["rendered"].all() and stats["redirected"] == 1
    assert [(path_of(f), path_of(t)) for f, t in zip(links["from"], links["to"], strict=True)] == [
        ("/redirect-me", "/about")]
