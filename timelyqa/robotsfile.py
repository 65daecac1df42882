"""What a host's robots.txt answer means, as RFC 9309 reads it: the rules of a 2xx body (its first ROBOTS_LIMIT
bytes at least), allow all on 4xx, disallow all on 5xx and when the file cannot be reached or read. Pure: the crawl's
middleware (spiders/robots.py) and the browser's proxy (spiders/proxy.py) both ask it, so both obey alike."""

from __future__ import annotations

import re
import zlib
from enum import StrEnum
from typing import Any

from protego import Protego

ROBOTS_LIMIT = 512 * 1024
"""Bytes of a robots.txt read and parsed; RFC 9309 2.5 asks for at least 500 KiB. The rest of a longer file is
ignored (its first rules hold: a 10 MB file starting `Disallow: /` disallows)."""
EXPANDED_LIMIT = 5 * 1024 * 1024
"""A compressed robots.txt that expands past this (a gzip bomb) is not read at all: unreachable, so disallow all."""


class Case(StrEnum):
    """How a host's robots.txt ended; counted in crawl stats as `robots/<case>`."""

    PARSED = "parsed"  # 2xx, read whole
    TRUNCATED = "truncated"  # 2xx over ROBOTS_LIMIT: its first ROBOTS_LIMIT bytes read
    UNAVAILABLE = "unavailable"  # 4xx (429 aside): allow all (RFC 9309 2.3.1.3)
    REDIRECT_UNFOLLOWED = "redirect_unfollowed"  # over five redirects, or to where the crawl may not go: as 4xx
    SERVER_ERROR = "server_error"  # 5xx, or 429: disallow all (RFC 9309 2.3.1.4)
    UNREACHABLE = "unreachable"  # timeout, refused, DNS, a broken body: disallow all
    TOO_LARGE = "too_large"  # a compressed body expanding past EXPANDED_LIMIT: disallow all
    UNDECODABLE = "undecodable"  # a Content-Encoding that is not gzip or deflate, or a broken one: disallow all


ALLOWING = frozenset({Case.PARSED, Case.TRUNCATED, Case.UNAVAILABLE, Case.REDIRECT_UNFOLLOWED})
"""The cases whose file (or its absence) is obeyed as it says; every other case disallows the whole host."""


class Rules:
    """One host's robots.txt as read: `allowed(url, user_agent)`, the interface of Scrapy's RobotParser."""

    def __init__(self, case: Case, parser: Protego | None = None, *, cause: BaseException | None = None) -> None:
        self.case, self.parser, self.cause = case, parser, cause  # cause: why an unreachable file was not reached

    @property
    def disallows_all(self) -> bool:
        return self.case not in ALLOWING

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        if self.disallows_all:
            return False
        if self.parser is None:
            return True
        url = url.decode("utf-8", "replace") if isinstance(url, bytes) else url
        agent = user_agent.decode("utf-8", "replace") if isinstance(user_agent, bytes) else user_agent
        return bool(self.parser.can_fetch(url, agent))

    def __repr__(self) -> str:
        return f"Rules({self.case})"


def parse(body: bytes, *, truncated: bool = False) -> Rules:
    """The rules of a robots.txt body: UTF-8 (RFC 9309 2.2), a byte order mark (even a cut one) skipped, a byte
    that is not UTF-8 spoiling only its own line. A body over ROBOTS_LIMIT is cut at its last line end within the
    limit, so a line cut in two (or a character) is not read as a shorter rule."""
    if truncated or len(body) > ROBOTS_LIMIT:
        head = body[:ROBOTS_LIMIT]
        cut = max(head.rfind(b"\n"), head.rfind(b"\r"))
        body, truncated = (head[:cut + 1] if cut >= 0 else head), True
    for bom in (b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"):  # a byte order mark, even one cut short, opens no line
        if body.startswith(bom):
            body = body[len(bom):]
            break
    text = _AGENT_WORDS.sub(r"\1\2", body.decode("utf-8", "replace"))
    return Rules(Case.TRUNCATED if truncated else Case.PARSED, Protego.parse(text))


_AGENT_WORDS = re.compile(r"^([ \t]*user-agent[ \t]*:[ \t]*)([^\s#]+)[ \t]+[^#\r\n]*", re.IGNORECASE | re.MULTILINE)
"""A user-agent value is one product token (RFC 9309 2.2.1); a line naming more (`User-agent: Foo Bar`) is read for
its first, as Google's parser does, so the group applies to Foo rather than to no one."""


def read(status: int, body: bytes = b"", *, truncated: bool = False) -> Rules:
    """The rules a robots.txt answer of `status` (after redirects) sets, its body already decoded."""
    if 200 <= status < 300:
        return parse(body, truncated=truncated)
    if status == 429 or status >= 500:
        return Rules(Case.SERVER_ERROR)  # 429: the host asks for less, not for more
    if 400 <= status < 500:
        return Rules(Case.UNAVAILABLE)
    return Rules(Case.REDIRECT_UNFOLLOWED)  # a 3xx still standing once redirects are done with (or 1xx)


class BodyError(Exception):
    """A robots.txt body that cannot be read: `case` says why (TOO_LARGE, UNDECODABLE)."""

    def __init__(self, case: Case, detail: str) -> None:
        super().__init__(f"{case}: {detail}")
        self.case = case


def decode(body: bytes, encodings: list[str], *, limit: int = EXPANDED_LIMIT) -> bytes:
    """`body` undone of its Content-Encodings (the last applied first), never expanding past `limit` bytes:
    BodyError(TOO_LARGE) beyond, BodyError(UNDECODABLE) for an encoding other than gzip, deflate or identity, or
    a stream that is broken before any byte comes out. A stream cut short (a body truncated at ROBOTS_LIMIT) gives
    what it holds."""
    for encoding in reversed([e.strip().lower() for e in encodings if e.strip()]):
        if encoding in ("identity", ""):
            continue
        if encoding in ("gzip", "x-gzip"):
            body = _inflate(body, zlib.MAX_WBITS | 16, limit)
        elif encoding == "deflate":
            try:
                body = _inflate(body, zlib.MAX_WBITS, limit)  # zlib-wrapped, as the RFC says
            except BodyError as error:
                if error.case is not Case.UNDECODABLE:
                    raise
                body = _inflate(body, -zlib.MAX_WBITS, limit)  # raw deflate, as some servers send
        else:
            raise BodyError(Case.UNDECODABLE, f"Content-Encoding {encoding!r}")
    return body


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    out = bytearray()
    pending = data
    try:
        while pending:
            out += inflater.decompress(pending, limit + 1 - len(out))
            if len(out) > limit:
                raise BodyError(Case.TOO_LARGE, f"expands past {limit} bytes")
            pending = inflater.unconsumed_tail
            if inflater.eof:
                break
    except zlib.error as exc:
        if not out:
            raise BodyError(Case.UNDECODABLE, str(exc)) from None
    return bytes(out)


def header_list(value: Any) -> list[str]:
    """A Content-Encoding header's codings, from one or several values, bytes or text."""
    values = value if isinstance(value, list | tuple) else [value]
    text = ",".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values if v)
    return [part.strip() for part in text.split(",") if part.strip()]
