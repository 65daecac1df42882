"""The release folder: loads with `datasets` offline, rebuilds byte for byte, refuses bad source folders."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import polars as pl
import pytest
import yaml
from polars.testing import assert_frame_equal

from publish.release import build_release
from timelyqa.errors import ConfigError
from tests.runs import write_source
from timelyqa.record import (CANARY, RECORD_SCHEMA, Evidence, QARecord, Verification,
                             WikidataRecord, polars_schema, record_id, to_frame)
from timelyqa.split import assign_splits, group_key_for

CREATED = datetime(2026, 6, 2, 8, 30, tzinfo=UTC)
AS_OF = datetime(2026, 5, 31, tzinfo=UTC)
CHECK = Verification(method="sparql", query="ASK {}", endpoint="http://127.0.0.1:7878/query", result_count=1,
                     passed=True)
# Five months of Wikidata changes, several rows per anchoring entity; newest 2026-05-20, so M = May.
GROUPS: dict[str, list[date]] = {
    "Q1": [date(2026, 1, 5), date(2026, 1, 20)],
    "Q2": [date(2026, 2, 1), date(2026, 2, 28)],
    "Q3": [date(2026, 3, 1), date(2026, 3, 31)],
    "Q4": [date(2026, 4, 1), date(2026, 4, 2)],
    "Q5": [date(2026, 5, 2), date(2026, 5, 20)],
    "Q6": [date(2026, 3, 15), date(2026, 4, 10)],  # spans two months: test as a whole
}


def wikidata_row(entity: str, n: int, day: date, *, answer: str | None = None,
                 as_of: datetime = AS_OF) -> WikidataRecord:
    facts = (entity, f"P{n}", f"Q{1000 + n}")
    return WikidataRecord(
        id=record_id("wikidata", *facts), question=f"What is P{n} of {entity}?", answer=answer or f"answer {n}",
        answer_aliases=[f"alias {n}"], answer_type="entity",
        source="wikidata", level=f"L{n % 3 + 1}", event_date=day, as_of=as_of,
        evidence=[Evidence(url=f"https://www.wikidata.org/wiki/{entity}", title=entity, revision=str(n),
                           fetched_at=AS_OF, sha256="0" * 64)],
        verification=CHECK, generator=f"wikidata_l{n % 3 + 1}_v1", answer_id=facts[2], query_triples=[list(facts)],
        delta_triple=list(facts), sparql="SELECT ?x WHERE { wd:Q1 wdt:P1 ?x }",
    )


def wikidata_rows() -> list[WikidataRecord]:
    return [wikidata_row(entity, n, day) for entity, days in GROUPS.items() for n, day in enumerate(days)]


def news_rows() -> list[QARecord]:
    # Only old news: the news config has a train split and nothing else.
    return [QARecord(id=record_id("bulletin", str(n)), question=f"Who won match {n}?", answer=f"team {n}",
                     answer_type="entity",
                     source="bulletin", level="easy", event_date=date(2026, 1, 10 + n), as_of=AS_OF,
                     verification=CHECK, generator="bulletin_llm_v1") for n in range(3)]


@pytest.fixture
def sources(tmp_path: Path) -> list[Path]:
    return [write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata"),
            write_source(tmp_path / "bulletin", to_frame(news_rows(), QARecord), "bulletin")]


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """datasets.load_dataset, offline, with a cache of this test's own (datasets caches by folder path)."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)  # read at import time, which may have happened already
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    cache = tmp_path / "hf-cache"
    return lambda *args, **kwargs: datasets.load_dataset(*args, cache_dir=str(cache), **kwargs)


