"""The Wikidata incremental mode (a window of the Action API) against the dump mode on the same world.

Wikidata's API is the test double tests/wdapi.py (built from the same dump pair); query.wikidata.org is a local
Oxigraph loaded with the T1 dump's RDF (timelyqa/oxigraph.py), the stand-in the plan names.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.mwapi import is_listing, maxlag, throttled
from tests.wdapi import WikidataDouble, is_entitydata, is_wbgetentities, rebase
from tests.worldgen import make_world, write_dump
from timelyqa.errors import ConfigError
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.quality import GATE_PASSED, GATE_STAGE
from timelyqa.wikidata import incremental
from timelyqa.wikidata.api import WikidataAPI, WikidataApiSettings
from timelyqa.wikidata.pipeline import run
from timelyqa.mediawiki.client import MediaWikiAPI

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"
SINCE = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=9)
"""Recent, so that the command (which reads the wall clock) accepts the window too."""
AGENT = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"
SAME = ["id", "question", "answer", "answer_aliases", "level", "event_date", "sparql"]


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

    name: str

    @property
    def now(self) -> datetime:
        return self.until + timedelta(days=1)


@pytest.fixture(scope="module", params=["fixture", 3319])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A pair (the fixture, or a generated world) through the dump mode, and its T1 served by a local Oxigraph as
    the SPARQL endpoint."""
    folder = tmp_path_factory.mktemp("dump-mode")
    if request.param == "fixture":
        pair = read_dump(FIXTURES / "t0.json.gz"), read_dump(FIXTURES / "t1.json.gz")
    else:
        generated = make_world(request.param)
        pair = generated.t0, generated.t1
    # The pairs are months apart; moved to one week, since the API lists 30 days of changes.
    t0, t1, until = rebase(*pair, since=SINCE)
    before, after = write_dump(t0, folder / "t0.json.gz"), write_dump(t1, folder / "t1.json.gz")
    out = folder / "out"
    run(before, after, out)
    with LocalOxigraph(out / "work" / "t1" / "rdf.nt", workdir=tmp_path_factory.mktemp("wdqs")) as wdqs:
        yield World(t0, t1, SINCE, until, out, wdqs.query_url, str(request.param))


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
    # The quality gate ran before verification as in the dump mode, and dropped the same questions.
    gated = [pl.read_parquet(out / "rejected.parquet").filter(pl.col("stage") == GATE_STAGE).select("reason", "detail")
             .sort("detail").to_dicts() for out in (world.dump_out, tmp_path)]
    assert gated[0] == gated[1]
    assert manifest.counts[GATE_PASSED] == json.loads((world.dump_out / "manifest.json").read_text())["counts"][
        GATE_PASSED]
    rows = pl.read_parquet(tmp_path / "questions.parquet")
    assert set(rows["as_of"]) == {world.until}
    assert all(e[0]["url"].startswith("https://www.wikidata.org/wiki/Q") and e[0]["revision"].isdigit()
               for e in rows["evidence"])
    assert manifest.as_of == world.until
    # The touched entities were read at their revisions; the others through wbgetentities, 50 at most a call.
    assert sum(map(is_entitydata, (r.params for r in requests))) >= len(touched)
    assert all(len(r.params["ids"].split("|")) <= 50 for r in requests if is_wbgetentities(r.params))
    assert any(is_wbgetentities(r.params) for r in requests)
    # With --local-store, T1 is checked on the touched entities and what synthesis fetched: the same questions here.
    with WikidataDouble(world.t0, world.t1, since=world.since, until=world.until) as wd:
        incremental.run(settings(wd.endpoint), world.since, world.until, tmp_path / "local", endpoint=world.sparql,
                        local_store=True, now=world.now)
    assert questions(tmp_path / "local").to_dicts() == expected.to_dicts()
    verification = pl.read_parquet(tmp_path / "local" / "questions.parquet")["verification"]
    assert {v["endpoint"] for v in verification} == {"local oxigraph (T1)"}



# Politeness: the API calls one at a time, on the fixture pair served by the double (no Oxigraph) --------------

class FakeTime:
    """A clock that moves only when the client sleeps: waits are recorded, never spent."""

    def __init__(self) -> None:
        self.now, self.waits = 1000.0, list[float]()

    def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def pair() -> tuple[list[dict[str, Any]], list[dict[str, Any]], datetime]:
    t0, t1, until = rebase(read_dump(FIXTURES / "t0.json.gz"), read_dump(FIXTURES / "t1.json.gz"), since=SINCE)
    return t0, t1, until


def api(wd: WikidataDouble, fake: FakeTime) -> WikidataAPI:
    return WikidataAPI(MediaWikiAPI(settings(wd.endpoint), sleep=fake.sleep, clock=fake.clock))


