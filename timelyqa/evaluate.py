"""Scoring a model on a release: every row of a split asked (or read from a file of predictions), graded by the
release's grader, kept with its verdict, and reported by config, source, level and event month.

A prediction is graded by `timelyqa.rewards.grade` (the grader the release's manifest names); the verdict says
what happened to the row, so that a missing prediction is told apart from a wrong one:

- `correct` / `wrong`: graded;
- `no_prediction`: the file of predictions has none for the row (scored 0 and listed in the report);
- `no_answer`: the model replied without an answer (no <answer> tag and nothing else usable);
- `unscorable`: the row has no fixed answer and none could be found when it was asked (a live question whose recipe
  failed); reported with its reason, never counted as wrong, and left out of every accuracy.

The results file is a function of the release, the predictions and the clock alone: the same inputs give the same
bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.evaluation.predictions import PredictionReject, Predictions, Rejected, read_predictions
from timelyqa.evaluation.report import MONTH, Z95, Accuracy, Header, accuracies, plot_by_month, report, wilson
from timelyqa.evaluation.results import (JUDGE_PROMPT, JUDGED_TYPES, RESULT_SCHEMA, SCORED, Asked, Verdict,
                                         asked_rows, judge, results_frame, verdict_of)
from timelyqa.export import PROMPT_VERSION, prompt_messages, read_split
from timelyqa.files import write_parquet
from timelyqa.release_manifest import ReleaseManifest
from timelyqa.rewards import Gold, extract_answer

__all__ = ["JUDGED_TYPES", "JUDGE_PROMPT", "MONTH", "PLOT", "REPORT", "RESULTS", "RESULT_SCHEMA", "SCORED", "Z95",
           "Accuracy", "Asked", "Evaluation", "Header", "PredictionReject", "Predictions", "Rejected", "Resolver",
           "Verdict", "accuracies", "ask_model", "asked_rows", "asked_split", "evaluate", "judge", "plot_by_month",
           "read_predictions", "release_configs", "release_version", "report", "resolve_live", "results_frame",
           "sha256_of", "verdict_of", "wilson"]

RESULTS = "results.parquet"
REPORT = "report.md"
PLOT = "accuracy_by_month.png"

# ---------------------------------------------------------------- a release, whole


def release_configs(release: Path) -> tuple[str, ...]:
    """The configs a release folder holds, in its manifest's order."""
    files = ReleaseManifest.load(release).files
    configs = tuple(dict.fromkeys(meta.config for meta in files.values() if meta.config))
    if not configs:
        raise ConfigError(f"{release}: not a release folder (its manifest.json lists no configs: a source's output? "
                          f"make a release of it with `timelyqa release --from {release} --out DIR`)")
    return configs


def release_version(release: Path) -> str:
    return ReleaseManifest.load(release).version or "unversioned"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def asked_split(release: Path, configs: Sequence[str] | None, split: str) -> tuple[list[Asked], tuple[str, ...]]:
    """Every row of `split` in each of `configs`, and the configs read. By default, `default` (every source's fixed
    rows) and from each other config the rows `default` leaves out (live questions, which need their source's
    columns); a config without the split is passed over then, but an error when named."""
    asked: list[Asked] = []
    seen: set[str] = set()
    read: list[str] = []
    for config in configs or release_configs(release):
        try:
            frame = read_split(release, config, split)
        except ConfigError:
            if configs or config == "default":
                raise
            continue
        rows = [a for a in asked_rows(frame.filter(~pl.col("id").is_in(list(seen))), config)]
        seen.update(frame["id"].to_list())
        if rows:
            asked += rows
            read.append(config)
    return asked, tuple(read)


def _parse_clock(text: str | None, now: datetime) -> datetime:
    if text is None:
        return now
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--at {text!r}: not an ISO date-time (e.g. 2026-11-10T09:00+00:00)") from None
    if moment.tzinfo is None:
        raise ConfigError(f"--at {text!r}: give the clock's offset (e.g. +00:00)")
    return moment

# ---------------------------------------------------------------- live questions, resolved when asked

Resolver = Callable[[Sequence[Any], datetime, Path], Sequence[Any]]
"""(recipes, clock, work folder) -> one `timelyqa.official.resolve.Answer` per recipe."""


def resolve_live(asked: Sequence[Asked], clock: datetime, work: Path, *, crawl: Crawl,
                 resolver: Resolver | None = None, variables: Mapping[str, str] | None = None,
                 allow_hosts: Sequence[str] = ()) -> list[Asked]:
    """The live rows (no fixed answer, a recipe in the row) answered at `clock` by their recipes, through `crawl`
    (the crawler's port; `resolver`, when given, answers instead), and asked with that clock; a row whose recipe
    fails stays unscorable with the recipe's reason. The recipes are a release's, third-party data: they run no
    code, and reach public addresses only, each its own host, unless the operator names a host (`variables`,
    `allow_hosts`: timelyqa.official.resolve's trust by origin)."""
    from timelyqa.official.recipe import RecipeError, parse_recipe  # noqa: PLC0415

    out = list(asked)
    live: dict[int, Any] = {}
    for index, item in enumerate(out):
        if item.gold is not None or not item.row.get("recipe"):
            continue
        try:
            live[index] = parse_recipe(item.row["recipe"], name=f"row {item.row['id']}")
        except RecipeError as exc:
            out[index] = replace(item, unscorable=f"recipe_invalid: {_cut(str(exc))}")
    if not live:
        return out
    recipes = list({r.id: r for r in live.values()}.values())
    resolve_all = resolver or _resolver(crawl, variables or {}, allow_hosts)
    answers = {a.recipe.id: a for a in resolve_all(recipes, clock, work)}
    for index, recipe in live.items():
        item, answer = out[index], answers.get(recipe.id)
        if answer is None or answer.value is None:
            why = "no answer" if answer is None else f"{answer.reason}: {_cut(answer.detail or '')}"
            out[index] = replace(item, unscorable=f"recipe failed at {clock.isoformat()}: {why}")
            continue
        gold_row = answer.row()
        local = clock.astimezone(ZoneInfo(recipe.timezone))
        question = f"Current time: {local:%Y-%m-%d %H:%M} ({recipe.timezone}). {item.row['question']}"
        row = {**item.row, "question": question, "answer": gold_row["answer"],
               "answer_aliases": gold_row["answer_aliases"], "answer_type": gold_row["answer_type"],
               "answer_value": gold_row["answer_value"]}
        messages = prompt_messages(question, None, row["answer_type"], row["answer_value"])
        gold = Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])
        out[index] = replace(item, row=row, prompt=messages[0]["content"], gold=gold, unscorable=None)
    return out


