"""The dump read in parts (timelyqa.wikidata.reader*): the snapshot folder and the rejects the serial reader
writes, byte for byte, from one part and from many, for gzip, bz2 and plain dumps."""

from __future__ import annotations

import bz2
import gzip
import io
import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from timelyqa.wikidata import pipeline, snapshot
from timelyqa.wikidata.reader import plan, range_bytes
from timelyqa.wikidata.reader_run import read_parts

pytestmark = pytest.mark.slow  # dumps written and read in up to 400 parts: 7 s, so make test only

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"


def lines_of(name: str) -> list[bytes]:
    return gzip.decompress((FIXTURES / name).read_bytes()).splitlines(keepends=True)


def write(path: Path, lines: list[bytes]) -> Path:
    data = b"".join(lines)
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz"
                     else bz2.compress(data) if path.suffix == ".bz2" else data)
    return path


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a read: the snapshot (info.json without its seconds) and the ledger's counts and rejects."""
    out = {}
    for f in sorted(folder.rglob("*")):
        if not f.is_file():
            continue
        rel = str(f.relative_to(folder))
        if f.name == "info.json":
            info = json.loads(f.read_text())
            info.pop("seconds")
            out[rel] = json.dumps(info, sort_keys=True).encode()
        elif f.name.startswith("read_") and f.suffix == ".json":
            out[rel] = json.dumps(json.loads(f.read_text())["counts"], sort_keys=True).encode()
        else:
            out[rel] = f.read_bytes()
    return out


def serial(dump: Path, work: Path, buckets: int, rdf: bool = True) -> dict[str, bytes]:
    pipeline.read_snapshot(dump, work, "t1", rdf=rdf, buckets=buckets)
    return files(work)


