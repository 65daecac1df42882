"""The site-tree crawl's store at the crawl's end: fetched.parquet, links.parquet and crawl_stats.json read off the
journal a page at a time (a crawl of a large site never holds its pages' text at once), and the same files the
store wrote when it read the whole journal into memory."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pyarrow.parquet as pq
from scrapy import Spider
from scrapy.utils.test import get_crawler

from spiders.store import LINK_SCHEMA, CrawlStore, crawl_stats
from timelyqa.site_tree.extract import FETCHED_SCHEMA, PART_PAGES

ROOT = "http://127.0.0.1:8000/"


def page(n: int, *, attempt: str = "ok", links: int = 4) -> dict[str, Any]:
    """A journal line of page n as the spider writes it (spiders/site_tree.py)."""
    url = f"{ROOT}p/{n}.html"
    failed = attempt == "failed"
    clicks = [] if failed else [{"href": f"{ROOT}p/{(n * 7 + k) % 300}.html", "text": f"Page {k}", "kind": "anchor"}
                                for k in range(links)]
    if n % 50 == 3 and clicks:  # a link written twice on one page: one edge
        clicks.append(dict(clicks[0]))
    return {"url": url, "final_url": url, "status": None if failed else 200, "fetched_at": "2026-11-20T09:00:00+00:00",
            "sha256": None if failed else f"{n:064x}", "html": None if failed else f"<p>{n}</p>" + "x" * 2000,
            "error": "timeout" if failed else None, "rendered": False, "render_reason": "render_never",
            "fetch": {"status": None, "reason": None, "render": "render_never"}, "clickables": clicks}


def journal(folder: Path) -> list[dict[str, Any]]:
    """300 pages in a shuffled order; three tried twice (a timeout, then the page), one stored twice alike, two
    redirects (one journalled twice), and a last line a kill cut short."""
    rng = random.Random(7)
    lines: list[dict[str, Any]] = [page(n) for n in range(300)]
    rng.shuffle(lines)
    for n in (11, 120, 299):  # the timeout somewhere before the page
        lines.insert(rng.randrange(lines.index(page(n)) + 1), page(n, attempt="failed"))
    lines.append(page(42))
    lines[100:100] = [{"redirect": f"{ROOT}old.html", "to": f"{ROOT}p/5.html"}] * 2
    lines.insert(7, {"redirect": f"{ROOT}moved", "to": f"{ROOT}p/6.html"})
    folder.mkdir(parents=True)
    text = "".join(json.dumps(line) + "\n" for line in lines) + json.dumps(page(301))[:40]
    (folder / "pages.jsonl").write_text(text)
    return lines


def whole(lines: list[dict[str, Any]], spider: Any, stats: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame,
                                                                                      dict[str, Any]]:
    """The three files as the store wrote them from the whole journal in memory (spiders/store.py at c3c8caa)."""
    pages = [p for p in lines if "url" in p]
    redirects = [{"from": e["redirect"], "to": e["to"], "text": "", "kind": "redirect"}
                 for e in lines if "redirect" in e]
    rows = [{**{k: p.get(k) for k in FETCHED_SCHEMA}, "depth": spider.depth.get(p["url"]),
             "parent": spider.parent.get(p["url"]), "root_url": spider.root_of.get(p["url"])}
            for p in {p["url"]: p for p in pages}.values()]
    frame = pl.DataFrame(rows, schema=FETCHED_SCHEMA, orient="row").sort("depth", "url")
    links = [{"from": p["url"], "to": c["href"], "text": c["text"], "kind": c["kind"]}
             for p in pages for c in p["clickables"]] + redirects
    return (frame, pl.DataFrame(links, schema=LINK_SCHEMA, orient="row").unique(maintain_order=True),
            crawl_stats(frame, stats, len(redirects)))


def test_the_store_reads_the_journal_a_page_at_a_time_into_the_files_it_wrote_from_the_whole(tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    lines = journal(out)
    urls = sorted({p["url"] for p in lines if "url" in p})
    spider = SimpleNamespace(out=str(out), beyond={f"{ROOT}far.html"},
                             depth={u: (n * 13) % 5 for n, u in enumerate(urls) if n != 17},  # one page no depth
                             parent={u: ROOT for u in urls}, root_of={u: ROOT for u in urls})
    crawler = get_crawler(Spider)
    crawler.spider = spider  # type: ignore[assignment]
    crawler.stats.set_value("downloader/response_bytes", 12345)
    store = CrawlStore(crawler)
    store.journal = (out / "pages.jsonl").open("a")
    store.close_spider()

    want_pages, want_links, want_stats = whole(lines, spider, crawler.stats.get_stats())
    fetched = pl.read_parquet(out / "fetched.parquet")
    assert fetched.equals(want_pages) and fetched.height == 300
    assert fetched.filter(pl.col("url").str.ends_with("/p/11.html"))["error"].to_list() == [None], "its last attempt"
    assert pl.read_parquet(out / "links.parquet").equals(want_links)
    stats = json.loads((out / "crawl_stats.json").read_text())
    assert stats == json.loads(json.dumps({**want_stats, "bounded": {"depth_exceeded": 1}}, default=str))
    assert stats["redirected"] == 3
    groups = pq.ParquetFile(out / "fetched.parquet").metadata
    assert {groups.row_group(g).num_rows for g in range(groups.num_row_groups)} == {PART_PAGES, 300 % PART_PAGES}, \
        "a row group an extraction partition: a partition reads only its own pages' text"
