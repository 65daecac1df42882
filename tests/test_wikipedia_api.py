"""The live Wikipedia source over real HTTP, against a MediaWiki Action API test double serving generated histories.

The double (tests/mwapi.py) pages its answers two or three rows at a time, so every run follows
`continue` many times. What the tests expect is worked out from each world's own revisions, never
by calling the code under test.
"""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.mwapi import (Fault, MediaWikiDouble, api_error, html_page, is_listing, maxlag, revisions_of,
                         throttled)
from tests.wikiworld import TEMPLATES, WikiPage, World, base36_sha1, make_world, value_at, write_export
from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError, is_transient
from timelyqa.sources import get
from timelyqa.stages import Rejects
from timelyqa.wikipedia.answer import Rule, answer_at
from timelyqa.mediawiki.revisions import ApiReader, page_history, pages, recent_pages, revision_at
from timelyqa.mediawiki.client import ApiSettings, MediaWikiAPI
from timelyqa.mediawiki.dump import DumpReader
from timelyqa.mediawiki.exportxml import MAX_REVISION_CHARS
from timelyqa.wikipedia.history import read_history
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import fetch_pages, read_changes

UA = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"


class FakeTime:
    """A clock that moves only when the client sleeps: waits are recorded, never spent."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.now += seconds

    def clock(self) -> float:
        return self.now


def client(wiki: MediaWikiDouble, fake: FakeTime | None = None, **settings: object) -> MediaWikiAPI:
    fake = fake or FakeTime()
    return MediaWikiAPI(ApiSettings(endpoint=wiki.endpoint, user_agent=UA, **settings), sleep=fake.sleep,
                        clock=fake.clock)


def readable(page: WikiPage) -> list:
    return sorted((r for r in page.revisions if not r.missing_text), key=lambda r: (r.timestamp, r.id))


def expected_pages(world: World) -> dict[int, list[tuple]]:
    """Main-namespace articles edited in (start, end]: the last readable revision at or before the start, then
    every readable one up to end + horizon, as (id, parent id, timestamp, text, sha1)."""
    out = {}
    for page in world.main_pages():
        if not any(world.start < r.timestamp <= world.end for r in page.revisions):
            continue
        revs = readable(page)
        before = [r for r in revs if r.timestamp <= world.start][-1:]
        after = [r for r in revs if world.start < r.timestamp <= world.end + world.horizon]
        out[page.id] = [(r.id, r.parent_id, r.timestamp, r.text, base36_sha1(r.text)) for r in before + after]
    return out


def read_all(reader: ApiReader) -> dict[int, list[tuple]]:
    return {p.id: [(r.id, r.parent_id, r.timestamp, r.text, r.sha1) for r in p.revisions] for p in reader}


@pytest.fixture(scope="module")
def world() -> World:
    return make_world(11, pages=30)


# --- the history, whole --------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [11, 12])
def test_pages_through_the_api_are_the_history_the_wiki_holds(seed: int) -> None:
    world = make_world(seed, pages=30)
    with MediaWikiDouble(world.pages, rc_limit=3, rv_limit=2) as wiki:
        reader = pages(client(wiki), world.start, world.end, world.horizon)
        got = read_all(reader)
    want = expected_pages(world)
    assert list(got) == sorted(want), "every changed article once, by page id, and nothing else"
    for page_id, revisions in want.items():
        assert got[page_id] == revisions, f"page {page_id}"
    assert reader.rejected == []
    assert reader.counts["pages_listed"] == reader.counts["pages_read"] == len(want)
    assert reader.counts["revisions_read"] == sum(map(len, want.values()))
    assert reader.wiki_url == wiki.endpoint.removesuffix("/w/api.php")
    continued = [r.params for r in wiki.requests if "rccontinue" in r.params or "rvcontinue" in r.params]
    assert sum("rccontinue" in p for p in continued) >= 20 and sum("rvcontinue" in p for p in continued) >= 20


def test_api_pages_read_as_the_dump_of_the_same_wiki_does(world: World, tmp_path) -> None:
    """The pipeline sees the same PageHistory whichever source a page came from."""
    horizon = world.horizon
    with MediaWikiDouble(world.pages) as wiki:
        from_api = {p.id: read_history(p, start=world.start, end=world.end, horizon=horizon)
                    for p in pages(client(wiki), world.start, world.end, horizon)}
    dump = write_export(world.pages, tmp_path / "w.xml")
    from_dump = {p.id: read_history(p, start=world.start, end=world.end, horizon=horizon) for p in DumpReader(dump)}
    changed = {i for i, h in from_dump.items() if h.revisions_in_window}
    assert set(from_api) == changed
    for page_id, history in from_api.items():
        assert history == from_dump[page_id], f"page {page_id}"


def test_the_window_is_open_at_its_start_and_closed_at_its_end() -> None:
    world = make_world(13, pages=12)
    page = world.main_pages()[0]
    at_start = replace(page.revisions[-1], id=10**7, timestamp=world.start, parent_id=None)
    at_end = replace(page.revisions[-1], id=10**7 + 1, timestamp=world.end, parent_id=None)
    only_start = WikiPage(id=1, title="Edited at the start", ns=0, revisions=[at_start])
    only_end = WikiPage(id=2, title="Edited at the end", ns=0, revisions=[at_end])
    with MediaWikiDouble([only_start, only_end]) as wiki:
        listed = list(recent_pages(client(wiki), world.start, world.end))
        history = page_history(client(wiki), "Edited at the start", start=world.start, until=world.end)
    assert listed == [(2, "Edited at the end")]
    assert [r.id for r in history.revisions] == [10**7], "a revision at the start is the state before, once"


# --- politeness ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("concurrency", [1, 2, 3])
@pytest.mark.slow
def test_never_more_requests_in_flight_than_allowed_and_every_one_identified(concurrency: int) -> None:
    world = make_world(14, pages=12)
    with MediaWikiDouble(world.pages, latency=0.01) as wiki:
        got = read_all(pages(client(wiki, concurrency=concurrency), world.start, world.end, world.horizon))
    assert got == expected_pages(world)
    assert wiki.max_in_flight <= concurrency
    assert wiki.max_in_flight >= min(concurrency, 2), "the allowance is used, or the run is slower than it need be"
    assert len(wiki.requests) > 40
    for request in wiki.requests:
        assert request.method == "GET" and request.path == "/w/api.php"
        assert request.headers["User-Agent"] == UA
        p = request.params
        assert (p["maxlag"], p["format"], p["formatversion"]) == ("5", "json", "2")
        if p.get("list") == "recentchanges" and "rcstart" in p:
            assert (p["rcnamespace"], p["rctype"], p["rcdir"], p["rclimit"]) == ("0", "edit|new", "newer", "max")
        if p.get("prop") == "revisions":
            assert (p["rvslots"], p["rvprop"]) == ("main", "ids|timestamp|content|sha1")


def test_user_agent_without_contact_details_is_refused_before_any_request() -> None:
    with MediaWikiDouble([]) as wiki:
        for agent in ("timelyqa/0.1", "python-httpx/0.28.1", "timelyqa/0.1 (contact: me)"):
            with pytest.raises(ConfigError, match="contact details") as exc:
                ApiSettings(endpoint=wiki.endpoint, user_agent=agent)
            assert "\n" not in str(exc.value)
        with pytest.raises(ConfigError, match="USER_AGENT"):
            ApiSettings.from_env(environ={"TIMELYQA_WIKIPEDIA_API_ENDPOINT": wiki.endpoint})
        assert wiki.requests == []
    assert ApiSettings(user_agent="qa-bot/1 (ops@example.org)").concurrency == 3
    assert ApiSettings(user_agent="qa-bot/1 (https://example.org/bot)").maxlag == 5
    env = {"TIMELYQA_WIKIPEDIA_API_USER_AGENT": UA, "TIMELYQA_WIKIPEDIA_API_CONCURRENCY": "2"}
    assert ApiSettings.from_env(environ=env).concurrency == 2


@pytest.mark.parametrize("values, setting", [
    ({"concurrency": 4}, "concurrency"), ({"concurrency": 0}, "concurrency"),
    ({"endpoint": "https://en.wikipedia.org/wiki/Main_Page"}, "endpoint"),
    ({"endpoint": "ftp://x/api.php"}, "endpoint"),
    ({"maxlag": 0}, "maxlag"), ({"timeout": 0}, "timeout")])
def test_settings_out_of_bounds_are_one_line_config_errors(values: dict, setting: str) -> None:
    with pytest.raises(ConfigError, match=f"setting {setting}") as exc:
        ApiSettings(user_agent=UA, **values)
    assert "\n" not in str(exc.value)


# --- a busy wiki ---------------------------------------------------------------------------------------------

def test_maxlag_429_and_503_are_waited_out_as_told_and_nothing_is_lost(world: World) -> None:
    x, y, z = sorted(expected_pages(world))[2:5]
    fake = FakeTime()
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(maxlag(is_listing, lag=7), throttled(revisions_of(x), retry_after=3),
                  throttled(revisions_of(y), status=503, retry_after=None),
                  throttled(revisions_of(z), retry_after=3600))
        reader = pages(client(wiki, fake, concurrency=1, max_wait=30), world.start, world.end, world.horizon)
        got = read_all(reader)
    assert fake.waits == [7, 3, 1, 30], "Retry-After for maxlag and 429, backoff for a bare 503, a cap on a long one"
    assert got == expected_pages(world)
    assert reader.usage["api_retries"] == 4
    lagged = [r for r in wiki.requests if is_listing(r.params)][:2]
    assert lagged[0].params == lagged[1].params, "the lagged request is asked again as it was"


def _asks(world: World) -> list[tuple[int, datetime]]:
    return [(p.id, world.start + timedelta(hours=h)) for p in world.main_pages() for h in range(0, 240, 48)]


def _ask_many(api: MediaWikiAPI, world: World, threads: int) -> list[int | None]:
    """revision_at for many (page, moment) pairs from more threads than the client allows requests."""
    with ThreadPoolExecutor(threads) as pool:
        found = pool.map(lambda ask: revision_at(api, *ask), _asks(world))
        return [r.id if r else None for r in found]


def _last_ids(world: World) -> list[int | None]:
    by_id = {p.id: p for p in world.pages}
    out = []
    for page_id, when in _asks(world):
        before = [r for r in readable(by_id[page_id]) if r.timestamp <= when]
        out.append(max(before, key=lambda r: (r.timestamp, r.id)).id if before else None)
    return out


@pytest.mark.slow
def test_one_client_shared_by_many_threads_keeps_the_limit(world: World) -> None:
    with MediaWikiDouble(world.pages, latency=0.01) as wiki:
        found = _ask_many(client(wiki, concurrency=2), world, threads=6)
    assert wiki.max_in_flight == 2
    assert found == _last_ids(world)


@pytest.mark.slow  # a real wait shared by threads
def test_a_wait_holds_every_thread_not_only_the_one_told(world: World) -> None:
    """Real time: after a 429 with Retry-After: 1, no thread sends anything for that second."""
    first = world.main_pages()[0].id
    with MediaWikiDouble(world.pages, latency=0.01) as wiki:
        wiki.fail(throttled(revisions_of(first), retry_after=1))
        api = MediaWikiAPI(ApiSettings(endpoint=wiki.endpoint, user_agent=UA, concurrency=3))
        found = _ask_many(api, world, threads=3)
    assert found == _last_ids(world)
    told = next(r.at for r in wiki.requests if revisions_of(first)(r.params))
    # requests already on their way when the 429 was sent may still land in the first moments
    quiet = [r for r in wiki.requests if told + 0.25 < r.at < told + 0.95]
    assert quiet == [], f"{len(quiet)} requests sent while the wiki asked everyone to wait"


def test_a_maxlag_that_does_not_pass_ends_in_a_transient_error(world: World) -> None:
    page_id = sorted(expected_pages(world))[0]
    fake = FakeTime()
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(maxlag(revisions_of(page_id), lag=6, times=None))
        with pytest.raises(TransientSourceError, match="maxlag") as exc:
            list(pages(client(wiki, fake, retries=2), world.start, world.end, world.horizon))
        tries = [r for r in wiki.requests if revisions_of(page_id)(r.params)]
    assert is_transient(exc.value) and wiki.endpoint in str(exc.value)
    assert len(tries) == 3 and fake.waits == [6, 6]


def test_a_server_that_stays_down_ends_in_a_transient_error_after_backing_off(world: World) -> None:
    fake = FakeTime()
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(throttled(is_listing, status=503, retry_after=None, times=None))
        with pytest.raises(TransientSourceError, match="HTTP 503"):
            list(pages(client(wiki, fake, retries=3, backoff=0.5), world.start, world.end, world.horizon))
    assert fake.waits == [0.5, 1.0, 2.0]


def test_a_request_that_times_out_is_asked_again(world: World) -> None:
    page_id = sorted(expected_pages(world))[1]
    fake = FakeTime()
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(Fault(revisions_of(page_id), delay=0.6))
        got = read_all(pages(client(wiki, fake, timeout=0.2), world.start, world.end, world.horizon))
    assert got == expected_pages(world) and fake.waits == [1.0]


# --- bad answers ---------------------------------------------------------------------------------------------

def test_an_api_error_for_one_page_rejects_that_page_and_the_rest_come(world: World) -> None:
    want = expected_pages(world)
    broken, gone = sorted(want)[3], sorted(want)[7]
    title = {p.id: p.title for p in world.pages}
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(api_error(revisions_of(broken), "internal_api_error_DBQueryError",
                            "[7f3c] Exception caught: A database query error has occurred."),
                  Fault(revisions_of(gone), body={"batchcomplete": True,
                                                  "query": {"pages": [{"pageid": gone, "missing": True}]}}))
        reader = pages(client(wiki), world.start, world.end, world.horizon)
        got = read_all(reader)
    assert got == {k: v for k, v in want.items() if k not in (broken, gone)}
    rejects = Rejects(get("wikipedia"))
    rejects.extend(reader.rejected)
    reasons = {r["reason"]: r for r in rejects.rows}
    assert sorted(reasons) == ["api_error", "page_missing"]
    row = reasons["api_error"]
    assert (row["source"], row["stage"]) == ("wikipedia", "read")
    assert title[broken] in row["detail"] and str(broken) in row["detail"] and "\n" not in row["detail"]
    assert "internal_api_error_DBQueryError" in row["detail"]
    assert json.loads(row["item"])["page_id"] == broken and json.loads(row["item"])["code"] == (
        "internal_api_error_DBQueryError")
    assert json.loads(reasons["page_missing"]["item"])["page_id"] == gone


def test_a_revision_whose_text_is_deleted_is_left_out_and_kept_aside(world: World) -> None:
    want = expected_pages(world)
    page = next(p for p in world.main_pages() if p.id in want and len(want[p.id]) >= 3)
    hidden = next(r for r in page.revisions if r.id == want[page.id][-1][0])
    pages_ = [replace(p, revisions=[replace(r, missing_text=r.id == hidden.id) for r in p.revisions])
              if p.id == page.id else p for p in world.pages]
    edited = replace(world, pages=pages_)
    with MediaWikiDouble(pages_) as wiki:
        reader = pages(client(wiki), world.start, world.end, world.horizon)
        got = read_all(reader)
    assert got == expected_pages(edited)
    assert hidden.id not in [r[0] for r in got[page.id]]
    assert [(r.reason, r.item["revision"]) for r in reader.rejected] == [("text_deleted", hidden.id)]


def test_a_revision_longer_than_any_wiki_saves_is_left_out_and_kept_aside(world: World) -> None:
    # The API's revisions get the dump reader's cap: a text no wiki would save is no revision to parse.
    want = expected_pages(world)
    page = next(p for p in world.main_pages() if p.id in want and len(want[p.id]) >= 3)
    huge = next(r for r in page.revisions if r.id == want[page.id][-1][0])
    text = "{{Infobox x\n| a = b\n}}" + "x" * MAX_REVISION_CHARS
    pages_ = [replace(p, revisions=[replace(r, text=text) if r.id == huge.id else r for r in p.revisions])
              if p.id == page.id else p for p in world.pages]
    with MediaWikiDouble(pages_) as wiki:
        reader = pages(client(wiki), world.start, world.end, world.horizon)
        got = read_all(reader)
    assert huge.id not in [r[0] for r in got[page.id]]
    assert {k: v for k, v in got.items() if k != page.id} == {k: v for k, v in want.items() if k != page.id}
    assert [(r.reason, r.item["revision"]) for r in reader.rejected] == [("revision_too_large", huge.id)]


def test_html_where_json_was_due_names_the_url(world: World) -> None:
    page_id = sorted(expected_pages(world))[0]
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(html_page(revisions_of(page_id)))
        with pytest.raises(SourceContractError, match="not JSON") as exc:
            list(pages(client(wiki), world.start, world.end, world.horizon))
    assert f"{wiki.endpoint}?" in str(exc.value) and f"pageids={page_id}" in str(exc.value)


def test_an_endpoint_that_is_not_a_mediawiki_api_stops_the_run_before_any_work(world: World) -> None:
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(html_page(lambda p: p.get("meta") == "siteinfo"))
        with pytest.raises(ConfigError, match="not a MediaWiki Action API"):
            ApiReader(client(wiki), start=world.start, end=world.end).check()
        assert len(wiki.requests) == 1


def test_an_unreachable_endpoint_is_a_config_error_at_the_start() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fake = FakeTime()
    api = MediaWikiAPI(ApiSettings(endpoint=f"http://127.0.0.1:{port}/w/api.php", user_agent=UA), sleep=fake.sleep)
    with pytest.raises(ConfigError, match="no MediaWiki API answers"):
        list(pages(api, datetime(2026, 3, 1).astimezone(), datetime(2026, 3, 8).astimezone()))
    assert fake.waits == []


def test_a_redirect_elsewhere_is_not_followed(world: World) -> None:
    with MediaWikiDouble(world.pages) as wiki:
        wiki.fail(Fault(is_listing, status=302, headers={"Location": "https://mirror.example.org/w/api.php"}))
        with pytest.raises(ConfigError, match="redirects"):
            list(pages(client(wiki), world.start, world.end, world.horizon))


def test_a_window_older_than_the_recent_changes_kept_needs_a_dump(world: World) -> None:
    with MediaWikiDouble(world.pages, rc_since=world.start + timedelta(days=1)) as wiki:
        with pytest.raises(ConfigError, match="read a dump"):
            list(pages(client(wiki), world.start, world.end, world.horizon))
        assert not any(r.params.get("prop") for r in wiki.requests), "no page was fetched"


# --- answers on any date -------------------------------------------------------------------------------------

def _moments(world: World, page: WikiPage) -> list[datetime]:
    stamps = sorted({r.timestamp for r in page.revisions})
    second = timedelta(seconds=1)
    return [stamps[0] - second, *stamps, *(t + second for t in stamps), stamps[-1] + timedelta(days=30),
            world.start, world.end]


def test_revision_at_is_the_last_revision_at_or_before_the_moment(world: World) -> None:
    chosen = [p for p in world.main_pages() if p.template][:6]
    with MediaWikiDouble(world.pages) as wiki:
        api = client(wiki)
        for page in chosen:
            for when in _moments(world, page):
                before = [r for r in readable(page) if r.timestamp <= when]
                want = max(before, key=lambda r: (r.timestamp, r.id)).id if before else None
                by_title, by_id = revision_at(api, page.title, when), revision_at(api, page.id, when)
                assert (by_title.id if by_title else None) == want == (by_id.id if by_id else None), (page.title, when)
        assert revision_at(api, "No such page", world.end) is None


def test_answer_at_gives_the_infobox_value_of_that_date(world: World) -> None:
    checked = 0
    with MediaWikiDouble(world.pages) as wiki:
        api = client(wiki)
        for page in [p for p in world.main_pages() if p.template][:8]:
            for key in sorted(TEMPLATES[page.template]):
                rule = Rule(page=page.title, key=key, page_id=page.id)
                for when in (world.start, world.start + timedelta(days=3), world.end):
                    if key.startswith(("image", "logo", "badge", "signature", "screenshot")):
                        continue  # file-valued keys render differently from their stored truth
                    assert answer_at(api, rule, when) == value_at(page, key, when), (page.title, key, when)
                    checked += 1
    assert checked > 100


def test_fetched_pages_are_parsed_without_the_network_into_the_changes_a_dump_gives(world: World,
                                                                                     tmp_path: Path) -> None:
    """Fetching is the one stage that asks the wiki: what it wrote is parsed after the wiki is gone, and gives the
    changes the same pages give when read from a dump."""
    settings = Settings(start=world.start, end=world.end, horizon_days=world.horizon.days)
    with MediaWikiDouble(world.pages) as wiki:
        fetched = fetch_pages(ApiSettings(endpoint=wiki.endpoint, user_agent=UA), tmp_path / "api", settings)
        asked = len(wiki.requests)
    assert asked > 0 and fetched == tmp_path / "api" / "pages.xml.gz"
    from_api = pl.read_parquet(read_changes(fetched, tmp_path / "api", settings, where="api"))
    dump = write_export(world.pages, tmp_path / "history.xml")
    from_dump = pl.read_parquet(read_changes(dump, tmp_path / "dump", settings, where="api"))
    assert from_api.height > 10
    assert from_api.drop("url", "evidence").equals(from_dump.drop("url", "evidence"))
