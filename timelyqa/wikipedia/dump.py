"""Streaming reads of MediaWiki XML exports and dumps (plain, .bz2, .gz): pages and revisions, bad input kept aside."""

from __future__ import annotations

import bz2
import gzip
import json
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from xml.etree.ElementTree import ParseError

import mwxml
from mwxml.errors import MalformedXML

from timelyqa.errors import ConfigError
from timelyqa.record import Rejected

MAIN = frozenset({0})
_BROKEN = (ParseError, EOFError, OSError, zlib.error)
"""The file itself is unreadable from here on: no page after this point can be trusted."""
_BAD_ELEMENT = (MalformedXML, ValueError, TypeError, KeyError, AttributeError)
"""One element mwxml could not read (an unknown tag, a timestamp that is not one): only that page is lost."""


@dataclass(frozen=True, slots=True)
class Revision:
    id: int
    parent_id: int | None
    timestamp: datetime
    text: str
    sha1: str | None


@dataclass(slots=True)
class Page:
    """A page and a one-shot iterator over its revisions, in file order; read them before the next page."""

    id: int
    title: str
    namespace: int
    revisions: Iterator[Revision]
    complete: bool = True
    """False when the file broke or a revision could not be read: the history is partial, so use none of it."""


def open_dump(path: Path) -> IO[bytes]:
    with path.open("rb") as f:
        magic = f.read(2)
    if magic == b"BZ":
        return bz2.open(path, "rb")
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return path.open("rb")


def check_dump(path: Path) -> None:
    """Stop before any work when the path is not a MediaWiki XML export, naming the file."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        with open_dump(path) as f:
            head = f.read(8192)
    except _BROKEN as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    if b"<mediawiki" not in head:
        raise ConfigError(f"{path}: not a MediaWiki XML export (no <mediawiki> element at the start)")


class DumpReader:
    """Pages of the wanted namespaces (the main one by default) with their revisions, streamed.

    Whatever cannot be read is kept in `rejected` with a one-line reason naming the file, page and
    revision, and the read goes on where it can: a revision without text is skipped, a page with a
    revision mwxml cannot read is dropped whole, a file cut short ends the read at the cut.
    """

    def __init__(self, path: Path, *, namespaces: frozenset[int] = MAIN) -> None:
        self.path = Path(path)
        self.namespaces = namespaces
        self.rejected: list[Rejected] = []
        self.counts: Counter[str] = Counter()
        self.wiki_url = "https://en.wikipedia.org"
        self._broken = False
        self._last = "before the first page"

    def __iter__(self) -> Iterator[Page]:
        with open_dump(self.path) as f:
            try:
                dump = mwxml.Dump.from_file(f)
                self.wiki_url = _wiki_url(dump.site_info.base) or self.wiki_url
                pages = iter(dump)
            except (*_BROKEN, *_BAD_ELEMENT, AssertionError) as exc:
                self._reject("malformed_xml", f"the export's start cannot be read: {_line(exc)}", {})
                return
            last_title: str | None = None
            while not self._broken:
                try:
                    raw = next(pages)
                except StopIteration:
                    return
                except (*_BROKEN, *_BAD_ELEMENT) as exc:
                    self._reject("malformed_xml", f"{_line(exc)} ({self._last}); the rest is lost",
                                 {"after_page": last_title} if last_title else {})
                    return
                self.counts["pages_read"] += 1
                self._last, last_title = f"after page {raw.title!r} (id {raw.id})", raw.title
                if raw.namespace not in self.namespaces:
                    self.counts["pages_other_namespace"] += 1
                    continue
                if raw.redirect:
                    self.counts["pages_redirect"] += 1
                    continue
                page = Page(id=raw.id, title=raw.title, namespace=raw.namespace, revisions=iter(()))
                page.revisions = self._revisions(raw, page)
                yield page

    def _revisions(self, raw: Any, page: Page) -> Iterator[Revision]:
        where = f"page {page.title!r} (id {page.id})"
        revisions = iter(raw)
        last = "before its first revision"
        while True:
            try:
                rev = next(revisions)
            except StopIteration:
                return
            except _BROKEN as exc:
                self._broken, page.complete = True, False
                self._reject("malformed_xml", f"{_line(exc)} in {where}, {last}; the page and the rest are lost",
                             {"page": page.title, "page_id": page.id})
                return
            except _BAD_ELEMENT as exc:
                page.complete = False
                self._reject("malformed_revision", f"{where}, {last}: {_line(exc)}; the page is dropped",
                             {"page": page.title, "page_id": page.id})
                return
            self.counts["revisions_read"] += 1
            last = f"after revision {rev.id}"
            item = {"page": page.title, "page_id": page.id, "revision": rev.id}
            if rev.timestamp is None:
                self._reject("missing_timestamp", f"{where} revision {rev.id}: no timestamp", item)
            elif rev.text is None and rev.deleted.text:
                self._reject("text_deleted", f"{where} revision {rev.id}: text deleted (suppressed)", item)
            elif rev.text is None and str(rev.bytes) != "0":
                self._reject("missing_text", f"{where} revision {rev.id}: no <text> content", item)
            else:
                yield Revision(id=rev.id, parent_id=_int(rev.parent_id),
                               timestamp=datetime.fromtimestamp(rev.timestamp.unix(), UTC),
                               text=rev.text or "", sha1=rev.sha1)

    def _reject(self, reason: str, detail: str, item: dict[str, Any]) -> None:
        self.counts[f"bad_{reason}"] += 1
        self.rejected.append(Rejected(source="wikipedia", stage="read", reason=reason,
                                      detail=f"{self.path}: {detail}",
                                      item=json.dumps({"file": str(self.path), **item}, sort_keys=True)))


def _wiki_url(base: str | None) -> str | None:
    """'https://en.wikipedia.org/wiki/Main_Page' -> 'https://en.wikipedia.org'."""
    if not base or "/wiki/" not in base:
        return None
    return base.split("/wiki/", 1)[0]


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _line(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 240 else text[:237] + "..."
