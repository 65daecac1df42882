"""Wikidata answers typed from their datatype: values as render.answer types them, and the demo's rows as the grader
reads them (`Gold.of` over the row's four answer fields), right forms scoring 1.0 and wrong values 0.0."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.truthy import read_entities
from timelyqa.rewards import Gold, grade
from timelyqa.wikidata.pipeline import run
from timelyqa.wikidata.render import answer
from timelyqa.wikidata.synth import in_unit
from timelyqa.wikidata.values import Kind

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
LABELS = {"Q1": "Riyadh Falcons FC", "Q11573": "metre", "Q712226": "square kilometre", "Q9999": "widget"}


def gold(kind: Kind, form: str, aliases: dict[str, list[str]] | None = None) -> Gold:
    typed = answer(kind, form, LABELS, aliases or {})
    row = typed.row()
    return Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])


def value(kind: Kind, form: str) -> dict[str, Any]:
    return {k: v for k, v in answer(kind, form, LABELS, {}).value.model_dump().items() if v is not None}


# Values by datatype ----------------------------------------------------------------------------------

def test_an_item_is_an_entity_with_its_english_aliases() -> None:
    typed = answer(Kind.ENTITY, "Q1", LABELS, {"Q1": ["Riyadh Falcons", "Riyadh Falcons FC", "Falcons FC"]})
    assert (typed.answer, typed.type, typed.aliases) == ("Riyadh Falcons FC", "entity",
                                                         ("Riyadh Falcons", "Falcons FC"))
    g = gold(Kind.ENTITY, "Q1", {"Q1": ["Riyadh Falcons"]})
    assert grade("riyadh falcons", g) == grade("Riyadh Falcons FC.", g) == 1.0
    assert grade("Riyadh", g) == grade("Desert Stars SC", g) == 0.0


def test_a_quantity_without_a_unit_is_a_number_at_its_precision() -> None:
    assert answer(Kind.QUANTITY, "+163900", LABELS, {}).type == "number"
    assert value(Kind.QUANTITY, "+163900") == {"number": "163900", "precision": 0}
    assert value(Kind.QUANTITY, "-2.50") == {"number": "-2.50", "precision": -2}
    g = gold(Kind.QUANTITY, "+163900")
    for right in ("163,900", "163900", "163 900", "163.9 thousand"):
        assert grade(right, g) == 1.0, right
    for wrong in ("163,901", "164,000", "163,900 m"):
        assert grade(wrong, g) == 0.0, wrong


def test_a_quantity_in_a_unit_pint_knows_is_a_quantity_and_its_question_says_the_unit() -> None:
    typed = answer(Kind.QUANTITY, "+1.92 Q11573", LABELS, {})
    assert typed.type == "quantity" and typed.answer == "1.92 m"
    assert value(Kind.QUANTITY, "+1.92 Q11573") == {"number": "1.92", "precision": -2, "unit": "m"}
    assert in_unit("How tall is Lucas Andrade?", typed) == "How tall is Lucas Andrade, in metres?"
    area = answer(Kind.QUANTITY, "+1204 Q712226", LABELS, {})
    assert in_unit("What is the area of Campo Alto?", area) == "What is the area of Campo Alto, in square kilometres?"
    g = gold(Kind.QUANTITY, "+1.92 Q11573")
    for right in ("1.92", "1.92 m", "192 cm", "1.92 metres", "1.920 m"):
        assert grade(right, g) == 1.0, right
    for wrong in ("1.93 m", "1.9 m", "1.92 kg", "193 cm"):
        assert grade(wrong, g) == 0.0, wrong


def test_a_quantity_in_a_unit_pint_does_not_know_stays_text_and_its_question_names_no_unit() -> None:
    typed = answer(Kind.QUANTITY, "+1200 Q9999", LABELS, {})
    assert (typed.answer, typed.type) == ("1,200 widget", "text")
    assert in_unit("How many widgets does X make?", typed) == "How many widgets does X make?"
    g = gold(Kind.QUANTITY, "+1200 Q9999")
    assert grade("1,200 widget", g) == grade("1200 widget", g) == 1.0
    assert grade("1,300 widget", g) == 0.0


def test_a_number_question_names_no_unit() -> None:
    assert in_unit("What is the population of Port Alder?", answer(Kind.QUANTITY, "+163900", LABELS, {})) == (
        "What is the population of Port Alder?")


@pytest.mark.parametrize(("form", "display", "iso", "precision"), [
    ("+1990-02-05T00:00:00Z/11", "5 February 1990", "1990-02-05", "day"),
    ("+1990-02-05T13:45:00Z/14", "5 February 1990", "1990-02-05", "day"),
    ("+1990-02-00T00:00:00Z/10", "February 1990", "1990-02", "month"),
    ("+1990-00-00T00:00:00Z/9", "1990", "1990", "year"),
])
def test_a_time_is_a_date_at_its_wikidata_precision(form: str, display: str, iso: str, precision: str) -> None:
    typed = answer(Kind.TIME, form, LABELS, {})
    assert (typed.answer, typed.type, typed.value.date, typed.value.date_precision) == (
        display, "date", iso, precision)


def test_a_date_grades_by_value_in_any_form_and_the_day_before_is_wrong() -> None:
    g = gold(Kind.TIME, "+2026-07-19T00:00:00Z/11")
    weekday = date(2026, 7, 19).strftime("%A")
    for right in ("19 July 2026", "2026-07-19", "July 19, 2026", f"{weekday} 19 July 2026", "19th July 2026"):
        assert grade(right, g) == 1.0, right
    wrong_weekday = date(2026, 7, 18).strftime("%A")
    for wrong in ("18 July 2026", "2026-07-18", "July 2026", "2026", f"{wrong_weekday} 19 July 2026"):
        assert grade(wrong, g) == 0.0, wrong
    month = gold(Kind.TIME, "+1990-02-00T00:00:00Z/10")
    assert grade("1990-02", month) == grade("5 February 1990", month) == 1.0
    assert grade("1990", month) == grade("March 1990", month) == 0.0


@pytest.mark.parametrize(("form", "display"), [
    ("+1990-00-00T00:00:00Z/8", "the 1990s"),  # a decade has no ISO form the grader reads
    ("+1700-03-15T00:00:00Z/11/julian", "15 March 1700 (Julian calendar)"),  # nor a Julian date
    ("-0044-03-15T00:00:00Z/11", "15 March 44 BC"),  # nor a year BC
])
def test_a_time_with_no_iso_form_stays_text(form: str, display: str) -> None:
    typed = answer(Kind.TIME, form, LABELS, {})
    assert (typed.answer, typed.type, typed.value.date) == (display, "text", None)


def test_strings_and_monolingual_text_are_text() -> None:
    assert (answer(Kind.STRING, "AB-12", LABELS, {}).type, answer(Kind.MONOLINGUAL, "Rika Clube@pt", LABELS, {}).answer,
            answer(Kind.MONOLINGUAL, "Rika Clube@pt", LABELS, {}).type) == ("text", "Rika Clube", "text")


# The demo's rows -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    out = tmp_path_factory.mktemp("demo")
    run(DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2", out)
    return pl.read_parquet(out / "questions.parquet")


def _row(demo: pl.DataFrame, question: str) -> dict[str, Any]:
    (row,) = demo.filter(pl.col("question") == question).iter_rows(named=True)
    return row


def _gold(row: dict[str, Any]) -> Gold:
    return Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])


@pytest.mark.slow
def test_the_demo_population_is_a_number(demo: pl.DataFrame) -> None:
    row = _row(demo, "What is the population of Port Alder?")  # no unit to say: a count
    assert (row["answer"], row["answer_type"]) == ("163,900", "number")
    assert (row["answer_value"]["number"], row["answer_value"]["precision"], row["answer_value"]["unit"]) == (
        "163900", 0, None)
    g = _gold(row)
    assert grade("163900", g) == grade("163 900", g) == grade("163,900.0", g) == 1.0
    assert grade("163,901", g) == grade("151,200", g) == 0.0  # the census figure T0 had is wrong now


@pytest.mark.slow
def test_the_demo_event_date_is_a_date_to_the_day(demo: pl.DataFrame) -> None:
    row = _row(demo, "When did Atlantic Cup 2026 take place?")
    assert (row["answer"], row["answer_type"], row["answer_value"]["date"], row["answer_value"]["date_precision"]) == (
        "19 July 2026", "date", "2026-07-19", "day")
    g = _gold(row)
    assert grade("2026-07-19", g) == grade("July 19, 2026", g) == grade("Sunday, 19 July 2026", g) == 1.0
    assert grade("18 July 2026", g) == grade("July 2026", g) == 0.0


@pytest.mark.slow
def test_the_demo_entities_carry_their_wikidata_aliases(demo: pl.DataFrame) -> None:
    raw = {e["id"]: e for e in read_entities(DEMO / "wikidata-t1.json.bz2")}
    entities = demo.filter(pl.col("answer_id").str.contains(r"^Q[0-9]+$"))
    assert entities.height == demo.height - 2  # all but the population and the date
    for row in entities.iter_rows(named=True):
        english = [a["value"] for a in (raw[row["answer_id"]].get("aliases") or {}).get("en", [])]
        assert (row["answer_type"], row["answer_aliases"]) == ("entity", english), row["question"]
        g = _gold(row)
        assert all(grade(form, g) == 1.0 for form in (row["answer"], *english)), row["question"]
    won = _gold(_row(demo, "Which association football club won Atlantic Cup 2026?"))
    assert grade("Riyadh Falcons", won) == grade("the Falcons FC", won) == 1.0
    assert grade("Serrano Atlético", won) == grade("Falcons", won) == 0.0
    coach = _gold(_row(demo, "Who is the head coach of Riyadh Falcons FC?"))
    assert grade("Tomek Wielki", coach) == 1.0 and grade("Samir Haddad", coach) == 0.0  # T0's coach
    assert sum(1 for a in entities["answer_aliases"] if len(a)) == 2  # the two demo answers Wikidata gives aliases
