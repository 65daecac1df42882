"""One crawl-stats shape: the three spiders count from Scrapy's stats the same way, keyed by reason, and every reader
(a crawl's failure, the CLI's line, a flow's table) reads crawl_stats.json through timelyqa.crawling.CrawlStats."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl

from flows.common import crawl_rows
from spiders import news, official, store
from spiders.run import summary as run_summary
from timelyqa.crawling import STATS, CrawlStats, summary

SCRAPY = {"downloader/request_count": 9, "downloader/response_bytes": 5120, "guard/private_address": 2,
          "guard/host_not_allowed": 1, "traps/depth_exceeded": 4, "pages/skipped/too_large": 1,
          "robots/unreachable": 1, "robots/ok": 3, "pages/resumed": 2, "log_count/INFO": 40}
"""Scrapy's stats as a crawl leaves them: Scrapy's own counters and the spiders' reasons under their prefixes."""


def test_every_spider_counts_requests_bytes_and_refusals_from_scrapy_alike() -> None:
    news_stats = news.crawl_stats([{"fetched": True, "rendered": False}, {"fetched": False, "rendered": False}], 1,
                                  [{"reason": "not_an_article"}, {"reason": "http_404"},
                                   {"reason": "not_an_article"}], SCRAPY)
    spider = SimpleNamespace(keys={"a": ["k1", "k2"], "b": ["k3"]}, store=SimpleNamespace(root=Path("/pages")))
    official_stats = official.crawl_stats([{"failure": None, "rendered": True}, {"failure": "site_down",
                                                                                 "rendered": False}], SCRAPY, spider)
    pages = pl.DataFrame({"error": [None, None, "http_500"], "rendered": [False, True, False], "depth": [0, 1, 1]})
    tree_stats = store.crawl_stats(pages, SCRAPY, redirected=1)
    for stats in (news_stats, official_stats, tree_stats):
        assert (stats["requests"], stats["bytes"]) == (9, 5120)
        assert stats["refused"] == {"host_not_allowed": 1, "private_address": 2}
    assert news_stats["errors"] == {"http_404": 1, "not_an_article": 2} and news_stats["resumed"] == 2
    assert official_stats["errors"] == {"site_down": 1} and official_stats["store"] == "/pages"
    assert tree_stats["errors"] == {"http_500": 1} and tree_stats["bounded"] == {"depth_exceeded": 4}
    assert tree_stats["skipped"] == {"too_large": 1} and tree_stats["robots"] == {"ok": 3, "unreachable": 1}
    assert tree_stats["pages_per_depth"] == {"0": 1, "1": 1}


def test_every_reader_reads_one_shape(tmp_path: Path) -> None:
    """The line a failed crawl and `timelyqa crawl site-tree` print, and the table a flow shows, from the file."""
    pages = pl.DataFrame({"error": [None, None, "http_500"], "rendered": [False, True, False], "depth": [0, 1, 1]})
    (tmp_path / STATS).write_text(json.dumps(store.crawl_stats(pages, SCRAPY)))
    stats = CrawlStats.read(tmp_path)
    line = "2 pages, 5120 bytes, http_500 1; not requested: too_large 1, robots.txt unreachable on 1 host"
    assert stats.summary() == summary(json.loads((tmp_path / STATS).read_text())) == run_summary(stats) == line
    assert crawl_rows(json.loads((tmp_path / STATS).read_text())) == [
        {"what": "pages", "count": 2}, {"what": "bytes", "count": 5120}, {"what": "rendered", "count": 1},
        {"what": "depth 0", "count": 1}, {"what": "depth 1", "count": 1}, {"what": "error: http_500", "count": 1},
        {"what": "refused: host_not_allowed", "count": 1}, {"what": "refused: private_address", "count": 2},
        {"what": "bounded: depth_exceeded", "count": 4}]


def test_counts_a_spider_does_not_keep_read_as_none_and_its_own_are_kept() -> None:
    stats = CrawlStats.of({"pages": 0, "articles": 0, "store": "/pages"})
    assert stats.summary() == "0 pages, 0 bytes, no errors"
    assert stats.model_extra == {"articles": 0, "store": "/pages"}
