"""The release gate: a release below its pinned floors is refused with every floor it missed, and the release
already in the folder stays byte for byte; a floors file that is wrong stops the command before any work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from publish.gate import Floors
from publish.release import build_release
from tests.runs import write_source
from tests.test_release import CREATED, news_rows, wikidata_rows
from timelyqa.errors import ConfigError, GateFailed
from timelyqa.record import QARecord, WikidataRecord, to_frame

ROOT = Path(__file__).resolve().parent.parent


def folders(tmp_path: Path, *, gated: int = 18) -> list[Path]:
    """Wikidata (12 rows; its quality gate passed `gated` candidates and sent back 2 as `answer_in_question`) and a
    bulletin source (3 rows) whose funnel counts 40 entities and 20 candidates."""
    return [write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata",
                         counts={"entities": 40, "candidates": 20, "questions_gated": gated, "verified": 12}),
            write_source(tmp_path / "bulletin", to_frame(news_rows(), QARecord), "bulletin")]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_release_holding_its_floors_is_written(tmp_path: Path) -> None:
    floors = Floors(rows={"default": 15, "wikidata": 12}, quality_dropped={"wikidata": 0.1},
                    ratios={"bulletin": {"candidates/entities": 0.5}})
    manifest = build_release(folders(tmp_path), tmp_path / "release", created=CREATED, floors=floors)
    assert sum(manifest["counts"]["wikidata"]["test"].values()) > 0


def test_a_release_below_its_floors_is_refused_naming_each_and_the_old_release_stays(tmp_path: Path) -> None:
    out = tmp_path / "release"
    build_release(folders(tmp_path / "week1"), out, created=CREATED)
    before = snapshot(out)
    floors = Floors(rows={"default": 16, "bulletin": 3}, quality_dropped={"wikidata": 0.05},
                    ratios={"bulletin": {"candidates/entities": 0.6, "verified/absent": 0.1}})
    with pytest.raises(GateFailed) as failed:
        build_release(folders(tmp_path / "week2", gated=8), out, created=CREATED, floors=floors)
    message = str(failed.value)
    assert "\n" not in message
    assert "default has 15 rows, floor 16" in message
    assert "bulletin has" not in message  # 3 rows: that floor holds
    assert "wikidata's question-quality gate sent back 20% of its candidates, at most 5%" in message
    assert "bulletin candidates/entities is 50%, floor 60%" in message
    assert "bulletin counted no absent" in message
    assert snapshot(out) == before


@pytest.mark.parametrize(("text", "says"), [
    ("rows: {default: many}\n", "rows.default: Input should be a valid integer"),
    ("quality_dropped: {news: 1.5}\n", "quality_dropped: news: a share from 0 to 1, not 1.5"),
    ("ratios: {news: {kept: 0.5}}\n", "no ratio of two funnel counts"),
    ("rowz: {default: 1}\n", "rowz: Extra inputs are not permitted"),
    ("rows: [\n", "cannot read it (ParserError)"),
])
def test_a_wrong_floors_file_is_one_line_naming_the_file_and_field(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "floors.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as wrong:
        Floors.load(path)
    assert str(wrong.value).startswith(f"--floors {path}: ") and says in str(wrong.value), str(wrong.value)


@pytest.mark.slow  # two runs of the installed command
def test_the_command_exits_1_below_the_floors_and_2_on_a_wrong_file(tmp_path: Path) -> None:
    sources = folders(tmp_path)
    (tmp_path / "floors.yaml").write_text("rows: {wikidata: 100}\n")
    (tmp_path / "wrong.yaml").write_text("rows: {wikidata: -}\n")
    command = [str(Path(sys.executable).with_name("timelyqa")), "release",
               *(a for s in sources for a in ("--from", str(s)))]
    below = subprocess.run([*command, "--out", str(tmp_path / "r"), "--floors", str(tmp_path / "floors.yaml")],
                           capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert below.returncode == 1
    assert below.stderr.strip().splitlines() == ["error: release below its floors: wikidata has 12 rows, floor 100"]
    assert not (tmp_path / "r").exists()
    wrong = subprocess.run([*command, "--out", str(tmp_path / "r"), "--floors", str(tmp_path / "wrong.yaml")],
                           capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert wrong.returncode == 2 and "wrong.yaml: rows.wikidata: Input should be a valid integer" in wrong.stderr
