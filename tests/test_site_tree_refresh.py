"""Answers on a website change: a later crawl re-checks every released row against its pages, says which still
hold (the release keeps them as stored), and the next release's changelog says why each other one was retired."""

from __future__ import annotations

import json
import shutil
import socket
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from publish.release import build_release
from spiders.run import crawl
from timelyqa.localsite import LocalSite
from timelyqa.released import released_rows
from timelyqa.site_tree import pipeline

pytestmark = pytest.mark.slow  # two crawls, each in a Scrapy process of its own

SITE = Path(__file__).resolve().parent / "fixtures" / "site_tree" / "site"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def crawl_and_ask(site: Path, port: int, out: Path, previous: Path | None = None) -> pl.DataFrame:
    with LocalSite(site, port=port) as web:  # one port for both crawls: one root URL, so stable ids
        crawl("site_tree", {"roots": json.dumps([web.url]), "max_depth": 4, "max_pages": 100}, out / "crawl",
              fresh=True)
    pipeline.run(out / "crawl", out, pipeline.Settings(domain="education"), previous=previous)
    return pl.read_parquet(out / "questions.parquet")


def test_a_later_crawl_retires_what_changed_with_the_reason_and_keeps_the_rest(tmp_path: Path) -> None:
    port = free_port()
    first = crawl_and_ask(SITE, port, tmp_path / "june")
    build_release([tmp_path / "june"], tmp_path / "release", created=datetime(2026, 6, 1, tzinfo=UTC))

    later = tmp_path / "site-later"
    shutil.copytree(SITE, later)
    msc = later / "programs" / "msc" / "index.html"
    msc.write_text(msc.read_text().replace("EUR 9,800", "EUR 10,400"))
    shutil.rmtree(later / "people" / "heads" / "ruiz")
    second = crawl_and_ask(later, port, tmp_path / "july", previous=tmp_path / "release")

    single = first.filter(pl.col("type") == "single_source")
    fee = single.filter(pl.col("answer") == "EUR 9,800")
    office = single.filter(pl.col("answer").str.contains("Tuesdays"))
    assert fee.height == 1 and office.height == 1
    rejected = pl.read_parquet(tmp_path / "july" / "rejected.parquet").filter(pl.col("stage") == "refresh")
    why = {json.loads(item)["id"]: reason for reason, item in rejected.select("reason", "item").iter_rows()}
    assert why[fee["id"][0]] == "answer_changed" and why[office["id"][0]] == "fact_gone"
    assert "EUR 10,400" in second["answer"].to_list(), "the new value is asked about afresh"
    untouched = set(first.filter(~pl.col("facts").str.contains("9,800|/ruiz/"))["id"])
    assert untouched and all(why.get(i) is None for i in untouched)
    holds = set(pl.read_parquet(tmp_path / "july" / "rechecked.parquet")["id"])
    assert untouched <= holds and holds.isdisjoint(why), "what is still true is said to hold"

    manifest = build_release([tmp_path / "july"], tmp_path / "release", created=datetime(2026, 7, 1, tzinfo=UTC))
    assert manifest["changes"]["retired_why"]["answer_changed"] >= 1
    assert "site_tree" not in manifest["changes"]["carried_not_rechecked"], "every row of the crawled site was asked"
    kept = released_rows(tmp_path / "release", "site_tree").filter(pl.col("id").is_in(list(untouched)))
    assert kept.drop("split").sort("id").equals(first.filter(pl.col("id").is_in(list(untouched))).drop("split")
                                                .sort("id")), "what is still true stays as it was released"
    log = (tmp_path / "release" / "CHANGELOG.md").read_text()
    assert "rows retired (site_tree:" in log and "why: answer_changed" in log and "fact_gone" in log
