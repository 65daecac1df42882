"""The daily health check: every recipe resolved and kept in the state folder's history, failures classified, and
a recipe failing on N days in a row marked broken (out of the test split until a repair is accepted).

The state folder holds what the live operation remembers between runs:

    state/answers/<UTC stamp>.parquet   each check's answers (resolve.ANSWER_SCHEMA)
    state/pages/                        the page copies each answer read (pages.PageStore), kept for repairs
    state/repairs.jsonl                 every repair tried, with both pages' hashes (repair.py)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.files import write_parquet
from timelyqa.official.pages import PageStore
from timelyqa.official.recipe import Recipe
from timelyqa.official.resolve import ANSWER_SCHEMA, Fetcher, answers_frame, resolve

BROKEN_AFTER = 3
"""Days in a row a recipe must fail before it is broken: one bad day is an outage more often than a new layout."""


def answers_dir(state: Path) -> Path:
    return Path(state) / "answers"


def store(state: Path) -> PageStore:
    return PageStore(Path(state) / "pages")


def check(recipes: Sequence[Recipe], clocks: Sequence[datetime], state: Path, *, crawl: Crawl,
          variables: Mapping[str, str] | None = None, now: datetime | None = None,
          fetcher: Fetcher | None = None, allow_hosts: Iterable[str] = ()) -> pl.DataFrame:
    """Resolve every recipe at each clock (one crawl, through `crawl`), and add each clock's answers to the history.
    `allow_hosts`: hosts the operator names, which may be private (resolve's trust by origin)."""
    answers = answers_frame(resolve(recipes, clocks, Path(state) / "work", crawl=crawl, store=store(state),
                                    variables=variables, now=now, fetcher=fetcher, allow_hosts=allow_hosts))
    for (at,), part in answers.group_by("at", maintain_order=True):
        path = answers_dir(state) / f"{at:%Y%m%dT%H%M%SZ}.parquet"
        if path.is_file():  # a clock checked again: these recipes' answers replace theirs, the others' stay
            kept = _aligned(pl.read_parquet(path)).filter(~pl.col("id").is_in(part["id"].implode()))
            part = pl.concat([kept, part], how="vertical").sort("id")
        write_parquet(part, path)
    return answers


def history(state: Path) -> pl.DataFrame:
    """Every answer the state folder holds, oldest first (a rerun of one clock replaces that clock's file)."""
    files = sorted(answers_dir(state).glob("*.parquet"))
    if not files:
        return pl.DataFrame(schema=ANSWER_SCHEMA)
    return pl.concat([_aligned(pl.read_parquet(f)) for f in files], how="vertical").sort("at", "id")


def _aligned(answers: pl.DataFrame) -> pl.DataFrame:
    """A history file in today's ANSWER_SCHEMA: a file written before a column existed (the typed answer's) gets it
    empty, so that old and new checks read as one history."""
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in ANSWER_SCHEMA.items() if name not in answers.columns]
    return answers.with_columns(missing).select(ANSWER_SCHEMA.names()) if missing else answers


@dataclass(frozen=True)
class Good:
    """A recipe's last good resolution: the answer, when, and the page copies it was read from."""

    answer: str
    at: datetime
    pages: tuple[str, ...]


@dataclass(frozen=True)
class Status:
    recipe: str
    days_failing: int
    failing_since: date | None
    reason: str | None
    detail: str | None
    last_good: Good | None
    broken: bool


def statuses(answers: pl.DataFrame, *, broken_after: int = BROKEN_AFTER) -> dict[str, Status]:
    """Each recipe's health from its history: the days (UTC) at the end of it on which every check failed."""
    found: dict[str, Status] = {}
    for (recipe,), rows in answers.sort("at").group_by("id", maintain_order=True):
        by_day = rows.with_columns(pl.col("at").dt.date().alias("day")).group_by("day", maintain_order=True).agg(
            (pl.col("status") == "ok").any().alias("ok")).sort("day")
        failing = 0
        for ok in reversed(by_day["ok"].to_list()):
            if ok:
                break
            failing += 1
        last = rows.row(rows.height - 1, named=True)
        good = rows.filter(pl.col("status") == "ok")
        last_good = None
        if good.height:
            g = good.row(good.height - 1, named=True)
            last_good = Good(g["answer"], g["at"], tuple(e["sha256"] for e in g["evidence"]))
        days = by_day["day"].to_list()
        found[str(recipe)] = Status(
            str(recipe), failing, days[len(days) - failing] if failing else None,
            last["reason"] if failing else None, last["detail"] if failing else None, last_good,
            failing >= broken_after)
    return found