def test_the_window_lists_every_edited_entity_with_its_revisions_at_both_ends(pair: Any) -> None:
    t0, t1, until = pair
    before = {e["id"]: e for e in t0}
    changed = {e["id"] for e in t1 if before.get(e["id"]) != e}
    fake = FakeTime()
    # rc_limit 7: about ten pages of changes; a maxlag answer on the third is waited out and asked again.
    with WikidataDouble(t0, t1, since=SINCE, until=until, rc_limit=7) as wd:
        wd.fail(maxlag(lambda p: is_listing(p) and "rccontinue" in p, lag=7))
        edited = api(wd, fake).edited(SINCE, until)
        listings = [r for r in wd.requests if is_listing(r.params)]
        t0_rev = {e: p.revisions[0].id for e, p in wd.entity_pages.items() if e in before}
        t1_rev = {e: p.revisions[-1].id for e, p in wd.entity_pages.items()}
    assert {e.entity for e in edited} == changed
    assert {e.entity: e.before for e in edited} == {e: t0_rev.get(e, 0) for e in changed}
    assert {e.entity: e.after for e in edited} == {e: t1_rev[e] for e in changed}
    assert any(e.edits == 2 for e in edited) and any(e.edits == 1 for e in edited)
    assert sum("rccontinue" in r.params for r in listings) >= 8
    assert fake.waits == [7.0]  # Retry-After of the maxlag answer (MediaWiki's 5 s floor is below it)


def test_the_revisions_read_are_counted_for_the_progress_bar_up_to_their_total(pair: Any, tmp_path: Path) -> None:
    t0, t1, until = pair
    heard: list[tuple[str, int, int]] = []
    with WikidataDouble(t0, t1, since=SINCE, until=until) as wd:
        incremental.fetch_states(settings(wd.endpoint), SINCE, until, tmp_path, lambda *step: heard.append(step))
        read = sum(map(is_entitydata, (r.params for r in wd.requests)))
    # One step per revision read, each counted once, in order, out of the total known before the first.
    assert [done for _, done, _ in heard] == list(range(1, read + 1))
    assert {(stage, total) for stage, _, total in heard} == {("revisions read", read)} and read > 10


