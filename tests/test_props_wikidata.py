"""Properties of the Wikidata reader (issue 13): any bytes end in entities or bad lines, any entity dict in statements
or rejects, never an exception; and whatever passes is written as N-Triples that Oxigraph parses into exactly the
triples meant, so no input adds one."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.ntparse import Term, oxigraph_triples
from timelyqa.wikidata.dump import BadLine, DumpReader
from timelyqa.wikidata.ids import is_entity_id, is_language, is_property_id
from timelyqa.wikidata.lines import Lines
from timelyqa.wikidata.rdf import P, PS, WDS, WDT, entity_ntriples
from timelyqa.wikidata.statements import EntityStatements, english, english_aliases, read_statements, read_truthy
from timelyqa.wikidata.values import ENTITY_IRI, Kind, rdf_lexical, rdf_term

# 200 cases a property: in make test (and many more in make fuzz), not in make check's minute.
pytestmark = pytest.mark.slow

RANKS = ("preferred", "normal", "deprecated")
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # what JSON can carry: no lone surrogates
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | TEXT, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=8)


def _read(data: bytes, name: str) -> list[dict[str, Any] | BadLine]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        reader = DumpReader(path)
        items = list(reader)
        assert reader.lines >= 0
        return items


# Lines: the splitter agrees with a plain split, whatever the pieces and the cap ------------------------------------

def _reference(data: bytes, cap: int) -> tuple[list[tuple[int, bytes | None]], int]:
    segments = data.split(b"\n")
    if segments[-1] == b"":
        segments.pop()
    kept = [(n, None if len(seg) > cap else seg.lstrip()) for n, seg in enumerate(segments, 1) if seg.strip()]
    return kept, len(segments)


@given(st.binary(max_size=600) | st.lists(st.sampled_from([b"\n", b" ", b"\r\n", b"ab", b"{}", b"\t"]),
                                          max_size=200).map(b"".join),
       st.lists(st.integers(1, 64), max_size=20), st.integers(1, 40))
def test_lines_agree_with_a_plain_split_however_the_stream_is_cut(data: bytes, cuts: list[int], cap: int) -> None:
    pieces, at = [], 0
    for size in cuts:
        pieces.append(data[at:at + size])
        at += size
    pieces.append(data[at:])
    lines = Lines([p for p in pieces if p], cap)
    assert (list(lines), lines.count) == _reference(data, cap)


# The dump reader over any bytes ---------------------------------------------------------------------------------

def _ends_well(items: list[dict[str, Any] | BadLine]) -> None:
    ids = [i["id"] for i in items if isinstance(i, dict)]
    assert all(is_entity_id(i) for i in ids) and len(ids) == len(set(ids))
    for i in items:
        if isinstance(i, BadLine):
            assert i.reason and "\n" not in i.detail and i.line >= 1


@given(st.binary(max_size=2000), st.sampled_from(["plain", "gzip", "cut gzip"]))
def test_dump_reader_over_any_bytes_gives_entities_or_bad_lines(data: bytes, how: str) -> None:
    if how != "plain":
        data = gzip.compress(data, mtime=0)
        data = data[: len(data) // 2] if how == "cut gzip" else data
    _ends_well(_read(data, "t.json.gz"))


# Entities: plausible ones with hostile parts, and arbitrary JSON -----------------------------------------------

IDS = st.from_regex(r"\A[QPL][1-9][0-9]{0,3}\Z") | TEXT
PROPS = st.from_regex(r"\AP[1-9][0-9]{0,2}\Z") | TEXT
LANGS = (st.sampled_from(["en", "de-formal", "sr-Latn-RS", "zh-min-nan", "mis-x-q1", "be-tarask", "en_GB", "",
                          "en .\n<a:b> <a:c> <a:d>", "i-klingon", "es-419", "x-whatever"])
         | st.from_regex(r"\A[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8}){0,3}\Z") | TEXT)
TIMES = (st.from_regex(r"\A[+-][0-9]{1,5}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\Z") | TEXT)
AMOUNTS = (st.from_regex(r"\A[+-]?[0-9]{1,6}(\.[0-9]{0,4})?\Z") | st.sampled_from(["NaN", "+inf", "1e5", " 1", ""])
           | st.integers() | st.floats(allow_nan=False, allow_infinity=False))
COORDS = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-400, 400) | TEXT
DATAVALUES = st.one_of(
    st.builds(lambda i, n, t: {"type": "wikibase-entityid", "value": {"entity-type": t, "numeric-id": n, "id": i}},
              IDS, st.integers(-2, 10**6), st.sampled_from(["item", "property", "lexeme", "form"])),
    st.builds(lambda t: {"type": "string", "value": t}, TEXT),
    st.builds(lambda t, p, c: {"type": "time", "value": {"time": t, "precision": p, "calendarmodel": c}},
              TIMES, st.integers(-1, 16) | TEXT, st.sampled_from([f"{ENTITY_IRI}Q1985727", f"{ENTITY_IRI}Q1985786"])),
    st.builds(lambda a, u: {"type": "quantity", "value": {"amount": a, "unit": u}},
              AMOUNTS, st.just("1") | IDS.map(lambda i: ENTITY_IRI + i) | TEXT),
    st.builds(lambda t, lang: {"type": "monolingualtext", "value": {"text": t, "language": lang}}, TEXT, LANGS),
    st.builds(lambda a, b: {"type": "globecoordinate", "value": {"latitude": a, "longitude": b}}, COORDS, COORDS),
    st.dictionaries(TEXT, JSON, max_size=2),
)
CLAIMS = st.builds(lambda snak, dv, rank, sid: {"mainsnak": {"snaktype": snak, "datavalue": dv}, "rank": rank,
                                               "id": sid},
                   st.sampled_from(["value", "value", "somevalue", "novalue"]), DATAVALUES,
                   st.sampled_from([*RANKS, "bogus"]), TEXT) | JSON
TERMS = st.dictionaries(st.sampled_from(["en", "de"]), st.builds(lambda t: {"language": "en", "value": t}, TEXT)
                        | JSON, max_size=2) | JSON
ENTITIES = st.builds(
    lambda eid, claims, labels, aliases, modified, datatype: {
        "id": eid, "claims": claims, "labels": labels, "aliases": aliases, "modified": modified, "datatype": datatype},
    IDS, st.dictionaries(PROPS, st.lists(CLAIMS, max_size=3), max_size=3) | JSON, TERMS,
    st.dictionaries(st.just("en"), st.lists(st.builds(lambda t: {"value": t}, TEXT), max_size=2)) | JSON,
    st.sampled_from(["2026-03-01T00:00:00Z", "2026-13-01T00:00:00Z", "soon", ""]) | JSON,
    st.sampled_from(["wikibase-item", "string"]) | JSON) | st.dictionaries(TEXT, JSON)


@given(st.lists(ENTITIES, max_size=6))
def test_dump_reader_over_any_entities_gives_entities_or_bad_lines(entities: list[Any]) -> None:
    body = b"[\n" + b",\n".join(json.dumps(e, ensure_ascii=False).encode() for e in entities) + b"\n]\n"
    _ends_well(_read(body, "t.json"))


@given(ENTITIES | JSON.filter(lambda v: isinstance(v, dict)))
def test_the_statement_normaliser_gives_statements_or_rejects_for_any_entity(entity: dict[str, Any]) -> None:
    es = read_statements(entity)
    for st_ in es.statements:
        assert is_entity_id(st_.subject) and is_property_id(st_.prop) and st_.rank in RANKS
        rdf_term(st_.kind, st_.form)  # every form kept can be written as a term
    s: list[str] = []
    p: list[str] = []
    o: list[str] = []
    k: list[str] = []
    bad: list[Any] = []
    counts = read_truthy(entity, s, p, o, k, bad)
    assert list(zip(s, p, o, k, strict=True)) == [(x.subject, x.prop, x.form, x.kind.value) for x in es.truthy]
    assert counts == (len(es.statements), len(es.truthy), es.other_snaks) and bad == es.bad
    english(entity), english_aliases(entity)


# What passes is written as exactly the triples meant ----------------------------------------------------------

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT_LABEL = "http://www.w3.org/2004/02/skos/core#altLabel"
RANK = "http://wikiba.se/ontology#rank"


def _object(kind: Kind, form: str) -> Term:
    lexical, datatype, lang = rdf_lexical(kind, form)
    if kind is Kind.ENTITY:
        return ("iri", lexical)
    return ("literal", lexical, datatype or "", (lang or "").lower())


def _meant(eid: str, label: str | None, aliases: list[str], es: EntityStatements) -> set[tuple[Term, Term, Term]]:
    s = ("iri", ENTITY_IRI + eid)
    out = {(s, ("iri", RDFS_LABEL), ("literal", label, "", "en"))} if label is not None else set()
    out |= {(s, ("iri", ALT_LABEL), ("literal", a, "", "en")) for a in aliases}
    out |= {(s, ("iri", WDT + x.prop), _object(x.kind, x.form)) for x in es.truthy}
    for x in es.statements:
        node = ("iri", WDS + quote(x.sid.replace("$", "-"), safe="-"))
        out |= {(s, ("iri", P + x.prop), node), (node, ("iri", PS + x.prop), _object(x.kind, x.form)),
                (node, ("iri", RANK), ("iri", f"http://wikiba.se/ontology#{x.rank.capitalize()}Rank"))}
    return out


@given(st.lists(ENTITIES, max_size=4))
def test_what_passes_the_reader_is_written_as_exactly_the_triples_meant(entities: list[Any]) -> None:
    body = b"[\n" + b",\n".join(json.dumps(e, ensure_ascii=False).encode() for e in entities) + b"\n]\n"
    text, meant = [], set()
    for e in _read(body, "t.json"):
        if isinstance(e, BadLine):
            continue
        es = read_statements(e)
        label, aliases = english(e), english_aliases(e)
        text.append(entity_ntriples(e["id"], label, aliases, es))
        meant |= _meant(e["id"], label, aliases, es)
    assert set(oxigraph_triples("".join(text))) == meant


@given(LANGS)
def test_every_language_tag_let_through_is_one_oxigraph_takes(lang: str) -> None:
    if is_language(lang):
        (triple,) = oxigraph_triples(f'<http://a/s> <http://a/p> "x"@{lang} .\n')
        assert triple[2] == ("literal", "x", "", lang.lower())
