"""What a crawl that keeps a journal shares: the journal file (one JSON line a page, flushed as it is done), and
resuming over a killed crawl, which asks only for the pages the journal lacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import IO, Any, Self

from scrapy import Spider
from scrapy.crawler import Crawler

JOURNAL = "pages.jsonl"


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
        journal = Path(self.out) / JOURNAL
        if journal.is_file():
            for line in journal.read_text(encoding="utf-8").splitlines():
                try:
                    self.fetched.add(json.loads(line)[self.journal_key])
                except (json.JSONDecodeError, KeyError):  # the line the kill cut short: that page is asked again
                    continue
        self.crawler.stats.set_value("pages/resumed", len(self.fetched))


class JournalPipeline:
    """An item pipeline base: `self.journal` is the spider's journal, opened for appending."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.journal: IO[str]  # opened by open_spider, which Scrapy calls first

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def open_spider(self) -> None:
        out = Path(self.crawler.spider.out)  # type: ignore[union-attr]
        out.mkdir(parents=True, exist_ok=True)
        self.journal = (out / JOURNAL).open("a", encoding="utf-8")
