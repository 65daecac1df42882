"""The CLI package's shape (issue 25): each command module imports the shared helpers only, never a sibling nor the
package, so no import circle runs through the CLI; and each module stays small."""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent


def cli_problems(graph: grimp.ImportGraph, package: str) -> list[str]:
    """One line per import the CLI's layout forbids and per import circle through one of its modules."""
    modules = graph.find_descendants(package) | {package}
    problems = []
    for module in sorted(modules - {package}):
        inside = {m for m in graph.find_modules_directly_imported_by(module) if m in modules}
        short = module.removeprefix(f"{package}.")
        allowed = {package} if short == "__main__" else set() if short == "common" else {f"{package}.common"}
        problems += [f"{module} imports {m}" for m in sorted(inside - allowed)]
    for module in sorted(modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                problems.append("import circle: " + " -> ".join((module, *chain)))
    return problems


def test_each_command_module_imports_only_the_shared_helpers_and_no_circle_runs_through_the_cli() -> None:
    graph = grimp.build_graph("timelyqa", cache_dir=None)
    assert cli_problems(graph, "timelyqa.cli") == []
    commands = {m.removeprefix("timelyqa.cli.") for m in graph.find_descendants("timelyqa.cli")}
    assert {"common", "wikidata", "wikipedia", "news", "site_tree", "official", "release", "evaluate"} <= commands
    assert "timelyqa.livecli" not in graph.modules


def test_a_sibling_import_and_a_circle_are_each_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a stand-in CLI whose news imports wikidata, and whose common imports news back."""
    cli = tmp_path / "standin" / "cli"
    cli.mkdir(parents=True)
    (tmp_path / "standin" / "__init__.py").write_text("")
    files = {"__init__.py": "from standin.cli import news, wikidata\n", "common.py": "from standin.cli import news\n",
             "news.py": "from standin.cli import common, wikidata\n", "wikidata.py": "from standin.cli import common\n"}
    for name, text in files.items():
        (cli / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "standin", raising=False)
    problems = cli_problems(grimp.build_graph("standin", cache_dir=None), "standin.cli")
    assert "standin.cli.news imports standin.cli.wikidata" in problems
    assert "standin.cli.common imports standin.cli.news" in problems
    assert "import circle: standin.cli.common -> standin.cli.news -> standin.cli.common" in problems


@pytest.mark.parametrize("module", sorted((ROOT / "timelyqa" / "cli").glob("*.py")), ids=lambda p: p.name)
def test_no_cli_module_is_over_400_lines(module: Path) -> None:
    assert len(module.read_text().splitlines()) <= 400, f"{module.name}: split it"
