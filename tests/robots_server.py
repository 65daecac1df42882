"""A small site on 127.0.0.1 whose robots.txt fails the way a hostile or broken host's does: a status, a body of any
size, a Content-Encoding, a delay, or a connection closed with no answer. `requests` lists every path asked."""

from __future__ import annotations

import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.localserver import LocalServer

PAGES = {
    "/": ["/a", "/b", "/private/c"],
    "/a": ["/b"],
    "/b": ["/"],
    "/private/c": ["/a"],
}
"""The site: each page and the pages it links to."""


@dataclass
class RobotsAnswer:
    status: int = 200
    body: bytes = b"User-agent: *\nDisallow:\n"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the head
    hang_up: bool = False  # close the connection without a word


def padded(head: str, size: int) -> bytes:
    """A robots.txt of `size` bytes: `head`, then comment lines."""
    data = head.encode()
    line = b"# " + b"x" * 77 + b"\n"
    return data + line * ((size - len(data)) // len(line) + 1)


def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of `expanded` bytes of blank lines (about a thousand times smaller than what it expands to)."""
    chunk = b"\n" * (1024 * 1024)
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return b"".join(packer.compress(chunk) for _ in range(expanded // len(chunk))) + packer.flush()


class RobotsSite(LocalServer):
    """`with RobotsSite(answer) as site:` serves PAGES and the robots.txt `answer` at `site.url`."""

    def __init__(self, answer: RobotsAnswer) -> None:
        self.answer = answer
        self.requests: list[str] = []
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    @property
    def pages_asked(self) -> set[str]:
        return {p for p in self.requests if p != "/robots.txt"}


def _page(path: str) -> bytes:
    links = "".join(f'<li><a href="{href}">{href}</a></li>' for href in PAGES[path])
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page {path}</title></head>'
            f"<body><h1>Page {path}</h1><p>Some text about {path}.</p><ul>{links}</ul></body></html>").encode()


def _handler(site: RobotsSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_HEAD(self) -> None:
            self._reply(with_body=False)

        def do_GET(self) -> None:
            self._reply(with_body=True)

        def _reply(self, *, with_body: bool) -> None:
            with site._lock:  # noqa: SLF001 - the site's own handler
                site.requests.append(self.path)
            if self.path == "/robots.txt":
                answer = site.answer
                time.sleep(answer.delay)
                if answer.hang_up:
                    self.close_connection = True
                    return
                status, headers, body = answer.status, {"Content-Type": "text/plain", **answer.headers}, answer.body
            elif self.path in PAGES:
                status, headers, body = 200, {"Content-Type": "text/html; charset=utf-8"}, _page(self.path)
            else:
                status, headers, body = 404, {"Content-Type": "text/html"}, b"<html><body>Not Found</body></html>"
            try:
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the crawl read what it wanted and went
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler
