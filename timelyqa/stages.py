"""The stage writer: what a source run counts, drops and keeps, written as questions, rejects and a manifest."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from timelyqa.files import sha256_file, write_parquet, write_text
from timelyqa.manifest import MANIFEST, QUESTIONS, RECHECKED, REJECTED, Input, Manifest, code_version
from timelyqa.reasons import Dropped, Reason
from timelyqa.record import REJECTED_SCHEMA, QARecord
from timelyqa.sources import QUESTIONS as QUESTIONS_LINE
from timelyqa.sources import SourceSpec, get

class Outcome(Protocol):
    """What a step gives back beside its rows: its funnel counts and the items it dropped."""

    @property
    def counts(self) -> Mapping[str, int]: ...

    @property
    def rejected(self) -> Iterable[Dropped]: ...


LEDGER = "ledger"
"""The folder under `work/` where each part of a run (a Prefect task) saves what it counted and dropped."""


class Rejects:
    """Dropped items of one source, each with its reason and the stage the reason belongs to."""

    def __init__(self, spec: SourceSpec) -> None:
        self.spec = spec
        self.rows: list[dict[str, str]] = []

    def add(self, item: Mapping[str, Any] | str, reason: Reason, detail: str) -> None:
        stage = self.spec.reason_stage.get(str(reason))
        if stage is None:
            raise ValueError(f"{reason!r} is not a reject reason of source {self.spec.name!r}")
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)
        self.rows.append({"source": self.spec.name, "stage": stage, "reason": str(reason), "detail": detail,
                          "item": text})

    def extend(self, dropped: Iterable[Dropped]) -> None:
        for d in dropped:
            self.add(d.item, d.reason, d.detail)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.rows, schema=REJECTED_SCHEMA, orient="row")

    def write(self, path: Path) -> None:
        write_parquet(self.frame(), path)


class StageWriter:
    """One source run's ledger: `count(line, n)`, `reject(item, reason, detail)`, `keep(record)`, then `finish`.

    A run in several processes or Prefect tasks saves each part (`save`) in `work/ledger/`; `resume`
    gathers them, a retried part replacing its earlier attempt. `finish` writes questions.parquet,
    rejected.parquet and manifest.json under temporary names and renames them, the manifest last and the old
    one removed first, so a killed run never leaves a folder that looks complete.
    """

    def __init__(self, spec: SourceSpec | str, out: Path, *, work: Path | None = None) -> None:
        self.spec = spec if isinstance(spec, SourceSpec) else get(spec)
        self.out = Path(out)
        self.work = Path(work) if work is not None else self.out / "work"
        self.counts: Counter[str] = Counter()
        self.rejects = Rejects(self.spec)
        self.timings: dict[str, float] = {}
        self.usage: Counter[str] = Counter()
        self._kept: list[pl.DataFrame] = []
        self._records: list[QARecord] = []

    @classmethod
    def part(cls, spec: SourceSpec | str, workdir: Path) -> StageWriter:
        """The writer of one part of a run whose work folder is `workdir` (the run's folder is its parent): what a
        Prefect task of a stage counts and drops, saved with `save` and gathered by the run's `resume`."""
        return cls(spec, Path(workdir).parent, work=Path(workdir))

    def count(self, line: str, n: int = 1) -> None:
        if line not in self.spec.funnel or line == QUESTIONS_LINE:
            raise ValueError(f"{line!r} is not a funnel line of source {self.spec.name!r}")
        self.counts[line] += n

    def reject(self, item: Mapping[str, Any] | str, reason: Reason, detail: str) -> None:
        self.rejects.add(item, reason, detail)

    def reject_all(self, dropped: Iterable[Dropped]) -> None:
        self.rejects.extend(dropped)

    def take(self, outcome: Outcome) -> None:
        """A step's outcome (a reader's, a writer's: its `counts` by funnel line and its `rejected` items) in one
        call, where each step fed its counts and drops in a loop of its own."""
        for line, n in outcome.counts.items():
            self.count(line, n)
        self.reject_all(outcome.rejected)

    def keep(self, record: QARecord) -> None:
        self._records.append(record)

    def kept_ids(self) -> set[str]:
        """The ids of the rows kept so far."""
        return {r.id for r in self._records} | {i for f in self._kept for i in f.get_column("id").to_list()}

    def keep_frame(self, frame: pl.DataFrame) -> None:
        """Rows already in the record's columns (a stage that works on frames)."""
        self._kept.append(frame.select(list(self.spec.schema)).cast(dict(self.spec.schema)))

    def use(self, usage: Mapping[str, float]) -> None:
        """Model calls, tokens, seconds, SPARQL calls: summed into the manifest's `usage`."""
        self.usage.update(usage)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0) + time.perf_counter() - started, 3)

    def save(self, part: str) -> None:
        """Keep what this writer counted and dropped as `part` of the run, replacing an earlier attempt of it."""
        folder = self.work / LEDGER
        self.rejects.write(folder / f"{part}.rejected.parquet")
        write_text(folder / f"{part}.json", json.dumps({"counts": self.counts, "timings": self.timings,
                                                         "usage": self.usage}, sort_keys=True))

    @classmethod
    def resume(cls, spec: SourceSpec | str, out: Path, *, work: Path | None = None) -> StageWriter:
        """A writer holding every part saved under `work/ledger/` (by name: the same parts give the same rows)."""
        writer = cls(spec, out, work=work)
        for path in sorted((writer.work / LEDGER).glob("*.json")):
            saved = json.loads(path.read_text(encoding="utf-8"))
            writer.counts.update(saved["counts"])
            writer.timings |= saved["timings"]
            writer.usage.update(saved["usage"])
            rejected = path.with_name(f"{path.stem}.rejected.parquet")
            writer.rejects.rows += pl.read_parquet(rejected).to_dicts()
        return writer

    def questions(self) -> pl.DataFrame:
        schema = self.spec.schema
        frames = [*self._kept]
        if self._records:
            frames.append(pl.DataFrame([r.model_dump(mode="python") for r in self._records], schema=schema,
                                       orient="row"))
        if not frames:
            return pl.DataFrame(schema=schema)
        rows = pl.concat(frames, how="vertical").sort("id")
        untyped = rows.filter(pl.col("answer_type").is_null()).get_column("id").to_list()
        if untyped:  # a source that keeps frames must type its answers as a record would have to
            raise ValueError(f"source {self.spec.name!r}: {len(untyped)} rows without an answer_type "
                             f"(first: {untyped[0]})")
        return rows

    def finish(self, *, as_of: datetime, inputs: Mapping[str, Input], settings: Mapping[str, Any],
               details: Mapping[str, Any] | None = None) -> Manifest:
        """Write the three outputs of the run and return its manifest."""
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / MANIFEST).unlink(missing_ok=True)  # from here until the end the folder is visibly unfinished
        questions = self.questions()
        write_parquet(questions, self.out / QUESTIONS)
        self.rejects.write(self.out / REJECTED)
        by_reason = Counter(row["reason"] for row in self.rejects.rows)
        counts = {**self.counts, QUESTIONS_LINE: questions.height}
        manifest = Manifest(
            source=self.spec.name, as_of=as_of, code_version=code_version(), inputs=dict(inputs),
            counts={line: counts[line] for line in self.spec.funnel if line in counts},
            rejects={str(r): by_reason[str(r)] for r in self.spec.reasons if by_reason[str(r)]},
            generators=sorted(set(questions.get_column("generator").to_list())), settings=dict(settings),
            usage=dict(self.usage), timings=self.timings,
            files={name: sha256_file(self.out / name) for name in (QUESTIONS, REJECTED, RECHECKED)
                   if name != RECHECKED or (self.out / name).is_file()},
            details=dict(details or {}))
        manifest.write(self.out)
        return manifest

