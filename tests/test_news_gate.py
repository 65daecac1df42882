"""The news source's gate: its own rules one by one on rows the source really wrote (the demo release of 2026-11-27,
news_template_v2, and the test portal's events), each with a reviewer's verdict; the gate's drops counted in a run's
manifest under the stage `quality`; and every question the demo archive releases passing the whole gate."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from spiders import run as spiders_run
from timelyqa.answers import date as date_answer, entity, number, quantity, text
from timelyqa.files import write_parquet
from timelyqa.news import gate, pipeline
from timelyqa.news.frames import ARTICLE_SCHEMA, ARTICLES, EVENT_SCHEMA, EVENTS
from timelyqa.news.gate import RULES, NewsQualityReject, masked
from timelyqa.news.source import SOURCE
from timelyqa.quality import GATE_PASSED, QualityReject, judge
from tests.test_news_questions import ECHO, article, event

FLOOD = ("Flooding along the Alder River forces the evacuation of 3,400 residents from Port Alder's eastern "
         "districts.")
VOTE = ("Harriet Lowe is elected mayor of Valmora with 54 percent of the vote, defeating incumbent Tomas Reyes.")
FESTIVAL = "Salt and Signal, directed by Ana Ruiz, wins the Golden Gull at the Port Alder Film Festival."


def row(question: str, answer: Any, day: date, shown: str = "", topic: str | None = None, **more: Any
        ) -> dict[str, Any]:
    return {"question": question, **answer.row(), "event_date": day, "event_summary": shown, "topic": topic, **more}


TALLY = "Northwind Analytics releases Tallyframe 4.0, which supports 31 currencies."
FLOOD_FACTS = ["2.7", "85"]
"""The facts the demo's flood article (Port Alder Times, 2026-11-12) states that the summary does not."""


