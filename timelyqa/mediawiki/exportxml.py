"""A MediaWiki export streamed with expat into flat records (site base, page heads, revisions), within size caps.

mwxml reads through ElementTree: one unexpected element or non-integer <id> raises inside its iterator and
ends the read, and a <text> is held whole however large. Here each element is only noted, the reader
(dump.py) judges each page on its own, and no text, tag or comment is held past a bound.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO
from xml.parsers import expat

MAX_REVISION_CHARS = 8 * 2**20
"""Wikimedia wikis refuse to save more than 2 MiB of wikitext ($wgMaxArticleSize); four times that is no real
revision. A longer one is counted as it streams by and kept aside, never held (an 8 GB <text> would be)."""
MAX_FIELD_CHARS = 1024
"""A title is at most 255 bytes; ids, timestamps, hashes and the base URL are shorter still."""
MAX_TOKEN_BYTES = 16 * 2**20
"""Expat holds a tag, an attribute, a comment or a processing instruction whole until it ends: input that long
with no element or text ending in it is no export, and reading on would hold all of it."""
CHUNK = 2**16  # with the events of one chunk queued at a time, memory follows the chunk

_PAGE_HEAD = frozenset({"title", "ns", "id"})
_PAGE_SKIPPED = frozenset({"restrictions", "upload", "discussionthreadinginfo", "DiscussionThreading"})
_REVISION_FIELDS = frozenset({"id", "parentid", "timestamp", "sha1"})
_REVISION_SKIPPED = frozenset({"contributor", "minor", "comment", "model", "format", "origin", "content"})
_BROKEN = (EOFError, OSError, zlib.error, expat.ExpatError)


class Broken(Exception):
    """The file cannot be read on from here (cut short, not XML, a token past the cap): the rest is lost."""


@dataclass(slots=True)
class SiteInfo:
    base: str | None


@dataclass(slots=True)
class PageHead:
    """A page's <title>, <ns> and <id> as written, and the first element an export's page does not hold."""

    fields: dict[str, str | None] = field(default_factory=dict)
    """Each field's text as written; None when it is longer than MAX_FIELD_CHARS."""
    redirect: bool = False
    problem: str | None = None
    line: int = 0


@dataclass(slots=True)
class RawRevision:
    fields: dict[str, str | None] = field(default_factory=dict)
    text: str | None = None
    has_text: bool = False
    text_deleted: bool = False
    text_bytes: str | None = None
    chars: int = 0
    """The text's length in characters, counted even past MAX_REVISION_CHARS (where `text` is None)."""
    problem: str | None = None
    line: int = 0


@dataclass(slots=True)
class PageEnd:
    problem: str | None = None
    """An element after the page's revisions that an export's page does not hold."""


Event = SiteInfo | PageHead | RawRevision | PageEnd


