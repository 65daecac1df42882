"""A small source of a test's own, the way a new engineer adds one: this module and its registry entry, nothing else.

Its input is JSON lines of city facts (`{"city", "mayor", "since"}`); each line with a mayor becomes one
question. It counts, rejects and keeps through the shared stage writer and says nothing else about itself
anywhere but in `SOURCE`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.manifest import Input, Manifest
from timelyqa.reasons import Reason
from timelyqa.record import QARecord, Verification, record_id
from timelyqa.sources import Card, Deployment, GroupKey, Progress, SourceSpec, Stage
from timelyqa.stages import StageWriter

AS_OF = datetime(2026, 6, 1, tzinfo=UTC)


class ToyRecord(QARecord):
    city: str


class LineReject(Reason):
    NOT_JSON = "not_json", "a line of the input is not JSON"
    NO_MAYOR = "no_mayor", "the line names no mayor"


def run(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    (facts,) = inputs
    ledger = StageWriter("toy", out)
    for n, line in enumerate(facts.read_text(encoding="utf-8").splitlines(), start=1):
        ledger.count("lines")
        try:
            fact = json.loads(line)
        except json.JSONDecodeError:
            ledger.reject(line, LineReject.NOT_JSON, f"{facts} line {n}: not JSON")
            continue
        if not fact.get("mayor"):
            ledger.reject(fact, LineReject.NO_MAYOR, f"{facts} line {n}: {fact['city']} has no mayor")
            continue
        ledger.keep(ToyRecord(
            id=record_id("toy", fact["city"], fact["since"]), question=f"Who is the mayor of {fact['city']}?",
            answer=fact["mayor"], answer_type="entity",
            source="toy", level="easy", event_date=date.fromisoformat(fact["since"]),
            as_of=AS_OF, verification=Verification(method="stated", query="", endpoint=str(facts), result_count=1,
                                                   passed=True),
            generator="toy_mayor_v1", city=fact["city"]))
    return ledger.finish(as_of=AS_OF, inputs={"facts": Input(path=str(facts))}, settings={})


SOURCE = SourceSpec(
    name="toy",
    record=ToyRecord,
    group_key=GroupKey("city", pl.col("city"), "the city (`city`)"),
    licence="cc-by-4.0",
    card=Card("mayors of toy cities", ("## Toy: mayors", "", "Each `toy` row asks who a city's mayor is.", "")),
    stages=(Stage("read", ("lines",), (LineReject,)),),
    deployment=Deployment("toy-daily", "flows.toy:toy_flow", "0 1 * * *"),
    run="tests.toy_source:run",
    demo_inputs=("tests/fixtures/toy/facts.jsonl",),
    fixtures=("tests/fixtures/toy/facts.jsonl",),
)
