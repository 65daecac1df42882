"""A request sent through Chromium, and the page as served when the browser cannot give it: what every crawl that
renders shares (spiders/render.py says when a page is rendered; it is read by the settings, so imports no Scrapy)."""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.http import TextResponse

from spiders.render import SETTLE_MS


def browser_meta() -> dict[str, Any]:
    """A request's meta that sends it through Chromium, taken as it stands once its scripts leave the network quiet
    (or after SETTLE_MS)."""
    from scrapy_playwright.page import PageMethod  # noqa: PLC0415 - only crawls that render load the browser

    return {"playwright": True, "playwright_page_methods": [
        PageMethod("wait_for_load_state", "networkidle", timeout=SETTLE_MS)]}


def served_as_is(request: Request) -> TextResponse:
    """The page as served, kept in the meta of a request sent to Chromium (`static_html`, `static_status`): what stands
    when the browser cannot give the page."""
    return TextResponse(request.url, body=request.meta["static_html"].encode(), encoding="utf-8",
                        status=request.meta["static_status"], request=request)
