"""The delta of two triple tables against a brute-force reference built from Python sets, and bucket by bucket
against the in-memory delta."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from tests.worldgen import make_world, write_dump
from timelyqa.wikidata import pipeline, snapshot
from timelyqa.wikidata.delta import DELTA_SCHEMA, compute_delta
from timelyqa.wikidata.snapshot import TRIPLES_SCHEMA, SnapshotInfo, buckets_for, read_bucket, read_snapshot

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


# The delta a bucket at a time, as a full dump pair runs it ---------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"


def snapshot_pair(tmp_path: Path, source: str) -> tuple[Path, Path]:
    if source == "fixtures":
        return FIXTURES / "t0.json.gz", FIXTURES / "t1.json.gz"
    w = make_world(int(source.removeprefix("world")))
    return write_dump(w.t0, tmp_path / "t0.json.gz"), write_dump(w.t1, tmp_path / "t1.json.gz")


def read(dump: Path, folder: Path, buckets: int) -> Path:
    read_snapshot(dump, folder, rdf=False, reject=lambda *dropped: None, buckets=buckets)
    return folder


@pytest.mark.parametrize("source", ["fixtures", "world3", pytest.param("world17", marks=pytest.mark.slow)])
def test_the_bucketed_delta_is_the_in_memory_delta(tmp_path: Path, source: str) -> None:
    t0, t1 = snapshot_pair(tmp_path, source)
    whole0, whole1 = read(t0, tmp_path / "w0", 1), read(t1, tmp_path / "w1", 1)
    expected = compute_delta(pl.read_parquet(whole0 / "triples.parquet"), pl.read_parquet(whole1 / "triples.parquet"))
    assert expected.height > 20
    for n0, n1 in ((8, 8), (4, 32), (16, 2)):  # counts that differ still nest, and pair up
        work = tmp_path / f"out-{n0}-{n1}" / "work"
        got = pipeline.compute_delta(read(t0, work / "t0", n0), read(t1, work / "t1", n1), work)
        assert pl.read_parquet(got).equals(expected), (n0, n1)
        assert not (work / "delta-buckets").exists()


def test_buckets_hold_each_triple_once_by_subject_in_dump_order(tmp_path: Path) -> None:
    dump = FIXTURES / "t1.json.gz"
    whole = pl.read_parquet(read(dump, tmp_path / "one", 1) / "triples.parquet")
    folder = read(dump, tmp_path / "eight", 8)
    assert sorted(p.name for p in (folder / "triples.parquet").iterdir()) == [f"{b:04d}.parquet" for b in range(8)]
    parts = [read_bucket(folder, b, 8, rows=True) for b in range(8)]
    assert sum(p.height for p in parts) == whole.height
    for b, part in enumerate(parts):
        assert all(int(s[1:]) % 8 == b for s in part["s"].unique())
        assert part["row"].is_sorted() and whole[part["row"].to_list()].equals(part.drop("row"))
    # Graph reads the snapshot's triples as one table, whatever the buckets.
    assert pl.scan_parquet(folder / "triples.parquet").collect().sort(pl.all()).equals(whole.sort(pl.all()))


def test_bucket_counts_grow_with_the_dump_in_powers_of_two() -> None:
    mb = 1 << 20
    assert [buckets_for(n) for n in (0, 1, 256 * mb, 256 * mb + 1, 700 * mb, 10_000 * mb, 140_000 * mb)] == [
        1, 1, 1, 2, 4, 64, 256]


@pytest.mark.slow  # two pipeline runs through a local Oxigraph
def test_the_pipeline_gives_the_same_questions_however_many_buckets(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    t0, t1 = FIXTURES / "t0.json.gz", FIXTURES / "t1.json.gz"
    pipeline.run(t0, t1, tmp_path / "one")
    monkeypatch.setattr(snapshot, "BUCKET_BYTES", 2048)  # the fixture dumps (about 50 KB) in 32 buckets
    pipeline.run(t0, t1, tmp_path / "many")
    assert SnapshotInfo.load(tmp_path / "many" / "work" / "t1").buckets == 32
    one, many = (pl.read_parquet(tmp_path / d / "questions.parquet") for d in ("one", "many"))
    assert one.height > 0 and one.equals(many)
    for name in ("delta.parquet", "candidates.parquet"):
        one_file, many_file = (tmp_path / d / "work" / name for d in ("one", "many"))
        assert pl.read_parquet(one_file).equals(pl.read_parquet(many_file))
