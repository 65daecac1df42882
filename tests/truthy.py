"""An independent reference for the tests: truthy triples, English labels and query answers from raw dump JSON.

Written from Wikidata's documentation, not from timelyqa's code, so that the two can disagree:
- truthy (`wdt:`): per (subject, property), the statements of the best non-deprecated rank present
  (preferred if any statement is preferred, else normal), whatever their snak type; of those, only
  `value` snaks give a triple.
- canonical forms, as the product's records spell them: item ids bare (`Q42`); times
  `{time}/{precision}` plus `/julian` for the Julian calendar; quantities `{amount}` or
  `{amount} {unit id}`; strings as they are; monolingual text `{text}@{language}`.
- a query (the record's `query_triples`) is answered by brute force: every binding of `?x` and of
  the other variables over every term of the snapshot, kept when each triple is truthy.
"""

from __future__ import annotations

import bz2
import gzip
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENTITY = "http://www.wikidata.org/entity/"
JULIAN_CALENDAR = ENTITY + "Q1985786"
ENTITY_ID = re.compile(r"[QPL]\d+")

Triple = tuple[str, str, str]


def dump_lines(path: Path) -> Iterator[str]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    elif raw[:3] == b"BZh":
        raw = bz2.decompress(raw)
    yield from raw.decode("utf-8").splitlines()


def read_entities(path: Path) -> list[dict[str, Any]]:
    """Every entity line of a dump; lines that are not entities are skipped, as a reader must."""
    out = []
    for line in dump_lines(path):
        body = line.strip().rstrip(",")
        if body in ("[", "]", ""):
            continue
        try:
            obj = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            out.append(obj)
    return out


def canonical(datavalue: dict[str, Any]) -> str | None:
    """The canonical form of a datavalue, None for types this reference does not know."""
    kind, v = datavalue.get("type"), datavalue.get("value")
    if kind == "wikibase-entityid":
        return v["id"] if "id" in v else {"item": "Q", "property": "P"}[v["entity-type"]] + str(v["numeric-id"])
    if kind == "string":
        return v
    if kind == "monolingualtext":
        return f"{v['text']}@{v['language']}"
    if kind == "time":
        return f"{v['time']}/{v['precision']}" + ("/julian" if v.get("calendarmodel") == JULIAN_CALENDAR else "")
    if kind == "quantity":
        unit = v.get("unit", "1")
        return v["amount"] if unit == "1" else f"{v['amount']} {unit[len(ENTITY):]}"
    return None


def truthy_statements(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The statements of one (subject, property) that Wikidata's wdt: keeps, snak types all included."""
    live = [c for c in claims if c.get("rank", "normal") != "deprecated"]
    preferred = [c for c in live if c.get("rank") == "preferred"]
    return preferred or live


def entity_triples(e: dict[str, Any]) -> Iterator[Triple]:
    for prop, claims in (e.get("claims") or {}).items():
        for c in truthy_statements(claims):
            snak = c["mainsnak"]
            if snak.get("snaktype", "value") != "value":
                continue
            form = canonical(snak["datavalue"])
            if form is not None:
                yield e["id"], prop, form


def english_label(e: dict[str, Any]) -> str | None:
    label = (e.get("labels") or {}).get("en")
    return label["value"] if label else None


@dataclass
class Snapshot:
    """One dump as the reference sees it: truthy objects per (s, p), English labels, the term domain."""

    entities: dict[str, dict[str, Any]]
    objects: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    labels: dict[str, str] = field(default_factory=dict)
    _domain: list[str] | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, entities: Iterable[dict[str, Any]]) -> Snapshot:
        snap = cls({e["id"]: e for e in entities})
        for e in snap.entities.values():
            for s, p, o in entity_triples(e):
                snap.objects[(s, p)].add(o)
            if (label := english_label(e)) is not None:
                snap.labels[e["id"]] = label
        return snap

    @classmethod
    def read(cls, path: Path) -> Snapshot:
        return cls.of(read_entities(path))

    def triples(self) -> set[Triple]:
        return {(s, p, o) for (s, p), objs in self.objects.items() for o in objs}

    def has(self, s: str, p: str, o: str) -> bool:
        return o in self.objects.get((s, p), ())

    def domain(self) -> list[str]:
        """Every term a variable can stand for: all subjects and all objects."""
        if self._domain is None:
            self._domain = sorted({s for s, _ in self.objects} | {o for objs in self.objects.values() for o in objs})
        return self._domain

    def answers(self, query: list[list[str]]) -> set[str]:
        """All values of ?x for which some binding of the other variables makes every triple truthy.

        Brute force: ?x, then each other variable, runs over the whole domain; a triple is tested as
        soon as its variables are bound, which prunes the search but never skips a binding.
        """
        variables = ["?x"] + sorted({t for triple in query for t in (triple[0], triple[2])
                                     if t.startswith("?") and t != "?x"})
        # ready[n]: the tests of the triples whose variables are all bound once variables[n] is.
        ready: list[list[Callable[[list[str]], bool]]] = [[] for _ in variables]
        for s, p, o in query:
            positions = [variables.index(t) for t in (s, o) if t.startswith("?")]
            ready[max(positions, default=0)].append(self._test(s, p, o, variables))
        domain = self.domain()
        binding = [""] * len(variables)

        def search(n: int) -> bool:
            for value in domain:
                binding[n] = value
                if all(test(binding) for test in ready[n]) and (n + 1 == len(variables) or search(n + 1)):
                    return True
            return False

        found = set()
        for x in domain:
            binding[0] = x
            if all(test(binding) for test in ready[0]) and (len(variables) == 1 or search(1)):
                found.add(x)
        return found

    def _test(self, s: str, p: str, o: str, variables: list[str]) -> Callable[[list[str]], bool]:
        """Whether the triple is truthy under a binding (a list in the order of `variables`)."""
        objects, none = self.objects, frozenset()
        i = variables.index(s) if s.startswith("?") else None
        j = variables.index(o) if o.startswith("?") else None
        if i is None and j is None:
            return lambda b: o in objects.get((s, p), none)
        if i is None:
            objs = objects.get((s, p), none)
            return lambda b: b[j] in objs
        if j is None:
            return lambda b: o in objects.get((b[i], p), none)
        return lambda b: b[j] in objects.get((b[i], p), none)
