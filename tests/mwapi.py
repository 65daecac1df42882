"""A MediaWiki Action API test double on 127.0.0.1 that serves a generated revision history, for the tests only.

A test double because a real MediaWiki (PHP and a database) cannot run here. It answers what
timelyqa's client asks, in the wire format of MediaWiki 1.4x with `format=json&formatversion=2`, at
`/w/api.php`:

- `meta=siteinfo` (`siprop=general`);
- `list=recentchanges` with `rcstart`/`rcend`/`rcdir` (inclusive ends; `older`, the default, runs from
  rcstart back to rcend), `rcnamespace`, `rctype`, `rcshow=!redirect`, `rcprop`, `rclimit`, `rccontinue`;
- `prop=revisions` by `pageids` or `titles`, `rvstart`/`rvend`/`rvdir`, `rvlimit`, `rvprop`, `rvslots`,
  `rvcontinue`; a page that is not there is `missing`, a revision with `missing_text` is `texthidden`;
  more than 50 `titles` or `pageids` is MediaWiki's `toomanyvalues` error (the limit without the bot right);
- no `format=json` gives the HTML help page MediaWiki gives (its default format is `jsonfm`).

Limits are small (`rc_limit`, `rv_limit`) so that clients must follow `continue`. Every request is
recorded with its headers, as is the most requests in flight at once. `Fault`s script what a busy wiki
does: a `maxlag` error (only to a request whose `maxlag` is below the lag, as MediaWiki does), 429 and
503 with `Retry-After`, an API error for one page, an HTML page, a slow answer.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.localserver import LocalServer
from tests.wikiworld import WikiPage

PATH = "/w/api.php"
MULTI_LIMIT = 50
"""How many values a multi-value parameter takes from a client without the bot right (`apihighlimits`)."""
Params = dict[str, str]


@dataclass
class Fault:
    """One scripted answer in place of the real one, to requests `when` accepts, `times` times (None: always)."""

    when: Callable[[Params], bool]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # a dict is sent as JSON, bytes as they are
    times: int | None = 1
    delay: float = 0.0
    lag: int | None = None  # a maxlag fault: only for requests whose maxlag is below this lag


def maxlag(when: Callable[[Params], bool], *, lag: int = 7, times: int | None = 1) -> Fault:
    """What MediaWiki answers when replicas lag more than the request's `maxlag`: HTTP 200 with an error."""
    host = "10.64.16.8"
    return Fault(when, headers={"Retry-After": str(max(lag, 5)), "X-Database-Lag": str(lag),
                                "MediaWiki-API-Error": "maxlag"},
                 body={"error": {"code": "maxlag", "info": f"Waiting for {host}: {lag} seconds lagged.", "host": host,
                                 "lag": lag, "type": "db", "docref": "See https://www.mediawiki.org/w/api.php"},
                       "servedby": "mw1234"}, times=times, lag=lag)


def throttled(when: Callable[[Params], bool], *, retry_after: int | None = 3, status: int = 429,
              times: int | None = 1) -> Fault:
    """429 Too Many Requests or 503 from the edge, an HTML body as Wikimedia's caches send."""
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    body = (f"<!DOCTYPE html><html><head><title>Wikimedia Error</title></head><body><p>Error: {status}, "
            "too many requests or the server is busy.</p></body></html>").encode()
    return Fault(when, status=status, headers=headers, body=body, times=times)


def api_error(when: Callable[[Params], bool], code: str, info: str, *, times: int | None = None) -> Fault:
    return Fault(when, headers={"MediaWiki-API-Error": code},
                 body={"error": {"code": code, "info": info, "docref": "See https://www.mediawiki.org/w/api.php"},
                       "servedby": "mw1234"}, times=times)


def html_page(when: Callable[[Params], bool], *, times: int | None = 1) -> Fault:
    """A 200 with an HTML page where JSON was due (a captive portal, a misrouted proxy)."""
    return Fault(when, headers={"Content-Type": "text/html; charset=utf-8"},
                 body=b"<!DOCTYPE html><html><body><h1>Welcome to the Wi-Fi</h1></body></html>", times=times)


