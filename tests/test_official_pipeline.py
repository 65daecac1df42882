"""The official source's daily life on the held-out world (tests/officialworld.py): health over days of checks,
the rows a release gets from the history (snapshots for train and validation, live questions with their recipes for
test), and two releases around a recipe that broke, loaded with `datasets`.

Most tests read the world through `WorldFetcher`, which stands in for the crawl so that six checks over five days run
in a fraction of a second: it asks the world's own request handler for each page (the bytes its server would send),
keeps them in the real page store and maps a 5xx or 4xx to the crawl's failure. One slow test runs the real crawl.
Every expected answer comes from the world's `truth` functions, never from the resolver.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl
import pytest

from tests.officialworld import OfficialWorld, gauge_page, indicator, readings, release_page
from spiders import run as spiders_run
from timelyqa.official import health, pipeline
from timelyqa.official.catalog import Catalog, load
from timelyqa.official.pages import Fetched, PageStore
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe, parse_recipe, recipe_of

RECIPES = {
    "caton-peak.yaml": """\
recipe: 1
id: caton-peak
question: What was the highest river level at the Caton gauge yesterday?
level: L1
timezone: Europe/London
added: 2026-08-03
fetch:
  url: "{gauges}/gauges/caton/readings?date={yesterday}"
extract:
  css: "table.readings td.level"
  type: number
combine: max
round: 2
unit: m
valid: {min: 0, max: 15}
""",
    "caton-peak-upstream.yaml": """\
recipe: 1
id: caton-peak-upstream
question: What was the highest river level yesterday at the gauge of the Lune village just upstream of Halton?
level: L2
base: caton-peak
hops: ["the Lune village just upstream of Halton is Caton"]
timezone: Europe/London
fetch:
  url: "{gauges}/gauges/caton/readings?date={yesterday}"
extract:
  css: "table.readings td.level"
  type: number
combine: max
round: 2
unit: m
valid: {min: 0, max: 15}
""",
    "halton-mean-3d.yaml": """\
recipe: 1
id: halton-mean-3d
question: What was the mean river level at the Halton gauge over the past 3 days, excluding today?
level: L1
timezone: America/Los_Angeles
added: 2026-09-21
each_day: {from: today-3, to: today-1}
fetch:
  url: "{gauges}/gauges/halton/readings?date={day}"
extract:
  css: "table.readings td.level"
  type: number
combine: mean
round: 2
unit: m
""",
    "cpi-workday.yaml": """\
recipe: 1
id: cpi-workday
question: What is the consumer price index in the statistics office's bulletin of the last working day?
level: L1
timezone: Europe/London
added: 2026-10-19
fetch:
  url: "{stats}/releases/{workday}.html"
extract:
  css: "dd.cpi"
  type: number
round: 1
""",
    "kirkby-low.yaml": """\
recipe: 1
id: kirkby-low
question: What was the lowest river level at the Kirkby gauge yesterday?
level: L1
timezone: Europe/London
fetch:
  url: "{gauges}/gauges/kirkby/readings?date={today-1}"
extract:
  xpath: "//table[@class='readings']//td[@class='level']"
  type: number
combine: min
round: 2
unit: m
""",
    "typo.yaml": """\
recipe: 1
id: typo
question: What is the level at Kirkby today?
level: L1
timezone: Europe/London
fetch:
  url: "{gauges}/gauges/kirkby/readings?date={today}"
extract:
  css: "td.level"
  type: numbr
