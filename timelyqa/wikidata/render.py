"""Values and entities as English text (labels, dates by precision, quantities with their unit) and typed answers."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from timelyqa import answers
from timelyqa.answers import Typed
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


def phrase(kind: Kind, form: str, labels: dict[str, str]) -> str:
    """The value as a clause says it: a time with its preposition ("on 5 February 1990"), a quantity in a unit pint
    knows with the unit in words ("1.85 metres", "1 metre"), anything else as render() writes it ("1.85 metre" was
    Wikidata's unit label read as a word; a unit pint does not know keeps its label)."""
    if kind is Kind.QUANTITY:
        display = render(kind, form, labels)
        amount, unit = split_quantity(form)
        try:
            typed = answers.from_decimal(amount, labels[unit] if unit else None)
        except answers.NotTyped:
            return display
        symbol = typed.value.unit
        if symbol is None:
            return display
        words = answers.unit_words(symbol, plural=Decimal(typed.value.number or "0").copy_abs() != 1)
        return f"{_number(amount)} {words}" if words else typed.answer
    return render(kind, form, labels, with_preposition=True)


def answer(kind: Kind, form: str, labels: dict[str, str], entity_aliases: dict[str, list[str]]) -> Typed:
    """The value as a typed answer, its type from Wikidata's datatype: an item is an entity (its label, and its
    English aliases), a quantity a number (unit "1") or a quantity in its unit, a time a date at its precision,
    a string or monolingual text a text. Raises Unrenderable as render() does."""
    display = render(kind, form, labels)
    if kind is Kind.ENTITY:
        return answers.entity(display, entity_aliases.get(form, []))
    if kind is Kind.QUANTITY:
        amount, unit = split_quantity(form)
        try:
            return answers.from_decimal(amount, labels[unit] if unit else None)
        except answers.NotTyped:
            # A unit pint does not know ("United States dollar", "metres above sea level"): no unit symbol to
            # grade by, so the answer stays as rendered, graded as text (the question cannot name a unit it lacks).
            return answers.text(display)
    if kind is Kind.TIME:
        year, month, day, precision = split_time(form)
        iso = {11: f"{year:04d}-{month:02d}-{day:02d}", 10: f"{year:04d}-{month:02d}", 9: f"{year:04d}"}
        if year > 0 and not form.endswith("/julian") and min(precision, 11) in iso:
            # Finer than a day (hours, minutes, seconds) is rendered, and graded, as the day.
            return answers.date(display, iso[min(precision, 11)])
        # A decade, a year BC or a Julian date has no ISO form a grader reads: graded as its text.
        return answers.text(display)
    return answers.text(display)


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


_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "eu", "one", "once")
_VOWEL_SOUND = ("hour", "honest", "honor", "honour", "heir")


def article(noun: str) -> str:
    """The noun with "a" or "an" by its first sound as spelling shows it: "an association football player", "a
    university", "an hour"."""
    low = noun.lower()
    vowel = (low[:1] in "aeiou" and not low.startswith(_CONSONANT_SOUND)) or low.startswith(_VOWEL_SOUND)
    return f"{'an' if vowel else 'a'} {noun}"
