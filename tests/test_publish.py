"""Publishing to the Hub, against the project's own Hub-API test server (tests/hubserver.py) on 127.0.0.1.

Publishing runs in this process with huggingface_hub switched online and Xet off for the test
(HfApi is given the server's URL). Reading back runs `datasets.load_dataset(repo, config, split=...,
revision=tag)` in a fresh interpreter whose HF_ENDPOINT is the server, since huggingface_hub and datasets
read HF_ENDPOINT when imported, with a new HF_HOME and cache per tag so no cached copy can stand in.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import huggingface_hub.constants
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from publish.hub import PublishResult, publish_release, read_release
from publish.release import build_release
from tests import runs
from tests.hubserver import HubServer
from timelyqa.errors import ConfigError, TimelyQAError, TransientSourceError
from timelyqa.record import Evidence, QARecord, Verification, WikidataRecord, record_id, to_frame
from timelyqa.sources import sources

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "hf_TestWriteToken0123456789abcdef"
READ_TOKEN = "hf_TestReadToken0123456789abcdef"
REPO = "timelyqa/timelyqa"
V1, V2 = "v2026.11.01", "v2026.11.08"
AS_OF = datetime(2026, 10, 31, tzinfo=UTC)
CHECK = Verification(method="sparql", query="ASK {}", endpoint="http://127.0.0.1:7878/query", result_count=1,
                     passed=True)
FAST = {"backoff_seconds": 0.0}  # retries without sleeping; the retry count is what these tests check


# -- releases built the way the release stage builds them ----------------------------------------------

def wikidata_rows() -> list[WikidataRecord]:
    """Twelve changes over six months: every split has rows, the newest date (Oct 20) fixes month M."""
    rows = []
    for n in range(12):
        entity, facts = f"Q{n // 2 + 1}", (f"Q{n // 2 + 1}", f"P{n}", f"Q{1000 + n}")
        rows.append(WikidataRecord(
            id=record_id("wikidata", *facts), question=f"What is P{n} of {entity}?", answer=f"answer {n}",
            answer_aliases=[f"alias {n}"], answer_type="entity", source="wikidata", level=f"L{n % 3 + 1}",
            event_date=date(2026, 5 + n // 2, 1 + n % 2 * 19), as_of=AS_OF,
            evidence=[Evidence(url=f"https://www.wikidata.org/wiki/{entity}", title=entity, revision=str(n),
                               fetched_at=AS_OF, sha256="0" * 64)],
            verification=CHECK, generator=f"wikidata_l{n % 3 + 1}_v1", answer_id=facts[2],
            query_triples=[list(facts)], delta_triple=list(facts), sparql="SELECT ?x WHERE { wd:Q1 wdt:P1 ?x }"))
    return rows


def plain_rows(source: str, names: list[str]) -> list[QARecord]:
    """Old rows (January) of a text source: only a train split, and month M stays Wikidata's."""
    return [QARecord(id=record_id(source, name), question=f"Who won {name}?", answer=f"team {name}",
                     answer_type="entity", source=source, level="easy", event_date=date(2026, 1, 5 + i), as_of=AS_OF, verification=CHECK,
                     generator=f"{source}_llm_v1") for i, name in enumerate(names)]


def write_source(folder: Path, rows: list[Any], model: type, source: str) -> Path:
    return runs.write_source(folder, to_frame(rows, model), source, as_of=AS_OF.isoformat())


def build(tmp: Path, name: str, version: str, sources: dict[str, list[Any]]) -> Path:
    folders = [write_source(tmp / name / "sources" / source, rows,
                            WikidataRecord if source == "wikidata" else QARecord, source)
               for source, rows in sources.items()]
    build_release(folders, tmp / name / "release", version=version, created=datetime(2026, 11, 1, tzinfo=UTC),
                  repo_id=REPO)
    return tmp / name / "release"


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two successive releases: the second changes the news rows and drops the wikipedia source."""
    tmp = tmp_path_factory.mktemp("releases")
    first = build(tmp, "first", V1, {"wikidata": wikidata_rows(), "news": plain_rows("news", ["a", "b", "c"]),
                                     "wikipedia": plain_rows("wikipedia", ["x", "y"])})
    second = build(tmp, "second", V2, {"wikidata": wikidata_rows(), "news": plain_rows("news", ["a", "b", "d", "e"])})
    return first, second


def file_hashes(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def splits_of(release: Path) -> dict[str, dict[str, str]]:
    """{config: {split: the one parquet path}} from the release's manifest."""
    configs = json.loads((release / "manifest.json").read_text())["configs"]
    return {config: {split: paths[0] for split, paths in entry["splits"].items()} for config, entry in configs.items()}


