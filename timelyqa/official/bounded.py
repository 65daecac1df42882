"""Bounded work for each recipe: its selector and regex read the pages in a worker process that is killed at a time
limit and held to a memory limit, so a quadratic XPath, or a page built to exhaust memory, fails that recipe alone
(`extract_limit`) and the others are answered. lxml cannot be interrupted inside a thread; a process can be killed.

    outcome = shared_reader().evaluate(recipe, pages, seconds=10)   # a Value, or a Fail with its reason; never raises

The worker is a plain `python -m timelyqa.official.bounded` child (not multiprocessing's fork, which would copy a
process running polars' threads, nor its spawn, which imports the caller's main script again). One worker serves
every evaluation of the process in turn, and is started again only after it had to be killed; it exits when the
process that started it closes the pipe, or ends; and a worker whose parent is gone cannot outlive a limit either,
for it sets an alarm of its own (SIGALRM, left to its default: the process ends) a second past each limit.
"""

from __future__ import annotations

import atexit
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path

from timelyqa.official.extract import Fail, Value, evaluate
from timelyqa.official.origin import clip, cut
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Recipe

SECONDS = 10.0
"""How long one recipe may read its pages at one clock (every page of an each_day included)."""
MEMORY = 1 << 30
"""How many bytes of address space a worker may take beyond what it has once started."""
_ROOT = str(Path(__file__).resolve().parent.parent.parent)
_START_SECONDS = 60.0


class Reader:
    """Evaluates recipes on their pages in a worker process, each within a time limit and the worker's memory."""

    def __init__(self, *, memory: int = MEMORY) -> None:
        self.memory = memory
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    def evaluate(self, recipe: Recipe, pages: Sequence[str], *, seconds: float = SECONDS) -> Value | Fail:
        """The recipe's answer from its pages (extract.evaluate), or a Fail: `extract_limit` when it ran past
        `seconds` or the memory limit, `extract_error` when reading raised an error."""
        with self._lock:
            return self._evaluate(recipe, list(pages), seconds)

    def _evaluate(self, recipe: Recipe, pages: list[str], seconds: float) -> Value | Fail:
        what = recipe.extract.selector + (f" with regex {cut(recipe.extract.regex)}" if recipe.extract.regex else "")
        try:
            conn = self._send((recipe, pages, seconds))
        except OSError as exc:
            self.close()
            return Fail(Failure.EXTRACT_ERROR, f"{what}: {clip(str(exc))}")
        if not conn.poll(seconds):
            self.close()
            return Fail(Failure.EXTRACT_LIMIT, f"{what} ran past {seconds:g} s on {_pages(pages)}; stopped")
        try:
            outcome: Value | Fail = conn.recv()
        except (EOFError, OSError):
            code = self.close()
            return Fail(Failure.EXTRACT_LIMIT, f"{what}: the process reading {_pages(pages)} died (exit {code}), "
                                               f"over the {self.memory // 2**20} MiB a recipe may use")
        if isinstance(outcome, Fail) and outcome.reason == Failure.EXTRACT_LIMIT:
            self.close()  # a worker that ran out of memory is not trusted with the next recipe
        return outcome

    def close(self) -> int | None:
        """Stop the worker (killed at once: it may be busy on a selector that never ends); its exit code."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        return proc.wait()

    def _send(self, task: tuple[Recipe, list[str], float]) -> Connection:
        try:
            conn = self._connection()
            conn.send(task)
        except OSError:  # the worker died between two recipes: start another
            self.close()
            conn = self._connection()
            conn.send(task)
        return conn

    def _connection(self) -> Connection:
        if self._conn is None:
            mine, theirs = socket.socketpair()
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)}
            self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, this module
                [sys.executable, "-m", "timelyqa.official.bounded", str(theirs.fileno()), str(self.memory)],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env)
            theirs.close()
            conn = Connection(mine.detach())
            # ready once its imports are done: a recipe's time limit is for reading, not for starting Python
            try:
                ready = conn.poll(_START_SECONDS) and conn.recv() == "ready"
            except EOFError:
                ready = False
            if not ready:
                conn.close()
                self.close()
                raise OSError(f"the process that reads recipes' pages did not start in {_START_SECONDS:g} s")
            self._conn = conn
        return self._conn


_SHARED: list[Reader] = []


def shared_reader() -> Reader:
    """The process's one Reader (its worker started when first used, stopped when the process exits)."""
    if not _SHARED:
        _SHARED.append(Reader())
        atexit.register(_SHARED[0].close)
    return _SHARED[0]


def _pages(pages: Sequence[str]) -> str:
    return "1 page" if len(pages) == 1 else f"{len(pages)} pages"


def _serve(conn: Connection, memory: int) -> None:
    """The worker: evaluate each (recipe, pages) it is sent, and send back the Value or Fail, until the pipe closes."""
    _limit_memory(memory)
    conn.send("ready")
    while True:
        try:
            recipe, pages, seconds = conn.recv()
        except (EOFError, OSError):
            return
        signal.setitimer(signal.ITIMER_REAL, seconds + 1.0)  # the parent kills it first; this, if the parent is gone
        try:
            outcome: Value | Fail = evaluate(recipe, pages)
        except Exception as exc:  # noqa: BLE001 - a stranger's selector on a stranger's page: its error is its own
            if isinstance(exc, MemoryError) or _near(memory):  # libxml2 says "unknown error" when malloc fails
                outcome = Fail(Failure.EXTRACT_LIMIT, f"{recipe.extract.selector}: reading {_pages(pages)} took "
                                                      f"more than the {memory // 2**20} MiB a recipe may use")
            else:
                outcome = Fail(Failure.EXTRACT_ERROR, f"{recipe.extract.selector}: {type(exc).__name__}: "
                                                      f"{clip(str(exc)[:300])}")
        signal.setitimer(signal.ITIMER_REAL, 0)
        conn.send(outcome)


_LIMIT: list[int] = []


def _near(extra: int) -> bool:
    """True when the worker's peak address space came within a tenth of `extra` of its limit: what failed, failed
    for want of memory."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            peak = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmPeak:"))
    except (OSError, StopIteration, ValueError):
        return False
    return bool(_LIMIT) and peak >= _LIMIT[0] - extra // 10


def _limit_memory(extra: int) -> None:
    """Cap the worker's address space at what it has now plus `extra` (Linux; elsewhere only the time limit holds)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        _LIMIT.append(limit)
    except (OSError, StopIteration, ValueError):
        return


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
