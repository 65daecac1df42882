"""A question's meaning as a conjunctive query over truthy Wikidata triples, and its SPARQL text."""

from __future__ import annotations

from dataclasses import dataclass

from timelyqa.wikidata.values import Kind, rdf_term

PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX schema: <http://schema.org/>
"""

ANSWER = "x"


@dataclass(frozen=True, order=True)
class Var:
    """A query variable; `x` is always the answer, `y1`, `y2`... are hops."""

    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


@dataclass(frozen=True, order=True)
class Const:
    kind: Kind
    form: str

    def __str__(self) -> str:
        return self.form


Term = Var | Const


@dataclass(frozen=True)
class Pattern:
    """One truthy triple pattern: `s wdt:p o`."""

    s: Term
    p: str
    o: Term

    def sparql(self) -> str:
        return f"{_term(self.s)} wdt:{self.p} {_term(self.o)} ."


@dataclass(frozen=True)
class Query:
    patterns: tuple[Pattern, ...]

    def triples(self) -> list[list[str]]:
        """The patterns as [subject, property, object] strings, `?x` the answer (the record's query_triples)."""
        return [[str(pt.s), pt.p, str(pt.o)] for pt in self.patterns]

    def where(self) -> str:
        return " ".join(pt.sparql() for pt in self.patterns)

    def sparql(self) -> str:
        """A standalone query; the question is sound when it returns exactly one row, the answer."""
        return f"{PREFIXES}SELECT DISTINCT ?{ANSWER} WHERE {{ {self.where()} }} LIMIT 2"


def _term(t: Term) -> str:
    if isinstance(t, Var):
        return str(t)
    if t.kind is Kind.ENTITY:
        return f"wd:{t.form}"
    return rdf_term(t.kind, t.form)


def to_json(query: Query) -> list[list[str]]:
    """The query with each term's kind, so that it can be rebuilt exactly: [s, s_kind, p, o, o_kind]."""
    return [[_form(pt.s), _kind(pt.s), pt.p, _form(pt.o), _kind(pt.o)] for pt in query.patterns]


def from_json(rows: list[list[str]]) -> Query:
    return Query(tuple(Pattern(_parse(s, sk), p, _parse(o, ok)) for s, sk, p, o, ok in rows))


def _form(t: Term) -> str:
    return t.name if isinstance(t, Var) else t.form


def _kind(t: Term) -> str:
    return "var" if isinstance(t, Var) else t.kind.value


def _parse(form: str, kind: str) -> Term:
    return Var(form) if kind == "var" else Const(Kind(kind), form)
