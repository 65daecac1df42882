"""The one page reader: a page's bytes (or its text) to an lxml HTML tree, whatever the page's encoding and dialect.

- **Encoding**: a byte-order mark, else the HTTP header's charset, else the page's own declaration (`<?xml
  encoding>`, `<meta charset>`, `<meta http-equiv>`), else UTF-8 when the bytes are valid UTF-8, else what
  charset_normalizer detects, else windows-1252 (what browsers assume). `decode` says which it took.
- **Dialect**: HTML, and XHTML served with an XML declaration and the XHTML namespace, are read by the same HTML
  parser, so `//a` finds an XHTML page's links (an XML parser would put them in the XHTML namespace, where `//a`
  finds nothing, and reject a str that carries an encoding declaration).
- **Depth**: libxml2 stops at 256 levels unless told otherwise (the rest of the page, links included, is dropped):
  the parser is told (`huge_tree`), and the walks over a tree here and in its readers are loops, not recursion, so a
  page nested a thousand deep raises no RecursionError.
- **Nothing read**: a page whose tree holds no text and no element beyond html, head and body though its text is not
  blank is `unparsable`: the crawl records it as an error row with that reason, never as an empty success.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

import charset_normalizer
from lxml import etree
from lxml.html import HtmlElement, HTMLParser
from parsel import Selector
from w3lib.encoding import html_to_unicode

UNPARSABLE = "unparsable"
"""The reason a page that parses to nothing though it has content is recorded with."""
PARSE_ERRORS = (etree.LxmlError, MemoryError)
"""What parsing a page raises when libxml2 fails (malloc failing under a memory limit)."""
DETECT_BYTES = 64 * 1024
"""Detection reads this much of a page that declares no encoding and is not UTF-8: enough to tell a legacy charset."""
_SHELL = frozenset({"html", "head", "body"})  # what the parser makes of any input, even an empty one
_SHELL_MARKUP = re.compile(r"<!--.*?-->|<!doctype[^>]*>|<\?xml\s[^>]*\?>|</?(?:html|head|body)\b[^>]*>|\x00",
                           re.IGNORECASE | re.DOTALL)
# Comments and processing instructions said nothing to any reader; trafilatura's own parser drops them too, so its
# output on this tree is what it gives on the page's text (less the depth cut).
_PARSER = HTMLParser(encoding="utf-8", huge_tree=True, remove_comments=True, remove_pis=True)


def _detect(body: bytes) -> str | None:
    """UTF-8 when the bytes are valid UTF-8, else charset_normalizer's best guess, else windows-1252."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    best = charset_normalizer.from_bytes(body[:DETECT_BYTES]).best()
    return best.encoding if best is not None else "cp1252"


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """The page's text and the encoding it was read with (a Python codec name), by the order the module states."""
    encoding, text = html_to_unicode(content_type, body, default_encoding="cp1252", auto_detect_fun=_detect)
    return text, codecs.lookup(encoding).name


@dataclass(frozen=True, slots=True)
class Page:
    """A page read: its text, the encoding the text was read with (None when it came as text), and its tree (None
    when the parser made nothing of it)."""

    text: str
    encoding: str | None
    tree: HtmlElement | None

    @property
    def unparsable(self) -> bool:
        return unparsable(self.text, self.tree)


def read(source: bytes | str, content_type: str | None = None) -> Page:
    """The page in `source`: bytes as fetched (decoded as the module states, `content_type` being the HTTP
    header), or text already decoded (a stored page)."""
    text, encoding = decode(source, content_type) if isinstance(source, bytes) else (source, None)
    return Page(text, encoding, parse(text))


def parse(text: str) -> HtmlElement | None:
    """The tree of a page's text, or None when the parser makes nothing of it (blank text, only comments). When
    libxml2 itself fails (out of memory: the official reader's bounded worker counts on it) its error is raised, one
    of `PARSE_ERRORS`: a caller that must keep the page catches it and records the page `unparsable`."""
    cleaned = text.replace("\x00", "")  # libxml2 stops reading at a NUL
    if not cleaned.strip():
        return None
    root = etree.fromstring(cleaned.encode("utf-8", "surrogatepass"), parser=_PARSER)
    return root if isinstance(root, HtmlElement) else None


def tree_of(page: str | HtmlElement | None) -> HtmlElement | None:
    """A tree, as given or parsed from the page's text: the readers take either."""
    if page is None or isinstance(page, HtmlElement):
        return page
    return parse(page)


def selector(page: str | HtmlElement | None, base_url: str | None = None) -> Selector:
    """A parsel Selector over the page's tree (an empty document when there is none), for CSS and XPath queries."""
    tree = tree_of(page)
    if tree is None:
        tree = etree.fromstring(b"<html></html>", parser=_PARSER)
    return Selector(root=tree, type="html", base_url=base_url)


def unparsable(text: str, tree: HtmlElement | None) -> bool:
    """The page has content (its text is more than blanks, comments, a doctype, an XML declaration and the html,
    head and body tags), but its tree holds no text and no element beyond html, head and body: a page of CDATA or
    processing instructions (`<?php ... ?>` served as it is), which the HTML parser drops."""
    return (tree is None or is_empty(tree)) and bool(_SHELL_MARKUP.sub("", text).strip())


def is_empty(tree: HtmlElement) -> bool:
    """No text anywhere and no element but html, head and body: what the parser makes of a page it cannot read."""
    for el in tree.iter():
        if isinstance(el.tag, str) and el.tag not in _SHELL:
            return False
        if (el.text or "").strip() or (el.tail or "").strip():
            return False
    return True


def elements(tree: HtmlElement, skip: frozenset[str] = frozenset()) -> Iterator[tuple[HtmlElement, int]]:
    """The tree's elements in document order with their depth below `tree` (which is not given), without descending
    into an element whose tag is in `skip` (that element itself is given): a loop, so any depth is walked."""
    stack: list[tuple[HtmlElement, int]] = [(c, 1) for c in reversed(tree)]
    while stack:
        el, depth = stack.pop()
        yield el, depth
        if isinstance(el.tag, str) and el.tag not in skip:
            stack.extend((c, depth + 1) for c in reversed(el))
