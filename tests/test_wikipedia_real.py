"""The Wikipedia template path on real articles' infobox wikitext (tests/fixtures/wikipedia/real_infoboxes.xml: the
United Kingdom, Toronto, Andorra, Cape Town and Alsea, copied from public repositories that keep Wikipedia text as
test data; its header says where from), each question kept with a reviewer's verdict.

The verdicts are a reviewer's reading of each question against its answer (issue 21): "ship", or "send back" and
why. `V4` is what wikipedia_infobox_template_v4 wrote for the same change (main 09b4059), with its verdict.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from timelyqa.quality import judge
from timelyqa.rewards import Gold, grade
from timelyqa.wikipedia.gate import RULES
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.questions import GENERATOR, subject, template_question

REAL = Path(__file__).resolve().parent / "fixtures" / "wikipedia" / "real_infoboxes.xml"
WINDOW = Settings(start=datetime(2014, 11, 25, tzinfo=UTC), end=datetime(2024, 12, 31, tzinfo=UTC))

# page: (key, question, answer, verdict, what v4 asked, v4's verdict)
REVIEW = {
    "United Kingdom": ("leader_name2", "Who is the Prime Minister of the United Kingdom?", "Theresa May", "ship",
                       "Who is the Prime Minister of United Kingdom?",
                       "send back: 'of United Kingdom' wants its article, as the box's linking_name says"),
    "Toronto": ("leader_name", "Who is the Mayor of Toronto?", "John Tory", "ship",
                "Who is the Mayor of Toronto?", "ship"),
    "Andorra": ("leader_name1", "Who are the Co-Princes of Andorra?", "Joan Enric Vives Sicília, Emmanuel Macron",
                "ship", "Who is the Co-Princes of Andorra?", "send back: two co-princes asked with 'is'"),
    "Cape Town": ("leader_name1", "Who is the Mayor of Cape Town?", "Dan Plato", "ship",
                  "Who is the Mayor of Cape Town?", "ship"),
    "Alsea (company)": ("revenue", "What is the revenue of Alsea?",
                        "US$ 1,714 million (2014), US$ 1,230 million (2013)",
                        "send back: the answer is the box's series of yearly figures, not the current revenue "
                        "(US$ 1,714 million, 2014); the question is fine",
                        "What is the revenue of Alsea (company)?",
                        "send back: the disambiguator read as part of the name, and the series as the answer"),
}


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Every question the template wrote, released or sent back by the gate (with its reason), and the manifest."""
    out = tmp_path_factory.mktemp("real")
    manifest = run(REAL, out, WINDOW).model_dump(mode="json")
    rows = {r["page_title"]: {**r, "gate": None} for r in pl.read_parquet(out / "questions.parquet").to_dicts()}
    for held in pl.read_parquet(out / "rejected.parquet").filter(pl.col("stage") == "quality").to_dicts():
        item = json.loads(held["item"]) if isinstance(held["item"], str) else held["item"]
        rows[item["page"]] = {**item, "infobox_key": item["key"], "gate": held["reason"]}
    return rows, manifest


def test_the_fixture_says_where_each_page_came_from() -> None:
    head = REAL.read_text(encoding="utf-8").split("-->", 1)[0]
    for title in REVIEW:
        entry = re.search(rf'"{re.escape(title)}": (?P<repo>[\w.-]+/[\w.-]+), (?P<path>\S+), commit\s+(?P<sha>\w+)',
                          head)
        assert entry and re.fullmatch(r"[0-9a-f]{40}", entry["sha"]), title
    assert "CC BY-SA" in head


def test_each_real_change_gives_the_question_the_review_expects(released: Any) -> None:
    rows, manifest = released
    assert sorted(rows) == sorted(REVIEW)
    for title, (key, question, answer, *_rest) in REVIEW.items():
        row = rows[title]
        assert (row["infobox_key"], row["question"], row["answer"]) == (key, question, answer), title
        assert row.get("generator", GENERATOR) == GENERATOR == "wikipedia_infobox_template_v5"
    # What the reviewer sends back the gate sends back, with its reason; the rest ships.
    shipped = [t for t, review in REVIEW.items() if review[3] == "ship"]
    assert {t: r["gate"] for t, r in rows.items()} == {t: (None if t in shipped else "answer_is_series")
                                                       for t in REVIEW}
    assert manifest["counts"]["questions_gated"] == len(shipped)
    assert manifest["counts"]["questions_written"] == len(REVIEW)


