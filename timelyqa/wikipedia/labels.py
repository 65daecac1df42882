"""A question's labels: how often its answer changes, its domain by rule, and the per-domain cap (DailyQA's seven)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TypeVar

from timelyqa.reasons import Reason
from timelyqa.wikipedia.changes import State, value_at

T = TypeVar("T")
HORIZON = timedelta(days=7)
"""DailyQA watches answers for a week after the question week (days 8 to 14 of its three weeks)."""
RULE = "wikipedia_domain_rule_v1"
"""How `domain` labels a question by default: the infobox template's name, else the page's categories."""
DOMAIN_CAP = 750
"""DailyQA's most questions per domain in one update."""


class LabelReject(Reason):
    DOMAIN_CAP = "domain_cap", "the domain already has as many questions as the cap allows (sampled by a seeded hash)"


class Frequency(StrEnum):
    FREQUENT = "frequent_update"
    INFREQUENT = "infrequent_update"


class Domain(StrEnum):
    SCIENCE_AND_TECHNOLOGY = "science_and_technology"
    CULTURE_AND_ARTS = "culture_and_arts"
    GEOGRAPHY_AND_ENVIRONMENT = "geography_and_environment"
    POLITICS_AND_LAW = "politics_and_law"
    BUSINESS_AND_ECONOMICS = "business_and_economics"
    SPORTS_AND_ENTERTAINMENT = "sports_and_entertainment"
    OTHERS = "others"


# Words in an infobox's name or a category, by domain; the first domain in this order wins a tie.
KEYWORDS: dict[Domain, tuple[str, ...]] = {
    Domain.SPORTS_AND_ENTERTAINMENT: (
        "football", "footballer", "soccer", "sport", "sportsperson", "basketball", "baseball", "cricket",
        "cricketer", "rugby", "tennis", "golf", "golfer", "hockey", "ice hockey", "athlete", "athletics", "olympic",
        "olympics", "racing", "motorsport", "racing driver", "formula one", "boxing", "boxer", "wrestling",
        "wrestler", "martial artist", "mixed martial arts", "cycling", "cyclist", "swimmer", "swimming", "skier",
        "figure skater", "chess", "esports", "game show", "television", "television series", "tv", "reality",
        "video game", "league", "club", "team", "season", "tournament", "championship", "cup", "stadium",
        "racehorse", "comedian", "entertainer", "youtuber", "volleyball", "handball", "darts", "snooker",
        "nfl", "nba", "nhl", "mlb", "gridiron football", "american football", "sports",
    ),
    Domain.POLITICS_AND_LAW: (
        "officeholder", "politician", "election", "political party", "politics", "legislature", "parliament",
        "government", "minister", "president", "prime minister", "court", "court case", "law", "legislation",
        "treaty", "military", "military conflict", "military unit", "war", "battle", "army", "police", "criminal",
        "crime", "prison", "judge", "constituency", "referendum", "diplomat", "embassy", "royalty", "monarch",
        "protest", "civil conflict", "terrorist", "terrorism", "government agency", "legislative", "senator",
    ),
    Domain.BUSINESS_AND_ECONOMICS: (
        "company", "business", "businessperson", "economy", "economic", "bank", "airline", "brand", "automobile",
        "vehicle", "product", "retail", "retailer", "restaurant", "stock exchange", "currency", "market",
        "corporation", "industry", "trade", "shopping mall", "hotel", "airport", "ship", "aircraft",
        "aircraft type", "billionaire", "executive", "organization", "organisation", "commercial vehicle",
    ),
    Domain.SCIENCE_AND_TECHNOLOGY: (
        "software", "programming language", "computer", "technology", "website", "spaceflight", "spacecraft",
        "satellite", "rocket", "planet", "star", "galaxy", "comet", "asteroid", "minor planet", "chemical",
        "chembox", "drugbox", "drug", "disease", "medical condition", "virus", "pandemic", "epidemic", "outbreak",
        "gene", "protein", "species", "taxobox", "speciesbox", "automatic taxobox", "scientist", "mathematician",
        "physicist", "chemist", "engineer", "university", "research", "science", "mobile phone", "smartphone",
        "operating system", "telescope", "robot", "artificial intelligence", "element", "mineral",
    ),
    Domain.GEOGRAPHY_AND_ENVIRONMENT: (
        "settlement", "country", "city", "town", "village", "river", "lake", "mountain", "island", "volcano",
        "protected area", "park", "region", "province", "state", "u.s. state", "county", "district",
        "municipality", "geography", "climate", "weather", "hurricane", "tropical cyclone", "storm", "earthquake",
        "flood", "wildfire", "glacier", "forest", "ocean", "sea", "bay", "desert", "landform", "environment",
        "place", "neighbourhood", "neighborhood", "cave", "waterfall", "dam", "populated place",
    ),
    Domain.CULTURE_AND_ARTS: (
        "film", "movie", "album", "song", "single", "musical artist", "music", "musician", "band", "book", "novel",
        "author", "writer", "poet", "artist", "artwork", "painting", "museum", "theatre", "theater", "opera",
        "play", "comics", "anime", "manga", "language", "religion", "religious", "church", "temple", "festival",
        "award", "dance", "literature", "magazine", "newspaper", "publication", "character", "fictional character",
        "architecture", "historic site", "monument", "actor", "actress", "singer", "composer",
    ),
}
_PATTERNS = {d: re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
                           + r")(?:s|es)?\b") for d, words in KEYWORDS.items()}


def update_frequency(states: Sequence[State], key: str, *, end: datetime, horizon: timedelta = HORIZON) -> Frequency:
    """`frequent_update` when the answer moves at all in (end, end + horizon], as DailyQA's day 8 onwards."""
    at_end = value_at(states, key, end)
    later = (s for s in states if end < s.timestamp <= end + horizon)
    return Frequency.FREQUENT if any(s.fields.get(key) != at_end for s in later) else Frequency.INFREQUENT


def domain(template: str, categories: Sequence[str]) -> Domain:
    """The infobox's name decides when it names a domain; otherwise the categories vote; otherwise `others`."""
    name = re.sub(r"\binfobox\b", " ", template.lower()).strip()
    for d, pattern in _PATTERNS.items():
        if name and pattern.search(name):
            return d
    votes = Counter(d for category in categories for d, p in _PATTERNS.items() if p.search(category.lower()))
    if not votes:
        return Domain.OTHERS
    order = list(_PATTERNS)
    return max(votes, key=lambda d: (votes[d], -order.index(d)))


def cap_per_domain(items: Sequence[T], *, domain_of: Callable[[T], str], key: Callable[[T], str], cap: int,
                   seed: int) -> tuple[list[T], list[T]]:
    """At most `cap` items per domain, sampled without replacement by a seeded hash of each item's key.

    The sample depends on the seed and the keys only, never on the order items arrive in.
    """
    groups: dict[str, list[T]] = defaultdict(list)
    for item in items:
        groups[domain_of(item)].append(item)
    kept: list[T] = []
    dropped: list[T] = []
    for members in groups.values():
        ranked = sorted(members, key=lambda i: hashlib.blake2b(f"{seed}\x1f{key(i)}".encode(), digest_size=8).digest())
        kept += ranked[:cap]
        dropped += ranked[cap:]
    return sorted(kept, key=key), sorted(dropped, key=key)
