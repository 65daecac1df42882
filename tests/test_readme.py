"""The README, checked against what the code does: its links lead somewhere, and a newcomer who copies the repository
and types its first command and then every command of its "Use a release" section gets what it says they get.

The end-to-end test copies the checkout's tracked and new files (what `git clone` of this working state would give)
into a temporary folder with no virtual environment, and runs the commands there as written, with bash, from that
folder: `make demo` sets up `.venv/` itself (uv syncs from its cache, as on any machine that ran it before)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The text under `heading` (a `## ` line), up to the next heading of that level."""
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def code_blocks(text: str, language: str = "sh") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip("# ").lower()).replace(" ", "-")


def test_every_link_of_the_readme_and_docs_leads_to_a_file_and_heading() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, fragment = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif fragment and fragment not in {anchor(line) for line in file.read_text(encoding="utf-8").splitlines()
                                               if line.startswith("#")}:
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
    assert {"docs/demo.md", "docs/sources.md", "docs/security.md", "docs/development.md"} <= {
        t for t in re.findall(r"\]\((docs/[^)#]+)", README)}


def test_the_first_screen_says_what_it_is_and_the_two_commands() -> None:
    first = README.split("\n## Contents\n", 1)[0]
    two = section(README, "## Two commands")
    commands = [line.split("#")[0].strip() for line in code_blocks(two, "")[0].splitlines()]
    assert commands == ["make demo", "make test"]
    for source in ("wikidata", "wikipedia", "site_tree", "news", "official_site"):
        assert f"`{source}`" in first
    assert "load_dataset('out/demo/release'" in first


def copy_of_checkout(into: Path) -> Path:
    """The files `git clone` of this working state would hold: tracked ones and new ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env["TIMELYQA_QUIET"] = "1"
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)


@pytest.mark.slow
def test_a_newcomer_runs_the_first_command_and_every_command_of_use_a_release(tmp_path: Path) -> None:
    clone = copy_of_checkout(tmp_path / "timelyqa")
    demo = bash("make demo", clone)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    load = code_blocks(README.split("\n## Contents\n", 1)[0], "")[1].strip()
    assert load.removeprefix(".venv/bin/") in demo.stdout  # the demo prints the line the README shows
    assert (clone / "out/demo/release/README.md").is_file()

    use = section(README, "## Use a release")
    blocks = code_blocks(use)
    assert len(blocks) == 3, "Load, Score a model, Train on it: one block each"
    outputs = []
    for block in blocks:
        proc = bash(block, clone)
        assert proc.returncode == 0, (block, proc.stdout[-2000:], proc.stderr[-2000:])
        outputs.append(proc.stdout)
    loaded, scored, trained = outputs

    test = pl.concat([pl.read_parquet(p) for p in sorted((clone / "out/demo/release/default").glob("test-*.parquet"))])
    assert "Dataset(" in loaded and f"num_rows: {test.height}" in loaded
    # Scoring: a stand-in that never knows scores nothing, and every test row has its verdict.
    assert re.search(rf"accuracy 0\.0% \(0\.0% to [\d.]+%\) on {test.height} rows", scored), scored
    results = pl.read_parquet(clone / "out/eval/results.parquet")
    assert results.height == test.height and set(results["verdict"]) == {"wrong"}
    assert "| all | 0.0% |" in (clone / "out/eval/report.md").read_text()
    # Training: both exports write the train split, and a completion giving a row's answer earns 1.0.
    default = clone / "out/demo/release/default"
    train = pl.concat([pl.read_parquet(p) for p in sorted(default.glob("train-*.parquet"))])
    assert f"verl: {train.height} rows in out/verl/train.parquet" in trained
    assert f"trl: {train.height} rows in out/trl/train.parquet" in trained
    assert trained.strip().splitlines()[-1] == "1.0"
