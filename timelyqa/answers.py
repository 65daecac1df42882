"""Typed answers: what a source knows of its answer made into the record's type, value and aliases, once for all.

A source says what kind of answer it has (Wikidata's datatype and unit, the infobox renderer's value, a recipe's
`type`, a site-tree fact's kind, the news span) and gives its display string; these builders read the value with
the grader's own parsers (timelyqa.rewards), so the gold and the grading never disagree on what a string means,
and write the aliases every consumer that only compares strings needs: the bare number in the question's unit or
scale, the unit's other spellings, dates in other forms and without the weekday, an entity's labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import polars as pl

from timelyqa.record import AnswerType, AnswerValue
from timelyqa.rewards import (ANSWER_TYPES, Amount, currency_sign, normalize, parse_amount, parse_date, parse_unit,
                              unit_symbol)

_SCALE_NAMES = {3: "thousand", 6: "million", 9: "billion", 12: "trillion"}
_MONTHS = ("January February March April May June July August September October November December").split()
_PRECISIONS = {3: "day", 2: "month", 1: "year"}
_CURRENCY_NAMES = {"EUR": ("euro", "euros"), "GBP": ("pound", "pounds"), "USD": ("US dollar", "US dollars"),
                   "JPY": ("yen", "yen"), "CHF": ("Swiss franc", "Swiss francs"), "INR": ("rupee", "rupees")}


_PLURALS = {"foot": "feet", "inch": "inches", "ton": "tonnes", "century": "centuries"}
_TONNE = re.compile(r"\bmetric ton\b")


class NotTyped(ValueError):
    """The display string is not an answer of the type the source said (a reason for the source to drop or fall
    back to text)."""


@dataclass(frozen=True)
class Typed:
    """An answer as a row carries it: display string, type, normalised value and aliases."""

    answer: str
    type: AnswerType
    value: AnswerValue = field(default_factory=AnswerValue)
    aliases: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        """The record's four answer fields, to splat into a record or a row dict."""
        return {"answer": self.answer, "answer_aliases": list(self.aliases), "answer_type": self.type,
                "answer_value": self.value}

    def row(self) -> dict[str, Any]:
        """The same as plain data, for a polars row."""
        return {"answer": self.answer, "answer_aliases": list(self.aliases), "answer_type": str(self.type),
                "answer_value": self.value.model_dump()}


def _distinct(display: str, forms: Iterable[str]) -> tuple[str, ...]:
    seen = {display.strip()}
    out: list[str] = []
    for form in forms:
        form = " ".join(str(form).split())
        if form and form not in seen:
            seen.add(form)
            out.append(form)
    return tuple(out)


# ---------------------------------------------------------------- names and text


def entity(label: str, aliases: Iterable[str] = ()) -> Typed:
    """A named thing: its label, and its other labels (Wikidata's aliases, an infobox link's target and text)."""
    label = " ".join(label.split())
    return Typed(label, AnswerType.ENTITY, AnswerValue(), _distinct(label, aliases))


def text(display: str, aliases: Iterable[str] = ()) -> Typed:
    """A phrase graded as text: a code, a version, a room, a title."""
    display = " ".join(display.split())
    return Typed(display, AnswerType.TEXT, AnswerValue(), _distinct(display, aliases))


def listing(items: Iterable[str], display: str | None = None) -> Typed:
    """Several names or phrases, graded as a set in any order."""
    items = [" ".join(i.split()) for i in items if i and i.strip()]
    if len(items) < 2:
        raise NotTyped(f"a list needs two items or more: {items!r}")
    shown = display or "; ".join(items)
    return Typed(shown, AnswerType.LIST, AnswerValue(items=items),
                 _distinct(shown, ["; ".join(items), ", ".join(items[:-1]) + " and " + items[-1]]))


# ---------------------------------------------------------------- numbers and quantities


def _plain(value: Decimal) -> str:
    return format(value, "f")


def _grouped(value: Decimal) -> str:
    whole, _, fraction = _plain(abs(value)).partition(".")
    grouped = f"{int(whole):,}" + (f".{fraction}" if fraction else "")
    return ("-" if value < 0 else "") + grouped