def _resolver(crawl: Crawl, variables: Mapping[str, str], allow_hosts: Sequence[str]) -> Resolver:
    """The recipes' resolver through `crawl`, with the operator's variables (`--var`: a recipe's `{site}` and the
    like) and the hosts the operator allows (`--allow-host`)."""
    def resolve_all(recipes: Sequence[Any], clock: datetime, work: Path) -> Sequence[Any]:
        from timelyqa.official.pages import PageStore  # noqa: PLC0415
        from timelyqa.official.resolve import resolve  # noqa: PLC0415

        return resolve(recipes, [clock], work / "crawl", crawl=crawl, store=PageStore(work / "pages"),
                       variables=variables, allow_hosts=allow_hosts)
    return resolve_all


def _cut(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Evaluation:
    """What an evaluation wrote: its results and report, and the prediction lines it could not use."""

    results: pl.DataFrame
    results_path: Path
    report_path: Path
    rejected: list[Rejected]

    def summary(self) -> str:
        overall = accuracies(self.results)[0]
        low, high = wilson(overall.correct, overall.n)
        counts = dict(self.results["verdict"].value_counts().iter_rows())
        others = ", ".join(f"{counts[str(v)]} {v}" for v in Verdict if v not in (Verdict.CORRECT, Verdict.WRONG)
                           and counts.get(str(v)))
        return (f"accuracy {overall.value:.1%} ({low:.1%} to {high:.1%}) on {overall.n} rows"
                + (f"; {others}" if others else "") + f"; report in {self.report_path}")


def evaluate(release: Path, out: Path, *, crawl: Crawl, predictions: Path | None = None, llm: Any = None,
             configs: Sequence[str] | None = None, split: str = "test", after: date | None = None,
             at: str | None = None, now: datetime | None = None, release_name: str | None = None,
             revision: str | None = None, resolver: Resolver | None = None, judge_llm: Any = None,
             variables: Mapping[str, str] | None = None, allow_hosts: Sequence[str] = ()) -> Evaluation:
    """Score `split` of `release` (a folder) with a file of predictions or a model (an `LLM`), into `out`; live
    rows are resolved through `crawl` (the crawler's port) at the evaluation clock.

    Every setting is checked before any row is asked: the release and its configs, the predictions file, the clock."""
    if (predictions is None) == (llm is None):
        raise ConfigError("give either a predictions file or a model, not both and not neither")
    release = Path(release)
    clock = _parse_clock(at, now or datetime.now().astimezone())
    asked, wanted = asked_split(release, configs, split)
    asked = resolve_live(asked, clock, Path(out) / "live", crawl=crawl, resolver=resolver, variables=variables,
                         allow_hosts=allow_hosts)
    if predictions is not None:
        found = read_predictions(predictions, (a.row["id"] for a in asked))
        answers: dict[str, str | None] = dict(found.answers)
        rejected = found.rejected
        answered_by = f"predictions {Path(predictions).name} (sha256 {sha256_of(predictions)[:16]})"
    else:
        answers = ask_model(llm, [a for a in asked if a.gold is not None])
        rejected = []
        answered_by = f"model {llm.settings.model} at {llm.settings.base_url}"
    results = results_frame(asked, answers, split=split, clock=clock.isoformat())
    if judge_llm is not None:
        results = judge(results, judge_llm)
        answered_by += f"; names and text judged by {JUDGE_PROMPT} with {judge_llm.settings.model}"
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results_path, report_path = out / RESULTS, out / REPORT
    write_parquet(results, results_path)
    header = Header(release=release_name or str(release), version=release_version(release), revision=revision,
                    answered_by=answered_by, clock=clock.isoformat(), split=split, configs=wanted)
    plotted = plot_by_month(results, out / PLOT)
    report_path.write_text(report(results, header, after=after, rejected=rejected, plot=PLOT if plotted else None),
                           encoding="utf-8")
    return Evaluation(results, results_path, report_path, rejected)


def ask_model(llm: Any, asked: Sequence[Asked]) -> dict[str, str | None]:
    """Each row's prompt to the model (concurrently, cached and retried by the LLM layer); its answer is what the
    reply puts between <answer> tags, or the reply itself when it has none; '' when it gave nothing."""
    prompts = {a.row["id"]: a.prompt for a in asked}
    replies = llm.complete_all(PROMPT_VERSION, [[{"role": "user", "content": p}] for p in prompts.values()])
    return {row_id: extract_answer(reply) for row_id, reply in zip(prompts, replies, strict=True)}
