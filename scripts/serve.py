"""`make serve`: the embedded Prefect stack for one user (server on SQLite, the `local` pool, every deployment, a
worker) started from the repository root, and all of it stopped on Ctrl-C with no process left behind."""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
PREFECT = str(Path(sys.executable).parent / "prefect")
"""The CLI next to the interpreter running this script: the project's venv, never a global install."""
POOL = "local"  # the pool every deployment of prefect.yaml names
PR_SET_PDEATHSIG = 1


class Stop(Exception):
    """Ctrl-C or SIGTERM: stop the stack."""


def settings(home: Path, port: int, base: Mapping[str, str]) -> dict[str, str]:
    """The environment the server, the CLI calls and the worker share: this stack's home and API, offline."""
    env = {k: v for k, v in base.items() if not k.startswith("PREFECT_API_")}  # a profile's API would win otherwise
    api = f"http://127.0.0.1:{port}/api"
    env.update({"PREFECT_HOME": str(home), "PREFECT_API_URL": api, "PREFECT_UI_API_URL": api,
                "PREFECT_SERVER_API_HOST": "127.0.0.1", "PREFECT_SERVER_API_PORT": str(port),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"})
    return env


def _die_with_parent() -> None:
    """In each child before exec (Linux): SIGTERM when serve.py dies, even by SIGKILL, so nothing is orphaned."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError):  # not Linux: the process group sweep in stop() still covers a clean stop
        pass


class Process:
    """One long-running CLI in its own process group (so a stop reaches its children, e.g. flow runs)."""

    def __init__(self, name: str, args: Sequence[str], env: Mapping[str, str], log: IO[bytes] | None) -> None:
        self.name = name
        # Its own session: Ctrl-C reaches serve.py alone, which then stops the worker before the server it talks to.
        self.proc = subprocess.Popen(list(args), env=dict(env), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True, preexec_fn=_die_with_parent)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, grace: float) -> None:
        """SIGTERM to the group, SIGKILL after `grace` seconds; always sweep the group (children may outlive it)."""
        if self.alive():
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                print(f"serve: {self.name} still running after {grace:.0f} s: killed", flush=True)
        self._signal(signal.SIGKILL)
        self.proc.wait()

    def _signal(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


def prefect(args: Sequence[str], env: Mapping[str, str], what: str) -> None:
    """One CLI call that must succeed; its output is shown only when it fails."""
    done = subprocess.run([PREFECT, *args], env=dict(env), cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"serve: {what} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def wait_healthy(api: str, server: Process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise SystemExit(f"serve: the Prefect server exited with {server.proc.returncode} (see its log)")
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"serve: the Prefect server did not answer {api}/health within {timeout:.0f} s (see its log)")


def serve(home: Path, port: int, prefect_file: Path, startup_timeout: float) -> None:
    home.mkdir(parents=True, exist_ok=True)
    env = settings(home.resolve(), port, os.environ)
    api = env["PREFECT_API_URL"]
    running: list[Process] = []
    try:
        with (home / "server.log").open("ab") as log:
            print(f"serve: Prefect server on {api} (SQLite in {home}, log {home / 'server.log'})", flush=True)
            running.append(Process("server", [PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                   env, log))
        wait_healthy(api, running[0], startup_timeout)
        prefect(["work-pool", "create", POOL, "--type", "process", "--overwrite"], env, f"work pool {POOL!r}")
        prefect(["--no-prompt", "deploy", "--all", "--prefect-file", str(prefect_file)], env, "prefect deploy --all")
        print(f"serve: deployments of {prefect_file} on pool {POOL!r}; the worker runs them in {REPO}", flush=True)
        running.append(Process("worker", [PREFECT, "--no-prompt", "worker", "start", "--pool", POOL], env, None))
        print(f"serve: ready. Runs by hand: PREFECT_API_URL={api} prefect deployment run FLOW/DEPLOYMENT. "
              "Ctrl-C stops everything.", flush=True)
        while all(p.alive() for p in running):
            time.sleep(1)
        dead = next(p for p in running if not p.alive())
        raise SystemExit(f"serve: the {dead.name} exited with {dead.proc.returncode}: stopping")
    except Stop:
        print("serve: stopping the worker, then the server", flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the stop short
        for process in reversed(running):  # the worker first: it reports its runs to the server
            process.stop(grace=20)


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=REPO / "out" / "prefect",
                        help="PREFECT_HOME: the server's SQLite database, profiles and logs (default out/prefect)")
    parser.add_argument("--port", type=int, default=4200, help="the server's port on 127.0.0.1 (default 4200)")
    parser.add_argument("--prefect-file", type=Path, default=REPO / "prefect.yaml", help="the deployments to serve")
    parser.add_argument("--startup-timeout", type=float, default=120.0, help="seconds the server has to start")
    args = parser.parse_args(argv)
    if not args.prefect_file.is_file():
        raise SystemExit(f"serve: --prefect-file {args.prefect_file}: no such file")
    if not 0 < args.port < 65536:
        raise SystemExit(f"serve: --port {args.port}: not a port")
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGTERM, _raise_stop)
    serve(args.home, args.port, args.prefect_file.resolve(), args.startup_timeout)


if __name__ == "__main__":
    main()
