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
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError
from timelyqa.export import PROMPT_VERSION, prompt_messages, read_split
from timelyqa.files import write_parquet
from timelyqa.manifest import MANIFEST
from timelyqa.reasons import Reason
from timelyqa.rewards import GRADER_VERSION, Gold, extract_answer, grade

RESULTS = "results.parquet"
REPORT = "report.md"
PLOT = "accuracy_by_month.png"
Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


class Verdict(StrEnum):
    CORRECT = "correct"
    WRONG = "wrong"
    NO_PREDICTION = "no_prediction"
    NO_ANSWER = "no_answer"
    UNSCORABLE = "unscorable"


SCORED = (Verdict.CORRECT, Verdict.WRONG, Verdict.NO_PREDICTION, Verdict.NO_ANSWER)
"""The verdicts an accuracy counts (a row with no prediction scores 0); `unscorable` is left out."""


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


def verdict_of(prediction: str | None, gold: Gold) -> tuple[Verdict, float]:
    """The verdict and score (1.0 or 0.0) of one prediction against a row's gold."""
    if prediction is None:
        return Verdict.NO_PREDICTION, 0.0
    if not prediction.strip():
        return Verdict.NO_ANSWER, 0.0
    score = grade(prediction, gold)
    return (Verdict.CORRECT if score else Verdict.WRONG), score


RESULT_SCHEMA = pl.Schema({
    "id": pl.String(), "config": pl.String(), "split": pl.String(), "source": pl.String(), "level": pl.String(),
    "event_date": pl.Date(), "question": pl.String(), "prompt": pl.String(), "answer": pl.String(),
    "answer_type": pl.String(), "prediction": pl.String(), "verdict": pl.String(), "score": pl.Float64(),
    "reason": pl.String(), "grader_version": pl.String(), "prompt_version": pl.String(), "clock": pl.String(),
    "judge": pl.String(), "judge_grade": pl.String(),
})
"""`judge` names the judge prompt and model that graded a name or text the typed grader did not accept (null when
no judge was asked), `judge_grade` its SimpleQA letter: A correct, B incorrect, C not attempted."""


@dataclass(frozen=True)
class Asked:
    """One row as the model is asked it: the gold (None for a live row not resolved) and the prompt."""

    row: Mapping[str, Any]
    config: str
    prompt: str
    gold: Gold | None
    unscorable: str | None = None


def asked_rows(frame: pl.DataFrame, config: str) -> Iterator[Asked]:
    """A split's rows with their prompts, the same as the training export's (its one statement of time)."""
    for row in frame.iter_rows(named=True):
        messages = prompt_messages(row["question"], row.get("as_of"), row.get("answer_type"), row.get("answer_value"))
        answer = (row.get("answer") or "").strip()
        gold = Gold.of(row["answer"], row.get("answer_aliases"), row.get("answer_type"),
                       row.get("answer_value")) if answer else None
        unscorable = None if gold is not None else "live question with no recipe to resolve it"
        yield Asked(row, config, messages[0]["content"], gold, unscorable)


def results_frame(asked: Sequence[Asked], predictions: Mapping[str, str | None], *, split: str, clock: str
                  ) -> pl.DataFrame:
    """One result row per asked row: its prediction, verdict and score, sorted by config and id."""
    out = []
    for item in asked:
        row = item.row
        prediction = predictions.get(row["id"])
        if item.gold is None:
            verdict, score, reason = Verdict.UNSCORABLE, None, item.unscorable
        else:
            verdict, score = verdict_of(prediction, item.gold)
            reason = None
        out.append({
            "id": row["id"], "config": item.config, "split": split, "source": row["source"], "level": row["level"],
            "event_date": row.get("event_date"), "question": row["question"], "prompt": item.prompt,
            "answer": row["answer"], "answer_type": row.get("answer_type"), "prediction": prediction,
            "verdict": str(verdict), "score": score, "reason": reason, "grader_version": GRADER_VERSION,
            "prompt_version": PROMPT_VERSION, "clock": clock, "judge": None, "judge_grade": None})
    return pl.DataFrame(out, schema=RESULT_SCHEMA, orient="row").sort("config", "id")


JUDGE_PROMPT = "livenewsbench/grader"
"""LiveNewsBench's judge (its Figure 8, SimpleQA's grading prompt), asked only for names and text."""
JUDGED_TYPES = ("entity", "text")
"""Numbers, quantities, dates and lists stay with the typed grader: their rules are exact, a judge's are not."""


