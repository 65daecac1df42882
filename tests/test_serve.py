"""`make serve` end to end: its stack runs a flow run that its scheduler created, and Ctrl-C leaves nothing;
`make serve-demo` runs offline on the bundled inputs, a failed run's reason shows in `--watch`, and a signal sent to
make alone stops it all."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.prefect_server import REPO, free_port, prefect, prefect_env

VENV = Path(sys.executable).parent.parent
HISTORY = "data/demo/wikipedia-history.xml.bz2"


def api_call(api: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """The server's REST API as any client sees it (POST with a JSON body, else GET)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{api}{path}", data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


def descendants(root: int) -> set[int]:
    """Every live process below `root`, from /proc (the server, the worker and any flow run it started)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def with_home(home: Path) -> set[int]:
    """Processes of this user whose environment names this stack's PREFECT_HOME: whatever the stack started."""
    marker = f"PREFECT_HOME={home}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def one_scheduled_deployment(tmp_path: Path, out: Path) -> Path:
    """prefect.yaml with only wikipedia-weekly, on the demo export (explicit parameters, as `make demo` passes them)
    and an interval schedule of seconds instead of Mondays: the scheduler, not a test call, creates its run."""
    config = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    config.pop("definitions", None)  # its anchors are already resolved into each deployment
    (deployment,) = [d for d in config["deployments"] if d["name"] == "wikipedia-weekly"]
    deployment["parameters"] = {**deployment["parameters"], "api": None, "dump": HISTORY,
                                "start": "2026-06-01T00:00:00+00:00", "end": "2026-11-16T00:00:00+00:00",
                                "out": str(out)}
    deployment["schedules"] = [{"interval": 10, "active": True}]
    config["deployments"] = [deployment]
    path = tmp_path / "prefect.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_make_serve_runs_a_scheduled_flow_run_and_ctrl_c_leaves_no_process(tmp_path: Path) -> None:
    home, out, port = tmp_path / "prefect-home", tmp_path / "wp", free_port()
    env = prefect_env(home, port)
    # One run ahead at a time, not a hundred: the scheduler's own settings, the schedule left as written.
    env.update({"PREFECT_SERVER_SERVICES_SCHEDULER_MIN_RUNS": "1", "PREFECT_SERVER_SERVICES_SCHEDULER_MAX_RUNS": "1"})
    for name in ("PREFECT_API_URL", "PREFECT_UI_API_URL", "PREFECT_HOME"):
        env.pop(name)  # serve.py sets them from --home and --port, as it does for a user
    api = f"http://127.0.0.1:{port}/api"
    serve_args = f"--home {home} --port {port} --prefect-file {one_scheduled_deployment(tmp_path, out)}"
    # The Makefile's target as a user runs it; -o: the test's own venv is set up already, never re-synced here.
    args = ["make", "--no-print-directory", "-o", f"{VENV}/.synced", f"VENV={VENV}", "serve",
            f"SERVE_ARGS={serve_args}"]
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        make = subprocess.Popen(args, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    started: set[int] = set()
    try:
        deadline, run = time.monotonic() + 300, None
        while time.monotonic() < deadline and make.poll() is None:
            started |= descendants(make.pid)
            try:
                runs = api_call(api, "/flow_runs/filter", {})
            except OSError:
                runs = []
            done = [r for r in runs if r["state_type"] == "COMPLETED"]
            if done:
                run = done[0]
                break
            assert not [r for r in runs if r["state_type"] in ("FAILED", "CRASHED")], (runs, log.read_text()[-4000:])
            time.sleep(1)
        assert run is not None, f"no completed run in time; make exit {make.poll()}:\n{log.read_text()[-4000:]}"
        assert run["auto_scheduled"] is True, run  # the scheduler made it: no `prefect deployment run` was called
        assert run["parameters"]["out"] == str(out)
        states = [s["type"] for s in sorted(api_call(api, f"/flow_run_states/?flow_run_id={run['id']}"),
                                            key=lambda s: s["timestamp"])]
        assert states[0] == "SCHEDULED" and states[-1] == "COMPLETED" and "RUNNING" in states, states
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["counts"]["questions"] > 0 and (out / "questions.parquet").is_file()
        assert manifest["inputs"]["dump"]["path"] == HISTORY
        started |= descendants(make.pid)
        assert len(with_home(home)) >= 2, "the server and the worker run with the stack's PREFECT_HOME"
    finally:
        # Ctrl-C in a terminal: SIGINT to the foreground process group, make and serve.py alike.
        os.killpg(make.pid, signal.SIGINT)
        try:
            make.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            for pid in descendants(make.pid) | started:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise
    text = log.read_text()
    assert "serve: stopping the worker, then the server" in text, text[-4000:]
    time.sleep(1)
    left = {pid for pid in started if Path(f"/proc/{pid}").exists()} | with_home(home)
    assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left if Path(f"/proc/{pid}").exists()]
    assert not port_taken(port)


