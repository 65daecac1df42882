"""The typed release manifest: releases written before it load and write back byte for byte, an unknown key is kept,
a missing or broken manifest is one line naming the file, and no reader in the package indexes it as a dict."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from publish.card import render_card
from publish.changelog import previous_release
from publish.hub import read_release
from publish.release import build_release
from tests.runs import write_source
from tests.test_release import CREATED, WikidataRecord, to_frame, wikidata_rows
from timelyqa.errors import ConfigError
from timelyqa.evaluate import release_configs
from timelyqa.export import read_split
from timelyqa.release_manifest import MANIFEST, ReleaseManifest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "release_manifest"
DEMO = FIXTURES / "demo-v2026.11.16.json"
"""`timelyqa demo`'s manifest as the code wrote it before the model (commit 786cbf3), with the card it wrote."""
REVIEWED = FIXTURES / "reviewed-v2026.06.06.json"
"""A second release of the same code: a previous version, what changed, and a file of review decisions."""


def folder_with(tmp_path: Path, text: str | bytes, name: str = "release") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / MANIFEST).write_bytes(text.encode() if isinstance(text, str) else text)
    return folder


@pytest.mark.parametrize("fixture", [DEMO, REVIEWED], ids=["demo", "reviewed"])
def test_a_manifest_written_before_the_model_loads_and_writes_back_byte_for_byte(fixture: Path,
                                                                                tmp_path: Path) -> None:
    manifest = ReleaseManifest.load(folder_with(tmp_path, fixture.read_bytes()))
    assert manifest.to_json() == fixture.read_text(encoding="utf-8")
    manifest.write(tmp_path / "release")
    assert (tmp_path / "release" / MANIFEST).read_bytes() == fixture.read_bytes()


def test_the_demo_card_is_the_one_the_code_wrote_before_the_model() -> None:
    manifest = ReleaseManifest.parse(DEMO.read_bytes(), DEMO)
    assert render_card(manifest) == DEMO.with_suffix(".README.md").read_text(encoding="utf-8")
    assert manifest.synthetic and manifest.version == "v2026.11.16" and manifest.rows("default") == 163
    assert manifest.sources["news"].funnel_counts()["day_pages"] == 9


def test_the_reviewed_release_reads_its_changes_and_reviews_as_attributes() -> None:
    manifest = ReleaseManifest.parse(REVIEWED.read_bytes(), REVIEWED)
    assert (manifest.version, manifest.previous_version) == ("v2026.06.06", "v2026.06.05")
    assert manifest.changes is not None
    assert manifest.changes.added == {"toy": 1} and manifest.changes.human_verified.added == {}
    assert (manifest.reviews["toy"].accepted, manifest.reviews["toy"].rejected) == (1, 1)
    assert not manifest.synthetic and "synthetic" not in manifest.to_json()


def test_an_unknown_key_of_a_newer_writer_loads_and_is_kept(tmp_path: Path) -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    data["signed_by"] = {"key": "abc"}
    data["sources"]["news"]["crawl_seconds"] = 12.5
    data["files"]["news/test-00000-of-00001.parquet"]["compression"] = "zstd"
    text = json.dumps(data, sort_keys=True, indent=2) + "\n"
    manifest = ReleaseManifest.load(folder_with(tmp_path, text))
    assert manifest.to_json() == text
    assert render_card(manifest) == DEMO.with_suffix(".README.md").read_text(encoding="utf-8")


def test_an_older_manifest_without_the_later_keys_loads_without_gaining_them(tmp_path: Path) -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    for key in ("grader_version", "reviews", "synthetic", "changes", "previous_version"):
        del data[key]
    text = json.dumps(data, sort_keys=True, indent=2) + "\n"
    manifest = ReleaseManifest.load(folder_with(tmp_path, text))
    assert manifest.to_json() == text, "a default the file did not state is not written back"
    assert manifest.grader_version is None and manifest.reviews == {} and not manifest.synthetic
    card = render_card(manifest)
    assert "(timelyqa_grader_v1)" in card and "Synthetic demo data" not in card and "The first release." in card


