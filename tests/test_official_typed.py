"""Typed answers of the official-site source: each row's `answer_type` and `answer_value` follow its recipe's type and
unit, the question says the unit, live rows say the form their answer will take, and `live resolve` writes the
typed value beside each answer. Graded through timelyqa.rewards as a trainer would, with the gold written in the
other forms a model gives (bare number, converted unit, list reordered, date without its weekday) and wrong values in
right forms.

The demo's recipes are checked at the demo's clocks against the demo's site files, read by `SiteFiles`, which stands
in for the crawl (as tests/test_official_pipeline.py's WorldFetcher does); the rail page writes its count with a
script, so only the slow test, through the real crawl and Chromium, answers it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from spiders import run as spiders_run
from timelyqa.official import health, pipeline
from timelyqa.official.bundle import Bundle
from timelyqa.official.catalog import Catalog, load
from timelyqa.official.pages import Fetched, PageStore
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe, recipe_of
from timelyqa.official.resolve import ANSWERS, resolve, write_answers
from timelyqa.official.typed import asked, declared, expected, typed
from timelyqa.rewards import Gold, grade

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo" / "official"
FIXTURES = ROOT / "tests" / "fixtures" / "official"

# What each demo recipe declares (its extract type, combine and unit), in the words of the record.
DECLARED = {"kestrel-peak-7d": ("quantity", "m"), "kestrel-peak-7d-l2": ("quantity", "m"),
            "port-alder-high-today": ("quantity", "°C"), "crown-euro-rate": ("number", None),
            "aldern-flood-warnings": ("list", None), "port-alder-late-yesterday": ("number", None),
            "kestrel-level-now": ("quantity", "m")}


class SiteFiles:
    """Stands in for the crawl: each requested page is the demo site's file at the URL's path (404 when there is
    none), kept in the real page store."""

    def __init__(self, root: Path, site: str, store: PageStore) -> None:
        self.root, self.site, self.store = root, site, store

    def __call__(self, requests: list[tuple[str, str, str]], work: Path) -> dict[str, Fetched]:
        found = {}
        for key, url, _ in requests:
            file = self.root / url.removeprefix(self.site + "/")
            now = datetime.now(UTC)
            if not file.is_file():
                found[key] = Fetched(key, url, url, 404, now, None, False, None, Failure.PAGE_MISSING, "http_404",
                                     self.store)
                continue
            sha = self.store.put(url, now, file.read_bytes())
            found[key] = Fetched(key, url, url, 200, now, sha, False, None, None, None, self.store)
        return found


def gold(row: Mapping[str, Any]) -> Gold:
    return Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalog, pl.DataFrame, Path]:
    """The demo's recipes checked at the demo's clocks, and the rows built from that history."""
    root = tmp_path_factory.mktemp("official-typed")
    bundle = Bundle.load(DEMO / "bundle.yaml")
    catalog = load(DEMO / bundle.recipes)
    state = root / "state"
    fetcher = SiteFiles(DEMO / bundle.site, bundle.vars["site"], health.store(state))
    health.check(catalog.recipes, bundle.at(), state, variables=bundle.vars, fetcher=fetcher, crawl=spiders_run.crawl)
    pipeline.build(catalog.recipes, catalog.refused, state, root / "out")
    return catalog, pl.read_parquet(root / "out" / "questions.parquet"), state


def snapshots(rows: pl.DataFrame, *recipes: str) -> list[dict[str, Any]]:
    return rows.filter(pl.col("kind") == "snapshot", pl.col("recipe_id").is_in(recipes)).rows(named=True)


def test_every_row_has_the_type_and_unit_its_recipe_declares(demo: tuple[Catalog, pl.DataFrame, Path]) -> None:
    _, rows, _ = demo
    answered = set(rows.filter(pl.col("kind") == "snapshot")["recipe_id"])
    assert answered == set(DECLARED) - {"kestrel-level-now", "port-alder-late-yesterday"}, \
        "the demo's present-only page and its script-written page have no snapshot here"
    for row in rows.iter_rows(named=True):
        kind, unit = DECLARED[row["recipe_id"]]
        assert (row["answer_type"], row["answer_value"]["unit"]) == (kind, unit), row["recipe_id"]
        assert row["generator"] == "official_recipe_v2"


def test_a_river_level_is_a_quantity_in_metres_read_from_its_display(demo: tuple[Catalog, pl.DataFrame, Path]
                                                                    ) -> None:
    _, rows, _ = demo
    levels = snapshots(rows, "kestrel-peak-7d", "kestrel-peak-7d-l2")
    assert len(levels) == 14
    for row in levels:
        number, unit = row["answer"].split()
        assert unit == "m" and row["answer_value"]["number"] == number
        assert row["answer_value"]["precision"] == -len(number.partition(".")[2]) == -2, "round: 2 is centimetres"
        assert number in row["answer_aliases"], "the bare number, for consumers that only compare strings"
    high = snapshots(rows, "port-alder-high-today")
    assert len(high) == 7
    for row in high:
        number, unit = row["answer"].split()
        assert unit == "°C" and (row["answer_value"]["number"], row["answer_value"]["precision"]) == (number, 0)


def test_the_question_says_the_unit_once(demo: tuple[Catalog, pl.DataFrame, Path]) -> None:
    catalog, rows, _ = demo
    by_id = {r.id: r for r in catalog.recipes}
    for row in rows.iter_rows(named=True):
        recipe = by_id[row["recipe_id"]]
        prefix = "" if row["kind"] == "live" else row["question"].partition(". ")[0] + ". "
        assert row["question"].startswith(prefix), row["question"]
        question = row["question"].removeprefix(prefix)
        if row["recipe_id"].startswith("kestrel-"):
            assert recipe.question.endswith("?") and "metre" not in recipe.question, "the demo's recipe omits it"
            assert question == recipe.question.removesuffix("?") + ", in metres?"
        else:  # the temperature's recipe says "in degrees Celsius" itself; the others have no unit
            assert question == recipe.question
    assert all(q.count("degrees Celsius") == 1 for q in rows.filter(
        pl.col("recipe_id") == "port-alder-high-today")["question"])


def test_a_level_graded_in_other_forms_and_units_and_a_wrong_one(demo: tuple[Catalog, pl.DataFrame, Path]) -> None:
    _, rows, _ = demo
    for row in snapshots(rows, "kestrel-peak-7d", "kestrel-peak-7d-l2"):
        metres = Decimal(row["answer"].split()[0])
        for right in (f"{metres}", f"{metres} metres", f"{metres * 100:.0f} cm", f"{metres}0 m", f"{metres} meters"):
            assert grade(right, gold(row)) == 1.0, (row["answer"], right)
        wrong = metres + Decimal("0.01")
        for bad in (f"{wrong} m", f"{wrong}", f"{metres - Decimal('0.01')} m", f"{metres} kg", f"{metres} km"):
            assert grade(bad, gold(row)) == 0.0, (row["answer"], bad)


def test_a_temperature_graded_in_fahrenheit_and_bare_and_a_wrong_one(demo: tuple[Catalog, pl.DataFrame, Path]
                                                                    ) -> None:
    _, rows, _ = demo
    for row in snapshots(rows, "port-alder-high-today"):
        celsius = int(row["answer"].split()[0])
        fahrenheit = Decimal(celsius) * 9 / 5 + 32
        for right in (f"{celsius}", f"{celsius} degrees Celsius", f"{celsius}°C", f"{fahrenheit} °F"):
            assert grade(right, gold(row)) == 1.0, (row["answer"], right)
        for bad in (f"{celsius + 1} °C", f"{celsius - 1}", f"{celsius} °F"):
            assert grade(bad, gold(row)) == 0.0, (row["answer"], bad)


def test_the_rate_is_a_number_at_its_four_decimals(demo: tuple[Catalog, pl.DataFrame, Path]) -> None:
    _, rows, _ = demo
    rates = snapshots(rows, "crown-euro-rate")
    assert len(rates) == 7
    for row in rates:
        rate = Decimal(row["answer"])
        assert row["answer_value"]["number"] == row["answer"] and row["answer_value"]["precision"] == -4
        assert grade(f"{rate}0", gold(row)) == 1.0 and grade(f"{rate}4", gold(row)) == 1.0
        assert grade(f"{rate + Decimal('0.0001')}", gold(row)) == 0.0
        assert grade(f"{rate} EUR", gold(row)) == 0.0, "a rate is a bare number"


def test_flood_warnings_are_a_list_graded_as_a_set_also_with_one_station(demo: tuple[Catalog, pl.DataFrame, Path]
                                                                        ) -> None:
    _, rows, _ = demo
    warnings = snapshots(rows, "aldern-flood-warnings")
    sizes = sorted(len(row["answer"].split("; ")) for row in warnings)
    assert sizes[0] == 1 and sizes[-1] >= 3, "the demo's days include a single station and several"
    for row in warnings:
        items = row["answer"].split("; ")
        assert row["answer_type"] == "list" and row["answer_value"]["items"] == items
        reordered = list(reversed(items))
        forms = [", ".join(reordered), " and ".join(reordered), "; ".join(reordered)]
        if len(items) > 1:
            forms.append(", ".join(reordered[:-1]) + " and " + reordered[-1])
        for right in forms:
            assert grade(right, gold(row)) == 1.0, (row["answer"], right)
        assert grade(f"{row['answer']}; Pike Weir", gold(row)) == 0.0, "an item too many"
        if len(items) > 1:
            assert grade("; ".join(items[1:]), gold(row)) == 0.0, "an item missing"
        else:
            assert grade(items[0][:-1], gold(row)) == 0.0


def test_a_live_row_says_the_form_of_its_answer(demo: tuple[Catalog, pl.DataFrame, Path]) -> None:
    catalog, rows, _ = demo
    live = {row["recipe_id"]: row for row in rows.filter(pl.col("kind") == "live").iter_rows(named=True)}
    assert set(live) >= {"kestrel-peak-7d", "port-alder-high-today", "crown-euro-rate"}
    by_id = {r.id: r for r in catalog.recipes}
    for recipe_id, row in live.items():
        kind, unit = DECLARED[recipe_id]
        value = row["answer_value"]
        assert row["answer"] == "" and row["answer_aliases"] == [] and row["answer_type"] == kind
        assert value["unit"] == unit and value["number"] is None and value["items"] is None
        rounds = by_id[recipe_id].round
        assert value["precision"] == (-rounds if rounds is not None else 0), "the precision it rounds to"


def test_live_resolve_writes_the_typed_value_of_each_answer(demo: tuple[Catalog, pl.DataFrame, Path],
                                                            tmp_path: Path) -> None:
    catalog, rows, _ = demo
    bundle = Bundle.load(DEMO / "bundle.yaml")
    clock = bundle.at()[-1]
    store = PageStore(tmp_path / "pages")
    answers = resolve(catalog.recipes, [clock], tmp_path / "work", store=store, variables=bundle.vars,
                      fetcher=SiteFiles(DEMO / bundle.site, bundle.vars["site"], store), crawl=spiders_run.crawl)
    frame = pl.read_parquet(write_answers(answers, tmp_path))
    assert (tmp_path / ANSWERS).is_file()
    same_clock = {r["recipe_id"]: r for r in rows.filter(pl.col("kind") == "snapshot", pl.col("as_of") == clock)
                  .iter_rows(named=True)}
    resolved = frame.filter(pl.col("status") == "ok")
    assert set(resolved["id"]) == set(same_clock) and resolved.height >= 4
    for row in resolved.iter_rows(named=True):
        snapshot = same_clock[row["id"]]
        assert row["answer"] == snapshot["answer"]
        assert (row["answer_type"], row["answer_value"], row["answer_aliases"]) == (
            snapshot["answer_type"], snapshot["answer_value"], snapshot["answer_aliases"])
        assert grade(row["answer"], gold(row)) == 1.0
    for row in frame.filter(pl.col("status") == "failed").iter_rows(named=True):
        assert (row["answer"], row["answer_type"], row["answer_value"]) == (None, None, None), row["id"]


def test_a_history_written_before_typed_answers_still_builds_typed_rows(demo: tuple[Catalog, pl.DataFrame, Path],
                                                                        tmp_path: Path) -> None:
    catalog, rows, state = demo
    old = tmp_path / "state"
    for file in health.answers_dir(state).glob("*.parquet"):  # as the checks of the last release wrote them
        (health.answers_dir(old)).mkdir(parents=True, exist_ok=True)
        pl.read_parquet(file).drop("answer_aliases", "answer_type", "answer_value").write_parquet(
            health.answers_dir(old) / file.name)
    history = health.history(old)
    assert history["answer_type"].null_count() == history.height
    pipeline.build(catalog.recipes, catalog.refused, old, tmp_path / "out")
    again = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    assert again.sort("id").equals(rows.sort("id")), "the type comes from the recipe, the list's items from its text"


# ---- types the demo does not show: dates, counts with a noun, percentages, answers not of their type -----------

def fixture_recipe(name: str, **fields: Any) -> Recipe:
    base = load(FIXTURES / "recipes" / f"{name}.yaml").recipes[0]
    return recipe_of({**base.model_dump(by_alias=True, exclude_none=True), **fields}, name=name)


def test_a_date_recipe_answers_a_date_graded_without_its_weekday_and_not_the_day_before() -> None:
    recipe = fixture_recipe("next-bulletin")
    day = date(2026, 11, 17)
    answer = typed(recipe, day.isoformat())
    assert declared(recipe) == answer.type == "date" and expected(recipe).date_precision == "day"
    assert answer.value.date == "2026-11-17" and answer.value.date_precision == "day"
    row = answer.row()
    for right in (f"{day:%A} {day.day} {day:%B %Y}", f"{day.day} {day:%B %Y}", f"{day:%B} {day.day}, {day.year}",
                  "on the 17th of November 2026"):
        assert grade(right, gold(row)) == 1.0, right
    before = day - timedelta(days=1)
    for bad in (before.isoformat(), f"{before.day} {before:%B %Y}", f"{before:%A} {day.day} {day:%B %Y}",
                "November 2026"):
        assert grade(bad, gold(row)) == 0.0, bad


def test_a_percentage_recipe_asks_in_percent_and_a_count_keeps_its_noun() -> None:
    rate = fixture_recipe("unemployment-latest")
    assert asked(rate) == rate.question.removesuffix("?") + ", in percent?"
    assert asked(fixture_recipe("unemployment-latest", question="What percentage of people are out of work?")) == \
        "What percentage of people are out of work?"
    row = typed(rate, "4.3 %").row()
    assert (row["answer_type"], row["answer_value"]["unit"]) == ("quantity", "%")
    assert grade("4.3", gold(row)) == 1.0 and grade("4.3 percent", gold(row)) == 1.0
    assert grade("4.4%", gold(row)) == 0.0

    people = fixture_recipe("unemployment-latest", extract={"css": "dd.people", "type": "integer"}, unit="people",
                            valid=None)
    assert asked(people) == people.question, "a noun pint does not know is no unit to state"
    row = typed(people, "412 people").row()
    assert (row["answer"], row["answer_type"], row["answer_value"]["number"]) == ("412 people", "number", "412")
    assert grade("412", gold(row)) == 1.0 and grade("412 people", gold(row)) == 1.0
    assert grade("413", gold(row)) == 0.0 and grade("412 °C", gold(row)) == 0.0


def test_an_answer_that_is_not_of_its_declared_type_is_kept_as_text() -> None:
    tiny = fixture_recipe("unemployment-latest", unit=None, valid=None)
    assert declared(tiny) == "number"
    row = typed(tiny, "1e-05").row()  # how extract wrote 0.00001 without a round, before it wrote digits only
    assert (row["answer"], row["answer_type"]) == ("1e-05", "text")
    assert grade("1e-05", gold(row)) == 1.0


def test_a_tiny_or_huge_number_is_written_in_digits_and_typed_as_its_recipe_declares() -> None:
    from timelyqa.official.extract import Value, finish

    tiny = fixture_recipe("unemployment-latest", unit=None, valid=None)
    got = finish(tiny, [["0.00001%"]])
    assert isinstance(got, Value) and got.text == "0.00001"
    row = typed(tiny, got.text).row()
    assert (row["answer"], row["answer_type"], row["answer_value"]["number"]) == ("0.00001", "number", "0.00001")
    assert grade("0.00001", gold(row)) == 1.0 and grade("0.00002", gold(row)) == 0.0


# ---- the real crawl -------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_demo_through_the_real_crawl_types_the_rendered_count(tmp_path: Path) -> None:
    from timelyqa.localsite import LocalSite  # noqa: PLC0415

    bundle = Bundle.load(DEMO / "bundle.yaml")
    with LocalSite(DEMO / bundle.site) as site:  # a free port: the demo's own may be serving elsewhere
        pipeline.run(DEMO / bundle.recipes, tmp_path / "state", tmp_path / "out", clocks=bundle.at(),
                     variables={"site": f"http://127.0.0.1:{site.port}"}, crawl=spiders_run.crawl)
    rows = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    late = snapshots(rows, "port-alder-late-yesterday")
    assert len(late) == 7
    for row in late:
        count = int(row["answer"])
        assert (row["answer_type"], row["answer_value"]["number"], row["answer_value"]["precision"]) == (
            "number", str(count), 0)
        words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
        assert grade(words[count], gold(row)) == 1.0 and grade(f"{count}.0", gold(row)) == 1.0
        assert grade(f"{count + 1}", gold(row)) == 0.0 and grade(words[count + 1], gold(row)) == 0.0
    for row in rows.filter(pl.col("kind") == "snapshot").iter_rows(named=True):
        assert row["answer_type"] == DECLARED[row["recipe_id"]][0]
        assert grade(row["answer"], gold(row)) == 1.0
