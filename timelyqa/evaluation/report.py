"""The evaluation report: accuracy overall and by group with 95% intervals, and the plot by event month."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from timelyqa.evaluation.predictions import Rejected
from timelyqa.evaluation.results import SCORED, Verdict
from timelyqa.export import PROMPT_VERSION
from timelyqa.rewards import GRADER_VERSION

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


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
