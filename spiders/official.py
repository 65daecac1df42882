"""The official-sites spider and its item pipeline: each page a resolution needs fetched once, on its own host and
nowhere else, through Chromium where the request says so; kept in the page store by its sha256, or failed with its
reason (timelyqa.official.reasons.Failure).

Run it as timelyqa.official.pages.fetch does: `spiders.run.crawl("official", {"requests": ..., "store": ...,
"render": "never"|"auto", "named": a JSON list of the hosts the operator named}, out)`. The folder gets
`fetches.parquet` (one row a request key, FETCH_SCHEMA), `crawl_stats.json` and the journal `pages.jsonl`: one line
a page, flushed as it is done, so a crawl killed and started again asks only for the pages the journal lacks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
from scrapy.http import Response, TextResponse

from spiders import clock
from spiders import render as rendering
from spiders.base import ERROR_STATUSES, REFUSALS, Miss, PageSpider, content_type, fetch_record
from spiders.browser import policy_refusal
from spiders.guard import HostGuard, Refusal
from spiders.journal import JournalPipeline, entries
from spiders.urls import canonical, is_crawlable, netloc
from timelyqa.crawling import STATS, counted, scrapy_counts
from timelyqa.files import write_parquet, write_text
from timelyqa.official.origin import is_named
from timelyqa.official.pages import FETCH_SCHEMA, FETCHES, RENDERS, PageStore
from timelyqa.official.reasons import Failure

__all__ = ["ERROR_STATUSES", "FetchStore", "OfficialSpider"]  # ERROR_STATUSES: spiders.base's
_MARKUP = frozenset({"text/html", "application/xhtml+xml", "text/xml", "application/xml", ""})
_STRONGER = {"never": 0, "auto": 1, "always": 2}


class OfficialSpider(PageSpider):
    """Each page has a guard of its own (request.meta["guard"]): its own host:port only, for the request and every
    redirect, so a page asked for one recipe never follows a redirect to a host only another recipe names. A host may
    be a loopback, private or link-local address only when the operator named it (`named`: `host:port`, or `host`
    for any port); any other such host is refused as private_address before a connection is tried, and counted."""

    name = "official"
    journal_key = "page"
    custom_settings = {"ITEM_PIPELINES": {"spiders.official.FetchStore": 300}}

    def __init__(self, requests: str, out: str, store: str, render: str = "never", page_timeout: str = "30",
                 named: str = "[]", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.out, self.store = out, PageStore(Path(store))
        self.page_timeout = float(page_timeout)
        self.keys: dict[str, list[str]] = {}  # a page (its canonical URL) -> the request keys naming it
        self.urls: dict[str, str] = {}  # a page -> its URL as first requested
        self.renders: dict[str, str] = {}  # a page -> the strongest render any of its requests asks
        for row in pl.read_parquet(requests).iter_rows(named=True):
            if row["render"] not in RENDERS:
                raise ValueError(f"request {row['key']}: render: one of {', '.join(RENDERS)}, not {row['render']!r}")
            page = canonical(row["url"]) if is_crawlable(row["url"]) else row["url"]
            self.keys.setdefault(page, []).append(row["key"])
            self.urls.setdefault(page, row["url"])
            self.renders[page] = max(self.renders.get(page, "never"), row["render"], key=_STRONGER.__getitem__)
        if render == "never" and any(r != "never" for r in self.renders.values()):
            raise ValueError("requests that render need Chromium: pass render=auto (timelyqa.official.pages does)")
        self.named = frozenset(json.loads(named))
        self.guards = {page: _guard(url, self.named) for page, url in self.urls.items() if is_crawlable(url)}
        # the spider's own guard serves requests that carry none (robots.txt): the hosts of the pages let through
        self.guard = HostGuard(frozenset())
        self.fetched: set[str] = set()  # pages in the journal (spiders.once.OnceMiddleware reads it)

    async def start(self) -> Any:
        self.replay()
        for page, url in self.urls.items():
            if page in self.fetched:
                continue
            guard = self.guards.get(page)
            if (refused := guard.refusal(url) if guard is not None else Refusal.NOT_HTTP) is not None:
                self.crawler.stats.inc_value(f"guard/{refused}")
                yield _item(page, url, failure=Failure.HOST_NOT_ALLOWED, detail=f"{refused}: never requested",
                            fetch=fetch_record(None, str(refused), "not_fetched"))
                continue
            # Widened in place: the browser's policy proxy holds this very guard from the crawl's start.
            self.guard.hosts |= guard.hosts
            self.guard.named_private |= guard.named_private
            yield self.ask(page, url, render=self.renders[page], guard=guard)

    def html_of(self, response: Response, *, rendered: bool) -> str | None:
        """HTML, XHTML or XML, as Scrapy decoded it."""
        return response.text if isinstance(response, TextResponse) and _is_markup(response) else None

    def landed_off(self, response: Response) -> str | None:
        """Chromium follows redirects itself: the proxy holds it to every recipe's hosts together, so a page that
        ended on another recipe's host is refused here by its own guard, as Scrapy's redirects are."""
        if (refused := policy_refusal(response)) is not None:
            return refused
        own = self.guards.get(response.meta["key"])
        if own is not None and (refused := own.refusal(response.url, resolve=False)) is not None:
            self.crawler.stats.inc_value(f"guard/{refused}")  # the proxy counts its own refusals
        return None if refused is None else str(refused)

    def refused_landing(self, response: Response, refused: str) -> Iterator[Any]:
        """A page that ended off its recipe's host is not read, not even as served: a recipe reads its own host."""
        yield from self.missed(Miss(response.meta["key"], response.url, refused, f"redirect_{refused}",
                                    redirected=True, landed=True))

    def page(self, response: Response, html: str | None, *, rendered: bool, reason: str) -> Iterator[Any]:
        failure = detail = None
        if response.status >= 500 or response.status == 429:
            failure, detail = Failure.SITE_DOWN, f"http_{response.status}"
        elif response.status >= 400:
            failure, detail = Failure.PAGE_MISSING, f"http_{response.status}"
        elif html is None:
            kind = content_type(response)
            failure, detail = Failure.NOT_HTML, f"not HTML ({kind or 'no Content-Type'})"
        page = response.meta["key"]
        yield _item(page, self.urls[page], final_url=response.url, status=response.status,
                    html=html if failure is None else None, failure=failure, detail=detail, rendered=rendered,
                    render_reason=_render_reason(response.meta, html, rendered, reason),
                    fetch=self.fetched_record(response, html, reason))

    def missed(self, miss: Miss) -> Iterator[Any]:
        if miss.cause == "already_fetched":
            return
        if miss.landed:
            error, detail = Failure.HOST_NOT_ALLOWED, f"redirected to {miss.url} ({miss.cause}): not read"
        elif miss.cause == "robots_disallowed":
            error, detail = Failure.ROBOTS_DISALLOWED, f"robots.txt of {urlsplit(miss.url).netloc} forbids it"
        elif miss.cause in REFUSALS:
            error = Failure.HOST_NOT_ALLOWED
            detail = f"redirected to {miss.url} ({miss.cause}): never requested" if miss.redirected else \
                f"{miss.cause}: never requested"
        elif miss.cause == "body_too_large":
            error, detail = Failure.NOT_HTML, "body_too_large: over the crawl's DOWNLOAD_MAXSIZE"
        elif miss.cause == "redirect_limit":
            error, detail = Failure.PAGE_MISSING, miss.cause
        else:  # no answer: refused, timed out, no such host, a cut body, Chromium's own errors
            error, detail = Failure.SITE_DOWN, miss.cause
        yield _item(miss.key, self.urls[miss.key], final_url=miss.url, failure=error, detail=detail, fetch=miss.fetch)


