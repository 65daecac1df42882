"""The templates a site-tree question is worded by: a fact asked by its page, with the question word its answer needs.

Every question names the page its fact is on, by the page's subject (its title less the site's name) in quotes,
and asks with the word the answer's type calls for (`kinds`):

- a person: 'On the Lakeside Institute of Data Science website, who is the principal investigator on the "Flood
  Forecasting for the Wren Valley" page?', only when the value can be a person's name (`person_like`): a contact
  that is an e-mail address is 'what is the contact e-mail address on the "Events" page?' (a web address, a phone
  number, an organisation alike);
- a count: 'how many members does the "Climate Data Lab" page list?';
- a date: 'when is the application deadline on the "PhD in Data Science" page?', 'when was the "New director
  appointed" page published?', 'when do applications open, according to the "Apply" page?'; a verb or predicate
  with no subject of its own is said of what the page is about (`page_thing`: 'since when has the cluster been in
  service, according to the "Heron computing cluster ordered" page?', 'when was the lab founded, according to the
  "Climate Data Lab" page?'), or, when the page's subject names no such thing, as the label's date ('when is the
  start date on the "Lake Wren Ice Records" page?'); never "it"; a bare "Date" says what it is the date of: 'when
  does the event on the "Open Day" page take place?' (asked only of an event's page: `questions.date_of_nothing`;
  a documentation page's "Date" is its build date), and 'when was the "Installing" page last updated?';
- an e-mail address: 'what e-mail address does the "Distributing Python Modules" page give?';
- a release or version number: 'which release number does the "Curses Programming with Python" page give?';
- a table's column of meanings: 'what does DC4 mean, according to the "curses.ascii — Utilities for ASCII
  characters" page?';
- a sum of money: 'how much is the tuition fee (home) on the "MSc Data Science" page, in pounds?';
- an organisation, programme or group: 'which funder does the "Lake Wren Ice Records" page name?';
- a file's path: 'which file does the "csv — CSV File Reading and Writing" page give as its source code?', a
  folder's 'which folder does the "tomllib — Parse TOML files" page give as its source code?' (`path_kind`);
- a name that keys a value, not a property ("Windows", "Chinese (ROC)"; `proper_name`): 'what does the "What's New
  in Python 2.6" page give for Windows?', its capital kept;
- a place: 'which room does the "Open Day" page give?', 'where is the admissions office, according to the "Apply"
  page?'; a time: 'what time does the "Open Day" page give?', 'when are the lectures, according to the "LDS401
  Statistical Learning" page?';
- anything else: 'what is the duration on the "PhD in Data Science" page?';
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
_PARENS = re.compile(r"\s*\([^)]*\)")
_PREPOSITIONS = frozenset({"in", "on", "at", "under", "open", "available", "valid"})


def clause(fact: Located, answer: Typed) -> str:
    """The question about `fact` without the site's prefix and the unit (the templates are in the docstring)."""
    page = f'the "{fact.subject}" page'
    kind = str(answer.type)
    if is_cell(fact):
        column, row = fact.label.split(" for ", 1)
        col = _noun(column)
        be = "are" if is_plural(head_noun(column) or column.split()[-1]) else "is"
        if kind == "number":
            return f"how many {col} does {page} list for {row}"
        if norm_words(column) in MEANING_WORDS:  # "Meaning for DC4": what the row's name means
            return f"what does {row} mean, according to {page}"
        if is_person(column) and person_like(fact.value):
            return f"who {be} the {col} of {row} on {page}"
        if is_person(column):
            return f"{_not_a_person(col, fact.value, be)} for {row} on {page}"
        word = {"date": "when", "quantity": "how much"}.get(kind, "what")
        return f"{word} {be} the {col} for {row} on {page}"
    label = fact.label
    words = label.split()
    last = words[-1].casefold()
    rest = " ".join(words[:-1])
    if proper_name(label):  # "Windows", "Chinese (ROC)": a name the page gives a value for, not a property
        return f"what does {page} give for {label}"
    if len(words) == 1 and last in ("date", "dates"):  # a bare "Date": asked only of an event's page (`questions`)
        return f"when does the event on {page} take place"
    if len(words) == 2 and words[0].casefold() == "last" and participle(label):  # "Last updated", "Last modified"
        return f"when was {page} last {last}"
    if _EMAIL.match(fact.value.strip()) and head_noun(label) in EMAIL_WORDS:  # "Email", "Press e-mail"
        modifier = " ".join(w for w in _noun(label).split() if w.casefold() not in EMAIL_WORDS)
        return f"what {modifier + ' ' if modifier else ''}e-mail address does {page} give"
    if len(words) == 1 and last in NUMBERED and _VERSION.match(fact.value.strip()):  # "Release: 2.04"
        return f"which {last} number does {page} give"
    if last in ("from", "since"):  # "In service from": a predicate of the page's subject
        thing = page_thing(fact.subject)
        if thing:
            return f"since when has {thing} been {_noun(rest)}, according to {page}"
        return f'what "{label}" date does {page} give'
    if kind == "date" or head_noun(label) in _VERBS:
        if last in _PAGE_DATES and len(words) == 1:  # "Published", "Posted": the page's own date
            return f"when was {page} {last}"
        if last in _VERBS or participle(label):
            verb = _VERBS.get(last, last)
            if rest:
                return f"when {'do' if is_plural(words[-2]) else 'does'} {_noun(rest)} {verb}, according to {page}"
            thing = page_thing(fact.subject)
            if thing and participle(label):
                return f"when was {thing} {last}, according to {page}"
            if thing:
                return f"when does {thing} {verb}, according to {page}"
            return f"when is the {_DATE_NOUNS.get(last, last + ' date')} on {page}"
    if participle(label):  # "Supervised": no noun to say "the ..." of
        return f'what is the "{label}" value on {page}'
    be = "are" if is_plural(head_noun(label) or last) else "is"
    if kind == "number":
        noun = re.sub(r"^(?:number|count) of\s+", "", _noun(label), flags=re.IGNORECASE)
        return f"how many {noun} does {page} list"
    if is_person(label) and person_like(fact.value):
        return f"who {be} the {_noun(label)} on {page}"
    if is_person(label):
        return f"{_not_a_person(_noun(label), fact.value, be)} on {page}"
    if kind == "date":
        return f"when {be} the {_noun(label)} on {page}"
    if kind == "quantity":
        return f"how much {be} the {_noun(label)} on {page}"
    if kind == "entity" and be == "is":
        return f"which {_noun(label)} does {page} name"
    if kind == "text" and (what := path_kind(fact.value)):
        return f"which {what} does {page} give as its {_noun(label)}"
    head = head_noun(label) or last
    if kind == "text" and head in PLACE_WORDS:  # "Room: H.312", "Admissions office: Room L.012": a place
        noun = _noun(label)
        return (f"where is the {noun}, according to {page}" if head in ("office", "offices")
                else f"which {noun} does {page} give")
    if kind == "text" and head in TIME_WORDS:  # "Time: 18:30-20:00", "Lectures: Thursdays 14:00-16:00"
        return (f"what time does {page} give" if head == "time" and len(words) == 1
                else f"when {be} the {_noun(label)}, according to {page}")
    return f"what {be} the {_noun(label)} on {page}"


