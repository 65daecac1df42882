"""What a site-tree crawl keeps of a page's HTML: its title, its main content as markdown and as plain text, and its
facts, read from the page's stored text by the extraction stage after the crawl (timelyqa/site_tree/extract.py)."""

from __future__ import annotations

from typing import Any

import trafilatura
from trafilatura.core import determine_returnstring
from trafilatura.settings import Extractor

from timelyqa.page import PARSE_ERRORS, parse
from timelyqa.site_tree.facts import extract_facts

Content = dict[str, Any]
EMPTY: Content = {"title": None, "markdown": None, "text": None, "facts": []}
"""The content of a page with no HTML (an error, a page that is no HTML) or none read from it."""
# Only trafilatura's metadata reader uses an Extractor's date parameters, and no metadata is read here; given, they
# spare each page's two Extractors a clock and time-zone look-up (3% of a worker's time on the Python documentation).
_NO_DATES: dict[str, Any] = {"original_date": True, "extensive_search": False, "max_date": "9999-12-31"}


def read(html: str | None, url: str, *, with_facts: bool) -> Content:
    """The page's title, its main content as markdown and as plain text (trafilatura, tables kept), and with
    `with_facts` (a page served without error) its facts as `timelyqa.site_tree.facts` reads them. The page is
    parsed once, by `timelyqa.page` (XHTML, any depth), and every reader reads that tree."""
    try:
        tree = parse(html) if html else None
    except PARSE_ERRORS:  # libxml2 failed on it: the spider recorded the page `unparsable`
        tree = None
    if tree is None:
        return dict(EMPTY)
    facts = extract_facts(tree) if with_facts else []
    title = " ".join(tree.xpath("string(//title)").split()) or None  # before trafilatura, which prunes the tree
    markdown, text = _main_content(tree, url)
    return {"title": title, "markdown": markdown, "text": text,
            "facts": [{"label": f.label, "value": f.value, "kind": f.kind, "context": f.context} for f in facts]}


def _main_content(tree: Any, url: str) -> tuple[str | None, str | None]:
    """The main content as markdown and as plain text from ONE trafilatura extraction (tables kept, comments not),
    rendered twice: the costliest step of a page, done once. The markdown is what `trafilatura.extract(...,
    output_format="markdown")` gives; the text is that extraction without its formatting (the same words as a
    "txt" extraction on 73 of 74 pages of the Python documentation, where inline code may join two)."""
    as_markdown = Extractor(output_format="markdown", fast=True, comments=False, tables=True, url=url,
                            date_params=_NO_DATES)
    document = trafilatura.bare_extraction(tree, options=as_markdown, as_dict=False)
    if document is None:
        return None, None
    as_text = Extractor(output_format="txt", fast=True, comments=False, tables=True, url=url, date_params=_NO_DATES)
    return determine_returnstring(document, as_markdown), determine_returnstring(document, as_text)
