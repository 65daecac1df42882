"""Property tests of the MediaWiki export reader and the infobox parser: any input ends in pages or rejects
with a reason, never an exception.

Exports are drawn as real MediaWiki XML: good pages, and pages each with one known defect, so what the reader
must give is known from how each page was drawn, never from the code under test; then bytes are cut or
spliced in. The wikitext parsers are also held to the one-regex versions they replaced (kept below as
references), on inputs small enough for those to run.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.wikiworld import NS, SITEINFO
from timelyqa.errors import ConfigError
from timelyqa.mediawiki.dump import DumpReader, ReadReject
from timelyqa.wikipedia.infobox import Infobox, _lead_end, categories, first_paragraph, infobox_sources, is_infobox
from timelyqa.wikipedia.infobox import parse_infobox
from timelyqa.mediawiki.wikitext import normal_name, strip_refs

# 200 cases a property: in make test (and many more in make fuzz), not in make check's minute.
pytestmark = pytest.mark.slow


def _xml_char(c: str) -> bool:
    o = ord(c)
    return o in (9, 10, 13) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000


XML_TEXT = st.text(st.characters(codec="utf-8").filter(_xml_char), max_size=60)
TITLE = st.text(st.characters(codec="utf-8", exclude_characters="#<>[]{}|_\ufffd", min_codepoint=0x20)
                .filter(_xml_char).filter(lambda c: c != "\x7f"), min_size=1, max_size=20) \
    .map(str.strip).filter(bool)
DEFECTS = ("ns_word", "id_word", "id_empty", "no_title", "bad_title", "unknown_element", "element_after",
           "markup_in_id", "duplicate_id", "bad_revision_id", "month_13", "unknown_in_revision", None)


def _esc(text: str) -> str:
    return escape(text).replace("\r", "&#13;")  # a raw CR would read back as LF


@dataclass
class Drawn:
    title: str
    page_id: int
    texts: list[str]
    defect: str | None

    def xml(self, first_rev: int) -> str:
        d = self.defect
        title = "" if d == "no_title" else f"<title>{_esc(self.title + ('|' if d == 'bad_title' else ''))}</title>"
        ns = "<ns>main</ns>" if d == "ns_word" else "<ns>0</ns>"
        page_id = {"id_word": "<id>seven</id>", "id_empty": "<id></id>",
                   "markup_in_id": f"<id>{self.page_id}<b/></id>"}.get(d or "", f"<id>{self.page_id}</id>")
        extra = "<flavour>sweet</flavour>" if d == "unknown_element" else ""
        revs = []
        for n, text in enumerate(self.texts):
            rev_id = "x1" if d == "bad_revision_id" and n == 0 else str(first_rev + n)
            month = "13" if d == "month_13" and n == len(self.texts) - 1 else "03"
            odd = "<bogus>1</bogus>" if d == "unknown_in_revision" and n == 0 else ""
            revs.append(f"<revision><id>{rev_id}</id><timestamp>2026-{month}-0{1 + n % 9}T10:00:00Z</timestamp>{odd}"
                        f"<contributor><username>A</username><id>1</id></contributor>"
                        f'<text bytes="{len(text.encode())}" xml:space="preserve">{_esc(text)}</text></revision>')
        after = "<ns>0</ns>" if d == "element_after" else ""
        return f"<page>{title}{ns}{page_id}{extra}{''.join(revs)}{after}</page>\n"


PAGE = st.builds(Drawn, TITLE, st.integers(1, 10**12), st.lists(XML_TEXT.filter(bool), min_size=1, max_size=3),
                 st.sampled_from(DEFECTS) | st.none())  # half the pages good
REASON = {"duplicate_id": ReadReject.DUPLICATE_PAGE, "bad_revision_id": ReadReject.MALFORMED_REVISION,
          "month_13": ReadReject.MALFORMED_REVISION, "unknown_in_revision": ReadReject.MALFORMED_REVISION}


def _export(pages: list[Drawn]) -> bytes:
    seen: set[int] = set()
    valid_heads: list[int] = []  # the ids the reader takes: a later page repeating one is a duplicate
    for page in pages:
        if page.defect == "duplicate_id" and valid_heads:
            page.page_id = valid_heads[page.page_id % len(valid_heads)]
            continue
        if page.defect == "duplicate_id":
            page.defect = None
        if page.page_id in seen:
            page.page_id = max(seen) + 1
        seen.add(page.page_id)
        if page.defect in (None, "element_after", "bad_revision_id", "month_13", "unknown_in_revision"):
            valid_heads.append(page.page_id)
    return _xml(pages)[0]


def _xml(pages: list[Drawn]) -> tuple[bytes, list[int]]:
    """The export, and where each page's XML ends in it."""
    data = f'<mediawiki xmlns="{NS}" version="0.11" xml:lang="en">\n{SITEINFO}'.encode()
    ends = []
    for i, page in enumerate(pages):
        data += page.xml(1000 * i + 1).encode()
        ends.append(len(data))
    return data + b"</mediawiki>\n", ends


def _read(data: bytes) -> tuple[list[tuple[int, str, list[int], list[str], bool]], DumpReader]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.xml"
        path.write_bytes(data)
        reader = DumpReader(path)
        pages = [(p.id, p.title, [r.id for r in revs], [r.text for r in revs], p.complete)
                 for p in reader for revs in [list(p.revisions)]]
    for dropped in reader.rejected:
        assert dropped.reason in ReadReject and dropped.detail.startswith(f"{path}: ")
        assert "\n" not in dropped.detail and len(dropped.detail) < 1000
    return pages, reader


