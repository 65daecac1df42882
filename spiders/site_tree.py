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
from typing import Any

from scrapy import Request
from scrapy.http import Response

from spiders import clock, journal
from spiders import render as rendering
from spiders.base import ERROR_STATUSES, NEVER_ASKED, Miss, PageSpider, page_html
from spiders.browser import browser_meta, served_as_is
from spiders.clickables import clickables, static_hrefs
from spiders.guard import HostGuard
from spiders.urls import TrapBounds, canonical, is_crawlable
from timelyqa import page as pages

RENDERS = ("never", "always", "auto")
JOURNAL = journal.JOURNAL
"""The crawl's journal: one line a page, appended and flushed as the page comes in (spiders/store.py)."""

__all__ = ["ERROR_STATUSES", "NEVER_ASKED", "SiteTreeSpider"]  # the first two now live in spiders.base


class SiteTreeSpider(PageSpider):
    name = "site_tree"
    journal_key = "url"
    redirects_are_edges = True  # one row a final page (spiders.once.OnceMiddleware asks for it once)

    def __init__(self, roots: str, out: str, max_depth: str = "4", max_pages: str = "1000",
                 allow_paths: str = "[]", render: str = "never", page_timeout: str = "30",
                 pattern_budget: str = "500", entries: str = "[]", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.roots = [canonical(r) for r in json.loads(roots)]
        self.entries = json.loads(entries)  # [url, depth, parent, root]: this site's pages another shard links to
        self.out = out
        self.max_depth, self.max_pages = int(max_depth), int(max_pages)
        if render not in RENDERS:
            raise ValueError(f"render={render!r}: one of {', '.join(RENDERS)}")
        self.render = render
        self.page_timeout = float(page_timeout)
        # a shard of a site split by path prefix may start from entries alone: their site is its own
        self.guard = HostGuard.of(self.roots, allow_hosts=[e[0] for e in self.entries],
                                  allow_paths=json.loads(allow_paths))
        self.traps = TrapBounds(pattern_budget=int(pattern_budget))
        self.depth: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}
        self.root_of: dict[str, str] = {}
        self.links: dict[str, list[str]] = {}  # fetched page -> the pages it links to (canonical)
        self.alias: dict[str, str] = {}  # where a redirect ended -> the URL that was asked for
        self.requested: set[str] = set()
        self.beyond: set[str] = set()  # pages linked only past max_depth so far
        self.fetched: set[str] = set()  # pages in the journal: fetched, or tried and failed

    async def start(self) -> Any:
        self.replay()
        for root in self.roots:
            for request in self._reach(root, 0, None, root):
                yield request
        for url, depth, parent, root in self.entries:  # reached from another site's shard (spiders/shards.py)
            for request in self._reach(canonical(url), int(depth), parent, root):
                yield request

    def replayed(self, entry: dict[str, Any]) -> None:
        """A page the journal holds is in, with its links, so depths are found again over them and only the pages not
        yet in are asked for; a redirect it holds leads to the page it ended on."""
        if "redirect" in entry:
            self.alias[entry["redirect"]] = entry["to"]
            self.requested.add(entry["redirect"])
            return
        key = entry["url"]
        self.fetched.add(key)
        self.requested.add(key)
        self.links[key] = [canonical(c["href"]) for c in entry["clickables"] if is_crawlable(c["href"])]

    def parse(self, response: Response) -> Iterator[Any]:
        key = response.meta["key"]
        if key in self.fetched:  # its row came first by another way (Chromium followed a redirect to it)
            self.crawler.stats.inc_value("pages/skipped/already_fetched")
            return
        rendered = bool(response.meta.get("playwright"))
        if rendered and (refused := self.landed_off(response)) is not None:  # Chromium was redirected off the guard
            yield from self.refused_landing(response, refused)
            return
        html = self.html_of(response, rendered=rendered)
        if moved := _navigated(response.url, key):
            # Under `auto` Chromium was handed the page as served, so a script took it elsewhere: that page as served
            # stands. Otherwise a redirect (Scrapy's or Chromium's own) or a script ended off the page asked for: a
            # page on the site is the row, reached by an edge; anywhere else is refused with its reason.
            refused = self.guard.refusal(response.url, resolve=False) if moved == "away" else moved
            if rendered and ("static_html" in response.meta or refused is not None):
                why = f"navigated_{refused or moved}"
                self.crawler.stats.inc_value(f"render/failed/{why}")
                if "static_html" in response.meta:
                    yield from self._page(served_as_is(response.request),  # type: ignore[arg-type]
                                          key, response.meta["static_html"], rendered=False,
                                          reason=f"render_failed_{why}")
                else:
                    yield from self._unfetched(key, response.url, why)
                return
            final = canonical(response.url)
            yield from self._redirected(key, final)
            if final in self.fetched:
                return
            key = final
        if (needed := self.needs_render(response, html)) is not None:
            yield self.render_request(response, key, html or "", needed)
            return
        yield from self._page(response, key, html, rendered=rendered, reason=self.render_word(response, html))

    def html_of(self, response: Response, *, rendered: bool) -> str | None:
        return page_html(response, rendered=rendered)

    def page(self, response: Response, html: str | None, *, rendered: bool, reason: str) -> Iterator[Any]:
        yield from self._page(response, response.meta["key"], html, rendered=rendered, reason=reason)

    def render_request(self, response: Response, key: str, html: str, needed: str, **meta: Any) -> Request:
        """A new request (the page may be one a redirect ended on), just before the page's links, with the links the
        page has as served, which tell a link a script wrote from one the site wrote."""
        self.crawler.stats.inc_value(f"render/{needed}")
        return Request(response.url, callback=self.parse, errback=self.render_failed, dont_filter=True,
                       priority=-self.depth[key] + 1,
                       meta={"key": key, **browser_meta(), **rendering.FROM_FETCHED, "render_reason": needed,
                             "dont_cache": True, "static_hrefs": sorted(static_hrefs(html)), "static_html": html,
                             "static_status": response.status, "handle_httpstatus_list": ERROR_STATUSES,
                             "download_timeout": self.page_timeout + rendering.SETTLE_MS / 1000, **meta})

    def _page(self, response: Response, key: str, html: str | None, *, rendered: bool, reason: str
              ) -> Iterator[Any]:
        served = response.meta.get("static_hrefs")
        try:
            tree = pages.parse(html) if html is not None and response.status < 400 else None
        except pages.PARSE_ERRORS:  # libxml2 failed on it: recorded `unparsable` below, never lost
            tree = None
        found = (clickables(tree, response.url, static_hrefs=frozenset(served) if served is not None else None)
                 if tree is not None else [])
        self.links[key] = [t for c in found if is_crawlable(c.href) for t in [canonical(c.href)]]
        if invalid := sum(c.href.lower().startswith(("http:", "https:", "//")) and not is_crawlable(c.href)
                          for c in found):  # a page's web link with no canonical form: counted, the page stands
            self.crawler.stats.inc_value("guard/url_invalid", invalid)  # crawl_stats.json: refused
        self.fetched.add(key)
        error = None if response.status < 400 else f"http_{response.status}"
        if html is None and error is None:
            error = "not_html"
        elif error is None and pages.unparsable(html or "", tree):  # content, but nothing read: never a success
            error = pages.UNPARSABLE
            self.crawler.stats.inc_value(f"pages/error/{error}")
        item = {"url": key, "final_url": response.url, "status": response.status,
                "fetched_at": clock.fetched_at(), "sha256": hashlib.sha256(response.body).hexdigest(),
                "html": html, "error": error, "rendered": rendered, "render_reason": reason,
                "fetch": self.fetched_record(response, html, reason),
                "clickables": [{"href": c.href, "text": c.text, "kind": c.kind} for c in found]}
        here = self.depth[key]
        for target in self.links[key]:  # the links first: Scrapy takes a page's output in turn (CONCURRENT_ITEMS),
            yield from self._reach(target, here + 1, key, self.root_of[key])  # so they'd wait for its content
        yield item

    def _redirected(self, key: str, final: str) -> Iterator[Any]:
        """`key` redirected to `final`: an edge, and `final` is as near as `key` (it may have a row already, or have
        been reached by a longer path)."""
        self.crawler.stats.inc_value("pages/redirected")
        yield {"redirect": key, "to": final}
        self.alias[key] = final
        self.requested.add(final)
        depth, via, root = self.depth[key], self.parent[key], self.root_of[key]
        if final in self.fetched:
            yield from self._reach(final, depth, via, root)
        elif self._nearer(final, depth, via, root):
            self.depth[final], self.parent[final], self.root_of[final] = depth, via, root

    def missed(self, miss: Miss) -> Iterator[Any]:
        if miss.cause == "already_fetched" and miss.redirected:  # the redirect ends on a page asked for already
            yield from self._redirected(miss.key, canonical(miss.url))  # once.py canonicalised it too
            return
        if miss.never_asked:  # never requested (robots.txt, the guard, asked already): not a page
            self.crawler.stats.inc_value(f"pages/skipped/{miss.cause}")
            return
        self.crawler.stats.inc_value(f"pages/error/{miss.reason}")
        self.links[miss.key] = []
        self.fetched.add(miss.key)
        yield {"url": miss.key, "final_url": miss.url, "status": None, "fetched_at": clock.fetched_at(),
               "sha256": None, "html": None, "error": miss.reason, "rendered": False, "render_reason": "not_fetched",
               "fetch": miss.fetch, "clickables": []}

    def _unfetched(self, key: str, final_url: str, reason: str) -> Iterator[Any]:
        yield from self.missed(Miss(key, final_url, reason, reason, landed=True))

    def _reach(self, url: str, depth: int, parent: str | None, root: str) -> Iterator[Request]:
        """Record that `url` is `depth` clicks from `root` through `parent`, and what follows from that."""
        work = [(url, depth, parent)]
        while work:
            page, d, via = work.pop()
            page = self.alias.get(page, page)
            if not self._nearer(page, d, via, root):
                continue  # already as near or nearer, through the same or a first parent
            if page not in self.depth and d > self.max_depth:
                self.beyond.add(page)  # beyond the limit, unless a shorter path turns up later: counted at the end
                continue
            self.depth[page], self.parent[page], self.root_of[page] = d, via, root
            if page in self.links:  # fetched already: what it links to is nearer now too
                work += [(t, d + 1, page) for t in self.links[page]]
            elif page not in self.requested and d <= self.max_depth and (r := self._request(page, via)):
                yield r

    def _nearer(self, page: str, depth: int, via: str | None, root: str) -> bool:
        """Whether reaching `page` through `via` changes what is known of it: a shorter path; as short a path through a
        parent first in URL order; or its parent's root, moved. A page's parent and root are thus the same whatever
        order its pages are fetched in (and the same in a shard as in one process: spiders/shards.py ranks alike)."""
        known = self.depth.get(page)
        if known is None or depth < known:
            return True
        if depth > known:
            return False
        held = self.parent[page]
        return (via or "") < (held or "") or (via == held and root != self.root_of[page])

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
        return self.ask(url, url, render=self.render, priority=-self.depth[url])


def _navigated(url: str, key: str) -> str | None:
    """Where Chromium ended, if not on the page asked for: `away` (another page), `not_http` (an error page)."""
    if not is_crawlable(url):
        return "not_http"
    return "away" if canonical(url) != key else None
