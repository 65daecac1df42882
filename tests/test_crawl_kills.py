"""A crawl killed again and again (SIGKILL: nothing gets to save its state) and started again each time ends with
what a crawl never killed gives: the site tree's pages, depths and parents, the official crawl's every page; only
pages in flight at a kill are asked twice. Every spider resumes through one journal (spiders/journal.py)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders.run import command, crawl
from tests.hostile_web import HostileServer, page
from tests.sites import SiteServer, reachable, tree_site

pytestmark = pytest.mark.slow  # four Scrapy processes and a fifth uninterrupted

SEED = 26
KILLS = 3


def path_of(url: str | None) -> str | None:
    return None if url is None else urlsplit(url).path


def journal_lines(journal: Path) -> int:
    return journal.read_bytes().count(b"\n") if journal.is_file() else 0


def killed_at(argv: list[str], env: dict[str, str], journal: Path, lines: int) -> int:
    """Start the crawl and SIGKILL it once its journal holds `lines` lines; the lines it held when it died."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if journal_lines(journal) >= lines:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the crawl ended (exit {proc.returncode}) before {lines} lines"
    return journal_lines(journal)


def rows(out: Path) -> dict[str, tuple[int, str | None]]:
    pages = pl.read_parquet(out / "pages.parquet")
    assert pages["url"].n_unique() == pages.height, "one row a page"
    return {path_of(u): (d, path_of(p)) for u, d, p in zip(pages["url"], pages["depth"], pages["parent"],
                                                          strict=True)}


def test_three_kills_at_seeded_points_give_the_pages_and_depths_of_an_uninterrupted_crawl(tmp_path: Path) -> None:
    site = tree_site(600, fanout=4)  # 341 pages within four clicks, 259 beyond
    want = reachable(site, max_depth=4)
    args = {"max_depth": 4, "max_pages": 1000, "pattern_budget": 1000}
    with SiteServer(site) as server:
        root = json.dumps([server.url + "/"])
        whole = crawl("site_tree", {"roots": root, **args}, tmp_path / "whole", fresh=True)
        out = tmp_path / "killed"
        argv, env = command("site_tree", {"roots": root, **args}, out)
        before = len(server.requests)
        points = sorted(random.Random(SEED).sample(range(20, len(want) - 40), KILLS))
        held = [killed_at(argv, env, out / "pages.jsonl", at) for at in points]
        assert not (out / "crawl_stats.json").exists()
        stats = crawl("site_tree", {"roots": root, **args}, out)
        asked = Counter(p for p in server.requests[before:] if p != "/robots.txt")
    uninterrupted = rows(tmp_path / "whole")
    assert {p: d for p, (d, _) in uninterrupted.items()} == want
    assert rows(out) == uninterrupted, f"killed at journal lines {points} (held {held})"
    assert stats["pages"] == whole["pages"] == len(want) and stats["pages_per_depth"] == whole["pages_per_depth"]
    twice = {p: n for p, n in asked.items() if n > 1}
    print(f"\n{KILLS} SIGKILLs of a site-tree crawl (seed {SEED}, at journal lines {held}): {stats['pages']} of "
          f"{whole['pages']} pages, same depths and parents; {len(twice)} pages asked twice (in flight at a kill)")
    assert len(twice) <= 16 * KILLS, f"only pages in flight at a kill are asked again: {twice}"
    assert set(asked) == set(want)


def test_three_kills_of_an_official_crawl_give_every_page_of_an_uninterrupted_one(tmp_path: Path) -> None:
    from timelyqa.official.pages import REQUESTS, write_requests  # noqa: PLC0415

    answers = {f"/p/{n}": page(f"Page {n}", f"The value of page {n} is {n * 7}.") for n in range(300)}
    with HostileServer(answers) as server:
        where = urlsplit(server.url).netloc
        requests = [(f"k{n}", f"{server.url}/p/{n}", "never") for n in range(300)]

        def args(out: Path) -> dict[str, str]:
            write_requests(requests, out / REQUESTS)
            return {"requests": str(out / REQUESTS), "store": str(tmp_path / "store"), "render": "never",
                    "named": json.dumps([where])}

        (tmp_path / "whole").mkdir()
        crawl("official", args(tmp_path / "whole"), tmp_path / "whole", fresh=True)
        out = tmp_path / "killed"
        out.mkdir()
        argv, env = command("official", args(out), out)
        before = len(server.requests)
        points = sorted(random.Random(SEED).sample(range(20, 260), KILLS))
        held = [killed_at(argv, env, out / "pages.jsonl", at) for at in points]
        stats = crawl("official", args(out), out)
        asked = Counter(p for p in server.requests[before:] if p != "/robots.txt")
    whole, killed = (pl.read_parquet(tmp_path / name / "fetches.parquet").select("key", "url", "failure", "sha256")
                     .sort("key") for name in ("whole", "killed"))
    assert killed.equals(whole) and killed["failure"].null_count() == 300, f"killed at {points} (held {held})"
    assert stats["pages"] == 300 and set(asked) == set(answers)
    assert len([p for p, n in asked.items() if n > 1]) <= 16 * KILLS
