"""A typed gold written the other ways a prompt-following model writes it, and a wrong value in each of its forms.

Written from the type and value alone, never from the row's aliases (which would grade the row by itself): the
bare number in the question's unit or scale, digits grouped or not, the unit in symbols or words or converted,
dates in ISO and in words with and without the weekday, lists reordered with other separators.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

_MONTHS = "January February March April May June July August September October November December".split()
_SIGNS = {"EUR": "€", "GBP": "£", "USD": "$"}
_WORDS = {"m": "metres", "°C": "degrees Celsius", "%": "percent", "EUR": "euros", "GBP": "pounds",
          "USD": "US dollars", "km**2": "square kilometres", "kg": "kilograms", "km": "kilometres"}
_SCALES = {3: "thousand", 6: "million", 9: "billion"}


def _plain(value: Decimal) -> str:
    return format(value, "f")


def _grouped(value: Decimal, sep: str = ",") -> str:
    whole, _, fraction = _plain(value).partition(".")
    return f"{int(whole):,}".replace(",", sep) + (f".{fraction}" if fraction else "")


def _numbers(value: Decimal, scale: int | None) -> list[str]:
    forms = [_plain(value), _grouped(value), _grouped(value, " ")]
    if scale:
        short = _plain(value.scaleb(-scale).normalize())
        forms += [short, f"{short} {_SCALES[scale]}"]
    return forms


def _with_unit(number: str, unit: str) -> list[str]:
    forms = []
    if unit in _SIGNS:
        forms += [f"{_SIGNS[unit]}{number}", f"{unit} {number}"]
    elif unit == "%":
        forms += [f"{number}%", f"{number} per cent"]
    else:
        forms += [f"{number} {unit.replace('**2', '²')}"]
    if unit in _WORDS:
        forms.append(f"{number} {_WORDS[unit]}")
    return forms


def _converted(value: Decimal, unit: str) -> list[str]:
    if unit == "m":
        return [f"{_plain(value * 100)} cm"]
    if unit == "°C":
        return [f"{_plain(value * Decimal('1.8') + 32)} °F"]
    if unit == "km**2":
        return [f"{_plain(value * 1_000_000)} m²"]
    return []


def _date_forms(iso: str) -> list[str]:
    parts = [int(p) for p in iso.split("-")]
    if len(parts) == 1:
        return [f"in {parts[0]}"]
    month = _MONTHS[parts[1] - 1]
    if len(parts) == 2:
        return [f"{month} {parts[0]}", f"{month[:3]} {parts[0]}", f"{parts[0]}-{parts[1]:02d}"]
    day = date(*parts)
    return [iso, f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}", f"{month[:3]} {day.day}, {day.year}",
            f"{day:%A}, {day.day} {month} {day.year}", f"the {day.day}th of {month} {day.year}"
            if day.day not in (1, 2, 3, 21, 22, 23, 31) else f"{day.day} {month[:3]}. {day.year}"]


def right_forms(row: dict[str, Any]) -> list[str]:
    """Other ways to write the row's gold that a grader must accept."""
    kind, value = row["answer_type"], row["answer_value"] or {}
    answer = row["answer"]
    if kind in ("number", "quantity"):
        number, unit, scale = Decimal(value["number"]), value.get("unit"), value.get("scale")
        numbers = _numbers(number, scale)
        forms = list(numbers)
        if unit:
            forms += [f for n in numbers[1:2] + numbers[4:] for f in _with_unit(n, unit)]
            forms += _converted(number, unit)
        return forms
    if kind == "date":
        return _date_forms(value["date"])
    if kind == "list":
        items = list(value["items"])
        reordered = items[::-1]
        if len(items) == 1:
            return [items[0].lower(), f"{items[0]}."]
        return ["; ".join(reordered), ", ".join(reordered[:-1]) + " and " + reordered[-1], "\n".join(reordered)]
    return [answer.lower(), f"{answer}.", f'"{answer}"', f"**{answer}**"]


def wrong_forms(row: dict[str, Any], others: list[str]) -> list[str]:
    """The same forms with a wrong value: one unit more at the gold's precision, the day before, an item missing."""
    kind, value = row["answer_type"], row["answer_value"] or {}
    if kind in ("number", "quantity"):
        number = Decimal(value["number"])
        step = Decimal(1).scaleb(value["precision"] if value.get("precision") is not None else 0)
        return right_forms({**row, "answer_value": {**value, "number": _plain(number + step)}})[:4]
    if kind == "date":
        parts = [int(p) for p in value["date"].split("-")]
        if len(parts) == 3:
            before = (date(*parts) - timedelta(days=1)).isoformat()
        elif len(parts) == 2:
            before = f"{parts[0] - (parts[1] == 1)}-{(parts[1] - 2) % 12 + 1:02d}"
        else:
            before = str(parts[0] - 1)
        return _date_forms(before)[:3]
    if kind == "list":
        items = list(value["items"])
        if len(items) > 1:
            return ["; ".join(items[1:]), "; ".join([*items, items[0]])]
        return [f"{items[0]}; {next(o for o in others if o != items[0])}"]
    return [o for o in others if o.casefold() != row["answer"].casefold()][:2]
