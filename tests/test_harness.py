"""lm-evaluation-harness tasks for a release (`timelyqa export lm-eval`): lm-eval itself loads them through
`datasets.load_dataset`, asks timelyqa's prompt and scores with timelyqa's grader; and a real run of `lm_eval`
against the real small model (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.test_export import release  # noqa: F401 - the fixture: a small release of wikidata and news rows
from timelyqa.cli import app
from timelyqa.export import prompt_messages, read_split
from timelyqa.rewards import Gold, extract_answer, grade


@pytest.fixture
def tasks(release: Path, tmp_path: Path) -> Path:  # noqa: F811
    out = tmp_path / "tasks"
    result = CliRunner().invoke(app, ["export", "lm-eval", str(release), "--out", str(out), "--split", "train"])
    assert result.exit_code == 0, result.output
    assert "timelyqa_default" in result.output and f"--include_path {out}" in result.output
    return out


def loaded(tasks: Path, name: str) -> object:  # noqa: F811
    from lm_eval.tasks import TaskManager  # noqa: PLC0415 - lm-eval is the test group's

    return TaskManager(include_path=str(tasks), include_defaults=False).load([name])["tasks"][name]


def test_lm_eval_loads_the_task_with_timelyqas_prompt_and_no_live_row(release: Path, tasks: Path) -> None:  # noqa: F811
    task = loaded(tasks, "timelyqa_news")
    docs = list(task.test_docs())
    fixed = [r for r in read_split(release, "news", "train").to_dicts() if r["answer"]]
    assert sorted(d["id"] for d in docs) == sorted(r["id"] for r in fixed)  # the live row left out
    by_id = {r["id"]: r for r in fixed}
    for doc in docs:
        row = by_id[doc["id"]]
        assert task.doc_to_text(doc) == prompt_messages(row["question"], row["as_of"], row["answer_type"],
                                                        row["answer_value"])[0]["content"]


def test_lm_eval_scores_a_reply_with_timelyqas_grader(tasks: Path) -> None:
    task = loaded(tasks, "timelyqa_default")
    docs = {d["question"]: d for d in task.test_docs()}
    population = docs["What is the population of Campo Alto?"]
    assert task.process_results(population, ["It is about <answer>163 900</answer>"]) == {"exact_match": 1.0}
    assert task.process_results(population, ["<answer>163,000</answer>"]) == {"exact_match": 0.0}
    held = docs["When did Atlantic Cup 2026 take place?"]
    assert task.process_results(held, ["Answer: 2026-07-19"]) == {"exact_match": 1.0}


@pytest.mark.slow  # lm_eval's own command line against SmolLM2 served by llama.cpp (tests/smollm2.py)
@pytest.mark.timeout(600)
def test_lm_eval_runs_the_task_against_a_real_model(release: Path, tasks: Path, tmp_path: Path) -> None:  # noqa: F811
    """What each sample scored in lm-eval's log is what timelyqa's grader gives the model's reply; the small model
    knows nothing of the invented world, so the test asserts agreement, not accuracy."""
    from tests.smollm2 import ALIAS, serve  # noqa: PLC0415

    with serve() as root:
        command = [str(Path(sys.executable).with_name("lm_eval")), "--include_path", str(tasks), "--tasks",
                   "timelyqa_default", "--model", "local-chat-completions", "--model_args",
                   f"model={ALIAS},base_url={root}/chat/completions,num_concurrent=1,max_retries=1",
                   "--apply_chat_template", "--limit", "3", "--log_samples", "--output_path", str(tmp_path / "lm")]
        done = subprocess.run(command, capture_output=True, text=True, timeout=540,
                              env={"PATH": "/usr/bin:/bin", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
                                   "HOME": str(tmp_path), "OPENAI_API_KEY": "none"})
    assert done.returncode == 0, done.stderr[-3000:]
    samples = [json.loads(line) for path in (tmp_path / "lm").rglob("samples_timelyqa_default_*.jsonl")
               for line in path.read_text().splitlines()]
    assert len(samples) == 3
    for sample in samples:
        doc, reply = sample["doc"], sample["resps"][0][0]
        gold = Gold.of(doc["answer"], doc["answer_aliases"], doc["answer_type"], doc["answer_value"])
        assert sample["exact_match"] == grade(extract_answer(reply), gold), sample
        assert sample["arguments"]["gen_args_0"]["arg_0"]  # the prompt lm-eval sent
