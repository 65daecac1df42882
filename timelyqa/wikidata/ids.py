"""What a Wikidata id, property key and language tag may look like: strict patterns checked where a dump is read,
so that nothing else can reach an IRI, a language tag or a SPARQL query."""

from __future__ import annotations

import re

_NUMBER = r"[1-9][0-9]{0,17}"
"""An id's number: at most 18 digits, so it fits the unsigned 64-bit integer a snapshot buckets subjects by."""

_ENTITY = re.compile(rf"[QPL]{_NUMBER}", re.ASCII)
_VALUE_ENTITY = re.compile(rf"[QPL]{_NUMBER}(?:-[FS]{_NUMBER})?", re.ASCII)
_PROPERTY = re.compile(rf"P{_NUMBER}", re.ASCII)

# RFC 5646's well-formed tag (language, extlangs, script, region, variants, extensions, private use), and its
# grandfathered tags: Oxigraph refuses a whole N-Triples file over one tag that is not well formed.
_ALNUM = "[a-z0-9]"
_LANGTAG = (rf"(?:[a-z]{{2,3}}(?:-[a-z]{{3}}){{0,3}}|[a-z]{{4,8}})"  # language (2-3 letters + extlangs, or 4-8)
            rf"(?:-[a-z]{{4}})?"  # script
            rf"(?:-(?:[a-z]{{2}}|[0-9]{{3}}))?"  # region
            rf"(?:-(?:{_ALNUM}{{5,8}}|[0-9]{_ALNUM}{{3}}))*"  # variants
            rf"(?:-[0-9a-wy-z](?:-{_ALNUM}{{2,8}})+)*"  # extensions
            rf"(?:-x(?:-{_ALNUM}{{1,8}})+)?")  # private use
_PRIVATE = rf"x(?:-{_ALNUM}{{1,8}})+"
_GRANDFATHERED = ("en-gb-oed|i-ami|i-bnn|i-default|i-enochian|i-hak|i-klingon|i-lux|i-mingo|i-navajo|i-pwn|i-tao|"
                  "i-tay|i-tsu|sgn-be-fr|sgn-be-nl|sgn-ch-de|art-lojban|cel-gaulish|no-bok|no-nyn|zh-guoyu|zh-hakka|"
                  "zh-min|zh-min-nan|zh-xiang")
_LANGUAGE = re.compile(f"(?:{_LANGTAG}|{_PRIVATE}|{_GRANDFATHERED})", re.ASCII | re.IGNORECASE)
MAX_LANGUAGE_CHARS = 64
"""No real tag comes near it (Wikidata's longest are about 20); it keeps the pattern's work per tag small."""


def is_entity_id(value: object) -> bool:
    """A top-level entity of a dump: an item, property or lexeme id (`Q42`, `P31`, `L7`)."""
    return isinstance(value, str) and _ENTITY.fullmatch(value) is not None


def is_value_id(value: object) -> bool:
    """An entity a statement may point at: an entity id, or a lexeme's form or sense (`L7-F1`, `L7-S2`)."""
    return isinstance(value, str) and _VALUE_ENTITY.fullmatch(value) is not None


def is_property_id(value: object) -> bool:
    """A claims key: a property id (`P31`)."""
    return isinstance(value, str) and _PROPERTY.fullmatch(value) is not None


def is_language(value: object) -> bool:
    """A well-formed BCP 47 language tag (`en`, `de-formal`, `sr-Latn-RS`, `zh-min-nan`, `mis-x-q1`)."""
    return (isinstance(value, str) and len(value) <= MAX_LANGUAGE_CHARS
            and _LANGUAGE.fullmatch(value) is not None)