# -- the server and an online client -----------------------------------------------------------------------

@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A fresh server, and huggingface_hub in this process online with Xet off (read at import time, so set here).

    Tree listings come in pages of 4 entries (the Hub's are 1,000), so every listing follows `Link` headers.
    """
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with HubServer(tmp_path / "hub", {TOKEN: "write", READ_TOKEN: "read"}, page_size=4) as server:
        yield server


def publish(hub: HubServer, release: Path, **kwargs: Any) -> PublishResult:
    return publish_release(release, REPO, endpoint=hub.url, **{"token": TOKEN, **FAST, **kwargs})


def state(hub: HubServer) -> tuple[str, dict[str, str], int]:
    """What a reader of the repository can see: main's head, the tags, the number of commits."""
    repo = hub.repo(REPO)
    return repo.branches["main"], dict(repo.tags), len(repo.commits)


def tree_bytes(hub: HubServer, oid: str) -> dict[str, str]:
    """sha256 of every file of a commit, read back from the server's storage, the Hub's .gitattributes aside."""
    files = hub.repo(REPO).commits[oid].files
    return {path: hashlib.sha256(hub.read(entry)).hexdigest() for path, entry in files.items()
            if path != ".gitattributes"}


READ_BACK = """
import json, sys, datasets
job = json.loads(sys.argv[1])
for n, (config, split, out) in enumerate(job["loads"]):
    ds = datasets.load_dataset(job["repo"], config, split=split, revision=job["tag"],
                               cache_dir=f"{job['cache']}/{n}")
    ds.to_polars().write_parquet(out)
for config in job["absent"]:
    try:
        datasets.load_dataset(job["repo"], config, revision=job["tag"], cache_dir=f"{job['cache']}/absent")
    except ValueError as exc:
        print("absent", config, type(exc).__name__)
"""


def hub_env(hub: HubServer, home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_TOKEN") and not k.startswith("HF_HUB_CACHE")}
    return {**env, "HF_ENDPOINT": hub.url, "HF_HUB_DISABLE_XET": "1", "HF_HOME": str(home),
            "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            **extra}


def load_tag(hub: HubServer, tag: str, release: Path, work: Path,
             absent: list[str]) -> tuple[dict[str, pl.DataFrame], str]:
    """Every config and split of `release` loaded from the server at `tag` in a fresh interpreter."""
    work.mkdir(parents=True)
    loads = [(config, split, str(work / f"{config}.{split}.parquet"))
             for config, splits in splits_of(release).items() for split in splits]
    job = {"repo": REPO, "tag": tag, "loads": loads, "absent": absent, "cache": str(work / "datasets-cache")}
    proc = subprocess.run([sys.executable, "-c", READ_BACK, json.dumps(job)], env=hub_env(hub, work / "hf-home"),
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {f"{config}.{split}": pl.read_parquet(out) for config, split, out in loads}, proc.stdout


# -- the tests ---------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_releases_each_load_their_own_rows_at_their_tag(hub: HubServer, releases: tuple[Path, Path],
                                                            tmp_path: Path) -> None:
    first, second = releases
    one = publish(hub, first)
    lfs_first = len(hub.lfs_uploads)
    assert (one.tag, one.dry_run, one.deleted) == (V1, False, ())
    assert sorted(one.uploaded) == sorted(file_hashes(first))
    assert tree_bytes(hub, one.commit) == file_hashes(first)

    # The second release runs as a user runs it: `timelyqa publish`, HF_ENDPOINT and HF_TOKEN from the environment.
    cli = Path(sys.executable).with_name("timelyqa")
    proc = subprocess.run([str(cli), "publish", str(second), "--repo", REPO], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=hub_env(hub, tmp_path / "hf-publish", HF_TOKEN=TOKEN))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert TOKEN not in proc.stdout + proc.stderr
    repo = hub.repo(REPO)
    two = repo.commits[repo.tags[V2]]
    assert repo.tags[V1] == one.commit and two.parent == one.commit and repo.branches["main"] == two.oid
    assert tree_bytes(hub, two.oid) == file_hashes(second)

    # Only what changed went up: the Wikidata config is byte-identical and was neither sent nor committed.
    old, new = file_hashes(first), file_hashes(second)
    changed = sorted(path for path, digest in new.items() if old.get(path) != digest)
    assert sorted(two.added) == changed and len(changed) < len(new)
    assert not any(path.startswith("wikidata/") for path in changed)
    assert {"README.md", "manifest.json", "news/train-00000-of-00001.parquet"} <= set(changed)
    assert sorted(two.deleted) == sorted(path for path in old if path not in new) == [
        "wikipedia/train-00000-of-00001.parquet"]
    assert f"{REPO}@{V2}: uploaded {len(changed)} file(s), deleted 1" in proc.stdout
    # Parquet goes through LFS; README.md and manifest.json go inside the commit itself.
    assert sorted(hub.lfs_uploads[lfs_first:]) == sorted(new[p] for p in changed if p.endswith(".parquet"))

    for tag, release, absent in ((V1, first, []), (V2, second, ["wikipedia"])):
        frames, out = load_tag(hub, tag, release, tmp_path / tag, absent)
        for key, got in frames.items():
            config, split = key.split(".")
            assert_frame_equal(got, pl.read_parquet(release / splits_of(release)[config][split]), check_dtypes=True)
        for config in absent:
            assert f"absent {config} ValueError" in out
    assert frames["news.train"]["id"].to_list() != pl.read_parquet(
        first / splits_of(first)["news"]["train"])["id"].to_list()


@pytest.mark.slow
def test_an_existing_tag_is_refused_before_anything_is_sent(hub: HubServer, releases: tuple[Path, Path],
                                                             tmp_path: Path) -> None:
    first, _ = releases
    publish(hub, first)
    before, seen = state(hub), len(hub.seen)
    other = build(tmp_path, "same-version", V1, {"wikidata": wikidata_rows()[:6]})
    with pytest.raises(ConfigError, match=f"already has tag {V1} .* with other files; a release tag is never moved"):
        publish(hub, other)
    assert state(hub) == before
    assert {s.operation for s in hub.seen[seen:]} <= {"whoami", "create_repo", "refs", "tree"}

    # The same release again is not an overwrite: nothing to do, the tag stays where it is.
    again = publish(hub, first)
    assert (again.commit, again.uploaded, again.deleted) == (before[1][V1], (), ())
    assert state(hub) == before


@pytest.mark.slow  # waits out real retries and backoff
def test_a_publish_stopped_before_the_tag_leaves_no_tag_and_running_it_again_completes_it(
        hub: HubServer, releases: tuple[Path, Path]) -> None:
    first, second = releases
    publish(hub, first)
    hub.fail_next("tag", 500, times=2)
    with pytest.raises(TransientSourceError, match="is on main but not tagged yet: publishing again tags it"):
        publish(hub, second, attempts=2)
    head, tags, commits = state(hub)
    # No half release: the one commit moved main from the whole first release to the whole second one,
    # and the second release is not visible as a tag. (A reader of main sees all of it or none of it.)
    assert V2 not in tags and commits == 3
    assert tree_bytes(hub, head) == file_hashes(second)
    assert [s.status for s in hub.calls("commit")] == [200, 200]  # the retry planned again: nothing to upload

    done = publish(hub, second)
    assert (done.commit, done.uploaded, done.deleted) == (head, (), ())
    assert state(hub) == (head, {**tags, V2: head}, commits)


@pytest.mark.slow
def test_a_commit_whose_answer_is_lost_is_not_made_twice(hub: HubServer, releases: tuple[Path, Path]) -> None:
    first, _ = releases
    hub.fail_next("commit", 0, after_apply=True)  # the commit lands, then the connection drops
    result = publish(hub, first)
    head, tags, commits = state(hub)
    assert commits == 2 and tags == {V1: head} and result.commit == head
    assert [s.status for s in hub.calls("commit")] == [0]


@pytest.mark.slow  # waits out real retries and backoff
def test_transient_failures_are_retried_and_others_are_not(hub: HubServer, releases: tuple[Path, Path]) -> None:
    first, _ = releases
    hub.fail_next("commit", 503, retry_after=0)
    hub.fail_next("commit", 412)  # main moved since the plan: plan again
    hub.fail_next("refs", 429, retry_after=0)
    result = publish(hub, first)
    assert [s.status for s in hub.calls("commit")] == [503, 412, 200]
    assert state(hub)[1] == {V1: result.commit}

    hub.fail_next("refs", 503, times=9, retry_after=0)
    with pytest.raises(TransientSourceError, match="HTTP 503"):
        publish(hub, first, attempts=3)
    assert [s.status for s in hub.calls("refs")][-3:] == [503, 503, 503]

    refs_seen = len(hub.calls("refs"))
    with pytest.raises(ConfigError, match="read-only"):
        publish(hub, first, token=READ_TOKEN)
    assert len(hub.calls("refs")) == refs_seen  # refused once, not retried


@pytest.mark.slow  # waits out real retries and backoff
def test_a_retry_after_given_as_an_http_date_is_honoured(hub: HubServer, releases: tuple[Path, Path]) -> None:
    """RFC 9110 lets a server say when to come back as a date as well as in seconds."""
    first, _ = releases

    def two_seconds_ahead() -> str:  # an HTTP date has whole seconds: this one is 1 to 2 s away
        return email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)

    hub.fail_next("refs", 429, retry_after=two_seconds_ahead())
    with pytest.raises(TransientSourceError, match="HTTP 429") as caught:
        publish(hub, first, attempts=1)
    assert caught.value.retry_after is not None and 0.5 < caught.value.retry_after <= 2.0

    hub.fail_next("refs", 503, retry_after=two_seconds_ahead())
    started = time.monotonic()
    result = publish(hub, first)  # FAST: no backoff of its own, so any wait is the server's
    assert time.monotonic() - started >= 0.5
    assert [s.status for s in hub.calls("refs")][-2:] == [503, 200] and result.tag == V1


@pytest.mark.slow
def test_a_wrong_token_fails_with_one_line_that_does_not_hold_it(
        hub: HubServer, releases: tuple[Path, Path], capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = releases
    wrong = "hf_WrongSecretValue0123456789xyz"
    caplog.set_level(logging.DEBUG)
    errors: list[TimelyQAError] = []
    for how in ("argument", "environment"):
        with pytest.raises(ConfigError) as caught:
            if how == "argument":
                publish(hub, first, token=wrong)
            else:
                monkeypatch.setenv("HF_TOKEN", wrong)
                publish_release(first, REPO, endpoint=hub.url, **FAST)
        errors.append(caught.value)
    for exc in errors:
        message = str(exc)
        assert "\n" not in message and "rejected the token (401)" in message
        chain: BaseException | None = exc
        while chain is not None:  # nothing chained on carries the request and its Authorization header
            assert wrong not in repr(chain)
            chain = chain.__cause__ or chain.__context__
        assert wrong.encode() not in pickle.dumps(exc)
    out, err = capfd.readouterr()
    assert wrong not in out + err + caplog.text
    assert ("dataset", REPO) not in hub.repos and not hub.calls("create_repo")

    # A successful publish, logged at DEBUG, does not show the good token either.
    publish(hub, first)
    out, err = capfd.readouterr()
    assert TOKEN not in out + err + caplog.text


def test_no_token_and_a_changed_release_stop_before_any_call(hub: HubServer, releases: tuple[Path, Path],
                                                             tmp_path: Path) -> None:
    first, _ = releases
    with pytest.raises(ConfigError, match="no Hub token: set HF_TOKEN"):
        publish_release(first, REPO, endpoint=hub.url)
    broken = tmp_path / "broken"
    build(tmp_path, "broken", V1, {"wikidata": wikidata_rows()})
    parquet = next((broken / "release" / "wikidata").glob("train-*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[:-8])  # cut short, as an interrupted copy would leave it
    with pytest.raises(ConfigError, match="differs from the hash in manifest.json"):
        publish(hub, broken / "release")
    with pytest.raises(ConfigError, match="written for timelyqa/timelyqa, not other/repo"):
        publish_release(first, "other/repo", endpoint=hub.url, token=TOKEN)
    assert hub.seen == []


def test_an_endpoint_without_xet_gets_a_hint(hub: HubServer, releases: tuple[Path, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_DISABLE_XET", False)
    with pytest.raises(ConfigError, match="serves no Xet uploads; set HF_HUB_DISABLE_XET=1"):
        publish(hub, releases[0])
    assert V1 not in hub.repo(REPO).tags


@pytest.mark.slow  # waits out real retries
def test_a_dry_run_lists_the_plan_and_touches_nothing(hub: HubServer, releases: tuple[Path, Path]) -> None:
    first, second = releases
    fresh = publish_release(first, REPO, endpoint=hub.url, dry_run=True)  # no token needed, no repo yet
    assert fresh.dry_run and fresh.commit is None and sorted(fresh.uploaded) == sorted(read_release(first).files)
    assert hub.repos == {}

    publish(hub, first)
    before, seen = state(hub), len(hub.seen)
    plan = publish_release(second, REPO, endpoint=hub.url, dry_run=True)
    assert state(hub) == before
    assert {s.operation for s in hub.seen[seen:]} <= {"refs", "tree"}
    assert "would upload" in plan.summary() and "  - wikipedia/train-00000-of-00001.parquet" in plan.summary()

    done = publish(hub, second)
    assert (done.uploaded, done.deleted) == (plan.uploaded, plan.deleted)


# -- the Prefect flow: the token from a Secret block, never in logs or artifacts -----------------------------

@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_flow_takes_the_token_from_a_secret_block_and_never_shows_it(
        prefect_api: None, hub: HubServer, releases: tuple[Path, Path]) -> None:
    from prefect.blocks.system import Secret
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    from flows.common import only_transient
    from flows.hub import publish_flow, publish_to_hub

    first, _ = releases
    assert publish_to_hub.retries == 3 and publish_to_hub.retry_condition_fn is only_transient
    missing = publish_flow(release=str(first), repo=REPO, secret_block="no-such-block", endpoint=hub.url,
                           return_state=True)
    assert missing.is_failed() and "no Prefect Secret block named 'no-such-block'" in (missing.message or "")
    assert hub.seen == []

    Secret(value=TOKEN).save("hf-token-test", overwrite=True)
    state = publish_flow(release=str(first), repo=REPO, secret_block="hf-token-test", endpoint=hub.url,
                         return_state=True)
    assert state.is_completed(), state.message
    result = state.result()
    assert result["tag"] == V1 and hub.repo(REPO).tags == {V1: result["commit"]}

    APILogHandler().flush()  # the logs go to the API in batches; send what is queued
    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))
        run = client.read_flow_run(run_id)
    shown = json.dumps([a.model_dump(mode="json") for a in artifacts]) + "\n".join(log.message for log in logs)
    assert result["commit"] in shown and f"{REPO}@{V1}" in shown  # the summary is there...
    assert TOKEN not in shown + json.dumps(run.model_dump(mode="json"))  # ...and the token is not


@pytest.mark.slow
def test_every_config_and_split_of_the_demo_release_loads_at_its_tag(hub: HubServer, tmp_path: Path) -> None:
    """The release `make demo` writes, published and read back whole through HF_ENDPOINT at its tag."""
    cli = Path(sys.executable).with_name("timelyqa")
    proc = subprocess.run([str(cli), "demo", "--out", str(tmp_path / "demo")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TIMELYQA_QUIET": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    release = tmp_path / "demo" / "release"
    result = publish(hub, release)
    frames, _ = load_tag(hub, result.tag, release, tmp_path / "read", [])
    assert {key.split(".")[0] for key in frames} == {"default", *sources()}, "every registered source in the demo"
    for key, got in frames.items():
        config, split = key.split(".")
        assert_frame_equal(got, pl.read_parquet(release / splits_of(release)[config][split]), check_dtypes=True)
