"""The templates a site-tree question is worded by: a fact asked by its page, with the question word its answer needs.

Every question names the page its fact is on, by the page's subject (its title less the site's name) in quotes,
and asks with the word the answer's type calls for (`kinds`):

- a person: 'On the Lakeside Institute of Data Science website, who is the principal investigator on the "Flood
  Forecasting for the Wren Valley" page?';
- a count: 'how many members does the "Climate Data Lab" page list?';
- a date: 'when is the application deadline on the "PhD in Data Science" page?', 'when was it published,
  according to the "New director appointed" page?', 'when do applications open, according to the "Apply"
  page?', 'since when is it in service, according to the "Heron computing cluster ordered" page?', and
  'what date does the "Open Day" page give?' for a bare "Date";
- a sum of money: 'how much is the tuition fee (home) on the "MSc Data Science" page, in pounds?';
- an organisation, programme or group: 'which funder does the "Lake Wren Ice Records" page name?';
- a file's path: 'which file does the "csv — CSV File Reading and Writing" page give as its source code?';
- anything else: 'what is the room on the "Open Day" page?';
- a cell of a table with a header row ("<column> for <row>"): 'who is the head of Climate Data Lab on the
  "Research" page?', 'how many places does the "Study" page list for MSc Data Science?', 'what is the room for
  14 October 2026 on the "Events in 2026" page?'.

A multi-source question joins two of these clauses, each naming its own page: 'On the ... website, who is the
head on the "Climate Data Lab" page, and when is the application deadline on the "Apply" page?'; its answer is the
list of the two values, graded in either order, so it says no unit.

Which labels are asked at all is decided before (`questions.fact_reject`): `askable` says whether a label can be
worded here (a label ending in "from" or "since" only as a predicate: "In service from", not "Director from").
"""

from __future__ import annotations

import re

from timelyqa.answers import Typed
from timelyqa.site_tree.kinds import head_noun, is_person, is_plural
from timelyqa.site_tree.tree import Located

_VERBS = {"open": "open", "opens": "open", "close": "close", "closes": "close", "start": "start",
          "starts": "start", "end": "end", "ends": "end", "begins": "begin"}
_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)+/?$")
_PREPOSITIONS = frozenset({"in", "on", "at", "under", "open", "available", "valid"})


def clause(fact: Located, answer: Typed) -> str:
    """The question about `fact` without the site's prefix and the unit (the templates are in the docstring)."""
    page = f'the "{fact.subject}" page'
    kind = str(answer.type)
    if is_cell(fact):
        column, row = fact.label.split(" for ", 1)
        col = _noun(column)
        be = "are" if is_plural(column.split()[-1]) else "is"
        if kind == "number":
            return f"how many {col} does {page} list for {row}"
        if is_person(column):
            return f"who {be} the {col} of {row} on {page}"
        word = {"date": "when", "quantity": "how much"}.get(kind, "what")
        return f"{word} {be} the {col} for {row} on {page}"
    label = fact.label
    words = label.split()
    last = words[-1].casefold()
    rest = " ".join(words[:-1])
    if last in ("from", "since"):
        return f"since when is it {_noun(rest)}, according to {page}"
    if kind == "date" or head_noun(label) in _VERBS:
        if last in _VERBS:
            verb = _VERBS[last]
            if not rest:
                return f"when does it {verb}, according to {page}"
            return f"when {'do' if is_plural(words[-2]) else 'does'} {_noun(rest)} {verb}, according to {page}"
        if participle(label):
            return f"when was it {_noun(label)}, according to {page}"
        if len(words) == 1 and last in ("date", "dates"):
            return f"what {last} does {page} give"
    if participle(label):  # "Supervised": no noun to say "the ..." of
        return f'what is the "{label}" value on {page}'
    be = "are" if is_plural(last) else "is"
    if kind == "number":
        noun = re.sub(r"^(?:number|count) of\s+", "", _noun(label), flags=re.IGNORECASE)
        return f"how many {noun} does {page} list"
    if is_person(label):
        return f"who {be} the {_noun(label)} on {page}"
    if kind == "date":
        return f"when {be} the {_noun(label)} on {page}"
    if kind == "quantity":
        return f"how much {be} the {_noun(label)} on {page}"
    if kind == "entity" and be == "is":
        return f"which {_noun(label)} does {page} name"
    if kind == "text" and _PATH.match(fact.value):
        return f"which file does {page} give as its {_noun(label)}"
    return f"what {be} the {_noun(label)} on {page}"


def askable(label: str) -> bool:
    """The label can be worded by `clause`: a label ending in "from" or "since" only when what comes before is a
    predicate ("In service from" -> "since when is it in service"), never a noun ("Director from")."""
    words = label.split()
    if words and words[-1].casefold() in ("from", "since"):
        return len(words) >= 2 and words[0].casefold() in _PREPOSITIONS
    return True


def single_question(site: str, fact: Located, answer: Typed, unit: str = "") -> str:
    """`unit` is what the question says of the answer's unit or scale (", in pounds"), or ""."""
    return f"On the {site} website, {clause(fact, answer)}{unit}?"


def multi_question(site: str, first: str, second: str) -> str:
    return f"On the {site} website, {first}, and {second}?"


def is_cell(fact: Located) -> bool:
    return fact.kind == "table" and " for " in fact.label


def participle(label: str) -> bool:
    word = (label.split() or [""])[-1].casefold()
    return len(word) >= 6 and word.endswith("ed") and not word.endswith(("eed", "hundred"))


def _noun(label: str) -> str:
    """The label as a noun phrase inside a sentence: a capital that only starts the label is lowered ("Tuition fee
    (home)" -> "tuition fee (home)"); a label with capitals of its own stays ("Head of Admissions", "GPUs")."""
    words = label.split()
    if not words:
        return label
    first, later = words[0], words[1:]
    if first[1:].islower() and first.isalpha() and all(not w[:1].isupper() for w in later):
        return " ".join([first.lower(), *later])
    return label
