"""The part of a snapshot that some questions' queries can touch, as N-Triples for a small local store.

A full dump's T1 in Oxigraph takes hundreds of GB (about 640 bytes a triple). A question's query is a basic
graph pattern of truthy triples (`?x wdt:P54 wd:Q1`, `wd:Q5 wdt:P26 ?x`, `?x wdt:P131 ?y . ?y wdt:P17 wd:Q3`),
so every triple of every solution matches one of its patterns with each variable bound to a value it takes in
some solution. The extraction reads the snapshot's bucketed triples hop by hop: patterns with a constant first,
each variable's candidates the values its patterns found, then patterns reached through a variable restricted to
its candidates; then the candidates are narrowed over all the query's patterns until nothing changes (a
semi-join reduction). What is left holds every triple of every solution and nothing else the query can use, so a
store loaded with it gives each query the answers the full store gives: the same verdicts.

A constant matches as the store matches it, by RDF term, not by the snapshot's form: `+1991-00-00T00:00:00Z/9`
(a year) and `+1991-01-01T00:00:00Z/11` are one xsd:dateTime, `+1.87 Q11573` and `+1.870 Q174728` one xsd:decimal
(wdt: keeps no unit, Oxigraph no trailing zero). Times and quantities are fetched by their year or amount and
compared by `term_key`; every other kind has one form a term. Variables are entities in every shape synthesis
writes but the L1 answer, which no other pattern shares.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

import polars as pl

from timelyqa.wikidata.query import Const, Pattern, Query, Var
from timelyqa.wikidata.rdf import WDT
from timelyqa.wikidata.snapshot import TRIPLES_DIR
from timelyqa.wikidata.values import ENTITY_IRI, Kind, iri, rdf_lexical, rdf_term, split_quantity

Found = dict[tuple[str, str, str], str]
"""(s, p, o) -> kind of the triples one pattern matched."""


@dataclass
class Extraction:
    """What an extraction read and kept."""

    queries: int = 0
    rounds: int = 0
    read: int = 0
    """Triples the hop-by-hop scans returned."""
    kept: int = 0
    """Distinct triples in the subgraph."""
    unbounded: int = 0
    """Patterns with two variables that no constant reached: read whole by their property (correct, costly)."""


class _State:
    """One query's progress: the triples each pattern matched so far, each variable's candidate values."""

    def __init__(self, query: Query) -> None:
        self.patterns = query.patterns
        self.found: dict[int, Found] = {}
        self.cand: dict[str, set[str]] = {}

    def request(self, i: int, pt: Pattern) -> tuple[str, list[tuple[str, Any]]] | None:
        """("sp", "po", "year" or "amount", keys) to fetch pattern i by, or None while neither end is bound."""
        if isinstance(pt.s, Const):
            return "sp", [(pt.s.form, pt.p)]
        if isinstance(pt.o, Const):
            if pt.o.kind is Kind.TIME:
                return "year", [(pt.p, _year(pt.o.form))]
            if pt.o.kind is Kind.QUANTITY:
                return "amount", [(pt.p, _amount(pt.o.form))]
            return "po", [(pt.p, pt.o.form)]
        if pt.o.name in self.cand:
            return "po", [(pt.p, o) for o in sorted(self.cand[pt.o.name])]
        if pt.s.name in self.cand:
            return "sp", [(s, pt.p) for s in sorted(self.cand[pt.s.name])]
        return None

    def take(self, i: int, rows: Iterable[tuple[str, str, str, str]]) -> None:
        pt = self.patterns[i]
        found: Found = {}
        for s, p, o, kind in rows:
            if p == pt.p and _fits(pt.s, s, "entity", self.cand) and _fits(pt.o, o, kind, self.cand):
                found[(s, p, o)] = kind
        self.found[i] = found
        for term, pos in ((pt.s, 0), (pt.o, 2)):
            if isinstance(term, Var):
                values = {t[pos] for t in found}
                self.cand[term.name] = values if term.name not in self.cand else self.cand[term.name] & values

    def reduce(self) -> Found:
        """Narrow every pattern's triples to candidates all its variables' patterns agree on, until stable."""
        changed = True
        while changed:
            changed = False
            for i, pt in enumerate(self.patterns):
                kept = {t: k for t, k in self.found[i].items()
                        if _fits(pt.s, t[0], "entity", self.cand) and _fits(pt.o, t[2], k, self.cand)}
                changed |= len(kept) != len(self.found[i])
                self.found[i] = kept
                for term, pos in ((pt.s, 0), (pt.o, 2)):
                    if isinstance(term, Var):
                        values = {t[pos] for t in kept}
                        if values != self.cand[term.name]:
                            self.cand[term.name] &= values
                            changed = True
        return {t: k for found in self.found.values() for t, k in found.items()}


def _fits(term: Const | Var, value: str, kind: str, cand: Mapping[str, set[str]]) -> bool:
    if isinstance(term, Const):
        return term.form == value or term_key(term.kind, term.form) == term_key(Kind(kind), value)
    return term.name not in cand or value in cand[term.name]


def term_key(kind: Kind, form: str) -> str:
    """The value as the store tells terms apart: its RDF term, a decimal without trailing zeros."""
    if kind is Kind.QUANTITY:
        lexical = rdf_lexical(kind, form)[0]
        try:
            return f"decimal:{Decimal(lexical).normalize()}"
        except InvalidOperation:
            return rdf_term(kind, form)
    return rdf_term(kind, form)


_YEAR = r"^([+-]?[0-9]+)-"
_AMOUNT = r"^([+-]?[0-9.eE+-]+)"


def _year(form: str) -> str:
    m = re.match(_YEAR, form)
    return m.group(1) if m else form


def _amount(form: str) -> float | None:
    try:
        return float(split_quantity(form)[0])
    except ValueError:
        return None


def _fetch(triples: pl.LazyFrame, keys: dict[str, set[tuple[str, Any]]],
           props: set[str]) -> list[tuple[str, str, str, str]]:
    """One scan of the snapshot for every key the round asks: (s, p) pairs, (p, o) pairs, (p, year) and
    (p, amount) pairs of times and quantities (narrowed further by term_key), whole properties."""
    sp, po = keys["sp"], keys["po"]
    parts = []
    if keys["year"]:
        wanted = pl.DataFrame(sorted(keys["year"]), schema={"p": pl.String(), "y": pl.String()}, orient="row").lazy()
        parts.append(triples.filter(pl.col("kind") == Kind.TIME.value)
                     .with_columns(y=pl.col("o").str.extract(_YEAR, 1))
                     .join(wanted, on=["p", "y"], how="semi").drop("y"))
    if keys["amount"]:
        amounts = sorted(k for k in keys["amount"] if k[1] is not None)
        wanted = pl.DataFrame(amounts, schema={"p": pl.String(), "a": pl.Float64()}, orient="row").lazy()
        parts.append(triples.filter(pl.col("kind") == Kind.QUANTITY.value)
                     .with_columns(a=pl.col("o").str.extract(_AMOUNT, 1).cast(pl.Float64, strict=False))
                     .join(wanted, on=["p", "a"], how="semi").drop("a"))
    if sp:
        keys = pl.DataFrame(sorted(sp), schema={"s": pl.String(), "p": pl.String()}, orient="row").lazy()
        parts.append(triples.join(keys, on=["s", "p"], how="semi"))
    if po:
        keys = pl.DataFrame(sorted(po), schema={"p": pl.String(), "o": pl.String()}, orient="row").lazy()
        parts.append(triples.join(keys, on=["p", "o"], how="semi"))
    if props:
        parts.append(triples.filter(pl.col("p").is_in(sorted(props))))
    if not parts:
        return []
    return list(pl.concat(parts).unique().collect().iter_rows())


def extract(snapshot: Path, queries: Iterable[Query]) -> tuple[Found, Extraction]:
    """The triples of the snapshot (its `triples.parquet` buckets) that the queries' solutions use."""
    states = [_State(q) for q in queries]
    stats = Extraction(queries=len(states))
    triples = pl.scan_parquet(snapshot / TRIPLES_DIR)
    while any(len(st.found) < len(st.patterns) for st in states):
        stats.rounds += 1
        keys: dict[str, set[tuple[str, Any]]] = {"sp": set(), "po": set(), "year": set(), "amount": set()}
        asked: list[tuple[_State, int]] = []
        for st in states:
            for i, pt in enumerate(st.patterns):
                if i in st.found:
                    continue
                req = st.request(i, pt)
                if req is not None:
                    keys[req[0]].update(req[1])
                    asked.append((st, i))
        props: set[str] = set()
        if not asked:  # only patterns whose both ends are variables no constant reaches: read them by property
            for st in states:
                for i, pt in enumerate(st.patterns):
                    if i not in st.found:
                        props.add(pt.p)
                        asked.append((st, i))
                        stats.unbounded += 1
        rows = _fetch(triples, keys, props)
        stats.read += len(rows)
        by_p: dict[str, list[tuple[str, str, str, str]]] = {}
        for row in rows:
            by_p.setdefault(row[1], []).append(row)
        for st, i in asked:
            st.take(i, by_p.get(st.patterns[i].p, ()))
    kept: Found = {}
    for st in states:
        kept.update(st.reduce())
    stats.kept = len(kept)
    return kept, stats


def ntriples(found: Found) -> str:
    """The subgraph as N-Triples lines (the `wdt:` triples the full store's rdf.nt holds for them), sorted."""
    return "".join(f"{iri(ENTITY_IRI, s)} {iri(WDT, p)} {rdf_term(Kind(kind), o)} .\n"
                   for (s, p, o), kind in sorted(found.items()))


def write(snapshot: Path, queries: Iterable[Query], out: Path) -> Extraction:
    """Extract the queries' subgraph of the snapshot into the N-Triples file `out`."""
    found, stats = extract(snapshot, queries)
    out.write_text(ntriples(found), encoding="utf-8")
    return stats