def test_every_shipped_question_passes_the_gate_and_differs_from_a_sent_back_v4(released: Any) -> None:
    rows, _ = released
    for title, (_, question, _answer, verdict, v4, v4_verdict) in REVIEW.items():
        if verdict == "ship":
            assert judge(rows[title], RULES) is None, title
        if v4_verdict.startswith("send back") and "question is fine" not in verdict:
            assert question != v4, title


def test_a_party_in_parentheses_is_an_alias_and_several_holders_are_a_list(released: Any) -> None:
    rows, _ = released
    plato = rows["Cape Town"]
    assert plato["answer_type"] == "entity" and "Dan Plato (DA)" in plato["answer_aliases"]
    gold = Gold.of(plato["answer"], plato["answer_aliases"], plato["answer_type"], plato["answer_value"])
    assert grade("Dan Plato", gold) == grade("Dan Plato (DA)", gold) == 1.0
    assert grade("Patricia de Lille", gold) == 0.0
    princes = rows["Andorra"]
    assert princes["answer_type"] == "list"
    assert princes["answer_value"]["items"] == ["Joan Enric Vives Sicília", "Emmanuel Macron"]


@pytest.mark.parametrize(("title", "box", "named"), [
    ("United Kingdom", {"linking_name": "the United Kingdom", "common_name": "United Kingdom"}, "the United Kingdom"),
    ("Toronto", {"name": "Toronto", "official_name": "City of Toronto"}, "Toronto"),
    ("Alsea (company)", {"name": "Alsea, S.A.B. de C.V."}, "Alsea"),
    # A disambiguator the box does not drop stays: nothing says "Mercury" alone names the page.
    ("Mercury (planet)", {}, "Mercury (planet)"),
    # A disambiguator that is a name tells two subjects apart: it stays, whatever the box calls the subject.
    ("Athens (Georgia)", {"name": "Athens"}, "Athens (Georgia)"),
    # A title that has its article already, and a linking name that is more than the title, are left as they are.
    ("The Gambia", {"linking_name": "the Gambia"}, "The Gambia"),
    ("Valmora", {"linking_name": "the Valmora region"}, "Valmora"),
])
def test_a_question_names_the_subject_as_english_does(title: str, box: dict[str, str], named: str) -> None:
    assert subject(title, box) == named


@pytest.mark.parametrize(("box", "answer_type", "question"), [
    ({"leader_title1": "Co-Princes"}, "list", "Who are the Co-Princes of Andorra?"),
    ({"leader_title1": "Representatives"}, "text", "Who are the Representatives of Andorra?"),
    ({"leader_title1": "Prime Minister"}, "entity", "Who is the Prime Minister of Andorra?"),
    ({"leader_title1": "General Syndic"}, "entity", "Who is the General Syndic of Andorra?"),
])
def test_an_office_several_hold_is_asked_who_are(box: dict[str, str], answer_type: str, question: str) -> None:
    assert template_question("Andorra", "leader_name1", box, answer_type) == question


@pytest.mark.parametrize(("answer", "sent_back"), [
    ("US$ 1,714 million (2014), US$ 1,230 million (2013)", True),  # Alsea's revenue, as its box gives it
    ("US$ 1,714 million (2014)", False),  # one dated figure says which it is
    ("Dan Plato (DA)", False),
    ("51,200 (2019), 49,000 (Dec. 2012)", True),
])
def test_a_series_of_dated_figures_is_sent_back(answer: str, sent_back: bool) -> None:
    from timelyqa.wikipedia.gate import InfoboxGateReject, answer_is_series  # noqa: PLC0415

    row = {"question": "What is the revenue of Alsea?", "answer": answer}
    assert answer_is_series(row) == (InfoboxGateReject.ANSWER_IS_SERIES if sent_back else None)
