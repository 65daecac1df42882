"""The question-quality gate every source runs before verification: rules from a row to a reason or None.

A rule reads a candidate row as a mapping (the record's columns: `question`, `answer`, `answer_type`,
`answer_value`, and any of the source's own) and returns the one reason a reviewer would send the question back
for, or None to keep it. Each source runs `COMMON` plus rules of its own (a site-tree question must name its page),
through `Gate`, which keeps every rejected row with its reason for the stage writer: the gate's drops are counted in
the funnel, in `rejected.parquet` and in the card like any other.

The rules need no model: what they look for is in the words. They judge the question a user reads, so a source
runs them on the question as it will be released.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from timelyqa.reasons import Dropped, Reason
from timelyqa.rewards import normalize

GATE_STAGE = "quality"
"""The stage name every source declares for the gate (`timelyqa.sources.Stage(GATE_STAGE, ...)`)."""
GATE_PASSED = "questions_gated"
"""The funnel line the gate counts: the candidates it let through."""


class QualityReject(Reason):
    BLANK_IN_QUESTION = "blank_in_question", "the question is a cloze with a blank (___), not a question"
    ANSWER_IS_SENTENCE = "answer_is_sentence", "the answer is a sentence or a passage, not a short answer"
    FOOTNOTE_ANSWER = "footnote_answer", "the answer is a footnote or table marker such as (5), [3] or †"
    LABEL_FRAGMENT = "label_fragment", ("the question asks for a label fragment as if it were a noun (\"what is the in "
                                        "service from?\", \"what is the changed in version 3.10?\")")
    WHAT_FOR_PERSON = "what_for_person", "a person is asked with \"what\" instead of \"who\""
    WHAT_FOR_COUNT = "what_for_count", "a count is asked with \"what\" instead of \"how many\""
    ENTITY_NAMED_TWICE = "entity_named_twice", "the question names one entity twice"
    ANSWER_IN_QUESTION = "answer_in_question", "the question contains its answer"


Rule = Callable[[Mapping[str, Any]], Reason | None]

_BLANK = re.compile(r"_{3,}|\[blank\]|\[\s*\.\.\.\s*\]", re.IGNORECASE)
_MARKER = re.compile(r"^\s*(?:[\(\[]\s*[0-9a-z]{1,3}\s*[\)\]]|[*†‡§¶#]+|\d{1,2}[\)\]])\s*$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;:](?:\s|$)")
_HONORIFIC = re.compile(r"^(?:prof(?:essor)?|dr|mr|mrs|ms|miss|mx|sir|dame|lord|lady|rev(?:erend)?)\.?\s+[A-Z]",
                        re.IGNORECASE)
_PERSON_NOUNS = frozenset("""head director deputy chair chairman chairwoman chairperson speaker investigator lead leader
    manager coach president mayor premier governor minister chancellor dean provost principal founder author editor
    supervisor tutor lecturer convenor organiser organizer coordinator contact officer secretary treasurer ceo cto cfo
    captain owner winner keynote rector vice-chancellor chief""".split())
# What a question asks of: "what is/are the <phrase> (on the "..." page|of X|for Y)?"
_WHAT_THE = re.compile(r"\b(?i:what (?:is|are|was|were) the) (?P<phrase>[^?\"]+?)"
                       r"(?=\s+(?:on|of|for|at|in) (?:the )?[\"A-Z]|\?|$)")
_FUNCTION_END = frozenset("""from to of in on at by for since until with and or the a an as is are was were""".split())
_VERSION_NOTE = re.compile(r"\b(?:changed|new|added|deprecated|removed) in version\b|¶|\bversionadded\b",
                           re.IGNORECASE)
_PROPER = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|da|del|van|von|la|le|the)?\s*[A-Z][\w'’.-]*)*")
_NAME_STOP = re.compile(r"(?<=[a-z]{2})\.\s+(?=[A-Z])")
_STOP_CAPITALS = frozenset({"I", "On", "In", "At", "As", "What", "Who", "Which", "When", "Where", "How", "The", "A",
                            "An", "Is", "Are", "Was", "Were", "Current", "Europe", "London"})


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’-]+", text)


def blank_in_question(row: Mapping[str, Any]) -> QualityReject | None:
    return QualityReject.BLANK_IN_QUESTION if _BLANK.search(str(row["question"])) else None


def answer_is_sentence(row: Mapping[str, Any]) -> QualityReject | None:
    """A text or entity answer of more than 12 words, or of more than 5 that reads as a sentence (ends with a full stop,
    or holds one inside); list items each alike."""
    if row.get("answer_type") not in ("text", "entity", "list", None):
        return None
    value = row.get("answer_value") or {}
    parts = list(value.get("items") or []) if row.get("answer_type") == "list" else [str(row["answer"])]
    for part in parts:
        words = _words(part)
        if len(words) > 12 or (len(words) > 5 and _SENTENCE_END.search(part.strip().removesuffix("etc."))):
            return QualityReject.ANSWER_IS_SENTENCE
    return None


def footnote_answer(row: Mapping[str, Any]) -> QualityReject | None:
    value = row.get("answer_value") or {}
    parts = list(value.get("items") or []) if row.get("answer_type") == "list" else [str(row["answer"])]
    return QualityReject.FOOTNOTE_ANSWER if any(_MARKER.match(p) for p in parts) else None


def _asked_phrase(question: str) -> str | None:
    match = _WHAT_THE.search(question)
    return match["phrase"].strip() if match else None


def label_fragment(row: Mapping[str, Any]) -> QualityReject | None:
    """The phrase asked for is no noun phrase: it ends in a function word ("the in service from"), carries a version
    note or a pilcrow, or is a quoted label with one of those."""
    question = str(row["question"])
    if _VERSION_NOTE.search(question):
        return QualityReject.LABEL_FRAGMENT
    phrase = _asked_phrase(question)
    if phrase is None:
        return None
    words = [w.casefold() for w in _words(phrase)]
    if not words or words[-1] in _FUNCTION_END or words[0] in _FUNCTION_END - {"the", "a", "an"}:
        return QualityReject.LABEL_FRAGMENT
    return None


def _looks_like_person(row: Mapping[str, Any]) -> bool:
    answer = str(row["answer"])
    if _HONORIFIC.match(answer):
        return True
    phrase = _asked_phrase(str(row["question"])) or ""
    head = [w.casefold() for w in _words(re.sub(r"\([^)]*\)", "", phrase))]
    return row.get("answer_type") in ("entity", "list", "text") and bool(head) and head[-1] in _PERSON_NOUNS


def what_for_person(row: Mapping[str, Any]) -> QualityReject | None:
    question = str(row["question"])
    if not re.search(r"\bwhat\b", question, re.IGNORECASE) or re.search(r"\bwho\b", question, re.IGNORECASE):
        return None
    return QualityReject.WHAT_FOR_PERSON if _looks_like_person(row) else None


def what_for_count(row: Mapping[str, Any]) -> QualityReject | None:
    """A count (a number with no unit) asked "what is/are the members" instead of "how many members"; a number that is
    no count (a squad number, a rate, a percentage, a year) is asked "what" rightly, so only plural nouns count."""
    if row.get("answer_type") != "number":
        return None
    phrase = _asked_phrase(str(row["question"]))
    if phrase is None:
        return None
    words = _words(phrase)
    return QualityReject.WHAT_FOR_COUNT if words and re.fullmatch(r"[a-z]+[^s]s", words[-1]) else None


def entity_named_twice(row: Mapping[str, Any]) -> QualityReject | None:
    """A proper name said twice ("Which event is in Brazil and is located at a city that is in Brazil?"); quoted page
    titles and the time stated before the question are not counted."""
    question = re.sub(r"^(?:current time:[^.]*\.|as of [^,]*,|on \d{1,2} \w+ \d{4}:)\s*", "", str(row["question"]),
                      flags=re.IGNORECASE)
    # A quoted part is a page title or a name's own words ('Club "Haka"'): it and the word it names go as one.
    question = re.sub(r"(?:\b[A-Z][\w'’.-]*\s+)?(?:\"[^\"]*\"|“[^”]*”)", " , ", question)
    # A full stop after a word ends its name ("the moon Europa. Europa's ice" names Europa twice); an initial's or
    # an abbreviation's does not ("U.S.", "St. Louis").
    names = [m.group(0).strip() for part in _NAME_STOP.split(question) for m in _PROPER.finditer(part)]
    names = [re.sub(r"['’]s$", "", n) for n in names]  # "Europa's ice" names Europa
    names = [n for n in names if n not in _STOP_CAPITALS and len(n) > 1]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return QualityReject.ENTITY_NAMED_TWICE
        seen.add(name)
    return None


def answer_in_question(row: Mapping[str, Any]) -> QualityReject | None:
    """The answer's words, or any item's, in the question's (a number as a whole token: "10" is not in "2010")."""
    question = f" {normalize(str(row['question']))} "
    value = row.get("answer_value") or {}
    parts = list(value.get("items") or []) if row.get("answer_type") == "list" else [str(row["answer"])]
    for part in parts:
        key = normalize(part)
        if key and f" {key} " in question:
            return QualityReject.ANSWER_IN_QUESTION
    return None


