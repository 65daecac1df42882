"""Which facts of a crawl's pages are asked: each rule a function beside its reason (`QuestionReject`), and
`fact_reject`, the first rule a fact fails.

A label is asked only when it names a fact (a noun phrase in sentence case, not code, a pilcrow, a version note, a
footnote column, a see-also entry, a label ending in a preposition, nor a term of a long list no other page uses),
and a value only when it is a short answer (not a sentence, code, a URL or footnote markers).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from timelyqa.reasons import Reason
from timelyqa.site_tree.evidence import refound
from timelyqa.site_tree.kinds import is_person
from timelyqa.site_tree.templates import askable, is_cell
from timelyqa.site_tree.tree import Located, norm

GENERIC_LABELS = frozenset({"name", "value", "item", "items", "detail", "details", "info", "information", "note",
                            "notes", "more", "link", "links", "description", "other", "misc", "comment", "comments",
                            "remarks", "total", "text", "content", "here", "read more", "click here", "see also"})
PLACEHOLDERS = frozenset({"-", "–", "—", "n/a", "na", "none", "nil", "null", "tba", "tbd", "tbc", "unknown",
                          "coming soon", "to be announced", "?", "...", "…", "empty"})
MAX_LABEL_WORDS, MAX_LABEL_CHARS = 8, 60
MAX_VALUE_WORDS, MAX_VALUE_CHARS = 12, 80
MAX_SHORT_WORDS = 8
"""A template's value of more words is a description, however it is punctuated."""
LONG_LIST = 6
"""A page's list of this many labelled values or more, whose labels no other page uses, is a list of terms."""
_PARENS = re.compile(r"\s*\([^)]*\)")


class QuestionReject(Reason):
    GENERIC_LABEL = "generic_label", "the label names no property (a stock word, or it starts with no letter)"
    LABEL_TOO_LONG = "label_too_long", "the label is too long to ask by (over 8 words or 60 characters)"
    PLACEHOLDER_VALUE = "placeholder_value", "the value is a placeholder (none, TBA, a dash), not an answer"
    FACT_TOO_LONG = "fact_too_long", "the value is longer than a short answer (over 12 words or 80 characters)"
    AMBIGUOUS_FACT = "ambiguous_fact", "the page gives the label more than one value"
    FACT_ON_SHALLOWER_PAGE = ("fact_on_shallower_page",
                              "a shallower page states the same label and value: the depth overstates the difficulty")
    LABEL_NAMES_NO_FACT = ("label_names_no_fact", "the label is no noun phrase naming a fact (code, a pilcrow, a "
                           "version note, a sentence, a footnote column, a trailing preposition, the page's own title)")
    VALUE_IS_SENTENCE = "value_is_sentence", "the value is a sentence or a description, not a short answer"
    VALUE_IS_CODE = ("value_is_code", "the value is code (a signature, an expression, markup, a URL), or in a table's "
                     "column most of whose values are code")
    FOOTNOTE_VALUE = "footnote_value", "the value is only footnote markers such as (5) or [1][2]"
    LABEL_ON_ONE_PAGE = ("label_on_one_page", "a term of a long list on one page (a glossary, a see-also list), used "
                         "on no other page of the site: a term defined, not a field the site's pages share")
    VALUE_IN_TITLE = "value_in_title", "the value is in the title of its page, which the question names"
    DATE_OF_NOTHING = ("date_of_nothing", "a bare \"Date\" on a page that does not say what it is the date of (no "
                       "event's page: a documentation page's build date, a stamp)")
    PROSE_CELL = ("prose_cell", "a table's cell of prose: a column of descriptions (features, purpose, remarks), or "
                  "a lower-case phrase of five words or more in parts")
    FACT_NOT_REFOUND = "fact_not_refound", "the fact is not found again on the stored page"
    LABEL_OVER_SHARE = ("label_over_share", "the site's questions already ask this label (normalised; a table's "
                        "column) as often as its share allows: one kind of question must not make up a site")
    PAGE_TOO_SHALLOW = "page_too_shallow", "the page is at depth 0 or 1; single-source questions ask depths 2 to 4"
    PAGE_TOO_DEEP = "page_too_deep", "the page is deeper than 4; single-source questions ask depths 2 to 4"
    DUPLICATE_QUESTION = "duplicate_question", "an earlier candidate (from a shallower page) asks the same question"



_CODE_LABEL = re.compile(r"[¶\[\]{}=*<>|`_/\\%'\"+^~&@]|^\w+ [-] \w+$|\w\(|\(\)|\w\.\w|\w::\w|^[a-z]+[A-Z]")
_VERSION_NOTE = re.compile(r"\b(?:changed|new|added|deprecated|removed)\b.*\bversion\b|\bversion \d", re.IGNORECASE)
_ENDS_FUNCTION = frozenset("""to of in on at by for with and or the a an as is are was were within per via than
                              into onto upon about after before""".split())
