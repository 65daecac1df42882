"""Questions from infobox changes: the template generator (no date in the question) and DailyQA's two checks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from enum import StrEnum

from timelyqa.wikipedia.answer import value_in

GENERATOR = "template:wikipedia-infobox@v1"

# Keys whose words read badly as a noun phrase; every other key is read by splitting it into words.
LABELS = {
    "pop": "population", "population_total": "total population", "population_est": "estimated population",
    "leader_name": "leader", "leader_title": "leader's title", "birth_date": "date of birth",
    "death_date": "date of death", "birth_place": "place of birth", "death_place": "place of death",
    "currentclub": "current club", "current_club": "current club", "clubnumber": "squad number",
    "club_number": "squad number", "num_employees": "number of employees", "key_people": "key people",
    "latest_release_version": "latest release version", "latest release version": "latest release version",
    "population_as_of": "population census date", "gross": "box office gross", "released": "release date",
    "ceo": "chief executive", "children": "number of children", "area_total_km2": "total area in km²",
}
NAME_KEYS = ("name", "official_name", "common_name", "conventional_long_name", "fullname", "full_name",
             "native_name", "birth_name", "clubname", "club_name", "title", "show_name")
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})\b|\b\d{{1,2}}\s+{_MONTH}\b|\b{_MONTH}\s+\d{{1,2}}\b|"
                   r"\b(?:today|yesterday|tomorrow|as of|this year|last year|this week)\b", re.IGNORECASE)


class Reject(StrEnum):
    ANSWER_NOT_REDERIVED = "answer_not_rederived"
    SUBJECT_NOT_NAMED = "subject_not_named"
    ANSWER_IN_QUESTION = "answer_in_question"
    DATE_IN_QUESTION = "date_in_question"


def label(key: str) -> str:
    """'current_club' -> 'current club', 'clubs1' -> 'clubs 1'."""
    if key.lower() in LABELS:
        return LABELS[key.lower()]
    words = re.sub(r"(?<=[A-Za-z])(?=\d)", " ", key.replace("_", " ").replace("-", " "))
    return re.sub(r"\s+", " ", words).strip().lower()


def template_question(title: str, key: str) -> str:
    """The offline generator: the key's label and the page's subject, never a date."""
    return f"What is the {label(key)} of {title}?"


def subject_names(title: str, infobox: Mapping[str, str]) -> list[str]:
    """How a question may name the page's subject: its title, the title without '(disambiguator)', the box's names."""
    names = [title, re.sub(r"\s*\([^)]*\)\s*$", "", title)]
    names += [infobox[k] for k in NAME_KEYS if infobox.get(k)]
    return sorted({n.strip() for n in names if len(n.strip()) >= 2}, key=lambda n: (-len(n), n))


def correct(key: str, answer: str, wikitext: str) -> Reject | None:
    """Correctness: the checker reads the key from the revision's own wikitext and gets the answer back."""
    rederived = value_in(wikitext, key)
    return None if rederived is not None and _norm(rederived) == _norm(answer) else Reject.ANSWER_NOT_REDERIVED


def descriptive(question: str, title: str, infobox: Mapping[str, str]) -> Reject | None:
    """Descriptiveness: the question names the page's subject by its title or an alias, so it stands alone."""
    text = _norm(question)
    return None if any(_norm(n) in text for n in subject_names(title, infobox)) else Reject.SUBJECT_NOT_NAMED


def well_formed(question: str, answer: str, title: str, infobox: Mapping[str, str]) -> Reject | None:
    """No answer given away, and no date: the release sets the date beside the question, as DailyQA's prompt asks."""
    if re.search(rf"(?<!\w){re.escape(_norm(answer))}(?!\w)", _norm(question)):
        return Reject.ANSWER_IN_QUESTION
    rest = question
    for name in subject_names(title, infobox):  # a year in the subject's own name ('2026 FIFA World Cup') is no date
        rest = re.sub(re.escape(name), " ", rest, flags=re.IGNORECASE)
    return Reject.DATE_IN_QUESTION if _DATE.search(rest) else None


def check(question: str, key: str, answer: str, title: str, wikitext: str, infobox: Mapping[str, str]
          ) -> Reject | None:
    """The first failed check, or None: correctness, descriptiveness, then the question's own form."""
    return (correct(key, answer, wikitext) or descriptive(question, title, infobox)
            or well_formed(question, answer, title, infobox))


def answer_aliases(answer: str) -> list[str]:
    """Other accepted forms of an answer: an ISO date also as '3 May 1990' and 'May 3, 1990'."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", answer):
        try:
            d = date.fromisoformat(answer)
        except ValueError:
            return []
        return [f"{d.day} {d:%B %Y}", f"{d:%B} {d.day}, {d.year}"]
    if re.fullmatch(r"\d{4}-\d{2}", answer):
        year, month = answer.split("-")
        if 1 <= int(month) <= 12:
            return [f"{date(int(year), int(month), 1):%B %Y}"]
    return []


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())
