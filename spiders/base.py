"""The one cycle every crawl runs (site tree, news, official): a page is asked for (its render mode in the request),
rendered when its render mode says so, and handed to the spider's `page` hook; any way it fails (an HTTP error, a
refusal, a render failure, a timeout, no such host) is one `Miss` with one reason, handed to the spider's `missed`
hook. Every row either hook makes carries the same `fetch` record ({"status", "reason", "render"}), in these words,
whatever the spider's own vocabulary, and the journal (spiders/journal.py) keeps it a line a page."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from spiders import render as rendering
from spiders.browser import browser_meta, policy_refusal, served_as_is
from spiders.errors import failure_reason
from spiders.guard import Refusal
from spiders.journal import JournaledSpider
from timelyqa import page as pages

ERROR_STATUSES = list(range(400, 600))
"""Error pages reach the spider, to be rows with their status (after the retry a 5xx gets); redirects are followed."""
REFUSALS = frozenset(r.value for r in Refusal)
"""Why the guard refused a request before it went out."""
NEVER_ASKED = REFUSALS | {"already_fetched"}
"""Why a request was refused before it went out (the guard's reasons, or a page asked for already)."""
_HTML = frozenset({"text/html", "application/xhtml+xml", ""})


@dataclass(frozen=True)
class Miss:
    """A request that gave no page to read. `cause` is why the request failed (spiders.errors' words); `reason` is the
    row's one reason, which says a redirect led there (`redirect_off_site`); `url` is where it failed (a redirect's
    target); `landed` when Chromium reached a page the guard does not let the crawl read."""

    key: str
    url: str
    cause: str
    reason: str
    redirected: bool = False
    landed: bool = False

    @property
    def never_asked(self) -> bool:
        """Refused before any request went out, and no redirect led there."""
        return not self.redirected and self.cause in NEVER_ASKED

    @property
    def fetch(self) -> dict[str, Any]:
        return fetch_record(None, self.reason, "not_fetched")


def fetch_record(status: int | None, reason: str | None, render: str | None) -> dict[str, Any]:
    """What every row of every crawl says of its fetch: the HTTP status, why there is no page to read (None when
    there is one), and why it was or was not rendered (spiders.render's words, or `render_failed_<why>`)."""
    return {"status": status, "reason": reason, "render": render}


def miss_of(failure: Failure) -> Miss:
    """The one reason a failed request gives: a refusal after a redirect is `redirect_<refusal>`, and so is any
    other refusal of a redirect (robots.txt, an oversized body), except the redirect limit itself."""
    request: Request = failure.request  # type: ignore[attr-defined]
    cause = reason = failure_reason(failure)
    redirected = bool(request.meta.get("redirect_urls"))
    url = request.url
    if failure.check(HttpError):  # a redirect Scrapy would not follow (file:, ftp:, ...): where it pointed
        url = failure.value.response.headers.get("Location", b"").decode("latin-1") or url
    elif failure.check(IgnoreRequest) and redirected and cause not in ("redirect_limit", "already_fetched"):
        reason = f"redirect_{cause}"
    return Miss(request.meta["key"], url, cause, reason, redirected=redirected)


def page_html(response: Response, *, rendered: bool) -> str | None:
    """The page's text as `timelyqa.page` decodes its bytes (the header's charset, the page's own declaration, or the
    charset detected), or None when it is no HTML. A page Chromium built is the text Chromium gave."""
    if not isinstance(response, TextResponse) or content_type(response).lower() not in _HTML:
        return None
    if rendered:
        return response.text
    return pages.decode(response.body, response.headers.get("Content-Type", b"").decode("latin-1") or None)[0]


def content_type(response: Response) -> str:
    return response.headers.get("Content-Type", b"").decode("latin-1").split(";")[0].strip()


class PageSpider(JournaledSpider):
    """The cycle: `ask` a page, `parse` what came (rendering it first when its mode says so), `render_failed` and
    `failed` for what did not. A spider writes `page(response, html, rendered=, reason=)` and `missed(miss)`, each
    yielding its rows, and may widen `landed_off` (where Chromium may not end) and `render_request`."""

    page_timeout: float = 30.0

    def ask(self, key: str, url: str, *, render: str, priority: int = 0, **meta: Any) -> Request:
        """The request for page `key` at `url`; `render` is its mode (never, auto, always). dont_filter: a resumed
        crawl asks again for what the job folder saw but the journal lacks (spiders.once keeps one first request)."""
        meta = {"key": key, "render": render, "handle_httpstatus_list": ERROR_STATUSES,
                "download_timeout": self.page_timeout, **meta}
        if render == "always":
            meta |= browser_meta()
        return Request(url, callback=self.parse, errback=self.failed, priority=priority, meta=meta, dont_filter=True)

    def parse(self, response: Response) -> Iterator[Any]:
        meta = response.meta
        rendered = bool(meta.get("playwright"))
        if rendered and (refused := self.landed_off(response)) is not None:
            yield from self.refused_landing(response, refused)
            return
        html = self.html_of(response, rendered=rendered)
        if (needed := self.needs_render(response, html)) is not None:
            yield self.render_request(response, meta["key"], html or "", needed)
            return
        yield from self.page(response, html, rendered=rendered, reason=self.render_word(response, html))

    def html_of(self, response: Response, *, rendered: bool) -> str | None:
        """The page's HTML as Scrapy decoded it, or None when it is no HTML (the site tree decodes it itself)."""
        if isinstance(response, TextResponse) and content_type(response).lower() in _HTML:
            return response.text
        return None

    def landed_off(self, response: Response) -> str | None:
        """Why the page Chromium gave is not one to read (the policy proxy refused its navigation), or None."""
        return policy_refusal(response)

    def refused_landing(self, response: Response, refused: str) -> Iterator[Any]:
        """Chromium ended where the crawl may not read: the page as served stands when Chromium was handed it, as
        when Chromium fails; otherwise there is no page, and the reason says the redirect."""
        if "static_html" in response.meta:
            self.crawler.stats.inc_value(f"render/failed/redirect_{refused}")
            yield from self.page(served_as_is(response.request), response.meta["static_html"],  # type: ignore[arg-type]
                                 rendered=False, reason=f"render_failed_redirect_{refused}")
            return
        yield from self.missed(Miss(response.meta["key"], response.url, refused, f"redirect_{refused}",
                                    redirected=True, landed=True))

    def needs_render(self, response: Response, html: str | None) -> str | None:
        """Why a page fetched as served goes to Chromium now (its mode is `auto`: spiders.render's rule), or None."""
        if html is None or response.meta.get("playwright") or response.status >= 400:
            return None
        return rendering.render_reason(html) if response.meta.get("render") == "auto" else None

    def render_request(self, response: Response, key: str, html: str, needed: str, **meta: Any) -> Request:
        """The page again, through Chromium, which is handed the page as served (fetched once, rendered or not)."""
        self.crawler.stats.inc_value(f"render/{needed}")
        return response.request.replace(  # type: ignore[union-attr]
            url=response.url, callback=self.parse, errback=self.render_failed,
            meta={**response.meta, "key": key, **browser_meta(), **rendering.FROM_FETCHED, "render_reason": needed,
                  "dont_cache": True, "static_html": html, "static_status": response.status,
                  "download_timeout": self.page_timeout + rendering.SETTLE_MS / 1000, **meta})

    def render_word(self, response: Response, html: str | None) -> str:
        """Why the page was, or was not, rendered, in spiders.render's words."""
        rendered = bool(response.meta.get("playwright"))
        if rendered:
            return response.meta.get("render_reason") or "render_always"
        if html is None:
            return "not_html"
        if response.meta.get("render") == "auto" and response.status < 400:
            return rendering.quiet_reason(html)
        return "render_never"

    def render_failed(self, failure: Failure) -> Iterator[Any]:
        """Chromium could not give the page (its scripts never settle, say): the page as served stands, with why."""
        request: Request = failure.request  # type: ignore[attr-defined]
        # Playwright's TimeoutError here is the wait for the network to go quiet: the page's scripts never settle.
        why = "scripts_never_settle" if type(failure.value).__name__ == "TimeoutError" else failure_reason(failure)
        self.crawler.stats.inc_value(f"render/failed/{why}")
        yield from self.page(served_as_is(request), request.meta["static_html"], rendered=False,
                             reason=f"render_failed_{why}")

    def failed(self, failure: Failure) -> Iterator[Any]:
        """Every way a request gives no page, as one Miss with its reason."""
        yield from self.missed(miss_of(failure))

    def fetched_record(self, response: Response, html: str | None, reason: str) -> dict[str, Any]:
        """The `fetch` record of a page that came: no reason when it is HTML below status 400."""
        why = f"http_{response.status}" if response.status >= 400 else None if html is not None else "not_html"
        return fetch_record(response.status, why, reason)

    def page(self, response: Response, html: str | None, *, rendered: bool, reason: str) -> Iterator[Any]:
        """The spider's rows of a page that came (`html` None when it is no HTML; `reason`: render_word's)."""
        raise NotImplementedError

    def missed(self, miss: Miss) -> Iterator[Any]:
        """The spider's rows of a page that did not come."""
        raise NotImplementedError
