"""The Wikidata question word follows the answer's type (issue 21): a count is asked "how many", a date "when" (or "on
what date" / "in what year" by its precision when the property has no template of its own), a size by its adjective;
never "What is the employees of X?" or "What is the start time of X?".

Each case is one real Wikidata property, with its English label as Wikidata gives it and a value of its datatype,
run through the synthesizer over a graph small enough to read; the question and the clause are what a reviewer
reads, and each released question passes the gate. The "v4" column is what wikidata_l1_v4 / l2_v3 wrote (main
09b4059) and the reviewer's verdict on it.
"""

from __future__ import annotations

from typing import Any

import pytest

from timelyqa.quality import QualityReject, judge
from timelyqa.wikidata.gate import RULES
from timelyqa.wikidata.graph import Graph, Key, Triple
from timelyqa.wikidata.synth import GENERATORS, Anchor, Candidate, Constraint, Synthesizer
from timelyqa.wikidata.templates import TEMPLATES, counted_noun, event_noun, template, when
from timelyqa.wikidata.values import Kind

UNITS = {"Q712226": "square kilometre", "Q11573": "metre", "Q828224": "kilometre", "Q4917": "United States dollar"}
PLACES = {"Q1": "Port Alder", "Q2": "Valmora", "Q3": "Brazil", "P17": "country", "P31": "instance of"}


class Backend:
    """A graph backend over a few triples of any kind: Q1 and Q2 both in Brazil, Q1 with the property's value."""

    def __init__(self, triples: list[Triple], labels: dict[str, str], datatypes: dict[str, str | None]) -> None:
        self.t, self.labels, self.dt = triples, labels, datatypes

    def datatypes(self) -> dict[str, str | None]:
        return self.dt

    def triples(self, subjects: list[str]) -> list[Triple]:
        return [t for t in self.t if t[0] in subjects]

    def subjects(self, keys: list[Key], cap: int) -> dict[Key, frozenset[str] | None]:
        return {(p, o): frozenset(s for s, q, r, _ in self.t if (q, r) == (p, o)) for p, o in keys}

    def entities(self, ids: list[str]) -> list[Any]:
        return [(i, self.labels[i], [], None, None) for i in ids if i in self.labels]


def synthesize(p: str, label: str, kind: Kind, value: str, *, other: str | None = None,
               ) -> tuple[Synthesizer, list[Candidate]]:
    """The questions of the anchor (Q1, p, value); with `other`, Q1 holds a second value too, so that L1 asks
    backwards, for the subject, through the property's clause."""
    datatype = {Kind.QUANTITY: "quantity", Kind.TIME: "time"}[kind]
    triples = [("Q1", p, value, kind.value), ("Q1", "P17", "Q3", "entity"), ("Q2", "P17", "Q3", "entity")]
    triples += [("Q1", p, other, kind.value)] if other else []
    graph = Graph.over(Backend(triples, {**UNITS, **PLACES, p: label},
                               {p: datatype, "P17": "wikibase-item", "P31": "wikibase-item"}), fanout_cap=100)
    graph.fetch_labels({"Q1", "Q2", "Q3"})
    synth = Synthesizer(graph, seed=0)
    out, _ = synth.run([Anchor("Q1", p, value, kind, "added")])
    return synth, out


def row(c: Candidate) -> dict[str, Any]:
    return {"question": c.question, **c.answer.row(), "query_triples": c.query.triples()}


