"""Resolving recipes against official-style sites the code never saw (tests/officialworld.py): the answers equal the
true values, computed from the world's own functions of the date without the resolver, at several evaluation clocks
in one crawl (one of them in a zone whose date differs from UTC's); each kind of breakage fails with its reason and
no answer; and `timelyqa live resolve` does the same as a user runs it. The recipes are written here, for the
world's sites: none of the repository's recipes (the demo's) is used."""

from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
import polars as pl
import pytest

from spiders.render import browser_path
from tests.officialworld import OfficialWorld, high_water, indicator, next_release, readings, real_today, truth
from spiders import run as spiders_run
from timelyqa.official.catalog import load
from timelyqa.official.pages import PageStore
from timelyqa.official.resolve import resolve, write_answers

ROOT = Path(__file__).resolve().parent.parent
LONDON, LOS_ANGELES = "Europe/London", "America/Los_Angeles"
MONDAY = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)
LATE = datetime(2026, 11, 17, 3, 0, tzinfo=UTC)  # Tuesday 17 in London, still Monday 16 (19:00) in Los Angeles
SUNDAY = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # no bulletin on a Sunday; workday is Friday 20

# ---- the recipes, for the world's sites, and what each should answer (computed without the resolver) --------------

RECIPES = {
    "caton-peak-7d": f"""
        question: What was the highest level at the Caton gauge over the past 7 days, excluding today?
        timezone: {LONDON}
        each_day: {{from: today-7, to: today-1}}
        fetch: {{url: "{{gauges}}/gauges/caton/readings?date={{day}}"}}
        extract: {{css: "table.readings td.level", type: number}}
        combine: max
        round: 2
        unit: m
        valid: {{min: 0, max: 15}}""",
    "halton-mean-3d": f"""
        question: What was the mean level at the Halton gauge over the past 3 days, excluding today?
        timezone: {LOS_ANGELES}
        each_day: {{from: today-3, to: today-1}}
        fetch: {{url: "{{gauges}}/gauges/halton/readings?date={{day}}"}}
        extract: {{css: "table.readings td.level", type: number}}
        combine: mean
        round: 3""",
    "kirkby-low-today": f"""
        question: What is the lowest level read at the Kirkby gauge today?
        timezone: {LOS_ANGELES}
        fetch: {{url: "{{gauges}}/gauges/kirkby/readings?date={{today}}"}}
        extract: {{xpath: "//table[@class='readings']//td[@class='level']", type: number}}
        combine: min
        round: 2
        unit: m""",
    "cpi-workday": f"""
        question: What is the consumer price index in the latest bulletin (on a weekend, Friday's)?
        timezone: {LONDON}
        fetch: {{url: "{{stats}}/releases/{{workday}}.html"}}
        extract: {{css: "dd.cpi", type: number}}
        round: 1""",
    "cpi-capped": f"""
        question: What is the consumer price index in the latest bulletin, if below 50?
        timezone: {LONDON}
        fetch: {{url: "{{stats}}/releases/{{workday}}.html"}}
        extract: {{css: "dd.cpi", type: number}}
        round: 1
        valid: {{min: 0, max: 50}}""",
    "unemployment-bulletin": f"""
        question: What unemployment rate does today's bulletin give?
        timezone: {LONDON}
        fetch: {{url: "{{stats}}/bulletin?day={{today:%d/%m/%Y}}"}}
        extract: {{css: "dd.unemployment", type: number}}
        round: 1
        unit: "%"
        valid: {{min: 0, max: 100}}""",
    "next-after-wednesday": f"""
        question: On what date did last Wednesday's bulletin say the next one would come out?
        timezone: {LONDON}
        fetch: {{url: "{{stats}}/releases/{{last-wednesday}}.html"}}
        extract: {{css: "dd.next-release", type: date}}""",
    "morecambe-high-water": f"""
        question: How high is today's high water at Morecambe?
        timezone: {LONDON}
        fetch: {{url: "{{harbour}}/tides/morecambe?date={{today}}", render: auto}}
        extract: {{css: "#app span.height", type: number}}
        round: 2
        unit: m
        valid: {{min: 0, max: 20}}""",
    "cpi-latest": f"""
        question: What is the consumer price index in the latest figures?
        timezone: {LONDON}
        fetch: {{url: "{{stats}}/latest"}}
        extract: {{css: "dd.cpi", type: number}}
        round: 1""",
}


