"""The `timelyqa` command as a user runs it: the installed entry point, real files, real exit codes."""

from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import datasets
import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
T0, T1 = DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2"


def timelyqa(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("timelyqa")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200"}
    return subprocess.run([str(exe), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_dump_stops_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = timelyqa("wikidata", "--before", tmp_path / "nope.json.gz", "--after", T1, "--out", out)
    assert proc.returncode == 2
    assert "nope.json.gz: no such file" in error_line(proc)
    assert not out.exists()


def test_a_file_that_is_not_a_dump_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.json.gz"
    with gzip.open(page, "wt") as f:
        f.write("<!doctype html><html><body>Not found</body></html>\n")
    proc = timelyqa("wikidata", "--before", T0, "--after", page, "--out", tmp_path / "out")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "page.json.gz" in line and "not a Wikidata JSON dump" in line
    assert not (tmp_path / "out").exists()


def test_an_endpoint_that_is_down_stops_before_any_work(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/query"
    proc = timelyqa("wikidata", "--before", T0, "--after", T1, "--out", tmp_path / "out", "--endpoint", url)
    assert proc.returncode == 2
    assert url in error_line(proc)
    assert not (tmp_path / "out").exists()


def test_a_wrong_setting_is_named(tmp_path: Path) -> None:
    proc = timelyqa("wikidata", "--before", T0, "--after", T1, "--out", tmp_path / "out", "--max-anchors", "0")
    assert proc.returncode == 2
    assert "setting max_anchors" in error_line(proc)


def test_release_of_a_folder_without_outputs_is_refused(tmp_path: Path) -> None:
    proc = timelyqa("release", "--from", tmp_path, "--out", tmp_path / "release")
    assert proc.returncode == 2
    assert str(tmp_path) in error_line(proc)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One `timelyqa demo` run shared by the tests that read what it wrote."""
    out = tmp_path_factory.mktemp("demo")
    proc = timelyqa("demo", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out / "release", proc


def test_demo_writes_a_release_that_datasets_loads(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, proc = demo
    assert f"load_dataset('{release}', 'wikidata', split='test')" in proc.stdout
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    test = datasets.load_dataset(str(release), "wikidata", split="test", cache_dir=str(tmp_path / "cache"))
    everything = datasets.load_dataset(str(release), "default", cache_dir=str(tmp_path / "cache"))
    assert test.num_rows > 0
    assert set(everything) == {"train", "validation", "test"}
    manifest = json.loads((release / "manifest.json").read_text())
    for config in ("default", "wikidata"):  # every config and split the release declares loads offline
        loaded = datasets.load_dataset(str(release), config, cache_dir=str(tmp_path / "cache"))
        assert {split: ds.num_rows for split, ds in loaded.items()} == {
            split: sum(manifest["files"][p]["rows"] for p in paths)
            for split, paths in manifest["configs"][config]["splits"].items()}
    assert {row["level"] for split in everything.values() for row in split} == {"L1", "L2", "L3"}
    assert all(row["verification"]["passed"] and row["verification"]["result_count"] == 1 for row in test)
    assert "funnel" in proc.stderr  # the funnel table is shown to the user


def test_export_commands_write_rows_the_rewards_accept(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                       tmp_path: Path) -> None:
    release = demo[0]
    from timelyqa.rewards import answer_reward, compute_score

    proc = timelyqa("export", "verl", release, "--out", tmp_path / "verl")
    assert proc.returncode == 0, proc.stderr
    verl = datasets.load_dataset("parquet", data_files=str(tmp_path / "verl" / "train.parquet"), split="train",
                                 cache_dir=str(tmp_path / "cache"))
    assert verl.num_rows > 0
    for row in verl:
        right = f"<answer>{row['extra_info']['answer']}</answer>"
        assert compute_score(row["data_source"], right, row["reward_model"]["ground_truth"], row["extra_info"]) == 1.0
        assert compute_score(row["data_source"], "<answer>no idea</answer>", row["reward_model"]["ground_truth"]) == 0.0
    proc = timelyqa("export", "trl", release, "--out", tmp_path / "trl", "--split", "test")
    assert proc.returncode == 0, proc.stderr
    trl = datasets.load_dataset("parquet", data_files=str(tmp_path / "trl" / "test.parquet"), split="train",
                                cache_dir=str(tmp_path / "cache"))
    assert answer_reward([f"<answer>{a}</answer>" for a in trl["answer"]], trl["answer"],
                         trl["answer_aliases"]) == [1.0] * trl.num_rows


def test_export_of_a_missing_config_names_it(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                             tmp_path: Path) -> None:
    proc = timelyqa("export", "verl", demo[0], "--out", tmp_path / "x", "--config", "news")
    assert proc.returncode == 2
    assert "no config 'news'" in error_line(proc)