""",
}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# Six daily checks over five days (UTC), each with the world's switches as they were that day. C2 is on the 13th in
# London but still the 12th in Los Angeles. From C3 the statistics office has its new layout; at C4 and C5 the gauge
# agency is down, and it is back for the afternoon check C6.
C1, C2, C3 = at("2026-11-12T09:00:00+00:00"), at("2026-11-13T03:00:00+00:00"), at("2026-11-14T09:00:00+00:00")
C4, C5, C6 = at("2026-11-15T09:00:00+00:00"), at("2026-11-16T06:00:00+00:00"), at("2026-11-16T15:00:00+00:00")
DAYS: list[tuple[datetime, dict[str, Any]]] = [
    (C1, {}), (C2, {}), (C3, {"stats.layout": "b"}), (C4, {"stats.layout": "b", "gauges.down": True}),
    (C5, {"stats.layout": "b", "gauges.down": True}), (C6, {"stats.layout": "b"}),
]
GAUGE_RECIPES = ("caton-peak", "caton-peak-upstream", "halton-mean-3d", "kirkby-low")
LAYOUT_A = SimpleNamespace(layout="a", garbage=False)


class WorldFetcher:
    """Stands in for the crawl (spiders/official.py through pages.fetch): every requested page asked of the world's
    request handler, as its server would answer, the body kept in the page store; 5xx -> site_down, 4xx ->
    page_missing, as the crawl classifies them. Records each call, to show one crawl per check, each URL once."""

    def __init__(self, world: OfficialWorld, store: PageStore) -> None:
        self.world, self.store = world, store
        self.calls: list[list[tuple[str, str, str]]] = []

    def __call__(self, requests: list[tuple[str, str, str]], work: Path) -> dict[str, Fetched]:
        self.calls.append(list(requests))
        found: dict[str, Fetched] = {}
        for key, url, render in requests:
            site = next(s for s in self.world.sites.values() if url.startswith(s.url + "/"))
            status, _, body = site.answer(url[len(site.url):])
            now = datetime.now(UTC)
            failure = Failure.SITE_DOWN if status >= 500 else Failure.PAGE_MISSING if status >= 400 else None
            sha = None if failure else self.store.put(url, now, body)
            found[key] = Fetched(key=key, url=url, final_url=url, status=status, fetched_at=now, sha256=sha,
                                 rendered=False, render_reason=None, failure=failure,
                                 detail=f"http_{status}" if failure else None, store=self.store)
        return found


def write_recipes(root: Path) -> Path:
    folder = root / "recipes"
    folder.mkdir()
    for name, text in RECIPES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def switch(world: OfficialWorld, settings: dict[str, Any]) -> None:
    world.reset()
    for name, value in settings.items():
        site, attribute = name.split(".")
        setattr(getattr(world, site), attribute, value)


def check(catalog: Catalog, clock: datetime, state: Path, world: OfficialWorld) -> WorldFetcher:
    fetcher = WorldFetcher(world, health.store(state))
    health.check(catalog.recipes, [clock], state, variables=world.vars, fetcher=fetcher, crawl=spiders_run.crawl)
    return fetcher


class History(SimpleNamespace):
    root: Path
    recipes: Path
    catalog: Catalog
    state: Path
    after: dict[datetime, Path]
    fetchers: list[WorldFetcher]
    world: OfficialWorld


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """The six checks run in order on one state folder, a copy of the folder kept after each."""
    root = tmp_path_factory.mktemp("official-history")
    recipes = write_recipes(root)
    catalog = load(recipes)
    state, world = root / "state", OfficialWorld()  # never started: WorldFetcher asks its handler directly
    after, fetchers = {}, []
    for clock, settings in DAYS:
        switch(world, settings)
        fetchers.append(check(catalog, clock, state, world))
        after[clock] = root / f"state-{clock:%d%H}"
        shutil.copytree(state, after[clock])
    switch(world, {})
    return History(root=root, recipes=recipes, catalog=catalog, state=state, after=after, fetchers=fetchers,
                   world=world)


def sha(page: bytes) -> str:
    return hashlib.sha256(page).hexdigest()


def local_day(clock: datetime, zone: str) -> date:
    return clock.astimezone(ZoneInfo(zone)).date()


# ---- health -----------------------------------------------------------------------------------------------------

def test_each_check_is_one_crawl_that_asks_each_page_once(history: History) -> None:
    first = history.fetchers[0].calls
    assert len(first) == 1, "every recipe of a check in one crawl"
    urls = [url for _, url, _ in first[0]]
    assert len(urls) == len(set(urls)) == 6, "the L2 reads its L1's page: fetched once for both"
    assert sum("/gauges/halton/" in u for u in urls) == 3 and all(len(f.calls) == 1 for f in history.fetchers)


def test_a_recipe_failing_every_check_on_three_days_in_a_row_is_broken(history: History) -> None:
    status = health.statuses(health.history(history.state))
    cpi = status["cpi-workday"]
    assert cpi.broken and cpi.days_failing == 3 and cpi.failing_since == date(2026, 11, 14)
    assert cpi.reason == "extracted_nothing" and cpi.detail == "css 'dd.cpi' matched nothing on page 1"
    # The last good answer is the one read at C2 (London's 13th, a Friday): the bulletin of that day.
    assert cpi.last_good is not None and cpi.last_good.at == C2
    assert cpi.last_good.answer == f"{indicator('cpi', date(2026, 11, 13)):.1f}"
    page = release_page(LAYOUT_A, date(2026, 11, 13))  # type: ignore[arg-type]
    assert cpi.last_good.pages == (sha(page),), "the copy a repair is checked on"
    assert health.store(history.state).get(cpi.last_good.pages[0]) == page.decode()
    assert not health.statuses(health.history(history.state), broken_after=4)["cpi-workday"].broken


def test_a_recipe_with_a_good_check_on_the_last_day_is_not_broken(history: History) -> None:
    before = health.statuses(health.history(history.after[C5]))["caton-peak"]
    assert (before.days_failing, before.failing_since, before.reason, before.broken) == (
        2, date(2026, 11, 15), "site_down", False), "two bad days are an outage, not a broken recipe"
    assert "/gauges/caton/readings?date=2026-11-15" in (before.detail or "")
    assert health.statuses(health.history(history.after[C5]), broken_after=2)["caton-peak"].broken
    assert before.last_good is not None and before.last_good.at == C3

    after = health.statuses(health.history(history.state))
    for recipe in GAUGE_RECIPES:  # C6 failed nothing, though C5 on the same day did
        s = after[recipe]
        assert (s.days_failing, s.failing_since, s.reason, s.detail, s.broken) == (0, None, None, None, False), s
        assert s.last_good is not None and s.last_good.at == C6
    caton = after["caton-peak"].last_good
    assert caton is not None and caton.answer == f"{max(readings('caton', date(2026, 11, 15))):.2f} m"
    assert caton.pages == (sha(gauge_page(LAYOUT_A, "caton", date(2026, 11, 15))),)  # type: ignore[arg-type]


def test_the_history_keeps_one_file_per_clock_and_a_rerun_of_a_clock_replaces_it(history: History,
                                                                               tmp_path: Path) -> None:
    names = sorted(p.name for p in health.answers_dir(history.state).iterdir())
    assert names == [f"{c:%Y%m%dT%H%M%SZ}.parquet" for c, _ in DAYS]
    rows = health.history(history.state)
    assert rows.height == 6 * 5 and rows["at"].is_sorted()

    state = tmp_path / "state"
    shutil.copytree(history.state, state)
    world = OfficialWorld()  # the statistics office put its old layout back before C6 was run again
    check(history.catalog, C6, state, world)
    assert sorted(p.name for p in health.answers_dir(state).iterdir()) == names
    again = health.history(state)
    assert again.height == rows.height
    assert again.filter(pl.col("at") == C6, pl.col("id") == "cpi-workday")["status"].to_list() == ["ok"]
    cpi = health.statuses(again)["cpi-workday"]
    assert not cpi.broken and cpi.days_failing == 0 and cpi.last_good is not None and cpi.last_good.at == C6


# ---- rows ---------------------------------------------------------------------------------------------------

def build(catalog: Catalog, state: Path, out: Path) -> tuple[dict[str, Any], pl.DataFrame, pl.DataFrame]:
    manifest = pipeline.build(catalog.recipes, catalog.refused, state, out)
    return (manifest.model_dump(mode="json"), pl.read_parquet(out / "questions.parquet"),
            pl.read_parquet(out / "rejected.parquet"))


def said(recipe: Recipe) -> str:
    """The question a row asks: the recipe's, saying the unit of a river level (these recipes' questions omit it)."""
    return recipe.question.removesuffix("?") + ", in metres?" if recipe.unit == "m" else recipe.question


def ok_clocks(recipe: str) -> list[datetime]:
    """The checks at which a recipe resolved, from the switches alone."""
    down = {"cpi-workday": "stats.layout"}.get(recipe, "gauges.down")
    return [c for c, settings in DAYS if down not in settings]


def truth_of(recipe: Recipe, clock: datetime) -> tuple[str, list[bytes]]:
    """The answer and the pages a recipe reads at `clock`, from the world's truth and page functions."""
    today = local_day(clock, recipe.timezone)
    gauge = recipe.fetch.url.split("/")[2]
    if recipe.id == "halton-mean-3d":
        days = [today - timedelta(days=n) for n in (3, 2, 1)]
        values = [v for d in days for v in readings("halton", d)]
        return f"{round(sum(values) / len(values), 2):.2f} m", [gauge_page(LAYOUT_A, "halton", d) for d in days]
    if recipe.id == "cpi-workday":
        day = today - timedelta(days=max(0, today.weekday() - 4))
        return f"{indicator('cpi', day):.1f}", [release_page(LAYOUT_A, day)]
    day = today - timedelta(days=1)
    pick = min if recipe.combine == "min" else max
    return f"{pick(readings(gauge, day)):.2f} m", [gauge_page(LAYOUT_A, gauge, day)]


