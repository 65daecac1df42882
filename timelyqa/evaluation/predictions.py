"""A file of predictions read by row id, each line it cannot use kept aside with its reason."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from timelyqa.errors import ConfigError
from timelyqa.reasons import Reason
from timelyqa.rewards import extract_answer


class PredictionReject(Reason):
    """Why a line of a predictions file was not used."""

    NOT_JSON = "not_json", "the line is not a JSON object"
    NO_ID = "no_id", "the object has no string `id`"
    NO_ANSWER_FIELD = "no_answer_field", "the object has neither `answer` nor `completion` as a string"
    UNKNOWN_ID = "unknown_id", "the id names no row of the split evaluated"
    DUPLICATE_ID = "duplicate_id", "a second prediction for a row; the first is kept"


@dataclass(frozen=True)
class Rejected:
    line: int
    reason: PredictionReject
    detail: str


@dataclass
class Predictions:
    """The answers of a file, by row id, and the lines that gave none."""

    answers: dict[str, str] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)


def read_predictions(path: Path, ids: Iterable[str]) -> Predictions:
    """`path`'s JSON lines, each {"id": ..., "answer": ...} (or "completion": a whole reply, whose <answer> tag is
    taken). A line that cannot be used is kept aside with its reason; it costs nothing else."""
    known = set(ids)
    found = Predictions()
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the predictions ({type(exc).__name__})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row_id, answer = _entry(line)
            if row_id not in known:
                raise _BadLine(PredictionReject.UNKNOWN_ID, f"id {row_id[:80]!r} is no row of this split")
            if row_id in found.answers:
                raise _BadLine(PredictionReject.DUPLICATE_ID, f"id {row_id!r} predicted again; the first is kept")
        except _BadLine as bad:
            found.rejected.append(Rejected(number, bad.reason, f"{path}:{number}: {bad.detail}"))
            continue
        found.answers[row_id] = answer
    return found


class _BadLine(Exception):
    def __init__(self, reason: PredictionReject, detail: str) -> None:
        super().__init__(detail)
        self.reason, self.detail = reason, detail


def _entry(line: str) -> tuple[str, str]:
    """A line's row id and answer (a completion's final answer), or _BadLine saying why it has none."""
    try:
        obj = json.loads(line)
    except ValueError:
        raise _BadLine(PredictionReject.NOT_JSON, "not JSON") from None
    if not isinstance(obj, dict):
        raise _BadLine(PredictionReject.NOT_JSON, f"a JSON {type(obj).__name__}, not an object")
    row_id = obj.get("id")
    if not isinstance(row_id, str) or not row_id:
        raise _BadLine(PredictionReject.NO_ID, "no string id")
    if isinstance(obj.get("answer"), str):
        return row_id, obj["answer"]
    if isinstance(obj.get("completion"), str):
        return row_id, extract_answer(obj["completion"])
    raise _BadLine(PredictionReject.NO_ANSWER_FIELD, f"id {row_id[:80]!r}: no answer or completion string")
