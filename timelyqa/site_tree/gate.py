"""The site-tree source's own gate rules, run after `timelyqa.quality.COMMON` on every question, template or model.

- `page_not_named`: a question names, by its title in quotes, each page its facts stand on ("who is the principal
  investigator on the "Flood Forecasting for the Wren Valley" page?"); a multi-source question names both pages,
  each by a quote of its own. A quote names a page when it is the page's title, or the title less the site's name
  at either end (what `tree.subject` makes of it: "csv — CSV File Reading and Writing" of "csv — CSV File Reading
  and Writing — Python 3.11.2 documentation"); the site's own name, said as "On the <site> website", names none.
- `answer_not_on_page`: the answer, or each item of a list, is found (SQuAD-normalised, on word boundaries) in the
  text the crawl kept of a page the question stands on (`text`, else `markdown`, else the HTML's text), and each
  of a multi-source question's pages holds one of its items when it has an item per page (a writer's answer in
  prose, one item, is found on either page). The rule is made for a crawl's pages: a row names
  its pages by `source_urls`, the crawl holds their text.

Both read the row as it will be released: its `evidence` (url and title per page) and `source_urls`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from timelyqa.page import parse
from timelyqa.quality import COMMON, Gate, Rule
from timelyqa.reasons import Reason
from timelyqa.rewards import normalize
from timelyqa.site_tree.tree import norm

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
_SEPARATORS = re.compile(r"\s+(?:\||–|—|-|·|::)\s+")


class SiteGateReject(Reason):
    PAGE_NOT_NAMED = "page_not_named", "the question does not name, by its title in quotes, each page it stands on"
    ANSWER_NOT_ON_PAGE = "answer_not_on_page", "the answer is not in the text of the page(s) the question names"


def names(quote: str, title: str) -> bool:
    """The quote is the page's title, or the title cut at one of its separators, either end dropped ("csv — CSV
    File Reading and Writing" of "csv — CSV File Reading and Writing — Python 3.11.2 documentation")."""
    q, t = norm(quote), norm(title)
    if not q or not t:
        return False
    cuts = [m.span() for m in _SEPARATORS.finditer(t)]
    return q == t or any(q in (t[:start], t[end:]) for start, end in cuts)


def _quotes(question: str) -> list[str]:
    site = re.match(r"^On the (.+?) website,", question)
    said = [a or b for a, b in _QUOTED.findall(question)]
    return [q for q in said if site is None or norm(q) != norm(site[1].strip('"“”'))]


def page_not_named(row: Mapping[str, Any]) -> SiteGateReject | None:
    """Each source page is named by a quote of its own (a page's quote cannot serve the other page too)."""
    titles = [str(e.get("title") or "") for e in _evidence(row)]
    quotes = _quotes(str(row["question"]))
    if not titles or not _matched(titles, quotes):
        return SiteGateReject.PAGE_NOT_NAMED
    return None


def _matched(titles: Sequence[str], quotes: Sequence[str]) -> bool:
    """Every title gets a distinct quote that names it (a small bipartite match, by trying each assignment)."""
    if not titles:
        return True
    first, rest = titles[0], titles[1:]
    return any(names(q, first) and _matched(rest, [*quotes[:n], *quotes[n + 1:]]) for n, q in enumerate(quotes))


def _evidence(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [e if isinstance(e, Mapping) else e.model_dump() for e in row.get("evidence") or ()]


def page_text(page: Mapping[str, Any]) -> str:
    """The text the crawl kept of a page: `text`, else `markdown`, else the text of its `html`."""
    if text := page.get("text") or page.get("markdown"):
        return str(text)
    if raw := page.get("html"):
        return _html_text(str(raw))
    return ""


@lru_cache(maxsize=64)
def _html_text(raw: str) -> str:
    tree = parse(raw)  # XHTML and any depth read; None for a page with nothing to read
    return "" if tree is None else str(tree.text_content())


class AnswerOnPage:
    """`answer_not_on_page` for one crawl's pages (url -> the crawl's row); each page normalised once."""

    __name__ = "answer_not_on_page"

    def __init__(self, pages: Mapping[str, Mapping[str, Any]]) -> None:
        self.pages = pages
        self._normal: dict[str, str] = {}

    def text(self, url: str) -> str:
        if url not in self._normal:
            page = self.pages.get(url)
            self._normal[url] = f" {normalize(page_text(page))} " if page is not None else ""
        return self._normal[url]

    def __call__(self, row: Mapping[str, Any]) -> SiteGateReject | None:
        urls = list(row.get("source_urls") or ())
        value = row.get("answer_value") or {}
        items = list(value.get("items") or []) if row.get("answer_type") == "list" else [str(row["answer"])]
        keys = [normalize(str(item)) for item in items]
        texts = [self.text(url) for url in urls]
        if not urls or not all(k and any(f" {k} " in t for t in texts) for k in keys):
            return SiteGateReject.ANSWER_NOT_ON_PAGE
        if len(keys) >= len(urls) > 1 and not all(any(f" {k} " in t for k in keys) for t in texts):
            return SiteGateReject.ANSWER_NOT_ON_PAGE  # a page of a multi-source question that gives no item
        return None


def rules(pages: Mapping[str, Mapping[str, Any]]) -> tuple[Rule, ...]:
    """The rules a site-tree question passes on a crawl's pages: the common ones, then the source's."""
    return (*COMMON, page_not_named, AnswerOnPage(pages))


def gate(pages: Mapping[str, Mapping[str, Any]]) -> Gate:
    return Gate(rules=rules(pages))
