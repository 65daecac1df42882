"""One fetch/render/fail cycle (spiders/base.py) under all three spiders: a page that fails in any way (an HTTP
error, robots.txt, a redirect off the guard, a timeout, a refused connection, no such host, no HTML, Chromium that
never settles) is a row with the same `fetch` record and reason whether the site-tree, news or official crawl asked
for it; and a news crawl killed again and again resumes over its journal to what an uninterrupted one gives (the
site-tree and official crawls' kill tests are tests/test_crawl_kills.py). Each crawl runs in its own Scrapy process
against servers on 127.0.0.1, as the product runs it."""

from __future__ import annotations

import json
import random
import socket
import time
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from spiders.journal import JOURNAL, entries
from spiders.render import browser_path
from spiders.run import command, crawl
from spiders.urls import canonical
from tests.localserver import LocalServer
from tests.test_crawl_kills import killed_at
from timelyqa.files import write_parquet
from timelyqa.news.frames import EVENT_SCHEMA, event_id
from timelyqa.news.outlets import Outlets, crawl_args, plan_links
from timelyqa.official.pages import REQUESTS, write_requests

pytestmark = pytest.mark.slow  # three Scrapy processes with Chromium, and four more killed or whole

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")

DAY = date(2026, 5, 4)
SLOW_S, TIMEOUT_S = 6, 2
ARTICLE = ("<html><head><title>{t}</title><meta property='article:published_time' content='2026-05-04'></head>"
           "<body><article><h1>{t}</h1><p>{t} happened on the northern coast today, officials said, and the "
           "valley roads were closed for the rest of the week while crews cleared the debris.</p></article>"
           "</body></html>")
BUSY = ("<html><head><title>Busy</title></head><body><p>Always polling.</p><div id='ticker'></div><script>"
        "setInterval(function () { fetch('/poll?' + Date.now()); }, 100);</script></body></html>")
PLAIN = "<html><head><title>{t}</title></head><body><p>{t}: a page with nothing to build.</p></body></html>"