def expected_rows(model_rows: list[Any], model: type, source: str) -> pl.DataFrame:
    df = to_frame(model_rows, model).with_columns(pl.lit(CANARY).alias("canary"))
    return assign_splits(df, group_key=group_key_for(source), newest=date(2026, 5, 20)).sort("id")


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_each_source_config_loads_with_datasets_and_gives_back_its_rows(
        sources: list[Path], tmp_path: Path, load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    build_release(sources, release, created=CREATED)
    want = expected_rows(wikidata_rows(), WikidataRecord, "wikidata")
    for split in ("train", "validation", "test"):
        ds = load(str(release), "wikidata", split=split)
        assert "large" not in str(ds.features).lower()  # plain string/list features, as other datasets have
        got = ds.to_polars()
        assert got.columns == polars_schema(WikidataRecord).names()
        assert_frame_equal(got, want.filter(pl.col("split") == split))
    test_ids = set(load(str(release), "wikidata", split="test")["id"])
    assert test_ids == {r.id for r in wikidata_rows() if r.delta_triple[0] in {"Q4", "Q5", "Q6"}}


def test_default_config_holds_every_source_with_the_common_columns(
        sources: list[Path], tmp_path: Path, load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    build_release(sources, release, created=CREATED)
    everything = load(str(release))  # no config name: the card marks `default` as the default
    assert set(everything) == {"train", "validation", "test"}
    want = pl.concat([expected_rows(wikidata_rows(), WikidataRecord, "wikidata").select(RECORD_SCHEMA.names()),
                      expected_rows(news_rows(), QARecord, "bulletin")]).sort("id")
    for split, ds in everything.items():
        got = ds.to_polars()
        assert got.columns == RECORD_SCHEMA.names()
        assert_frame_equal(got, want.filter(pl.col("split") == split))
        assert set(got.get_column("canary")) == {CANARY}


def test_a_split_without_rows_is_left_out_and_the_card_says_so(
        sources: list[Path], tmp_path: Path, load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    manifest = build_release(sources, release, created=CREATED)
    news = load(str(release), "bulletin")
    assert set(news) == {"train"} and news["train"]["id"] == sorted(r.id for r in news_rows())
    with pytest.raises(ValueError, match='Unknown split "test"'):
        load(str(release), "bulletin", split="test")
    assert sorted(p.name for p in (release / "bulletin").iterdir()) == ["train-00000-of-00001.parquet"]
    assert manifest["counts"]["bulletin"] == {"train": {"easy": 3}, "validation": {}, "test": {}}
    assert "`bulletin` has no validation rows; `bulletin` has no test rows" in (release / "README.md").read_text()


def test_rebuilds_are_byte_identical_whatever_the_folder_order(sources: list[Path], tmp_path: Path) -> None:
    build_release(sources, tmp_path / "a", created=CREATED)
    build_release(list(reversed(sources)), tmp_path / "b", created=CREATED)
    a, b = file_hashes(tmp_path / "a"), file_hashes(tmp_path / "b")
    assert a == b
    assert "wikidata/test-00000-of-00001.parquet" in a and "README.md" in a and "manifest.json" in a


def test_manifest_records_versions_hashes_counts_and_sources(sources: list[Path], tmp_path: Path) -> None:
    release = tmp_path / "release"
    manifest = build_release(sources, release, created=CREATED)
    text = (release / "manifest.json").read_text()
    assert manifest.to_json() == text  # what build_release returns is what the file says, byte for byte
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"
    assert manifest["version"] == "v2026.06.02" and manifest["created"] == "2026-06-02T08:30:00+00:00"
    assert manifest["code_version"] == "0.1.0"
    data_files = {str(p.relative_to(release)) for p in release.rglob("*.parquet")}
    assert set(manifest["files"]) == data_files
    for name, info in manifest["files"].items():
        assert info["sha256"] == hashlib.sha256((release / name).read_bytes()).hexdigest()
        assert info["rows"] == pl.read_parquet(release / name).height
    assert manifest["counts"]["wikidata"] == {"train": {"L1": 2, "L2": 2}, "validation": {"L1": 1, "L2": 1},
                                              "test": {"L1": 3, "L2": 3}}
    assert manifest["split_dates"] == {"newest_event_date": "2026-05-20", "test_from": "2026-04-01",
                                       "validation_from": "2026-03-01"}
    wikidata = manifest["sources"]["wikidata"]
    assert wikidata["funnel"] == [{"stage": "entities", "count": 40}, {"stage": "candidates", "count": 20},
                                  {"stage": "verified", "count": 12}]
    assert wikidata["rejects"] == {"answer_in_question": 2, "answer_not_unique": 3}
    run = wikidata["runs"][0]
    assert run["questions_sha256"] == hashlib.sha256((sources[0] / "questions.parquet").read_bytes()).hexdigest()
    assert run["manifest"]["inputs"]["after"]["sha256"] == "ab" * 32
    # How long a run took is not what the release holds (the same inputs give the same release bytes): the timings
    # stay in the source folder's manifest only.
    assert "timings" not in run["manifest"] and run["manifest"]["counts"]
    assert build_release(sources, tmp_path / "v", version="v9", created=CREATED)["version"] == "v9"


def test_card_declares_configs_and_tells_users_what_they_need(sources: list[Path], tmp_path: Path) -> None:
    release = tmp_path / "release"
    build_release(sources, release, created=CREATED, repo_id="timelyqa/timelyqa")
    card = (release / "README.md").read_text()
    _, front, body = card.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["license"] == ["cc0-1.0", "other"] and meta["pretty_name"] == "TimelyQA"
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert configs["default"]["default"] is True and "default" not in configs["wikidata"]
    assert configs["wikidata"]["data_files"] == [
        {"split": s, "path": f"wikidata/{s}-00000-of-00001.parquet"} for s in ("train", "validation", "test")]
    assert configs["bulletin"]["data_files"] == [{"split": "train", "path": "bulletin/train-00000-of-00001.parquet"}]
    for needle in (CANARY, "| `wikidata` | L1 | 2 | 1 | 3 | 6 |", "| `answer_not_unique` | 3 |", "2026-04-01",
                   "`wikidata_l1_v1`", 'datasets.load_dataset("timelyqa/timelyqa", "wikidata", split="test")',
                   'row["event_date"] > cutoff', "CC0-1.0"):
        assert needle in body, needle


def test_two_runs_of_one_source_merge_to_one_row_per_id(tmp_path: Path, load: Callable[..., Any]) -> None:
    old = [wikidata_row("Q1", 0, date(2026, 5, 1), answer="old answer"), wikidata_row("Q2", 0, date(2026, 1, 1))]
    new = [wikidata_row("Q1", 0, date(2026, 5, 1), answer="new answer", as_of=datetime(2026, 6, 1, tzinfo=UTC)),
           wikidata_row("Q3", 0, date(2026, 3, 1))]
    runs = [write_source(tmp_path / "run1", to_frame(old, WikidataRecord), "wikidata"),
            write_source(tmp_path / "run2", to_frame(new, WikidataRecord), "wikidata",
                         as_of="2026-06-02T00:00:00+00:00")]
    manifest = build_release(runs, tmp_path / "release", created=CREATED)
    assert manifest["sources"]["wikidata"]["duplicates_dropped"] == 1
    assert manifest["sources"]["wikidata"]["funnel"][0] == {"stage": "entities", "count": 80}
    test = load(str(tmp_path / "release"), "wikidata", split="test")
    assert test["answer"] == ["new answer"]
    build_release(list(reversed(runs)), tmp_path / "again", created=CREATED)
    assert file_hashes(tmp_path / "release") == file_hashes(tmp_path / "again")


def test_rebuilding_in_place_removes_the_old_data_files_only(sources: list[Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Rows no longer leave by being absent from a run (they carry forward): shards are what a rebuild replaces.
    release = tmp_path / "release"
    monkeypatch.setattr("publish.release.ROWS_PER_SHARD", 5)
    build_release(sources, release, created=CREATED)
    (release / "notes.txt").write_text("kept\n")
    monkeypatch.setattr("publish.release.ROWS_PER_SHARD", 250_000)
    build_release(sources[:1], release, created=CREATED)
    assert sorted(p.name for p in (release / "wikidata").glob("test-*")) == ["test-00000-of-00001.parquet"]
    assert (release / "notes.txt").read_text() == "kept\n"
    data = {name: digest for name, digest in file_hashes(release).items() if name.endswith(".parquet")}
    fresh = file_hashes(build_once(sources, tmp_path / "fresh"))
    assert data == {name: digest for name, digest in fresh.items() if name.endswith(".parquet")}


def build_once(folders: list[Path], out: Path) -> Path:
    build_release(folders, out, created=CREATED)
    return out


def break_missing_questions(folder: Path) -> None:
    (folder / "questions.parquet").unlink()


def break_missing_manifest(folder: Path) -> None:
    (folder / "manifest.json").unlink()


def break_schema(folder: Path) -> None:
    pl.read_parquet(folder / "questions.parquet").drop("level").write_parquet(folder / "questions.parquet")


def break_manifest_keys(folder: Path) -> None:
    (folder / "manifest.json").write_text(json.dumps({"source": "wikidata"}))


def break_manifest_counts(folder: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    (folder / "manifest.json").write_text(json.dumps({**manifest, "counts": {"verified": "many"}}))


def change_questions_after_the_run(folder: Path) -> None:
    pl.read_parquet(folder / "questions.parquet").head(2).write_parquet(folder / "questions.parquet")


@pytest.mark.parametrize(("breakage", "message"), [
    (break_missing_questions, "no questions.parquet"),
    (break_missing_manifest, "no manifest.json"),
    (break_schema, "does not start with RECORD_SCHEMA: column 7 is 'event_date' Date, expected 'level' String"),
    (break_manifest_keys, "manifest.json: not a timelyqa manifest: as_of: Field required"),
    (break_manifest_counts, "manifest.json: not a timelyqa manifest: counts.verified: Input should be a valid integer"),
    (change_questions_after_the_run, "questions.parquet: not the file its manifest.json describes (sha256 differs)"),
])
def test_a_bad_source_folder_is_refused_naming_it(sources: list[Path], tmp_path: Path,
                                                  breakage: Callable[[Path], None], message: str) -> None:
    breakage(sources[0])
    with pytest.raises(ConfigError) as caught:
        build_release(sources, tmp_path / "release", created=CREATED)
    text = str(caught.value)
    assert text.startswith(f"{sources[0]}") and message in text and "\n" not in text
    assert not (tmp_path / "release").exists()  # refused before any work


def test_a_large_split_is_written_in_shards_that_load_as_one(sources: list[Path], tmp_path: Path,
                                                             load: Callable[..., Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("publish.release.ROWS_PER_SHARD", 5)
    release = tmp_path / "release"
    manifest = build_release(sources, release, created=CREATED)
    assert manifest["configs"]["wikidata"]["splits"]["test"] == [
        "wikidata/test-00000-of-00002.parquet", "wikidata/test-00001-of-00002.parquet"]
    assert load(str(release), "wikidata", split="test")["id"] == sorted(
        r.id for r in wikidata_rows() if r.delta_triple[0] in {"Q4", "Q5", "Q6"})


def test_a_release_without_questions_is_refused(tmp_path: Path) -> None:
    empty = write_source(tmp_path / "wikidata", to_frame([], WikidataRecord), "wikidata")
    with pytest.raises(ConfigError, match="no dated questions"):
        build_release([empty], tmp_path / "release", created=CREATED)
    assert not (tmp_path / "release").exists()


def test_two_runs_of_one_source_with_different_columns_are_refused(tmp_path: Path) -> None:
    frame = to_frame(wikidata_rows(), WikidataRecord)
    first = write_source(tmp_path / "run1", frame, "wikidata")
    second = write_source(tmp_path / "run2", frame.with_columns(pl.lit("x").alias("extra")), "wikidata",
                          as_of="2026-06-02T00:00:00+00:00")
    with pytest.raises(ConfigError, match=f"^{second}: questions.parquet has another schema than {first}"):
        build_release([first, second], tmp_path / "release", created=CREATED)


def test_a_rebuild_on_the_same_inputs_changes_no_byte(sources: list[Path], tmp_path: Path) -> None:
    release = tmp_path / "release"
    first = build_release(sources, release, created=CREATED)
    before = file_hashes(release)
    again = build_release(sources, release, created=datetime(2026, 6, 9, tzinfo=UTC))  # a week later
    assert again["version"] == first["version"] == "v2026.06.02"
    assert file_hashes(release) == before


def test_a_second_release_the_same_day_gets_a_suffix_and_a_changelog_entry(sources: list[Path],
                                                                           tmp_path: Path) -> None:
    release = tmp_path / "release"
    build_release(sources, release, created=CREATED)
    first_q1 = [r.id for r in wikidata_rows()[:2]]
    later = [wikidata_row("Q7", 9, date(2026, 6, 1)), *wikidata_rows()[2:]]  # Q1's two rows retired, one added
    newer = write_source(tmp_path / "wikidata-2", to_frame(later, WikidataRecord), "wikidata",
                         retired=dict.fromkeys(first_q1, "answer_changed"))
    second = build_release([newer, sources[1]], release, created=CREATED)
    third = build_release(sources, release, created=CREATED)  # Q1's rows come back as the runs' new rows
    assert (second["version"], third["version"]) == ("v2026.06.02.2", "v2026.06.02.3")
    assert second["previous_version"] == "v2026.06.02"
    # Q7 on 1 June makes June the newest month: Q4 and Q6 (April) move to validation, Q3 (March) to train.
    assert second["changes"]["added"] == {"wikidata": 1}
    assert second["changes"]["retired"] == {"wikidata": 2}
    assert second["changes"]["moved"] == {"test -> validation": 4, "validation -> train": 2}
    assert third["changes"]["added"] == {"wikidata": 2} and third["changes"]["retired"] == {}
    log = (release / "CHANGELOG.md").read_text()
    assert log.index("## v2026.06.02.3") < log.index("## v2026.06.02.2") < log.index("## v2026.06.02 ")
    assert "- 1 rows added (wikidata: 1)" in log and "- 2 rows retired (wikidata: 2); why: answer_changed 2" in log
    assert f"  - `{first_q1[0]}` (wikidata): answer_changed: released row {first_q1[0]}: answer_changed" in log
    assert "First release." in log


def test_the_previous_release_can_come_from_another_folder(sources: list[Path], tmp_path: Path) -> None:
    build_release(sources[:1], tmp_path / "v1", created=CREATED)
    manifest = build_release(sources, tmp_path / "v2", created=datetime(2026, 6, 9, tzinfo=UTC),
                             previous=tmp_path / "v1")
    assert manifest["version"] == "v2026.06.09"
    assert manifest["previous_version"] == "v2026.06.02"
    assert manifest["changes"]["added"] == {"bulletin": 3}


def test_card_states_features_and_sizes_that_match_the_files(sources: list[Path], tmp_path: Path,
                                                             load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    build_release(sources, release, created=CREATED)
    card = (release / "README.md").read_text()
    front = yaml.safe_load(card.split("---\n")[1])
    infos = {info["config_name"]: info for info in front["dataset_info"]}
    assert set(infos) == {"default", "wikidata", "bulletin"}
    for config, info in infos.items():
        loaded = load(str(release), config)
        assert {s["name"]: s["num_examples"] for s in info["splits"]} == {k: v.num_rows for k, v in loaded.items()}
        assert [f["name"] for f in info["features"]] == list(next(iter(loaded.values())).features)
    assert "## What changed" in card and "The first release." in card
    assert "compute_score" in card and "answer_reward" in card
