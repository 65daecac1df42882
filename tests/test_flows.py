"""The Prefect flows run in-process on the demo dumps: outputs, artifacts, fail-fast inputs, the retry rule."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import date
from pathlib import Path
from typing import Any
from uuid import UUID

import polars as pl
import pytest
from prefect import flow, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
from prefect.states import Completed, State, exception_to_failed_state

from flows.common import RETRY_TRANSIENT, exception_of, only_transient
from flows.release import release_flow
from flows.wikidata import check_inputs, read_snapshot, verify_questions, wikidata_flow, write_outputs
from flows.wikipedia import wikipedia_flow
from tests.wikiworld import World, make_world, write_export
from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.sources import sources

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
BEFORE, AFTER = DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2"

# every test here runs against a real Prefect server
pytestmark = [pytest.mark.usefixtures("prefect_api"), pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[State, Path]:
    out = tmp_path_factory.mktemp("wikidata")
    state = wikidata_flow(before=str(BEFORE), after=str(AFTER), out=str(out), seed=0, return_state=True)
    return state, out


SOURCES = sources()


def flow_run_id(state: State) -> UUID:
    run_id = state.state_details.flow_run_id
    if run_id is None:
        raise AssertionError(f"state without a flow run: {state!r}")
    return run_id


def artifacts_of(state: State) -> dict[str, Any]:
    """The artifacts one flow run published, by key, read back through the API as a user's client sees them."""
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id(state)])))
    return {a.key: a for a in found}


def task_names(state: State, expect: set[str], *, wait: float = 60.0, settle: float = 1.0) -> set[str]:
    """The names of the tasks one flow run ran, as the API records them.

    Task runs reach the server as events, recorded after the flow has returned; so read until `expect` is
    there (or `wait` runs out), then once more after `settle` seconds to catch any stragglers beyond it."""
    flow_filter = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id(state)]))
    deadline = time.monotonic() + wait
    with get_client(sync_client=True) as client:
        while True:
            names = {r.name.rsplit("-", 1)[0] for r in client.read_task_runs(flow_run_filter=flow_filter)}
            if expect <= names or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        time.sleep(settle)
        return {r.name.rsplit("-", 1)[0] for r in client.read_task_runs(flow_run_filter=flow_filter)}


def flow_run_name(state: State) -> str:
    with get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id(state)).name


def table(artifact: Any) -> list[dict[str, Any]]:
    data = artifact.data
    return json.loads(data) if isinstance(data, str) else data


def test_wikidata_flow_writes_outputs_and_returns_the_manifest(demo_run: tuple[State, Path]) -> None:
    state, out = demo_run
    assert state.is_completed(), state.message
    manifest = state.result()
    for name in ("questions.parquet", "rejected.parquet", "manifest.json"):
        assert (out / name).is_file(), f"{name} missing from {sorted(p.name for p in out.iterdir())}"
    assert json.loads((out / "manifest.json").read_text())["counts"] == manifest["counts"]
    questions = pl.read_parquet(out / "questions.parquet")
    assert questions.height > 0
    assert sum(manifest["rejects"].values()) == pl.read_parquet(out / "rejected.parquet").height
    # Task runs named by what they work on where it is more than the stage: the snapshot each reads.
    every_stage = {"check_inputs", "read t0", "read t1", "plan_delta", "delta bucket 0 of 1", "merge_delta",
                   "plan_synthesis", "synthesis batch 0", "merge_candidates", "merge_verdicts", "write_outputs"}
    assert every_stage <= task_names(state, every_stage)
    assert flow_run_name(state) == "wikidata wikidata-t0.json.gz..wikidata-t1.json.bz2"


