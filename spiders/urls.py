"""URL rules every crawl source shares: the canonical form of a URL and the bounds on spider traps."""

from __future__ import annotations

import functools
import re
from collections import Counter
from enum import StrEnum
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

# Query keys that never change the page, compared case-insensitively.
DROPPED_KEYS = frozenset({
    # Session ids name the visitor, not the page: every session would re-crawl the whole site.
    "jsessionid", "phpsessid", "sid", "sessionid", "session_id",
    # Click and campaign ids say how the visitor arrived; the page is the same for every ad.
    "gclid", "fbclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "ref_src",
})
# Analytics campaigns add any utm_* key they like (utm_source, utm_medium, utm_content ...).
DROPPED_PREFIXES = ("utm_",)

_DEFAULT_PORTS = {"http": ":80", "https": ":443"}
# Java servers put the session id in the path as a parameter when cookies are off.
_JSESSIONID_PARAM = re.compile(r";jsessionid=[^/?#;]*", re.IGNORECASE)
# Hex runs with a digit (hashes, UUID heads, Mongo ids) vary per item like numbers do.
_HEX_ID = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,}(?:-[0-9a-f]{4,})*\b", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_DATE = re.compile(r"(?<!\d)(?:19|20)\d\d[/-](?:0?[1-9]|1[0-2])(?!\d)")
_DATE_KEYS = frozenset({"date", "day", "week", "month", "year"})


# `is_crawlable` and `canonical` are cached: a site's menus repeat the same links on every page, and with a hundred
# links a page, splitting and canonicalising them again took 1.7 ms a page (0.07 ms cached), a quarter of the crawl
# process's own time.


def netloc(url: str) -> str:
    """host:port with the scheme's default port made explicit: `http://a.org/` and `http://a.org:80/` are one site."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{(parts.hostname or '').lower()}:{port}"


@functools.lru_cache(maxsize=1 << 16)
def is_crawlable(url: str) -> bool:
    """True for an http(s) URL with a host: mailto:, javascript:, tel: and data: have no page to fetch."""
    try:
        parts = urlsplit(url.strip())
        return parts.scheme in _DEFAULT_PORTS and bool(parts.hostname)
    except ValueError:  # a malformed host such as "http://[::1"
        return False


def _dropped(pair: str) -> bool:
    key = unquote_plus(pair.partition("=")[0]).lower()
    return key in DROPPED_KEYS or key.startswith(DROPPED_PREFIXES)


@functools.lru_cache(maxsize=1 << 16)
def canonical(url: str) -> str:
    """The URL a page is known by: the same page reached by two spellings gets one identity."""
    if not is_crawlable(url):
        raise ValueError(f"not an http(s) URL with a host, cannot canonicalise: {url!r}")
    scheme, netloc, path, query, _ = urlsplit(url.strip())
    query = "&".join(p for p in query.split("&") if p and not _dropped(p))
    # w3lib lower-cases the host, sorts the query, normalises percent-encoding and drops the fragment.
    url = canonicalize_url(urlunsplit((scheme, netloc, _JSESSIONID_PARAM.sub("", path), query, "")))
    scheme, netloc, path, query, _ = urlsplit(url)
    netloc = netloc.removesuffix(_DEFAULT_PORTS[scheme])
    # Sorted pairs sit side by side, so dict.fromkeys drops repeats and keeps the order.
    query = "&".join(dict.fromkeys(query.split("&"))) if query else ""
    return urlunsplit((scheme, netloc, path, query, ""))


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
