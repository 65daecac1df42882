"""Streaming reads of MediaWiki XML exports and dumps (plain, .bz2, .gz): pages and revisions, bad input kept aside."""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from timelyqa.errors import ConfigError
from timelyqa.files import open_compressed
from timelyqa.reasons import Reason
from timelyqa.stages import Dropped
from timelyqa.mediawiki.exportxml import (MAX_FIELD_CHARS, MAX_REVISION_CHARS, Broken, Event, ExportEvents, PageEnd,
                                          PageHead, RawRevision, SiteInfo)

MAIN = frozenset({0})
DEFAULT_WIKI = "https://en.wikipedia.org"
"""The wiki an export without a <base> is taken from (the one this project reads)."""
_OPEN_ERRORS = (EOFError, OSError, zlib.error)
_ID = re.compile(r"[0-9]{1,18}")  # a page or revision id, within Int64
_NS = re.compile(r"-?[0-9]{1,9}")
_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")
_BAD_TITLE = re.compile(r"[\x00-\x1f\x7f#<>\[\]{}|\ufffd]")
"""Characters MediaWiki never allows in a title ($wgLegalTitleChars): one there means the page is not a wiki's."""
_URL_BAD = re.compile(r"[\x00-\x20\x7f<>\"\\^`{|}]")
SITE_HEAD_BYTES = 2**20
"""check_dump looks this far for the <siteinfo> (some 10 kB in Wikipedia's exports) and leaves the rest to the read."""