def test_every_request_is_identified_lag_aware_and_at_most_three_at_once(pair: Any) -> None:
    t0, t1, until = pair
    ids = sorted({e["id"] for e in t1})
    fake = FakeTime()
    with WikidataDouble(t0, t1, since=SINCE, until=until, latency=0.02) as wd:
        wd.fail(throttled(is_entitydata, retry_after=3))
        client = api(wd, fake)
        now = client.entities_now(ids)
        at = client.entities_at((e, wd.entity_pages[e].revisions[-1].id) for e in ids[:12])
        requests = list(wd.requests)
        most = wd.max_in_flight
    assert {e for e, v in now.items() if v is not None} == set(ids)
    assert {e: v["claims"] for e, v in at.items()} == {e["id"]: e["claims"] for e in t1 if e["id"] in ids[:12]}
    assert len(requests) == -(-len(ids) // 50) + 12 + 1
    assert all(r.headers["User-Agent"] == AGENT for r in requests)
    assert all(r.params["maxlag"] == "5" for r in requests)
    assert all(len(r.params["ids"].split("|")) <= 50 for r in requests if is_wbgetentities(r.params))
    assert 2 <= most <= 3
    assert fake.waits == [3.0]  # the 429's Retry-After, held by every thread


def test_an_entity_edited_since_t1_is_read_as_it_was_at_t1(pair: Any) -> None:
    t0, t1, until = pair
    old = t1[5]
    renamed = {**old, "labels": {"en": {"language": "en", "value": "Renamed"}}}
    with WikidataDouble(t0, t1, since=SINCE, until=until, later={old["id"]: renamed}) as wd:
        client = api(wd, FakeTime())
        then = client.entities_as_of([old["id"], t1[6]["id"], "Q999999999"], until)
        now = client.entities_now([old["id"]])
    assert now[old["id"]]["labels"]["en"]["value"] == "Renamed"
    assert then[old["id"]]["labels"] == old["labels"] and then[old["id"]]["claims"] == old["claims"]
    assert then[t1[6]["id"]]["claims"] == t1[6]["claims"]
    assert then["Q999999999"] is None


# Bad settings: one line, before any request ------------------------------------------------------------------

NOW = datetime(2026, 11, 17, tzinfo=UTC)


@pytest.mark.parametrize(("kw", "says"), [
    ({"since": "2026-11-16", "until": "2026-11-09"}, "--since 2026-11-16T00:00:00+00:00 is not before --until"),
    ({"since": "2026-11-09", "until": "2026-11-09"}, "is not before --until"),
    ({"since": "2026-10-01", "until": "2026-10-08"}, "more than 30 days back: Wikidata keeps recent changes for 30"),
    ({"until": "2026-11-20"}, "--until 2026-11-20T00:00:00+00:00 is in the future"),
    ({"since": "last monday"}, "--since 'last monday' is not a date"),
    ({"api": "ftp://www.wikidata.org/w/api.php"}, "Wikidata API setting endpoint: 'ftp://www.wikidata.org/w/api.php' "
     "is not an Action API URL"),
    ({"user_agent": "timelyqa/0.1"}, "Wikidata API setting user_agent: 'timelyqa/0.1' has no contact details"),
    ({"user_agent": None}, "the Wikidata API needs TIMELYQA_WIKIDATA_API_USER_AGENT"),
    ({"endpoint": "query.wikidata.org/sparql"}, "--endpoint 'query.wikidata.org/sparql' is not an http(s) SPARQL"),
])
def test_a_bad_setting_is_one_line_naming_it(kw: dict[str, Any], says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIMELYQA_WIKIDATA_API_USER_AGENT", raising=False)
    given = {"api": "https://www.wikidata.org/w/api.php", "since": "2026-11-09", "until": "2026-11-16",
             "user_agent": AGENT, **kw}
    with pytest.raises(ConfigError) as caught:
        incremental.prepare(given.pop("api"), given.pop("since"), given.pop("until"), now=NOW, **given)
    assert says in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("given", "says"), [
    ({}, "give either two dumps"),
    ({"before": "a", "after": "b", "api": "u", "since": "s", "until": "t"}, "not both"),
    ({"before": "a", "api": "u", "since": "s", "until": "t"}, "not both nor part of one"),
    ({"api": "u", "since": "s"}, "give either two dumps"),
])
def test_either_two_dumps_or_an_api_window(given: dict[str, str], says: str) -> None:
    values = {"before": None, "after": None, "api": None, "since": None, "until": None, **given}
    with pytest.raises(ConfigError, match=says):
        incremental.mode(**values)
    assert incremental.mode("a", "b", None, None, None) == "dumps"
    assert incremental.mode(None, None, "u", "s", "t") == "api"


# The command ---------------------------------------------------------------------------------------------------

def timelyqa(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("timelyqa")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", **(env or {})}
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.slow
@pytest.mark.parametrize("world", ["fixture"], indirect=True)
def test_the_command_reads_a_window_of_the_api(world: World, tmp_path: Path) -> None:
    window = ["--since", world.since.isoformat(), "--until", world.until.isoformat()]
    with WikidataDouble(world.t0, world.t1, since=world.since, until=world.until) as wd:
        env = {"TIMELYQA_WIKIDATA_API_USER_AGENT": AGENT}
        proc = timelyqa("wikidata", "--api", wd.endpoint, *window, "--endpoint", world.sparql, "--out",
                        tmp_path / "out", env=env)
        assert proc.returncode == 0, proc.stderr
        assert questions(tmp_path / "out").to_dicts() == questions(world.dump_out).to_dicts()
        served = len(wd.requests)
        # Wrong settings: exit 2, one line, nothing asked of the API, nothing written.
        for args, says in [
            (["--api", wd.endpoint, "--since", "2020-01-01", "--until", "2020-01-08"], "more than 30 days back"),
            (["--api", wd.endpoint, *window, "--before", FIXTURES / "t0.json.gz"], "not both nor part of one"),
            (["--api", wd.endpoint, *window, "--user-agent", "me"], "has no contact details"),
        ]:
            bad = timelyqa("wikidata", *args, "--out", tmp_path / "bad", env=env)
            lines = [line for line in bad.stderr.splitlines() if line.strip()]
            assert bad.returncode == 2 and len(lines) == 1 and says in lines[0], bad.stderr
        assert len(wd.requests) == served
        assert not (tmp_path / "bad").exists()


# The flow ------------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("world", ["fixture"], indirect=True)
def test_the_flow_reads_a_window_of_the_api(world: World, tmp_path: Path, prefect_api: None,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.wikidata import wikidata_flow

    monkeypatch.setenv("TIMELYQA_WIKIDATA_API_USER_AGENT", AGENT)
    with WikidataDouble(world.t0, world.t1, since=world.since, until=world.until) as wd:
        manifest = wikidata_flow(api=wd.endpoint, since=world.since.isoformat(), until=world.until.isoformat(),
                                 endpoint=world.sparql, out=str(tmp_path / "out"))
        both = wikidata_flow(before=str(FIXTURES / "t0.json.gz"), after=str(FIXTURES / "t1.json.gz"),
                             api=wd.endpoint, since=world.since.isoformat(), until=world.until.isoformat(),
                             out=str(tmp_path / "both"), return_state=True)
    assert manifest["inputs"]["api"]["url"] == wd.endpoint
    assert questions(tmp_path / "out").to_dicts() == questions(world.dump_out).to_dicts()
    assert both.is_failed() and "not both" in (both.message or "")
    assert not (tmp_path / "both").exists()
