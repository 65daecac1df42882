"""A Wikimedia dump mirror on 127.0.0.1 serving Wikidata entity dump folders, for the tests only.

A test double because the real mirror (dumps.wikimedia.org or one of its mirrors) is on the internet and its
files are 100 GB. It serves the layout of https://dumps.wikimedia.org/wikidatawiki/entities/:

- the folder index as nginx's autoindex writes it (`<a href="20260601/">20260601/</a>  date  size`), with the
  `latest-*` links beside the run folders;
- per run `YYYYMMDD/`: its files, and `wikidata-YYYYMMDD-sha1sums.txt` and `-md5sums.txt` listing them
  (`<hex>  <name>`, as md5sum writes), unless the run is told to publish no sums or wrong ones;
- `Range: bytes=N-` answered with 206 and `Content-Range`, past the end with 416, as nginx does.

Every request is recorded with its headers, and the most in flight at once. Scripted faults: a connection cut
after a number of bytes (`cut`), a wrong digest in a run's sums (`Run.wrong`), a week with no JSON dump (leave
it out, or give a run only RDF files).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler

from tests.localserver import LocalServer

PATH = "/wikidatawiki/entities/"


@dataclass
class Run:
    """One dump run's folder: file name -> bytes; `wrong` names files whose listed digests are wrong."""

    day: date
    files: dict[str, bytes]
    wrong: set[str] = field(default_factory=set)
    sums: bool = True

    @property
    def stamp(self) -> str:
        return f"{self.day:%Y%m%d}"

    def sums_file(self, algorithm: str) -> bytes:
        lines = []
        for name, body in sorted(self.files.items()):
            digest = hashlib.new(algorithm, body).hexdigest()
            if name in self.wrong:
                digest = hashlib.new(algorithm, body + b"tampered").hexdigest()
            lines.append(f"{digest}  {name}\n")
        return "".join(lines).encode()


def json_run(day: date, dump: bytes, *, wrong: bool = False) -> Run:
    """A weekly run: the JSON dump (gz) and the RDF dumps a Monday run also holds."""
    stamp = f"{day:%Y%m%d}"
    name = f"wikidata-{stamp}-all.json.gz"
    return Run(day, {name: dump, f"wikidata-{stamp}-lexemes.json.gz": b"\x1f\x8b lexemes"},
               wrong={name} if wrong else set())


def rdf_run(day: date) -> Run:
    """A run with only RDF dumps (the mid-week truthy runs): no JSON dump to take."""
    stamp = f"{day:%Y%m%d}"
    return Run(day, {f"wikidata-{stamp}-truthy-BETA.nt.gz": b"\x1f\x8b truthy"})


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]


class DumpMirror:
    """The server; `with DumpMirror(runs) as mirror:` serves `mirror.url` until the block ends."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = {r.stamp: r for r in runs}
        self.requests: list[Request] = []
        self.in_flight = self.max_in_flight = 0
        self.cuts: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self._local = LocalServer(self._handler())

    @property
    def url(self) -> str:
        return f"{self._local.url}{PATH}"

    def cut(self, name: str, after: int) -> DumpMirror:
        """The next GET of file `name` sends its headers in full, then only `after` bytes, then hangs up."""
        with self._lock:
            self.cuts.append((name, after))
        return self

    def gets(self, name: str) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("/" + name)]

    def __enter__(self) -> DumpMirror:
        self._local.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._local.close()

    def _index(self) -> bytes:
        rows = ['<a href="../">../</a>']
        for stamp in sorted(self.runs):
            rows.append(f'<a href="{stamp}/">{stamp}/</a>{" " * 36}01-Jun-2026 00:00       -')
        rows += ['<a href="latest-all.json.gz">latest-all.json.gz</a>     08-Jun-2026 00:00  131234567890',
                 '<a href="latest-truthy.nt.gz">latest-truthy.nt.gz</a>    10-Jun-2026 00:00   61234567890']
        return (f"<html>\r\n<head><title>Index of {PATH}</title></head>\r\n<body>\r\n<h1>Index of {PATH}</h1><hr><pre>"
                + "\r\n".join(rows) + "\r\n</pre><hr></body>\r\n</html>\r\n").encode()

    def _body(self, path: str) -> bytes | None:
        if path == PATH:
            return self._index()
        if not path.startswith(PATH):
            return None
        stamp, _, name = path[len(PATH):].partition("/")
        run = self.runs.get(stamp)
        if run is None:
            return None
        for algorithm in ("sha1", "md5"):
            if name == f"wikidata-{stamp}-{algorithm}sums.txt":
                return run.sums_file(algorithm) if run.sums else None
        return run.files.get(name)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with mirror._lock:
                    mirror.requests.append(Request(self.path, dict(self.headers.items())))
                    mirror.in_flight += 1
                    mirror.max_in_flight = max(mirror.max_in_flight, mirror.in_flight)
                try:
                    self._answer()
                finally:
                    with mirror._lock:
                        mirror.in_flight -= 1

            def _answer(self) -> None:
                body = mirror._body(self.path.split("?")[0])
                if body is None:
                    self._send(404, b"<html><body><h1>404 Not Found</h1></body></html>", "text/html")
                    return
                start, status, extra = 0, 200, {}
                if (asked := self.headers.get("Range", "")).startswith("bytes="):
                    start = int(asked[len("bytes="):].split("-")[0])
                    if start >= len(body):
                        self._send(416, b"", "text/html", {"Content-Range": f"bytes */{len(body)}"})
                        return
                    status, extra = 206, {"Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"}
                name = self.path.rsplit("/", 1)[-1]
                with mirror._lock:
                    cut = next((c for c in mirror.cuts if c[0] == name), None)
                    if cut:
                        mirror.cuts.remove(cut)
                self._send(status, body[start:], "application/octet-stream", extra,
                           limit=cut[1] if cut else None)

            def _send(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None, *,
                      limit: int | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if limit is None:
                    self.wfile.write(body)
                    return
                self.wfile.write(body[:limit])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # hang up mid-body, as a dropped connection does

        return Handler