def _amount(display: str) -> Amount:
    amount = parse_amount(display)
    if amount is None:
        raise NotTyped(f"not a number: {display!r}")
    return amount


def number(display: str) -> Typed:
    """A count or a pure number ("163,900", "1.2 billion", "31", "ten"), read from its display."""
    amount = _amount(display)
    if amount.unit:
        raise NotTyped(f"a number with a unit is a quantity: {display!r}")
    return _numeric(display, amount, None)


def quantity(display: str, unit: str | None = None) -> Typed:
    """A number with a unit ("1.92 m", "14 °C", "£26,900", "18 million euros", "54%"), the unit from the display or
    given (Wikidata's unit label, a recipe's `unit`)."""
    amount = _amount(display)
    written = unit or amount.unit
    parsed = parse_unit(written) if written else None
    if parsed is None:
        raise NotTyped(f"no unit pint knows in {display!r}" + (f" (unit {unit!r})" if unit else ""))
    if amount.unit and unit and parse_unit(amount.unit) != parsed:
        raise NotTyped(f"{display!r} is not in {unit!r}")
    return _numeric(display, amount, unit_symbol(parsed))


def from_decimal(value: Decimal | str, unit: str | None = None) -> Typed:
    """A number or quantity a source holds as a value (Wikidata's "+1.85" and unit): displayed with its unit."""
    value = Decimal(str(value).lstrip("+"))
    parsed = parse_unit(unit) if unit else None
    if unit and parsed is None:
        raise NotTyped(f"no unit pint knows: {unit!r}")
    symbol = unit_symbol(parsed) if parsed is not None else None
    shown = _grouped(value) if symbol is None else _with_unit(_grouped(value), symbol)
    return _numeric(shown, Amount(value, 0, ""), symbol)


def _with_unit(number_text: str, symbol: str) -> str:
    pretty = parse_unit(symbol)
    if sign := currency_sign(symbol):
        return f"{sign}{number_text}"
    if symbol in _CURRENCY_NAMES:
        return f"{number_text} {symbol}"
    if pretty is not None and pretty.dimensionality == {"[time]": 1}:
        return f"{number_text} {unit_words(symbol, plural=True)}"  # "12 years", never pint's "12 a"
    shown = format(pretty, "~P") if pretty is not None else symbol
    return f"{number_text}{shown}" if symbol == "%" else f"{number_text} {shown}"


def _numeric(display: str, amount: Amount, symbol: str | None) -> Typed:
    exponent = amount.value.as_tuple().exponent
    precision = exponent if isinstance(exponent, int) else 0
    value = AnswerValue(number=_plain(amount.value), precision=precision, unit=symbol,
                        scale=amount.scale or None)
    full, plain = _grouped(amount.value), _plain(amount.value)
    if amount.scale:
        short = _plain(amount.value.scaleb(-amount.scale).normalize())
        scaled = f"{short} {_SCALE_NAMES.get(amount.scale, '')}".strip()
        forms, written = [short, scaled, full, plain], [scaled, full]
    else:
        forms, written = [full, plain], [full]
    if symbol:
        forms += [_with_unit(form, symbol) for form in written]
        if words := unit_words(symbol, plural=True):
            forms += [f"{form} {words}" for form in written]
    kind = AnswerType.QUANTITY if symbol else AnswerType.NUMBER
    return Typed(" ".join(display.split()), kind, value, _distinct(display, forms))


def unit_words(symbol: str, *, plural: bool = False) -> str:
    """A unit in words, British spelling: "metres", "degrees Celsius", "euros", "percent", "square kilometres"."""
    if symbol in _CURRENCY_NAMES:
        return _CURRENCY_NAMES[symbol][plural]
    if symbol == "%":
        return "percent"
    unit = parse_unit(symbol)
    if unit is None:
        return ""
    if "/" in str(unit) or "*" in str(unit).replace(" ** 2", "").replace(" ** 3", ""):
        return format(unit, "~P")  # a compound unit reads best in symbols: "m³/s", "kg/m³"
    words = str(unit).replace("degree_", "degree ").replace("_", " ")
    words = _TONNE.sub("ton", words.replace("meter", "metre").replace("liter", "litre"))
    words = re.sub(r"(\w+) \*\* 2$", r"square \1", re.sub(r"(\w+) \*\* 3$", r"cubic \1", words))
    if not plural:
        return words
    if words.startswith("degree "):
        return words.replace("degree", "degrees", 1)
    head, _, last = words.rpartition(" ")
    last = _PLURALS.get(last, last if last.endswith(("s", "z")) else last + "s")
    return f"{head} {last}".strip()


