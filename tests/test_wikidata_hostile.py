"""Hostile Wikidata dumps (issue 13): one bad entity costs only itself, named by dump file and line; nothing a dump
holds adds a triple to the verification store; swapped dumps are refused; huge lines and blank floods stay cheap."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from datetime import UTC, datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.ntparse import oxigraph_triples
from tests.worldgen import (entity, item_value, make_world, quantity_value, statement, text_value,
                            time_value, write_dump)
from timelyqa.errors import ConfigError
from timelyqa.sources import get
from timelyqa.stages import Rejects
from timelyqa.wikidata import pipeline
from timelyqa.wikidata.dump import check_dump
from timelyqa.wikidata.snapshot import SnapshotInfo, read_snapshot
from timelyqa.wikidata.values import ENTITY_IRI

ROOT = Path(__file__).resolve().parent.parent
MODIFIED = datetime(2026, 3, 1, tzinfo=UTC)
WDT = "http://www.wikidata.org/prop/direct/"


class Read:
    """What a user finds after reading a dump into a snapshot folder with its RDF: entities, rejects, the store."""

    def __init__(self, dump: Path, folder: Path) -> None:
        rejects = Rejects(get("wikidata"))
        self.info: SnapshotInfo = read_snapshot(dump, folder, rdf=True, reject=rejects.add)
        self.entities = pl.read_parquet(folder / "entities.parquet")
        self.triples = pl.read_parquet(folder / "triples.parquet")
        self.bad = rejects.frame()
        self.store = set(oxigraph_triples((folder / "rdf.nt").read_text()))  # Oxigraph refusing it fails here

    def subjects(self) -> set[str]:
        return {s[1] for s, _, _ in self.store}


def item(eid: str, label: str, claims: Sequence[tuple[str, dict[str, Any]]] = (), **kw: Any) -> dict[str, Any]:
    e = entity(eid, label, modified=MODIFIED, **kw)
    for n, (prop, value) in enumerate(claims):
        e["claims"].setdefault(prop, []).append(statement(f"{eid}${n:08d}-0000-4000-8000-000000000000", prop, value))
    return e


def dump_of(path: Path, middle: list[bytes]) -> Path:
    """A gzipped dump: `[`, good Q1 (line 2), the hostile lines (line 3 on), good Q3, `]`."""
    first = item("Q1", "Alpha", [("P17", item_value("Q9"))])
    last = item("Q3", "Gamma", [("P17", item_value("Q9"))])
    lines = [b"[", json.dumps(first).encode(), *middle, json.dumps(last).encode()]
    path.write_bytes(gzip.compress(b",\n".join(lines) + b"\n]\n"))
    return path


INJECTED = f"> <{WDT}P31> <{ENTITY_IRI}Q666> .\n<{ENTITY_IRI}Q2"


def _with(eid: str = "Q2", **fields: Any) -> bytes:
    e = item(eid, "Beta", [("P17", item_value("Q9"))])
    e.update(fields)
    return json.dumps(e).encode()


def _claim(prop: str, value: dict[str, Any]) -> bytes:
    e = item("Q2", "Beta", [("P17", item_value("Q9"))])
    bad = statement("Q2$X", "P1082", value)
    bad["mainsnak"]["property"] = prop
    e["claims"].setdefault(prop, []).append(bad)
    return json.dumps(e).encode()


# Each hostile entity, and the reason it is kept aside with. Entity-level ones cost the entity (Q2 is not read);
# statement-level ones cost that statement (Q2 is read with its good P17).
ENTITY_CASES: dict[str, tuple[bytes, str]] = {
    "labels as a list": (_with(labels=[{"language": "en", "value": "Beta"}]), "malformed_entity"),
    "labels.en as a string": (_with(labels={"en": "Beta"}), "malformed_entity"),
    "aliases as a string": (_with(aliases="Bee"), "malformed_entity"),
    "aliases.en as a string": (_with(aliases={"en": "Bee"}), "malformed_entity"),
    "datatype as an object": (_with(datatype={"type": "wikibase-item"}), "malformed_entity"),
    "modified not a date": (_with(modified="zzzz-not-a-date"), "malformed_entity"),
    "id with a space": (_with("Q2 x"), "bad_entity_id"),
    "id with >": (_with("Q2>"), "bad_entity_id"),
    "id injecting a triple": (_with("Q2" + INJECTED), "bad_entity_id"),
    "id as a number": (_with(2), "bad_entity_id"),
    "duplicate of Q1": (_with("Q1"), "duplicate_entity"),
}
STATEMENT_CASES: dict[str, tuple[bytes, str]] = {
    "property key not an id": (_claim("P31> <x", item_value("Q5")), "bad_property_id"),
    "property key injecting a triple": (_claim("P31" + INJECTED, item_value("Q5")), "bad_property_id"),
    "language tag injecting": (_claim("P1448", text_value("Beta", 'en .\n<a:b> <a:c> "d"@en')),
                               "malformed_datavalue"),
    "language tag not BCP 47": (_claim("P1448", text_value("Beta", "en_GB")), "malformed_datavalue"),
    "month 13": (_claim("P569", time_value("+2001-13-01T00:00:00Z", 11)), "malformed_datavalue"),
    "day 32": (_claim("P569", time_value("+2001-01-32T00:00:00Z", 11)), "malformed_datavalue"),
    "30 February": (_claim("P569", time_value("+2001-02-30T00:00:00Z", 11)), "malformed_datavalue"),
    "hour 25": (_claim("P569", time_value("+2001-01-01T25:00:00Z", 11)), "malformed_datavalue"),
    "precision 99": (_claim("P569", time_value("+2001-01-01T00:00:00Z", 99)), "malformed_datavalue"),
    "NaN quantity": (_claim("P1082", quantity_value("NaN")), "malformed_datavalue"),
    "infinite quantity": (_claim("P1082", quantity_value("+inf")), "malformed_datavalue"),
    "exponent quantity": (_claim("P1082", quantity_value("1e400")), "malformed_datavalue"),
    "unit not an entity": (_claim("P2048", quantity_value("+1", "Q11573> <x")), "malformed_datavalue"),
    "item value injecting": (_claim("P17", {"value": {"entity-type": "item", "numeric-id": 9, "id": "Q9" + INJECTED},
                                              "type": "wikibase-entityid"}), "malformed_datavalue"),
}


@pytest.mark.parametrize("case", sorted(ENTITY_CASES))
def test_a_hostile_entity_costs_only_itself_named_by_dump_and_line(tmp_path: Path, case: str) -> None:
    line, reason = ENTITY_CASES[case]
    dump = dump_of(tmp_path / "t1.json.gz", [line])
    read = Read(dump, tmp_path / "snap")
    assert sorted(read.entities["id"]) == ["Q1", "Q3"]
    assert read.info.bad == {reason: 1}
    (detail,) = read.bad["detail"]
    assert f"{dump} line 3" in detail and "rdf.nt" not in detail and "\n" not in detail
    kept = (ENTITY_IRI + "Q1", ENTITY_IRI + "Q3", ENTITY_IRI + "statement/Q1-", ENTITY_IRI + "statement/Q3-")
    assert all(any(s.startswith(k) for k in kept) for s in read.subjects())
    assert ("iri", ENTITY_IRI + "Q666") not in {o for _, _, o in read.store}
    assert read.info.newest_modified == "2026-03-01T00:00:00Z"


@pytest.mark.parametrize("case", sorted(STATEMENT_CASES))
def test_a_hostile_statement_costs_only_itself_named_by_dump_and_line(tmp_path: Path, case: str) -> None:
    line, reason = STATEMENT_CASES[case]
    dump = dump_of(tmp_path / "t1.json.gz", [line])
    read = Read(dump, tmp_path / "snap")
    assert sorted(read.entities["id"]) == ["Q1", "Q2", "Q3"]
    assert read.info.bad == {reason: 1}
    (detail,) = read.bad["detail"]
    assert f"{dump} line 3" in detail and "rdf.nt" not in detail and "\n" not in detail
    # Q2 keeps its good statement; the store holds it and nothing the bad one carried.
    assert set(read.triples.filter(pl.col("s") == "Q2")["p"]) == {"P17"}
    truthy = {(s[1], p[1]) for s, p, _ in read.store if p[1].startswith(WDT)}
    assert truthy == {(ENTITY_IRI + q, WDT + "P17") for q in ("Q1", "Q2", "Q3")}
    assert ("iri", ENTITY_IRI + "Q666") not in {o for _, _, o in read.store}


def test_wikibase_empty_maps_written_as_lists_are_read_as_empty(tmp_path: Path) -> None:
    """Wikibase serialises an empty map as `[]`: that is Wikidata's shape, not a hostile one."""
    dump = dump_of(tmp_path / "t1.json.gz", [_with(labels=[], aliases=[], claims=[])])
    read = Read(dump, tmp_path / "snap")
    assert sorted(read.entities["id"]) == ["Q1", "Q2", "Q3"] and read.info.bad == {}


