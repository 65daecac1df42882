"""Streaming reads of Wikidata JSON dumps (plain, .gz, .bz2) into entities, without holding a file in memory."""

from __future__ import annotations

import hashlib
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from timelyqa.errors import ConfigError
from timelyqa.files import compression
from timelyqa.reasons import Reason
from timelyqa.wikidata.ids import is_entity_id
from timelyqa.wikidata.lines import MAX_LINE_BYTES, Lines, pieces
from timelyqa.wikidata.seen import SeenIds

MAX_KEPT_CHARS = 4000
"""How much of a bad line is kept aside: enough to see what went wrong, not a whole entity of megabytes."""
CHECK_BYTES = 1 << 20
"""How far check_dump looks for the opening '[': a dump has it on its first line; a file of blank lines or of
one endless line is refused after a megabyte, not read whole."""


class LineReject(Reason):
    TRUNCATED_FILE = "truncated_file", "the dump ends early: a compressed stream cut short or no closing ']'"
    MALFORMED_JSON = "malformed_json", "a dump line is not JSON"
    NOT_AN_ENTITY = "not_an_entity", "a dump line is JSON without an entity id"
    MALFORMED_ENTITY = "malformed_entity", ("an entity's claims, labels, aliases, modification time or datatype "
                                            "are not of the shape Wikidata's dumps give")
    BAD_ENTITY_ID = "bad_entity_id", "an entity's id is not a Wikidata id (Q, P or L and a number)"
    DUPLICATE_ENTITY = "duplicate_entity", "an entity read a second time in one dump: the first is kept"
    LINE_TOO_LONG = "line_too_long", "a dump line longer than any entity Wikidata holds, skipped unread"


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
    first: bytes | None = b""
    try:
        with _HashingReader(path.open("rb")) as raw:
            # A line filling the whole window has no end in it: too long, like any longer one.
            lines = Lines(_first_bytes(pieces(compression(path), raw), CHECK_BYTES), cap=CHECK_BYTES - 1)
            first = next((text.rstrip() if text is not None else None for _, text in lines), b"")
    except (OSError, EOFError, zlib.error) as exc:
        raise ConfigError(f"{path}: cannot be read as a {compression(path)} file: {exc}") from exc
    if first != b"[":
        shown = ("first line longer than a megabyte" if first is None else f"first line {first[:40]!r}" if first
                 else "nothing but blank lines in its first megabyte")
        raise ConfigError(f"{path}: not a Wikidata JSON dump ({shown}, expected '[')")


def _first_bytes(chunks: Iterator[bytes], limit: int) -> Iterator[bytes]:
    """The first `limit` bytes of the pieces and no more: the rest of the file is never decompressed."""
    for chunk in chunks:
        yield chunk[:limit]
        limit -= len(chunk)
        if limit <= 0:
            return


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
        seen = SeenIds()
        lines = Lines(pieces(compression(self.path), self._raw), MAX_LINE_BYTES)
        try:
            for self.lines, text in lines:
                if text is None:
                    last = b""
                    yield BadLine(name, self.lines, LineReject.LINE_TOO_LONG,
                                  f"{name} line {self.lines}: longer than {MAX_LINE_BYTES} bytes, skipped", "")
                    continue
                body = text.rstrip()
                if body.endswith(b","):
                    body = body[:-1]
                if body:
                    last = body
                if body in (b"[", b"]", b""):
                    continue
                item = _entity(name, self.lines, body)
                if isinstance(item, dict) and not seen.add(item["id"]):
                    item = BadLine(name, self.lines, LineReject.DUPLICATE_ENTITY,
                                   f"{name} line {self.lines}: {item['id']} again (an earlier line had it; that one is "
                                   "kept)", _keep(body))
                yield item
            self.lines = lines.count
            if last != b"]":  # a cut plain file ends mid-array: say so rather than read T0 as smaller than it is
                yield BadLine(name, self.lines + 1, LineReject.TRUNCATED_FILE,
                              f"{name}: ends after line {self.lines} without the closing ']'", "")
        except (EOFError, zlib.error, OSError) as exc:
            self.lines = lines.count
            yield BadLine(name, self.lines + 1, LineReject.TRUNCATED_FILE,
                          f"{name}: compressed stream ends early after line {self.lines} ({exc})", "")
        finally:
            try:  # drain what the decompressor left unread so the digest covers the whole file
                while self._raw.read(1 << 20):
                    pass
            finally:
                self._raw.close()


def _entity(path: str, line_no: int, body: bytes) -> dict[str, Any] | BadLine:
    try:
        entity = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return BadLine(path, line_no, LineReject.MALFORMED_JSON, f"{path} line {line_no}: {exc}", _keep(body))
    if not isinstance(entity, dict) or "id" not in entity:
        return BadLine(path, line_no, LineReject.NOT_AN_ENTITY, f"{path} line {line_no}: JSON without an entity id",
                       _keep(body))
    if not is_entity_id(entity["id"]):
        return BadLine(path, line_no, LineReject.BAD_ENTITY_ID,
                       f"{path} line {line_no}: entity id {_short(entity['id'])} is not a Wikidata id", _keep(body))
    if (problem := _malformed(entity)) is not None:
        return BadLine(path, line_no, LineReject.MALFORMED_ENTITY, f"{path} line {line_no}: {entity['id']} {problem}",
                       _keep(body))
    return entity


def _malformed(entity: dict[str, Any]) -> str | None:
    """What in an entity is not of the shape Wikidata gives, for the fields this source reads; None when all is.

    Wikibase writes an empty map as `[]`, so an empty list stands for an empty object."""
    for field in ("claims", "labels", "aliases"):
        value = entity.get(field)
        if value is not None and value != [] and not isinstance(value, dict):
            return f"{field} is {_kind(value)}, not an object"
    en = (entity.get("labels") or {}).get("en")
    if en is not None and not (isinstance(en, dict) and isinstance(en.get("value"), str)):
        return f"labels.en is {_kind(en)}, not an object with a string value"
    aliases = (entity.get("aliases") or {}).get("en")
    if aliases is not None and not (isinstance(aliases, list)
                                    and all(isinstance(a, dict) and isinstance(a.get("value"), str) for a in aliases)):
        return "aliases.en is not a list of objects with string values"
    if "modified" in entity and modified_time(entity["modified"]) is None:
        return f"modified {_short(entity['modified'])} is not an ISO time"
    if not isinstance(entity.get("datatype", ""), str):
        return f"datatype is {_kind(entity['datatype'])}, not a string"
    return None


def modified_time(value: object) -> datetime | None:
    """An entity's `modified` as an aware UTC time (Wikidata writes `2026-03-01T12:00:00Z`); None when it is not
    one. A time without a zone is taken as UTC, as Wikidata's are."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _kind(value: object) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), type(value).__name__)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _keep(body: bytes) -> str:
    return body[:MAX_KEPT_CHARS].decode("utf-8", errors="replace")
