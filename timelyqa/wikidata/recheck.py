"""Released Wikidata rows asked again: each row's stored SPARQL against the newest snapshot, still true or retired.

A row holds while its query still finds exactly its one answer. Otherwise it is rejected at stage `refresh`, which
retires it from the next release (publish/release.py); the change itself enters that week as a new row of its own,
from the delta. The ids that hold go to `rechecked.parquet`, so the release counts what was not re-checked.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import polars as pl

from timelyqa import sources
from timelyqa.errors import SourceContractError
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.reasons import Reason
from timelyqa.released import RECHECKED, write_rechecked
from timelyqa.sparql import SparqlEndpoint
from timelyqa.stages import Dropped, StageWriter
from timelyqa.wikidata.query import ANSWER
from timelyqa.wikidata.values import Kind
from timelyqa.wikidata.verify import Outcome, check


class RecheckReject(Reason):
    ANSWER_CHANGED = ("answer_changed", "a released row's SPARQL query now finds another answer, none, or several: "
                      "the row is retired (the change is asked about in a new row)")
    RECHECK_FAILED = ("recheck_failed", "a released row's SPARQL query could not be evaluated on the new snapshot: "
                      "the row is retired, since it can no longer be checked")


def is_answer(got: str, form: str) -> bool:
    """Whether a query's one answer (an IRI or a literal's lexical form) is the value `form` states. The row keeps
    the form, not its kind: a form reads as one kind only, so trying each kind finds the one it is."""
    for kind in Kind:
        try:
            if check(Outcome(1, got), kind, form) is None:
                return True
        except (ValueError, IndexError):  # the form is not of this kind
            continue
    return False


def recheck_row(endpoint: SparqlEndpoint, row: dict) -> Dropped | None:
    """None when the row's stored query still finds its one answer; else the reject that retires it.
    TransientSourceError propagates: the run is retried, nothing is retired for an endpoint's bad minute."""
    try:
        found = sorted({solution.get(ANSWER, "") for solution in endpoint.select(row["sparql"])})
    except SourceContractError as exc:
        return Dropped(_item(row), RecheckReject.RECHECK_FAILED, f"released row {row['id']}: {exc}")
    if len(found) == 1 and is_answer(found[0], row["answer_id"]):
        return None
    # The stored query says LIMIT 2: two answers mean "more than one", however many there are.
    now = ("no answer" if not found else f"one other answer, {found[0]}" if len(found) == 1
           else f"more than one answer ({', '.join(found)})")
    return Dropped(_item(row), RecheckReject.ANSWER_CHANGED,
                   f"released row {row['id']}: its query now finds {now}, not {row['answer_id']}")


def recheck(rows: pl.DataFrame, endpoint: SparqlEndpoint, *, concurrency: int = 2) -> tuple[list[str], list[Dropped]]:
    """The ids of the rows that hold, and a reject for each that does not, in id order. Queries are sent one a
    row (each is its own stored SPARQL), `concurrency` at a time."""
    ordered = rows.sort("id").select("id", "sparql", "answer_id", "question", "answer").to_dicts()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        verdicts = list(pool.map(lambda row: recheck_row(endpoint, row), ordered))
    holds = [row["id"] for row, verdict in zip(ordered, verdicts, strict=True) if verdict is None]
    return holds, [verdict for verdict in verdicts if verdict is not None]


def recheck_released(rows: pl.DataFrame, workdir: Path, *, endpoint: str | None, rdf: Path | None = None,
                     concurrency: int = 2) -> Path:
    """The stage `refresh` of a run: the released rows asked of `endpoint` (or of a local Oxigraph loaded with `rdf`,
    the new snapshot's N-Triples); counts `rechecked` and `still_true`, rejects the rest, and writes the ids that
    hold to `workdir/rechecked.parquet` (finish_rechecked puts it beside the questions). The incremental mode calls
    it with its own endpoint."""
    # The entry is found by name: it imports this module's reasons, so this module never imports it.
    ledger = StageWriter(sources.get("wikidata"), workdir.parent, work=workdir)
    with ledger.timed("refresh"), ExitStack() as stack:
        if endpoint is None:
            if rdf is None:
                raise ValueError("recheck_released needs an endpoint or the snapshot's RDF")
            endpoint = stack.enter_context(LocalOxigraph(rdf, workdir=workdir)).query_url
        sparql = SparqlEndpoint(endpoint)
        holds, dropped = recheck(rows, sparql, concurrency=concurrency) if rows.height else ([], [])
        ledger.reject_all(dropped)
    ledger.count("rechecked", rows.height)
    ledger.count("still_true", len(holds))
    ledger.use({"sparql_calls": sparql.calls})
    ledger.save("refresh")
    write_rechecked(workdir, holds)
    return workdir / RECHECKED


def _item(row: dict) -> dict[str, str]:
    return {"id": row["id"], "question": row["question"], "answer": row["answer"], "sparql": row["sparql"]}

