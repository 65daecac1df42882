"""A local web server of hostile answers for crawl tests: each path answers exactly the status, headers and bytes a
test gives it (a gzip bomb, a redirect to file:, a page whose script navigates away), and every request is logged.

`sites.SiteServer` builds well-formed pages from data; this one serves raw answers, for what no well-formed site
sends. It binds port 0 (an ephemeral port)."""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from tests.localserver import LocalServer

HTML = "text/html; charset=utf-8"
Answer = tuple[int, dict[str, str], bytes]


def page(title: str, body: str = "", links: list[str] | tuple[str, ...] = (), script: str = "") -> Answer:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    text = (f"<!DOCTYPE html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<p>{body or 'A page of the hostile site, with a sentence or two of text to read.'}</p>"
            f"<ul>{anchors}</ul>{f'<script>{script}</script>' if script else ''}</body></html>")
    return 200, {"Content-Type": HTML}, text.encode()


def redirect(location: str, status: int = 301) -> Answer:
    return status, {"Location": location, "Content-Type": HTML}, b"<html><body>Moved</body></html>"


def bomb(encoding: str, size: int) -> Answer:
    """An HTML page of about `size` bytes (mostly a comment of zeros) sent compressed with `encoding`: `gzip` (16 MiB
    members, one compressed and repeated, as gzip allows) or `deflate` (one zlib stream, compressed a MiB at a time):
    about a thousandth of `size` on the wire, made without holding `size` bytes here."""
    head, tail, chunk = b"<!DOCTYPE html><html><body><p>bomb</p><!--", b"--></body></html>", b"0" * 2**20
    if encoding == "gzip":
        member = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        zeros = b"".join([*(member.compress(chunk) for _ in range(16)), member.flush()])
        parts = [gzip.compress(head), *[zeros] * max(size // 2**24, 1), gzip.compress(tail)]
    else:
        stream = zlib.compressobj(6)
        parts = [stream.compress(head), *(stream.compress(chunk) for _ in range(size // 2**20)),
                 stream.compress(tail), stream.flush()]
    return 200, {"Content-Type": HTML, "Content-Encoding": encoding}, b"".join(parts)


class HostileServer:
    """Serves `answers` (path -> Answer; anything else a 404) on 127.0.0.1; `requests` lists every path asked."""

    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._local = LocalServer(_handler(self))

    @property
    def url(self) -> str:
        return self._local.url

    def __enter__(self) -> HostileServer:
        self._local.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._local.close()

    def answer(self, path: str) -> Answer:
        with self._lock:
            self.requests.append(path)
        if urlsplit(path).path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow:\n"
        return self.answers.get(urlsplit(path).path, (404, {"Content-Type": HTML}, b"<html>Not found</html>"))

    def asked(self, path: str) -> int:
        return sum(1 for p in self.requests if urlsplit(p).path == path)


def _handler(web: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            status, headers, data = web.answer(self.path)
            try:
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler
