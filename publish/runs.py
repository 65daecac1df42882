"""Source output folders read and checked (manifest, schema, hashes), and several runs of one source merged by id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.files import sha256_file
from timelyqa.manifest import MANIFEST, QUESTIONS, REJECTED, Manifest
from timelyqa.record import RECORD_SCHEMA


@dataclass(frozen=True)
class SourceRun:
    """One source output folder, checked: its manifest, its questions and the hashes of its files."""

    folder: Path
    source: str
    manifest: Manifest
    as_of: datetime
    questions: pl.DataFrame
    questions_sha256: str
    rejected_sha256: str | None



def _check_schema(folder: Path, schema: pl.Schema) -> None:
    columns = list(schema.items())
    for position, (name, dtype) in enumerate(RECORD_SCHEMA.items()):
        if position >= len(columns) or columns[position] != (name, dtype):
            found = f"{columns[position][0]!r} {columns[position][1]}" if position < len(columns) else "nothing"
            raise ConfigError(f"{folder}: questions.parquet does not start with RECORD_SCHEMA: "
                              f"column {position} is {found}, expected {name!r} {dtype}")


def load_run(folder: Path) -> SourceRun:
    """Read and check one source output folder; ConfigError names the folder and what is wrong."""
    folder = Path(folder)
    for name in (QUESTIONS, MANIFEST):
        if not (folder / name).is_file():
            raise ConfigError(f"{folder}: no {name} (not a source output folder)")
    manifest = Manifest.read(folder)
    questions_path = folder / QUESTIONS
    try:
        schema = pl.read_parquet_schema(questions_path)
    except Exception as exc:  # polars raises several kinds for a file that is not parquet
        raise ConfigError(f"{folder}: questions.parquet is not a parquet file ({exc})") from exc
    _check_schema(folder, schema)
    # Every file the manifest records, and the two every run has: a run killed in a reused folder must not pass
    # its new files off under the old manifest.
    names = sorted({*manifest.files, *(name for name in (QUESTIONS, REJECTED) if (folder / name).is_file())})
    for name in names:
        if not (folder / name).is_file():
            raise ConfigError(f"{folder / name}: recorded in its manifest.json but missing: the run did not finish, "
                              "or the file was removed after it")
    digests = {name: sha256_file(folder / name) for name in names}
    for name, digest in digests.items():
        if manifest.files.get(name) != digest:
            raise ConfigError(f"{folder / name}: not the file its manifest.json describes (sha256 differs): the run "
                              "did not finish, or the file was changed after it")
    questions = pl.read_parquet(questions_path)
    strays = questions.filter(pl.col("source") != manifest.source).height
    if strays:
        raise ConfigError(f"{folder}: {strays} rows of questions.parquet are not from source {manifest.source!r}")
    return SourceRun(folder=folder, source=manifest.source, manifest=manifest, as_of=manifest.as_of,
                     questions=questions, questions_sha256=digests[QUESTIONS], rejected_sha256=digests.get(REJECTED))


def merge_runs(runs: list[SourceRun]) -> tuple[pl.DataFrame, int]:
    """One row per id over several runs of one source, and how many duplicates were dropped.

    The row kept is the one true at the latest moment (row `as_of`), then the one from the newest run
    (manifest `as_of`), then the one from the run whose questions file hashes highest: arbitrary but
    independent of the order the folders were given in. Rows come back sorted by id.
    """
    schema = runs[0].questions.schema
    for run in runs[1:]:
        if run.questions.schema != schema:
            raise ConfigError(f"{run.folder}: questions.parquet has another schema than {runs[0].folder} "
                              f"(same source {run.source!r})")
    frames = [run.questions.with_columns(pl.lit(run.as_of).alias("__run_as_of"),
                                         pl.lit(run.questions_sha256).alias("__run_sha"))
              for run in runs]
    merged = (
        pl.concat(frames, how="vertical")
        .sort(["id", "as_of", "__run_as_of", "__run_sha"], descending=[False, True, True, True], nulls_last=True)
        .unique(subset="id", keep="first", maintain_order=True)
        .drop("__run_as_of", "__run_sha")
    )
    return merged, sum(run.questions.height for run in runs) - merged.height
