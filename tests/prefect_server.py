"""Test helpers for a real local Prefect stack: server, CLI and worker, isolated in a scratch folder.

Nothing here writes into the repository: Prefect's home, database and logs live under the scratch
folder, and Python is told not to write bytecode next to the sources.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parent.parent
PREFECT = str(Path(sys.executable).parent / "prefect")
"""The CLI of the interpreter running the tests: the project's own venv, never a global install."""


def free_port() -> int:
    """A port free on 127.0.0.1 right now (not 4200, which a developer's own server may hold)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 4200:
            return port


def prefect_env(home: Path, port: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every Prefect process of one test stack shares: offline, quiet, scratch home."""
    env = dict(os.environ if base is None else base)
    # Settings a developer may have exported would point the test at their own server or profile.
    for name in [k for k in env if k.startswith("PREFECT_")]:
        del env[name]
    api = f"http://127.0.0.1:{port}/api"
    env.update({
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": api,
        "PREFECT_UI_API_URL": api,
        "PREFECT_SERVER_API_HOST": "127.0.0.1",
        "PREFECT_SERVER_API_PORT": str(port),
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_CLI_COLORS": "false",
        # Poll every 2 s instead of 10 s: a test waits on each poll twice (worker pick-up, --watch).
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    })
    return env


class Background:
    """A long-running CLI process in its own process group, its output in a log file."""

    def __init__(self, args: list[str], *, env: Mapping[str, str], cwd: Path, log: Path) -> None:
        self.args = args
        self.log = log
        self._out: IO[bytes] = log.open("wb")
        # A new session so that stop() can end the process and every child it started (uvicorn
        # workers, flow-run subprocesses) with one signal, and nothing else.
        self.proc = subprocess.Popen(args, env=dict(env), cwd=cwd, stdout=self._out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 4000) -> str:
        if not self._out.closed:
            self._out.flush()
        return self.log.read_text(errors="replace")[-chars:]

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the process group, then SIGKILL if it is still there after `grace` seconds."""
        if self.alive():
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # Children may outlive a leader that exited on its own: always sweep the group.
        self._signal(signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.wait(5)
        self._out.close()

    def _signal(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


def wait_healthy(api_url: str, server: Background, timeout: float = 90.0) -> None:
    """Block until GET {api_url}/health answers 200; fail with the server's log if it dies or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"prefect server exited with {server.proc.returncode}:\n{server.tail()}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"prefect server not healthy after {timeout:.0f} s:\n{server.tail()}")


def start_server(home: Path, env: Mapping[str, str], timeout: float = 90.0) -> Background:
    """`prefect server start` on the port in env's PREFECT_API_URL, SQLite under `home`; returns once healthy."""
    port = env["PREFECT_SERVER_API_PORT"]
    server = Background([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", port],
                        env=env, cwd=home, log=home / "server.log")
    try:
        wait_healthy(env["PREFECT_API_URL"], server, timeout)
    except BaseException:
        server.stop()
        raise
    return server


def start_worker(pool: str, env: Mapping[str, str], *, cwd: Path, log: Path) -> Background:
    """`prefect worker start --pool POOL` from `cwd`: the folder whose code the deployments run."""
    return Background([PREFECT, "--no-prompt", "worker", "start", "--pool", pool], env=env, cwd=cwd, log=log)


def prefect(args: list[str], *, env: Mapping[str, str], cwd: Path, timeout: float = 120.0
            ) -> subprocess.CompletedProcess[str]:
    """One CLI call; its output is kept on the result for assertion messages."""
    return subprocess.run([PREFECT, *args], env=dict(env), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)
