"""The one record schema every source writes: pydantic models and their polars twins."""

from __future__ import annotations

import hashlib
from datetime import date, datetime
from enum import StrEnum
from typing import Annotated, Any, get_args, get_origin

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

CANARY = "timelyqa:canary:7c1e0d3a-5b8f-4f59-9a61-2f0c4b6e8d21"
"""One string in every released row and card, so trainers can filter the test split out of crawled text."""


class Split(StrEnum):
    TRAIN = "train"
    VALIDATION = "validation"
    TEST = "test"
    HUMAN_VERIFIED = "human_verified"
    LONGITUDINAL = "longitudinal"


SourceName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
"""A registered source's name (timelyqa.sources), which is also its config in a release."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Evidence(_Frozen):
    url: str
    title: str
    revision: str | None = None
    fetched_at: datetime | None = None
    sha256: str | None = None


class Verification(_Frozen):
    method: str
    query: str
    endpoint: str
    result_count: int
    passed: bool


class AnswerType(StrEnum):
    """What kind of answer a row has; the grader (timelyqa.rewards) grades by it."""

    ENTITY = "entity"
    NUMBER = "number"
    QUANTITY = "quantity"
    DATE = "date"
    LIST = "list"
    TEXT = "text"


class AnswerValue(_Frozen):
    """The answer normalised for grading, beside its display string (fields unused by the type stay empty).

    A number or quantity: `number`, a decimal of the full value ("18000000", "1.92"), `precision`, the power of ten
    of its last significant digit (6 for "18 million", -2 for "1.92"), `unit`, a pint symbol ("m", "°C", "km**2",
    "%", "EUR"; none for a count), and `scale`, the power of ten the question asks in ("in millions": 6), so that a
    bare "18" is read as 18 million. A date: `date` in ISO at its precision ("2026-11-05", "2026-11", "2026") and
    `date_precision` (day, month, year). A list: its `items`.
    """

    number: str | None = None
    precision: int | None = None
    unit: str | None = None
    scale: int | None = None
    date: str | None = None
    date_precision: str | None = None
    items: list[str] | None = None


class QARecord(_Frozen):
    """A released question; every source fills these fields."""

    id: str
    question: str
    answer: str
    answer_aliases: list[str] = Field(default_factory=list)
    answer_type: AnswerType
    answer_value: AnswerValue = Field(default_factory=AnswerValue)
    source: SourceName
    level: str
    event_date: date
    as_of: datetime
    split: Split | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    verification: Verification
    generator: str
    canary: str = CANARY


class WikidataRecord(QARecord):
    """A Wikidata question: the common fields plus the query that proves its answer."""

    answer_id: str
    query_triples: list[list[str]]
    delta_triple: list[str]
    sparql: str


class WikipediaRecord(QARecord):
    """A Wikipedia question: the common fields plus the infobox change it came from and how to re-answer it."""

    page_title: str
    page_id: int
    infobox_key: str
    revision_id: int
    value_before: str | None
    recompute: str
    """JSON ({"page", "page_id", "key"}): the rule that answers the question on any date."""
    update_frequency: str
    domain: str
    infobox: str
    first_paragraph: str


class Rejected(_Frozen):
    """A candidate or an input that did not make it, with the one reason it was dropped."""

    source: SourceName
    stage: str
    reason: str
    detail: str
    item: str


def record_id(source: str, *facts: str) -> str:
    """A stable id: the same source and answer-defining facts give the same id on every run."""
    digest = hashlib.blake2b("\x1f".join((source, *facts)).encode(), digest_size=12)
    return digest.hexdigest()


_SCALARS: dict[Any, pl.DataType] = {
    str: pl.String(),
    int: pl.Int64(),
    bool: pl.Boolean(),
    float: pl.Float64(),
    date: pl.Date(),
    datetime: pl.Datetime("us", "UTC"),
}


def _dtype(annotation: Any) -> pl.DataType:
    args = [a for a in get_args(annotation) if a is not type(None)]
    origin = get_origin(annotation)
    if origin is list:
        return pl.List(_dtype(args[0]))
    if args and origin is not None:  # Optional[X] and X | None
        return _dtype(args[0])
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return pl.String()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pl.Struct({name: _dtype(f.annotation) for name, f in annotation.model_fields.items()})
    return _SCALARS[annotation]


def polars_schema(model: type[BaseModel]) -> pl.Schema:
    """The polars schema that a model's rows are written with, derived from the model itself."""
    return pl.Schema({name: _dtype(f.annotation) for name, f in model.model_fields.items()})


def to_frame(rows: list[BaseModel], model: type[BaseModel]) -> pl.DataFrame:
    """Rows of one model as a DataFrame in that model's schema (empty rows still carry the schema)."""
    return pl.DataFrame([r.model_dump(mode="python") for r in rows], schema=polars_schema(model), orient="row")


RECORD_SCHEMA = polars_schema(QARecord)
"""The columns every source's parquet carries, in this order: the `default` config of a release."""
REJECTED_SCHEMA = polars_schema(Rejected)
