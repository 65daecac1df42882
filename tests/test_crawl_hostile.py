"""Hostile answers to a site-tree crawl, served raw on 127.0.0.1: every URL the crawl fetched ends as a row or a
counted reason (a gzip or deflate bomb, a redirect to file:, links past the depth limit), and a redirect is an edge
to the one row of the page it ends on, which is fetched once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from tests.hostile_web import HostileServer, bomb, page, redirect

pytestmark = pytest.mark.slow  # a Scrapy process

ROOT = Path(__file__).resolve().parent.parent
MEASURED = """
import json, resource, sys
from pathlib import Path
from spiders.run import crawl
stats = crawl("site_tree", json.loads(sys.argv[1]), Path(sys.argv[2]), fresh=True)
print(json.dumps([stats, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024]))
"""

BOMBS = {"gzip": 2**30, "deflate": 2**29}  # decompressed: 1 GiB and 512 MiB; DOWNLOAD_MAXSIZE is 5 MiB
BOUNDED = 450 * 2**20  # the crawl process's peak memory (about 210 MiB here): less than the smaller bomb


def path_of(url: str | None) -> str | None:
    return None if url is None else urlsplit(url).path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[HostileServer, dict, pl.DataFrame, pl.DataFrame,
                                                                  int]:
    answers = {
        "/": page("Home", links=["/redirect-me", "/about", "/gzip-bomb", "/deflate-bomb", "/to-file", "/deep/1"]),
        "/redirect-me": redirect("/about"),
        "/about": page("About", links=["/"]),
        "/gzip-bomb": bomb("gzip", BOMBS["gzip"]),
        "/deflate-bomb": bomb("deflate", BOMBS["deflate"]),
        "/to-file": redirect("file:///etc/passwd", 302),
        **{f"/deep/{n}": page(f"Deep {n}", links=[f"/deep/{n + 1}"]) for n in range(1, 6)},
    }
    out = tmp_path_factory.mktemp("hostile")
    with HostileServer(answers) as server:
        args = {"roots": json.dumps([server.url + "/"]), "max_depth": 3, "max_pages": 100, "page_timeout": 10}
        # through a parent of its own, whose only child is the crawl: its peak memory is the crawl's alone
        proc = subprocess.run([sys.executable, "-c", MEASURED, json.dumps(args), str(out)], capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        stats, peak = json.loads(proc.stdout.splitlines()[-1])
    return server, stats, pl.read_parquet(out / "pages.parquet"), pl.read_parquet(out / "links.parquet"), peak


def test_a_redirect_is_an_edge_to_the_one_row_of_the_page_it_ends_on_fetched_once(hostile: tuple) -> None:
    server, stats, pages, links, _ = hostile
    rows = pages.with_columns(pl.col("url").map_elements(path_of, return_dtype=pl.String()))
    assert "/redirect-me" not in rows["url"].to_list()
    about = rows.filter(pl.col("url") == "/about")
    assert about.height == 1 and about["depth"].to_list() == [1] and about["error"].to_list() == [None]
    edge = links.filter(pl.col("kind") == "redirect")
    assert [(path_of(f), path_of(t)) for f, t in zip(edge["from"], edge["to"], strict=True)] == [
        ("/redirect-me", "/about")]
    assert server.asked("/about") == 1 and server.asked("/redirect-me") == 1
    assert stats["redirected"] == 1


def test_every_fetched_url_ends_as_a_row_or_a_counted_reason(hostile: tuple) -> None:
    server, stats, pages, _, peak = hostile
    print(f"\nbombs of {BOMBS['gzip'] >> 20} MiB (gzip) and {BOMBS['deflate'] >> 20} MiB (deflate): body_too_large, "
          f"crawl peak {peak >> 20} MiB")
    assert peak < BOUNDED, f"the crawl's memory peaked at {peak / 2**20:.0f} MiB: a bomb was inflated"
    errors = {path_of(u): e for u, e in zip(pages["url"], pages["error"], strict=True)}
    assert errors["/gzip-bomb"] == "body_too_large" and errors["/deflate-bomb"] == "body_too_large"
    assert errors["/to-file"] == "redirect_not_http"
    assert pages.filter(pl.col("url").str.ends_with("/to-file"))["final_url"].to_list() == ["file:///etc/passwd"]
    assert {p: errors[p] for p in ("/", "/about", "/deep/1", "/deep/2", "/deep/3")} == dict.fromkeys(
        ("/", "/about", "/deep/1", "/deep/2", "/deep/3"))
    assert stats["errors"] == {"body_too_large": 2, "redirect_not_http": 1}
    assert stats["bounded"] == {"depth_exceeded": 1}, "/deep/4 is linked four clicks deep: counted, not asked"
    asked = {urlsplit(p).path for p in server.requests} - {"/robots.txt"}
    assert asked - set(errors) == {"/redirect-me"}, "every URL asked is a row, or an edge to one"
    assert "/deep/4" not in asked
