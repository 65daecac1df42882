"""What the news source keeps of one page: its article body, title, date, author and host, by trafilatura; or
why the page is no article. The same function serves the crawl's item pipeline and `timelyqa extract`.

The body is trafilatura's precision run (comments left out), which on the extraction benchmark beats its defaults,
with three page-independent repairs measured there (tests/test_news_extract.py holds the gate):

- when the precision run keeps less than a quarter of what the recall run keeps, it has cut the article (a body
  split across containers it judged boilerplate), so the recall run's text is taken;
- a first line that repeats the page's title is the headline, which is the `title` field and not the body;
- running text that spreads over several story cards keeps the card holding most of it (`pagekind.one_story`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from typing import Any
from urllib.parse import urlsplit

import trafilatura
from lxml.html import HtmlElement

from timelyqa.news.articles import ArticleReject
from timelyqa.news.pagekind import is_article, key, one_story, parse

PRECISION = {"include_comments": False, "favor_precision": True}
RECALL = {"include_comments": False, "favor_recall": True}
CUT_SHARE = 0.25
"""A precision text shorter than this share of the recall text has lost the article: the recall text is kept."""
HEADLINE_WORDS = 3
"""A first line this long or longer that begins the title (the title being `headline | outlet`) is the headline."""


@dataclass(frozen=True, slots=True)
class Extracted:
    url: str
    host: str
    title: str | None
    published: date | None
    author: str | None
    text: str | None
    reject: ArticleReject | None
    """Why the page is no article (EMPTY_PAGE, NOT_ARTICLE), or None."""

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["published"] = self.published.isoformat() if self.published else None
        out["reject"] = str(self.reject) if self.reject else None
        return out


def extract(html: str, url: str) -> Extracted:
    """The article in `html`, served at `url`."""
    host = urlsplit(url).hostname or ""
    tree = parse(html)  # timelyqa.page: XHTML and any depth; trafilatura copies the tree before it cuts it
    page = tree if tree is not None else html
    doc = trafilatura.bare_extraction(page, url=url, with_metadata=True, **PRECISION)
    title = ((doc.title or "").strip() or None) if doc is not None else None
    text = _body(page, url, (doc.text or "") if doc is not None else "")
    text = one_story(tree, _without_headline(text, title)).strip()
    reject = None
    if not text:
        reject = ArticleReject.EMPTY_PAGE
    elif not is_article(tree, text):
        reject = ArticleReject.NOT_ARTICLE
    return Extracted(url=url, host=host, title=title, published=_day(doc.date if doc is not None else None),
                     author=((doc.author or "").strip() or None) if doc is not None else None,
                     text=text or None, reject=reject)


def _body(html: str | HtmlElement, url: str, precise: str) -> str:
    """The precision run's text, or the recall run's when the precision run has cut the article."""
    recalled = trafilatura.extract(html, url=url, with_metadata=False, **RECALL) or ""
    chosen = recalled if len(precise.strip()) < CUT_SHARE * len(recalled.strip()) else precise
    return chosen.strip()


def _without_headline(text: str, title: str | None) -> str:
    """`text` without a first line that is the page's headline: the title, or the title's start (`headline -
    outlet`) when that line has HEADLINE_WORDS words or more."""
    first, _, rest = text.partition("\n")
    line, whole = key(first), key(title or "")
    if line and whole and (line == whole or (len(line.split()) >= HEADLINE_WORDS
                                                    and f"{whole} ".startswith(f"{line} "))):
        return rest.strip()
    return text


def _day(value: str | None) -> date | None:
    """trafilatura's date (htmldate: the page's metadata, its URL, its text), as a day; None when absent."""
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None
