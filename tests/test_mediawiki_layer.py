"""timelyqa/mediawiki/ is what the MediaWiki-backed sources share: it must never reach back into one of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("timelyqa.wikipedia", "timelyqa.wikidata", "timelyqa.news")


def imported(path: Path) -> set[str]:
    """Every module a file imports, function-local imports included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "timelyqa" / "mediawiki").glob("*.py")), ids=lambda p: p.name)
def test_the_mediawiki_package_imports_no_source(path: Path) -> None:
    reached = sorted(m for m in imported(path) if m.startswith(SOURCES))
    assert not reached, f"timelyqa/mediawiki/{path.name} imports {reached}: shared code must not depend on a source"


def test_the_sources_read_wikis_through_it() -> None:
    """Wikipedia, Wikidata and news each use the shared client or readers, not a copy of their own."""
    users = {source: any(m.startswith("timelyqa.mediawiki") for f in (ROOT / source.replace(".", "/")).glob("*.py")
                         for m in imported(f)) for source in SOURCES}
    assert users == dict.fromkeys(SOURCES, True)