Q, T = Kind.QUANTITY, Kind.TIME
CASES = [
    # (property, its English label, kind, value, L1 question, clause, what v4 asked, the reviewer's verdict on v4)
    ("P1082", "population", Q, "+163900", "What is the population of Port Alder?", "has a population of 163,900",
     "What is the population of Port Alder?", "ship"),
    ("P1128", "employees", Q, "+1200", "How many employees does Port Alder have?", "has 1,200 employees",
     "What is the employees of Port Alder?", "send back: a count asked with what, and 'is the employees'"),
    ("P1132", "number of participants", Q, "+32", "How many participants does Port Alder have?",
     "has 32 participants", "What is the number of participants of Port Alder?", "send back: a count asked with what"),
    ("P2124", "member count", Q, "+5400", "How many members does Port Alder have?", "has 5,400 members",
     "What is the member count of Port Alder?", "send back: a count asked with what"),
    ("P1083", "maximum capacity", Q, "+45000", "How many people can Port Alder hold?", "can hold 45,000 people",
     "What is the maximum capacity of Port Alder?", "send back: a count asked with what"),
    ("P1101", "floors above ground", Q, "+12", "How many floors above ground does Port Alder have?",
     "has 12 floors above ground", "What is the floors above ground of Port Alder?", "send back: not English"),
    ("P1110", "attendance", Q, "+61000", "How many people attended Port Alder?", "was attended by 61,000 people",
     "What is the attendance of Port Alder?", "send back: a count asked with what"),
    ("P2046", "area", Q, "+12.5 Q712226", "What is the area of Port Alder, in square kilometres?",
     "has an area of 12.5 square kilometres", "What is the area of Port Alder, in square kilometres?", "ship"),
    ("P2044", "elevation above sea level", Q, "+120 Q11573", "How high above sea level is Port Alder, in metres?",
     "is 120 metres above sea level", "What is the elevation above sea level of Port Alder, in metres?",
     "ship, though stiff"),
    ("P2043", "length", Q, "+4.2 Q828224", "How long is Port Alder, in kilometres?", "is 4.2 kilometres long",
     "What is the length of Port Alder, in kilometres?", "ship"),
    ("P2403", "total assets", Q, "+5000000 Q4917", "What are the total assets of Port Alder, in US dollars?",
     "has total assets of 5,000,000 US dollars", "What is the total assets of Port Alder, in US dollars?",
     "send back: 'is the total assets'"),
    ("P1352", "ranking", Q, "+3", "What is the ranking of Port Alder?", "has a ranking of 3",
     "What is the ranking of Port Alder?", "ship: a rank is no count"),
    ("P571", "inception", T, "+1990-00-00T00:00:00Z/9", "When was Port Alder founded?", "was founded in 1990",
     "When was Port Alder founded?", "ship"),
    ("P580", "start time", T, "+2026-05-01T00:00:00Z/11", "When did Port Alder start?", "started on 1 May 2026",
     "What is the start time of Port Alder?", "send back: a date asked with what"),
    ("P582", "end time", T, "+2026-07-19T00:00:00Z/11", "When did Port Alder end?", "ended on 19 July 2026",
     "What is the end time of Port Alder?", "send back: a date asked with what"),
    ("P585", "point in time", T, "+2026-07-19T00:00:00Z/11", "When did Port Alder take place?",
     "took place on 19 July 2026", "When did Port Alder take place?", "ship"),
    ("P569", "date of birth", T, "+1998-11-30T00:00:00Z/11", "When was Port Alder born?",
     "was born on 30 November 1998", "When was Port Alder born?", "ship"),
    ("P1619", "date of official opening", T, "+2024-03-00T00:00:00Z/10", "When was Port Alder officially opened?",
     "was officially opened in March 2024", "What is the date of official opening of Port Alder?",
     "send back: a date asked with what"),
    ("P2669", "discontinued date", T, "+2019-00-00T00:00:00Z/9", "When was Port Alder discontinued?",
     "was discontinued in 2019", "What is the discontinued date of Port Alder?", "send back: a date asked with what"),
    ("P606", "first flight", T, "+2019-06-04T00:00:00Z/11", "When did Port Alder first fly?",
     "first flew on 4 June 2019", "What is the first flight of Port Alder?", "send back: a date asked with what"),
]
# Labels no table holds (invented properties, labels shaped as Wikidata's are): the fallback must read right.
FALLBACKS = [
    ("P9999", "date of first ascent", T, "+1953-05-29T00:00:00Z/11",
     "On what date was the first ascent of Port Alder?", "had its first ascent on 29 May 1953"),
    ("P9998", "decommissioning date", T, "+2001-00-00T00:00:00Z/9",
     "In what year was the decommissioning of Port Alder?", "had its decommissioning in 2001"),
    ("P9997", "abandoned date", T, "+1870-04-00T00:00:00Z/10", "In what month and year was Port Alder abandoned?",
     "was abandoned in April 1870"),
    ("P9996", "number of goals conceded", Q, "+14", "How many goals has Port Alder conceded?", "has conceded 14 goals"),
    ("P9995", "number of bridges", Q, "+7", "How many bridges does Port Alder have?", "has 7 bridges"),
    ("P9994", "volunteers", Q, "+300", "How many volunteers does Port Alder have?", "has 300 volunteers"),
    ("P9993", "depth", Q, "+40 Q11573", "What is the depth of Port Alder, in metres?", "has a depth of 40 metres"),
]


@pytest.mark.parametrize(("p", "label", "kind", "value", "question", "clause", "v4", "verdict"), CASES)
def test_a_real_property_is_asked_as_a_reviewer_ships_it(p: str, label: str, kind: Kind, value: str, question: str,
                                                         clause: str, v4: str, verdict: str) -> None:
    synth, out = synthesize(p, label, kind, value)
    (l1,) = [c for c in out if c.level == "L1"]
    assert l1.question == question and l1.generator == GENERATORS["L1"] == "wikidata_l1_v5"
    assert synth._clause([Constraint(p, value, kind)]) == clause
    assert judge(row(l1), RULES) is None
    # A question v4 wrote that a reviewer sent back is not what v5 writes.
    assert verdict.startswith("ship") or question != v4