def in_parts(dump: Path, work: Path, buckets: int, parts: int, rdf: bool = True) -> dict[str, bytes]:
    read_parts(dump, work, "t1", rdf=rdf, buckets=buckets, parts=parts)
    assert not (work / "t1" / "read-parts").exists()
    return files(work)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flushes every 90 triples (of the fixture's 1,503): the serial reader's files have many row groups, a bucket's
    written after some flushes and not others, cut mid-part."""
    monkeypatch.setattr(snapshot, "BATCH_TRIPLES", 90)
    monkeypatch.setattr(snapshot, "PENDING_TRIPLES", 520)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ""])
def test_parts_write_the_serial_readers_files_byte_for_byte(tmp_path: Path, small_batches: None,
                                                            suffix: str) -> None:
    dump = write(tmp_path / f"wikidata-20260308-all.json{suffix}", lines_of("t1.json.gz"))
    want = serial(dump, tmp_path / "serial", buckets=4)
    assert len(pl.read_parquet(tmp_path / "serial" / "t1" / "entities.parquet")) > 100
    groups = [pq.ParquetFile(tmp_path / "serial" / "t1" / f).num_row_groups
              for f in ("entities.parquet", "triples.parquet/0000.parquet", "triple_rows/0003.parquet")]
    assert min(groups) >= 3, groups
    for parts in (1, 2, 7, 40):
        got = in_parts(dump, tmp_path / f"p{parts}", buckets=4, parts=parts)
        assert got.keys() == want.keys(), parts
        for name, data in want.items():
            assert got[name] == data, (parts, name)


def test_bad_lines_keep_their_line_numbers_and_a_cut_file_is_named(tmp_path: Path) -> None:
    lines = lines_of("t0.json.gz")
    lines[40] = b'{"id": "Q1", "claims": \n'  # malformed JSON
    lines[120] = b'{"type": "item"},\n'  # no id
    lines = lines[:-1]  # no closing ']'
    dump = write(tmp_path / "cut.json.gz", lines)
    want = serial(dump, tmp_path / "serial", buckets=2, rdf=False)
    got = in_parts(dump, tmp_path / "parts", buckets=2, parts=9, rdf=False)
    assert got == want
    rejects = pl.read_parquet(tmp_path / "parts" / "ledger" / "read_t1.rejected.parquet")
    assert [d.split(":")[0].rsplit(" ", 1)[-1] for d in rejects["detail"][:2]] == ["41", "121"]
    assert rejects["reason"].to_list()[-1] == "truncated_file"


def test_an_entity_repeated_across_parts_is_read_serially_and_dropped_as_the_serial_reader_drops_it(
        tmp_path: Path) -> None:
    lines = lines_of("t0.json.gz")
    lines.insert(len(lines) - 2, lines[5])  # the sixth line's entity again near the end: another part
    dump = write(tmp_path / "dup.json.gz", lines)
    want = serial(dump, tmp_path / "serial", buckets=2, rdf=False)
    assert b"duplicate_entity" in want["ledger/read_t1.rejected.parquet"]
    assert in_parts(dump, tmp_path / "parts", buckets=2, parts=4, rdf=False) == want


@pytest.mark.parametrize("read_bytes", [1, 2, 3, 1 << 20])
def test_each_line_goes_to_the_part_its_first_byte_is_in(monkeypatch: pytest.MonkeyPatch, read_bytes: int) -> None:
    from timelyqa.wikidata import reader

    monkeypatch.setattr(reader, "READ_BYTES", read_bytes)
    data = b"a\nbb\n\nccc\nd\n\nee"
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == ord("\n")]
    for cut in range(len(data) + 1):
        for second in range(cut, len(data) + 1):
            spans = [(0, cut), (cut, second), (second, len(data))]
            pieces = [b"".join(range_bytes(io.BytesIO(data), a, b)) for a, b in spans]
            assert b"".join(pieces) == data, (cut, second)
            for (a, b), piece in zip(spans, pieces, strict=True):
                owned = [s for s in starts if a <= s < b and s < len(data)]
                assert piece == (data[owned[0]:owned[-1]] + data[owned[-1]:].split(b"\n")[0]
                                 + (b"\n" if b"\n" in data[owned[-1]:] else b"") if owned else b""), (a, b)


def test_every_line_is_read_once_however_the_bytes_are_cut(tmp_path: Path) -> None:
    import rapidgzip

    data = b"".join(lines_of("t1.json.gz"))
    dump = write(tmp_path / "d.json.gz", lines_of("t1.json.gz"))
    for parts in (1, 3, 50, 400):
        todo = plan(dump, tmp_path / "t1", parts=parts, buckets=1, rdf=False)
        assert todo.size == len(data)
        got = b""
        for start, end in todo.ranges:
            with rapidgzip.open(str(dump), parallelization=1) as f:
                got += b"".join(range_bytes(f, start, end))
        assert got == data, parts


def test_a_cut_gzip_is_read_by_the_serial_reader_which_says_where_it_ends(tmp_path: Path) -> None:
    dump = write(tmp_path / "d.json.gz", lines_of("t0.json.gz"))
    dump.write_bytes(dump.read_bytes()[:30_000])
    want = serial(dump, tmp_path / "serial", buckets=1, rdf=False)
    assert in_parts(dump, tmp_path / "parts", buckets=1, parts=3, rdf=False) == want
    assert b"truncated_file" in want["ledger/read_t1.rejected.parquet"]


@pytest.mark.parametrize("parts", [0, -1, 5000])
def test_a_wrong_part_count_is_refused_naming_it(parts: int) -> None:
    from timelyqa.errors import ConfigError
    from timelyqa.wikidata.reader_run import check_parts

    with pytest.raises(ConfigError, match=f"read_parts={parts}"):
        check_parts(parts)


def _members(lines: list[bytes], pack: object, between: bytes = b"", after: bytes = b"") -> bytes:
    cut = len(lines) // 3
    chunks = [b"".join(lines[:cut]), b"".join(lines[cut:2 * cut]), b"".join(lines[2 * cut:])]
    return between.join(pack(c) for c in chunks) + after  # type: ignore[operator]


@pytest.mark.parametrize("shape", ["gzip members", "gzip members padded with zeros", "gzip then garbage",
                                   "bz2 streams", "bz2 then garbage"])
def test_members_streams_and_trailing_bytes_read_as_the_serial_reader_reads_them(tmp_path: Path, shape: str) -> None:
    lines = lines_of("t1.json.gz")
    gz, bz = (lambda d: gzip.compress(d, mtime=0)), bz2.compress
    data = {"gzip members": _members(lines, gz), "gzip members padded with zeros": _members(lines, gz, b"\0" * 512),
            "gzip then garbage": _members(lines, gz, after=b"not gzip at all"),
            "bz2 streams": _members(lines, bz), "bz2 then garbage": _members(lines, bz, after=b"trailing junk")}[shape]
    dump = tmp_path / "d.json"
    dump.write_bytes(data)
    want = serial(dump, tmp_path / "serial", buckets=2, rdf=False)
    assert in_parts(dump, tmp_path / "parts", buckets=2, parts=5, rdf=False) == want


def test_a_thinned_index_keeps_few_seek_points_and_every_part_still_reads_its_own_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    import rapidgzip

    from timelyqa.wikidata import reader

    rng = random.Random(7)  # hex of random bytes: gzip halves it, so 24 MB of lines hold many seek points
    data = b"".join(b'{"id": "Q%d", "x": "%s"},\n' % (i, rng.randbytes(300).hex().encode()) for i in range(40_000))
    dump = tmp_path / "big.json.gz"
    dump.write_bytes(gzip.compress(data, compresslevel=1, mtime=0))
    monkeypatch.setattr(reader, "INDEX_SPACING", 12 << 20)
    todo = plan(dump, tmp_path / "t1", parts=9, buckets=1, rdf=False, threads=1)
    with rapidgzip.open(str(dump), parallelization=1) as f:
        full = io.BytesIO()
        f.export_index(full)
    thin = (tmp_path / "t1" / "read-parts" / "index").read_bytes()
    assert len(thin) * 2 < len(full.getvalue())  # most seek points (one each 4 MB), and their 32 KB windows, dropped
    got = b""
    for i in range(9):
        with reader._open(dump, "gzip", tmp_path / "t1" / "read-parts" / "index") as f:
            got += b"".join(range_bytes(f, *todo.ranges[i]))
    assert got == data