def revisions_of(page_id: int) -> Callable[[Params], bool]:
    return lambda p: p.get("prop") == "revisions" and p.get("pageids") == str(page_id)


def is_listing(p: Params) -> bool:
    return p.get("list") == "recentchanges"


@dataclass(frozen=True)
class Request:
    params: Params
    headers: dict[str, str]
    method: str
    path: str
    at: float  # time.monotonic() on arrival


def mw_time(when: datetime) -> str:
    return when.strftime("%Y%m%d%H%M%S")


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime:
    fmt = "%Y%m%d%H%M%S" if value.isdigit() else "%Y-%m-%dT%H:%M:%SZ"
    return datetime.strptime(value, fmt).replace(tzinfo=UTC)


class MediaWikiDouble:
    """The server; `with MediaWikiDouble(pages) as wiki:` serves `wiki.endpoint` until the block ends."""

    def __init__(self, pages: list[WikiPage], *, rc_limit: int = 3, rv_limit: int = 2, latency: float = 0.0,
                 rc_since: datetime | None = None) -> None:
        self.pages = {p.id: p for p in pages}
        self.titles = {p.title: p for p in pages}
        self.rc_limit, self.rv_limit, self.latency = rc_limit, rv_limit, latency
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._rc = self._changes(pages, rc_since)
        self._local = LocalServer(self._handler())

    @property
    def endpoint(self) -> str:
        return f"{self._local.url}{PATH}"

    def fail(self, *faults: Fault) -> MediaWikiDouble:
        with self._lock:
            self.faults.extend(faults)
        return self

    def __enter__(self) -> MediaWikiDouble:
        self._local.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._local.close()

    @staticmethod
    def _changes(pages: list[WikiPage], since: datetime | None) -> list[dict[str, Any]]:
        """The recent-changes table: one row per revision, rc ids in time order, older rows purged."""
        rows = []
        for page in pages:
            for i, rev in enumerate(sorted(page.revisions, key=lambda r: (r.timestamp, r.id))):
                rows.append({"type": "new" if i == 0 else "edit", "ns": page.ns, "title": page.title,
                             "pageid": page.id, "revid": rev.id, "old_revid": rev.parent_id or 0,
                             "_ts": rev.timestamp, "_redirect": page.redirect is not None})
        rows.sort(key=lambda r: (r["_ts"], r["revid"]))
        for rcid, row in enumerate(rows, start=880_000):
            row["rcid"] = rcid
        return [r for r in rows if since is None or r["_ts"] >= since]

    # --- answers ---------------------------------------------------------------------------------------

    def answer(self, p: Params) -> tuple[int, dict[str, str], bytes]:
        if p.get("format") != "json":
            return 200, {"Content-Type": "text/html; charset=utf-8"}, b"<!DOCTYPE html><html><body>MediaWiki API " \
                b"help: this is the jsonfm pretty-printer</body></html>"
        if p.get("formatversion") != "2":
            return self._json(self._error("badvalue", "This test double speaks formatversion=2 only."))
        if p.get("action") != "query":
            return self._json(self._error("badvalue", f"Unrecognized value for parameter action: {p.get('action')}."))
        if p.get("meta") == "siteinfo":
            return self._json({"batchcomplete": True, "query": {"general": {
                "mainpage": "Main Page", "base": f"{self.endpoint.removesuffix(PATH)}/wiki/Main_Page",
                "sitename": "Wikipedia", "generator": "MediaWiki 1.46.0-wmf.3", "lang": "en",
                "server": self._local.url.removeprefix("http:"), "articlepath": "/wiki/$1",
                "maxarticlesize": 2097152}}})
        if p.get("list") == "recentchanges":
            return self._json(self._recentchanges(p))
        if p.get("prop") == "revisions":
            return self._json(self._revisions(p))
        return self._json(self._error("badvalue", "This test double answers siteinfo, recentchanges and revisions."))

    def _recentchanges(self, p: Params) -> dict[str, Any]:
        namespaces = None if p.get("rcnamespace", "*") == "*" else {int(n) for n in p["rcnamespace"].split("|")}
        types = set(p.get("rctype", "edit|new|log|categorize|external").split("|"))
        show = set(p.get("rcshow", "").split("|")) - {""}
        props = set(p.get("rcprop", "title|timestamp|ids").split("|"))
        newer = p.get("rcdir", "older") == "newer"
        rows = [r for r in self._rc if (namespaces is None or r["ns"] in namespaces) and r["type"] in types
                and not ("!redirect" in show and r["_redirect"]) and not ("redirect" in show and not r["_redirect"])]
        rows = _in_range(rows, p.get("rcstart"), p.get("rcend"), newer, key=lambda r: r["_ts"])
        rows.sort(key=lambda r: (r["_ts"], r["rcid"]), reverse=not newer)
        if "rccontinue" in p:
            ts, rcid = p["rccontinue"].split("|")
            at = (parse_time(ts), int(rcid))
            rows = [r for r in rows if ((r["_ts"], r["rcid"]) >= at if newer else (r["_ts"], r["rcid"]) <= at)]
        limit = self._limit(p.get("rclimit", "10"), self.rc_limit)
        out: dict[str, Any] = {"batchcomplete": True}
        if len(rows) > limit:
            nxt = rows[limit]
            out["continue"] = {"rccontinue": f"{mw_time(nxt['_ts'])}|{nxt['rcid']}", "continue": "-||"}
        if p.get("rclimit") == "max":
            out["limits"] = {"recentchanges": self.rc_limit}
        listed = []
        for r in rows[:limit]:
            row = {"type": r["type"]}
            if "title" in props:
                row.update(ns=r["ns"], title=r["title"])
            if "ids" in props:
                row.update(pageid=r["pageid"], revid=r["revid"], old_revid=r["old_revid"], rcid=r["rcid"])
            if "timestamp" in props:
                row["timestamp"] = iso(r["_ts"])
            listed.append(row)
        out["query"] = {"recentchanges": listed}
        return out

    def _revisions(self, p: Params) -> dict[str, Any]:
        for name in ("pageids", "titles"):
            if len(p.get(name, "").split("|")) > MULTI_LIMIT:
                return self._error("toomanyvalues", f"Too many values supplied for parameter \"{name}\". The limit "
                                   f"is {MULTI_LIMIT}.")
        if "pageids" in p:
            wanted: list[tuple[WikiPage | None, dict[str, Any]]] = [
                (self.pages.get(int(i)), {"pageid": int(i)}) for i in p["pageids"].split("|")]
        else:
            wanted = [(self.titles.get(t), {"ns": 0, "title": t}) for t in p.get("titles", "").split("|")]
        single = any(k in p for k in ("rvlimit", "rvstart", "rvend", "rvdir", "rvcontinue"))
        if single and len(wanted) > 1:
            return self._error("invalidparammix", "The \"rvlimit\", \"rvstart\", \"rvend\" and \"rvdir\" parameters "
                               "may only be used with a single page (mode #2).")
        props = set(p.get("rvprop", "ids|timestamp|flags|comment|user").split("|"))
        out: dict[str, Any] = {"batchcomplete": True}
        if "content" in props and "rvslots" not in p:
            out["warnings"] = {"main": {"warnings": "Because \"rvslots\" was not specified, a legacy format has "
                                                    "been used for the output."}}
        listed = []
        for page, missing in wanted:
            if page is None:
                listed.append({**missing, "missing": True})
                continue
            entry: dict[str, Any] = {"pageid": page.id, "ns": page.ns, "title": page.title}
            newer = p.get("rvdir", "older") == "newer"
            revs = _in_range(list(page.revisions), p.get("rvstart"), p.get("rvend"), newer, key=lambda r: r.timestamp)
            revs.sort(key=lambda r: (r.timestamp, r.id), reverse=not newer)
            if "rvcontinue" in p:
                ts, revid = p["rvcontinue"].split("|")
                at = (parse_time(ts), int(revid))
                revs = [r for r in revs if ((r.timestamp, r.id) >= at if newer else (r.timestamp, r.id) <= at)]
            limit = self._limit(p.get("rvlimit", "10"), self.rv_limit) if single else 1
            if single and len(revs) > limit:
                nxt = revs[limit]
                out["continue"] = {"rvcontinue": f"{mw_time(nxt.timestamp)}|{nxt.id}", "continue": "||"}
            if revs[:limit]:
                entry["revisions"] = [self._revision(r, props, "rvslots" in p) for r in revs[:limit]]
            listed.append(entry)
        out["query"] = {"pages": listed}
        return out

    @staticmethod
    def _revision(rev: Any, props: set[str], slots: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "ids" in props:
            out.update(revid=rev.id, parentid=rev.parent_id or 0)
        if "timestamp" in props:
            out["timestamp"] = iso(rev.timestamp)
        if "sha1" in props:
            if rev.missing_text:
                out["sha1hidden"] = True
            else:
                out["sha1"] = hashlib.sha1(rev.text.encode()).hexdigest()
        if "content" in props:
            content: dict[str, Any] = {"contentmodel": "wikitext", "contentformat": "text/x-wiki"}
            if rev.missing_text:
                content["texthidden"] = True
            else:
                content["content"] = rev.text
            if slots:
                out["slots"] = {"main": content}
            else:
                out.update(content)
        return out

    @staticmethod
    def _limit(value: str, cap: int) -> int:
        return cap if value == "max" else max(1, min(int(value), cap))

    @staticmethod
    def _error(code: str, info: str) -> dict[str, Any]:
        return {"error": {"code": code, "info": info, "docref": "See https://www.mediawiki.org/w/api.php"},
                "servedby": "mw1234"}

    @staticmethod
    def _json(data: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        headers = {"Content-Type": "application/json; charset=utf-8"}
        if "error" in data:
            headers["MediaWiki-API-Error"] = data["error"]["code"]
        return 200, headers, json.dumps(data, ensure_ascii=False).encode()

    # --- plumbing --------------------------------------------------------------------------------------

    def _fault(self, p: Params) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times == 0 or not fault.when(p):
                    continue
                if fault.lag is not None and int(p.get("maxlag", "1000000")) >= fault.lag:
                    continue
                if fault.times is not None:
                    fault.times -= 1
                return fault
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # or every keep-alive answer waits out a delayed ACK (40 ms)
            wbufsize = 1 << 16  # headers and body leave in one write

            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                self._serve("GET")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self._serve("POST")

            def _serve(self, method: str) -> None:
                url = urlsplit(self.path)
                params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
                with double._lock:
                    double.requests.append(Request(params, dict(self.headers.items()), method, url.path,
                                                   time.monotonic()))
                    double.in_flight += 1
                    double.max_in_flight = max(double.max_in_flight, double.in_flight)
                try:
                    if double.latency:
                        time.sleep(double.latency)
                    fault = double._fault(params)
                    if url.path != PATH:
                        status, headers, body = 404, {"Content-Type": "text/html"}, b"<h1>Not Found</h1>"
                    elif fault is not None:
                        time.sleep(fault.delay)
                        body = fault.body if isinstance(fault.body, bytes) else json.dumps(fault.body).encode()
                        headers = {"Content-Type": "application/json; charset=utf-8", **fault.headers}
                        status = fault.status
                    else:
                        status, headers, body = double.answer(params)
                finally:
                    with double._lock:
                        double.in_flight -= 1
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout under test)

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def _in_range(items: list[Any], start: str | None, end: str | None, newer: bool, *,
              key: Callable[[Any], datetime]) -> list[Any]:
    """MediaWiki's inclusive range: with dir=newer start <= t <= end, with dir=older end <= t <= start."""
    lo, hi = (start, end) if newer else (end, start)
    low = parse_time(lo) if lo else None
    high = parse_time(hi) if hi else None
    return [x for x in items if (low is None or key(x) >= low) and (high is None or key(x) <= high)]
