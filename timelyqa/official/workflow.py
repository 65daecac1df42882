"""Trusted Python workflows in RT-QA's style, run only when the operator opts in, and only inside Debian's bubblewrap:
a read-only root of the system's programs and Python alone, the script bound read-only, a private /proc in a pid
namespace of its own, a private in-memory home as the one writable place, no network (a network namespace with its
own loopback alone), an empty environment (no credential of the release reaches it), and the whole sandbox killed at
the time limit. Where bubblewrap cannot start, no workflow runs (`workflow_sandbox_unavailable`): never outside it.
`execute(..., proxy=)` gives a sandbox one way out, a policy proxy's unix socket (spiders.proxy); `run` gives none yet.

A workflow reads the evaluation clock from `TIMELYQA_AT` (ISO, with its offset), `TIMELYQA_TODAY` (the clock's
date in the recipe's zone) and `TIMELYQA_TIMEZONE`, never from the machine's clock, and prints its answer on its
last line of output. The answer is then typed, rounded and checked like any recipe's extracted value. Recipes read
from a release (a dataset downloaded from the Hub) never run code: only recipe files the operator holds can.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from timelyqa.official import clock
from timelyqa.official.extract import Fail, Value, finish
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe

TIMEOUT = 60.0
"""Seconds a workflow may run; RT-QA's workflows open one page each."""
BWRAP_ENV = "TIMELYQA_BWRAP"
"""Where bubblewrap is, when not `bwrap` on PATH or /usr/bin/bwrap (Debian's package `bubblewrap`)."""
HOME = "/home/workflow"
"""The workflow's home and working folder inside the sandbox: a private tmpfs, gone with the sandbox."""
HOME_SIZE = 512 << 20
SCRIPT_AT = "/workflow"
"""Where the script is bound, read-only, inside the sandbox (alone: not the folder it lives in)."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The programs and libraries, read-only; a symlink stays a symlink (Debian's merged /usr)."""
ETC = ("/etc/ssl", "/etc/ca-certificates", "/etc/alternatives", "/etc/fonts")
"""All of /etc a workflow sees: certificates, Debian's alternatives links, fonts. No passwd, group, hosts, shadow."""
PROXY_AT = "/run/policy-proxy.sock"
"""Where the policy proxy's unix socket is bound inside the sandbox, when the workflow is given one."""
_OUTPUT_CAP = 1 << 20
_RELAY = """import os, socket, subprocess, sys, threading
def pipe(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            sock.shutdown(how)
        except OSError:
            pass
def serve(listener):
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX)
        try:
            upstream.connect(sys.argv[1])
        except OSError:
            client.close(); upstream.close(); continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()
listener = socket.create_server(("127.0.0.1", 0))
proxy = "http://127.0.0.1:%d" % listener.getsockname()[1]
threading.Thread(target=serve, args=(listener,), daemon=True).start()
names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
sys.exit(subprocess.call([sys.executable, "-I", sys.argv[2]], env={**os.environ, **dict.fromkeys(names, proxy)}))
"""
"""The one way out of a sandbox given a proxy: a relay on the sandbox's own loopback to the proxy's unix socket,
started before the workflow, which gets it as HTTP(S)_PROXY (its network namespace has no other interface)."""


@dataclass(frozen=True)
class Ran:
    """What one sandboxed run gave: its exit code (None when killed at the time limit) and its output's tail."""

    returncode: int | None
    stdout: str
    stderr: str


class SandboxUnavailable(Exception):
    """bubblewrap is missing or could not build the sandbox; the message is one line saying why."""


def bwrap_path() -> Path:
    """The bubblewrap to use: $TIMELYQA_BWRAP, else `bwrap` on PATH, else Debian's /usr/bin/bwrap."""
    named = os.environ.get(BWRAP_ENV)
    return Path(named or shutil.which("bwrap") or "/usr/bin/bwrap")


