"""Typed Wikipedia answers: the renderer says what kind of answer each infobox value is, rows and answers on other
dates carry it, questions say the unit, and the one grader takes the gold in its other forms and refuses wrong ones."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from timelyqa.rewards import Gold, grade
from timelyqa.wikipedia.answer import Rule
from timelyqa.wikipedia.infobox import parse_infobox
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.questions import template_question
from timelyqa.wikipedia.resolve import answer_questions, read_questions
from timelyqa.wikipedia.source import DEMO, DEMO_WINDOW
from timelyqa.wikipedia.typed import answer, read
from timelyqa.wikipedia.writers import TemplateWriter, Unit

ROOT = Path(__file__).resolve().parent.parent


def _value(markup: str):
    box = parse_infobox("{{Infobox thing\n| key = " + markup + "\n| other = x\n}}")
    assert box is not None
    return box.values["key"]


@pytest.mark.parametrize(("markup", "text", "kind", "extra"), [
    ("{{start date|2026|11|13|df=y}}<ref>{{cite web|title=x}}</ref>", "2026-11-13", "date", {"date": "2026-11-13"}),
    ("{{birth date and age|1995|2|9}}", "1995-02-09", "date", {"date": "1995-02-09"}),
    ("{{start date|2021|7}}", "2021-07", "date", {"date": "2021-07"}),
    ("{{birth year and age|1964}}", "1964", "date", {"date": "1964"}),
    ("5 May 2020", "5 May 2020", "date", {"date": "2020-05-05"}),
    ("March 2024", "March 2024", "date", {"date": "2024-03"}),
    ("[[Lunetta Calcio Femminile|Lunetta Calcio]]", "Lunetta Calcio", "entity", {"link": "Lunetta Calcio Femminile"}),
    ("{{flagicon|ESP}} [[Spain]]", "Spain", "entity", {"link": "Spain"}),
    ("''[[Paris#History|Paris]]''", "Paris", "entity", {"link": "Paris"}),
    ("{{nowrap|[[Ana Kovač]]}}", "Ana Kovač", "entity", {"link": "Ana Kovač"}),
    ("1,219,530<ref>x</ref>", "1,219,530", "number", {}),
    ("10", "10", "number", {}),
    ("{{formatnum:48500}}", "48500", "number", {}),
    ("$38.9 million", "$38.9 million", "quantity", {}),
    ("US$5&nbsp;billion", "US$5 billion", "quantity", {}),
    ("{{increase}} 4.2%", "4.2%", "quantity", {}),
    ("{{convert|61.4|km2|sqmi}}", "61.4 km2", "quantity", {"unit": "km2"}),
    ("{{ubl|[[Ravi Menon]] ([[Chief executive officer|CEO]])|Alan Pryce (chairman)}}",
     "Ravi Menon (CEO), Alan Pryce (chairman)", "list", {"items": ("Ravi Menon (CEO)", "Alan Pryce (chairman)")}),
    ("{{plainlist|\n* [[Windows]]\n* [[macOS]]\n}}", "Windows, macOS", "list", {"items": ("Windows", "macOS")}),
    ("Alpha<br />Beta<br>Gamma", "Alpha, Beta, Gamma", "list", {"items": ("Alpha", "Beta", "Gamma")}),
    ("[[Ravi Menon]] (CEO), [[Alan Pryce]] (chairman)", "Ravi Menon (CEO), Alan Pryce (chairman)", "list",
     {"items": ("Ravi Menon (CEO)", "Alan Pryce (chairman)")}),
    ("US$1 billion<br />(2025)", "US$1 billion, (2025)", "text", {}),  # a year under the figure is no item
    ("4.3.1", "4.3.1", "text", {}),
    ("[[2025–26 Liga Portugal 2|Liga Portugal 2]], 2nd of 18 (promoted)",
     "Liga Portugal 2, 2nd of 18 (promoted)", "text", {}),
    ("[[Atalanta BC|Atalanta]] (on loan)", "Atalanta (on loan)", "text", {}),
    ("{{nowrap|{{formatnum:1234}} [[UTC]]}}", "1234 UTC", "text", {}),
    ("[[File:Crest.svg|20px]]", "File:Crest.svg", "text", {}),
])
def test_the_renderer_says_what_kind_of_answer_the_markup_makes(markup: str, text: str, kind: str,
                                                                extra: dict) -> None:
    value = _value(markup)
    assert value.text == text, "the text a reader sees is what it was before types"
    assert value.kind == kind
    for name, want in extra.items():
        assert getattr(value, name) == want


def test_a_value_of_a_kind_its_text_is_not_after_all_is_text() -> None:
    seats = read("48,500 seats")
    assert seats.kind == "quantity" and answer(seats).type == "text", "no units library knows 'seats'"
    one = read("{{ubl|[[Ravi Menon]]}}")
    assert answer(one).type == "entity", "one item is no list"


def test_typed_answers_hold_their_values_and_aliases() -> None:
    gross = answer(read("$38.9 million"))
    assert (gross.type, gross.value.unit, gross.value.scale, Decimal(gross.value.number)) == \
        ("quantity", "USD", 6, Decimal("38900000"))
    club = answer(read("[[Lunetta Calcio Femminile|Lunetta Calcio]]"))
    assert (club.type, club.answer, club.aliases) == ("entity", "Lunetta Calcio", ("Lunetta Calcio Femminile",))
    released = answer(read("{{start date|2026|11|13}}"))
    assert (released.value.date, released.value.date_precision) == ("2026-11-13", "day")
    area = answer(read("{{convert|61.4|km2}}"))
    assert (area.value.unit, Decimal(area.value.number)) == ("km**2", Decimal("61.4"))


def test_the_template_writer_says_the_unit_of_the_answer() -> None:
    def unit(key: str, phrase: str) -> Unit:
        return Unit(title="The Lunetta Affair", url="u", key=key, value="$38.9 million", infobox={}, first_paragraph="",
                    rule="{}", where="dump:x", unit_phrase=phrase)

    gross, area = TemplateWriter().write([unit("gross", "in millions of US dollars"),
                                          unit("area_total_km2", "in square kilometres")])
    assert gross.kept and gross.question == "What is the box office gross of The Lunetta Affair, in millions of US " \
                                            "dollars?"
    assert area.question == template_question("The Lunetta Affair", "area_total_km2"), "said once"


# ---------------------------------------------------------------- the demo's rows


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wikipedia-demo")
    run(ROOT / DEMO[0], out, Settings(start=DEMO_WINDOW[0], end=DEMO_WINDOW[1]))
    return out


@pytest.fixture(scope="module")
def rows(demo: Path) -> dict[str, dict]:
    frame = pl.read_parquet(demo / "questions.parquet")
    return {row["question"]: row for row in frame.iter_rows(named=True)}


def _grade(row: dict, prediction: str) -> float:
    return grade(prediction, Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"]))


def _day(iso: str) -> date:
    return date.fromisoformat(iso)


def test_the_demo_rows_carry_the_type_their_wikitext_makes(rows: dict[str, dict]) -> None:
    # The demo's wikitext: population_total = 1,219,530; released = {{start date|2026|11|13}};
    # key_people = {{ubl|[[Ravi Menon]] ([[...|CEO]])|Alan Pryce (chairman)}}; gross = $38.9 million;
    # currentclub = [[Lunetta Calcio Femminile|Lunetta Calcio]]; latest release version = 4.3.1.
    population = rows["What is the total population of Campo Alto?"]
    assert (population["answer_type"], Decimal(population["answer_value"]["number"])) == ("number", 1219530)
    released = rows["When was Salt and Signal released?"]
    assert (released["answer_type"], released["answer_value"]["date"]) == ("date", "2026-11-13")
    people = rows["Who are the key people of Northwind Analytics?"]
    assert people["answer_type"] == "list"
    assert people["answer_value"]["items"] == ["Ravi Menon (CEO)", "Alan Pryce (chairman)"]
    gross = rows["What is the box office gross of The Lunetta Affair, in millions of US dollars?"]
    assert gross["answer"] == "$38.9 million" and gross["answer_type"] == "quantity"
    assert (gross["answer_value"]["unit"], gross["answer_value"]["scale"]) == ("USD", 6)
    assert Decimal(gross["answer_value"]["number"]) == Decimal("38.9e6")
    club = rows["Which club does Aline Costa play for?"]
    assert club["answer_type"] == "entity" and club["answer_aliases"] == ["Lunetta Calcio Femminile"]
    version = rows["What is the latest release version of Tallyframe?"]
    assert (version["answer"], version["answer_type"]) == ("4.3.1", "text")
    for row in rows.values():
        if row["answer_type"] == "quantity" or row["answer_value"]["scale"]:
            assert row["question"].endswith(", in millions of US dollars?"), row["question"]


def _other_forms(row: dict) -> tuple[list[str], list[str]]:
    """The gold in other accepted forms, and wrong values in the right forms, from the row's own typed value."""
    kind, value = row["answer_type"], row["answer_value"]
    if kind in ("number", "quantity"):
        number = Decimal(value["number"])
        step = Decimal(1).scaleb(value["precision"])
        scaled = number.scaleb(-(value["scale"] or 0)).normalize()
        right = [format(number, "f"), f"{number:,f}", format(scaled, "f")]
        wrong = [f"{number + step:,f}", format((number - step).scaleb(-(value["scale"] or 0)).normalize(), "f")]
        if value["unit"] == "USD":
            right += [f"{scaled} million US dollars", f"US${number:,f}"]
            wrong += [f"{scaled} million euros"]
        return right, wrong
    if kind == "date":
        day = _day(value["date"])
        return ([f"{day:%A} {day.day} {day:%B %Y}", f"{day:%B} {day.day}, {day.year}", day.isoformat()],
                [(day - timedelta(days=1)).isoformat(), f"{day.day - 1} {day:%B %Y}"])
    if kind == "list":
        items = value["items"]
        bare = [item.split(" (")[0] for item in items]
        return ([" and ".join(reversed(items)), "; ".join(reversed(bare))], [items[0], ", ".join([*items, "Ana Lima"])])
    if kind == "entity":
        return [row["answer"].upper(), *row["answer_aliases"]], ["Lunetta Calcio Maschile" if "Lunetta" in
                                                                 row["answer"] else "Lunetta Calcio"]
    return [row["answer"] + "."], [row["answer"] + "0"]


