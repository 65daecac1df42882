"""A later crawl's verdict on released rows: those still true re-emitted as of the new crawl, the others rejected
at stage `refresh` with the reason, which retires them from the next release (its changelog says why). The release
keeps a row still true as it was stored (a run row with a released id is that row): re-emitting it marks it
re-checked this week."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from timelyqa.reasons import Reason
from timelyqa.released import released_rows as shared_released_rows
from timelyqa.record import Verification, polars_schema
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.site_tree.refresh import CHANGED, KEPT, recheck
from timelyqa.stages import Dropped


class RefreshReject(Reason):
    ANSWER_CHANGED = "answer_changed", "a released row's page now gives its fact another value (the question is retired)"
    FACT_GONE = "fact_gone", "a released row's page is gone, failed, or no longer gives its fact (the row is retired)"


def released_rows(previous: Path) -> pl.DataFrame:
    """The site-tree rows of a release folder (its `site_tree` config) or of a source output folder; none when the
    release has no site-tree rows yet (the first crawl against a release of other sources re-checks nothing)."""
    rows = shared_released_rows(previous, "site_tree")
    return rows if rows.width else pl.DataFrame(schema=polars_schema(SiteTreeRecord))


def carry(previous: pl.DataFrame, pages: pl.DataFrame, *, as_of: datetime, made: set[str]
          ) -> tuple[list[SiteTreeRecord], list[Dropped]]:
    """Each released row of the crawled roots re-checked against `pages`: still true and not made again by this
    run, carried forward as of `as_of`; changed or gone, dropped with its reason and the row's id."""
    if previous.is_empty():
        return [], []
    roots = set(pages.get_column("root_url").drop_nulls())
    rows = previous.filter(pl.col("root_url").is_in(list(roots)))
    by_id = {row["id"]: row for row in rows.iter_rows(named=True)}
    kept: list[SiteTreeRecord] = []
    dropped: list[Dropped] = []
    for row_id, outcome, detail in recheck(rows, pages):
        row = by_id[row_id]
        if outcome == KEPT:
            if row_id not in made:
                check = Verification(method="page_fact_recheck", query=row["facts"], endpoint=row["root_url"],
                                     result_count=len(row["source_urls"]), passed=True)
                kept.append(SiteTreeRecord.model_validate({**row, "as_of": as_of, "split": None,
                                                           "verification": check}))
            continue
        reason = RefreshReject.ANSWER_CHANGED if outcome == CHANGED else RefreshReject.FACT_GONE
        dropped.append(Dropped({"id": row_id, "question": row["question"], "answer": row["answer"]}, reason,
                               f"released row {row_id}: {detail}"))
    return kept, dropped
