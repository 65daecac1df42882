"""A witness server on an address no one named (127.0.0.9): it counts every connection made to it and answers each
with a small page, so that a test can assert a hostile page, redirect or recipe reached it zero times."""

from __future__ import annotations

import socket
import threading

WITNESS_ADDRESS = "127.0.0.9"


class Witness:
    """`with Witness() as w:` listens at `w.host` ("127.0.0.9:PORT") until the block ends; `w.connections` counts
    the connections accepted, `w.seen` keeps the first line each sent."""

    def __init__(self, address: str = WITNESS_ADDRESS) -> None:
        self._sock = socket.socket()
        self._sock.bind((address, 0))
        self._sock.listen(64)
        self.address, self.port = address, self._sock.getsockname()[1]
        self.connections = 0
        self.seen: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def __enter__(self) -> Witness:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            try:
                first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                with self._lock:
                    self.seen.append(first)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n"
                             b"Connection: close\r\n\r\nreached")
            except OSError:
                pass
