"""The record schema is declared once in pydantic and once in polars; these keep the two equal."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest
from pydantic import ValidationError

from timelyqa.sources import sources

from timelyqa.record import (CANARY, RECORD_SCHEMA, REJECTED_SCHEMA, Evidence, QARecord, Rejected, Verification,
                             WikidataRecord, polars_schema, record_id, to_frame)


def test_the_common_columns_are_the_documented_ones() -> None:
    """The record of shared/DESIGN.md, column by column, in the types a release's readers rely on."""
    evidence = pl.Struct({"url": pl.String(), "title": pl.String(), "revision": pl.String(),
                          "fetched_at": pl.Datetime("us", "UTC"), "sha256": pl.String()})
    verification = pl.Struct({"method": pl.String(), "query": pl.String(), "endpoint": pl.String(),
                              "result_count": pl.Int64(), "passed": pl.Boolean()})
    assert RECORD_SCHEMA == pl.Schema({
        "id": pl.String(), "question": pl.String(), "answer": pl.String(), "answer_aliases": pl.List(pl.String()),
        "answer_type": pl.String(), "answer_value": pl.Struct({
            "number": pl.String(), "precision": pl.Int64(), "unit": pl.String(), "scale": pl.Int64(),
            "date": pl.String(), "date_precision": pl.String(), "items": pl.List(pl.String())}),
        "source": pl.String(), "level": pl.String(), "event_date": pl.Date(), "as_of": pl.Datetime("us", "UTC"),
        "split": pl.String(), "evidence": pl.List(evidence), "verification": verification,
        "generator": pl.String(), "canary": pl.String()})


@pytest.mark.parametrize("name", sorted(sources()))
def test_every_registered_source_schema_starts_with_the_common_columns(name: str) -> None:
    """A source's record model may add columns, never change or reorder the common ones (its model could)."""
    columns = list(sources()[name].schema.items())
    assert columns[: len(RECORD_SCHEMA)] == list(RECORD_SCHEMA.items())


def _row() -> WikidataRecord:
    return WikidataRecord(
        id=record_id("wikidata", "L1", "Q1"), question="Who is the head coach of Riyadh Falcons FC?",
        answer="Tomasz Wielki", answer_aliases=["T. Wielki"], answer_type="entity", source="wikidata", level="L1",
        event_date=date(2026, 10, 3), as_of=datetime(2026, 11, 10, 10, tzinfo=UTC),
        evidence=[Evidence(url="https://www.wikidata.org/wiki/Q9200003", title="Riyadh Falcons FC")],
        verification=Verification(method="sparql_unique_answer", query="SELECT ...", endpoint="local",
                                  result_count=1, passed=True),
        generator="wikidata_l1_v1", answer_id="Q9400013", query_triples=[["Q9200003", "P286", "?x"]],
        delta_triple=["Q9200003", "P286", "Q9400013"], sparql="SELECT ...")


def test_rows_survive_parquet_and_validate_back(tmp_path: Path) -> None:
    row = _row()
    to_frame([row], WikidataRecord).write_parquet(tmp_path / "q.parquet")
    back = pl.read_parquet(tmp_path / "q.parquet")
    assert back.schema == polars_schema(WikidataRecord)
    assert WikidataRecord.model_validate(back.row(0, named=True)) == row
    assert back["canary"].to_list() == [CANARY]


def test_empty_frames_keep_their_schema() -> None:
    assert to_frame([], Rejected).schema == REJECTED_SCHEMA == pl.Schema(
        {"source": pl.String(), "stage": pl.String(), "reason": pl.String(), "detail": pl.String(), "item": pl.String()})


def test_the_model_refuses_unknown_fields_and_sources() -> None:
    with pytest.raises(ValidationError):
        QARecord.model_validate({**_row().model_dump(), "source": "My Space!"})
    with pytest.raises(ValidationError):
        Rejected(source="wikidata", stage="read", reason="x", detail="y", item="", extra="nope")


def test_ids_are_stable_and_fact_sensitive() -> None:
    assert record_id("wikidata", "L1", "a") == record_id("wikidata", "L1", "a")
    assert record_id("wikidata", "L1", "a") != record_id("wikidata", "L1", "b")