def unit_phrase(value: AnswerValue) -> str:
    """What the question says so that the bare number is right: "in metres", "in millions of euros", ""."""
    scale = _SCALE_NAMES.get(value.scale or 0)
    words = unit_words(value.unit, plural=True) if value.unit else ""
    if value.unit == "%":
        return "in percent" if not scale else ""
    if scale and words:
        return f"in {scale}s of {words}"
    if scale:
        return f"in {scale}s"
    return f"in {words}" if words else ""


# ---------------------------------------------------------------- dates


def date(display: str, iso: str | None = None) -> Typed:
    """A date at day, month or year precision, from its ISO form or read from its display (a weekday allowed)."""
    fields = tuple(int(p) for p in iso.split("-")) if iso else parse_date(display)
    if not fields or len(fields) > 3:
        raise NotTyped(f"not a date: {display!r}")
    iso = "-".join([f"{fields[0]:04d}", *(f"{f:02d}" for f in fields[1:])])
    forms = [iso]
    if len(fields) == 3:
        year, month, day = fields
        forms += [f"{day} {_MONTHS[month - 1]} {year}", f"{_MONTHS[month - 1]} {day}, {year}"]
    elif len(fields) == 2:
        forms += [f"{_MONTHS[fields[1] - 1]} {fields[0]}"]
    value = AnswerValue(date=iso, date_precision=_PRECISIONS[len(fields)])
    return Typed(" ".join(display.split()), AnswerType.DATE, value, _distinct(display, forms))


# ---------------------------------------------------------------- by the type a source names


def typed(kind: str, display: str, *, unit: str | None = None, items: Iterable[str] | None = None,
          aliases: Iterable[str] = ()) -> Typed:
    """The answer of the type a source knows it has ("quantity", "date", ...); NotTyped when the display is not."""
    if kind not in ANSWER_TYPES:
        raise NotTyped(f"unknown answer type {kind!r} (one of {', '.join(ANSWER_TYPES)})")
    if kind == "number":
        return number(display)
    if kind == "quantity":
        return quantity(display, unit)
    if kind == "date":
        return date(display)
    if kind == "list":
        return listing(items if items is not None else re.split(r"\s*;\s*", display), display)
    if kind == "entity":
        return entity(display, aliases)
    return text(display, aliases)


# ---------------------------------------------------------------- across rows


def _question_key(question: str) -> str:
    # The same question asked at another clock: "Current time: ... . What was ..." or "As of DATE, what ...".
    question = re.sub(r"^(?:current time:[^.]*\.|as of [^,]*,)\s*", "", question.strip(), flags=re.IGNORECASE)
    return normalize(question)


def drop_conflicting_aliases(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows whose aliases never list the different answer of another row asking the same question (the same
    question at another date or clock): a string-matching consumer would otherwise reward the old answer."""
    if frame.is_empty() or "answer_aliases" not in frame.columns:
        return frame
    answers: dict[str, set[str]] = {}
    keys = [_question_key(q) for q in frame.get_column("question").to_list()]
    for key, answer in zip(keys, frame.get_column("answer").to_list(), strict=True):
        answers.setdefault(key, set()).add(normalize(answer or ""))
    kept = []
    for key, answer, aliases in zip(keys, frame.get_column("answer").to_list(),
                                    frame.get_column("answer_aliases").to_list(), strict=True):
        others = answers[key] - {normalize(answer or "")}
        kept.append([a for a in aliases or [] if normalize(a) not in others])
    return frame.with_columns(pl.Series("answer_aliases", kept, dtype=pl.List(pl.String)))
