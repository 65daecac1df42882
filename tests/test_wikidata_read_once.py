"""The read's plan takes the dump's stored bytes once: rapidgzip indexes them and the SHA-256 is fed from the same
reads (timelyqa.wikidata.onepass), and the plan is the one that read the file twice gave."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import random
from pathlib import Path

import pytest

from tests.test_wikidata_reader import lines_of
from timelyqa.wikidata import onepass, reader
from timelyqa.wikidata.reader import INDEX, INDEX_SPACING, PARTS_DIR, plan, thin_index


class Counted(onepass.OnePass):
    """OnePass that remembers each file it opened."""

    opened: list[Counted] = []

    def __init__(self, path: Path, **kw: object) -> None:
        super().__init__(path, **kw)  # type: ignore[arg-type]
        Counted.opened.append(self)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[Counted]:
    Counted.opened = []
    monkeypatch.setattr(reader, "OnePass", Counted)

    def second_read(path: Path) -> str:
        raise AssertionError(f"{path} hashed by a second read")

    monkeypatch.setattr(reader, "_sha256", second_read)
    return Counted.opened


def todays_plan(dump: Path, parts: int) -> tuple[int, str, list[tuple[int, int]], bytes]:
    """What the plan was before: the size rapidgzip decodes from the path, the file hashed by a read of its own,
    the same cut, the thinned index of rapidgzip's own reading of the path."""
    import rapidgzip

    with rapidgzip.open(str(dump), parallelization=1) as f:
        while f.read(1 << 20):
            pass
        size, index = f.tell(), io.BytesIO()
        f.export_index(index)
    return (size, hashlib.sha256(dump.read_bytes()).hexdigest(),
            [(size * i // parts, size * (i + 1) // parts) for i in range(parts)],
            thin_index(index.getvalue(), INDEX_SPACING))


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
@pytest.mark.parametrize("threads", [1, 0])
def test_the_plan_reads_the_dump_once_and_equals_the_two_pass_plan(tmp_path: Path, counted: list[Counted],
                                                                    suffix: str, threads: int) -> None:
    data = b"".join(lines_of("t1.json.gz"))
    dump = tmp_path / f"wikidata-20260308-all.json{suffix}"
    dump.write_bytes(gzip.compress(data, mtime=0) if suffix == ".gz" else bz2.compress(data))
    got = plan(dump, tmp_path / "t1", parts=3, buckets=2, rdf=False, threads=threads)
    assert len(counted) == 1 and counted[0].bytes_read == dump.stat().st_size and counted[0].reread == 0
    size, sha256, ranges, index = todays_plan(dump, 3)
    assert (got.size, got.sha256, got.ranges, got.serial) == (size, sha256, ranges, None)
    assert got.size == len(data)
    assert (tmp_path / "t1" / PARTS_DIR / INDEX).read_bytes() == index


def test_trailing_garbage_the_decoder_never_asks_for_is_hashed_too(tmp_path: Path, counted: list[Counted]) -> None:
    dump = tmp_path / "d.json.gz"
    dump.write_bytes(gzip.compress(b"".join(lines_of("t0.json.gz")), mtime=0) + b"not gzip at all" * 1000)
    got = plan(dump, tmp_path / "t0", parts=2, buckets=1, rdf=False, threads=1)
    assert got.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()
    assert counted[0].bytes_read == dump.stat().st_size


def test_a_seek_back_past_the_blocks_kept_reads_again_counted_and_the_digest_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted: list[Counted]) -> None:
    rng = random.Random(3)  # hex of random bytes: a few MB of gzip, several blocks of the one pass
    data = b"".join(b'{"id": "Q%d", "x": "%s"},\n' % (i, rng.randbytes(200).hex().encode()) for i in range(12_000))
    dump = tmp_path / "big.json.gz"
    dump.write_bytes(gzip.compress(data, compresslevel=1, mtime=0))
    monkeypatch.setattr(onepass.OnePass.__init__, "__defaults__", (onepass.BLOCK,))  # one block kept: seeks back miss
    got = plan(dump, tmp_path / "t1", parts=4, buckets=1, rdf=False, threads=2)
    size, sha256, ranges, index = todays_plan(dump, 4)
    assert (got.size, got.sha256, got.ranges) == (size, sha256, ranges)
    assert counted[0].reread > 0 and counted[0].bytes_read == dump.stat().st_size + counted[0].reread
