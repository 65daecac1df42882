"""Two synthetic Wikidata JSON dumps, T0 and T1 a week of edits later, at a chosen size, cached under out/bench/.

The files are in the real dump format (`[`, one entity per line with a trailing comma, `]`; gzip) and
the entities look like Wikidata's in structure and size, so that the time to scan them and the time
to diff them compare as they would on the real dumps:

- Per item, about 14 truthy triples (14.3 statements) and 13.3 KB of JSON, so about 930 bytes of JSON
  per statement: the 10-million-triple pair has 713,000 and 722,000 entities, 9.5 GB of JSON each.
  Wikidata's own: its JSON dump was 1,142 GB uncompressed in April 2021 for some 94 million entities
  (openai/deeptype#47), about 12 KB each, at about 13 statements per item: about 930 bytes per statement
  too. The JSON per triple is what matters: it sets the floor (decompress and parse) against the
  per-triple work of the delta; heavier entities would flatter the delta, lighter ones handicap it.
- The mix of kinds echoes Wikidata's: 31 % scholarly articles (25 statements, many `cites work`,
  authors with series ordinals, a Crossref reference on nine statements in ten, titles, descriptions in 40
  languages as bots write them), 20 % people (16, mostly external ids, labels copied into up to 35
  languages), places (populations over the years, the latest ranked preferred), taxa, stars,
  companies, clubs, events, journals, name items and Wikimedia categories (2 statements, 30
  descriptions).
- Statements carry ids, ranks, qualifiers and references, snaks their hashes and datatypes; about 0.4 %
  are deprecated and 0.3 % somevalue. Text is written as Wikidata writes it: non-ASCII as `\\uXXXX`,
  `/` as `\\/`.
- T1 is T0 with 20 % of items edited (one to three edits each: a statement added, removed, changed in
  value or in rank, a label changed), 0.2 % of items deleted and 1.5 % new items appended: about 3 %
  of the truthy triples differ, like a week or two of Wikidata edits.
- gzip level 6, gzip's default. Level-6 data decompresses faster than level-1 data (about 20 %
  here), so the level does not flatter the delta's ratio to the scan; it only makes writing slower.

Both dumps are written in one pass, T1's line of an item right after T0's (edited when the item is),
in a stream: nothing holds more than one entity and a few MB of lines, so any size fits in memory.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import queue
import shutil
import sys
import threading
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_entities import NEW_SHARE, Maker, fixed_items, property_entity  # noqa: E402
from synthetic_world import PROPERTIES  # noqa: E402

GENERATOR = "synthetic_wikidata_v1"
"""Change the name whenever the output changes: it keys the cache."""
TRIPLES_PER_ITEM = 14.06
"""Measured mean of truthy triples per synthetic item (10,000 items, seed 0): sizes the item count."""
DEFAULT_CACHE = Path(__file__).resolve().parent.parent / "out" / "bench"
T0_CUT = datetime(2026, 6, 1, tzinfo=UTC)
FLUSH_BYTES = 4 << 20


@dataclass(frozen=True)
class DumpPair:
    t0: Path
    t1: Path
    triples: int
    seed: int
    items_t0: int
    items_t1: int
    json_bytes_t0: int
    json_bytes_t1: int
    seconds: float

    @classmethod
    def load(cls, folder: Path) -> DumpPair:
        meta = json.loads((folder / "meta.json").read_text())
        return cls(**{**meta, "t0": folder / meta["t0"], "t1": folder / meta["t1"]})


def dump_pair(cache: Path = DEFAULT_CACHE, *, triples: int, seed: int = 0, level: int = 6) -> DumpPair:
    """The pair for these parameters: from the cache when a finished one is there, else written now."""
    folder = cache / f"{GENERATOR}-{triples}-seed{seed}-gz{level}"
    if (folder / "meta.json").is_file():
        return DumpPair.load(folder)
    started = time.perf_counter()
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    items = max(1, round(triples / TRIPLES_PER_ITEM))
    (n0, b0), (n1, b1) = write_pair(tmp / "wikidata-t0.json.gz", tmp / "wikidata-t1.json.gz", items=items,
                                    seed=seed, level=level)
    meta = {"t0": "wikidata-t0.json.gz", "t1": "wikidata-t1.json.gz", "triples": triples, "seed": seed,
            "items_t0": n0, "items_t1": n1, "json_bytes_t0": b0, "json_bytes_t1": b1,
            "seconds": round(time.perf_counter() - started, 1)}
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)  # the finished pair appears at once, or not at all
    return DumpPair.load(folder)


class _Dump:
    """One dump being written: entity lines buffered here, gzipped by a thread of its own.

    zlib releases the GIL, so both dumps compress while the next entities are built: three busy
    threads on two cores, where one process per dump would build every T0 item twice.
    """

    def __init__(self, path: Path, level: int) -> None:
        self._raw = path.open("wb")
        self._gz = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, compresslevel=level, mtime=0)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._compress, daemon=True)
        self._thread.start()
        self._lines: list[bytes] = [b"[\n"]
        self._size = 0
        self.entities = self.bytes = 0

    def add(self, line: bytes) -> None:
        self._lines.append(line if self.entities == 0 else b",\n" + line)
        self.entities += 1
        self._size += len(line) + 2
        if self._size >= FLUSH_BYTES:
            self._flush()

    def close(self) -> None:
        self._lines.append(b"\n]\n")
        self._flush()
        self._queue.put(None)
        self._thread.join()
        self._gz.close()
        self._raw.close()
        if self._error is not None:
            raise self._error

    def _flush(self) -> None:
        chunk = b"".join(self._lines)
        self.bytes += len(chunk)
        self._lines.clear()
        self._size = 0
        self._queue.put(chunk)

    def _compress(self) -> None:
        while (chunk := self._queue.get()) is not None:
            if self._error is None:  # after a failure keep draining, so the writer never blocks
                try:
                    self._gz.write(chunk)
                except BaseException as exc:  # noqa: BLE001  re-raised by close() in the writing thread
                    self._error = exc


def _line(entity: dict) -> bytes:
    # orjson writes "/" bare and doubles our pre-escaped "\uXXXX": Wikidata writes "\/" and "\uXXXX".
    return orjson.dumps(entity).replace(b"/", b"\\/").replace(b"\\\\u", b"\\u")


def write_pair(t0_path: Path, t1_path: Path, *, items: int, seed: int, level: int) -> tuple[tuple[int, int], ...]:
    """Write T0 and T1; returns (entities, uncompressed bytes) of each."""
    maker = Maker(seed, items)
    t0_dates = [(T0_CUT - timedelta(days=d, minutes=d * 37 % 1440)).strftime("%Y-%m-%dT%H:%M:%SZ")
                for d in range(1, 3000)]
    t1_dates = [(T0_CUT + timedelta(days=1 + h // 24, hours=h % 24, minutes=h * 13 % 60)).strftime("%Y-%m-%dT%H:%M:%SZ")
                for h in range(14 * 24)]
    t0, t1 = _Dump(t0_path, level), _Dump(t1_path, level)
    try:
        for pid, (datatype, label) in PROPERTIES.items():
            line = _line(property_entity(pid, datatype, label))
            t0.add(line)
            t1.add(line)
        for qid, (label, cls) in fixed_items().items():
            line = _line(maker.pool_entity(qid, label, cls))
            t0.add(line)
            t1.add(line)
        for i in range(items):
            entity = maker.entity(i, t0_dates[i * 7919 % len(t0_dates)])
            line = _line(entity)
            t0.add(line)
            edited, changed = maker.edit(i, entity, t1_dates[i * 104729 % len(t1_dates)])
            if edited is not None:
                t1.add(_line(edited) if changed else line)
        for i in range(items, items + max(1, round(items * NEW_SHARE))):
            t1.add(_line(maker.entity(i, t1_dates[i * 104729 % len(t1_dates)])))
    finally:
        t0.close()
        t1.close()
    return (t0.entities, t0.bytes), (t1.entities, t1.bytes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=int(os.environ.get("BENCH_TRIPLES", 10_000_000)),
                        help="truthy triples per dump, about (env BENCH_TRIPLES; default 10 million)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--level", type=int, default=6, help="gzip level")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    pair = dump_pair(args.cache, triples=args.triples, seed=args.seed, level=args.level)
    print(json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(pair).items()}, indent=2))


if __name__ == "__main__":
    main()
