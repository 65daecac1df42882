"""The Wikidata source's own gate rules, run after the common ones (timelyqa.quality) on every candidate.

A Wikidata row carries the query its question was written from (`query_triples`), so two things a reader would send
back can be seen in the query rather than guessed from the words: an id shown for want of a label, and one item
named twice although its label is lower case ("works as association football manager ... a person that works as
association football manager"), which the common rule, reading capitals, cannot see.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from timelyqa.quality import COMMON, QualityReject, Rule
from timelyqa.reasons import Reason

RAW_ID = re.compile(r"\b[QPL][1-9][0-9]*\b")
ITEM = re.compile(r"Q[1-9][0-9]*")


class WikidataQualityReject(Reason):
    RAW_ID_IN_QUESTION = "raw_id_in_question", "the question shows a raw Wikidata id (Q.., P..) for want of a label"


def raw_id_in_question(row: Mapping[str, Any]) -> Reason | None:
    return WikidataQualityReject.RAW_ID_IN_QUESTION if RAW_ID.search(str(row["question"])) else None


def item_named_twice(row: Mapping[str, Any]) -> Reason | None:
    """One item the object of two of the query's triples: the question names it twice, whatever its label's case
    ("is in Brazil and is located at a city that is in Brazil")."""
    objects = Counter(o for _, _, o in row.get("query_triples") or () if ITEM.fullmatch(str(o)))
    return QualityReject.ENTITY_NAMED_TWICE if any(n > 1 for n in objects.values()) else None


RULES: tuple[Rule, ...] = (*COMMON, raw_id_in_question, item_named_twice)
"""What the Wikidata gate runs: the common rules, then its own."""
