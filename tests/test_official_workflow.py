"""Trusted Python workflows (RT-QA's style): a recipe's script runs only when the operator opts in, only from recipe
files the operator holds (never from a release), in bubblewrap, seeing the evaluation clock in the recipe's zone and
none of the parent's credentials, within its time limit; its printed answer is typed and checked like any recipe's.
A sandboxed script can write nothing outside it, so a test knows whether it ran from what the resolver ran (`ran`,
every sandboxed run of the test with its output) and what is left running from the machine's /proc."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from spiders import run as spiders_run
from timelyqa.official import workflow
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
# script was given (16 -> 1.60 m in Los Angeles at LATE; 17 -> 1.70 m had it taken UTC's date). Its first line is
# the environment it saw.
READS_THE_CLOCK = """import json, os
print(json.dumps(dict(os.environ)))
print("reading the gauge for", os.environ["TIMELYQA_TODAY"])
print(int(os.environ["TIMELYQA_TODAY"][-2:]) / 10)
"""


def workflow_recipe(folder: Path, body: str, *, recipe_id: str = "caton-by-workflow") -> Path:
    """A recipe file naming `wf.py` next to it; the script's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "wf.py").write_text(body, encoding="utf-8")
    (folder / f"{recipe_id}.yaml").write_text(RECIPE.format(id=recipe_id, script="wf.py"), encoding="utf-8")
    return folder / "wf.py"


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[workflow.Ran]:
    """Every sandboxed run the resolver starts in this test, with what it printed (the real sandbox runs it)."""
    runs: list[workflow.Ran] = []
    real = workflow.execute

    def execute(*args: object, **kwargs: object) -> workflow.Ran:
        runs.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return runs[-1]
    monkeypatch.setattr(workflow, "execute", execute)
    return runs


def run(folder: Path, tmp: Path, *, allow: bool, timeout: float | None = None) -> Answer:
    catalog = load(folder, allow_workflows=allow)
    [answer] = resolve(catalog.recipes, [LATE], tmp / "work", store=PageStore(tmp / "pages"),
                       workflows=catalog.workflows, workflow_timeout=timeout, crawl=spiders_run.crawl)
    return answer


def running(token: str) -> list[int]:
    """The machine's processes (seen from outside any sandbox) whose command line holds `token`, zombies aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if token.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def left_running(token: str, *, within: float = 3.0) -> list[int]:
    """What still runs with `token` after `within` seconds (killing is asynchronous); killed, so no test leaks it."""
    deadline = time.monotonic() + within
    while (pids := running(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def test_a_workflow_runs_only_when_the_operator_opts_in(tmp_path: Path, ran: list[workflow.Ran]) -> None:
    workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    refused = run(tmp_path / "recipes", tmp_path, allow=False)
    assert (refused.reason, refused.value) == ("workflow_not_allowed", None)
    assert refused.detail == ("caton-by-workflow: runs wf.py; trusted workflows run only with --allow-workflows, "
                              "and never from a release")
    assert ran == [], "the script never ran"
    assert not (tmp_path / "work").exists(), "and nothing was fetched in its place"

    allowed = run(tmp_path / "recipes", tmp_path, allow=True)
    assert (allowed.reason, allowed.value.text, allowed.value.number) == (None, "1.60 m", 1.6)
    assert len(ran) == 1 and ran[0].returncode == 0
    assert allowed.row()["status"] == "ok" and allowed.row()["dates"] == [{"name": "today", "date": LATE.date()
                                                                           .replace(day=16)}]


def test_a_workflow_sees_the_clock_in_its_zone_and_none_of_the_parents_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ran: list[workflow.Ran]) -> None:
    secrets = {"HF_TOKEN": "hf_secret_1", "OPENAI_API_KEY": "sk-secret-2", "TIMELYQA_HUB_TOKEN": "secret-3",
               "TIMELYQA_LLM_API_KEY": "secret-4", "AWS_SECRET_ACCESS_KEY": "secret-5"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    answer = run(tmp_path / "recipes", tmp_path, allow=True)
    assert answer.value is not None and answer.value.text == "1.60 m", answer.detail
    seen = json.loads(ran[0].stdout.splitlines()[0])
    assert seen["TIMELYQA_AT"] == "2026-11-17T03:00:00+00:00"
    assert seen["TIMELYQA_TODAY"] == "2026-11-16", "the clock's date in Los Angeles, not UTC's (the 17th)"
    assert seen["TIMELYQA_TIMEZONE"] == "America/Los_Angeles"
    assert not set(secrets) & set(seen), f"a credential reached the workflow: {set(secrets) & set(seen)}"
    assert not any(value in " ".join(seen.values()) for value in secrets.values())
    assert {n for n in seen if n.startswith("TIMELYQA_")} == {"TIMELYQA_AT", "TIMELYQA_TODAY", "TIMELYQA_TIMEZONE"}
    assert seen["HOME"] == workflow.HOME != os.environ.get("HOME") and not Path(seen["HOME"]).exists(), \
        "a private home inside the sandbox, nowhere on the machine"


@pytest.mark.slow
def test_a_workflow_past_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    token = f"timelyqa-test-{uuid.uuid4().hex}"
    body = ("import subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {token!r}])  # its browser, say\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {token!r}],\n"
            "                 start_new_session=True)  # and one in a session of its own, out of its group\n"
            "time.sleep(120)\nprint(1)\n")
    workflow_recipe(tmp_path / "recipes", body)
    began = time.monotonic()
    answer = run(tmp_path / "recipes", tmp_path, allow=True, timeout=0.8)
    took = time.monotonic() - began
    assert (answer.reason, answer.value) == ("workflow_timeout", None)
    assert answer.detail == "wf.py: still running after 0.8 s, killed"
    assert took < 5, f"killed at its limit, not when it finished ({took:.1f} s)"
    assert left_running(token) == [], "the workflow's children go with it, its own session's too"


@pytest.mark.slow  # two real time limits of 0.8 s: kept out of make check's minute
@pytest.mark.parametrize("answers", [False, True], ids=["runs-on", "answers-then-exits"])
def test_a_process_a_workflow_leaves_behind_does_not_stretch_its_time_limit(tmp_path: Path, answers: bool) -> None:
    """A child in a session of its own escapes a process-group kill and would keep the workflow's output open: the
    resolver must not wait for it (it did: a 1 s limit took as long as the child lived), and the sandbox's pid
    namespace ends it with the workflow."""
    token = f"timelyqa-test-{uuid.uuid4().hex}"
    body = ("import subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {token!r}],\n"
            "                 start_new_session=True)\n"
            + ("print(2.5)\n" if answers else "time.sleep(60)\n"))
    workflow_recipe(tmp_path / "recipes", body)
    began = time.monotonic()
    answer = run(tmp_path / "recipes", tmp_path, allow=True, timeout=0.8)
    took = time.monotonic() - began
    assert left_running(token) == [], "nothing it started outlives the sandbox"
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


def test_recipes_from_a_release_never_run_a_workflow_even_with_the_flag(tmp_path: Path,
                                                                        ran: list[workflow.Ran]) -> None:
    workflow_recipe(tmp_path / "recipes", READS_THE_CLOCK)
    # the script sits right next to the file, where a relative `workflow:` would find it
    parquet = release_parquet(tmp_path / "recipes", tmp_path / "recipes" / "test-00000-of-00001.parquet")
    catalog = load(parquet, allow_workflows=True)
    assert [r.id for r in catalog.recipes] == ["caton-by-workflow"] and catalog.workflows == {}
    answer = run(parquet, tmp_path, allow=True)
    assert (answer.reason, answer.value) == ("workflow_not_allowed", None)
    assert ran == [], "the script never ran"


# ---- the same through `timelyqa live resolve` ----------------------------------------------------------------------

def timelyqa(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The command from this worktree's code (the installed entry point is main's): python -m timelyqa.cli, started
    with a credential in its environment (where /proc/<pid>/environ shows it to whoever may read that)."""
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "HF_TOKEN": "hf_parent_secret", **env,
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "timelyqa.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


