"""The news source's LLM steps (LiveNewsBench 2.2) on scripted OpenAI-compatible servers.

The servers are test doubles (tests/llmserver.py) standing in for a paid LLM API: what a model writes cannot be
chosen at will from a real one. Events and articles are rows of the source's own schemas; each article has its
script here, beside the outcome it must end in.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.llmserver import ScriptedLLM, Step, reply
from tests.test_news_questions import (ARTEMIS, CROATIA, QUAKE, SENATE, SNOW, TEXTS, UNCITED, YOON, article,
                                       events_of)
from timelyqa.errors import ConfigError
from timelyqa.llm.check import Models
from timelyqa.llm.client import LLM, total_usage
from timelyqa.llm.settings import LLMSettings
from timelyqa.news.frames import ARTICLE_SCHEMA
from timelyqa.news.llm import (FUNNEL, REASONS, CheckerReject, NewsLLMWriter, RelevanceReject, WriterReject,
                               llm_news_writer, pairs, write_questions, written)
from timelyqa.news.questions import TemplateReject
from timelyqa.news.source import SOURCE
from timelyqa.quality import QualityReject
from timelyqa.record import Split

pytestmark = pytest.mark.slow  # real model stand-ins and real pages: a second or more a test, in make test

STABLE, YEAR = "Unlikely to change over time", "May change within one year"
MALFORMED = Step(content="Yes, this article is clearly about the event.")
RELEVANT = reply({"reason": "Both report the same event.", "relevant": True})
IRRELEVANT = reply({"reason": "The article is about a football match, the event about an election.",
                    "relevant": False})
COMPLIANT = reply({"reasoning": "Factual, self-contained, stable.", "compliant": True})


def qa(question: str, answer: str, stability: str = STABLE) -> Step:
    return reply({"question": question, "answer": answer, "temporal_stability": stability,
                  "explanation": "Stated in the article and needs the event's details."})


def said(answer: str) -> Step:
    return reply({"reasoning": "The article says so in its first paragraph.", "answer": answer})


def grade(letter: str) -> Step:
    return reply({"grade": letter})


# slug: (event, first sentence, base text, relevance, writer, answerer, grader, guideline, the outcome)
Q_THAI = ("How many senators abstained when Thailand's Senate approved a marriage equality bill on 5 January "
          "2026?")  # the article's fact: the portal's summary says the country, not the count
Q_INJURED = "How many people were injured by the magnitude 7.1 earthquake in Tingri County on 7 January 2026?"
Q_AGENCY = "Which office took South Korea's impeached president into custody at his residence on 15 January 2026?"
Q_HEAT = ("According to NASA's statement of 9 January 2026, which part of the Orion capsule delayed the crewed "
          "Artemis III landing?")
Q_COURT = "Which court issued the warrant for the detention of South Korea's impeached president in January 2026?"
CASES: dict[str, tuple[dict[str, Any], str, str, Step, Step | None, Step | None, Step | None, Step | None,
                       str | None]] = {
    "thai-senate": (SENATE, "Thailand votes for equal marriage.", "thai-senate", RELEVANT, qa(Q_THAI, "18"),
                    said("18"), grade("A"), COMPLIANT, None),
    "senate-vote": (SENATE, "Senators back the bill by a wide margin.", "thai-senate", RELEVANT,
                    qa("Thailand's Senate passed the marriage equality bill on 5 January 2026 by what margin, 130 to "
                       "4?", "130 to 4"), None, None, None, "answer_in_question"),
    "tingri": (QUAKE, "Rescuers search the rubble in Tibet.", "tingri", RELEVANT, qa(Q_INJURED, "188", YEAR),
               said("188 people"), grade("A"), COMPLIANT, None),
    "tingri-toll": (QUAKE, "The toll of the Tibet quake rises.", "tingri", RELEVANT, qa(Q_INJURED, "188"),
                    None, None, None, "duplicate_question"),
    "yoon-arrest": (YOON, "Yoon is detained after a standoff.", "yoon-arrest", RELEVANT,
                    qa(Q_AGENCY, "Corruption Investigation Office for High-ranking Officials"),
                    said("the national police"), grade("B"), None, "answers_disagree"),
    "yoon-profile": (YOON, "A profile of the former prosecutor.", "yoon-arrest", RELEVANT, MALFORMED, None, None,
                     None, "writer_malformed_json"),
    "yoon-court": (YOON, "The court's warrant was executed at dawn.", "yoon-arrest", RELEVANT,
                   qa(Q_COURT, "Corruption Investigation Office"),
                   MALFORMED, None, None, "checker_malformed_json"),
    "artemis": (ARTEMIS, "NASA pushes back its Moon landing.", "artemis", RELEVANT, qa(Q_HEAT, "heat shield"),
                said("the heat shield"), grade("A"),
                reply({"reasoning": "It names a specific statement and may change.", "compliant": False}),
                "guideline_failed"),
    "artemis-heat": (ARTEMIS, "Engineers still study the capsule.", "artemis", RELEVANT,
                     qa("Which company builds the Orion capsule's heat shield?", "Lockheed Martin"), None, None, None,
                     "answer_not_in_article"),
    "artemis-crew": (ARTEMIS, "The crew has been named.", "artemis", RELEVANT, qa("", ""), None, None, None,
                     "writer_empty_pair"),
    "croatia-vote": (CROATIA, "Croatia's president wins again.", "croatia-vote", RELEVANT,
                     reply({"question": "N/A", "answer": "N/A", "temporal_stability": "N/A",
                            "explanation": "The article has no fact that is both hard and stable."}), None, None,
                     None, "writer_skipped"),
    "croatia-turnout": (CROATIA, "Turnout was low in the run-off.", "croatia-vote", RELEVANT,
                        qa("What share of the vote did Croatia's president win in the January 2026 run-off?",
                           "74 percent", "N/A"), None, None, None, "writer_no_stability"),
    "croatia-football": (CROATIA, "Dinamo Zagreb win the derby.", "snow", IRRELEVANT, None, None, None, None,
                         "article_not_relevant"),
    "snow": (SNOW, "Roads close as snow falls.", "snow", MALFORMED, None, None, None, None,
             "relevance_malformed_json"),
}
QUESTIONS = {Q_THAI: "thai-senate", Q_INJURED: "tingri", Q_AGENCY: "yoon-arrest", Q_HEAT: "artemis",
             Q_COURT: "yoon-court"}
"""The article each question that reaches the grader or the guideline check was written from."""


def text_of(slug: str) -> str:
    case = CASES[slug]
    return f"{case[1]} {TEXTS[case[2]][1]}"


ARTICLES = pl.DataFrame([article(case[0], slug, TEXTS[case[2]][0], text_of(slug),
                                 outlet="AP News" if slug.count("-") > 1 or slug == "tingri-toll" else "Reuters")
                         for slug, case in CASES.items()], schema=ARTICLE_SCHEMA, orient="row")
EVENTS = events_of(SENATE, QUAKE, YOON, ARTEMIS, CROATIA, SNOW, UNCITED)


def _first_user(request: dict[str, Any]) -> str:
    # a repair re-ask carries the first message again: the script answers it the same way
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def _slug(text: str) -> str:
    if text.startswith(("Your job is to look", "Below are the guidelines")):
        return next(slug for q, slug in QUESTIONS.items() if f"Question: {q}\n" in text)
    return next(slug for slug, case in CASES.items() if case[1] in text)


def script(request: dict[str, Any]) -> Step:
    """Every prompt of the news path, answered from CASES: the writer's two and the checker's three."""
    text = _first_user(request)
    case = CASES[_slug(text)]
    for opening, step in (("You are presented with a news event summary", case[3]),
                          ("Please generate a single factual Q&A pair", case[4]),
                          ("Below are a question and the news article", case[5]),
                          ("Your job is to look at a question", case[6]),
                          ("Below are the guidelines", case[7])):
        if text.startswith(opening):
            return step or Step(status=500, body=b'{"error": "this prompt should not be asked here"}')
    return Step(status=500, body=b'{"error": "unknown prompt"}')


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    with ScriptedLLM(models=("writer-7b",), default=script) as writer, \
            ScriptedLLM(models=("checker-8b",), default=script) as checker:
        yield writer, checker


def make_writer(servers: tuple[ScriptedLLM, ScriptedLLM], *, same: bool = False, **kwargs: Any) -> NewsLLMWriter:
    settings = {"timeout": 5.0, "repairs": 1, "backoff": 0.0, "retries": 0}
    writer = LLM(LLMSettings.build(base_url=servers[0].url, model="writer-7b", **settings))
    checker = None if same else LLM(LLMSettings.build(base_url=servers[1].url, model="checker-8b", **settings))
    return NewsLLMWriter(Models.of(writer, checker), **kwargs)


def outcomes(out: Any) -> dict[str, str | None]:
    by_url = {r.article_url: None for r in out.records}
    by_url |= {d.item["url"]: str(d.reason) for d in out.rejected if "url" in d.item}
    return {url.rsplit("/", 1)[-1]: reason for url, reason in by_url.items()}


def test_every_article_ends_as_its_script_calls_for(servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    writer = make_writer(servers)
    out = write_questions(EVENTS, ARTICLES, writer)
    assert outcomes(out) == {slug: case[-1] for slug, case in CASES.items()}
    assert [(d.item["event_id"], d.reason) for d in out.rejected if "url" not in d.item] == [
        (UNCITED["event_id"], TemplateReject.NO_ARTICLE)]
    every = {str(d.reason) for d in out.rejected} | {None}
    assert {r for r in REASONS if r.startswith(("writer_", "relevance_", "checker_"))} - every == {
        f"{role}_{failure}" for role in ("writer", "relevance", "checker")
        for failure in ("refused", "request_rejected", "truncated", "wrong_shape")}, \
        "every reason of the news path is reached, save the other ways a reply fails (tested in test_llm_client)"
    assert {str(r) for r in TemplateReject} - every == {"no_maskable_span"}  # a template-only reason
    c = out.counts
    # no verdict from the model is not relevant; the gate sends back the pair that states its answer, the article
    # check the one whose answer no article states, both before the checker model sees them
    assert [c[line] for line in FUNNEL] == [7, 6, 14, 12, 7, 6, 5, 2]
    gated = [d for d in out.rejected if d.reason is QualityReject.ANSWER_IN_QUESTION]
    assert [d.item["url"].rsplit("/", 1)[-1] for d in gated] == ["senate-vote"]
    assert SOURCE.reason_stage[str(gated[0].reason)] == "quality"
    thai = next(r for r in out.records if r.answer == "18")
    # the answer is the article's, not the summary's: the summary is released whole, and no column states "18"
    assert thai.event_summary == SENATE["summary"] and thai.topic == SENATE["topic"]
    assert " 18 " not in f" {thai.event_summary} {thai.topic} {thai.evidence[0].title} "
    assert {d.reason.explanation for d in out.rejected}.isdisjoint({""})


def test_kept_pairs_name_their_article_checks_and_generator(servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    out = write_questions(EVENTS, ARTICLES, make_writer(servers))
    rows = {r.article_url.rsplit("/", 1)[-1]: r for r in out.records}
    thai, quake = rows["thai-senate"], rows["tingri"]
    assert (thai.question, thai.answer, thai.level, thai.split) == (Q_THAI, "18", "phrase", None)
    assert thai.temporal_stability == STABLE and thai.event_date == SENATE["date"]
    assert (quake.answer, quake.temporal_stability, quake.split) == ("188", YEAR, Split.LONGITUDINAL)
    for r in (thai, quake):
        assert r.generator == "livenewsbench_qa_writer_v1+llm:writer-7b"
        assert r.verification.model_dump() == {
            "method": "llm-verify:independent", "endpoint": "llm:checker-8b", "result_count": 3, "passed": True,
            "query": "livenewsbench_independent_answerer_v1+livenewsbench_grader_v1+livenewsbench_guideline_check_v1: "
                     + r.question}
        assert r.evidence[0].url == r.article_url and r.evidence[0].title == TEXTS[CASES[r.article_url.rsplit(
            "/", 1)[-1]][2]][0]


def test_each_model_is_asked_only_what_its_role_asks(servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    writer = make_writer(servers)
    write_questions(EVENTS, ARTICLES, writer)
    writer_server, checker_server = servers
    asked = [_first_user(r)[:30] for r in writer_server.requests]
    assert writer_server.calls == 14 + 1 + 12 + 1  # relevance, its repair, the writer on 12 relevant, its repair
    assert {a[:20] for a in asked} == {"You are presented wi", "Please generate a si"}
    assert checker_server.calls == (5 + 1) + 4 + 3  # answers (and a repair), grades, guideline checks
    assert total_usage(writer.llms)["llm_calls"] == writer_server.calls + checker_server.calls
    relevance = next(_first_user(r) for r in writer_server.requests if "Thailand votes for equal marriage." in
                     _first_user(r) and _first_user(r).startswith("You are presented"))
    assert SENATE["summary"] in relevance and "Thai Senate approves marriage equality bill\nThailand votes" in relevance
    graded = next(text for r in checker_server.requests if (text := _first_user(r)).startswith("Your job")
                  and f"Question: {Q_THAI}\n" in text)
    assert "Gold target: 18\nPredicted answer: 18\n" in graded


def test_a_writer_checking_itself_is_recorded_as_same_model(servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    out = write_questions(EVENTS, ARTICLES, make_writer(servers, same=True))
    assert {(r.verification.method, r.verification.endpoint) for r in out.records} == {
        ("llm-verify:same-model", "llm:writer-7b")}
    assert outcomes(out) == {slug: case[-1] for slug, case in CASES.items()}
    assert servers[1].calls == 0


def test_the_steps_take_and_return_plain_rows(servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    rows, dropped, counts = pairs(EVENTS, ARTICLES)
    assert [d.reason for d in dropped] == [TemplateReject.NO_ARTICLE] and counts["events_with_articles"] == 6
    writer = make_writer(servers)
    drafted = writer.write(rows)
    assert all(isinstance(r, dict) and {"question", "answer", "reason", "detail", "generator"} <= r.keys()
               for r in drafted)
    assert [r["url"] for r in drafted] == [r["url"] for r in rows]
    frame = pl.DataFrame(drafted)  # a flow may hand them on as a parquet file
    assert frame.height == 14 and frame["reason"].null_count() == 5
    with pytest.raises(ValueError, match="never checked"):
        written(drafted)
    checked = writer.check(drafted)
    assert sum(r["verification"] is not None for r in checked) == 2
    details = {r["reason"]: r["detail"] for r in checked if r["reason"]}
    assert "graded B against 'Corruption Investigation Office for High-ranking Officials'" in \
        details["answers_disagree"]
    assert details["guideline_failed"] == "It names a specific statement and may change."
    assert details["checker_malformed_json"].startswith("livenewsbench_independent_answerer_v1: ")
    assert "football" in details["article_not_relevant"]


def test_the_families_of_reasons_are_named_by_role() -> None:
    assert str(RelevanceReject.NOT_RELEVANT) == "article_not_relevant"
    assert str(WriterReject.SKIPPED) == "writer_skipped" and str(CheckerReject.GUIDELINE_FAILED) == "guideline_failed"
    assert all(r.explanation for r in REASONS.values())


def test_a_long_article_is_cut_to_its_budget_and_a_tiny_budget_is_refused(
        servers: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    writer = make_writer(servers, article_chars=300)
    rows, _, _ = pairs(EVENTS.filter(pl.col("event_id") == SENATE["event_id"]), ARTICLES)
    writer.write(rows[:1])
    prompt = next(_first_user(r) for r in servers[0].requests if _first_user(r).startswith("Please generate"))
    article_text = prompt.split("# Article\n", 1)[1]
    assert article_text.endswith(" [...]") and len(article_text) <= 300
    with pytest.raises(ConfigError, match="article_chars"):
        make_writer(servers, article_chars=50)


def test_the_factory_reads_the_environment_and_refuses_an_unserved_model(
        servers: tuple[ScriptedLLM, ScriptedLLM], tmp_path: Path) -> None:
    env = {"TIMELYQA_LLM_BASE_URL": servers[0].url, "TIMELYQA_LLM_MODEL": "writer-7b",
           "TIMELYQA_CHECK_LLM_BASE_URL": servers[1].url, "TIMELYQA_CHECK_LLM_MODEL": "checker-8b"}
    writer = llm_news_writer(cache_dir=tmp_path, environ=env)
    assert writer.models.independent and writer.generator == "livenewsbench_qa_writer_v1+llm:writer-7b"
    with pytest.raises(ConfigError, match="does not serve model 'writer-70b'"):
        llm_news_writer(cache_dir=tmp_path, environ={**env, "TIMELYQA_LLM_MODEL": "writer-70b"})
    assert servers[0].calls + servers[1].calls == 0, "refused before any work"