_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
EMAIL_WORDS = frozenset({"email", "e-mail", "mail"})
"""Head nouns of a label whose value is an e-mail address: asked as "what e-mail address does ... give"."""
NUMBERED = frozenset({"release", "version", "edition", "revision"})
"""Labels whose value is a number naming the thing's release ("Release: 2.04"): "which release number ..."."""
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+[a-z]?\d*$|^\d+$")
PLACE_WORDS = frozenset({"room", "venue", "location", "building", "office", "offices"})
"""Head nouns of a label whose value is a place: asked "which room does ... give", "where is the admissions office"."""
TIME_WORDS = frozenset({"time", "lectures", "seminars", "classes", "tutorials"})
"""Head nouns of a label whose value is a time or a weekly slot: "what time does ... give", "when are the lectures"."""
MEANING_WORDS = frozenset({"meaning", "definition"})
"""A table's column that says what each row's name means: "what does DC4 mean, according to ..."."""


def norm_words(label: str) -> str:
    return " ".join(label.casefold().split())
_WEB = re.compile(r"^(?:https?://|www\.)", re.IGNORECASE)
_PHONE = re.compile(r"^\+?[\d\s().-]{6,}$")
ORGANISATION_WORDS = frozenset("""institute university college school department faculty office team group lab
                                  laboratory centre center committee foundation society association council board
                                  ltd inc gmbh plc company corporation trust agency ministry unit desk""".split())
