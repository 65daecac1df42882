"""The crawl's output: pages and the click graph, appended as they come, written as parquet with final depths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from spiders.journal import JournalPipeline, entries
from timelyqa.crawling import STATS, by_prefix, scrapy_counts
from timelyqa.files import write_parquet, write_text
from timelyqa.site_tree.extract import FETCHED, FETCHED_SCHEMA, PAGE_SCHEMA, PAGES, page_counts

LINK_SCHEMA = pl.Schema({"from": pl.String(), "to": pl.String(), "text": pl.String(), "kind": pl.String()})
__all__ = ["LINK_SCHEMA", "PAGE_SCHEMA", "CrawlStore", "crawl_stats"]


class CrawlStore(JournalPipeline):
    """An item pipeline: each page is appended (and flushed) to pages.jsonl as the crawl goes, so a killed crawl keeps
    what it fetched; at the end fetched.parquet (each page's text in `html`), links.parquet (the pages' clickables) and
    crawl_stats.json are written with each page's final depth, its parent on the shortest path and its root.

    No page's content is read here: a plain Scrapy crawl reads none, and this one keeps its pace. The extraction stage
    (timelyqa/site_tree/extract.py) reads it after the crawl and writes pages.parquet."""

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if "redirect" not in item:  # a page (else an edge of the click graph)
            self.crawler.stats.inc_value("pages/stored")
        self.write(item)
        return item

    def close_spider(self) -> None:
        self.journal.close()
        spider: Any = self.crawler.spider
        out = Path(spider.out)
        journal = list(entries(out))
        pages = [p for p in journal if "url" in p]
        redirects = [{"from": e["redirect"], "to": e["to"], "text": "", "kind": "redirect"}
                     for e in journal if "redirect" in e]
        rows = []
        for page in {p["url"]: p for p in pages}.values():  # one row a page, the last attempt
            key = page["url"]
            rows.append({**{k: page.get(k) for k in FETCHED_SCHEMA}, "depth": spider.depth.get(key),
                         "parent": spider.parent.get(key), "root_url": spider.root_of.get(key)})
        frame = pl.DataFrame(rows, schema=FETCHED_SCHEMA, orient="row").sort("depth", "url")
        (out / PAGES).unlink(missing_ok=True)  # an earlier crawl's, until the extraction stage writes this one's
        write_parquet(frame, out / FETCHED)
        # the click graph is the pages' clickables, in the order the pages came in, and the redirects
        links = [{"from": p["url"], "to": c["href"], "text": c["text"], "kind": c["kind"]}
                 for p in pages for c in p["clickables"]] + redirects
        write_parquet(pl.DataFrame(links, schema=LINK_SCHEMA, orient="row").unique(maintain_order=True),
                      out / "links.parquet")
        if beyond := len(spider.beyond - spider.depth.keys()):  # linked, but only from past the depth limit
            self.crawler.stats.set_value("traps/depth_exceeded", beyond)
        stats = crawl_stats(frame, self.crawler.stats.get_stats(), len(redirects))
        write_text(out / STATS, json.dumps(stats, indent=2, sort_keys=True, default=str))


def crawl_stats(pages: pl.DataFrame, stats: dict[str, Any], redirected: int = 0) -> dict[str, Any]:
    """What a crawl did: pages, bytes, errors by reason, rendered pages, pages per depth, refused and bounded URLs
    (the extraction stage counts pages, errors and depths again once it has read the pages)."""
    counts = page_counts(pages)
    return {
        "pages": counts["pages"],
        **scrapy_counts(stats),
        "errors": counts["errors"],
        "rendered": int(pages["rendered"].sum()),
        "pages_per_depth": counts["pages_per_depth"],
        "bounded": by_prefix(stats, "traps/"),
        "skipped": by_prefix(stats, "pages/skipped/"),
        "robots": by_prefix(stats, "robots/"),  # how each host's robots.txt ended (timelyqa/robotsfile.py's cases)
        "redirected": redirected,  # redirects, each an edge to the page it ended on (links.parquet, kind redirect)
    }
