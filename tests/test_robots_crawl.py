"""robots.txt as RFC 9309 asks, in real site-tree crawls (each its own Scrapy process) against a local host whose
robots.txt fails one way each: a 5xx or a timeout refuses every page, a 4xx allows every page, a 10 MB file is read
for its first 512 KiB, a gzip bomb is read as unreachable. The crawl's stats say which case each host was."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest

from spiders.run import command
from spiders.run import crawl as run_crawl
from spiders import run as spiders_run
from timelyqa.errors import SourceContractError
from tests.robots_server import PAGES, RobotsAnswer, RobotsSite, gzip_bomb, padded

pytestmark = pytest.mark.slow  # each case starts Scrapy in a process of its own

EVERY_PAGE = set(PAGES)
MB = 1024 * 1024


def crawl(site: RobotsSite, out: Path) -> dict:
    """The crawl as the product runs it, with robots.txt given a second (not ten) before it is unreachable."""
    args = {"roots": json.dumps([site.url + "/"]), "max_depth": 3, "max_pages": 50, "page_timeout": 5}
    argv, env = command("site_tree", args, out, fresh=True)
    proc = subprocess.run([*argv, "-s", "ROBOTSTXT_TIMEOUT=1"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((out / "crawl_stats.json").read_text())


REFUSING = {
    "500": (RobotsAnswer(status=500, body=b"oops"), "server_error"),
    "503": (RobotsAnswer(status=503, body=b"User-agent: *\nDisallow:\n", headers={"Retry-After": "1"}),
            "server_error"),
    "429": (RobotsAnswer(status=429, body=b""), "server_error"),
    "10MB_disallow_all": (RobotsAnswer(body=padded("User-agent: *\nDisallow: /\n", 10 * MB)), "truncated"),
    "gzip_bomb": (RobotsAnswer(body=gzip_bomb(200 * MB), headers={"Content-Encoding": "gzip"}), "too_large"),
    "unknown_encoding": (RobotsAnswer(body=b"\x00garbage", headers={"Content-Encoding": "x-secret"}),
                         "undecodable"),
}


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_a_robots_txt_that_fails_refuses_the_whole_host(name: str, tmp_path: Path) -> None:
    answer, case = REFUSING[name]
    with RobotsSite(answer) as site:
        stats = crawl(site, tmp_path)
    assert site.pages_asked == set(), f"{name}: pages fetched though robots.txt said nothing usable"
    assert stats["pages"] == 0
    assert stats["robots"].get(case) == 1, stats["robots"]
    assert stats["skipped"] == {"robots_disallowed": 1}  # the root, refused; nothing else was found to refuse
    assert stats["bytes"] < MB, "a robots.txt is read for 512 KiB, a bomb is never expanded past 5 MiB"


UNREACHABLE = {
    "timeout": (RobotsAnswer(delay=4.0), "timeout"),
    "hang_up": (RobotsAnswer(hang_up=True), "download_failed"),
}


@pytest.mark.parametrize("name", sorted(UNREACHABLE))
def test_a_host_that_does_not_answer_for_its_robots_txt_is_not_crawled(name: str, tmp_path: Path) -> None:
    """Unreachable (RFC 9309 2.3.1.4): no page asked; the root's row says why the host was not reached."""
    answer, reason = UNREACHABLE[name]
    with RobotsSite(answer) as site:
        stats = crawl(site, tmp_path)
    assert site.pages_asked == set()
    assert stats["pages"] == 0 and stats["errors"] == {reason: 1}
    assert stats["robots"] == {"unreachable": 1, f"unreachable/{reason}": 1, "refused/unreachable": 1}


ALLOWING = {
    "404": (RobotsAnswer(status=404, body=b"<html>User-agent: *\nDisallow: /</html>"), "unavailable", EVERY_PAGE),
    "403": (RobotsAnswer(status=403, body=b"Disallow: /"), "unavailable", EVERY_PAGE),
    "redirect_loop": (RobotsAnswer(status=301, headers={"Location": "/robots.txt"}), "redirect_unfollowed",
                      EVERY_PAGE),  # RFC 9309 2.3.1.2: past five redirects, as unavailable
    "200": (RobotsAnswer(body=b"User-agent: *\nDisallow: /private/\n"), "parsed", EVERY_PAGE - {"/private/c"}),
    "10MB_with_rules": (RobotsAnswer(body=padded("User-agent: *\nDisallow: /private/\n", 10 * MB)), "truncated",
                        EVERY_PAGE - {"/private/c"}),
    "gzip": (RobotsAnswer(body=gzip.compress(b"User-agent: *\nDisallow: /private/\n"),
                          headers={"Content-Encoding": "gzip"}), "parsed", EVERY_PAGE - {"/private/c"}),
    "latin1_byte": (RobotsAnswer(body=b"# caf\xe9\nUser-agent: *\nDisallow: /private/\n"), "parsed",
                    EVERY_PAGE - {"/private/c"}),
}