def test_build_gives_one_snapshot_a_day_in_the_recipes_zone_with_its_clock_dates_and_evidence(
        history: History, tmp_path: Path) -> None:
    _, questions, _ = build(history.catalog, history.state, tmp_path / "out")
    snapshots = questions.filter(pl.col("kind") == "snapshot")
    by_id = {r.id: r for r in history.catalog.recipes}
    for recipe in history.catalog.recipes:
        rows = snapshots.filter(pl.col("recipe_id") == recipe.id).sort("as_of")
        firsts: dict[date, datetime] = {}
        for clock in ok_clocks(recipe.id):
            firsts.setdefault(local_day(clock, recipe.timezone), clock)
        assert rows["as_of"].to_list() == list(firsts.values()), recipe.id
        for row, clock in zip(rows.iter_rows(named=True), firsts.values()):
            answer, pages = truth_of(by_id[row["recipe_id"]], clock)
            local = clock.astimezone(ZoneInfo(recipe.timezone))
            assert row["question"] == f"Current time: {local:%Y-%m-%d %H:%M} ({recipe.timezone}). {said(recipe)}"
            assert row["answer"] == answer and row["value"] == float(answer.split()[0])
            assert row["answer_value"]["number"] == answer.split()[0], "the typed value is the answer's"
            assert row["answer_type"] == ("quantity" if recipe.unit else "number")
            assert [e["sha256"] for e in row["evidence"]] == [sha(p) for p in pages]
            assert row["level"] == recipe.level and row["family"] == (recipe.base or recipe.id)
    # The Los Angeles recipe: C1 and C2 are both the 12th there, so one row; London's recipes have two.
    counts = dict(snapshots.group_by("recipe_id").len().iter_rows())
    assert counts == {"caton-peak": 4, "caton-peak-upstream": 4, "halton-mean-3d": 3, "kirkby-low": 4,
                      "cpi-workday": 2}
    halton = snapshots.filter(pl.col("recipe_id") == "halton-mean-3d").sort("as_of").row(0, named=True)
    assert json.loads(halton["dates"]) == {"today": "2026-11-12",
                                           "day": ["2026-11-09", "2026-11-10", "2026-11-11"]}
    caton = snapshots.filter(pl.col("recipe_id") == "caton-peak").sort("as_of").row(1, named=True)
    assert json.loads(caton["dates"]) == {"today": "2026-11-13", "yesterday": "2026-11-12"}
    assert caton["evidence"][0]["url"].endswith("/gauges/caton/readings?date=2026-11-12")


