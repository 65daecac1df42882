"""The template's questions from an article's facts (`timelyqa.news.facts`): which sentences read alone, on the
demo's invented articles and on real ones (the extraction benchmark's hand-checked bodies, each paired with a
one-line summary written for these tests as the portal would; tests/fixtures/news/benchmark_events.json), with the
reviewer's verdict on what the template writes from them."""

from __future__ import annotations

import json
import os
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from scripts import make_demo_news
from timelyqa.llm.check import sub_match
from timelyqa.news.facts import article_masks, dated, usable
from timelyqa.news.frames import ARTICLE_SCHEMA, EVENT_SCHEMA, event_id
from timelyqa.answers import number, text
from timelyqa.news.gate import RULES, NewsQualityReject, _found
from timelyqa.news.portal import read_events
from timelyqa.news.templates import template_questions
from timelyqa.quality import judge

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "news" / "benchmark_events.json"


def _checkout() -> Path:
    """The project's main checkout: this one, or the one a git worktree (`.git` a file naming its gitdir) hangs on."""
    marker = ROOT / ".git"
    if marker.is_file() and (line := marker.read_text(encoding="utf-8").strip()).startswith("gitdir: "):
        gitdir = Path(line.removeprefix("gitdir: "))
        if gitdir.parent.name == "worktrees":
            return gitdir.parents[2]
    return ROOT


BENCHMARK = Path(os.environ.get("TIMELYQA_EXTRACTION_BENCHMARK") or
                 _checkout().parent / "shared" / "extraction-benchmark")
"""The benchmark stays out of the repository (its bodies are the outlets' text): CI clones the project beside
`shared/`; elsewhere TIMELYQA_EXTRACTION_BENCHMARK names the folder."""

FLOOD = "Flooding along the Alder River forces the evacuation of 3,400 residents from Port Alder's eastern districts."


@pytest.mark.parametrize(("sentence", "kept"), [
    ("The river rose 2.7 metres above the usual level after three days of rain.",
     "The river rose 2.7 metres above the usual level after three days of rain"),  # "the river": the Alder River
    ("The river rose 2.7 metres above its usual level after three days of rain.", None),  # "its"
    ("The company said 4,200 firms use the software.", None),  # which company?
    ("Rescue crews brought 85 people out of flooded homes, the council said on Thursday.",
     "Rescue crews brought 85 people out of flooded homes"),  # the attribution left out
    ("PORT ALDER, Nov 12 - Rescue crews brought 85 people out of flooded homes.",
     "Rescue crews brought 85 people out of flooded homes"),  # the dateline left out
    ("\u201cWe brought 85 people out,\u201d a firefighter said.", None),  # a quotation
    ("Rescue crews brought 85 people out of flooded homes today.", None),  # a day of the writer's
    ("Port Alder is the largest town on the Alder River.", None),  # a standing fact, not the event's
    ("Both rivers burst their banks in 2019.", None),  # "both": which two?
])
def test_a_sentence_is_used_only_when_it_reads_alone_after_the_summary(sentence: str, kept: str | None) -> None:
    assert usable(sentence, FLOOD) == kept


def test_a_day_without_its_year_is_dated_nearest_the_event() -> None:
    assert dated("1 September", text("1 September"), date(2026, 7, 14)).value.date == "2026-09-01"
    assert dated("5 January", text("5 January"), date(2026, 12, 20)).value.date == "2027-01-05"
    assert dated("2.7", number("2.7"), date(2026, 7, 14)) == number("2.7")


def test_every_demo_event_has_a_fact_its_summary_does_not_state() -> None:
    """The demo's articles (scripts/make_demo_news.py) each carry at least one fact of their event that the portal's
    line does not, so that no demo question is answered by the portal alone."""
    events = read_events(ROOT / "data" / "demo" / "news" / "portal.xml", date(2026, 1, 1), date(2026, 12, 31)).frame
    for event in events.to_dicts():
        texts = ["\n".join(s.paragraphs) for s in make_demo_news.STORIES if any(s.path in u for u in event["urls"])]
        found = article_masks(event, texts)
        assert found, event["summary"]
        for m in found:
            assert not _found(event["summary"], m.answer), (m.question, m.answer)
            assert any(sub_match(t, m.answer) for t in texts), (m.question, m.answer)  # the article states it


# ---------------------------------------------------------------- real articles: the benchmark's bodies

