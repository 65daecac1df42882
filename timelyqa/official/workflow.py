"""Trusted Python workflows in RT-QA's style, run only when the operator opts in: in a subprocess of its own, with a
time limit, an empty environment (no credential of the release reaches it) and a scratch folder as its home.

A workflow reads the evaluation clock from `TIMELYQA_AT` (ISO, with its offset), `TIMELYQA_TODAY` (the clock's
date in the recipe's zone) and `TIMELYQA_TIMEZONE`, never from the machine's clock, and prints its answer on its
last line of output. The answer is then typed, rounded and checked like any recipe's extracted value. Recipes read
from a release (a dataset downloaded from the Hub) never run code: only recipe files the operator holds can.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import IO

from timelyqa.official import clock
from timelyqa.official.extract import Fail, Value, finish
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe

TIMEOUT = 60.0
"""Seconds a workflow may run; RT-QA's workflows open one page each."""
_OUTPUT_CAP = 1 << 20


def environment(recipe: Recipe, at: datetime, home: Path) -> dict[str, str]:
    """Everything the workflow sees of the world: the clock, a PATH, a locale and its scratch home; nothing else
    (no HF_TOKEN, no model keys, no TIMELYQA_* settings of the release)."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "TMPDIR": str(home),
            "TIMELYQA_AT": at.isoformat(), "TIMELYQA_TODAY": clock.today_in(at, recipe.timezone).isoformat(),
            "TIMELYQA_TIMEZONE": recipe.timezone}


def run(recipe: Recipe, script: Path, at: datetime, *, timeout: float = TIMEOUT) -> Value | Fail:
    """The workflow's answer at clock `at`, or why there is none (an error, no output, past its time, not valid)."""
    # Output goes to unnamed files, not pipes: a pipe would be held open by any process the workflow left behind
    # (one in a session of its own escapes the group kill), and reading it to its end would outlast the time limit.
    with (tempfile.TemporaryDirectory(prefix="timelyqa-workflow-", ignore_cleanup_errors=True) as scratch,
          tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err):
        home = Path(scratch)
        # -I: isolated mode, so no PYTHON* variable, user site or current folder shapes what the code imports.
        proc = subprocess.Popen([sys.executable, "-I", str(Path(script).resolve())], cwd=home,
                                env=environment(recipe, at, home), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a workflow's browser goes with it
            proc.wait()
            return Fail(Failure.WORKFLOW_TIMEOUT, f"{script.name}: still running after {timeout:g} s, killed")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # what it left running in its group, once it has answered
        printed, errors = _tail(out), _tail(err)
    if proc.returncode:
        tail = " ".join(errors.split()[-30:])
        return Fail(Failure.WORKFLOW_FAILED, f"{script.name}: exit {proc.returncode}: {tail or 'no error output'}")
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    if not lines:
        return Fail(Failure.WORKFLOW_FAILED, f"{script.name}: printed no answer")
    return finish(recipe, [[lines[-1]]])


def _tail(file: IO[bytes]) -> str:
    """The last _OUTPUT_CAP bytes a workflow wrote, as text."""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - _OUTPUT_CAP))
    return file.read().decode("utf-8", "replace")
