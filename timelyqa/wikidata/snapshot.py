"""One dump streamed into a snapshot folder: truthy triples, English labels, bad lines, and optionally RDF.

The triples are spilled while reading into buckets of subjects (`triples.parquet/NNNN.parquet`, one file a
bucket, read as one table by polars), each triple's place in the dump beside it (`triple_rows/NNNN.parquet`,
row for row), so that the delta of a full dump pair runs one bucket at a time in bounded memory.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from timelyqa.wikidata.dump import BadLine, DumpReader, LineReject, modified_time
from timelyqa.wikidata.rdf import entity_ntriples
from timelyqa.wikidata.statements import (BadStatement, StatementReject, english, english_aliases, read_statements,
                                          read_truthy)
from timelyqa.wikidata.values import ValueReject

TRIPLES_SCHEMA = pl.Schema({"s": pl.String(), "p": pl.String(), "o": pl.String(), "kind": pl.String()})
ENTITIES_SCHEMA = pl.Schema({"id": pl.String(), "label": pl.String(), "aliases": pl.List(pl.String()),
                             "modified": pl.Datetime("us", "UTC"), "datatype": pl.String()})
BATCH_TRIPLES = 500_000
BUCKET_BYTES = 256 << 20
"""Compressed dump bytes a bucket holds about (some 2.5 million truthy triples of gzipped JSON)."""
MAX_BUCKETS = 256
"""Two open parquet writers a bucket while a dump is read: 512 files, under the usual limit of 1024."""
PENDING_TRIPLES = 2_000_000
"""Triples held across all buckets before the fullest are written: bounds memory however many buckets."""
TRIPLES_DIR, ROWS_DIR = "triples.parquet", "triple_rows"

Progress = Callable[[int, int], None]
"""Called with (bytes read, bytes in all) as a dump is read."""


@dataclass
class SnapshotInfo:
    path: str
    sha256: str = ""
    lines: int = 0
    entities: int = 0
    statements: int = 0
    truthy_triples: int = 0
    other_snaks: int = 0
    bad: dict[str, int] = field(default_factory=dict)
    newest_modified: str | None = None
    seconds: float = 0.0
    buckets: int = 1

    @classmethod
    def load(cls, folder: Path) -> SnapshotInfo:
        return cls(**json.loads((folder / "info.json").read_text()))


class _Columns:
    """Column buffers flushed to one parquet file in row groups, so memory stays bounded."""

    def __init__(self, path: Path, schema: pl.Schema) -> None:
        self.path, self.schema = path, schema
        self.cols: dict[str, list[Any]] = {name: [] for name in schema}
        self._writer: pq.ParquetWriter | None = None
        # The arrow schema polars gives this schema, so the files read back exactly as polars wrote them.
        self._arrow = pl.DataFrame(schema=schema).to_arrow().schema

    def __len__(self) -> int:
        return len(next(iter(self.cols.values())))

    def flush(self) -> None:
        arrays = [_arrow(values, dtype, self._arrow.field(name).type)
                  for (name, dtype), values in zip(self.schema.items(), self.cols.values(), strict=True)]
        table = pa.Table.from_arrays(arrays, schema=self._arrow)
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema, compression="zstd")
        self._writer.write_table(table)
        for values in self.cols.values():
            values.clear()

    def close(self) -> None:
        if len(self) or self._writer is None:
            self.flush()
        if self._writer is not None:
            self._writer.close()


def buckets_for(dump_bytes: int) -> int:
    """The bucket count for a dump of this size: a power of two, so that the buckets of two snapshots read with
    different counts still nest (id mod 2^k decides id mod 2^j for j <= k) and one delta pass can pair them."""
    wanted = max(1, -(-dump_bytes // BUCKET_BYTES))
    return min(MAX_BUCKETS, 1 << (wanted - 1).bit_length())


def bucket_of(subjects: pl.Expr, n: int) -> pl.Expr:
    """A subject's bucket: its numeric id modulo n (Wikidata's ids are dense, so the buckets come out even);
    an id without a plain number (a lexeme's form, `L7-F1`) goes to bucket 0. A pure function of the id, stable
    across runs and versions, unlike polars' own hash."""
    return (subjects.str.slice(1).cast(pl.UInt64, strict=False).fill_null(0) % n).cast(pl.UInt32)


class _Buckets:
    """Triple column buffers spilled to one parquet file per bucket of subjects, each triple's dump row beside it.

    Flushed buffers wait per bucket until a bucket has a full row group (PENDING_TRIPLES / n triples), so the
    files have row groups worth reading, and no more than about PENDING_TRIPLES triples wait in memory."""

    def __init__(self, folder: Path, n: int) -> None:
        if not 1 <= n <= MAX_BUCKETS or n & (n - 1):
            raise ValueError(f"buckets={n}: a power of two from 1 to {MAX_BUCKETS}")
        self.n, self.folder = n, folder
        self.cols: dict[str, list[Any]] = {name: [] for name in TRIPLES_SCHEMA}
        self.rows = 0
        self.row_group = max(1, PENDING_TRIPLES // n)
        self._arrow = pl.DataFrame(schema=TRIPLES_SCHEMA).to_arrow().schema
        self._pending: list[list[pl.DataFrame]] = [[] for _ in range(n)]
        self._waiting = [0] * n
        for sub in (TRIPLES_DIR, ROWS_DIR):  # what an earlier read left, a single file in older versions
            if (folder / sub).is_dir():
                shutil.rmtree(folder / sub)
            (folder / sub).unlink(missing_ok=True)
            (folder / sub).mkdir(parents=True)
        self._writers = [(pq.ParquetWriter(folder / TRIPLES_DIR / f"{b:04d}.parquet", self._arrow, compression="zstd"),
                          pq.ParquetWriter(folder / ROWS_DIR / f"{b:04d}.parquet", _ROWS_ARROW, compression="zstd"))
                         for b in range(n)]

    def __len__(self) -> int:
        return len(self.cols["s"])

    def flush(self) -> None:
        if not len(self):
            return
        arrays = [_arrow(values, dtype, self._arrow.field(name).type)
                  for (name, dtype), values in zip(TRIPLES_SCHEMA.items(), self.cols.values(), strict=True)]
        frame = cast(pl.DataFrame, pl.from_arrow(pa.Table.from_arrays(arrays, schema=self._arrow)))
        frame = frame.with_columns(row=pl.int_range(self.rows, self.rows + frame.height, dtype=pl.UInt64))
        self.rows += frame.height
        for values in self.cols.values():
            values.clear()
        if self.n == 1:
            self._pending[0].append(frame)
            self._waiting[0] += frame.height
        else:
            parts = frame.with_columns(bucket=bucket_of(pl.col("s"), self.n)).partition_by(
                "bucket", as_dict=True, maintain_order=True, include_key=False)
            for (b,), part in parts.items():
                self._pending[int(b)].append(part)  # type: ignore[call-overload]
                self._waiting[int(b)] += part.height  # type: ignore[call-overload]
        for b in range(self.n):
            if self._waiting[b] >= self.row_group:
                self._write(b)

    def _write(self, b: int) -> None:
        if not self._pending[b]:
            return
        part = pl.concat(self._pending[b])
        self._pending[b], self._waiting[b] = [], 0
        triples, rows = self._writers[b]
        triples.write_table(part.drop("row").to_arrow().cast(self._arrow))
        rows.write_table(part.select("row").to_arrow())

    def close(self) -> None:
        self.flush()
        for b, (triples, rows) in enumerate(self._writers):
            self._write(b)
            triples.close()
            rows.close()


_ROWS_ARROW = pa.schema([pa.field("row", pa.uint64())])


def read_bucket(folder: Path, b: int, n: int, *, rows: bool = False) -> pl.DataFrame:
    """Every triple of the snapshot whose subject falls in bucket `b` of `n` (n divides the snapshot's own
    count), in dump order within each of its buckets; with `rows`, each one's dump row in column `row`."""
    own = SnapshotInfo.load(folder).buckets
    if own % n:
        raise ValueError(f"{folder}: {own} buckets cannot be read as {n}")
    files = [f"{i:04d}.parquet" for i in range(b, own, n)]
    triples = pl.concat([pl.read_parquet(folder / TRIPLES_DIR / f) for f in files])
    if not rows:
        return triples
    return triples.with_columns(pl.concat([pl.read_parquet(folder / ROWS_DIR / f) for f in files])["row"])


_EPOCH, _MICROSECOND = datetime(1970, 1, 1, tzinfo=UTC), timedelta(microseconds=1)


def _arrow(values: list[Any], dtype: pl.DataType, arrow_type: pa.DataType) -> pa.Array:
    """One column as the arrow array polars would have made of it, built the fast way for its type.

    A polars frame builds lists and aware datetimes from Python objects slowly (about 7 and 2 µs a
    value), and pa.array() imports pandas on first use (two seconds here); polars series of plain
    strings and integers are fast, and arrow assembles the rest without copying.
    """
    if dtype == pl.String():
        return pl.Series(values, dtype=pl.String()).to_arrow()
    if isinstance(dtype, pl.Datetime):
        micros = [None if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
        return pl.Series(micros, dtype=pl.Int64()).to_arrow().view(arrow_type)
    if dtype == pl.List(pl.String()):
        offsets, flat = [0], []
        for v in values:
            if v:
                flat.extend(v)
            offsets.append(len(flat))
        mask = None if all(v is not None for v in values) else pl.Series([v is None for v in values]).to_arrow()
        return pa.LargeListArray.from_arrays(pl.Series(offsets, dtype=pl.Int64()).to_arrow(),
                                             pl.Series(flat, dtype=pl.String()).to_arrow(), mask=mask)
    return pl.Series(values, dtype=dtype).to_arrow()


Reject = Callable[[str, "LineReject | StatementReject | ValueReject", str], None]
"""Where a bad line or statement goes: (item, reason, detail), as StageWriter.reject takes them."""


def read_snapshot(dump: Path, folder: Path, *, rdf: bool, reject: Reject, progress: Progress | None = None,
                  buckets: int = 1, reader: DumpReader | None = None,
                  entity_triples: list[int] | None = None) -> SnapshotInfo:
    """Stream `dump` into `folder`: triples.parquet (a folder of `buckets` files), triple_rows, entities.parquet,
    info.json (and rdf.nt); each bad line or statement goes to `reject`. `reader` reads a part of the dump instead
    of all of it (timelyqa.wikidata.reader); `entity_triples`, when given, gets each entity's truthy triples."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    info = SnapshotInfo(path=str(dump), buckets=buckets)
    triples = _Buckets(folder, buckets)
    entities = _Columns(folder / "entities.parquet", ENTITIES_SCHEMA)
    bad: Counter[str] = Counter()
    newest: datetime | None = None
    nt = (folder / "rdf.nt").open("w", encoding="utf-8") if rdf else None
    reader = reader or DumpReader(dump)
    s_col, p_col, o_col, k_col = (triples.cols[c] for c in ("s", "p", "o", "kind"))
    try:
        for item in reader:
            if isinstance(item, BadLine):
                bad[item.reason] += 1
                reject(item.raw, item.reason, item.detail)
                continue
            if nt is None:  # no RDF to write: the truthy triples go straight into the columns
                es = None
                statements_bad: list[BadStatement] = []
                n_statements, n_truthy, other_snaks = read_truthy(item, s_col, p_col, o_col, k_col, statements_bad)
            else:
                es = read_statements(item)
                for st in es.truthy:
                    s_col.append(st.subject)
                    p_col.append(st.prop)
                    o_col.append(st.form)
                    k_col.append(st.kind.value)
                statements_bad = es.bad
                n_statements, n_truthy, other_snaks = len(es.statements), len(es.truthy), es.other_snaks
            label, aliases = english(item), english_aliases(item)
            modified = modified_time(item.get("modified"))  # the reader refused an entity whose is not a time
            if modified is not None and (newest is None or modified > newest):
                newest = modified
            entities.cols["id"].append(item["id"])
            entities.cols["label"].append(label)
            entities.cols["aliases"].append(aliases)
            entities.cols["modified"].append(modified)
            entities.cols["datatype"].append(item.get("datatype"))
            for b in statements_bad:
                bad[b.reason] += 1
                reject(b.subject, b.reason, f"{dump} line {reader.lines}: {b.detail}")
            info.entities += 1
            info.statements += n_statements
            info.truthy_triples += n_truthy
            if entity_triples is not None:
                entity_triples.append(n_truthy)
            info.other_snaks += other_snaks
            if es is not None and nt is not None:
                nt.write(entity_ntriples(item["id"], label, aliases, es))
            if len(triples) >= BATCH_TRIPLES:
                triples.flush()
                entities.flush()
                if progress:
                    progress(reader.position, reader.size)
    finally:
        triples.close()
        entities.close()
        if nt is not None:
            nt.close()
    if progress:
        progress(reader.size, reader.size)
    info.bad = {str(reason): n for reason, n in sorted(bad.items())}
    info.sha256, info.lines = reader.sha256, reader.lines
    info.newest_modified = None if newest is None else newest.isoformat().replace("+00:00", "Z")
    info.seconds = round(time.perf_counter() - started, 3)
    (folder / "info.json").write_text(json.dumps(asdict(info), indent=2, sort_keys=True))
    return info

