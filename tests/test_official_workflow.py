"""Trusted Python workflows (RT-QA's style): a recipe's script runs only when the operator opts in, only from recipe
files the operator holds (never from a release), in a subprocess that sees the evaluation clock in the recipe's zone
and none of the parent's credentials, within its time limit; its printed answer is typed and checked like any
recipe's. Each script writes a marker file, so a test knows whether it ran at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from timelyqa.official.catalog import load
from timelyqa.official.pages import PageStore
from timelyqa.official.resolve import Answer, resolve

ROOT = Path(__file__).resolve().parent.parent
LATE = datetime(2026, 11, 17, 3, 0, tzinfo=UTC)  # Tuesday 17 in UTC, still Monday 16 in Los Angeles

RECIPE = """recipe: 1
id: {id}
question: What is the level at the Caton gauge, as the agency's own workflow reads it?
level: L1
timezone: America/Los_Angeles
workflow: {script}
fetch: {{url: "{{gauges}}/gauges/caton/readings?date={{today}}"}}
extract: {{css: "td.level", type: number}}
round: 2
unit: m
valid: {{min: 0, max: 10}}
"""

# The level this workflow "reads" is the day of the month of TIMELYQA_TODAY over ten: the answer shows which date the
# script was given (16 -> 1.60 m in Los Angeles at LATE; 17 -> 1.70 m had it taken UTC's date).
READS_THE_CLOCK = """import json, os, pathlib
pathlib.Path({marker!r}).write_text(json.dumps(dict(os.environ)))
print("reading the gauge for", os.environ["TIMELYQA_TODAY"])
print(int(os.environ["TIMELYQA_TODAY"][-2:]) / 10)
"""


def workflow_recipe(folder: Path, body: str, *, recipe_id: str = "caton-by-workflow") -> Path:
    """A recipe file naming `wf.py` next to it, whose script writes `ran.json` (its environment) when it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "ran.json"
    (folder / "wf.py").write_text(body.replace("{marker!r}", repr(str(marker))), encoding="utf-8")
    (folder / f"{recipe_id}.yaml").write_text(RECIPE.format(id=recipe_id, script="wf.py"), encoding="utf-8")
    return marker


def run(folder: Path, tmp: Path, *, allow: bool, timeout: float | None = None) -> Answer:
    catalog = load(folder, allow_workflows=allow)
    [answer] = resolve(catalog.recipes, [LATE], tmp / "work", store=PageStore(tmp / "pages"),
                       workflows=catalog.workflows, workflow_timeout=timeout)
    return answer


def test_a_workflow_runs_only_when_the_operator_opts_in(tmp_path: Path) -> None:
    marker = workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    refused = run(tmp_path / "recipes", tmp_path, allow=False)
    assert (refused.reason, refused.value) == ("workflow_not_allowed", None)
    assert refused.detail == ("caton-by-workflow: runs wf.py; trusted workflows run only with --allow-workflows, "
                              "and never from a release")
    assert not marker.exists(), "the script never ran"
    assert not (tmp_path / "work").exists(), "and nothing was fetched in its place"

    allowed = run(tmp_path / "recipes", tmp_path, allow=True)
    assert (allowed.reason, allowed.value.text, allowed.value.number) == (None, "1.60 m", 1.6)
    assert marker.exists()
    assert allowed.row()["status"] == "ok" and allowed.row()["dates"] == [{"name": "today", "date": LATE.date()
                                                                           .replace(day=16)}]