@pytest.mark.parametrize("name", sorted(ALLOWING))
def test_a_robots_txt_that_answers_is_obeyed_as_it_says(name: str, tmp_path: Path) -> None:
    answer, case, fetched = ALLOWING[name]
    with RobotsSite(answer) as site:
        stats = crawl(site, tmp_path)
    assert site.pages_asked == fetched
    assert stats["pages"] == len(fetched)
    assert stats["robots"].get(case) == 1, stats["robots"]
    refused = len(EVERY_PAGE - fetched)
    assert stats["skipped"] == ({"robots_disallowed": refused} if refused else {})


def test_a_crawl_that_robots_txt_closed_says_so(tmp_path: Path) -> None:
    """Not "0 pages, no errors": the failure names the refusal and the robots.txt case."""
    with RobotsSite(RobotsAnswer(status=503)) as site, pytest.raises(SourceContractError) as raised:
        run_crawl("site_tree", {"roots": json.dumps([site.url + "/"]), "max_depth": 1, "max_pages": 5}, tmp_path,
                  fresh=True)
    assert "not requested: robots_disallowed 1, robots.txt server_error on 1 host" in str(raised.value)


def test_an_official_page_behind_a_failing_robots_txt_is_a_row_with_its_reason(tmp_path: Path) -> None:
    """The recipes' crawl: a 5xx robots.txt refuses the page (`robots_disallowed`, never asked); a host that does not
    answer for its robots.txt gives its pages `site_down` with the network's reason, as a dead host always did."""
    from timelyqa.official.pages import fetch  # noqa: PLC0415 - the recipes' crawl, as `timelyqa official` runs it
    from timelyqa.official.reasons import Failure  # noqa: PLC0415

    with RobotsSite(RobotsAnswer(status=503)) as closed, RobotsSite(RobotsAnswer(hang_up=True)) as mute, \
            RobotsSite(RobotsAnswer(status=404)) as open_:
        hosts = [s.url.removeprefix("http://") for s in (closed, mute, open_)]
        requests = [("closed", closed.url + "/a", "never"), ("mute", mute.url + "/a", "never"),
                    ("open", open_.url + "/a", "never")]
        fetched = fetch(requests, tmp_path / "crawl", store=tmp_path / "pages", page_timeout=5, named_private=hosts,
                        crawl=spiders_run.crawl)
    assert closed.pages_asked == set() and mute.pages_asked == set() and open_.pages_asked == {"/a"}
    assert (fetched["closed"].failure, fetched["closed"].detail) == (
        Failure.ROBOTS_DISALLOWED, f"robots.txt of {hosts[0]} forbids it")
    assert (fetched["mute"].failure, fetched["mute"].detail) == (Failure.SITE_DOWN, "download_failed")
    assert fetched["open"].failure is None and fetched["open"].sha256


def test_every_page_waiting_for_its_hosts_robots_txt_is_held_to_it(tmp_path: Path) -> None:
    """Seven pages of one host requested at once wait for its robots.txt (answered after a second): each is judged
    by the rules that came. Scrapy's own middleware handed every waiter after the first None, "allow all" (the
    refactor of scrapy/scrapy#6802 awaits one shared Deferred as several asyncio futures), so disallowed pages
    were fetched whenever a host's robots.txt was slow; ours gives each waiter the rules."""
    from timelyqa.official.pages import fetch  # noqa: PLC0415 - the recipes' crawl, many pages of a host at once
    from timelyqa.official.reasons import Failure  # noqa: PLC0415

    answer = RobotsAnswer(body=b"User-agent: *\nDisallow: /private/\n", delay=1.0)
    with RobotsSite(answer) as site:
        host = site.url.removeprefix("http://")
        requests = [(f"private{n}", f"{site.url}/private/c?n={n}", "never") for n in range(6)]
        requests.append(("open", site.url + "/a", "never"))
        fetched = fetch(requests, tmp_path / "crawl", store=tmp_path / "pages", page_timeout=5, named_private=[host],
                        crawl=spiders_run.crawl)
    assert site.pages_asked == {"/a"}, "no page robots.txt disallows is asked, however many waited for it"
    for n in range(6):
        assert (fetched[f"private{n}"].failure, fetched[f"private{n}"].detail) == (
            Failure.ROBOTS_DISALLOWED, f"robots.txt of {host} forbids it")
    assert fetched["open"].failure is None and fetched["open"].sha256
