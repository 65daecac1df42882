"""Reading Wikidata JSON dumps: truthy triples, canonical literals, English labels, bad input kept aside."""

from __future__ import annotations

import bz2
import functools
import gc
import gzip
import hashlib
import json
import warnings
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.truthy import Snapshot
from tests.worldgen import (World, entity, item_value, make_world, quantity_value, statement, string_value,
                            text_value, time_value, write_dump)
from timelyqa.errors import ConfigError
from timelyqa.wikidata.dump import check_dump
from timelyqa.wikidata.pipeline import check_inputs, run
from timelyqa.sources import get
from timelyqa.stages import Rejects
from timelyqa.wikidata.snapshot import SnapshotInfo, read_snapshot

MODIFIED = datetime(2026, 3, 1, tzinfo=UTC)


@functools.cache
def world(seed: int) -> tuple[World, frozenset[tuple[str, str, str]]]:
    """A random world (read-only here) and the reference's truthy triples of its T1."""
    w = make_world(seed)
    return w, frozenset(Snapshot.of(w.t1).triples())


class Read:
    """What a user finds in a snapshot folder after `read_snapshot`."""

    def __init__(self, dump: Path, folder: Path, *, rdf: bool = False) -> None:
        rejects = Rejects(get("wikidata"))
        self.info: SnapshotInfo = read_snapshot(dump, folder, rdf=rdf, reject=rejects.add)
        self.triples = pl.read_parquet(folder / "triples.parquet")
        self.entities = pl.read_parquet(folder / "entities.parquet")
        self.bad = rejects.frame()

    def objects(self, s: str, p: str) -> set[str]:
        return set(self.triples.filter((pl.col("s") == s) & (pl.col("p") == p))["o"])

    def label(self, eid: str) -> str | None:
        return dict(zip(self.entities["id"], self.entities["label"], strict=True))[eid]


def claim(subject: str, n: int, prop: str, value: dict[str, Any] | None, **kw: Any) -> dict[str, Any]:
    return statement(f"{subject}${n:08d}-0000-4000-8000-000000000000", prop, value, **kw)