# Answers the day over ten only when no credential is anywhere it can read: its environment, or the environment of
# any process it can see (the resolver's own, /proc/<pid>/environ, among them); else fails saying what leaked.
LOOKS_FOR_THE_TOKEN = """import os, pathlib, sys
seen = [str(os.environ)] + [p.read_text(errors="replace") for p in pathlib.Path("/proc").glob("*/environ")
                            if os.access(p, os.R_OK)]
if any("hf_parent_secret" in text for text in seen):
    sys.exit("leaked: the resolver's HF_TOKEN")
print(int(os.environ["TIMELYQA_TODAY"][-2:]) / 10)
"""


@pytest.mark.slow
def test_live_resolve_runs_workflows_only_with_allow_workflows_and_only_from_files(tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    workflow_recipe(recipes, LOOKS_FOR_THE_TOKEN)
    at = ["--at", "2026-11-17T03:00:00+00:00"]

    without = timelyqa("live", "resolve", "--recipes", recipes, *at, "--out", tmp_path / "without")
    assert without.returncode == 1, without.stderr  # no answer: a script must see it
    row = pl.read_parquet(tmp_path / "without" / "answers.parquet").row(0, named=True)
    assert (row["status"], row["reason"], row["answer"]) == ("failed", "workflow_not_allowed", None)
    assert "0 of 1 recipes answered" in without.stdout

    parquet = release_parquet(recipes, tmp_path / "test.parquet")
    released = timelyqa("live", "resolve", "--recipes", parquet, *at, "--allow-workflows", "--out", tmp_path / "rel")
    assert released.returncode == 1, released.stderr
    assert pl.read_parquet(tmp_path / "rel" / "answers.parquet")["reason"].to_list() == ["workflow_not_allowed"]

    allowed = timelyqa("live", "resolve", "--recipes", recipes, *at, "--allow-workflows", "--workflow-timeout", "20",
                       "--out", tmp_path / "allowed")
    assert allowed.returncode == 0, allowed.stderr
    row = pl.read_parquet(tmp_path / "allowed" / "answers.parquet").row(0, named=True)
    assert (row["status"], row["answer"], row["value"], row["at"]) == ("ok", "1.60 m", 1.6, LATE), row["detail"]

    nowhere = timelyqa("live", "resolve", "--recipes", recipes, *at, "--allow-workflows", "--out", tmp_path / "none",
                       TIMELYQA_BWRAP=str(tmp_path / "no-such-bwrap"))
    assert nowhere.returncode == 1, nowhere.stderr
    row = pl.read_parquet(tmp_path / "none" / "answers.parquet").row(0, named=True)
    assert (row["status"], row["reason"], row["answer"]) == ("failed", "workflow_sandbox_unavailable", None)
    assert row["detail"] == (f"wf.py: not run: no bubblewrap at {tmp_path / 'no-such-bwrap'} (install Debian's "
                             "bubblewrap, or set TIMELYQA_BWRAP); workflows never run outside the sandbox")
    assert "workflow_sandbox_unavailable: wf.py: not run" in nowhere.stderr and "Traceback" not in nowhere.stderr
