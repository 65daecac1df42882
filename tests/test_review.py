"""`timelyqa review`: test rows out to a reviewer with article excerpts, accept/reject decisions in (never edits),
kept in the release and applied to later releases as the `human_verified` split, which `datasets` loads."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import polars as pl
import pytest

from publish.release import build_release, import_review
from publish.review import ReviewReject, export_review
from tests import toy_source
from tests.runs import write_source
from tests.test_release_extra_splits import CREATED, FIRST, LATER, SECOND, ids, toy_row
from tests.toy_source import ToyRecord
from timelyqa.errors import ConfigError
from timelyqa.news.frames import ARTICLE_SCHEMA
from timelyqa.record import to_frame
from timelyqa.sources import register, unregister

ROOT = Path(__file__).resolve().parent.parent
REVIEWED = datetime(2026, 6, 5, 14, 0, tzinfo=UTC)
CRAIL, DUNMORE, DUNMORE_1 = ids["Crail", 0], ids["Dunmore", 0], ids["Dunmore", 1]
BY_ID = {row.id: row for row in SECOND}
FILLER = ("The council met on Tuesday evening in the old town hall to hear the count. " * 12).strip()


@pytest.fixture(autouse=True)
def news_like() -> Iterator[None]:
    register(replace(toy_source.SOURCE, refresh_to_train=True))
    yield
    unregister("toy")


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """datasets.load_dataset, offline, with a cache of this test's own (datasets caches by folder path)."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return lambda *args, **kwargs: datasets.load_dataset(*args, cache_dir=str(tmp_path / "hf-cache"), **kwargs)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """The May release: Crail's and Dunmore's three rows are its test split."""
    build_release([write_source(tmp_path / "toy-may", to_frame(FIRST, ToyRecord), "toy")], tmp_path / "release",
                  created=CREATED)
    return tmp_path / "release"


@pytest.fixture
def articles(tmp_path: Path) -> Path:
    """The news source's articles.parquet: Crail's article states the answer deep in, Dunmore's does not, Dunmore's
    second row has no article at all."""
    def article(row_id: str, text: str) -> dict[str, Any]:
        url = BY_ID[row_id].evidence[0].url
        return {"url": url, "final_url": url, "outlet": "Toy Gazette", "event_id": "e", "title": "t",
                "published": date(2026, 5, 2), "author": None, "text": text, "rendered": False, "sha256": "0" * 64,
                "fetched_at": datetime(2026, 5, 3, tzinfo=UTC), "archive_url": None}
    rows = [article(CRAIL, f"{FILLER} After the recount the clerk declared Mayor Crail0 the winner by 41 votes. "
                           f"{FILLER}"),
            article(DUNMORE, f"Dunmore's vote was postponed. {FILLER}")]
    path = tmp_path / "articles.parquet"
    pl.DataFrame(rows, schema=ARTICLE_SCHEMA, orient="row").write_parquet(path)
    return path


def line(row_id: str, decision: str, **edits: str) -> str:
    row = BY_ID[row_id]
    return json.dumps({"id": row_id, "question": row.question, "answer": row.answer, "decision": decision, **edits})


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_writes_the_undecided_test_rows_with_an_excerpt_around_the_answer(
        release: Path, articles: Path, tmp_path: Path) -> None:
    result = export_review(release, "toy", tmp_path / "review.jsonl", articles=articles)
    assert (result.rows, result.decided, result.with_article, result.answer_found) == (3, 0, 2, 1)
    items = {item["id"]: item for item in read_lines(tmp_path / "review.jsonl")}
    assert set(items) == {CRAIL, DUNMORE, DUNMORE_1}
    crail = items[CRAIL]
    assert (crail["question"], crail["answer"], crail["decision"]) == ("Who became mayor 0 of Crail?", "Mayor Crail0",
                                                                       "")
    assert crail["evidence_urls"] == ["http://127.0.0.1:8000/Crail/0.html"]
    assert "the clerk declared Mayor Crail0 the winner by 41 votes" in crail["excerpt"]
    assert crail["answer_in_excerpt"] is True
    assert crail["excerpt"].startswith("…") and crail["excerpt"].endswith("…")
    assert 300 < len(crail["excerpt"]) <= 402 and "  " not in crail["excerpt"]
    assert items[DUNMORE]["excerpt"].startswith("Dunmore's vote was postponed.")
    assert items[DUNMORE]["answer_in_excerpt"] is False, "the reviewer sees the article does not state it"
    assert items[DUNMORE_1]["excerpt"] is None and items[DUNMORE_1]["article_url"] is None
    assert "3 test rows to review" in result.summary()


