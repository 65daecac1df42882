"""Which cited pages become articles: the reasons a link or a page is dropped, and the paper's date window."""

from __future__ import annotations

from datetime import date, timedelta

from timelyqa.reasons import Reason

BEFORE, AFTER = timedelta(days=3), timedelta(days=11)
"""LiveNewsBench's window around an event's day (section 2.1): 3 days before to 11 days after, both inclusive."""


class ArticleReject(Reason):
    OUTLET_NOT_ALLOWED = ("outlet_not_allowed",
                          "the link's host is no outlet on the allow-list, so it was never requested")
    NOT_HTTP = "not_http", "the cited link is not an http(s) URL"
    ROBOTS_DISALLOWED = "robots_disallowed", "the outlet's robots.txt forbids the page, so it was not fetched"
    REDIRECT_NOT_ALLOWED = ("redirect_not_allowed",
                            "the page redirected to a host not on the allow-list, which was not followed")
    DEAD_LINK = "dead_link", "the link gave an HTTP error or no answer (DNS, refused, timed out)"
    EMPTY_PAGE = "empty_page", "the page has no text to extract"
    NOT_ARTICLE = "not_article", "the page is no article (an index, a list of links, too little running text)"
    OUTSIDE_WINDOW = "outside_window", "the article is dated more than 3 days before or 11 days after its event"


def in_window(published: date | None, event_day: date) -> bool:
    """True when an article's date lies in its event's window; an undated article is kept (its event cites it)."""
    return published is None or event_day - BEFORE <= published <= event_day + AFTER
