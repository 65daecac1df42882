"""The one URL check, which is the canonicaliser itself: a URL is a web page's address exactly when it has a
canonical form, and that form is what every part compares (the crawl's page identity, its host guard, the news
outlets, the recipes).

A check apart from the canonicaliser let through what canonicalisation then refused (`https://a.org:99999/` passed
`urlsplit(...).hostname` and raised in `w3lib`), so one bad link ended a crawl. Here `why_not` is `canonical` with
the exception caught: they cannot disagree.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

DEFAULT_PORTS = {"http": 80, "https": 443}
"""The schemes a page is fetched by, and the port each means when none is written."""

# Query keys that never change the page, compared case-insensitively.
DROPPED_KEYS = frozenset({
    # Session ids name the visitor, not the page: every session would re-crawl the whole site.
    "jsessionid", "phpsessid", "sid", "sessionid", "session_id",
    # Click and campaign ids say how the visitor arrived; the page is the same for every ad.
    "gclid", "fbclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "ref_src",
})
# Analytics campaigns add any utm_* key they like (utm_source, utm_medium, utm_content ...).
DROPPED_PREFIXES = ("utm_",)

# Java servers put the session id in the path as a parameter when cookies are off.
_JSESSIONID_PARAM = re.compile(r";jsessionid=[^/?#;]*", re.IGNORECASE)
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


class UrlError(ValueError):
    """A URL that has no canonical form; `why` says what is wrong with it, in a few words."""

    def __init__(self, url: str, why: str) -> None:
        shown = repr(url if len(url) <= 120 else url[:117] + "...")
        super().__init__(f"{shown}: {why}, cannot canonicalise")
        self.url, self.why = url, why


def _dropped(pair: str) -> bool:
    key = unquote_plus(pair.partition("=")[0]).lower()
    return key in DROPPED_KEYS or key.startswith(DROPPED_PREFIXES)


def _check_host(url: str, host: str) -> None:
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host.strip("[]"))
        except ValueError:
            raise UrlError(url, f"{host} is not an IPv6 address") from None
        return
    name = host.removesuffix(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in name.split(".")):
        raise UrlError(url, f"{host[:80]!r} is not a host name (labels of 1 to 63 letters, digits, '-' or '_')")


# Cached: a site's menus repeat the same links on every page, and with a hundred links a page, splitting and
# canonicalising them again took 1.7 ms a page (0.07 ms cached), a quarter of the crawl process's own time.
@functools.lru_cache(maxsize=1 << 16)
def canonical(url: str) -> str:
    """The URL a page is known by: the same page reached by two spellings gets one identity. UrlError, saying why,
    for anything that is no http(s) URL with a valid host and port."""
    url = url.strip()
    try:
        scheme, netloc, path, query, _ = urlsplit(url)
        if scheme not in DEFAULT_PORTS:
            raise UrlError(url, "not an http(s) URL")
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except UrlError:
        raise
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535", "Port could not be cast ..."
        why = " ".join(str(exc).split())[:120]
        why = "its port is out of range (1-65535)" if why.startswith("Port out of range") else why[:1].lower() + why[1:]
        raise UrlError(url, why) from None
    authority = netloc.rpartition("@")[2]
    if not host:
        raise UrlError(url, "no host")
    if "\\" in url.split("?")[0].split("#")[0]:
        # browsers read a backslash as a slash: `https://a.org\\@b.org/` is b.org here and a.org in Chromium
        raise UrlError(url, "a backslash before its query, which browsers read as a slash")
    if _CONTROL.search(authority):
        raise UrlError(url, "a space or control character in its host")
    if port == 0:
        raise UrlError(url, "port 0 is no port")
    query = "&".join(p for p in query.split("&") if p and not _dropped(p))
    try:
        # w3lib lower-cases the host (IDNA for other scripts), sorts the query, normalises percent-encoding and drops
        # the fragment.
        out = canonicalize_url(urlunsplit((scheme, netloc, _JSESSIONID_PARAM.sub("", path), query, "")))
        scheme, netloc, path, query, _ = urlsplit(out)
        done = urlsplit(out)
        done_host = done.hostname or ""
    except (ValueError, UnicodeError) as exc:
        raise UrlError(url, f"its host cannot be encoded ({str(exc)[:80]})") from None
    _check_host(url, f"[{done_host}]" if ":" in done_host else done_host)
    netloc = netloc.removesuffix(f":{DEFAULT_PORTS[scheme]}")
    # Sorted pairs sit side by side, so dict.fromkeys drops repeats and keeps the order.
    query = "&".join(dict.fromkeys(query.split("&"))) if query else ""
    return urlunsplit((scheme, netloc, path, query, ""))


@functools.lru_cache(maxsize=1 << 14)  # a refusal is not cached by `canonical`'s cache, and menus repeat bad links too
def why_not(url: str) -> str | None:
    """None when `url` has a canonical form, else why it has none (one line, naming the URL)."""
    try:
        canonical(url)
    except UrlError as exc:
        return str(exc)
    return None


def is_crawlable(url: str) -> bool:
    """True for an http(s) URL with a canonical form: mailto:, javascript:, tel:, data: and malformed ones have no
    page to fetch."""
    return why_not(url) is None


def host_port(url: str) -> tuple[str, int] | None:
    """The host (lower case, IDNA, no trailing dot) and port (the scheme's default when none is written) of the
    URL's canonical form, or None when it has none."""
    try:
        parts = urlsplit(canonical(url))
    except UrlError:
        return None
    return (parts.hostname or "").rstrip("."), parts.port or DEFAULT_PORTS[parts.scheme]


def netloc(url: str) -> str:
    """host:port with the scheme's default port made explicit: `http://a.org/` and `http://a.org:80/` are one site;
    "" for a URL with no canonical form (no site at all: never one a guard allows)."""
    where = host_port(url)
    return f"{where[0]}:{where[1]}" if where is not None else ""
