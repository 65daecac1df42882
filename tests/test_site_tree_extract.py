"""The extraction stage after a site-tree crawl (timelyqa/site_tree/extract.py): the crawl reads no content, and the
stage writes the pages.parquet the crawl wrote when it read each page's content itself, byte for byte, in one process
or several; a page it cannot read is a row with its reason; a partition read is never read again."""

from __future__ import annotations

import json
import time
from pathlib import Path

import polars as pl
import pytest

from spiders.run import crawl
from tests.sites import Site, SiteServer, conference_site, tree_site
from tests.test_site_tree_crawl import static
from timelyqa.files import write_parquet
from timelyqa.site_tree import content
from timelyqa.site_tree import extract as extraction

pytestmark = pytest.mark.slow  # each test starts Scrapy in a process of its own
CLOCK = "2026-11-20T09:00:00+00:00"
READ = content.read  # the reader itself, whatever a test puts in its place


def crawled(site: Site | SiteServer, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A crawl without its extraction stage, on a fixed clock (so two crawls give the same rows)."""
    monkeypatch.setenv("TIMELYQA_CLOCK", CLOCK)
    if isinstance(site, Site):
        with SiteServer(site) as server:
            return crawled(server, out, monkeypatch)
    return crawl("site_tree", {"roots": json.dumps([site.url + "/"]), "max_depth": 4, "max_pages": 500,
                               "page_timeout": 1}, out, fresh=True, extract=False)


def read_in_turn(crawl_dir: Path, into: Path) -> bytes:
    """pages.parquet as the crawl wrote it before the stage existed: each page's content read as it was stored
    (spiders/store.py at main 786cbf3: `read(html, final_url, with_facts=error is None)`), a frame of PAGE_SCHEMA
    sorted by depth and URL."""
    rows = []
    for row in pl.read_parquet(crawl_dir / extraction.FETCHED).iter_rows(named=True):
        html = row.pop("html")
        rows.append(row | READ(html, row["final_url"], with_facts=row["error"] is None))
    frame = pl.DataFrame(rows, schema=extraction.PAGE_SCHEMA, orient="row").sort("depth", "url")
    write_parquet(frame, into)
    return into.read_bytes()


def test_the_crawl_reads_no_content_and_the_stage_writes_the_bytes_the_crawl_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with SiteServer(Site("elsewhere", {})) as other:
        out = tmp_path / "crawl"
        stats = crawled(static(conference_site(offsite=other.url), other.url), out, monkeypatch)
    assert not (out / "pages.parquet").exists() and "extracted" not in stats, "the crawl itself reads no content"
    fetched = pl.read_parquet(out / extraction.FETCHED)
    assert set(fetched.columns) == set(extraction.FETCHED_SCHEMA) and fetched["html"].drop_nulls().len() >= 28
    want = read_in_turn(out, tmp_path / "in-turn.parquet")
    after = extraction.run(out, workers=2, size=8)  # 5 partitions over 2 processes
    assert (out / "pages.parquet").read_bytes() == want
    assert {k: after[k] for k in ("pages", "errors")} == {k: stats[k] for k in ("pages", "errors")}
    assert after["extracted"] == fetched.filter(pl.col("html").fill_null("") != "").height
    pages = pl.read_parquet(out / "pages.parquet")
    assert pages.filter(pl.col("error").is_null())["facts"].list.len().sum() > 20, "facts read, as before"
    for workers in (0, 1):  # in this process, or one other: the same bytes
        (out / "pages.parquet").unlink()
        for part in (out / extraction.PARTS).iterdir():
            part.unlink()
        extraction.run(out, workers=workers)
        assert (out / "pages.parquet").read_bytes() == want


def test_a_page_whose_reading_fails_or_hangs_is_a_row_with_its_reason_and_costs_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "crawl"
    stats = crawled(tree_site(20, fanout=4), out, monkeypatch)
    urls = pl.read_parquet(out / extraction.FETCHED)["url"].to_list()
    broken, hangs = urls[3], urls[7]
    reader = READ

    def flaky(html: str | None, url: str, *, with_facts: bool) -> content.Content:
        if url == broken:
            raise UnicodeError("a reader's bug on this page")
        if url == hangs:
            time.sleep(30)
        return reader(html, url, with_facts=with_facts)

    monkeypatch.setattr(content, "read", flaky)
    started = time.monotonic()
    after = extraction.run(out, workers=0, timeout=0.5)  # here, where the stand-in reader is
    assert time.monotonic() - started < 15, "the hanging page was given up after its time limit"
    pages = pl.read_parquet(out / "pages.parquet")
    bad = {r["url"]: r for r in pages.filter(pl.col("error").is_not_null()).iter_rows(named=True)}
    assert bad.keys() == {broken, hangs}
    assert bad[broken]["error"] == "extract_failed" and bad[hangs]["error"] == "extract_timeout"
    assert bad[broken]["text"] is None and bad[broken]["facts"] == [] and bad[broken]["status"] == 200
    assert after["errors"] == {"extract_failed": 1, "extract_timeout": 1}
    assert after["pages"] == stats["pages"] - 2 == 18 and after["extracted"] == 18
    good = pages.filter(pl.col("error").is_null())
    assert good.height == 18 and good["text"].is_not_null().all() and good["facts"].list.len().min() > 0


def test_a_partition_read_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            request: pytest.FixtureRequest) -> None:
    out = tmp_path / "crawl"
    server = SiteServer(tree_site(40, fanout=4)).__enter__()
    request.addfinalizer(lambda: server.__exit__(None, None, None))
    crawled(server, out, monkeypatch)
    parts = extraction.plan(out, 8)
    for part in parts[:2]:  # a run killed after two of five partitions
        extraction.extract_part(out, part)
    kept = {p.key: extraction.part_path(out, p).stat().st_mtime_ns for p in parts[:2]}
    reads = []
    reader = READ

    def counting(html: str | None, url: str, *, with_facts: bool) -> content.Content:
        reads.append(url)
        return reader(html, url, with_facts=with_facts)

    monkeypatch.setattr(content, "read", counting)
    extraction.run(out, workers=0, size=8)
    assert {p.key: extraction.part_path(out, p).stat().st_mtime_ns for p in parts[:2]} == kept
    assert len(reads) == 40 - 16, "only the pages of the partitions not read yet"
    assert (out / "pages.parquet").read_bytes() == read_in_turn(out, tmp_path / "in-turn.parquet")
    assert extraction.run(out, workers=0, size=8)["extracted"] == 40 and len(reads) == 24, "done: nothing again"

    # the same pages fetched again by a new crawl: their partitions stand, nothing is read again
    crawled(server, out, monkeypatch)
    assert not (out / "pages.parquet").exists()
    extraction.run(out, workers=0, size=8)
    assert len(reads) == 24 and (out / "pages.parquet").read_bytes() == read_in_turn(out, tmp_path / "again.parquet")
