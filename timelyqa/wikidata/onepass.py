"""A dump file read once, front to back, for two readers at the same time: rapidgzip, which indexes it and seeks
about as its threads please, and the SHA-256 of the file as stored, fed from those same reads in order."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from pathlib import Path
from typing import Any

BLOCK = 1 << 20
"""Bytes read from the file at a time, and kept as one block for seeks back."""
KEEP_BYTES = 512 << 20
"""How far behind the furthest byte read a seek may land and still be served from memory. rapidgzip's threads
read a few chunks of 4 MB ahead of and behind one another; a seek further back reads the file again (counted)."""


class OnePass(io.RawIOBase):
    """A seekable file object over `path` that reads the file itself only forward, block by block, hashing each
    block as it is read; seeks back are served from the blocks kept. No `fileno`: rapidgzip must read through it.

    `bytes_read` counts every byte taken from the file, `reread` those taken a second time (a seek back past
    KEEP_BYTES); after `finish()`, `sha256` is the file's digest."""

    def __init__(self, path: Path, keep: int = KEEP_BYTES) -> None:
        super().__init__()
        self._file = Path(path).open("rb")
        self.size = os.fstat(self._file.fileno()).st_size
        self._digest = hashlib.sha256()
        self._blocks: dict[int, bytes] = {}
        self._keep = max(1, keep // BLOCK)
        self._end = 0  # the file read and hashed up to here
        self._pos = 0
        self._lock = threading.Lock()
        self.bytes_read = 0
        self.reread = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def _advance(self, limit: int) -> None:
        """Read (and hash) the file on to `limit`, keeping the last blocks."""
        while self._end < min(limit, self.size):
            data = self._file.read(BLOCK)
            if not data:
                self.size = self._end  # the file shrank under us: end here
                return
            self._digest.update(data)
            self._blocks[self._end // BLOCK] = data
            self._blocks.pop(self._end // BLOCK - self._keep, None)
            self._end += len(data)
            self.bytes_read += len(data)

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        with self._lock:
            start = self._pos
            stop = min(self.size, start + len(view))
            self._advance(stop)
            at = start
            while at < stop:
                k = at // BLOCK
                block = self._blocks.get(k)
                if block is None:  # evicted: read again, outside the one pass and counted
                    block = os.pread(self._file.fileno(), BLOCK, k * BLOCK)
                    self.bytes_read += len(block)
                    self.reread += len(block)
                piece = block[at - k * BLOCK:stop - k * BLOCK]
                if not piece:
                    break
                view[at - start:at - start + len(piece)] = piece
                at += len(piece)
            self._pos = at
            return at - start

    def finish(self) -> str:
        """The rest of the file hashed (bytes the decoder never asked for, such as trailing garbage): its SHA-256."""
        with self._lock:
            self._advance(self.size)
            # A file that grew after it was opened is hashed as far as it goes now, like a plain read would.
            while data := self._file.read(BLOCK):
                self._digest.update(data)
                self._end += len(data)
                self.bytes_read += len(data)
            return self._digest.hexdigest()

    def close(self) -> None:
        self._file.close()
        self._blocks.clear()
        super().close()