def recipe_text(recipe_id: str, body: str) -> str:
    lines = [line[8:] if line.startswith(" " * 8) else line for line in body.strip("\n").splitlines()]
    return f"recipe: 1\nid: {recipe_id}\nlevel: L1\n" + "\n".join(lines) + "\n"


def write_recipes(folder: Path, ids: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for recipe_id in ids or list(RECIPES):
        (folder / f"{recipe_id}.yaml").write_text(recipe_text(recipe_id, RECIPES[recipe_id]), encoding="utf-8")
    return folder


@dataclass(frozen=True)
class Expected:
    status: str
    answer: str | None = None
    value: float | None = None
    reason: str | None = None
    paths: tuple[str, ...] = ()  # the pages read, as the site's log writes them
    dates: tuple[tuple[str, date], ...] = ()


def local(at: datetime, zone: str) -> date:
    return at.astimezone(ZoneInfo(zone)).date()


def workday(day: date) -> date:
    return day - timedelta(days=max(0, day.weekday() - 4))


def last_wednesday(day: date) -> date:
    return day - timedelta(days=(day.weekday() - 2) % 7 or 7)


def days_back(today: date, first: int, last: int) -> list[date]:
    return [today - timedelta(days=n) for n in range(first, last - 1, -1)]


def expect_caton(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    days = days_back(today, 7, 1)
    peak = max(max(truth("gauges", "caton", d)) for d in days)
    return Expected("ok", f"{peak:.2f} m", peak, paths=tuple(f"/gauges/caton/readings?date={d}" for d in days),
                    dates=(("today", today), *(("day", d) for d in days)))


def expect_halton(at: datetime, now: datetime) -> Expected:
    today = local(at, LOS_ANGELES)
    days = days_back(today, 3, 1)
    values = [v for d in days for v in readings("halton", d)]
    mean = round(math.fsum(values) / len(values), 3)
    return Expected("ok", f"{mean:.3f}", mean, paths=tuple(f"/gauges/halton/readings?date={d}" for d in days),
                    dates=(("today", today), *(("day", d) for d in days)))


def expect_kirkby(at: datetime, now: datetime) -> Expected:
    today = local(at, LOS_ANGELES)
    low = min(readings("kirkby", today))
    return Expected("ok", f"{low:.2f} m", low, paths=(f"/gauges/kirkby/readings?date={today}",),
                    dates=(("today", today),))


def expect_cpi(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    day = workday(today)
    cpi = indicator("cpi", day)
    return Expected("ok", f"{cpi:.1f}", cpi, paths=(f"/releases/{day}.html",),
                    dates=(("today", today), ("workday", day)))


def expect_capped(at: datetime, now: datetime) -> Expected:
    got = expect_cpi(at, now)
    return Expected("failed", reason="value_invalid", paths=got.paths, dates=got.dates)


def expect_bulletin(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    path = f"/bulletin?day={today:%d/%m/%Y}"
    if truth("stats", "unemployment", today) is None:  # no bulletin that day: the site answers 404
        return Expected("failed", reason="page_missing", paths=(path,), dates=(("today", today),))
    rate = indicator("unemployment", today)
    return Expected("ok", f"{rate:.1f} %", rate, paths=(path,), dates=(("today", today),))


def expect_next(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    wednesday = last_wednesday(today)
    return Expected("ok", next_release(wednesday).isoformat(), None, paths=(f"/releases/{wednesday}.html",),
                    dates=(("today", today), ("last-wednesday", wednesday)))


def expect_tides(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    height = high_water("morecambe", today)
    return Expected("ok", f"{height:.2f} m", height, paths=(f"/tides/morecambe?date={today}",),
                    dates=(("today", today),))


def expect_latest(at: datetime, now: datetime) -> Expected:
    today = local(at, LONDON)
    if abs(at - now) > timedelta(hours=1):
        return Expected("failed", reason="not_live_clock", dates=(("today", today),))
    cpi = indicator("cpi", real_today())
    return Expected("ok", f"{cpi:.1f}", cpi, paths=("/latest",), dates=(("today", today),))


EXPECTED: dict[str, Callable[[datetime, datetime], Expected]] = {
    "caton-peak-7d": expect_caton, "halton-mean-3d": expect_halton, "kirkby-low-today": expect_kirkby,
    "cpi-workday": expect_cpi, "cpi-capped": expect_capped, "unemployment-bulletin": expect_bulletin,
    "next-after-wednesday": expect_next, "morecambe-high-water": expect_tides, "cpi-latest": expect_latest,
}
SITE_OF = {"caton-peak-7d": "gauges", "halton-mean-3d": "gauges", "kirkby-low-today": "gauges",
           "morecambe-high-water": "harbour"}


def logged(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# ---- one crawl: every recipe at four clocks ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Nine recipes at four clocks (Monday, a late hour when Los Angeles is still on Monday, a Sunday, and now),
    resolved in one call, one crawl, and written to answers.parquet as `timelyqa live resolve` writes it."""
    if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
        raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")
    tmp = tmp_path_factory.mktemp("resolve")
    catalog = load(write_recipes(tmp / "recipes"))
    assert not catalog.refused, catalog.refused
    with OfficialWorld() as world:
        now = datetime.now(UTC)
        clocks = [MONDAY, LATE, SUNDAY, now]
        started = time.monotonic()
        answers = resolve(catalog.recipes, clocks, tmp / "work", store=PageStore(tmp / "pages"),
                          variables=world.vars, crawl=spiders_run.crawl)
        took = time.monotonic() - started
        path = write_answers(answers, tmp / "out")
        asked = world.asked()
        served = {url: httpx.get(url, timeout=5).content for url in
                  {e["url"] for a in answers for e in a.evidence if not e["rendered"]}}
    frame = pl.read_parquet(path)
    return {"frame": frame, "rows": {(r["id"], r["at"]): r for r in frame.iter_rows(named=True)}, "now": now,
            "clocks": clocks, "asked": asked, "world": world, "served": served, "tmp": tmp, "took": took,
            "crawls": len(list((tmp / "work").glob("fetches.parquet")))}


@pytest.mark.slow
def test_every_answer_equals_the_true_value_at_every_clock(resolved: dict[str, Any]) -> None:
    rows, now, world = resolved["rows"], resolved["now"], resolved["world"]
    assert resolved["crawls"] == 1, "one crawl for every recipe at every clock"
    assert len(rows) == len(RECIPES) * 4
    for recipe_id, expect in EXPECTED.items():
        for at in resolved["clocks"]:
            row, want = rows[(recipe_id, at)], expect(at, now)
            where = f"{recipe_id} at {at.isoformat()}"
            assert (row["status"], row["reason"]) == (want.status, want.reason), f"{where}: {row['detail']}"
            assert row["answer"] == want.answer, where
            assert row["value"] == want.value, where
            assert [(d["name"], d["date"]) for d in row["dates"]] == list(want.dates), where
            base = world.named[SITE_OF.get(recipe_id, "stats")].url
            read = [e["url"] for e in row["evidence"]]
            if want.status == "ok":
                assert read == [base + p for p in want.paths], f"{where}: the pages read, in order"


@pytest.mark.slow
def test_a_zone_where_the_date_differs_from_utc_reads_its_own_day(resolved: dict[str, Any]) -> None:
    rows = resolved["rows"]
    assert LATE.date() == date(2026, 11, 17) and local(LATE, LOS_ANGELES) == date(2026, 11, 16)
    kirkby = rows[("kirkby-low-today", LATE)]
    assert kirkby["dates"] == [{"name": "today", "date": date(2026, 11, 16)}]
    assert kirkby["evidence"][0]["url"].endswith("/gauges/kirkby/readings?date=2026-11-16")
    assert kirkby["answer"] == f"{min(truth('gauges', 'kirkby', date(2026, 11, 16))):.2f} m"
    assert kirkby["answer"] == rows[("kirkby-low-today", MONDAY)]["answer"], "Los Angeles is on Monday both times"
    halton = [d["date"] for d in rows[("halton-mean-3d", LATE)]["dates"] if d["name"] == "day"]
    assert halton == [date(2026, 11, 13), date(2026, 11, 14), date(2026, 11, 15)]
    london = rows[("unemployment-bulletin", LATE)]
    assert london["dates"] == [{"name": "today", "date": date(2026, 11, 17)}], "London is already on Tuesday"
    assert london["evidence"][0]["url"].endswith("/bulletin?day=17/11/2026"), "the {today:%d/%m/%Y} format"
    assert london["answer"] == f"{indicator('unemployment', date(2026, 11, 17)):.1f} %"


@pytest.mark.slow
def test_working_days_weekdays_and_missing_days(resolved: dict[str, Any]) -> None:
    rows = resolved["rows"]
    friday = rows[("cpi-workday", SUNDAY)]
    assert {d["name"]: d["date"] for d in friday["dates"]} == {"today": date(2026, 11, 22),
                                                               "workday": date(2026, 11, 20)}
    assert friday["answer"] == f"{indicator('cpi', date(2026, 11, 20)):.1f}", "a Sunday reads Friday's bulletin"
    wednesday = rows[("next-after-wednesday", MONDAY)]
    assert {d["name"]: d["date"] for d in wednesday["dates"]}["last-wednesday"] == date(2026, 11, 11)
    assert wednesday["answer"] == "2026-11-12" and wednesday["value"] is None, "a date: ISO, no number"
    missing = rows[("unemployment-bulletin", SUNDAY)]
    url = f"{resolved['world'].stats.url}/bulletin?day=22/11/2026"
    assert (missing["status"], missing["reason"], missing["detail"]) == ("failed", "page_missing", f"{url}: http_404")
    assert missing["answer"] is None and missing["value"] is None and missing["evidence"] == []
    capped = rows[("cpi-capped", MONDAY)]
    assert (capped["reason"], capped["detail"]) == ("value_invalid", f"{indicator('cpi', MONDAY.date()):.1f} above "
                                                                     "max 50")
    assert capped["answer"] is None and capped["value"] is None
    assert capped["evidence"] == rows[("cpi-workday", MONDAY)]["evidence"], "the same page, read once, both recipes"


@pytest.mark.slow
def test_the_present_only_page_is_read_at_now_and_refused_at_clocks_days_away(resolved: dict[str, Any]) -> None:
    rows, now = resolved["rows"], resolved["now"]
    live = rows[("cpi-latest", now)]
    assert (live["status"], live["answer"]) == ("ok", f"{indicator('cpi', real_today()):.1f}")
    for at in (MONDAY, LATE, SUNDAY):
        far = rows[("cpi-latest", at)]
        assert (far["status"], far["reason"], far["answer"], far["evidence"]) == ("failed", "not_live_clock", None, [])
        assert far["detail"].startswith(f"{{stats}}/latest shows only the present; the clock {at.isoformat()} is ")
        assert far["detail"].endswith(" is more than 1.0 hours from the moment the page is fetched")
    assert Counter(resolved["asked"]["stats"])["/latest"] == 1, "asked once, for the clock that is now"


@pytest.mark.slow
def test_the_script_built_page_is_read_through_chromium(resolved: dict[str, Any]) -> None:
    rows, store = resolved["rows"], PageStore(resolved["tmp"] / "pages")
    for at in resolved["clocks"]:
        row = rows[("morecambe-high-water", at)]
        assert row["answer"] == f"{high_water('morecambe', local(at, LONDON)):.2f} m"
        [page] = row["evidence"]
        assert page["rendered"] is True
        html = store.get(page["sha256"])
        assert html is not None and "span class=\"height\"" in html, "the DOM as Chromium built it is kept"
        assert hashlib.sha256(html.encode()).hexdigest() == page["sha256"]


@pytest.mark.slow
def test_answers_parquet_reads_as_documented(resolved: dict[str, Any]) -> None:
    frame, served = resolved["frame"], resolved["served"]
    for column in ("id", "status", "reason", "answer", "value", "at", "dates", "evidence"):
        assert column in frame.columns
    assert frame.schema["at"] == pl.Datetime("us", "UTC") and frame.schema["value"] == pl.Float64
    assert frame.schema["evidence"] == pl.List(pl.Struct({"url": pl.String, "fetched_at": pl.Datetime("us", "UTC"),
                                                          "sha256": pl.String, "rendered": pl.Boolean}))
    assert set(frame["status"]) == {"ok", "failed"}
    ok, failed = frame.filter(pl.col("status") == "ok"), frame.filter(pl.col("status") == "failed")
    assert ok["reason"].null_count() == ok.height and ok["answer"].null_count() == 0
    assert failed["answer"].null_count() == failed["value"].null_count() == failed.height, \
        "a failure never carries an answer"
    assert failed["reason"].null_count() == 0
    caton = frame.filter(pl.col("id") == "caton-peak-7d", pl.col("at") == MONDAY).row(0, named=True)
    assert [e["url"].rsplit("=", 1)[1] for e in caton["evidence"]] == [str(d) for d in
                                                                      days_back(date(2026, 11, 16), 7, 1)]
    window = (datetime.now(UTC) - timedelta(minutes=30), datetime.now(UTC))
    for evidence in frame["evidence"].explode().drop_nulls():
        assert window[0] <= evidence["fetched_at"] <= window[1]
        if not evidence["rendered"]:
            assert evidence["sha256"] == hashlib.sha256(served[evidence["url"]]).hexdigest(), \
                "the sha256 of the page as the site serves it"


@pytest.mark.slow
def test_each_page_is_asked_once_and_nothing_else(resolved: dict[str, Any]) -> None:
    asked = resolved["asked"]
    assert asked["mirror"] == []
    wanted: set[str] = set()
    for recipe_id, expect in EXPECTED.items():
        for at in resolved["clocks"]:
            wanted.update(expect(at, resolved["now"]).paths)
    for name in ("gauges", "stats"):
        count = Counter(asked[name])
        assert count.pop("/robots.txt") == 1
        assert all(n == 1 for n in count.values()), f"{name}: a page asked twice: {count}"
        assert set(count) <= wanted, f"{name} was asked for pages no recipe reads: {set(count) - wanted}"
    harbour = Counter(asked["harbour"])
    for at in resolved["clocks"]:
        day = local(at, LONDON)
        assert harbour[f"/tides/morecambe?date={day}"] == 1, "auto: read once, rendered from the response fetched"
        assert harbour[f"/api/tides/morecambe/{day}.json"] == 1, "the page's own script"


# ---- breakage: each fails with its reason, never a guessed answer ----------------------------------------------------

@pytest.mark.slow
def test_each_breakage_fails_with_its_reason_and_no_answer(tmp_path: Path) -> None:
    ids = ["caton-peak-7d", "kirkby-low-today", "cpi-workday", "unemployment-bulletin", "morecambe-high-water"]
    recipes = write_recipes(tmp_path / "recipes", ids)
    office = recipe_text("unemployment-office", RECIPES["unemployment-bulletin"]).replace("{stats}", "{office}")
    (recipes / "unemployment-office.yaml").write_text(office)
    catalog = load(recipes)
    with OfficialWorld() as world:
        world.gauges.layout = "b"  # a redesign: the readings moved to other elements
        world.stats.garbage = True  # the CPI cell says "n/a" (the unemployment rate is still there)
        world.harbour.down = "refused"  # nothing listens
        world.mirror.down = True  # 503 for every page but robots.txt
        started = time.monotonic()
        answers = resolve(catalog.recipes, [MONDAY], tmp_path / "work", store=PageStore(tmp_path / "pages"),
                          variables={**world.vars, "office": world.mirror.url}, crawl=spiders_run.crawl)
        took = time.monotonic() - started
        asked = world.asked()
    assert took < 60, f"an outage is reported in seconds ({took:.1f} s)"
    got = {a.recipe.id: a for a in answers}
    assert {i: (a.reason, a.value) for i, a in got.items()} == {
        "caton-peak-7d": ("extracted_nothing", None), "kirkby-low-today": ("extracted_nothing", None),
        "cpi-workday": ("value_invalid", None), "unemployment-bulletin": (None, got["unemployment-bulletin"].value),
        "unemployment-office": ("site_down", None), "morecambe-high-water": ("site_down", None)}
    assert got["unemployment-bulletin"].value.text == f"{indicator('unemployment', MONDAY.date()):.1f} %", \
        "a breakage fails only the recipes it touches"
    assert got["caton-peak-7d"].detail == "css 'table.readings td.level' matched nothing on page 1"
    assert len(got["caton-peak-7d"].evidence) == 7, "the redesigned pages are kept, for a repair to read"
    assert got["cpi-workday"].detail.startswith("'n/a' on page 1 is not a number")
    tides = f"{world.harbour.url}/tides/morecambe?date=2026-11-16"
    assert got["morecambe-high-water"].detail == f"{tides}: connection_refused"
    assert got["unemployment-office"].detail == f"{world.mirror.url}/bulletin?day=16/11/2026: http_503"
    assert asked["harbour"] == []
    for recipe_id, answer in got.items():
        row = answer.row()
        if recipe_id != "unemployment-bulletin":
            assert (row["status"], row["answer"], row["value"]) == ("failed", None, None), recipe_id
            assert "\n" not in row["detail"]


@pytest.mark.slow
def test_a_whole_world_down_fails_site_down_for_every_recipe(tmp_path: Path) -> None:
    ids = ["kirkby-low-today", "cpi-workday"]
    catalog = load(write_recipes(tmp_path / "recipes", ids))
    with OfficialWorld() as world:
        world.down = True
        answers = resolve(catalog.recipes, [MONDAY], tmp_path / "work", store=PageStore(tmp_path / "pages"),
                          variables=world.vars, crawl=spiders_run.crawl)
    assert {a.recipe.id: (a.reason, a.detail.rsplit(": ", 1)[1], a.value) for a in answers} == {
        "kirkby-low-today": ("site_down", "http_503", None), "cpi-workday": ("site_down", "http_503", None)}


def test_a_page_that_shows_only_the_present_is_never_asked_at_a_clock_days_away(tmp_path: Path) -> None:
    catalog = load(write_recipes(tmp_path / "recipes", ["cpi-latest"]))
    with OfficialWorld() as world:
        [answer] = resolve(catalog.recipes, [MONDAY], tmp_path / "work", store=PageStore(tmp_path / "pages"),
                           variables=world.vars, crawl=spiders_run.crawl)
        asked = world.asked()
    assert (answer.reason, answer.value, answer.evidence) == ("not_live_clock", None, [])
    assert asked == {"gauges": [], "stats": [], "harbour": [], "mirror": []}, "no crawl at all"
    assert not (tmp_path / "work").exists()


# ---- `timelyqa live resolve`, as a user runs it ---------------------------------------------------------------------

def timelyqa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command from this worktree's code (the installed entry point is main's): python -m timelyqa.cli."""
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "timelyqa.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.slow
def test_live_resolve_end_to_end_with_at_var_and_out(tmp_path: Path) -> None:
    recipes = write_recipes(tmp_path / "recipes", ["kirkby-low-today", "cpi-workday"])
    bad = recipes / "broken.yaml"
    bad.write_text(recipe_text("broken", RECIPES["cpi-workday"]).replace("type: number", "type: float"))
    with OfficialWorld() as world:
        # cpi-workday names its own {stats}; --var points it at the mirror, and only the mirror is asked
        text = recipe_text("cpi-workday", RECIPES["cpi-workday"]) + f"vars: {{stats: \"{world.stats.url}\"}}\n"
        (recipes / "cpi-workday.yaml").write_text(text)
        proc = timelyqa("live", "resolve", "--recipes", recipes, "--at", "2026-11-17T03:00:00+00:00",
                        "--var", f"gauges={world.gauges.url}", "--var", f"stats={world.mirror.url}",
                        "--out", tmp_path / "out")
        asked = world.asked()
        release = pl.DataFrame({"recipe_id": ["kirkby-low-today", "cpi-workday", "kirkby-low-today"],
                                "question": ["q1", "q2", "q1 again"],
                                "recipe": [recipe_text("kirkby-low-today", RECIPES["kirkby-low-today"]),
                                           recipe_text("cpi-workday", RECIPES["cpi-workday"]),
                                           recipe_text("kirkby-low-today", RECIPES["kirkby-low-today"])]})
        release.write_parquet(tmp_path / "test-00000-of-00001.parquet")
        # A release's recipes are data: their loopback hosts are reached only because the operator names them,
        # here with --var (--allow-host would do too); without, each is refused as private_address.
        again = timelyqa("live", "resolve", "--recipes", tmp_path / "test-00000-of-00001.parquet",
                         "--at", "2026-11-17T03:00:00Z", *(f"--var={k}={v}" for k, v in world.vars.items()),
                         "--out", tmp_path / "again")
    assert proc.returncode == 1, proc.stderr  # broken.yaml was refused: not every recipe answered
    assert f"refused: {bad}: extract.type: must be one of" in " ".join(proc.stderr.split())
    assert "2 of 2 recipes answered" in proc.stdout and "1 recipe(s) refused" in proc.stdout
    frame = pl.read_parquet(tmp_path / "out" / "answers.parquet")
    kirkby = f"{min(readings('kirkby', date(2026, 11, 16))):.2f} m"  # Los Angeles: still the 16th
    cpi = f"{indicator('cpi', date(2026, 11, 17)):.1f}"  # London: the 17th
    assert frame.select("id", "status", "answer").rows() == [("cpi-workday", "ok", cpi),
                                                             ("kirkby-low-today", "ok", kirkby)]
    assert frame["at"].to_list() == [LATE, LATE]
    assert asked["mirror"] == ["/robots.txt", "/releases/2026-11-17.html"], "--var moved the recipe, wholly"
    assert asked["stats"] == [], "the host the recipe named is never asked"
    assert (tmp_path / "out" / "pages").is_dir() and list((tmp_path / "out" / "pages").rglob("*.html.gz"))

    assert again.returncode == 0, again.stderr
    answered = pl.read_parquet(tmp_path / "again" / "answers.parquet")
    assert answered.select("id", "status", "answer").rows() == [("cpi-workday", "ok", cpi),
                                                                ("kirkby-low-today", "ok", kirkby)]


@pytest.mark.slow
@pytest.mark.parametrize(("at", "said"), [
    ("2026-11-16T09:00:00", "--at '2026-11-16T09:00:00'"),
    ("yesterday", "--at 'yesterday'"),
])
def test_live_resolve_refuses_a_bad_clock_in_one_line(tmp_path: Path, at: str, said: str) -> None:
    recipes = write_recipes(tmp_path / "recipes", ["cpi-workday"])
    proc = timelyqa("live", "resolve", "--recipes", recipes, "--at", at, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert one_line(proc).startswith(f"error: {said}: ")
    assert not (tmp_path / "out").exists(), "nothing was done"


@pytest.mark.slow
def test_live_resolve_with_no_valid_recipe_stops_naming_each_refused_file(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "a.yaml").write_text("recipe: 1\nid: a\n")
    proc = timelyqa("live", "resolve", "--recipes", tmp_path / "recipes", "--out", tmp_path / "out")
    assert proc.returncode == 2 and not (tmp_path / "out" / "answers.parquet").exists()
    assert "refused: " in proc.stderr and "a.yaml" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: --recipes ") and "no valid recipe" in proc.stderr


@pytest.mark.parametrize("pair", ["site", "=http://127.0.0.1:1", " =x"])
def test_a_var_that_is_not_name_equals_value_is_a_wrong_setting_naming_it(pair: str) -> None:
    from timelyqa.errors import ConfigError
    from timelyqa.cli.common import variables

    with pytest.raises(ConfigError, match=f"--var {pair!r}: not NAME=VALUE"):
        variables([pair])
    assert variables(["site=http://127.0.0.1:8000/a=b"]) == {"site": "http://127.0.0.1:8000/a=b"}
