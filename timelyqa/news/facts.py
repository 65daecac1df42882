"""Facts an event's article states and its portal summary does not: the template asks about those first.

A reader of the Current Events Portal knows everything its summary line says; a question about a span of that line
tests nothing the article adds (LiveNewsBench asks about the article). So an event's question comes from a sentence
of one of its articles that holds a fact the summary does not (a number, an amount of money, a percentage, a date, a
named person in a role, a place), with the event named by the summary so that the question stands alone:

    On 12 November 2026: Flooding along the Alder River forces the evacuation of 3,400 residents from Port Alder's
    eastern districts. The river rose how many metres above the usual level after three days of rain?

The article's sentence keeps its words, with the fact asked in place by the question word its kind takes (the same
spans and typed answers as the summary's, `timelyqa.news.questions`). A sentence is used only when it reads alone
after the summary:

- no pronoun (he, she, it, they, his, its, this...) and no quotation: whose words, or who, would be a guess;
- "the <noun>" ("the river", "the council", "the quake") only when the summary says that noun (or names the event
  it means: "earthquake" for "the quake", "acquire" for "the deal"): otherwise "the company" is any company;
- no time said from the writer's day ("today", "last season", "this week"): the question names the event's day;
- a dateline ("BANGKOK, Jan 5 - ") and a closing attribution (", the council said on Thursday") are left out.

A day without its year ("takes office on 1 September") is dated in the year that puts it nearest the event's day.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from timelyqa.answers import NotTyped, Typed, date as date_answer, unit_phrase
from timelyqa.news import questions as q
from timelyqa.news.gate import _forms, _found
from timelyqa.news.wh import PERSON_ROLES, THING_CLASSES, _plain
from timelyqa.quality import entity_named_twice

PRONOUNS = frozenset("""he she it they him her his hers its their theirs them we us our ours i me my you your this
    these those both either neither such""".split())
"""Words that point at someone or something the sentence does not name ("that" is mostly a conjunction)."""
ANAPHORS = frozenset({*THING_CLASSES, *PERSON_ROLES, *"""company group deal acquisition purchase takeover quake
    earthquake tremor flood floods flooding storm fire blast attack crash release launch update vote election poll
    budget bill law measure plan proposal treaty agreement contract project scheme report study film movie show
    player team side squad match game race tournament season index market shares share price rate prices software
    product device system service mirror telescope organisation organization body authority office ministry
    government administration regime force forces army police suspect victim man woman""".split()})
"""Nouns that, after "the", stand for something said before: "the company said", "the river rose"."""
SAME = {"quake": {"earthquake"}, "tremor": {"earthquake"}, "earthquake": {"quake"}, "flood": {"flooding", "floods"},
        "floods": {"flooding", "flood"}, "flooding": {"flood", "floods"},
        "deal": {"acquire", "acquires", "buy", "buys", "merger", "takeover", "acquisition"},
        "acquisition": {"acquire", "acquires"}, "purchase": {"acquire", "acquires", "buy", "buys"},
        "takeover": {"acquire", "acquires"}, "vote": {"elected", "election", "votes", "vote"},
        "election": {"elected"}, "release": {"releases", "released"}, "launch": {"launches", "launched"},
        "film": {"directed"}, "movie": {"film", "directed"}}
"""A noun the summary says by another word: "the quake" of "A magnitude 5.8 earthquake strikes"."""
DEICTIC = re.compile(r"\b(?:today|yesterday|tomorrow|tonight|now|currently|recently|ago|(?:this|last|next|"
                     r"coming|past) (?:week|weekend|month|year|season|spring|summer|autumn|fall|winter|morning|"
                     r"afternoon|evening|night|decade))\b", re.IGNORECASE)
QUOTES = re.compile(r"[\"“”„«»]|(?:^|\s)['‘]\w")
DATELINE = re.compile(r"^[A-Z][A-Z .'’-]+(?:, [A-Z][a-z]{2,8}\.? \d{1,2})?\s*[-–—(]+\s*(?:\w+\)\s*[-–—]\s*)?")
"""'BANGKOK, Jan 5 - ', 'SEOUL (Reuters) - ': where and when a wire story was filed, not part of its sentence."""
ATTRIBUTION = re.compile(r",\s+(?:according to [^,]+|[^,]{0,80}?\b(?:said|says|announced|reported|confirmed|told "
                         r"[^,]+)\b[^,]*)$")
"""A sentence's closing ", the council said on Thursday": who said it, which the question does not need."""
STATE = re.compile(r"\b(?:is|are)\b(?! (?:expected|due|set|scheduled|likely|to)\b)")
"""A present "is" or "are": a standing fact ("WeWork is headquartered in ...", "Europa is slightly smaller than the
Moon"), background rather than what the event was."""
CUT = re.compile(r"(?:\b[A-Z]|\b(?:Jr|Sr|Mr|Mrs|Ms|Dr|St|Inc|Co|Corp|Ltd|No|Rep|Sen|Gov|Gen))\.$")
"""A sentence the splitter cut after an abbreviation ("... a United States official, ... the U.S.")."""
AWKWARD = re.compile(r"\b(\w+) of which \1\b|['’]s (?:which|what|whom|who|how)\b|\bwhich place [a-z]")
"""Question words that read badly in place: "the county of which county", "north China's which agency", "in which
place culture" (a name that modifies a noun)."""
MAX_WORDS, MIN_WORDS = 36, 5
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DAY_MONTH = re.compile(rf"^(?:\d{{1,2}} (?:{_MONTHS})|(?:{_MONTHS}) \d{{1,2}})$")
_WORD = re.compile(r"[\w'’-]+")