def free_port() -> int:
    """A port on 127.0.0.1 free now; closed again, nothing answers there (a refused connection)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Web(LocalServer):
    """One site on 127.0.0.1 (port 0) with a page for each way a fetch can go, and articles under /story/."""

    def __init__(self, elsewhere: str) -> None:
        self.elsewhere = elsewhere
        self.asked: list[str] = []
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                web.asked.append(self.path)
                status, kind, body, headers = web.answer(self.path)
                if self.path.startswith("/slow"):
                    time.sleep(SLOW_S)
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": kind, "Content-Length": str(len(body)), **headers}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the crawl gave up on it (timeout) or was killed

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
                pass

        super().__init__(Handler)

    def answer(self, path: str) -> tuple[int, str, bytes, dict[str, str]]:
        html = "text/html; charset=utf-8"
        if path == "/robots.txt":
            return 200, "text/plain", b"User-agent: *\nDisallow: /private/\n", {}
        if path.startswith("/story/"):
            return 200, html, ARTICLE.format(t=f"Story {path.rsplit('/', 1)[1]}").encode(), {}
        if path == "/moved.html":
            return 302, html, b"", {"Location": f"{self.elsewhere}/landed.html"}
        if path == "/data.bin":
            return 200, "application/octet-stream", bytes(range(256)), {}
        if path == "/busy.html":
            return 200, html, BUSY.encode(), {}
        status = {"/missing.html": 404, "/down.html": 503}.get(path, 200)
        return status, html, PLAIN.format(t=path).encode(), {}


NOT_FETCHED = "not_fetched"
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    # kind: (where, the fetch record every spider's row carries)
    "page": ("/ok.html", {"status": 200, "reason": None, "render": "no_script"}),
    "http_404": ("/missing.html", {"status": 404, "reason": "http_404", "render": "render_never"}),
    "http_503": ("/down.html", {"status": 503, "reason": "http_503", "render": "render_never"}),
    "not_html": ("/data.bin", {"status": 200, "reason": "not_html", "render": "not_html"}),
    "robots": ("/private/page.html", {"status": None, "reason": "robots_disallowed", "render": NOT_FETCHED}),
    "redirect_off_site": ("/moved.html", {"status": None, "reason": "redirect_off_site", "render": NOT_FETCHED}),
    "timeout": ("/slow.html", {"status": None, "reason": "timeout", "render": NOT_FETCHED}),
    "connection_refused": ("DEAD/gone.html", {"status": None, "reason": "connection_refused", "render": NOT_FETCHED}),
    "dns_failure": ("http://no-such-host.invalid:8080/x.html",
                    {"status": None, "reason": "dns_failure", "render": NOT_FETCHED}),
    "render_failed": ("/busy.html", {"status": 200, "reason": None, "render": "render_failed_scripts_never_settle"}),
}
NOT_A_PAGE = {("site_tree", "robots"): "a root robots.txt forbids is never asked: no row, counted as skipped (the site "
                                     "tree's rows are the site's pages; a news link or a recipe's page is a row)"}
OWN = {"site_tree": "url", "news": "key", "official": "page"}
"""Each spider's own name for a journal line's page."""


def events(urls: list[str]) -> pl.DataFrame:
    """One Portal event on DAY citing `urls`."""
    summary = "An earthquake strikes the northern coast."
    return pl.DataFrame([{"event_id": event_id(DAY.isoformat(), summary), "date": DAY,
                          "category": "Disasters and accidents", "topic": None, "summary": summary, "urls": urls,
                          "outlets": [f"cited {i}" for i in range(len(urls))],
                          "page": "Portal:Current events/2026 May 4", "revision": "1"}],
                        schema=EVENT_SCHEMA, orient="row")


def args_of(spider: str, urls: list[str], tmp: Path, render: str = "auto", timeout: float = TIMEOUT_S
            ) -> dict[str, str]:
    """The arguments that make `spider` ask for exactly `urls`, each host named by the operator, each page given
    `timeout` seconds."""
    hosts = sorted({u.split("/")[2] for u in urls})
    if spider == "site_tree":
        return {"roots": json.dumps(urls), "max_depth": "0", "render": render, "page_timeout": str(timeout)}
    if spider == "official":
        write_requests([(f"k{i}", u, render) for i, u in enumerate(urls)], tmp / REQUESTS)
        return {"requests": str(tmp / REQUESTS), "store": str(tmp / "store"), "render": "auto",
                "named": json.dumps(hosts), "page_timeout": str(timeout)}
    outlets = tmp / "outlets.yaml"
    outlets.write_text("outlets:\n" + "".join(f"  - name: Outlet {i}\n    domains: ['{h}']\n    render: {render}\n"
                                              for i, h in enumerate(hosts)), encoding="utf-8")
    links, _ = plan_links(events(urls), Outlets.load(outlets))
    write_parquet(links, tmp / "links.parquet")
    return crawl_args(tmp / "links.parquet", outlets, page_timeout=timeout)


def records(spider: str, out: Path) -> dict[str, dict[str, Any]]:
    """The `fetch` record of every page in the spider's journal, by canonical URL."""
    return {entry[OWN[spider]]: entry["fetch"] for entry in entries(out) if OWN[spider] in entry}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[dict[str, str], dict, Path, dict]]]:
    """Each spider's page of each kind, its journal's records and its folder: one crawl a spider over every kind."""
    tmp = tmp_path_factory.mktemp("base")
    dead = free_port()
    done: dict[str, tuple[dict[str, str], dict, Path, dict]] = {}
    with Web(elsewhere=f"http://127.0.0.1:{free_port()}") as web:
        urls = {kind: where.replace("DEAD", f"http://127.0.0.1:{dead}") if where.startswith(("DEAD", "http"))
                else web.url + where for kind, (where, _) in KINDS.items()}
        for spider in OWN:
            (tmp / spider).mkdir()
            out = tmp / spider / "out"
            stats = crawl(spider, args_of(spider, list(urls.values()), tmp / spider), out, fresh=True)
            done[spider] = ({kind: canonical(u) for kind, u in urls.items()}, records(spider, out), out, stats)
        yield done


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("spider", list(OWN))
def test_a_fetch_of_each_kind_is_the_same_row_in_every_spider(crawled: dict, spider: str, kind: str) -> None:
    keys, rows, _, stats = crawled[spider]
    if (spider, kind) in NOT_A_PAGE:
        assert keys[kind] not in rows and stats["skipped"] == {"robots_disallowed": 1}, NOT_A_PAGE[spider, kind]
        return
    assert rows.get(keys[kind]) == KINDS[kind][1], f"{spider}: {KINDS[kind][0]}"


