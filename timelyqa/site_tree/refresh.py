"""Released site-tree questions against a later crawl: each kept, changed (with the new value) or retired.

WebWalkerQA's answers were true on the day its sites were crawled and were never looked at again; here every
released row names the facts its answer comes from (`facts`: url, label, value), and a later crawl of the same
site re-reads them. A fact whose page still gives its label the same value keeps the row; one whose label now
has a single other value changes it (the detail gives the new value); a page gone, failed, or no longer giving
the label (or giving it several values) retires it. A row is retired when any of its facts is, else changed
when any is, else kept.

The ids still true go to `rechecked.parquet`, the others are rejected at stage `refresh` with the reason, which
retires them from the next release (its changelog says why). The release keeps a row still true as it was stored;
nothing is re-emitted, so no released row is ever written again with a new `as_of`. Rows of sites this crawl did
not reach get no verdict and carry, counted by the release as not re-checked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.reasons import Dropped, Reason
from timelyqa.record import polars_schema
from timelyqa.refresh import Check, refresh
from timelyqa.released import released_rows as shared_released_rows
from timelyqa.site_tree.facts import with_facts
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.site_tree.tree import norm
from timelyqa.stages import StageWriter

KEPT, CHANGED, RETIRED = "kept", "changed", "retired"


class RefreshReject(Reason):
    ANSWER_CHANGED = "answer_changed", "a released row's page now gives its fact another value (the question is retired)"
    FACT_GONE = "fact_gone", "a released row's page is gone, failed, or no longer gives its fact (the row is retired)"
    RECHECK_FAILED = ("recheck_failed", "a released row's check raised an error (the detail names it): the row is "
                      "retired, since it can no longer be checked")


def released_rows(previous: Path) -> pl.DataFrame:
    """The site-tree rows of a release folder (its `site_tree` config) or of a source output folder; none when the
    release has no site-tree rows yet (the first crawl against a release of other sources re-checks nothing)."""
    rows = shared_released_rows(previous, "site_tree")
    return rows if rows.width else pl.DataFrame(schema=polars_schema(SiteTreeRecord))


def refresh_released(previous: pl.DataFrame, pages: pl.DataFrame, ledger: StageWriter, into: Path) -> list[str]:
    """The stage `refresh` of a run: each released row of the crawled roots re-checked against `pages`; counts
    `rechecked` and `still_true`, rejects each changed or gone with its reason and the row's id, writes the ids still
    true to `into/rechecked.parquet` and returns them. Rows of other roots get no verdict (not counted)."""
    roots = list(set(pages.get_column("root_url").drop_nulls()))
    rows = previous.filter(pl.col("root_url").is_in(roots)) if previous.height else previous
    return refresh(rows, check_on(pages), ledger, failed=RefreshReject.RECHECK_FAILED, into=into, item=_item)


def check_on(pages: pl.DataFrame) -> Check:
    """The check of a released row (`id`, `facts`, `question`, `answer`) against the later crawl's `pages`."""
    later = _later(pages)

    def check_row(row: dict[str, Any]) -> Dropped | None:
        outcome, detail = _row(row["facts"], later)
        if outcome == KEPT:
            return None
        reason = RefreshReject.ANSWER_CHANGED if outcome == CHANGED else RefreshReject.FACT_GONE
        return Dropped(_item(row), reason, f"released row {row['id']}: {detail}")

    return check_row


def outcomes(records: pl.DataFrame, pages: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(id, outcome, one-line reason) for each released row (`id`, `facts`), by the later crawl's `pages` (`url`,
    `error`, and `facts`, or `html` to read them from)."""
    later = _later(pages)
    return [(record_id, *_row(facts, later)) for record_id, facts in records.select("id", "facts").iter_rows()]


def _later(pages: pl.DataFrame) -> dict[str, dict[str, Any]]:
    if "facts" not in pages.columns and "html" in pages.columns:
        pages = with_facts(pages)
    return {row["url"]: row for row in pages.select("url", "error", "facts").iter_rows(named=True)}


def _row(facts: str, later: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
    checked = [_fact(fact, later) for fact in json.loads(facts)]
    for outcome in (RETIRED, CHANGED):
        if reasons := [why for got, why in checked if got == outcome]:
            return outcome, "; ".join(reasons)
    return KEPT, f"every fact ({len(checked)}) still on its page with the same value"


def _fact(fact: Mapping[str, str], later: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
    url, label, old = fact["url"], fact["label"], fact["value"]
    page = later.get(url)
    if page is None:
        return RETIRED, f"{url} is not in the later crawl"
    if page["error"] is not None:
        return RETIRED, f"{url} failed in the later crawl ({page['error']})"
    values = list(dict.fromkeys(f["value"] for f in page["facts"] or () if norm(f["label"]) == norm(label)))
    if not values:
        return RETIRED, f"{url} no longer gives {label!r}"
    if any(norm(v) == norm(old) for v in values):
        return KEPT, ""
    if len(values) > 1:
        return RETIRED, f"{url} now gives {label!r} {len(values)} values"
    return CHANGED, f"{label!r} on {url} now reads {values[0]!r} (was {old!r})"


def _item(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "question": row["question"], "answer": row["answer"]}