def test_wikidata_flow_publishes_the_funnel_and_reject_reasons(demo_run: tuple[State, Path]) -> None:
    state, out = demo_run
    manifest = state.result()
    artifacts = artifacts_of(state)
    assert {"wikidata-funnel", "wikidata-rejects", "wikidata-summary"} <= set(artifacts)

    funnel = table(artifacts["wikidata-funnel"])
    assert {row["stage"]: row["count"] for row in funnel} == manifest["counts"]
    # Top to bottom: from the entities read to the questions written.
    assert [row["stage"] for row in funnel] == [line for line in SOURCES["wikidata"].funnel
                                                if line in manifest["counts"]], "the registry's order, as the CLI's"
    assert funnel[0]["stage"] == "t0_entities"
    assert funnel[-1] == {"stage": "questions", "count": pl.read_parquet(out / "questions.parquet").height}

    rejects = table(artifacts["wikidata-rejects"])
    assert {r["reason"]: r["count"] for r in rejects} == manifest["rejects"]
    assert sum(r["count"] for r in rejects) == pl.read_parquet(out / "rejected.parquet").height

    summary = artifacts["wikidata-summary"].data
    assert str(out) in summary and "| stage | count |" in summary

    # Each dump read fed a progress artifact from the callback the CLI's bar takes, finished at 100 %.
    for name, dump in (("t0", BEFORE), ("t1", AFTER)):
        progress = artifacts[f"wikidata-read-{name}"]
        assert progress.type == "progress" and float(progress.data) == 100.0, progress
        assert progress.description == f"wikidata: reading {dump.name}: done"


def test_missing_dump_fails_in_check_inputs_before_any_work(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dump.json.gz"
    out = tmp_path / "out"
    state = wikidata_flow(before=str(missing), after=str(AFTER), out=str(out), return_state=True)
    assert state.is_failed()
    assert "no-such-dump.json.gz" in (state.message or "")
    with pytest.raises(ConfigError):
        state.result()
    assert task_names(state, {"check_inputs"}) == {"check_inputs"}
    assert not out.exists()


def test_release_flow_builds_a_folder_and_counts_rows_per_split(demo_run: tuple[State, Path], tmp_path: Path
                                                                 ) -> None:
    _, wikidata_out = demo_run
    out = tmp_path / "release"
    state = release_flow(sources=[str(wikidata_out)], out=str(out), return_state=True)
    assert state.is_completed(), state.message
    assert (out / "README.md").is_file()
    version = state.result()["version"]
    assert flow_run_name(state) == f"release {version}", "named by the version the build gave"
    artifacts = artifacts_of(state)
    assert f"({out.resolve().as_uri()})" in artifacts["release-link"].data, "a link to the folder"
    rows = table(artifacts["release-splits"])
    assert rows, "the release artifact lists no split"
    for row in rows:
        files = sorted((out / row["config"]).glob(f"{row['split']}-*.parquet"))
        assert files, f"no parquet for {row}"
        assert sum(pl.read_parquet(f).height for f in files) == row["rows"]


def test_release_flow_releases_the_sources_that_ran_and_names_the_missing(demo_run: tuple[State, Path],
                                                                          tmp_path: Path) -> None:
    """The weekly release's default lists every source; a week where one has not run still gets a release of the
    others, and the run says which were missing. None at all is a failed run with its reason."""
    _, wikidata_out = demo_run
    state = release_flow(sources=[str(wikidata_out), str(tmp_path / "news")], out=str(tmp_path / "release"),
                         return_state=True)
    assert state.is_completed(), state.message
    assert set(state.result()["sources"]) == {"wikidata"}
    from prefect.logging.handlers import APILogHandler  # noqa: PLC0415

    APILogHandler().flush()  # the run's logs reach the API in batches
    with get_client(sync_client=True) as client:
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id(state)])))
    assert any(f"release without {tmp_path / 'news'}: no source output there yet" in log.message for log in logs)
    none = release_flow(sources=[str(tmp_path / "news")], out=str(tmp_path / "empty"), return_state=True)
    assert none.is_failed() and "holds a source output" in str(exception_of(none))
    assert not (tmp_path / "empty").exists()


