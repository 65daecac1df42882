"""A release that lives: week 2 starts from week 1, keeps what holds as stored, retires what a run found changed,
adds the week's rows, splits everything again, says so in its changelog, and rebuilds byte for byte."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from publish.release import build_release
from tests.runs import write_source
from tests.test_release import news_rows, wikidata_row, wikidata_rows
from timelyqa.errors import ConfigError
from timelyqa.record import QARecord, WikidataRecord, to_frame
from timelyqa.refresh import write_rechecked
from timelyqa.released import released_rows

WEEK1, WEEK2 = "2026-05-31T00:00:00+00:00", "2026-06-07T00:00:00+00:00"
ROWS = {(r.delta_triple[0], int(r.delta_triple[1][1:])): r for r in wikidata_rows()}
CHANGED = ROWS["Q5", 0].id  # its answer no longer holds in week 2
NEW_FACT = wikidata_row("Q5", 5, date(2026, 6, 2), answer="answer now")  # the change, as a row of its own
NEWS = wikidata_row("Q8", 8, date(2026, 6, 3))  # June: M moves from May to June
NOT_RECHECKED = {ROWS["Q1", 0].id, ROWS["Q1", 1].id}  # the week's run did not look at Q1


@pytest.fixture
def weeks(tmp_path: Path) -> dict[str, Path]:
    """Week 1's release from a Wikidata and a bulletin run; week 2's Wikidata run (no bulletin run in week 2)."""
    week1 = [write_source(tmp_path / "w1" / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata",
                          as_of=WEEK1),
             write_source(tmp_path / "w1" / "bulletin", to_frame(news_rows(), QARecord), "bulletin", as_of=WEEK1)]
    build_release(week1, tmp_path / "release-1")
    # Week 2's run: the new fact and a new question, and a row with a released id but another answer (a run
    # cannot rewrite a released row); it re-checked every released row but Q1's, and found Q5's first one changed.
    rewritten = ROWS["Q2", 0].model_copy(update={"answer": "rewritten"})
    run = write_source(tmp_path / "w2" / "wikidata", to_frame([NEW_FACT, NEWS, rewritten], WikidataRecord),
                       "wikidata", as_of=WEEK2, retired={CHANGED: "answer_changed"})
    write_rechecked(run, [r.id for r in wikidata_rows() if r.id not in NOT_RECHECKED | {CHANGED}])
    return {"release-1": tmp_path / "release-1", "run": run}


def config_rows(release: Path, config: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(p) for p in sorted((release / config).glob("*.parquet"))
                      if not p.name.startswith("human_verified")]).sort("id")


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_week_two_keeps_what_holds_as_stored_retires_the_change_and_adds_the_new_fact(
        weeks: dict[str, Path], tmp_path: Path) -> None:
    manifest = build_release([weeks["run"]], tmp_path / "release-2", previous=weeks["release-1"])
    assert (manifest["version"], manifest["previous_version"]) == ("v2026.06.07", "v2026.05.31")
    for config in ("wikidata", "bulletin"):
        before, after = config_rows(weeks["release-1"], config), config_rows(tmp_path / "release-2", config)
        kept = before.filter(pl.col("id") != CHANGED)
        # Every column as it was released but the split, which the rule sets again: no row edited in place.
        assert_frame_equal(after.join(kept.select("id"), on="id", how="semi").drop("split"), kept.drop("split"))
    wikidata = config_rows(tmp_path / "release-2", "wikidata")
    assert CHANGED not in wikidata["id"].to_list()
    assert dict(wikidata.select("id", "answer").iter_rows())[ROWS["Q2", 0].id] == ROWS["Q2", 0].answer
    new = wikidata.filter(pl.col("id") == NEW_FACT.id).row(0, named=True)
    assert (new["answer"], new["event_date"], new["split"]) == ("answer now", date(2026, 6, 2), "test")
    # M is June now: April's groups (Q4, Q6) age from test to validation, March's (Q3) from validation to train.
    split = dict(wikidata.select("id", "split").iter_rows())
    assert {split[ROWS["Q4", 0].id], split[ROWS["Q6", 1].id], split[ROWS["Q3", 0].id]} == {"validation", "train"}
    assert split[ROWS["Q4", 0].id] == "validation" and split[ROWS["Q3", 0].id] == "train"

    changes = manifest["changes"]
    assert changes["added"] == {"wikidata": 2} and changes["retired"] == {"wikidata": 1}
    assert changes["retired_rows"] == [{"id": CHANGED, "source": "wikidata", "reason": "answer_changed",
                                        "detail": f"released row {CHANGED}: answer_changed"}]
    assert changes["moved_by_source"] == {"wikidata": {"test -> validation": 4, "validation -> train": 2}}
    assert changes["carried_not_rechecked"] == {"bulletin": 3, "wikidata": 2}
    log = (tmp_path / "release-2" / "CHANGELOG.md").read_text()
    for line in ("## v2026.06.07 (2026-06-07)", "Since v2026.05.31:", "- 2 rows added (wikidata: 2)",
                 "- 1 rows retired (wikidata: 1); why: answer_changed 1",
                 f"  - `{CHANGED}` (wikidata): answer_changed: released row {CHANGED}: answer_changed",
                 "  - wikidata: 4 test -> validation, 2 validation -> train",
                 "- 5 rows carried, not re-checked this week (bulletin: 3, wikidata: 2)", "## v2026.05.31 "):
        assert line in log, line
    card = (tmp_path / "release-2" / "README.md").read_text()
    assert "3 released rows (3 carried from the previous release, 3 of them not re-checked this week)" in card
    assert "retired (answer_changed: 1)" in card and "no released row is ever edited" in card


def test_a_source_without_a_run_this_week_carries_all_its_rows(weeks: dict[str, Path], tmp_path: Path) -> None:
    manifest = build_release([weeks["run"]], tmp_path / "release-2", previous=weeks["release-1"])
    assert manifest["sources"]["bulletin"]["runs"] == [] and manifest["sources"]["bulletin"]["rows"] == 3
    assert manifest["counts"]["bulletin"]["train"] == {"easy": 3}
    assert released_rows(tmp_path / "release-2", "bulletin").height == 3
    assert released_rows(tmp_path / "release-2", "news").is_empty()


def test_rebuilding_a_week_from_the_same_inputs_gives_the_same_bytes(weeks: dict[str, Path], tmp_path: Path) -> None:
    build_release([weeks["run"]], tmp_path / "a", previous=weeks["release-1"])
    build_release([weeks["run"]], tmp_path / "b", previous=weeks["release-1"])
    shutil.copytree(weeks["release-1"], tmp_path / "in-place")
    build_release([weeks["run"]], tmp_path / "in-place")  # the previous release is the one in the folder
    a = file_hashes(tmp_path / "a")
    assert a == file_hashes(tmp_path / "b") == file_hashes(tmp_path / "in-place")
    assert {"manifest.json", "README.md", "CHANGELOG.md", "wikidata/test-00000-of-00001.parquet"} <= set(a)
    again = build_release([weeks["run"]], tmp_path / "a")  # the same week once more, in place: nothing changes
    assert again["version"] == "v2026.06.07" and file_hashes(tmp_path / "a") == a


def test_a_previous_release_that_is_not_one_is_refused(weeks: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"^--previous .*empty: not a release folder"):
        build_release([weeks["run"]], tmp_path / "release-2", previous=tmp_path / "empty")
    assert not (tmp_path / "release-2").exists()


@pytest.mark.slow
def test_datasets_loads_the_second_release(weeks: dict[str, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    load: Callable[..., Any] = lambda *a, **k: datasets.load_dataset(*a, cache_dir=str(tmp_path / "hf"), **k)  # noqa: E731
    build_release([weeks["run"]], tmp_path / "release-2", previous=weeks["release-1"])
    everything = load(str(tmp_path / "release-2"))
    assert set(everything) == {"train", "validation", "test"}
    assert sum(d.num_rows for d in everything.values()) == 12 - 1 + 2 + 3
    test = load(str(tmp_path / "release-2"), "wikidata", split="test")
    assert NEW_FACT.id in test["id"] and CHANGED not in test["id"]


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "wikidata"
YUKI = "Q1070321"  # Yuki Dubois: a defender (Q336286) at T1, a forward (Q280658) a week later


def week_two_dump(folder: Path) -> Path:
    """T1 with one edit a week later: Yuki Dubois's position changed from defender to forward."""
    import gzip  # noqa: PLC0415

    lines = gzip.decompress((FIXTURES / "t1.json.gz").read_bytes()).decode().splitlines()
    edited = [line.replace('"numeric-id":336286,"id":"Q336286"', '"numeric-id":280658,"id":"Q280658"')
              .replace('"modified":"2026-10-21T11:25:33Z"', '"modified":"2026-11-04T09:00:00Z"')
              .replace('"lastrevid":22', '"lastrevid":23') if f'"id":"{YUKI}"' in line else line for line in lines]
    assert edited != lines
    path = folder / "t2.json.gz"
    path.write_bytes(gzip.compress("\n".join(edited).encode() + b"\n", mtime=0))
    return path


