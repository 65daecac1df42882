"""Questions at three levels from delta triples, each level a versioned generator (LiveSearchBench, section 4).

- L1 (`wikidata_l1_v5`): the delta triple itself, asked forwards when its object is the only value of
  the property on the subject in T1, else backwards when the subject is the only one with that value.
  Asked forwards for a quantity with a unit, the question names the unit ("How tall is X, in metres?").
- L2 (`wikidata_l2_v4`): the subject is the answer; starting from the delta triple, the constraint
  that shrinks the candidates most is added, one at a time, until only the subject is left.
- L3 (`wikidata_l3_v4`): an L2 question with one entity constraint fuzzed into a hop through another
  entity ("has played for an association football club that is in Saudi Arabia"), still unique. A hop never
  names again what the question names: a hop equal to another constraint replaces it ("Which event is located at
  a city that is in Brazil?", where v1 asked "Which event is in Brazil and is located at a city that is in
  Brazil?"), and a hop to an object another constraint names is not taken.

Each answer is typed from Wikidata's datatype (render.answer): the L2 and L3 answer is an entity, the L1 answer
whatever its object is. L1's v2 asks for a quantity in its unit and writes it with pint's symbol ("1.86 m"); v1
asked "How tall is X?" for "1.86 metre".

What changed in L1 v3, L2 v2 and L3 v2: a clause says a quantity's unit in words ("Who is 1.85 metres tall?", not
"1.85 metre"), one property's objects share one clause ("has played for Riyadh Falcons FC and an association
football club that is in Portugal", not "... and has played for an ..."), and L3's hops name nothing twice.

What changed in L1 v4, L2 v3 and L3 v3 (issue 21): the question word follows what the answer is, from its class
(P31) in the graph: "Who" for a human, "Which <class>" for an item of one class ("Which association football club
won Atlantic Cup 2026?", where v3 asked "Who won ...?"; "Which organization employs X?", not "Who is the employer of
X?"), else the property's own noun ("Which award has X received?"), "What" only when no class is known. A human
among several classes is still "Who" (v2 said "What"). A clause says a lower-case class or role with its article
("works as an association football player", "plays as a goalkeeper").

What changed in L1 v5, L2 v4 and L3 v4 (issue 21): a property without a template of its own is asked by its value's
kind (templates.template), and the table holds the counts, dates and sizes whose fallback read badly. A count is asked
"how many" ("How many employees does X have?", where v4 asked "What is the employees of X?"; "How many participants
does X have?" for "number of participants"); a date "when" ("When did X start?" for start time, v4 "What is the start
time of X?"; a date property the table lacks by its precision: "On what date was the official opening of X?"); a
size by its adjective ("How high above sea level is X, in metres?", v4 "What is the elevation above sea level of
X, in metres?"). A clause says a count, a date or a quantity as English does ("has 1,200 employees", "started on 1
May 2026", "has an area of 12 square kilometres", where v3 wrote "has employees 1,200", "has start time on 1 May
2026", "has area 12 square kilometres").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from timelyqa.answers import Typed, unit_phrase
from timelyqa.reasons import Reason
from timelyqa.rewards import normalize

from timelyqa.wikidata.filters import property_drop
from timelyqa.wikidata.graph import Edge, Graph
from timelyqa.wikidata.query import ANSWER, Const, Pattern, Query, Var
from timelyqa.wikidata.render import HUMAN, Unrenderable, answer, article, phrase, render
from timelyqa.wikidata.templates import ask, template, when
from timelyqa.wikidata.values import Kind

GENERATORS = {"L1": "wikidata_l1_v5", "L2": "wikidata_l2_v4", "L3": "wikidata_l3_v4"}
X = Var(ANSWER)


class Miss(Reason):
    """Why an anchor gave no question at a level."""

    L1_NOT_UNIQUE = "l1_not_unique", "L1: the changed triple has neither a unique object nor a unique subject"
    L2_ANCHOR_ALONE_UNIQUE = "l2_anchor_alone_unique", "L2: the anchor alone already has one answer (it is an L1)"
    L2_ANSWER_NOT_ENTITY = "l2_answer_not_askable", "L2: the answer is not an entity that constraints can narrow"
    L2_FANOUT_OVER_CAP = "l2_fanout_over_cap", "L2: more subjects share the anchor than the fan-out cap holds"
    L2_NOT_UNIQUE = "l2_not_unique", "L2: no set of constraints within the limit leaves one answer"
    L3_NO_L2 = "l3_without_l2", "L3: there is no L2 question to fuzz"
    L3_NOT_UNIQUE = "l3_no_unique_fuzz", "L3: no constraint turned into a hop keeps the answer unique"


@dataclass(frozen=True)
class Anchor:
    """A delta triple that passed the filters."""

    s: str
    p: str
    o: str
    kind: Kind
    change: str


@dataclass(frozen=True)
class Constraint:
    """`?x p o`, or, fuzzed, `?x p ?y . ?y hop_p hop_o`."""

    p: str
    o: str
    kind: Kind
    hop: Edge | None = None


@dataclass
class Candidate:
    level: str
    anchor: Anchor
    query: Query
    answer_kind: Kind
    """The answer's Wikidata value type, which verification compares `answer_form` by."""
    answer_form: str
    answer: Typed
    """The answer as the row carries it: display, type, value and aliases."""
    question: str
    generator: str = field(init=False)

    def __post_init__(self) -> None:
        self.generator = GENERATORS[self.level]


