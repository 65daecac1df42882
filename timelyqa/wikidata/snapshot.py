"""One dump streamed into a snapshot folder: truthy triples, English labels, bad lines, and optionally RDF."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from timelyqa.wikidata.dump import BadLine, DumpReader, LineReject
from timelyqa.wikidata.rdf import entity_ntriples
from timelyqa.wikidata.statements import (BadStatement, StatementReject, english, english_aliases, read_statements,
                                          read_truthy)
from timelyqa.wikidata.values import ValueReject

TRIPLES_SCHEMA = pl.Schema({"s": pl.String(), "p": pl.String(), "o": pl.String(), "kind": pl.String()})
ENTITIES_SCHEMA = pl.Schema({"id": pl.String(), "label": pl.String(), "aliases": pl.List(pl.String()),
                             "modified": pl.Datetime("us", "UTC"), "datatype": pl.String()})
BATCH_TRIPLES = 500_000

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


def read_snapshot(dump: Path, folder: Path, *, rdf: bool, reject: Reject, progress: Progress | None = None
                  ) -> SnapshotInfo:
    """Stream `dump` into `folder`: triples.parquet, entities.parquet, info.json (and rdf.nt); each bad line or
    statement goes to `reject`."""
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    info = SnapshotInfo(path=str(dump))
    triples = _Columns(folder / "triples.parquet", TRIPLES_SCHEMA)
    entities = _Columns(folder / "entities.parquet", ENTITIES_SCHEMA)
    bad: Counter[str] = Counter()
    newest: str | None = None
    nt = (folder / "rdf.nt").open("w", encoding="utf-8") if rdf else None
    reader = DumpReader(dump)
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
            modified = item.get("modified") if isinstance(item.get("modified"), str) else None
            newest = max(newest or "", modified or "") or None
            entities.cols["id"].append(item["id"])
            entities.cols["label"].append(label)
            entities.cols["aliases"].append(aliases)
            entities.cols["modified"].append(_timestamp(modified))
            entities.cols["datatype"].append(item.get("datatype"))
            for b in statements_bad:
                bad[b.reason] += 1
                reject(b.subject, b.reason, f"{dump} line {reader.lines}: {b.detail}")
            info.entities += 1
            info.statements += n_statements
            info.truthy_triples += n_truthy
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
    info.sha256, info.lines, info.newest_modified = reader.sha256, reader.lines, newest
    info.seconds = round(time.perf_counter() - started, 3)
    (folder / "info.json").write_text(json.dumps(asdict(info), indent=2, sort_keys=True))
    return info


def _timestamp(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None