def judge(results: pl.DataFrame, llm: Any) -> pl.DataFrame:
    """The rows the typed grader marked wrong whose answer is a name or text, graded again by a judge model: its
    A makes the row correct; the judge and its letter are kept on every row it saw."""
    from timelyqa.llm import prompts  # noqa: PLC0415

    prompt = prompts.get(JUDGE_PROMPT)
    wanted = results.filter((pl.col("verdict") == str(Verdict.WRONG)) & pl.col("answer_type").is_in(JUDGED_TYPES))
    if not wanted.height:
        return results
    replies = llm.ask_all(prompt, [{"question": r["question"], "expected_answer": r["answer"],
                                    "answer": r["prediction"]} for r in wanted.iter_rows(named=True)])
    name = f"{prompt.id} by {llm.settings.model}"
    grades = {row_id: (reply.value.grade if reply.ok else None)
              for row_id, reply in zip(wanted["id"], replies, strict=True)}
    graded = pl.DataFrame({"id": list(grades), "_grade": list(grades.values())}, schema={"id": pl.String(),
                                                                                      "_grade": pl.String()})
    merged = results.join(graded, on="id", how="left")
    seen = pl.col("id").is_in(list(grades))
    return merged.with_columns(
        pl.when(seen).then(pl.lit(name)).otherwise(pl.col("judge")).alias("judge"),
        pl.when(seen).then(pl.col("_grade")).otherwise(pl.col("judge_grade")).alias("judge_grade"),
        pl.when(pl.col("_grade") == "A").then(pl.lit(str(Verdict.CORRECT))).otherwise(pl.col("verdict")).alias("verdict"),
        pl.when(pl.col("_grade") == "A").then(pl.lit(1.0)).otherwise(pl.col("score")).alias("score"),
    ).drop("_grade").select(list(RESULT_SCHEMA))


# ---------------------------------------------------------------- the report


