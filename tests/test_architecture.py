"""The layering of shared/DESIGN.md, enforced: the core never imports Prefect, Scrapy or the Hub layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout


def _lint(tmp_path: Path, modules: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """import-linter with the project's contracts over a tree of stand-in packages holding `modules`."""
    for name in ("timelyqa", "flows", "spiders", "publish"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    for name, text in modules.items():
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
