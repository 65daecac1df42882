"""A re-run served from the HTTP cache reads its pages as they were, but never a robots.txt cached more than the
24 hours RFC 9309 allows (spiders/httpcache.py): real site-tree crawls, each its own Scrapy process, against a host
that changes its robots.txt between runs."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from spiders.run import command
from tests.robots_server import PAGES, RobotsAnswer, RobotsSite

pytestmark = pytest.mark.slow  # three Scrapy processes


def crawl(site: RobotsSite, out: Path) -> dict:
    args = {"roots": json.dumps([site.url + "/"]), "max_depth": 3, "max_pages": 50, "page_timeout": 5}
    argv, env = command("site_tree", args, out, fresh=False)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((out / "crawl_stats.json").read_text())


def cached_robots_meta(cache: Path) -> Path:
    (meta,) = (m for m in cache.rglob("pickled_meta") if pickle.loads(m.read_bytes())["url"].endswith("/robots.txt"))
    return meta


def test_a_robots_txt_cached_over_a_day_is_asked_again_and_obeyed(tmp_path: Path) -> None:
    with RobotsSite(RobotsAnswer(body=b"User-agent: *\nDisallow:\n")) as site:
        first = crawl(site, tmp_path / "first")
        assert first["pages"] == len(PAGES)
        site.answer = RobotsAnswer(body=b"User-agent: *\nDisallow: /private/\n")  # the host changes its mind

        # The next morning: the cache holds every page and the day-old file, and serves them all.
        shutil.copytree(tmp_path / "first" / "httpcache", tmp_path / "morning" / "httpcache")
        site.requests.clear()
        morning = crawl(site, tmp_path / "morning")
        assert site.requests == [] and morning["pages"] == len(PAGES)

        # Two days on: the cached robots.txt is 25 hours old, so it is asked again and its new rule holds, while the
        # pages it still allows come from the cache.
        shutil.copytree(tmp_path / "first" / "httpcache", tmp_path / "later" / "httpcache")
        meta = cached_robots_meta(tmp_path / "later" / "httpcache")
        stored = pickle.loads(meta.read_bytes())
        meta.write_bytes(pickle.dumps({**stored, "timestamp": time.time() - 25 * 3600}, protocol=4))
        site.requests.clear()
        later = crawl(site, tmp_path / "later")
    assert site.requests == ["/robots.txt"]
    assert later["pages"] == len(PAGES) - 1 and later["skipped"] == {"robots_disallowed": 1}
