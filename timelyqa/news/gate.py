"""The news source's own gate rules, run after the common ones (`timelyqa.quality.COMMON`), and the masking that keeps
the columns released beside a question from stating its answer.

A news row is released with its event's portal summary and topic, so that a reader knows which event a question is
about. The template masks a span of that very summary, and a model's answer is often in it too: released as it is,
the summary hands the answer to any model shown the row. The answer is masked in those columns (`___`), and the gate
drops a row whose columns still state it in a form the masking did not see (an alias, a grouped number).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
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
    ANSWER_IN_COLUMNS = "answer_in_columns", ("a column released beside the question (the event's summary or topic) "
                                              "states the answer")


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


def gate_row(event: Mapping[str, Any], question: str, answer: Typed) -> dict[str, Any]:
    """The columns the gate reads of a candidate, as the row will release them."""
    return {"question": question, **answer.row(), "event_date": event["date"], "event_id": event["event_id"],
            **masked_context(event, answer)}


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


def answer_in_columns(row: Mapping[str, Any]) -> NewsQualityReject | None:
    """The event's summary or topic, as released, states the answer."""
    forms = _forms(row)
    for column in CONTEXT:
        if any(_found(str(row.get(column) or ""), form) for form in forms):
            return NewsQualityReject.ANSWER_IN_COLUMNS
    return None


RULES: tuple[Rule, ...] = (*COMMON, answer_is_event_day, answer_in_columns)
"""The news gate: the common rules, then the news source's own."""
