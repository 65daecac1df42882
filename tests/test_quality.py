"""The question-quality gate's rules, one by one, on rows the sources really wrote (the demo release of 2026-11-27 and
a crawl of the Python 3.11 documentation), with the verdict a reviewer gives each."""

from __future__ import annotations

from typing import Any

import pytest

from timelyqa import quality
from timelyqa.quality import COMMON, Gate, QualityReject, judge

SITE = "On the Lakeside Institute of Data Science website, "
DOCS = "On the Python 3.11.14 documentation website, "


def row(question: str, answer: str, answer_type: str = "text", **value: Any) -> dict[str, Any]:
    return {"question": question, "answer": answer, "answer_type": answer_type, "answer_value": value}


# (rule, row, verdict): rows as the sources wrote them, the reviewer's reason or None to ship it.
CASES = [
    (quality.blank_in_question, row('In the news of 3 June 2026, "A magnitude 5.8 earthquake strikes near ___, '
                                    "damaging the harbour's north pier; no deaths are reported.\" What name fills the "
                                    "blank?", "Port Alder", "entity"), QualityReject.BLANK_IN_QUESTION),
    (quality.blank_in_question, row("On 12 November 2026: Flooding along the Alder River forces the evacuation of how "
                                    "many residents from Port Alder's eastern districts?", "3,400", "number"), None),
    (quality.answer_is_sentence, row(f'{DOCS}what is the csvreader.dialect on the "csv — CSV File Reading and '
                                     'Writing" page?', "A read-only description of the dialect in use by the parser."),
     QualityReject.ANSWER_IS_SENTENCE),
    (quality.answer_is_sentence, row(f"{SITE}what is the computing cluster?",
                                     "The institute runs Heron, a 48-node cluster with 192 GPUs, for all research "
                                     "groups."),
     QualityReject.ANSWER_IS_SENTENCE),
    (quality.answer_is_sentence, row(f"{SITE}who is the speaker on the \"Annual Lecture\" page?", "Prof. Mei Lindqvist",
                                     "entity"), None),
    (quality.answer_is_sentence, row("Who are the key people of Northwind Analytics?",
                                     "Ravi Menon (CEO), Alan Pryce (chairman)", "list",
                                     items=["Ravi Menon (CEO)", "Alan Pryce (chairman)"]), None),
    (quality.footnote_answer, row(f'{DOCS}what is the "Notes" value for tar on the "shutil" page?', "(5)"),
     QualityReject.FOOTNOTE_ANSWER),
    (quality.footnote_answer, row(f'{DOCS}what is the "Notes" value for x on the "stdtypes" page?', "[3]"),
     QualityReject.FOOTNOTE_ANSWER),
    (quality.footnote_answer, row(f'{SITE}what is the room on the "Health Analytics Group" page?', "H.312"), None),
    (quality.label_fragment, row(f"{SITE}what is the in service from?", "1 April 2026", "date", date="2026-04-01"),
     QualityReject.LABEL_FRAGMENT),
    (quality.label_fragment, row(f"{SITE}what is the director from?", "1 September 2026", "date", date="2026-09-01"),
     QualityReject.LABEL_FRAGMENT),
    (quality.label_fragment, row(f'{DOCS}what is the changed in version 3.10 on the "enum" page?',
                                 "The module-level constant was renamed."), QualityReject.LABEL_FRAGMENT),
    (quality.label_fragment, row(f'{DOCS}what is the csvreader.dialect¶ on the "csv" page?', "A description."),
     QualityReject.LABEL_FRAGMENT),
    (quality.label_fragment, row(f'{SITE}what is the room on the "Health Analytics Group" page?', "H.312"), None),
    (quality.what_for_person, row(f'{SITE}what is the principal investigator on the "Flood Forecasting for the Wren '
                                  'Valley" page?', "Dr Callum Reid", "entity"), QualityReject.WHAT_FOR_PERSON),
    (quality.what_for_person, row(f"{SITE}what are the head of Admissions?", "Ms Joanna Pike", "entity"),
     QualityReject.WHAT_FOR_PERSON),
    (quality.what_for_person, row("What is the premier of Alberta?", "Danielle Smith", "entity"),
     QualityReject.WHAT_FOR_PERSON),
    (quality.what_for_person, row("Who is the head coach of Riyadh Falcons FC?", "Tomasz Wielki", "entity"), None),
    (quality.what_for_person, row(f'{SITE}what is the funder on the "A Spoken Atlas of Lakeland Dialects" page?',
                                  "Heritage Speech Foundation", "entity"), None),
    (quality.what_for_count, row(f'{SITE}what are the nodes on the "Heron computing cluster ordered" page?', "48",
                                 "number", number="48", precision=0), QualityReject.WHAT_FOR_COUNT),
    (quality.what_for_count, row(f'{SITE}what are the members on the "Climate Data Lab" page?', "14", "number",
                                 number="14", precision=0), QualityReject.WHAT_FOR_COUNT),
    (quality.what_for_count, row("What squad number does Mateo Ferreira wear?", "10", "number", number="10"), None),
    (quality.what_for_count, row("What is the population of Port Alder?", "163,900", "number", number="163900"), None),
    (quality.entity_named_twice, row("Which event is in Brazil and is located at a city that is in Brazil?",
                                     "Atlantic Cup 2026", "entity"), QualityReject.ENTITY_NAMED_TWICE),
    (quality.entity_named_twice, row("Who has played for Riyadh Falcons FC and is a citizen of Brazil?",
                                     "Lucas Andrade", "entity"), None),
    (quality.entity_named_twice, row('Who has played for Club "Haka" and Club "New Gardu"?', "Teo Lin", "entity"),
     None),
    (quality.entity_named_twice, row("Current time: 2026-11-16 09:00 (Europe/London). What was the highest level of "
                                     "the River Aldern at the Kestrel Bridge gauge over the past 7 days, excluding "
                                     "today, in metres?", "1.92 m", "quantity", number="1.92", unit="m"), None),
    (quality.entity_named_twice, row("On 2 June 2026: A probe is launched towards the moon Europa. Europa's ice "
                                     "shell is how many kilometres thick?", "25 kilometres", "quantity", number="25",
                                     unit="km"), QualityReject.ENTITY_NAMED_TWICE),
    (quality.entity_named_twice, row("Which U.S. state borders St. Louis County and Lake Superior?", "Minnesota",
                                     "entity"), None),
    (quality.answer_in_question, row("Who won Atlantic Cup 2026?", "Atlantic Cup 2026", "entity"),
     QualityReject.ANSWER_IN_QUESTION),
    (quality.answer_in_question, row("When did Atlantic Cup 2026 take place?", "2026", "date", date="2026"),
     QualityReject.ANSWER_IN_QUESTION),
    (quality.answer_in_question, row("What is the population of Port Alder in 2010?", "10", "number", number="10"),
     None),
    (quality.answer_in_question, row("At which River Aldern stations were flood warnings in force yesterday?",
                                     "Alder Weir; Corran Sluice", "list", items=["Alder Weir", "Corran Sluice"]), None),
]


