"""No page fetched twice, across a crash too: a downloader middleware that lets a page's first request through
once, and never one for a page the crawl's journal already holds."""

from __future__ import annotations

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest

from spiders.urls import canonical


class OnceMiddleware:
    """Scrapy's job folder keeps its queue and seen requests only as of its last clean stop, so a crawl killed
    and started again would ask some pages again; the spider's journal (pages.jsonl, flushed per page) says which
    pages are in. A first request for a page in the journal, or a second first request for one, goes no further.
    Retries, redirects and the browser's render of a page are the same page's request, and pass; but for a spider
    whose rows are the pages redirects end on (`redirects_are_edges`), a redirect to a page asked for already goes
    no further either, and the page it leads to counts as asked."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self.issued: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OnceMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        key = request.meta.get("key")
        spider = self.crawler.spider
        if key is not None and "redirect_urls" in request.meta and getattr(spider, "redirects_are_edges", False):
            try:
                target = canonical(request.url)
            except ValueError:  # no page to know it by: the redirect goes on, to be refused with its reason
                return
            if target == key or request.url in request.meta["redirect_urls"]:
                return  # a loop: REDIRECT_MAX_TIMES ends it, as `redirect_limit`
            if target in getattr(spider, "fetched", ()) or target in self.issued:
                self.stats.inc_value("pages/skipped/redirect_to_asked")
                raise IgnoreRequest(f"already_fetched: {request.url}")
            self.issued.add(target)
            return
        if key is None or any(k in request.meta for k in ("retry_times", "redirect_urls", "render_reason")):
            return
        if key in getattr(spider, "fetched", ()) or key in self.issued:
            self.stats.inc_value("pages/skipped/already_fetched")
            raise IgnoreRequest(f"already_fetched: {request.url}")
        self.issued.add(key)
