"""The official-sites crawl against held-out official-style sites (tests/officialworld.py): every page a resolution
needs is fetched once and kept in the page store, each failure has its Failure reason, nothing off the named hosts
is ever asked, and Chromium builds what a script builds. The crawls run as the product runs them: through
timelyqa.official.pages.fetch, in a Scrapy process of its own. The page store and the world itself are checked
without a crawl."""

from __future__ import annotations

import gzip
import hashlib
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from parsel import Selector

from spiders.render import browser_path
from tests.officialworld import (GAUGES, OfficialWorld, indicator, next_release, readings, real_today, truth,
                                 written)
from spiders import run as spiders_run
from timelyqa.errors import ConfigError
from timelyqa.official.pages import PageStore, fetch, write_requests
from timelyqa.official.reasons import Failure

DAY = date(2026, 11, 16)  # a Monday
SUNDAY = date(2026, 11, 15)


def served(url: str) -> httpx.Response:
    return httpx.get(url, follow_redirects=False, timeout=5)


def path(url: str) -> str:
    """A URL as the server's request log writes it: the path and its query."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def css(html: str, query: str) -> list[str]:
    return [" ".join(t.split()) for t in Selector(text=html).css(query).xpath("string(.)").getall()]


# ---- the page store and the requests file (no crawl) ---------------------------------------------------------------

def test_the_page_store_keeps_a_page_by_its_sha256_as_gzip_naming_its_url_and_fetch_time(tmp_path: Path) -> None:
    store = PageStore(tmp_path / "pages")
    html = '<html><body><p class="level">2.25</p><p>Tȟe café</p></body></html>'
    when = datetime(2026, 11, 16, 9, 30, 15, 123456, tzinfo=UTC)
    url = "http://127.0.0.41:8080/gauges/caton/readings?date=2026-11-16"
    sha = store.put(url, when, html.encode())
    assert sha == hashlib.sha256(html.encode()).hexdigest()
    assert store.path(sha) == tmp_path / "pages" / sha[:2] / f"{sha}.html.gz"
    assert gzip.decompress(store.path(sha).read_bytes()) == html.encode(), "any gzip reader gets the page back"
    assert store.get(sha) == html and store.origin(sha) == (url, when)
    again = store.put("http://127.0.0.42:1/copy", when + timedelta(days=1), html.encode())
    assert again == sha and store.origin(sha) == (url, when), "the same bytes are kept once, as first fetched"
    assert store.get("0" * 64) is None and store.origin("0" * 64) is None


def test_a_bad_request_is_refused_naming_its_key_and_field(tmp_path: Path) -> None:
    good = ("caton", "http://127.0.0.41:1/gauges/caton/readings?date=2026-11-16", "never")
    for rows, said in (
        ([good, ("tides", "http://127.0.0.43:1/tides/morecambe", "sometimes")],
         "request tides: render: must be one of never, always, auto, not 'sometimes'"),
        ([good, good], "request caton: key: given twice"),
        ([("empty", " ", "never")], "request empty: url: must be a non-empty string"),
    ):
        with pytest.raises(ConfigError) as caught:
            write_requests(rows, tmp_path / "requests.parquet")
        assert str(caught.value) == said
    frame = write_requests([good, {"key": "cpi", "url": "http://127.0.0.42:1/latest"}], tmp_path / "r.parquet")
    assert frame.rows() == [good, ("cpi", "http://127.0.0.42:1/latest", "never")], "render defaults to never"


# ---- the world itself (no crawl) -----------------------------------------------------------------------------------

def test_the_world_serves_its_truth_and_each_switch_breaks_it_as_documented() -> None:
    with OfficialWorld() as world:
        gauge = f"{world.gauges.url}/gauges/caton/readings?date={DAY}"
        release = f"{world.stats.url}/releases/{DAY}.html"
        assert [float(v) for v in css(served(gauge).text, "table.readings td.level")] == truth("gauges", "caton", DAY)
        page = served(release).text
        assert float(css(page, "dd.cpi")[0]) == truth("stats", "cpi", DAY) == indicator("cpi", DAY)
        assert css(page, "p.published") == [f"Published {written(DAY)}"] == ["Published 16 November 2026"]
        assert css(page, "dd.next-release") == [written(next_release(DAY))]
        assert served(f"{world.stats.url}/bulletin?day=16/11/2026").text == page, "the same bulletin, dated D/M/Y"
        assert served(f"{world.stats.url}/releases/{SUNDAY}.html").status_code == 404
        assert truth("stats", "cpi", SUNDAY) is None, "no release on a Sunday"
        latest = served(f"{world.stats.url}/latest").text
        assert float(css(latest, "dd.cpi")[0]) == indicator("cpi", real_today())
        tides = served(f"{world.harbour.url}/api/tides/morecambe/{DAY}.json").json()
        assert tides["high_water"] == truth("harbour", "morecambe", DAY)
        assert css(served(f"{world.harbour.url}/tides/morecambe?date={DAY}").text, "span.height") == [], \
            "only a browser running the page's script sees the value"

        world.layout = "b"
        assert css(served(gauge).text, "table.readings td.level") == []
        assert css(served(gauge).text, "span.obs-value") == [f"{v:.2f} m" for v in readings("caton", DAY)]
        assert css(served(release).text, "td[data-series=cpi]") == [f"{indicator('cpi', DAY):.1f}"]
        world.layout = "a"
        world.garbage = True
        assert css(served(gauge).text, "td.level")[2] == "n/a" and css(served(release).text, "dd.cpi") == ["n/a"]
        world.garbage = False
        world.stats.moved = True
        assert served(release).headers["location"] == f"{world.mirror.url}/releases/{DAY}.html"
        world.stats.moved = False
        world.down = True
        assert served(gauge).status_code == 503 and served(f"{world.gauges.url}/robots.txt").status_code == 200
        world.down = "refused"
        with pytest.raises(httpx.ConnectError):
            served(gauge)
        world.reset()
        assert served(gauge).status_code == 200 and world.gauges.asked() == [f"/gauges/caton/readings?date={DAY}"]
        assert "Disallow: /embargoed/" in served(f"{world.stats.url}/robots.txt").text
        assert world.mirror.asked() == [] and sorted(GAUGES) == ["caton", "halton", "kirkby"]


# ---- the crawls ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One crawl of every kind of page: good pages (one named by two keys), a weekend's missing bulletin, an unknown
    gauge, a page robots.txt forbids, a redirect to the mirror, JSON, a refused connection, a non-http URL, the
    present-only page, and the script-built tides page rendered `always` and `auto`."""
    if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
        raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")
    tmp = tmp_path_factory.mktemp("official")
    with OfficialWorld() as world:
        g, s, h = world.gauges.url, world.stats.url, world.harbour.url
        urls = {
            "caton": f"{g}/gauges/caton/readings?date={DAY}",
            "halton": f"{g}/gauges/halton/readings?date={SUNDAY}",
            "release": f"{s}/releases/{DAY}.html",
            "bulletin": f"{s}/bulletin?day={DAY + timedelta(days=1):%d/%m/%Y}",
            "latest": f"{s}/latest",
            "sunday": f"{s}/releases/{SUNDAY}.html",
            "nowhere": f"{g}/gauges/nowhere/readings?date={DAY}",
            "embargoed": f"{s}/embargoed/{DAY}.html",
            "archive": f"{s}/archive/{DAY}.html",
            "json": f"{h}/api/tides/heysham/{DAY}.json",
            "dead": f"{world.dead_url}/releases/{DAY}.html",
            "ftp": f"ftp://{world.stats.host}/releases/{DAY}.html",
            "tides_always": f"{h}/tides/morecambe?date={DAY}",
            "tides_auto": f"{h}/tides/heysham?date={SUNDAY}",
        }
        renders = {"tides_always": "always", "tides_auto": "auto", "caton": "auto"}
        requests = [(k, u, renders.get(k, "never")) for k, u in urls.items()]
        requests.append(("caton_again", urls["caton"], "never"))
        started = datetime.now(UTC)
        # the operator (this test) names the world's loopback sites; the mirror, which no request names, it does not
        named = [world.gauges.host, world.stats.host, world.harbour.host, world.dead_url.removeprefix("http://")]
        fetched = fetch(requests, tmp / "crawl", store=tmp / "pages", page_timeout=5, named_private=named,
                        crawl=spiders_run.crawl)
        ended = datetime.now(UTC)
        asked = world.asked()
        bodies = {k: served(urls[k]).content for k in ("caton", "halton", "release", "bulletin")}
    return {"fetched": fetched, "asked": asked, "urls": urls, "bodies": bodies, "started": started, "ended": ended,
            "tmp": tmp, "world": world}


