"""The site-tree crawl on a real XHTML documentation site no one here wrote: the PostgreSQL 15 documentation
(Debian's postgresql-doc-15, DocBook's XHTML, every page opening with `<?xml version="1.0" encoding="UTF-8"?>` and
the XHTML namespace), served on 127.0.0.1, held to what a plain Scrapy CrawlSpider with a LinkExtractor finds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

PGDOCS = Path("/usr/share/doc/postgresql-doc-15/html")
"""Debian's postgresql-doc-15, which `make test` installs when it is missing (`make pgdocs`)."""
PLAIN = Path(__file__).resolve().parent / "plain_crawl.py"
MAX_DEPTH = 2  # from index.html: 1,169 of the site's 1,173 pages


def plain_crawl(root: str, max_depth: int, out: Path) -> list[dict]:
    """The pages a plain CrawlSpider reaches from `root` within `max_depth` (tests/plain_crawl.py), in its own
    process: a Scrapy crawl cannot run twice in one."""
    argv = [sys.executable, "-m", "scrapy", "runspider", str(PLAIN), "-a", f"root={root}",
            "-s", f"DEPTH_LIMIT={max_depth}", "-O", str(out)]
    proc = subprocess.run(argv, cwd=out.parent, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow  # two real crawls of 1,169 pages each: about two minutes here
def test_a_crawl_of_the_postgresql_docs_finds_every_page_a_plain_crawlspider_finds_each_once(tmp_path: Path
                                                                                              ) -> None:
    """On main the crawl stopped at index.html: "1 pages, no errors", no link, no title, no fact."""
    from spiders.run import crawl  # noqa: PLC0415
    from spiders.urls import canonical  # noqa: PLC0415
    from timelyqa.localsite import LocalSite  # noqa: PLC0415

    assert (PGDOCS / "index.html").is_file(), f"{PGDOCS}: install Debian's postgresql-doc-15 (make pgdocs)"
    with LocalSite(PGDOCS) as site:
        base = site.url
        root = base + "index.html"
        plain = plain_crawl(root, MAX_DEPTH, tmp_path / "plain.jsonl")
        stats = crawl("site_tree", {"roots": json.dumps([root]), "max_depth": MAX_DEPTH, "max_pages": 5000,
                                    "render": "never"}, tmp_path / "crawl")
    found = {canonical(p["url"]) for p in plain}
    assert len(found) > 1000  # the yardstick itself crawled the site
    pages = pl.read_parquet(tmp_path / "crawl" / "pages.parquet")
    ours = pages["url"].to_list()
    assert len(ours) == len(set(ours)) and pages["final_url"].n_unique() == pages.height  # each page once
    assert sorted(found - set(ours)) == []  # every page the plain crawl finds
    assert pages["depth"].max() <= MAX_DEPTH and stats["errors"] == {} and stats["pages"] == pages.height
    # and read: every page titled, facts from the pages' tables
    assert pages.filter(pl.col("title").is_null()).height == 0
    numeric = pages.filter(pl.col("url") == base + "datatype-numeric.html").to_dicts()[0]
    assert numeric["title"] == "8.1. Numeric Types"
    assert {"label": "Range for integer", "value": "-2147483648 to +2147483647", "kind": "table",
            "context": "Name"} in numeric["facts"]
