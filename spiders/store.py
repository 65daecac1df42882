"""The crawl's output: pages and the click graph, appended as they come, written as parquet with final depths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from spiders.journal import JOURNAL, JournalPipeline, at, indexed
from timelyqa.crawling import STATS, by_prefix, scrapy_counts
from timelyqa.files import parquet_rows, write_text
from timelyqa.site_tree.extract import FETCHED, FETCHED_SCHEMA, PAGE_SCHEMA, PAGES, PART_PAGES, page_counts

LINK_SCHEMA = pl.Schema({"from": pl.String(), "to": pl.String(), "text": pl.String(), "kind": pl.String()})
LINK_ROWS = 10_000
"""Edges a row group of links.parquet: the most held at once."""
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
        last, redirects = self._links(out)
        order = (pl.DataFrame({"url": list(last), "offset": list(last.values())},
                              schema={"url": pl.String(), "offset": pl.Int64()})
                 .with_columns(depth=pl.col("url").replace_strict(spider.depth, default=None, return_dtype=pl.Int64()))
                 .sort("depth", "url"))
        (out / PAGES).unlink(missing_ok=True)  # an earlier crawl's, until the extraction stage writes this one's
        kept = []
        with (out / JOURNAL).open("rb") as journal, parquet_rows(out / FETCHED, FETCHED_SCHEMA) as write:
            for batch in order.iter_slices(PART_PAGES):  # a row group a partition of the extraction stage
                rows = []
                for key, offset, depth in batch.iter_rows():
                    page = at(journal, offset)
                    rows.append({**{k: page.get(k) for k in FETCHED_SCHEMA}, "depth": depth,
                                 "parent": spider.parent.get(key), "root_url": spider.root_of.get(key)})
                frame = pl.DataFrame(rows, schema=FETCHED_SCHEMA, orient="row")
                write(frame)
                kept.append(frame.select("url", "depth", "error", "rendered"))
        if beyond := len(spider.beyond - spider.depth.keys()):  # linked, but only from past the depth limit
            self.crawler.stats.set_value("traps/depth_exceeded", beyond)
        pages = pl.concat(kept) if kept else pl.DataFrame(schema={k: FETCHED_SCHEMA[k] for k in
                                                                         ("url", "depth", "error", "rendered")})
        stats = crawl_stats(pages, self.crawler.stats.get_stats(), redirects)
        write_text(out / STATS, json.dumps(stats, indent=2, sort_keys=True, default=str))

    @staticmethod
    def _links(out: Path) -> tuple[dict[str, int], int]:
        """links.parquet, read off the journal a page at a time: the pages' clickables in the order the pages came
        in, then the redirects, each edge once; the offset of each page's last line (its last attempt: its row), and
        how many redirects there were. What one page links to is held while it is written, and kept only for a page
        the journal holds twice (a page's edges are its own, so an edge comes twice only from one page)."""
        last: dict[str, int] = {}
        again: dict[str, set[tuple[str, str, str]]] = {}  # a page met twice -> the edges written for it
        redirects: list[tuple[str, str, str]] = []
        with parquet_rows(out / "links.parquet", LINK_SCHEMA) as write, (out / JOURNAL).open("rb") as journal:
            rows: list[tuple[str, str, str, str]] = []
            for offset, entry in indexed(out):
                if "redirect" in entry:
                    redirects.append((entry["redirect"], entry["to"], ""))
                    continue
                if "url" not in entry:
                    continue
                url = entry["url"]
                if url in last and url not in again:
                    again[url] = {(c["href"], c["text"], c["kind"]) for c in at(journal, last[url])["clickables"]}
                last[url] = offset
                seen = again.get(url, set())
                for click in entry["clickables"]:
                    if (edge := (click["href"], click["text"], click["kind"])) not in seen:
                        seen.add(edge)
                        rows.append((url, *edge))
                if url in again:
                    again[url] = seen
                if len(rows) >= LINK_ROWS:
                    write(pl.DataFrame(rows, schema=LINK_SCHEMA, orient="row"))
                    rows = []
            rows += [(a, b, text, "redirect") for a, b, text in dict.fromkeys(redirects)]
            write(pl.DataFrame(rows, schema=LINK_SCHEMA, orient="row"))
        return last, len(redirects)


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
