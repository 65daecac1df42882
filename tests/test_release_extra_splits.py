"""The release's extra splits and refresh rule, on a news-like toy source: longitudinal rows the source sets aside
stay aside, and a source registered with `refresh_to_train` has its previous validation and test moved to train."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import polars as pl
import pytest
import yaml

from publish.release import build_release
from tests import toy_source
from tests.runs import write_source
from tests.toy_source import ToyRecord
from timelyqa.record import Evidence, Verification, record_id, to_frame
from timelyqa.sources import register, unregister

CREATED = datetime(2026, 6, 2, 8, 30, tzinfo=UTC)
LATER = datetime(2026, 7, 2, 8, 30, tzinfo=UTC)
AS_OF = datetime(2026, 5, 31, tzinfo=UTC)
CHECK = Verification(method="stated", query="", endpoint="articles.parquet", result_count=1, passed=True)


def toy_row(city: str, day: date, n: int = 0, *, split: str | None = None) -> ToyRecord:
    """One question about a city's event (the city is the group: the event that never crosses splits)."""
    return ToyRecord(id=record_id("toy", city, str(n)), question=f"Who became mayor {n} of {city}?",
                     answer=f"Mayor {city}{n}", answer_type="entity",
                     source="toy", level="easy", event_date=day, as_of=AS_OF, split=split,
                     evidence=[Evidence(url=f"http://127.0.0.1:8000/{city}/{n}.html", title=f"{city} {n}")],
                     verification=CHECK, generator="toy_mayor_v1", city=city)


# Newest 2026-05-20, so M = May: test from April, validation March, train before.
FIRST = [toy_row("Ashford", date(2026, 1, 10)),  # train
         toy_row("Bexley", date(2026, 3, 5)),  # validation
         toy_row("Crail", date(2026, 4, 8)),  # test
         toy_row("Dunmore", date(2026, 5, 2)), toy_row("Dunmore", date(2026, 5, 20), 1),  # test
         toy_row("Lisle", date(2026, 4, 9), split="longitudinal"),  # may change: set aside by the source
         toy_row("Lisle", date(2026, 1, 9), 1, split="longitudinal")]
# A month later (June): a new event, and a new question on Crail's April event (found late).
SECOND = [*FIRST, toy_row("Elgin", date(2026, 6, 3)), toy_row("Crail", date(2026, 4, 8), 1)]
ids = {(r.city, int(r.question.split()[3])): r.id for r in SECOND}


@pytest.fixture
def news_like() -> Iterator[None]:
    """The toy source registered as a news-like source: its registry entry asks for the refresh rule."""
    register(replace(toy_source.SOURCE, refresh_to_train=True))
    yield
    unregister("toy")


@pytest.fixture
def plain() -> Iterator[None]:
    register(toy_source.SOURCE)
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


def source(folder: Path, rows: list[ToyRecord]) -> Path:
    return write_source(folder, to_frame(rows, ToyRecord), "toy")


def rows(release: Path, config: str = "toy") -> pl.DataFrame:
    return pl.concat([pl.read_parquet(path) for path in sorted((release / config).glob("*.parquet"))])