def item(eid: str, label: str | None, claims: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    e = entity(eid, label, modified=MODIFIED, **kw)
    for c in claims:
        e["claims"].setdefault(c["mainsnak"]["property"], []).append(c)
    return e


# The same world in three compressions --------------------------------------------------------------

def test_plain_gz_and_bz2_give_the_same_snapshot_and_the_reference_truthy_triples(tmp_path: Path) -> None:
    w, truthy = world(41)
    reads = {}
    for name, rdf in (("t1.json", False), ("t1.json.gz", False), ("t1.json.bz2", False), ("t1.json", True)):
        dump = write_dump(w.t1, tmp_path / name)
        reads[name, rdf] = Read(dump, tmp_path / f"snap-{name}-{rdf}", rdf=rdf)
        assert reads[name, rdf].info.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()
        assert reads[name, rdf].info.bad == {}
    frames = [r.triples.sort("s", "p", "o") for r in reads.values()]
    assert frames[0].height > 1000
    assert all(f.equals(frames[0]) for f in frames[1:])
    entities = [r.entities.sort("id") for r in reads.values()]
    assert all(e.equals(entities[0]) for e in entities[1:])

    assert set(frames[0].select("s", "p", "o").iter_rows()) == truthy
    labels = {i: label for i, label in zip(entities[0]["id"], entities[0]["label"], strict=True) if label is not None}
    assert labels == Snapshot.of(w.t1).labels
    assert labels["P27"] == "country of citizenship"  # properties are entities with labels too
    assert reads["t1.json", False].info.entities == len(w.t1)
    # Reading with or without writing RDF counts the same statements.
    assert reads["t1.json", True].info.statements == reads["t1.json", False].info.statements > 0


def _layouts(body: bytes) -> dict[str, bytes]:
    """The same dump as the tools that make real ones write it: Wikidata's own .gz files are gzip members
    written in parallel and concatenated, parallel bzip2 (lbzip2, pbzip2) writes one stream per block."""
    thirds = [body[: len(body) // 3], body[len(body) // 3 : 2 * len(body) // 3], body[2 * len(body) // 3 :]]
    return {
        "members.json.gz": b"".join(gzip.compress(part, mtime=0) for part in thirds),
        "streams.json.bz2": b"".join(bz2.compress(part) for part in thirds),
        "crlf.json": body.replace(b"\n", b"\r\n"),
        "no-final-newline.json": body.rstrip(b"\n"),
    }


@pytest.mark.parametrize("layout", ["members.json.gz", "streams.json.bz2", "crlf.json", "no-final-newline.json"])
def test_dumps_written_in_pieces_or_with_other_line_ends_read_the_same(tmp_path: Path, layout: str) -> None:
    w, truthy = world(42)
    body = write_dump(w.t1, tmp_path / "whole.json").read_bytes()
    dump = tmp_path / layout
    dump.write_bytes(_layouts(body)[layout])
    read = Read(dump, tmp_path / "snap")
    assert read.info.bad == {}
    assert read.info.entities == len(w.t1)
    assert set(read.triples.select("s", "p", "o").iter_rows()) == truthy
    assert read.info.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()


# The truthy rule ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rdf", [False, True], ids=["triples", "triples+rdf"])
def test_truthy_keeps_the_best_rank_per_subject_and_property(tmp_path: Path, rdf: bool) -> None:
    s = "Q1"
    e = item(s, "Ada Example", [
        claim(s, 1, "P27", item_value("Q20"), rank="preferred"),
        claim(s, 2, "P27", item_value("Q21")),                       # normal, beaten by preferred
        claim(s, 3, "P27", item_value("Q22"), rank="deprecated"),
        claim(s, 4, "P54", item_value("Q30")),
        claim(s, 5, "P54", item_value("Q31")),
        claim(s, 6, "P54", item_value("Q32"), rank="deprecated"),    # deprecated never
        claim(s, 7, "P108", item_value("Q40"), rank="preferred"),
        claim(s, 8, "P108", item_value("Q41"), rank="preferred"),
        claim(s, 9, "P108", item_value("Q42")),
        claim(s, 10, "P22", item_value("Q50"), rank="deprecated"),   # only deprecated: nothing
        claim(s, 11, "P19", None, snaktype="somevalue", rank="preferred"),  # unknown but preferred ...
        claim(s, 12, "P19", item_value("Q60")),                      # ... hides the normal value
        claim(s, 13, "P20", None, snaktype="novalue"),
        claim(s, 14, "P20", item_value("Q70")),                      # a normal novalue hides nothing
        claim(s, 15, "P69", None, snaktype="somevalue", rank="deprecated"),
        claim(s, 16, "P69", item_value("Q80")),
        claim(s, 17, "P40", None, snaktype="somevalue"),             # somevalue alone: no triple
    ])
    read = Read(write_dump([e], tmp_path / "t.json"), tmp_path / "snap", rdf=rdf)
    assert read.objects(s, "P27") == {"Q20"}
    assert read.objects(s, "P54") == {"Q30", "Q31"}
    assert read.objects(s, "P108") == {"Q40", "Q41"}
    assert read.objects(s, "P22") == set()
    assert read.objects(s, "P19") == set()
    assert read.objects(s, "P20") == {"Q70"}
    assert read.objects(s, "P69") == {"Q80"}
    assert read.objects(s, "P40") == set()
    assert read.info.bad == {}
    assert set(read.triples.select("s", "p", "o").iter_rows()) == Snapshot.of([e]).triples()


@pytest.mark.parametrize("rdf", [False, True], ids=["triples", "triples+rdf"])
def test_literals_are_kept_in_canonical_form(tmp_path: Path, rdf: bool) -> None:
    s = "Q2"
    e = item(s, "Port Alder", [
        claim(s, 1, "P569", time_value("+1952-03-11T00:00:00Z", 11)),
        claim(s, 2, "P571", time_value("+1850-00-00T00:00:00Z", 9, julian=True)),
        claim(s, 3, "P2048", quantity_value("+1.96", "Q11573")),
        claim(s, 4, "P1082", quantity_value("+163900")),
        claim(s, 5, "P2044", quantity_value("-28", "Q11573")),
        claim(s, 6, "P395", string_value('Zoë "Z" \\ 7')),
        claim(s, 7, "P1448", text_value("Clube Atlético", "pt")),
        # Older dumps give items by numeric id only.
        claim(s, 8, "P17", {"value": {"entity-type": "item", "numeric-id": 155}, "type": "wikibase-entityid"}),
    ])
    read = Read(write_dump([e], tmp_path / "t.json.gz"), tmp_path / "snap", rdf=rdf)
    got = {(p, o, kind) for _, p, o, kind in read.triples.iter_rows()}
    assert got == {
        ("P569", "+1952-03-11T00:00:00Z/11", "time"),
        ("P571", "+1850-00-00T00:00:00Z/9/julian", "time"),
        ("P2048", "+1.96 Q11573", "quantity"),
        ("P1082", "+163900", "quantity"),
        ("P2044", "-28 Q11573", "quantity"),
        ("P395", 'Zoë "Z" \\ 7', "string"),
        ("P1448", "Clube Atlético@pt", "monolingualtext"),
        ("P17", "Q155", "entity"),
    }


def test_labels_are_the_english_ones_for_items_and_properties(tmp_path: Path) -> None:
    entities = [
        entity("P27", "country of citizenship", kind="property", datatype="wikibase-item", modified=MODIFIED),
        entity("P1449", None, kind="property", datatype="monolingualtext", other_labels={"de": "Spitzname"},
               modified=MODIFIED),
        item("Q1", "Ada Example", [], aliases=["Ada"]),
        item("Q2", None, [], other_labels={"de": "Nur Deutsch", "en-gb": "Only British"}),
        item("Q3", None, []),
    ]
    read = Read(write_dump(entities, tmp_path / "t.json.bz2"), tmp_path / "snap")
    assert read.label("P27") == "country of citizenship"
    assert read.label("P1449") is None
    assert read.label("Q1") == "Ada Example"
    assert read.label("Q2") is None
    assert read.label("Q3") is None
    assert read.info.entities == 5


# Bad lines -----------------------------------------------------------------------------------------

@pytest.fixture
def bad_dump(tmp_path: Path) -> tuple[Path, Read]:
    good = item("Q1", "Alpha", [claim("Q1", 1, "P17", item_value("Q9"))])
    mixed = item("Q3", "Gamma", [claim("Q3", 1, "P17", item_value("Q9")),
                                 claim("Q3", 2, "P1082", quantity_value("+120"))])
    mixed["claims"]["P395"] = [{"mainsnak": {"snaktype": "value", "property": "P395", "datatype": "string",
                                             "datavalue": {"value": "x", "type": "hologram"}},
                                "type": "statement", "id": "Q3$H", "rank": "normal"}]
    last = item("Q4", "Delta", [claim("Q4", 1, "P17", item_value("Q9"))])
    lines = [
        b"[",
        json.dumps(good).encode() + b",",                                          # line 2
        b'{"type":"item","id":"Q2","labels":{"en":{"language":"en","value":"B"}},',  # line 3: cut JSON
        b'{"hello": "world"},',                                                     # line 4: JSON, no entity
        json.dumps(mixed).encode() + b",",                                         # line 5: unknown type
        b'{"type":"item","id":"Q5","labels":"\xff\xfe"},',                          # line 6: not UTF-8
        json.dumps(last).encode(),                                                 # line 7
        b"]",
    ]
    dump = tmp_path / "bad.json.gz"
    dump.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    return dump, Read(dump, tmp_path / "snap")


def test_bad_lines_are_counted_and_kept_aside_naming_file_and_line(bad_dump: tuple[Path, Read]) -> None:
    dump, read = bad_dump
    assert read.info.bad == {"malformed_json": 2, "not_an_entity": 1, "unknown_datavalue_type": 1}
    assert read.bad.height == 4
    by_reason = {}
    for row in read.bad.iter_rows(named=True):
        assert "\n" not in row["detail"]
        assert str(dump) in row["detail"], row
        by_reason.setdefault(row["reason"], []).append(row["detail"])
    assert sorted("line 3" in d or "line 6" in d for d in by_reason["malformed_json"]) == [True, True]
    assert "line 4" in by_reason["not_an_entity"][0]
    assert "line 5" in by_reason["unknown_datavalue_type"][0]
    assert set(read.bad["source"]) == {"wikidata"}
    assert read.info.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()


def test_an_unknown_datavalue_sets_aside_only_that_statement(bad_dump: tuple[Path, Read]) -> None:
    _, read = bad_dump
    assert sorted(read.entities["id"]) == ["Q1", "Q3", "Q4"]
    assert read.objects("Q3", "P17") == {"Q9"}
    assert read.objects("Q3", "P1082") == {"+120"}
    assert read.objects("Q3", "P395") == set()
    assert read.objects("Q4", "P17") == {"Q9"}


@pytest.mark.parametrize("fraction", [0.2, 0.55, 0.9])
def test_a_truncated_gz_keeps_every_entity_before_the_cut(tmp_path: Path, fraction: float) -> None:
    whole = write_dump(world(42)[0].t1, tmp_path / "whole.json.gz").read_bytes()
    cut = whole[: int(len(whole) * fraction)]
    dump = tmp_path / "cut.json.gz"
    dump.write_bytes(cut)
    check_dump(dump)  # the start is a dump: the damage shows only when reading, as bad input
    readable = zlib.decompressobj(wbits=31).decompress(cut)
    complete = [json.loads(line.rstrip(b",")) for line in readable.split(b"\n")[1:-1]]

    read = Read(dump, tmp_path / "snap")
    assert len(complete) > 10
    assert read.entities["id"].to_list() == [e["id"] for e in complete]
    assert read.info.bad == {"truncated_file": 1}
    (detail,) = read.bad["detail"]
    assert str(dump) in detail and "line" in detail and "\n" not in detail
    assert read.info.sha256 == hashlib.sha256(cut).hexdigest()


def test_a_truncated_bz2_is_one_truncated_file_reject(tmp_path: Path) -> None:
    whole = write_dump(world(42)[0].t1, tmp_path / "whole.json.bz2").read_bytes()
    dump = tmp_path / "cut.json.bz2"
    dump.write_bytes(whole[: len(whole) // 2])
    read = Read(dump, tmp_path / "snap")
    assert read.info.bad == {"truncated_file": 1}
    assert str(dump) in read.bad["detail"][0]
    assert read.info.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()


# Inputs that are not dumps stop the run before any work ----------------------------------------------

NOT_DUMPS: dict[str, bytes | None] = {
    "export.csv": b"id,label\nQ1,Douglas Adams\n",
    "page.html": b"<!DOCTYPE html>\n<html><head><title>Wikidata</title></head><body>Not found</body></html>\n",
    "notes.json.gz": gzip.compress(b"just some text\nthat was gzipped\n"),
    "page.json.bz2": bz2.compress(b"<html><body>502 Bad Gateway</body></html>\n"),
    "entities.jsonl": b'{"type":"item","id":"Q1","claims":{}}\n',
    "empty.json": b"",
    "broken.json.gz": b"\x1f\x8b" + b"not really gzip" * 4,
    "missing.json.gz": None,
    "a-folder.json": None,
}


def _not_a_dump(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    body = NOT_DUMPS[name]
    if name == "a-folder.json":
        path.mkdir()
    elif body is not None:
        path.write_bytes(body)
    return path


@pytest.fixture(scope="module")
def good_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dump(world(42)[0].t0, tmp_path_factory.mktemp("good") / "t0.json.gz")


@pytest.mark.parametrize("name", sorted(NOT_DUMPS))
def test_check_inputs_refuses_a_non_dump_naming_the_file(tmp_path: Path, name: str, good_dump: Path) -> None:
    bad = _not_a_dump(tmp_path, name)
    for before, after in ((bad, good_dump), (good_dump, bad)):
        with pytest.raises(ConfigError) as err:
            check_inputs(before, after, None)
        assert str(bad) in str(err.value)
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["export.csv", "notes.json.gz", "missing.json.gz"])
@pytest.mark.parametrize("which", ["before", "after"])
def test_run_stops_before_writing_anything(tmp_path: Path, good_dump: Path, name: str, which: str) -> None:
    bad = _not_a_dump(tmp_path, name)
    out = tmp_path / "out"
    before, after = (bad, good_dump) if which == "before" else (good_dump, bad)
    with pytest.raises(ConfigError, match=name):
        run(before, after, out)
    assert not out.exists()


@pytest.mark.slow
def test_reading_a_dump_closes_the_file(tmp_path: Path, good_dump: Path) -> None:
    gc.collect()  # what earlier tests in this worker left unclosed is theirs, not this reader's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        check_dump(good_dump)
        Read(good_dump, tmp_path / "snap")
        gc.collect()
    leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaked == []


def test_a_plain_dump_cut_before_its_closing_bracket_is_reported(tmp_path: Path) -> None:
    """A plain file has no checksum to fail: the missing ']' is the only sign that T0 is not whole."""
    whole = [json.dumps({"type": "item", "id": f"Q{n}", "labels": {}, "claims": {}}) for n in (1, 2, 3)]
    cut = tmp_path / "cut.json"
    cut.write_text("[\n" + ",\n".join(whole[:2]) + ",\n")
    read = Read(cut, tmp_path / "snap")
    assert read.info.entities == 2
    assert read.info.bad == {"truncated_file": 1}
    assert "without the closing ']'" in read.bad["detail"][0]