# (rule, row, verdict): rows as the source wrote them, the reviewer's reason or None to ship it.
CASES = [
    (gate.answer_is_event_day,
     row("On 19 January 2026: The United States Supreme Court upholds a law banning TikTok on what date?",
         text("January 19"), date(2026, 1, 19)), NewsQualityReject.ANSWER_IS_EVENT_DAY),
    (gate.answer_is_event_day,
     row("On 3 March 2026: The treaty is signed on what date in Lisbon?", date_answer("3 March 2026"),
         date(2026, 3, 3)), NewsQualityReject.ANSWER_IS_EVENT_DAY),
    (gate.answer_is_event_day,
     row("On 4 March 2026: The treaty is signed on what date in Lisbon?", date_answer("3 March 2026"),
         date(2026, 3, 4)), None),
    (gate.answer_is_event_day,
     row("On 9 January 2026: NASA announces that the crewed Artemis III Moon landing is delayed until what year?",
         date_answer("2028"), date(2026, 1, 9)), None),
    # v2 released the summary whole: the row handed its answer to anyone shown it
    (gate.answer_in_columns,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of how many residents from Port "
         "Alder's eastern districts?", number("3,400"), date(2026, 11, 12), FLOOD, "2026 Alder River floods"),
     NewsQualityReject.ANSWER_IN_COLUMNS),
    (gate.answer_in_columns,
     row("On 14 July 2026: Harriet Lowe is elected mayor of Valmora with what percentage of the vote, defeating "
         "incumbent Tomas Reyes?", quantity("54%"), date(2026, 7, 14), VOTE, "2026 Valmora mayoral election"),
     NewsQualityReject.ANSWER_IN_COLUMNS),  # "54 percent" is one of the answer's forms
    (gate.answer_in_columns,
     row("On 2 October 2026: Salt and Signal, directed by Ana Ruiz, wins the Golden Gull at which festival?",
         entity("Port Alder Film Festival"), date(2026, 10, 2), masked(FESTIVAL, ["Port Alder Film Festival"]),
         "Port Alder Film Festival"), NewsQualityReject.ANSWER_IN_COLUMNS),  # the topic is the answer
    (gate.answer_in_columns,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of how many residents from Port "
         "Alder's eastern districts?", number("3,400"), date(2026, 11, 12), masked(FLOOD, ["3,400"]),
         "2026 Alder River floods"), None),
    (gate.answer_in_columns,
     row("On 21 August 2026: Valmora CF sign striker Mateo Ferreira from Lunetta Calcio for a club-record fee of how "
         "much money, in millions of euros?", quantity("18 million euros"), date(2026, 8, 21),
         "Valmora CF sign striker Mateo Ferreira from Lunetta Calcio for a club-record fee of ___.",
         "2026–27 Coastal League"), None),  # "2026–27" holds no "18": a bare short number of a scaled sum is no form
    # v3 on the demo: the article's headline, released in `evidence`, says "31 currencies"
    (gate.answer_in_columns,
     row("On 19 October 2026: Northwind Analytics releases Tallyframe 4.0, which supports how many currencies?",
         number("31"), date(2026, 10, 19), masked(TALLY, ["31"]), "Northwind Analytics",
         evidence=[{"title": "Tallyframe 4.0 arrives with 31 currencies",
                    "url": "http://127.0.0.3:47312/news/2026-10-19/tallyframe-4.html"}]),
     NewsQualityReject.ANSWER_IN_COLUMNS),
    # the held-out test world: the article's address names the country ("croatia-vote")
    (gate.answer_in_columns,
     row("On 12 January 2026: Voters in which country re-elect Zoran Milanović as president?", entity("Croatia"),
         date(2026, 1, 12), "Voters in ___ re-elect Zoran Milanović as president.", None,
         article_url="http://127.0.0.1:8931/world/croatia-vote"), NewsQualityReject.ANSWER_IN_COLUMNS),
    # v4 on the demo: the article's fact, in no column ("alder-river-floods" holds no "85")
    (gate.answer_in_columns,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of 3,400 residents from Port "
         "Alder's eastern districts. Rescue crews in boats brought how many people out of flooded homes in the "
         "eastern districts?", number("85"), date(2026, 11, 12), FLOOD, "2026 Alder River floods",
         evidence=[{"title": "Alder River floods: thousands evacuated",
                    "url": "http://127.0.0.3:47312/news/2026-11-12/alder-river-floods.html"}]), None),
    # v3's question on the demo's flood: the portal line answers it, and the article says more (2.7 metres, 85 people)
    (gate.summary_answers,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of how many residents from Port "
         "Alder's eastern districts?", number("3,400"), date(2026, 11, 12), masked(FLOOD, ["3,400"]),
         "2026 Alder River floods", summary=FLOOD, article_facts=FLOOD_FACTS), NewsQualityReject.SUMMARY_ANSWERS),
    # the same question where the article says nothing more: the summary's span is the event's only question
    (gate.summary_answers,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of how many residents from Port "
         "Alder's eastern districts?", number("3,400"), date(2026, 11, 12), masked(FLOOD, ["3,400"]),
         "2026 Alder River floods", summary=FLOOD, article_facts=[]), None),
    # v4's question from the article's fact: the summary does not state it
    (gate.summary_answers,
     row("On 12 November 2026: Flooding along the Alder River forces the evacuation of 3,400 residents from Port "
         "Alder's eastern districts. Rescue crews in boats brought how many people out of flooded homes in the "
         "eastern districts?", number("85"), date(2026, 11, 12), FLOOD, "2026 Alder River floods", summary=FLOOD,
         article_facts=FLOOD_FACTS), None),
    # a real summary (the test portal's) with the person as answer, the article (Croatia's vote) holding the share
    (gate.summary_answers,
     row("On 12 January 2026: Voters in Croatia re-elect whom as president?", entity("Zoran Milanović"),
         date(2026, 1, 12), "Voters in Croatia re-elect ___ as president.", None,
         summary="Voters in Croatia re-elect Zoran Milanović as president.", article_facts=["74 percent"]),
     NewsQualityReject.SUMMARY_ANSWERS),
]