def test_build_gives_a_live_row_per_healthy_recipe_and_rejects_failures_and_the_broken_one(
        history: History, tmp_path: Path) -> None:
    manifest, questions, rejected = build(history.catalog, history.state, tmp_path / "out")
    live = questions.filter(pl.col("kind") == "live")
    assert sorted(live["recipe_id"]) == sorted(GAUGE_RECIPES), "cpi-workday is broken: no live row"
    by_id = {r.id: r for r in history.catalog.recipes}
    for row in live.iter_rows(named=True):
        recipe = by_id[row["recipe_id"]]
        assert row["answer"] == "" and row["question"] == said(recipe) and row["dates"] == "{}"
        assert (row["answer_type"], row["answer_value"]["unit"]) == ("quantity", "m"), "the form it will take"
        assert parse_recipe(row["recipe"], name="row") == recipe, "the shipped recipe is the one that was checked"
        assert row["as_of"] == C6 and row["evidence"][0]["sha256"] is not None
    event = dict(live.select("recipe_id", "event_date").iter_rows())
    assert event == {"caton-peak": date(2026, 8, 3), "caton-peak-upstream": date(2026, 8, 3),  # its family's
                     "halton-mean-3d": date(2026, 9, 21), "kirkby-low": date(2026, 11, 12)}  # first good day
    assert (questions.group_by("recipe_id").agg(pl.col("event_date").n_unique())["event_date"] == 1).all()

    reasons = dict(rejected.group_by("reason").len().iter_rows())
    assert reasons == {"site_down": 2 * 4, "extracted_nothing": 4, "recipe_broken": 1, "recipe_invalid": 1}
    assert manifest["rejects"] == {"recipe_invalid": 1, "site_down": 8, "extracted_nothing": 4, "recipe_broken": 1}
    typo = rejected.filter(pl.col("reason") == "recipe_invalid")["detail"].item()
    assert "typo.yaml" in typo and "extract.type" in typo
    down = rejected.filter(pl.col("reason") == "site_down").row(0, named=True)
    assert json.loads(down["item"])["at"] == C4.isoformat() and "http_503" in down["detail"]
    broken = rejected.filter(pl.col("reason") == "recipe_broken").row(0, named=True)
    assert broken["stage"] == "refresh" and json.loads(broken["item"])["recipe"] == "cpi-workday"
    assert "3 days since 2026-11-14" in broken["detail"]
    assert manifest["details"]["broken"] == [{"recipe": "cpi-workday", "since": "2026-11-14", "days": 3,
                                              "reason": "extracted_nothing"}]
    [line] = manifest["details"]["changelog"]
    assert "`cpi-workday` is broken" in line and "out of the test split" in line
    assert manifest["counts"] == {"recipe_files": 6, "recipes": 5, "resolutions": 30, "resolved": 18,
                                  "questions_gated": 17 + 4, "live_questions": 4, "questions": 17 + 4}


