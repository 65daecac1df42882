"""URL rules every crawl source shares: the canonical form of a URL (timelyqa.urls, the one check) and the bounds on
spider traps."""

from __future__ import annotations

import re
from collections import Counter
from enum import StrEnum
from urllib.parse import parse_qsl, unquote, urlsplit

from timelyqa.urls import DROPPED_KEYS, DROPPED_PREFIXES, UrlError, canonical, is_crawlable, netloc, why_not

__all__ = ["DROPPED_KEYS", "DROPPED_PREFIXES", "TrapBounds", "TrapReason", "UrlError", "canonical", "is_crawlable",
           "netloc", "pattern", "why_not"]

# Hex runs with a digit (hashes, UUID heads, Mongo ids) vary per item like numbers do.
_HEX_ID = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_DATE = re.compile(r"(?<!\d)(?:19|20)\d\d[/-](?:0?[1-9]|1[0-2])(?!\d)")
_DATE_KEYS = frozenset({"date", "day", "week", "month", "year"})


def pattern(url: str) -> str:
    """Host, path with numbers and hex ids as placeholders, and sorted query keys: one per kind of page."""
    parts = urlsplit(url)
    path = _DIGITS.sub("{n}", _HEX_ID.sub("{id}", parts.path))
    keys = sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return f"{parts.hostname}{path}?{'&'.join(keys)}"


def _args(url: str) -> set[str]:
    query = urlsplit(url).query
    return set(query.split("&")) if query else set()


def _dated(url: str) -> bool:
    parts = urlsplit(url)
    keys = {k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    return bool(keys & _DATE_KEYS) or bool(_DATE.search(unquote(f"{parts.path}?{parts.query}")))


class TrapReason(StrEnum):
    CALENDAR_TRAP = "calendar_trap"
    """A chain of dated pages of one pattern, each linking to the next, longer than any real archive walk."""
    QUERY_GROWTH = "query_growth"
    """A query with too many arguments, or one that keeps adding arguments to its parent's."""
    PATTERN_BUDGET = "pattern_budget"
    """One URL pattern already had its budget of pages: more of the same teaches nothing new."""


class TrapBounds:
    """Bounds spider traps; call `check` once per URL the crawl would request.

    - calendar_trap: a dated URL (YYYY/MM, YYYY-MM[-DD] in path or query, or a date/day/week/month/
      year key) reached from a dated parent of the same `pattern` is one step further than that
      parent; a dated URL reached any other way is step 0. Past `max_calendar_steps` steps, bound.
    - query_growth: more than `max_query_args` arguments; or the same path as the parent, the
      parent's non-empty query a strict subset of this one's, and the parent itself grew that way
      (two growth steps in a row). Growing from an empty query (`/search` -> `?q=x`) is no step.
    - pattern_budget: `pattern_budget` URLs of one `pattern` already kept.
    """

    def __init__(self, max_query_args: int = 8, max_calendar_steps: int = 12, pattern_budget: int = 200):
        self.max_query_args = max_query_args
        self.max_calendar_steps = max_calendar_steps
        self.pattern_budget = pattern_budget
        self._kept: set[str] = set()
        self._steps: dict[str, int] = {}  # kept dated URL -> its calendar step
        self._grew: set[str] = set()  # kept URLs that added arguments to their parent's query
        self._per_pattern: Counter[str] = Counter()

    def check(self, url: str, parent: str | None) -> TrapReason | None:
        """None to keep `url` (and count it), else the reason it is bounded; raises ValueError if not http(s)."""
        url, parent = canonical(url), canonical(parent) if parent and is_crawlable(parent) else None
        if url in self._kept:  # asked twice: counting it again would spend the budget twice
            return None
        kind, args = pattern(url), _args(url)
        steps = None
        if _dated(url):
            same = parent is not None and _dated(parent) and pattern(parent) == kind
            steps = self._steps.get(parent, 0) + 1 if same else 0
            if steps > self.max_calendar_steps:
                return TrapReason.CALENDAR_TRAP
        parent_args = _args(parent) if parent else set()
        grew = bool(parent_args) and parent_args < args and _same_path(url, parent)
        if len(args) > self.max_query_args or (grew and parent in self._grew):
            return TrapReason.QUERY_GROWTH
        if self._per_pattern[kind] >= self.pattern_budget:
            return TrapReason.PATTERN_BUDGET
        self._kept.add(url)
        self._per_pattern[kind] += 1
        if steps is not None:
            self._steps[url] = steps
        if grew:
            self._grew.add(url)
        return None


def _same_path(url: str, other: str | None) -> bool:
    return other is not None and urlsplit(url)._replace(query="") == urlsplit(other)._replace(query="")
