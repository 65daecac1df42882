"""Files every stage shares: the one hasher, the one compression sniffer, atomic and byte-stable writes."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

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


def write_parquet(df: pl.DataFrame, path: Path) -> None:
    """Write df atomically, with fixed options and no time-dependent metadata, so equal frames give equal bytes."""
    table = df.to_arrow()
    table = table.cast(pa.schema([pa.field(f.name, _plain_type(f.type), f.nullable) for f in table.schema]))
    with atomic_path(path) as partial:
        pq.write_table(table, partial, row_group_size=ROW_GROUP_SIZE, compression="zstd", compression_level=3,
                       use_dictionary=True, write_statistics=True, version="2.6", data_page_version="1.0")
