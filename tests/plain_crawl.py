"""A plain Scrapy CrawlSpider with a LinkExtractor: the yardstick a site-tree crawl of a real site is held to.

Run as `python -m scrapy runspider tests/plain_crawl.py -a root=URL -s DEPTH_LIMIT=N -O pages.jsonl`: one line per
page it reached, on the root's site (its scheme, host and port), breadth first and one request at a time, so that
each page is reached first by a shortest path and the depth limit cuts where the site-tree spider's does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from scrapy.http import Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class PlainSpider(CrawlSpider):
    name = "plain"
    custom_settings = {  # noqa: RUF012 - Scrapy's own class attribute
        "ROBOTSTXT_OBEY": False, "REMOTE_CONTROL_ENABLED": False, "TELNETCONSOLE_ENABLED": False,
        "CONCURRENT_REQUESTS": 1, "DEPTH_PRIORITY": 1, "LOG_LEVEL": "WARNING",
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    }

    def __init__(self, root: str, *args: Any, **kwargs: Any) -> None:
        site = re.match(r"^https?://[^/]+/", root)
        if site is None:
            raise ValueError(f"root={root!r}: an http(s) URL")
        self.start_urls = [root]
        self.rules = (Rule(LinkExtractor(allow=[f"^{re.escape(site[0])}"]), callback="parse_page", follow=True),)
        super().__init__(*args, **kwargs)

    def parse_start_url(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        yield from self.parse_page(response)

    def parse_page(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url, "depth": response.meta.get("depth", 0)}