@pytest.mark.parametrize(("rule", "candidate", "verdict"), CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_gives_the_reviewers_verdict_on_real_rows(rule: quality.Rule, candidate: dict[str, Any],
                                                            verdict: QualityReject | None) -> None:
    assert rule(candidate) == verdict


def test_every_rule_is_in_the_gate_and_sends_back_some_row_and_ships_another() -> None:
    rules = {c[0] for c in CASES}
    assert rules == set(COMMON)
    for rule in rules:
        verdicts = {c[2] for c in CASES if c[0] is rule}
        assert None in verdicts and len(verdicts) > 1, rule.__name__


def test_good_questions_of_every_source_pass_the_whole_gate() -> None:
    good = [
        row("Who is the chief executive officer of Northwind Analytics?", "Ravi Menon", "entity"),
        row("What is the box office gross of The Lunetta Affair, in millions of US dollars?", "$38.9 million",
            "quantity", number="38900000", unit="USD", scale=6),
        row("Current time: 2026-11-11 09:00 (Europe/London). What is today's forecast high temperature for Port "
            "Alder, in degrees Celsius?", "14 °C", "quantity", number="14", unit="°C"),
        row('On 21 August 2026: Valmora CF sign striker Mateo Ferreira from Lunetta Calcio for a club-record fee of '
            "how much money, in millions of euros?", "18 million euros", "quantity", number="18000000", unit="EUR"),
        row(f'{SITE}who is the speaker on the "Annual Lecture: Counting What Changes" page?', "Prof. Mei Lindqvist",
            "entity"),
        row(f'{SITE}how many members does the "Climate Data Lab" page list?', "14", "number", number="14"),
    ]
    assert [judge(r) for r in good] == [None] * len(good)


def test_the_gate_keeps_each_dropped_row_with_its_reason_and_counts_what_passed() -> None:
    gate = Gate()
    rows = [c[1] for c in CASES]
    kept = gate.filter(rows)
    assert gate.passed == len(kept) and len(kept) + len(gate.dropped) == len(rows)
    assert {str(d.reason) for d in gate.dropped} == {str(r) for r in QualityReject}
    item, reason, detail = gate.dropped[0].item, gate.dropped[0].reason, gate.dropped[0].detail
    assert item == {"question": rows[0]["question"], "answer": "Port Alder"}
    assert reason is QualityReject.BLANK_IN_QUESTION
    assert detail.endswith("-> Port Alder (blank_in_question)")
