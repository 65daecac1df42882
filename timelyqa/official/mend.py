"""Repairs of broken recipes, started by the health check rather than by hand: each broken recipe whose pages still
answer but no longer read (a layout change) gets one proposal from the LLM layer (repair.py), judged on the page
copy stored at its last good resolution and on the live page; accepted ones take effect on the next check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from timelyqa.llm.client import LLM
from timelyqa.official import health, repair
from timelyqa.official.extract import Fail
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe

REPAIRABLE = frozenset({str(Failure.EXTRACTED_NOTHING), str(Failure.VALUE_INVALID)})
"""Failures a new extraction can mend; a site that is down, a page gone or a robots.txt refusal cannot be."""


@dataclass(frozen=True)
class Mended:
    repair: repair.Repair
    recipe_file: Path | None


def repaired_dir(state: Path) -> Path:
    return Path(state) / "repaired"


def mend(recipes: Sequence[Recipe], state: Path, llm: LLM, *, broken_after: int = health.BROKEN_AFTER,
         only_broken: bool = True) -> list[Mended]:
    """One repair for each broken recipe (each failing one, with `only_broken` off) whose last failure a new
    extraction can mend; each recorded in state/repairs.jsonl with both pages' hashes, the accepted recipe written
    to state/repaired/, a held one to state/review/."""
    answers = health.history(state)
    status = health.statuses(answers, broken_after=broken_after)
    store = health.store(state)
    done: list[Mended] = []
    ids = {r.id for r in recipes}
    for recipe in recipes:
        if recipe.base in ids:
            continue  # an L2/L3 recipe follows its L1's repair (catalog.load)
        seen = status.get(recipe.id)
        if (seen is None or seen.last_good is None or not seen.days_failing or (only_broken and not seen.broken)
                or seen.reason not in REPAIRABLE):
            continue
        rows = answers.filter(pl.col("id") == recipe.id).sort("at")
        last = rows.row(rows.height - 1, named=True)
        good = repair.Good(answer=seen.last_good.answer, page_sha256s=list(seen.last_good.pages),
                           at=seen.last_good.at)
        result = repair.repair(llm, recipe, Fail(Failure(seen.reason), seen.detail or ""),
                               [e["sha256"] for e in last["evidence"]], good, store)
        done.append(Mended(result, repair.record(result, recipe, Path(state))))
    return done
