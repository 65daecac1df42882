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
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from spiders import clock, journal
from spiders import render as rendering
from spiders.browser import browser_meta, policy_refusal, served_as_is
from spiders.clickables import clickables, static_hrefs
from spiders.errors import failure_reason
from spiders.guard import HostGuard, Refusal
from spiders.urls import TrapBounds, canonical, is_crawlable
from timelyqa import page as pages

RENDERS = ("never", "always", "auto")
JOURNAL = journal.JOURNAL
"""The crawl's journal: one line a page, appended and flushed as the page comes in (spiders/store.py)."""


NEVER_ASKED = frozenset({*(r.value for r in Refusal), "already_fetched"})
"""Why a request was refused before it went out; any other failure of a request is a row with its reason."""
ERROR_STATUSES = list(range(400, 600))
"""Error pages reach the spider and are recorded with their status; redirects are still followed."""


class SiteTreeSpider(journal.JournaledSpider):
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
        html = _html(response, rendered=rendered)
        if rendered and (refused := policy_refusal(response)) is not None:  # Chromium was redirected off the guard
            if "static_html" in response.meta:  # the page as served stands, as when Chromium fails
                self.crawler.stats.inc_value(f"render/failed/redirect_{refused}")
                yield from self._page(served_as_is(response.request),  # type: ignore[arg-type]
                                      key, response.meta["static_html"], rendered=False,
                                      reason=f"render_failed_redirect_{refused}")
            else:
                yield self._unfetched(key, response.url, f"redirect_{refused}")
            return
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
                    yield self._unfetched(key, response.url, why)
                return
            final = canonical(response.url)
            yield from self._redirected(key, final)
            if final in self.fetched:
                return
            key = final
        reason = response.meta.get("render_reason") or ("render_always" if rendered else "render_never")
        if html is not None and not rendered and self.render == "auto" and response.status < 400:
            needed = rendering.render_reason(html)
            if needed is not None:
                yield self._render(response, key, needed, html)
                return
            reason = rendering.quiet_reason(html)
        if html is None and not rendered:
            reason = "not_html"
        yield from self._page(response, key, html, rendered=rendered, reason=reason)

    def render_failed(self, failure: Failure) -> Iterator[Any]:
        """Chromium could not give the page (its scripts never settle, say): the page as served stands, with why."""
        request: Request = failure.request  # type: ignore[attr-defined]
        # Playwright's TimeoutError here is the wait for the network to go quiet: the page's scripts never settle.
        why = "scripts_never_settle" if type(failure.value).__name__ == "TimeoutError" else failure_reason(failure)
        self.crawler.stats.inc_value(f"render/failed/{why}")
        yield from self._page(served_as_is(request), request.meta["key"], request.meta["static_html"],
                              rendered=False, reason=f"render_failed_{why}")

    def _render(self, response: Response, key: str, reason: str, html: str) -> Request:
        self.crawler.stats.inc_value(f"render/{reason}")
        return Request(response.url, callback=self.parse, errback=self.render_failed, dont_filter=True,
                       priority=-self.depth[key] + 1,
                       meta={"key": key, **browser_meta(), **rendering.FROM_FETCHED, "render_reason": reason,
                             "dont_cache": True, "static_hrefs": sorted(static_hrefs(html)), "static_html": html,
                             "static_status": response.status, "handle_httpstatus_list": ERROR_STATUSES,
                             "download_timeout": self.page_timeout + rendering.SETTLE_MS / 1000})

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
        elif (known := self.depth.get(final)) is None or known > depth:
            self.depth[final], self.parent[final], self.root_of[final] = depth, via, root

    def failed(self, failure: Failure) -> Iterator[Any]:
        request: Request = failure.request  # type: ignore[attr-defined]
        key = request.meta["key"]
        reason = failure_reason(failure)
        redirected = bool(request.meta.get("redirect_urls"))
        if failure.check(HttpError):  # a redirect Scrapy would not follow (file:, ftp:, ...): the answer stands
            target = failure.value.response.headers.get("Location", b"").decode("latin-1")  # type: ignore[union-attr]
            yield self._unfetched(key, target or request.url, reason)
            return
        if failure.check(IgnoreRequest):
            if reason == "already_fetched" and redirected:  # the redirect ends on a page asked for already
                yield from self._redirected(key, canonical(request.url))  # once.py canonicalised it too
                return
            if not redirected and reason in NEVER_ASKED:
                self.crawler.stats.inc_value(f"pages/skipped/{reason}")
                return  # never requested (robots.txt, the guard, asked already): not a page
            if redirected and reason != "redirect_limit":  # a redirect to where the crawl may not go
                reason = f"redirect_{reason}"
        yield self._unfetched(key, request.url, reason)

    def _unfetched(self, key: str, final_url: str, reason: str) -> dict[str, Any]:
        self.crawler.stats.inc_value(f"pages/error/{reason}")
        self.links[key] = []
        self.fetched.add(key)
        return {"url": key, "final_url": final_url, "status": None,
                "fetched_at": clock.fetched_at(), "sha256": None, "html": None,
                "error": reason, "rendered": False, "render_reason": "not_fetched", "clickables": []}

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
                self.beyond.add(page)  # beyond the limit, unless a shorter path turns up later: counted at the end
                continue
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
        meta: dict[str, Any] = {"key": url, "handle_httpstatus_list": ERROR_STATUSES,
                                "download_timeout": self.page_timeout}
        if self.render == "always":
            meta |= browser_meta()
        # dont_filter: a resumed crawl asks again for what the job folder saw but the journal lacks (OnceMiddleware
        # keeps every page to one first request).
        return Request(url, callback=self.parse, errback=self.failed, priority=-self.depth[url], meta=meta,
                       dont_filter=True)


def _html(response: Response, *, rendered: bool) -> str | None:
    """The page's text as `timelyqa.page` decodes its bytes (the header's charset, the page's own declaration, or
    the charset detected), or None when it is no HTML. A page Chromium built is the text Chromium gave."""
    if not (isinstance(response, TextResponse) and _is_html(response)):
        return None
    if rendered:
        return response.text
    return pages.decode(response.body, response.headers.get("Content-Type", b"").decode("latin-1") or None)[0]


def _navigated(url: str, key: str) -> str | None:
    """Where Chromium ended, if not on the page asked for: `away` (another page), `not_http` (an error page)."""
    if not is_crawlable(url):
        return "not_http"
    return "away" if canonical(url) != key else None


def _is_html(response: TextResponse) -> bool:
    kind = response.headers.get("Content-Type", b"").decode("latin-1").split(";")[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml", "")
