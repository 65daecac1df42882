"""The layering of shared/DESIGN.md, enforced: the core never imports Prefect, Scrapy, the spiders, the flows, the
Hub layer or the CLI (the CLI, the composition root, may import the spiders and the Hub layer); the spiders never
import the flows or the Hub layer; and no two modules import each other, however far round."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 kept, 0 broken" in proc.stdout


def _lint(tmp_path: Path, modules: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """import-linter with the project's contracts over a tree of stand-in packages holding `modules`."""
    for name in ("timelyqa", "flows", "spiders", "publish"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    if not {"timelyqa/cli.py", "timelyqa/cli/__init__.py"} & modules.keys():
        modules = {**modules, "timelyqa/cli.py": ""}  # a contract's forbidden module must exist
    for name, text in modules.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})


def test_a_forbidden_import_is_caught(tmp_path: Path) -> None:
    """The contract is live: a core module that imports prefect breaks it."""
    proc = _lint(tmp_path, {"timelyqa/bad.py": "import prefect\n"})
    assert proc.returncode != 0
    assert "timelyqa.bad -> prefect" in proc.stdout


def test_the_core_never_imports_publish_but_the_cli_may(tmp_path: Path) -> None:
    """The CLI composes the core with the Hub layer; any other core module that reaches `publish` breaks the rule."""
    proc = _lint(tmp_path, {"publish/release.py": "", "timelyqa/cli.py": "import publish.release\n",
                            "timelyqa/split.py": "from publish import release\n"})
    assert proc.returncode != 0
    assert "timelyqa.split -> publish" in proc.stdout
    assert "timelyqa.cli -> publish" not in proc.stdout


@pytest.mark.parametrize(("modules", "broken"), [
    # a crawl started from the core, even from inside a function
    ({"spiders/run.py": "", "timelyqa/pages.py": "def f():\n    from spiders.run import crawl\n"},
     "timelyqa.pages -> spiders.run"),
    ({"flows/news.py": "", "timelyqa/news.py": "import flows.news\n"}, "timelyqa.news -> flows.news"),
    ({"timelyqa/cli.py": "", "timelyqa/demo.py": "from timelyqa import cli\n"}, "timelyqa.demo -> timelyqa.cli"),
    ({"timelyqa/cli/__init__.py": "", "timelyqa/cli/news.py": "", "timelyqa/news.py": "def f():\n"
      "    import timelyqa.cli.news\n"}, "timelyqa.news -> timelyqa.cli.news"),
    ({"flows/news.py": "", "spiders/news.py": "import flows.news\n"}, "spiders.news -> flows.news"),
    ({"publish/card.py": "", "spiders/news.py": "from publish import card\n"}, "spiders.news -> publish.card"),
])
def test_the_layers_are_held(modules: dict[str, str], broken: str, tmp_path: Path) -> None:
    proc = _lint(tmp_path, modules)
    assert proc.returncode != 0
    assert broken in proc.stdout


def test_the_cli_composes_the_core_with_the_crawler(tmp_path: Path) -> None:
    """The CLI package passes `spiders.run.crawl` in; that is not the core reaching out."""
    proc = _lint(tmp_path, {"spiders/run.py": "", "timelyqa/cli/__init__.py": "", "timelyqa/cli/news.py":
                            "from spiders.run import crawl\nfrom timelyqa.cli import __name__\n"})
    assert proc.returncode == 0, proc.stdout


PACKAGES = ("timelyqa", "flows", "spiders", "publish")


def import_circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every set of modules that import each other, directly or round a loop (Tarjan's strongly connected
    components), each sorted, smallest module first; a module importing itself is a circle of one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in graph.get(node, ()):
                    circles.append(sorted(members))
    return sorted(circles)


def project_graph(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Each module of `packages` under `root` -> the modules of them it imports, function-local imports included
    (grimp, which import-linter builds its graph with, reads every import statement of a module)."""
    found = subprocess.run([sys.executable, "-c", GRAPH, *packages], cwd=root, capture_output=True, text=True,
                           timeout=300, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, check=True)
    return {module: set(imported) for module, imported in json.loads(found.stdout).items()}


GRAPH = """
import json, sys
import grimp
graph = grimp.build_graph(*sys.argv[1:], cache_dir=None)
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}))
"""


def test_no_import_circle_among_the_project_modules() -> None:
    circles = import_circles(project_graph(ROOT))
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_a_circle_through_a_function_local_import_is_found_and_named(tmp_path: Path) -> None:
    for name in PACKAGES:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "timelyqa" / "source.py").write_text("from timelyqa.steps import Reject\n")
    (tmp_path / "timelyqa" / "steps.py").write_text("from timelyqa import writer\nReject = 1\n")
    (tmp_path / "timelyqa" / "writer.py").write_text("def run():\n    from timelyqa.source import SOURCE\n")
    (tmp_path / "flows" / "a.py").write_text("import spiders.b\n")
    (tmp_path / "spiders" / "b.py").write_text("")
    assert import_circles(project_graph(tmp_path)) == [["timelyqa.source", "timelyqa.steps", "timelyqa.writer"]]


def test_no_module_of_the_core_spiders_flows_or_publish_is_over_400_lines() -> None:
    long = {str(path.relative_to(ROOT)): n for package in ("timelyqa", "spiders", "flows", "publish")
            for path in sorted((ROOT / package).rglob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, f"split these: {long}"