# The retry rule: only TransientSourceError is retried.

def failed(exc: BaseException) -> State:
    """A Failed state built the way Prefect's engine builds one from a raised exception."""
    return asyncio.run(exception_to_failed_state(exc))


def test_retry_condition_reads_the_exception_from_the_state() -> None:
    retry = only_transient
    assert retry(check_inputs, None, failed(TransientSourceError("HTTP 503"))) is True  # type: ignore[arg-type]
    for exc in (ConfigError("bad endpoint"), SourceContractError("HTML for JSON"), ValueError("bug")):
        assert retry(check_inputs, None, failed(exc)) is False  # type: ignore[arg-type]
    assert exception_of(Completed(data=1)) is None


@pytest.mark.parametrize(("exc_type", "attempts"), [(TransientSourceError, 4), (ConfigError, 1),
                                                    (SourceContractError, 1)])
def test_a_task_with_the_policy_retries_only_transient_failures(exc_type: type[Exception], attempts: int) -> None:
    calls: list[int] = []

    # The stages' own policy, with the backoff removed so the test does not sleep.
    @task(**{**RETRY_TRANSIENT, "retry_delay_seconds": 0, "retry_jitter_factor": None})
    def fetch() -> None:
        calls.append(1)
        raise exc_type("upstream said no")

    @flow
    def one_fetch() -> None:
        fetch()

    state = one_fetch(return_state=True)
    assert state.is_failed()
    assert len(calls) == attempts


def test_source_stages_carry_the_retry_policy_and_the_input_check_does_not() -> None:
    for stage in (read_snapshot, verify_questions):
        assert stage.retries == 3 and stage.retry_condition_fn is only_transient
    for stage in (check_inputs, write_outputs):
        assert stage.retries == 0


# A Secret block the run names must exist, whichever flow names it -------------------------------------------

