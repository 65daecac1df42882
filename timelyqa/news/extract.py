"""What the news source keeps of one page: its article body, title, date, author and host, by trafilatura; or
why the page is no article. The same function serves the crawl's item pipeline and `timelyqa extract`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from typing import Any
from urllib.parse import urlsplit

import trafilatura

from timelyqa.news.articles import ArticleReject

MIN_WORDS = 40
"""Fewer words of running text than this and a page is no article (a list of links, a video page, a stub)."""


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
    doc = trafilatura.bare_extraction(html, url=url, include_comments=False, favor_precision=True,
                                      with_metadata=True)
    text = (doc.text or "").strip() if doc is not None else ""
    published = None
    if doc is not None and doc.date:
        try:
            published = date.fromisoformat(doc.date[:10])
        except ValueError:
            published = None
    reject = None
    if not text:
        reject = ArticleReject.EMPTY_PAGE
    elif len(text.split()) < MIN_WORDS:
        reject = ArticleReject.NOT_ARTICLE
    return Extracted(url=url, host=host, title=(doc.title if doc is not None else None) or None,
                     published=published, author=(doc.author if doc is not None else None) or None,
                     text=text or None, reject=reject)
