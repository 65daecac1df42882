"""The demo is dated by its inputs, not the wall clock: run on two different days it writes the same release, byte for
byte. It also says what it is doing before each slow step and what it wrote at the end, and its card's live-resolve
command runs as written.

The days are faked with Debian's faketime (libfaketime through LD_PRELOAD), which every process the demo starts
inherits, the crawl processes and Chromium included; `make test` installs it. The demo uses its fixed ports
47311-47313: run this file under `flock /work/ports.lock` beside other demo tests.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

pytestmark = pytest.mark.slow  # the demo twice: every source's pipeline, three crawls with Chromium

ROOT = Path(__file__).resolve().parent.parent
FAKETIME = shutil.which("faketime") or "/usr/bin/faketime"
DAYS = ("2027-03-01 12:00:00", "2031-07-15 23:30:00")
"""Two days far apart, neither the inputs' own."""
DEMO_MOMENT = "2026-11-16T09:00:00+00:00"
"""The newest moment the bundled inputs carry (the official bundle's last check), which dates the demo."""
EXE = Path(sys.executable).with_name("timelyqa")


def on_day(day: str, *argv: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200"}
    env.pop("TIMELYQA_CLOCK", None)  # the demo sets its own; nothing may leak in from here
    return subprocess.run([FAKETIME, day, *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env=env)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """The demo run on each day into the same folder (the manifest names its input paths); the first day's folder
    moved aside. Returns the first day's folder, the second's, and the second run."""
    assert Path(FAKETIME).is_file(), f"{FAKETIME}: install Debian's faketime (make test does)"
    tmp = tmp_path_factory.mktemp("days")
    out = tmp / "demo"
    first = on_day(DAYS[0], EXE, "demo", "--out", out)
    assert first.returncode == 0, first.stderr[-3000:]
    out.rename(tmp / "first")
    second = on_day(DAYS[1], EXE, "demo", "--out", out)
    assert second.returncode == 0, second.stderr[-3000:]
    return tmp / "first", out, second


def test_faketime_moves_the_clock_of_every_process_the_demo_starts() -> None:
    """What the comparison below rests on: a grandchild process reads the faked day, not today."""
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import datetime; print(datetime.date.today())'])"
    proc = on_day(DAYS[1], sys.executable, "-c", child)
    assert proc.stdout.strip() == DAYS[1][:10], proc.stderr


def test_the_demo_gives_the_same_release_byte_for_byte_on_any_day(demos: tuple[Path, Path, object]) -> None:
    first, second, _ = demos
    a, b = files(first / "release"), files(second / "release")
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []
    manifest = json.loads(b["manifest.json"])
    assert (manifest["version"], manifest["created"]) == ("v2026.11.16", DEMO_MOMENT)
    assert manifest["split_dates"]["newest_event_date"] == "2026-11-16"
    # Nothing in the release took a faked day: every row's moment and fetch time is the inputs' own.
    rows = pl.concat([pl.read_parquet(second / "release" / "default" / f"{split}-00000-of-00001.parquet")
                      for split in ("train", "validation", "test")])
    fetched = rows.select(pl.col("evidence").list.eval(pl.element().struct.field("fetched_at"))).explode("evidence")
    assert rows["as_of"].max().isoformat() == fetched["evidence"].max().isoformat() == DEMO_MOMENT
    said = b["manifest.json"].decode() + b["CHANGELOG.md"].decode() + b["README.md"].decode()
    assert not [day for day in DAYS if day[:10] in said or day[:10].replace("-", ".") in said]


def test_the_demo_says_each_step_before_it_runs_and_what_it_wrote_at_the_end(
        demos: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    _, out, proc = demos
    lines = proc.stdout.splitlines()
    names = ["wikidata", "wikipedia", "site_tree", "news", "official_site"]
    for number, name in enumerate(names, start=1):
        header = next(i for i, line in enumerate(lines) if line.startswith(f"step {number}/6: {name} from data/demo/"))
        done = lines.index(next(line for line in lines if line.endswith(f"questions in {out / name / 'questions.parquet'}")))
        assert header < done  # said before the step's slow work, not after
    assert f"step 6/6: release of 5 sources into {out / 'release'}" in lines
    assert f"dated {DEMO_MOMENT}" in lines[0]

    # The summary: the release, every config with its rows per split as the manifest counts them, a load line that
    # runs as printed.
    manifest = json.loads((out / "release" / "manifest.json").read_text())
    start = lines.index(next(line for line in lines if line.startswith("release v2026.11.16 in ")))
    assert "synthetic demo data" in lines[start]
    assert lines[start + 1].split() == ["config", "train", "validation", "test"]
    table = {row.split()[0]: [int(n) for n in row.split()[1:]] for row in lines[start + 2:start + 2 + len(manifest["counts"])]}
    assert table == {config: [sum(counts.get(s, {}).values()) for s in ("train", "validation", "test")]
                     for config, counts in manifest["counts"].items()}
    load = next(line.strip() for line in lines[start:] if line.strip().startswith("python -c"))
    shown = subprocess.run(shlex.split(load.replace("python", sys.executable, 1)), capture_output=True, text=True,
                           timeout=300, env={**os.environ, "HF_DATASETS_OFFLINE": "1",
                                             "HF_DATASETS_CACHE": str(tmp_path / "cache")})
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert f"num_rows: {table['default'][0]}" in shown.stdout
    assert lines[-1] == f"the card: {out / 'release' / 'README.md'}"


def test_the_cards_live_resolve_command_runs_as_written(demos: tuple[Path, Path, object], tmp_path: Path) -> None:
    """From the release's folder, the command the card gives answers every live test row; only the port moves (the
    test serves the demo's sites on a free one, as the card says to serve them)."""
    from timelyqa.localsite import LocalSite

    _, out, _ = demos
    release = out / "release"
    card = (release / "README.md").read_text()
    part = card[card.index("## Resolving the live questions"):]
    command = re.search(r"```\n(timelyqa live resolve .*)\n```", part).group(1)
    assert "--var site=http://127.0.0.1:47313" in command and "--allow-host" in part
    assert "--directory data/demo/official/site" in part
    argv = shlex.split(command)
    with LocalSite(ROOT / "data" / "demo" / "official" / "site") as site:
        argv = [str(EXE), *(a.replace(":47313", f":{site.port}") for a in argv[1:])]
        argv[argv.index("--out") + 1] = str(tmp_path / "answers")
        proc = subprocess.run(argv, cwd=release, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    answers = pl.read_parquet(tmp_path / "answers" / "answers.parquet")
    live = pl.read_parquet(release / "official_site" / "test-00000-of-00001.parquet")
    assert set(answers["status"]) == {"ok"} and answers.height == live["recipe_id"].n_unique() >= 2
