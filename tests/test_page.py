"""The one page reader (timelyqa/page.py) and every reader that goes through it, on the pages that broke them: XHTML
with its XML declaration (two real pages of the PostgreSQL 15 documentation, Debian's postgresql-doc-15), legacy
charsets declared by the header, the XML declaration, a meta tag, or not at all, HTML nested a thousand deep, and
pages that parse to nothing though they have content."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from spiders.clickables import clickables, static_hrefs
from spiders.content import read as read_content
from timelyqa.news.pagekind import link_texts, parse as news_parse
from timelyqa.official.extract import matches
from timelyqa.official.recipe import Extract
from timelyqa.page import UNPARSABLE, decode, parse, read, selector, unparsable
from timelyqa.site_tree.facts import extract_facts
from timelyqa.site_tree.gate import page_text

PGDOCS = Path(__file__).resolve().parent / "fixtures" / "page" / "pgdocs"


def pgdoc(name: str) -> tuple[bytes, str, str]:
    """A stored page of the PostgreSQL documentation: its bytes as served, its URL, its Content-Type."""
    page = next(p for p in json.loads((PGDOCS / "pages.json").read_text()) if p["file"] == f"{name}.gz")
    return gzip.decompress((PGDOCS / page["file"]).read_bytes()), page["url"], page["content_type"]


# --- XHTML with its declaration -----------------------------------------------------------------------------------

def test_an_xhtml_page_with_its_declaration_is_read_with_its_links_title_and_facts() -> None:
    """On main every reader saw an empty page here: no link, no title, no fact, no text."""
    body, url, kind = pgdoc("datatype-numeric.html")
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"')
    assert b'xmlns="http://www.w3.org/1999/xhtml"' in body[:400]
    page = read(body, kind)
    assert page.encoding == "utf-8" and not page.unparsable
    hrefs = {c.href for c in clickables(page.tree, url)}
    assert "http://127.0.0.1:47400/datatype.html" in hrefs  # "Up"
    assert "http://127.0.0.1:47400/datatype-money.html" in hrefs  # "Next"
    facts = {(f.label, f.value) for f in extract_facts(page.tree)}
    assert ("Range for integer", "-2147483648 to +2147483647") in facts
    assert ("Storage Size for bigint", "8 bytes") in facts
    content = read_content(body.decode(), url, with_facts=True)
    assert content["title"] == "8.1. Numeric Types"
    assert "-2147483648 to +2147483647" in (content["text"] or "")
    assert "smallint" in page_text({"html": body.decode()})
    assert news_parse(body.decode()) is not None and "next" in link_texts(news_parse(body.decode()))
    table = Extract(css="table.table tbody tr:nth-child(2) td:nth-child(4)")
    assert matches(body.decode(), table) == ["-2147483648 to +2147483647"]


def test_the_xhtml_index_gives_every_link_a_plain_link_extractor_gives() -> None:
    from scrapy.http import HtmlResponse  # noqa: PLC0415
    from scrapy.linkextractors import LinkExtractor  # noqa: PLC0415

    body, url, kind = pgdoc("index.html")
    plain = {link.url for link in LinkExtractor().extract_links(HtmlResponse(url, body=body, headers={
        "Content-Type": kind}))}
    ours = {c.href.split("#")[0] for c in clickables(read(body, kind).tree, url)}
    assert len(plain) > 100 and plain <= ours
    assert static_hrefs(body.decode()) >= {"preface.html", "tutorial.html"}


# --- legacy charsets ---------------------------------------------------------------------------------------------

JAPANESE = ("<html><head>{meta}<title>東京都の人口統計</title></head><body><h1>東京都の人口統計</h1>"
            "<dl><dt>人口</dt><dd>14,086,000人</dd></dl><p>東京都は日本の首都であり、多くの人々が住んでいます。この統計は毎月更新されます。"
            "詳しい情報は各区の役所で確認してください。</p><a href='/次へ'>次のページ</a></body></html>")
FRENCH = ("<html><head>{meta}<title>Café “Le Zinc” – tarifs</title></head><body>"
          "<p>Prix: 5 € la tasse</p><p>Ouvert à l’année, fermé le dimanche. Crème brûlée maison, très appréciée "
          "des habitués du quartier.</p></body></html>")


@pytest.mark.parametrize(("text", "codec", "header", "meta", "title", "fact"), [
    # the header says it
    (FRENCH, "cp1252", "text/html; charset=windows-1252", "", "Café “Le Zinc” – tarifs", ("Prix", "5 € la tasse")),
    # a meta tag says it, the header does not
    (JAPANESE, "shift_jis", "text/html", '<meta charset="Shift_JIS">', "東京都の人口統計", ("人口", "14,086,000人")),
    (FRENCH, "cp1252", "text/html", '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
     "Café “Le Zinc” – tarifs", ("Prix", "5 € la tasse")),
    # nothing says it: detected
    (JAPANESE, "shift_jis", "text/html", "", "東京都の人口統計", ("人口", "14,086,000人")),
    (FRENCH, "cp1252", None, "", "Café “Le Zinc” – tarifs", ("Prix", "5 € la tasse")),
    (JAPANESE, "euc_jp", "text/html", "", "東京都の人口統計", ("人口", "14,086,000人")),
], ids=["cp1252-header", "sjis-meta", "cp1252-http-equiv", "sjis-undeclared", "cp1252-undeclared",
        "eucjp-undeclared"])
def test_a_page_in_a_legacy_charset_is_read_in_its_charset(text: str, codec: str, header: str | None, meta: str,
                                                           title: str, fact: tuple[str, str]) -> None:
    body = text.format(meta=meta).encode(codec)
    page = read(body, header)
    assert page.tree is not None and page.tree.findtext(".//title") == title
    assert fact in {(f.label, f.value) for f in extract_facts(page.tree)}


def test_the_xml_declaration_names_the_charset_of_an_xhtml_page() -> None:
    xhtml = ('<?xml version="1.0" encoding="Shift_JIS"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
             '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml">'
             "<head><title>営業時間</title></head><body><dl><dt>営業時間</dt><dd>9時から17時</dd></dl>"
             '<a href="access.html">アクセス</a></body></html>')
    page = read(xhtml.encode("shift_jis"), "application/xhtml+xml")
    assert page.encoding in ("shift_jis", "cp932")  # cp932 (windows-31j): what WHATWG reads Shift_JIS as
    assert [(f.label, f.value) for f in extract_facts(page.tree)] == [("営業時間", "9時から17時")]
    assert [(c.href, c.text) for c in clickables(page.tree, "http://h/a/")] == [("http://h/a/access.html", "アクセス")]


def test_the_header_wins_over_the_page_and_a_byte_order_mark_over_both() -> None:
    text = '<html><head><meta charset="utf-8"><title>Crème</title></head></html>'
    assert decode(text.encode("cp1252"), "text/html; charset=windows-1252") == (text, "cp1252")
    bom = "\ufeff" + text
    assert decode(bom.encode("utf-16-le"), "text/html; charset=windows-1252")[0].lstrip("\ufeff") == text


# --- a thousand deep ---------------------------------------------------------------------------------------------

DEEP = ("<html><head><title>Deep</title></head><body>" + "<div>" * 1000 +
        "<p>Depth: 1000</p><p>" + "The bottom of a very deep page holds its only paragraph. " * 6 + "</p>"
        '<a href="/deeper">deeper</a>' + "</div>" * 1000 + "</body></html>")


def test_a_page_nested_a_thousand_deep_is_read_whole_by_every_reader() -> None:
    """On main: RecursionError in the fact reader, no text from the content reader, and lxml cut the page at 256
    levels, so the gate read no text and the link at the bottom was lost to every parser but parsel's."""
    tree = parse(DEEP)
    assert tree is not None and len(tree.xpath("//div")) == 1000
    assert [(f.label, f.value) for f in extract_facts(DEEP)] == [("Depth", "1000")]
    assert [c.href for c in clickables(DEEP, "http://h/")] == ["http://h/deeper"]
    content = read_content(DEEP, "http://h/", with_facts=True)
    assert "only paragraph" in (content["text"] or "") and content["facts"][0]["value"] == "1000"
    assert "only paragraph" in page_text({"html": DEEP})
    assert matches(DEEP, Extract(css="p", regex=r"Depth: (\d+)")) == ["1000"]
    assert "deeper" in link_texts(news_parse(DEEP))


