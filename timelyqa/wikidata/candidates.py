"""Candidates as rows: typed answers, the checks on the rendered question, then released records."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import polars as pl

from timelyqa.reasons import Reason
from timelyqa.record import CANARY, WikidataRecord, polars_schema, record_id
from timelyqa.stages import Dropped
from timelyqa.wikidata.graph import Graph
from timelyqa.wikidata.query import to_json
from timelyqa.wikidata.synth import Candidate

ENTITY_PAGE = "https://www.wikidata.org/wiki/"
RAW_ID = re.compile(r"\b[QPL][1-9][0-9]*\b")

WIKIDATA_SCHEMA = polars_schema(WikidataRecord)
CANDIDATE_SCHEMA = pl.Schema({
    **{k: v for k, v in WIKIDATA_SCHEMA.items() if k not in ("verification", "split", "canary")},
    "answer_kind": pl.String(), "query_json": pl.String(),
})


class RenderReject(Reason):
    RAW_ID_IN_QUESTION = "raw_id_in_question", "the question shows a raw Wikidata id (Q.., P..) for want of a label"
    ANSWER_IN_QUESTION = "answer_in_question", "the question contains its answer"
    DUPLICATE_QUESTION = "duplicate_question", "another anchor gave the same question"


def candidate_frame(candidates: list[Candidate], graph: Graph, *, as_of: datetime,
                    snapshot_sha256: str) -> tuple[pl.DataFrame, list[Dropped]]:
    """Rows for the candidates that read well; the rest as rejects (answer in question, raw id, duplicate)."""
    rows: list[dict[str, Any]] = []
    rejects: list[Dropped] = []
    seen: dict[str, str] = {}
    ids: set[str] = set()  # two anchors can reach one question by adding each other's constraint
    for c in sorted(candidates, key=lambda c: (c.anchor.s, c.anchor.p, c.anchor.o, c.level)):
        answer = c.answer.answer
        triples = c.query.triples()
        cid = record_id("wikidata", c.level, json.dumps(sorted(triples)), c.answer_form)
        reason = RenderReject.DUPLICATE_QUESTION if cid in ids else _reading_drop(c.question, answer, seen)
        item = {"question": c.question, "answer": answer, "delta_triple": [c.anchor.s, c.anchor.p, c.anchor.o]}
        if reason:
            rejects.append(Dropped(item, reason, f"{c.level} {cid}: {c.question!r} ({reason})"))
            continue
        seen[c.question.casefold()] = cid
        ids.add(cid)
        modified = graph.modified.get(c.anchor.s)
        rows.append({
            "id": cid, "question": c.question, **c.answer.row(),
            "source": "wikidata", "level": c.level,
            "event_date": modified.date() if isinstance(modified, datetime) else as_of.date(),
            "as_of": as_of,
            "evidence": [{"url": ENTITY_PAGE + c.anchor.s, "title": graph.labels[c.anchor.s],
                          "revision": f"dump-sha256:{snapshot_sha256}", "fetched_at": as_of,
                          "sha256": snapshot_sha256}],
            "generator": c.generator, "answer_id": c.answer_form, "query_triples": triples,
            "delta_triple": [c.anchor.s, c.anchor.p, c.anchor.o], "sparql": c.query.sparql(),
            "answer_kind": c.answer_kind.value, "query_json": json.dumps(to_json(c.query)),
        })
    return pl.DataFrame(rows, schema=CANDIDATE_SCHEMA, orient="row"), rejects


def _reading_drop(question: str, answer: str, seen: dict[str, str]) -> RenderReject | None:
    if RAW_ID.search(question):
        return RenderReject.RAW_ID_IN_QUESTION
    if answer.casefold() in question.casefold():
        return RenderReject.ANSWER_IN_QUESTION
    if question.casefold() in seen:
        return RenderReject.DUPLICATE_QUESTION
    return None


def records_frame(passed: pl.DataFrame, counts: dict[str, int], endpoint: str) -> pl.DataFrame:
    """Verified candidates as released rows, each with the check that passed it."""
    verification = [{"method": "sparql_unique_answer", "query": sparql, "endpoint": endpoint,
                     "result_count": counts[i], "passed": True}
                    for i, sparql in zip(passed["id"], passed["sparql"], strict=True)]
    return (passed.with_columns(pl.Series("verification", verification, dtype=WIKIDATA_SCHEMA["verification"]),
                                split=pl.lit(None, pl.String()), canary=pl.lit(CANARY))
            .select(list(WIKIDATA_SCHEMA)).cast(dict(WIKIDATA_SCHEMA)))
