"""What kind of answer a page's fact is: its label says what the value names, the value's shape says how it is
written; from them the fact's typed answer (`timelyqa.answers`) and the unit phrase its question says.

`site_facts_v1` records a fact's label and value, and a *structural* kind (table, dl, field), nothing of what the
value is. The answer type is a pure function of the label and value the parser recorded, so it is computed here,
where a question reads the fact, rather than stored as a fourth column: the crawls already stored (and the `facts`
column's schema) stay as they are, and the same fact gets the same type on every run. The label is the knowledge,
by its head noun (a table cell "<column> for <row>" by its column, "Head of Admissions" by "head", "Tuition fee
(international)" by "fee"):

- a date word ("Date", "Start date", "Deadline", "End", "Founded", "Since", "Published", "Director from") -> date;
- a sum of money ("Tuition fee", "Grant", "Price", "Budget") -> quantity, in the currency the value writes
  ("£26,900") or the label's parenthesis names ("Fee (GBP)");
- a count ("Members", "Places", "Credits", "Nodes", "Number of seats"), or any plural noun whose value is a bare
  whole number ("Lecture theatres: 3") -> number;
- a person (`PERSON_WORDS`, asked with "who"), organisation, programme or event ("Speaker", "Principal investigator", "Funder", "Programme",
  "Group", "Event") -> entity;
- anything else (rooms, times, codes, terms, phrases) -> text.

A label that promises a date, a number or a sum whose value is not one ("Dates: Wednesday 2 and Thursday 3 December
2026", "Fee: free") is graded as text: the row is kept, and the grader compares its words.
"""

from __future__ import annotations

import re

from timelyqa.answers import NotTyped, Typed, entity, text, typed, unit_phrase

DATE_WORDS = frozenset({"date", "dates", "deadline", "start", "starts", "end", "ends", "published", "posted",
                        "updated", "founded", "established", "since", "from", "opens", "closes", "opened", "closed",
                        "until", "launched", "day", "open", "close", "begins"})
MONEY_WORDS = frozenset({"fee", "fees", "tuition", "grant", "price", "cost", "costs", "budget", "funding", "salary",
                         "stipend", "award", "prize", "bursary", "scholarship"})
COUNT_WORDS = frozenset({"members", "places", "credits", "nodes", "projects", "seats", "capacity", "students",
                         "staff", "gpus", "participants", "attendees", "employees", "number", "count", "modules",
                         "positions", "vacancies", "rooms", "beds", "papers", "speakers", "volumes"})
ENTITY_WORDS = frozenset({"head", "director", "speaker", "chair", "funder", "investigator", "programme", "program",
                          "group", "event", "module", "tutor", "lead", "leader", "supervisor", "organiser",
                          "organizer", "partner", "sponsor", "host", "dean", "president", "manager", "coordinator",
                          "convenor", "keynote", "author", "editor", "department", "faculty", "school", "institute",
                          "publisher", "winner", "founder", "owner", "principal"})
PERSON_WORDS = frozenset({"head", "director", "speaker", "chair", "investigator", "tutor", "lead", "leader",
                          "supervisor", "organiser", "organizer", "dean", "president", "manager", "coordinator",
                          "convenor", "keynote", "author", "authors", "editor", "editors", "founder", "owner",
                          "principal", "maintainer", "maintainers", "contact", "secretary", "treasurer", "lecturer"})
"""Head nouns whose value is a person: asked with "who" (a subset of the entity words, plus plurals of lists)."""
_PARENS = re.compile(r"\s*\(([^)]*)\)")
_COUNT = re.compile(r"^\d{1,7}$")


def head_noun(label: str, *, cell: bool = False) -> str:
    """The word a label names its value by: "Tuition fee (international)" -> "fee", "Head of Admissions" ->
    "head", a table cell's column ("Credits for LDS405" -> "credits")."""
    if cell and " for " in label:
        label = label.split(" for ", 1)[0]
    label = _PARENS.sub("", label).split(" of ", 1)[0]
    words = re.findall(r"[a-z]+", label.casefold())
    return words[-1] if words else ""


def answer_kind(label: str, *, cell: bool = False, value: str = "") -> str:
    """The answer type the label promises (one of timelyqa.rewards.ANSWER_TYPES but list); a plural noun whose value
    is a bare whole number ("Lecture theatres: 3", "Upcoming events: 3") counts."""
    noun = head_noun(label, cell=cell)
    if noun not in DATE_WORDS and noun not in MONEY_WORDS and _COUNT.match(value.strip()) and is_plural(noun):
        return "number"
    for kind, words in (("date", DATE_WORDS), ("quantity", MONEY_WORDS), ("number", COUNT_WORDS),
                        ("entity", ENTITY_WORDS)):
        if noun in words:
            return kind
    return "text"


def fact_answer(label: str, value: str, *, cell: bool = False) -> Typed:
    """The fact's value as a typed answer; text when the value is not what the label promises (see the docstring)."""
    kind = answer_kind(label, cell=cell, value=value)
    unit = None
    if kind == "quantity" and (named := _PARENS.findall(label)):
        unit = named[-1]  # "Fee (GBP)": the currency the column names, for a value written without one
    try:
        return typed(kind, value, unit=unit) if kind != "entity" else entity(value)
    except NotTyped:
        if unit is not None:
            try:  # "Tuition fee (international)": the parenthesis names no unit, the value's sign does
                return typed(kind, value)
            except NotTyped:
                pass
        return text(value)


def is_person(label: str, *, cell: bool = False) -> bool:
    return head_noun(label, cell=cell) in PERSON_WORDS


def is_plural(word: str) -> bool:
    word = word.casefold()
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "news", "series", "ics"))


def unit_suffix(answer: Typed) -> str:
    """", in pounds" for a question whose answer has a unit or a scale, "" for any other."""
    phrase = unit_phrase(answer.value)
    return f", {phrase}" if phrase else ""
