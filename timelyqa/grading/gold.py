"""The typed gold of a row and the grade of a prediction against it, by the rules of its type."""

# No `from __future__ import annotations`: with string annotations, @dataclass looks this module up in sys.modules.
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from math import comb
from typing import Any

from .amounts import Amount, parse_amount, precision_of, rounded
from .dates import is_month, iso_fields, parse_date
from .text import normalize, token_f1
from .units import parse_unit, units


@dataclass(frozen=True)
class Gold:
    """What a row says its answer is: the display string, its aliases, its type and its normalised value."""

    answer: str
    aliases: tuple[str, ...] = ()
    type: str | None = None
    number: Decimal | None = None
    precision: int | None = None
    unit: str | None = None
    scale: int = 0
    date: tuple[int, ...] | None = None
    items: tuple[str, ...] = ()

    @classmethod
    def of(cls, answer: str, aliases: Any = (), answer_type: str | None = None,
           answer_value: Mapping[str, Any] | None = None) -> "Gold":
        """The gold of a row's fields as any consumer holds them (lists or numpy arrays, a dict or None)."""
        value = dict(answer_value or {})
        number = value.get("number")
        precision = value.get("precision")
        parsed = Decimal(str(number)) if number not in (None, "") else None
        return cls(
            answer=str(answer or ""), aliases=tuple(str(a) for a in plain(aliases) if a),
            type=str(answer_type) if answer_type else None, number=parsed,
            precision=int(precision) if precision is not None else (precision_of(parsed) if parsed is not None
                                                                    else None),
            unit=value.get("unit") or None, scale=int(value.get("scale") or 0),
            date=iso_fields(str(value["date"])) if value.get("date") else None,
            items=tuple(str(i) for i in plain(value.get("items")) if i))

    @property
    def accepted(self) -> list[str]:
        return [a for a in (self.answer, *self.aliases) if a.strip()]


def plain(values: Any) -> list[Any]:
    """Values as a list, whether a consumer holds them as a string, a list, a numpy array or None."""
    if values is None:
        return []
    if hasattr(values, "tolist"):
        values = values.tolist()
    return [values] if isinstance(values, str) else list(values)


def _same_amount(prediction: str, gold: Gold) -> bool:
    amount = parse_amount(prediction)
    if amount is None or gold.number is None:
        return False
    precision = gold.precision if gold.precision is not None else precision_of(gold.number)
    target = rounded(gold.number, precision)
    if amount.unit and not gold.unit:
        # A count may name what it counts ("31 currencies", "3 departures"), never a unit: "14 °C" or "3 hours" for
        # "how many members" is wrong, and so is a month ("4 November" is a date, not 4).
        if parse_unit(amount.unit) is not None or is_month(amount.unit.split()[0]):
            return False
        amount = Amount(amount.value, amount.scale, "")
    if amount.unit:
        want, have = parse_unit(gold.unit), parse_unit(amount.unit)
        if want is None or have is None:
            return False
        if have == units().degree and want.dimensionality == units().kelvin.dimensionality:
            have = want  # "14°" or "14 degrees" asked in degrees Celsius: the question's degrees, not an angle
        try:
            converted = units().Quantity(float(amount.value), have).to(want).magnitude
        except Exception:  # pint.DimensionalityError and kin: "1.92 kg" for "1.92 m"
            return False
        values = [Decimal(repr(float(converted)))]
    else:
        # A bare number: in the gold's unit, as the full number or in the question's scale ("18" for 18 million).
        values = [amount.value]
        if gold.scale and not amount.scale:
            values.append(amount.value.scaleb(gold.scale))
    return any(rounded(v, precision) == target for v in values)


def _same_date(prediction: str, gold: Gold) -> bool:
    pred = parse_date(prediction)
    # The prediction must be at least as precise as the gold: "1990" never earns "February 1990".
    return pred is not None and gold.date is not None and len(pred) >= len(gold.date) and \
        pred[:len(gold.date)] == gold.date


def _item_forms(item: str) -> list[tuple[str, ...]]:
    forms = {tuple(normalize(re.sub(r"[;,&|/\n•·]", " ", item)).split())}
    bare = re.sub(r"\s*\([^)]*\)", "", item).strip()
    if bare and bare != item:
        forms.add(tuple(normalize(bare).split()))
    return sorted((f for f in forms if f), key=len, reverse=True)


def _same_list(prediction: str, items: tuple[str, ...]) -> bool:
    """Every item exactly once and nothing else but separators and "and", in any order."""
    tokens = normalize(re.sub(r"[;,&|/\n•·]", " ", prediction)).split()
    forms = [_item_forms(item) for item in items]
    if not tokens or not all(forms) or len(items) > 64:
        return False

    def cover(position: int, used: frozenset[int]) -> bool:
        if position == len(tokens):
            return len(used) == len(items)
        if tokens[position] == "and":
            return cover(position + 1, used)
        for index, item in enumerate(forms):
            if index in used:
                continue
            for form in item:
                if tuple(tokens[position:position + len(form)]) == form and \
                        cover(position + len(form), used | {index}):
                    return True
        return False

    return cover(0, frozenset())


_SEPARATOR = re.compile(r"\s*(?:[;\n|•·&/]|,(?!\d)|\band\b)\s*")
"""Where a list's items may part: a comma before a digit groups thousands ("£25,400"), not items."""