def test_ids_are_stable_and_a_repaired_recipe_gets_a_new_live_id(history: History, tmp_path: Path) -> None:
    _, first, _ = build(history.catalog, history.state, tmp_path / "one")
    _, again, _ = build(history.catalog, history.state, tmp_path / "two")
    assert first.equals(again), "the same history gives the same rows, ids and all"
    _, healthy, _ = build(history.catalog, history.after[C3], tmp_path / "c3")
    old = healthy.filter(pl.col("kind") == "live", pl.col("recipe_id") == "cpi-workday")["id"].item()
    assert set(healthy.filter(pl.col("kind") == "snapshot")["id"]) <= set(first["id"]), "a snapshot keeps its id"

    # A repair (repair.py's job) replaces the extract with one for the new layout; the next check resolves it.
    state = tmp_path / "state"
    shutil.copytree(history.state, state)
    recipes = [r if r.id != "cpi-workday" else recipe_of(
        {**r.model_dump(mode="json", exclude_none=True), "extract": {"css": "td[data-series=cpi]", "type": "number"}},
        name="cpi-workday.yaml") for r in history.catalog.recipes]
    repaired = Catalog(recipes, history.catalog.refused)
    world = OfficialWorld()
    world.stats.layout = "b"
    c7 = at("2026-11-17T09:00:00+00:00")
    check(repaired, c7, state, world)
    manifest, rows, _ = build(repaired, state, tmp_path / "repaired")
    new = rows.filter(pl.col("kind") == "live", pl.col("recipe_id") == "cpi-workday")
    assert new.height == 1 and new["id"].item() != old, "a released row is never edited in place"
    assert "td[data-series=cpi]" in new["recipe"].item() and manifest["details"]["changelog"] == []
    latest = rows.filter(pl.col("recipe_id") == "cpi-workday", pl.col("as_of") == c7, pl.col("kind") == "snapshot")
    assert latest["answer"].to_list() == [f"{indicator('cpi', date(2026, 11, 17)):.1f}"]
    assert set(first.filter(pl.col("kind") == "snapshot")["id"]) <= set(rows["id"])