def splits_by_city(release: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for city, split in rows(release).select("city", "split").iter_rows():
        found.setdefault(city, set()).add(split)
    return found


def split_of_ids(release: Path, config: str) -> dict[str, str]:
    return dict(rows(release, config).select("id", "split").iter_rows())


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_longitudinal_rows_load_as_their_own_split_in_the_source_and_default_configs(
        news_like: None, tmp_path: Path, load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    manifest = build_release([source(tmp_path / "toy", FIRST)], release, created=CREATED)
    longitudinal = {ids["Lisle", 0], ids["Lisle", 1]}
    for config in ("toy", "default"):
        got = load(str(release), config, split="longitudinal")
        assert set(got["id"]) == longitudinal and set(got["split"]) == {"longitudinal"}
        everything = load(str(release), config)
        assert set(everything) == {"train", "validation", "test", "longitudinal"}
        for split in ("train", "validation", "test"):
            assert longitudinal.isdisjoint(everything[split]["id"]), split
    # Lisle's April row would be test by the rule; the source's word keeps it out of the evaluation splits.
    assert set(load(str(release), "toy", split="test")["id"]) == {ids["Crail", 0], ids["Dunmore", 0],
                                                                   ids["Dunmore", 1]}
    assert manifest["counts"]["toy"]["longitudinal"] == {"easy": 2}
    card = (release / "README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    toy = next(c for c in meta["configs"] if c["config_name"] == "toy")
    assert {"split": "longitudinal", "path": "toy/longitudinal-00000-of-00001.parquet"} in toy["data_files"]
    assert "| config | level | train | validation | test | longitudinal | total |" in card
    assert "| `toy` | **all** | 1 | 1 | 3 | 2 | 7 |" in card
    assert "- `longitudinal` (`default`: 2 rows, `toy`: 2 rows): pairs whose answer may change over time" in card
    assert 'datasets.load_dataset("path/or/repo_id", "toy", split="longitudinal")' in card
    assert all(entry["split"] != "human_verified" for c in meta["configs"] for entry in c["data_files"])


def test_a_source_cannot_claim_rows_are_human_verified(news_like: None, tmp_path: Path) -> None:
    claimed = [row.model_copy(update={"split": "human_verified"}) for row in FIRST[:3]]
    manifest = build_release([source(tmp_path / "toy", claimed)], tmp_path / "release", created=CREATED)
    assert "human_verified" not in manifest["configs"]["toy"]["splits"]
    # Newest is Crail's 8 April: March and April are test, the source's claim changes nothing.
    assert manifest["counts"]["toy"] == {"train": {"easy": 1}, "validation": {}, "test": {"easy": 2}}


def test_a_refresh_moves_the_previous_validation_and_test_to_train(news_like: None, tmp_path: Path,
                                                                   load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    build_release([source(tmp_path / "toy-may", FIRST)], release, created=CREATED)
    second = build_release([source(tmp_path / "toy-june", SECOND)], release, created=LATER)
    # June is newest: by the window alone Crail (April) would be validation and Dunmore (May) test. The rule sends
    # the previous validation and test to train, Crail's new row with its event; only June's news is test now.
    assert splits_by_city(release) == {"Ashford": {"train"}, "Bexley": {"train"}, "Crail": {"train"},
                                       "Dunmore": {"train"}, "Elgin": {"test"}, "Lisle": {"longitudinal"}}
    assert split_of_ids(release, "default") == split_of_ids(release, "toy")
    assert load(str(release), "toy", split="test")["id"] == [ids["Elgin", 0]]
    assert second["changes"]["refreshed"] == {"toy": {"test -> train": 3, "validation -> train": 1}}
    assert second["previous_version"] == "v2026.06.02" and second["version"] == "v2026.07.02"
    log = (release / "CHANGELOG.md").read_text()
    assert ("- refresh: toy: 1 rows moved validation -> train, 3 rows moved test -> train (configs `toy` and "
            "`default`; the previous validation and test go to train, LiveNewsBench's rule)") in log
    card = (release / "README.md").read_text()
    assert "Refresh: `toy` moved 3 rows test -> train, 1 rows validation -> train." in card
    assert "Refresh rule (`toy`; LiveNewsBench's, any period)" in card


def test_without_the_registry_flag_rows_move_with_the_window(plain: None, tmp_path: Path) -> None:
    release = tmp_path / "release"
    build_release([source(tmp_path / "toy-may", FIRST)], release, created=CREATED)
    second = build_release([source(tmp_path / "toy-june", SECOND)], release, created=LATER)
    assert splits_by_city(release) == {"Ashford": {"train"}, "Bexley": {"train"}, "Crail": {"validation"},
                                       "Dunmore": {"test"}, "Elgin": {"test"}, "Lisle": {"longitudinal"}}
    assert second["changes"]["refreshed"] == {}
    assert "- refresh:" not in (release / "CHANGELOG.md").read_text()


def test_rows_once_in_train_stay_there_when_the_month_does_not_move(news_like: None, tmp_path: Path) -> None:
    release = tmp_path / "release"
    build_release([source(tmp_path / "toy-may", FIRST)], release, created=CREATED)
    build_release([source(tmp_path / "toy-june", SECOND)], release, created=LATER)
    more = [*SECOND, toy_row("Fyvie", date(2026, 6, 20))]  # still June: no refresh
    third = build_release([source(tmp_path / "toy-june-2", more)], release, created=LATER)
    assert splits_by_city(release)["Dunmore"] == {"train"}, "May is in the test window, but it was trained on"
    assert splits_by_city(release)["Fyvie"] == {"test"}
    assert third["changes"]["refreshed"] == {} and third["changes"]["moved"] == {}
    assert third["version"] == "v2026.07.02.2"


def test_rebuilding_a_refreshed_release_changes_no_byte(news_like: None, tmp_path: Path) -> None:
    release = tmp_path / "release"
    build_release([source(tmp_path / "toy-may", FIRST)], release, created=CREATED)
    june = source(tmp_path / "toy-june", SECOND)
    build_release([june], release, created=LATER)
    before = file_hashes(release)
    again = build_release([june], release, created=datetime(2026, 7, 9, tzinfo=UTC))
    assert again["version"] == "v2026.07.02" and file_hashes(release) == before


def test_the_refresh_reads_the_previous_release_from_another_folder(news_like: None, tmp_path: Path) -> None:
    build_release([source(tmp_path / "toy-may", FIRST)], tmp_path / "v1", created=CREATED)
    second = build_release([source(tmp_path / "toy-june", SECOND)], tmp_path / "v2", created=LATER,
                           previous=tmp_path / "v1")
    assert second["changes"]["refreshed"] == {"toy": {"test -> train": 3, "validation -> train": 1}}
    assert splits_by_city(tmp_path / "v2")["Dunmore"] == {"train"}
