"""`make serve`: the embedded Prefect stack for one user (server on SQLite, the `local` pool, every deployment, a
worker) started from the repository root, and all of it stopped on Ctrl-C with no process left behind.

`--demo` (`make serve-demo`): the same stack whose deployments read the bundled inputs (prefect.yaml's
`definitions.demo`): no network, outputs under out/serve-demo."""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's flows and registry, whatever the venv has installed

from flows.deployments import with_registry  # noqa: E402 - once the checkout is on the path

PREFECT = str(Path(sys.executable).parent / "prefect")
"""The CLI next to the interpreter running this script: the project's venv, never a global install."""
POOL = "local"  # the pool every deployment of prefect.yaml names
PR_SET_PDEATHSIG = 1
DEMO_HOME = REPO / "out" / "serve-demo" / "prefect"
FATAL = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)
TRY = "wikipedia/wikipedia-weekly"
"""The deployment the demo suggests running first: the quickest (a dump, no crawl)."""


class Stop(Exception):
    """Ctrl-C or SIGTERM: stop the stack."""


def settings(home: Path, port: int, base: Mapping[str, str]) -> dict[str, str]:
    """The environment the server, the CLI calls and the worker share: this stack's home and API, offline."""
    env = {k: v for k, v in base.items() if not k.startswith("PREFECT_API_")}  # a profile's API would win otherwise
    api = f"http://127.0.0.1:{port}/api"
    env.update({"PREFECT_HOME": str(home), "PREFECT_API_URL": api, "PREFECT_UI_API_URL": api,
                "PREFECT_SERVER_API_HOST": "127.0.0.1", "PREFECT_SERVER_API_PORT": str(port),
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
                # The server streams runs' logs to clients: `prefect deployment run --watch` then prints them (a
                # failed run's one-line reason among them), not only the state changes.
                "PREFECT_SERVER_LOGS_STREAM_OUT_ENABLED": "true",
                "PREFECT_SERVER_LOGS_STREAM_PUBLISHING_ENABLED": "true"})
    return env


def planned(prefect_file: Path) -> dict[str, Any]:
    """prefect.yaml as `make serve` deploys it: its deployments, and one for each source of another package that it
    does not list, from the source's registry entry (flows/deployments.py)."""
    return with_registry(yaml.safe_load(prefect_file.read_text(encoding="utf-8")))


