"""A wiki's pages changed in a window and their revision histories, from the MediaWiki Action API.

DailyQA's collection: `list=recentchanges` names the main-namespace pages edited or created in the
window; `prop=revisions` (`rvslots=main`) gives each one's revision at or before the window's start
and every revision after it up to the window's end plus the horizon. They come out as dump.py's
`Page` and `Revision`, so that history.py and the pipeline read the API and a dump alike; a page the
API cannot give is kept in `rejected` with its reason, as `DumpReader` keeps what a dump cannot.
`revision_at` gives the last revision at or before any date, as DailyQA's answer script reads it
(`timelyqa.wikipedia.answer.answer_at` answers a question from it).

Wikimedia wikis keep recent changes for 30 days only: an older window needs a dump, and `ApiReader`
says so before any work.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.stages import Dropped
from timelyqa.mediawiki.client import ApiError, ApiSettings, MediaWikiAPI
from timelyqa.mediawiki.dump import Page, ReadReject, Revision
from timelyqa.mediawiki.exportxml import MAX_REVISION_CHARS

REVISIONS = {"prop": "revisions", "rvprop": "ids|timestamp|content|sha1", "rvslots": "main"}
_TIME = "%Y-%m-%dT%H:%M:%SZ"

Source = ApiSettings | MediaWikiAPI
"""Settings (a client is opened and closed for the call) or a client shared across calls and threads."""


class PageUnavailable(SourceContractError):
    """The API has no such page (deleted or moved away since it changed) or the title is not valid."""

    def __init__(self, reason: ReadReject, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def api_time(when: datetime) -> str:
    """A moment as the API reads it; revisions carry whole seconds, so dropping the fraction keeps `<=` exact."""
    if when.tzinfo is None:
        raise ConfigError(f"{when.isoformat()}: give the moment with a time zone (revisions are in UTC)")
    return when.astimezone(UTC).strftime(_TIME)


def recent_pages(source: Source, start: datetime, end: datetime) -> Iterator[tuple[int, str]]:
    """(page id, title) of each main-namespace page edited or created in (start, end], once, by first change."""
    with _client(source) as api:
        params = {"list": "recentchanges", "rcnamespace": "0", "rctype": "edit|new", "rcshow": "!redirect",
                  # rcdir=newer lists oldest first, from rcstart up to rcend (the default, older, runs backwards)
                  "rcdir": "newer", "rcstart": api_time(start), "rcend": api_time(end),
                  "rcprop": "title|ids|timestamp", "rclimit": "max"}
        seen: set[int] = set()
        for data in api.query(params):
            for row in _listed(data, "recentchanges", api):
                try:
                    page_id, title, when = int(row["pageid"]), str(row["title"]), _time(row["timestamp"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise SourceContractError(f"{api.settings.endpoint}: a recent change without {exc}: {row}"
                                              ) from None
                if when > start and page_id not in seen:  # rcstart is inclusive; the window opens after start
                    seen.add(page_id)
                    yield page_id, title


def page_history(source: Source, page: int | str, *, start: datetime, until: datetime,
                 rejected: list[Dropped] | None = None) -> Page:
    """The page's last readable revision at or before `start`, then its revisions in (start, until], in order.

    `page` is a page id (stable across moves) or a title. Revisions whose text is deleted are left out
    and reported in `rejected`; a missing page raises PageUnavailable, an API error ApiError.
    """
    with _client(source) as api:
        ref = {"pageids": str(page)} if isinstance(page, int) else {"titles": page}
        where = f"page {page!r}"
        info, base, hidden = _last_readable(api, ref, start, where)
        revisions = [base] if base is not None else []
        params = {**REVISIONS, **ref, "rvdir": "newer", "rvstart": api_time(start), "rvend": api_time(until),
                  "rvlimit": "max"}
        for data in api.query(params):
            info, raws = _one_page(data, api, where)
            for raw in raws:
                rev, reason = _revision(raw, api, where)
                if rev is None:
                    hidden.append((raw, reason))
                elif rev.timestamp > start:  # rvstart is inclusive: the base already stands for `start`
                    revisions.append(rev)
        page_id, title = int(info["pageid"]), str(info["title"])
        for raw, reason in {raw.get("revid"): (raw, reason) for raw, reason in hidden}.values():
            if rejected is not None:
                rejected.append(_reject(api, reason, f"page {title!r} (id {page_id}) revision {raw.get('revid')}: "
                                        f"{reason.explanation}",
                                        {"page": title, "page_id": page_id, "revision": raw.get("revid")}))
        return Page(id=page_id, title=title, namespace=int(info.get("ns", 0)), revisions=iter(revisions))


def revision_at(source: Source, page: int | str, when: datetime, *, gone_ok: bool = True) -> Revision | None:
    """The last readable revision at or before `when` (DailyQA's answer-on-date rule); None before the page
    began or when the page is gone (with `gone_ok=False` a gone page raises PageUnavailable, as an invalid title
    always does)."""
    with _client(source) as api:
        ref = {"pageids": str(page)} if isinstance(page, int) else {"titles": page}
        try:
            return _last_readable(api, ref, when, f"page {page!r}")[1]
        except PageUnavailable as exc:
            if exc.reason is ReadReject.PAGE_MISSING and gone_ok:
                return None
            raise


def pages(source: Source, start: datetime, end: datetime, horizon: timedelta = timedelta(0), *,
          sleep: Callable[[float], None] = time.sleep) -> ApiReader:
    """The pages changed in (start, end] with their histories; iterate it, then read `.rejected` and `.counts`."""
    return ApiReader(source, start=start, end=end, horizon=horizon, sleep=sleep)


@dataclass
class _Fetched:
    """One page's outcome, built in a worker thread and counted in the reading one."""

    page: Page | None
    revisions: int = 0
    rejected: list[Dropped] = field(default_factory=list)
    other_namespace: bool = False


class ApiReader:
    """Pages changed in (start, end], each with its history up to end + horizon, in page-id order.

    The twin of `DumpReader`: iterate it for `Page`s; what the API could not give is in `rejected`
    (one reason each) and `counts`. Histories are fetched `concurrency` pages at a time through one
    client, so the limit on requests in flight holds for the whole run.
    """

    def __init__(self, source: Source, *, start: datetime, end: datetime, horizon: timedelta = timedelta(0),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        api_time(start), api_time(end)
        if not start < end:
            raise ConfigError(f"window {start.isoformat()} .. {end.isoformat()}: the start must come before the end")
        if horizon < timedelta(0):
            raise ConfigError(f"horizon {horizon}: must not be negative")
        self.source, self.start, self.end, self.horizon = source, start, end, horizon
        self.rejected: list[Dropped] = []
        self.counts: Counter[str] = Counter()
        self.usage: Counter[str] = Counter()
        self.wiki_url = "https://en.wikipedia.org"
        self._sleep = sleep

    def check(self) -> None:
        """Stop before any work when the endpoint is not a MediaWiki API or no longer holds the window's changes."""
        with _client(self.source, self._sleep) as api:
            self._check(api)

    def __iter__(self) -> Iterator[Page]:
        with _client(self.source, self._sleep) as api:
            self._check(api)
            listed = sorted(recent_pages(api, self.start, self.end))
            self.counts["pages_listed"] += len(listed)
            todo = iter(listed)
            ahead: deque[Future[_Fetched]] = deque()
            with ThreadPoolExecutor(max_workers=api.settings.concurrency, thread_name_prefix="mwapi") as pool:
                def submit() -> None:
                    if (item := next(todo, None)) is not None:
                        ahead.append(pool.submit(self._fetch, api, *item))

                for _ in range(2 * api.settings.concurrency):
                    submit()
                try:
                    while ahead:
                        fetched = ahead.popleft().result()
                        submit()
                        self.rejected += fetched.rejected  # here, in page order: the same run gives the same file
                        self.counts["pages_other_namespace"] += fetched.other_namespace
                        if fetched.page is not None:
                            self.counts["pages_read"] += 1
                            self.counts["revisions_read"] += fetched.revisions
                            yield fetched.page
                finally:
                    for future in ahead:
                        future.cancel()
                    self.usage = Counter(api.usage)

    def _check(self, api: MediaWikiAPI) -> None:
        api.check()
        self.wiki_url = api.wiki_url
        data = api.get({"action": "query", "list": "recentchanges", "rcdir": "newer", "rclimit": "1",
                        "rcprop": "timestamp"})
        rows = _listed(data, "recentchanges", api)
        try:
            oldest = _time(rows[0]["timestamp"]) if rows else None
        except (KeyError, TypeError, ValueError):
            raise SourceContractError(f"{api.settings.endpoint}: a recent change without a timestamp: {rows[0]}"
                                      ) from None
        if oldest is not None and self.start < oldest:
            raise ConfigError(f"{api.settings.endpoint} keeps recent changes from {oldest.isoformat()} only; the window"
                              f" starts {self.start.isoformat()}: read a dump for older windows")

    def _fetch(self, api: MediaWikiAPI, page_id: int, title: str) -> _Fetched:
        rejected: list[Dropped] = []
        try:
            page = page_history(api, page_id, start=self.start, until=self.end + self.horizon, rejected=rejected)
        except ApiError as exc:
            detail = f"page {title!r} (id {page_id}): API error {exc.code}: {exc.info}"
            return _Fetched(None, rejected=[_reject(api, ReadReject.API_ERROR, detail,
                                                    {"page": title, "page_id": page_id, "code": exc.code})])
        except PageUnavailable as exc:
            return _Fetched(None, rejected=[_reject(api, exc.reason, f"page {title!r} (id {page_id}): {exc}",
                                                    {"page": title, "page_id": page_id})])
        revisions = list(page.revisions)
        if page.namespace != 0:  # moved out of the main namespace since it changed
            return _Fetched(None, rejected=rejected, other_namespace=True)
        page.revisions = iter(revisions)
        return _Fetched(page, len(revisions), rejected)


@contextmanager
def _client(source: Source, sleep: Callable[[float], None] = time.sleep) -> Iterator[MediaWikiAPI]:
    if isinstance(source, MediaWikiAPI):
        yield source
        return
    with MediaWikiAPI(source, sleep=sleep) as api:
        yield api


def _last_readable(api: MediaWikiAPI, ref: dict[str, str], when: datetime, where: str
                   ) -> tuple[dict[str, Any], Revision | None, list[tuple[dict[str, Any], str]]]:
    """(page info, the newest readable revision at or before `when`, the unreadable ones passed on the way)."""
    params = {**REVISIONS, **ref, "rvdir": "older", "rvstart": api_time(when), "rvlimit": "1"}
    hidden: list[tuple[dict[str, Any], ReadReject]] = []
    info: dict[str, Any] = {}
    for data in api.query(params):  # continued only past revisions whose text is deleted
        info, raws = _one_page(data, api, where)
        for raw in raws:
            rev, reason = _revision(raw, api, where)
            if rev is not None:
                return info, rev, hidden
            hidden.append((raw, reason))
    return info, None, hidden


def _one_page(data: dict[str, Any], api: MediaWikiAPI, where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    found = _listed(data, "pages", api)
    if len(found) != 1 or not isinstance(found[0], dict):
        raise SourceContractError(f"{api.settings.endpoint}: {where}: expected one page, got {len(found)}")
    info = found[0]
    if info.get("missing"):
        raise PageUnavailable(ReadReject.PAGE_MISSING,
                              f"{api.settings.endpoint}: {where} does not exist (deleted or moved)")
    if info.get("invalid"):
        raise PageUnavailable(ReadReject.INVALID_TITLE,
                              f"{api.settings.endpoint}: {where}: {info.get('invalidreason', '')}")
    if "pageid" not in info or "title" not in info:
        raise SourceContractError(f"{api.settings.endpoint}: {where}: a page without pageid or title")
    revisions = info.get("revisions") or []
    return info, revisions if isinstance(revisions, list) else []


def _revision(raw: dict[str, Any], api: MediaWikiAPI, where: str) -> tuple[Revision | None, ReadReject | None]:
    """The revision, or None and why its text cannot be had (the same reasons DumpReader gives)."""
    try:
        slot = (raw.get("slots") or {}).get("main") or {}
        if raw.get("texthidden") or slot.get("texthidden"):
            return None, ReadReject.TEXT_DELETED
        if "content" not in slot:
            return None, ReadReject.MISSING_TEXT
        if len(slot["content"]) > MAX_REVISION_CHARS:  # as a dump's: no wiki saves it, no parse should take it
            return None, ReadReject.REVISION_TOO_LARGE
        return Revision(id=int(raw["revid"]), parent_id=int(raw.get("parentid") or 0) or None,
                        timestamp=_time(raw["timestamp"]), text=str(slot["content"]),
                        sha1=_base36(raw.get("sha1"))), None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SourceContractError(f"{api.settings.endpoint}: {where}: a revision the client cannot read "
                                  f"({type(exc).__name__}: {exc})") from None


def _listed(data: dict[str, Any], name: str, api: MediaWikiAPI) -> list[Any]:
    rows = (data.get("query") or {}).get(name, [])
    if not isinstance(rows, list):
        raise SourceContractError(f"{api.settings.endpoint}: query.{name} is not a list (formatversion=2 expected)")
    return rows


def _time(value: Any) -> datetime:
    return datetime.strptime(str(value), _TIME).replace(tzinfo=UTC)


def _base36(sha1_hex: Any) -> str | None:
    """The API gives SHA-1 in base 16, dumps in base 36 (31 digits): keep the dumps' form so both sources agree."""
    if not isinstance(sha1_hex, str) or not sha1_hex:
        return None
    n, digits = int(sha1_hex, 16), ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def _reject(api: MediaWikiAPI, reason: ReadReject, detail: str, item: dict[str, Any]) -> Dropped:
    return Dropped({"endpoint": api.settings.endpoint, **item}, reason, f"{api.settings.endpoint}: {detail}")
