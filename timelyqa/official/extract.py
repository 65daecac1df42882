"""Reading a recipe's answer from fetched pages: select, type, combine, round, check; a failure with its reason."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from timelyqa.official.origin import cut
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Extract, Kind, Recipe, answer_kind, compile_regex
from timelyqa.page import selector

Typed = float | int | date | str
LIST_SEPARATOR = "; "
"""Between the items of a list answer, and the values of a text join, in the answer text."""
MAX_PAGE_CHARS = 8 * 1024 * 1024
"""The largest page a recipe reads. The crawl keeps no body over 5 MiB as served (DOWNLOAD_MAXSIZE); a page Chromium
built may be larger, and is not read."""


@dataclass(frozen=True)
class Value:
    """A resolved answer: the value, the text a reader sees (with its unit), and the number when there is one."""

    value: float | int | str | date | list[str]
    text: str
    number: float | None


@dataclass(frozen=True)
class Fail:
    """No answer, and why: never a guessed one."""

    reason: Failure
    detail: str


def _collapse(text: str) -> str:
    return " ".join(text.split())


def matches(html: str, extract: Extract) -> list[str]:
    """Each match's text in page order (an element's whole text, an attribute's value), through `regex` if given:
    its group, or the whole match; a string the regex does not match is left out. The page is read by
    `timelyqa.page` (XHTML with its declaration, any depth)."""
    if not html.strip():
        return []
    page = selector(html)
    nodes = page.css(extract.css) if extract.css is not None else page.xpath(extract.xpath or "")
    texts = [_collapse(n.root if isinstance(n.root, str) else
                       str(n.root) if isinstance(n.root, int | float) else n.xpath("string()").get() or "")
             for n in nodes]
    if extract.regex is None:
        return texts
    pattern = compile_regex(extract.regex)  # RE2: linear in the text, whatever the pattern
    found = []
    for text in texts:
        if (m := pattern.search(text)) is not None and (part := m.group(pattern.groups and 1)) is not None:
            found.append(part)
    return found


# thousands are grouped by commas (or the no-break spaces typeset pages use); a sign is a sign only at a word's start
_NUMBER = re.compile(r"([-+\u2212]?)(\d{1,3}(?:[,\u00a0\u202f]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_MONTHS = {name: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")], start=1) for name in names}
_ORD = r"(?:st|nd|rd|th)?"
_DATES = [  # (pattern, order of year, month, day groups); day first for numbers: 16/11/2026 is 16 November
    (re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), (1, 2, 3)),
    (re.compile(r"(?<!\d)(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?!\d)"), (3, 2, 1)),
    (re.compile(rf"(?<!\d)(\d{{1,2}}){_ORD}\s+(?:of\s+)?([a-z]+)\.?,?\s+(\d{{4}})(?!\d)", re.I), (3, 2, 1)),
    (re.compile(rf"\b([a-z]+)\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})(?!\d)", re.I), (3, 1, 2)),
]


# What may stand around a whole value: a label ending in a colon ("Level:"), a currency before a number ("£",
# "USD "), a unit of at most two words after it ("m", "km²", "°C", "per cent", "people"), a weekday before a date and a
# time after it. Anything else (another number, a sentence) means the match is not the value: a regex picks it out.
_LABEL = r"(?:[^\d:]{1,40}:\s*)?"
_BEFORE_NUMBER = re.compile(rf"^{_LABEL}(?:[£$€¥₹]|[A-Z]{{3}})?$")  # `before` comes stripped
_UNIT = re.compile(r"^[^\d\s][^\d\s]{0,11}(?:\s+[^\d\s]{1,12})?$")
_SCALE = re.compile(r"^(?:thousand|million|billion|trillion|bn|mn)\b", re.IGNORECASE)
_BEFORE_DATE = re.compile(rf"^{_LABEL}(?:the\s+)?(?:(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
                          r"(?:day|sday|nesday|rsday|urday)?\.?,?\s+)?$", re.IGNORECASE)
_AFTER_DATE = re.compile(r"^(?:(?:T|,?\s+(?:at\s+)?)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[ap]\.?m\.?)?\s*"
                         r"(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT|[A-Z]{2,4})?)?\.?$", re.IGNORECASE)


def _number(raw: str) -> tuple[float, str]:
    """The one number `raw` is (a label, a currency and a unit around it allowed); ValueError saying why not."""
    m = _NUMBER.search(raw)
    if m is None:
        raise ValueError("it holds no number")
    after = raw[m.end():m.end() + 2]
    if len(after) == 2 and after[0] in ".," and after[1].isdigit():  # "1,5" or "1.234.567": which is the decimal?
        token = raw[m.start():].split()[0]
        raise ValueError(f"{token!r} is ambiguous (here commas group thousands and a point is the decimal one)")
    digits = re.sub(r"[,\u00a0\u202f]", "", m.group(2))
    sign = m.group(1) if m.group(1) and (m.start() == 0 or not raw[m.start() - 1].isalnum()) else ""
    negative = sign in ("-", "\u2212")
    _whole(raw, raw[:m.start(2) - len(sign)].strip(), raw[m.end():].strip())
    return (-1 if negative else 1) * float(digits), ("-" if negative else "") + digits


def _whole(raw: str, before: str, after: str) -> None:
    """ValueError unless the number found is the whole value: "2026" in "Daily weather for Aldermoor on 2026-11-15"
    is not the page's number, and answering it would be a silent wrong answer."""
    if (count := len(_NUMBER.findall(raw))) > 1:
        raise ValueError(f"it holds {count} numbers, not one (a regex can pick the one meant)")
    if not _BEFORE_NUMBER.match(before):
        raise ValueError(f"{_short(before)} before the number is no label or currency (a regex can pick the number "
                         "out)")
    if after and _SCALE.match(after):
        raise ValueError(f"{_short(after)} scales the number, which is not read as such")
    if after and not _UNIT.match(after):
        raise ValueError(f"{_short(after)} after the number is no unit (a regex can pick the number out)")


