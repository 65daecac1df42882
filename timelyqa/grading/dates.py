"""Dates as written in common English or ISO forms, read by value at the precision they give."""

import re
import time
import unicodedata
from datetime import date, datetime

from .text import WRAPPING

_DAY_FORMS = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")
_MONTH_FORMS = ("%B %Y", "%b %Y")


def _weekday(word: str) -> int | None:
    for form in ("%A", "%a"):
        try:
            return time.strptime(word, form).tm_wday
        except ValueError:
            continue
    return None


def parse_date(text: str) -> tuple[int, ...] | None:
    """(year,), (year, month) or (year, month, day) of a date in a common English or ISO form; else None."""
    text = unicodedata.normalize("NFKC", text).strip(WRAPPING).rstrip(".")
    text = re.sub(r"(?i)^(?:on|in)\s+", "", text)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?", text):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00")) if len(text) > 10 else \
                date.fromisoformat(text)
        except ValueError:
            return None
        return moment.year, moment.month, moment.day
    if re.fullmatch(r"\d{4}-\d{1,2}", text):
        year, month = map(int, text.split("-"))
        return (year, month) if 1 <= month <= 12 else None
    if re.fullmatch(r"\d{4}", text):
        return (int(text),)
    if (numeric := _numeric(text)) is not None:
        return numeric or None
    words = re.sub(r"(?i)(\d)(?:st|nd|rd|th)\b", r"\1", text)
    words = re.sub(r"(?i)\bsept\b", "Sep", words)  # strptime's %b knows "Sep" only
    words = re.sub(r"(?i)\b(?:the|of)\b|,|(?<=[A-Za-z])\.", " ", words).split()
    if not words:
        return None
    weekday = _weekday(words[0])
    if weekday is not None:
        words = words[1:]
    joined = " ".join(words)
    for forms, fields in ((_DAY_FORMS, 3), (_MONTH_FORMS, 2)):
        for form in forms:
            try:
                parsed = datetime.strptime(joined, form)
            except ValueError:
                continue
            if weekday is not None and (fields < 3 or parsed.weekday() != weekday):
                return None  # "Friday 5 November 2026" when the 5th is a Thursday
            return (parsed.year, parsed.month, parsed.day)[:fields]
    return None


def _numeric(text: str) -> tuple[int, int, int] | tuple[()] | None:
    """A date in digits: 2026/07/19 (year first), 19.07.2026 (dots: day first, as everywhere they are used), or
    19/07/2026 and 07/19/2026 (slashes or dashes: day or month first, read only where one number cannot be a month,
    or where both are the same). () for digits that are no date or could be two; None for text of another form."""
    if match := re.fullmatch(r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})", text):
        year, month, day = map(int, match.groups())
    elif match := re.fullmatch(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})", text):
        first, sep, second, year = int(match[1]), match[2], int(match[3]), int(match[4])
        if sep == "." or (first > 12 >= second) or first == second:
            day, month = first, second
        elif second > 12 >= first:
            month, day = first, second
        else:
            return ()  # 05/11/2026: the fifth of November, or the eleventh of May
    else:
        return None
    try:
        moment = date(year, month, day)
    except ValueError:
        return ()
    return moment.year, moment.month, moment.day


def iso_fields(iso: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in iso.split("-")) or None
    except ValueError:
        return None


def is_month(word: str) -> bool:
    for form in ("%B", "%b"):
        try:
            time.strptime(word.rstrip("."), form)
            return True
        except ValueError:
            continue
    return False
