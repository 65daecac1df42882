"""The templates a site-tree question is worded by: a fact's noun phrase, asked alone or joined with another's.

A fact is asked by a noun phrase, in one of three templates:

- a label that says what it is on its own (two words or more of letters, one value on the whole site):
  "On the WebQA 2026 website, what is the submission deadline?"
- any other label, by its page's subject (the title without the site's name):
  'On the WebQA 2026 website, what is the room on the "Answers That Expire" page?' ("what are" for a plural
  label); a label that is a participle, not a noun ("Posted", "Last updated"), is quoted:
  'what is the "Posted" value on the "News, March 2026" page?'
- a cell of a table with a header row ("<column> for <row>"):
  'On the WebQA 2026 website, what is the "Student" value for Late on the "Registration" page?'

A fact whose answer has a unit or a scale says it at the end (`kinds.unit_suffix`): 'what is the tuition fee
(international) on the "MSc Data Science" page, in pounds?'.

A multi-source question joins two phrases, "what are the <first> and the <second>?"; its answer is the list of the
two values (shown joined by "; "), graded in either order.
"""

from __future__ import annotations

import re

from timelyqa.site_tree.tree import Located


def phrase(fact: Located, *, self_explanatory: bool) -> str:
    """The noun phrase a question asks the fact by (the templates are in the module's docstring)."""
    page = f'on the "{fact.subject}" page'
    if is_cell(fact):
        column, row = fact.label.split(" for ", 1)
        return f'"{column}" value for {row} {page}'
    if _participle(fact.label):  # "Posted", "Last updated": no noun to say "the ..." of
        return f'"{fact.label}" value {page}'
    label = fact.label[:1].lower() + fact.label[1:] if fact.label[1:2].islower() else fact.label
    return label if self_explanatory else f"{label} {page}"


def self_explanatory(label: str, values_on_site: set[str]) -> bool:
    """A label asked without its page: two words or more of letters ("Submission deadline", not "Session 2" nor
    "Room"), and one value on the whole site."""
    return sum(w.isalpha() for w in re.split(r"[\s-]+", label)) >= 2 and len(values_on_site) == 1


def single_question(site: str, fact: Located, unit: str = "") -> str:
    """`unit` is what the question says of the answer's unit or scale (", in pounds"), or ""."""
    plural = not is_cell(fact) and not _participle(fact.label) and _plural(fact.label)
    return f"On the {site} website, what {'are' if plural else 'is'} the {fact.phrase}{unit}?"


def multi_question(site: str, first: str, second: str) -> str:
    return f"On the {site} website, what are the {first} and the {second}?"


def is_cell(fact: Located) -> bool:
    return fact.kind == "table" and " for " in fact.label


def _participle(label: str) -> bool:
    word = (label.split() or [""])[-1].casefold()
    return len(word) >= 6 and word.endswith("ed") and not word.endswith(("eed", "hundred"))


def _plural(label: str) -> bool:
    word = (label.split() or [""])[-1].casefold()
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "news", "series", "ics"))
