"""The real-site part of `make bench`: the site-tree crawl of a real documentation site against a plain Scrapy
CrawlSpider over the same site, in one run; its figures go under "realsite" in out/bench.json.

The site is the Python 3.11 documentation from Debian's python3.11-doc (`make pydocs`), about 530 pages of about
96 KB, served by timelyqa's LocalSite on 127.0.0.1, crawled from index.html to the same depth both ways:

- ours: `spiders.run.crawl("site_tree", render never, fresh, extract=False)`, the product's settings: every page
  fetched, its clickables read and its text and links stored (fetched.parquet). CPU: the crawl's process (waited
  for, so in this process's RUSAGE_CHILDREN).
- the extraction stage after it (timelyqa/site_tree/extract.py), over that crawl's pages, with 1 and with 2 worker
  processes: each page's title, markdown, text and facts, pages.parquet written. Plain Scrapy reads no content, so
  the stage is timed apart from the crawl; its CPU is its workers' (spawned and joined: RUSAGE_CHILDREN) and ours.
- plain: tests/plain_crawl.py, a CrawlSpider with a LinkExtractor, with the same politeness settings as ours
  (robots.txt obeyed, AutoThrottle and its start delay and target, concurrency, download timeout, User-Agent) so the
  ratio measures our cost per page and nothing else. Scrapy's DEPTH_LIMIT cuts at the same depth.

The two take turns (plain first in odd rounds, ours first in even ones), so both see the same machine; figures are
the best run of each by seconds a page. Target: ours pages/s >= 0.8x plain's. CPU seconds a page of each beside it,
and the extraction stage's pages/s with 1 and 2 workers, from the same run.
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

import spiders.settings as product
from spiders.run import crawl
from spiders.urls import canonical
from timelyqa.localsite import LocalSite
from timelyqa.site_tree import extract as extraction

ROOT = Path(__file__).resolve().parent.parent
PYDOCS = Path("/usr/share/doc/python3.11/html")
"""Debian's python3.11-doc (`make pydocs` installs it)."""
PLAIN = ROOT / "tests" / "plain_crawl.py"
RATIO_TARGET = 0.8
POLITENESS = ("ROBOTSTXT_OBEY", "AUTOTHROTTLE_ENABLED", "AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_TARGET_CONCURRENCY",
              "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "DOWNLOAD_TIMEOUT", "USER_AGENT",
              "COOKIES_ENABLED", "RETRY_TIMES", "REDIRECT_MAX_TIMES", "DOWNLOAD_MAXSIZE")