def test_export_without_articles_has_no_excerpt(release: Path, tmp_path: Path) -> None:
    export_review(release, "default", tmp_path / "review.jsonl")
    items = read_lines(tmp_path / "review.jsonl")
    assert [item["id"] for item in items] == sorted([CRAIL, DUNMORE, DUNMORE_1])
    assert all("excerpt" not in item and item["decision"] == "" for item in items)


@pytest.mark.parametrize(("args", "message"), [
    ({"config": "news"}, "release: no config 'news' (configs: default, toy)"),
    ({"articles": "events.parquet"}, "events.parquet: --articles has no column text (it needs url and text)"),
    ({"articles": "missing.parquet"}, "missing.parquet: --articles is not a parquet file"),
])
def test_export_refuses_a_wrong_setting_before_writing(release: Path, tmp_path: Path, args: dict[str, str],
                                                       message: str) -> None:
    pl.DataFrame({"url": ["http://127.0.0.1:8000/a"], "summary": ["x"]}).write_parquet(tmp_path / "events.parquet")
    config = args.get("config", "toy")
    articles = tmp_path / args["articles"] if "articles" in args else None
    with pytest.raises(ConfigError, match="^" + str(tmp_path).replace(".", r"\.")) as caught:
        export_review(release, config, tmp_path / "review.jsonl", articles=articles)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "review.jsonl").exists()


def test_export_never_overwrites_a_file_without_force(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.jsonl"
    out.write_text('{"id": "x", "decision": "accept"}\n', encoding="utf-8")  # a reviewer's work, not imported yet
    with pytest.raises(ConfigError, match="review.jsonl: --out exists already") as caught:
        export_review(release, "toy", out)
    assert "--force" in str(caught.value) and "\n" not in str(caught.value)
    assert out.read_text(encoding="utf-8") == '{"id": "x", "decision": "accept"}\n', "not a byte changed"
    assert export_review(release, "toy", out, force=True).rows == 3
    assert len(read_lines(out)) == 3


def reviewed_file(tmp_path: Path) -> Path:
    lines = [
        line(CRAIL, "accept"),  # 1
        line(DUNMORE, " Reject "),  # 2: case and spaces aside
        '{"id": "not json',  # 3
        line(CRAIL, "accept", id="f" * 24),  # 4: unknown id
        line(DUNMORE_1, "accept", question="Who became mayor of Dunmore in May?"),  # 5: an edit
        line(DUNMORE_1, "accept", answer="Mayor D."),  # 6: an edit
        line(DUNMORE_1, "maybe"),  # 7
        line(ids["Ashford", 0], "accept"),  # 8: a train row
        line(DUNMORE_1, ""),  # 9: not reviewed yet
        line(CRAIL, "reject"),  # 10: decided on line 1 already
        "",  # 11: a blank line is no line
        "[1, 2]",  # 12
        json.dumps({"id": CRAIL, "question": "q", "answer": "a"}),  # 13
    ]
    path = tmp_path / "reviewed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_takes_accept_and_reject_and_refuses_every_other_line_naming_it(release: Path,
                                                                               tmp_path: Path) -> None:
    path = reviewed_file(tmp_path)
    result, manifest = import_review(path, release, now=REVIEWED)
    assert result.taken == {"accept": 1, "reject": 1}
    assert [(r.line, r.reason) for r in result.refused] == [
        (3, ReviewReject.NOT_JSON), (4, ReviewReject.UNKNOWN_ID), (5, ReviewReject.QUESTION_CHANGED),
        (6, ReviewReject.ANSWER_CHANGED), (7, ReviewReject.BAD_DECISION), (8, ReviewReject.NOT_IN_TEST),
        (9, ReviewReject.UNDECIDED), (10, ReviewReject.DECIDED_TWICE), (12, ReviewReject.NOT_JSON),
        (13, ReviewReject.MISSING_FIELD)]
    messages = result.messages()
    assert all(m.startswith(f"{path} line ") and "\n" not in m for m in messages)
    assert f"{path} line 5: question_changed: id {DUNMORE_1}: question 'Who became mayor of Dunmore in May?' is " \
           "not the release's 'Who became mayor 1 of Dunmore?'" in messages
    assert f"{path} line 10: decided_twice: id {CRAIL} is decided on line 1 already" in messages
    aside = read_lines(tmp_path / "reviewed.refused.jsonl")
    assert [(item["line"], item["reason"]) for item in aside] == [(r.line, str(r.reason)) for r in result.refused]
    assert aside[0]["text"] == '{"id": "not json'
    assert result.summary().startswith("2 decisions taken (accept 1, reject 1); 10 lines refused (")
    kept = read_lines(release / "reviews" / "toy.jsonl")
    assert kept == [
        {"id": i, "decision": d, "question": BY_ID[i].question, "answer": BY_ID[i].answer,
         "decided_at": "2026-06-05T14:00:00+00:00"}
        for i, d in sorted([(CRAIL, "accept"), (DUNMORE, "reject")])]
    assert manifest["reviews"]["toy"]["accepted"] == 1 and manifest["reviews"]["toy"]["rejected"] == 1


