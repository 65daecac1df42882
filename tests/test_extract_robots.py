"""`timelyqa extract URL` reads a host's robots.txt as every crawl does (timelyqa/robotsfile.py, RFC 9309), not as
Python's urllib.robotparser would: wildcards and `$`, the longest match, 429 as "allows nothing", a compressed file
read within its bound. Each case against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.robotparser import RobotFileParser

import pytest

from timelyqa.errors import ConfigError
from timelyqa.news import onepage
from timelyqa.robotsfile import EXPANDED_LIMIT

AGENT = "timelyqa-test/1.0 (+https://example.org/bot)"
PAGE = b"<!doctype html><html><head><title>Bridge</title></head><body><p>The bridge reopens.</p></body></html>"


class _Outlet(BaseHTTPRequestHandler):
    robots: tuple[int, dict[str, str], bytes] = (200, {}, b"")
    asked: list[str]

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self.asked.append(self.path)
        status, headers, body = self.robots if self.path == "/robots.txt" else (
            200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def outlet() -> Iterator[type[_Outlet]]:
    handler = type("Outlet", (_Outlet,), {"asked": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield handler
    server.shutdown()
    server.server_close()


def test_a_wildcard_rule_refuses_what_pythons_parser_would_fetch(outlet: type[_Outlet]) -> None:
    rules = b"User-agent: *\nDisallow: /*-draft.html$\nAllow: /news/\nDisallow: /news/private\n"
    outlet.robots = (200, {"Content-Type": "text/plain"}, rules)
    draft, page, private = (f"{outlet.base}{path}" for path in (
        "/news/bridge-draft.html", "/news/bridge.html", "/news/private.html"))
    stdlib = RobotFileParser()
    stdlib.parse(rules.decode().splitlines())
    assert stdlib.can_fetch(AGENT, draft)  # what `extract` obeyed before: the wildcard read as a literal path
    with pytest.raises(ConfigError, match=f"^{draft}: refused by {outlet.base}/robots.txt for this User-Agent$"):
        onepage.fetch(draft, AGENT)
    # The longest match wins (RFC 9309 2.2.2): /news/private is more specific than /news/; Python's parser takes the
    # first rule that matches in the file's order and would fetch it.
    assert stdlib.can_fetch(AGENT, private)
    with pytest.raises(ConfigError, match="refused by"):
        onepage.fetch(private, AGENT)
    assert onepage.fetch(page, AGENT).body == PAGE
    assert outlet.asked.count("/robots.txt") == 3 and "/news/bridge-draft.html" not in outlet.asked


@pytest.mark.parametrize(("status", "headers", "body", "case"), [
    (429, {}, b"", "server_error"),  # asks for less, not for more: RFC 9309 reads it as a 5xx
    (503, {}, b"", "server_error"),
    (200, {"Content-Encoding": "gzip"}, gzip.compress(b"#" * (EXPANDED_LIMIT + 1)), "too_large"),
    (200, {"Content-Encoding": "br"}, b"\x00\x01", "undecodable"),
])
def test_a_robots_txt_that_allows_nothing_refuses_the_page_without_asking_for_it(
        outlet: type[_Outlet], status: int, headers: dict[str, str], body: bytes, case: str) -> None:
    outlet.robots = (status, headers, body)
    page = f"{outlet.base}/news/bridge.html"
    with pytest.raises(ConfigError, match=rf"^{page}: refused, {outlet.base}/robots.txt allows nothing \({case}\)$"):
        onepage.fetch(page, AGENT)
    assert outlet.asked == ["/robots.txt"]


def test_a_missing_robots_txt_allows_the_page(outlet: type[_Outlet]) -> None:
    outlet.robots = (404, {}, b"not here")
    assert onepage.fetch(f"{outlet.base}/news/bridge.html", AGENT).body == PAGE
