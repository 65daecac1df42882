"""Hostile pages rendered in a real crawl (Scrapy, Chromium, the policy proxy) reach nothing they should not: a
witness server on an address no one named (127.0.0.9) is connected to zero times, whatever the page tries (iframes,
scripts, stylesheets, fetch and XHR redirected off-site by the allowed host, direct requests, a WebSocket, a popup,
workers, a beacon), and each attempt is a refusal counted with its reason in the crawl's stats. The cloud metadata
address and a private address are refused by the address, before any connection; robots.txt holds for the
browser's own requests."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from spiders.render import browser_path
from spiders.run import command
from tests.sites import Page, Site, SiteServer
from tests.witness import Witness
from timelyqa.site_tree import extract as extraction

pytestmark = pytest.mark.slow  # Scrapy in its own process, and Chromium

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")

SPIDER = Path(__file__).with_name("hostile_spider.py")
METADATA, REDIS = "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1:6379/"
JS = "application/javascript"


def hostile_site(w: str) -> Site:
    """Pages that each try to reach the witness at `w` (http://127.0.0.9:PORT) one way; /go/<x> answers a redirect
    to {w}/<x>."""
    ws = w.replace("http://", "ws://")
    pages = {
        "/iframe-302": "<iframe src='/go/iframe'></iframe>",
        "/script-302": "<script src='/go/script'></script>",
        "/style-302": "<link rel='stylesheet' href='/go/style'>",
        "/fetch-302": "<script>fetch('/go/fetch');</script>",
        "/xhr-302": "<script>var x = new XMLHttpRequest(); x.open('GET', '/go/xhr'); x.send();</script>",
        "/direct": f"<iframe src='{w}/direct-iframe'></iframe><img src='{w}/direct-img'>"
                   f"<script>fetch('{w}/direct-fetch');</script>",
        "/websocket": f"<script>new WebSocket('{ws}/ws');</script>",
        "/popup": f"<script>window.open('{w}/popup');</script>",
        "/service-worker": "<script>navigator.serviceWorker.register('/sw.js').catch(function () {});</script>",
        "/worker": "<script>new Worker('/worker.js');</script>",
        "/beacon": f"<script>navigator.sendBeacon('{w}/beacon', 'x');</script>",
        "/metadata": f"<script>fetch('{METADATA}'); fetch('{REDIS}');</script><iframe src='{REDIS}'></iframe>",
        "/robots": "<script>fetch('/private/x');</script>",
    }
    site = {p: Page(p, p.strip("/"), f"<p>Hostile page {p}.</p>{body}") for p, body in pages.items()}
    site["/"] = Page("/", "Home", "<p>A site with hostile pages.</p>",
                     links=[(p, p) for p in pages] + [("/go/page", "Redirected off-site"), (f"{w}/anchor", "Off"),
                                                      (METADATA, "Metadata"), (REDIS, "Redis")])
    for x in ("iframe", "script", "style", "fetch", "xhr", "page"):
        site[f"/go/{x}"] = Page(f"/go/{x}", "Moved", redirect=f"{w}/{x}")
    sw = f"self.addEventListener('install', function () {{ fetch('{w}/sw-install'); }});" \
         f"self.addEventListener('fetch', function (e) {{ e.respondWith(fetch('{w}/sw-fetch')); }});"
    site["/sw.js"] = Page("/sw.js", "sw", sw, content_type=JS)
    site["/worker.js"] = Page("/worker.js", "worker", f"fetch('{w}/worker');", content_type=JS)
    site["/private/x"] = Page("/private/x", "Private", "<p>robots.txt says no.</p>")
    return Site("Hostile", site, robots="User-agent: *\nDisallow: /private/\n")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("hostile") / "crawl"
    with Witness() as witness, SiteServer(hostile_site(witness.url)) as site:
        argv, env = command("site_tree", {"roots": json.dumps([site.url + "/"]), "max_depth": 1, "max_pages": 50,
                                          "page_timeout": 5, "render": "always",
                                          "data_hosts": json.dumps([METADATA, REDIS])}, out, fresh=True)
        argv[3:5] = ["runspider", str(SPIDER)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        asked = list(site.requests)
    extraction.run(out, workers=0)  # the stage after the crawl that writes pages.parquet (spiders.run.crawl runs it)
    stats = json.loads((out / "all_stats.json").read_text())
    refused = [tuple(r) for r in json.loads((out / "proxy_refused.json").read_text())]
    pages = {urlsplit(r["url"]).path: r for r in pl.read_parquet(out / "pages.parquet").iter_rows(named=True)}
    return {"witness": witness, "stats": stats, "refused": refused, "asked": asked, "w": witness.url, "pages": pages,
            "summary": json.loads((out / "crawl_stats.json").read_text())}


def test_no_hostile_page_makes_a_single_connection_to_the_witness(crawl: dict) -> None:
    assert crawl["witness"].connections == 0, crawl["witness"].seen
    assert crawl["stats"].get("playwright/page_count", 0) >= 14, "every hostile page was rendered in Chromium"


@pytest.mark.parametrize("via", ["iframe", "script", "style", "fetch", "xhr"])
def test_a_sub_request_the_allowed_host_redirects_off_site_is_refused_at_the_proxy(crawl: dict, via: str) -> None:
    assert ("off_site", f"{crawl['w']}/{via}") in crawl["refused"]
    assert f"/go/{via}" in crawl["asked"], "the allowed host was asked, and its redirect not followed"


def test_a_page_chromium_is_redirected_off_site_is_recorded_as_refused_not_as_the_other_hosts_answer(
        crawl: dict) -> None:
    assert ("off_site", f"{crawl['w']}/page") in crawl["refused"]
    page = crawl["pages"]["/go/page"]
    assert (page["status"], page["error"], page["rendered"]) == (None, "redirect_off_site", False)


def test_direct_requests_websockets_popups_and_beacons_are_refused_off_site(crawl: dict) -> None:
    w, host = crawl["w"], crawl["w"].removeprefix("http://")
    for path in ("direct-iframe", "direct-fetch", "popup", "beacon"):
        assert ("off_site", f"{w}/{path}") in crawl["refused"], path
    assert ("off_site", f"https://{host}/") in crawl["refused"], "the WebSocket's CONNECT"
    assert crawl["stats"].get("playwright/request_count/aborted", 0) >= 1, "the image: aborted as heavy, unsent"


def test_workers_reach_nothing(crawl: dict) -> None:
    assert ("off_site", f"{crawl['w']}/worker") in crawl["refused"], "a dedicated worker's fetch meets the proxy"
    assert not any("/sw-" in target for _, target in crawl["refused"]), "no service worker ever ran"
    assert "/sw.js" not in crawl["asked"], "blocked before its script was fetched"


def test_metadata_and_private_addresses_are_refused_by_address_before_connecting(crawl: dict) -> None:
    refused = crawl["refused"]
    assert ("private_address", METADATA) in refused and ("private_address", REDIS) in refused
    assert crawl["stats"]["guard/private_address"] >= 4, "two anchors by the spider, the browser's at the proxy"


def test_robots_txt_holds_for_the_browsers_requests(crawl: dict) -> None:
    robots = [t for r, t in crawl["refused"] if r == "robots_disallowed"]
    assert [t.split("/", 3)[3] for t in robots] == ["private/x"]
    assert "/private/x" not in crawl["asked"]
    assert crawl["asked"].count("/robots.txt") == 1, "the proxy used the robots.txt the crawl had fetched"


def test_every_refusal_is_counted_in_the_crawl_stats_by_reason(crawl: dict) -> None:
    by_proxy = Counter(r for r, _ in crawl["refused"])
    stats = crawl["stats"]
    assert stats["guard/off_site"] == by_proxy["off_site"] + 1, "the proxy's, and the spider's for the anchor"
    assert stats["guard/private_address"] == by_proxy["private_address"] + 2, "and the spider's for two anchors"
    assert stats["guard/robots_disallowed"] == by_proxy["robots_disallowed"] == 1
    assert crawl["summary"]["refused"] == {k.removeprefix("guard/"): v for k, v in stats.items()
                                           if k.startswith("guard/")}
