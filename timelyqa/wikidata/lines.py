"""A dump's decompressed bytes in bounded pieces, and its non-blank lines with their numbers, each held whole only
up to a cap: a hostile file (a gzip of zeros, a line of gigabytes, billions of blank lines) costs bounded memory
and time linear in its size."""

from __future__ import annotations

import bz2
import gzip
import re
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

CHUNK = 1 << 16
"""Compressed bytes per read: big enough to amortise the calls, small enough that the decompressed piece
(about 0.5 MB for gzipped JSON) is reused by the allocator instead of mapped and faulted in afresh."""
PIECE_BYTES = 1 << 20
"""The most one decompression call returns: gzip inflates up to 1000-fold and bz2 far more, so 64 KB of a
hostile file could otherwise come out as gigabytes at once."""
MAX_LINE_BYTES = 32 << 20
"""The longest line kept: Wikidata's largest entities are a few MB of JSON (its pages are capped at a few MB of
text), so 32 MB is ten times that, while one line held whole and parsed stays well under a gigabyte."""

_NONBLANK = re.compile(rb"\S")
"""A line's first non-blank byte: the regex engine steps over blank lines without a Python loop, and the line's
end is then found by bytes.find (memchr), faster than a regex scanning the 13 KB of a typical entity."""


class Source(Protocol):
    def read(self, size: int, /) -> bytes: ...


def pieces(kind: str, raw: Source) -> Iterator[bytes]:
    """The decompressed bytes of the whole file, at most PIECE_BYTES a piece, as gzip.GzipFile and bz2.BZ2File
    read them: concatenated gzip members (zero padding between them allowed) and bz2 streams are read on; data
    after the last bz2 stream is ignored, as BZ2File does. A stream cut short raises EOFError."""
    if kind == "gzip":
        yield from _gunzip(raw)
    elif kind == "bz2":
        yield from _bunzip(raw)
    else:
        while chunk := raw.read(CHUNK):
            yield chunk


def _gunzip(raw: Source) -> Iterator[bytes]:
    d: Any = zlib.decompressobj(31)
    while chunk := raw.read(CHUNK):
        while True:
            if d.eof:  # one member ended and more bytes follow
                chunk = chunk.lstrip(b"\x00")
                if not chunk:
                    break
                if len(chunk) >= 2 and chunk[:2] != b"\x1f\x8b":
                    raise gzip.BadGzipFile(f"Not a gzipped file ({chunk[:2]!r})")
                d = zlib.decompressobj(31)
            out = d.decompress(chunk, PIECE_BYTES)
            if out:
                yield out
            chunk = d.unused_data if d.eof else d.unconsumed_tail
            # A full piece with no input left may still have output waiting inside zlib: ask again with b"".
            if not chunk and (d.eof or len(out) < PIECE_BYTES):
                break
    if not d.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")


def _bunzip(raw: Source) -> Iterator[bytes]:
    d: Any = bz2.BZ2Decompressor()
    while chunk := raw.read(CHUNK):
        while True:
            if d.eof:  # one stream ended and more bytes follow
                if not chunk:
                    break
                d = bz2.BZ2Decompressor()
                try:
                    out = d.decompress(chunk, PIECE_BYTES)
                except OSError:
                    return
            else:
                out = d.decompress(chunk, PIECE_BYTES)
            if out:
                yield out
            chunk = d.unused_data if d.eof else b""
            if not chunk and (d.eof or d.needs_input):
                break
    if not d.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")


class Lines:
    """Iterates (line number, text) for the non-blank lines of a stream of pieces; a line longer than `cap` bytes
    comes out once as (number, None) and its bytes are dropped as they arrive, never held.

    The text starts at the line's first non-blank byte. A blank line (whitespace only) never comes out, however
    long. `count` is the number of lines seen so far, all of them once iteration ends (a last line without a
    newline counts)."""

    def __init__(self, chunks: Iterable[bytes], cap: int = MAX_LINE_BYTES) -> None:
        self._chunks, self.cap = chunks, cap
        self.count = 0

    def __iter__(self) -> Iterator[tuple[int, bytes | None]]:
        cap = self.cap
        newlines = 0  # newlines before the piece's cursor
        parts: list[bytes] = []  # the open line, a piece at a time: joined once when it ends, never re-copied
        held = 0
        dropping = False  # the open line is too long: its bytes go until its newline
        blank = True  # no byte of the open line so far is more than whitespace
        for piece in self._chunks:
            start = 0
            if parts or dropping:
                nl = piece.find(b"\n")
                part = piece if nl < 0 else piece[:nl]
                if not dropping:
                    held += len(part)
                    if held > cap:
                        blank = blank and not part.strip() and not any(p.strip() for p in parts)
                        parts, held, dropping = [], 0, True
                        if not blank:
                            self.count = newlines + 1
                            yield newlines + 1, None
                    else:
                        parts.append(part)
                elif blank and part.strip():  # an overlong line blank so far turns out not to be
                    blank = False
                    self.count = newlines + 1
                    yield newlines + 1, None
                if nl < 0:
                    continue
                newlines += 1
                self.count = newlines
                if not dropping and (text := b"".join(parts).lstrip()):
                    yield newlines, text
                parts, held, dropping, blank = [], 0, False, True
                start = nl + 1
            last = piece.rfind(b"\n")
            cursor = start
            if last >= start:
                nonblank, pos = _NONBLANK.search, start
                while (m := nonblank(piece, pos, last)) is not None:
                    at = m.start()
                    pos = piece.find(b"\n", at, last)
                    pos = last if pos < 0 else pos
                    newlines += piece.count(b"\n", cursor, at)
                    text = piece[at:pos]
                    if len(text) + at - cursor > cap:  # maybe too long with its leading blanks: measure them
                        begin = piece.rfind(b"\n", cursor, at) + 1 or cursor
                        text = None if len(text) + at - begin > cap else text
                    cursor = at
                    self.count = newlines + 1
                    yield newlines + 1, text
                newlines += piece.count(b"\n", cursor, last + 1)
                self.count = newlines
                start = last + 1
            if start < len(piece):  # the piece ends inside a line: it opens here
                tail = piece[start:] if start else piece
                if len(tail) > cap:
                    dropping, blank = True, not tail.strip()
                    if not blank:
                        self.count = newlines + 1
                        yield newlines + 1, None
                else:
                    parts, held = [tail], len(tail)
        if parts or dropping:
            self.count = newlines + 1
            if parts and (text := b"".join(parts).lstrip()):
                yield newlines + 1, text
