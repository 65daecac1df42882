"""Source output folders as a finished run leaves them (questions, rejects, a manifest through the real model),
for the tests of releases, exports and publishing that start after the sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.files import sha256_file
from timelyqa.manifest import QUESTIONS, REJECTED, Manifest
from timelyqa.record import Rejected, to_frame


def write_source(folder: Path, frame: pl.DataFrame, source: str, *, as_of: str = "2026-06-01T00:00:00+00:00",
                 retired: dict[str, str] | None = None, **manifest: Any) -> Path:
    """`folder` holding `frame` as questions.parquet, one reject and a valid manifest; `manifest` overrides its keys.
    `retired` adds a reject of stage `refresh` for each released row id, with its reason (the run retires them)."""
    folder.mkdir(parents=True)
    frame.write_parquet(folder / QUESTIONS)
    rejected = [Rejected(source=source, stage="verify", reason="answer_not_unique", detail="2 rows", item="Q9")]
    rejected += [Rejected(source=source, stage="refresh", reason=reason, detail=f"released row {row_id}: {reason}",
                          item=json.dumps({"id": row_id})) for row_id, reason in sorted((retired or {}).items())]
    to_frame(rejected, Rejected).write_parquet(folder / REJECTED)
    body = {"source": source, "inputs": {"after": {"path": "dump.json.gz", "sha256": "ab" * 32}},
            "counts": {"entities": 40, "candidates": 20, "verified": frame.height},
            "rejects": {"answer_not_unique": 3, "answer_in_question": 2}, "timings": {"verify": 1.5},
            "generators": sorted(set(frame.get_column("generator").to_list())), "as_of": as_of,
            "code_version": "0.1.0", "settings": {}, "usage": {},
            "files": {name: sha256_file(folder / name) for name in (QUESTIONS, REJECTED)}, **manifest}
    Manifest.model_validate_json(json.dumps(body)).write(folder)
    return folder