@pytest.mark.slow
def test_every_requested_page_is_fetched_once_and_stored_with_its_sha256_and_fetch_time(crawled: dict) -> None:
    fetched, urls, asked = crawled["fetched"], crawled["urls"], crawled["asked"]
    assert sorted(fetched) == sorted([*urls, "caton_again"]), "every key comes back"
    store = PageStore(crawled["tmp"] / "pages")
    for key, body in crawled["bodies"].items():
        row = fetched[key]
        assert (row.ok, row.status, row.failure, row.final_url, row.rendered) == (True, 200, None, urls[key], False)
        assert row.sha256 == hashlib.sha256(body).hexdigest(), f"{key}: the sha256 of the page as served"
        assert crawled["started"] <= row.fetched_at <= crawled["ended"] and row.fetched_at.tzinfo is not None
        assert row.html == body.decode() == store.get(row.sha256)
        assert gzip.decompress(store.path(row.sha256).read_bytes()) == body
        assert store.origin(row.sha256) == (urls[key], row.fetched_at), "the gzip names its URL and fetch time"
    assert [float(v) for v in css(fetched["caton"].html, "td.level")] == readings("caton", DAY)
    assert [float(v) for v in css(fetched["halton"].html, "td.level")] == readings("halton", SUNDAY)
    assert css(fetched["bulletin"].html, "p.published") == [f"Published {written(DAY + timedelta(days=1))}"]
    assert float(css(fetched["latest"].html, "dd.cpi")[0]) == indicator("cpi", real_today())
    again = fetched["caton_again"]
    assert (again.sha256, again.fetched_at) == (fetched["caton"].sha256, fetched["caton"].fetched_at)
    assert fetched["caton"].render_reason == "no_script", "auto looked at the page and saw no script"
    assert fetched["release"].render_reason == "render_never"
    count = {name: Counter(paths) for name, paths in asked.items()}
    assert count["gauges"][path(urls["caton"])] == 1, \
        "a page two keys name is asked once"
    for name in ("gauges", "stats"):
        assert all(n == 1 for n in count[name].values()), f"nothing asked twice: {count[name]}"
    assert crawled["tmp"].joinpath("crawl", "fetches.parquet").is_file()


