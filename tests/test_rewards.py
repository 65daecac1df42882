"""The answer rewards give the documented score on a table of completions, through verl's and TRL's entry points."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from timelyqa import rewards
from timelyqa.rewards import answer_f1_reward, answer_reward, compute_score, compute_score_f1

RAMBLING = ("Let me think about Northwind Analytics. The company had a turbulent year: after the board met in "
            "August 2026 it replaced its chief executive, and reports say the new chief executive officer is "
            "Ravi Menon, who was the chief financial officer before, although some sources still name the old one.")

# (case, completion, [answer, *aliases], exact-match score). The score is what compute_score and answer_reward give.
CASES = [
    ("answer in tags", "<answer>Ravi Menon</answer>", ["Ravi Menon"], 1.0),
    ("an alias", "<answer>R. Menon</answer>", ["Ravi Menon", "R. Menon"], 1.0),
    ("case and punctuation", "<answer>ravi MENON.</answer>", ["Ravi Menon"], 1.0),
    ("an article", "<answer>The Campo Alto!</answer>", ["Campo Alto"], 1.0),
    ("spaces inside the tags", "<answer>  Campo   Alto </answer>", ["Campo Alto"], 1.0),
    ("number without commas", "<answer>163900</answer>", ["163,900"], 1.0),
    ("number with commas", "<answer>163,900</answer>", ["163900"], 1.0),
    ("number with a decimal point", "<answer>163900.0</answer>", ["163,900"], 1.0),
    ("another number", "<answer>163,901</answer>", ["163,900"], 0.0),
    ("unit left out, the bare number an alias", "<answer>1.85</answer>", ["1.85 metre", "1.85"], 1.0),
    ("unit left out, no such alias", "<answer>1.85</answer>", ["1.85 metre"], 0.0),
    ("unit in the plural, US spelling", "<answer>1.850 meters</answer>", ["1.85 metre"], 1.0),
    ("a label that starts with a number", "<answer>2026</answer>", ["2026 FIFA World Cup"], 0.0),
    ("another unit", "<answer>1.85 km</answer>", ["1.85 metre"], 0.0),
    ("a word after a unitless number", "<answer>163,900 people</answer>", ["163,900"], 0.0),
    ("percent sign", "<answer>12%</answer>", ["12 percent"], 1.0),
    ("thousands in spaces", "<answer>1 219 530</answer>", ["1,219,530"], 1.0),
    ("thousands in narrow no-break spaces", "<answer>1\u202f219\u202f530</answer>", ["1,219,530"], 1.0),
    ("gold in no-break spaces", "<answer>1219530</answer>", ["1\u00a0219\u00a0530"], 1.0),
    ("thousands in spaces, with a unit", "<answer>8 848 metres</answer>", ["8,848 metre"], 1.0),
    ("thousands in spaces, another number", "<answer>1 219 531</answer>", ["1,219,530"], 0.0),
    ("digits after a space not in threes", "<answer>1 5</answer>", ["15"], 0.0),
    ("commas and spaces mixed", "<answer>1,219 530</answer>", ["1219530"], 0.0),
    ("a number word", "<answer>ten</answer>", ["10"], 1.0),
    ("a number word, capital and full stop", "<answer>Ten.</answer>", ["10"], 1.0),
    ("a number word as the gold", "<answer>0</answer>", ["zero"], 1.0),
    ("a compound number word", "<answer>twenty-one</answer>", ["21"], 1.0),
    ("a number word, another number", "<answer>ten</answer>", ["11"], 0.0),
    ("a number word in a phrase", "<answer>one of them</answer>", ["1"], 0.0),
    ("a number word opening a name", "<answer>Ten Downing Street</answer>", ["10 Downing Street"], 0.0),
    ("scale words are not read", "<answer>one hundred</answer>", ["100"], 0.0),
    ("date, day month year", "<answer>5 February 1990</answer>", ["5 February 1990"], 1.0),
    ("date, ISO", "<answer>1990-02-05</answer>", ["5 February 1990"], 1.0),
    ("date, month day, year", "<answer>February 5, 1990</answer>", ["5 February 1990"], 1.0),
    ("date, ordinal and abbreviation", "<answer>on the 5th of Feb. 1990</answer>", ["5 February 1990"], 1.0),
    ("date, ordinal without 'the'", "<answer>on 5th of Feb. 1990</answer>", ["5 February 1990"], 1.0),
    ("date, another day", "<answer>6 February 1990</answer>", ["5 February 1990"], 0.0),
    ("date coarser than the gold", "<answer>February 1990</answer>", ["5 February 1990"], 0.0),
    ("month gold, ISO month", "<answer>1990-02</answer>", ["February 1990"], 1.0),
    ("month gold, finer prediction", "<answer>5 February 1990</answer>", ["February 1990"], 1.0),
    ("month gold, year only", "<answer>1990</answer>", ["February 1990"], 0.0),
    ("year gold", "<answer>Feb 1990</answer>", ["1990"], 1.0),
    ("empty completion", "", ["Ravi Menon"], 0.0),
    ("empty tags", "<answer></answer>", ["Ravi Menon"], 0.0),
    ("blank tags", "<answer>  </answer>", ["Ravi Menon"], 0.0),
    ("long rambling answer without a tag", RAMBLING, ["Ravi Menon"], 0.0),
    ("long rambling answer with a tag", RAMBLING + "\n<answer>Ravi Menon</answer>", ["Ravi Menon"], 1.0),
    ("an 'Answer:' last line", RAMBLING + "\n\n**Answer:** Ravi Menon", ["Ravi Menon"], 1.0),
    ("reasoning, then the bare answer", "<think>" + RAMBLING + "</think>\nRavi Menon", ["Ravi Menon"], 1.0),
    ("cut off while thinking", "<think>" + RAMBLING, ["Ravi Menon"], 0.0),
    ("the last tag counts", "<answer>Brazil</answer> No, wait. <answer>Portugal</answer>", ["Portugal"], 1.0),
    ("the last tag counts, not an earlier one", "<answer>Portugal</answer> No. <answer>Brazil</answer>",
     ["Portugal"], 0.0),
    ("a wrong answer", "<answer>Lucas Andrade</answer>", ["Ravi Menon", "R. Menon"], 0.0),
    ("the answer inside a sentence", "<answer>The CEO is Ravi Menon.</answer>", ["Ravi Menon"], 0.0),
]


@pytest.mark.parametrize(("completion", "golds", "score"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_verl_compute_score_gives_the_documented_score(completion: str, golds: list[str], score: float) -> None:
    got = compute_score("timelyqa/wikidata", completion, {"target": golds}, {"index": 0, "split": "train"})
    assert got == score and isinstance(got, float)


@pytest.mark.parametrize(("completion", "golds", "score"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_trl_reward_gives_the_documented_score_for_text_and_chat_completions(
        completion: str, golds: list[str], score: float) -> None:
    chat = [{"role": "assistant", "content": completion}]
    got = answer_reward(prompts=[[{"role": "user", "content": "q"}]] * 2, completions=[completion, chat],
                        completion_ids=[[1], [1]], answer=[golds[0]] * 2, answer_aliases=[golds[1:]] * 2,
                        id=["a", "a"], as_of=["2026-11-10T10:00:00+00:00"] * 2, trainer_state=None,
                        log_extra=lambda *a: None, log_metric=lambda *a: None)
    assert got == [score, score]


@pytest.mark.parametrize("score", [compute_score, compute_score_f1])
def test_verl_scorers_take_the_keywords_verls_reward_manager_adds(score: Any) -> None:
    """verl adds reward_router_address and reward_model_tokenizer when a reward model is on, and any reward_kwargs."""
    got = score(data_source="timelyqa/wikidata", solution_str="<answer>Ravi Menon</answer>",
                ground_truth={"target": ["Ravi Menon"]}, extra_info={"index": 0},
                reward_router_address="127.0.0.1:30000", reward_model_tokenizer=None, format_penalty=0.1)
    assert got == 1.0


@pytest.mark.parametrize(("completion", "golds", "f1"), [
    ("<answer>Ravi Menon</answer>", ["Ravi Menon"], 1.0),
    ("<answer>Ravi</answer>", ["Ravi Menon"], 2 / 3),  # precision 1, recall 1/2
    ("<answer>163900.0</answer>", ["163,900"], 1.0),  # equal by value
    ("<answer>1 219 530</answer>", ["1,219,530"], 1.0),  # equal by value, not three tokens against one
    ("<answer>ten</answer>", ["10"], 1.0),
    ("<answer>February 1990</answer>", ["5 February 1990"], 0.8),  # coarser date: tokens only
    ("<answer>The CEO is Ravi Menon.</answer>", ["Ravi Menon"], 2 / 3),  # 2 of 4 tokens, both gold tokens
    (RAMBLING, ["Ravi Menon"], 2 * (2 / 44) / (1 + 2 / 44)),  # both gold tokens among 44: about 0.087
    ("", ["Ravi Menon"], 0.0),
    ("<answer>Lucas Andrade</answer>", ["Ravi Menon"], 0.0),
])
def test_token_f1_is_graded_and_low_for_rambling(completion: str, golds: list[str], f1: float) -> None:
    assert compute_score_f1("timelyqa/wikidata", completion, {"target": golds}) == pytest.approx(f1)
    assert answer_f1_reward([completion], [golds[0]], [golds[1:]]) == [pytest.approx(f1)]


@pytest.mark.parametrize("ground_truth", [
    {"target": ["Ravi Menon", "R. Menon"]},  # what the export writes, read back by datasets
    {"target": np.array(["Ravi Menon", "R. Menon"], dtype=object)},  # the same read back by pandas
    ["Ravi Menon", "R. Menon"],
    np.array(["Ravi Menon", "R. Menon"], dtype=object),
])
def test_compute_score_reads_ground_truth_as_datasets_or_pandas_give_it(ground_truth: object) -> None:
    assert compute_score("timelyqa/wikidata", "<answer>R. Menon</answer>", ground_truth) == 1.0
    assert compute_score("timelyqa/wikidata", "<answer>Lucas Andrade</answer>", ground_truth) == 0.0
    assert compute_score("timelyqa/wikidata", "<answer>Ravi Menon</answer>", "Ravi Menon") == 1.0


def test_trl_reward_reads_aliases_given_as_arrays() -> None:
    aliases = [np.array(["R. Menon"], dtype=object), None]
    got = answer_reward(["<answer>R. Menon</answer>", "Campo Alto"], ["Ravi Menon", "Campo Alto"], aliases)
    assert got == [1.0, 1.0]


def test_the_reward_file_runs_alone_in_a_fresh_environment_with_only_pint(tmp_path: Path) -> None:
    """verl imports `reward.custom_reward_function.path` as a lone file: copied with its folder `grading/` (the
    grader's parts) into a new virtual environment that has pint (the one package the card names) and nothing of
    timelyqa, it grades typed answers. Copied without the folder, loading it fails naming the folder."""
    venv = tmp_path / "venv"
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, venv], check=True, timeout=120)
    python = venv / "bin" / "python"
    # Offline: the locked wheel is in uv's cache since the project's own sync.
    subprocess.run([uv, "pip", "install", "--quiet", "--offline", "--python", python,
                    f"pint=={importlib.metadata.version('pint')}"], check=True, timeout=300)
    (tmp_path / "alone").mkdir()
    shutil.copy(rewards.__file__, tmp_path / "alone" / "reward.py")
    reward_file = tmp_path / "reward.py"
    shutil.copy(rewards.__file__, reward_file)
    shutil.copytree(Path(rewards.__file__).with_name("grading"), tmp_path / "grading",
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('custom_module', {str(reward_file)!r})\n"
        "module = importlib.util.module_from_spec(spec); sys.modules['custom_module'] = module\n"
        "spec.loader.exec_module(module)\n"
        "assert 'timelyqa' not in sys.modules and 'polars' not in sys.modules\n"
        "cases = json.loads(sys.argv[1])\n"
        "print(json.dumps([module.compute_score('timelyqa/x', c, g, {'index': 0}) for c, g in cases]))\n"
    )
    level = {"target": ["1.92 m"], "answer_type": "quantity",
             "answer_value": {"number": "1.92", "precision": -2, "unit": "m"}}
    day = {"target": ["Thursday 5 November 2026"], "answer_type": "date",
           "answer_value": {"date": "2026-11-05", "date_precision": "day"}}
    cases = [("<answer>192 cm</answer>", level), ("<answer>1.93 m</answer>", level),
             ("<answer>5 November 2026</answer>", day), ("<answer>4 November 2026</answer>", day),
             ("<answer>1990-02-05</answer>", {"target": ["5 February 1990"]})]
    proc = subprocess.run([python, "-I", "-c", script, json.dumps(cases)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [1.0, 0.0, 1.0, 0.0, 1.0]
    lone = script.replace(str(reward_file), str(tmp_path / "alone" / "reward.py"))
    alone = subprocess.run([python, "-I", "-c", lone, "[]"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert alone.returncode != 0
    assert "the grader's parts are missing: copy the folder grading/ beside" in alone.stderr.splitlines()[-1]
    installed = subprocess.run([uv, "pip", "list", "--python", python, "--format", "json"], capture_output=True,
                               text=True, check=True).stdout
    assert "timelyqa" not in installed and "polars" not in installed
