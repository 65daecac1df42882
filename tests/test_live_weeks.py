"""Two weeks of the scheduled path in a row: the deployed wikidata-weekly and release-weekly flows, run by a worker of
a real Prefect server, on a Wikidata that keeps being edited.

Wikidata's Action API is the test double tests/wdapi.py (Wikidata cannot run here); query.wikidata.org is a local
Oxigraph holding the world as it is at the end of each week. Week 2 sees one new edit: a player's position moves
from defender to forward, so the question released in week 1 about it no longer holds.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.prefect_server import REPO, Background, free_port, prefect_env, start_server, start_worker
from tests.test_deployment import ok, prefect, run_deployment
from tests.wdapi import WikidataDouble, rebase
from tests.worldgen import write_dump
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.released import released_rows
from timelyqa.stages import StageWriter
from timelyqa.wikidata import snapshot
from timelyqa.wikidata.source import SOURCE

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"
AGENT = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"
TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
WEEK_1 = (TODAY - timedelta(days=16), TODAY - timedelta(days=9))
WEEK_2 = (WEEK_1[1], TODAY - timedelta(days=2))
"""Recent weeks: the API lists 30 days of changes, and the flow refuses a window older than that."""
YUKI, DEFENDER, FORWARD = "Q1070321", "Q336286", "Q280658"


def read_dump(path: Path) -> list[dict[str, Any]]:
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    return [json.loads(line.rstrip(",")) for line in lines[1:-1]]


def moved_to_forward(entity: dict[str, Any]) -> dict[str, Any]:
    """Yuki Dubois as edited in week 2: every position statement that said defender now says forward."""
    edited = copy.deepcopy(entity)
    for claim in edited["claims"]["P413"]:
        value = claim["mainsnak"]["datavalue"]["value"]
        if value["id"] == DEFENDER:
            value.update({"id": FORWARD, "numeric-id": int(FORWARD[1:])})
    assert edited != entity
    return edited


def rdf_of(entities: list[dict[str, Any]], folder: Path) -> Path:
    """The world's N-Triples as the dump reader writes them, for the Oxigraph standing in for query.wikidata.org."""
    folder.mkdir(parents=True, exist_ok=True)
    dump = write_dump(entities, folder / "world.json.gz")
    ledger = StageWriter(SOURCE, folder, work=folder / "work")
    snapshot.read_snapshot(dump, folder / "snapshot", rdf=True, reject=ledger.reject)
    return folder / "snapshot" / "rdf.nt"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[dict[str, str], Background]]:
    """Server, pool, `prefect deploy --all` and a worker from the repository root, the worker told who it is."""
    home = tmp_path / "prefect-home"
    home.mkdir()
    env = {**prefect_env(home, free_port()), "TIMELYQA_WIKIDATA_API_USER_AGENT": AGENT}
    server = start_server(home, env, timeout=90)
    worker: Background | None = None
    try:
        ok(prefect(["work-pool", "create", "local", "--type", "process"], env=env, cwd=home), "work-pool create")
        ok(prefect(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO, timeout=120), "deploy --all")
        worker = start_worker("local", env, cwd=REPO, log=home / "worker.log")
        yield env, worker
    finally:
        if worker is not None:
            worker.stop()
        server.stop()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_weeks_of_deployments_keep_what_holds_retire_the_changed_answer_and_add_the_new_fact(
        stack: tuple[dict[str, str], Background], tmp_path: Path) -> None:
    env, worker = stack
    t0, t1, _ = rebase(read_dump(FIXTURES / "t0.json.gz"), read_dump(FIXTURES / "t1.json.gz"), since=WEEK_1[0])
    yuki = next(e for e in t1 if e["id"] == YUKI)
    t2 = [moved_to_forward(e) if e["id"] == YUKI else e for e in t1]
    release = tmp_path / "release"

    def week(n: int, window: tuple[datetime, datetime], world: list[dict[str, Any]], wd: WikidataDouble) -> Path:
        out = tmp_path / f"wikidata-{n}"
        with LocalOxigraph(rdf_of(world, tmp_path / f"world-{n}"), workdir=tmp_path / f"wdqs-{n}") as wdqs:
            run_deployment("wikidata/wikidata-weekly", {
                "api": wd.endpoint, "since": window[0].isoformat(), "until": window[1].isoformat(),
                "endpoint": wdqs.query_url, "out": str(out), "previous": str(release)}, env, worker)
        run_deployment("release/release-weekly", {"sources": [str(out)], "out": str(release)}, env, worker)
        return out

    # One double serves both weeks: week 2's edit lands a minute after week 1 ends.
    with WikidataDouble(t0, t1, since=WEEK_1[0], until=WEEK_1[1], later={YUKI: moved_to_forward(yuki)}) as wd:
        week(1, WEEK_1, t1, wd)
        first = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
        rows_1 = released_rows(release, "wikidata")
        position = rows_1.filter(pl.col("delta_triple") == pl.lit([YUKI, "P413", DEFENDER]), pl.col("level") == "L1")
        assert position["answer"].to_list() == ["defender"] and first["previous_version"] is None

        second_run = week(2, WEEK_2, t2, wd)
    second = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    rows_2 = released_rows(release, "wikidata")

    # The changed answer is retired, with its reason; nothing unrelated to the edit is.
    changes = second["changes"]
    retired = {r["id"]: r for r in changes["retired_rows"]}
    assert position["id"].item() in retired and position["id"].item() not in rows_2["id"].to_list()
    assert changes["retired_why"] == {"answer_changed": len(retired)}
    assert all(YUKI in sparql or DEFENDER in sparql
               for sparql in rows_1.filter(pl.col("id").is_in(list(retired)))["sparql"])
    # Week 1's rows that still hold are carried as they were released (only their split may move).
    kept = rows_1.filter(~pl.col("id").is_in(list(retired)))
    assert kept.height == rows_1.height - len(retired) > 0
    assert_frame_equal(rows_2.join(kept.select("id"), on="id", how="semi").drop("split").sort("id"),
                       kept.drop("split").sort("id"))
    rechecked = pl.read_parquet(second_run / "rechecked.parquet")["id"].to_list()
    assert set(rechecked) == set(kept["id"])
    # Week 2's new fact is a new row, dated by its edit, and the week's rows join.
    forward = rows_2.filter(pl.col("delta_triple") == pl.lit([YUKI, "P413", FORWARD]), pl.col("level") == "L1")
    assert forward["answer"].to_list() == ["forward"]
    assert forward["event_date"].to_list() == [(WEEK_1[1] + timedelta(minutes=1)).date()]
    added = set(rows_2["id"]) - set(rows_1["id"])
    assert forward["id"].item() in added and changes["added"] == {"wikidata": len(added)}
    # The second release follows the first, and its changelog says what happened.
    assert second["previous_version"] == first["version"] != second["version"]
    changelog = (release / "CHANGELOG.md").read_text(encoding="utf-8")
    entry = changelog.split(f"## {first['version']} ")[0]
    assert f"- {len(added)} rows added (wikidata: {len(added)})" in entry
    assert f"- {len(retired)} rows retired (wikidata: {len(retired)}); why: answer_changed {len(retired)}" in entry
    assert position["id"].item() in entry
    assert isinstance(second["created"], str) and date.fromisoformat(second["created"][:10]) == WEEK_2[1].date()
