"""The news source's intermediate files, one schema each: the events read from the portal, the links to fetch, the
articles kept and the links and pages dropped on the way. Every step of the source reads and writes these."""

from __future__ import annotations

import polars as pl

from timelyqa.record import record_id

EVENTS, LINKS, ARTICLES, DROPPED = "events.parquet", "links.parquet", "articles.parquet", "dropped.parquet"

EVENT_SCHEMA = pl.Schema({
    "event_id": pl.String(), "date": pl.Date(), "category": pl.String(), "topic": pl.String(),
    "summary": pl.String(), "urls": pl.List(pl.String()), "outlets": pl.List(pl.String()),
    "page": pl.String(), "revision": pl.String(),
})
"""One row a portal event: its day, its category heading, its topic (the `*[[Topic]]` line above it, or null), its
summary sentence as plain text, the links it cites and, in the same order, the outlet names they are cited with;
the day page and its revision id it was read from."""

LINK_SCHEMA = pl.Schema({
    "url": pl.String(), "event_id": pl.String(), "event_date": pl.Date(), "outlet": pl.String(),
    "render": pl.String(),
})
"""One row a cited link on an allowed outlet, handed to the crawl: the outlet's name on the allow-list and how its
pages are fetched (`never`, `always`, `auto`)."""

ARTICLE_SCHEMA = pl.Schema({
    "url": pl.String(), "final_url": pl.String(), "outlet": pl.String(), "event_id": pl.String(),
    "title": pl.String(), "published": pl.Date(), "author": pl.String(), "text": pl.String(),
    "rendered": pl.Boolean(), "sha256": pl.String(), "fetched_at": pl.Datetime("us", "UTC"),
    "archive_url": pl.String(),
})
"""One row an article kept: the link asked for and where it ended, the page's extracted title, date, author and body
text, whether Chromium rendered it, the sha256 of the bytes served and when; `archive_url` is the archived copy
fetched in place of the live page (null when the live page was)."""

DROP_SCHEMA = pl.Schema({
    "url": pl.String(), "event_id": pl.String(), "outlet": pl.String(), "reason": pl.String(),
    "detail": pl.String(),
})
"""One row a cited link or fetched page not kept, with its reason (an `ArticleReject` value) and a one-line detail."""


def event_id(day: str, summary: str) -> str:
    """A stable id of an event: the same day and summary give the same id on every run."""
    return record_id("news_event", day, " ".join(summary.split()))