def test_the_spiders_own_rows_keep_their_own_words(crawled: dict) -> None:
    """The shared record comes beside each spider's vocabulary, not instead of it."""
    keys = crawled["site_tree"][0]
    pages = pl.read_parquet(crawled["site_tree"][2] / "pages.parquet")
    errors = dict(zip(pages["url"], pages["error"], strict=True))
    assert errors[keys["timeout"]] == "timeout" and errors[keys["redirect_off_site"]] == "redirect_off_site"
    dropped = pl.read_parquet(crawled["news"][2] / "dropped.parquet")
    reasons = dict(zip(dropped["url"].map_elements(canonical, return_dtype=pl.String), dropped["reason"],
                       strict=True))
    assert (reasons[keys["timeout"]], reasons[keys["robots"]], reasons[keys["redirect_off_site"]]) == (
        "dead_link", "robots_disallowed", "redirect_not_allowed")
    fetches = pl.read_parquet(crawled["official"][2] / "fetches.parquet")
    failures = dict(zip(fetches["url"].map_elements(canonical, return_dtype=pl.String), fetches["failure"],
                        strict=True))
    assert (failures[keys["timeout"]], failures[keys["http_404"]], failures[keys["page"]]) == (
        "site_down", "page_missing", None)


def test_three_kills_of_a_news_crawl_give_the_articles_and_drops_of_an_uninterrupted_one(tmp_path: Path) -> None:
    with Web(elsewhere="http://127.0.0.1:9") as web:
        urls = [f"{web.url}/story/{n}" for n in range(240)]
        (tmp_path / "whole").mkdir()
        # No story is slow: a page's time is the default's 30 s, so that a story held up by the machine's load is not
        # dropped as timed out in one crawl and kept in the other.
        crawl("news", args_of("news", urls, tmp_path / "whole", render="never", timeout=30),
              tmp_path / "whole" / "out", fresh=True)
        (tmp_path / "killed").mkdir()
        args = args_of("news", urls, tmp_path / "killed", render="never", timeout=30)
        out = tmp_path / "killed" / "out"
        argv, env = command("news", args, out)
        before = len(web.asked)
        points = sorted(random.Random(26).sample(range(20, 200), 3))
        held = [killed_at(argv, env, out / JOURNAL, at) for at in points]
        stats = crawl("news", args, out)
        asked = [p for p in web.asked[before:] if p != "/robots.txt"]
    frames = {}
    for name in ("whole", "killed"):
        crawl_out = tmp_path / name / "out"
        frames[name] = (pl.read_parquet(crawl_out / "articles.parquet").drop("fetched_at").sort("url"),
                        pl.read_parquet(crawl_out / "dropped.parquet").sort("url"))
    assert frames["killed"][0].equals(frames["whole"][0]), f"killed at journal lines {points} (held {held})"
    assert frames["killed"][1].equals(frames["whole"][1])
    assert frames["whole"][0].height + frames["whole"][1].height == 240
    assert stats["resumed"] >= held[-1] - 1 and set(asked) == {f"/story/{n}" for n in range(240)}
    assert len(asked) - 240 <= 16 * 3, "only links in flight at a kill are asked again"