def _date(raw: str) -> date:
    found: list[tuple[int, date, int]] = []
    for pattern, (y, mo, d) in _DATES:
        for m in pattern.finditer(raw):
            month_text = m.group(mo)
            month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text.lower())
            if month is None:
                continue
            try:
                found.append((m.start(), date(int(m.group(y)), month, int(m.group(d))), m.end()))
            except ValueError:
                raise ValueError(f"{m.group(0)!r} is not a day of the calendar") from None
            break
    if not found:
        raise ValueError("it holds no date (2026-11-16, 16 November 2026, November 16, 2026, 16/11/2026)")
    start, day, end = min(found, key=lambda t: t[0])
    before, after = raw[:start].strip(), raw[end:].strip()
    if not _BEFORE_DATE.match(before + " " if before else "") or not _AFTER_DATE.match(after):
        extra = before if not _BEFORE_DATE.match(before + " " if before else "") else after
        raise ValueError(f"{_short(extra)} around the date is no label, weekday or time (a regex can pick the date "
                         "out)")
    return day


def typed(raw: str, kind: Kind) -> float | int | date | str | list[str]:
    """The value of one match as its type; ValueError saying why it is not one."""
    if kind == "number":
        return _number(raw)[0]
    if kind == "integer":
        number, digits = _number(raw)
        if not number.is_integer():
            raise ValueError(f"{number:g} is not a whole number")
        return int(digits.split(".")[0])  # from the digits: a float would round 17-digit counts
    if kind == "date":
        return _date(raw)
    if not raw.strip():
        raise ValueError("it is empty")
    return raw.strip()


def _shortest(number: float) -> str:
    # The shortest digits that read back as the float, never in exponent form: "1e-05" is no number the answer's
    # type reads (typed.typed would keep it as text), "0.00001" is.
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return format(Decimal(repr(number)), "f") if math.isfinite(number) else repr(number)