def test_a_secret_block_that_does_not_exist_is_named_not_taken_for_no_token(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.hub import hub_token, publish_flow

    monkeypatch.delenv("HF_TOKEN", raising=False)
    state = publish_flow(release=str(tmp_path / "release"), repo="timelyqa/timelyqa", secret_block="no-such-block",
                         return_state=True)
    assert state.is_failed() and "no Hub token" not in (state.message or "")
    with pytest.raises(ConfigError, match="no Prefect Secret block named 'no-such-block'"):
        state.result()
    assert hub_token(None) is None  # no block named: no token
    monkeypatch.setenv("HF_TOKEN", "hf_FromTheEnvironment")
    assert hub_token("no-such-block") == "hf_FromTheEnvironment"  # the environment's token wins, as documented


# The Wikipedia flow, and its output joining a release ------------------------------------------------------

@pytest.fixture(scope="module")
def wikipedia_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[State, Path, World]:
    folder = tmp_path_factory.mktemp("wikipedia")
    world = make_world(31, pages=24)
    dump = write_export(world.pages, folder / "history.xml.bz2")
    state = wikipedia_flow(out=str(folder / "out"), dump=str(dump), start=world.start.isoformat(),
                           end=world.end.isoformat(), return_state=True)
    return state, folder / "out", world


def test_wikipedia_flow_writes_questions_and_publishes_its_funnel(wikipedia_run: tuple[State, Path, World]) -> None:
    state, out, world = wikipedia_run
    assert state.is_completed(), state.message
    manifest = state.result()
    questions = pl.read_parquet(out / "questions.parquet")
    assert questions.height == manifest["counts"]["questions"] > 0
    assert set(questions["as_of"]) == {world.end}
    stages = {"check_inputs", "fetch_pages", "read_changes", "write_questions", "gate_questions", "check_questions",
              "write_outputs"}
    assert stages <= task_names(state, stages), "each stage in a task of its own"
    assert flow_run_name(state) == f"wikipedia {world.start:%Y-%m-%d}..{world.end:%Y-%m-%d}"
    artifacts = artifacts_of(state)
    progress = artifacts["wikipedia-read-changes"]
    assert float(progress.data) == 100.0 and progress.description.endswith(": done")
    funnel = table(artifacts["wikipedia-funnel"])
    assert funnel[0]["stage"] == "pages_read" and funnel[-1] == {"stage": "questions", "count": questions.height}
    assert {r["reason"]: r["count"] for r in table(artifacts["wikipedia-rejects"])} == manifest["rejects"]


@pytest.mark.parametrize(("params", "says"), [
    ({"dump": "no-such-export.xml"}, "no-such-export.xml"),
    ({"api": "https://en.wikipedia.org/w/api.php"}, "TIMELYQA_WIKIPEDIA_API_USER_AGENT"),
    ({"dump": str(DEMO / "wikidata-t0.json.gz")}, "not a MediaWiki XML export"),
    ({"generator": "gpt"}, "setting generator 'gpt': Input should be 'template' or 'llm'"),
    ({"start": "last week"}, "start 'last week'"),
])
def test_wikipedia_flow_fails_before_any_work_on_bad_input(wikipedia_run: tuple[State, Path, World], tmp_path: Path,
                                                           params: dict[str, str], says: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIMELYQA_WIKIPEDIA_API_USER_AGENT", raising=False)  # the live API is never asked
    _, out, world = wikipedia_run
    given = {"dump": str(out.parent / "history.xml.bz2"), "start": world.start.isoformat(),
             "end": world.end.isoformat(), **params}
    if "api" in params:
        given.pop("dump")
    state = wikipedia_flow(out=str(tmp_path / "out"), return_state=True, **given)
    assert state.is_failed() and says in (state.message or "")
    assert "fetch_pages" not in task_names(state, set(), wait=0)
    assert not (tmp_path / "out").exists()


def test_wikipedia_joins_the_release_as_its_own_config(demo_run: tuple[State, Path],
                                                       wikipedia_run: tuple[State, Path, World],
                                                       tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "release"
    state = release_flow(sources=[str(demo_run[1]), str(wikipedia_run[1])], out=str(out), version="v0.0.2-test",
                         return_state=True)
    assert state.is_completed(), state.message
    wiki = pl.read_parquet(wikipedia_run[1] / "questions.parquet")
    loaded = datasets.load_dataset(str(out), "wikipedia", cache_dir=str(tmp_path / "cache"))
    assert sorted(i for split in loaded.values() for i in split["id"]) == sorted(wiki["id"])
    everything = datasets.load_dataset(str(out), "default", cache_dir=str(tmp_path / "cache"))
    assert {s for split in everything.values() for s in split["source"]} == {"wikidata", "wikipedia"}
    dates = json.loads((out / "manifest.json").read_text())["split_dates"]
    test_from, validation_from = (date.fromisoformat(dates[k]) for k in ("test_from", "validation_from"))
    for split, rows in loaded.items():  # by the month of each row's event, against the release's newest month
        for row in rows:
            when = row["event_date"]
            assert split == ("test" if when >= test_from else "validation" if when >= validation_from else "train")
    card = (out / "README.md").read_text()
    assert "config_name: wikipedia" in card and "cc-by-sa-4.0" in card


def test_the_llm_wikipedia_flow_run_twice_calls_no_model_the_second_time(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Models behind scripted OpenAI-compatible servers (test doubles); the writer's key from a Secret block."""
    from prefect.blocks.system import Secret

    from tests.llmserver import ScriptedLLM
    from tests.test_wikipedia_llm import END, SCRIPT, START, _player, checker_script, writer_script

    key = "sk-flow-5e2c7a"
    Secret(value=key).save("llm-writer-key", overwrite=True)
    dump = write_export([_player(n, title) for n, title in enumerate(SCRIPT, start=1)], tmp_path / "players.xml")
    with ScriptedLLM(models=("writer-7b",), default=writer_script) as writer, \
            ScriptedLLM(models=("checker-8b",), default=checker_script) as checker:
        for name, value in {"TIMELYQA_LLM_BASE_URL": writer.url, "TIMELYQA_LLM_MODEL": "writer-7b",
                            "TIMELYQA_LLM_BACKOFF": "0", "TIMELYQA_CHECK_LLM_BASE_URL": checker.url,
                            "TIMELYQA_CHECK_LLM_MODEL": "checker-8b"}.items():
            monkeypatch.setenv(name, value)
        params = {"out": str(tmp_path / "out"), "dump": str(dump), "start": START.isoformat(), "end": END.isoformat(),
                  "generator": "llm", "llm_secret_block": "llm-writer-key"}
        first = wikipedia_flow(**params, return_state=True)
        rows = pl.read_parquet(tmp_path / "out" / "questions.parquet")
        calls = writer.calls + checker.calls
        second = wikipedia_flow(**params, return_state=True)
        assert first.is_completed() and second.is_completed(), (first.message, second.message)
        assert calls > len(SCRIPT) and writer.calls + checker.calls == calls
        assert {h.get("authorization") for h in writer.headers} == {f"Bearer {key}"}
    assert second.result()["usage"]["llm_calls"] == 0
    assert pl.read_parquet(tmp_path / "out" / "questions.parquet").equals(rows) and rows["page_title"].to_list() == [
        "Ana Lima"]
    shown = json.dumps([a.data for a in artifacts_of(first).values()]) + json.dumps(first.result())
    assert key not in shown


def test_the_evaluate_flow_scores_predictions_and_publishes_the_report(tmp_path: Path) -> None:
    """A release (tests/test_export.py's) scored from a file of predictions: the flow returns the accuracy the
    report gives, and the report and the accuracies are the run's artifacts."""
    from flows.evaluate import evaluate_flow  # noqa: PLC0415
    from tests.test_export import FACTS, news_record, wikidata_record, write_source, NEWS, CREATED  # noqa: PLC0415
    from publish.release import build_release  # noqa: PLC0415
    from timelyqa.export import read_split  # noqa: PLC0415
    from timelyqa.record import QARecord, WikidataRecord  # noqa: PLC0415

    sources = [write_source(tmp_path / "wikidata", [wikidata_record(*f) for f in FACTS], WikidataRecord, "wikidata"),
               write_source(tmp_path / "news", [news_record(*n) for n in NEWS], QARecord, "news")]
    build_release(sources, tmp_path / "release", created=CREATED)
    rows = read_split(tmp_path / "release", "default", "train").to_dicts()
    right = [r for r in rows if r["answer_type"] == "entity"]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": r["id"], "answer": r["answer"]}) + "\n" for r in right))
    state = evaluate_flow(release=str(tmp_path / "release"), out=str(tmp_path / "eval"),
                          predictions=str(predictions), split="train", at="2026-06-03T09:00:00+00:00",
                          return_state=True)
    result = state.result()
    assert result["rows"] == len(rows) and result["accuracy"] == len(right) / len(rows)
    artifacts = artifacts_of(state)
    assert artifacts["evaluation-report"].data == (tmp_path / "eval" / "report.md").read_text()
    overall = next(r for r in table(artifacts["evaluation-accuracy"]) if r["group"] == "all")
    assert (overall["correct"], overall["rows"]) == (len(right), len(rows))


def test_the_evaluate_flow_refuses_two_ways_of_answering_before_any_work(tmp_path: Path) -> None:
    from flows.evaluate import evaluate_flow  # noqa: PLC0415

    state = evaluate_flow(release=str(tmp_path), out=str(tmp_path / "eval"), predictions="p.jsonl", model="m",
                          return_state=True)
    assert state.is_failed() and "give one way of answering" in str(exception_of(state))
    assert not (tmp_path / "eval").exists()
