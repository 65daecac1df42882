"""The manifest of a release: its configs and data files, rows per split, sources with their funnels, what changed.

`publish/release.py` writes it and every reader (the card, the changelog, review, the Hub upload, export, evaluate,
the flows) reads it through `ReleaseManifest`, by attribute. The file on disk is what it always was (keys sorted,
two-space indent), and a manifest read and written again gives the same bytes: fields a file lacks are not added
(an older release), and keys the model does not know are kept (a newer one), so every release on the Hub loads.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from timelyqa.errors import ConfigError
from timelyqa.settings import problem

MANIFEST = "manifest.json"
Count = NonNegativeInt
Amount = float | int  # a usage figure: an int stays an int and a float a float, so a re-dump keeps the bytes


def _iso(text: str) -> str:
    datetime.fromisoformat(text)  # a moment the card prints as written: kept as text, checked here
    return text


class _Part(BaseModel):
    # Open to keys it does not know (a newer writer's), which a re-dump keeps; closed to changes once read.
    model_config = ConfigDict(extra="allow", frozen=True)


class DataFile(_Part):
    """A parquet file of the release: its hash and size, and the config and split whose rows it holds."""

    sha256: str
    bytes: Count = 0
    rows: Count = 0
    config: str = ""
    split: str = ""


class ReviewFile(_Part):
    """A `reviews/{source}.jsonl` file of review decisions (publish/review.py)."""

    sha256: str
    path: str = ""
    accepted: Count = 0
    rejected: Count = 0


class ConfigInfo(_Part):
    """A config: its split files in order, and its columns as the card's `dataset_info` states them."""

    splits: dict[str, list[str]] = Field(default_factory=dict)
    features: list[dict[str, Any]] | None = None


class SplitDates(_Part):
    """The split boundaries, ISO dates; all None when no row is dated."""

    newest_event_date: str | None = None
    test_from: str | None = None
    validation_from: str | None = None


class FunnelStep(_Part):
    stage: str
    count: Count


class RunManifest(_Part):
    """A source run's manifest as the release keeps it (timelyqa.manifest.Manifest without its timings); only what
    the release's readers use is named, the rest is kept as written."""

    source: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class RunEntry(_Part):
    """One run a source's rows came from this week: its files' hashes and its manifest."""

    questions_sha256: str = ""
    rejected_sha256: str = ""
    manifest: RunManifest = Field(default_factory=RunManifest)


class SourceSummary(_Part):
    """What a release says of one source: rows, carried rows, the funnel summed over its runs, rejects, runs."""

    rows: Count = 0
    duplicates_dropped: Count = 0
    group_key: str = ""
    carried: Count = 0
    carried_not_rechecked: Count = 0
    refresh_to_train: bool = False
    funnel: list[FunnelStep] = Field(default_factory=list)
    """The stages in the order the source runs them."""
    rejects: dict[str, Count] = Field(default_factory=dict)
    usage: dict[str, Amount] = Field(default_factory=dict)
    generators: list[str] = Field(default_factory=list)
    runs: list[RunEntry] = Field(default_factory=list)

    def funnel_counts(self) -> dict[str, int]:
        return {step.stage: step.count for step in self.funnel}

    def notes(self) -> list[str]:
        """The changelog lines the source's runs asked for (`details.changelog`)."""
        return [line for run in self.runs for line in run.manifest.details.get("changelog", [])]


class HumanVerifiedChanges(_Part):
    added: dict[str, Count] = Field(default_factory=dict)
    removed: dict[str, Count] = Field(default_factory=dict)


class RetiredRow(_Part):
    """A row that left the release: its id and source, and why (a reason of the run that retired it)."""

    id: str
    source: str
    reason: str
    detail: str = ""


class ReleaseChanges(_Part):
    """What changed since the previous release (publish.changelog.changes): counts per source and per move."""

    added: dict[str, Count] = Field(default_factory=dict)
    retired: dict[str, Count] = Field(default_factory=dict)
    moved: dict[str, Count] = Field(default_factory=dict)
    moved_by_source: dict[str, dict[str, Count]] = Field(default_factory=dict)
    regenerated: dict[str, Count] = Field(default_factory=dict)
    retired_why: dict[str, Count] = Field(default_factory=dict)
    retired_rows: list[RetiredRow] = Field(default_factory=list)
    carried_not_rechecked: dict[str, Count] = Field(default_factory=dict)
    renamed: dict[str, Count] = Field(default_factory=dict)
    refreshed: dict[str, dict[str, Count]] = Field(default_factory=dict)
    human_verified: HumanVerifiedChanges = Field(default_factory=HumanVerifiedChanges)


