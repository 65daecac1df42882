"""Which part of a page is its story, and whether the page is an article at all: enough running text of one story,
not a list of links (a section front, an index of headlines, a tag page) that trafilatura may still return as text
when the page has nothing else."""

from __future__ import annotations

import re

from lxml.html import HtmlElement

from timelyqa import page

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


def key(text: str) -> str:
    """A text's words joined by one space and casefolded: lines compare so whatever the markup and spacing."""
    return " ".join(_WORD.findall(text)).casefold()


def letters(keyed: str) -> int:
    return len(keyed) - keyed.count(" ")


def parse(html: str) -> HtmlElement | None:
    """The page's tree as `timelyqa.page` reads it (XHTML, any depth), or None for a page with nothing to read."""
    return page.parse(html)


def one_story(tree: HtmlElement | None, text: str) -> str:
    """`text` without the running lines of other stories: when its running text lies in two or more story cards
    (innermost `<article>` elements: a post followed by the next posts in full, promotions beside the story),
    the card holding most of it is the story and running lines found only in the others are dropped."""
    if tree is None:
        return text
    cards = [key(card.text_content()) for card in tree.iter("article") if not card.xpath(".//article")]
    lines = text.splitlines()
    keys = [key(line) for line in lines]
    running = [k for k in keys if letters(k) >= RUNNING_LINE]
    held = [sum(letters(k) for k in running if k in card) for card in cards]
    if sum(1 for h in held if h) < 2:
        return text
    story = cards[max(range(len(cards)), key=held.__getitem__)]
    others = [card for card, h in zip(cards, held, strict=True) if h and card is not story]
    return "\n".join(line for line, k in zip(lines, keys, strict=True)
                     if letters(k) < RUNNING_LINE or k in story or not any(k in card for card in others))


def link_texts(tree: HtmlElement | None) -> set[str]:
    """The texts of the page's links, each as its `key`."""
    return set() if tree is None else {key(a.text_content()) for a in tree.iter("a")} - {""}


def is_article(tree: HtmlElement | None, text: str) -> bool:
    """True when `text`, extracted from the page `tree`, reads as an article: MIN_LETTERS letters, MIN_RUNNING of
    them in running text, and less than MAX_LINKED of them in lines that are each a link of the page."""
    lines = [k for line in text.splitlines() if (k := key(line))]
    total = sum(map(letters, lines))
    if total < MIN_LETTERS:
        return False
    links = link_texts(tree)
    linked = sum(letters(k) for k in lines if k in links)
    running = sum(letters(k) for k in lines if k not in links and letters(k) >= RUNNING_LINE)
    return running >= MIN_RUNNING and linked < MAX_LINKED * total
