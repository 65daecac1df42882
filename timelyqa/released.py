"""What a release hands the next week: its rows per source, and what a run says about them (re-checked, retired)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.files import sha256_file, write_parquet
from timelyqa.manifest import QUESTIONS, REJECTED
from timelyqa.record import Split
from timelyqa.stages import LEDGER

RECHECKED = "rechecked.parquet"
"""Beside a run's questions: the ids of released rows the run checked again and found still true (column `id`).
The ones it found no longer true are its rejects of stage `refresh` (rejected.parquet), which retire them."""
REFRESH = "refresh"
"""The stage of a source's rejects that retire a released row (the item's JSON holds the row's `id`)."""
_COPIES = (Split.HUMAN_VERIFIED.value,)  # copies of test rows a reviewer accepted, not rows of their own


@dataclass(frozen=True, slots=True)
class Retirement:
    """Why a run retired a released row: its source, the reject's reason and detail."""

    source: str
    reason: str
    detail: str


def release_manifest(release: Path) -> dict | None:
    """The manifest of the release in `release`, or None when the folder holds no release."""
    try:
        manifest = json.loads((Path(release) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and "version" in manifest and "configs" in manifest else None


def released_rows(release: Path, source: str) -> pl.DataFrame:
    """The rows of `source` in a release folder (its source config, every split but the reviewers' copies), as
    stored; or the questions of a source output folder of that source. An empty frame when it has none."""
    release = Path(release)
    if (release / QUESTIONS).is_file():  # a source output folder (a run), not a release
        rows = pl.read_parquet(release / QUESTIONS)
        return rows.filter(pl.col("source") == source) if "source" in rows.columns else rows.clear()
    manifest = release_manifest(release)
    if manifest is None:
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release) nor a source output folder")
    listed = manifest["configs"].get(source, {}).get("splits", {})
    files = [release / name for split, names in sorted(listed.items()) if split not in _COPIES for name in names]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(f"{release}: the release lists {missing[0]} but it is not there")
    if not files:
        return pl.DataFrame()
    return pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed").sort("id")


def write_rechecked(folder: Path, ids: list[str]) -> str:
    """Write the ids found still true as `folder/rechecked.parquet`; return its sha256 (for the run's manifest)."""
    write_parquet(pl.DataFrame({"id": sorted(set(ids))}, schema={"id": pl.String()}), Path(folder) / RECHECKED)
    return sha256_file(Path(folder) / RECHECKED)


def rechecked_ids(folder: Path) -> set[str]:
    """The ids a run found still true (empty when it re-checked nothing)."""
    path = Path(folder) / RECHECKED
    return set(pl.read_parquet(path, columns=["id"]).get_column("id").to_list()) if path.is_file() else set()


def retirements(folder: Path) -> dict[str, Retirement]:
    """The released rows a run retired: its rejects of stage `refresh`, by row id."""
    path = Path(folder) / REJECTED
    if not path.is_file():
        return {}
    found: dict[str, Retirement] = {}
    rows = pl.read_parquet(path).filter(pl.col("stage") == REFRESH)
    for source, reason, detail, item in rows.select("source", "reason", "detail", "item").iter_rows():
        try:
            row_id = json.loads(item).get("id")
        except (ValueError, AttributeError):
            continue  # not a row's JSON: nothing says which row it retires
        if row_id:
            found[row_id] = Retirement(source, reason, detail or "")
    return found


def finish_rechecked(workdir: Path, out: Path) -> None:
    """Put a run's rechecked.parquet beside its questions; remove a stale one when nothing was re-checked."""
    made = Path(workdir) / RECHECKED
    if made.is_file():
        shutil.copyfile(made, Path(out) / RECHECKED)
    elif Path(workdir).resolve() != Path(out).resolve():
        (Path(out) / RECHECKED).unlink(missing_ok=True)


def forget_rechecked(workdir: Path) -> None:
    """Remove what an earlier run in the same work folder re-checked, when this one re-checks nothing: its verdicts
    must not pass for this week's."""
    for path in (workdir / RECHECKED, workdir / LEDGER / f"{REFRESH}.json",
                 workdir / LEDGER / f"{REFRESH}.rejected.parquet"):
        path.unlink(missing_ok=True)
