"""Whether an extracted page is an article: enough running text, and not a list of links (a section front, an index
of headlines, a tag page), which trafilatura may still return as text when the page has nothing else."""

from __future__ import annotations

import re

import lxml.html
from lxml.etree import ParserError

MIN_LETTERS = 200
"""Fewer letters (word characters) than this and a page is no article (a video page, a stub, a paywall's teaser):
about 40 English words. Letters, not words, so that Chinese and Japanese text, written without spaces, counts."""
RUNNING_LINE = 40
"""A line of this many letters or more (about 8 English words) that is no link is running text; shorter ones are
labels, captions, bylines. Not more: prose hard-wrapped by `<br>` comes in lines of 10 to 15 words."""
MIN_RUNNING = 200
"""An article has at least this many letters in lines of running text."""
MAX_LINKED = 0.5
"""An article is mostly its own prose: when this share of its letters or more lie in lines that are each the whole
text of a link on the page, the page is a list of links."""
_WORD = re.compile(r"\w+")


def _key(text: str) -> str:
    return " ".join(_WORD.findall(text)).casefold()


def _letters(key: str) -> int:
    return len(key) - key.count(" ")


def link_texts(html: str) -> set[str]:
    """The texts of the page's links, each as its words joined by one space and casefolded."""
    try:
        tree = lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return set()
    return {_key(a.text_content()) for a in tree.iter("a")} - {""}


def is_article(html: str, text: str) -> bool:
    """True when `text`, extracted from `html`, reads as an article: MIN_LETTERS letters, MIN_RUNNING of them in
    running text, and less than MAX_LINKED of them in lines that are each a link of the page."""
    lines = [key for line in text.splitlines() if (key := _key(line))]
    total = sum(map(_letters, lines))
    if total < MIN_LETTERS:
        return False
    links = link_texts(html)
    linked = sum(_letters(key) for key in lines if key in links)
    running = sum(_letters(key) for key in lines if key not in links and _letters(key) >= RUNNING_LINE)
    return running >= MIN_RUNNING and linked < MAX_LINKED * total