SHIP = {  # key: (question, answer, answer type) the template writes, each one a reviewer ships
    "432362af0be4": ("On 17 November 2019: A case of bubonic plague is reported in Inner Mongolia, China, after a "
                     "hunter ate a wild rabbit. A total of how many people who were in close contact with the patient "
                     "were put under medical quarantine?", "28", "number"),
    "7a457a4f7173": ("On 18 November 2019: A New York man pleads guilty to threatening to kill U.S. Representative "
                     "Ilhan Omar. Carlineo faces a maximum of how many years in prison and up to a $250,000 fine?",
                     "10", "number"),
    "51374560f400": ("On 19 November 2019: Home Depot cuts its sales forecast for fiscal 2019 after third-quarter "
                     "revenue misses estimates. Comparable sales rose what percentage, missing the 4.8 percent gain "
                     "that was expected?", "3.6%", "quantity"),
}
SENT_BACK = {  # what earlier drafts of the template wrote from the same bodies, and why a reviewer sends it back
    "Both diseases are associated with the Black Death pandemic that killed an estimated how many people":
        "'both diseases' points back at a sentence the question does not have; and the Black Death is background",
    "WeWork is headquartered in which place?": "a standing fact of the firm, not of the investigation; WeWork twice",
    "Europa ― located some how many miles away": "background, and Europa named twice ('Europa. Europa' hid it)",
    "good fortune in which place culture": "'Chinese' is no place, and a name that modifies a noun takes no 'which'",
    "the county of which county": "the class said twice",
    "north China’s which agency": "a question word after a possessive; a region is no agency",
    "the U.S?": "a sentence cut after an abbreviation",
    "On 18 November 2019: Who?": "the summary cut at 'U.S.': no question at all",
}
NO_QUESTION = {"360c732d1fdb", "f344ca5fb36e", "1ace8c85aaee"}
"""Events that get no question: their articles' facts are background or repeat the summary's names, and the
summary's own spans are not stated in the article ("$12.9bn", "Keck") or take no question word."""


@pytest.fixture(scope="module")
def benchmark() -> dict[str, Any]:
    truth_file = BENCHMARK / "ground-truth.json"
    if not truth_file.is_file():
        pytest.fail(f"the extraction benchmark is missing: no {truth_file} (clone the project beside shared/, or "
                    f"set TIMELYQA_EXTRACTION_BENCHMARK)")
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    events, articles, keys = [], [], {}
    for e in json.loads(FIXTURE.read_text(encoding="utf-8"))["events"]:
        key = next(k for k in truth if k.startswith(e["key"]))
        page = truth[key]
        ev = {"event_id": event_id(e["date"], e["summary"]), "date": date.fromisoformat(e["date"]),
              "category": e["category"], "topic": e["topic"], "summary": e["summary"], "urls": [page["url"]],
              "outlets": ["benchmark"], "page": f"Portal:Current events/{e['date']}", "revision": "0"}
        events.append(ev)
        keys[ev["event_id"]] = e["key"]
        articles.append({"url": page["url"], "final_url": page["url"], "outlet": "benchmark",
                         "event_id": ev["event_id"], "title": None, "published": ev["date"], "author": None,
                         "text": page["articleBody"], "rendered": False, "sha256": key, "fetched_at": None,
                         "archive_url": None})
    written = template_questions(pl.DataFrame(events, schema=EVENT_SCHEMA, orient="row"),
                                 pl.DataFrame(articles, schema=ARTICLE_SCHEMA, orient="row"))
    candidates = [m.question for ev, a in zip(events, articles, strict=True) for m in article_masks(ev, [a["text"]])]
    return {"written": written, "keys": keys, "candidates": candidates, "events": events}


def test_real_articles_give_only_questions_a_reviewer_ships(benchmark: dict[str, Any]) -> None:
    written, keys = benchmark["written"], benchmark["keys"]
    got = {keys[r.event_id]: (r.question, r.answer, r.answer_type) for r in written.records}
    assert got == SHIP
    assert set(keys.values()) - set(got) == NO_QUESTION
    for r in written.records:
        assert judge(r.model_dump(), RULES) is None
        assert r.event_summary == next(e["summary"] for e in benchmark["events"] if e["event_id"] == r.event_id)


@pytest.mark.parametrize("words", sorted(SENT_BACK))
def test_no_question_a_reviewer_sends_back_is_written_from_real_articles(benchmark: dict[str, Any],
                                                                        words: str) -> None:
    written = [r.question for r in benchmark["written"].records]
    assert not [q for q in written + benchmark["candidates"] if words in q], SENT_BACK[words]


def test_on_real_articles_a_span_of_the_summary_is_sent_back_when_the_article_says_more(
        benchmark: dict[str, Any]) -> None:
    plague = [d for d in benchmark["written"].rejected if d.item.get("answer") == "Inner Mongolia"]
    assert [d.reason for d in plague] == [NewsQualityReject.SUMMARY_ANSWERS]
