"""One page for `timelyqa extract`: read from a file (`.html` or `.html.gz`) or fetched once over HTTP the way the
crawl would (its User-Agent, robots.txt obeyed on every hop, redirects followed), and what the pipeline would store
of it. Without Scrapy: the core never imports it."""

from __future__ import annotations

import gzip
import hashlib
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from trafilatura.utils import decode_file

from timelyqa.errors import ConfigError, TransientSourceError
from timelyqa.news.extract import extract
from timelyqa.robotsfile import ROBOTS_LIMIT, BodyError, Rules, decode, header_list, read

MAX_REDIRECTS = 5
MAX_BYTES = 5 * 1024 * 1024
"""The crawl's DOWNLOAD_MAXSIZE: a page over 5 MiB is no page a person reads."""
TIMEOUT = 30.0
HTML_TYPES = ("text/html", "application/xhtml+xml")
_HTML_START = re.compile(rb"<(?:!doctype\s+html|html|head|body|title|meta|div|p|article)[\s>/]", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    """Where the page was served (after redirects), or the URL named for a file."""
    body: bytes
    """The page's bytes as served (a `.gz` file's once decompressed)."""
    encoding: str | None = None
    """The charset the server named, if any; else it is read from the page (its meta tag, or a guess)."""

    def html(self) -> str:
        if self.encoding:
            try:
                return self.body.decode(self.encoding)
            except (LookupError, UnicodeDecodeError):
                pass
        return decode_file(self.body)


def is_url(target: str) -> bool:
    return urlsplit(target).scheme in ("http", "https")


def read_file(path: Path, url: str | None = None) -> Page:
    """The page in `path` (`.gz` decompressed), served at `url` (default: the file's `file://` URL)."""
    if not path.is_file():
        first, slash, _ = str(path).partition("/")
        looks_like_host = "." in first and not first.startswith(".") and (slash or first.startswith("www."))
        hint = f"; a web page needs its scheme: https://{path}" if looks_like_host else ""
        raise ConfigError(f"{path}: no such file{hint}")
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ConfigError(f"{path}: not a gzip file ({exc})") from None
    if not looks_like_html(data):
        raise ConfigError(f"{path}: not an HTML page")
    return Page(url=url or path.resolve().as_uri(), body=data)


def looks_like_html(data: bytes) -> bool:
    """True when the bytes open like a web page: no NUL byte, and an HTML tag in the first 64 KiB."""
    head = data[:65536]
    return b"\x00" not in head and _HTML_START.search(head) is not None


def fetch(url: str, agent: str, *, client: httpx.Client | None = None) -> Page:
    """The page at `url`, fetched once as the crawl would: each hop allowed by its host's robots.txt, at most
    MAX_REDIRECTS redirects, an HTML answer with status 200. ConfigError when refused, gone (4xx) or not HTML;
    TransientSourceError when unreachable, too busy (429) or failing (5xx)."""
    own = client is None
    http = client or httpx.Client(headers={"User-Agent": agent}, timeout=TIMEOUT, follow_redirects=False)
    try:
        robots: dict[str, Rules] = {}
        for _ in range(MAX_REDIRECTS + 1):
            _obey_robots(http, url, agent, robots)
            response = _get(http, url)
            if response.is_redirect and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                continue
            return _page(url, response)
        raise ConfigError(f"{url}: more than {MAX_REDIRECTS} redirects")
    finally:
        if own:
            http.close()


def _get(http: httpx.Client, url: str, *, page: str | None = None, follow: bool = False) -> httpx.Response:
    """The answer to GET `url`; TransientSourceError naming `page` (the page this request is for) when none."""
    try:
        return http.get(url, follow_redirects=follow)
    except httpx.HTTPError as exc:
        raise TransientSourceError(f"{page or url}: unreachable ({type(exc).__name__}: {exc})") from None


def _page(url: str, response: httpx.Response) -> Page:
    if response.status_code != 200:
        transient = response.status_code == 429 or response.status_code >= 500
        raise (TransientSourceError if transient else ConfigError)(f"{url}: HTTP {response.status_code}")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind not in HTML_TYPES:
        raise ConfigError(f"{url}: not an HTML page (content-type {kind or 'none'})")
    if len(response.content) > MAX_BYTES:
        raise ConfigError(f"{url}: over {MAX_BYTES // 2**20} MiB, no page a person reads")
    return Page(url=url, body=response.content, encoding=response.charset_encoding)


def _obey_robots(http: httpx.Client, url: str, agent: str, seen: dict[str, Rules]) -> None:
    """ConfigError when the host's robots.txt forbids `url` to `agent`, read as every crawl reads it
    (timelyqa/robotsfile.py, RFC 9309): a 4xx allows all; a 5xx, a 429 or a body that cannot be read allows nothing;
    wildcards and the longest match as Protego reads them; its first ROBOTS_LIMIT bytes, never expanded past
    EXPANDED_LIMIT."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if origin not in seen:
        seen[origin] = _robots(http, f"{origin}/robots.txt", page=url)
    rules = seen[origin]
    if rules.disallows_all:
        raise ConfigError(f"{url}: refused, {origin}/robots.txt allows nothing ({rules.case})")
    if not rules.allowed(url, agent):
        raise ConfigError(f"{url}: refused by {origin}/robots.txt for this User-Agent")


def _robots(http: httpx.Client, robots_url: str, *, page: str) -> Rules:
    try:
        with http.stream("GET", robots_url, follow_redirects=True) as response:
            body, truncated = bytearray(), False
            for chunk in response.iter_raw():
                body += chunk
                if len(body) > ROBOTS_LIMIT:
                    truncated = True
                    break
            encodings = header_list(response.headers.get_list("content-encoding"))
            status = response.status_code
    except httpx.HTTPError as exc:
        raise TransientSourceError(f"{page}: unreachable ({type(exc).__name__}: {exc})") from None
    try:
        text = decode(bytes(body), encodings)
    except BodyError as error:
        return Rules(error.case)
    return read(status, text, truncated=truncated)


def stored(page: Page) -> dict[str, Any]:
    """What the pipeline would store of `page`: its extraction, the sha256 of its bytes and the characters of
    its extracted text."""
    found = extract(page.html(), page.url)
    return {**found.as_json(), "sha256": hashlib.sha256(page.body).hexdigest(), "chars": len(found.text or "")}
