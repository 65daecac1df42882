"""A request sent through Chromium, the page as served when the browser cannot give it, and the policy proxy every
connection of Chromium goes through: what every crawl that renders shares (spiders/render.py says when a page is
rendered; it is read by the settings, so imports no Scrapy)."""

from __future__ import annotations

from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import NotConfigured
from scrapy.http import TextResponse

from spiders.proxy import REFUSAL_HEADER, PolicyProxy, RobotsRules
from spiders.render import SETTLE_MS, proxy_args


async def close_popup(popup: Any) -> None:
    """A page's `window.open` gets no window of its own (its first request already met the proxy)."""
    await popup.close()


def browser_meta() -> dict[str, Any]:
    """A request's meta that sends it through Chromium, taken as it stands once its scripts leave the network quiet
    (or after SETTLE_MS); a popup it opens is closed."""
    from scrapy_playwright.page import PageMethod  # noqa: PLC0415 - only crawls that render load the browser

    return {"playwright": True, "playwright_page_methods": [
        PageMethod("wait_for_load_state", "networkidle", timeout=SETTLE_MS)],
        "playwright_page_event_handlers": {"popup": close_popup}}


def served_as_is(request: Request) -> TextResponse:
    """The page as served, kept in the meta of a request sent to Chromium (`static_html`, `static_status`): what stands
    when the browser cannot give the page."""
    return TextResponse(request.url, body=request.meta["static_html"].encode(), encoding="utf-8",
                        status=request.meta["static_status"], request=request)


def policy_refusal(response: Any) -> str | None:
    """Why the policy proxy refused the page Chromium was sent to (its navigation redirected off the guard), or None
    for a page a host answered. A host that sends the header itself only spoils its own page."""
    value = response.headers.get(REFUSAL_HEADER)
    return value.decode("latin-1") if value else None


class BrowserPolicy:
    """An extension: when a crawl renders, a PolicyProxy holding the spider's guard (and robots.txt, as the crawl
    knows it) starts before Chromium does, and Chromium is launched to send everything through it. Each refusal
    is counted in the crawl's stats as `guard/<reason>` as it happens; the proxy stops with the spider."""

    def __init__(self, crawler: Crawler) -> None:
        guard = getattr(crawler.spider, "guard", None)
        if guard is None:  # fail closed: no guard, no browser
            raise ValueError(f"spider {crawler.spider!r} renders pages but has no `guard` for the browser's proxy")
        from twisted.internet import reactor  # noqa: PLC0415 - installed by now

        self.crawler = crawler
        stats = crawler.stats
        robots = (RobotsRules(crawler.settings.get("USER_AGENT"), known=self._known,
                              timeout=crawler.settings.getfloat("ROBOTSTXT_TIMEOUT", 10.0),
                              on_case=lambda case: reactor.callFromThread(stats.inc_value, f"robots/{case}"))
                  if crawler.settings.getbool("ROBOTSTXT_OBEY") else None)
        self.proxy = PolicyProxy(guard, robots=robots, on_refusal=lambda reason: reactor.callFromThread(
            stats.inc_value, f"guard/{reason}"))
        self.proxy.__enter__()
        options = dict(crawler.settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"))
        options["args"] = [*(a for a in options.get("args", []) if not a.startswith("--proxy-")),
                           *proxy_args(self.proxy.url)]
        crawler.settings.set("PLAYWRIGHT_LAUNCH_OPTIONS", options, priority="cmdline")
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BrowserPolicy:
        if not crawler.settings.getdict("PLAYWRIGHT_LAUNCH_OPTIONS"):
            raise NotConfigured("the crawl renders no page")
        return cls(crawler)

    def _known(self, where: str) -> Any:
        """The parser of `where`'s robots.txt the crawl itself fetched, if it has one by now."""
        engine = getattr(self.crawler, "engine", None)
        for mw in getattr(getattr(getattr(engine, "downloader", None), "middleware", None), "middlewares", ()):
            if isinstance(mw, RobotsTxtMiddleware):
                parser = mw._parsers.get(where)  # noqa: SLF001 - read only; a Deferred while it is being fetched
                return parser if hasattr(parser, "allowed") else None
        return None

    def spider_closed(self) -> None:
        self.proxy.close()
