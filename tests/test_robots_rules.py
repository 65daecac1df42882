"""The robots.txt reader every crawl and the browser's proxy share (timelyqa/robotsfile.py), checked against the
conformance cases the parsers others rely on publish (Google's robots.txt test suite, Protego's tests, RFC 9309's
own example), each a fixture in robots.txt format whose comments say what it must allow and disallow; and against
what RFC 9309 asks of an answer that is not a plain 200."""

from __future__ import annotations

import gzip
import time
import zlib
from pathlib import Path

import pytest

from timelyqa.robotsfile import EXPANDED_LIMIT, ROBOTS_LIMIT, BodyError, Case, decode, header_list, parse, read
from timelyqa.useragent import DEFAULT_USER_AGENT

FIXTURES = Path(__file__).parent / "fixtures" / "robots"


def expectations(data: bytes) -> list[tuple[bool, str, str]]:
    """The `# expect: allow|disallow AGENT URL` lines of a fixture; `{ua}` stands for the crawl's User-Agent."""
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("# expect: "):
            verdict, agent, url = line.removeprefix("# expect: ").split(" ", 2)
            found.append((verdict == "allow", agent.replace("{ua}", DEFAULT_USER_AGENT), url))
    return found


CASES = sorted(FIXTURES.glob("*.txt"))


def test_the_conformance_cases_are_there() -> None:
    sources = {p.name.split("_", 1)[0] for p in CASES}
    assert len(CASES) >= 40 and {"google", "protego", "rfc9309", "timelyqa"} <= sources
    assert all(expectations(p.read_bytes()) for p in CASES), "a fixture without an expectation tests nothing"


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_a_published_conformance_case(fixture: Path) -> None:
    data = fixture.read_bytes()
    rules = read(200, data)
    wrong = [f"{'allow' if want else 'disallow'} {agent} {url}" for want, agent, url in expectations(data)
             if rules.allowed(url, agent) is not want]
    assert not wrong, f"{fixture.name}: read otherwise: {wrong}"


# --- what an answer that is not a plain 200 means (RFC 9309 2.3.1) ---------------------------------------------

@pytest.mark.parametrize(("status", "case", "allows"), [
    (200, Case.PARSED, False), (204, Case.PARSED, True), (301, Case.REDIRECT_UNFOLLOWED, True),
    (400, Case.UNAVAILABLE, True), (401, Case.UNAVAILABLE, True), (403, Case.UNAVAILABLE, True),
    (404, Case.UNAVAILABLE, True), (410, Case.UNAVAILABLE, True), (429, Case.SERVER_ERROR, False),
    (500, Case.SERVER_ERROR, False), (502, Case.SERVER_ERROR, False), (503, Case.SERVER_ERROR, False),
    (599, Case.SERVER_ERROR, False)])
def test_each_status_has_its_rfc9309_meaning(status: int, case: Case, allows: bool) -> None:
    body = b"" if status == 204 else b"User-agent: *\nDisallow: /\n"  # a 4xx or 5xx body is never read as rules
    rules = read(status, body)
    assert rules.case is case
    assert rules.allowed("http://example.com/page", DEFAULT_USER_AGENT) is allows


def test_a_long_file_is_read_for_its_first_512_kib() -> None:
    filler = b"# " + b"x" * 97 + b"\n"
    early = b"User-agent: *\nDisallow: /early\n" + filler * 5000  # rules in the first 500 KiB
    late = early + filler * 6000 + b"Disallow: /late\n"  # past 1 MiB: never read
    rules = read(200, late)
    assert rules.case is Case.TRUNCATED
    assert not rules.allowed("http://example.com/early", "bot")
    assert rules.allowed("http://example.com/late", "bot")
    assert len(early) < 500 * 1024 < ROBOTS_LIMIT


def test_a_file_cut_inside_a_line_or_a_character_loses_only_that_line() -> None:
    rules = parse(b"User-agent: *\nDisallow: /a\nDisallow: /caf\xc3", truncated=True)
    assert rules.case is Case.TRUNCATED
    assert not rules.allowed("http://example.com/a", "bot")
    assert rules.allowed("http://example.com/caf", "bot")  # the cut line is dropped, not read as `Disallow: /caf`


def test_a_byte_that_is_not_utf8_spoils_its_line_not_the_file() -> None:
    """RFC 9309 wants UTF-8; a Latin-1 comment does not throw the file away, the rules around it hold."""
    rules = read(200, b"# Caf\xe9 du Nord\nUser-agent: *\nDisallow: /private\n")
    assert not rules.allowed("http://example.com/private/x", "bot")


# --- bodies: compressed, bombs ---------------------------------------------------------------------------------

def test_gzip_and_deflate_bodies_are_read() -> None:
    text = b"User-agent: *\nDisallow: /x\n"
    assert decode(gzip.compress(text), ["gzip"]) == text
    assert decode(zlib.compress(text), ["deflate"]) == text
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode(raw.compress(text) + raw.flush(), ["deflate"]) == text  # raw deflate, as some servers send
    assert decode(gzip.compress(zlib.compress(text)), header_list([b"deflate, gzip"])) == text
    assert decode(text, ["identity"]) == text


def test_a_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\n" * (EXPANDED_LIMIT * 4))
    with pytest.raises(BodyError) as raised:
        decode(bomb, ["gzip"])
    assert raised.value.case is Case.TOO_LARGE


@pytest.mark.parametrize(("body", "encoding"), [(b"\x00not gzip", "gzip"), (b"anything", "br"), (b"x", "compress")])
def test_a_body_that_cannot_be_undone_is_undecodable(body: bytes, encoding: str) -> None:
    with pytest.raises(BodyError) as raised:
        decode(body, [encoding])
    assert raised.value.case is Case.UNDECODABLE


def test_a_gzip_stream_cut_short_gives_what_it_holds() -> None:
    text = b"User-agent: *\nDisallow: /x\n" + b"# pad\n" * 10000
    cut = gzip.compress(text)[:200]
    assert text.startswith(decode(cut, ["gzip"]))


def test_a_hostile_pattern_costs_no_more_than_an_ordinary_one() -> None:
    """A thousand wildcards against a long URL (backtracking bait), and 512 KiB of wildcard rules: bounded."""
    began = time.monotonic()
    bait = read(200, ("User-agent: *\nDisallow: /" + "*a" * 1000 + "*b$\n").encode())
    assert bait.allowed("http://example.com/" + "a" * 8000, "bot")
    many = read(200, ("User-agent: *\n" + "".join(f"Disallow: /p{i}/*x*y$\n" for i in range(30000))).encode())
    assert many.case is Case.TRUNCATED and not many.allowed("http://example.com/p7/axbyc/y", "bot")
    assert time.monotonic() - began < 3