class ExportEvents:
    """Iterate for the export's records in file order; `Broken` ends the iteration when the file does.

    Set `skip_text` after a PageHead to pass over that page's texts without keeping them.
    """

    def __init__(self, f: BinaryIO, *, max_revision_chars: int = MAX_REVISION_CHARS) -> None:
        self._f = f
        # read1 gives what one decompression step made: a cut .bz2 raises only once the whole blocks before the
        # cut are out, where read(n) would drop the last n bytes made with the error
        self._read = getattr(f, "read1", f.read)
        self._max_text = max_revision_chars
        self._events: deque[Event] = deque()
        self._parser = expat.ParserCreate(namespace_separator="}")
        self._parser.buffer_text = True
        self._parser.buffer_size = 65536
        p = self._parser
        p.StartElementHandler, p.EndElementHandler = self._start, self._end
        p.CharacterDataHandler, p.CommentHandler = self._data, self._progress
        p.ProcessingInstructionHandler = self._progress
        p.StartDoctypeDeclHandler = self._doctype
        self.skip_text = False
        self._path: list[str] = []  # the known elements open, from <mediawiki> down
        self._unknown = 0  # depth inside an element whose content is passed over
        self._pieces: list[str] | None = None
        self._size = 0
        self._limit = 0
        self._site: SiteInfo | None = None
        self._head: PageHead | None = None
        self._head_sent = False
        self._end_problem: str | None = None
        self._rev: RawRevision | None = None
        self._fed = 0
        self._done = False
        self._paged = False
        self._seen = 0

    @property
    def fed(self) -> int:
        """Bytes of XML read so far."""
        return self._fed

    @property
    def line(self) -> int:
        return self._parser.CurrentLineNumber

    def __iter__(self) -> Iterator[Event]:
        while True:
            broken = self._feed()
            while self._events:  # what was read before a break is still given
                yield self._events.popleft()
            if broken is not None:
                raise broken
            if self._done:
                return

    def _feed(self) -> Broken | None:
        """Parse the next chunk (the end, once the file is out), and say why the read cannot go on, if it cannot."""
        try:
            chunk = self._read(CHUNK)
            self._fed += len(chunk)
            self._parser.Parse(chunk, not chunk)
        except _BROKEN as exc:
            return Broken(f"{type(exc).__name__}: {exc} (line {self.line})")
        if not chunk:
            self._done = True
            if self._path:
                return Broken(f"the export ends inside <{self._path[-1]}> (line {self.line})")
        elif self._fed - self._seen > MAX_TOKEN_BYTES:
            return Broken(f"no element or text ends within {MAX_TOKEN_BYTES // 2**20} MiB after line {self.line}")
        return None

    def _progress(self, *_: object) -> None:
        self._seen = self._parser.CurrentByteIndex

    def _doctype(self, *_: object) -> None:
        raise expat.ExpatError("a document type declaration (an export has none, and its entities could expand)")

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        self._progress()
        tag = name.rsplit("}", 1)[-1]
        if self._unknown:
            self._unknown += 1
            return
        where = self._path[-1] if self._path else None
        if where is None:
            if tag != "mediawiki":
                raise expat.ExpatError(f"the root element is <{tag}>, not <mediawiki>")
        elif where == "mediawiki":
            if tag == "page":
                self._head, self._head_sent, self._end_problem = PageHead(line=self.line), False, None
                self._paged = True
                self.skip_text = False
            elif tag != "siteinfo" or self._paged:
                self._unknown = 1  # a <logitem>, a <siteinfo> after the pages...: no pages in it
                return
        elif where == "siteinfo":
            if tag == "base":
                self._capture(MAX_FIELD_CHARS)
            else:
                self._unknown = 1
                return
        elif where == "page" and (head := self._head) is not None:
            if tag == "revision":
                self._send_head()
                self._rev = RawRevision(line=self.line)
            elif tag in _PAGE_HEAD and not self._head_sent and tag not in head.fields:
                self._capture(MAX_FIELD_CHARS)
            elif tag == "redirect" and not self._head_sent:
                head.redirect = True
                self._unknown = 1
                return
            else:
                if tag not in _PAGE_SKIPPED:
                    self._note_page_problem(tag, head)
                self._unknown = 1
                return
        elif where == "revision" and (rev := self._rev) is not None:
            if tag == "text" and not rev.has_text:
                rev.has_text, rev.text_deleted = True, "deleted" in attrs
                rev.text_bytes = attrs.get("bytes")
                self._capture(self._max_text, keep=not self.skip_text)
            elif tag in _REVISION_FIELDS and tag not in rev.fields:
                self._capture(MAX_FIELD_CHARS)
            else:
                if tag not in _REVISION_SKIPPED and rev.problem is None:
                    rev.problem = f"a <{tag}> element, which a revision does not hold (line {self.line})" \
                        if tag not in _REVISION_FIELDS and tag != "text" else f"a second <{tag}> (line {self.line})"
                self._unknown = 1
                return
        else:  # inside a field: markup where text was due
            problem = f"markup inside <{where}> (line {self.line})"
            if len(self._path) > 1 and self._path[-2] == "revision" and self._rev is not None:
                self._rev.problem = self._rev.problem or problem
            elif self._head is not None and not self._head_sent:
                self._head.problem = self._head.problem or problem
            self._unknown = 1
            return
        self._path.append(tag)

    def _note_page_problem(self, tag: str, head: PageHead) -> None:
        if tag in _PAGE_HEAD or tag == "redirect":
            why = f"<{tag}> after the revisions" if self._head_sent else f"a second <{tag}>"
        else:
            why = f"a <{tag}> element, which a page does not hold"
        if self._head_sent:
            self._end_problem = self._end_problem or f"{why} (line {self.line})"
        else:
            head.problem = head.problem or f"{why} (line {self.line})"

    def _capture(self, limit: int, *, keep: bool = True) -> None:
        self._pieces, self._size, self._limit = ([] if keep else None), 0, limit

    def _data(self, data: str) -> None:
        self._progress()
        if self._unknown or not self._path:
            return
        self._size += len(data)
        if self._pieces is not None:
            if self._size <= self._limit:
                self._pieces.append(data)
            else:
                self._pieces = None  # past the cap: only counted from here

    def _taken(self) -> str | None:
        text = "".join(self._pieces) if self._pieces is not None else None
        self._pieces = None
        return text

    def _field(self) -> str | None:
        text = self._taken()
        return text if self._size <= MAX_FIELD_CHARS else None

    def _end(self, name: str) -> None:
        self._progress()
        if self._unknown:
            self._unknown -= 1
            return
        tag = self._path.pop()
        where = self._path[-1] if self._path else None
        if where == "siteinfo" and tag == "base":
            self._site = SiteInfo(self._field() or "")  # empty or overlong: no address either way
        elif tag == "siteinfo":
            self._events.append(self._site or SiteInfo(None))
        elif tag == "revision" and self._rev is not None:
            self._events.append(self._rev)
            self._rev = None
        elif where == "page" and self._head is not None:
            self._head.fields[tag] = self._field()
        elif where == "revision" and self._rev is not None:
            rev = self._rev
            if tag == "text":
                rev.chars, rev.text = self._size, self._taken()
            else:
                rev.fields[tag] = self._field()
        elif tag == "page":
            self._send_head()
            self._events.append(PageEnd(self._end_problem))
            self._head = None

    def _send_head(self) -> None:
        if not self._head_sent and self._head is not None:
            self._events.append(self._head)
            self._head_sent = True