@pytest.mark.parametrize(("p", "label", "kind", "value", "question", "clause"), FALLBACKS)
def test_a_property_without_a_template_falls_back_to_english(p: str, label: str, kind: Kind, value: str,
                                                             question: str, clause: str) -> None:
    assert p not in TEMPLATES
    synth, out = synthesize(p, label, kind, value)
    (l1,) = [c for c in out if c.level == "L1"]
    assert l1.question == question
    assert synth._clause([Constraint(p, value, kind)]) == clause
    assert judge(row(l1), RULES) is None


def test_v4s_count_questions_are_what_the_gate_drops() -> None:
    """The gate was the floor: v4's "What is the employees of X?" was dropped as what_for_count, v5's is shipped."""
    _, out = synthesize("P1128", "employees", Q, "+1200")
    (l1,) = [c for c in out if c.level == "L1"]
    assert judge({**row(l1), "question": "What is the employees of Port Alder?"}, RULES) == QualityReject.WHAT_FOR_COUNT
    assert judge(row(l1), RULES) is None


def test_no_date_of_the_table_or_the_fallback_is_asked_with_what() -> None:
    dates = [(p, label, v) for p, label, k, v, *_ in [*CASES, *FALLBACKS] if k is T]
    for p, label, value in dates:
        _, out = synthesize(p, label, T, value)
        (l1,) = [c for c in out if c.level == "L1"]
        assert l1.answer.type == "date" and not l1.question.startswith("What"), l1.question
    for prop, t in TEMPLATES.items():
        if t.ask.startswith("When"):
            assert "{wh}" not in t.ask and "{o}" in t.clause, prop


@pytest.mark.parametrize(("p", "label", "kind", "value", "clause"), [(p, label, k, v, c) for p, label, k, v, _, c, *_ in
                                                                     [*CASES, *FALLBACKS]])
def test_a_question_for_the_subject_says_a_count_or_a_date_in_english(p: str, label: str, kind: Kind, value: str,
                                                                     clause: str) -> None:
    """Q1 with two values of the property: L1 asks backwards, for the subject the value belongs to alone, through the
    clause ("What has 1,200 employees?", v3 "What has employees 1,200?"), and the gate lets it through."""
    other = "+1" if kind is Q else "+1800-00-00T00:00:00Z/9"
    _, out = synthesize(p, label, kind, value, other=other)
    (l1,) = [c for c in out if c.level == "L1"]
    assert l1.answer.type == "entity" and l1.question == f"What {clause}?"
    assert judge(row(l1), RULES) is None


@pytest.mark.parametrize(("label", "event"), [
    ("start time", "start"), ("date of official opening", "official opening"), ("publication date", "publication"),
    ("UTC date of spacecraft launch", "spacecraft launch"), ("first flight", "first flight"),
    ("time of discovery or invention", "discovery or invention"), ("inception", "inception"),
])
def test_a_date_propertys_event_is_its_label_without_the_time_word(label: str, event: str) -> None:
    assert event_noun(label) == event


@pytest.mark.parametrize(("label", "counted"), [
    ("number of participants", "participants"), ("member count", "members"), ("students count", "students"),
    ("employees", "employees"), ("population", None), ("ranking", None), ("area", None), ("mass", None),
    ("Human Development Index", None), ("Elo rating", None), ("radius", None), ("orbital period", None),
])
def test_a_count_is_a_label_that_says_what_it_counts(label: str, counted: str | None) -> None:
    assert counted_noun(label) == counted


@pytest.mark.parametrize(("form", "word"), [
    ("+2026-05-01T00:00:00Z/11", "On what date"), ("+2026-05-01T10:30:00Z/13", "On what date"),
    ("+2026-05-00T00:00:00Z/10", "In what month and year"), ("+2026-00-00T00:00:00Z/9", "In what year"),
    ("+1990-00-00T00:00:00Z/8", "In what decade"),
])
def test_a_fallback_date_question_asks_at_the_values_precision(form: str, word: str) -> None:
    assert when(form) == word


def test_a_quantity_with_a_unit_is_no_count_whatever_its_label() -> None:
    # "total assets" in dollars ends in a plural but counts nothing: asked what they are, not how many.
    assert template("P2403", "total assets", Q, "+5000000 Q4917").ask == "What are the total assets of {s}?"
    assert template("P2403", "total assets", Q, "+5000000").ask == "How many total assets does {s} have?"
