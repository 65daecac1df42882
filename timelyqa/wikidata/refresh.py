"""Released Wikidata rows asked again: each row's stored SPARQL against the newest snapshot, still true or retired.

A row holds while its query still finds exactly its one answer. Otherwise it is rejected at stage `refresh`, which
retires it from the next release (publish/release.py); the change itself enters that week as a new row of its own,
from the delta. The ids that hold go to `rechecked.parquet`, so the release counts what was not re-checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa import sources
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.reasons import Dropped, Reason
from timelyqa.manifest import RECHECKED
from timelyqa.refresh import REFRESH, refresh
from timelyqa.sparql import SparqlEndpoint
from timelyqa.stages import StageWriter
from timelyqa.wikidata.query import ANSWER
from timelyqa.wikidata.values import Kind
from timelyqa.wikidata.verify import Outcome, check


class RefreshReject(Reason):
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


def check_row(endpoint: SparqlEndpoint, row: dict) -> Dropped | None:
    """None when the row's stored query still finds its one answer; else the reject that retires it. A query the
    endpoint cannot evaluate (SourceContractError) raises, and the refresh retires the row as `recheck_failed`;
    TransientSourceError propagates: the run is retried, nothing is retired for an endpoint's bad minute."""
    found = sorted({solution.get(ANSWER, "") for solution in endpoint.select(row["sparql"])})
    if len(found) == 1 and is_answer(found[0], row["answer_id"]):
        return None
    # The stored query says LIMIT 2: two answers mean "more than one", however many there are.
    now = ("no answer" if not found else f"one other answer, {found[0]}" if len(found) == 1
           else f"more than one answer ({', '.join(found)})")
    return Dropped(_item(row), RefreshReject.ANSWER_CHANGED,
                   f"released row {row['id']}: its query now finds {now}, not {row['answer_id']}")


def refresh_released(rows: pl.DataFrame, workdir: Path, *, endpoint: str | None, rdf: Path | None = None,
                     concurrency: int = 2) -> Path:
    """The stage `refresh` of a run: the released rows asked of `endpoint` (or of a local Oxigraph loaded with `rdf`,
    the new snapshot's N-Triples), one stored query a row, `concurrency` at a time; counts `rechecked` and
    `still_true`, rejects the rest, and writes the ids that hold to `workdir/rechecked.parquet` (finish_refresh puts
    it beside the questions). The incremental mode calls it with its own endpoint."""
    # The entry is found by name: it imports this module's reasons, so this module never imports it.
    ledger = StageWriter.part(sources.get("wikidata"), workdir)
    with ExitStack() as stack:
        with ledger.timed(REFRESH):  # the store's load is the refresh's cost too
            if endpoint is None:
                if rdf is None:
                    raise ValueError("refresh_released needs an endpoint or the snapshot's RDF")
                endpoint = stack.enter_context(LocalOxigraph(rdf, workdir=workdir)).query_url
        sparql = SparqlEndpoint(endpoint)
        refresh(rows, partial(check_row, sparql), ledger, failed=RefreshReject.RECHECK_FAILED, into=workdir,
                concurrency=concurrency, item=_item)
    ledger.use({"sparql_calls": sparql.calls})
    ledger.save(REFRESH)
    return workdir / RECHECKED


def _item(row: Mapping[str, Any]) -> dict[str, str]:
    return {"id": row["id"], "question": row["question"], "answer": row["answer"], "sparql": row["sparql"]}
