"""Released Wikipedia questions answered on another date: each row's recompute rule against a dump or the API.

`timelyqa wikipedia answer` reads the questions of a source output folder or a release, and gives
every question the value its page's infobox held at the last revision at or before the date, as
DailyQA's answer script does, beside the answer the release stored at its `as_of`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.files import write_parquet
from timelyqa.record import RECORD_SCHEMA
from timelyqa.sources import get
from timelyqa.stages import Dropped, Rejects
from timelyqa.wikipedia import typed
from timelyqa.wikipedia.answer import Rule, read_at, values_on
from timelyqa.mediawiki.revisions import PageUnavailable
from timelyqa.mediawiki.client import ApiSettings, MediaWikiAPI
from timelyqa.mediawiki.dump import ReadReject, check_dump

ANSWERS_SCHEMA = pl.Schema({
    "id": pl.String(), "question": pl.String(), "date": pl.Datetime("us", "UTC"), "answer": pl.String(),
    "answer_aliases": RECORD_SCHEMA["answer_aliases"], "answer_type": RECORD_SCHEMA["answer_type"],
    "answer_value": RECORD_SCHEMA["answer_value"],
    "answer_as_of": pl.String(), "as_of": pl.Datetime("us", "UTC"), "changed": pl.Boolean(),
})
"""One row per question: its answer at `date` typed as a release row's is (answer, aliases, type, value; null when
the page or key did not exist then), the stored answer and the moment it was true, and whether they differ."""


@dataclass(frozen=True)
class Answers:
    rows: pl.DataFrame
    rejected: list[Dropped]

    def summary(self) -> str:
        answered = self.rows.filter(pl.col("answer").is_not_null()).height
        changed = self.rows.filter(pl.col("changed")).height
        return (f"{self.rows.height} questions: {answered} answered on that date, {changed} differ from the stored "
                f"answer, {self.rows.height - answered} without an answer then")


def read_questions(path: Path) -> pl.DataFrame:
    """The Wikipedia questions of a source output folder (questions.parquet), a release folder (its `wikipedia`
    config), or one parquet file; a ConfigError names what is wrong."""
    path = Path(path)
    if path.is_file():
        files = [path]
    elif (path / "questions.parquet").is_file():
        files = [path / "questions.parquet"]
    else:
        files = sorted((path / "wikipedia").glob("*.parquet"))
    if not files:
        raise ConfigError(f"{path}: no Wikipedia questions (no questions.parquet, wikipedia/*.parquet or parquet file)")
    try:
        frame = pl.concat([pl.read_parquet(f, columns=["id", "question", "answer", "as_of", "recompute"])
                           for f in files], how="vertical")
    except Exception as exc:  # polars raises several kinds for a file that is not parquet or lacks a column
        raise ConfigError(f"{path}: not Wikipedia questions with a recompute rule ({' '.join(str(exc).split())[:200]})"
                          ) from exc
    return frame.unique("id", keep="first", maintain_order=True)


def answer_questions(questions: pl.DataFrame, when: datetime, *, dump: Path | None = None,
                     api: ApiSettings | None = None) -> Answers:
    """Every question's answer at `when`, from a dump with history (one streamed pass) or the live API."""
    if when.tzinfo is None:
        raise ConfigError(f"{when.isoformat()}: give the date with a time zone (revisions are in UTC)")
    rules = [Rule.from_json(text) for text in questions["recompute"]]
    if dump is not None and api is None:
        check_dump(Path(dump))
        found, rejected = values_on(Path(dump), rules, [when])
        values = [found[rule][0] for rule in rules]
    elif api is not None and dump is None:
        with MediaWikiAPI(api) as client:
            client.check()
            with ThreadPoolExecutor(max_workers=api.concurrency) as pool:
                got = list(pool.map(lambda rule: _answer_at(client, rule, when), rules))
        values = [value for value, _ in got]
        rejected = [reject for _, reject in got if reject is not None]
    else:
        raise ConfigError("answer from either a dump or the API, not both and not neither")
    # Each answer typed as the pipeline types a row's: from what the renderer read of its markup.
    answered = [None if value is None else typed.answer(value).row() for value in values]
    rows = questions.select("id", "question", "answer", "as_of").rename({"answer": "answer_as_of"}).with_columns(
        pl.lit(when).cast(pl.Datetime("us", "UTC")).alias("date"),
        *(pl.Series(name, [None if a is None else a[name] for a in answered], dtype=ANSWERS_SCHEMA[name])
          for name in ("answer", "answer_aliases", "answer_type", "answer_value")),
    )
    rows = rows.with_columns(pl.col("answer").ne_missing(pl.col("answer_as_of")).alias("changed"))
    return Answers(rows.select(list(ANSWERS_SCHEMA)).cast(dict(ANSWERS_SCHEMA)), rejected)


def _answer_at(client: MediaWikiAPI, rule: Rule, when: datetime) -> tuple[typed.Value | None, Dropped | None]:
    """One answer; a page the API cannot give costs only its own question, kept aside with the reason."""
    try:
        return read_at(client, rule, when), None
    except SourceContractError as exc:
        reason = exc.reason if isinstance(exc, PageUnavailable) else ReadReject.API_ERROR
        return None, Dropped({"page": rule.page, "page_id": rule.page_id, "key": rule.key}, reason,
                             f"{client.settings.endpoint}: page {rule.page!r} at {when.isoformat()}: {exc}")


def write_answers(answers: Answers, out: Path) -> None:
    """`out` (parquet) and, beside it, `{stem}.rejected.parquet` with what the dump could not give."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(answers.rows, out)
    rejects = Rejects(get("wikipedia"))
    rejects.extend(answers.rejected)
    rejects.write(out.with_name(f"{out.stem}.rejected.parquet"))

