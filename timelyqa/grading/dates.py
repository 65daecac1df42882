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
