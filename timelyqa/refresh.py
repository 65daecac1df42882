"""The refresh of a source's released rows: each row's check run, the ids still true written to `rechecked.parquet`,
the others rejected at stage `refresh` with their reason, which retires them from the next release.

Every source refreshes through `refresh`; only the check is its own (a row -> None while the row is still true, the
`Dropped` that retires it, or NO_VERDICT when this run cannot tell, so the row carries unchecked). A check that
raises costs its row alone: the row is retired with the source's `failed` reason and the error in the detail. Two
errors are not about the row and stop the run instead: TransientSourceError (the run is retried, nothing is retired
for an endpoint's bad minute) and ConfigError (the run is wrong before it is started).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from timelyqa.errors import ConfigError, TransientSourceError
from timelyqa.files import atomic_path, sha256_file, write_parquet
from timelyqa.manifest import MANIFEST, RECHECKED
from timelyqa.reasons import Dropped, Reason
from timelyqa.stages import LEDGER, StageWriter

REFRESH: Final = "refresh"
"""The stage (and the ledger part) of a source's refresh; its rejects retire released rows (the item holds `id`)."""
CHECKED, STILL_TRUE, UNCHECKED = "rechecked", "still_true", "not_rechecked"
"""The funnel lines of a refresh: rows given a verdict, rows still true, rows given none (counted when the source's
funnel has the line)."""


class NoVerdict:
    """What a check returns when this run cannot tell (the input lacks the row's page, the rule is another
    parser's): the row carries, counted as not re-checked."""

    def __repr__(self) -> str:
        return "NO_VERDICT"


NO_VERDICT: Final = NoVerdict()

Verdict = Dropped | NoVerdict | None
Check = Callable[[dict[str, Any]], Verdict]


def default_item(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as its reject shows it: id, question and answer (those it has)."""
    return {key: row[key] for key in ("id", "question", "answer") if key in row}


@dataclass(frozen=True, slots=True)
class Refreshed:
    """The verdicts on a source's released rows: the ids still true, a reject for each row retired, and how many
    got no verdict (in id order)."""

    kept: list[str]
    rejected: list[Dropped]
    unchecked: int

    @property
    def counts(self) -> dict[str, int]:
        return {CHECKED: len(self.kept) + len(self.rejected), STILL_TRUE: len(self.kept), UNCHECKED: self.unchecked}


def verdicts(rows: pl.DataFrame, check: Check, *, failed: Reason, concurrency: int = 1,
             item: Callable[[Mapping[str, Any]], Mapping[str, Any]] = default_item) -> Refreshed:
    """`check` run on each released row, in id order, `concurrency` at a time (more than one where it does I/O).
    A row whose check raises is retired with `failed`, the source's reason for it, the error in the detail."""
    ordered = rows.sort("id").to_dicts() if rows.height else []

    def verdict(row: dict[str, Any]) -> Verdict:
        try:
            return check(row)
        except (TransientSourceError, ConfigError):
            raise
        except Exception as exc:  # noqa: BLE001 - one row's broken check must not cost the others theirs
            message = " ".join(str(exc).split()) or "(no message)"
            return Dropped(item(row), failed,
                           f"released row {row.get('id')}: its check raised {type(exc).__name__}: {message}")

    if concurrency > 1 and len(ordered) > 1:
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=REFRESH) as pool:
            found = list(pool.map(verdict, ordered))
    else:
        found = [verdict(row) for row in ordered]
    return Refreshed(kept=[row["id"] for row, v in zip(ordered, found, strict=True) if v is None],
                     rejected=[v for v in found if isinstance(v, Dropped)],
                     unchecked=sum(isinstance(v, NoVerdict) for v in found))


def refresh(rows: pl.DataFrame, check: Check, ledger: StageWriter, *, failed: Reason, into: Path,
            concurrency: int = 1, item: Callable[[Mapping[str, Any]], Mapping[str, Any]] = default_item) -> list[str]:
    """The stage `refresh` of a run: `verdicts` on the released rows, timed, counted and rejected through `ledger`
    (`not_rechecked` when the source's funnel has the line), the ids still true written to `into/rechecked.parquet`
    and returned."""
    with ledger.timed(REFRESH):
        done = verdicts(rows, check, failed=failed, concurrency=concurrency, item=item)
    take(ledger, done)
    write_rechecked(into, done.kept)
    return done.kept


def take(ledger: StageWriter, done: Refreshed) -> None:
    """A refresh's counts and rejects into the run's ledger."""
    counts = done.counts
    if UNCHECKED not in ledger.spec.funnel:
        if done.unchecked:
            raise ValueError(f"source {ledger.spec.name!r}: {done.unchecked} released rows got no verdict, and its "
                             f"funnel has no {UNCHECKED!r} line to count them")
        del counts[UNCHECKED]
    for line, n in counts.items():
        ledger.count(line, n)
    ledger.reject_all(done.rejected)


def write_rechecked(folder: Path, ids: list[str]) -> str:
    """Write the ids found still true as `folder/rechecked.parquet`; return its sha256 (for the run's manifest)."""
    write_parquet(pl.DataFrame({"id": sorted(set(ids))}, schema={"id": pl.String()}), Path(folder) / RECHECKED)
    return sha256_file(Path(folder) / RECHECKED)


def finish_refresh(workdir: Path, out: Path) -> None:
    """Put a run's rechecked.parquet beside its questions; remove a stale one when nothing was re-checked. The
    folder's manifest goes first: until the stage writer writes the new one, the folder is visibly unfinished, so
    a run killed here never leaves this week's re-checks beside last week's questions for a release to take."""
    (Path(out) / MANIFEST).unlink(missing_ok=True)
    made = Path(workdir) / RECHECKED
    if made.is_file():
        with atomic_path(Path(out) / RECHECKED) as partial:
            shutil.copyfile(made, partial)
    elif Path(workdir).resolve() != Path(out).resolve():
        (Path(out) / RECHECKED).unlink(missing_ok=True)


def forget_refresh(workdir: Path) -> None:
    """Remove what an earlier run in the same work folder re-checked, when this one re-checks nothing: its verdicts
    must not pass for this week's."""
    for path in (workdir / RECHECKED, workdir / LEDGER / f"{REFRESH}.json",
                 workdir / LEDGER / f"{REFRESH}.rejected.parquet"):
        path.unlink(missing_ok=True)
