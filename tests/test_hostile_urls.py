"""URLs with no canonical form on real crawls (issue 26): a page linking one is still a row and its other links are
followed, the bad link counted as refused url_invalid; a news link planned with one is a dropped row with its reason,
and the other links are fetched. Each crawl runs as the product runs it, in its own Scrapy process, against local
servers on ephemeral ports."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from spiders.run import crawl
from tests.newsworld import FIXTURES, NewsHost, free_port, outlets_yaml
from tests.sites import Page, Site, SiteServer
from timelyqa.files import write_parquet
from timelyqa.news.frames import LINK_SCHEMA
from timelyqa.news.outlets import crawl_args

pytestmark = pytest.mark.slow  # Scrapy in its own process

BAD_LINKS = ["http://[::1/x", "http://127.0.0.1:99999/y", "https://a.example\\@b.example/"]


def test_a_page_linking_urls_with_no_canonical_form_is_a_row_and_its_other_links_are_followed(tmp_path: Path) -> None:
    site = Site("Bad links", {
        "/": Page("/", "Home", links=[(href, "bad") for href in BAD_LINKS] + [("/about.html", "About")]),
        "/about.html": Page("/about.html", "About", body="<p>About us.</p>")})
    with SiteServer(site) as server:
        stats = crawl("site_tree", {"roots": json.dumps([server.url + "/"]), "max_depth": 2, "max_pages": 10,
                                    "page_timeout": 5}, tmp_path / "crawl", fresh=True)
    pages = pl.read_parquet(tmp_path / "crawl" / "pages.parquet")
    assert sorted(pages["url"].to_list()) == [server.url + "/", server.url + "/about.html"]
    assert pages["error"].null_count() == 2, "both pages are rows without an error"
    home = pages.filter(pl.col("url") == server.url + "/").row(0, named=True)
    hrefs = [c["href"] for c in home["clickables"]]
    assert BAD_LINKS[0] in hrefs, "the malformed link stays in the page's row as written"
    assert stats["refused"].get("url_invalid") == 3, stats
    assert stats["pages"] == 2


def test_a_news_link_with_no_canonical_form_is_a_dropped_row_and_the_others_are_fetched(tmp_path: Path) -> None:
    port = free_port()
    with NewsHost("127.0.0.2", FIXTURES / "planet", port) as planet:
        outlets = outlets_yaml(tmp_path / "outlets.yaml", {"The Daily Planet": (f"127.0.0.2:{port}", "never")})
        good = planet.url + "/2026/05/04/quake-strikes-coast.html"
        # links.parquet as an older plan wrote it, or someone else: the crawl checks each link again
        rows = [{"url": url, "event_id": "e1", "event_date": date(2026, 5, 4), "outlet": "The Daily Planet",
                 "render": "never"} for url in [good, "http://127.0.0.2:99999/2026/05/04/x.html", "http://[::1/x"]]
        write_parquet(pl.DataFrame(rows, schema=LINK_SCHEMA, orient="row"), tmp_path / "links.parquet")
        crawl("news", crawl_args(tmp_path / "links.parquet", outlets, page_timeout=5), tmp_path / "crawl", fresh=True)
    articles = pl.read_parquet(tmp_path / "crawl" / "articles.parquet")
    dropped = pl.read_parquet(tmp_path / "crawl" / "dropped.parquet")
    assert articles["url"].to_list() == [good]
    assert sorted(dropped.select("url", "reason").rows()) == [
        ("http://127.0.0.2:99999/2026/05/04/x.html", "not_http"), ("http://[::1/x", "not_http")]


def test_timelyqa_news_reads_a_day_page_citing_urls_with_no_canonical_form_and_exits_as_usual(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    from datetime import UTC, datetime

    from tests.wikiworld import Rev, WikiPage, write_export
    from timelyqa.news.portal import day_title

    root = Path(__file__).resolve().parent.parent
    page = (root / "tests" / "fixtures" / "news" / "portal" / "2025-01-05.wikitext").read_text(encoding="utf-8")
    page = page.replace("https://www.reuters.com/world/europe/ukraine-launches-new-attack-kursk-2025-01-05/",
                        "https://www.reuters.com:99999/world/europe/ukraine-launches-new-attack-kursk-2025-01-05/")
    # a cite template without an outlet's name: the reader named it by its host, which raised on main
    page = page.replace("url=https://tass.com/defense/1893456 |title=Russian forces repel Ukrainian attack "
                        "|work=[[TASS]]", "url=http://[::1/x |title=Russian forces repel Ukrainian attack")
    day = date(2025, 1, 5)
    export = write_export([WikiPage(5001, day_title(day), 100, [Rev(1, None, datetime(2025, 1, 5, tzinfo=UTC), page,
                                                                     None, "edit")])], tmp_path / "portal.xml")
    outlets = outlets_yaml(tmp_path / "outlets.yaml", {"Nowhere": (f"127.0.0.2:{free_port()}", "never")})
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "timelyqa.cli", "news", "--start", "2025-01-05", "--end",
                           "2025-01-05", "--dump", str(export), "--outlets", str(outlets), "--out", str(tmp_path / "out")],
                          cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    rejected = pl.read_parquet(tmp_path / "out" / "rejected.parquet")
    bad = rejected.filter(pl.col("reason") == "citation_url_invalid")
    assert bad.height == 2 and "its port is out of range" in bad["detail"][0] and "[::1/x" in bad["detail"][1]
    events = pl.read_parquet(tmp_path / "out" / "events.parquet")
    assert events.height == 11, "every event of the page is read"
    assert "citation_url_invalid" in proc.stdout + proc.stderr, "the funnel counts them"
