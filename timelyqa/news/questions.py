"""Template questions from portal events (offline, deterministic), and the news record any generator builds.

`news_template_v3` turns one named entity, number or date of an event's summary sentence into a wh-question that
names the event's day, and keeps it only when it passes the gate (`timelyqa.news.gate.RULES`) and an article of the
event states the answer (`sub_match`, normalised, on word boundaries). The question word follows the span's kind:

- from the sentence itself (tier 0): a country ("which country", "which country's"), a person after a title ("which
  former President of South Korea"), a count ("at least how many people"), a sum of money ("how much money"), a
  percentage, a date after "on" ("on what date"), a year or month after "in"/"since"/"for";
- inferred (tier 1, `timelyqa.news.wh`): a name by its class, as its last word, a role noun before it or an article
  says it ("at which festival", "sign which striker", "which film"), a person by who, whom or whose, a place after
  "near" or "in" by "which place"; a measured number by its measure ("an earthquake of what magnitude", "a mirror of
  what size, in metres", "which version of Tallyframe").

"On 3 June 2026: A magnitude 5.8 earthquake strikes near which place, damaging the harbour's north pier?" (the
portal's sentence, in its present tense and its capitals, after a colon: no guess at which first words are proper
nouns; a clause after a semicolon that holds no span is left out). A span no question word fits is not asked: v2
wrote a cloze for it ('In the news of 3 June 2026, "... strikes near ___ ..." What name fills the blank?'), which is
no question.

The span sets the answer's type (`timelyqa.answers`): a name is an entity; a date a date (a day without its year,
"March 5", is text); a count ("3,400 residents") or a bare number a number, with its scale word ("1.2 billion");
a percentage a quantity in percent; a sum of money, by its sign or its currency noun ("€18 million", "18 million
euros"), a quantity in that currency, asked "how much money" with the unit and scale at the end: "... for a
club-record fee of how much money, in millions of euros?"; a version or a duration text.

Every candidate of an event passes the duplicate check and the gate; the ones that pass are tried tier 0 first, each
tier in a seeded stable order, and the first whose answer an article states is the event's question: that run over
the events is `timelyqa.news.templates`, which takes the article's facts (`timelyqa.news.facts`) before these spans.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import Any, NamedTuple

import polars as pl

from timelyqa.answers import NotTyped, Typed, date as date_answer, entity, number, quantity, text, unit_phrase
from timelyqa.news.gate import masked_context
from timelyqa.news.wh import measure_spans, name_wh
from timelyqa.news.record import STABILITY, NewsRecord
from timelyqa.reasons import Reason
from timelyqa.record import Evidence, Split, Verification, record_id
from timelyqa.stages import Dropped

GENERATOR = "news_template_v4"
"""v4: a fact the event's article states and its portal summary does not is asked first, from the article's
sentence, after the summary that names the event (`timelyqa.news.facts`); a span of the summary only where the
article says nothing more (the gate's `summary_answers`); a measure in a unit ("2.7 metres") a quantity; a date after
"until" or "by" asked "what date". (v3: no cloze (a span no question word fits is not asked), names asked by their class or as persons, measures by
their measure, a clause after a semicolon left out; the answer masked in the released summary and topic. (v2: typed
answers, money asked "how much money, in <scale>s of <currency>".)"""
STABLE = STABILITY[0]
"""'Unlikely to change over time': the template's answers are facts of a past day."""
FUNNEL = ("events_read", "events_with_articles", "candidates")
"""The counts of the template's own stage, before the gate."""
CHECKED = ("candidates_tried", "candidates_not_tried", ANSWERED := "answers_in_article")
"""The counts of the article check after the gate: the gated candidates tried against the articles, the ones left
untried once an event has its question, and the questions whose answer an article states."""

MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
COUNTRIES = (
    "Afghanistan|Albania|Algeria|Andorra|Angola|Antigua and Barbuda|Argentina|Armenia|Australia|Austria|Azerbaijan|"
    "Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|"
    "Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|"
    "Central African Republic|Chad|Chile|China|Colombia|Comoros|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|"
    "Czechia|Democratic Republic of the Congo|Denmark|Djibouti|Dominica|Dominican Republic|East Timor|Ecuador|Egypt|"
    "El Salvador|Equatorial Guinea|Eritrea|Estonia|Eswatini|Ethiopia|Fiji|Finland|France|Gabon|Gambia|Georgia|"
    "Germany|Ghana|Greece|Grenada|Guatemala|Guinea-Bissau|Guinea|Guyana|Haiti|Honduras|Hungary|Iceland|India|"
    "Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory Coast|Jamaica|Japan|Jordan|Kazakhstan|Kenya|Kiribati|Kosovo|"
    "Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|Liechtenstein|Lithuania|Luxembourg|Madagascar|"
    "Malawi|Malaysia|Maldives|Mali|Malta|Marshall Islands|Mauritania|Mauritius|Mexico|Micronesia|Moldova|Monaco|"
    "Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Namibia|Nauru|Nepal|Netherlands|New Zealand|Nicaragua|Niger|"
    "Nigeria|North Korea|North Macedonia|Norway|Oman|Pakistan|Palau|Palestine|Panama|Papua New Guinea|Paraguay|Peru|"
    "Philippines|Poland|Portugal|Qatar|Republic of the Congo|Romania|Russia|Rwanda|Saint Lucia|Samoa|San Marino|"
    "Saudi Arabia|Senegal|Serbia|Seychelles|Sierra Leone|Singapore|Slovakia|Slovenia|Solomon Islands|Somalia|"
    "South Africa|South Korea|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|Switzerland|Syria|Taiwan|"
    "Tajikistan|Tanzania|Thailand|Togo|Tonga|Trinidad and Tobago|Tunisia|Turkey|Turkmenistan|Tuvalu|Uganda|Ukraine|"
    "United Arab Emirates|United Kingdom|United States|Uruguay|Uzbekistan|Vanuatu|Vatican City|Venezuela|Vietnam|"
    "Yemen|Zambia|Zimbabwe").split("|")
TITLES = ("President|Vice President|Prime Minister|Deputy Prime Minister|Chancellor|King|Queen|Prince|Princess|Pope|"
          "Governor|Senator|Mayor|Foreign Minister|Defence Minister|Defense Minister|Finance Minister|Minister|"
          "Chief Justice|Speaker|Secretary-General|Secretary of State|Emir|Sultan|Supreme Leader|General|CEO")
_COUNTRY = "|".join(sorted(map(re.escape, COUNTRIES), key=len, reverse=True))
_WORD = r"[A-Z](?:[\w.-]|['’](?!s\b))*"
"""A capitalised word; a possessive "'s" ends it ("Thailand's Senate" is two names)."""
_NAME = rf"{_WORD}(?: {_WORD}){{0,3}}"
_RE_COUNTRY = re.compile(rf"(?<![\w-])(?P<the>[Tt]he )?(?P<ans>{_COUNTRY})(?P<pos>['’]s)?(?![\w-])")
_RE_TITLED = re.compile(rf"(?<![\w-])(?P<title>(?:(?:[Ff]ormer|[Aa]cting|[Ii]ncumbent) )?(?:{TITLES})"
                        rf"(?: of (?:the )?(?:{_COUNTRY}))?) (?P<ans>{_NAME})")
_RE_DATE = re.compile(rf"(?<![\w-])(?P<ans>(?:{MONTHS}) \d{{1,2}}(?:, \d{{4}})?|\d{{1,2}} (?:{MONTHS})(?: \d{{4}})?"
                      rf"|(?P<month>(?:{MONTHS}) \d{{4}}))(?![\w-])")
_RE_YEAR = re.compile(r"(?<![\w.,-])(?P<ans>(?:1[89]|20)\d{2})(?![\w-])")
_RE_NUMBER = re.compile(r"(?<![\w.,-])(?P<cur>[$€£])?(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
                        r"(?P<scale> (?:thousand|million|billion|trillion))?(?!\w)"
                        r"(?P<pct>%| percent| per cent)?(?: (?P<noun>[a-z]{3,}))?")
_RE_NAME = re.compile(rf"(?<![\w-]){_WORD}(?:(?: of(?: the)?| and| de| for)? {_WORD})*")
_MONEY_NOUNS = frozenset({"euros", "dollars", "pounds", "yen", "francs", "rupees"})
"""Currency nouns after a number: "18 million euros" is a sum of money, not a count of euros."""
_COUNT_NOUNS = frozenset({"people", "children", "men", "women", "police", "personnel", "staff"})
_UNIT_NOUNS = frozenset({"metres", "meters", "kilometres", "kilometers", "centimetres", "centimeters", "millimetres",
                         "millimeters", "miles", "feet", "inches", "tonnes", "tons", "kilograms", "hectares",
                         "litres", "liters"})
"""Units after a number: "2.7 metres" is a length (a quantity in metres), not a count of metres."""
_OPENERS = frozenset({"the", "a", "an", "in", "on", "at", "after", "during", "following", "amid", "as", "two",
                      "three", "several", "many", "some", "about", "since", "until", "over", "more"})
"""First words of a sentence that start no name ("The Senate of Thailand" is the name "Senate of Thailand")."""
_NOT_NAMES = frozenset({*MONTHS.split("|"), "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                        "Sunday", *TITLES.split("|"), "Former", "Acting"})
_SENTENCE = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[A-Z\"“])")
"""A sentence ends at a full stop, but not at an initial's ("U.S. Representative", "J. Smith")."""


class TemplateReject(Reason):
    NO_ARTICLE = "no_article", "the event has no kept article, so no answer can be checked"
    NO_MASKABLE_SPAN = ("no_maskable_span",
                        "the event's summary names no entity, number or date a question word fits")
    DUPLICATE_QUESTION = "duplicate_question", "an earlier event already gave the same question"


class ArticleCheckReject(Reason):
    """The check after the gate, on both paths: the answer is stated in an article of the event."""

    ANSWER_NOT_IN_ARTICLE = ("answer_not_in_article",
                             "the answer is not stated in the article text (normalised, on word boundaries)")


class Written(NamedTuple):
    records: list[NewsRecord]
    rejected: list[Dropped]
    counts: Counter[str]


@dataclass(frozen=True, slots=True)
class Masked:
    """One span of a summary asked as a question: its answer, its kind (the record's `level`) and its wording."""

    answer: str
    """The span as the sentence writes it ("18 million"): what an article must state."""
    level: str
    question: str
    tier: int
    """0 when the sentence gives the question word (a title, a country, a count's noun, a currency), 1 when it is
    inferred (a name's class, a measure): an event's tier-0 questions are tried first."""
    typed: Typed | None = None
    """The answer as the record carries it, typed by the span's kind ("18 million euros", quantity EUR, scale 6);
    None for text built from `answer`."""

    def answer_fields(self) -> Typed:
        return self.typed or text(self.answer)


def day_words(day: date) -> str:
    """'5 January 2026': the day a question names."""
    return f"{day.day} {day:%B %Y}"


def masks(summary: str, day: date, texts: Sequence[str] = ()) -> list[Masked]:
    """Every question one span of `summary` gives (each sentence, and each clause of it after a semicolon, on its
    own), in the order of the sentence; a question two spans give is listed once. `texts` are the event's articles,
    which say what kind of thing a name is (`timelyqa.news.wh`); a span no question word fits is not asked."""
    out: dict[str, Masked] = {}
    for sentence in _SENTENCE.split(" ".join(summary.split())):
        for clause in sentence.split("; "):
            clause = clause.strip().rstrip(".!?;:").strip()
            for start, end, answer, level, wh, typed, tier in _spans(clause, texts):
                # a wh-question says the unit or scale a money or measured answer has ("how much money, in millions
                # of euros", "of what size, in metres"); "what percentage" and "how many people" say theirs
                unit = unit_phrase(typed.value) if wh == "how much money" or typed.type == "quantity" and \
                    "what size" in wh else ""
                question = _wh(clause, start, end, wh, day, unit)
                out.setdefault(question, Masked(answer, level, question, tier, typed))
    return list(out.values())


Span = tuple[int, int, str, str, str, Typed, int]
"""(start, end, answer, level, wh-phrase, typed answer, tier): the wh-phrase replaces s[start:end]; tier 0 when the
sentence itself gives the question word (a title, a country, a count's noun, a currency), 1 when it is inferred."""


def _spans(s: str, texts: Sequence[str] = ()) -> list[Span]:
    """Every span of `s` a question word fits, in the order of the sentence."""
    spans: list[Span] = []
    for m in _RE_TITLED.finditer(s):
        if re.match(r"['’]s\b", s[m.end():]) or s[: m.start()].split()[-1:] in (["that"], ["which"], ["who"]):
            continue  # "which Mayor's tram line", "the line that which Mayor promised": no question reads so
        title = m["title"][0].lower() + m["title"][1:] if m["title"].split()[0] in {"Former", "Acting",
                                                                                    "Incumbent"} else m["title"]
        spans.append((m.start(), m.end(), m["ans"], "entity", f"which {title}", entity(m["ans"]), 0))
    for m in _RE_COUNTRY.finditer(s):
        before = s[: m.start()].split()
        if _capital_neighbour(s, None if m["pos"] else m.end(), before):
            continue
        if bool(before) and before[-1].endswith(",") and before[-1][:1].isupper():
            continue  # "Tingri County, Tibet, China": "Tibet, which country" reads badly
        spans.append((m.start(), m.end(), m["ans"], "entity", "which country" + ("'s" if m["pos"] else ""),
                      entity(m["ans"]), 0))
    dates = []
    for m in _RE_DATE.finditer(s):
        dates.append((m.start(), m.end()))
        lead = s[: m.start()].split()[-1:]
        wh = ("what month" if lead in (["in"], ["since"]) else None) if m["month"] else (
            "what date" if lead in (["on"], ["until"], ["by"]) else None)
        if wh:
            spans.append((m.start(), m.end(), m["ans"], "date", wh, _date(m["ans"]), 0))
    for m in _RE_YEAR.finditer(s):
        lead = s[: m.start()].split()[-1:]
        if not any(a <= m.start() < b for a, b in dates) and lead in (["in"], ["since"], ["until"], ["by"], ["for"]):
            # "for 2027" is most often a year something is for (a budget's), less surely a time than "in 2027"
            spans.append((m.start(), m.end(), m["ans"], "date", "what year", _date(m["ans"]), int(lead == ["for"])))
    measured = []
    for start, end, answer, kind, wh, unit in measure_spans(s):
        measured.append((start, end))
        typed = (_or_text(quantity, f"{answer} {unit}s") if kind == "quantity" else
                 _or_text(number, answer) if kind == "number" else text(answer))
        spans.append((start, end, answer, "number", wh, typed, 1))
    for m in _RE_NUMBER.finditer(s):
        if any(a <= m.start("num") < b for a, b in dates + measured) or _RE_YEAR.fullmatch(m["num"] or ""):
            continue
        if (span := _number(s, m)) is not None:
            spans.append(span)
    for m in _RE_NAME.finditer(s):
        start, words = m.start(), m.group().split()
        if start == 0 and words[0].lower() in _OPENERS:
            start, words = start + len(words[0]) + 1, words[1:]
        elif start == 0 and len(words) == 1 and not any(c.isupper() for c in words[0][1:]):
            continue  # "Voters ..." or "Hamas ...": a sentence's capitalised first word may be no name at all
        while words and words[0] in _NOT_NAMES:
            start, words = start + len(words[0]) + 1, words[1:]
        name = s[start:m.end()].rstrip(".'’")
        if any(a < start + len(name) and start < b for a, b, *_ in spans):
            continue  # a capitalised run that a country, a titled person or a version already covers
        if words and not all(w in _NOT_NAMES or w.lower() in {"of", "the", "and", "de", "for"} for w in words):
            if (asked := name_wh(s, start, start + len(name), name, texts)) is not None:
                spans.append((asked[0], asked[1], name, "entity", asked[2], entity(name), 1))
    return sorted(spans, key=lambda sp: sp[0])


def _or_text(build: Callable[[str], Typed], span: str) -> Typed:
    """The span typed by its kind; text when the builder cannot read it as one (the row is kept, graded by words)."""
    try:
        return build(span)
    except NotTyped:
        return text(span)


def _date(span: str) -> Typed:
    """A date span typed as a date; a day without its year ("March 5") is text: the span does not say the year,
    and the event's day may lie in the next one."""
    return _or_text(date_answer, span)


def _number(s: str, m: re.Match[str]) -> Span | None:
    """A count, a sum of money or a percentage asked by its wh-phrase; any other number by a blank. A sum by its
    sign ("€18 million") or its currency noun ("18 million euros") is a quantity in that currency, a percentage
    one in percent, a count or any other number a number (with its scale word)."""
    answer = f"{m['cur'] or ''}{m['num']}{m['scale'] or ''}"
    noun, lead = m["noun"], s[: m.start()].split()[-1:]
    number_end = m.end("scale") if m["scale"] else m.end("num")
    if m["cur"]:
        return m.start(), number_end, answer, "number", "how much money", _or_text(quantity, answer), 0
    if m["pct"]:
        return (m.start(), m.end("pct"), answer + "%", "number", "what percentage",
                _or_text(quantity, answer + "%"), 0)
    if noun in _MONEY_NOUNS and lead != ["the"]:
        money = _or_text(quantity, f"{answer} {noun}")
        return m.start(), m.end("noun"), answer, "number", "how much money", money, 0
    if noun in _UNIT_NOUNS and lead != ["the"]:
        measured = _or_text(quantity, f"{answer} {noun}")
        return m.start(), m.end("noun"), answer, "number", f"how many {noun}", measured, 0
    if noun and lead != ["the"] and (noun.endswith("s") or noun in _COUNT_NOUNS) and not noun.endswith("ss"):
        wh = f"how many {noun}"  # "how many crowns" -> "8.5 million": the scale is the answer's, not the question's
        return m.start(), m.end("noun"), answer, "number", wh, _or_text(number, answer), 0
    return None


def _capital_neighbour(s: str, end: int | None, before: list[str]) -> bool:
    """True when a country name is part of a longer name ("Thailand Open", "Northern Ireland"); a capitalised
    first word of the sentence ("In Thailand"), one before a comma ("Tibet, China") or a capitalised word after a
    possessive (`end` None: "Thailand's Senate") is no part of it."""
    after = s[end:].split()[:1] if end is not None else []
    if after and after[0][:1].isupper():
        return True
    return len(before) > 1 and before[-1][:1].isupper() and not before[-1].endswith(",")


def _wh(s: str, start: int, end: int, wh: str, day: date, unit: str = "") -> str:
    body = f"{s[:start]}{wh}{s[end:]}" + (f", {unit}" if unit else "")
    return f"On {day_words(day)}: {body[:1].upper()}{body[1:]}?"


def article_groups(articles: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Each event's articles, by URL (a stable order, whatever order the crawl wrote them in)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in articles.sort("event_id", "url").to_dicts():
        groups.setdefault(row["event_id"], []).append(row)
    return groups


def news_record(event: Mapping[str, Any], article: Mapping[str, Any], *, question: str, answer: Typed, level: str,
                generator: str, verification: Verification, stability: str) -> NewsRecord:
    """The record of a question about `event` answered in `article` (rows of EVENT_SCHEMA and ARTICLE_SCHEMA), with
    the typed `answer` (`timelyqa.answers`).

    Rows judged likely to change (any stability but the first of STABILITY) go to the `longitudinal` split; the
    others are split later by the event's date."""
    fetched: datetime | None = article.get("fetched_at")
    if fetched is not None and fetched.tzinfo is None:
        fetched = fetched.replace(tzinfo=timezone.utc)
    as_of = fetched or datetime.combine(event["date"], time(), tzinfo=timezone.utc)
    evidence = Evidence(url=article["url"], title=article.get("title") or article["url"],
                        revision=article.get("archive_url") or None, fetched_at=fetched,
                        sha256=article.get("sha256"))
    return NewsRecord(
        id=record_id("news", event["event_id"], question, answer.answer), question=question, **answer.fields(),
        source="news", level=level, event_date=event["date"], as_of=as_of,
        split=None if stability == STABLE else Split.LONGITUDINAL, evidence=[evidence], verification=verification,
        generator=generator, event_id=event["event_id"], **masked_context(event, answer),
        category=event["category"], article_url=article["url"],
        outlet=article["outlet"], published=article.get("published"), temporal_stability=stability)