def test_import_gives_each_config_a_human_verified_split_that_datasets_loads(release: Path, tmp_path: Path,
                                                                             load: Callable[..., Any]) -> None:
    _, manifest = import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    for config in ("toy", "default"):
        verified = load(str(release), config, split="human_verified")
        assert verified["id"] == [CRAIL] and verified["split"] == ["human_verified"]
        assert CRAIL in load(str(release), config, split="test")["id"], "a verified row stays in test too"
    assert manifest["version"] == "v2026.06.05" and manifest["previous_version"] == "v2026.06.02"
    assert manifest["changes"]["human_verified"] == {"added": {"toy": 1}, "removed": {}}
    assert manifest["counts"]["toy"]["human_verified"] == {"easy": 1}
    card = (release / "README.md").read_text()
    assert "| config | level | train | validation | test | human_verified | longitudinal | total |" in card
    assert "| `toy` | **all** | 1 | 1 | 3 | 1 | 2 | 7 |" in card, "verified rows are test rows: counted once"
    assert "- `human_verified` (`default`: 1 rows, `toy`: 1 rows): test rows a person reviewed" in card
    assert "`toy` 1 accepted, 1 rejected" in card
    assert 'datasets.load_dataset("path/or/repo_id", "toy", split="human_verified")' in card
    log = (release / "CHANGELOG.md").read_text()
    assert log.index("## v2026.06.05") < log.index("## v2026.06.02")
    assert "- 1 rows added to human_verified (toy: 1), 0 removed" in log
    assert "- 0 rows added\n" in log and "- 0 rows moved between splits\n" in log


def test_export_after_an_import_leaves_the_decided_rows_out(release: Path, tmp_path: Path) -> None:
    import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    result = export_review(release, "toy", tmp_path / "next.jsonl")
    assert [item["id"] for item in read_lines(tmp_path / "next.jsonl")] == [DUNMORE_1]
    assert result.decided == 2


def test_importing_the_same_decisions_again_changes_no_byte(release: Path, tmp_path: Path) -> None:
    path = reviewed_file(tmp_path)
    import_review(path, release, now=REVIEWED)
    before = file_hashes(release)
    result, manifest = import_review(path, release, now=datetime(2026, 6, 9, tzinfo=UTC))
    assert result.taken == {"accept": 1, "reject": 1}
    assert manifest["version"] == "v2026.06.05" and file_hashes(release) == before


def test_a_later_release_carries_the_decisions_and_applies_them(release: Path, tmp_path: Path,
                                                                load: Callable[..., Any]) -> None:
    import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    decisions = (release / "reviews" / "toy.jsonl").read_text()
    more = write_source(tmp_path / "toy-may-2", to_frame([*FIRST, toy_row("Fyvie", date(2026, 5, 25))], ToyRecord),
                        "toy")
    same_folder = build_release([more], release, created=datetime(2026, 6, 6, tzinfo=UTC))
    other_folder = build_release([more], tmp_path / "next", created=datetime(2026, 6, 6, tzinfo=UTC),
                                 previous=release)
    for folder, manifest in ((release, same_folder), (tmp_path / "next", other_folder)):
        assert (folder / "reviews" / "toy.jsonl").read_text() == decisions
        assert load(str(folder), "toy", split="human_verified")["id"] == [CRAIL]
        assert manifest["changes"]["human_verified"] == {"added": {}, "removed": {}}
        assert manifest["changes"]["added"] == {"toy": 1}


