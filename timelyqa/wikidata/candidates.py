"""Candidates as rows: typed answers, one row per question, the quality gate on it, then released records."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import polars as pl

from timelyqa.quality import Gate
from timelyqa.reasons import Reason
from timelyqa.record import CANARY, WikidataRecord, polars_schema, record_id
from timelyqa.stages import Dropped
from timelyqa.wikidata.graph import Graph
from timelyqa.wikidata.query import to_json
from timelyqa.wikidata.synth import Candidate

ENTITY_PAGE = "https://www.wikidata.org/wiki/"

WIKIDATA_SCHEMA = polars_schema(WikidataRecord)
CANDIDATE_SCHEMA = pl.Schema({
    **{k: v for k, v in WIKIDATA_SCHEMA.items() if k not in ("verification", "split", "canary")},
    "answer_kind": pl.String(), "query_json": pl.String(),
})


class RenderReject(Reason):
    DUPLICATE_QUESTION = "duplicate_question", "another anchor gave the same question"


def candidate_frame(candidates: list[Candidate], graph: Graph, *, as_of: datetime, snapshot_sha256: str,
                    gate: Gate) -> tuple[pl.DataFrame, list[Dropped]]:
    """Rows for the candidates the gate keeps; the rest as rejects: a question another anchor gave already, or one
    the gate sends back (`gate` counts what it passes; the Wikidata rules are timelyqa.wikidata.gate.RULES).

    The gate reads the row as it will be released, before verification: both modes (dumps and API) come here."""
    rows: list[dict[str, Any]] = []
    rejects: list[Dropped] = []
    seen: set[str] = set()
    ids: set[str] = set()  # two anchors can reach one question by adding each other's constraint
    for c in sorted(candidates, key=lambda c: (c.anchor.s, c.anchor.p, c.anchor.o, c.level)):
        triples = c.query.triples()
        cid = record_id("wikidata", c.level, json.dumps(sorted(triples)), c.answer_form)
        item = {"question": c.question, "answer": c.answer.answer,
                "delta_triple": [c.anchor.s, c.anchor.p, c.anchor.o], "level": c.level}
        if cid in ids or c.question.casefold() in seen:
            reason = RenderReject.DUPLICATE_QUESTION
            rejects.append(Dropped(item, reason, f"{c.level} {cid}: {c.question!r} ({reason})"))
            continue
        seen.add(c.question.casefold())
        ids.add(cid)
        modified = graph.modified.get(c.anchor.s)
        row = {
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
        }
        if (sent_back := gate.check(row)) is None:
            rows.append(row)
        else:
            rejects.append(Dropped(item, sent_back.reason, f"{c.level} {cid} ({c.generator}): {sent_back.detail}"))
    return pl.DataFrame(rows, schema=CANDIDATE_SCHEMA, orient="row"), rejects


def records_frame(passed: pl.DataFrame, counts: dict[str, int], endpoint: str) -> pl.DataFrame:
    """Verified candidates as released rows, each with the check that passed it."""
    verification = [{"method": "sparql_unique_answer", "query": sparql, "endpoint": endpoint,
                     "result_count": counts[i], "passed": True}
                    for i, sparql in zip(passed["id"], passed["sparql"], strict=True)]
    return (passed.with_columns(pl.Series("verification", verification, dtype=WIKIDATA_SCHEMA["verification"]),
                                split=pl.lit(None, pl.String()), canary=pl.lit(CANARY))
            .select(list(WIKIDATA_SCHEMA)).cast(dict(WIKIDATA_SCHEMA)))
