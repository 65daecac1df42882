"""The site-tree spider: breadth first from each root, on the root's site only, every page at its exact click depth.

Scrapy's concurrency makes breadth-first order approximate: a page can be reached first by a long path and
later by a short one. The spider keeps each fetched page's links, so when a shorter path to a page turns
up, the page and everything reached through it get the shorter depth at once, and links that the longer
depth had left beyond `max_depth` are followed now. The depth a page ends with is its shortest click
distance from a root over the pages fetched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from scrapy import Request, Spider
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from spiders.clickables import clickables
from spiders.errors import failure_reason
from spiders.guard import HostGuard
from spiders.urls import TrapBounds, canonical, is_crawlable


ERROR_STATUSES = list(range(400, 600))
"""Error pages reach the spider and are recorded with their status; redirects are still followed."""


class SiteTreeSpider(Spider):
    name = "site_tree"

    def __init__(self, roots: str, out: str, max_depth: str = "4", max_pages: str = "1000",
                 allow_paths: str = "[]", render: str = "never", page_timeout: str = "30", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.roots = [canonical(r) for r in json.loads(roots)]
        self.out = out
        self.max_depth, self.max_pages = int(max_depth), int(max_pages)
        self.render = render
        self.page_timeout = float(page_timeout)
        self.guard = HostGuard.of(self.roots, allow_paths=json.loads(allow_paths))
        self.traps = TrapBounds()
        self.depth: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}
        self.root_of: dict[str, str] = {}
        self.links: dict[str, list[str]] = {}  # fetched page -> the pages it links to (canonical)
        self.alias: dict[str, str] = {}  # where a redirect ended -> the URL that was asked for
        self.requested: set[str] = set()

    async def start(self) -> Any:
        for root in self.roots:
            for request in self._reach(root, 0, None, root):
                yield request

    def parse(self, response: Response) -> Iterator[Any]:
        key = response.meta["key"]
        final = canonical(response.url)
        if final != key:
            self.alias.setdefault(final, key)
        html = response.text if isinstance(response, TextResponse) and _is_html(response) else None
        found = clickables(html, response.url) if html is not None and response.status < 400 else []
        self.links[key] = [t for c in found if is_crawlable(c.href) for t in [canonical(c.href)]]
        error = None if response.status < 400 else f"http_{response.status}"
        if html is None and error is None:
            error = "not_html"
        yield {"kind": "page", "url": key, "final_url": response.url, "status": response.status,
               "fetched_at": datetime.now(UTC).isoformat(), "sha256": hashlib.sha256(response.body).hexdigest(),
               "title": _title(response) if html is not None else None, "html": html, "error": error,
               "rendered": False, "render_reason": "render_never",
               "clickables": [{"href": c.href, "text": c.text, "kind": c.kind} for c in found]}
        for c in found:
            yield {"kind": "link", "from": key, "to": c.href, "text": c.text, "link_kind": c.kind}
        here = self.depth[key]
        for target in self.links[key]:
            yield from self._reach(target, here + 1, key, self.root_of[key])

    def failed(self, failure: Failure) -> Iterator[Any]:
        request: Request = failure.request  # type: ignore[attr-defined]
        key = request.meta["key"]
        reason = failure_reason(failure)
        if failure.check(IgnoreRequest):
            if not request.meta.get("redirect_urls"):
                self.crawler.stats.inc_value(f"pages/skipped/{reason}")
                return  # never requested (robots.txt, the guard): not a page
            if reason != "redirect_limit":  # the page answered with a redirect to where the crawl may not go
                reason = f"redirect_{reason}"
        self.crawler.stats.inc_value(f"pages/error/{reason}")
        self.links[key] = []
        yield {"kind": "page", "url": key, "final_url": request.url, "status": None,
               "fetched_at": datetime.now(UTC).isoformat(), "sha256": None, "title": None, "html": None,
               "error": reason, "rendered": False, "render_reason": "render_never", "clickables": []}

    def _reach(self, url: str, depth: int, parent: str | None, root: str) -> Iterator[Request]:
        """Record that `url` is `depth` clicks from `root` through `parent`, and what follows from that."""
        work = [(url, depth, parent)]
        while work:
            page, d, via = work.pop()
            page = self.alias.get(page, page)
            known = self.depth.get(page)
            if known is not None and known <= d:
                continue  # already as near or nearer
            if known is None and d > self.max_depth:
                continue  # beyond the limit, unless a shorter path turns up later
            self.depth[page], self.parent[page], self.root_of[page] = d, via, root
            if page in self.links:  # fetched already: what it links to is nearer now too
                work += [(t, d + 1, page) for t in self.links[page]]
            elif page not in self.requested and d <= self.max_depth and (r := self._request(page, via)):
                yield r

    def _request(self, url: str, parent: str | None) -> Request | None:
        stats = self.crawler.stats
        if (refused := self.guard.refusal(url)) is not None:
            stats.inc_value(f"guard/{refused}")
            return None
        if (bounded := self.traps.check(url, parent)) is not None:
            stats.inc_value(f"traps/{bounded}")
            return None
        if len(self.requested) >= self.max_pages:
            stats.inc_value("budget/max_pages")
            return None
        self.requested.add(url)
        return Request(url, callback=self.parse, errback=self.failed, priority=-self.depth[url],
                       meta={"key": url, "handle_httpstatus_list": ERROR_STATUSES,
                             "download_timeout": self.page_timeout})


def _is_html(response: TextResponse) -> bool:
    kind = response.headers.get("Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml", "")


def _title(response: TextResponse) -> str | None:
    title = response.xpath("normalize-space(//title)").get()
    return title or None
