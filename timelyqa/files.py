"""Files every stage shares: the one hasher, the one compression sniffer, atomic and byte-stable writes, and the
whole-folder swap a release is put in place with."""

from __future__ import annotations

import bz2
import ctypes
import errno
import gzip
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from timelyqa.errors import ConfigError

try:
    import fcntl
except ImportError:  # not on Windows: builds there are not locked against each other
    fcntl = None  # type: ignore[assignment]

Compression = Literal["gzip", "bz2", "plain"]
_MAGIC: dict[bytes, Compression] = {b"\x1f\x8b": "gzip", b"BZ": "bz2"}
ROW_GROUP_SIZE = 10_000
"""Small row groups let the Hub's viewer and streaming readers fetch a page of rows without a whole file."""


def sha256_file(path: Path) -> str:
    """The sha256 of a file as stored, read in 1 MiB pieces (never whole)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def compression(path: Path) -> Compression:
    """How a file is compressed, by its first bytes (never by its name: a renamed dump is still read)."""
    with Path(path).open("rb") as fh:
        return _MAGIC.get(fh.read(2), "plain")


def open_compressed(path: Path) -> IO[bytes]:
    """The decompressed bytes of a plain, gzip or bz2 file, streamed."""
    kind = compression(path)
    if kind == "gzip":
        return gzip.open(path, "rb")
    if kind == "bz2":
        return bz2.open(path, "rb")
    return Path(path).open("rb")


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary name beside `path` to write to; renamed onto `path` only when the block ends without error,
    so a killed run never leaves a file that looks complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as partial:
        partial.write_text(text, encoding="utf-8")


def _plain_type(dtype: pa.DataType) -> pa.DataType:
    # polars exports large_string/large_list; datasets would surface them as `large_string` and
    # `LargeList` features, which do not concatenate with ordinary datasets. Plain types read everywhere.
    if pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return pa.string()
    if pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return pa.binary()
    if pa.types.is_large_list(dtype) or pa.types.is_list_view(dtype) or pa.types.is_list(dtype):
        return pa.list_(pa.field("item", _plain_type(dtype.value_type)))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _plain_type(f.type), f.nullable) for f in dtype])
    return dtype


_PARQUET = {"compression": "zstd", "compression_level": 3, "use_dictionary": True, "write_statistics": True,
            "version": "2.6", "data_page_version": "1.0"}


def _plain(table: pa.Table) -> pa.Table:
    return table.cast(pa.schema([pa.field(f.name, _plain_type(f.type), f.nullable) for f in table.schema]))


def write_parquet(df: pl.DataFrame, path: Path) -> None:
    """Write df atomically, with fixed options and no time-dependent metadata, so equal frames give equal bytes."""
    table = _plain(df.to_arrow())
    with atomic_path(path) as partial:
        pq.write_table(table, partial, row_group_size=ROW_GROUP_SIZE, **_PARQUET)  # type: ignore[arg-type]


@contextmanager
def parquet_rows(path: Path, schema: pl.Schema) -> Iterator[Callable[[pl.DataFrame], None]]:
    """A parquet file written a frame at a time, each frame a row group (so a reader of one reads only it), with
    write_parquet's options; in place at `path` only when the block ends without error. For what is too large to
    hold whole: the caller holds one frame at a time."""
    arrow = _plain(pl.DataFrame(schema=schema).to_arrow()).schema
    with atomic_path(path) as partial, pq.ParquetWriter(partial, arrow, **_PARQUET) as writer:  # type: ignore[arg-type]
        def write(frame: pl.DataFrame) -> None:
            if frame.height:
                table = _plain(frame.select(schema.names()).cast(dict(schema)).to_arrow())  # type: ignore[arg-type]
                writer.write_table(table, row_group_size=frame.height)
        yield write


# A folder is replaced by building its new contents in a sibling (same parent, so the same filesystem: a rename
# there is atomic) and swapping the two names in one step, so whoever looks (a user, a publish, a killed run's
# rerun) finds the old folder or the new one, whole, never a mix. The names below are the leftovers a killed
# build can leave in the parent; the next build into the same folder removes them or puts them back.
_BUILDING = ".{}.building-"
"""A new folder being written (or, after an exchange, the old one being removed): never trusted, removed."""
_READY = ".{}.ready"
"""A new folder written whole, about to be renamed in (only where the kernel cannot exchange two names)."""
_ASIDE = ".{}.old"
"""The old folder renamed aside (only where the kernel cannot exchange two names)."""
_RENAME_EXCHANGE = 2  # linux/fs.h


@contextmanager
def replaced_folder(path: Path) -> Iterator[Path]:
    """An empty sibling folder to write `path`'s new contents in; swapped into place whole when the block ends
    without error, removed when it fails. A killed build leaves `path` as it was; the leftovers it leaves beside
    it are cleared by the next build into `path` (recover_folder). Builds into one parent wait for each other."""
    target = Path(os.path.realpath(path))  # a symlinked folder is replaced where it lives, the link kept
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{path}: exists and is not a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _parent_lock(target.parent):
        recover_folder(target)
        staging = Path(tempfile.mkdtemp(prefix=_BUILDING.format(target.name), dir=target.parent))
        try:
            yield staging
            _swap_in(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def recover_folder(path: Path) -> None:
    """Finish or undo what a killed replaced_folder left beside `path`: a new folder written whole goes in when
    `path` is missing (the kill fell between two renames), else the old one comes back; the rest is removed."""
    target = Path(path)
    ready, aside = target.with_name(_READY.format(target.name)), target.with_name(_ASIDE.format(target.name))
    if not target.exists():
        for survivor in (ready, aside):  # ready is whole: it got that name only once written
            if survivor.is_dir():
                os.rename(survivor, target)
                break
    for leftover in (ready, aside, *target.parent.glob(_BUILDING.format(target.name) + "*")):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)


def link_tree(old: Path, new: Path, *, skip: set[str]) -> list[str]:
    """Give `new` every file of `old` it lacks (paths relative to `old`, posix), but those in `skip`: hard links
    (no copy, and the old folder's bytes stay as they are), or copies where the filesystem has no links. Symlinks
    are made again as symlinks. Returns the paths carried."""
    carried = []
    for root, dirs, files in os.walk(old):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if (Path(root) / d).is_symlink()]:
            source = Path(root) / name
            rel = source.relative_to(old).as_posix()
            dest = new / rel
            if rel in skip or dest.exists() or dest.is_symlink():
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), dest)
            else:
                try:
                    os.link(source, dest)
                except OSError:
                    shutil.copy2(source, dest)
            carried.append(rel)
    return carried


def _swap_in(staging: Path, target: Path) -> None:
    if not target.exists() and not target.is_symlink():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)  # staging holds the old folder now
        return
    # No atomic exchange here: two renames, with names recover_folder knows for the moment between them.
    ready, aside = target.with_name(_READY.format(target.name)), target.with_name(_ASIDE.format(target.name))
    os.rename(staging, ready)
    os.rename(target, aside)
    os.rename(ready, target)
    shutil.rmtree(aside, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two names in one step (Linux renameat2 RENAME_EXCHANGE); False where the kernel, the C library or the
    filesystem cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, f"cannot swap {b} with its rebuilt copy: {os.strerror(code)}")


@contextmanager
def _parent_lock(parent: Path) -> Iterator[None]:
    # A lock on the parent folder itself: no lock file to leave behind, and the kernel drops it when its holder
    # dies, so a killed build never blocks the next one. Two builds beside each other simply take turns.
    if fcntl is None:
        yield
        return
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