@pytest.mark.slow  # two Wikidata runs, each verifying on a local Oxigraph
def test_wikidata_rows_are_asked_again_on_the_new_snapshot_and_the_change_enters_as_a_new_row(tmp_path: Path) -> None:
    import json  # noqa: PLC0415

    from timelyqa.wikidata import pipeline  # noqa: PLC0415

    pipeline.run(FIXTURES / "t0.json.gz", FIXTURES / "t1.json.gz", tmp_path / "week1")
    build_release([tmp_path / "week1"], tmp_path / "release-1")
    released = released_rows(tmp_path / "release-1", "wikidata")
    position = released.filter(pl.col("delta_triple").list.get(0) == YUKI, pl.col("delta_triple").list.get(1) == "P413",
                               pl.col("level") == "L1")
    assert position["answer"].to_list() == ["defender"]

    manifest = pipeline.run(FIXTURES / "t1.json.gz", week_two_dump(tmp_path), tmp_path / "week2",
                            previous=tmp_path / "release-1")
    refresh = pl.read_parquet(tmp_path / "week2" / "rejected.parquet").filter(pl.col("stage") == "refresh")
    why = {json.loads(item)["id"]: (reason, detail) for reason, detail, item in refresh.select("reason", "detail",
                                                                                              "item").iter_rows()}
    reason, detail = why[position["id"].item()]
    assert reason == "answer_changed" and "one other answer, http://www.wikidata.org/entity/Q280658" in detail
    assert {r for r, _ in why.values()} == {"answer_changed"}
    holds = pl.read_parquet(tmp_path / "week2" / "rechecked.parquet")["id"].to_list()
    assert manifest.counts["rechecked"] == released.height == len(holds) + len(why)
    assert manifest.counts["still_true"] == len(holds) and set(holds).isdisjoint(why)

    second = build_release([tmp_path / "week2"], tmp_path / "release-2", previous=tmp_path / "release-1")
    rows = released_rows(tmp_path / "release-2", "wikidata")
    assert position["id"].item() not in rows["id"].to_list()
    forward = rows.filter(pl.col("delta_triple") == pl.lit([YUKI, "P413", "Q280658"]), pl.col("level") == "L1")
    assert (forward["answer"].to_list(), forward["event_date"].to_list()) == (["forward"], [date(2026, 11, 4)])
    kept = released.filter(pl.col("id").is_in(holds))
    assert_frame_equal(rows.join(kept.select("id"), on="id", how="semi").drop("split").sort("id"),
                       kept.drop("split").sort("id"))
    assert second["changes"]["retired_why"] == {"answer_changed": len(why)}
    assert second["changes"]["carried_not_rechecked"] == {}

    # The same week again in the same folder without a release to re-check: last run's verdicts do not pass for its.
    again = pipeline.run(FIXTURES / "t1.json.gz", week_two_dump(tmp_path), tmp_path / "week2")
    assert not (tmp_path / "week2" / "rechecked.parquet").exists() and "rechecked" not in again.counts
    assert pl.read_parquet(tmp_path / "week2" / "rejected.parquet").filter(pl.col("stage") == "refresh").height == 0
