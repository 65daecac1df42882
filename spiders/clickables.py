"""What a person can click on a page: anchors, buttons and elements whose click navigates, each with its text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

from lxml import etree
from lxml.html import HtmlElement

from timelyqa.page import selector, tree_of

# `location = '...'`, `location.href='...'`, `window.location.assign("...")`: an onclick that navigates.
_NAVIGATES = re.compile(r"""location(?:\.href)?\s*(?:=|\.assign\(|\.replace\()\s*['"]([^'"]+)['"]""")


@dataclass(frozen=True, slots=True)
class Clickable:
    """One thing to click: where it leads (absolute), its text, and what it is (`anchor`, `button`, `onclick`,
    `script`: a link only scripts insert, seen in the rendered page)."""

    href: str
    text: str
    kind: str


_STRIPPED = re.compile(r"[\t\r\n]")  # what urljoin removes from anywhere in a URL
_TEXT = etree.XPath(".//text()", smart_strings=False)  # plain str: no link back to the tree to build
_CLICKABLE = etree.XPath("//a[@href] | //area[@href] | //*[@onclick]")
_BASE = etree.XPath("//base/@href", smart_strings=False)


def _text(node: HtmlElement) -> str:
    words = " ".join(_TEXT(node)).split()
    label = " ".join(words) or node.get("aria-label") or node.get("title") or node.get("value")
    return label or ""


def clickables(html: str | HtmlElement | None, base_url: str, *, static_hrefs: frozenset[str] | None = None
               ) -> list[Clickable]:
    """The page's clickables in document order, from its text or its tree as `timelyqa.page` reads them (XHTML
    included). With `static_hrefs` (the anchors of the page as served), the anchors missing from it are the ones
    scripts inserted, and are marked `script`."""
    # lxml's own XPath over the tree, not a parsel Selector per node: on a documentation page of a few hundred links
    # the Selectors were most of the crawl process's time a page, for the same nodes and strings.
    tree = tree_of(html)
    if tree is None:
        return []
    bases = _BASE(tree)
    base = bases[0] if bases and bases[0] else base_url
    found: list[Clickable] = []
    joined: dict[str, str] = {}  # href without its fragment -> absolute: a page links to each page many times over
    for node in _CLICKABLE(tree):
        href = node.get("href")
        if href is not None and node.tag in ("a", "area"):
            href = href.strip()
            kind = "anchor" if static_hrefs is None or href in static_hrefs else "script"
        elif (target := _NAVIGATES.search(node.get("onclick", ""))) is not None:
            href, kind = target.group(1), "button" if node.tag == "button" else "onclick"
        else:
            continue
        if href and not href.startswith(("#", "javascript:", "mailto:", "tel:")):
            found.append(Clickable(_joined(joined, base, href), _text(node), kind))
    return found


def _joined(joined: dict[str, str], base: str, href: str) -> str:
    """urljoin(base, href), the part before the fragment joined once a page (urljoin's time was most of a
    documentation page's: hundreds of links into a few pages); a fragment is kept as written, as urljoin keeps it,
    unless it is empty (urljoin drops the `#`) or holds a tab or line break, which urljoin removes (then urljoin does
    it all)."""
    target, _, fragment = href.partition("#")
    if not fragment or _STRIPPED.search(fragment):
        return _absolute(base, href)
    if (absolute := joined.get(target)) is None:
        absolute = joined[target] = _absolute(base, target)
    return absolute + "#" + fragment


def _absolute(base: str, href: str) -> str:
    # A malformed link (`http://[::1/x`, or a malformed <base>) stays as written: the crawl counts it as url_invalid
    # (timelyqa.urls) instead of the whole page failing to parse.
    try:
        return urljoin(base, href)
    except ValueError:
        return href


def static_hrefs(html: str | HtmlElement | None) -> frozenset[str]:
    """The anchors' hrefs as the server sent them, before any script ran."""
    return frozenset(h.strip() for h in selector(html).xpath("//a/@href | //area/@href").getall())