def test_a_duplicate_entity_keeps_the_first_and_says_which_line(tmp_path: Path) -> None:
    again = item("Q1", "Alpha again", [("P17", item_value("Q10"))])
    dump = dump_of(tmp_path / "t1.json.gz", [_with(), json.dumps(again).encode()])
    read = Read(dump, tmp_path / "snap")
    assert read.entities["id"].to_list() == ["Q1", "Q2", "Q3"]
    assert dict(zip(read.entities["id"], read.entities["label"], strict=True))["Q1"] == "Alpha"
    assert set(read.triples.filter(pl.col("s") == "Q1")["o"]) == {"Q9"}
    (detail,) = read.bad["detail"]
    assert f"{dump} line 4: Q1 again" in detail


# T0 newer than T1 ------------------------------------------------------------------------------------

def test_dumps_swapped_by_the_dates_in_their_names_are_refused_before_any_work(tmp_path: Path) -> None:
    w = make_world(42)
    newer = write_dump(w.t0, tmp_path / "wikidata-20260309-all.json.gz")
    older = write_dump(w.t1, tmp_path / "wikidata-20260302-all.json.gz")
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as err:
        pipeline.run(newer, older, out)
    message = str(err.value)
    assert str(newer) in message and str(older) in message and "2026-03-09" in message and "2026-03-02" in message
    assert "\n" not in message
    assert not out.exists()