@pytest.mark.parametrize(("text", "says"), [
    (b"{\"version\": \"v1\", \"configs\": {", "not a timelyqa release manifest: the file: Invalid JSON"),
    (b"[1, 2]", "not a timelyqa release manifest: the file: Input should be an object"),
    (b"\xff\xfe", "not a timelyqa release manifest: the file: Invalid JSON"),
], ids=["cut", "a list", "not utf-8"])
def test_a_broken_manifest_is_one_line_naming_the_file(tmp_path: Path, text: bytes, says: str) -> None:
    folder = folder_with(tmp_path, text)
    for read in (ReleaseManifest.load, ReleaseManifest.find, previous_release, read_release, release_configs,
                 lambda f: read_split(f, "default", "test")):
        with pytest.raises(ConfigError) as broken:
            read(folder)
        message = str(broken.value)
        assert message.startswith(f"{folder / MANIFEST}: {says}") and "\n" not in message, (read, message)


def test_a_wrong_field_is_named_with_its_path(tmp_path: Path) -> None:
    data = json.loads(DEMO.read_text(encoding="utf-8"))
    data["files"]["news/test-00000-of-00001.parquet"]["rows"] = -4
    folder = folder_with(tmp_path, json.dumps(data))
    with pytest.raises(ConfigError) as wrong:
        ReleaseManifest.load(folder)
    assert str(wrong.value) == (f"{folder / MANIFEST}: not a timelyqa release manifest: "
                                "files.news/test-00000-of-00001.parquet.rows: Input should be greater than or equal "
                                "to 0")
    del data["files"]
    with pytest.raises(ConfigError, match=r"manifest.json: not a timelyqa release manifest: files: Field required$"):
        ReleaseManifest.load(folder_with(tmp_path, json.dumps(data), "no-files"))


def test_no_manifest_or_a_source_runs_is_not_a_release(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    run = write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata")
    assert ReleaseManifest.find(empty) is None and ReleaseManifest.find(run) is None
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(empty))}: not a release folder \(.*manifest.json: No "
                                          r"such file or directory\)$"):
        ReleaseManifest.load(empty)
    with pytest.raises(ConfigError, match=r"not a release folder \(.*manifest.json is a source run's: .* "
                                          r"`timelyqa release --from .*wikidata --out DIR`\)$"):
        ReleaseManifest.load(run)


def test_a_release_over_a_broken_manifest_stops_and_builds_nothing_over_it(tmp_path: Path) -> None:
    run = write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata")
    out = folder_with(tmp_path, b'{"version": "v1", "created": "2026-06-01T00:00:00+00:00", "configs": []}')
    with pytest.raises(ConfigError, match=r"manifest.json: not a timelyqa release manifest: configs: Input should "
                                          r"be an object$"):
        build_release([run], out, created=CREATED)
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST]


def test_a_build_returns_the_model_of_the_file_it_wrote(tmp_path: Path) -> None:
    run = write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata")
    manifest = build_release([run], tmp_path / "release", created=CREATED)
    assert isinstance(manifest, ReleaseManifest) and manifest == ReleaseManifest.load(tmp_path / "release")
    assert manifest.to_json() == (tmp_path / "release" / MANIFEST).read_text(encoding="utf-8")
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "release", copy)
    assert read_release(copy).version == manifest.version == "v2026.06.02"


# What would read the manifest as an untyped dict again: indexing or .get on it, or parsing the file by hand.
UNTYPED = re.compile(r"""(?:manifest|prior(?:_manifest)?|prior\[0\])(?:\[\s*["']|\.get\(\s*["'])"""
                     r"""|json\.loads\([^)]*(?:release|manifest\.json)""")
PACKAGES = ("timelyqa", "publish", "flows", "scripts")
RUN_MANIFESTS = {"timelyqa/checks.py", "timelyqa/released.py"}
"""They read a source run's manifest.json (checks: which kind a folder holds; released: a run's questions hash)."""


def test_no_reader_in_the_package_indexes_the_release_manifest_as_a_dict() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
             if str(path.relative_to(ROOT)) not in RUN_MANIFESTS
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if UNTYPED.search(line)]
    assert not found, "read the release manifest through timelyqa.release_manifest.ReleaseManifest:\n" + "\n".join(
        found)
    probe = 'x = manifest["version"]\ny = prior_manifest.get("files")\nz = json.loads((release / "manifest.json"))'
    assert len([line for line in probe.splitlines() if UNTYPED.search(line)]) == 3, "the pattern finds what it names"
