"""`timelyqa eval`: a release's split scored from a file of predictions or a model, every row kept with its verdict,
and the report's accuracies by config, source, level and month with their intervals."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.llmserver import ScriptedLLM, Step
from tests.test_export import release  # noqa: F401 - the fixture: a small release of wikidata and news rows
from spiders import run as spiders_run
from timelyqa.cli import app
from timelyqa.errors import ConfigError
from timelyqa.evaluate import PLOT, PredictionReject, Verdict, evaluate, wilson
from timelyqa.export import read_split

CLOCK = "2026-06-03T09:00:00+00:00"


LIVE = ("Current time: 2026-01-17 09:00 (Europe/London). What is today's forecast high for Port Alder, in degrees "
        "Celsius?")


def split_rows(release: Path, split: str) -> dict[str, dict[str, Any]]:  # noqa: F811
    return {r["question"]: r for r in read_split(release, "default", split).to_dicts()}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def scored(release: Path, tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]], Any]:  # noqa: F811
    """The train split scored from predictions a scripted agent wrote: right in other forms, wrong, empty, missing,
    and lines that name nothing."""
    rows = split_rows(release, "train")
    by = {q.split()[-1].rstrip("?"): r["id"] for q, r in rows.items()}
    lines = [
        json.dumps({"id": by["Analytics"], "answer": "R. Menon"}),  # an alias: right
        json.dumps({"id": by["Alto"], "answer": "163 900"}),  # spaced thousands: right
        json.dumps({"id": by["place"], "completion": "It was held then.\n<answer>2026-07-19</answer>"}),  # ISO: right
        json.dumps({"id": by["founded"], "answer": "March 1990"}),  # wrong month
        json.dumps({"id": by["metres"], "answer": ""}),  # an empty answer
        "{not json",
        json.dumps({"id": "no-such-row", "answer": "x"}),
        json.dumps({"answer": "no id"}),
        json.dumps({"id": by["place"], "answer": "a second try"}),
    ]
    predictions = write_lines(tmp_path / "predictions.jsonl", lines)
    done = evaluate(release, tmp_path / "eval", predictions=predictions, split="train", at=CLOCK,
                    after=date(2026, 1, 31), crawl=spiders_run.crawl)
    return predictions, rows, done


def test_every_row_gets_its_verdict_from_the_grader(scored: Any) -> None:
    _, rows, done = scored
    verdicts = {r["question"]: r["verdict"] for r in done.results.to_dicts()}
    assert verdicts == {
        "Who is the chief executive officer of Northwind Analytics?": Verdict.CORRECT,
        "What is the population of Campo Alto?": Verdict.CORRECT,
        "When did Atlantic Cup 2026 take place?": Verdict.CORRECT,
        "When was Serrano Atlético founded?": Verdict.WRONG,
        "What is the height of Lucas Andrade, in metres?": Verdict.NO_ANSWER,
        "Riyadh Falcons FC won which cup in 2026?": Verdict.NO_PREDICTION,
        "Who won the Riyadh derby?": Verdict.NO_PREDICTION,
        "On 21 August 2026: Valmora CF sign Mateo Ferreira for a fee of how many euros, in millions?":
            Verdict.NO_PREDICTION,
        LIVE: Verdict.UNSCORABLE,
    }
    assert set(verdicts) == {*rows, LIVE}  # the live row comes from the news config: `default` leaves it out
    kept = {r["question"]: r["prediction"] for r in done.results.to_dicts()}
    assert kept["When did Atlantic Cup 2026 take place?"] == "2026-07-19"  # the tag's answer, the first line kept
    assert kept["Who won the Riyadh derby?"] is None


def test_lines_that_name_no_row_are_counted_with_their_reason(scored: Any) -> None:
    predictions, _, done = scored
    assert [(r.line, r.reason) for r in done.rejected] == [
        (6, PredictionReject.NOT_JSON), (7, PredictionReject.UNKNOWN_ID), (8, PredictionReject.NO_ID),
        (9, PredictionReject.DUPLICATE_ID)]
    text = done.report_path.read_text()
    assert f"{predictions}:7: id 'no-such-row' is no row of this split" in text


def test_the_report_gives_accuracies_with_intervals_by_group(scored: Any) -> None:
    _, _, done = scored
    text = done.report_path.read_text()
    low, high = wilson(3, 8)
    assert f"| all | 37.5% | {low:.1%} to {high:.1%} | 3 | 8 |" in text
    assert "| wikidata | 50.0% |" in text and "| news | 0.0% |" in text  # by source: 3 of 6, 0 of 2
    # By event month: January holds the CEO, the population, the cup and both fixed news rows (2 right of 5);
    # February the date, the founding and the height (1 of 3: one right, one wrong, one empty).
    assert re.search(r"\| 2026-01 \| 40\.0% \| [^|]+ \| 2 \| 5 \|", text)
    assert re.search(r"\| 2026-02 \| 33\.3% \| [^|]+ \| 1 \| 3 \|", text)
    # --after 2026-01-31: the February events against the January ones.
    assert re.search(r"\| after 2026-01-31 \| 33\.3% \| [^|]+ \| 1 \| 3 \|", text)
    assert re.search(r"\| on or before 2026-01-31 \| 40\.0% \| [^|]+ \| 2 \| 5 \|", text)
    assert "| default | 37.5% |" in text and "| news |" in text  # by config: the live row's config is listed
    assert "## Unscorable rows (1, left out of every accuracy)" in text
    assert "## Rows with no prediction (3, scored 0)" in text
    assert f"clock: {CLOCK}" in text and "grader: timelyqa_grader_v4" in text


def test_the_same_predictions_give_the_same_results_byte_for_byte(scored: Any, release: Path,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    predictions, _, done = scored
    again = evaluate(release, tmp_path / "again", predictions=predictions, split="train", at=CLOCK,
                     after=date(2026, 1, 31), crawl=spiders_run.crawl)
    assert again.results_path.read_bytes() == done.results_path.read_bytes()
    assert again.report_path.read_text() == done.report_path.read_text()
    assert (tmp_path / "again" / PLOT).read_bytes() == (tmp_path / "eval" / PLOT).read_bytes()


def test_the_report_embeds_a_plot_of_accuracy_by_month(scored: Any, tmp_path: Path) -> None:
    _, _, done = scored
    plot = tmp_path / "eval" / PLOT
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5_000
    assert f"![accuracy by event month, with 95% intervals]({PLOT})" in done.report_path.read_text()


def test_a_live_row_is_unscorable_not_wrong(release: Path, tmp_path: Path) -> None:  # noqa: F811
    live = {r["question"]: r for r in read_split(release, "news", "train").to_dicts()}[LIVE]
    predictions = write_lines(tmp_path / "p.jsonl", [json.dumps({"id": live["id"], "answer": "7"})])
    done = evaluate(release, tmp_path / "eval", predictions=predictions, configs=["news"], split="train", at=CLOCK,
                    crawl=spiders_run.crawl)
    row = done.results.filter(pl.col("id") == live["id"]).to_dicts()[0]
    assert row["verdict"] == Verdict.UNSCORABLE and row["score"] is None and "no recipe" in row["reason"]
    assert done.results.filter(pl.col("verdict") == Verdict.UNSCORABLE).height == 1
    assert "| all | 0.0% |" in done.report_path.read_text()  # two fixed news rows, none predicted; the live one out


def test_a_model_is_asked_the_exported_prompt_and_graded(release: Path, tmp_path: Path) -> None:  # noqa: F811
    """A scripted OpenAI-compatible server (a test double: the real small model's answers cannot be known in
    advance; tests/test_llm_real.py drives it) answers every question from a table of the test split."""
    answers = {"Who is the chief executive officer of Northwind Analytics?": "<answer>Ravi Menon</answer>",
               "When did Atlantic Cup 2026 take place?": "Answer: July 19, 2026"}

    def answer(request: dict[str, Any]) -> Step:
        prompt = request["messages"][-1]["content"]
        return Step(content=next((a for q, a in answers.items() if q.lower()[:-1] in prompt.lower()), "no idea"))

    with ScriptedLLM(default=answer) as llm:
        result = CliRunner().invoke(app, ["eval", str(release), "--model", "scripted-model", "--base-url", llm.url,
                                          "--split", "train", "--at", CLOCK, "--out", str(tmp_path / "eval")])
        prompts = [r["messages"][-1]["content"] for r in llm.requests]
    assert result.exit_code == 0, result.output
    results = pl.read_parquet(tmp_path / "eval" / "results.parquet")
    verdicts = dict(zip(results["question"], results["verdict"], strict=True))
    assert verdicts["Who is the chief executive officer of Northwind Analytics?"] == Verdict.CORRECT
    assert verdicts["When did Atlantic Cup 2026 take place?"] == Verdict.CORRECT
    assert verdicts["Who won the Riyadh derby?"] == Verdict.WRONG  # "no idea"
    assert len(prompts) == len(results) - 1  # every fixed row asked once; the live one not
    # The prompt is the export's: the time said once, the answer's form asked for; live rows are not asked.
    assert any(p.startswith("As of 2026-05-31, when did Atlantic Cup 2026 take place?") and "a date" in p
               for p in prompts)
    assert not [p for p in prompts if p.startswith("Current time:")]
    assert "accuracy" in result.output and "report in" in result.output


def test_bad_settings_stop_before_any_row_is_asked(release: Path, tmp_path: Path) -> None:  # noqa: F811
    runner = CliRunner()
    nothing = runner.invoke(app, ["eval", str(release), "--out", str(tmp_path / "a"), "--base-url",
                                  "http://127.0.0.1:9/v1", "--model", "m"])
    assert nothing.exit_code != 0 and "no OpenAI-compatible API answers" in nothing.output
    no_release = runner.invoke(app, ["eval", str(tmp_path), "--predictions", str(tmp_path / "p.jsonl"),
                                     "--out", str(tmp_path / "b")])
    assert no_release.exit_code != 0 and "not a release folder" in no_release.output
    assert not (tmp_path / "b" / "results.parquet").exists()
    with pytest.raises(ConfigError, match="--at 'yesterday'"):
        evaluate(release, tmp_path / "c", predictions=write_lines(tmp_path / "p.jsonl", []), at="yesterday",
                 crawl=spiders_run.crawl)
    with pytest.raises(ConfigError, match="no config 'nope'"):
        evaluate(release, tmp_path / "d", predictions=tmp_path / "p.jsonl", configs=["nope"], crawl=spiders_run.crawl)


def test_wilson_interval_matches_the_textbook() -> None:
    low, high = wilson(8, 10)  # Wilson's 95% interval for 8 of 10: 0.490 to 0.943
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    assert wilson(0, 0) == (0.0, 0.0)


def test_a_judge_grades_only_names_and_text_the_grader_did_not_accept(release: Path, tmp_path: Path  # noqa: F811
                                                                    ) -> None:
    """The judge is a scripted server (a test double: what a real judge model says of a paraphrase cannot be known
    in advance) that answers LiveNewsBench's grading prompt with A for every row it is shown."""
    rows = split_rows(release, "train")
    ceo, population = (rows["Who is the chief executive officer of Northwind Analytics?"],
                       rows["What is the population of Campo Alto?"])
    predictions = write_lines(tmp_path / "p.jsonl", [
        json.dumps({"id": ceo["id"], "answer": "Northwind's chief is Ravi Menon"}),
        json.dumps({"id": population["id"], "answer": "150,000"})])
    with ScriptedLLM(default=lambda request: Step(content='{"grade": "A"}')) as judge_server:
        result = CliRunner().invoke(app, ["eval", str(release), "--predictions", str(predictions), "--split", "train",
                                          "--at", CLOCK, "--judge-model", "scripted-model", "--judge-base-url",
                                          judge_server.url, "--out", str(tmp_path / "eval")])
        shown = [r["messages"][-1]["content"] for r in judge_server.requests]
    assert result.exit_code == 0, result.output
    results = {r["question"]: r for r in pl.read_parquet(tmp_path / "eval" / "results.parquet").to_dicts()}
    judged = results[ceo["question"]]
    assert (judged["verdict"], judged["judge_grade"]) == (Verdict.CORRECT, "A")
    assert judged["judge"] == "livenewsbench_grader_v1 by scripted-model"
    # A number is the typed grader's alone: wrong, and never shown to the judge.
    assert (results[population["question"]]["verdict"], results[population["question"]]["judge"]) == (Verdict.WRONG,
                                                                                                      None)
    assert len(shown) == 1 and "Gold target: Ravi Menon" in shown[0] and "Northwind's chief is Ravi Menon" in shown[0]
    assert "judged by livenewsbench/grader" in (tmp_path / "eval" / "report.md").read_text()