def _same_list_by_value(prediction: str, items: tuple[str, ...]) -> bool:
    """Every item exactly once and nothing else, each item read by value where it is a number, an amount or a date
    ("48; December 31, 2026" for "48; 31 December 2026", "1; 25,400 pounds" for "1; £25,400"): the prediction cut at
    some of its separators into as many parts as there are items, each part one item's."""
    cuts = list(_SEPARATOR.finditer(prediction))
    if not 1 < len(items) <= 8 or len(cuts) < len(items) - 1:
        return False
    strong = [c for c in cuts if re.search(r"[;\n|•·]", c.group())]  # "A; B; C": only these cuts, when they fit
    tries: list[tuple[re.Match[str], ...]] = [tuple(strong)] if len(strong) == len(items) - 1 else []
    if comb(len(cuts), len(items) - 1) <= 2000:  # a long answer is not tried every way: the grade stays quick
        tries += combinations(cuts, len(items) - 1)
    seen: dict[tuple[str, int], bool] = {}

    def fits(part: str, index: int) -> bool:
        if (part, index) not in seen:
            seen[part, index] = _same_item(part, items[index])
        return seen[part, index]

    def assign(parts: list[str], used: frozenset[int]) -> bool:
        if not parts:
            return True
        return any(index not in used and fits(parts[0], index) and assign(parts[1:], used | {index})
                   for index in range(len(items)))

    for chosen in tries:
        bounds = [0, *(b for c in chosen for b in c.span()), len(prediction)]
        parts = [re.sub(r"^(?:and\s+)|(?:\s+and)$", "", prediction[a:b].strip()).strip()
                 for a, b in zip(bounds[::2], bounds[1::2], strict=True)]
        if all(parts) and assign(parts, frozenset()):
            return True
    return False


def _same_item(part: str, item: str) -> bool:
    """A part of a predicted list is the item: as text (or the item without its parenthetical), as the same number,
    amount or date, or as the count with what it counts named ("1 project" for 1)."""
    key = tuple(normalize(part).split())
    if key and key in _item_forms(item):
        return True
    if _untyped_value_match(part, item):
        return True
    amount, truth = parse_amount(part), parse_amount(item)
    return (amount is not None and truth is not None and not truth.unit and bool(amount.unit)
            and amount.value == truth.value and parse_unit(amount.unit) is None
            and not is_month(amount.unit.split()[0]))


def _text_match(prediction: str, gold: Gold) -> bool:
    key = normalize(prediction)
    return bool(key) and any(normalize(a) == key for a in gold.accepted)


_TITLES = frozenset("dr prof professor mr mrs ms mx sir dame".split())
"""Titles before a person's name, which name no other person: "Dr Ravi Menon" is Ravi Menon."""


def _untitled(name: str) -> str:
    """A name, normalised, without the titles before it ("Prof. Mei Lindqvist" -> "mei lindqvist"), unless that
    leaves one word ("Mr Bean", "Professor Layton" keep theirs)."""
    words = normalize(name).split()
    while len(words) > 2 and words[0] in _TITLES:
        words = words[1:]
    return " ".join(words)


def _same_name(prediction: str, gold: Gold) -> bool:
    key = _untitled(prediction)
    return bool(key) and any(_untitled(a) == key for a in gold.accepted)


def _same_unit(one: str, other: str) -> bool:
    if normalize(one) == normalize(other):
        return True
    first, second = parse_unit(one) if one else None, parse_unit(other) if other else None
    return first is not None and first == second


def _untyped_value_match(prediction: str, answer: str) -> bool:
    """The rules of rows without a type (grader v1): a number or a date written in another form."""
    amount, truth = parse_amount(prediction), parse_amount(answer)
    if amount is not None and truth is not None and amount.value == truth.value and _same_unit(amount.unit, truth.unit):
        return True
    pred, want = parse_date(prediction), parse_date(answer)
    return pred is not None and want is not None and len(pred) >= len(want) and pred[:len(want)] == want


def grade(prediction: str, gold: Gold) -> float:
    """1.0 when the prediction is the gold answer by the rules of its type (timelyqa.rewards says them), else 0.0."""
    prediction = prediction.strip()
    if not normalize(prediction):
        return 0.0
    kind = gold.type
    # A number or a date the grader can read is judged by its value alone: text equality drops signs and would
    # take "-14 °C" for "14 °C". The text of the answer and aliases still counts for what reads as no value.
    if kind in ("number", "quantity") and parse_amount(prediction) is not None:
        return float(_same_amount(prediction, gold))
    if kind == "date" and parse_date(prediction) is not None:
        return float(_same_date(prediction, gold))
    if _text_match(prediction, gold) or kind == "entity" and _same_name(prediction, gold):
        return 1.0
    if kind == "list":
        return float(_same_list(prediction, gold.items) or _same_list_by_value(prediction, gold.items))
    if kind is None:
        return float(any(_untyped_value_match(prediction, a) for a in gold.accepted))
    return 0.0


def graded_f1(prediction: str, gold: Gold) -> float:
    """Token F1 for names and text (best over the answer and aliases); for the other types their grade."""
    if grade(prediction, gold):
        return 1.0
    if gold.type in ("entity", "text", None):
        return max((token_f1(prediction, a) for a in gold.accepted), default=0.0)
    return 0.0
