"""A cited article whose script, once Chromium runs it, navigates off the allow-list: the page Chromium ends on is
never read as the article (nor asked of its host), and the article is fetched once."""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from spiders.render import browser_path
from spiders.run import crawl
from tests.newsworld import NewsHost, free_port, outlets_yaml
from tests.test_news_crawl import events
from timelyqa.files import write_parquet
from timelyqa.news.outlets import Outlets, crawl_args, plan_links

pytestmark = [pytest.mark.slow,  # Scrapy and Chromium in a process of their own
              pytest.mark.skipif(browser_path() is None, reason="no Chromium (make test installs it)")]

STORY = "/2026/05/05/bridge-reopens.html"
DAY = date(2026, 5, 5)
TEXT = ("The old stone bridge over the Aster reopened to traffic on Tuesday after eight months of repairs, the "
        "county council said, and buses return to their route through the valley next week. ")


def test_a_script_that_navigates_off_the_list_never_makes_the_article(tmp_path: Path) -> None:
    site, trap = tmp_path / "site", tmp_path / "trap"
    (site / STORY.rsplit("/", 1)[0].lstrip("/")).mkdir(parents=True)
    (trap / "2026").mkdir(parents=True)
    (trap / "2026" / "trap.html").write_text("<html><head><title>Trap</title></head><body><p>"
                                             + "The trap's own words, never an article. " * 20 + "</p></body></html>")
    port = free_port("127.0.0.6")
    with NewsHost("127.0.0.7", trap, free_port("127.0.0.7")) as other:
        (site / STORY.lstrip("/")).write_text(
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Bridge reopens | The Leaver</title>'
            '<meta property="article:published_time" content="2026-05-05T07:00:00Z"></head><body><main>'
            f"<h1>Bridge reopens</h1><p>{TEXT * 3}</p></main>"
            f"<script>document.body.appendChild(document.createElement('p')); "
            f"location.href = '{other.url}/2026/trap.html';</script></body></html>")
        with NewsHost("127.0.0.6", site, port) as leaver:
            outlets = outlets_yaml(tmp_path / "outlets.yaml", {"The Leaver": (f"127.0.0.6:{port}", "auto")})
            links, _ = plan_links(events({(DAY, "A bridge reopens."): [leaver.url + STORY]}), Outlets.load(outlets))
            write_parquet(links, tmp_path / "links.parquet")
            stats = crawl("news", crawl_args(tmp_path / "links.parquet", outlets, page_timeout=5), tmp_path / "crawl",
                          fresh=True)
            asked = leaver.asked()
        trapped = other.asked()
    articles = pl.read_parquet(tmp_path / "crawl" / "articles.parquet")
    assert trapped == [], "nothing is asked of the host the script sent Chromium to"
    assert Counter(asked)[STORY] == 1, "the article is fetched once, rendered from that answer"
    assert articles.height == 1, pl.read_parquet(tmp_path / "crawl" / "dropped.parquet")
    row = articles.row(0, named=True)
    assert "trap" not in row["text"].lower() and "stone bridge" in row["text"]
    assert row["rendered"] is False and row["final_url"] == leaver.url + STORY, "the page as served stands"
    assert stats["rendered"] == 0