def _guard(url: str, named: frozenset[str]) -> HostGuard:
    """A page's guard: its own host:port, which may be private only when the operator named it."""
    where = netloc(url)
    return HostGuard(frozenset({where}), named_private=frozenset({where}) if is_named(where, named) else frozenset())


def _render_reason(meta: dict[str, Any], html: str | None, rendered: bool, reason: str) -> str | None:
    """Why the page was (or was not) rendered, in spiders.render's words; a render that failed says which rule sent
    the page to Chromium and why Chromium failed."""
    if reason.startswith("render_failed_"):
        return f"{meta['render_reason']}; Chromium failed ({reason.removeprefix('render_failed_')})"
    if rendered:
        return meta.get("render_reason", "render_always")
    if meta["render"] == "never":
        return "render_never"
    return rendering.quiet_reason(html) if html is not None else None


def _item(page: str, url: str, *, final_url: str | None = None, status: int | None = None, html: str | None = None,
          failure: Failure | None = None, detail: str | None = None, rendered: bool = False,
          render_reason: str | None = None, fetch: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"page": page, "url": url, "final_url": final_url, "status": status, "html": html,
            "failure": str(failure) if failure else None, "detail": detail, "rendered": rendered,
            "render_reason": render_reason, "fetched_at": clock.fetched_at(), "fetch": fetch}


