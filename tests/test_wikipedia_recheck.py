"""Released Wikipedia rows asked again at the week's end, on the week's own dump or API: each verdict, and two
releases in a row where a released value changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.mwapi import MediaWikiDouble, revisions_of, throttled
from tests.wikiworld import Rev, WikiPage, write_export
from timelyqa.errors import TransientSourceError
from timelyqa.released import released_rows
from timelyqa.wikipedia import refresh
from timelyqa.wikipedia.answer import Rule
from timelyqa.mediawiki.client import ApiSettings

START = datetime(2026, 3, 1, tzinfo=UTC)
WEEK1, WEEK2 = (START, START + timedelta(days=7)), (START + timedelta(days=7), START + timedelta(days=14))
TEMPLATE = "Infobox football biography"


def text(values: dict[str, str] | None) -> str:
    if values is None:  # the infobox taken out of the page
        return "'''A footballer''' plays football.\n"
    lines = [f"| {k} = {v}" for k, v in values.items()]
    return "{{" + TEMPLATE + "\n" + "\n".join(lines) + "\n}}\n'''" + values["name"] + "''' plays football.\n"


def page(pid: int, title: str, steps: list[tuple[float, dict[str, str | None] | None]], *,
         renamed: str | None = None) -> WikiPage:
    """A footballer's page made three days before the window, then edited on the given days after START (a step's
    None removes the infobox, a key set to None leaves the infobox)."""
    values: dict[str, str] | None = {"name": title, "currentclub": "Ajax", "caps1": "120"}
    revs = [Rev(pid * 100, None, START - timedelta(days=3), text(values), dict(values), "create")]
    for n, (day, change) in enumerate(steps, start=1):
        if change is None:
            values = None
        else:
            values = {k: v for k, v in {**(values or {"name": title}), **change}.items() if v is not None}
        revs.append(Rev(pid * 100 + n, revs[-1].id, START + timedelta(days=day), text(values),
                        dict(values) if values else None, "edit"))
    return WikiPage(id=pid, title=renamed or title, ns=0, revisions=revs, template=TEMPLATE)


def pages() -> list[WikiPage]:
    """Two weeks of edits: each page's club changes in week 1, then in week 2 ..."""
    return [
        page(1, "Ivo Landa", [(2, {"currentclub": "Celtic"}), (10, {"currentclub": "Feyenoord"})]),  # changes again
        page(2, "Dario Mesk", [(3, {"currentclub": "Olympiacos"}), (9, {"caps1": "121"})]),  # holds
        page(3, "Tin Brava", [(4, {"currentclub": "Rapid Wien"}), (9, {"currentclub": None})]),  # key gone
        page(4, "Vela Korin", [(5, {"currentclub": "Real Betis"})]),  # left out of the week-2 export
        page(5, "Kofi Mensah", [(5.5, {"currentclub": "Young Boys"}), (11, None)]),  # the infobox taken out
        page(6, "Omar Haddad", [(6, {"currentclub": "Hajduk Split"})], renamed="Omar Haddad (footballer)"),  # moved
    ]


def upto(when: datetime, of: list[WikiPage]) -> list[WikiPage]:
    """The pages as a dump taken at `when` holds them."""
    return [WikiPage(p.id, p.title, p.ns, [r for r in p.revisions if r.timestamp <= when], p.template) for p in of]


def row(pid: int, title: str, answer: str, key: str = "currentclub", **rule: object) -> dict[str, str]:
    recompute = Rule(page=title, key=key, page_id=pid).to_json()
    if rule:
        recompute = json.dumps({**json.loads(recompute), **rule})
    return {"id": f"wikipedia-{pid}-{key}", "question": f"Which club does {title} play for?", "answer": answer,
            "recompute": recompute}


def released() -> pl.DataFrame:
    """Week 1's answers, as released: each page's club at the end of week 1."""
    return pl.DataFrame([row(1, "Ivo Landa", "Celtic"), row(2, "Dario Mesk", "Olympiacos"),
                         row(3, "Tin Brava", "Rapid Wien"), row(4, "Vela Korin", "Real Betis"),
                         row(5, "Kofi Mensah", "Young Boys"), row(6, "Omar Haddad", "hajduk  split"),
                         row(2, "Dario Mesk", "120", key="caps1"),
                         row(7, "Lost Parser", "x", parser="infobox_v0")])


