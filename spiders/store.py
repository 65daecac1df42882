"""The crawl's output: pages and the click graph, appended as they come, written as parquet with final depths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
from scrapy.crawler import Crawler

from spiders.content import ContentWorkers, read
from spiders.journal import JournalPipeline, entries
from timelyqa.crawling import STATS, by_prefix, counted, scrapy_counts
from timelyqa.files import write_parquet, write_text
from timelyqa.site_tree.facts import FACT_DTYPE

PAGE_SCHEMA = pl.Schema({
    "url": pl.String(), "final_url": pl.String(), "status": pl.Int64(), "depth": pl.Int64(), "parent": pl.String(),
    "root_url": pl.String(), "title": pl.String(), "fetched_at": pl.String(), "sha256": pl.String(),
    "rendered": pl.Boolean(), "render_reason": pl.String(), "markdown": pl.String(), "text": pl.String(),
    "clickables": pl.List(pl.Struct({"href": pl.String(), "text": pl.String(), "kind": pl.String()})),
    "facts": FACT_DTYPE,
    "error": pl.String(),
})
"""`facts` are the page's labelled values as `timelyqa.site_tree.facts` reads them from the page's HTML (rendered
when it was): what questions are asked about, and what a later crawl re-checks."""
LINK_SCHEMA = pl.Schema({"from": pl.String(), "to": pl.String(), "text": pl.String(), "kind": pl.String()})


class CrawlStore(JournalPipeline):
    """An item pipeline: each page is appended (and flushed) to pages.jsonl as the crawl goes, so a killed crawl keeps
    what it fetched; at the end pages.parquet, links.parquet (the pages' clickables) and crawl_stats.json are written
    with each page's final depth, its parent on the shortest path and its root.

    A page's title, markdown, text and facts (spiders/content.py: trafilatura is the costliest step of a page) are
    read by `EXTRACT_WORKERS` worker processes while this one keeps fetching and following links; with 0 they are
    read here, in turn. A page is in the journal once its content is."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.workers = ContentWorkers([])

    async def open_spider(self) -> None:  # type: ignore[override]
        super().open_spider()
        self.workers = await ContentWorkers.start(self.crawler.settings.getint("EXTRACT_WORKERS"))

    async def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        if "redirect" in item:  # an edge of the click graph, not a page
            self.write(item)
            return item
        html, url, with_facts = item.pop("html"), item["final_url"], item["error"] is None
        content = await self.workers.read(html, url, with_facts=with_facts) if html and self.workers else None
        if content is None:
            if html and self.workers:  # the worker failed on this page, or died: here, where Scrapy sees any error
                self.crawler.stats.inc_value("content/worker_failed")
            content = read(html, url, with_facts=with_facts)
        item |= content
        self.crawler.stats.inc_value("pages/stored")
        self.write(item)
        return item

    async def close_spider(self) -> None:
        await self.workers.close()
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
            rows.append({**{k: page.get(k) for k in PAGE_SCHEMA}, "depth": spider.depth.get(key),
                         "parent": spider.parent.get(key), "root_url": spider.root_of.get(key)})
        frame = pl.DataFrame(rows, schema=PAGE_SCHEMA, orient="row").sort("depth", "url")
        write_parquet(frame, out / "pages.parquet")
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
    """What a crawl did: pages, bytes, errors by reason, rendered pages, pages per depth, refused and bounded URLs,
    and pages a content worker failed on."""
    fetched = pages.filter(pl.col("error").is_null())
    return {
        "pages": fetched.height,
        **scrapy_counts(stats),
        "errors": counted(pages["error"].drop_nulls().to_list()),
        "rendered": int(pages["rendered"].sum()),
        "pages_per_depth": {str(d): int(n) for d, n in fetched.group_by("depth").len().sort("depth").iter_rows()},
        "bounded": by_prefix(stats, "traps/"),
        "skipped": by_prefix(stats, "pages/skipped/"),
        "robots": by_prefix(stats, "robots/"),  # how each host's robots.txt ended (timelyqa/robotsfile.py's cases)
        "redirected": redirected,  # redirects, each an edge to the page it ended on (links.parquet, kind redirect)
        "worker_failed": int(stats.get("content/worker_failed", 0)),  # pages then read in the crawl's own process
    }