def test_dumps_swapped_by_their_newest_modification_are_refused_before_the_delta(tmp_path: Path) -> None:
    """Names without a date (`latest-all.json.gz`, a renamed file): the entities' newest `modified` dates each."""
    w = make_world(42)
    t1, t0 = write_dump(w.t1, tmp_path / "a.json.gz"), write_dump(w.t0, tmp_path / "b.json.gz")
    work = tmp_path / "out" / "work"
    first = pipeline.read_snapshot(t1, work, "t0", rdf=False)  # the newer dump given as T0
    second = pipeline.read_snapshot(t0, work, "t1", rdf=False)
    with pytest.raises(ConfigError) as err:
        pipeline.compute_delta(first, second, work)
    message = str(err.value)
    assert str(t1) in message and str(t0) in message and "newer" in message and "\n" not in message
    assert not (work / "delta.parquet").exists()


# Memory and time -------------------------------------------------------------------------------------

def _gzip_stream(path: Path, parts: list[tuple[bytes, int]]) -> Path:
    """A gzip of each (bytes, repeat) in order, compressed a block at a time (never held whole)."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    with path.open("wb") as f:
        for block, times in parts:
            per_unit = max(1, (1 << 20) // len(block))
            units, rest = divmod(times, per_unit)
            unit = block * per_unit
            for _ in range(units):
                f.write(z.compress(unit))
            f.write(z.compress(block * rest))
        f.write(z.flush())
    return path


_MEASURE = """
import resource, sys, time
from collections.abc import Sequence
from pathlib import Path
from timelyqa.errors import ConfigError
from timelyqa.wikidata.dump import DumpReader, check_dump
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
path = Path(sys.argv[2])
if sys.argv[1] == "check":
    try:
        check_dump(path)
        result = "accepted"
    except ConfigError as exc:
        result = str(exc)
else:
    items = list(DumpReader(path))
    result = repr([(str(i.reason), i.line) if hasattr(i, "reason") else i["id"] for i in items])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"{(peak - base) // 1024} {time.perf_counter() - started:.2f} {result}")
"""


def _measure(what: str, path: Path) -> tuple[int, float, str]:
    """(peak RSS growth in MB, seconds, result) of check_dump or a DumpReader pass in a fresh process."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, what, str(path)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    mb, seconds, result = proc.stdout.strip().split(" ", 2)
    return int(mb), float(seconds), result


@pytest.mark.slow
def test_a_gzip_of_zeros_without_a_newline_is_refused_after_a_megabyte(tmp_path: Path) -> None:
    bomb = _gzip_stream(tmp_path / "zeros.json.gz", [(b"\0", 512 << 20)])
    assert bomb.stat().st_size < 4 << 20  # a few MB on disk
    mb, seconds, result = _measure("check", bomb)
    assert str(bomb) in result and "first line longer than a megabyte" in result
    assert mb < 64 and seconds < 5  # was: the 512 MB "first line" read whole


@pytest.mark.slow
def test_an_overlong_line_is_skipped_unheld_and_the_next_entity_read(tmp_path: Path) -> None:
    huge = b'{"type":"item","id":"Q2","labels":{"en":{"language":"en","value":"' + b"a" * (96 << 20) + b'"}}},\n'
    good = [b"[\n", json.dumps(item("Q1", "Alpha")).encode() + b",\n"]
    dump = _gzip_stream(tmp_path / "long.json.gz", [(b"".join(good), 1), (huge, 1),
                                                    (json.dumps(item("Q3", "Gamma")).encode() + b"\n]\n", 1)])
    mb, seconds, result = _measure("read", dump)
    assert result == "['Q1', ('line_too_long', 3), 'Q3']"
    assert mb < 100 and seconds < 20  # was: 343 s for 200 MB (`rest + piece`), and the line held twice over


@pytest.mark.slow
def test_a_flood_of_blank_lines_costs_little_and_keeps_line_numbers(tmp_path: Path) -> None:
    blanks = 200 << 20
    dump = _gzip_stream(tmp_path / "blank.json.gz", [(b"[\n", 1), (b"\n", blanks), (b"{}\n]\n", 1)])
    mb, seconds, result = _measure("read", dump)
    assert result == f"[('not_an_entity', {blanks + 2})]"
    assert mb < 64 and seconds < 15  # was: minutes, a Python loop turn per blank line


def test_check_dump_reads_only_the_start_of_a_dump(tmp_path: Path) -> None:
    ok = _gzip_stream(tmp_path / "ok.json.gz", [(b"\n", 1000), (b"[\n", 1), (b'{"id":"Q1"}\n', 100_000)])
    check_dump(ok)
    blank = _gzip_stream(tmp_path / "blank.json.gz", [(b" \n", 4 << 20), (b"[\n", 1)])
    with pytest.raises(ConfigError, match="blank.json.gz"):
        check_dump(blank)
