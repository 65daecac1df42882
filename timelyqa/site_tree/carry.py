"""A later crawl's verdict on released rows: the ids of those still true (the run writes them to
`rechecked.parquet`), the others rejected at stage `refresh` with the reason, which retires them from the next
release (its changelog says why). The release keeps a row still true as it was stored; nothing is re-emitted, so no
released row is ever written again with a new `as_of`. Rows of sites this crawl did not reach get no verdict and
carry, counted by the release as not re-checked."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from timelyqa.reasons import Dropped, Reason
from timelyqa.released import released_rows as shared_released_rows
from timelyqa.record import polars_schema
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.site_tree.refresh import CHANGED, KEPT, recheck


class RefreshReject(Reason):
    ANSWER_CHANGED = "answer_changed", "a released row's page now gives its fact another value (the question is retired)"
    FACT_GONE = "fact_gone", "a released row's page is gone, failed, or no longer gives its fact (the row is retired)"


def released_rows(previous: Path) -> pl.DataFrame:
    """The site-tree rows of a release folder (its `site_tree` config) or of a source output folder; none when the
    release has no site-tree rows yet (the first crawl against a release of other sources re-checks nothing)."""
    rows = shared_released_rows(previous, "site_tree")
    return rows if rows.width else pl.DataFrame(schema=polars_schema(SiteTreeRecord))


def carry(previous: pl.DataFrame, pages: pl.DataFrame) -> tuple[list[str], list[Dropped]]:
    """Each released row of the crawled roots re-checked against `pages`: the ids still true, and for each changed
    or gone a reject with its reason and the row's id. Rows of other roots get no verdict."""
    if previous.is_empty():
        return [], []
    roots = set(pages.get_column("root_url").drop_nulls())
    rows = previous.filter(pl.col("root_url").is_in(list(roots)))
    by_id = {row["id"]: row for row in rows.iter_rows(named=True)}
    holds: list[str] = []
    dropped: list[Dropped] = []
    for row_id, outcome, detail in recheck(rows, pages):
        row = by_id[row_id]
        if outcome == KEPT:
            holds.append(row_id)
            continue
        reason = RefreshReject.ANSWER_CHANGED if outcome == CHANGED else RefreshReject.FACT_GONE
        dropped.append(Dropped({"id": row_id, "question": row["question"], "answer": row["answer"]}, reason,
                               f"released row {row_id}: {detail}"))
    return holds, dropped
