"""robots.txt for every crawl as RFC 9309 asks (Scrapy's own middleware allows all when the file fails): disallow
all on 5xx, timeouts and network errors, allow all on 4xx, the first 512 KiB of a long file parsed, a compressed
file that expands without bound read as unreachable. Each host's case is counted as `robots/<case>`; a page refused
by what the file says (or by a 5xx, a bomb) is `robots_disallowed`, as before (spiders/errors.py); a page of a host
that did not answer at all fails as its robots.txt did (`connection_refused`, `timeout`, ...), unrequested."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from spiders.errors import failure_reason
from timelyqa.robotsfile import ROBOTS_LIMIT, BodyError, Case, Rules, decode, header_list, read

logger = logging.getLogger(__name__)

ROBOTS_META = "robots_txt"
"""Marks the request of a host's robots.txt (RobotsBody and the byte counter know it by this)."""
ROBOTSTXT_TIMEOUT = 10.0
"""Seconds a robots.txt may take (setting ROBOTSTXT_TIMEOUT): its host's pages wait for it; past it, unreachable."""


class RobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's RobotsTxtMiddleware, with every way a robots.txt can fail given RFC 9309's answer (timelyqa.robotsfile
    says which), and its body read to ROBOTS_LIMIT bytes whatever its size (DOWNLOAD_MAXSIZE would cancel it)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._timeout = crawler.settings.getfloat("ROBOTSTXT_TIMEOUT", ROBOTSTXT_TIMEOUT)
        self._waiters: dict[str, list[Deferred[Rules]]] = {}  # a host whose robots.txt is on its way -> its pages
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)

    def _bytes_received(self, data: bytes, request: Request, spider: Any = None) -> None:
        """Stop a robots.txt's download once ROBOTS_LIMIT bytes are in; the response keeps what came."""
        if not request.meta.get(ROBOTS_META):
            return
        request.meta["robots_bytes"] = got = request.meta.get("robots_bytes", 0) + len(data)
        if got >= ROBOTS_LIMIT:
            raise StopDownload(fail=False)  # the response is flagged "download_stopped"

    async def robot_parser(self, request: Request) -> Rules:
        """The host's rules; the first request of a host fetches its robots.txt, the others wait for that answer.

        Each waiter has a Deferred of its own: Scrapy's one shared Deferred, awaited as an asyncio future by several
        requests (the asyncio reactor every crawl runs on), gives the first waiter the rules and every later one
        None, which Scrapy reads as "allow all" (a disallowed page fetched whenever three requests of a host
        were waiting)."""
        netloc = urlparse_cached(request).netloc
        if isinstance(rules := self._parsers.get(netloc), Rules):
            return rules
        if (waiters := self._waiters.get(netloc)) is not None:
            waiting: Deferred[Rules] = Deferred()
            waiters.append(waiting)
            return await maybe_deferred_to_future(waiting)
        self._waiters[netloc] = []
        try:
            rules = await self._fetch(request, netloc)
        except Exception:  # a fault here must not leave the host's pages waiting on it forever: refused
            logger.exception("robots.txt of %s could not be read", netloc)
            rules = Rules(Case.UNREACHABLE)
        self._stats.inc_value(f"robots/{rules.case}")
        if rules.disallows_all:
            logger.warning("robots.txt of %s: %s, so every page of it is refused (RFC 9309)", netloc, rules.case)
        self._parsers[netloc] = rules
        for waiting in self._waiters.pop(netloc):
            waiting.callback(rules)
        return rules

    def process_request_2(self, rp: Any, request: Request) -> None:
        if isinstance(rp, Rules) and rp.cause is not None:
            # The host did not answer for its robots.txt: its pages fail as that request failed (a refused connection,
            # a timeout), the reason a reader of the rows needs, with no request of their own and no retry.
            self._stats.inc_value(f"robots/refused/{rp.case}")
            request.meta["dont_retry"] = True
            raise rp.cause
        try:
            super().process_request_2(rp, request)
        except IgnoreRequest:
            case = getattr(rp, "case", Case.PARSED)
            raise IgnoreRequest(f"Forbidden by robots.txt ({case}): {request.url}") from None

    async def _fetch(self, request: Request, netloc: str) -> Rules:
        url = urlparse_cached(request)
        robots = Request(f"{url.scheme}://{netloc}/robots.txt", priority=self.DOWNLOAD_PRIORITY,
                         callback=NO_CALLBACK,
                         # no maxsize: _bytes_received stops the body at ROBOTS_LIMIT, RobotsBody bounds expansion
                         meta={"dont_obey_robotstxt": True, ROBOTS_META: True, "download_maxsize": 0,
                               "download_timeout": self._timeout},
                         headers={"Accept-Encoding": "gzip, deflate"})
        self._stats.inc_value("robotstxt/request_count")
        try:
            response = await self.crawler.engine.download_async(robots)
        except BodyError as error:
            return Rules(error.case)
        except IgnoreRequest as exc:  # a redirect past REDIRECT_MAX_TIMES or where the guard refuses: as a 4xx
            logger.info("robots.txt of %s: redirect not followed (%s)", netloc, exc)
            return Rules(Case.REDIRECT_UNFOLLOWED)
        except Exception as exc:  # noqa: BLE001 - every way of not getting an answer is RFC 9309's "unreachable"
            reason = failure_reason(Failure(exc))
            self._stats.inc_value(f"robots/unreachable/{reason}")
            logger.info("robots.txt of %s unreachable: %s", netloc, reason)
            return Rules(Case.UNREACHABLE, cause=exc)
        self._stats.inc_value("robotstxt/response_count")
        self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        rules = read(response.status, response.body, truncated="download_stopped" in response.flags)
        if rules.parser is not None:
            await self.crawler.signals.send_catch_log_async(signal=signals.robots_parsed, robotparser=rules,
                                                            request=request)
        return rules


class RobotsBody:
    """A downloader middleware between the downloader and Scrapy's HttpCompressionMiddleware (590): a robots.txt
    body undone of its Content-Encoding here, bounded (timelyqa.robotsfile.decode), so no bomb reaches a decompressor
    without a limit (the robots.txt request carries no DOWNLOAD_MAXSIZE). BodyError says why one cannot be read."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsBody:
        return cls()

    def process_response(self, request: Request, response: Response) -> Response:
        if not request.meta.get(ROBOTS_META) or not (coded := response.headers.getlist("Content-Encoding")):
            return response
        body = decode(response.body, header_list(coded))
        headers = response.headers.copy()
        del headers["Content-Encoding"]
        return response.replace(body=body, headers=headers)