def deploy_file(prefect_file: Path, home: Path) -> Path:
    """The file `prefect deploy --all` reads: prefect.yaml itself when the registry adds nothing to it, else the
    planned deployments written into `home`."""
    config = planned(prefect_file)
    if len(config["deployments"]) == len(yaml.safe_load(prefect_file.read_text(encoding="utf-8"))["deployments"]):
        return prefect_file
    config.pop("definitions", None)  # its anchors are resolved in each deployment
    path = home / "prefect-deploy.yaml"
    path.write_text(f"# Written by scripts/serve.py from {prefect_file} and the source registry: do not edit.\n"
                    + yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def demo_deployments(prefect_file: Path) -> dict[str, Any]:
    """The planned deployments with each one's parameters updated by its entry of `definitions.demo` (the bundled
    inputs); a deployment without an entry would read a live source, so it is refused."""
    config = planned(prefect_file)
    demo = (config.pop("definitions", None) or {}).get("demo") or {}  # its anchors are resolved in each deployment
    missing = [d["name"] for d in config["deployments"] if d["name"] not in demo]
    if missing:
        raise SystemExit(f"serve: --demo: {prefect_file}: no `definitions.demo` entry for {', '.join(missing)}")
    for deployment in config["deployments"]:
        deployment["parameters"] = {**deployment.get("parameters", {}), **demo[deployment["name"]]}
        deployment["description"] = f"(demo: bundled inputs) {deployment.get('description', '')}".strip()
    return config


def demo_file(prefect_file: Path, home: Path) -> Path:
    """The demo's deployments (demo_deployments) written into `home`, for `prefect deploy --all`."""
    path = home / "prefect-demo.yaml"
    path.write_text(f"# Written by scripts/serve.py --demo from {prefect_file}: do not edit.\n"
                    + yaml.safe_dump(demo_deployments(prefect_file), sort_keys=False), encoding="utf-8")
    return path


def caught_signals(pid: int) -> int | None:
    """The mask of signals `pid` has handlers for (/proc/PID/status SigCgt), None when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return None


class MakeWatch:
    """Stop when the `make` that runs this script is told to stop, by a signal sent to make alone.

    GNU make (4.3) sent SIGINT, SIGHUP or SIGQUIT alone (`kill -INT <make>`, not Ctrl-C, which reaches the whole
    process group) passes nothing on: it waits for its recipe, here forever. Its handler first resets the signal to
    its default, which /proc shows; that, or make gone, is the cue. SIGTERM make passes on itself."""

    def __init__(self) -> None:
        self.parent = os.getppid()
        try:
            name = Path(f"/proc/{self.parent}/comm").read_text().strip()
        except OSError:
            name = ""
        self.caught = caught_signals(self.parent) if name in ("make", "gmake") else None

    def fired(self) -> bool:
        if self.caught is None:
            return False
        if os.getppid() != self.parent:
            return True
        now = caught_signals(self.parent)
        return now is not None and any(self.caught & ~now & (1 << (sig - 1)) for sig in FATAL)

    def start(self, every: float = 0.5) -> None:
        """A daemon thread that sends this process SIGTERM once fired: the stop then runs wherever the main thread
        is (waiting for the server, a deploy, or the worker)."""
        if self.caught is None:
            return

        def watch() -> None:
            while not self.fired():
                time.sleep(every)
            print("serve: make was told to stop", flush=True)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="make-watch", daemon=True).start()


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


def serve(home: Path, port: int, prefect_file: Path, startup_timeout: float, *, demo: bool = False) -> None:
    home.mkdir(parents=True, exist_ok=True)
    env = settings(home.resolve(), port, os.environ)
    api = env["PREFECT_API_URL"]
    prefect_file = demo_file(prefect_file, home) if demo else deploy_file(prefect_file, home)
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
        print(ready(api, demo), flush=True)
        while all(p.alive() for p in running):
            time.sleep(1)
        dead = next(p for p in running if not p.alive())
        raise SystemExit(f"serve: the {dead.name} exited with {dead.proc.returncode}: stopping")
    except Stop:
        print("serve: stopping the worker, then the server", flush=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C (or make's SIGTERM) must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        for process in reversed(running):  # the worker first: it reports its runs to the server
            process.stop(grace=20)


def ready(api: str, demo: bool) -> str:
    """What the user reads once the stack is up: the UI, how to start a run, how to stop."""
    cli = os.path.relpath(PREFECT, Path.cwd()) if PREFECT.startswith(str(REPO)) else PREFECT
    run = f"PREFECT_API_URL={api} {cli} deployment run"
    lines = [f"serve: ready. The UI: {api.removesuffix('/api')}"]
    if demo:
        lines += ["serve: demo: every deployment reads the bundled inputs (no network), outputs in out/serve-demo.",
                  f"serve: a run now: {run} {TRY} --watch"]
    else:
        lines += [f"serve: a run now: {run} FLOW/DEPLOYMENT --watch"]
    lines += ["serve: Ctrl-C stops everything."]
    return "\n".join(lines)


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=None,
                        help="PREFECT_HOME: the server's SQLite database, profiles and logs (default out/prefect, with "
                        "--demo out/serve-demo/prefect)")
    parser.add_argument("--port", type=int, default=4200, help="the server's port on 127.0.0.1 (default 4200)")
    parser.add_argument("--prefect-file", type=Path, default=REPO / "prefect.yaml", help="the deployments to serve")
    parser.add_argument("--startup-timeout", type=float, default=120.0, help="seconds the server has to start")
    parser.add_argument("--demo", action="store_true",
                        help="deploy on the bundled inputs (prefect.yaml's definitions.demo): no network")
    args = parser.parse_args(argv)
    home = args.home or (DEMO_HOME if args.demo else REPO / "out" / "prefect")
    if not args.prefect_file.is_file():
        raise SystemExit(f"serve: --prefect-file {args.prefect_file}: no such file")
    if not 0 < args.port < 65536:
        raise SystemExit(f"serve: --port {args.port}: not a port")
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGTERM, _raise_stop)
    MakeWatch().start()
    serve(home, args.port, args.prefect_file.resolve(), args.startup_timeout, demo=args.demo)


if __name__ == "__main__":
    main()
