"""Verification in batches of candidates, each against an endpoint or a local Oxigraph of the subgraph its
questions can touch; one step then writes what passed and rejects the rest.

A batch needs the candidates' file, the snapshots' folders and the endpoints, so batches run anywhere (Prefect
tasks on a Dask cluster). A question's outcome depends only on its query and the store, so the verdicts are the
same however the candidates are cut, and a subgraph store gives the full store's (timelyqa.wikidata.subgraph).
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from timelyqa.oxigraph import LocalOxigraph
from timelyqa.reasons import Reason
from timelyqa.sparql import SparqlEndpoint
from timelyqa.stages import StageWriter
from timelyqa.wikidata import subgraph
from timelyqa.wikidata.candidates import records_frame
from timelyqa.wikidata.query import Query, from_json
from timelyqa.wikidata.snapshot import TRIPLES_DIR
from timelyqa.wikidata.source import SOURCE
from timelyqa.wikidata.values import Kind
from timelyqa.wikidata.verify import Outcome, answered_before, check, verify_all

BATCH_QUESTIONS = 20_000
"""Candidates a verification batch checks: one local store (or a share of the endpoint's time) each."""


@dataclass
class VerifyResult:
    """One batch's verdicts (None: passed), details of the failures, T1 counts, and what it cost."""

    verdicts: dict[str, Reason | None] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    label: str = ""
    calls: int = 0
    stored: dict[str, int] = field(default_factory=dict)
    """Triples of each local subgraph store ("T1", "T0"), when one was used."""


def ranges(candidates: Path, batch: int | None = None) -> list[tuple[int, int]]:
    size = batch or BATCH_QUESTIONS
    n = pl.scan_parquet(candidates).select(pl.len()).collect().item()
    return [(lo, min(size, n - lo)) for lo in range(0, n, size)] or [(0, 0)]


def verify_batch(candidates: Path, span: tuple[int, int], t1_dir: Path, t0_dir: Path, workdir: Path, *,
                 endpoint: str | None, before_endpoint: str | None, batch_size: int, concurrency: int,
                 subgraphs: bool = True) -> VerifyResult:
    """Every candidate of the slice must return exactly one answer, its own, from T1, and must not return that
    same answer alone from T0. A snapshot without an endpoint is served by a local Oxigraph: of the subgraph the
    slice's questions can touch when `subgraphs` and the snapshot has its triples, else of its whole rdf.nt."""
    frame = pl.scan_parquet(candidates).slice(*span).collect()
    rows = {row["id"]: row for row in frame.iter_rows(named=True)}
    queries = {i: from_json(json.loads(row["query_json"])) for i, row in rows.items()}
    result = VerifyResult()
    ask = dict(workdir=workdir, batch_size=batch_size, concurrency=concurrency, subgraphs=subgraphs,
               stored=result.stored)
    outcomes, result.label, result.calls = _ask(queries, endpoint, t1_dir, name="T1", **ask)  # type: ignore[arg-type]
    result.counts = {k: v.count for k, v in outcomes.items()}
    for i, r in rows.items():
        result.verdicts[i] = check(outcomes[i], Kind(r["answer_kind"]), r["answer_id"])
        if result.verdicts[i] is not None:
            o = outcomes[i]
            result.details[i] = (f"{r['level']} {i}: {o.count} answers from {result.label}"
                                 f"{' (' + o.reason + ')' if o.reason else ''}")
    # Only what passed against T1 is asked of T0: one more batched pass, over the questions that matter.
    before, before_label, before_calls = _ask({i: queries[i] for i, v in result.verdicts.items() if v is None},
                                              before_endpoint, t0_dir, name="T0", **ask)  # type: ignore[arg-type]
    result.calls += before_calls
    for i, outcome in before.items():
        r = rows[i]
        if (reason := answered_before(outcome, Kind(r["answer_kind"]), r["answer_id"])) is not None:
            result.verdicts[i] = reason
            what = f"could not be evaluated ({outcome.reason})" if outcome.count < 0 else "the same only answer"
            result.details[i] = f"{r['level']} {i}: {what} at T0, from {before_label}"
    return result


def _ask(queries: dict[str, Query], endpoint: str | None, snapshot_dir: Path, *, name: str, workdir: Path,
         batch_size: int, concurrency: int, subgraphs: bool, stored: dict[str, int]
         ) -> tuple[dict[str, Outcome], str, int]:
    """Each query's Outcome from `endpoint`, else from a local Oxigraph of the snapshot (or of the part of it the
    queries can touch); the endpoint's label for the records; the requests it took."""
    label = endpoint or f"local oxigraph ({name})"
    if not queries:
        return {}, label, 0
    with ExitStack() as stack:
        if endpoint is None:
            nt = snapshot_dir / "rdf.nt"
            if subgraphs and (snapshot_dir / TRIPLES_DIR).exists():
                nt = workdir / f"subgraph-{name}-{min(queries)}.nt"
                stack.callback(nt.unlink, missing_ok=True)  # a batch's store is of no use to any other
                stored[name] = subgraph.write(snapshot_dir, queries.values(), nt).kept
            endpoint = stack.enter_context(LocalOxigraph(nt, workdir=workdir)).query_url
        sparql = SparqlEndpoint(endpoint)
        outcomes = verify_all(sparql, queries, batch_size=batch_size, concurrency=concurrency)
    return outcomes, label, sparql.calls


def finish(candidates: Path, workdir: Path, results: list[VerifyResult], ledger: StageWriter | None = None) -> Path:
    """verified.parquet from the batches' verdicts; every failure rejected with its reason and detail."""
    ledger = ledger or StageWriter.part(SOURCE, workdir)
    with ledger.timed("verify"):
        verdicts = {i: v for r in results for i, v in r.verdicts.items()}
        details = {i: d for r in results for i, d in r.details.items()}
        counts = {i: c for r in results for i, c in r.counts.items()}
        label = next((r.label for r in results if r.label), "")
        frame = pl.read_parquet(candidates)
        ok = pl.col("id").is_in([i for i, v in verdicts.items() if v is None])
        passed, failed = frame.filter(ok), frame.filter(~ok)
        for r in failed.iter_rows(named=True):
            ledger.reject({"question": r["question"], "sparql": r["sparql"], "answer_id": r["answer_id"]},
                          verdicts[r["id"]], details[r["id"]])  # type: ignore[arg-type]
        records = records_frame(passed, counts, label)
        path = workdir / "verified.parquet"
        records.write_parquet(path)
    ledger.count("verified", records.height)
    ledger.use({"sparql_calls": sum(r.calls for r in results)})
    ledger.save("verify")
    return path