@dataclass(frozen=True)
class Missed:
    level: str
    anchor: Anchor
    reason: Miss
    detail: str


class Synthesizer:
    """Writes questions for anchors over a Graph whose neighbourhood it prefetches in batches."""

    def __init__(self, graph: Graph, *, seed: int, max_constraints: int = 4) -> None:
        self.g, self.seed, self.max_constraints = graph, seed, max_constraints

    def run(self, anchors: list[Anchor]) -> tuple[list[Candidate], list[Missed]]:
        g = self.g
        # The objects too: an L1 answer's class (P31) gives its question word.
        g.fetch_out({a.s for a in anchors} | {a.o for a in anchors if a.kind is Kind.ENTITY})
        g.fetch_subjects(self._keys(a.s for a in anchors) | {(a.p, a.o) for a in anchors})
        out: list[Candidate] = []
        missed: list[Missed] = []
        l2: list[tuple[Anchor, list[Constraint], frozenset[str]]] = []
        for a in anchors:
            out_or_miss(self.l1(a), out, missed)
            result = self.l2(a)
            if isinstance(result, Missed):
                missed.append(result)
                missed.append(Missed("L3", a, Miss.L3_NO_L2, f"{_t(a)}: no L2 question to fuzz"))
                continue
            chosen, cands = result
            out.append(self._candidate("L2", a, chosen))
            l2.append((a, chosen, cands))
        self._prefetch_hops(l2)
        for a, chosen, _ in l2:
            out_or_miss(self.l3(a, chosen), out, missed)
        return out, missed

    # L1 -----------------------------------------------------------------------------------------
    def l1(self, a: Anchor) -> Candidate | Missed:
        values = {o for p, o, _ in self.g.out(a.s) if p == a.p}  # two statements may hold one value
        if len(values) == 1:
            q = Query((Pattern(Const(Kind.ENTITY, a.s), a.p, X),))
            typed = self._answer(a.kind, a.o)
            t = template(a.p, self.g.labels[a.p], a.kind, a.o)
            wh = self._wh(a.o, t.noun) if a.kind is Kind.ENTITY else when(a.o) if a.kind is Kind.TIME else "What"
            if wh.startswith("Which ") and _says_noun(ask(t, self.g.labels[a.s], "What"), wh.removeprefix("Which ")):
                wh = "What"  # "What is the capital of X?", not "Which capital is the capital of X?"
            text = in_unit(ask(t, self.g.labels[a.s], wh), typed)
            return Candidate("L1", a, q, a.kind, a.o, typed, text)
        if self.g.subjects(a.p, a.o) == {a.s}:
            c = Constraint(a.p, a.o, a.kind)
            return self._candidate("L1", a, [c])
        return Missed("L1", a, Miss.L1_NOT_UNIQUE,
                      f"{_t(a)}: {len(values)} values of {a.p} on {a.s}, and other subjects share {a.o}")

    # L2 -----------------------------------------------------------------------------------------
    def l2(self, a: Anchor) -> tuple[list[Constraint], frozenset[str]] | Missed:
        cands = self.g.subjects(a.p, a.o)
        if cands is None:
            return Missed("L2", a, Miss.L2_FANOUT_OVER_CAP, f"{_t(a)}: more than {self.g.fanout_cap} subjects")
        if cands == {a.s}:
            return Missed("L2", a, Miss.L2_ANCHOR_ALONE_UNIQUE, f"{_t(a)}: the anchor alone is unique (see L1)")
        chosen = [Constraint(a.p, a.o, a.kind)]
        # A constraint that says the answer ("has the official name Atlético X Futebol Clube" of Atlético X) is
        # never added: the gate would send the question back, and another constraint may keep it.
        options = [c for c in self._constraints(a.s) if c != chosen[0] and not self._names(c.kind, c.o, a.s)]
        while len(cands) > 1 and len(chosen) < self.max_constraints and options:
            best = min(options, key=lambda c: (len(cands & self.g.subjects(c.p, c.o)), self._tie(a, c)))
            narrowed = cands & self.g.subjects(best.p, best.o)
            options.remove(best)
            if len(narrowed) == len(cands):
                break
            chosen.append(best)
            cands = narrowed
        if cands != {a.s}:
            return Missed("L2", a, Miss.L2_NOT_UNIQUE,
                          f"{_t(a)}: {len(cands)} subjects left after {len(chosen)} constraints")
        return chosen, cands

    # L3 -----------------------------------------------------------------------------------------
    def l3(self, a: Anchor, chosen: list[Constraint]) -> Candidate | Missed:
        order = [c for c in chosen[1:] if c.kind is Kind.ENTITY] + [c for c in chosen[:1] if c.kind is Kind.ENTITY]
        for c in order:
            for hop in self._hops(c, a.s):
                # A hop never names again what the question names: "is in Brazil and is located at a city that is
                # in Brazil" asks "is located at a city that is in Brazil" without the restated constraint, and a
                # hop to an object another constraint holds under another property is not taken.
                rest = [d for d in chosen if d != c and (d.p, d.o) != hop[:2]]
                if any(d.o == hop[1] for d in rest):
                    continue
                widened = self._fuzzed(c, hop)
                if widened is None:
                    continue
                base = _intersect(self.g.subjects(d.p, d.o) for d in rest)
                cands = widened if base is None else widened & base
                if cands == {a.s}:
                    return self._candidate("L3", a, [*rest, Constraint(c.p, c.o, c.kind, hop)])
        return Missed("L3", a, Miss.L3_NOT_UNIQUE, f"{_t(a)}: no fuzzed constraint keeps the answer unique")

    def _hops(self, c: Constraint, answer: str) -> list[Edge]:
        """Triples of the constraint's object that describe it while matching at least one other entity."""
        hops = []
        for p, o, kind in self.g.out(c.o):
            if o == answer or o == c.o or not self._askable(p, o, kind) or self._names(kind, o, answer):
                continue
            ys = self.g.subjects(p, o)
            if ys is not None and len(ys) >= 2:
                hops.append((p, o, kind))
        # Narrowest category first: "a club in Saudi Arabia" before "a club associated with football".
        return sorted(hops, key=lambda e: (len(self.g.subjects(e[0], e[1]) or ()), self._tie_key(c.o, e)))

    def _fuzzed(self, c: Constraint, hop: Edge) -> frozenset[str] | None:
        ys = self.g.subjects(hop[0], hop[1]) or frozenset()
        union: set[str] = set()
        for y in ys:
            subs = self.g.subjects(c.p, y)
            if subs is None:
                return None
            union |= subs
        return frozenset(union)

    def _prefetch_hops(self, l2: list[tuple[Anchor, list[Constraint], frozenset[str]]]) -> None:
        objects = {c.o for _, chosen, _ in l2 for c in chosen if c.kind is Kind.ENTITY}
        self.g.fetch_out(objects)
        hop_keys = {(p, o) for y in objects for p, o, _ in self.g.out(y)}
        self.g.fetch_subjects(hop_keys)
        widen = {(c.p, y) for _, chosen, _ in l2 for c in chosen if c.kind is Kind.ENTITY
                 for p, o, _ in self.g.out(c.o) for y in (self.g.subjects(p, o) or ())}
        self.g.fetch_subjects(widen)
        self.g.fetch_out({y for _, y in widen})  # type nouns of the entities a hop may pass through

    # helpers --------------------------------------------------------------------------------------
    def _constraints(self, subject: str) -> list[Constraint]:
        return [Constraint(p, o, kind) for p, o, kind in self.g.out(subject)
                if self._askable(p, o, kind) and self.g.subjects(p, o) is not None]

    def _askable(self, p: str, o: str, kind: Kind) -> bool:
        if property_drop(p, self.g.datatypes, self.g.labels) is not None:
            return False
        try:
            render(kind, o, self.g.labels)
        except Unrenderable:
            return False
        return True

    def _names(self, kind: Kind, form: str, entity: str) -> bool:
        """Whether the value, as a clause says it, holds the entity's label (word for word, as the gate reads it)."""
        return self._says(phrase(kind, form, self.g.labels), entity)

    def _keys(self, subjects: Iterable[str]) -> set[tuple[str, str]]:
        return {(p, o) for s in subjects for p, o, _ in self.g.out(s)}

    def _tie(self, a: Anchor, c: Constraint) -> bytes:
        return self._tie_key(a.s, (c.p, c.o, c.kind))

    def _tie_key(self, subject: str, e: Edge) -> bytes:
        """A seeded, stable order among equally good choices: the same seed gives the same questions."""
        return hashlib.blake2b(f"{self.seed}\x1f{subject}\x1f{e[0]}\x1f{e[1]}".encode(), digest_size=8).digest()

    def _candidate(self, level: str, a: Anchor, constraints: list[Constraint]) -> Candidate:
        return Candidate(level, a, self._query(constraints), Kind.ENTITY, a.s, self._answer(Kind.ENTITY, a.s),
                         f"{self._wh(a.s)} {self._clauses(constraints)}?")

    def _answer(self, kind: Kind, form: str) -> Typed:
        return answer(kind, form, self.g.labels, self.g.aliases)

    def _query(self, constraints: list[Constraint]) -> Query:
        """The constraints as patterns, most selective first: SPARQL engines such as Oxigraph join in the
        written order, and starting from a value with 3 subjects instead of 900 is many times faster."""
        plain = sorted((c for c in constraints if c.hop is None),
                       key=lambda c: (len(self.g.subjects(c.p, c.o) or ()), c.p, c.o))
        patterns = [Pattern(X, c.p, Const(c.kind, c.o)) for c in plain]
        for n, c in enumerate((c for c in constraints if c.hop is not None), start=1):
            y = Var(f"y{n}")
            patterns += [Pattern(X, c.p, y), Pattern(y, c.hop[0], Const(c.hop[2], c.hop[1]))]
        return Query(tuple(patterns))

    def _wh(self, entity: str, noun: str | None = None) -> str:
        """The question word for an answer, from what the graph knows of it: "Who" for a human (Q5 among its
        classes), "Which <class>" for an item of one labelled class, else "Which <noun>" with the property's own
        noun, else "What". A class whose label holds the answer's falls back, lest the question say its answer."""
        classes = self._classes(entity)
        if HUMAN in classes:
            return "Who"
        cls = self._type_noun(entity)
        if cls is not None and not self._says(self.g.labels[cls], entity):
            return f"Which {self.g.labels[cls]}"
        if noun is not None and not self._says(noun, entity):
            return f"Which {noun}"
        return "What"

    def _classes(self, entity: str) -> list[str]:
        return [o for p, o, _ in self.g.out(entity) if p == "P31"]

    def _type_noun(self, entity: str) -> str | None:
        types = self._classes(entity)
        return types[0] if len(types) == 1 and (types[0] in self.g.labels) else None

    def _says(self, text: str, entity: str) -> bool:
        label = normalize(self.g.labels.get(entity, ""))
        return bool(label) and f" {label} " in f" {normalize(text)} "

    def _clauses(self, constraints: list[Constraint]) -> str:
        by_prop: dict[str, list[Constraint]] = {}
        for c in constraints:
            by_prop.setdefault(c.p, []).append(c)
        clauses = [self._clause(group) for group in by_prop.values()]
        return clauses[0] if len(clauses) == 1 else f"{', '.join(clauses[:-1])} and {clauses[-1]}"

    def _clause(self, group: list[Constraint]) -> str:
        """One property's objects in one clause, a hop last: "has played for Riyadh Falcons FC and an association
        football club that is in Portugal" (v1 said "has played for" twice)."""
        t = template(group[0].p, self.g.labels[group[0].p], group[0].kind, group[0].o)
        values = [self._value(d.kind, d.o, t.article) for d in group if d.hop is None]
        values += [self._hop_phrase(d.o, d.hop) for d in group if d.hop is not None]
        joined = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} and {values[-1]}"
        return t.clause.format(o=joined)

    def _value(self, kind: Kind, form: str, with_article: bool) -> str:
        """A value as a clause says it; a lower-case item label (a class, a role) with its article where the
        property wants one ("works as an association football player"), a name as it is ("works as Chief Scout")."""
        text = phrase(kind, form, self.g.labels)
        return article(text) if with_article and kind is Kind.ENTITY and text[:1].islower() else text

    def _hop_phrase(self, through: str, hop: Edge) -> str:
        """The entity a hop passes through, described: "an association football club that is in Portugal"."""
        hop_p, hop_o, hop_kind = hop
        noun = self._type_noun(through)
        what = article(self.g.labels[noun]) if noun and noun != HUMAN else ("a person" if noun else "an entity")
        t = template(hop_p, self.g.labels[hop_p], hop_kind, hop_o)
        inner = t.clause.format(o=self._value(hop_kind, hop_o, t.article))
        return f"{what} that {inner}"


def in_unit(question: str, typed: Typed) -> str:
    """The question saying the unit its answer is in, so that a bare number is right: "How tall is X, in metres?"."""
    phrase = unit_phrase(typed.value)
    return f"{question.removesuffix('?')}, {phrase}?" if phrase else question


def _says_noun(question: str, noun: str) -> bool:
    return f" {normalize(noun)} " in f" {normalize(question)} "


def out_or_miss(result: Candidate | Missed, out: list[Candidate], missed: list[Missed]) -> None:
    (missed if isinstance(result, Missed) else out).append(result)  # type: ignore[arg-type]


def _intersect(sets: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    result: frozenset[str] | None = None
    for s in sets:
        if s is not None:
            result = s if result is None else result & s
    return result


def _t(a: Anchor) -> str:
    return f"({a.s}, {a.p}, {a.o})"
