"""Which two pages a multi-source question joins: seeded, bounded, and every difficulty served in turn.

A pair is two pages of one root, each at depth 1 to 4, their depths summing to 2..8 (the band gives the
difficulty, `tree.MULTI_SUMS`). Neither page may lie on the other's click chain: WebWalkerQA's multi-source
questions test width, reading two branches of a site, and a page with its own ancestor is found on one walk
down, which asks no more than the deeper page's single-source question does.

Each pair of pages gives at most one pair of facts, whose values differ (each page's seeded fact order is turned
by the pair's hash, so that a page's pairs do not all ask its first fact); no page pair fills the quota alone.
Pairs are ordered within each band by a seeded stable hash and taken from the bands in turn (easy, medium,
hard, easy, ...) until `limit`: a site that has all three bands gets all three. No page, and no value (the same
e-mail address on two pages), is in more than `most_per_page(limit)` of a site's pairs (a tenth of them, at least
one): a page that is alone in its band would otherwise be in every pair of the band (v4 asked one HOWTO's release
number in 7 of the Python documentation's 20 pairs). A pair over the cap is passed over, the next in its band taken.

The LLM writer (`candidates`) joins pages by the same rule with `page_pairs`: pages in place of their facts.

The work is quadratic in the pages with facts at depth 1 to 4, which a crawl's page limit bounds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, product
from typing import TypeVar

from timelyqa.site_tree.tree import DIFFICULTIES, Located, multi_difficulty, norm, seeded_key

T = TypeVar("T")
MAX_PAIR_SHARE = 0.1
"""The most of a site's pairs (its `limit`) one page or one value may be in."""


def most_per_page(limit: int) -> int:
    return max(1, round(MAX_PAIR_SHARE * limit))


@dataclass(frozen=True, slots=True)
class Pair:
    first: Located  # the shallower page's fact (then by url)
    second: Located
    difficulty: str


def choose_pairs(facts: Sequence[Located], paths: Mapping[str, Sequence[str]], *, seed: int, limit: int
                 ) -> tuple[list[Pair], int]:
    """Up to `limit` pairs from one root's `facts` (each page's facts in its seeded order), and how many page
    pairs could have been asked about."""
    by_page: dict[str, list[Located]] = {}
    for fact in facts:
        by_page.setdefault(fact.url, []).append(fact)
    bands: dict[str, list[tuple[bytes, Pair]]] = {d: [] for d in DIFFICULTIES}
    for u, v in combinations(sorted(by_page), 2):
        first, second = sorted((by_page[u], by_page[v]), key=lambda fs: (fs[0].depth, fs[0].url))
        band = multi_difficulty(first[0].depth, second[0].depth)
        if band is None or related(first[0].url, second[0].url, paths):
            continue
        key = seeded_key(seed, u, v)
        joined = next(((a, b) for a, b in product(_turned(first, key[0]), _turned(second, key[1]))
                       if norm(a.value) != norm(b.value)), None)
        if joined is not None:
            bands[band].append((key, Pair(*joined, band)))
    return in_turn(bands, limit, keys=_pair_keys, most=most_per_page(limit)), sum(map(len, bands.values()))


def _pair_keys(pair: Pair) -> list[Hashable]:
    """What a pair must not share with too many others: its two pages and its two values."""
    return [("url", pair.first.url), ("url", pair.second.url), ("value", norm(pair.first.value)),
            ("value", norm(pair.second.value))]


def page_pairs(depths: Mapping[str, int], paths: Mapping[str, Sequence[str]], *, seed: int, limit: int
               ) -> tuple[list[tuple[str, str, str]], int]:
    """Up to `limit` pairs (first url, second url, difficulty) of one root's pages (url: depth), by the rule above
    with each page in place of its facts, and how many page pairs could have been asked about."""
    bands: dict[str, list[tuple[bytes, tuple[str, str, str]]]] = {d: [] for d in DIFFICULTIES}
    for u, v in combinations(sorted(depths), 2):
        first, second = sorted((u, v), key=lambda url: (depths[url], url))
        band = multi_difficulty(depths[first], depths[second])
        if band is not None and not related(first, second, paths):
            bands[band].append((seeded_key(seed, u, v), (first, second, band)))
    return (in_turn(bands, limit, keys=lambda p: [p[0], p[1]], most=most_per_page(limit)),
            sum(map(len, bands.values())))


def related(first: str, second: str, paths: Mapping[str, Sequence[str]]) -> bool:
    """One page lies on the other's click chain: one walk down finds both."""
    return first in paths.get(second, ()) or second in paths.get(first, ())


def in_turn(bands: Mapping[str, list[tuple[bytes, T]]], limit: int, *,
            keys: Callable[[T], Iterable[Hashable]] | None = None, most: int = 0) -> list[T]:
    """Up to `limit` items, each band in its seeded order, the bands taken in turn (easy, medium, hard, easy, ...);
    with `keys`, an item one of whose keys `most` items taken already have is passed over, and its band's next
    item is offered in its place."""
    ordered = {band: sorted(items, key=lambda keyed: keyed[0]) for band, items in bands.items()}
    left = {band: iter(items) for band, items in ordered.items()}
    used: Counter[Hashable] = Counter()
    chosen: list[T] = []
    for _ in range(max(map(len, ordered.values()), default=0)):
        for band in DIFFICULTIES:
            if len(chosen) >= limit or band not in left:
                continue
            for _, item in left[band]:
                if keys is None or all(used[k] < most for k in set(keys(item))):
                    chosen.append(item)
                    used.update(set(keys(item)) if keys is not None else ())
                    break
    return chosen


def _turned(facts: list[Located], by: int) -> list[Located]:
    """The page's facts starting at a place the pair's hash picks, so a page's pairs do not all ask its first fact."""
    start = by % len(facts)
    return facts[start:] + facts[:start]
