"""The browser's policy proxy reads a host's robots.txt as the crawl does (RFC 9309): a page behind a robots.txt
that answers 5xx, times out, hangs up, is a gzip bomb or opens a 10 MB file with `Disallow: /` is refused (403,
`robots_disallowed`) and never fetched; a 4xx allows the host; each host's case is reported once."""

from __future__ import annotations

import gzip

import pytest

from spiders.guard import HostGuard
from spiders.proxy import PolicyProxy, RobotsRules
from tests.robots_server import RobotsAnswer, RobotsSite, gzip_bomb, padded
from tests.test_proxy import ask, get

UA = "timelyqa-test/1.0 (+tests)"
MB = 1024 * 1024

CASES = {
    "503": (RobotsAnswer(status=503), "server_error", {"/a": False, "/private/c": False}),
    "500": (RobotsAnswer(status=500, body=b"User-agent: *\nDisallow:\n"), "server_error",
            {"/a": False, "/private/c": False}),
    "timeout": (RobotsAnswer(delay=3.0), "unreachable", {"/a": False, "/private/c": False}),
    "hang_up": (RobotsAnswer(hang_up=True), "unreachable", {"/a": False, "/private/c": False}),
    "10MB_disallow_all": (RobotsAnswer(body=padded("User-agent: *\nDisallow: /\n", 10 * MB)), "truncated",
                          {"/a": False, "/private/c": False}),
    "gzip_bomb": (RobotsAnswer(body=gzip_bomb(200 * MB), headers={"Content-Encoding": "gzip"}), "too_large",
                  {"/a": False, "/private/c": False}),
    "404": (RobotsAnswer(status=404, body=b"Disallow: /"), "unavailable", {"/a": True, "/private/c": True}),
    "10MB_with_rules": (RobotsAnswer(body=padded("User-agent: *\nDisallow: /private/\n", 10 * MB)), "truncated",
                        {"/a": True, "/private/c": False}),
    "gzip": (RobotsAnswer(body=gzip.compress(b"User-agent: *\nDisallow: /private/\n"),
                          headers={"Content-Encoding": "gzip"}), "parsed", {"/a": True, "/private/c": False}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_proxy_obeys_robots_txt_as_rfc9309_reads_it(name: str) -> None:
    answer, case, verdicts = CASES[name]
    seen: list[str] = []
    with RobotsSite(answer) as site:
        host = site.url.removeprefix("http://")
        rules = RobotsRules(UA, on_case=seen.append, timeout=1.0)
        with PolicyProxy(HostGuard.of([site.url + "/"]), robots=rules) as proxy:
            answers = {path: ask(proxy, get(host, path)) for path in verdicts}
    for path, allowed in verdicts.items():
        status, head, _ = answers[path]
        if allowed:
            assert status == 200, f"{name}: {path} refused"
        else:
            assert status == 403 and "X-Policy-Refusal: robots_disallowed" in head, f"{name}: {path} let through"
    assert site.pages_asked == {p for p, ok in verdicts.items() if ok}
    assert site.requests.count("/robots.txt") == 1 and seen == [case]
