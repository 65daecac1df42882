"""Wikidata datavalues in one canonical lexical form, and the RDF term Wikidata's own export gives them."""

from __future__ import annotations

import calendar
import math
import re
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from timelyqa.reasons import Reason
from timelyqa.wikidata.ids import is_language

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


_ENTITY_ID = re.compile(r"[QPL][1-9][0-9]{0,17}(-[FS][1-9][0-9]{0,17})?", re.ASCII)
_TIME = re.compile(r"([+-])([0-9]{1,16})-([0-9][0-9])-([0-9][0-9])T([0-9][0-9]):([0-9][0-9]):([0-9][0-9])Z", re.ASCII)
_AMOUNT = re.compile(r"[+-]?(?:[0-9]{1,100}(?:\.[0-9]{0,100})?|\.[0-9]{1,100})", re.ASCII)
"""A quantity's amount: an xsd:decimal (`+1.80`, `+2.`), as Wikidata's RDF writes it; no exponent, no NaN, no
infinity, no spaces, and a hundred digits a side at most."""
MAX_PRECISION = 14
"""Wikidata's finest time precision (seconds); 0 is a billion years."""
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# canonical() runs for every statement of a dump: on Python 3.11 `Kind.ENTITY` costs a metaclass
# attribute lookup and `_ENTITY_ID.fullmatch` a method lookup on each call, so both are bound once here.
_ENTITY, _STRING, _TIME_KIND, _QUANTITY, _MONOLINGUAL, _COORDINATE = (
    Kind.ENTITY, Kind.STRING, Kind.TIME, Kind.QUANTITY, Kind.MONOLINGUAL, Kind.COORDINATE)
_is_entity_id, _is_time = _ENTITY_ID.fullmatch, _TIME.fullmatch


def canonical(datavalue: dict[str, Any]) -> tuple[Kind, str]:
    """(kind, canonical form) of a snak's datavalue; raises UnknownDatavalue for anything else.

    Items stay bare ids (`Q42`); times keep their precision (`+2024-05-01T00:00:00Z/11`, `/julian` when
    not Gregorian); quantities keep their unit (`+12.5 Q11573`, no unit for the dimensionless `1`);
    monolingual text keeps its language (`text@en`); coordinates are `lat,lon`. Every part that reaches an
    IRI, a language tag or a date is checked here, so a value that passes can be written as RDF and rendered.
    """
    vtype, value = datavalue.get("type"), datavalue.get("value")
    try:
        if vtype == "wikibase-entityid":
            eid = value.get("id") or _id_from_numeric(value)
            if not isinstance(eid, str) or not _is_entity_id(eid):
                raise UnknownDatavalue(f"entity id {_short(eid)}")
            return _ENTITY, eid
        if vtype == "string":
            if not isinstance(value, str):
                raise UnknownDatavalue("string value is not a string")
            return _STRING, value
        if vtype == "time":
            return _TIME_KIND, _time(value)
        if vtype == "quantity":
            return _QUANTITY, _quantity(value)
        if vtype == "monolingualtext":
            text, language = value["text"], value["language"]
            if not isinstance(text, str) or not is_language(language):
                raise UnknownDatavalue(f"monolingual text with language {_short(language)}")
            return _MONOLINGUAL, f"{text}@{language}"
        if vtype == "globecoordinate":
            lat, lon = _number(value["latitude"]), _number(value["longitude"])
            if not (-90 <= lat <= 90 and -360 <= lon <= 360):
                raise UnknownDatavalue(f"coordinates {lat!r},{lon!r} off the globe")
            return _COORDINATE, f"{lat!r},{lon!r}"
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        if isinstance(exc, UnknownDatavalue):
            raise
        raise UnknownDatavalue(f"malformed {_short(vtype)} value: {_short(exc)}") from exc
    raise UnknownDatavalue(f"unknown datavalue type {_short(vtype)}", ValueReject.UNKNOWN_DATAVALUE_TYPE)


def _time(value: dict[str, Any]) -> str:
    """A time's canonical form, once its date is one a calendar has (month 13, day 32 or hour 25 are not)."""
    stamp, precision = value["time"], value["precision"]
    m = _is_time(stamp) if isinstance(stamp, str) else None
    if m is None:
        raise UnknownDatavalue(f"time {_short(stamp)}")
    if type(precision) is not int or not 0 <= precision <= MAX_PRECISION:
        raise UnknownDatavalue(f"time {stamp} with precision {_short(precision)}")
    month, day, hour, minute, second = (int(g) for g in m.groups()[2:])
    if month > 12 or day > _DAYS[month - 1 if month else 0] or hour > 23 or minute > 59 or second > 59:
        raise UnknownDatavalue(f"time {stamp} is no date a calendar has")
    if day and not month:
        raise UnknownDatavalue(f"time {stamp} has a day but no month")
    julian = value.get("calendarmodel") == JULIAN
    year = int(m.group(2))
    if month == 2 and day == 29 and m.group(1) == "+" and not (year % 4 == 0 if julian else calendar.isleap(year)):
        raise UnknownDatavalue(f"time {stamp} is no date a calendar has")
    return f"{stamp}/{precision}" + ("/julian" if julian else "")


def _quantity(value: dict[str, Any]) -> str:
    amount, unit = value["amount"], value.get("unit", "1")
    if isinstance(amount, int | float) and not isinstance(amount, bool):
        amount = str(amount)
    if not isinstance(amount, str) or not _AMOUNT.fullmatch(amount):
        raise UnknownDatavalue(f"quantity amount {_short(amount)} is not a decimal number")
    if unit == "1":
        return amount
    unit_id = unit.removeprefix(ENTITY_IRI) if isinstance(unit, str) and unit.startswith(ENTITY_IRI) else None
    if unit_id is None or not _is_entity_id(unit_id):
        raise UnknownDatavalue(f"quantity unit {_short(unit)} is not an entity")
    return f"{amount} {unit_id}"


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UnknownDatavalue(f"coordinate {_short(value)} is not a finite number")
    return float(value)


def _short(value: object) -> str:
    """A value for a one-line reason: its repr, cut (a hostile value may be megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _id_from_numeric(value: dict[str, Any]) -> str:
    prefix = {"item": "Q", "property": "P", "lexeme": "L"}[value["entity-type"]]
    number = value["numeric-id"]
    if type(number) is not int:
        raise UnknownDatavalue(f"numeric-id {_short(number)}")
    return f"{prefix}{number}"


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
    """A string body for N-Triples and SPARQL literals: backslash, quote and line ends escaped (their grammars
    forbid them raw), and tab as Wikidata's own RDF writes it."""
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
            .replace("\t", "\\t"))


def iri(base: str, local: str) -> str:
    """`<base + local>` as an N-Triples/SPARQL IRI, everything in `local` but letters, digits and `-_.~`
    percent-encoded: whatever an id holds, it stays one valid term (a newline or `>` cannot end it and start
    another triple). A valid id is written as it is."""
    return f"<{base}{quote(local, safe='-')}>"


def rdf_term(kind: Kind, form: str) -> str:
    """The value as an N-Triples/SPARQL term: `<iri>`, `"lex"^^<dt>` or `"lex"@lang`."""
    lexical, datatype, lang = rdf_lexical(kind, form)
    if kind is Kind.ENTITY:
        return iri(ENTITY_IRI, form)
    body = f'"{nt_escape(lexical)}"'
    if lang is not None:
        if not is_language(lang):  # canonical() let none through: a form from elsewhere must not end the term
            raise ValueError(f"not a language tag: {lang[:80]!r}")
        return f"{body}@{lang}"
    return f"{body}^^<{datatype}>" if datatype else body