@pytest.mark.slow
def test_each_failure_has_its_reason_and_no_request_leaves_the_named_hosts(crawled: dict) -> None:
    fetched, asked, world = crawled["fetched"], crawled["asked"], crawled["world"]
    got = {k: (r.failure, r.detail) for k, r in fetched.items() if not r.ok}
    assert got == {
        "sunday": (Failure.PAGE_MISSING, "http_404"),
        "nowhere": (Failure.PAGE_MISSING, "http_404"),
        "embargoed": (Failure.ROBOTS_DISALLOWED, f"robots.txt of {world.stats.host} forbids it"),
        "archive": (Failure.HOST_NOT_ALLOWED,
                    f"redirected to {world.mirror.url}/releases/{DAY}.html (off_site): never requested"),
        "json": (Failure.NOT_HTML, "not HTML (application/json)"),
        "dead": (Failure.SITE_DOWN, "connection_refused"),
        "ftp": (Failure.HOST_NOT_ALLOWED, "not_http: never requested"),
    }
    for key in got:
        assert fetched[key].sha256 is None and fetched[key].html is None, f"{key}: a failure stores no page"
    assert (fetched["sunday"].status, fetched["dead"].status) == (404, None)
    assert f"/embargoed/{DAY}.html" not in asked["stats"], "robots.txt is obeyed: the page is never asked"
    assert asked["mirror"] == [], "the redirect to a host no recipe names is not followed"
    expected = {"/robots.txt", *(path(u) for u in crawled["urls"].values())}
    chromium = {f"/api/tides/morecambe/{DAY}.json", f"/api/tides/heysham/{SUNDAY}.json"}
    for name in ("gauges", "stats", "harbour"):
        assert asked[name][0] == "/robots.txt", "robots.txt first, on every host"
        extra = set(asked[name]) - expected - chromium
        assert not extra, f"{name} was asked for pages nobody requested: {extra}"