"""Words that make a name an organisation's, not a person's ("Admissions Office", "Nordlicht Data GmbH")."""


def person_like(value: str) -> bool:
    """The value can be a person's name (or a list of them): no e-mail address, web address, phone number, room or
    organisation ("events@lakeside-ids.example" is a contact, but no one to ask "who" of)."""
    v = value.strip()
    words = {w.casefold() for w in re.findall(r"[A-Za-z]+", v)}
    return not (_EMAIL.match(v) or "@" in v or _WEB.match(v) or _PHONE.match(v) or any(c.isdigit() for c in v)
                or words & ORGANISATION_WORDS or not words)


def _not_a_person(noun: str, value: str, be: str) -> str:
    """The question for a person's label whose value is no person: what the value is, said by its kind."""
    v = value.strip()
    if _EMAIL.match(v):
        return f"what is the {noun} e-mail address"
    if _WEB.match(v):
        return f"what is the {noun} web address"
    if _PHONE.match(v):
        return f"what is the {noun} phone number"
    if {w.casefold() for w in re.findall(r"[A-Za-z]+", v)} & ORGANISATION_WORDS:
        return f"which organisation {be} the {noun}"
    return f'what is given as the "{noun}"'


_PAGE_DATES = frozenset({"published", "posted", "updated"})
"""A page's own date: "when was the "News, March 2026" page posted?"."""
_DATE_NOUNS = {"start": "start date", "starts": "start date", "end": "end date", "ends": "end date",
               "open": "opening date", "opens": "opening date", "close": "closing date", "closes": "closing date",
               "begins": "start date", "founded": "founding date", "established": "founding date",
               "launched": "launch date", "opened": "opening date", "closed": "closing date"}
THING_WORDS = frozenset("""institute institution university college school department faculty centre center group
                           lab laboratory team unit project programme program course module event lecture workshop
                           conference seminar cluster library society association foundation company office
                           service system facility building""".split())
"""Nouns a page's subject may end in that name what it is about ("Climate Data Lab" -> "the lab")."""


def page_thing(subject: str) -> str:
    """What the page is about, as "the <noun>", from its subject's last word less a headline's participle ("Heron
    computing cluster ordered" -> "the cluster", "Health Analytics Group" -> "the group", "About the Institute" ->
    "the institute"); "" when the subject ends in no such noun ("Flood Forecasting for the Wren Valley")."""
    words = re.findall(r"[A-Za-z]+", subject)
    while words and participle(words[-1]):
        words.pop()
    return f"the {words[-1].casefold()}" if words and words[-1].casefold() in THING_WORDS else ""


PROPER_WORDS = frozenset("""windows unix linux macos mac posix android ios freebsd solaris cygwin english french german
                            spanish italian portuguese dutch russian chinese japanese korean arabic hebrew greek turkish
                            thai vietnamese polish czech hindi latin european american british monday tuesday
                            wednesday thursday friday saturday sunday january february march april may june july
                            august september october november december""".split())
"""Names a table or list may key its values by (a platform, a language, a day), written with a capital."""


def proper_name(label: str) -> bool:
    """The label is a name ("Windows", "Chinese (ROC)", "Korean"), not a property: its first word is a proper noun."""
    words = _PARENS.sub("", label).split()
    return bool(words) and words[0].casefold() in PROPER_WORDS and words[0][:1].isupper()


def path_kind(value: str) -> str:
    """"file" for a path to a file ("Lib/csv.py"), "folder" for a folder's ("Lib/tomllib", "Lib/multiprocessing/"),
    "files" for a list of files ("Lib/profile.py and Lib/pstats.py"), "" for anything else."""
    parts = [p for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", value.strip()) if p]
    if not parts or not all(_PATH.match(p) for p in parts):
        return ""
    if len(parts) > 1:
        return "files"
    name = parts[0].rstrip("/").rsplit("/", 1)[-1]
    return "folder" if parts[0].endswith("/") or "." not in name.lstrip(".") else "file"


def askable(label: str) -> bool:
    """The label can be worded by `clause`: a label ending in "from" or "since" only when what comes before is a
    predicate ("In service from" -> "since when has the cluster been in service"), never a noun ("Director from")."""
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
    if first.casefold() in PROPER_WORDS:  # "Windows path": a name keeps its capital
        return label
    if first[1:].islower() and first.isalpha() and all(not w[:1].isupper() for w in later):
        return " ".join([first.lower(), *later])
    return label
