"""The news spider and its item pipeline: each cited link on an allowed outlet fetched once (or its archived copy),
through Chromium where the outlet says so; each page extracted and kept as an article, or dropped with a reason,
for every event that cites it.

Run it as every crawl runs: `spiders.run.crawl("news", timelyqa.news.outlets.crawl_args(...), out)`. The folder
gets `articles.parquet`, `dropped.parquet`, `crawl_stats.json` and the journal `pages.jsonl`: one line a link, flushed
as it is done, so a crawl killed and started again asks only for the links the journal lacks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
from scrapy import Request
from scrapy.http import Response

from spiders import clock
from spiders.base import ERROR_STATUSES, REFUSALS, Miss, PageSpider, content_type, fetch_record
from spiders.browser import policy_refusal
from spiders.guard import Refusal, is_private
from spiders.journal import JournalPipeline, entries
from spiders.urls import canonical, is_crawlable, netloc
from timelyqa.crawling import STATS, counted, scrapy_counts
from timelyqa.files import write_parquet, write_text
from timelyqa.news.articles import ArticleReject, in_window
from timelyqa.news.extract import extract
from timelyqa.news.frames import ARTICLE_SCHEMA, ARTICLES, DROP_SCHEMA, DROPPED
from timelyqa.news.outlets import ARCHIVES, Outlets, archived, host_port

__all__ = ["ERROR_STATUSES", "NewsSpider", "NewsStore", "OutletGuard"]  # ERROR_STATUSES: spiders.base's


class _Hosts:
    """host:port pairs the guard lets ask for robots.txt: an outlet's host on its port, and the archive's."""

    def __init__(self, outlets: Outlets, archive: str | None) -> None:
        self.outlets, self.archive = outlets, archive

    def __contains__(self, where: object) -> bool:
        if not isinstance(where, str):
            return False
        host, _, port = where.rpartition(":")
        return where == self.archive or (port.isdigit() and self.outlets.knows(host, int(port)))


class OutletGuard:
    """`spider.guard` for spiders.guard.GuardMiddleware: a request (a redirect too) goes only to a page of an allowed
    outlet, on its host and port, or to the archive's host when archiving. An address that is private is refused
    unless the operator wrote that very host in the outlets file (a subdomain that resolves to one is not named)."""

    def __init__(self, outlets: Outlets, archive: str | None) -> None:
        self.outlets = outlets
        self.hosts = _Hosts(outlets, archive)
        self.archive = archive
        self.named = frozenset(d.partition(":")[0] for o in outlets.outlets for d in o.domains)
        self._private: dict[str, bool] = {}

    def may_be_private(self, where: str) -> bool:
        """True when host:port `where` is the archive, or a host the outlets file names on a port it allows."""
        return where == self.archive or (where.rpartition(":")[0] in self.named and where in self.hosts)

    def refusal(self, url: str, *, resolve: bool = True) -> Refusal | None:
        if (at := host_port(url)) is None:
            return Refusal.NOT_HTTP
        if self.archive is not None and netloc(url) == self.archive:
            return None
        if not self.outlets.knows(*at):
            return Refusal.OFF_SITE
        if self.outlets.match(url) is None:
            return Refusal.PATH_NOT_ALLOWED
        if resolve and at[0] not in self.named and self._is_private(at[0]):
            return Refusal.PRIVATE_ADDRESS
        return None

    def _is_private(self, host: str) -> bool:
        if host not in self._private:
            self._private[host] = is_private(host)
        return self._private[host]


class NewsSpider(PageSpider):
    name = "news"
    custom_settings = {"ITEM_PIPELINES": {"spiders.news.NewsStore": 300}}

    def __init__(self, links: str, outlets: str, out: str, archive: str = "none", archive_base: str = "",
                 render: str = "never", page_timeout: str = "30", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if archive not in ARCHIVES:
            raise ValueError(f"archive={archive!r}: one of {', '.join(ARCHIVES)}")
        self.out, self.archive, self.base = out, archive, archive_base.rstrip("/")
        self.outlets = Outlets.load(outlets)
        self.page_timeout = float(page_timeout)
        self.cites: dict[str, list[dict[str, Any]]] = {}  # a link's canonical URL -> the rows of events citing it
        for row in pl.read_parquet(links).iter_rows(named=True):
            key = canonical(row["url"]) if is_crawlable(row["url"]) else row["url"]
            self.cites.setdefault(key, []).append(row)
        if render == "never" and any(r["render"] != "never" for rows in self.cites.values() for r in rows):
            raise ValueError("links on outlets that render need Chromium: pass render=auto (crawl_args does)")
        self.guard = OutletGuard(self.outlets, netloc(self.base) if archive != "none" else None)
        self.fetched: set[str] = set()  # links in the journal (spiders.once.OnceMiddleware reads it)

    async def start(self) -> Any:
        self.replay()
        for key, rows in self.cites.items():
            if key in self.fetched:
                continue
            url = rows[0]["url"]
            if (refused := self.guard.refusal(url) if is_crawlable(url) else Refusal.NOT_HTTP) is not None:
                yield _item(key, url, error=ArticleReject.NOT_HTTP if refused == Refusal.NOT_HTTP
                            else ArticleReject.OUTLET_NOT_ALLOWED, detail=f"{refused}: never requested",
                            fetch=fetch_record(None, str(refused), "not_fetched"))
                continue
            yield self._request(key, url, min(r["event_date"] for r in rows), rows[0]["render"])

    def _request(self, key: str, url: str, day: date, render: str) -> Request:
        """The live page, or its archived copy (Wayback's capture nearest the earliest citing event's day)."""
        return self.ask(key, archived(url, day, self.archive, self.base), render=render,
                        archived=self.archive != "none")

    def landed_off(self, response: Response) -> str | None:
        """The proxy refused Chromium's navigation, or a script navigated it off the list after load."""
        return policy_refusal(response) or _off_list(self.guard, response.url)

    def page(self, response: Response, html: str | None, *, rendered: bool, reason: str) -> Iterator[Any]:
        meta = response.meta
        error = detail = None
        if response.status >= 400:
            error, detail = ArticleReject.DEAD_LINK, f"http_{response.status}" + (
                " from the archive" if meta["archived"] else "")
        elif html is None:
            kind = content_type(response)
            error, detail = ArticleReject.NOT_ARTICLE, f"not HTML ({kind or 'no Content-Type'})"
        url = self.cites[meta["key"]][0]["url"]
        yield _item(meta["key"], url, final_url=response.url, status=response.status, html=html, error=error,
                    detail=detail, rendered=rendered, sha256=hashlib.sha256(response.body).hexdigest(),
                    archive_url=response.url if meta["archived"] else None,
                    fetch=self.fetched_record(response, html, reason))

    def missed(self, miss: Miss) -> Iterator[Any]:
        if miss.cause == "already_fetched":
            return
        if miss.landed:  # Chromium was redirected off the list, or a script took it there
            error, detail = ArticleReject.REDIRECT_NOT_ALLOWED, f"redirected to {miss.url} ({miss.cause})"
        elif miss.cause == "robots_disallowed":
            error, detail = ArticleReject.ROBOTS_DISALLOWED, f"robots.txt of {urlsplit(miss.url).netloc} forbids it"
        elif miss.cause in REFUSALS and miss.redirected:
            error, detail = ArticleReject.REDIRECT_NOT_ALLOWED, f"redirected to {miss.url} ({miss.cause})"
        elif miss.cause in REFUSALS:
            error, detail = ArticleReject.OUTLET_NOT_ALLOWED, f"{miss.url}: {miss.cause}"
        else:
            error, detail = ArticleReject.DEAD_LINK, miss.cause
        self.crawler.stats.inc_value(f"links/{error}")
        yield _item(miss.key, self.cites[miss.key][0]["url"], final_url=miss.url, error=error, detail=detail,
                    fetch=miss.fetch)


