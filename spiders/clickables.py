"""What a person can click on a page: anchors, buttons and elements whose click navigates, each with its text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

from lxml.html import HtmlElement
from parsel import Selector

from timelyqa.page import selector

# `location = '...'`, `location.href='...'`, `window.location.assign("...")`: an onclick that navigates.
_NAVIGATES = re.compile(r"""location(?:\.href)?\s*(?:=|\.assign\(|\.replace\()\s*['"]([^'"]+)['"]""")


@dataclass(frozen=True, slots=True)
class Clickable:
    """One thing to click: where it leads (absolute), its text, and what it is (`anchor`, `button`, `onclick`,
    `script`: a link only scripts insert, seen in the rendered page)."""

    href: str
    text: str
    kind: str


def _text(node: Selector) -> str:
    words = " ".join(node.xpath(".//text()").getall()).split()
    label = " ".join(words) or node.attrib.get("aria-label") or node.attrib.get("title") or node.attrib.get("value")
    return label or ""


def clickables(html: str | HtmlElement | None, base_url: str, *, static_hrefs: frozenset[str] | None = None
               ) -> list[Clickable]:
    """The page's clickables in document order, from its text or its tree as `timelyqa.page` reads them (XHTML
    included). With `static_hrefs` (the anchors of the page as served), the anchors missing from it are the ones
    scripts inserted, and are marked `script`."""
    page = selector(html, base_url)
    base = page.xpath("//base/@href").get() or base_url
    found: list[Clickable] = []
    for node in page.xpath("//a[@href] | //area[@href] | //*[@onclick]"):
        if "href" in node.attrib and node.root.tag in ("a", "area"):
            href = node.attrib["href"].strip()
            kind = "anchor" if static_hrefs is None or href in static_hrefs else "script"
        elif (target := _NAVIGATES.search(node.attrib.get("onclick", ""))) is not None:
            href, kind = target.group(1), "button" if node.root.tag == "button" else "onclick"
        else:
            continue
        if href and not href.startswith(("#", "javascript:", "mailto:", "tel:")):
            found.append(Clickable(_absolute(base, href), _text(node), kind))
    return found


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