@given(st.lists(PAGE, max_size=6))
def test_each_page_is_read_or_kept_aside_for_its_own_defect(pages: list[Drawn]) -> None:
    got, reader = _read(_export(pages))
    complete = [(pid, title, ids, texts) for pid, title, ids, texts, whole in got if whole]
    want = [(p.page_id, p.title, [1000 * i + 1 + n for n in range(len(p.texts))], p.texts)
            for i, p in enumerate(pages) if p.defect is None]
    assert complete == want
    reasons = sorted(d.reason for d in reader.rejected)
    assert reasons == sorted(REASON.get(p.defect, ReadReject.MALFORMED_PAGE) for p in pages if p.defect)
    assert reader.counts["pages_read"] == len(pages)


@given(st.lists(PAGE, max_size=4), st.data())
def test_cut_or_spliced_bytes_end_in_pages_or_rejects(pages: list[Drawn], data: st.DataObject) -> None:
    _export(pages)  # fixes the drawn ids
    xml, ends = _xml(pages)
    body = ends[0] - len(pages[0].xml(1).encode()) if pages else len(xml)  # past the few kB of <siteinfo>
    at = data.draw(st.integers(body, len(xml)) | st.sampled_from(ends or [0]) | st.integers(0, len(xml)))
    junk = data.draw(st.binary(max_size=40) | st.sampled_from([b"<", b"</page>", b"<page>", b"&bogus;", b"\xff",
                                                               b"<!DOCTYPE x [<!ENTITY a 'b'>]>", b"<![CDATA[x]]>"]))
    cut = data.draw(st.booleans())
    try:
        got, _ = _read(xml[:at] if cut else xml[:at] + junk + xml[at:])
    except ConfigError as exc:  # bytes spliced into <siteinfo>'s <base>: the whole export's URLs are refused
        assert not cut and at < body and "\n" not in str(exc) and "<base>" in str(exc)
        return
    before = [p.page_id for p, end in zip(pages, ends) if end <= at and p.defect is None]
    assert [pid for pid, *_, whole in got if whole][:len(before)] == before, "every good page before the damage"


@given(XML_TEXT | st.from_regex(r"https?://[a-z.]{1,10}(:[0-9]{1,6})?/wiki/[A-Za-z_]{0,8}", fullmatch=True))
def test_any_base_gives_a_web_address_or_a_one_line_config_error(base: str) -> None:
    xml = _export([Drawn("Page", 1, ["text"], None)]).replace(b"https://en.wikipedia.org/wiki/Main_Page",
                                                              _esc(base).encode())
    try:
        got, reader = _read(xml)
    except ConfigError as exc:
        assert "\n" not in str(exc) and "<base>" in str(exc)
        return
    assert re.match(r"https?://[^\s/@]+", reader.wiki_url) and got[0][0] == 1


MARKUP = st.lists(st.sampled_from(["{{", "}}", "{{Infobox ", "{{infobox x|", "|", "=", "a", " ", "\n", "\n\n",
                                   "[[", "]]", "[[File:x.png]]", "<ref>", "</ref>", "<ref name=a/>", "<ref ", ">",
                                   "/", "<!--", "-->", "<", "{{{", "}}}", "==", "== H ==\n", "<table>", "</table>",
                                   "{{birth date|2001|2|3}}", "'''", "Word", "|key = value", "\t"])
                  | st.text(max_size=5), max_size=40).map("".join)


@given(MARKUP)
def test_the_infobox_parser_returns_fields_or_nothing(text: str) -> None:
    box = parse_infobox(text)
    assert box is None or (isinstance(box, Infobox) and all(isinstance(v, str) and v for v in box.fields.values()))
    assert isinstance(first_paragraph(text), str)
    assert all(isinstance(c, str) for c in categories(text))


# The one-regex versions the linear ones replaced: quadratic on hostile input, the reference on small input.
_OLD_PAIR = re.compile(r"<ref\b[^>]*?(?<!/)>.*?</ref\s*>", re.IGNORECASE | re.DOTALL)
_OLD_SINGLE = re.compile(r"<ref\b[^>]*?/>", re.IGNORECASE)
_OLD_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_OLD_HEADING = re.compile(r"^=+[^=\n].*?=+\s*$", re.MULTILINE)
_OLD_OPEN = re.compile(r"\{\{\s*([^|{}\n<]*)")
_OLD_BRACES = re.compile(r"\{\{|\}\}")


def _old_sources(wikitext: str) -> list[str]:
    spans, taken = [], -1
    for match in _OLD_OPEN.finditer(wikitext):
        if match.start() < taken or not is_infobox(normal_name(match.group(1))):
            continue
        depth, end = 0, None
        for brace in _OLD_BRACES.finditer(wikitext, match.start()):
            depth += 1 if brace.group() == "{{" else -1
            if depth == 0:
                end = brace.end()
                break
        if end is not None:
            spans.append(wikitext[match.start():end])
            taken = end
    return spans


@given(MARKUP)
def test_the_one_pass_scans_find_what_the_patterns_they_replaced_found(text: str) -> None:
    assert strip_refs(text) == _OLD_SINGLE.sub("", _OLD_PAIR.sub("", _OLD_COMMENT.sub("", text)))
    heading = _OLD_HEADING.search(text)
    assert _lead_end(text) == (heading.start() if heading else len(text))
    assert infobox_sources(text) == _old_sources(text)
