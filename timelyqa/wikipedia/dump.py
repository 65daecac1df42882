"""Streaming reads of MediaWiki XML exports and dumps (plain, .bz2, .gz): pages and revisions, bad input kept aside."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import mwxml
from mwxml.errors import MalformedXML

from timelyqa.errors import ConfigError
from timelyqa.files import open_compressed
from timelyqa.reasons import Reason
from timelyqa.stages import Dropped

MAIN = frozenset({0})
_BROKEN = (ParseError, EOFError, OSError, zlib.error)
"""The file itself is unreadable from here on: no page after this point can be trusted."""
_BAD_ELEMENT = (MalformedXML, ValueError, TypeError, KeyError, AttributeError)
"""One element mwxml could not read (an unknown tag, a timestamp that is not one): only that page is lost."""


class ReadReject(Reason):
    """What a page's history could not give, from a dump or the API."""

    MALFORMED_XML = "malformed_xml", "the export cannot be read from here on (cut short or not XML); the rest is lost"
    MALFORMED_REVISION = "malformed_revision", "a revision cannot be read; its page is dropped whole"
    MISSING_TIMESTAMP = "missing_timestamp", "a revision has no timestamp"
    TEXT_DELETED = "text_deleted", "a revision's text was deleted (suppressed)"
    MISSING_TEXT = "missing_text", "a revision has no text content"
    PAGE_MISSING = "page_missing", "the API no longer has the page (deleted or moved since it changed)"
    INVALID_TITLE = "invalid_title", "the API calls the page's title invalid"
    API_ERROR = "api_error", "the API answered an error for the page (its code is in the detail)"


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


def check_dump(path: Path) -> None:
    """Stop before any work when the path is not a MediaWiki XML export, naming the file."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        with open_compressed(path) as f:
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
        self.rejected: list[Dropped] = []
        self.counts: Counter[str] = Counter()
        self.wiki_url = "https://en.wikipedia.org"
        self._broken = False
        self._last = "before the first page"

    def __iter__(self) -> Iterator[Page]:
        with open_compressed(self.path) as f:
            try:
                dump = mwxml.Dump.from_file(f)
                self.wiki_url = _wiki_url(dump.site_info.base) or self.wiki_url
                pages = iter(dump)
            except (*_BROKEN, *_BAD_ELEMENT, AssertionError) as exc:
                self._reject(ReadReject.MALFORMED_XML, f"the export's start cannot be read: {_line(exc)}", {})
                return
            last_title: str | None = None
            while not self._broken:
                try:
                    raw = next(pages)
                except StopIteration:
                    return
                except (*_BROKEN, *_BAD_ELEMENT) as exc:
                    self._reject(ReadReject.MALFORMED_XML, f"{_line(exc)} ({self._last}); the rest is lost",
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
                self._reject(ReadReject.MALFORMED_XML,
                             f"{_line(exc)} in {where}, {last}; the page and the rest are lost",
                             {"page": page.title, "page_id": page.id})
                return
            except _BAD_ELEMENT as exc:
                page.complete = False
                self._reject(ReadReject.MALFORMED_REVISION, f"{where}, {last}: {_line(exc)}; the page is dropped",
                             {"page": page.title, "page_id": page.id})
                return
            self.counts["revisions_read"] += 1
            last = f"after revision {rev.id}"
            item = {"page": page.title, "page_id": page.id, "revision": rev.id}
            if rev.timestamp is None:
                self._reject(ReadReject.MISSING_TIMESTAMP, f"{where} revision {rev.id}: no timestamp", item)
            elif rev.text is None and rev.deleted.text:
                self._reject(ReadReject.TEXT_DELETED, f"{where} revision {rev.id}: text deleted (suppressed)", item)
            elif rev.text is None and str(rev.bytes) != "0":
                self._reject(ReadReject.MISSING_TEXT, f"{where} revision {rev.id}: no <text> content", item)
            else:
                yield Revision(id=rev.id, parent_id=_int(rev.parent_id),
                               timestamp=datetime.fromtimestamp(rev.timestamp.unix(), UTC),
                               text=rev.text or "", sha1=rev.sha1)

    def _reject(self, reason: ReadReject, detail: str, item: dict[str, Any]) -> None:
        self.rejected.append(Dropped({"file": str(self.path), **item}, reason, f"{self.path}: {detail}"))


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
