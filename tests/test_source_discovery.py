"""Sources are discovered from the entry-point group `timelyqa.sources`, as an installed package declares them; each
entry is a pure description whose `run` is imported only when the source runs."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from tests import toy_source
from timelyqa import sources as registry
from timelyqa.errors import ConfigError
from timelyqa.sources import BUILTIN, GROUP, ROOT, discover, sources

OTHER = "toy = tests.toy_source:SOURCE\nzeta_plugin = tests.toy_source:ZETA\n"


def declared() -> dict[str, str]:
    """The group as pyproject.toml declares it: what an install of the project puts in its metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return dict(project["entry-points"][GROUP])


def installed_plugin(folder: Path, entries: str) -> Path:
    """A package of another distribution, installed the way pip leaves one: its dist-info names its entry points."""
    info = folder / "timelyqa_toy_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: timelyqa-toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entries}")
    return folder


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry as a new process finds it: nothing read yet."""
    monkeypatch.setattr(registry, "_registered", {})
    monkeypatch.setattr(registry, "_loaded", False)


def test_pyproject_declares_the_built_in_sources_in_the_demo_order() -> None:
    assert tuple(declared()) == BUILTIN
    for name, value in declared().items():
        assert EntryPoint(name, value, GROUP).load() is sources()[name]


def test_a_source_of_another_package_comes_after_the_built_ins_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    monkeypatch.setattr(toy_source, "ZETA", replace(toy_source.SOURCE, name="zeta_plugin"), raising=False)
    monkeypatch.syspath_prepend(str(installed_plugin(tmp_path, OTHER)))
    found = sources()
    assert list(found) == [*BUILTIN, "toy", "zeta_plugin"]
    assert found["toy"] is toy_source.SOURCE


@pytest.mark.parametrize(("entry", "why"), [
    ("toy = tests.no_such_module:SOURCE", "ModuleNotFoundError: No module named 'tests.no_such_module'"),
    ("toy = tests.toy_source:NOPE", "AttributeError"),
    ("toy = tests.toy_source:run", "is a function, not a SourceSpec"),
    ("mayors = tests.toy_source:SOURCE", "holds source 'toy': name the entry point after its source"),
])
def test_a_broken_entry_point_is_one_line_naming_it(entry: str, why: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    monkeypatch.syspath_prepend(str(installed_plugin(tmp_path, entry + "\n")))
    with pytest.raises(ConfigError) as caught:
        sources()
    message = str(caught.value)
    name, value = (part.strip() for part in entry.split("="))
    assert message.startswith(f"entry point {name} = {value!r} ({GROUP})") and why in message
    assert "\n" not in message


def test_metadata_without_the_built_ins_says_to_reinstall() -> None:
    """An install made before the group existed finds no source: said in one line, with the fix."""
    with pytest.raises(ConfigError, match=r"no timelyqa.sources entry point for wikidata, .*official_site: .*"
                                          r"reinstall the project \(uv pip install -e \.\)"):
        discover([EntryPoint("toy", "tests.toy_source:SOURCE", GROUP)])


def test_run_names_a_function_imported_only_when_the_source_runs(tmp_path: Path) -> None:
    broken = replace(toy_source.SOURCE, run="tests.toy_source:no_such_function")
    with pytest.raises(ConfigError, match=r"^source 'toy': run = 'tests.toy_source:no_such_function' does not load "
                                          r"\(AttributeError: "):
        broken.run_on([], tmp_path, None, crawl=_no_crawl)
    with pytest.raises(ConfigError, match=r"names no function"):
        replace(toy_source.SOURCE, run="tests.toy_source").run_on([], tmp_path, None, crawl=_no_crawl)
    assert toy_source.SOURCE.runner is toy_source.run


@pytest.mark.slow  # a Python process of its own importing the registry
def test_reading_the_registry_imports_no_pipeline_and_no_crawler() -> None:
    """Every entry is a description: listing the sources (what `timelyqa --help` and the card do) loads none of
    the code that runs them."""
    code = ("import json, sys; from timelyqa.sources import sources; names = list(sources()); "
            "print(json.dumps([names, sorted(m for m in sys.modules "
            "if m.endswith('.pipeline') or m.split('.')[0] in ('spiders', 'scrapy'))]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          check=True)
    names, loaded = json.loads(proc.stdout)
    assert names == list(BUILTIN) and loaded == []


def _no_crawl(spider: str, args: dict[str, object], out: Path, *, fresh: bool = False,
              settings: dict[str, object] | None = None) -> dict[str, object]:
    raise AssertionError("the toy source crawls nothing")