class ReadReject(Reason):
    """What a page's history could not give, from a dump or the API."""

    MALFORMED_XML = "malformed_xml", "the export cannot be read from here on (cut short or not XML); the rest is lost"
    MALFORMED_PAGE = "malformed_page", ("a page's <title>, <ns> or <id> is missing or not valid, or it holds an "
                                        "element an export's page does not; that page alone is dropped")
    DUPLICATE_PAGE = "duplicate_page", "the export gives a page id a second time; the later page is dropped"
    MALFORMED_REVISION = "malformed_revision", "a revision cannot be read; its page is dropped whole"
    REVISION_TOO_LARGE = "revision_too_large", ("a revision's text is longer than any wiki saves (8 Mi characters); "
                                                "it is skipped unread")
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
    """Stop before any work when the path is not a MediaWiki XML export or its <base> is no web address, naming
    the file."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        with open_compressed(path) as f:
            head = f.read(8192)
    except _OPEN_ERRORS as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from exc
    if b"<mediawiki" not in head:
        raise ConfigError(f"{path}: not a MediaWiki XML export (no <mediawiki> element at the start)")
    with open_compressed(path) as f:
        try:
            for event in ExportEvents(_Head(f, SITE_HEAD_BYTES)):  # type: ignore[arg-type]
                if isinstance(event, SiteInfo):
                    wiki_url(path, event.base)
                if not isinstance(event, PageEnd):
                    return  # the <siteinfo>, or a first page with none before it
        except Broken:
            return  # cut within the head: the read says where, as bad input, and keeps what comes before


class _Head:
    """The first `size` bytes of a file, read as ExportEvents reads them; a file that breaks before ends there."""

    def __init__(self, f: Any, size: int) -> None:
        self._f, self._left = f, size

    def read1(self, n: int) -> bytes:
        if self._left <= 0:
            return b""
        try:
            piece: bytes = self._f.read1(min(n, self._left))
        except _OPEN_ERRORS:
            return b""  # the read says where, as bad input
        self._left -= len(piece)
        return piece

    read = read1


def wiki_url(path: Path, base: str | None) -> str:
    """'https://en.wikipedia.org/wiki/Main_Page' -> 'https://en.wikipedia.org'; every evidence URL starts with it,
    so a <base> that is not an http(s) address with a host stops the run."""
    if base is None:
        return DEFAULT_WIKI
    base = base.strip()
    parts = urlsplit(base)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if (parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or not port_ok
            or _URL_BAD.search(base)):
        raise ConfigError(f"{path}: <base> {_short(base)} is not an http(s) address with a host; "
                          "the export's page URLs cannot be built from it")
    return base.split("/wiki/", 1)[0] if "/wiki/" in base else f"{parts.scheme}://{parts.netloc}"


class DumpReader:
    """Pages of the wanted namespaces (the main one by default) with their revisions, streamed.

    Whatever cannot be read is kept in `rejected` with a one-line reason naming the file, page and
    revision, and the read goes on where it can: a page whose head is not valid, or that repeats an id,
    costs only itself; a revision without text, or too large to be real, is skipped; a page with a
    revision that cannot be read is dropped whole; a file cut short ends the read at the cut. A <base>
    that is no web address raises ConfigError (check_dump says so before any work).
    """

    def __init__(self, path: Path, *, namespaces: frozenset[int] = MAIN,
                 max_revision_chars: int = MAX_REVISION_CHARS) -> None:
        self.path = Path(path)
        self.namespaces = namespaces
        self.rejected: list[Dropped] = []
        self.counts: Counter[str] = Counter()
        self.wiki_url = DEFAULT_WIKI
        self._max_text = max_revision_chars
        self._events: Iterator[Event] = iter(())
        self._broken = False
        self._last = "before the first page"
        self._last_title: str | None = None
        self._page: Page | None = None  # the page read now, when it was given out
        self._page_open = False
        # ids of the valid pages of the wanted namespaces so far: a few hundred thousand in a history dump's part
        self._seen: set[int] = set()

    def __iter__(self) -> Iterator[Page]:
        with open_compressed(self.path) as f:
            stream = ExportEvents(f, max_revision_chars=self._max_text)
            self._events = iter(stream)
            started = False
            while (event := self._next()) is not None:
                if isinstance(event, SiteInfo) and not started:
                    self.wiki_url = wiki_url(self.path, event.base)
                elif isinstance(event, PageHead):
                    started = True
                    self._page_open = True
                    page = self._page = self._open(event)
                    stream.skip_text = page is None
                    if page is not None:
                        page.revisions = self._revisions(page)
                        yield page
                    self._finish_page()
                    self._page = None

    def _open(self, head: PageHead) -> Page | None:
        """The page to give out, or None when it is not wanted or not valid (then kept aside with why)."""
        self.counts["pages_read"] += 1
        title = head.fields.get("title")
        title = title.strip().replace("_", " ") if title else title
        raw_id, raw_ns = head.fields.get("id"), head.fields.get("ns")
        self._last = f"page {_short(title)} (id {_short(raw_id)}, line {head.line})"
        self._last_title = title
        item = {"page": title, "page_id": raw_id, "line": head.line}
        ns = int(raw_ns) if raw_ns is not None and _NS.fullmatch(raw_ns.strip()) else None
        if ns is not None and ns not in self.namespaces:
            self.counts["pages_other_namespace"] += 1
            return None
        why = _head_problem(head, title, raw_id, raw_ns)
        if why is not None:
            self._reject(ReadReject.MALFORMED_PAGE, f"{self._last}: {why}; the page is dropped", item)
            return None
        page_id = int(str(raw_id).strip())
        if page_id in self._seen:
            self._reject(ReadReject.DUPLICATE_PAGE, f"{self._last}: the page id {page_id} was given by an earlier page;"
                         " this later one is dropped", {**item, "page_id": page_id})
            return None
        self._seen.add(page_id)
        if head.redirect:
            self.counts["pages_redirect"] += 1
            return None
        return Page(id=page_id, title=str(title), namespace=int(str(raw_ns).strip()), revisions=iter(()))

    def _revisions(self, page: Page) -> Iterator[Revision]:
        where = f"page {_short(page.title)} (id {page.id})"
        last = "before its first revision"
        while self._page is page and self._page_open:
            event = self._next()
            if event is None:
                return
            if isinstance(event, PageEnd):
                self._end_page(event)
                return
            if not isinstance(event, RawRevision):
                continue
            self.counts["revisions_read"] += 1
            rev, reason, why = _revision(event, self._max_text)
            raw_id = str(event.fields.get("id")).strip()
            item = {"page": page.title, "page_id": page.id,
                    "revision": int(raw_id) if _ID.fullmatch(raw_id) else raw_id}
            if reason is ReadReject.MALFORMED_REVISION:
                page.complete = False
                self._reject(reason, f"{where}, {last}: {why} (line {event.line}); the page is dropped",
                             {"page": page.title, "page_id": page.id})
                return
            if rev is None and reason is not None:
                self._reject(reason, f"{where} revision {raw_id}: {why}", item)
            elif rev is not None:
                last = f"after revision {rev.id}"
                yield rev

    def _finish_page(self) -> None:
        """Read on to the end of the page just given out, whether or not its revisions were read."""
        while self._page_open:
            event = self._next()
            if event is None:
                return
            if isinstance(event, PageEnd):
                self._end_page(event)

    def _end_page(self, end: PageEnd) -> None:
        self._page_open = False
        page = self._page
        if end.problem and page is not None:
            page.complete = False
            self._reject(ReadReject.MALFORMED_PAGE, f"page {_short(page.title)} (id {page.id}): {end.problem}; "
                         "the page is dropped", {"page": page.title, "page_id": page.id})
        if not self._last.startswith("after "):
            self._last = f"after {self._last}"

    def _next(self) -> Event | None:
        if self._broken:
            return None
        try:
            return next(self._events)
        except StopIteration:
            return None
        except Broken as exc:
            self._broken, self._page_open = True, False
            page = self._page
            if page is not None:
                page.complete = False
                self._reject(ReadReject.MALFORMED_XML, f"{_line(exc)} in page {_short(page.title)} (id {page.id}); "
                             "the page and the rest are lost", {"page": page.title, "page_id": page.id})
            else:
                self._reject(ReadReject.MALFORMED_XML, f"{_line(exc)} ({self._last}); the rest is lost",
                             {"after_page": self._last_title} if self._last_title else {})
            return None

    def _reject(self, reason: ReadReject, detail: str, item: dict[str, Any]) -> None:
        self.rejected.append(Dropped({"file": str(self.path), **item}, reason, f"{self.path}: {detail}"))


def _head_problem(head: PageHead, title: str | None, raw_id: str | None, raw_ns: str | None) -> str | None:
    if head.problem:
        return head.problem
    for name, value, pattern in (("ns", raw_ns, _NS), ("id", raw_id, _ID)):
        if value is None:
            return f"no <{name}>" if name not in head.fields else f"<{name}> longer than {MAX_FIELD_CHARS} characters"
        if not pattern.fullmatch(value.strip()):
            return f"<{name}> {_short(value)} is not a number"
    if not title:
        return "no <title>" if "title" not in head.fields else "an empty or overlong <title>"
    if bad := _BAD_TITLE.search(title):
        return f"the title holds {bad.group()!r}, which no MediaWiki title may"
    return None


def _revision(raw: RawRevision, max_chars: int) -> tuple[Revision | None, ReadReject | None, str]:
    """The revision, or None with why: MALFORMED_REVISION costs the page, the other reasons only the revision."""
    bad = ReadReject.MALFORMED_REVISION
    if raw.problem:
        return None, bad, raw.problem
    raw_id, parent, stamp = (raw.fields.get(k) for k in ("id", "parentid", "timestamp"))
    if raw_id is None or not _ID.fullmatch(raw_id.strip()):
        return None, bad, f"revision id {_short(raw_id)} is not a number"
    if "parentid" in raw.fields and (parent is None or not _ID.fullmatch(parent.strip())):
        return None, bad, f"revision {raw_id}: parent id {_short(parent)} is not a number"
    if "timestamp" not in raw.fields:
        return None, ReadReject.MISSING_TIMESTAMP, "no timestamp"
    when = _timestamp(stamp)
    if when is None:
        return None, bad, f"revision {raw_id}: timestamp {_short(stamp)} is not a date and time (YYYY-MM-DDThh:mm:ssZ)"
    if raw.text_deleted:
        return None, ReadReject.TEXT_DELETED, "text deleted (suppressed)"
    if raw.chars > max_chars:
        return None, ReadReject.REVISION_TOO_LARGE, f"{raw.chars:,} characters of text, over the {max_chars:,} cap"
    if not raw.text and (raw.text_bytes or "").strip() != "0":
        return None, ReadReject.MISSING_TEXT, "no <text> content"
    return Revision(id=int(raw_id), parent_id=int(parent) if parent else None, timestamp=when,
                    text=raw.text or "", sha1=raw.fields.get("sha1")), None, ""


def _timestamp(value: str | None) -> datetime | None:
    match = _TIMESTAMP.fullmatch(value.strip()) if value else None
    try:
        return datetime(*map(int, match.groups()), tzinfo=UTC) if match else None  # type: ignore[misc]
    except ValueError:  # month 13, day 32...
        return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 240 else text[:237] + "..."
