"""The news flow run for real on the held-out archive (tests/fixtures/news/world): in-process against a throwaway
Prefect server, it gives the pipeline's questions and publishes its funnel; a wrong setting fails it before any work;
and the `news-daily` deployment of prefect.yaml runs on a worker as a user starts it, its output joining a release."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from prefect.states import State

from flows.news import news_flow
from spiders.render import browser_path
from tests.prefect_server import Background
from tests.test_deployment import load_test_split, run_deployment, stack  # noqa: F401 - `stack` is a fixture
from tests.test_flows import artifacts_of, table, task_names
from spiders import run as spiders_run
from timelyqa.errors import ConfigError
from timelyqa.news.source import SOURCE
from timelyqa.sources import ROOT

# a real Prefect server, a crawl, Chromium
pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow, pytest.mark.timeout(420)]

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")

WORLD = "tests/fixtures/news/world"
"""Relative, as a user passes it from the repository root (and as the deployment's worker resolves it)."""
STAGES = {"check_inputs", "read_events", "plan_links", "crawl_articles", "take_articles", "write_questions"}


@pytest.fixture(scope="module")
def flow_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[State, Path]:
    out = tmp_path_factory.mktemp("news-flow") / "out"
    state = news_flow(out=str(out), archive_dir=str(ROOT / WORLD), return_state=True)
    return state, out


def test_the_flow_gives_the_pipelines_questions_and_publishes_its_funnel(flow_run: tuple[State, Path],
                                                                         tmp_path: Path) -> None:
    state, out = flow_run
    assert state.is_completed(), state.message
    manifest = state.result()
    by_pipeline = SOURCE.run_on([ROOT / p for p in SOURCE.fixtures], tmp_path / "pipeline", None,
                                crawl=spiders_run.crawl)
    questions, expected = pl.read_parquet(out / "questions.parquet"), pl.read_parquet(
        tmp_path / "pipeline" / "questions.parquet")
    assert questions.height == manifest["counts"]["questions"] == 6
    assert questions.select("id", "question", "answer", "article_url").sort("id").equals(
        expected.select("id", "question", "answer", "article_url").sort("id")), "the flow runs the pipeline's steps"
    assert manifest["counts"] == by_pipeline.counts and manifest["rejects"] == by_pipeline.rejects
    assert STAGES <= task_names(state, STAGES), "each step in a task of its own"

    artifacts = artifacts_of(state)
    funnel = table(artifacts["news-funnel"])
    assert [row["stage"] for row in funnel] == list(manifest["counts"])
    assert funnel[0] == {"stage": "day_pages", "count": 7} and funnel[-1] == {"stage": "questions", "count": 6}
    assert {r["reason"]: r["count"] for r in table(artifacts["news-rejects"])} == manifest["rejects"]
    pages = {r["what"]: r["count"] for r in table(artifacts["news-articles"])}
    assert pages == {"articles kept": 10, "dropped: dead_link": 1, "dropped: not_article": 1,
                     "dropped: outside_window": 1, "dropped: robots_disallowed": 1}, \
        "the crawl's pages; the link off the list, never requested, is among the rejects"
    assert manifest["rejects"]["outlet_not_allowed"] == 1
    assert str(out) in artifacts["news-summary"].data


@pytest.mark.parametrize(("params", "says"), [
    ({"archive_dir": WORLD, "outlets": "BAD"}, "not a readable outlets file"),
    ({"archive_dir": "tests/fixtures/news/nowhere"}, "tests/fixtures/news/nowhere/portal.xml: no such file"),
    ({"dump": f"{WORLD}/portal.xml", "outlets": f"{WORLD}/outlets.yaml", "start": "2026-10-02",
      "end": "2026-03-09"}, "news settings: --start 2026-10-02 is after --end 2026-03-09"),
    ({"dump": f"{WORLD}/portal.xml", "outlets": f"{WORLD}/outlets.yaml", "start": "9 March"},
     "start/end must be ISO dates"),
])
def test_a_wrong_setting_fails_the_flow_before_any_work(params: dict[str, str], says: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "outlets.yaml"
    bad.write_text("outlets:\n  - name: Kestrel Courier\n    domains: [127.0.0.21\n", encoding="utf-8")
    out = tmp_path / "out"
    state = news_flow(out=str(out), return_state=True, **{k: str(bad) if v == "BAD" else v
                                                          for k, v in params.items()})
    assert state.is_failed()
    message = state.message or ""
    assert says in message and "\n" not in message.strip(), message
    with pytest.raises(ConfigError):
        state.result()
    assert not {"read_events", "crawl_articles"} & task_names(state, set(), wait=0)
    assert not (out / "events.parquet").exists()


@pytest.mark.timeout(600)
def test_the_news_daily_deployment_runs_on_a_worker_and_joins_the_release(
        stack: tuple[dict[str, str], Background], tmp_path: Path) -> None:  # noqa: F811 - the imported fixture
    env, worker = stack
    news, release = tmp_path / "news", tmp_path / "release"
    # The held-out archive rather than the deployment's default (the demo's, checked in test_deployment): its
    # outlets' loopback hosts are this module's own.
    run_deployment("news/news-daily", {"out": str(news), "archive_dir": WORLD}, env, worker)
    manifest = json.loads((news / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["questions"] == 6 and manifest["rejects"]["outlet_not_allowed"] == 1
    assert manifest["inputs"]["events"]["path"] == str(news / "events.parquet")
    run_deployment("release/release-weekly", {"sources": [str(news)], "out": str(release)}, env, worker)
    assert load_test_split(release, env, "news") == 2, "the events of September and October"
