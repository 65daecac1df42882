"""A local, read-only Oxigraph SPARQL server over one N-Triples file, for the lifetime of a with-block (and never
longer: the server dies with the process that started it, and a killed run's store is removed by the next)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from timelyqa.errors import ConfigError

try:
    import fcntl
except ImportError:  # not on Windows: no lock, so no store there is ever taken for a killed run's
    fcntl = None  # type: ignore[assignment]

NT_FORMAT = "application/n-triples"  # explicit, so any file name works; a `.gz` suffix still means gzip
STORE_PREFIX = "oxigraph-"
LOCK = "in-use.lock"
"""In each store's folder, locked by the process that made it for as long as it lives: the kernel drops the lock
when that process dies, however it dies, so an unlocked store is a killed run's."""
UNLOCKED_GRACE_S = 60.0
"""A store folder in a work folder without its lock file yet (made a moment ago, or by a run killed between
making it and locking it) is left alone this long."""
_STARTING = threading.Lock()
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def find_oxigraph() -> str:
    """The `oxigraph` binary: the one installed beside this Python (the venv's), else the first on PATH."""
    beside = Path(sys.executable).parent / ("oxigraph.exe" if os.name == "nt" else "oxigraph")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("oxigraph")
    if found is None:
        raise ConfigError(f"oxigraph binary not found beside {sys.executable} nor on PATH: install PyPI `oxigraph`")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalOxigraph:
    """Load `nt_file` (plain or `.gz`) into a fresh store, serve it on 127.0.0.1, stop it on exit."""

    def __init__(
        self,
        nt_file: str | Path,
        *,
        workdir: str | Path | None = None,
        binary: str | None = None,
        start_timeout: float = 30.0,
        query_timeout_s: int | None = None,
    ) -> None:
        self.nt_file = Path(nt_file)
        self.workdir = Path(workdir) if workdir is not None else None
        self.binary = binary
        self.start_timeout = start_timeout
        self.query_timeout_s = query_timeout_s
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._tmp: Path | None = None
        self._lock: int | None = None

    @property
    def query_url(self) -> str:
        if self.port is None:
            raise RuntimeError("LocalOxigraph is not running: use it as a context manager")
        return f"http://127.0.0.1:{self.port}/query"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def __enter__(self) -> LocalOxigraph:
        binary = self.binary or find_oxigraph()
        if not self.nt_file.is_file():
            raise ConfigError(f"N-Triples file {self.nt_file} does not exist")
        if self.workdir is not None:
            self.workdir.mkdir(parents=True, exist_ok=True)
        # Stores start side by side in one process (the verification batches of a threaded task runner): the sweep
        # of stale stores and a new store's lock go one at a time, or a sweep could take a store whose lock file
        # exists but is not yet held for stale.
        with _STARTING:
            remove_stale_stores(Path(self.workdir or tempfile.gettempdir()), own=self.workdir is not None)
            self._tmp = Path(tempfile.mkdtemp(prefix=STORE_PREFIX, dir=self.workdir))
            self._lock = _hold_lock(self._tmp / LOCK)
        try:
            self._load(binary, self._tmp / "store")
            self._serve(binary, self._tmp / "store")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the server and remove the store; safe to call twice."""
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None
        self.port = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _load(self, binary: str, store: Path) -> None:
        cmd = [binary, "load", "--location", str(store), "--format", NT_FORMAT, "--file", str(self.nt_file)]
        proc = subprocess.run(cmd, capture_output=True, env=_quiet_env(), check=False, **_child_options())
        if proc.returncode != 0:
            raise ConfigError(f"oxigraph could not load {self.nt_file}: {_error_line(proc.stderr)}")

    def _serve(self, binary: str, store: Path) -> None:
        # The free port can be taken between our probe and the server's bind: try a few.
        for _ in range(3):
            self.port = free_port()
            cmd = [binary, "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{self.port}"]
            if self.query_timeout_s is not None:
                cmd += ["--timeout-s", str(self.query_timeout_s)]
            log = store.parent / "serve.log"
            with open(log, "wb") as err:  # a file, not a pipe: a chatty server never blocks on a full pipe
                self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=_quiet_env(),
                                                **_child_options())
            if self._wait_ready(log):
                return
            self.process = None
            if b"in use" not in log.read_bytes():
                break
        raise ConfigError(f"oxigraph server for {self.nt_file} exited at start: {_tail(log.read_bytes())}")

    def _wait_ready(self, log: Path) -> bool:
        """True once the server answers `ASK {}`; False if it died; ConfigError if it stays silent too long."""
        body = urllib.parse.urlencode({"query": "ASK {}"}).encode()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            request = urllib.request.Request(
                self.query_url, data=body, headers={"Accept": "application/sparql-results+json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=1) as answer:
                    if answer.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        tail = _tail(log.read_bytes())
        self.close()
        raise ConfigError(f"oxigraph server for {self.nt_file} did not answer within {self.start_timeout}s: {tail}")


def remove_stale_stores(folder: Path, *, own: bool = True) -> list[Path]:
    """Remove the stores killed runs left in `folder` (those whose lock no live process holds); return them. In a
    folder of our own (`own`, a run's work folder) a store with no lock file that is older than UNLOCKED_GRACE_S goes
    too; in a shared one (the system's temporary folder) only stores that carry our lock file are touched."""
    removed = []
    for store in sorted(folder.glob(f"{STORE_PREFIX}*")) if folder.is_dir() else ():
        if not store.is_dir() or store.is_symlink():
            continue
        lock = store / LOCK
        if lock.is_file():
            stale = _unlocked(lock)
        else:
            stale = own and time.time() - store.stat().st_mtime > UNLOCKED_GRACE_S
        if stale:
            shutil.rmtree(store, ignore_errors=True)
            removed.append(store)
    return removed


def _hold_lock(path: Path) -> int | None:
    """The lock file made under another name, locked, then renamed into place: another process's sweep (Dask
    workers each start stores in one work folder) never sees a lock file that is not yet held and takes it for a
    killed run's."""
    if fcntl is None:
        return None
    held = path.with_name(path.name + ".new")
    fd = os.open(held, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.replace(held, path)
    return fd


def _unlocked(path: Path) -> bool:
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a live run holds it
    finally:
        os.close(fd)
    return True


def _child_options() -> dict[str, object]:
    """How Oxigraph is started: in a session (and so a process group) of its own, so a terminal's Ctrl-C reaches
    only us and we stop it in order; and, on Linux, asked to be killed when its parent dies (PR_SET_PDEATHSIG),
    so a run killed with SIGKILL never leaves a server under PID 1. Where there is no prctl, only the session."""
    dies_with_parent = _parent_death_signal()
    return {"start_new_session": True, **({"preexec_fn": dies_with_parent} if dies_with_parent else {})}


def _parent_death_signal() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        # Runs in the child between fork and exec. The signal comes when the thread that started the child ends:
        # LocalOxigraph is a with-block, so that thread outlives the server.
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect: no signal will come
            os._exit(1)
    return preexec


def _quiet_env() -> dict[str, str]:
    # Rust backtraces would bury the one line that says what is wrong with the file.
    return {**os.environ, "RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"}


def _error_line(stderr: bytes) -> str:
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for line in lines:
        if line.startswith("Error while loading"):
            return line
    errors = [ln for ln in lines if ln.lower().startswith("error")]
    return (errors or lines or ["(no message)"])[0]


def _tail(stderr: bytes, lines: int = 5) -> str:
    text = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return " | ".join(text[-lines:]) or "(no output)"
