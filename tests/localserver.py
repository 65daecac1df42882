"""A test HTTP server on 127.0.0.1: a handler class served from a daemon thread, on a port of the system's choosing
(or the one given), for a with-block (or `start()` ... `close()`). The test servers of this folder (a generated site,
a robots.txt that fails, a witness that counts requests, SPARQL stand-ins, a Wikimedia dump mirror, a MediaWiki API,
a scripted LLM, the hostile pages, the Hub stand-in) are each a handler on it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LocalServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", port: int = 0) -> None:
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        # a short poll keeps shutdown quick: serve_forever checks for it only between polls
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
