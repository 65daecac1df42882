"""An entity's statements, and the truthy ones by Wikidata's own rule (best rank, value snaks only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from timelyqa.reasons import Reason
from timelyqa.wikidata.ids import is_entity_id, is_property_id
from timelyqa.wikidata.values import Kind, UnknownDatavalue, ValueReject, canonical

RANKS = ("preferred", "normal", "deprecated")


@dataclass(frozen=True, slots=True)
class Statement:
    """One value statement: `subject prop form`, with its rank and Wikidata statement id."""

    subject: str
    prop: str
    kind: Kind
    form: str
    rank: str
    sid: str


class StatementReject(Reason):
    MALFORMED_STATEMENT = "malformed_statement", "a statement is not of the shape Wikidata's JSON dumps give"
    BAD_PROPERTY_ID = "bad_property_id", "an entity's claims are keyed by something that is not a property id"


@dataclass(frozen=True, slots=True)
class BadStatement:
    subject: str
    prop: str
    reason: StatementReject | ValueReject
    detail: str


@dataclass(slots=True)
class EntityStatements:
    """What one entity says: all value statements (any rank), the truthy subset, and what could not be read."""

    statements: list[Statement]
    truthy: list[Statement]
    bad: list[BadStatement]
    other_snaks: int
    """somevalue/novalue statements: real, but with no value to ask about."""


def read_statements(entity: dict[str, Any]) -> EntityStatements:
    """Normalise an entity's claims.

    Per (subject, property), the truthy statements are those of the best rank present among the
    non-deprecated ones (preferred if any, else normal), counting somevalue/novalue snaks when the
    best rank is chosen, as Wikidata's wdt: triples do; only value snaks become triples.
    """
    out = EntityStatements([], [], [], 0)
    subject, properties = _claims(entity, out.bad)
    for prop, claims in properties:
        values, best, other = _values(subject, prop, claims, out.bad)
        out.other_snaks += other
        statements = [Statement(subject, prop, kind, form, rank, str(claim.get("id") or f"{subject}${prop}${form}"))
                      for rank, kind, form, claim in values]
        out.statements.extend(statements)
        out.truthy.extend(st for st in statements if st.rank == best)
    return out


def read_truthy(entity: dict[str, Any], s: list[str], p: list[str], o: list[str], k: list[str],
                bad: list[BadStatement]) -> tuple[int, int, int]:
    """read_statements for a column writer: the same truthy triples, appended to four columns (subject,
    property, form, kind value) without a Statement object each; bad statements go to `bad`.

    Returns (value statements, truthy triples, somevalue/novalue snaks). The loop is read_statements'
    (_values below) written out once more, because it runs for every statement of a dump: a property's
    normal-rank values go straight into the columns and are taken back out if a preferred one follows.
    """
    statements = other_snaks = 0
    first = len(o)
    subject, properties = _claims(entity, bad)
    for prop, claims in properties:
        start = len(o)
        best = "normal"
        for claim in claims:
            rank = claim.get("rank", "normal") if isinstance(claim, dict) else None
            if rank not in RANKS:
                bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                        f"{subject} {prop}: statement with rank {rank!r}"))
                continue
            if rank == "preferred" and best == "normal":
                best = "preferred"
                del s[start:], p[start:], o[start:], k[start:]
            snak = claim.get("mainsnak")
            if not isinstance(snak, dict):
                bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                        f"{subject} {prop}: statement without a mainsnak"))
                continue
            if snak.get("snaktype", "value") != "value":
                other_snaks += 1
                continue
            datavalue = snak.get("datavalue")
            if not isinstance(datavalue, dict):
                bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                        f"{subject} {prop}: value snak without datavalue"))
                continue
            try:
                kind, form = canonical(datavalue)
            except UnknownDatavalue as exc:
                bad.append(BadStatement(subject, prop, exc.reason, f"{subject} {prop}: {exc}"))
                continue
            statements += 1
            if rank == best:
                s.append(subject)
                p.append(prop)
                o.append(form)
                k.append(_KIND_VALUE[kind])
    return statements, len(o) - first, other_snaks


_KIND_VALUE = {kind: kind.value for kind in Kind}


def _claims(entity: dict[str, Any], bad: list[BadStatement]) -> tuple[str, list[tuple[str, list[Any]]]]:
    """The subject and its (property, statements) pairs worth reading; an entity that is no entity, a key that is
    no property id or statements that are no list go to `bad`, so that no such text reaches a triple."""
    subject, claims = entity.get("id"), entity.get("claims")
    if not is_entity_id(subject):
        bad.append(BadStatement(_text(subject), "", StatementReject.MALFORMED_STATEMENT,
                                f"entity id {_text(subject)!r} is not a Wikidata id"))
        return "", []
    if not isinstance(claims, dict):
        if claims is not None and claims != []:  # Wikibase writes an empty map as []
            bad.append(BadStatement(subject, "", StatementReject.MALFORMED_STATEMENT,
                                    f"{subject}: claims not an object"))
        return subject, []
    out = []
    for prop, statements in claims.items():
        if not is_property_id(prop):
            bad.append(BadStatement(subject, _text(prop), StatementReject.BAD_PROPERTY_ID,
                                    f"{subject}: claims key {_text(prop)!r} is not a property id"))
        elif not isinstance(statements, list):
            bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                    f"{subject} {prop}: claims not a list"))
        else:
            out.append((prop, statements))
    return subject, out


def _text(value: object) -> str:
    """A value for a one-line reason, cut: a hostile key may be megabytes."""
    text = value if isinstance(value, str) else repr(value)
    return text[:80]
_Value = tuple[str, Kind, str, dict[str, Any]]


def _values(subject: str, prop: str, claims: list[Any], bad: list[BadStatement]) -> tuple[list[_Value], str, int]:
    """(rank, kind, form, claim) of each value statement of one property, the best rank, and the
    somevalue/novalue count; what cannot be read goes to `bad`. read_truthy repeats this loop inline."""
    values: list[_Value] = []
    best = "normal"
    other = 0
    for claim in claims:
        rank = claim.get("rank", "normal") if isinstance(claim, dict) else None
        if rank not in RANKS:
            bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                    f"{subject} {prop}: statement with rank {rank!r}"))
            continue
        if rank == "preferred":
            best = "preferred"
        snak = claim.get("mainsnak")
        if not isinstance(snak, dict):
            bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                    f"{subject} {prop}: statement without a mainsnak"))
            continue
        if snak.get("snaktype", "value") != "value":
            other += 1
            continue
        datavalue = snak.get("datavalue")
        if not isinstance(datavalue, dict):
            bad.append(BadStatement(subject, prop, StatementReject.MALFORMED_STATEMENT,
                                    f"{subject} {prop}: value snak without datavalue"))
            continue
        try:
            kind, form = canonical(datavalue)
        except UnknownDatavalue as exc:
            bad.append(BadStatement(subject, prop, exc.reason, f"{subject} {prop}: {exc}"))
            continue
        values.append((rank, kind, form, claim))
    return values, best, other


def english(entity: dict[str, Any], field: str = "labels") -> str | None:
    """The English label (or description): None when absent or not of Wikidata's shape (the reader has said so)."""
    terms = entity.get(field)
    term = terms.get("en") if isinstance(terms, dict) else None
    value = term.get("value") if isinstance(term, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def english_aliases(entity: dict[str, Any]) -> list[str]:
    """The English aliases; none when they are not of Wikidata's shape (the reader has said so)."""
    terms = entity.get("aliases")
    aliases = terms.get("en") if isinstance(terms, dict) else None
    if not isinstance(aliases, list):
        return []
    return [a["value"] for a in aliases if isinstance(a, dict) and isinstance(a.get("value"), str)]
