"""Wikidata datavalues in one canonical lexical form, and the RDF term Wikidata's own export gives them."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from timelyqa.reasons import Reason

JULIAN = "http://www.wikidata.org/entity/Q1985786"
ENTITY_IRI = "http://www.wikidata.org/entity/"
XSD = "http://www.w3.org/2001/XMLSchema#"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"


class Kind(StrEnum):
    ENTITY = "entity"
    TIME = "time"
    QUANTITY = "quantity"
    STRING = "string"
    MONOLINGUAL = "monolingualtext"
    COORDINATE = "globecoordinate"


class ValueReject(Reason):
    MALFORMED_DATAVALUE = "malformed_datavalue", "a statement's value is not of the shape its type says"
    UNKNOWN_DATAVALUE_TYPE = "unknown_datavalue_type", "a statement's value has a type this reader does not know"


class UnknownDatavalue(ValueError):
    """A datavalue type or shape this reader does not know; the statement is kept aside, not guessed at."""

    def __init__(self, message: str, reason: ValueReject = ValueReject.MALFORMED_DATAVALUE) -> None:
        super().__init__(message)
        self.reason = reason


_ENTITY_ID = re.compile(r"[QPL][1-9][0-9]*(-[FS][1-9][0-9]*)?")
_TIME = re.compile(r"([+-])(\d{1,16})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")
# canonical() runs for every statement of a dump: on Python 3.11 `Kind.ENTITY` costs a metaclass
# attribute lookup and `_ENTITY_ID.fullmatch` a method lookup on each call, so both are bound once here.
_ENTITY, _STRING, _TIME_KIND, _QUANTITY, _MONOLINGUAL, _COORDINATE = (
    Kind.ENTITY, Kind.STRING, Kind.TIME, Kind.QUANTITY, Kind.MONOLINGUAL, Kind.COORDINATE)
_is_entity_id, _is_time = _ENTITY_ID.fullmatch, _TIME.fullmatch


def canonical(datavalue: dict[str, Any]) -> tuple[Kind, str]:
    """(kind, canonical form) of a snak's datavalue; raises UnknownDatavalue for anything else.

    Items stay bare ids (`Q42`); times keep their precision (`+2024-05-01T00:00:00Z/11`, `/julian` when
    not Gregorian); quantities keep their unit (`+12.5 Q11573`, no unit for the dimensionless `1`);
    monolingual text keeps its language (`text@en`); coordinates are `lat,lon`.
    """
    vtype, value = datavalue.get("type"), datavalue.get("value")
    try:
        if vtype == "wikibase-entityid":
            eid = value.get("id") or _id_from_numeric(value)
            if not _is_entity_id(eid):
                raise UnknownDatavalue(f"entity id {eid!r}")
            return _ENTITY, eid
        if vtype == "string":
            if not isinstance(value, str):
                raise UnknownDatavalue("string value is not a string")
            return _STRING, value
        if vtype == "time":
            if not _is_time(value["time"]):
                raise UnknownDatavalue(f"time {value['time']!r}")
            form = f"{value['time']}/{int(value['precision'])}"
            return _TIME_KIND, form + ("/julian" if value.get("calendarmodel") == JULIAN else "")
        if vtype == "quantity":
            amount = str(value["amount"])
            float(amount)
            unit = value.get("unit", "1")
            return _QUANTITY, amount if unit == "1" else f"{amount} {unit.removeprefix(ENTITY_IRI)}"
        if vtype == "monolingualtext":
            return _MONOLINGUAL, f"{value['text']}@{value['language']}"
        if vtype == "globecoordinate":
            return _COORDINATE, f"{float(value['latitude'])!r},{float(value['longitude'])!r}"
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        if isinstance(exc, UnknownDatavalue):
            raise
        raise UnknownDatavalue(f"malformed {vtype} value: {exc!r}") from exc
    raise UnknownDatavalue(f"unknown datavalue type {vtype!r}", ValueReject.UNKNOWN_DATAVALUE_TYPE)


def _id_from_numeric(value: dict[str, Any]) -> str:
    prefix = {"item": "Q", "property": "P", "lexeme": "L"}[value["entity-type"]]
    return f"{prefix}{int(value['numeric-id'])}"


def kind_of(form: str) -> Kind:
    """The kind of a canonical form when it is not carried alongside (ids and times are unambiguous)."""
    if _ENTITY_ID.fullmatch(form):
        return Kind.ENTITY
    if _TIME.fullmatch(form.split("/")[0]) and "/" in form:
        return Kind.TIME
    return Kind.STRING


def split_time(form: str) -> tuple[int, int, int, int]:
    """(year, month, day, precision) of a canonical time."""
    stamp, precision = form.split("/")[:2]
    m = _TIME.fullmatch(stamp)
    if m is None:
        raise ValueError(f"not a canonical time: {form!r}")
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    return year, int(m.group(3)), int(m.group(4)), int(precision)


def split_quantity(form: str) -> tuple[str, str | None]:
    """(amount, unit id or None) of a canonical quantity."""
    amount, _, unit = form.partition(" ")
    return amount, unit or None


def rdf_lexical(kind: Kind, form: str) -> tuple[str, str | None, str | None]:
    """(lexical form, datatype IRI, language) of the value as Wikidata's RDF writes it on wdt:/ps:."""
    if kind is Kind.ENTITY:
        return ENTITY_IRI + form, None, None
    if kind is Kind.TIME:
        year, month, day, _ = split_time(form)
        hms = form.split("T")[1][:8]
        sign = "-" if year < 0 else ""
        return f"{sign}{abs(year):04d}-{max(month, 1):02d}-{max(day, 1):02d}T{hms}Z", XSD + "dateTime", None
    if kind is Kind.QUANTITY:
        return split_quantity(form)[0].removeprefix("+"), XSD + "decimal", None
    if kind is Kind.MONOLINGUAL:
        text, _, lang = form.rpartition("@")
        return text, None, lang
    if kind is Kind.COORDINATE:
        lat, lon = form.split(",")
        return f"Point({lon} {lat})", GEO_WKT, None
    return form, None, None


def nt_escape(text: str) -> str:
    """A string body for N-Triples and SPARQL literals."""
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t"))


def rdf_term(kind: Kind, form: str) -> str:
    """The value as an N-Triples/SPARQL term: `<iri>`, `"lex"^^<dt>` or `"lex"@lang`."""
    lexical, datatype, lang = rdf_lexical(kind, form)
    if kind is Kind.ENTITY:
        return f"<{lexical}>"
    body = f'"{nt_escape(lexical)}"'
    if lang:
        return f"{body}@{lang}"
    return f"{body}^^<{datatype}>" if datatype else body
