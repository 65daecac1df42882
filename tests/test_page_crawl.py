"""A real site-tree crawl (Scrapy in its own process) of pages served as raw bytes on 127.0.0.1: XHTML with its XML
declaration, legacy charsets declared or not, a page nested a thousand deep, and a page that parses to nothing. Each
ends as a row: read in its charset with its title, facts and links followed, or with its reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import polars as pl
import pytest

from spiders.run import crawl
from tests.localserver import LocalServer

pytestmark = pytest.mark.slow  # a real crawl in a process of its own: make test, not make check

XHTML = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 '
         'Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd"><html xmlns="http://www.w3.org/'
         '1999/xhtml"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" /><title>Chapter 1. '
         'Getting Started</title></head><body><div class="chapter"><h2>Installation</h2><dl><dt>Port</dt><dd>5432</dd>'
         '</dl><a id="x"></a><a href="from-xhtml.html">Next</a></div></body></html>')
JAPANESE = ("<html><head><title>東京都の人口統計</title></head><body><h1>東京都の人口統計</h1><dl><dt>人口</dt>"
            "<dd>14,086,000人</dd></dl><p>東京都は日本の首都であり、多くの人々が住んでいます。この統計は毎月更新されます。"
            "詳しい情報は各区の役所で確認してください。</p><a href='/from-sjis.html'>次のページ</a></body></html>")
FRENCH = ("<html><head><title>Café “Le Zinc” – tarifs</title></head><body><p>Prix: 5 € la tasse</p>"
          "<p>Ouvert à l’année, fermé le dimanche.</p></body></html>")
DEEP = ("<html><head><title>Deep</title></head><body>" + "<div>" * 1000 + "<p>Depth: 1000</p>"
        '<a href="/deeper.html">deeper</a>' + "</div>" * 1000 + "</body></html>")
PLAIN = "<html><head><title>{0}</title></head><body><p>{0}</p></body></html>"

PAGES: dict[str, tuple[str, bytes]] = {
    "/": ("text/html; charset=utf-8", ("<html><head><title>Home</title></head><body>" + "".join(
        f'<a href="{p}">{p}</a>' for p in ("/xhtml.html", "/sjis.html", "/cp1252.html", "/deep.html", "/php.html")
    ) + "</body></html>").encode()),
    "/xhtml.html": ("text/html", XHTML.encode()),  # as Python's http.server serves the PostgreSQL docs
    "/from-xhtml.html": ("text/html", PLAIN.format("From XHTML").encode()),
    "/sjis.html": ("text/html", JAPANESE.encode("shift_jis")),  # declared nowhere
    "/from-sjis.html": ("text/html", PLAIN.format("From Shift_JIS").encode()),
    "/cp1252.html": ("text/html; charset=windows-1252", FRENCH.encode("cp1252")),
    "/deep.html": ("text/html", DEEP.encode()),
    "/deeper.html": ("text/html", PLAIN.format("Deeper").encode()),
    "/php.html": ("text/html", b"<?php include 'opening-hours.php'; ?>\n"),  # a script served as it is
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        kind, body = PAGES.get(self.path, ("text/plain", b"User-agent: *\nDisallow:\n") if self.path ==
                               "/robots.txt" else ("text/html", b""))
        self.send_response(200 if self.path in PAGES or self.path == "/robots.txt" else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with LocalServer(_Handler) as server:
        yield server.url


@pytest.fixture(scope="module")
def crawled(served: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict[str, dict]]:
    out = tmp_path_factory.mktemp("crawl")
    stats = crawl("site_tree", {"roots": json.dumps([served + "/"]), "max_depth": 2, "max_pages": 50,
                                "render": "never"}, out, fresh=True)
    rows = pl.read_parquet(out / "pages.parquet").to_dicts()
    return stats, {r["url"].removeprefix(served): r for r in rows}


def facts(row: dict) -> set[tuple[str, str]]:
    return {(f["label"], f["value"]) for f in row["facts"]}


def test_every_served_page_is_a_row_each_once(crawled: tuple[dict, dict[str, dict]]) -> None:
    stats, rows = crawled
    assert set(rows) == set(PAGES)  # from-xhtml, from-sjis and deeper: links found on the hostile pages, followed
    assert stats["errors"] == {"unparsable": 1} and stats["pages"] == len(PAGES) - 1  # the rest read as pages


def test_an_xhtml_page_gives_its_title_facts_and_links(crawled: tuple[dict, dict[str, dict]]) -> None:
    """On main: the page was a success with no title, no fact and no link, and the crawl stopped there."""
    page = crawled[1]["/xhtml.html"]
    assert page["error"] is None and page["title"] == "Chapter 1. Getting Started"
    assert facts(page) == {("Port", "5432")}
    assert [c["text"] for c in page["clickables"]] == ["Next"]
    assert crawled[1]["/from-xhtml.html"]["depth"] == 2


def test_pages_in_legacy_charsets_are_read_in_their_charset(crawled: tuple[dict, dict[str, dict]]) -> None:
    """Shift_JIS declared nowhere, windows-1252 by the header: decoded by timelyqa.page from the bytes, as Scrapy 2.19
    decodes them too (this passed on main: the crawl's pages must stay so now that the core decodes them)."""
    sjis, cp1252 = crawled[1]["/sjis.html"], crawled[1]["/cp1252.html"]
    assert sjis["title"] == "東京都の人口統計" and ("人口", "14,086,000人") in facts(sjis)
    assert [c["text"] for c in sjis["clickables"]] == ["次のページ"]
    assert cp1252["title"] == "Café “Le Zinc” – tarifs" and ("Prix", "5 € la tasse") in facts(cp1252)


def test_a_page_a_thousand_deep_gives_its_fact_and_its_link(crawled: tuple[dict, dict[str, dict]]) -> None:
    """On main: RecursionError in the fact reader, in the crawl's content worker."""
    deep = crawled[1]["/deep.html"]
    assert deep["error"] is None and facts(deep) == {("Depth", "1000")}
    assert crawled[1]["/deeper.html"]["title"] == "Deeper"


def test_a_page_that_parses_to_nothing_is_a_row_with_its_reason(crawled: tuple[dict, dict[str, dict]]) -> None:
    """On main: a success with no title, no text and no link."""
    php = crawled[1]["/php.html"]
    assert php["status"] == 200 and php["error"] == "unparsable"
    assert php["facts"] == [] and php["clickables"] == []

