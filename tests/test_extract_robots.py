"""`timelyqa extract URL` reads a host's robots.txt as every crawl does (timelyqa/robotsfile.py, RFC 9309), not as
Python's urllib.robotparser would: wildcards and `$`, the longest match, 429 as "allows nothing", a compressed file
read within its bound. Each case against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
from urllib.robotparser import RobotFileParser

import pytest

from tests.robots_server import RobotsAnswer, RobotsSite
from timelyqa.errors import ConfigError
from timelyqa.news import onepage
from timelyqa.robotsfile import EXPANDED_LIMIT

AGENT = "timelyqa-test/1.0 (+https://example.org/bot)"


def test_a_wildcard_rule_and_the_longest_match_refuse_what_pythons_parser_would_fetch() -> None:
    rules = b"User-agent: *\nAllow: /\nDisallow: /*b$\nDisallow: /private/\n"
    stdlib = RobotFileParser()
    stdlib.parse(rules.decode().splitlines())
    with RobotsSite(RobotsAnswer(body=rules)) as site:
        wildcard, private, page = f"{site.url}/b", f"{site.url}/private/c", f"{site.url}/a"
        # What `extract` obeyed before: the wildcard read as a literal path, and the first rule in the file's order
        # (Allow: /) taken over the longest (RFC 9309 2.2.2: Disallow: /private/).
        assert stdlib.can_fetch(AGENT, wildcard) and stdlib.can_fetch(AGENT, private)
        for refused in (wildcard, private):
            with pytest.raises(ConfigError, match=f"^{refused}: refused by {site.url}/robots.txt for this User-Agent$"):
                onepage.fetch(refused, AGENT)
        assert b"Page /a" in onepage.fetch(page, AGENT).body
    assert site.pages_asked == {"/a"} and site.requests.count("/robots.txt") == 3


@pytest.mark.parametrize(("answer", "case"), [
    (RobotsAnswer(status=429, body=b""), "server_error"),  # asks for less, not for more: RFC 9309 reads it as a 5xx
    (RobotsAnswer(status=503, body=b"User-agent: *\nDisallow:\n"), "server_error"),
    (RobotsAnswer(body=gzip.compress(b"#" * (EXPANDED_LIMIT + 1)), headers={"Content-Encoding": "gzip"}), "too_large"),
    (RobotsAnswer(body=b"\x00\x01", headers={"Content-Encoding": "br"}), "undecodable"),
], ids=["429", "503", "gzip_bomb", "unknown_encoding"])
def test_a_robots_txt_that_allows_nothing_refuses_the_page_without_asking_for_it(answer: RobotsAnswer,
                                                                               case: str) -> None:
    with RobotsSite(answer) as site:
        page = f"{site.url}/a"
        with pytest.raises(ConfigError, match=rf"^{page}: refused, {site.url}/robots.txt allows nothing \({case}\)$"):
            onepage.fetch(page, AGENT)
    assert site.requests == ["/robots.txt"]


def test_a_missing_robots_txt_allows_the_page() -> None:
    with RobotsSite(RobotsAnswer(status=404, body=b"User-agent: *\nDisallow: /\n")) as site:
        assert b"Page /a" in onepage.fetch(f"{site.url}/a", AGENT).body
