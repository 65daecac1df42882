"""Streaming reads of Wikidata JSON dumps (plain, .gz, .bz2) into entities, without holding a file in memory."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from timelyqa.errors import ConfigError
from timelyqa.files import compression
from timelyqa.reasons import Reason

MAX_KEPT_CHARS = 4000
"""How much of a bad line is kept aside: enough to see what went wrong, not a whole entity of megabytes."""


class LineReject(Reason):
    TRUNCATED_FILE = "truncated_file", "the dump ends early: a compressed stream cut short or no closing ']'"
    MALFORMED_JSON = "malformed_json", "a dump line is not JSON"
    NOT_AN_ENTITY = "not_an_entity", "a dump line is JSON without an entity id"
    MALFORMED_ENTITY = "malformed_entity", "an entity's claims are not an object"


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line of a dump that could not be read as an entity, kept aside with one reason."""

    path: str
    line: int
    reason: LineReject
    detail: str
    raw: str


class _HashingReader(io.RawIOBase):
    """Passes the compressed bytes through, hashing them and counting how far the read has got."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.sha256 = hashlib.sha256()
        self.position = 0

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self.sha256.update(memoryview(buffer)[:n])
            self.position += n
        return n or 0


def check_dump(path: Path) -> None:
    """Stop before any work when the path is not a readable Wikidata JSON dump, naming the file."""
    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    if not path.is_file():
        raise ConfigError(f"{path}: not a file")
    try:
        with _HashingReader(path.open("rb")) as raw, _open_text(path, raw) as f:
            first = next((line.strip() for line in f if line.strip()), b"")
    except (OSError, EOFError, zlib.error) as exc:
        raise ConfigError(f"{path}: cannot be read as a {compression(path)} file: {exc}") from exc
    if first != b"[":
        raise ConfigError(f"{path}: not a Wikidata JSON dump (first line {first[:40]!r}, expected '[')")


def _open_text(path: Path, raw: _HashingReader) -> BinaryIO:
    kind = compression(path)
    buffered = io.BufferedReader(raw, buffer_size=1 << 20)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=buffered)  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.BZ2File(buffered)  # type: ignore[return-value]
    return buffered  # type: ignore[return-value]


class DumpReader:
    """Iterates the entities of one dump; bad lines come out as BadLine, the rest goes on.

    After iteration, `sha256` is the digest of the file as stored and `lines` the lines read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._raw = _HashingReader(path.open("rb"))
        self.size = path.stat().st_size
        self.lines = 0

    @property
    def position(self) -> int:
        return self._raw.position

    @property
    def sha256(self) -> str:
        return self._raw.sha256.hexdigest()

    def __iter__(self) -> Iterator[dict[str, Any] | BadLine]:
        name = str(self.path)
        last = b""
        try:
            rest = b""
            for piece in _pieces(compression(self.path), self._raw):
                # Whole decompressed pieces split at once: a readline per entity costs more than the split.
                lines = (rest + piece).split(b"\n") if rest else piece.split(b"\n")
                rest = lines.pop()
                for line in lines:
                    self.lines += 1
                    body = line.strip()
                    if body.endswith(b","):
                        body = body[:-1]
                    if body:
                        last = body
                    if body in (b"[", b"]", b""):
                        continue
                    yield _entity(name, self.lines, body)
            if rest:
                self.lines += 1
                body = rest.strip()
                if body.endswith(b","):
                    body = body[:-1]
                last = body or last
                if body not in (b"[", b"]", b""):
                    yield _entity(name, self.lines, body)
            if last != b"]":  # a cut plain file ends mid-array: say so rather than read T0 as smaller than it is
                yield BadLine(name, self.lines + 1, LineReject.TRUNCATED_FILE,
                              f"{name}: ends after line {self.lines} without the closing ']'", "")
        except (EOFError, zlib.error, OSError) as exc:
            yield BadLine(name, self.lines + 1, LineReject.TRUNCATED_FILE,
                          f"{name}: compressed stream ends early after line {self.lines} ({exc})", "")
        finally:
            try:  # drain what the decompressor left unread so the digest covers the whole file
                while self._raw.read(1 << 20):
                    pass
            finally:
                self._raw.close()


CHUNK = 1 << 16
"""Compressed bytes per read: big enough to amortise the calls, small enough that the decompressed piece
(about 0.5 MB for gzipped JSON) is reused by the allocator instead of mapped and faulted in afresh."""


def _pieces(kind: str, raw: _HashingReader) -> Iterator[bytes]:
    """The decompressed bytes of the whole file, as gzip.GzipFile and bz2.BZ2File read them.

    Concatenated gzip members (zero padding between them allowed) and bz2 streams are read on; data
    after the last bz2 stream is ignored, as BZ2File does. A stream cut short raises EOFError.
    """
    if kind == "plain":
        while chunk := raw.read(CHUNK):
            yield chunk
        return
    new: Callable[[], Any] = (lambda: zlib.decompressobj(31)) if kind == "gzip" else bz2.BZ2Decompressor
    decompressor = new()
    while chunk := raw.read(CHUNK):
        while chunk:
            if decompressor.eof:  # one member or stream ended and more bytes follow
                if kind == "gzip":
                    chunk = chunk.lstrip(b"\x00")
                    if not chunk:
                        break
                    if len(chunk) >= 2 and chunk[:2] != b"\x1f\x8b":
                        raise gzip.BadGzipFile(f"Not a gzipped file ({chunk[:2]!r})")
                decompressor = new()
                try:
                    out = decompressor.decompress(chunk)
                except OSError:
                    if kind == "bz2":
                        return
                    raise
            else:
                out = decompressor.decompress(chunk)
            if out:
                yield out
            chunk = decompressor.unused_data if decompressor.eof else b""
    if not decompressor.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def _entity(path: str, line_no: int, body: bytes) -> dict[str, Any] | BadLine:
    try:
        entity = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return BadLine(path, line_no, LineReject.MALFORMED_JSON, f"{path} line {line_no}: {exc}", _keep(body))
    if not isinstance(entity, dict) or not isinstance(entity.get("id"), str):
        return BadLine(path, line_no, LineReject.NOT_AN_ENTITY, f"{path} line {line_no}: JSON without an entity id",
                       _keep(body))
    if not isinstance(entity.get("claims", {}), dict):
        return BadLine(path, line_no, LineReject.MALFORMED_ENTITY, f"{path} line {line_no}: claims is not an object",
                       _keep(body))
    return entity


def _keep(body: bytes) -> str:
    return body[:MAX_KEPT_CHARS].decode("utf-8", errors="replace")
