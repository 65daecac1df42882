"""What the store keeps of a page's HTML (title, main content as markdown and as text, facts), and the worker
processes that read it beside a crawl, so that the costliest step of a page runs on another core while the crawl
keeps fetching and following links.

A worker is `python -m spiders.content`: (html, url, with_facts) frames in on stdin, content frames out on stdout,
in order. The crawl speaks to its workers from its event loop, over pipes, and starts no thread: one beside
Twisted's reactor (as `concurrent.futures` starts) would compete with it for the GIL. A module of its own so that a
worker imports no Scrapy."""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import struct
import sys
from collections import deque
from typing import Any, BinaryIO, cast

import trafilatura
from trafilatura.core import determine_returnstring
from trafilatura.settings import Extractor

from timelyqa.page import PARSE_ERRORS, parse
from timelyqa.site_tree.facts import extract_facts

Content = dict[str, Any]
_FRAME = struct.Struct("!I")  # the length of the pickle that follows
# Only trafilatura's metadata reader uses an Extractor's date parameters, and no metadata is read here; given, they
# spare each page's two Extractors a clock and time-zone look-up (3% of a worker's time on the Python documentation).
_NO_DATES: dict[str, Any] = {"original_date": True, "extensive_search": False, "max_date": "9999-12-31"}


def read(html: str | None, url: str, *, with_facts: bool) -> Content:
    """The page's title, its main content as markdown and as plain text (trafilatura, tables kept), and with
    `with_facts` (a page served without error) its facts as `timelyqa.site_tree.facts` reads them. The page is
    parsed once, by `timelyqa.page` (XHTML, any depth), and every reader reads that tree."""
    try:
        tree = parse(html) if html else None
    except PARSE_ERRORS:  # libxml2 failed on it: the spider recorded the page `unparsable`
        tree = None
    if tree is None:
        return {"title": None, "markdown": None, "text": None, "facts": []}
    facts = extract_facts(tree) if with_facts else []
    title = " ".join(tree.xpath("string(//title)").split()) or None  # before trafilatura, which prunes the tree
    markdown, text = _main_content(tree, url)
    return {"title": title, "markdown": markdown, "text": text,
            "facts": [{"label": f.label, "value": f.value, "kind": f.kind, "context": f.context} for f in facts]}


def _main_content(tree: Any, url: str) -> tuple[str | None, str | None]:
    """The main content as markdown and as plain text from ONE trafilatura extraction (tables kept, comments not),
    rendered twice: the costliest step of a page, done once. The markdown is what `trafilatura.extract(...,
    output_format="markdown")` gives; the text is that extraction without its formatting (the same words as a
    "txt" extraction on 73 of 74 pages of the Python documentation, where inline code may join two)."""
    as_markdown = Extractor(output_format="markdown", fast=True, comments=False, tables=True, url=url,
                            date_params=_NO_DATES)
    document = trafilatura.bare_extraction(tree, options=as_markdown, as_dict=False)
    if document is None:
        return None, None
    as_text = Extractor(output_format="txt", fast=True, comments=False, tables=True, url=url, date_params=_NO_DATES)
    return determine_returnstring(document, as_markdown), determine_returnstring(document, as_text)


def _frame(obj: object) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(data)) + data


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """A worker's loop, until stdin closes: each page's content, or None when reading it raised (the crawl then reads
    that page itself, where Scrapy logs the error)."""
    while header := stdin.read(_FRAME.size):
        html, url, with_facts = pickle.loads(stdin.read(_FRAME.unpack(header)[0]))
        try:
            answer: Content | None = read(html, url, with_facts=with_facts)
        except Exception:  # noqa: BLE001 - any failure is reported as None, and the page is read again
            answer = None
        stdout.write(_frame(answer))
        stdout.flush()


class _Worker:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.stdin = cast(asyncio.StreamWriter, proc.stdin)  # started with stdin=PIPE
        self.out = cast(asyncio.StreamReader, proc.stdout)
        self.waiting: deque[asyncio.Future[Content | None]] = deque()  # answers come back in the order jobs went
        self.alive = True
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            while True:
                header = await self.out.readexactly(_FRAME.size)
                self.waiting.popleft().set_result(pickle.loads(await self.out.readexactly(_FRAME.unpack(header)[0])))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the worker ended (closed by us, or it died)
        finally:
            self.alive = False
            while self.waiting:
                self.waiting.popleft().set_result(None)


class ContentWorkers:
    """`count` worker processes; `read` gives a page's content from the least busy one, or None when there is no
    worker or the worker failed on that page (the caller reads it itself)."""

    def __init__(self, workers: list[_Worker]) -> None:
        self.workers = workers

    @classmethod
    async def start(cls, count: int) -> ContentWorkers:
        procs = [await asyncio.create_subprocess_exec(sys.executable, "-m", "spiders.content",
                                                      stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
                 for _ in range(count)]
        return cls([_Worker(p) for p in procs])

    def __bool__(self) -> bool:
        return bool(self.workers)

    async def read(self, html: str, url: str, *, with_facts: bool) -> Content | None:
        live = [w for w in self.workers if w.alive]
        if not live:
            return None
        worker = min(live, key=lambda w: len(w.waiting))
        answer: asyncio.Future[Content | None] = asyncio.get_running_loop().create_future()
        worker.waiting.append(answer)
        worker.stdin.write(_frame((html, url, with_facts)))
        with contextlib.suppress(ConnectionError):  # the worker died: its reader answers None
            await worker.stdin.drain()
        return await answer

    async def close(self) -> None:
        """Close the workers' stdin and wait for them to finish what they were given."""
        for worker in self.workers:
            worker.stdin.close()
        for worker in self.workers:
            await worker.proc.wait()
            await worker.reader


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
