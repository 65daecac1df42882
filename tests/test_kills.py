"""Kills and re-runs: a release killed anywhere leaves the old release or the new one, byte for byte, and the next
run finishes it; readers trust no file whose sha256 differs from its manifest's; Oxigraph dies with its parent."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from publish.release import build_release
from publish.review import Decision, write_decisions
from tests.runs import write_source
from tests.test_release import news_rows, wikidata_row, wikidata_rows
from timelyqa.cli import app
from timelyqa.record import QARecord, WikidataRecord, to_frame

ROOT = Path(__file__).resolve().parent.parent
WEEK1, WEEK2 = "2026-05-31T00:00:00+00:00", "2026-06-07T00:00:00+00:00"
KILLS = 40
SEED = 13

# The killed runs are `timelyqa release` itself (timelyqa.cli:app with the command's arguments), each in a process
# of its own forked from a server that imported the libraries once: importing `datasets` takes 3 s, the release
# itself 1 s, so a fresh interpreter per kill would spend three quarters of every kill before the first byte is
# written. The server touches no polars before it forks (its thread pool does not survive a fork).
FORK_SERVER = r"""
import json, os, sys
import datasets, polars, publish.release, publish.card, publish.review
from timelyqa.cli import app
from timelyqa.sources import sources
sources()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    if "run" in ask:
        pid = os.fork()
        if pid == 0:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            try:
                app(ask["run"])
            except SystemExit as exc:
                os._exit(exc.code if isinstance(exc.code, int) else 1)
            os._exit(0)
        print(json.dumps({"pid": pid}), flush=True)
    else:
        _, status = os.waitpid(ask["wait"], 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class ForkServer:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "DO_NOT_TRACK": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", FORK_SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert self._read() == {"ready": True}

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def ask(self, **question: object) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(question) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def contents(folder: Path) -> dict[str, bytes]:
    """Every file of a folder by its path, with its bytes (a symlink: its target)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[rel] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def describe(survivor: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes]) -> str:
    def diff(ref: dict[str, bytes]) -> list[str]:
        return sorted(name for name in set(ref) | set(survivor) if ref.get(name) != survivor.get(name))
    return f"differs from the old release in {diff(old)[:5]}, from the new one in {diff(new)[:5]}"


@pytest.fixture
def weeks(tmp_path: Path) -> dict[str, Path]:
    """The old release (week 1, with a review decision, a .git folder, a symlink and a note of the user's beside
    its data) and week 2's Wikidata run that makes the new one."""
    week1 = [write_source(tmp_path / "w1" / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata",
                          as_of=WEEK1),
             write_source(tmp_path / "w1" / "bulletin", to_frame(news_rows(), QARecord), "bulletin", as_of=WEEK1)]
    old = tmp_path / "old"
    build_release(week1, old)
    row = pl.read_parquet(old / "wikidata" / "test-00000-of-00001.parquet").row(0, named=True)
    write_decisions(old, {row["id"]: Decision(row["id"], "wikidata", "accept", row["question"], row["answer"],
                                              "2026-06-01T00:00:00+00:00")})
    (old / ".git" / "objects" / "ab").mkdir(parents=True)
    (old / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (old / ".git" / "objects" / "ab" / "cdef").write_bytes(b"\x78\x01blob")
    (old / "notes.txt").write_text("kept beside the release\n")
    (old / "LATEST").symlink_to("manifest.json")
    run = write_source(tmp_path / "w2" / "wikidata", to_frame([wikidata_row("Q8", 8, date(2026, 6, 3))],
                                                              WikidataRecord), "wikidata", as_of=WEEK2)
    return {"old": old, "run": run}


@pytest.mark.slow
def test_a_release_killed_at_random_points_leaves_the_old_or_the_new_and_a_rerun_finishes_it(
        weeks: dict[str, Path], tmp_path: Path) -> None:
    server = ForkServer()
    try:
        times = []
        for attempt in range(2):  # the faster of two whole runs: the first may wait for the disk
            new_ref = tmp_path / f"new{attempt}"
            shutil.copytree(weeks["old"], new_ref, symlinks=True)
            started = time.perf_counter()
            pid = server.ask(run=["release", "--from", str(weeks["run"]), "--out", str(new_ref)])["pid"]
            assert server.ask(wait=pid) == {"code": 0}
            times.append(time.perf_counter() - started)
        runtime = min(times)
        assert contents(tmp_path / "new0") == contents(new_ref)
        old, new = contents(weeks["old"]), contents(new_ref)
        assert old != new and json.loads(new["manifest.json"])["version"] == "v2026.06.07"
        # What is no data file of the old release is carried into the new one as it was.
        assert all(new[name] == old[name] for name in (".git/HEAD", ".git/objects/ab/cdef", "notes.txt", "LATEST"))
        assert any(name.startswith("wikidata/human_verified") for name in new)  # the review decision carried
        rng = random.Random(SEED)
        outcomes = {"old": 0, "new": 0, "mid_build": 0}
        for kill in range(KILLS):
            place = tmp_path / f"kill{kill}"
            out = place / "release"
            shutil.copytree(weeks["old"], out, symlinks=True)
            pid = server.ask(run=["release", "--from", str(weeks["run"]), "--out", str(out)])["pid"]
            time.sleep(rng.uniform(0, 1.25 * runtime))  # a few after it ends: a whole run is a survivor too
            os.kill(pid, 9)
            server.ask(wait=pid)
            survivor = contents(out)
            assert survivor in (old, new), f"kill {kill}: {describe(survivor, old, new)}"
            outcomes["old" if survivor == old else "new"] += 1
            outcomes["mid_build"] += any(p.name != "release" for p in place.iterdir())
            rerun = CliRunner().invoke(app, ["release", "--from", str(weeks["run"]), "--out", str(out)])
            assert rerun.exit_code == 0, rerun.output
            assert contents(out) == new, f"rerun after kill {kill}: {describe(contents(out), old, new)}"
            assert [p.name for p in place.iterdir()] == ["release"]  # the killed run's leftovers are gone
            shutil.rmtree(place)
    finally:
        server.close()
    print(f"\n{KILLS} kills of `timelyqa release` over a release (seed {SEED}, runtime {runtime:.1f} s): "
          f"{outcomes['old']} left the old release, {outcomes['new']} the new one, {outcomes['mid_build']} fell "
          "while a new one was being written beside it; every rerun gave the new release")
    assert outcomes["mid_build"] >= 5  # the kills did fall while files were being written


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # what a kill mid-write in place left


def other_rows(path: Path) -> None:
    pl.read_parquet(path).head(1).write_parquet(path)  # a whole parquet file, not the one the release made


def remove(path: Path) -> None:
    path.unlink()


@pytest.mark.parametrize("breakage", [truncate, other_rows, remove])
def test_no_changelog_is_made_from_a_release_whose_file_differs_from_its_manifest(
        weeks: dict[str, Path], breakage: object) -> None:
    out, broken = weeks["old"], weeks["old"] / "wikidata" / "train-00000-of-00001.parquet"
    breakage(broken)  # type: ignore[operator]
    before = contents(out)
    result = CliRunner().invoke(app, ["release", "--from", str(weeks["run"]), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {broken}: ") and "Traceback" not in result.output
    assert ("missing" if breakage is remove else "sha256 differs") in lines[0]
    assert contents(out) == before  # nothing written: no wrong changelog, no half release


def test_previous_rows_come_only_from_files_the_manifest_records(weeks: dict[str, Path]) -> None:
    from timelyqa.errors import ConfigError  # noqa: PLC0415
    from timelyqa.released import released_rows  # noqa: PLC0415

    assert released_rows(weeks["old"], "wikidata").height == len(wikidata_rows())
    other_rows(weeks["old"] / "wikidata" / "test-00000-of-00001.parquet")
    with pytest.raises(ConfigError, match=r"wikidata/test-00000-of-00001.parquet: not the file .*\(sha256 differs\)"):
        released_rows(weeks["old"], "wikidata")  # `--previous` of a source run
    run = weeks["run"]
    pl.read_parquet(run / "questions.parquet").clear().write_parquet(run / "questions.parquet")
    with pytest.raises(ConfigError, match=r"questions.parquet: not the file its manifest.json describes"):
        released_rows(run, "wikidata")  # `--previous` may name an earlier run's folder too


def test_a_run_killed_in_a_reused_folder_is_never_taken_for_a_finished_one(tmp_path: Path) -> None:
    from timelyqa.errors import ConfigError  # noqa: PLC0415
    from timelyqa.refresh import finish_refresh, write_rechecked  # noqa: PLC0415
    from timelyqa.stages import StageWriter  # noqa: PLC0415

    # Week 1 finished in `run`, with what it re-checked recorded in its manifest.
    run, ids = tmp_path / "run", [r.id for r in wikidata_rows()]
    writer = StageWriter("wikidata", run, work=tmp_path / "work1")
    writer.keep_frame(to_frame(wikidata_rows(), WikidataRecord))
    write_rechecked(run, ids[:4])
    manifest = writer.finish(as_of=WEEK1, inputs={}, settings={})
    assert set(manifest.files) == {"questions.parquet", "rejected.parquet", "rechecked.parquet"}
    build_release([run], tmp_path / "release")  # a finished run is taken
    # Week 2 in the same folder, killed once it put this week's re-checks beside week 1's questions.
    write_rechecked(tmp_path / "work2", ids[4:])
    finish_refresh(tmp_path / "work2", run)
    with pytest.raises(ConfigError, match=f"^{run}: no manifest.json"):
        build_release([run], tmp_path / "release-2")
    # A re-check file changed under a finished run's manifest is refused too, and so are new questions.
    writer.finish(as_of=WEEK1, inputs={}, settings={})
    write_rechecked(run, ids[:2])
    with pytest.raises(ConfigError, match=r"rechecked.parquet: not the file its manifest.json describes"):
        build_release([run], tmp_path / "release-2")
    writer.finish(as_of=WEEK1, inputs={}, settings={})
    to_frame(wikidata_rows()[:3], WikidataRecord).write_parquet(run / "questions.parquet")
    with pytest.raises(ConfigError, match=r"questions.parquet: not the file its manifest.json describes"):
        build_release([run], tmp_path / "release-2")
    assert not (tmp_path / "release-2").exists()


OXIGRAPH_PARENT = r"""
import sys, time
from timelyqa.oxigraph import LocalOxigraph
server = LocalOxigraph(sys.argv[1], workdir=sys.argv[2]).__enter__()
print(server.pid, flush=True)
time.sleep(120)
"""


def running(pid: int) -> bool:
    """True while `pid` is a live process (a zombie waiting for PID 1 to reap it has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_oxigraph_dies_with_a_killed_parent_and_the_next_run_removes_its_store(tmp_path: Path) -> None:
    from timelyqa.oxigraph import LocalOxigraph  # noqa: PLC0415

    nt, work = tmp_path / "rdf.nt", tmp_path / "work"
    nt.write_text('<http://www.wikidata.org/entity/Q1> <http://www.w3.org/2000/01/rdf-schema#label> "one"@en .\n')
    parent = subprocess.Popen([sys.executable, "-c", OXIGRAPH_PARENT, str(nt), str(work)], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert parent.stdout is not None
    server = int(parent.stdout.readline())
    assert running(server) and len(list(work.glob("oxigraph-*"))) == 1
    parent.kill()  # SIGKILL: no with-block ends, no cleanup runs
    parent.wait()
    deadline = time.monotonic() + 5
    while running(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(server), f"oxigraph {server} outlived its killed parent"
    (stale,) = work.glob("oxigraph-*")
    with LocalOxigraph(nt, workdir=work) as again:
        assert again.pid is not None and running(again.pid)
        assert not stale.exists() and len(list(work.glob("oxigraph-*"))) == 1  # the killed run's store is gone
    assert list(work.glob("oxigraph-*")) == []


def release_like(folder: Path, text: str) -> Path:
    (folder / "default").mkdir(parents=True)
    (folder / "manifest.json").write_text(text)
    (folder / "default" / "test-00000-of-00001.parquet").write_text(text)
    return folder


@pytest.mark.parametrize(("left", "survivor"), [
    # (what a kill between the steps of the two-rename swap leaves beside `release`, what the next run finds)
    ({"release": "old", ".release.building-x1": "half"}, "old"),       # killed while writing the new one
    ({"release": "old", ".release.ready": "new"}, "old"),              # killed before the old one moved aside
    ({".release.old": "old", ".release.ready": "new"}, "new"),         # killed between the two renames
    ({"release": "new", ".release.old": "old"}, "new"),                # killed while removing the old one
    ({".release.old": "old"}, "old"),                                  # the new one lost: the old one comes back
])
def test_the_next_build_finishes_or_undoes_a_killed_swap(tmp_path: Path, left: dict[str, str],
                                                         survivor: str) -> None:
    from timelyqa.files import recover_folder  # noqa: PLC0415

    for name, text in left.items():
        release_like(tmp_path / name, text)
    recover_folder(tmp_path / "release")
    assert [p.name for p in tmp_path.iterdir()] == ["release"]
    assert (tmp_path / "release" / "manifest.json").read_text() == survivor


def test_without_an_atomic_exchange_a_release_is_swapped_by_two_renames(weeks: dict[str, Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("timelyqa.files._exchange", lambda a, b: False)  # a kernel or filesystem without one
    out = weeks["old"]
    old = contents(out)
    manifest = build_release([weeks["run"]], out)
    assert manifest["version"] == "v2026.06.07" and sorted(p.name for p in out.parent.iterdir()) == ["old", "w1", "w2"]
    assert all(contents(out)[name] == old[name] for name in (".git/HEAD", "notes.txt", "LATEST"))