# ---- the real crawl -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_check_through_the_real_crawl_answers_the_truth_and_fails_the_moved_layout(tmp_path: Path) -> None:
    catalog = load(write_recipes(tmp_path))
    state = tmp_path / "state"
    with OfficialWorld() as world:
        world.stats.layout = "b"
        answers = health.check(catalog.recipes, [C1, C2], state, variables=world.vars,
                               crawl=spiders_run.crawl)  # one crawl, two clocks
        asked = world.asked()
    by_id = {r.id: r for r in catalog.recipes}
    for row in answers.iter_rows(named=True):
        if row["id"] == "cpi-workday":
            assert (row["status"], row["reason"]) == ("failed", "extracted_nothing"), row
            continue
        answer, pages = truth_of(by_id[row["id"]], row["at"])
        assert (row["status"], row["answer"]) == ("ok", answer), row
        assert [e["sha256"] for e in row["evidence"]] == [sha(p) for p in pages]
        assert all(health.store(state).get(e["sha256"]) for e in row["evidence"])
    gauges = [p for p in asked["gauges"] if p != "/robots.txt"]
    # caton and kirkby for two London days; halton's three days, the same at both clocks in Los Angeles: once each
    assert len(gauges) == len(set(gauges)) == 2 + 2 + 3, gauges
    assert not asked["mirror"] and not asked["harbour"]
    status = health.statuses(health.history(state))
    assert status["cpi-workday"].days_failing == 2 and not status["cpi-workday"].broken
    _, questions, rejected = build(catalog, state, tmp_path / "out")
    assert questions.filter(pl.col("kind") == "live").height == 4 and rejected.filter(
        pl.col("reason") == "extracted_nothing").height == 2