def test_the_gold_in_other_forms_scores_one_and_a_wrong_value_zero(rows: dict[str, dict]) -> None:
    assert {row["answer_type"] for row in rows.values()} == {"number", "quantity", "date", "list", "entity", "text"}
    for row in rows.values():
        right, wrong = _other_forms(row)
        assert [(form, _grade(row, form)) for form in right] == [(form, 1.0) for form in right], row["question"]
        assert [(form, _grade(row, form)) for form in wrong] == [(form, 0.0) for form in wrong], row["question"]


def test_the_answer_on_another_date_is_typed_like_the_row(demo: Path) -> None:
    questions = read_questions(demo)
    when = datetime(2026, 11, 25, tzinfo=UTC)
    got = answer_questions(questions, when, dump=ROOT / DEMO[0])
    by_question = {row["question"]: row for row in got.rows.iter_rows(named=True)}
    # The demo's later revisions: gross = $41.2 million (20 November), latest release version = 4.4.0.
    gross = by_question["What is the box office gross of The Lunetta Affair, in millions of US dollars?"]
    assert (gross["answer"], gross["answer_type"], gross["answer_value"]["unit"]) == ("$41.2 million", "quantity",
                                                                                      "USD")
    assert _grade(gross, "41.2") == 1.0 and _grade(gross, "38.9") == 0.0
    version = by_question["What is the latest release version of Tallyframe?"]
    assert (version["answer"], version["answer_type"]) == ("4.4.0", "text")
    released = by_question["When was Salt and Signal released?"]
    assert released["answer_type"] == "date" and _grade(released, "13 November 2026") == 1.0
    stored = pl.read_parquet(demo / "questions.parquet")
    same = {r["question"]: r for r in stored.iter_rows(named=True)}
    for question, row in by_question.items():
        if not row["changed"]:
            assert (row["answer_type"], row["answer_value"], row["answer_aliases"]) == \
                (same[question]["answer_type"], same[question]["answer_value"], same[question]["answer_aliases"])
    assert Rule.from_json(stored["recompute"][0]).parser == "wikipedia_infobox_parser_v1", "the text reads as before"
