"""Which delta triples may anchor a question: each rule keeps a triple or names the reason it drops it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from timelyqa.reasons import Reason
from timelyqa.wikidata.render import Unrenderable, render
from timelyqa.wikidata.values import Kind

if TYPE_CHECKING:
    from timelyqa.wikidata.graph import Graph

DENY_LIST: dict[str, str] = {
    "P18": "image", "P31": "instance of (often too basic)", "P279": "subclass of", "P373": "Commons category",
    "P443": "pronunciation audio", "P460": "said to be the same as", "P856": "official website",
    "P910": "topic's main category", "P973": "described at URL", "P1151": "topic's main Wikimedia portal",
    "P1343": "described by source", "P1424": "topic's main template", "P1559": "name in native language",
    "P1629": "Wikidata property", "P1630": "formatter URL", "P1659": "related property",
    "P1687": "Wikidata property", "P1696": "inverse property", "P1705": "native label",
    "P1793": "regular expression", "P1855": "Wikidata property example", "P1889": "different from",
    "P1921": "URI template", "P2302": "property constraint", "P2700": "protocol",
    "P2875": "property for this type", "P2916": "source website for the property",
    "P2959": "permanent duplicated item", "P3254": "property usage tracking category", "P3709": "unit symbol",
    "P3713": "pronunciation audio",
}
"""LiveSearchBench's Table 3 as printed (its descriptions, some of which Wikidata words otherwise)."""

UNASKABLE_DATATYPES = frozenset({"external-id", "commonsMedia", "url", "globe-coordinate", "geo-shape",
                                 "tabular-data", "musical-notation", "math", "wikibase-form", "wikibase-sense"})
"""Property datatypes whose values are identifiers, files or shapes, not answers a person would give."""


class Drop(Reason):
    DENY_LISTED_PROPERTY = "deny_listed_property", "the property is on LiveSearchBench's deny-list (Table 3)"
    UNASKABLE_DATATYPE = "unaskable_datatype", "the property's values are identifiers, files, URLs or shapes"
    PROPERTY_WITHOUT_LABEL = "property_without_english_label", "the property has no English label"
    SUBJECT_WITHOUT_LABEL = "subject_without_english_label", "the changed entity has no English label"
    OBJECT_WITHOUT_LABEL = "object_without_english_label", "the new value is an entity without an English label"
    UNIT_WITHOUT_LABEL = "unit_without_english_label", "the new quantity's unit has no English label"
    COORDINATE_VALUE = "coordinate_value", "the new value is a coordinate, which no one answers in words"
    TIME_TOO_COARSE = "time_too_coarse", "the new value is a time coarser than a decade"


def property_drop(prop: str, datatypes: dict[str, str | None], labels: dict[str, str]) -> Drop | None:
    """A property that can take part in a question (as anchor, constraint or hop), or why not."""
    if prop in DENY_LIST:
        return Drop.DENY_LISTED_PROPERTY
    if datatypes.get(prop) in UNASKABLE_DATATYPES:
        return Drop.UNASKABLE_DATATYPE
    if prop not in labels:
        return Drop.PROPERTY_WITHOUT_LABEL
    return None


def anchor_drop(s: str, p: str, o: str, kind: Kind, graph: Graph) -> tuple[Drop, str] | None:
    """(reason, detail) when the delta triple (s, p, o) cannot anchor a question, else None (keep)."""
    dropped = property_drop(p, graph.datatypes, graph.labels)
    if dropped is not None:
        return dropped, f"({s}, {p}, {o}): property {p} ({graph.labels.get(p, 'no English label')}) is {dropped}"
    if s not in graph.labels:
        return Drop.SUBJECT_WITHOUT_LABEL, f"({s}, {p}, {o}): {s} has no English label"
    try:
        render(kind, o, graph.labels)
    except Unrenderable as exc:
        return Drop(exc.reason), f"({s}, {p}, {o}): {exc}"  # a reason render names must be one of Drop's
    return None