def _item(key: str, url: str, *, final_url: str | None = None, status: int | None = None, html: str | None = None,
          error: ArticleReject | None = None, detail: str | None = None, rendered: bool = False,
          sha256: str | None = None, archive_url: str | None = None, fetch: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "url": url, "final_url": final_url, "status": status, "html": html,
            "error": str(error) if error else None, "detail": detail, "rendered": rendered, "sha256": sha256,
            "archive_url": archive_url, "fetched_at": clock.fetched_at(), "fetch": fetch}


def _off_list(guard: OutletGuard, url: str) -> str | None:
    """Why the page Chromium ended on is not one the crawl may read (a script may navigate it anywhere), or None."""
    if not is_crawlable(url):
        return str(Refusal.NOT_HTTP)
    refused = guard.refusal(url, resolve=False)
    return None if refused is None else str(refused)


class NewsStore(JournalPipeline):
    """An item pipeline: each fetched page is extracted (timelyqa.news.extract) and judged for every event citing
    its link: kept as an article, or dropped as `empty_page`, `not_article` or `outside_window` (the event's own
    window); a link that gave no page is dropped with its reason. Each link's rows are appended to the journal at
    once; at the end articles.parquet, dropped.parquet and crawl_stats.json are written from the whole journal."""

    def process_item(self, item: dict[str, Any]) -> dict[str, Any]:
        spider: Any = self.crawler.spider
        rows = spider.cites[item["key"]]
        html = item.pop("html")
        articles: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        if item["error"] is None:
            # an archived copy is read as the page it stands for: the host and links are the outlet's
            page = extract(html or "", item["url"] if item["archive_url"] else item["final_url"])
            for row in rows:
                if page.reject is not None:
                    dropped.append(_drop(row, page.reject, f"{len((page.text or '').split())} words of text"))
                elif not in_window(page.published, row["event_date"]):
                    dropped.append(_drop(row, ArticleReject.OUTSIDE_WINDOW,
                                         f"published {page.published}, event on {row['event_date']}"))
                else:
                    articles.append({
                        "url": row["url"], "final_url": item["final_url"], "outlet": row["outlet"],
                        "event_id": row["event_id"], "title": page.title,
                        "published": page.published.isoformat() if page.published else None,
                        "author": page.author, "text": page.text, "rendered": item["rendered"],
                        "sha256": item["sha256"], "fetched_at": item["fetched_at"],
                        "archive_url": item["archive_url"]})
        else:
            dropped = [_drop(row, ArticleReject(item["error"]), item["detail"]) for row in rows]
        fetched = item["status"] is not None and item["status"] < 400
        self.crawler.stats.inc_value("pages/stored")
        self.write({"key": item["key"], "fetched": fetched, "rendered": item["rendered"], "fetch": item["fetch"],
                    "articles": articles, "dropped": dropped})
        return item

    def close_spider(self) -> None:
        self.journal.close()
        out = Path(self.crawler.spider.out)  # type: ignore[union-attr]
        done: dict[str, dict[str, Any]] = {}
        for entry in entries(out):
            done[entry["key"]] = entry
        articles = [a | {"published": date.fromisoformat(a["published"]) if a["published"] else None,
                         "fetched_at": datetime.fromisoformat(a["fetched_at"])}
                    for e in done.values() for a in e["articles"]]
        dropped = [d for e in done.values() for d in e["dropped"]]
        write_parquet(pl.DataFrame(articles, schema=ARTICLE_SCHEMA, orient="row").sort("event_id", "url"),
                      out / ARTICLES)
        write_parquet(pl.DataFrame(dropped, schema=DROP_SCHEMA, orient="row").sort("reason", "url", "event_id"),
                      out / DROPPED)
        write_text(out / STATS, json.dumps(crawl_stats(done.values(), len(articles), dropped,
                                                       self.crawler.stats.get_stats()),
                                           indent=2, sort_keys=True, default=str))


def _drop(row: dict[str, Any], reason: ArticleReject, detail: str | None) -> dict[str, Any]:
    return {"url": row["url"], "event_id": row["event_id"], "outlet": row["outlet"], "reason": str(reason),
            "detail": detail}


def crawl_stats(done: Any, articles: int, dropped: list[dict[str, Any]], stats: dict[str, Any]) -> dict[str, Any]:
    """What a news crawl did: pages fetched (an HTTP answer below 400, this run or the one it resumed), requests,
    bytes, rendered pages, articles kept, drops by reason, requests the guard refused, links resumed."""
    entries = list(done)
    return {
        "pages": sum(1 for e in entries if e["fetched"]),
        **scrapy_counts(stats),
        "rendered": sum(1 for e in entries if e["rendered"]),
        "articles": articles,
        "errors": counted(d["reason"] for d in dropped),
        "resumed": int(stats.get("pages/resumed", 0)),
    }