class ReleaseManifest(_Part):
    """`manifest.json` of a release folder."""

    name: str = "timelyqa"
    version: str
    created: Annotated[str, AfterValidator(_iso)]
    code_version: str = "unknown"
    grader_version: str | None = None
    """Older releases name none: they were graded by timelyqa_grader_v1."""
    previous_version: str | None = None
    changes: ReleaseChanges | None = None
    canary: str = ""
    repo_id: str | None = None
    configs: dict[str, ConfigInfo]
    counts: dict[str, dict[str, dict[str, Count]]] = Field(default_factory=dict)
    """Per config and split, rows per level."""
    files: dict[str, DataFile]
    reviews: dict[str, ReviewFile] = Field(default_factory=dict)
    split_rule: str = ""
    split_dates: SplitDates = Field(default_factory=SplitDates)
    sources: dict[str, SourceSummary] = Field(default_factory=dict)
    synthetic: bool = False
    """Written only when true (the demo's invented inputs): a release of real sources has no such key."""

    @classmethod
    def load(cls, folder: Path) -> ReleaseManifest:
        """The manifest of the release in `folder`; ConfigError in one line naming the folder and the file when it
        holds none, holds a source run's, or holds one that is not a release manifest."""
        path = Path(folder) / MANIFEST
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{folder}: not a release folder ({path}: {exc.strerror or exc})") from None
        if cls._of_a_run(text):
            raise ConfigError(f"{folder}: not a release folder ({path} is a source run's: a source's output? make a "
                              f"release of it with `timelyqa release --from {folder} --out DIR`)")
        return cls.parse(text, path)

    @classmethod
    def find(cls, folder: Path) -> ReleaseManifest | None:
        """The release in `folder`, or None when it holds none: no manifest.json, or a source run's. A release
        manifest that is malformed is a ConfigError naming the file, never None: a folder that looks empty would be
        built over."""
        path = Path(folder) / MANIFEST
        try:
            text = path.read_bytes()
        except OSError:
            return None
        return None if cls._of_a_run(text) else cls.parse(text, path)

    @staticmethod
    def _of_a_run(text: bytes) -> bool:
        """A JSON object naming neither a version nor configs: a source run's manifest (timelyqa.manifest)."""
        try:
            data = json.loads(text)
        except ValueError:
            return False
        return isinstance(data, dict) and "version" not in data and "configs" not in data

    @classmethod
    def parse(cls, text: bytes | str, path: Path) -> ReleaseManifest:
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            where, what = problem(exc)
            raise ConfigError(f"{path}: not a timelyqa release manifest: {where or 'the file'}: {what}") from None

    def to_json(self) -> str:
        """The file's text: what was set (no default the writer or an older file left out), keys sorted."""
        return json.dumps(self.model_dump(mode="json", exclude_unset=True), sort_keys=True, indent=2) + "\n"

    def write(self, folder: Path) -> None:
        (Path(folder) / MANIFEST).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def of(cls, value: ReleaseManifest | dict[str, Any]) -> ReleaseManifest:
        """The model of a manifest given as the model or as the file's JSON object."""
        return value if isinstance(value, cls) else cls.model_validate(value)

    def __getitem__(self, key: str) -> Any:
        """The file's JSON value under `key`, for code outside the package that reads a built release as its file
        (tests, notebooks). The package itself reads attributes: tests/test_release_manifest.py greps for it."""
        return self.model_dump(mode="json", exclude_unset=True)[key]

    def config_names(self, default: str = "default") -> list[str]:
        """`default` first, then the source configs in order."""
        return [default, *sorted(name for name in self.configs if name != default)] if default in self.configs \
            else sorted(self.configs)

    def rows(self, config: str, split: str | None = None) -> int:
        """Rows of a config (one split, or all), from `counts`."""
        by_split = self.counts.get(config, {})
        return sum(sum(by_split.get(s, {}).values()) for s in ([split] if split else by_split))

    def digests(self) -> dict[str, str]:
        return {name: info.sha256 for name, info in self.files.items()}
