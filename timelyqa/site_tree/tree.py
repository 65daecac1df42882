"""A crawl's pages as a tree: click chains, the site's name, page subjects, difficulty by depth, located facts."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import polars as pl

SINGLE_DEPTHS = {2: "easy", 3: "medium", 4: "hard"}
"""WebWalkerQA's single-source_i: the depth of the page the answer is on."""
MULTI_SUMS = {2: "easy", 3: "easy", 4: "easy", 5: "medium", 6: "medium", 7: "hard", 8: "hard"}
"""WebWalkerQA's multi-source_i, i the sum of the two pages' depths, in bands 2-4, 4-6 and 6-8. The paper's bands
share their ends; a shared end goes to the lower band, so that 4 (two pages at depth 2, each an easy single) is
easy and 6 (two at depth 3, each a medium single) is medium."""
MULTI_DEPTHS = range(1, 5)
"""Each page of a multi-source question is a subpage (depth 1 to 4): the sum then runs from 2 to 8."""
DIFFICULTIES = ("easy", "medium", "hard")
_SEPARATOR = re.compile(r"\s+(?:\||–|—|-|·|::)\s+")


def multi_difficulty(first: int, second: int) -> str | None:
    if first not in MULTI_DEPTHS or second not in MULTI_DEPTHS:
        return None
    return MULTI_SUMS.get(first + second)


def parents(pages: pl.DataFrame) -> dict[str, str | None]:
    return dict(zip(pages.get_column("url").to_list(), pages.get_column("parent").to_list(), strict=True))


def chain(parent_of: dict[str, str | None], url: str) -> list[str]:
    """The click chain root..url, following `parent` up (a loop in bad input ends the walk, never hangs it)."""
    path = [url]
    seen = {url}
    while (up := parent_of.get(path[-1])) is not None and up not in seen:
        path.append(up)
        seen.add(up)
    return path[::-1]


def golden_path(pages: pl.DataFrame, url: str) -> list[str]:
    """The click chain from the crawl's root to `url`: the pages an agent opens, in order, to reach it."""
    return chain(parents(pages), url)


def site_name(titles: Iterable[str | None], root_url: str) -> str:
    """The part most of the site's page titles share at one end ("Registration | WebQA 2026" -> "WebQA 2026"),
    else the root's host."""
    ends: Counter[str] = Counter()
    for title in titles:
        parts = _SEPARATOR.split(title or "")
        if len(parts) > 1:
            ends[parts[-1].strip()] += 2  # a suffix is the usual place: it wins a tie
            ends[parts[0].strip()] += 1
    if ends:
        name, weight = min(ends.items(), key=lambda kv: (-kv[1], kv[0]))
        if weight >= 2:
            return name
    return urlsplit(root_url).hostname or root_url


def subject(title: str | None, site: str) -> str:
    """The page's title without the site's name at either end ("Registration | WebQA 2026" -> "Registration")."""
    text = " ".join((title or "").split())
    for pattern in (rf"{_SEPARATOR.pattern}{re.escape(site)}$", rf"^{re.escape(site)}{_SEPARATOR.pattern}"):
        if (stripped := re.sub(pattern, "", text)) != text:
            return stripped.strip() or site
    return text or site


@dataclass(frozen=True, slots=True)
class Located:
    """A fact where it was found: the page, its depth, and the noun phrase a question asks it by."""

    root: str
    url: str
    depth: int
    label: str
    value: str
    kind: str
    subject: str
    phrase: str = ""
    context: str = ""  # the fact's table, list or heading (`facts.Fact.context`)

    def item(self) -> dict[str, object]:
        return {"root_url": self.root, "url": self.url, "depth": self.depth, "label": self.label,
                "value": self.value, "kind": self.kind}


def seeded_key(seed: int, *parts: str) -> bytes:
    """A stable order for seeded choices (blake2b, never Python's `hash()`): the same seed gives the same order."""
    return hashlib.blake2b("\x1f".join((str(seed), *parts)).encode(), digest_size=8).digest()


def norm(text: str) -> str:
    return " ".join(text.casefold().split())
