"""`timelyqa --version`: what a newcomer (and a bug report) asks first."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from timelyqa.cli import app


def test_version_prints_the_installed_version_and_nothing_else() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"timelyqa {version('timelyqa')}\n"