def wilson(correct: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of `correct` out of `n` (0, 0 for no rows)."""
    if n == 0:
        return 0.0, 0.0
    p = correct / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Accuracy:
    group: str
    correct: int
    n: int

    @property
    def value(self) -> float:
        return self.correct / self.n if self.n else 0.0

    def cells(self) -> list[str]:
        low, high = wilson(self.correct, self.n)
        return [self.group, f"{self.value:.1%}", f"{low:.1%} to {high:.1%}", str(self.correct), str(self.n)]


def accuracies(results: pl.DataFrame, by: str | pl.Expr | None = None) -> list[Accuracy]:
    """Accuracy over the scored rows, overall or by a column (or expression), groups in order."""
    scored = results.filter(pl.col("verdict").is_in([str(v) for v in SCORED]))
    if by is None:
        return [Accuracy("all", int(scored["score"].sum() or 0), scored.height)]
    key = by if isinstance(by, pl.Expr) else pl.col(by)
    grouped = (scored.with_columns(key.cast(pl.String).fill_null("none").alias("_group"))
               .group_by("_group").agg(pl.col("score").sum().alias("correct"), pl.len().alias("n"))
               .sort("_group"))
    return [Accuracy(g, int(c), int(n)) for g, c, n in grouped.iter_rows()]


def _table(rows: Sequence[Accuracy], first: str) -> list[str]:
    head = [first, "accuracy", "95% interval", "correct", "rows"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(a.cells()) + " |" for a in rows]
    return lines


@dataclass(frozen=True)
class Header:
    """What heads a report: the release, what answered, and the clock."""

    release: str
    version: str
    revision: str | None
    answered_by: str
    clock: str
    split: str
    configs: tuple[str, ...]


MONTH = pl.col("event_date").dt.strftime("%Y-%m")


def plot_by_month(results: pl.DataFrame, path: Path) -> bool:
    """Accuracy by event month as bars with their 95% intervals and row counts, written as a PNG; False when no
    scored row has an event date. The same results give the same bytes (no time or version in the file)."""
    months = accuracies(results.filter(pl.col("event_date").is_not_null()), MONTH)
    if not months:
        return False
    import matplotlib  # noqa: PLC0415 - only a report draws

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt  # noqa: PLC0415

    values = [a.value for a in months]
    intervals = [wilson(a.correct, a.n) for a in months]
    errors = [[max(0.0, v - low) for v, (low, _) in zip(values, intervals, strict=True)],
              [max(0.0, high - v) for v, (_, high) in zip(values, intervals, strict=True)]]
    figure, axes = plt.subplots(figsize=(max(4.0, 0.7 * len(months) + 2), 3.2), dpi=100)
    bars = axes.bar([a.group for a in months], values, yerr=errors, capsize=3, color="#4c72b0")
    for bar, item in zip(bars, months, strict=True):
        axes.annotate(f"n={item.n}", (bar.get_x() + bar.get_width() / 2, 0.02), ha="center", fontsize=7,
                      color="white" if item.value > 0.1 else "black")
    axes.set_ylim(0, 1)
    axes.set_ylabel("accuracy")
    axes.set_xlabel("event month")
    axes.tick_params(axis="x", labelrotation=45, labelsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png", metadata={"Software": None})
    plt.close(figure)
    return True


def report(results: pl.DataFrame, header: Header, *, after: date | None = None,
           rejected: Sequence[Rejected] = (), plot: str | None = None) -> str:
    """The markdown report: accuracy overall and by config, level and event month, each with its 95% interval and
    its rows; the split around `after`; every row without a verdict and every prediction line not used."""
    lines = [f"# timelyqa evaluation: {header.answered_by}", "",
             f"- release: {header.release}, version {header.version}"
             + (f", revision {header.revision}" if header.revision else ""),
             f"- split: {header.split}; configs: {', '.join(header.configs)}",
             f"- answered by: {header.answered_by}",
             f"- clock: {header.clock}",
             f"- grader: {GRADER_VERSION}; prompt: {PROMPT_VERSION}", ""]
    counts = results["verdict"].value_counts().sort("verdict")
    lines += ["Verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.iter_rows()), ""]
    lines += ["## Accuracy", "", *_table(accuracies(results), "rows"), ""]
    for title, by in (("config", "config"), ("source", "source"), ("level", "level"),
                      ("event month", MONTH)):
        lines += [f"## By {title}", "", *_table(accuracies(results, by), title), ""]
        if title == "event month" and plot:
            lines += [f"![accuracy by event month, with 95% intervals]({plot})", ""]
    if after is not None:
        side = pl.when(pl.col("event_date") > after).then(pl.lit(f"after {after.isoformat()}")).otherwise(
            pl.lit(f"on or before {after.isoformat()}"))
        lines += [f"## Events after {after.isoformat()} (a model's training cutoff)", "",
                  *_table(accuracies(results.filter(pl.col("event_date").is_not_null()), side), "events"), ""]
    missing = results.filter(pl.col("verdict") == str(Verdict.NO_PREDICTION))["id"].to_list()
    if missing:
        lines += [f"## Rows with no prediction ({len(missing)}, scored 0)", "", *(f"- {i}" for i in missing), ""]
    unscorable = results.filter(pl.col("verdict") == str(Verdict.UNSCORABLE))
    if unscorable.height:
        lines += [f"## Unscorable rows ({unscorable.height}, left out of every accuracy)", ""]
        lines += [f"- {i}: {r}" for i, r in unscorable.select("id", "reason").iter_rows()] + [""]
    if rejected:
        lines += [f"## Prediction lines not used ({len(rejected)})", ""]
        lines += [f"- {r.reason}: {r.detail}" for r in rejected] + [""]
    return "\n".join(lines)


# ---------------------------------------------------------------- a release, whole


def release_configs(release: Path) -> tuple[str, ...]:
    """The configs a release folder holds, in its manifest's order."""
    try:
        manifest = json.loads((Path(release) / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release listing its files)") from None
    configs = tuple(dict.fromkeys(str(m["config"]) for m in files.values() if isinstance(m, dict) and m.get("config")))
    if not configs:
        raise ConfigError(f"{release}: not a release folder (its manifest.json lists no configs: a source's output? "
                          f"make a release of it with `timelyqa release --from {release} --out DIR`)")
    return configs


def release_version(release: Path) -> str:
    manifest = json.loads((Path(release) / MANIFEST).read_text(encoding="utf-8"))
    return str(manifest.get("version") or "unversioned")


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
                 resolver: Resolver | None = None, variables: Mapping[str, str] | None = None, allow_hosts: Sequence[str] = ()) -> list[Asked]:
    """The live rows (no fixed answer, a recipe in the row) answered at `clock` by their recipes, through `crawl`
    (the crawler's port; `resolver`, when given, answers instead), and asked with that clock; a row whose recipe fails stays unscorable with the recipe's reason. The recipes
    are a release's, third-party data: they run no code, and reach public addresses only, each its own host, unless
    the operator names a host (`variables`, `allow_hosts`: timelyqa.official.resolve's trust by origin)."""
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
    answers = {a.recipe.id: a for a in (resolver or _resolver(crawl, variables or {}, allow_hosts))(recipes, clock, work)}
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
    """The recipes' resolver through `crawl`, with the operator's variables (`--var`: a recipe's `{site}` and the like) and
    the hosts the operator allows (`--allow-host`)."""
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