@pytest.mark.parametrize(("rule", "candidate", "verdict"), CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_each_news_rule_gives_the_reviewers_verdict_on_real_rows(rule: Any, candidate: dict[str, Any],
                                                                 verdict: NewsQualityReject | None) -> None:
    assert rule(candidate) == verdict


def test_every_news_rule_is_in_the_gate_and_sends_back_some_row_and_ships_another() -> None:
    rules = {c[0] for c in CASES}
    assert rules == set(RULES[-3:]) and set(RULES) - rules == set(RULES[:-3])
    for rule in rules:
        verdicts = {c[2] for c in CASES if c[0] is rule}
        assert None in verdicts and len(verdicts) > 1, rule.__name__


V2_CLOZES = [  # the demo release's news rows that v2 wrote as clozes, and the gate's verdict on them
    ('In the news of 3 June 2026, "A magnitude 5.8 earthquake strikes near ___, damaging the harbour\'s north pier; '
     'no deaths are reported." What name fills the blank?', entity("Port Alder"), date(2026, 6, 3)),
    ('In the news of 9 September 2026, "The Lakeside Institute of Data Science opens the Wrenmere Observatory, whose '
     'telescope has a ___-metre mirror." What number fills the blank?', number("2.4"), date(2026, 9, 9)),
    ('In the news of 2 October 2026, "Salt and Signal, directed by Ana Ruiz, wins the Golden Gull at the ___." What '
     "name fills the blank?", entity("Port Alder Film Festival"), date(2026, 10, 2)),
]


@pytest.mark.parametrize(("question", "answer", "day"), V2_CLOZES)
def test_the_gate_sends_back_the_clozes_v2_released(question: str, answer: Any, day: date) -> None:
    assert judge(row(question, answer, day), RULES) is QualityReject.BLANK_IN_QUESTION


def test_masking_finds_the_answer_in_any_case_and_form_and_leaves_other_words() -> None:
    assert masked("Port Alder's council says PORT ALDER will rebuild.", ["Port Alder"]) == \
        "___'s council says ___ will rebuild."
    assert masked(VOTE, quantity("54%").row()["answer_aliases"] + ["54%"]) == (
        "Harriet Lowe is elected mayor of Valmora with ___ of the vote, defeating incumbent Tomas Reyes.")
    assert masked("Port Alderney is not Port Alder.", ["Port Alder"]) == "Port Alderney is not ___."
    assert masked(None, ["x"]) is None


def test_the_gate_drops_are_counted_in_the_manifest_under_the_stage_quality(tmp_path: Path) -> None:
    """A run's ledger on a portal event whose country is named twice: the gate sends back both spans of "Thailand"
    (each leaves the other in the question), and the event is asked about "Southeast Asia"."""
    text = ("BANGKOK, Jan 5 - The Senate of Thailand approved a marriage equality bill on Tuesday, making Thailand the "
            "first country in Southeast Asia to recognise same-sex unions.")
    write_parquet(pl.DataFrame([ECHO], schema=EVENT_SCHEMA, orient="row"), tmp_path / EVENTS)
    write_parquet(pl.DataFrame([article(ECHO, "thai", "Thai Senate approves bill", text)], schema=ARTICLE_SCHEMA,
                               orient="row"), tmp_path / ARTICLES)
    manifest = pipeline.write_questions(tmp_path, pipeline.Settings(start=date(2026, 1, 5), end=date(2026, 1, 5)))
    assert manifest.rejects.get("answer_in_question") == 2 and manifest.counts[GATE_PASSED] == 1
    assert list(manifest.counts).index(GATE_PASSED) == list(manifest.counts).index("candidates") + 1
    rejected = pl.read_parquet(tmp_path / "rejected.parquet").filter(pl.col("reason") == "answer_in_question")
    assert set(rejected["stage"]) == {"quality"}
    assert {json.loads(i)["answer"] for i in rejected["item"]} == {"Thailand"}
    assert manifest.counts["questions"] == 1


def test_the_registry_puts_the_gate_right_before_the_checks_that_verify() -> None:
    names = [stage.name for stage in SOURCE.stages]
    assert names[names.index("quality") + 1:] == ["article_check", "check"]
    assert SOURCE.reason_stage["answer_not_in_article"] == "article_check"
    assert SOURCE.reason_stage["answer_is_event_day"] == SOURCE.reason_stage["blank_in_question"] == "quality"


@pytest.mark.slow
def test_every_question_the_demo_releases_passes_the_whole_gate(tmp_path: Path) -> None:
    manifest = SOURCE.demo(tmp_path, crawl=spiders_run.crawl)
    rows = pl.read_parquet(tmp_path / "questions.parquet").to_dicts()
    assert len(rows) == manifest.counts["questions"] == 9 and manifest.counts[GATE_PASSED] >= 9
    assert [(r["question"], judge(r, RULES)) for r in rows if judge(r, RULES) is not None] == []
    events = pl.read_parquet(tmp_path / "events.parquet")
    summaries = dict(zip(events["event_id"], events["summary"], strict=True))
    for r in rows:
        assert "___" not in r["question"] and r["generator"] == "news_template_v4"
        # every demo article states a fact its summary does not: each question asks one, after the whole summary
        assert r["event_summary"] == summaries[r["event_id"]] and "___" not in r["event_summary"]
        assert r["question"].startswith(f"On {r['event_date'].day} {r['event_date']:%B %Y}: {r['event_summary']} ")
        assert not gate._found(r["event_summary"], r["answer"]), "the portal's line does not answer it"
    # v3's summary spans were sent back by the gate: the portal line answers them, the article says more
    assert manifest.rejects["summary_answers"] >= 9
    # the three events v2 asked as clozes are asked as questions now
    days = {r["event_date"]: r["question"] for r in rows}
    for _, _, day in V2_CLOZES:
        assert days[day].startswith(f"On {day.day} {day:%B %Y}: ") and days[day].endswith("?"), days[day]