def test_the_card_shows_how_to_score_a_model_on_this_release(release: Path) -> None:  # noqa: F811
    card = (release / "README.md").read_text()
    version = json.loads((release / "manifest.json").read_text())["version"]
    section = card.split("## Scoring a model", 1)[1].split("\n## ", 1)[0]
    assert f"timelyqa eval ORG/NAME@{version} --model NAME" in section
    assert f"timelyqa export lm-eval ORG/NAME@{version}" in section and "unscorable, never wrong" in section


@pytest.mark.slow  # SmolLM2 served by llama.cpp (tests/smollm2.py): the real small model, end to end
@pytest.mark.timeout(600)
def test_a_real_model_is_scored_end_to_end_and_a_rerun_replays_its_cached_replies(release: Path,  # noqa: F811
                                                                                  tmp_path: Path) -> None:
    """The small model knows nothing of the invented world: the test asserts what holds for any model (every
    fixed row asked once and given a verdict by the grader, the report's accuracy the results', a rerun served by
    the reply cache giving the same bytes), not what it knows."""
    from tests.smollm2 import ALIAS, serve  # noqa: PLC0415

    out = tmp_path / "eval"
    command = ["eval", str(release), "--base-url", "", "--model", ALIAS, "--split", "train", "--at", CLOCK,
               "--out", str(out)]
    with serve() as root:
        command[3] = root
        first = CliRunner().invoke(app, command)
        assert first.exit_code == 0, first.output
        once = (out / "results.parquet").read_bytes()
        again = CliRunner().invoke(app, command)
    assert again.exit_code == 0, again.output
    assert (out / "results.parquet").read_bytes() == once
    results = pl.read_parquet(out / "results.parquet")
    fixed = results.filter(pl.col("verdict") != Verdict.UNSCORABLE)
    assert fixed.height == 8 and set(fixed["verdict"]) <= {Verdict.CORRECT, Verdict.WRONG, Verdict.NO_ANSWER}
    assert all(p is not None for p in fixed["prediction"])
    right = int(fixed["score"].sum())
    assert f"| all | {right / fixed.height:.1%} |" in (out / "report.md").read_text()
    cache = list((out / "llm-cache").rglob("*"))
    assert cache, "the replies were not cached"