COMMON: tuple[Rule, ...] = (blank_in_question, answer_is_sentence, footnote_answer, label_fragment, what_for_person,
                            what_for_count, entity_named_twice, answer_in_question)
"""The rules every source's gate runs, in the order a reviewer reads a question."""


def judge(row: Mapping[str, Any], rules: Sequence[Rule] = COMMON) -> Reason | None:
    """The first reason any rule gives, or None: the question passes."""
    for rule in rules:
        reason = rule(row)
        if reason is not None:
            return reason
    return None


@dataclass
class Gate:
    """One source's gate: its rules, the rows it let through and the ones it dropped, each with its reason."""

    rules: Sequence[Rule] = COMMON
    passed: int = 0
    dropped: list[Dropped] = field(default_factory=list)

    def check(self, row: Mapping[str, Any]) -> Dropped | None:
        """None when the row passes; else the row sent back (its question and answer, the reason, a detail naming the
        question), also held in `dropped`."""
        reason = judge(row, self.rules)
        if reason is None:
            self.passed += 1
            return None
        detail = f"{_clip(str(row['question']))} -> {_clip(str(row['answer']))} ({reason})"
        sent_back = Dropped({"question": row["question"], "answer": row["answer"]}, reason, detail)
        self.dropped.append(sent_back)
        return sent_back

    def keep(self, row: Mapping[str, Any]) -> bool:
        """True to keep the row; else it is held in `dropped` with its reason."""
        return self.check(row) is None

    def filter(self, rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return [row for row in rows if self.keep(row)]


def _clip(text: str, limit: int = 160) -> str:
    text = unicodedata.normalize("NFKC", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