# --- nothing read ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "<?php include 'opening-hours.php'; ?>",  # a script served as it is, not run
    "<html><body><![CDATA[Opening hours: 9 to 5]]></body></html>",  # text the HTML parser drops
])
def test_a_page_that_parses_to_nothing_though_it_has_content_is_unparsable(text: str) -> None:
    page = read(text.encode(), "text/html")
    assert page.unparsable and UNPARSABLE == "unparsable"


@pytest.mark.parametrize("text", ["", "  \n", "<html><body></body></html>", "<!-- nothing yet -->",
                                  '<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"/>',
                                  "<p>x</p>", "plain words"])
def test_an_empty_page_or_one_with_anything_to_read_is_not_unparsable(text: str) -> None:
    assert not unparsable(text, parse(text))


def test_a_nul_byte_does_not_end_the_page() -> None:
    """libxml2 stops at a NUL: the rest of the page, links included, would be lost."""
    body = b"<html><body><p>before</p>\x00<a href='/after'>after</a></body></html>"
    assert [c.href for c in clickables(read(body, "text/html").tree, "http://h/")] == ["http://h/after"]
    assert selector(None).xpath("//a").getall() == []


def test_an_xhtml_page_built_by_its_script_is_rendered_under_render_auto() -> None:
    """On main the auto rule saw no script on an XHTML page (parsel read it in the XHTML namespace): `no_script`."""
    from spiders.render import quiet_reason, render_reason  # noqa: PLC0415

    shell = ('<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>App'
             '</title></head><body><div id="app"></div><script>document.getElementById("app").appendChild('
             'document.createElement("p"))</script></body></html>')
    assert render_reason(shell) == "script_builds_dom"
    assert quiet_reason(shell) == "scripts_change_nothing_seen"


def test_a_news_article_nested_a_thousand_deep_is_an_article() -> None:
    """On main trafilatura's own parse stopped at 256 levels, and the story was rejected as `empty_page`."""
    from timelyqa.news.extract import extract  # noqa: PLC0415

    story = "".join(f"<p>The council of Aldermoor voted on Tuesday to rebuild the old stone bridge over the river, "
                    f"paragraph {i}, after a year of debate about its cost.</p>" for i in range(6))
    deep = ("<html><head><title>Bridge vote</title></head><body>" + "<div>" * 1000 +
            f"<article><h1>Bridge vote</h1>{story}</article>" + "</div>" * 1000 + "</body></html>")
    found = extract(deep, "http://news.example/bridge")
    assert found.reject is None and found.title == "Bridge vote"
    assert "rebuild the old stone bridge" in (found.text or "") and "paragraph 5" in (found.text or "")
