"""The delta of two triple tables against a brute-force reference built from Python sets."""

from __future__ import annotations

import random
from collections import defaultdict

import polars as pl
import pytest

from timelyqa.wikidata.delta import DELTA_SCHEMA, compute_delta
from timelyqa.wikidata.snapshot import TRIPLES_SCHEMA

Row = tuple[str, str, str, str]
Expected = dict[tuple[str, str, str], tuple[str, str, tuple[str, ...]]]


def frame(rows: list[Row]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=TRIPLES_SCHEMA, orient="row")


def reference(t0: list[Row], t1: list[Row]) -> Expected:
    """(s, p, o) -> (kind, change, before) by the definition, one entry per distinct T1 triple that counts."""
    before: dict[tuple[str, str], set[str]] = defaultdict(set)
    after: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s, p, o, _ in t0:
        before[(s, p)].add(o)
    for s, p, o, _ in t1:
        after[(s, p)].add(o)
    out: Expected = {}
    for s, p, o, kind in t1:
        if (s, p, o) in out:
            continue
        old = before.get((s, p), set())
        if o not in old:
            out[(s, p, o)] = (kind, "insert", tuple(sorted(old)))
        elif old - after[(s, p)]:
            out[(s, p, o)] = (kind, "update", tuple(sorted(old)))
    return out


def delta(t0: list[Row], t1: list[Row]) -> Expected:
    got = compute_delta(frame(t0), frame(t1))
    assert got.schema == DELTA_SCHEMA
    rows: Expected = {(s, p, o): (kind, change, tuple(b)) for s, p, o, kind, change, b in got.iter_rows()}
    assert len(rows) == got.height, "one row per (s, p, o)"
    return rows


def random_tables(seed: int) -> tuple[list[Row], list[Row]]:
    """Few subjects, properties and objects, so (s, p) pairs keep, lose, gain and swap objects often."""
    rng = random.Random(seed)
    subjects, props = ["Q1", "Q2", "Q3", "Q4"], ["P17", "P54", "P1082"]
    objects = [("Q10", "entity"), ("Q11", "entity"), ("Q12", "entity"), ("+163900", "quantity"),
               ("+1.8 Q11573", "quantity"), ("Riyadh@en", "monolingualtext"), ("+2026-01-01T00:00:00Z/11", "time")]

    def draw(n: int) -> list[Row]:
        return [(rng.choice(subjects), rng.choice(props), *rng.choice(objects)) for _ in range(n)]

    t0 = [] if rng.random() < 0.1 else draw(rng.randint(1, 18))
    t1 = [] if rng.random() < 0.1 else [t for t in t0 if rng.random() < 0.75] + draw(rng.randint(0, 6))
    t1 += rng.sample(t1, min(len(t1), rng.randint(0, 3)))  # duplicate statements of one value
    t0 += rng.sample(t0, min(len(t0), rng.randint(0, 2)))
    rng.shuffle(t1)
    return t0, t1


@pytest.mark.parametrize("seed", range(80))
def test_delta_matches_the_set_reference_on_random_tables(seed: int) -> None:
    t0, t1 = random_tables(seed)
    assert delta(t0, t1) == reference(t0, t1)


def test_empty_tables() -> None:
    row = ("Q1", "P17", "Q10", "entity")
    assert delta([], []) == {}
    assert delta([row], []) == {}
    assert delta([], [row, row]) == {("Q1", "P17", "Q10"): ("entity", "insert", ())}
    assert delta([row], [row]) == {}


def test_a_pair_that_lost_an_object_is_an_update_listing_its_t0_objects() -> None:
    t0 = [("Q1", "P54", "Q10", "entity"), ("Q1", "P54", "Q11", "entity"), ("Q2", "P54", "Q10", "entity")]
    t1 = [("Q1", "P54", "Q10", "entity"), ("Q2", "P54", "Q10", "entity")]
    assert delta(t0, t1) == {("Q1", "P54", "Q10"): ("entity", "update", ("Q10", "Q11"))}


def test_a_pair_that_only_gained_keeps_only_its_new_objects() -> None:
    t0 = [("Q1", "P54", "Q10", "entity")]
    t1 = [("Q1", "P54", "Q10", "entity"), ("Q1", "P54", "Q11", "entity"), ("Q1", "P54", "Q11", "entity")]
    assert delta(t0, t1) == {("Q1", "P54", "Q11"): ("entity", "insert", ("Q10",))}


def test_a_swapped_value_is_an_insert_and_a_new_pair_has_no_before() -> None:
    t0 = [("Q1", "P1082", "+100", "quantity")]
    t1 = [("Q1", "P1082", "+120", "quantity"), ("Q1", "P17", "Q10", "entity")]
    assert delta(t0, t1) == {("Q1", "P1082", "+120"): ("quantity", "insert", ("+100",)),
                             ("Q1", "P17", "Q10"): ("entity", "insert", ())}


@pytest.mark.parametrize(("old", "new"), [
    (("Q1", "P54", "Q10"), ("Q1P", "54", "Q10")),       # the same characters, split differently
    (("Q1", "P5", "4Q10"), ("Q1", "P54", "Q10")),
    (("Q1", "P54", ""), ("Q1", "P54", " ")),
    (("Q1", "P54", "a\x1fb"), ("Q1", "P54\x1fa", "b")),  # a separator inside a value
])
def test_keys_that_read_alike_are_still_different(old: tuple[str, str, str], new: tuple[str, str, str]) -> None:
    t0, t1 = [(*old, "string")], [(*new, "string")]
    assert delta(t0, t1) == reference(t0, t1)
    assert new in delta(t0, t1)