_CODE_VALUE = re.compile(r"https?://|\w\(.*\)|__\w|%\(|\w\[|[=*{}<>|`\\]|->|\[[^\]]*[,\s][^\]]*\]|\w \+ \w|^\w+\[")
_MARKERS = re.compile(r"^(?:\s*(?:[(\[]\s*[0-9a-z]{1,3}\s*[)\]]|[*†‡§¶#]+))+\s*$", re.IGNORECASE)
_REFERENCE = re.compile(r"^(?:module|package|class|function|method|attribute|exception|pep|rfc)\s+\S+$", re.IGNORECASE)
"""A see-also entry ("Module fnmatch", "PEP 8"): a reference to another page, not a property."""
_VERBS = frozenset("is are was were be been can could will would should must may might does do did has have".split())
_SENTENCE = re.compile(r"[.!?;]\s+\S|[.!?]$")
_ABBREVIATION = re.compile(r"\b(?:Prof|Dr|Mr|Mrs|Ms|Mx|St|Jr|Sr|No|vs|etc|e\.g|i\.e|approx|incl)\.", re.IGNORECASE)


def label_names_no_fact(fact: Located) -> bool:
    """The label (a cell's column and row each) is no noun phrase naming one fact of the page."""
    if _VERSION_NOTE.search(fact.label) or "¶" in fact.label or norm(fact.label) in (norm(fact.subject), ""):
        return True
    if is_cell(fact):
        column, row = fact.label.split(" for ", 1)
        # a table from an acronym's names to a column of one word ("TOML" -> "Python") maps vocabularies
        conversion = bool(re.fullmatch(r"[A-Z]{2,}", fact.context)) and len(column.split()) == 1
        return (conversion or norm(column) in GENERIC_LABELS or _noun_fails(column) or not column[:1].isupper()
                or sum(c.isalpha() for c in row) < 2 or bool(_CODE_LABEL.search(row)) or operator_row(row))
    return _noun_fails(fact.label) or not askable(fact.label) or not sentence_case(fact.label)


_OPERATOR_WORDS = _ENDS_FUNCTION | _VERBS | frozenset("not if else elif lambda yield await async del pass return "
                                                      "global nonlocal import from".split())


def operator_row(row: str) -> bool:
    """A table's row keyed by an operator or keyword ("is not", "not in", "and"): code written in words, not a
    name ("what is the meaning for is not" reads as no English)."""
    words = row.split()
    return bool(words) and all(w.islower() and w in _OPERATOR_WORDS for w in words)


def sentence_case(label: str) -> bool:
    """A property's label is written in sentence case ("Principal investigator", "Tuition fee (home)", "GPUs");
    a term or a title is not ("UserString", "module poplib", "Installing Python Modules", "PEP 540 – Add a new
    UTF-8 mode", "Tcl'2004 conference presentation"): a definition list of terms gives descriptions, not facts."""
    words = _PARENS.sub("", label).split()
    if not words or not words[0][:1].isupper():
        return False
    first, later = words[0], words[1:]
    acronym = bool(re.fullmatch(r"[A-Z]{2,}s?", first))
    return (acronym or first[1:].islower() or first[1:] == "") and first.replace("-", "").isalpha() and all(
        w.islower() and not any(c.isdigit() for c in w) for w in later)


def _noun_fails(label: str) -> bool:
    words = [w.casefold() for w in re.findall(r"[\w'’-]+", label)]
    return (not words or bool(_REFERENCE.match(label)) or bool(_CODE_LABEL.search(label)) or label.rstrip().endswith(("?", ".", "!", ":"))
            or (words[-1] in _ENDS_FUNCTION) or bool(_VERBS & set(words)) or (words[-1] in ("from", "since") and not askable(label)))


def value_is_sentence(value: str) -> bool:
    """A sentence, or a description of clauses: a full stop inside or at the end of four words or more, or more
    than seven words with a comma."""
    words = value.split()
    plain = _ABBREVIATION.sub("", value).strip()
    return (len(words) > MAX_SHORT_WORDS or (len(words) >= 2 and plain.endswith(".")) or (len(words) >= 4 and bool(_SENTENCE.search(plain)))
            or (len(words) > 7 and "," in value))


DESCRIBING = frozenset("""features feature purpose explanation summary remarks usage use effect effects example
                          examples comments synopsis""".split())
"""A table's columns that describe their row in prose ("Features for nim": "turtles as nimsticks, event driven")."""
_PARTS = re.compile(r"[,;:]\s")


