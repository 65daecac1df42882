"""The temporal split: whole groups go to train, validation or test by the month of their latest event."""

from __future__ import annotations

from collections.abc import Collection
from datetime import date

import polars as pl

from timelyqa.record import Split
from timelyqa.sources import GroupKey, sources

SPLITS: tuple[str, ...] = (Split.TRAIN.value, Split.VALIDATION.value, Split.TEST.value)
"""The splits the temporal rule assigns, oldest first."""
EXTRA_SPLITS: tuple[str, ...] = (Split.HUMAN_VERIFIED.value, Split.LONGITUDINAL.value)
"""Named splits beside the temporal ones: `human_verified` (test rows a reviewer accepted, a copy of them: see
publish/review.py) and `longitudinal` (rows whose answer may change over time, set by the source itself)."""
RELEASE_SPLITS: tuple[str, ...] = (*SPLITS, *EXTRA_SPLITS)
"""Every split a release config may hold, in the order the card lists them."""
SOURCE_SPLITS: tuple[str, ...] = (Split.LONGITUDINAL.value,)
"""The splits a source may set in its questions.parquet, which the temporal rule leaves alone. A source cannot
mark rows `human_verified`: only a reviewer's decision does (a release builds that split from the decisions)."""

SPLIT_RULE = (
    "Let M be the calendar month of the newest event_date in the release. A group of rows (same group key) "
    "goes to test when its latest event_date falls in month M or M-1, to validation when it falls in M-2, "
    "and to train when it is earlier, so a group never spans two splits."
)
"""The rule in words, for the card and the manifest (LiveNewsBench's temporal split, applied to groups)."""

DEFAULT_GROUP_KEY = pl.col("id")
DEFAULT_GROUP_KEY_TEXT = "the row itself (`id`)"


def _key(source: str, columns: Collection[str] | None) -> GroupKey | None:
    """The source's group key, when it is registered with one and the rows have its column (rows with the common
    columns only do not)."""
    spec = sources().get(source)
    key = spec.group_key if spec is not None else None
    return key if key is not None and (columns is None or key.column in columns) else None


def group_key_for(source: str, columns: Collection[str] | None = None) -> pl.Expr:
    """The expression whose value names a row's group for this source (timelyqa.sources); each row is its own
    group when the source has no key, or `columns` lacks the column the key needs."""
    key = _key(source, columns)
    return key.expr if key is not None else DEFAULT_GROUP_KEY


def group_key_text(source: str, columns: Collection[str] | None = None) -> str:
    """The group key of a source in words, for the card."""
    key = _key(source, columns)
    return key.text if key is not None else DEFAULT_GROUP_KEY_TEXT


def _month_start(day: date, months_back: int) -> date:
    index = day.year * 12 + day.month - 1 - months_back
    return date(index // 12, index % 12 + 1, 1)


def boundaries(newest: date) -> tuple[date, date]:
    """First day of test (start of month M-1) and of validation (start of month M-2) for the newest date."""
    return _month_start(newest, 1), _month_start(newest, 2)


def newest_event_date(df: pl.DataFrame) -> date | None:
    """The newest event_date in df, or None when df has no dated row."""
    value = df.get_column("event_date").max() if df.height else None
    return value if isinstance(value, date) else None


def split_dates(df: pl.DataFrame, *, newest: date | None = None) -> dict[str, str | None]:
    """The split boundaries as ISO dates for the card and manifest; `newest` overrides df's own newest date."""
    newest = newest if newest is not None else newest_event_date(df)
    if newest is None:
        return {"newest_event_date": None, "test_from": None, "validation_from": None}
    test_from, validation_from = boundaries(newest)
    return {"newest_event_date": newest.isoformat(), "test_from": test_from.isoformat(),
            "validation_from": validation_from.isoformat()}


def assign_splits(df: pl.DataFrame, *, group_key: pl.Expr, newest: date | None = None) -> pl.DataFrame:
    """df with `split` filled by the temporal rule, in the same row order.

    `newest` sets month M from outside (a release uses the newest date over all its sources, so that every
    config shares one test window); by default it is df's own newest event_date. A row the source put in one
    of SOURCE_SPLITS (`longitudinal`) keeps it; any other split already in df is overwritten: the rule alone
    decides. The rule's window still spans a group's longitudinal rows, so a group in test is in test whatever
    the source set aside. A row whose group key is null is its own group (keyed by id), so rows lacking an
    anchor are not lumped together. A group with no event_date at all goes to train: nothing shows it is newer
    than any cutoff.
    """
    newest = newest if newest is not None else newest_event_date(df)
    kept = pl.col("split").is_in(SOURCE_SPLITS).fill_null(False)
    if newest is None:
        train = pl.lit(Split.TRAIN.value, dtype=pl.String())
        return df.with_columns(pl.when(kept).then(pl.col("split")).otherwise(train).cast(pl.String()).alias("split"))
    test_from, validation_from = boundaries(newest)
    key = group_key
    # Two partition columns: the key itself, and the id only where the key is null.
    latest = pl.col("event_date").max().over([key, pl.when(key.is_null()).then(pl.col("id"))])
    split = (
        pl.when(kept).then(pl.col("split"))
        .when(latest >= test_from).then(pl.lit(Split.TEST.value))
        .when(latest >= validation_from).then(pl.lit(Split.VALIDATION.value))
        .otherwise(pl.lit(Split.TRAIN.value))
    )
    return df.with_columns(split.cast(pl.String()).alias("split"))


def keep_in_train(df: pl.DataFrame, previous: pl.DataFrame, *, group_key: pl.Expr, refresh: bool) -> pl.DataFrame:
    """The refresh rule of a source whose registry entry sets `refresh_to_train` (LiveNewsBench 2.3, any period).

    `previous` holds (id, split) of the rows the previous release had. On a refresh (a release whose newest month is
    later than the previous one's) its validation and test rows move to train; on any release its train rows stay
    in train, so a row once trained on never comes back to an evaluation split when the window moves. The whole
    group of such a row goes with it, so a group still never spans two splits. Rows in SOURCE_SPLITS are left
    alone. Returns df with `split` changed, in the same row order.
    """
    moving = [Split.TRAIN.value, *((Split.VALIDATION.value, Split.TEST.value) if refresh else ())]
    trained = previous.filter(pl.col("split").is_in(moving)).get_column("id").implode()
    temporal = ~pl.col("split").is_in(SOURCE_SPLITS).fill_null(False)
    hit = (pl.col("id").is_in(trained) & temporal).any().over([group_key, pl.when(group_key.is_null())
                                                                 .then(pl.col("id"))])
    return df.with_columns(pl.when(hit & temporal).then(pl.lit(Split.TRAIN.value)).otherwise(pl.col("split"))
                           .cast(pl.String()).alias("split"))
