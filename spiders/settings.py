"""Settings every crawl shares: polite and safe by construction (robots.txt, AutoThrottle, a User-Agent with a
contact, size limits, no remote control or telnet), resumable and cached."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spiders.render import CHROMIUM_ENV, SYSTEM_CHROMIUM, browser_path, playwright_settings
from timelyqa.useragent import DEFAULT_USER_AGENT, user_agent

BOT_NAME = "timelyqa"
SPIDER_MODULES = ["spiders"]
NEWSPIDER_MODULE = "spiders"
# A spider of spiders/ by name, or a source's own as "module:Class" (spiders/loader.py), held to these settings.
SPIDER_LOADER_CLASS = "spiders.loader.SpiderLoader"

ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_TARGET_CONCURRENCY = 4.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 8
CONCURRENT_ITEMS = 1  # one item a page: Scrapy's default of 100 only starts 100 asyncio tasks for every page
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAXSIZE = 5 * 1024 * 1024  # a page over 5 MiB is no page a person reads: dropped as body_too_large
DOWNLOAD_WARNSIZE = 0
REDIRECT_MAX_TIMES = 5
RETRY_TIMES = 1
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False  # a console that runs Python, on a port: never
REMOTE_CONTROL_ENABLED = False  # Scrapy 2.19's HTTP server that runs Python sent to it: never
HTTPCACHE_ENABLED = True  # re-runs are served from the cache unless asked fresh
HTTPCACHE_IGNORE_HTTP_CODES = [500, 502, 503, 504, 429]
HTTPCACHE_STORAGE = "spiders.httpcache.CacheStorage"  # a robots.txt cached over 24 h is fetched again (RFC 9309)
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
LOG_LEVEL = "INFO"
# Scrapy re-reads and re-parses a callback's source on every response to warn of a `return value` in a generator (its
# cache misses bound methods): 0.7 ms a page, an eighth of the crawl process's own time. The spider has no such return.
WARN_ON_GENERATOR_RETURN_VALUE = False

# Processes reading pages' content beside the crawl's (spiders/content.py); 0: the crawl's own. Two: on the Python
# documentation trafilatura costs a worker twice what the crawl's process spends a page, so one worker was the
# crawl's pace (526 pages: 96-118 s with one, 67-72 s with two, the same CPU, on a shared two-core machine).
EXTRACT_WORKERS = 2
# The guard before anything else; its answer check (a name the resolver refused) next to the downloader, before
# RetryMiddleware (550) takes it for a DNS failure to retry.
# robots.txt as RFC 9309 reads it (spiders/robots.py) in place of Scrapy's, which allows all when the file fails; its
# body undone of any Content-Encoding, bounded, before HttpCompressionMiddleware (590) could expand it unbounded.
DOWNLOADER_MIDDLEWARES = {"spiders.guard.GuardMiddleware": 50, "spiders.once.OnceMiddleware": 60,
                          "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                          "spiders.robots.RobotsMiddleware": 100, "spiders.robots.RobotsBody": 595,
                          "spiders.guard.AnswerMiddleware": 590}
ROBOTSTXT_TIMEOUT = 10  # seconds; a robots.txt slower than this is unreachable: its host's pages are refused
TWISTED_DNS_RESOLVER = "spiders.guard.GuardedResolver"  # the address checked is the one connected to
EXTENSIONS = {"spiders.browser.BrowserPolicy": 0}  # Chromium's every connection through the policy proxy
ITEM_PIPELINES = {"spiders.store.CrawlStore": 300}


TUNABLE = frozenset({"AUTOTHROTTLE_ENABLED", "AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_MAX_DELAY",
                     "AUTOTHROTTLE_TARGET_CONCURRENCY", "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN",
                     "DOWNLOAD_DELAY", "EXTRACT_WORKERS"})
"""The settings a caller may change for one crawl: pace and concurrency (a site of your own can take more than a
stranger's), never what keeps a crawl safe (robots.txt, the guard, size limits, no remote control)."""


def crawl_settings(out: Path, *, fresh: bool = False, render: str = "never", chromium: str | None = None,
                   environ: dict[str, str] | None = None, tuned: dict[str, Any] | None = None) -> dict[str, Any]:
    """The per-crawl settings: User-Agent, the job folder that makes it resumable, the HTTP cache's folder, and
    Chromium when pages may be rendered (ValueError, saying where it was looked for, when there is none); then the
    `tuned` ones, each named in TUNABLE (ValueError naming any other)."""
    if unknown := sorted(set(tuned or {}) - TUNABLE):
        raise ValueError(f"crawl setting {', '.join(unknown)}: not one a crawl may change "
                         f"(those are {', '.join(sorted(TUNABLE))})")
    settings: dict[str, Any] = {
        "USER_AGENT": user_agent(environ),
        "JOBDIR": str(out / "job"),
        "HTTPCACHE_DIR": str(out / "httpcache"),
        "HTTPCACHE_ENABLED": not fresh,
    }
    if render != "never":
        path = browser_path(chromium, environ)
        if path is None:
            raise ValueError(f"--render {render} needs Chromium: none at {CHROMIUM_ENV}, in Playwright's browsers "
                             f"(`playwright install chromium`) or at {SYSTEM_CHROMIUM}")
        settings |= playwright_settings(path)
    return settings | (tuned or {})


USER_AGENT = DEFAULT_USER_AGENT