def _is_markup(response: TextResponse) -> bool:
    kind = content_type(response).lower()
    return kind in _MARKUP or kind.endswith("+xml")


class FetchStore(JournalPipeline):
    """An item pipeline: each page that came is put in the page store (its HTML, UTF-8; the sha256 is of those
    bytes) and its row appended to the journal at once; at the end fetches.parquet (one row a request key: keys
    naming the same page share its row) and crawl_stats.json are written from the whole journal."""

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        spider: Any = self.crawler.spider
        html = item.pop("html")
        item["sha256"] = None
        if html is not None:
            item["sha256"] = spider.store.put(item["final_url"], datetime.fromisoformat(item["fetched_at"]),
                                              html.encode("utf-8"))
        self.crawler.stats.inc_value("pages/stored" if html is not None else f"pages/failed/{item['failure']}")
        self.write(item)
        return item

    def close_spider(self) -> None:
        self.journal.close()
        spider: Any = self.crawler.spider
        out = Path(spider.out)
        done: dict[str, dict[str, Any]] = {}
        for entry in entries(out):
            done[entry["page"]] = entry
        now = clock.fetched_at()
        rows = []
        for page, keys in spider.keys.items():
            entry = done.get(page) or _item(page, spider.urls[page], failure=Failure.SITE_DOWN,
                                            detail="no answer before the crawl ended") | {"sha256": None,
                                                                                           "fetched_at": now}
            for key in keys:
                rows.append({**{k: entry.get(k) for k in FETCH_SCHEMA}, "key": key,
                             "fetched_at": datetime.fromisoformat(entry["fetched_at"])})
        write_parquet(pl.DataFrame(rows, schema=FETCH_SCHEMA, orient="row").sort("key"), out / FETCHES)
        write_text(out / STATS, json.dumps(crawl_stats(done.values(), self.crawler.stats.get_stats(), spider),
                                           indent=2, sort_keys=True, default=str))


def crawl_stats(done: Any, stats: dict[str, Any], spider: Any) -> dict[str, Any]:
    """What an official crawl did: pages stored, requests, bytes, rendered pages, failures by reason, requests the
    guard refused, pages resumed, and where the page store is."""
    entries = list(done)
    return {
        "pages": sum(1 for e in entries if e["failure"] is None),
        "keys": sum(len(k) for k in spider.keys.values()),
        **scrapy_counts(stats),
        "rendered": sum(1 for e in entries if e["rendered"]),
        "errors": counted(e["failure"] for e in entries if e["failure"]),
        "resumed": int(stats.get("pages/resumed", 0)),
        "store": str(spider.store.root),
    }
