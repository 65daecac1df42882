"""One result row per row asked: its prompt, prediction, verdict and score, and a judge's second look at names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import polars as pl

from timelyqa.export import PROMPT_VERSION, prompt_messages
from timelyqa.rewards import GRADER_VERSION, Gold, grade


class Verdict(StrEnum):
    CORRECT = "correct"
    WRONG = "wrong"
    NO_PREDICTION = "no_prediction"
    NO_ANSWER = "no_answer"
    UNSCORABLE = "unscorable"


SCORED = (Verdict.CORRECT, Verdict.WRONG, Verdict.NO_PREDICTION, Verdict.NO_ANSWER)
"""The verdicts an accuracy counts (a row with no prediction scores 0); `unscorable` is left out."""


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
