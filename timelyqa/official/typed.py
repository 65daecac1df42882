"""A recipe's answer as the record types it: the type its `extract.type`, `combine` and `unit` declare, the value
read by the shared builders (timelyqa.answers), and the question saying the unit, so that a bare number is right.

The type is the recipe's, never guessed from the answer: a number or an integer with a unit pint knows ("m", "°C",
"%", "EUR") is a quantity; without one, or with a count's noun ("people", "readings"), a number; a date a date; a
list a list (also when the day's list has one item); a text or a join of other values, text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from timelyqa import answers
from timelyqa.answers import NotTyped, Typed, unit_phrase, unit_words
from timelyqa.official.extract import LIST_SEPARATOR
from timelyqa.official.recipe import Recipe, answer_kind
from timelyqa.record import AnswerType, AnswerValue
from timelyqa.rewards import parse_unit, unit_symbol


def unit_of(recipe: Recipe) -> str | None:
    """The pint symbol of the recipe's unit ("m", "°C", "km**2"); None without a unit, or for a noun pint does not
    know, which names what a count counts ("412 people")."""
    parsed = parse_unit(recipe.unit) if recipe.unit is not None else None
    return unit_symbol(parsed) if parsed is not None else None


def declared(recipe: Recipe) -> AnswerType:
    """The answer type the recipe declares (see the module docstring)."""
    kind = answer_kind(recipe)
    if kind in ("number", "integer"):
        return AnswerType.QUANTITY if unit_of(recipe) else AnswerType.NUMBER
    return {"date": AnswerType.DATE, "list": AnswerType.LIST}.get(kind, AnswerType.TEXT)


def expected(recipe: Recipe) -> AnswerValue:
    """What a live row knows of its answer before it is resolved: the unit, the precision the recipe rounds to (an
    integer's is 0), a date's precision (a day: dates are read whole)."""
    kind, answer = answer_kind(recipe), declared(recipe)
    if answer is AnswerType.DATE:
        return AnswerValue(date_precision="day")
    if answer not in (AnswerType.NUMBER, AnswerType.QUANTITY):
        return AnswerValue()
    precision = 0 if kind == "integer" else -recipe.round if recipe.round is not None else None
    return AnswerValue(precision=precision, unit=unit_of(recipe))


def typed(recipe: Recipe, answer: str, items: Sequence[str] | None = None) -> Typed:
    """The answer text a recipe gave (extract.Value.text: "1.92 m", "Alder Weir; Corran Sluice") as the record's
    four answer fields. `items`: a list's items as read, when at hand (else split at the list separator).

    An answer that is not of the declared type (a number pint cannot read, "1e-05") falls back to text: the row is
    kept, graded by its string, as before types."""
    kind = declared(recipe)
    try:
        if kind is AnswerType.LIST:
            return _listing(list(items) if items is not None else answer.split(LIST_SEPARATOR), answer)
        if kind is AnswerType.QUANTITY:
            return answers.quantity(answer, recipe.unit)
        if kind is AnswerType.NUMBER and recipe.unit is not None:
            return _counted(answer, recipe.unit)
        return answers.typed(str(kind), answer)
    except NotTyped:
        return answers.text(answer)


def _listing(items: list[str], answer: str) -> Typed:
    # A list question answered by one item is still a list: graded as the set of that one item, so that a model
    # naming a second station is wrong. answers.listing refuses fewer than two items, so the one-item value is
    # built here; it has no other form to alias.
    if len(items) >= 2:
        return answers.listing(items, answer)
    item = " ".join(answer.split())
    if not item:
        raise NotTyped("an empty list")
    return Typed(item, AnswerType.LIST, AnswerValue(items=[item]))


def _counted(answer: str, noun: str) -> Typed:
    # A count with its noun ("412 people"): the number without the noun is the value, the display keeps the noun,
    # and the number's own forms ("412") are its aliases.
    bare = answer.removesuffix(f" {noun}")
    number = answers.number(bare)
    forms = tuple(form for form in (number.answer, *number.aliases) if form != answer)
    return Typed(answer, AnswerType.NUMBER, number.value, forms)


def asked(recipe: Recipe) -> str:
    """The recipe's question, saying the answer's unit when the question does not ("..., in metres?"), so that a
    bare number is right; the question as written when it already says it ("in degrees Celsius", "what percentage",
    "how many days")."""
    question = " ".join(recipe.question.split())
    symbol = unit_of(recipe)
    if symbol is None or _says(question, symbol):
        return question
    phrase = unit_phrase(AnswerValue(unit=symbol))
    if not phrase or "*" in phrase or "/" in phrase:  # "metre ** 3 / second": the recipe's own spelling reads better
        phrase = f"in {recipe.unit}"
    stem = question.removesuffix("?").rstrip()
    return f"{stem}, {phrase}" + ("?" if question.endswith("?") else "")


def _says(question: str, symbol: str) -> bool:
    words = {unit_words(symbol), unit_words(symbol, plural=True)} - {""}
    words |= {w.replace("metre", "meter") for w in words}
    return any(re.search(rf"(?<!\w){re.escape(w)}", question, re.IGNORECASE) for w in words)
