"""Released site-tree questions against a later crawl: each kept, changed (with the new value) or retired.

WebWalkerQA's answers were true on the day its sites were crawled and were never looked at again; here every
released row names the facts its answer comes from (`facts`: url, label, value), and a later crawl of the same
site re-reads them. A fact whose page still gives its label the same value keeps the row; one whose label now
has a single other value changes it (the detail gives the new value); a page gone, failed, or no longer giving
the label (or giving it several values) retires it. A row is retired when any of its facts is, else changed
when any is, else kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import polars as pl

from timelyqa.site_tree.facts import with_facts
from timelyqa.site_tree.tree import norm

KEPT, CHANGED, RETIRED = "kept", "changed", "retired"


def recheck(records: pl.DataFrame, pages: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(id, outcome, one-line reason) for each released row (`id`, `facts`), by the later crawl's `pages` (`url`,
    `error`, and `facts`, or `html` to read them from)."""
    if "facts" not in pages.columns and "html" in pages.columns:
        pages = with_facts(pages)
    later = {row["url"]: row for row in pages.select("url", "error", "facts").iter_rows(named=True)}
    outcomes = []
    for record_id, facts in records.select("id", "facts").iter_rows():
        checked = [_fact(fact, later) for fact in json.loads(facts)]
        for outcome in (RETIRED, CHANGED):
            if reasons := [why for got, why in checked if got == outcome]:
                outcomes.append((record_id, outcome, "; ".join(reasons)))
                break
        else:
            outcomes.append((record_id, KEPT, f"every fact ({len(checked)}) still on its page with the same value"))
    return outcomes


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
