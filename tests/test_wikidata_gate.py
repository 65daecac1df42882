"""The quality gate in the Wikidata source: its own rules on real rows, the gate between candidates and verification,
and the templates it is the floor of (an L3 hop names nothing twice, a quantity says its unit in words).

Real rows are the demo dumps' (data/demo/), as wikidata_l3_v1 wrote them at main 1367092 and as the source writes
them now; synthesis on the demo needs no SPARQL store, so the fast tests run it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from timelyqa.quality import COMMON, GATE_PASSED, GATE_STAGE, QualityReject, judge
from timelyqa.rewards import normalize
from timelyqa.stages import StageWriter
from timelyqa.wikidata import pipeline
from timelyqa.wikidata.gate import RULES, WikidataQualityReject, item_named_twice, raw_id_in_question
from timelyqa.wikidata.render import phrase
from timelyqa.wikidata.source import SOURCE
from timelyqa.wikidata.values import Kind

DEMO = Path(__file__).parent.parent / "data" / "demo"
V1_L3 = {  # the demo's L3 row as wikidata_l3_v1 wrote it (main 1367092): issue 21's example
    "question": "Which event is in Brazil and is located at a city that is in Brazil?", "answer": "Atlantic Cup 2026",
    "answer_type": "entity", "answer_value": {}, "level": "L3", "generator": "wikidata_l3_v1",
    "query_triples": [["?x", "P17", "Q155"], ["?x", "P276", "?y1"], ["?y1", "P17", "Q155"]]}
L1 = {  # the demo's L1 row of the club's head coach
    "question": "Who is the head coach of Riyadh Falcons FC?", "answer": "Tomasz Wielki", "answer_type": "entity",
    "answer_value": {}, "level": "L1", "generator": "wikidata_l1_v3", "query_triples": [["Q9200003", "P286", "?x"]]}


# The source's own rules, one by one ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("rule", "row", "verdict"), [
    (item_named_twice, V1_L3, QualityReject.ENTITY_NAMED_TWICE),  # Q155 (Brazil) is the object of two triples
    (item_named_twice, L1, None),
    # The same question without the city's hop: each item once.
    (item_named_twice, {**V1_L3, "question": "Which event is located at a city that is in Brazil?",
                        "query_triples": [["?x", "P276", "?y1"], ["?y1", "P17", "Q155"]]}, None),
    # The L1 row as it would read had the club no English label: a reviewer sends it back.
    (raw_id_in_question, {**L1, "question": "Who is the head coach of Q9200003?"},
     WikidataQualityReject.RAW_ID_IN_QUESTION),
    (raw_id_in_question, L1, None),
    # An id-like word that is no id: a product named "Q7X" or a year is not a raw id.
    (raw_id_in_question, {**L1, "question": "Who won the Q7X Cup 2026?"}, None),
])
def test_a_wikidata_rule_gives_the_reviewers_verdict(rule: Any, row: dict[str, Any], verdict: Any) -> None:
    assert rule(row) == verdict


def test_the_gate_runs_the_common_rules_then_the_sources() -> None:
    assert RULES[: len(COMMON)] == COMMON and {raw_id_in_question, item_named_twice} <= set(RULES)
    assert judge(V1_L3, RULES) == QualityReject.ENTITY_NAMED_TWICE
    # Lower-case labels escape the common rule, which reads capitals; the query does not.
    lower = {**V1_L3, "question": "Who works as goalkeeper coach and has a person that works as goalkeeper coach as "
                                  "head coach?",
             "query_triples": [["?x", "P106", "Q9800001"], ["?x", "P286", "?y1"], ["?y1", "P106", "Q9800001"]]}
    assert judge(lower, COMMON) is None
    assert judge(lower, RULES) == QualityReject.ENTITY_NAMED_TWICE


# The gate in the demo's synthesis (no SPARQL store needed) ----------------------------------------------------------

@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, StageWriter]:
    work = tmp_path_factory.mktemp("demo") / "work"
    t0 = pipeline.read_snapshot(DEMO / "wikidata-t0.json.gz", work, "t0", rdf=False)
    t1 = pipeline.read_snapshot(DEMO / "wikidata-t1.json.bz2", work, "t1", rdf=False)
    path = pipeline.synthesize(t1, pipeline.compute_delta(t0, t1, work), work, pipeline.Settings())
    return pl.read_parquet(path), StageWriter.resume(SOURCE, work.parent, work=work)


def test_every_demo_candidate_passes_the_gate(synthesized: tuple[pl.DataFrame, StageWriter]) -> None:
    frame, ledger = synthesized
    assert frame.height >= 15
    failed = [(r["question"], judge(r, RULES)) for r in frame.iter_rows(named=True) if judge(r, RULES) is not None]
    assert not failed
    # Nothing was dropped for it: the templates write what the gate lets through.
    assert ledger.counts[GATE_PASSED] == ledger.counts["rendered"] == frame.height
    assert not [r for r in ledger.rejects.rows if r["stage"] == GATE_STAGE]


def test_the_demo_event_is_asked_through_its_city_without_saying_brazil_twice(
        synthesized: tuple[pl.DataFrame, StageWriter]) -> None:
    frame, _ = synthesized
    event = frame.filter((pl.col("answer") == "Atlantic Cup 2026") & (pl.col("level") == "L3"))
    assert event["question"].to_list() == ["Which event is located at a city that is in Brazil?"]
    assert event["generator"].to_list() == ["wikidata_l3_v2"]
    for row in frame.filter(pl.col("level") != "L1").iter_rows(named=True):
        objects = Counter(o for _, _, o in row["query_triples"] if not o.startswith("?"))
        assert max(objects.values()) == 1, row["question"]
        assert not re.search(r"\b(\w+) and (?:is |has )?\1\b", row["question"]), row["question"]


def test_one_property_says_its_objects_in_one_clause(synthesized: tuple[pl.DataFrame, StageWriter]) -> None:
    frame, _ = synthesized
    questions = frame["question"].to_list()
    assert "Who has played for Riyadh Falcons FC and an association football club that is in Portugal?" in questions
    assert not [q for q in questions if q.count("has played for") > 1]


# The source's funnel ---------------------------------------------------------------------------------------------

def test_the_gate_is_a_stage_before_verification_with_its_reasons() -> None:
    names = [s.name for s in SOURCE.stages]
    assert names.index("render") < names.index(GATE_STAGE) == names.index("verify") - 1
    gate = SOURCE.stages[names.index(GATE_STAGE)]
    assert gate.counts == (GATE_PASSED,)
    reasons = {str(r) for family in gate.reasons for r in family}
    assert {"answer_in_question", "entity_named_twice", "raw_id_in_question"} <= reasons
    render = SOURCE.stages[names.index("render")]
    assert {str(r) for family in render.reasons for r in family} == {"duplicate_question"}


# A quantity in a clause -----------------------------------------------------------------------------------------

LABELS = {"Q11573": "metre", "Q4917": "United States dollar", "Q9999": "zorkmid"}


@pytest.mark.parametrize(("form", "said"), [
    ("+1.85 Q11573", "1.85 metres"),  # v1 wrote "is 1.85 metre tall"
    ("+1 Q11573", "1 metre"),
    ("+2 Q11573", "2 metres"),
    ("+163900", "163,900"),  # a count names no unit
    ("+3 Q9999", "3 zorkmid"),  # a unit pint does not know keeps its label as it is
])
def test_a_clause_says_a_quantity_in_words(form: str, said: str) -> None:
    assert phrase(Kind.QUANTITY, form, LABELS) == said


def test_a_clause_says_a_time_with_its_preposition() -> None:
    assert phrase(Kind.TIME, "+1998-11-30T00:00:00Z/11", {}) == "on 30 November 1998"
    assert phrase(Kind.TIME, "+1998-00-00T00:00:00Z/9", {}) == "in 1998"


# The released demo rows (the whole pipeline, SPARQL on a local Oxigraph) ------------------------------------------

@pytest.mark.slow
def test_every_released_demo_row_passes_the_gate(tmp_path: Path) -> None:
    manifest = pipeline.run(DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2", tmp_path)
    rows = pl.read_parquet(tmp_path / "questions.parquet")
    assert rows.height >= 15 and set(rows["level"]) == {"L1", "L2", "L3"}
    assert [r["question"] for r in rows.iter_rows(named=True) if judge(r, RULES) is not None] == []
    assert [r["question"] for r in rows.iter_rows(named=True)
            if f" {normalize(r['answer'])} " in f" {normalize(r['question'])} "] == []
    assert manifest.counts[GATE_PASSED] >= rows.height
    assert list(manifest.counts).index(GATE_PASSED) < list(manifest.counts).index("verified")
