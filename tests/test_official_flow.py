"""The official-site flows run for real on the registry fixture (tests/fixtures/official: the held-out world's pages
served on 127.0.0.1:47314, recipes written for it, three clocks): in-process against a throwaway Prefect server, the
daily flow gives the pipeline's questions and publishes its funnel and the recipes' health; the resolve flow writes
answers.parquet; a wrong setting fails before any work; and the `official-daily` deployment of prefect.yaml runs on a
worker as a user starts it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from prefect.states import State

from flows.official import official_flow, official_resolve_flow
from tests.prefect_server import Background
from tests.test_deployment import run_deployment, stack  # noqa: F401 - `stack` is a fixture
from tests.test_flows import artifacts_of, table, task_names
from spiders import run as spiders_run
from timelyqa.errors import ConfigError
from timelyqa.localsite import LocalSite
from timelyqa.official import health
from timelyqa.official.bundle import Bundle
from timelyqa.official.source import SOURCE
from timelyqa.sources import ROOT

# a real Prefect server and crawls
pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow, pytest.mark.timeout(420)]

BUNDLE = "tests/fixtures/official/bundle.yaml"
"""Relative, as a user passes it from the repository root (and as the deployment's worker resolves it)."""
STAGES = {"check_recipes", "check_health", "build_rows"}
SAME = ["id", "question", "answer", "kind", "recipe_id", "family", "level", "event_date", "as_of", "dates", "value",
        "recipe"]
"""The columns two runs on the same fixture agree on (each page's fetch time is the moment it was fetched)."""


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[State, Path]:
    out = tmp_path_factory.mktemp("official-flow") / "out"
    state = official_flow(out=out, bundle=ROOT / BUNDLE, return_state=True)
    return state, out


def rows(folder: Path) -> pl.DataFrame:
    questions = pl.read_parquet(folder / "questions.parquet")
    return questions.with_columns(pl.col("evidence").list.eval(pl.element().struct.field("sha256")).alias("pages")
                                  ).select(*SAME, "pages").sort("id")


def test_the_flow_gives_the_pipelines_questions_and_publishes_its_funnel(flow_run: tuple[State, Path],
                                                                         tmp_path: Path) -> None:
    state, out = flow_run
    assert state.is_completed(), state.message
    manifest = state.result()
    by_pipeline = SOURCE.run_on([ROOT / p for p in SOURCE.fixtures], tmp_path / "pipeline", None,
                                crawl=spiders_run.crawl)
    questions = rows(out)
    assert questions.equals(rows(tmp_path / "pipeline")), "the flow runs the pipeline's steps"
    assert manifest.counts == by_pipeline.counts and manifest.rejects == by_pipeline.rejects
    assert questions.height == manifest.counts["questions"] > 0
    assert set(questions["kind"]) == {"snapshot", "live"} and manifest.rejects["recipe_invalid"] == 1  # typo.yaml
    assert (out / "state" / "answers").is_dir() and len(list((out / "state" / "answers").iterdir())) == 3
    assert STAGES <= task_names(state, STAGES), "each step in a task of its own"

    artifacts = artifacts_of(state)
    funnel = table(artifacts["official-site-funnel"])
    assert [row["stage"] for row in funnel] == list(manifest.counts)
    assert funnel[-1] == {"stage": "questions", "count": questions.height}
    assert {r["reason"]: r["count"] for r in table(artifacts["official-site-rejects"])} == manifest.rejects
    assert str(out) in artifacts["official-site-summary"].data
    healthy = {r["recipe"]: r for r in table(artifacts["official-health"])}
    status = health.statuses(health.history(out / "state"))
    assert set(healthy) == set(status) and not any(r["broken"] for r in healthy.values())
    assert {k: r["days failing"] for k, r in healthy.items()} == {k: s.days_failing for k, s in status.items()}


def test_the_resolve_flow_writes_the_answers_the_daily_check_gave_at_that_clock(flow_run: tuple[State, Path],
                                                                               tmp_path: Path) -> None:
    _, daily = flow_run
    bundle = Bundle.load(ROOT / BUNDLE)
    clock = bundle.clocks[0]
    with LocalSite(ROOT / "tests/fixtures/official" / bundle.site, port=bundle.port, host=bundle.host):
        state = official_resolve_flow(recipes=ROOT / "tests/fixtures/official/recipes", out=tmp_path / "resolved",
                                      at=clock, variables=bundle.vars, return_state=True)
    assert state.is_completed(), state.message
    path = state.result()
    assert path == tmp_path / "resolved" / "answers.parquet"
    columns = ["id", "status", "reason", "answer", "value", "unit", "at", "timezone", "dates"]
    answers = pl.read_parquet(path)
    assert answers["at"].unique().to_list() == [datetime.fromisoformat(clock).astimezone(UTC)]
    before = health.history(daily / "state").filter(pl.col("at") == answers["at"][0])
    assert answers.select(columns).sort("id").equals(before.select(columns).sort("id"))
    assert answers["evidence"].list.eval(pl.element().struct.field("sha256")).to_list() == \
        before.sort("id")["evidence"].list.eval(pl.element().struct.field("sha256")).to_list()
    assert "typo" not in answers["id"].to_list() and (answers["status"] == "ok").any()
    shown = {r["recipe"]: r for r in table(artifacts_of(state)["official-answers"])}
    assert {k: r["answer"] for k, r in shown.items()} == {
        r["id"]: r["answer"] or "" for r in answers.iter_rows(named=True)}


@pytest.mark.parametrize(("params", "says"), [
    ({"bundle": "tests/fixtures/official/nowhere.yaml"}, "tests/fixtures/official/nowhere.yaml: "),
    ({"bundle": None}, "give recipes (a folder of recipe files) or a bundle"),
    ({"recipes": "EMPTY"}, "holds no recipe files"),
    # A bundle given over a deployment's live recipes: refused, never both checked.
    ({"recipes": "EMPTY", "bundle": BUNDLE}, "or a bundle, one of them (recipes "),
])
def test_a_wrong_setting_fails_the_flow_before_any_work(params: dict[str, str | None], says: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    state = official_flow(out=out, return_state=True,
                          **{k: str(tmp_path / "empty") if v == "EMPTY" else v for k, v in params.items()})
    assert state.is_failed()
    message = state.message or ""
    assert says in message and "\n" not in message.strip(), message
    with pytest.raises(ConfigError):
        state.result()
    assert not {"check_health", "build_rows"} & task_names(state, set(), wait=0)
    assert not (out / "state").exists() and not (out / "questions.parquet").exists()


@pytest.mark.timeout(600)
def test_the_official_daily_deployment_runs_on_a_worker(
        stack: tuple[dict[str, str], Background], flow_run: tuple[State, Path],  # noqa: F811 - the imported fixture
        tmp_path: Path) -> None:
    env, worker = stack
    daily = tmp_path / "daily"
    # The registry fixture rather than the demo's bundle (whose parameters test_deployment checks): the same world
    # as the in-process run above, to compare with.
    # The deployment's default is the live recipes (data/live/official): a bundle is given instead of them.
    run_deployment("official/official-daily", {"out": str(daily), "bundle": BUNDLE, "recipes": None}, env, worker)
    manifest = json.loads((daily / "manifest.json").read_text(encoding="utf-8"))
    _, out = flow_run
    expected = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"] == expected["counts"] and manifest["rejects"] == expected["rejects"]
    assert rows(daily).equals(rows(out))