def test_a_run_cannot_rewrite_a_released_row_so_its_verification_stands(release: Path, tmp_path: Path) -> None:
    # A released row is never edited in place (issue 12): a run's row with a released id is that row, and the
    # release keeps it as stored, with the reviewer's verdict on it. A new answer needs a new row (a new id).
    _, reviewed = import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    rewritten = [row.model_copy(update={"answer": "Mayor Crail0 Jr."}) if row.id == CRAIL else row for row in FIRST]
    manifest = build_release([write_source(tmp_path / "toy-may-2", to_frame(rewritten, ToyRecord), "toy")], release,
                             created=datetime(2026, 6, 6, tzinfo=UTC))
    assert "human_verified" in manifest["configs"]["toy"]["splits"]
    assert manifest["version"] == reviewed["version"], "nothing changed: the same release"
    test = pl.read_parquet(release / "toy" / "test-00000-of-00001.parquet")
    assert dict(test.select("id", "answer").iter_rows())[CRAIL] == BY_ID[CRAIL].answer
    export_review(release, "toy", tmp_path / "again.jsonl")
    assert [item["id"] for item in read_lines(tmp_path / "again.jsonl")] == [DUNMORE_1], "Crail's verdict stands"


def test_a_refresh_moves_verified_rows_to_train_and_the_split_is_left_out(release: Path, tmp_path: Path,
                                                                          load: Callable[..., Any]) -> None:
    import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    manifest = build_release([write_source(tmp_path / "toy-june", to_frame(SECOND, ToyRecord), "toy")], release,
                             created=LATER)
    assert manifest["changes"]["human_verified"] == {"added": {}, "removed": {"toy": 1}}
    with pytest.raises(ValueError, match='Unknown split "human_verified"'):
        load(str(release), "toy", split="human_verified")
    assert "- 0 rows added to human_verified, 1 removed (toy: 1)" in (release / "CHANGELOG.md").read_text()
    assert (release / "reviews" / "toy.jsonl").is_file(), "decisions outlive the rows' stay in test"


def timelyqa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, in a new interpreter, with the toy source registered as a news source is."""
    boot = ("import sys; from dataclasses import replace; from tests import toy_source; "
            "from timelyqa.sources import register; register(replace(toy_source.SOURCE, refresh_to_train=True)); "
            "from timelyqa.cli import app; sys.argv[0] = 'timelyqa'; app()")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", boot, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.slow  # the installed command, in subprocesses, as the other CLI tests
def test_the_review_commands_round_trip(release: Path, articles: Path, tmp_path: Path) -> None:
    out = tmp_path / "review.jsonl"
    exported = timelyqa("review", "export", release, "--config", "toy", "--out", out, "--articles", articles)
    assert exported.returncode == 0, exported.stderr
    assert "3 test rows to review" in exported.stdout
    before = out.read_bytes()
    again = timelyqa("review", "export", release, "--config", "toy", "--out", out)
    assert again.returncode == 2 and out.read_bytes() == before, "an existing file is kept"
    assert again.stderr.strip().splitlines()[-1].startswith(f"error: {out}: --out exists already")
    forced = timelyqa("review", "export", release, "--config", "toy", "--out", out, "--force", "--articles", articles)
    assert forced.returncode == 0, forced.stderr
    items = read_lines(out)
    items[0]["decision"], items[1]["decision"] = "accept", "perhaps"
    out.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    imported = timelyqa("review", "import", out, "--release", release)
    assert imported.returncode == 0, imported.stderr
    assert f"{out} line 2: bad_decision: id {items[1]['id']}: decision 'perhaps' is not accept or reject" \
        in imported.stderr
    assert "1 decisions taken (accept 1); 2 lines refused (bad_decision 1, undecided 1)" in imported.stdout
    assert "human_verified rows default 1, toy 1" in imported.stdout
    missing = timelyqa("review", "import", out, "--release", tmp_path / "nowhere")
    assert missing.returncode == 2 and "nowhere: not a release folder" in missing.stderr


def test_an_import_that_dies_before_its_swap_leaves_the_release_and_its_decisions_as_they_were(
        release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The decisions are written into the release built beside the old one, never into the old one first: an import
    # killed while it builds leaves a release whose reviews/ still matches its manifest and splits.
    before = {p.relative_to(release): p.read_bytes() for p in sorted(release.rglob("*")) if p.is_file()}

    def killed(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("publish.release.write_release", killed)
    with pytest.raises(KeyboardInterrupt):
        import_review(reviewed_file(tmp_path), release, now=REVIEWED)
    assert {p.relative_to(release): p.read_bytes() for p in sorted(release.rglob("*")) if p.is_file()} == before
