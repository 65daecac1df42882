"""The parts of a dump read over processes joined into one snapshot folder, the serial reader's files byte for byte.

The serial reader writes its parquet files in row groups cut where it flushed (after the entity that brings the
triples held to BATCH_TRIPLES) and, per bucket, where a bucket had a row group's worth waiting: the join finds
those same points from each entity's truthy triples (kept by every part) and writes the same row groups, a part at
a time. Rows are the parts' own shifted by the triples before them; line numbers in rejects likewise by the lines.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from timelyqa.wikidata import snapshot
from timelyqa.wikidata.dump import LineReject
from timelyqa.wikidata.reader import COUNTS, PARTS_DIR, REJECTS, PartResult, ReadPlan

Reject = Callable[[str, str, str], None]


def repeated_across(plan: ReadPlan, results: list[PartResult]) -> str | None:
    """An entity id a part has that another part had too (None when none): each part catches only its own
    repeats, and Wikidata's dumps have none, so such a dump is read again by the serial reader. The ids are
    compared as (letter, number), 9 bytes an entity rather than a string each."""
    ids = pl.concat([pl.scan_parquet(plan.part_dir(r.index) / "entities.parquet").select("id") for r in results])
    key = pl.struct(pl.col("id").str.head(1), pl.col("id").str.slice(1).cast(pl.UInt64, strict=False).alias("n"))
    found = ids.filter(key.is_duplicated()).select(pl.col("id").first()).collect()
    return found.item() if found.height else None


class Joining(BaseModel):
    """What every bucket's join needs: each part's first row, and where the serial reader flushed."""

    offsets: list[int]
    entity_ends: list[int]
    row_ends: list[int]


def flush_points(plan: ReadPlan, results: list[PartResult]) -> tuple[list[int], list[int]]:
    """Where the serial reader flushed: (entities, triples) read by then, one pair a flush."""
    step = snapshot.BATCH_TRIPLES
    entity_ends, row_ends = [], []
    last, entities, rows = 0, 0, 0
    for r in results:
        cum = pl.read_parquet(plan.part_dir(r.index) / COUNTS)["n"].cast(pl.Int64).cum_sum().to_numpy() + rows
        while True:
            j = int(np.searchsorted(cum, last + step, side="left"))  # the entity whose triples reach the batch
            if j == len(cum):
                break
            last = int(cum[j])
            entity_ends.append(entities + j + 1)
            row_ends.append(last)
        entities += len(cum)
        rows = int(cum[-1]) if len(cum) else rows
    return entity_ends, row_ends


def _bucket_frames(plan: ReadPlan, results: list[PartResult], offsets: list[int], b: int) -> Iterator[pl.DataFrame]:
    for r, offset in zip(results, offsets, strict=True):
        part = plan.part_dir(r.index)
        name = f"{b:04d}.parquet"
        frame = pl.read_parquet(part / snapshot.TRIPLES_DIR / name)
        rows = pl.read_parquet(part / snapshot.ROWS_DIR / name)["row"] + offset
        if frame.height:
            yield frame.with_columns(row=rows)


def write_bucket(plan: ReadPlan, results: list[PartResult], joining: Joining, b: int) -> None:
    """Bucket `b`'s two files as _Buckets writes them: a row group each time, after a flush, the rows waiting
    reach PENDING_TRIPLES / buckets, and one for the rest at the end."""
    results = sorted(results, key=lambda r: r.index)
    offsets, row_ends = joining.offsets, joining.row_ends
    folder = Path(plan.folder)
    arrow = pl.DataFrame(schema=snapshot.TRIPLES_SCHEMA).to_arrow().schema
    row_group = max(1, snapshot.PENDING_TRIPLES // plan.buckets)
    ends = np.asarray(row_ends, dtype=np.int64)
    pending: list[pl.DataFrame] = []
    waiting = 0
    with pq.ParquetWriter(folder / snapshot.TRIPLES_DIR / f"{b:04d}.parquet", arrow, compression="zstd") as triples, \
            pq.ParquetWriter(folder / snapshot.ROWS_DIR / f"{b:04d}.parquet", snapshot._ROWS_ARROW,
                             compression="zstd") as rows:
        def write() -> None:
            nonlocal pending, waiting
            part = pl.concat(pending)
            pending, waiting = [], 0
            triples.write_table(part.drop("row").to_arrow().cast(arrow))
            rows.write_table(part.select("row").to_arrow())

        segment: list[pl.DataFrame] = []  # one flush's rows of this bucket: one frame, as the serial reader has it
        current = -1
        for frame in _bucket_frames(plan, results, offsets, b):
            # A row of global number r was flushed with the first flush whose triple count exceeds r.
            seg = np.searchsorted(ends, frame["row"].to_numpy(), side="right")
            for (k,), piece in frame.with_columns(seg=pl.Series(seg)).partition_by(
                    "seg", as_dict=True, maintain_order=True, include_key=False).items():
                if k != current and segment:  # a flush ended: its rows join the waiting ones, maybe a row group
                    pending.append(pl.concat(segment).rechunk())
                    waiting += pending[-1].height
                    segment = []
                    if waiting >= row_group:
                        write()
                segment.append(piece)
                current = k
        if segment:
            pending.append(pl.concat(segment).rechunk())
        if pending:
            write()


def write_entities(plan: ReadPlan, results: list[PartResult], entity_ends: list[int]) -> None:
    """entities.parquet as _Columns writes it: a row group a flush, and one for the rest (one, empty, if none)."""
    path = Path(plan.folder) / "entities.parquet"
    schema = pl.DataFrame(schema=snapshot.ENTITIES_SCHEMA).to_arrow().schema
    writer: pq.ParquetWriter | None = None
    pending: list[pa.Table] = []
    ends = iter(entity_ends)
    nxt, start = next(ends, None), 0
    try:
        for r in results:
            table = pq.read_table(plan.part_dir(r.index) / "entities.parquet")
            lo, n = 0, table.num_rows
            while nxt is not None and nxt - start <= n:  # a flush within this part (or at its end)
                hi = nxt - start
                if hi > lo:
                    pending.append(table.slice(lo, hi - lo))
                writer = _write_group(writer, path, schema, pending)
                pending, lo, nxt = [], hi, next(ends, None)
            if lo < n:
                pending.append(table.slice(lo))
            start += n
        if pending or writer is None:
            writer = _write_group(writer, path, schema, pending)
    finally:
        if writer is not None:
            writer.close()


def _write_group(writer: pq.ParquetWriter | None, path: Path, schema: pa.Schema,
                 tables: list[pa.Table]) -> pq.ParquetWriter:
    table = pa.concat_tables(tables).combine_chunks().cast(schema) if tables else schema.empty_table()
    if writer is None:
        writer = pq.ParquetWriter(path, schema, compression="zstd")
    writer.write_table(table)
    return writer


_LINE = r"^{name} line (\d+):"


def replay_rejects(plan: ReadPlan, results: list[PartResult], reject: Reject) -> Counter[str]:
    """Every part's rejects, in order, their line numbers made the file's; the reasons counted."""
    bad: Counter[str] = Counter()
    line = re.compile(_LINE.format(name=re.escape(plan.dump)))
    before = 0
    for r in results:
        with (plan.part_dir(r.index) / REJECTS).open("rb") as fh:
            for raw in fh:
                item, reason, detail = orjson.loads(raw)
                detail = line.sub(lambda m, n=before: f"{plan.dump} line {int(m.group(1)) + n}:", detail, count=1)
                bad[reason] += 1
                reject(item, reason, detail)
        before += r.lines
    return bad


def prepare(plan: ReadPlan, results: list[PartResult]) -> Joining | None:
    """The join's plan, the snapshot's bucket folders emptied; None when an entity repeats across parts."""
    results = sorted(results, key=lambda r: r.index)
    if repeated_across(plan, results) is not None:
        return None
    folder = Path(plan.folder)
    infos = [snapshot.SnapshotInfo.load(plan.part_dir(r.index)) for r in results]
    entity_ends, row_ends = flush_points(plan, results)
    for sub in (snapshot.TRIPLES_DIR, snapshot.ROWS_DIR):
        shutil.rmtree(folder / sub, ignore_errors=True)
        (folder / sub).mkdir(parents=True)
    return Joining(offsets=np.cumsum([0] + [i.truthy_triples for i in infos])[:-1].tolist(),
                   entity_ends=entity_ends, row_ends=row_ends)


def finish(plan: ReadPlan, results: list[PartResult], joining: Joining, reject: Reject) -> snapshot.SnapshotInfo:
    """After the buckets: entities.parquet, rdf.nt, the rejects and info.json, as the serial reader leaves them;
    the parts removed."""
    results = sorted(results, key=lambda r: r.index)
    folder = Path(plan.folder)
    infos = [snapshot.SnapshotInfo.load(plan.part_dir(r.index)) for r in results]
    write_entities(plan, results, joining.entity_ends)
    if plan.rdf:
        with (folder / "rdf.nt").open("wb") as out:
            for r in results:
                with (plan.part_dir(r.index) / "rdf.nt").open("rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    bad = replay_rejects(plan, results, reject)
    lines = sum(r.lines for r in results)
    last = next((r.last for r in reversed(results) if r.last), "")
    if last != "]":  # a cut plain file ends mid-array, as the serial reader says
        reason = LineReject.TRUNCATED_FILE
        bad[str(reason)] += 1
        reject("", reason, f"{plan.dump}: ends after line {lines} without the closing ']'")
    newest = [datetime.fromisoformat(i.newest_modified.replace("Z", "+00:00")) for i in infos if i.newest_modified]
    info = snapshot.SnapshotInfo(
        path=plan.dump, sha256=plan.sha256, lines=lines, entities=sum(i.entities for i in infos),
        statements=sum(i.statements for i in infos), truthy_triples=sum(i.truthy_triples for i in infos),
        other_snaks=sum(i.other_snaks for i in infos), bad={k: n for k, n in sorted(bad.items())},
        newest_modified=max(newest).isoformat().replace("+00:00", "Z") if newest else None,
        seconds=round(time.time() - plan.started, 3), buckets=plan.buckets)
    (folder / "info.json").write_text(json.dumps(asdict(info), indent=2, sort_keys=True))
    shutil.rmtree(folder / PARTS_DIR, ignore_errors=True)
    return info
