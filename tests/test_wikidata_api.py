"""The Wikidata incremental mode (a window of the Action API) against the dump mode on the same world.

Wikidata's API is the test double tests/wdapi.py (built from the same dump pair); query.wikidata.org is a local
Oxigraph loaded with the T1 dump's RDF (timelyqa/oxigraph.py), the stand-in the plan names.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.wdapi import WikidataDouble, is_entitydata, is_wbgetentities, rebase
from tests.worldgen import write_dump
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.wikidata import incremental
from timelyqa.wikidata.api import WikidataApiSettings
from timelyqa.wikidata.pipeline import Settings, run

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"
SINCE = datetime(2026, 11, 9, tzinfo=UTC)
AGENT = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"
SAME = ["id", "question", "answer", "level", "sparql"]


def read_dump(path: Path) -> list[dict[str, Any]]:
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    return [json.loads(line.rstrip(",")) for line in lines[1:-1]]


def settings(endpoint: str, **kw: Any) -> WikidataApiSettings:
    return WikidataApiSettings(endpoint=endpoint, user_agent=AGENT, backoff=0.01, **kw)


@dataclass
class World:
    t0: list[dict[str, Any]]
    t1: list[dict[str, Any]]
    since: datetime
    until: datetime
    dump_out: Path
    sparql: str

    @property
    def now(self) -> datetime:
        return self.until + timedelta(days=1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The fixture pair through the dump mode, and its T1 served by a local Oxigraph as the SPARQL endpoint."""
    folder = tmp_path_factory.mktemp("dump-mode")
    # The fixture pair is six months apart; moved to one week, since the API lists 30 days of changes.
    t0, t1, until = rebase(read_dump(FIXTURES / "t0.json.gz"), read_dump(FIXTURES / "t1.json.gz"), since=SINCE)
    before, after = write_dump(t0, folder / "t0.json.gz"), write_dump(t1, folder / "t1.json.gz")
    out = folder / "out"
    run(before, after, out)
    with LocalOxigraph(out / "work" / "t1" / "rdf.nt", workdir=tmp_path_factory.mktemp("wdqs")) as wdqs:
        yield World(t0, t1, SINCE, until, out, wdqs.query_url)


def questions(out: Path) -> pl.DataFrame:
    return pl.read_parquet(out / "questions.parquet").select(SAME).sort("id")


@pytest.mark.slow
def test_a_window_of_the_api_gives_the_questions_of_the_dump_pair(world: World, tmp_path: Path) -> None:
    # Every third untouched entity is edited after T1: the run must read it as it was at T1, not now.
    touched = {e["id"] for e in world.t1 if e not in world.t0}
    later = {e["id"]: {**e, "labels": {"en": {"language": "en", "value": f"Renamed {e['id']}"}}, "claims": {}}
             for e in world.t1[::3] if e["id"] not in touched}
    with WikidataDouble(world.t0, world.t1, since=world.since, until=world.until, later=later) as wd:
        manifest = incremental.run(settings(wd.endpoint), world.since, world.until, tmp_path, endpoint=world.sparql,
                                   now=world.now)
        requests = list(wd.requests)
    expected, got = questions(world.dump_out), questions(tmp_path)
    assert expected.height > 10
    assert got.to_dicts() == expected.to_dicts()
    rows = pl.read_parquet(tmp_path / "questions.parquet")
    assert set(rows["as_of"]) == {world.until}
    assert all(e[0]["url"].startswith("https://www.wikidata.org/wiki/Q") and e[0]["revision"].isdigit()
               for e in rows["evidence"])
    assert manifest.as_of == world.until
    # The touched entities were read at their revisions; the others through wbgetentities, 50 at most a call.
    assert sum(map(is_entitydata, (r.params for r in requests))) >= len(touched)
    assert all(len(r.params["ids"].split("|")) <= 50 for r in requests if is_wbgetentities(r.params))
    assert any(is_wbgetentities(r.params) for r in requests)

