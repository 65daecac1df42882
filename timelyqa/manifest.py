"""The manifest of a source run: what went in, what each stage counted and dropped, and what came out."""

from __future__ import annotations

import importlib.metadata
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from timelyqa.errors import ConfigError
from timelyqa.files import write_text
from timelyqa.settings import problem
from timelyqa.reasons import SNAKE

MANIFEST = "manifest.json"
QUESTIONS = "questions.parquet"
REJECTED = "rejected.parquet"
RECHECKED = "rechecked.parquet"
"""Beside a run's questions: the ids of released rows the run checked again and found still true (timelyqa.released)."""


def code_version() -> str:
    try:
        return importlib.metadata.version("timelyqa")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _config_name(name: str) -> str:
    if not SNAKE.match(name) or name == "default":
        raise ValueError(f"{name!r} cannot name a release config (snake_case, not 'default')")
    return name


def _utc(moment: datetime) -> datetime:
    # A naive moment is taken as UTC: every date a release states is in UTC.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class Input(BaseModel):
    """One input of a run: a file with its hash, or an endpoint that was read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str | None = None
    url: str | None = None
    sha256: str | None = None


class Manifest(BaseModel):
    """`manifest.json` of a source output folder; written by the stage writer, read by `publish/` through this model."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    source: Annotated[str, AfterValidator(_config_name)]
    as_of: Annotated[datetime, AfterValidator(_utc)] = Field(strict=False)
    code_version: str
    inputs: dict[str, Input]
    counts: dict[str, NonNegativeInt]
    """The funnel, in the order the source's stages run; `questions` last."""
    rejects: dict[str, NonNegativeInt]
    """Rows in rejected.parquet per reason, in the order the source declares its reasons."""
    generators: list[str]
    settings: dict[str, Any]
    usage: dict[str, float] = Field(strict=False)
    timings: dict[str, float] = Field(strict=False)
    files: dict[str, str]
    """The sha256 of questions.parquet, rejected.parquet (and rechecked.parquet when the run has one) as this run
    wrote them: a reader trusts no file of the folder whose bytes differ."""
    details: dict[str, Any] = Field(default_factory=dict)
    """What only this source has to say (a window, a parser version)."""

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest of a source output folder; ConfigError, one line naming the file, when it is not one."""
        path = Path(folder) / MANIFEST
        try:
            return cls.model_validate_json(path.read_bytes())
        except OSError as exc:
            raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
        except ValidationError as exc:
            where, what = problem(exc)
            raise ConfigError(f"{path}: not a timelyqa manifest: {where or 'the file'}: {what}") from exc

    def write(self, folder: Path) -> None:
        write_text(Path(folder) / MANIFEST, self.to_json())

    def to_json(self) -> str:
        # Keys in the model's order and each mapping in its own (the funnel's), so the file reads top to bottom.
        return json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