def test_a_workflow_sees_the_clock_in_its_zone_and_none_of_the_parents_secrets(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {"HF_TOKEN": "hf_secret_1", "OPENAI_API_KEY": "sk-secret-2", "TIMELYQA_HUB_TOKEN": "secret-3",
               "TIMELYQA_LLM_API_KEY": "secret-4", "AWS_SECRET_ACCESS_KEY": "secret-5"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    marker = workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    answer = run(tmp_path / "recipes", tmp_path, allow=True)
    assert answer.value is not None and answer.value.text == "1.60 m", answer.detail
    seen = json.loads(marker.read_text())
    assert seen["TIMELYQA_AT"] == "2026-11-17T03:00:00+00:00"
    assert seen["TIMELYQA_TODAY"] == "2026-11-16", "the clock's date in Los Angeles, not UTC's (the 17th)"
    assert seen["TIMELYQA_TIMEZONE"] == "America/Los_Angeles"
    assert not set(secrets) & set(seen), f"a credential reached the workflow: {set(secrets) & set(seen)}"
    assert not any(value in " ".join(seen.values()) for value in secrets.values())
    assert {n for n in seen if n.startswith("TIMELYQA_")} == {"TIMELYQA_AT", "TIMELYQA_TODAY", "TIMELYQA_TIMEZONE"}
    assert seen["HOME"] != os.environ.get("HOME") and not Path(seen["HOME"]).exists(), \
        "a scratch home, removed after the run"


def test_a_workflow_past_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    pids = tmp_path / "recipes" / "child.pid"
    body = ("import pathlib, subprocess, time\n"
            "pathlib.Path({marker!r}).write_text('started')\n"
            "child = subprocess.Popen(['sleep', '120'])  # a browser it started, say\n"
            f"pathlib.Path({str(pids)!r}).write_text(str(child.pid))\n"
            "time.sleep(120)\nprint(1)\n")
    workflow_recipe(tmp_path / "recipes", body)
    began = time.monotonic()
    answer = run(tmp_path / "recipes", tmp_path, allow=True, timeout=0.8)
    took = time.monotonic() - began
    assert (answer.reason, answer.value) == ("workflow_timeout", None)
    assert answer.detail == "wf.py: still running after 0.8 s, killed"
    assert took < 5, f"killed at its limit, not when it finished ({took:.1f} s)"
    child = int(pids.read_text())
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the workflow's own children go with it"


@pytest.mark.slow  # two real time limits of 0.8 s: kept out of make check's minute
@pytest.mark.parametrize("answers", [False, True], ids=["runs-on", "answers-then-exits"])
def test_a_process_a_workflow_leaves_behind_does_not_stretch_its_time_limit(tmp_path: Path, answers: bool) -> None:
    """A child in a session of its own escapes the group kill and keeps the workflow's output open: the resolver
    must not wait for it (it did: a 1 s limit took as long as the child lived)."""
    pids = tmp_path / "recipes" / "escaped.pid"
    body = ("import pathlib, subprocess, time\n"
            "pathlib.Path({marker!r}).write_text('started')\n"
            "child = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
            f"pathlib.Path({str(pids)!r}).write_text(str(child.pid))\n"
            + ("print(2.5)\n" if answers else "time.sleep(60)\n"))
    workflow_recipe(tmp_path / "recipes", body)
    began = time.monotonic()
    try:
        answer = run(tmp_path / "recipes", tmp_path, allow=True, timeout=0.8)
        took = time.monotonic() - began
    finally:
        if pids.exists():
            os.kill(int(pids.read_text()), signal.SIGKILL)  # the one process this test started outside the group
    assert took < 5, f"the limit held ({took:.1f} s)"
    if answers:
        assert (answer.reason, answer.value.text if answer.value else None) == (None, "2.50 m"), answer.detail
    else:
        assert answer.reason == "workflow_timeout"


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to be reaped counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.parametrize(("body", "reason", "detail"), [
    ("raise RuntimeError('the gauge table moved')\n", "workflow_failed",
     "RuntimeError: the gauge table moved"),
    ("import sys\nprint('partial')\nsys.exit(3)\n", "workflow_failed", "wf.py: exit 3: "),
    ("pass\n", "workflow_failed", "wf.py: printed no answer"),
    ("print('fetched the page')\nprint(17.3)\n", "value_invalid", "17.30 above max 10"),
    ("print('n/a')\n", "value_invalid", "'n/a' on page 1 is not a number"),
], ids=["raises", "exits-nonzero", "prints-nothing", "outside-valid", "not-a-number"])
def test_a_workflow_that_fails_or_prints_a_bad_value_gets_its_reason_and_no_answer(tmp_path: Path, body: str,
                                                                                    reason: str, detail: str) -> None:
    workflow_recipe(tmp_path / "recipes", body)
    answer = run(tmp_path / "recipes", tmp_path, allow=True)
    row = answer.row()
    assert (row["status"], row["reason"], row["answer"], row["value"]) == ("failed", reason, None, None)
    assert detail in row["detail"] and "\n" not in row["detail"]


def release_parquet(folder: Path, path: Path) -> Path:
    """A release-like file: a row per question, the recipe's YAML text in `recipe` (as the Hub would serve it)."""
    text = (folder / "caton-by-workflow.yaml").read_text()
    pl.DataFrame({"recipe_id": ["caton-by-workflow"], "question": ["What is the level?"], "recipe": [text]}
                 ).write_parquet(path)
    return path


def test_recipes_from_a_release_never_run_a_workflow_even_with_the_flag(tmp_path: Path) -> None:
    marker = workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    # the script sits right next to the file, where a relative `workflow:` would find it
    parquet = release_parquet(tmp_path / "recipes", tmp_path / "recipes" / "test-00000-of-00001.parquet")
    catalog = load(parquet, allow_workflows=True)
    assert [r.id for r in catalog.recipes] == ["caton-by-workflow"] and catalog.workflows == {}
    answer = run(parquet, tmp_path, allow=True)
    assert (answer.reason, answer.value) == ("workflow_not_allowed", None)
    assert not marker.exists(), "the script never ran"


# ---- the same through `timelyqa live resolve` ----------------------------------------------------------------------

def timelyqa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command from this worktree's code (the installed entry point is main's): python -m timelyqa.cli."""
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "HF_TOKEN": "hf_parent_secret",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "timelyqa.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


@pytest.mark.slow
def test_live_resolve_runs_workflows_only_with_allow_workflows_and_only_from_files(tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    marker = workflow_recipe(recipes, READS_THE_CLOCK)
    at = ["--at", "2026-11-17T03:00:00+00:00"]

    without = timelyqa("live", "resolve", "--recipes", recipes, *at, "--out", tmp_path / "without")
    assert without.returncode == 0, without.stderr
    assert not marker.exists(), "no --allow-workflows: the script never ran"
    row = pl.read_parquet(tmp_path / "without" / "answers.parquet").row(0, named=True)
    assert (row["status"], row["reason"], row["answer"]) == ("failed", "workflow_not_allowed", None)
    assert "0 of 1 recipes answered" in without.stdout

    parquet = release_parquet(recipes, tmp_path / "test.parquet")
    released = timelyqa("live", "resolve", "--recipes", parquet, *at, "--allow-workflows", "--out", tmp_path / "rel")
    assert released.returncode == 0, released.stderr
    assert not marker.exists(), "a release's recipe never runs code, whatever the flag"
    assert pl.read_parquet(tmp_path / "rel" / "answers.parquet")["reason"].to_list() == ["workflow_not_allowed"]

    allowed = timelyqa("live", "resolve", "--recipes", recipes, *at, "--allow-workflows", "--workflow-timeout", "20",
                       "--out", tmp_path / "allowed")
    assert allowed.returncode == 0, allowed.stderr
    row = pl.read_parquet(tmp_path / "allowed" / "answers.parquet").row(0, named=True)
    assert (row["status"], row["answer"], row["value"], row["at"]) == ("ok", "1.60 m", 1.6, LATE)
    seen = json.loads(marker.read_text())
    assert "HF_TOKEN" not in seen and seen["TIMELYQA_TODAY"] == "2026-11-16"