# ---- the release ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_two_releases_around_a_broken_recipe_load_with_datasets(history: History, tmp_path: Path,
                                                                load_offline: Callable[..., Any]) -> None:
    from publish.release import build_release  # noqa: PLC0415
    from tests.runs import write_source  # noqa: PLC0415
    from tests.test_release import news_rows  # noqa: PLC0415 - another source's rows (bulletin, January: train)
    from timelyqa.record import QARecord, to_frame  # noqa: PLC0415

    bulletin = write_source(tmp_path / "bulletin", to_frame(news_rows(), QARecord), "bulletin")
    release = tmp_path / "release"
    build(history.catalog, history.after[C3], tmp_path / "official-1")
    build_release([tmp_path / "official-1", bulletin], release, created=datetime(2026, 11, 14, 12, tzinfo=UTC))
    first_test = load_offline(str(release), "official_site", split="test").to_polars()
    assert sorted(first_test["recipe_id"]) == ["cpi-workday", "kirkby-low"]

    build(history.catalog, history.state, tmp_path / "official-2")
    manifest = build_release([tmp_path / "official-2", bulletin], release,
                             created=datetime(2026, 11, 17, 12, tzinfo=UTC))
    assert manifest["previous_version"] == "v2026.11.14"
    official = {split: load_offline(str(release), "official_site", split=split).to_polars()
                for split in ("train", "validation", "test")}
    test = official["test"]
    assert sorted(test["recipe_id"]) == ["kirkby-low"], "the broken recipe's live row left test"
    assert set(test["kind"]) == {"live"} and set(test["answer"]) == {""}
    assert parse_recipe(test["recipe"].item(), name="test row").id == "kirkby-low"
    for split in ("train", "validation"):
        assert official[split].height and set(official[split]["kind"]) == {"snapshot"}, split
        assert (official[split]["answer"] != "").all()
    assert set(official["train"]["family"]) == {"caton-peak"} and set(official["train"]["level"]) == {"L1", "L2"}
    assert set(official["validation"]["recipe_id"]) == {"halton-mean-3d"}
    families = pl.concat([df.select("family", pl.lit(s).alias("split")) for s, df in official.items()])
    assert (families.group_by("family").agg(pl.col("split").n_unique())["split"] == 1).all()

    everything = load_offline(str(release))
    for split, ds in everything.items():
        rows = ds.to_polars()
        assert (rows["answer"] != "").all(), f"default {split} holds a row without an answer"
    assert "test" not in everything, "official_site's test rows are live, bulletin's all train: none for default"
    answered = set(official["train"]["id"]) | set(official["validation"]["id"])
    assert answered <= {i for ds in everything.values() for i in ds["id"]}
    changelog = (release / "CHANGELOG.md").read_text(encoding="utf-8")
    newest = changelog.split("\n## ")[1]
    assert "`cpi-workday` is broken" in newest and "2026-11-14" in newest
    assert "broken" not in changelog.split("\n## ")[2], "the first release had nothing broken"


@pytest.fixture
def load_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """datasets.load_dataset, offline, with a cache of this test's own (as tests/test_release.py's `load`)."""
    import datasets  # noqa: PLC0415 - seconds to import: only for the release test
    import huggingface_hub.constants  # noqa: PLC0415

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    cache = tmp_path / "hf-cache"
    return lambda *args, **kwargs: datasets.load_dataset(*args, cache_dir=str(cache), **kwargs)


def test_a_recipe_whose_question_a_reviewer_sends_back_gives_no_row_and_each_is_kept_with_its_reason(
        history: History, tmp_path: Path) -> None:
    """The quality gate reads each row as released: a recipe's question written as a cloze loses its snapshots and
    its live question, each kept aside with the gate's reason; the other recipes' rows are untouched."""
    healthy, _, _ = build(history.catalog, history.state, tmp_path / "before")
    victim = history.catalog.recipes[0]
    recipes = [r if r.id != victim.id else recipe_of(
        {**r.model_dump(mode="json", exclude_none=True), "question": "The river stood at ___ at the gauge today."},
        name=f"{r.id}.yaml") for r in history.catalog.recipes]
    manifest, rows, rejected = build(Catalog(recipes, history.catalog.refused), history.state, tmp_path / "after")
    assert victim.id not in set(rows["recipe_id"]) and rows.height > 0
    gated = rejected.filter(pl.col("stage") == "quality")
    assert set(gated["reason"]) == {"blank_in_question"} and gated.height == manifest["rejects"]["blank_in_question"]
    assert rows.height + gated.height == healthy["counts"]["questions"]
    assert manifest["counts"]["questions_gated"] == rows.height