@pytest.mark.slow
def test_the_script_built_page_is_rendered_by_chromium_always_and_auto(crawled: dict) -> None:
    fetched, asked = crawled["fetched"], crawled["asked"]
    always, auto = fetched["tides_always"], fetched["tides_auto"]
    assert (always.rendered, always.render_reason) == (True, "render_always")
    assert (auto.rendered, auto.render_reason) == (True, "script_builds_dom"), "auto decided by itself"
    assert [float(v) for v in css(always.html, "#app span.height")] == [truth("harbour", "morecambe", DAY)]
    assert [float(v) for v in css(auto.html, "#app span.height")] == [truth("harbour", "heysham", SUNDAY)]
    assert always.sha256 == hashlib.sha256(always.html.encode()).hexdigest(), "the sha256 is of the DOM as stored"
    harbour = Counter(asked["harbour"])
    assert harbour[path(crawled["urls"]["tides_always"])] == 1, "always: Chromium, no plain fetch"
    assert harbour[path(crawled["urls"]["tides_auto"])] == 1, "auto: read as served, rendered from that answer"
    assert harbour[f"/api/tides/morecambe/{DAY}.json"] == 1, "the script's own request, on the same host"


@pytest.mark.slow
def test_when_every_site_is_down_each_key_fails_site_down_quickly_without_an_exception(tmp_path: Path) -> None:
    with OfficialWorld() as world:
        world.down = True
        world.harbour.down = "refused"
        requests = [("gauge", f"{world.gauges.url}/gauges/caton/readings?date={DAY}", "never"),
                    ("release", f"{world.stats.url}/releases/{DAY}.html", "never"),
                    ("tides", f"{world.harbour.url}/api/tides/morecambe/{DAY}.json", "never"),
                    ("dead", f"{world.dead_url}/latest", "never")]
        began = time.monotonic()
        named = [world.gauges.host, world.stats.host, world.harbour.host, world.dead_url.removeprefix("http://")]
        fetched = fetch(requests, tmp_path / "crawl", store=tmp_path / "pages", page_timeout=5, named_private=named,
                        crawl=spiders_run.crawl)
        took = time.monotonic() - began
        asked = world.asked()
    assert took < 15, f"an outage is reported in seconds, not minutes ({took:.1f} s)"
    assert {k: (r.failure, r.detail, r.status) for k, r in fetched.items()} == {
        "gauge": (Failure.SITE_DOWN, "http_503", 503), "release": (Failure.SITE_DOWN, "http_503", 503),
        "tides": (Failure.SITE_DOWN, "connection_refused", None),
        "dead": (Failure.SITE_DOWN, "connection_refused", None)}
    assert not any(r.sha256 for r in fetched.values())
    page = f"/gauges/caton/readings?date={DAY}"
    assert 1 <= Counter(asked["gauges"])[page] <= 2, "one retry at most"
    assert asked["harbour"] == [] and asked["mirror"] == []
    assert not list((tmp_path / "pages").rglob("*.gz")), "nothing stored"
