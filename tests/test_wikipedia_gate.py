"""The Wikipedia source's question-quality gate and the templates that pass it: on real articles' infoboxes (Albania's
numbered leaders, Alberta's premier with a party, tests/fixtures/wikipedia/leaders.xml), on the rows the old
generator wrote for them, and on the demo's release."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from timelyqa.quality import COMMON, QualityReject, judge
from timelyqa.rewards import Gold, grade
from timelyqa.wikipedia.answer import Rule, values_on
from timelyqa.wikipedia.gate import RULES, InfoboxGateReject, numbered_label
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.questions import GENERATOR, label
from timelyqa.wikipedia.source import DEMO, DEMO_WINDOW, SOURCE
from timelyqa.wikipedia.writers import TemplateWriter, Unit, Written, _form

ROOT = Path(__file__).resolve().parent.parent
LEADERS = ROOT / "tests" / "fixtures" / "wikipedia" / "leaders.xml"
WINDOW = Settings(start=datetime(2022, 7, 1, tzinfo=UTC), end=datetime(2022, 10, 31, tzinfo=UTC))


def row(question: str, answer: str, key: str, answer_type: str = "entity", **value: Any) -> dict[str, Any]:
    return {"question": question, "answer": answer, "answer_type": answer_type, "answer_value": value,
            "infobox_key": key}


# (rule, row, verdict): what wikipedia_infobox_template_v3 wrote for the real articles (issue 21) and what v4 writes,
# with the reviewer's verdict.
CASES = [
    (numbered_label, row("What is the leader name 1 of Albania?", "Bajram Begaj", "leader_name1"),
     InfoboxGateReject.NUMBERED_LABEL),
    (numbered_label, row("Who is the President of Albania?", "Bajram Begaj", "leader_name1"), None),
    (numbered_label, row("What is the goals 1 of Dario Mesk?", "53", "goals1", "number", number="53"),
     InfoboxGateReject.NUMBERED_LABEL),
    (numbered_label, row("How many goals has Mateo Ferreira scored for Valmora CF?", "97", "goals2", "number",
                         number="97"), None),
    (numbered_label, row("Who is the Mayor of Port Alder?", "Daniel Okafor", "leader_name"), None),
]


@pytest.mark.parametrize(("rule", "candidate", "verdict"), CASES, ids=[f"{c[0].__name__}-{i}" for i, c in
                                                                       enumerate(CASES)])
def test_the_sources_rule_gives_the_reviewers_verdict(rule: Any, candidate: dict[str, Any], verdict: Any) -> None:
    assert rule(candidate) == verdict


def test_the_old_questions_of_real_articles_are_sent_back_and_the_new_ones_pass() -> None:
    old = [row("What is the leader name 1 of Albania?", "Bajram Begaj", "leader_name1"),
           row("What is the premier of Alberta?", "Danielle Smith", "Premier")]
    assert [judge(r, RULES) for r in old] == [InfoboxGateReject.NUMBERED_LABEL, QualityReject.WHAT_FOR_PERSON]


@pytest.fixture(scope="module")
def leaders(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    out = tmp_path_factory.mktemp("leaders")
    manifest = run(LEADERS, out, WINDOW).model_dump(mode="json")
    return pl.read_parquet(out / "questions.parquet"), pl.read_parquet(out / "rejected.parquet"), manifest


def test_numbered_keys_read_with_their_title_and_people_are_asked_who(leaders: Any) -> None:
    questions, _, manifest = leaders
    asked = {r["infobox_key"]: r for r in questions.iter_rows(named=True)}
    assert asked["leader_name1"]["question"] == "Who is the President of Albania?"
    assert asked["leader_name1"]["answer"] == "Bajram Begaj"
    assert asked["Premier"]["question"] == "Who is the premier of Alberta?"
    assert {r["generator"] for r in asked.values()} == {GENERATOR}
    assert all(judge(r, RULES) is None for r in asked.values())
    assert manifest["counts"]["questions_gated"] == questions.height == 2


def test_a_party_in_parentheses_is_an_alias_not_the_answer(leaders: Any) -> None:
    questions, _, _ = leaders
    premier = questions.filter(pl.col("infobox_key") == "Premier").row(0, named=True)
    assert (premier["answer"], premier["answer_type"]) == ("Danielle Smith", "entity")
    assert "Danielle Smith (UCP)" in premier["answer_aliases"]
    gold = Gold.of(premier["answer"], premier["answer_aliases"], premier["answer_type"], premier["answer_value"])
    assert grade("Danielle Smith", gold) == 1.0 and grade("Danielle Smith (UCP)", gold) == 1.0
    assert grade("Jason Kenney", gold) == 0.0


def test_the_gate_drops_what_any_writer_gets_wrong_and_counts_it(tmp_path: Path) -> None:
    """A writer that still reads keys by their label (as v3 and a careless model did) loses those rows at stage
    `quality`, kept aside with the reason and counted in the manifest; the funnel line says how many passed."""

    class LabelWriter(TemplateWriter):
        generator = "label_writer_v1"

        def write(self, units: list[Unit]) -> list[Written]:  # type: ignore[override]
            return [_form(u, f"What is the {label(u.key)} of {u.title}?", self.generator) for u in units]

    manifest = run(LEADERS, tmp_path, WINDOW, writer=LabelWriter()).model_dump(mode="json")
    rejected = pl.read_parquet(tmp_path / "rejected.parquet").filter(pl.col("stage") == "quality")
    assert sorted(rejected["reason"]) == ["numbered_label", "what_for_person"]
    assert {json.loads(i)["key"] for i in rejected["item"]} == {"leader_name1", "Premier"}
    assert manifest["rejects"]["numbered_label"] == manifest["rejects"]["what_for_person"] == 1
    assert manifest["counts"]["questions_gated"] == 0 and manifest["counts"]["questions"] == 0
    gate = next(s for s in SOURCE.stages if s.name == "quality")
    assert gate.counts == ("questions_gated",)
    assert [s.name for s in SOURCE.stages].index("quality") == [s.name for s in SOURCE.stages].index("check") - 1


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, dict[str, Any]]:
    out = tmp_path_factory.mktemp("demo")
    manifest = run(ROOT / DEMO[0], out, Settings(start=DEMO_WINDOW[0], end=DEMO_WINDOW[1])).model_dump(mode="json")
    return pl.read_parquet(out / "questions.parquet"), manifest


def test_every_demo_question_passes_the_gate(demo: Any) -> None:
    questions, manifest = demo
    assert questions.height >= 10
    assert [judge(r, COMMON) for r in questions.iter_rows(named=True)] == [None] * questions.height
    assert [judge(r, RULES) for r in questions.iter_rows(named=True)] == [None] * questions.height
    assert manifest["counts"]["questions_gated"] == manifest["counts"]["questions_written"]
    people = [r for r in questions.iter_rows(named=True) if r["infobox_key"] in ("leader_name", "manager")]
    assert people and all(r["question"].startswith("Who ") for r in people)


def test_the_demo_wiki_agrees_with_the_news_on_harriet_lowe() -> None:
    """The news demo has Harriet Lowe elected mayor of Valmora on 14 July 2026, taking office on 1 September: the
    Wikipedia demo's Valmora has her as mayor from then on, and Port Alder never does."""
    rules = [Rule(page="Valmora", key="leader_name"), Rule(page="Port Alder", key="leader_name")]
    moments = [datetime(2026, m, 2, tzinfo=UTC) for m in range(1, 13)]
    found, _ = values_on(ROOT / DEMO[0], rules, moments)
    valmora, port_alder = ([v.text if v else None for v in found[r]] for r in rules)
    assert valmora[8:] == ["Harriet Lowe"] * 4 and "Harriet Lowe" not in valmora[:8]
    assert "Harriet Lowe" not in port_alder and port_alder[-1] == "Daniel Okafor"
    news = (ROOT / "scripts" / "make_demo_news.py").read_text()
    assert "Harriet Lowe is elected [[Mayor of Valmora" in news.replace("[[Harriet Lowe]]", "Harriet Lowe")