@pytest.fixture
def week2(tmp_path: Path) -> Path:
    return write_export([p for p in pages() if p.id != 4], tmp_path / "week2.xml")


def test_each_released_row_gets_its_verdict_from_the_dump(week2: Path) -> None:
    holds, dropped, unchecked, _ = refresh.refresh_rows(released(), week2, WEEK2[1])
    why = {d.item["id"]: (str(d.reason), d.detail) for d in dropped}
    # The page moved since (same id, new title) and a value written another way still hold.
    assert holds == ["wikipedia-2-currentclub", "wikipedia-6-currentclub"]
    assert set(why) == {"wikipedia-1-currentclub", "wikipedia-2-caps1", "wikipedia-3-currentclub",
                        "wikipedia-5-currentclub"}
    reason, detail = why["wikipedia-1-currentclub"]
    assert reason == "answer_changed"
    assert "revision 102 (2026-03-11T00:00:00+00:00)" in detail and "'Feyenoord', not 'Celtic'" in detail
    assert why["wikipedia-2-caps1"][0] == "answer_changed"
    assert why["wikipedia-3-currentclub"][0] == "key_gone" and "revision 302" in why["wikipedia-3-currentclub"][1]
    assert why["wikipedia-5-currentclub"][0] == "key_gone"
    # Vela Korin's page is not in this export, and a rule of another parser cannot be applied: no verdict, no reject.
    assert unchecked == 2


def test_the_answer_is_the_one_at_the_weeks_end_not_after(week2: Path) -> None:
    holds, dropped, _, _ = refresh.refresh_rows(released(), week2, START + timedelta(days=9, hours=12))
    assert "wikipedia-1-currentclub" in holds  # Ivo Landa moves to Feyenoord on day 10, after this moment
    assert {d.item["id"] for d in dropped} == {"wikipedia-2-caps1", "wikipedia-3-currentclub"}


def test_the_stage_counts_and_writes_what_holds(week2: Path, tmp_path: Path) -> None:
    work = tmp_path / "out" / "work"
    made = refresh.refresh_released(released(), week2, work, WEEK2[1])
    assert pl.read_parquet(made)["id"].to_list() == ["wikipedia-2-currentclub", "wikipedia-6-currentclub"]
    saved = json.loads((work / "ledger" / "refresh.json").read_text())
    assert saved["counts"] == {"rechecked": 6, "still_true": 2, "not_rechecked": 2}
    rejects = pl.read_parquet(work / "ledger" / "refresh.rejected.parquet")
    assert set(rejects["stage"]) == {"refresh"} and rejects.height == 4


def test_the_api_gives_the_same_verdicts_and_says_when_a_page_is_gone(tmp_path: Path) -> None:
    """The MediaWiki API double (tests/mwapi.py) stands in for en.wikipedia.org, which a test cannot reach."""
    wiki_pages = [p for p in pages() if p.id != 4]  # on the live wiki, Vela Korin's page was deleted
    with MediaWikiDouble(wiki_pages) as wiki:
        settings = ApiSettings(endpoint=wiki.endpoint, user_agent="timelyqa-tests (tests@example.org)", backoff=0)
        holds, dropped, unchecked, usage = refresh.refresh_rows(released(), settings, WEEK2[1])
        requests = [r for r in wiki.requests if r.params.get("prop") == "revisions"]
    why = {d.item["id"]: str(d.reason) for d in dropped}
    assert holds == ["wikipedia-2-currentclub", "wikipedia-6-currentclub"]
    assert why == {"wikipedia-1-currentclub": "answer_changed", "wikipedia-2-caps1": "answer_changed",
                   "wikipedia-3-currentclub": "key_gone", "wikipedia-4-currentclub": "page_gone",
                   "wikipedia-5-currentclub": "key_gone"}
    assert unchecked == 1  # the other parser's rule only
    assert len(requests) == 6 == len({r.params["pageids"] for r in requests})  # one request a page, by id
    assert all("@example.org" in r.headers["User-Agent"] and r.params["maxlag"] for r in requests)
    assert wiki.max_in_flight <= 3 and usage


