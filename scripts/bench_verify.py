"""The verification half of `make bench`: real L1/L2/L3 questions checked in batches and one query each.

The questions are the pipeline's own: a synthetic dump pair goes through read_snapshot, compute_delta
and synthesize, and its T1 RDF is served by a local Oxigraph, as `timelyqa wikidata` runs without
an endpoint. Both ways go through the same SparqlEndpoint over HTTP.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from timelyqa.oxigraph import LocalOxigraph
from timelyqa.sparql import SparqlEndpoint
from timelyqa.wikidata import pipeline
from timelyqa.wikidata.query import ANSWER, Query, from_json
from timelyqa.wikidata.snapshot import SnapshotInfo
from timelyqa.wikidata.values import Kind
from timelyqa.wikidata.verify import Outcome, check, verify_all


@dataclass(frozen=True)
class Question:
    query: Query
    kind: Kind
    answer: str
    level: str


def questions(t0: Path, t1: Path, work: Path, *, limit: int, seed: int) -> tuple[dict[str, Question], Path, int]:
    """Up to `limit` candidate questions from the pipeline's stages, as even across levels as they come.

    Returns the questions, the T1 snapshot folder (with rdf.nt) and T1's truthy triple count.
    """
    shutil.rmtree(work, ignore_errors=True)
    t0_dir = pipeline.read_snapshot(t0, work, "t0", rdf=False)
    t1_dir = pipeline.read_snapshot(t1, work, "t1", rdf=True)
    delta = pipeline.compute_delta(t0_dir, t1_dir, work)
    frame = pl.read_parquet(pipeline.synthesize(t1_dir, delta, work, pipeline.Settings(seed=seed))).sort("id")
    levels = sorted(set(frame["level"]))
    chosen: list[dict] = []
    share = limit // max(1, len(levels))
    for level in levels:
        chosen += frame.filter(pl.col("level") == level).head(share).to_dicts()
    taken = {row["id"] for row in chosen}
    chosen += [row for row in frame.to_dicts() if row["id"] not in taken][: limit - len(chosen)]
    out = {row["id"]: Question(from_json(json.loads(row["query_json"])), Kind(row["answer_kind"]), row["answer_id"],
                               row["level"]) for row in chosen}
    return out, t1_dir, SnapshotInfo.load(t1_dir).truthy_triples


def single(endpoint: SparqlEndpoint, query: Query) -> Outcome:
    """One question by its own standalone query (`SELECT DISTINCT ?x ... LIMIT 2`), as an Outcome."""
    rows = endpoint.select(query.sparql())
    return Outcome(len(rows), rows[0].get(ANSWER) if len(rows) == 1 else None)


def agree(batched: Outcome, alone: Outcome, q: Question) -> bool:
    """The same verdict, and the same answer when there is one (LIMIT 2 caps the single count at 2)."""
    return (min(batched.count, 2) == alone.count and batched.answer == alone.answer
            and check(batched, q.kind, q.answer) == check(alone, q.kind, q.answer))


def measure(qs: dict[str, Question], t1_dir: Path, work: Path, *, batch_size: int, concurrency: int, repeat: int,
            single_limit: int | None) -> dict[str, float]:
    """Best-of-`repeat` seconds for verify_all (as the pipeline calls it) and for one query per question
    (one after the other), on the same questions; overall and per level."""
    queries = {key: q.query for key, q in qs.items()}
    keys = list(qs)  # ordered by level: a --single-limit subset takes every n-th, so every level is in it
    one_keys = keys[:: -(-len(keys) // single_limit)][:single_limit] if single_limit else keys
    levels = sorted({q.level for q in qs.values()})
    best: dict[str, float] = {}

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    with LocalOxigraph(t1_dir / "rdf.nt", workdir=work) as server:
        endpoint = SparqlEndpoint(server.query_url)
        verify_all(endpoint, queries, batch_size=batch_size, concurrency=concurrency)  # warm the store for both
        started = time.perf_counter()
        for _ in range(100):  # what any request costs here: the least one query per question can cost
            endpoint.select("SELECT ?a WHERE { BIND(1 AS ?a) }")
        roundtrip_ms = (time.perf_counter() - started) * 10
        for _ in range(repeat):
            alone: dict[str, Outcome] = {}
            spent = dict.fromkeys(levels, 0.0)
            for key in one_keys:
                started = time.perf_counter()
                alone[key] = single(endpoint, queries[key])
                spent[qs[key].level] += time.perf_counter() - started
            keep("single", sum(spent.values()))
            for level in levels:
                keep(f"single_{level}", spent[level])
            calls = endpoint.calls
            started = time.perf_counter()
            batched = verify_all(endpoint, queries, batch_size=batch_size, concurrency=concurrency)
            keep("batched", time.perf_counter() - started)
            requests = endpoint.calls - calls
            for level in levels:  # each level alone, to show which shapes batching helps least
                subset = {key: query for key, query in queries.items() if qs[key].level == level}
                started = time.perf_counter()
                verify_all(endpoint, subset, batch_size=batch_size, concurrency=concurrency)
                keep(f"batched_{level}", time.perf_counter() - started)
    agreeing = sum(agree(batched[key], alone[key], qs[key]) for key in one_keys)
    passed = sum(check(batched[key], q.kind, q.answer) is None for key, q in qs.items())
    batched_qps, single_qps = len(qs) / best["batched"], len(one_keys) / best["single"]
    figures = {"verify_questions": len(qs), "verify_single_questions": len(one_keys),
               "verify_batched_seconds": round(best["batched"], 4), "verify_single_seconds": round(best["single"], 4),
               "verify_batched_requests": requests, "verify_batched_qps": round(batched_qps, 1),
               "verify_single_qps": round(single_qps, 1), "verify_speedup": round(batched_qps / single_qps, 2),
               "verify_agreeing": agreeing, "verify_passed": passed, "verify_roundtrip_ms": round(roundtrip_ms, 3)}
    for level in levels:
        n = sum(q.level == level for q in qs.values())
        n_single = sum(qs[key].level == level for key in one_keys)
        figures[f"verify_questions_{level}"] = n
        figures[f"verify_batched_qps_{level}"] = round(n / best[f"batched_{level}"], 1)
        if n_single:  # --single-limit may leave a level out of the one-by-one run
            figures[f"verify_single_qps_{level}"] = round(n_single / best[f"single_{level}"], 1)
            figures[f"verify_speedup_{level}"] = round(figures[f"verify_batched_qps_{level}"]
                                                       / figures[f"verify_single_qps_{level}"], 2)
    return figures
