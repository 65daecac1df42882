"""News outlets on hosts of their own, for tests: each outlet's folder of pages served on its own loopback address
(127.0.0.2, 127.0.0.3, ...: on Linux every 127.x.y.z reaches this machine), all on one port, so that an allow-list
of host names tells them apart as it tells apnews.com from cnn.com. Every server records what it was asked.

`FakeArchive` answers as the Wayback Machine and archive.today do (`/web/{timestamp}id_/{url}` redirected to the
capture's own timestamp, `/newest/{url}`), from a folder of captured pages by the captured URL's path.
"""

from __future__ import annotations

import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from timelyqa.localsite import CONTENT_TYPES

FIXTURES = Path(__file__).parent / "fixtures" / "news"
WAYBACK_CAPTURE = "093000"
"""The time of day of every capture the fake Wayback Machine holds: it redirects a day's request to it."""


def free_port(address: str = "127.0.0.2") -> int:
    """A port free on `address` now (and, closed again, a port where nothing answers: a refused connection)."""
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that goes away mid-request (a crawl killed on purpose) is no error of the server's."""


class NewsHost:
    """Serves the folder `root` on `address`:`port` until the with-block ends: files as they are (a folder's
    index.html for the folder), `redirects` as 301s, a 404 for the rest; `requests` lists each path asked, in order."""

    def __init__(self, address: str, root: Path | None, port: int, *, redirects: dict[str, str] | None = None,
                 delay: float = 0.0) -> None:
        self.address, self.root, self.port = address, root, port
        self.redirects = redirects or {}
        self.delay = delay
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._server = _Server((address, port), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def __enter__(self) -> NewsHost:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def asked(self) -> list[str]:
        with self._lock:
            return list(self.requests)

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(path)
        time.sleep(self.delay)
        route = urlsplit(path).path
        if route in self.redirects:
            return 301, {"Location": self.redirects[route], "Content-Type": CONTENT_TYPES[".html"]}, b"Moved"
        return self.file(route)

    def file(self, route: str) -> tuple[int, dict[str, str], bytes]:
        if self.root is not None:
            target = (self.root / route.lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            if target.is_file() and target.is_relative_to(self.root.resolve()):
                kind = CONTENT_TYPES.get(target.suffix.lower(), "application/octet-stream")
                return 200, {"Content-Type": kind}, target.read_bytes()
        return 404, {"Content-Type": CONTENT_TYPES[".html"]}, b"<html><body><h1>Not Found</h1></body></html>"


class FakeArchive(NewsHost):
    """A web archive holding the pages of `root` as captured copies, whatever host they were captured from."""

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(path)
        if path.startswith("/web/"):
            stamp, _, captured = path.removeprefix("/web/").partition("/")
            if len(stamp) == len("20260504id_"):  # a day: the nearest capture is that day's
                where = f"/web/{stamp[:8]}{WAYBACK_CAPTURE}id_/{captured}"
                return 302, {"Location": where, "Content-Type": CONTENT_TYPES[".html"]}, b"Found"
            return self.file(urlsplit(captured).path)
        if path.startswith("/newest/"):
            return self.file(urlsplit(path.removeprefix("/newest/")).path)
        return self.file(urlsplit(path).path)


def _handler(host: NewsHost) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real sites; every answer carries Content-Length

        def do_GET(self) -> None:
            self._reply(with_body=True)

        def do_HEAD(self) -> None:
            self._reply(with_body=False)

        def _reply(self, *, with_body: bool) -> None:
            status, headers, data = host.answer(self.path)
            try:
                self.send_response(HTTPStatus(status))
                for name, value in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


def outlets_yaml(path: Path, outlets: dict[str, tuple[str, str]]) -> Path:
    """An allow-list file naming each outlet's loopback address and port: {name: ("address:port", render)}."""
    lines = ["outlets:"]
    for name, (address, render) in outlets.items():
        lines += [f"  - name: {name}", f"    domains: ['{address}']", f"    render: {render}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