def sentences(text: str) -> list[str]:
    """The sentences of an article, paragraph by paragraph."""
    out = []
    for paragraph in text.split("\n"):
        out += [s.strip() for s in q._SENTENCE.split(" ".join(paragraph.split())) if s.strip()]
    return out


def summary_words(summary: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(summary)}


def usable(sentence: str, summary: str) -> str | None:
    """The sentence as a question may say it after the summary (dateline and attribution left out), or None when it
    does not read alone (a pronoun, a quotation, a "the <noun>" the summary does not say, a time from the writer's
    day) or is no plain statement."""
    s = DATELINE.sub("", sentence.strip(), count=1)
    if not s.endswith(".") or CUT.search(s) or STATE.search(s) or any(c in s[:-1] for c in "?!:;()[]") or QUOTES.search(s) or DEICTIC.search(s):
        return None
    s = ATTRIBUTION.sub("", s[:-1]).rstrip(" ,")
    words = [w.casefold() for w in _WORD.findall(s)]
    if not MIN_WORDS <= len(words) <= MAX_WORDS or not s[:1].isupper() or PRONOUNS & set(words):
        return None
    said = summary_words(summary)
    for m in re.finditer(r"\b[Tt]he ([a-z]+)\b", s):
        noun = m[1]
        if noun in ANAPHORS and not s[m.end():].startswith(" of ") and \
                not (noun in said or SAME.get(noun, set()) & said):
            return None  # "the company said": which company? ("the mayor of Valmora" says whose)
    return s


def stated(text: str | None, answer: Typed, span: str) -> bool:
    """The answer, in any of its forms (or as the span says it), is in `text`."""
    if not text:
        return False
    return any(_found(_plain(text), _plain(form)) for form in [*_forms(answer.row()), span])  # accents aside


def dated(answer: str, typed: Typed, day: date) -> Typed:
    """A day without its year dated in the year nearest the event's day ("1 September" of 14 July 2026)."""
    if typed.type != "text" or not _DAY_MONTH.match(answer):
        return typed
    best = None
    for year in (day.year - 1, day.year, day.year + 1):
        try:
            candidate = date_answer(f"{answer} {year}")
        except NotTyped:
            return typed
        when = date.fromisoformat(candidate.value.date or "")
        if best is None or abs((when - day).days) < best[0]:
            best = (abs((when - day).days), candidate)
    return best[1] if best else typed


def context(summary: str) -> str:
    """The summary as a question's first sentence."""
    s = " ".join(summary.split())
    return s if s.endswith((".", "!", "?")) else s + "."


def article_masks(event: Mapping[str, Any], texts: Sequence[str]) -> list[q.Masked]:
    """Every question a fact of the event's articles gives that its summary (and topic) do not state, in the order
    of the articles and their sentences."""
    summary, day = event["summary"], event["date"]
    out: dict[str, q.Masked] = {}
    for text in texts:
        for sentence in sentences(text or ""):
            s = usable(sentence, summary)
            if s is None:
                continue
            for start, end, answer, level, wh, typed, tier in q._spans(s, texts):
                if stated(summary, typed, answer) or stated(event.get("topic"), typed, answer):
                    continue
                typed = dated(answer, typed, day)
                unit = unit_phrase(typed.value) if wh == "how much money" or typed.type == "quantity" and \
                    "what size" in wh else ""
                body = f"{s[:start]}{wh}{s[end:]}" + (f", {unit}" if unit else "")
                question = f"On {q.day_words(day)}: {context(summary)} {body[:1].upper()}{body[1:]}?"
                if AWKWARD.search(body):
                    continue
                # the summary and the sentence apart (a name cannot run from one into the other), accents aside
                said_twice = f"{_plain(context(summary))[:-1]} , {_plain(body)}"
                if entity_named_twice({"question": said_twice}) is not None:
                    continue  # a name the summary says again ("Milanovic" of "Milanović"): the sentence retells it
                out.setdefault(question, q.Masked(answer, level, question, tier, typed))
    return list(out.values())


def fact_answers(masks: Iterable[q.Masked]) -> list[str]:
    return [m.answer for m in masks]
