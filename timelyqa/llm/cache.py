"""Replies kept on disk, keyed by everything that decides them, so a re-run makes no call and gives the same rows."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson


def cache_key(*, endpoint: str, model: str, prompt_id: str, messages: list[dict[str, str]],
              params: dict[str, Any]) -> str:
    """The key of one call: endpoint, model, prompt version, the rendered messages and every parameter sent."""
    blob = orjson.dumps({"endpoint": endpoint, "model": model, "prompt": prompt_id, "messages": messages,
                         "params": params}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()


class ReplyCache:
    """One JSON file per reply under `root/ab/abcdef....json`; writes are atomic, so two runs may share it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            reply = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None  # a file cut by a crash is a miss, and the next put replaces it
        return reply if isinstance(reply, dict) else None

    def put(self, key: str, reply: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(reply, option=orjson.OPT_SORT_KEYS))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
