"""What every crawl that keeps a journal shares (site tree, news, official): the journal file (one JSON line a page,
flushed as it is done), and resuming over a crawl killed any number of times, which drops Scrapy's stale request
queue and asks only for the pages the journal lacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from collections.abc import Iterator
from typing import IO, Any, Self

from scrapy import Spider
from scrapy.crawler import Crawler

JOURNAL = "pages.jsonl"


def entries(out: str | Path) -> Iterator[dict[str, Any]]:
    """The journal's lines in `out`, in order; the line a kill cut short is left out (that page is asked again)."""
    for _, entry in indexed(out):
        yield entry


def indexed(out: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """`entries`, each with the byte offset of its line, which `at` reads again without the lines around it."""
    journal = Path(out) / JOURNAL
    if not journal.is_file():
        return
    with journal.open("rb") as lines:
        offset = 0
        for line in lines:
            if not line.endswith(b"\n"):
                return  # the last line, cut short by a kill
            if (entry := _entry(line)) is not None:
                yield offset, entry
            offset += len(line)


def at(journal: IO[bytes], offset: int) -> dict[str, Any]:
    """The entry whose line starts at `offset` of the open journal (an offset `indexed` gave)."""
    journal.seek(offset)
    entry = _entry(journal.readline())
    if entry is None:
        raise ValueError(f"{getattr(journal, 'name', 'journal')}: no entry at byte {offset}")
    return entry


def _entry(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return entry if isinstance(entry, dict) else None


class JournaledSpider(Spider):
    """A spider whose item pipeline writes the journal in `out`; `fetched` holds the pages it names
    (spiders.once.OnceMiddleware reads it), each named by the line's `journal_key` field."""

    journal_key = "key"
    out: str
    fetched: set[str]

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> Self:
        """Before Scrapy opens its job folder's queue: a crawl resumed over a journal drops that queue, since the
        journal says what is done and `start` asks again for all the rest. Scrapy's disk queue is saved only on a
        clean stop; after a kill its files lie, and a request they hold half-written is lost."""
        spider = super().from_crawler(crawler, *args, **kwargs)
        job = crawler.settings.get("JOBDIR")
        if job and (Path(spider.out) / JOURNAL).is_file():
            shutil.rmtree(Path(job) / "requests.queue", ignore_errors=True)
        return spider

    def replay(self) -> None:
        """A crawl started again over a killed one: the pages its journal holds are done, and not asked again."""
        for entry in entries(self.out):
            if self.journal_key in entry:
                self.replayed(entry)
        self.crawler.stats.set_value("pages/resumed", len(self.fetched))

    def replayed(self, entry: dict[str, Any]) -> None:
        """One journal line read back: its page is done. A spider that keeps more of a page (the site tree: its links,
        to find depths again) reads it here too."""
        self.fetched.add(entry[self.journal_key])


class JournalPipeline:
    """An item pipeline base: `self.journal` is the spider's journal, opened for appending, and `write` the one way a
    line goes into it."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.journal: IO[str]  # opened by open_spider, which Scrapy calls first

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def open_spider(self) -> None:
        self.journal = open_journal(self.crawler.spider.out)  # type: ignore[union-attr]

    def write(self, line: dict[str, Any]) -> None:
        """A page's line, appended and flushed at once, so a kill loses no page that was done; the page it names is
        done (spiders.once.OnceMiddleware asks for it no more)."""
        # ASCII: a page's text may hold what UTF-8 cannot write (a lone surrogate), and must not cost its line
        self.journal.write(json.dumps(line) + "\n")
        self.journal.flush()
        spider: Any = self.crawler.spider
        if (key := line.get(spider.journal_key)) is not None:
            spider.fetched.add(key)


def open_journal(out: str | Path) -> IO[str]:
    """The journal in `out`, opened for appending: a line a kill cut short is cut off first, so that the next page's
    line does not run on from it and go unread with it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    journal = out / JOURNAL
    if journal.is_file() and (size := journal.stat().st_size):
        with journal.open("r+b") as raw:
            raw.seek(max(size - 1, 0))
            if raw.read(1) != b"\n":
                raw.seek(0)
                data = raw.read()
                raw.truncate(data.rfind(b"\n") + 1)
    return journal.open("a", encoding="utf-8")
