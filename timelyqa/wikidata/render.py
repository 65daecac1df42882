"""Values and entities as English text: labels, dates by precision, quantities with their unit."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from timelyqa.wikidata.values import Kind, split_quantity, split_time

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
HUMAN = "Q5"


class Unrenderable(ValueError):
    """A value that cannot be written without leaking an id or inventing precision; carries the reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def render(kind: Kind, form: str, labels: dict[str, str], *, with_preposition: bool = False) -> str:
    """The value as an answer would be written ("5 February 1990", "163,900", "1.85 metre", a label)."""
    if kind is Kind.ENTITY:
        if form not in labels:
            raise Unrenderable("object_without_english_label", f"{form} has no English label")
        return labels[form]
    if kind is Kind.TIME:
        return _date(form, with_preposition)
    if kind is Kind.QUANTITY:
        amount, unit = split_quantity(form)
        text = _number(amount)
        if unit is None:
            return text
        if unit not in labels:
            raise Unrenderable("unit_without_english_label", f"unit {unit} of {form} has no English label")
        return f"{text} {labels[unit]}"
    if kind is Kind.MONOLINGUAL:
        return form.rpartition("@")[0]
    if kind is Kind.COORDINATE:
        raise Unrenderable("coordinate_value", f"coordinates {form} make no question")
    return form


def aliases(kind: Kind, form: str, labels: dict[str, str], entity_aliases: dict[str, list[str]]) -> list[str]:
    """Other accepted surface forms of an answer: English aliases, plain numbers, ISO dates."""
    out: list[str] = []
    if kind is Kind.ENTITY:
        out = list(entity_aliases.get(form, []))
    elif kind is Kind.QUANTITY:
        amount, unit = split_quantity(form)
        plain = amount.removeprefix("+")
        out = [plain, _number(amount)] + ([f"{plain} {labels[unit]}"] if unit and unit in labels else [])
    elif kind is Kind.TIME:
        year, month, day, precision = split_time(form)
        if precision >= 11 and year > 0:
            out = [f"{year:04d}-{month:02d}-{day:02d}", f"{MONTHS[month - 1]} {day}, {year}"]
        elif precision == 10 and year > 0:
            out = [f"{year:04d}-{month:02d}"]
    main = render(kind, form, labels)
    return sorted({a for a in out if a and a != main})


def _number(amount: str) -> str:
    try:
        value = Decimal(amount)
    except InvalidOperation:
        return amount.removeprefix("+")
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return format(value.normalize(), "f")


def _date(form: str, with_preposition: bool) -> str:
    year, month, day, precision = split_time(form)
    era = f"{-year} BC" if year < 0 else str(year)
    if precision >= 11 and month and day:
        text, prep = f"{day} {MONTHS[month - 1]} {era}", "on"
    elif precision == 10 and month:
        text, prep = f"{MONTHS[month - 1]} {era}", "in"
    elif precision == 9:
        text, prep = era, "in"
    elif precision == 8 and year > 0:
        text, prep = f"the {year // 10 * 10}s", "in"
    else:
        raise Unrenderable("time_too_coarse", f"time {form} is coarser than a decade")
    if form.endswith("/julian"):
        text += " (Julian calendar)"
    return f"{prep} {text}" if with_preposition else text


def article(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