def test_a_wiki_that_stays_busy_fails_the_run_and_retires_nothing(tmp_path: Path) -> None:
    work = tmp_path / "out" / "work"
    with MediaWikiDouble(pages()) as wiki:
        wiki.fail(throttled(revisions_of(1), retry_after=0, times=None))
        settings = ApiSettings(endpoint=wiki.endpoint, user_agent="timelyqa-tests (tests@example.org)", retries=1,
                               backoff=0)
        with pytest.raises(TransientSourceError):
            refresh.refresh_released(released(), settings, work, WEEK2[1])
    assert not (work / "rechecked.parquet").exists() and not (work / "ledger" / "refresh.rejected.parquet").exists()


# --- two releases in a row, as a user runs them ------------------------------------------------------------

def timelyqa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("timelyqa")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200"}
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=600, env=env)


def window(week: tuple[datetime, datetime]) -> list[str]:
    return ["--start", week[0].isoformat(), "--end", week[1].isoformat()]


@pytest.mark.slow  # four runs of the installed command
def test_two_releases_in_a_row_retire_the_change_and_ask_about_it_anew(tmp_path: Path) -> None:
    world = pages()
    week1 = write_export(upto(WEEK1[1], world), tmp_path / "week1.xml")  # a dump taken at week 1's end
    week2 = write_export([p for p in world if p.id != 4], tmp_path / "week2.xml")
    proc = timelyqa("wikipedia", "--dump", week1, *window(WEEK1), "--out", tmp_path / "w1")
    assert proc.returncode == 0, proc.stderr
    assert timelyqa("release", "--from", tmp_path / "w1", "--out", tmp_path / "release-1").returncode == 0
    first = released_rows(tmp_path / "release-1", "wikipedia")
    assert dict(first.select("page_title", "answer").iter_rows())["Ivo Landa"] == "Celtic"

    (tmp_path / "empty").mkdir()
    bad = timelyqa("wikipedia", "--dump", week2, *window(WEEK2), "--out", tmp_path / "w2", "--previous",
                   tmp_path / "empty")
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "not a release folder" in lines[0], bad.stderr
    assert not (tmp_path / "w2").exists()

    proc = timelyqa("wikipedia", "--dump", week2, *window(WEEK2), "--out", tmp_path / "w2", "--previous",
                    tmp_path / "release-1")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "w2" / "manifest.json").read_text())
    refresh = pl.read_parquet(tmp_path / "w2" / "rejected.parquet").filter(pl.col("stage") == "refresh")
    why = {json.loads(item)["id"]: reason for item, reason in refresh.select("item", "reason").iter_rows()}
    by_title = dict(first.select("page_title", "id").iter_rows())
    assert why == {by_title["Ivo Landa"]: "answer_changed", by_title["Tin Brava"]: "key_gone",
                   by_title["Kofi Mensah"]: "key_gone"}
    holds = pl.read_parquet(tmp_path / "w2" / "rechecked.parquet")["id"].to_list()
    assert sorted(holds) == sorted([by_title["Dario Mesk"], by_title["Omar Haddad (footballer)"]])
    assert (manifest["counts"]["rechecked"], manifest["counts"]["still_true"], manifest["counts"]["not_rechecked"]
            ) == (5, 2, 1)

    proc = timelyqa("release", "--from", tmp_path / "w2", "--out", tmp_path / "release-2", "--previous",
                    tmp_path / "release-1")
    assert proc.returncode == 0, proc.stderr
    second = released_rows(tmp_path / "release-2", "wikipedia")
    assert by_title["Ivo Landa"] not in second["id"].to_list()
    new = second.filter(pl.col("page_title") == "Ivo Landa").row(0, named=True)
    assert (new["answer"], new["event_date"]) == ("Feyenoord", date(2026, 3, 11))
    carried = first.filter(pl.col("id").is_in(list(set(first["id"]) - set(why))))
    assert carried.height == 3  # Dario Mesk and Omar Haddad hold; Vela Korin was not in the week-2 export
    assert_frame_equal(second.join(carried.select("id"), on="id", how="semi").drop("split").sort("id"),
                       carried.drop("split").sort("id"))
    changes = json.loads((tmp_path / "release-2" / "manifest.json").read_text())["changes"]
    assert changes["retired_why"] == {"answer_changed": 1, "key_gone": 2}
    assert changes["carried_not_rechecked"] == {"wikipedia": 1}
    log = (tmp_path / "release-2" / "CHANGELOG.md").read_text()
    assert f"`{by_title['Ivo Landa']}` (wikipedia): answer_changed" in log
    assert "carried, not re-checked this week (wikipedia: 1)" in log
