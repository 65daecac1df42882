"""An entity's statements, and the truthy ones by Wikidata's own rule (best rank, value snaks only)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from timelyqa.wikidata.values import Kind, UnknownDatavalue, canonical

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


@dataclass(frozen=True, slots=True)
class BadStatement:
    subject: str
    prop: str
    reason: str
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
    subject = entity["id"]
    out = EntityStatements([], [], [], 0)
    for prop, claims in (entity.get("claims") or {}).items():
        if not isinstance(claims, list):
            out.bad.append(BadStatement(subject, prop, "malformed_statement", f"{subject} {prop}: claims not a list"))
            continue
        values: list[Statement] = []
        best = "normal"
        for claim in claims:
            rank = claim.get("rank", "normal") if isinstance(claim, dict) else None
            if rank not in RANKS:
                out.bad.append(BadStatement(subject, prop, "malformed_statement",
                                            f"{subject} {prop}: statement with rank {rank!r}"))
                continue
            if rank == "preferred":
                best = "preferred"
            for result in _value(subject, prop, claim, rank):
                if isinstance(result, BadStatement):
                    out.bad.append(result)
                elif result is None:
                    out.other_snaks += 1
                else:
                    values.append(result)
        out.statements.extend(values)
        out.truthy.extend(v for v in values if v.rank == best)
    return out


def _value(subject: str, prop: str, claim: dict[str, Any], rank: str) -> Iterator[Statement | BadStatement | None]:
    snak = claim.get("mainsnak")
    if not isinstance(snak, dict):
        yield BadStatement(subject, prop, "malformed_statement", f"{subject} {prop}: statement without a mainsnak")
        return
    if snak.get("snaktype", "value") != "value":
        yield None
        return
    datavalue = snak.get("datavalue")
    if not isinstance(datavalue, dict):
        yield BadStatement(subject, prop, "malformed_statement", f"{subject} {prop}: value snak without datavalue")
        return
    try:
        kind, form = canonical(datavalue)
    except UnknownDatavalue as exc:
        yield BadStatement(subject, prop, exc.reason, f"{subject} {prop}: {exc}")
        return
    yield Statement(subject, prop, kind, form, rank, str(claim.get("id") or f"{subject}${prop}${form}"))


def english(entity: dict[str, Any], field: str = "labels") -> str | None:
    value = ((entity.get(field) or {}).get("en") or {}).get("value")
    return value if isinstance(value, str) and value.strip() else None


def english_aliases(entity: dict[str, Any]) -> list[str]:
    aliases = (entity.get("aliases") or {}).get("en") or []
    return [a["value"] for a in aliases if isinstance(a, dict) and isinstance(a.get("value"), str)]
