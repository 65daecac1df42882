"""What a release hands the next week: its rows per source, and what a run says about them (re-checked, retired)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.files import sha256_file
from timelyqa.manifest import MANIFEST, QUESTIONS, RECHECKED, REJECTED
from timelyqa.refresh import REFRESH
from timelyqa.record import Split

# RECHECKED (from timelyqa.manifest) holds column `id`; the ids a run found no longer true are its rejects of
# stage `refresh` (timelyqa/refresh.py), which retire them.
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


def release_file(release: Path, manifest: dict, name: str) -> Path:
    """The file `name` of the release in `release`, once its bytes are those its manifest.json records: a file a
    killed or hand-edited release left would otherwise pass for the release's own. ConfigError names the file."""
    path = Path(release) / name
    listed = manifest.get("files")
    meta = listed.get(name) if isinstance(listed, dict) else None
    recorded = meta.get("sha256") if isinstance(meta, dict) else None
    if not path.is_file():
        raise ConfigError(f"{path}: listed in {Path(release) / 'manifest.json'} but missing: the release is "
                          "incomplete; restore it or build it again")
    if recorded is None or _sha256(path) != recorded:
        raise ConfigError(f"{path}: not the file {Path(release) / 'manifest.json'} records (sha256 differs): the "
                          "release is incomplete or was changed after it was built; restore it or build it again")
    return path


def run_questions(folder: Path) -> Path:
    """questions.parquet of a source output folder, once its manifest records its bytes: a run killed in a reused
    folder leaves new questions beside the old manifest, or none. ConfigError names the file."""
    path = Path(folder) / QUESTIONS
    try:
        recorded = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8")).get("files", {}).get(QUESTIONS)
    except (OSError, ValueError, AttributeError):
        recorded = None
    if recorded is None:
        raise ConfigError(f"{Path(folder) / MANIFEST}: missing or records no {QUESTIONS}: the run did not finish")
    if _sha256(path) != recorded:
        raise ConfigError(f"{path}: not the file its manifest.json describes (sha256 differs): the run did not "
                          "finish, or the file was changed after it")
    return path


def released_rows(release: Path, source: str) -> pl.DataFrame:
    """The rows of `source` in a release folder (its source config, every split but the reviewers' copies), as
    stored; or the questions of a source output folder of that source. An empty frame when it has none. Each file
    is checked against the sha256 its manifest records."""
    release = Path(release)
    if (release / QUESTIONS).is_file():  # a source output folder (a run), not a release
        rows = pl.read_parquet(run_questions(release))
        return rows.filter(pl.col("source") == source) if "source" in rows.columns else rows.clear()
    manifest = release_manifest(release)
    if manifest is None:
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release) nor a source output folder")
    listed = manifest["configs"].get(source, {}).get("splits", {})
    files = [release_file(release, manifest, name) for split, names in sorted(listed.items()) if split not in _COPIES
             for name in names]
    if not files:
        return pl.DataFrame()
    return pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed").sort("id")


@lru_cache(maxsize=1024)
def _sha256_of(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return sha256_file(Path(path))


def _sha256(path: Path) -> str:
    # A release's files are read several times in one build (the index, then the rows): hashed once, as long as
    # the file stays the same file (size, time and inode).
    stat = path.stat()
    return _sha256_of(str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)


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