def start_make(target: str, serve_args: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """The Makefile's target as a user runs it; -o: the test's own venv is set up already, never re-synced here."""
    args = ["make", "--no-print-directory", "-o", f"{VENV}/.synced", f"VENV={VENV}", target, f"SERVE_ARGS={serve_args}"]
    with log.open("wb") as sink:
        return subprocess.Popen(args, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for(text: str, log: Path, make: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        assert make.poll() is None, f"make exited {make.returncode}:\n{log.read_text()[-4000:]}"
        assert time.monotonic() < deadline, f"no {text!r} in {timeout:.0f} s:\n{log.read_text()[-4000:]}"
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.timeout(480)
def test_make_serve_demo_runs_offline_reports_a_failure_and_a_signal_to_make_alone_stops_all(tmp_path: Path) -> None:
    home, port = tmp_path / "prefect-home", free_port()
    env = prefect_env(home, port)
    for name in ("PREFECT_API_URL", "PREFECT_UI_API_URL", "PREFECT_HOME", "PREFECT_SERVER_UI_ENABLED"):
        env.pop(name)  # serve.py sets them from --home and --port, as it does for a user; the UI stays on
    # Offline: any request leaving the machine goes to a proxy that is not there (the stack itself is on loopback).
    env.update({"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    log = tmp_path / "serve.log"
    make = start_make("serve-demo", f"--home {home} --port {port}", env, log)
    started: set[int] = set()
    try:
        wait_for("Ctrl-C stops everything", log, make, 240)
        text = log.read_text()
        ui = f"http://127.0.0.1:{port}"
        assert f"serve: ready. The UI: {ui}\n" in text, text
        with urllib.request.urlopen(ui, timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower(), "the printed address serves the UI"
        # The command the demo prints, as printed (with a scratch `out`: the demo's own is in the repository).
        (command,) = [line.split("a run now: ", 1)[1] for line in text.splitlines() if "a run now: " in line]
        assert command.endswith("deployment run wikipedia/wikipedia-weekly --watch"), command
        api_env = {**env, "PREFECT_API_URL": f"{ui}/api", "PREFECT_HOME": str(home)}
        out = tmp_path / "wp"
        run = prefect(["deployment", "run", "wikipedia/wikipedia-weekly", "--param", f"out={out}", "--watch",
                       "--watch-timeout", "200"], env=api_env, cwd=REPO, timeout=240)
        started |= descendants(make.pid)
        assert run.returncode == 0, f"{run.stdout[-4000:]}{run.stderr[-2000:]}\n{log.read_text()[-3000:]}"
        # Named by the window it read (the flow's name is beside it in the UI).
        assert "prefect.flow-run.Completed * wikipedia 2026-06-01..2026-11-16" in " ".join(run.stdout.split())
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["counts"]["questions"] > 0 and manifest["inputs"]["dump"]["path"] == HISTORY

        # A failed run says why, in --watch's output and in the run's logs: one line, not only "Failed".
        missing = tmp_path / "no-source-here"
        failed = prefect(["deployment", "run", "release/release-weekly", "--param", f'sources=["{missing}"]',
                          "--param", f"out={tmp_path / 'release'}", "--watch", "--watch-timeout", "200"],
                         env=api_env, cwd=REPO, timeout=240)
        reason = f"ConfigError: sources: none of {missing} holds a source output (manifest.json); run a source flow first"
        shown = " ".join(failed.stdout.split())  # rich wraps long lines at the terminal's width
        assert failed.returncode == 1 and "Flow run finished in state 'Failed'." in shown, failed.stdout
        assert f"timelyqa.flow-run.failed * {reason}" in shown, failed.stdout
        assert "Traceback" not in failed.stdout, "a reason, not a bug: no traceback"
        (flow_run,) = [r for r in api_call(f"{ui}/api", "/flow_runs/filter", {}) if r["state_type"] == "FAILED"]
        assert flow_run["state"]["message"] == reason
        logs = api_call(f"{ui}/api", "/logs/filter", {"logs": {"flow_run_id": {"any_": [flow_run["id"]]}}})
        assert reason in [entry["message"] for entry in logs], [entry["message"] for entry in logs]
        started |= descendants(make.pid) | with_home(home)
        assert len(with_home(home)) >= 2, "the server and the worker run with the stack's PREFECT_HOME"
    finally:
        # Sent to make alone, as a supervisor or `kill -INT <pid of make>` does: make passes nothing on.
        stop_at = time.monotonic()
        os.kill(make.pid, signal.SIGINT)
        try:
            make.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            for pid in descendants(make.pid) | started | with_home(home):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise
    stopped_in = time.monotonic() - stop_at
    text = log.read_text()
    assert "serve: make was told to stop" in text and "serve: stopping the worker, then the server" in text, text
    time.sleep(1)
    left = {pid for pid in started if Path(f"/proc/{pid}").exists()} | with_home(home)
    assert not left, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in left if Path(f"/proc/{pid}").exists()]
    assert not port_taken(port)
    assert stopped_in < 45, f"the stop took {stopped_in:.0f} s"


WATCHED = """\
import signal, sys, time
sys.path.insert(0, "scripts")
import serve

def stop(signum, frame):
    raise serve.Stop
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
serve.MakeWatch().start(every=0.1)
print("ready", flush=True)
try:
    time.sleep(60)
    print("not stopped", flush=True)
except serve.Stop:
    print("stopped", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_make_alone_stops_what_its_recipe_runs(tmp_path: Path, sig: signal.Signals) -> None:
    """GNU make passes SIGTERM on to its recipe but only waits on SIGINT or SIGHUP: the recipe sees it anyway."""
    (tmp_path / "watched.py").write_text(WATCHED, encoding="utf-8")
    (tmp_path / "Makefile").write_text(f"run:\n\t{sys.executable} watched.py\n", encoding="utf-8")
    (tmp_path / "scripts").symlink_to(REPO / "scripts")
    log = tmp_path / "log"
    with log.open("wb") as sink:
        # make as a terminal starts it: the signal's default disposition. Under `nohup` (a test run started so)
        # SIGHUP is ignored, make inherits that, installs no handler and rightly goes on, which is not this case.
        make = subprocess.Popen(["make", "--no-print-directory", "run"], cwd=tmp_path, stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))  # noqa: PLW1509
    try:
        deadline = time.monotonic() + 60  # a loaded machine (make test's other workers) starts Python slowly
        while "ready" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        # The watcher reads make's handlers as it starts: a signal before that is not the case under test.
        assert "ready" in log.read_text(), f"the recipe never started: {log.read_text()!r}"
        os.kill(make.pid, sig)
        try:
            make.wait(30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"make still runs 30 s after {sig.name}; its recipe printed {log.read_text()!r}")
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
    text = log.read_text()
    assert "stopped" in text.splitlines() and "not stopped" not in text, text
    assert make.returncode == -sig, (make.returncode, text)