"""What sets a crawl's pace and manners: the plain crawl gets the product's value of each."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def plain_settings() -> dict[str, Any]:
    return {name: getattr(product, name) for name in POLITENESS}


def plain_once(root: str, depth: int, out: Path) -> dict[str, Any]:
    """One plain CrawlSpider crawl from `root` to `depth` in its own process: its pages (URLs), wall and CPU seconds."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    items = out / "pages.jsonl"
    argv = [sys.executable, "-m", "scrapy", "runspider", str(PLAIN), "-a", f"root={root}",
            "-s", f"DEPTH_LIMIT={depth}", "-O", str(items),
            *(a for k, v in plain_settings().items() for a in ("-s", f"{k}={v}"))]
    cpu, started = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, cwd=out, capture_output=True, text=True, check=False, timeout=3600)
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if proc.returncode != 0 or not items.is_file():
        raise RuntimeError(f"plain crawl of {root} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    urls = {canonical(json.loads(line)["url"]) for line in items.read_text().splitlines()}
    return {"pages": len(urls), "urls": urls, "seconds": seconds, "cpu_seconds": cpu}


def ours_once(root: str, depth: int, out: Path) -> dict[str, Any]:
    """One fresh site-tree crawl from `root` to `depth`, no content read: its pages, wall and CPU seconds."""
    import polars as pl

    shutil.rmtree(out, ignore_errors=True)
    args = {"roots": json.dumps([root]), "max_depth": depth, "max_pages": 100_000, "render": "never"}
    cpu, started = _children_cpu(), time.perf_counter()
    stats = crawl("site_tree", args, out, fresh=True, extract=False)
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    pages = pl.read_parquet(out / extraction.FETCHED, columns=["url", "error"])
    return {"pages": stats["pages"], "urls": set(pages["url"].to_list()), "seconds": seconds, "cpu_seconds": cpu,
            "errors": pages.filter(pl.col("error").is_not_null()).height}


def extract_once(crawl_dir: Path, workers: int) -> dict[str, Any]:
    """The extraction stage over a finished crawl, from nothing read, in `workers` processes: pages read, wall and
    CPU seconds."""
    (crawl_dir / extraction.PAGES).unlink(missing_ok=True)
    shutil.rmtree(crawl_dir / extraction.PARTS, ignore_errors=True)
    cpu, started = _children_cpu() + _own_cpu(), time.perf_counter()
    stats = extraction.run(crawl_dir, workers=workers)
    seconds, cpu = time.perf_counter() - started, _children_cpu() + _own_cpu() - cpu
    return {"pages": stats["extracted"], "seconds": seconds, "cpu_seconds": cpu,
            "failed": sum(n for r, n in stats["errors"].items() if r.startswith("extract_"))}


def measure(work: Path, *, site: Path = PYDOCS, depth: int = 3, repeat: int = 1) -> dict[str, Any]:
    """Serve `site` and crawl it both ways, `repeat` rounds, taking turns."""
    if not (site / "index.html").is_file():
        raise SystemExit(f"bench: {site}/index.html: no documentation site to crawl (make pydocs)")
    best: dict[str, dict[str, Any]] = {}
    work = work.resolve()  # the plain crawl runs in its own folder
    with LocalSite(site) as server:
        root = server.url + "index.html"
        for n in range(repeat):
            order = ("plain", "ours") if n % 2 == 0 else ("ours", "plain")
            run: dict[str, dict[str, Any]] = {}
            for who in order:
                out = work / who
                run[who] = plain_once(root, depth, out) if who == "plain" else ours_once(root, depth, out)
            for workers in (1, 2):
                run[f"extract{workers}"] = extract_once(work / "ours", workers)
            p, o = run["plain"], run["ours"]
            print(f"  run {n + 1}: ours {o['pages']:,} pages in {o['seconds']:.1f} s ({o['cpu_seconds']:.1f} CPU s), "
                  f"plain {p['pages']:,} in {p['seconds']:.1f} s ({p['cpu_seconds']:.1f} CPU s): "
                  f"{(o['pages'] / o['seconds']) / (p['pages'] / p['seconds']):.2f}x; extraction "
                  + ", ".join(f"{w} worker{'s' * (w > 1)} {run[f'extract{w}']['seconds']:.1f} s" for w in (1, 2)),
                  flush=True)
            for who, figures in run.items():
                if who not in best or figures["seconds"] / figures["pages"] < best[who]["seconds"] / best[who]["pages"]:
                    best[who] = figures
    shutil.rmtree(work, ignore_errors=True)
    o, p = best["ours"], best["plain"]
    ours_rate, plain_rate = o["pages"] / o["seconds"], p["pages"] / p["seconds"]
    stage = {f"extract_{w}_{k}": v for w in (1, 2) for k, v in _stage(best[f"extract{w}"]).items()}
    return stage | {
        "site": str(site), "depth": depth, "site_pages": sum(1 for _ in site.rglob("*.html")),
        "ours_pages": o["pages"], "ours_errors": o["errors"], "ours_seconds": round(o["seconds"], 2),
        "ours_cpu_seconds": round(o["cpu_seconds"], 2), "ours_pages_per_s": round(ours_rate, 2),
        "ours_cpu_ms_per_page": round(1000 * o["cpu_seconds"] / o["pages"], 2),
        "plain_pages": p["pages"], "plain_seconds": round(p["seconds"], 2),
        "plain_cpu_seconds": round(p["cpu_seconds"], 2), "plain_pages_per_s": round(plain_rate, 2),
        "plain_cpu_ms_per_page": round(1000 * p["cpu_seconds"] / p["pages"], 2),
        "plain_pages_ours_missed": len(p["urls"] - o["urls"]),
        "ours_over_plain": round(ours_rate / plain_rate, 3),
        "cpu_per_page_over_plain": round((o["cpu_seconds"] / o["pages"]) / (p["cpu_seconds"] / p["pages"]), 3),
    }


def _stage(e: dict[str, Any]) -> dict[str, Any]:
    return {"pages": e["pages"], "failed": e["failed"], "seconds": round(e["seconds"], 2),
            "cpu_seconds": round(e["cpu_seconds"], 2), "pages_per_s": round(e["pages"] / e["seconds"], 2),
            "cpu_ms_per_page": round(1000 * e["cpu_seconds"] / e["pages"], 2)}


def report(f: dict[str, Any]) -> list[str]:
    """Print the table; return the targets missed."""
    print(f"\nCrawl of a real documentation site ({f['site']}, {f['site_pages']:,} pages) on 127.0.0.1, depth "
          f"{f['depth']}, the same politeness both ways")
    print(f"  {'':40}{'pages':>7}{'seconds':>9}{'CPU s':>9}{'pages/s':>9}{'CPU ms/page':>13}")
    for who, label in (("ours", "site-tree crawl (no content read)"), ("plain", "plain Scrapy CrawlSpider"),
                       ("extract_1", "extraction stage, 1 worker"), ("extract_2", "extraction stage, 2 workers")):
        print(f"  {label:40}{f[who + '_pages']:7,}{f[who + '_seconds']:9.1f}{f[who + '_cpu_seconds']:9.1f}"
              f"{f[who + '_pages_per_s']:9.1f}{f[who + '_cpu_ms_per_page']:13.1f}")
    missed = []
    ok = f["ours_over_plain"] >= RATIO_TARGET
    print(f"  site-tree / plain pages/s: {f['ours_over_plain']:.2f}x   target >= {RATIO_TARGET:.1f}x   "
          f"{'ok' if ok else 'MISSED'}; CPU a page {f['cpu_per_page_over_plain']:.1f}x plain's")
    if not ok:
        missed.append(f"realsite ours_over_plain {f['ours_over_plain']:.2f} < {RATIO_TARGET}")
    whole = f["ours_pages"] / (f["ours_seconds"] + f["extract_2_seconds"])
    print(f"  crawl then extraction (2 workers): {whole:.1f} pages/s, {whole / f['plain_pages_per_s']:.2f}x plain's; "
          f"pages the stage could not read: {f['extract_2_failed']}")
    found = f["plain_pages_ours_missed"] == 0
    print(f"  pages the plain crawl reached that ours did not: {f['plain_pages_ours_missed']:,}   "
          f"{'ok' if found else 'MISSED'}")
    if not found:
        missed.append(f"realsite: ours missed {f['plain_pages_ours_missed']:,} pages the plain crawl reached")
    return missed


if __name__ == "__main__":  # the real-site part alone: bench_realsite.py [depth [repeat]]
    sizes = [int(a) for a in sys.argv[1:3]]
    sys.exit(1 if report(measure(Path("out/bench/realsite-work"),
                                 **dict(zip(("depth", "repeat"), sizes, strict=False)))) else 0)
