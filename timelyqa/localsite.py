"""A local static web server over one folder, for the lifetime of a with-block: the demo's bundled websites."""

from __future__ import annotations

import errno
import functools
import posixpath
import threading
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from timelyqa.errors import ConfigError

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".xml": "application/xml",
    ".pdf": "application/pdf",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".ico": "image/x-icon",
}
"""Fixed here rather than taken from `mimetypes`, which reads the machine's /etc/mime.types: the same site
then answers with the same types everywhere. Any other suffix is `application/octet-stream`."""


class _Handler(SimpleHTTPRequestHandler):
    """Files as they are; a folder's index.html for the folder; a 404, never a listing, for a folder without one."""

    def guess_type(self, path: str | Path) -> str:
        return CONTENT_TYPES.get(posixpath.splitext(str(path))[1].lower(), "application/octet-stream")

    def list_directory(self, path: str | Path) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "Not Found")
        return None

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


class LocalSite:
    """Serve the folder `root` on `host` (127.0.0.1, or another loopback address: a demo outlet's own host) at
    `port`, or a free one, from a background thread; stop on exit.

    Requests are answered over HTTP/1.0, one connection each: no keep-alive connection outlives the block.
    """

    def __init__(self, root: str | Path, *, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.root = Path(root)
        self.host = host
        self.wanted_port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int | None:
        """The port served on, while running."""
        return int(self._server.server_address[1]) if self._server is not None else None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalSite is not running: use it as a context manager")
        return f"http://{self.host}:{self.port}/"

    def __enter__(self) -> LocalSite:
        if not (self.root / "index.html").is_file():
            raise ConfigError(f"{self.root} is not a website folder: it has no index.html")
        handler = functools.partial(_Handler, directory=str(self.root.resolve()))
        try:
            self._server = ThreadingHTTPServer((self.host, self.wanted_port or 0), handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {self.wanted_port} on {self.host} is in use: pick another or none") from exc
            raise
        self._server.daemon_threads = True
        # a short poll keeps the exit quick: serve_forever looks for shutdown only between polls
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"localsite-{self.root.name}", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and free the port; safe to call twice."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None