def environment(recipe: Recipe, at: datetime) -> dict[str, str]:
    """Everything the workflow sees of the world: the clock, a PATH, a locale and its private home; nothing else
    (no HF_TOKEN, no model keys, no TIMELYQA_* settings of the release)."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": HOME, "LANG": "C.UTF-8", "TMPDIR": HOME,
            "TIMELYQA_AT": at.isoformat(), "TIMELYQA_TODAY": clock.today_in(at, recipe.timezone).isoformat(),
            "TIMELYQA_TIMEZONE": recipe.timezone}


def run(recipe: Recipe, script: Path, at: datetime, *, timeout: float = TIMEOUT) -> Value | Fail:
    """The workflow's answer at clock `at`, or why there is none (no sandbox, an error, no output, past its time,
    not valid)."""
    if not Path(script).is_file():
        return Fail(Failure.WORKFLOW_FAILED, f"{script.name}: no such file beside the recipe")
    try:
        ran = execute(Path(script), environment(recipe, at), timeout=timeout)
    except SandboxUnavailable as exc:
        return Fail(Failure.WORKFLOW_SANDBOX_UNAVAILABLE, f"{script.name}: not run: {exc}")
    if ran.returncode is None:
        return Fail(Failure.WORKFLOW_TIMEOUT, f"{script.name}: still running after {timeout:g} s, killed")
    if ran.returncode:
        tail = " ".join(ran.stderr.split()[-30:])
        return Fail(Failure.WORKFLOW_FAILED, f"{script.name}: exit {ran.returncode}: {tail or 'no error output'}")
    lines = [line.strip() for line in ran.stdout.splitlines() if line.strip()]
    if not lines:
        return Fail(Failure.WORKFLOW_FAILED, f"{script.name}: printed no answer")
    return finish(recipe, [[lines[-1]]])


def execute(script: Path, env: dict[str, str], *, timeout: float, bwrap: Path | None = None,
            proxy: Path | None = None) -> Ran:
    """Run `script` in the sandbox with exactly `env`; SandboxUnavailable when bubblewrap cannot build it. With
    `proxy` (the unix socket of a spiders.proxy.PolicyProxy), its one way out is through that proxy."""
    bwrap = bwrap or bwrap_path()
    if not os.access(bwrap, os.X_OK):
        raise SandboxUnavailable(f"no bubblewrap at {bwrap} (install Debian's bubblewrap, or set {BWRAP_ENV}); "
                                 "workflows never run outside the sandbox")
    read, write = os.pipe()
    # Output goes to unnamed files, not pipes: nothing the workflow starts can hold the resolver's reading open.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, os.fdopen(read, "rb") as status:
        try:
            inside = f"{SCRIPT_AT}/{script.name}"
            command = [sys.executable, "-I", inside] if proxy is None else [
                sys.executable, "-I", "-c", _RELAY, PROXY_AT, inside]
            proc = subprocess.Popen([str(bwrap), *sandbox_args(script, status_fd=write, proxy=proxy), *command],
                                    env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, pass_fds=(write,),
                                    start_new_session=True)
        finally:
            os.close(write)
        try:
            proc.wait(timeout=timeout)
            returncode: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            returncode = None
        # bubblewrap's own process is the sandbox's parent: killed, its pid 1 dies with it (--die-with-parent), and
        # with pid 1 every process of the namespace, those in sessions of their own included.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        started = _started(status.read())
        printed, errors = _tail(out), _tail(err)
    if not started:
        said = next((line for line in errors.splitlines() if line.strip()), f"exit {proc.returncode}")
        raise SandboxUnavailable(f"bubblewrap could not start the sandbox ({said.strip()[:200]}); workflows never "
                                 "run outside the sandbox")
    return Ran(returncode, printed, errors)


def sandbox_args(script: Path, *, status_fd: int, proxy: Path | None = None) -> list[str]:
    """bubblewrap's options: what the sandbox holds, nothing more."""
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000",
            "--cap-drop", "ALL", "--die-with-parent", "--new-session",
            "--json-status-fd", str(status_fd), "--hostname", "workflow"]
    for top in SYSTEM:
        where = Path(top)
        if where.is_symlink():
            args += ["--symlink", os.readlink(where), top]
        elif where.is_dir():
            args += ["--ro-bind", top, top]
    for prefix in sorted({sys.base_prefix, sys.prefix}):  # the interpreter, and the virtual environment's packages
        if not any(Path(prefix).is_relative_to(top) for top in SYSTEM):
            args += ["--ro-bind", prefix, prefix]
    for folder in ETC:
        args += ["--ro-bind-try", folder, folder]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(HOME_SIZE), "--tmpfs", HOME,
             "--ro-bind", str(Path(script).resolve()), f"{SCRIPT_AT}/{script.name}", "--chdir", HOME,
             *(["--ro-bind", str(proxy), PROXY_AT] if proxy is not None else []),
             "--remount-ro", "/dev", "--remount-ro", "/"]
    return args


def _started(status: bytes) -> bool:
    """Whether bubblewrap got as far as starting the workflow (its status stream names the child's pid)."""
    decoder, text, at = json.JSONDecoder(), status.decode("utf-8", "replace"), 0
    while at < len(text):
        try:
            record, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return False
        if isinstance(record, dict) and "child-pid" in record:
            return True
        while at < len(text) and text[at].isspace():
            at += 1
    return False


def _tail(file: IO[bytes]) -> str:
    """The last _OUTPUT_CAP bytes a workflow wrote, as text."""
    size = file.seek(0, os.SEEK_END)
    file.seek(max(0, size - _OUTPUT_CAP))
    return file.read().decode("utf-8", "replace")
