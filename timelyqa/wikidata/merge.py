"""A k-way merge of parquet files each sorted by one integer column, in bounded memory.

The delta of a full dump pair is computed a bucket of subjects at a time, each bucket's rows sorted by their
place in T1 (`row`); the merged delta is those files merged in `row` order. Sorting them whole would hold the
week's delta in memory; the merge holds at most one chunk of rows per file, however large the delta.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

CHUNK_ROWS = 65_536
"""Rows read from one file at a time: memory holds about k of these, k the number of files."""


@dataclass
class MergeStats:
    """What a merge held: the most rows in memory at once, against the rows it read."""

    rows: int = 0
    peak_rows: int = 0
    chunks: int = 0
    files: int = 0


def _chunks(path: Path, chunk_rows: int) -> Iterator[pl.DataFrame]:
    with pq.ParquetFile(path) as f:
        for batch in f.iter_batches(batch_size=chunk_rows):
            yield pl.DataFrame(pl.from_arrow(batch))


def merge_sorted(parts: Sequence[Path], out: Path, *, key: str, drop_key: bool = True,
                 chunk_rows: int | None = None, schema: pl.Schema | None = None,
                 each: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> MergeStats:
    """Merge `parts` (each sorted by `key`, an integer or string column, keys distinct across files) into `out`,
    sorted by `key`; `each` (if given) turns every merged chunk, in order, into what is written.

    Each round, every file with rows left holds one chunk; the smallest of the chunks' last keys is the
    watermark, and every held row at or below it is final (no file can still produce a smaller key), so it
    is sorted and written, the rest kept for the next round. Memory: at most about len(parts) chunks.
    `schema` is the output's when no part has a row (the files' own schema otherwise)."""
    stats = MergeStats(files=len(parts))
    chunk_rows = chunk_rows or CHUNK_ROWS
    sources = {i: _chunks(p, chunk_rows) for i, p in enumerate(parts)}
    held: dict[int, pl.DataFrame] = {}
    writer: pq.ParquetWriter | None = None
    arrow_schema = None
    if schema is None and parts:
        schema = pl.read_parquet_schema(parts[0])
    try:
        while sources or held:
            for i in list(sources):
                if i in held and held[i].height:
                    continue
                chunk = next(sources[i], None)
                if chunk is None:
                    del sources[i]
                    held.pop(i, None)
                    continue
                stats.rows += chunk.height
                stats.chunks += 1
                held[i] = chunk
            if not held:
                break
            stats.peak_rows = max(stats.peak_rows, sum(f.height for f in held.values()))
            # Files that are exhausted bound nothing: only files that may still yield rows set the watermark.
            live = [f[key][-1] for i, f in held.items() if i in sources and f.height]
            watermark = min(live) if live else None
            ready, keep = [], {}
            for i, f in held.items():
                if watermark is None:
                    ready.append(f)
                    continue
                below = f.filter(pl.col(key) <= watermark)
                ready.append(below)
                keep[i] = f.slice(below.height)  # sorted: the rows at or below the watermark come first
            held = {i: f for i, f in keep.items() if f.height or i in sources}
            batch = pl.concat(ready).sort(key)
            if drop_key:
                batch = batch.drop(key)
            if each is not None:
                batch = each(batch)
            table = batch.to_arrow()
            if writer is None:
                arrow_schema = table.schema
                writer = pq.ParquetWriter(out, arrow_schema, compression="zstd")
            if batch.height:
                writer.write_table(table.cast(arrow_schema))
        if writer is None:
            empty = pl.DataFrame(schema=schema or {})
            empty = empty.drop(key) if drop_key and key in empty.columns else empty
            (each(empty) if each is not None else empty).write_parquet(out)
    finally:
        if writer is not None:
            writer.close()
    return stats
