"""Where a recipe may go: its host fixed in its own text, and which hosts the operator named (trust by origin).

A recipe's `fetch.url` names its host in one of two ways, and no other:

- written out: `https://stats.example.org/releases/{workday}.html`. No placeholder may stand before the host and port
  are closed by `/`, `?` or `#`, so neither a variable (`http://stats.example{suffix}/x`, `{site}.attacker.example`)
  nor a date format (`http://{today:127.0.0.9:19001}/x`: strftime copies any text that is not a directive) can
  choose it;
- as one variable standing for the whole origin, first and followed by `/`, `?`, `#` or nothing: `{site}/gauges/...`.
  Its value, from the recipe's own `vars:` or the operator's `--var`, must be an origin: `http(s)://host[:port]`,
  optionally with a path, and no user name, query, fragment or backslash.

Either way a recipe's pages all lie on one host:port, and the resolver confines each request (and every redirect)
to its recipe's own host: recipe A cannot follow a redirect to a host only recipe B names.

Which hosts may be private (loopback, private or link-local addresses) depends on who named them, never on what a
recipe says: the operator's `--allow-host`, the values of `--var`, and the recipe files the operator holds
(timelyqa.official.catalog) name hosts that may be private; a release's recipes (third-party data) and a model's
drafts reach public addresses only, refused by the crawl's guard as `private_address` before any connection.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

from timelyqa.official.clock import DAY, is_date_expression
from timelyqa.urls import netloc

_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?" \
        r"|\[[0-9A-Fa-f:.]+\])"
_AUTHORITY = re.compile(rf"^(?P<host>{_HOST})(?::(?P<port>\d{{1,5}}))?$")
_ORIGIN = re.compile(rf"^https?://{_HOST}(?::\d{{1,5}})?(?:/[^\s\\?#]*)?$")
_SCHEME = re.compile(r"^(https?)://")
_ENDS_AUTHORITY = ("/", "?", "#")


def cut(text: str, width: int = 60) -> str:
    """`text` quoted and cut to `width` characters, cut before it is quoted: a message never holds a whole page."""
    return repr(text) if len(text) <= width else repr(text[:width - 3]) + "..."


def clip(text: str, width: int = 120) -> str:
    """`text` (a library's own message, say) on one line and cut to `width` characters, unquoted."""
    line = " ".join(text[:width * 2].split())
    return line if len(line) <= width else line[:width - 3] + "..."


def check_template(url: str) -> None:
    """ValueError, one line, when `url` (a fetch.url template) does not fix its host in its own text."""
    parsed = list(string.Formatter().parse(url))  # the caller has checked the braces (clock.placeholders)
    head, first = (parsed[0][0], parsed[0][1]) if parsed else ("", None)
    if head == "" and first is not None:  # it starts with a placeholder: the whole origin, or nothing
        after = parsed[1][0] if len(parsed) > 1 else ""
        next_name = parsed[1][1] if len(parsed) > 1 else None
        if first == DAY or is_date_expression(first):
            raise ValueError(f"{{{first}}} is a date, and cannot stand for the host: write the host out, or start "
                             "with a variable for the whole origin, such as {site}/path")
        if after == "" and next_name is not None or after and not after.startswith(_ENDS_AUTHORITY):
            rest = after or "{" + str(next_name) + "}"
            raise ValueError(f"{{{first}}} stands for a whole origin (scheme://host[:port]) and must be followed by "
                             f"/, ? or # (here by {cut(rest, 30)}): a host cannot be pieced together")
        return
    scheme = _SCHEME.match(head)
    if scheme is None:
        raise ValueError(f"must start with http://, https:// or a {{variable}} such as {{site}}, not {cut(url)}")
    rest = head[scheme.end():]
    ends = [i for i in (rest.find(c) for c in _ENDS_AUTHORITY) if i >= 0]
    if not ends and first is not None:
        what = "a date's format can write any text" if first == DAY or is_date_expression(first) else "a variable"
        raise ValueError(f"{{{first}}} stands where the host is ({what}): a recipe writes its host out (or starts "
                         "with a variable for the whole origin, such as {site}/path)")
    authority = rest[:min(ends)] if ends else rest
    if _AUTHORITY.match(authority) is None:
        raise ValueError(f"{cut(authority, 40)} is not a host[:port] (no user name, no backslash, letters, digits, "
                         "'-' and '.' only)")


def origin_variable(url: str) -> str | None:
    """The variable standing for the whole origin (`site` in `{site}/x`), or None when the host is written out."""
    parsed = list(string.Formatter().parse(url))
    return parsed[0][1] if parsed and parsed[0][0] == "" and parsed[0][1] is not None else None


def check_origin(name: str, value: str) -> None:
    """ValueError when a value given for an origin variable is not `http(s)://host[:port]` (optionally a path)."""
    if _ORIGIN.match(value) is None:
        raise ValueError(f"{{{name}}} = {cut(value)} is not an origin: http(s)://host[:port] with no user name, "
                         "query or fragment")


def host_port(url: str) -> str | None:
    """host:port of an http(s) URL, the scheme's default port made explicit (as the crawl's guard compares them)."""
    return netloc(url) or None  # the one check (timelyqa.urls): a URL with no canonical form names no host


def allow_host(text: str) -> str:
    """An `--allow-host` value as the crawl compares it: `host:port`, or `host` alone for every port of that host;
    ValueError naming it when it is neither."""
    given = text.strip().lower()
    m = _AUTHORITY.match(given)
    if m is None:
        raise ValueError(f"--allow-host {cut(text)}: not HOST or HOST:PORT (such as 127.0.0.1:8000 or localhost)")
    return given


def named_hosts(*, allow: Iterable[str] = (), values: Iterable[str] = (), urls: Iterable[str] = ()) -> frozenset[str]:
    """The hosts the operator named, which may be private: `--allow-host` entries (`host` or `host:port`), and the
    host:port of each `--var` value and each URL of an operator's recipe file that is an http(s) URL."""
    named = {allow_host(a) for a in allow}
    named |= {h for h in (host_port(v) for v in [*values, *urls]) if h is not None}
    return frozenset(named)


def is_named(where: str, named: frozenset[str]) -> bool:
    """True when host:port `where` is one the operator named (exactly, or its host named without a port)."""
    return where in named or where.rsplit(":", 1)[0] in named
