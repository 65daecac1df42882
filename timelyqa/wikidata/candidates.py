"""Candidates as rows: typed answers, one row per question, the quality gate on it, then released records."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import polars as pl

from timelyqa.quality import Gate
from timelyqa.reasons import Dropped, Reason
from timelyqa.record import CANARY, WikidataRecord, polars_schema, record_id
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


SORT_KEY = "tqa_sort_key"
"""A rendered row's place among all candidates: its anchor's (s, p, o) and level, joined by NUL (which sorts
before every character an id or a Wikidata string holds), so that batches of rows merge in the order one sort of
all the candidates gives."""


def candidate_frame(candidates: list[Candidate], graph: Graph, *, as_of: datetime, snapshot_sha256: str,
                    gate: Gate) -> tuple[pl.DataFrame, list[Dropped]]:
    """Rows for the candidates the gate keeps; the rest as rejects: a question another anchor gave already, or one
    the gate sends back (`gate` counts what it passes; the Wikidata rules are timelyqa.wikidata.gate.RULES).

    The gate reads the row as it will be released, before verification: both modes (dumps and API) come here.
    The same as rendered_rows of every batch of candidates, merged by SORT_KEY, then chosen (Chooser)."""
    chooser = Chooser(gate)
    frame = chooser.choose(rendered_rows(candidates, graph, as_of=as_of, snapshot_sha256=snapshot_sha256))
    return frame, chooser.rejects


def rendered_rows(candidates: list[Candidate], graph: Graph, *, as_of: datetime,
                  snapshot_sha256: str) -> pl.DataFrame:
    """Every candidate as its row (CANDIDATE_SCHEMA and SORT_KEY), sorted by SORT_KEY; nothing dropped yet."""
    rows: list[dict[str, Any]] = []
    for c in sorted(candidates, key=lambda c: (c.anchor.s, c.anchor.p, c.anchor.o, c.level)):
        triples = c.query.triples()
        cid = record_id("wikidata", c.level, json.dumps(sorted(triples)), c.answer_form)
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
            SORT_KEY: "\x00".join((c.anchor.s, c.anchor.p, c.anchor.o, c.level)),
        })
    return pl.DataFrame(rows, schema={**CANDIDATE_SCHEMA, SORT_KEY: pl.String()}, orient="row")


class Chooser:
    """Rendered rows, fed in SORT_KEY order (one frame or many), down to the candidates kept: a question another
    anchor gave already is dropped, then the gate reads the rest. Holds the ids and questions kept, not the rows."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.rejects: list[Dropped] = []
        self.seen: set[str] = set()
        self.ids: set[str] = set()  # two anchors can reach one question by adding each other's constraint

    def choose(self, rendered: pl.DataFrame) -> pl.DataFrame:
        kept: list[dict[str, Any]] = []
        for row in rendered.select(*CANDIDATE_SCHEMA).iter_rows(named=True):
            cid, level = row["id"], row["level"]
            item = {"question": row["question"], "answer": row["answer"], "delta_triple": row["delta_triple"],
                    "level": level}
            if cid in self.ids or row["question"].casefold() in self.seen:
                reason = RenderReject.DUPLICATE_QUESTION
                self.rejects.append(Dropped(item, reason, f"{level} {cid}: {row['question']!r} ({reason})"))
                continue
            self.seen.add(row["question"].casefold())
            self.ids.add(cid)
            if (sent_back := self.gate.check(row)) is None:
                kept.append(row)
            else:
                self.rejects.append(Dropped(item, sent_back.reason,
                                            f"{level} {cid} ({row['generator']}): {sent_back.detail}"))
        return pl.DataFrame(kept, schema=CANDIDATE_SCHEMA, orient="row")


def records_frame(passed: pl.DataFrame, counts: dict[str, int], endpoint: str) -> pl.DataFrame:
    """Verified candidates as released rows, each with the check that passed it."""
    verification = [{"method": "sparql_unique_answer", "query": sparql, "endpoint": endpoint,
                     "result_count": counts[i], "passed": True}
                    for i, sparql in zip(passed["id"], passed["sparql"], strict=True)]
    return (passed.with_columns(pl.Series("verification", verification, dtype=WIKIDATA_SCHEMA["verification"]),
                                split=pl.lit(None, pl.String()), canary=pl.lit(CANARY))
            .select(list(WIKIDATA_SCHEMA)).cast(dict(WIKIDATA_SCHEMA)))
