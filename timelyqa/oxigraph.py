"""A local, read-only Oxigraph SPARQL server over one N-Triples file, for the lifetime of a with-block."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType

from timelyqa.errors import ConfigError

NT_FORMAT = "application/n-triples"  # explicit, so any file name works; a `.gz` suffix still means gzip


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
        self._tmp = Path(tempfile.mkdtemp(prefix="oxigraph-", dir=self.workdir))
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

    def _load(self, binary: str, store: Path) -> None:
        cmd = [binary, "load", "--location", str(store), "--format", NT_FORMAT, "--file", str(self.nt_file)]
        proc = subprocess.run(cmd, capture_output=True, env=_quiet_env(), check=False)
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
                self.process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=_quiet_env())
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
