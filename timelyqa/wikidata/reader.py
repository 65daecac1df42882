"""A dump read over processes: its decompressed bytes cut into ranges at line ends, each range read into a part
of its own by its own task, the parts then joined into the snapshot folder the serial reader writes, byte for byte.

gzip and bz2 are decompressed by rapidgzip, which indexes the file once (on every core) so that each part seeks
straight to its range. A part owns the lines whose first byte lies in its range: it starts after the first newline
before its range (at the range's start if that byte is one) and reads past its range's end up to the first newline
there, so a line cut across a boundary is read once, by the part it starts in. Memory: one piece of a line at a
time while reading, one part's bucket while joining (reader_join).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import polars as pl
from pydantic import BaseModel

from timelyqa.files import compression
from timelyqa.wikidata import snapshot
from timelyqa.wikidata.dump import BadLine, DumpReader, LineReject, _entity, _keep
from timelyqa.wikidata.lines import MAX_LINE_BYTES, Lines
from timelyqa.wikidata.onepass import OnePass
from timelyqa.wikidata.seen import SeenIds

PARTS_DIR = "read-parts"
READ_BYTES = 1 << 20
"""Decompressed bytes a part asks for at a time."""
INDEX = "index"
INDEX_SPACING = 256 << 20
"""Decompressed bytes between the seek points a part's index keeps. rapidgzip keeps one a few MB, each with the
32 KB of output before it: 6 % of the compressed size, some 8 GB for a full dump, which every part would load.
One point every 256 MB keeps it near 0.1 %, and a part decodes at most 256 MB it does not use."""


def thin_index(data: bytes, spacing: int) -> bytes:
    """An index in indexed_gzip's format (rapidgzip's export of a gzip file) with only the seek points `spacing`
    decompressed bytes apart or more; anything else (a bz2 file's block offsets) as it is."""
    if data[:6] != b"GZIDX\x01" or len(data) < 35:
        return data
    window, count = struct.unpack_from("<II", data, 27)
    points = [struct.unpack_from("<QQBB", data, 35 + 18 * i) for i in range(count)]
    at, windows = 35 + 18 * count, []
    for point in points:  # a point with its data flag set has a window, in the points' order, after them all
        windows.append(data[at:at + window] if point[3] else b"")
        at += window if point[3] else 0
    if at != len(data):  # not the layout this reads: keep every point rather than guess
        return data
    keep: list[int] = []
    for i, point in enumerate(points):
        if not keep or point[1] >= points[keep[-1]][1] + spacing:
            keep.append(i)
    return b"".join([data[:31], struct.pack("<I", len(keep)), *(struct.pack("<QQBB", *points[i]) for i in keep),
                     *(windows[i] for i in keep)])


class ReadPlan(BaseModel):
    """How one dump is read: its decompressed size, the byte ranges of its parts, rapidgzip's index of it."""

    dump: str
    folder: str
    kind: str
    size: int
    sha256: str
    ranges: list[tuple[int, int]]
    buckets: int
    rdf: bool
    started: float = 0.0
    """When the read began (time.time(): the parts may run on other machines)."""
    serial: str | None = None
    """Why the dump is read by the serial reader instead (rapidgzip could not read it whole); None: in parts."""

    def part_dir(self, i: int) -> Path:
        return Path(self.folder) / PARTS_DIR / f"{i:04d}"


class PartResult(BaseModel):
    """What one part read: its lines and the last non-blank one (the file's end is checked when joining)."""

    index: int
    lines: int
    last: str
    entities: int


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(READ_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _open(path: Path | OnePass, kind: str, index: Path | None, parallelization: int = 1) -> Any:
    """The decompressed bytes of a dump (a path, or a file object rapidgzip reads through), seekable."""
    if kind == "plain":
        return Path(path).open("rb")  # type: ignore[arg-type]
    import rapidgzip  # a C++ extension: loaded only by a run that reads in parts

    f = rapidgzip.open(path if isinstance(path, OnePass) else str(path), parallelization=parallelization)
    if index is not None:
        with index.open("rb") as fh:
            f.import_index(fh)
    return f


def plan(dump: Path, folder: Path, *, parts: int, buckets: int, rdf: bool, threads: int = 0,
         progress: Callable[[int, int], None] | None = None) -> ReadPlan:
    """Index the dump (decompressed once by rapidgzip on `threads` threads, 0: one a core) and hash it as stored,
    in one pass over its stored bytes (onepass.OnePass); cut it into `parts` ranges of decompressed bytes; the
    folder its parts go to emptied. `progress(done, total)`: the stored bytes read so far."""
    started = time.time()
    if parts < 1:
        raise ValueError(f"parts={parts}: at least one")
    shutil.rmtree(folder / PARTS_DIR, ignore_errors=True)
    (folder / PARTS_DIR).mkdir(parents=True)
    kind, serial = compression(dump), None
    if kind == "plain":
        size, sha256 = dump.stat().st_size, _sha256(dump)
    else:
        # One pass over the stored bytes: rapidgzip reads them through OnePass, which hashes them on the way.
        with OnePass(dump) as stored:
            try:
                with _open(stored, kind, None, parallelization=threads) as f:
                    # Read through, not seek to the end: a cut stream raises only when its blocks are decoded.
                    while f.read(16 << 20):
                        if progress is not None:
                            progress(stored.bytes_read, stored.size)
                    size = f.tell()
                    # rapidgzip ends a cut gzip stream without a word: the decoder must have reached the file's end.
                    if -(-f.tell_compressed() // 8) != stored.size:
                        raise EOFError(f"decoding stopped at byte {f.tell_compressed() // 8} of {stored.size}")
                    index = io.BytesIO()
                    f.export_index(index)
                (folder / PARTS_DIR / INDEX).write_bytes(thin_index(index.getvalue(), INDEX_SPACING))
            except (ValueError, RuntimeError, OSError, EOFError) as exc:
                size, serial = 0, (f"{dump}: rapidgzip cannot read it whole ({str(exc)[:200]}); read by the serial "
                                   "reader")
            sha256 = stored.finish()
    ranges = [(size * i // parts, size * (i + 1) // parts) for i in range(parts)] if serial is None else [(0, 0)]
    return ReadPlan(dump=str(dump), folder=str(folder), kind=kind, size=size, sha256=sha256, ranges=ranges,
                    buckets=buckets, rdf=rdf, started=started, serial=serial)


def range_bytes(f: Any, start: int, end: int) -> Iterator[bytes]:
    """The decompressed bytes of the lines whose first byte lies in [start, end): from the first line start at or
    after `start` to the first one at or after `end` (or the file's end)."""
    pos, rest = 0, b""
    if start > 0:
        f.seek(start - 1)
        pos = start - 1
        while True:  # a line starts after a newline: skip to just past the first one at or after start - 1
            chunk = f.read(READ_BYTES)
            if not chunk:
                return
            nl = chunk.find(b"\n")
            if nl >= 0:
                pos, rest = pos + nl + 1, chunk[nl + 1:]
                break
            pos += len(chunk)
    last = end - 1  # the part ends just past the first newline at or after this byte
    if pos > last:
        return
    while True:
        chunk = rest or f.read(READ_BYTES)
        rest = b""
        if not chunk:
            return
        if pos + len(chunk) > last:
            nl = chunk.find(b"\n", max(0, last - pos))
            if nl >= 0:
                yield chunk[:nl + 1]
                return
        yield chunk
        pos += len(chunk)


class RangeReader(DumpReader):
    """DumpReader over one part's range: line numbers count from the part's first line (the join shifts them);
    repeats are caught within the part (the join catches them across parts); the end is checked by the join."""

    def __init__(self, plan: ReadPlan, i: int) -> None:
        self.path, self.plan, self.i = Path(plan.dump), plan, i
        self.size = plan.ranges[i][1] - plan.ranges[i][0]
        self.lines, self.last, self._done = 0, b"", 0

    @property
    def position(self) -> int:
        return self._done

    @property
    def sha256(self) -> str:
        return self.plan.sha256

    def _pieces(self, f: Any) -> Iterator[bytes]:
        for piece in range_bytes(f, *self.plan.ranges[self.i]):
            self._done = min(self.size, self._done + len(piece))
            yield piece

    def __iter__(self) -> Iterator[dict[str, Any] | BadLine]:
        name, seen = str(self.path), SeenIds()
        index = Path(self.plan.folder) / PARTS_DIR / INDEX
        with _open(self.path, self.plan.kind, index if self.plan.kind != "plain" else None) as f:
            lines = Lines(self._pieces(f), MAX_LINE_BYTES)
            for self.lines, text in lines:
                if text is None:
                    self.last = b""
                    yield BadLine(name, self.lines, LineReject.LINE_TOO_LONG,
                                  f"{name} line {self.lines}: longer than {MAX_LINE_BYTES} bytes, skipped", "")
                    continue
                body = text.rstrip()
                if body.endswith(b","):
                    body = body[:-1]
                if body:
                    self.last = body
                if body in (b"[", b"]", b""):
                    continue
                item = _entity(name, self.lines, body)
                if isinstance(item, dict) and not seen.add(item["id"]):
                    item = BadLine(name, self.lines, LineReject.DUPLICATE_ENTITY,
                                   f"{name} line {self.lines}: {item['id']} again (an earlier line had it; that one is "
                                   "kept)", _keep(body))
                yield item
            self.lines = lines.count


REJECTS, COUNTS = "rejects.jsonl", "entity_triples.parquet"


def read_part(plan: ReadPlan, i: int) -> PartResult:
    """Part `i` of the dump into its own snapshot folder, its rejects and each entity's truthy triples beside."""
    folder = plan.part_dir(i)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    reader, counts = RangeReader(plan, i), []
    with (folder / REJECTS).open("wb") as out:
        def reject(item: Any, reason: Any, detail: str) -> None:
            out.write(orjson.dumps([item, str(reason), detail]) + b"\n")

        info = snapshot.read_snapshot(Path(plan.dump), folder, rdf=plan.rdf, reject=reject, buckets=plan.buckets,
                                      reader=reader, entity_triples=counts)
    pl.DataFrame({"n": counts}, schema={"n": pl.UInt32()}).write_parquet(folder / COUNTS)
    return PartResult(index=i, lines=reader.lines, last=reader.last.decode("utf-8", errors="replace"),
                      entities=info.entities)
