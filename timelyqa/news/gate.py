"""The news source's own gate rules, run after the common ones (`timelyqa.quality.COMMON`), and the masking that keeps
the columns released beside a question from stating its answer.

A news row is released with its event's portal summary and topic, so that a reader knows which event a question is
about. The template masks a span of that very summary, and a model's answer is often in it too: released as it is,
the summary hands the answer to any model shown the row. The answer is masked in those columns (`___`), and the gate
drops a row whose columns still state it in a form the masking did not see (an alias, a grouped number).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from timelyqa.answers import Typed
from timelyqa.quality import COMMON, Rule
from timelyqa.reasons import Reason
from timelyqa.rewards import normalize

MASK = "___"
CONTEXT = ("event_summary", "topic")
"""The columns released beside the question that say what the event was (the evidence columns name the answer's
source, which a benchmark shows a grader, never the model asked)."""
_TOKEN = re.compile(r"\w+(?:[.,]\d+)*")
"""A word, or a number with its decimal point or thousands commas ("3,400", "5.8")."""


class NewsQualityReject(Reason):
    ANSWER_IS_EVENT_DAY = "answer_is_event_day", ("the answer is the event's day, which the question names (\"On 3 "
                                                  "June 2026: ... on what date?\")")
    ANSWER_IN_COLUMNS = "answer_in_columns", ("a column released beside the question (the event's summary or topic, "
                                              "the article's headline or address) states the answer")
    SUMMARY_ANSWERS = "summary_answers", ("the event's portal summary states the answer while its article holds a "
                                          "fact the summary does not: a reader of the portal answers it unread")


def _forms(row: Mapping[str, Any]) -> list[str]:
    """The answer's surface forms a reader would recognise: the answer and its aliases, but no bare short number of a
    scaled amount ("18" of "18 million euros": any "18" in a summary is no answer)."""
    value = row.get("answer_value") or {}
    value = value if isinstance(value, Mapping) else value.model_dump()
    forms = [str(row["answer"]), *(row.get("answer_aliases") or [])]
    if value.get("items"):
        forms += list(value["items"])
    if value.get("scale"):
        forms = [f for f in forms if not re.fullmatch(r"[\d.,]+", f.strip())]
    return [f for f in forms if normalize(f)]


def _found(text: str, form: str) -> list[tuple[int, int]]:
    """Where `form` occurs in `text` in the grader's normal form (case, punctuation and articles aside), on word
    boundaries, as character spans of `text`."""
    words: list[tuple[str, int, int]] = []
    for m in _TOKEN.finditer(text):
        words += [(w, m.start(), m.end()) for w in normalize(m.group()).split()]
    want = normalize(form).split()
    spans = []
    for i in range(len(words) - len(want) + 1):
        if [w for w, _, _ in words[i:i + len(want)]] == want:
            spans.append((words[i][1], words[i + len(want) - 1][2]))
    return spans


def masked(text: str | None, forms: Iterable[str]) -> str | None:
    """`text` with every occurrence of any of `forms` replaced by `___` (longest forms first)."""
    if not text:
        return text
    for form in sorted(set(forms), key=lambda f: -len(normalize(f))):
        for start, end in reversed(_found(text, form)):
            text = text[:start] + MASK + text[end:]
    return text


def masked_context(event: Mapping[str, Any], answer: Typed) -> dict[str, str | None]:
    """The event's summary and topic as a row releases them: the answer masked."""
    forms = _forms(answer.row())
    return {"event_summary": masked(event["summary"], forms), "topic": masked(event.get("topic"), forms)}


def gate_row(event: Mapping[str, Any], question: str, answer: Typed, *, articles: Sequence[Mapping[str, Any]] = (),
             facts: Sequence[str] = ()) -> dict[str, Any]:
    """The columns the gate reads of a candidate, as the row will release them: with the event's `articles` (any may
    be the one the row names: their headlines and addresses), and, not released, the event's whole `summary` and the
    answers of the `facts` its articles state that the summary does not (`timelyqa.news.facts`)."""
    return {"question": question, **answer.row(), "event_date": event["date"], "event_id": event["event_id"],
            **masked_context(event, answer), "evidence": [{"title": a.get("title"), "url": a.get("url")}
                                                          for a in articles],
            "summary": event["summary"], "article_facts": list(facts)}


def answer_is_event_day(row: Mapping[str, Any]) -> NewsQualityReject | None:
    """The answer is a day and month the question names as the event's day: "On 19 January 2026: ... on what
    date?" -> "January 19"."""
    day = row.get("event_date")
    if not isinstance(day, date):
        return None
    named = {str(day.day), day.strftime("%B").lower()}
    if not named <= set(normalize(str(row["question"])).split()):
        return None
    value = row.get("answer_value") or {}
    iso = (value if isinstance(value, Mapping) else value.model_dump()).get("date") or ""
    same = iso[5:] == f"{day:%m-%d}" or named <= set(normalize(str(row["answer"])).split())
    return NewsQualityReject.ANSWER_IS_EVENT_DAY if same else None


def _slug(url: str | None) -> str:
    """The words of an address's last part: "alder-river-floods" of ".../2026-11-12/alder-river-floods.html"."""
    last = re.sub(r"\.[a-z]+$", "", str(url or "").rstrip("/").rsplit("/", 1)[-1])
    return " ".join(re.split(r"[-_]+", last))


def _shown(row: Mapping[str, Any]) -> list[str]:
    """The texts released beside the question: summary, topic, the article's headline and address."""
    texts = [str(row.get(column) or "") for column in CONTEXT]
    for evidence in row.get("evidence") or []:
        evidence = evidence if isinstance(evidence, Mapping) else evidence.model_dump()
        texts += [str(evidence.get("title") or ""), _slug(evidence.get("url"))]
    return texts + [_slug(row.get("article_url"))]


def answer_in_columns(row: Mapping[str, Any]) -> NewsQualityReject | None:
    """A column released beside the question states the answer: the event's summary or topic, the headline of the
    article (`evidence`), or the words of its address ("tallyframe-4" of a question answered "4")."""
    forms = _forms(row)
    for shown in _shown(row):
        if any(_found(shown, form) for form in forms):
            return NewsQualityReject.ANSWER_IN_COLUMNS
    return None


def summary_answers(row: Mapping[str, Any]) -> NewsQualityReject | None:
    """The event's portal summary (`summary`, as the portal says it) states the answer, and its articles state a
    fact it does not (`article_facts`): the question tests the portal line, not the article."""
    if not row.get("article_facts") or not row.get("summary"):
        return None
    if any(_found(str(row["summary"]), form) for form in _forms(row)):
        return NewsQualityReject.SUMMARY_ANSWERS
    return None


RULES: tuple[Rule, ...] = (*COMMON, answer_is_event_day, answer_in_columns, summary_answers)
"""The news gate: the common rules, then the news source's own."""
