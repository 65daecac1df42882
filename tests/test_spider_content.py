"""A caller may change a crawl's pace (EXTRACT_WORKERS, the extraction stage's processes, among it), never what keeps it
safe. The extraction stage itself: tests/test_site_tree_extract.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from spiders.run import command
from timelyqa.errors import ConfigError


def test_a_crawl_may_change_its_pace_never_its_safety(tmp_path: Path) -> None:
    args = {"roots": '["http://127.0.0.1:9/"]'}
    argv, _ = command("site_tree", args, tmp_path / "out", settings={"EXTRACT_WORKERS": 0,
                                                                      "AUTOTHROTTLE_TARGET_CONCURRENCY": 16})
    assert "EXTRACT_WORKERS=0" in argv and "AUTOTHROTTLE_TARGET_CONCURRENCY=16" in argv
    with pytest.raises(ConfigError, match="ROBOTSTXT_OBEY: not one a crawl may change"):
        command("site_tree", args, tmp_path / "out", settings={"ROBOTSTXT_OBEY": False})
