"""The pages a resolution reads: the requests handed to the crawl, the row it writes for each, and the page store
that keeps every fetched page by its sha256 (the evidence behind an answer, and the copy a repair is checked on).

No Scrapy here: `fetch` runs the crawl (spiders/official.py) in a process of its own through spiders.run.crawl.

The page store. `<root>/<sha256[:2]>/<sha256>.html.gz`, one gzip member each, whose payload is exactly the bytes the
sha256 is of: the page's HTML as the crawl read it (the body as served, or Chromium's DOM when rendered), encoded
UTF-8, so `sha256(gunzip(file)) == sha256` checks a copy. The gzip header names where and when it was fetched:
FNAME holds the URL, FCOMMENT the fetch time (ISO, UTC, microseconds), MTIME the same time in whole seconds. The
store is content-addressed: a second fetch of the same bytes keeps the first file (and its header) as it is.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.files import atomic_path, write_parquet
from timelyqa.official.reasons import Failure

REQUESTS = "requests.parquet"
FETCHES = "fetches.parquet"
RENDERS = ("never", "always", "auto")
REQUEST_SCHEMA = pl.Schema({"key": pl.String(), "url": pl.String(), "render": pl.String()})
"""One row a page the resolver needs: `key` names it (unique), `render` is never, always or auto."""
FETCH_SCHEMA = pl.Schema({
    "key": pl.String(), "url": pl.String(), "final_url": pl.String(), "status": pl.Int64(),
    "fetched_at": pl.Datetime("us", "UTC"), "sha256": pl.String(), "rendered": pl.Boolean(),
    "render_reason": pl.String(), "failure": pl.String(), "detail": pl.String(),
})
"""One row a request key (keys naming the same page share its row): `final_url` is where the page was served (after
redirects), or the URL at which it failed (a redirect's target that was refused, never asked); `status` is null when
no answer came; `fetched_at` is when the answer (or the failure) came; `sha256` (of the page as stored) is null on
failure; `render_reason` says why the page was or was not rendered (spiders/render.py's words); `failure` is a
timelyqa.official.reasons.Failure value (site_down, page_missing, robots_disallowed, host_not_allowed, not_html) or
null, and `detail` one line saying what happened (`http_503`, `connection_refused`, ...)."""

_FNAME, _FCOMMENT = 0x08, 0x10


class PageStore:
    """Content-addressed, gzipped copies of fetched pages (the layout is in the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.html.gz"

    def put(self, url: str, fetched_at: datetime, body: bytes) -> str:
        """Store `body` (the page's UTF-8 HTML) unless the same bytes are in already; its sha256."""
        sha = hashlib.sha256(body).hexdigest()
        target = self.path(sha)
        if not target.is_file():
            with atomic_path(target) as partial:
                partial.write_bytes(_gzip(body, url, fetched_at))
        return sha

    def get(self, sha256: str) -> str | None:
        """The stored page's HTML, or None when the store has no such page."""
        target = self.path(sha256)
        if not target.is_file():
            return None
        return zlib.decompress(target.read_bytes(), wbits=31).decode("utf-8", errors="replace")

    def origin(self, sha256: str) -> tuple[str, datetime] | None:
        """The URL and fetch time the stored page's gzip header names, or None when the store has no such page."""
        target = self.path(sha256)
        if not target.is_file():
            return None
        with target.open("rb") as fh:
            return _header(fh.read(64 * 1024))


def _gzip(body: bytes, url: str, fetched_at: datetime) -> bytes:
    """One gzip member (RFC 1952) with FNAME and FCOMMENT set: Python's gzip module names the file by its own
    basename, which would cut a URL at its last slash."""
    when = fetched_at.astimezone(UTC)
    header = b"\x1f\x8b\x08" + bytes([_FNAME | _FCOMMENT]) + struct.pack("<I", int(when.timestamp())) + b"\x00\xff"
    header += url.encode("latin-1", "backslashreplace") + b"\x00" + when.isoformat().encode("ascii") + b"\x00"
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = deflate.compress(body) + deflate.flush()
    return header + data + struct.pack("<II", zlib.crc32(body), len(body) & 0xFFFFFFFF)


def _header(data: bytes) -> tuple[str, datetime]:
    if data[:3] != b"\x1f\x8b\x08" or not data[3] & _FNAME or not data[3] & _FCOMMENT:
        raise SourceContractError("a page store file without the URL and fetch time in its gzip header")
    name_end = data.index(b"\x00", 10)
    comment_end = data.index(b"\x00", name_end + 1)
    return (data[10:name_end].decode("latin-1"),
            datetime.fromisoformat(data[name_end + 1:comment_end].decode("ascii")))


@dataclass(frozen=True)
class Fetched:
    """One request key's row of fetches.parquet, and its page's HTML (read from the store when first asked)."""

    key: str
    url: str
    final_url: str | None
    status: int | None
    fetched_at: datetime
    sha256: str | None
    rendered: bool
    render_reason: str | None
    failure: Failure | None
    detail: str | None
    store: PageStore | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @cached_property
    def html(self) -> str | None:
        if self.sha256 is None or self.store is None:
            return None
        return self.store.get(self.sha256)


def write_requests(rows: Iterable[tuple[str, str, str]] | Iterable[dict[str, Any]], path: Path) -> pl.DataFrame:
    """requests.parquet from (key, url, render) triples or dicts; ConfigError naming the key and field of a bad one
    (a key given twice, a render that is not never/always/auto, an empty URL)."""
    frame = _requests(rows)
    write_parquet(frame, Path(path))
    return frame


def _requests(rows: Iterable[tuple[str, str, str]] | Iterable[dict[str, Any]]) -> pl.DataFrame:
    seen: set[str] = set()
    out: list[dict[str, str]] = []
    for row in rows:
        key, url, render = (row["key"], row["url"], row.get("render", "never")) if isinstance(row, dict) else row
        if not isinstance(key, str) or not key:
            raise ConfigError(f"request {key!r}: key: must be a non-empty string")
        if key in seen:
            raise ConfigError(f"request {key}: key: given twice")
        if not isinstance(url, str) or not url.strip():
            raise ConfigError(f"request {key}: url: must be a non-empty string")
        if render not in RENDERS:
            raise ConfigError(f"request {key}: render: must be one of {', '.join(RENDERS)}, not {render!r}")
        seen.add(key)
        out.append({"key": key, "url": url.strip(), "render": render})
    return pl.DataFrame(out, schema=REQUEST_SCHEMA, orient="row")


def read_fetches(folder: Path, store: Path | None = None) -> dict[str, Fetched]:
    """Every key's row of `folder`/fetches.parquet, its HTML read from `store` (default: the store the crawl wrote
    to, as its crawl_stats.json names it)."""
    folder = Path(folder)
    if store is None:
        stats = folder / "crawl_stats.json"
        store = Path(json.loads(stats.read_text(encoding="utf-8"))["store"]) if stats.is_file() else None
    pages = PageStore(store) if store is not None else None
    return {row["key"]: Fetched(**{**row, "failure": Failure(row["failure"]) if row["failure"] else None},
                                store=pages)
            for row in pl.read_parquet(folder / FETCHES).iter_rows(named=True)}


def fetch(requests: Sequence[tuple[str, str, str]], out: Path, *, crawl: Crawl, store: Path, fresh: bool = True,
          page_timeout: float = 30.0, named_private: Iterable[str] = ()) -> dict[str, Fetched]:
    """Fetch every (key, url, render) in one crawl through `crawl` (the crawler's port); every key's row. A page
    that failed comes back with its failure, even when every site was down (not an exception); SourceContractError
    only when the crawl wrote no fetches at all. `fresh` (the default: a live answer must be live) bypasses the HTTP
    cache and forgets the journal of any crawl killed earlier in `out`; without it a killed crawl resumes.

    Each request, and its redirects, may reach its own URL's host:port only. `named_private` holds the hosts the
    operator named (`host:port`, or `host` for any port: timelyqa.official.origin.named_hosts), which alone may be
    loopback, private or link-local addresses; any other host is refused (`private_address`) before a connection."""
    out, store = Path(out).resolve(), Path(store).resolve()  # the crawl's process may start elsewhere
    frame = write_requests(requests, out / REQUESTS)
    (out / FETCHES).unlink(missing_ok=True)  # an earlier crawl's answers are never read as this one's
    if fresh:
        (out / "pages.jsonl").unlink(missing_ok=True)
        shutil.rmtree(out / "job", ignore_errors=True)
    render = "auto" if frame.filter(pl.col("render") != "never").height else "never"
    args = {"requests": str(out / REQUESTS), "store": str(store), "render": render,
            "page_timeout": str(page_timeout), "named": json.dumps(sorted(set(named_private)))}
    try:
        crawl("official", args, out, fresh=fresh)
    except SourceContractError:
        if not (out / FETCHES).is_file():
            raise
    return read_fetches(out, store)