def _format(value: object, kind: str, digits: int | None = None) -> str:
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return LIST_SEPARATOR.join(value)
    if kind == "number" and isinstance(value, float):
        return f"{value:.{digits}f}" if digits is not None else _shortest(value)
    return str(value)


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")  # cut first: the raw text may be a whole page


def _combine(recipe: Recipe, values: list[Typed]) -> object:
    kind, how = recipe.extract.type, recipe.combine
    if how == "count":
        return len(values)
    if how == "join":
        return [str(v) for v in values] if kind == "list" else LIST_SEPARATOR.join(_format(v, kind) for v in values)
    if how == "first":
        return values[0]
    if how == "last":
        return values[-1]
    if how == "min":
        return min(values)  # type: ignore[type-var]
    if how == "max":
        return max(values)  # type: ignore[type-var]
    if how == "sum":
        return sum(values) if kind == "integer" else math.fsum(values)  # type: ignore[arg-type]
    return math.fsum(values) / len(values)  # type: ignore[arg-type]  # mean; the recipe allows it only on numbers


def _outside(value: object, recipe: Recipe) -> str | None:
    if recipe.valid is None:
        return None
    low, high = recipe.valid.min, recipe.valid.max
    words = ("before", "after") if isinstance(value, date) else ("below", "above")
    shown = _format(value, answer_kind(recipe), recipe.round)
    if low is not None and value < low:  # type: ignore[operator]
        return f"{shown} {words[0]} min {_bound(low)}"
    if high is not None and value > high:  # type: ignore[operator]
        return f"{shown} {words[1]} max {_bound(high)}"
    return None


def _bound(bound: float | date) -> str:
    return bound.isoformat() if isinstance(bound, date) else _shortest(bound)


def evaluate(recipe: Recipe, pages: Sequence[str]) -> Value | Fail:
    """The recipe's answer from the pages fetched for it, in order (one, or one per each_day day): every page must
    match, every match must be of its type, and the combined value must lie in `valid`."""
    if not pages:
        return Fail(Failure.EXTRACTED_NOTHING, "no page was given to read")
    extract, found = recipe.extract, []
    for k, html in enumerate(pages, start=1):
        if len(html) > MAX_PAGE_CHARS:
            return Fail(Failure.EXTRACT_LIMIT, f"page {k} has {len(html) / 2**20:.1f} MiB of text, over the "
                                               f"{MAX_PAGE_CHARS // 2**20} MiB a recipe reads")
        found.append(matches(html, extract))
        if not found[-1]:
            regex = f" with regex {cut(extract.regex)}" if extract.regex is not None else ""
            return Fail(Failure.EXTRACTED_NOTHING, f"{extract.selector}{regex} matched nothing on page {k}")
    return finish(recipe, found)


def finish(recipe: Recipe, found: Sequence[Sequence[str]]) -> Value | Fail:
    """The answer from the raw strings read on each page (or printed by a trusted workflow): each typed, then
    combined, rounded and checked against `valid`."""
    extract, values = recipe.extract, []
    for k, raws in enumerate(found, start=1):
        for raw in raws:
            try:
                values.append(typed(raw, extract.type))
            except ValueError as exc:
                return Fail(Failure.VALUE_INVALID, f"{_short(raw)} on page {k} is not {_a(extract.type)}: {exc}")
    kind = answer_kind(recipe)
    value = _combine(recipe, values)  # type: ignore[arg-type]
    if kind == "number":
        value = float(value)  # type: ignore[arg-type]
        if recipe.round is not None:
            value = round(value, recipe.round) + 0.0  # + 0.0: -0.0 would print as "-0.00"
    if (outside := _outside(value, recipe)) is not None:
        return Fail(Failure.VALUE_INVALID, outside)
    text = _format(value, kind, recipe.round)
    if recipe.unit is not None:
        text = f"{text} {recipe.unit}"
    number = float(value) if kind in ("number", "integer") else None  # type: ignore[arg-type]
    return Value(value=value, text=text, number=number)  # type: ignore[arg-type]


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
