"""Typed answers as the sources build them: the value the grader reads, the aliases string-matching consumers read,
the phrase the question needs, and no alias that is another row's answer to the same question."""

from __future__ import annotations

import polars as pl
import pytest

from timelyqa import answers
from timelyqa.answers import NotTyped
from timelyqa.record import AnswerType
from timelyqa.rewards import Gold, grade


@pytest.mark.parametrize(("typed", "kind", "value", "phrase"), [
    (answers.quantity("1.92 m"), "quantity", {"number": "1.92", "precision": -2, "unit": "m"}, "in metres"),
    (answers.quantity("18 million", "EUR"), "quantity",
     {"number": "18000000", "precision": 6, "unit": "EUR", "scale": 6}, "in millions of euros"),
    (answers.quantity("14 °C"), "quantity", {"number": "14", "precision": 0, "unit": "°C"}, "in degrees Celsius"),
    (answers.quantity("£26,900"), "quantity", {"number": "26900", "precision": 0, "unit": "GBP"}, "in pounds"),
    (answers.quantity("54%"), "quantity", {"number": "54", "precision": 0, "unit": "%"}, "in percent"),
    (answers.number("163,900"), "number", {"number": "163900", "precision": 0}, ""),
    (answers.number("1.2 billion"), "number", {"number": "1200000000", "precision": 8, "scale": 9}, "in billions"),
    (answers.from_decimal("+1500", "square kilometre"), "quantity",
     {"number": "1500", "precision": 0, "unit": "km**2"}, "in square kilometres"),
    (answers.from_decimal("+1.85", "metre"), "quantity", {"number": "1.85", "precision": -2, "unit": "m"},
     "in metres"),
    # Wikidata's unit labels: a currency by its full name, a unit named in several words.
    (answers.from_decimal("+38900000", "United States dollar"), "quantity",
     {"number": "38900000", "precision": 0, "unit": "USD"}, "in US dollars"),
    (answers.from_decimal("+12.5", "kilowatt hour"), "quantity", {"number": "12.5", "precision": -1, "unit": "kWh"},
     "in kilowatt hours"),
    (answers.from_decimal("+4.2", "light-year"), "quantity", {"number": "4.2", "precision": -1, "unit": "ly"},
     "in light years"),
    (answers.date("Thursday 5 November 2026"), "date", {"date": "2026-11-05", "date_precision": "day"}, ""),
    (answers.date("February 1990"), "date", {"date": "1990-02", "date_precision": "month"}, ""),
    (answers.listing(["Alder Weir", "Corran Sluice"]), "list", {"items": ["Alder Weir", "Corran Sluice"]}, ""),
])
def test_a_typed_answer_carries_the_value_the_grader_reads(typed: answers.Typed, kind: str, value: dict[str, object],
                                                            phrase: str) -> None:
    assert typed.type == kind
    assert typed.value.model_dump(exclude_none=True) == value
    assert answers.unit_phrase(typed.value) == phrase
    row = typed.row()
    gold = Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])
    # Every alias is a right answer by the grader's own rules, so string matching and grading never disagree.
    assert [grade(alias, gold) for alias in [typed.answer, *typed.aliases]] == [1.0] * (1 + len(typed.aliases))


def test_aliases_name_the_bare_number_the_unit_in_words_and_dates_without_the_weekday() -> None:
    assert {"1.92", "1.92 metres"} <= set(answers.quantity("1.92 m").aliases)
    assert {"18", "18,000,000", "€18 million", "18 million euros"} <= set(answers.quantity("18 million", "EUR").aliases)
    assert {"5 November 2026", "2026-11-05", "November 5, 2026"} <= set(answers.date("Thursday 5 November 2026").aliases)
    assert answers.entity("Ravi Menon", ["R. Menon", "Ravi Menon"]).aliases == ("R. Menon",)


@pytest.mark.parametrize(("build", "message"), [
    (lambda: answers.number("4.3.1"), "not a number: '4.3.1'"),
    (lambda: answers.number("14 °C"), "a number with a unit is a quantity: '14 °C'"),
    (lambda: answers.quantity("12 widgets"), "no unit pint knows in '12 widgets'"),
    (lambda: answers.quantity("1.92 m", "kg"), "'1.92 m' is not in 'kg'"),
    (lambda: answers.date("Mondays 09:00-11:00"), "not a date: 'Mondays 09:00-11:00'"),
    (lambda: answers.listing(["Harrow Lock"]), "a list needs two items or more: ['Harrow Lock']"),
    (lambda: answers.typed("percentage", "54%"), "unknown answer type 'percentage'"),
])
def test_a_display_that_is_not_of_the_type_the_source_said_is_refused_with_the_reason(build, message: str) -> None:
    with pytest.raises(NotTyped) as caught:
        build()
    assert str(caught.value).startswith(message)


def test_typed_dispatches_on_the_type_the_source_knows() -> None:
    assert answers.typed("quantity", "1.92", unit="m").value.unit == "m"
    assert answers.typed("list", "Alder Weir; Corran Sluice").value.items == ["Alder Weir", "Corran Sluice"]
    assert answers.typed("entity", "Port Alder", aliases=["Port Alder, Lakeland"]).type == AnswerType.ENTITY
    assert answers.typed("text", "Room L.012").type == AnswerType.TEXT


def test_no_alias_is_the_different_answer_of_another_row_asking_the_same_question() -> None:
    """The same question at two clocks (the official site's river level) and at two dates: an alias of one row that is
    the other row's answer would reward the stale answer in any string-matching consumer."""
    frame = pl.DataFrame({
        "question": ["Current time: 2026-11-15 09:00 (Europe/London). What was the highest level, in metres?",
                     "Current time: 2026-11-16 09:00 (Europe/London). What was the highest level, in metres?",
                     "Who coaches Riyadh Falcons FC?", "Who coaches Riyadh Falcons FC?",
                     "How many members does the lab have?"],
        "answer": ["1.70 m", "1.92 m", "Tomasz Wielki", "Mateo Ferreira", "1.92"],
        "answer_aliases": [["1.70", "1.92 m"], ["1.92", "1.70 m"], ["T. Wielki", "Mateo Ferreira"], ["M. Ferreira"],
                           []],
    })
    kept = answers.drop_conflicting_aliases(frame).get_column("answer_aliases").to_list()
    # "1.92" stays: the members question is another question, whose answer may equal it.
    assert kept == [["1.70"], ["1.92"], ["T. Wielki"], ["M. Ferreira"], []]
