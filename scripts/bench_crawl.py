"""The crawl part of `make bench`: crawl-and-parse of a local static site against parsing the same pages alone, and
rendered pages/s through Chromium, in one run; its figures go under "crawl" in out/bench.json.

1. Crawl and parse: `spiders.run.crawl("site_tree", render never)`, with the product's settings, over a tree of
   static pages (scripts/bench_site.py, 2,000 by default) that timelyqa's LocalSite serves on 127.0.0.1; wall
   seconds of the whole run (the crawl's process and its content worker starting, robots.txt, every page fetched,
   parsed and stored, pages.parquet written); pages from the crawl's stats.
2. Parse alone: the pages the crawl stored, their HTML read from the site's folder into memory first, then in this
   one process what the crawl computes from each: `clickables` (in the spider) and `spiders.content.read` (title,
   facts, markdown and text with trafilatura, in the content worker). Target: crawl pages/s >= 0.8x parse-alone
   pages/s. Both ways must give every page the same clickables and content.
3. Rendered: a smaller crawl of the same site with `render always` (every page through Chromium, its start
   included); reported, no target.
4. The store at the crawl's end (spiders/store.py): fetched.parquet, links.parquet and the stats from a journal of
   the same number of pages of `STORE_KB` KB each, and from one of a quarter of them, each in a process of its own;
   the memory each adds at its peak. Target: what the larger journal costs more <= 0.25x of how much larger it is
   (memory bounded whatever the site's size; holding the journal whole cost 4.8x).

Timings are wall seconds, best of `repeat` runs (crawl and parse alone take turns, so both see the same machine);
CPU seconds beside them (the crawl's processes; the server's threads run in this one, so their CPU is this
process's during the crawl).
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from bench_site import write_site
from spiders.clickables import clickables
from spiders.content import read
from spiders.run import crawl
from timelyqa.localsite import LocalSite

RATIO_TARGET = 0.8
STORE_TARGET = 0.25
STORE_KB = 100
CONTENT = ("title", "markdown", "text", "facts")


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def crawl_once(root: str, out: Path, *, pages: int, render: str) -> dict[str, Any]:
    """One fresh crawl of up to `pages` pages from `root`: its pages, wall and CPU seconds."""
    args = {"roots": json.dumps([root]), "max_depth": 10, "max_pages": pages, "pattern_budget": max(5000, 2 * pages),
            "render": render}
    shutil.rmtree(out, ignore_errors=True)
    child, mine, started = _cpu(resource.RUSAGE_CHILDREN), _cpu(resource.RUSAGE_SELF), time.perf_counter()
    stats = crawl("site_tree", args, out, fresh=True)
    seconds = time.perf_counter() - started
    return {"pages": stats["pages"], "seconds": seconds, "cpu_seconds": _cpu(resource.RUSAGE_CHILDREN) - child,
            "server_cpu_seconds": _cpu(resource.RUSAGE_SELF) - mine, "errors": sum(stats["errors"].values())}


def stored_pages(out: Path, site: Path, root: str) -> list[dict[str, Any]]:
    """The pages the crawl stored, each with the HTML served for it (read from the site's folder)."""
    rows = pl.read_parquet(out / "pages.parquet").filter(pl.col("error").is_null()).to_dicts()
    for row in rows:
        path = row["final_url"].removeprefix(root.rstrip("/"))
        row["html"] = (site / ("index.html" if path == "/" else path.lstrip("/"))).read_text(encoding="utf-8")
    return rows


def parse_alone(stored: list[dict[str, Any]]) -> dict[str, float]:
    """What the crawl computes from each page, without network or Scrapy, over HTML already in memory; then how many
    pages got the same clickables and content as the crawl stored (checked after the clock stops)."""
    cpu, started = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    results = [(clickables(p["html"], p["final_url"]), read(p["html"], p["final_url"], with_facts=True))
               for p in stored]
    seconds, cpu = time.perf_counter() - started, _cpu(resource.RUSAGE_SELF) - cpu
    same = sum([{"href": c.href, "text": c.text, "kind": c.kind} for c in found] == page["clickables"]
               and all(content[k] == page[k] for k in CONTENT)
               for page, (found, content) in zip(stored, results, strict=True))
    return {"pages": len(stored), "seconds": seconds, "cpu_seconds": cpu, "same": same}


def store_journal(folder: Path, pages: int, kb: int = STORE_KB) -> int:
    """A crawl's journal of `pages` pages of `kb` KB of text and 40 links each; its size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pages.jsonl").open("w", encoding="utf-8") as journal:
        for n in range(pages):
            url = f"http://127.0.0.1:8000/p/{n}.html"
            journal.write(json.dumps({
                "url": url, "final_url": url, "status": 200, "fetched_at": "2026-11-20T09:00:00+00:00",
                "sha256": f"{n:064x}", "html": f"<p>{n}</p>" + "lorem ipsum " * (kb * 1024 // 12), "error": None,
                "rendered": False, "render_reason": "render_never", "fetch": {"status": 200, "reason": None},
                "clickables": [{"href": f"http://127.0.0.1:8000/p/{(n * 7 + k) % pages}.html", "text": f"Page {k}",
                                "kind": "anchor"} for k in range(40)]}) + "\n")
    return (folder / "pages.jsonl").stat().st_size


def store_alone(folder: Path, pages: int) -> None:
    """The store's end over the journal in `folder`, in this process: its peak memory over the process's before."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from spiders.store import CrawlStore

    urls = [f"http://127.0.0.1:8000/p/{n}.html" for n in range(pages)]
    crawler = get_crawler(Spider)
    crawler.spider = type("Done", (), {"out": str(folder), "beyond": set(),  # type: ignore[assignment]
                                       "depth": {u: n % 7 for n, u in enumerate(urls)},
                                       "parent": dict.fromkeys(urls), "root_of": dict.fromkeys(urls, urls[0])})()
    store = CrawlStore(crawler)
    store.journal = (folder / "pages.jsonl").open("a", encoding="utf-8")
    before, started = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter()
    store.close_spider()
    seconds = time.perf_counter() - started
    print(json.dumps({"held_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
                      "seconds": seconds}))


def measure_store(work: Path, pages: int) -> dict[str, float]:
    """The store's end over journals of a quarter of `pages` and of `pages` pages: the memory it holds at each, and
    how much more it holds for the larger one against how much larger that journal is (0 when memory is bounded,
    over 1 when the journal is held whole)."""
    held = {}
    for n in (max(pages // 4, 1), pages):
        size = store_journal(work / str(n), n)
        proc = subprocess.run([sys.executable, __file__, "--store", str(work / str(n)), str(n)], capture_output=True,
                              text=True, check=True)
        held[n] = (size, json.loads(proc.stdout.splitlines()[-1]))
        shutil.rmtree(work / str(n))
    (small, low), (size, high) = held.values()
    return {"store_pages": pages, "store_journal_mb": round(size / 2**20, 1),
            "store_held_mb": round(high["held_mb"], 1), "store_seconds": round(high["seconds"], 2),
            "store_quarter_held_mb": round(low["held_mb"], 1),
            "store_growth_over_journal": round(max(high["held_mb"] - low["held_mb"], 0) * 2**20 / (size - small), 3)}


def measure(work: Path, *, pages: int = 2000, render_pages: int = 80, repeat: int = 1, seed: int = 0
            ) -> dict[str, float]:
    """Write the site, serve it, and time the crawl, parse alone and the rendered crawl."""
    site = work / "site"
    write_site(site, pages, seed=seed)
    size = sum(f.stat().st_size for f in site.rglob("*.html"))
    best_crawl: dict[str, Any] = {}
    best_parse: dict[str, float] = {}
    with LocalSite(site) as server:
        for n in range(repeat):
            c = crawl_once(server.url, work / "crawl", pages=pages + 10, render="never")
            p = parse_alone(stored_pages(work / "crawl", site, server.url))
            print(f"  run {n + 1}: crawl {c['pages']:,} pages in {c['seconds']:.1f} s, parse alone {p['pages']:,} in "
                  f"{p['seconds']:.1f} s: {c['pages'] / c['seconds']:.0f} against {p['pages'] / p['seconds']:.0f} "
                  f"pages/s, {c['pages'] / c['seconds'] / (p['pages'] / p['seconds']):.2f}x", flush=True)
            best_crawl = min(best_crawl or c, c, key=lambda f: f["seconds"] / f["pages"])
            best_parse = min(best_parse or p, p, key=lambda f: f["seconds"] / f["pages"])
        if render_pages:
            print(f"  rendering {render_pages} pages through Chromium", flush=True)
            r = crawl_once(server.url, work / "rendered", pages=render_pages, render="always")
    print(f"  the store's end over a journal of {pages:,} pages of {STORE_KB} KB", flush=True)
    stored = measure_store(work / "store", pages)
    shutil.rmtree(work, ignore_errors=True)
    crawl_rate = best_crawl["pages"] / best_crawl["seconds"]
    parse_rate = best_parse["pages"] / best_parse["seconds"]
    figures = {
        "site_pages": pages, "site_kb_per_page": round(size / pages / 1024, 1),
        "crawl_pages": best_crawl["pages"], "crawl_seconds": round(best_crawl["seconds"], 2),
        "crawl_cpu_seconds": round(best_crawl["cpu_seconds"], 2),
        "server_cpu_seconds": round(best_crawl["server_cpu_seconds"], 2),
        "crawl_pages_per_s": round(crawl_rate, 1),
        "parse_pages": best_parse["pages"], "parse_seconds": round(best_parse["seconds"], 2),
        "parse_cpu_seconds": round(best_parse["cpu_seconds"], 2), "parse_pages_per_s": round(parse_rate, 1),
        "parse_same_as_crawl": best_parse["same"],
        "crawl_over_parse": round(crawl_rate / parse_rate, 3), **stored,
    }
    if render_pages:
        figures |= {"rendered_pages": r["pages"], "rendered_seconds": round(r["seconds"], 2),
                    "rendered_cpu_seconds": round(r["cpu_seconds"], 2),
                    "rendered_pages_per_s": round(r["pages"] / r["seconds"], 2)}
    return figures


def report(f: dict[str, float]) -> list[str]:
    """Print the table; return the targets missed."""
    print(f"\nCrawl of a local static site: {f['site_pages']:,} pages of {f['site_kb_per_page']:.0f} KB on 127.0.0.1")
    print(f"  {'':44}{'pages':>7}{'seconds':>9}{'CPU s':>9}{'pages/s':>9}")
    print(f"  {'crawl and parse (render never)':44}{f['crawl_pages']:7,}{f['crawl_seconds']:9.1f}"
          f"{f['crawl_cpu_seconds']:9.1f}{f['crawl_pages_per_s']:9.1f}   (server: {f['server_cpu_seconds']:.1f} CPU s)")
    print(f"  {'parse alone (clickables, content)':44}{f['parse_pages']:7,}{f['parse_seconds']:9.1f}"
          f"{f['parse_cpu_seconds']:9.1f}{f['parse_pages_per_s']:9.1f}")
    if "rendered_pages" in f:
        print(f"  {'rendered through Chromium (render always)':44}{f['rendered_pages']:7,}"
              f"{f['rendered_seconds']:9.1f}{f['rendered_cpu_seconds']:9.1f}{f['rendered_pages_per_s']:9.1f}")
    missed = []
    ok = f["crawl_over_parse"] >= RATIO_TARGET
    print(f"  crawl / parse alone: {f['crawl_over_parse']:.2f}x   target >= {RATIO_TARGET:.1f}x   "
          f"{'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"crawl_over_parse {f['crawl_over_parse']:.2f} < {RATIO_TARGET}")
    same = f["parse_same_as_crawl"] == f["parse_pages"]
    print(f"  same clickables and content both ways: {f['parse_same_as_crawl']:,} of {f['parse_pages']:,} pages   "
          f"{'ok' if same else 'MISSED'}")
    if not same:
        missed.append(f"parse alone differs from the crawl on {f['parse_pages'] - f['parse_same_as_crawl']:,} pages")
    ok = f["store_growth_over_journal"] <= STORE_TARGET
    print(f"  the store's end: {f['store_held_mb']:,.0f} MB held at its peak over a {f['store_journal_mb']:,.0f} MB "
          f"journal ({f['store_pages']:,} pages, {f['store_seconds']:.1f} s), "
          f"{f['store_quarter_held_mb']:,.0f} MB over a quarter of it: "
          f"{f['store_growth_over_journal']:.2f}x of the journal's growth   "
          f"target <= {STORE_TARGET:.2f}x   {'ok' if ok else 'MISSED'}")
    if not ok:
        missed.append(f"store_growth_over_journal {f['store_growth_over_journal']:.2f} > {STORE_TARGET}")
    return missed


if __name__ == "__main__" and sys.argv[1:2] == ["--store"]:  # measure_store's process: --store folder pages
    store_alone(Path(sys.argv[2]), int(sys.argv[3]))
elif __name__ == "__main__":  # the crawl part alone: bench_crawl.py [pages [render_pages [repeat]]]
    sizes = [int(a) for a in sys.argv[1:4]]
    sys.exit(1 if report(measure(Path("out/bench/crawl-work"), **dict(zip(("pages", "render_pages", "repeat"),
                                                                            sizes, strict=False)))) else 0)