def prose_cell(fact: Located) -> bool:
    """A table's cell of prose: its column describes the row (`DESCRIBING`), or its value is five words or more in
    parts, most of them lower-case ("Shift-in, resume default character set"); a title ("Annual Lecture: Counting
    What Changes") or a column of people (a list of names) is no prose."""
    if not is_cell(fact):
        return False
    column = fact.label.split(" for ", 1)[0]
    if norm(column) in DESCRIBING:
        return True
    words = fact.value.split()
    lower = sum(w[:1].islower() for w in words)
    return not is_person(column) and len(words) >= 5 and bool(_PARTS.search(fact.value)) and lower * 2 > len(words)


EVENT_FIELDS = frozenset({"time", "times", "venue", "room", "location", "speaker", "speakers", "registration",
                          "where", "place", "start time", "end time", "doors open", "tickets", "booking"})
"""Labels that make a page an event's: its "Date" is the event's date."""
EVENT_WORDS = frozenset("""lecture event workshop conference seminar symposium festival meeting talk webinar
                           ceremony exhibition concert summit colloquium fair""".split())
"""Words of a page's subject that name an event ("Annual Lecture: Counting What Changes", "Open Day")."""


def date_of_nothing(fact: Located, on_page: Mapping[str, set[str]]) -> bool:
    """A bare "Date" (or "Dates"), no table cell, on a page that is no event's: the page does not say what it is
    the date of (the Python documentation's "Date: October 07, 2026" is the day the pages were built). An event's
    page has an event's fields (a time, a room, a speaker: `EVENT_FIELDS`) or an event's name (`EVENT_WORDS`,
    "Open Day")."""
    if is_cell(fact) or norm(fact.label) not in ("date", "dates"):
        return False
    words = {w.casefold() for w in re.findall(r"[A-Za-z]+", fact.subject)}
    event = bool(words & EVENT_WORDS) or "open day" in norm(fact.subject) or bool(set(on_page) & EVENT_FIELDS)
    return not event


def fact_reject(fact: Located, page: Mapping[str, Any], on_page: Mapping[str, set[str]],
                shallowest: Mapping[tuple[str, str], int], pages_of: Mapping[str, int],
                list_length: Mapping[str, int]) -> QuestionReject | None:
    """The first rule the fact fails, or None: its label, its value, its page, the stored page. `pages_of` counts
    the pages of the site that use each label (normalised), `list_length` the page's facts of each kind that are
    no table cell."""
    label, value = norm(fact.label), norm(fact.value)
    if label in GENERIC_LABELS or not fact.label[:1].isalpha():
        return QuestionReject.GENERIC_LABEL
    if len(label.split()) > MAX_LABEL_WORDS or len(label) > MAX_LABEL_CHARS:
        return QuestionReject.LABEL_TOO_LONG
    if label_names_no_fact(fact):
        return QuestionReject.LABEL_NAMES_NO_FACT
    if not is_cell(fact) and pages_of.get(label, 0) < 2 and list_length.get(fact.kind, 0) >= LONG_LIST:
        return QuestionReject.LABEL_ON_ONE_PAGE
    if _MARKERS.match(fact.value):
        return QuestionReject.FOOTNOTE_VALUE
    if value.strip("()[] ") in PLACEHOLDERS or not any(c.isalnum() for c in value):
        return QuestionReject.PLACEHOLDER_VALUE
    if len(value.split()) > MAX_VALUE_WORDS or len(value) > MAX_VALUE_CHARS:
        return QuestionReject.FACT_TOO_LONG
    if value_is_sentence(fact.value):
        return QuestionReject.VALUE_IS_SENTENCE
    if prose_cell(fact):
        return QuestionReject.PROSE_CELL
    if _CODE_VALUE.search(fact.value):
        return QuestionReject.VALUE_IS_CODE
    if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", norm(fact.subject)):
        return QuestionReject.VALUE_IN_TITLE
    if len(on_page[label]) > 1:
        return QuestionReject.AMBIGUOUS_FACT
    if date_of_nothing(fact, on_page):
        return QuestionReject.DATE_OF_NOTHING
    if shallowest[(label, value)] < fact.depth:
        return QuestionReject.FACT_ON_SHALLOWER_PAGE
    return None if refound(page, fact) else QuestionReject.FACT_NOT_REFOUND


def code_columns(facts: list[Located]) -> set[tuple[str, str]]:
    """The (table, column) pairs of a page's tables half or more of whose values are code ("print len" among
    "o.attr", "a[i]", "f(arg) C(arg)"): the column's other values are code too, written plainly."""
    values: dict[tuple[str, str], list[str]] = defaultdict(list)
    for f in facts:
        if is_cell(f):
            values[(f.context, f.label.split(" for ", 1)[0])].append(f.value)
    return {key for key, vs in values.items() if sum(bool(_CODE_VALUE.search(v)) for v in vs) * 2 >= len(vs)}
