"""Verification against the subgraph of a snapshot that the questions can touch gives the full store's outcomes:
the same answer counts and answers for every query (unique, several answers, none), at T1 and at T0, on
generated worlds where both stores fit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.worldgen import make_world, write_dump
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.sparql import SparqlEndpoint
from timelyqa.wikidata import pipeline, subgraph
from timelyqa.wikidata.pipeline import Settings
from timelyqa.wikidata.query import Const, Pattern, Query, Var, from_json
from timelyqa.wikidata.values import Kind
from timelyqa.wikidata.verify import Outcome, verify_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from synthetic_dumps import dump_pair  # noqa: E402


def read_pair(t0: Path, t1: Path, work: Path) -> tuple[Path, Path, Path]:
    a = pipeline.read_snapshot(t0, work, "t0", rdf=True)
    b = pipeline.read_snapshot(t1, work, "t1", rdf=True)
    return a, b, pipeline.compute_delta(a, b, work)


def variants(queries: list[Query]) -> list[Query]:
    """The questions' queries and harder cases beside them: each with one pattern left out (several answers, a
    hop left dangling), and with its first constant swapped for another query's (often no answer)."""
    out = list(queries)
    consts = [pt.o for q in queries for pt in q.patterns if isinstance(pt.o, Const) and pt.o.kind is Kind.ENTITY]
    for n, q in enumerate(queries):
        if len(q.patterns) > 1:
            out += [Query(q.patterns[:i] + q.patterns[i + 1:]) for i in range(len(q.patterns))]
        first = q.patterns[0]
        if isinstance(first.o, Const) and consts:
            out.append(Query((Pattern(first.s, first.p, consts[n % len(consts)]), *q.patterns[1:])))
    # A chain no constant reaches on one side: `?x p ?y` read through ?y's constant only.
    out.append(Query((Pattern(Var("x"), "P54", Var("y1")), Pattern(Var("y1"), "P17", Const(Kind.ENTITY, "Q30")))))
    return list(dict.fromkeys(out))


def outcomes(nt: Path, work: Path, queries: dict[str, Query]) -> dict[str, Outcome]:
    with LocalOxigraph(nt, workdir=work) as store:
        return verify_all(SparqlEndpoint(store.query_url), queries, batch_size=50)


def same_outcomes(snapshot: Path, work: Path, queries: list[Query]) -> tuple[dict[str, Outcome], int]:
    keyed = {f"q{i:05d}": q for i, q in enumerate(queries)}
    full = outcomes(snapshot / "rdf.nt", work, keyed)
    nt = work / f"sub-{snapshot.name}.nt"
    stats = subgraph.write(snapshot, queries, nt)
    assert outcomes(nt, work, keyed) == full
    return full, stats.kept


@pytest.mark.slow  # four Oxigraph stores over two generated worlds
@pytest.mark.parametrize("seed", [2, 9])
def test_the_subgraph_gives_the_full_stores_outcomes(tmp_path: Path, seed: int) -> None:
    w = make_world(seed)
    t0, t1, delta = read_pair(write_dump(w.t0, tmp_path / "t0.json.gz"), write_dump(w.t1, tmp_path / "t1.json.gz"),
                              tmp_path / "work")
    candidates = pipeline.synthesize(t1, delta, tmp_path / "work", Settings())
    queries = variants([from_json(json.loads(t)) for t in pl.read_parquet(candidates)["query_json"]])
    assert len(queries) > 100
    for snap in (t1, t0):
        full, kept = same_outcomes(snap, tmp_path / "work", queries)
        counts = {o.count for o in full.values()}
        assert {0, 1} <= {min(c, 1) for c in counts} and max(counts) > 1  # none, one and several answers asked
        total = pl.scan_parquet(snap / "triples.parquet").select(pl.len()).collect().item()
        assert 0 < kept < total  # what a user of a full dump needs: only what the questions touch


@pytest.mark.slow  # a synthetic dump pair, read and verified twice through Oxigraph
def test_the_pipeline_gives_the_same_questions_and_rejects_on_a_subgraph(tmp_path: Path) -> None:
    pair = dump_pair(tmp_path / "dumps", triples=6000, seed=4)
    out = {}
    for name, subgraphs in (("full", False), ("sub", True)):
        pipeline.run(pair.t0, pair.t1, tmp_path / name, settings=Settings(subgraphs=subgraphs, verify_batch=40))
        out[name] = [pl.read_parquet(tmp_path / name / f) for f in ("questions.parquet", "rejected.parquet")]
    assert out["full"][0].height > 0 and out["full"][0].equals(out["sub"][0])
    assert out["full"][1].sort(pl.all()).equals(out["sub"][1].sort(pl.all()))
    assert not list((tmp_path / "sub" / "work").glob("subgraph-*.nt"))  # each batch's store removed with it


def test_extraction_walks_hop_by_hop_and_keeps_only_solutions(tmp_path: Path) -> None:
    folder = tmp_path / "snap"
    (folder / "triples.parquet").mkdir(parents=True)
    rows = [("Q1", "P54", "Q10"), ("Q2", "P54", "Q11"), ("Q3", "P54", "Q12"), ("Q10", "P17", "Q30"),
            ("Q11", "P17", "Q30"), ("Q12", "P17", "Q31"), ("Q1", "P27", "Q30"), ("Q4", "P27", "Q30"),
            ("Q9", "P31", "Q5")]
    pl.DataFrame([(*r, "entity") for r in rows], schema=["s", "p", "o", "kind"], orient="row").write_parquet(
        folder / "triples.parquet" / "0000.parquet")
    x, y = Var("x"), Var("y1")
    q = Query((Pattern(x, "P27", Const(Kind.ENTITY, "Q30")), Pattern(x, "P54", y),
               Pattern(y, "P17", Const(Kind.ENTITY, "Q30"))))
    found, stats = subgraph.extract(folder, [q])
    # Q1 is the only solution: Q2's club is in Q30 but Q2 has no P27 Q30; Q4 plays nowhere; Q3's club is in Q31.
    assert set(found) == {("Q1", "P27", "Q30"), ("Q1", "P54", "Q10"), ("Q10", "P17", "Q30")}
    assert stats.unbounded == 0 and stats.rounds == 2
    assert "<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P54>" in subgraph.ntriples(found)
