"""Which requests a crawl may send: the allowed hosts and paths, also after a redirect, and no private address
unless the operator named one."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest

from spiders.urls import netloc


class Refusal(StrEnum):
    OFF_SITE = "off_site"  # another host than the roots' (or the allow-list's)
    PATH_NOT_ALLOWED = "path_not_allowed"  # on the site, outside the allowed paths
    PRIVATE_ADDRESS = "private_address"  # a loopback, private or link-local address nobody named
    NOT_HTTP = "not_http"  # mailto:, javascript:, ftp: ...


def is_private(host: str) -> bool:
    """True when `host` is, or resolves to, a loopback, private, link-local or reserved address."""
    try:
        addresses = {ipaddress.ip_address(host)}
    except ValueError:
        try:
            addresses = {ipaddress.ip_address(info[4][0]) for info in socket.getaddrinfo(host, None)}
        except OSError:
            return False  # unresolvable: the download fails on its own, with its own reason
    return any(a.is_private or a.is_loopback or a.is_link_local or a.is_reserved for a in addresses)


@dataclass
class HostGuard:
    """The hosts (host:port) a crawl may request and, on them, the paths; a private address only when named."""

    hosts: frozenset[str]
    paths: tuple[re.Pattern[str], ...] = ()
    named_private: frozenset[str] = frozenset()
    _private: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, roots: Iterable[str], *, allow_hosts: Iterable[str] = (), allow_paths: Iterable[str] = ()
           ) -> HostGuard:
        urls = [*roots, *(h if "://" in h else f"http://{h}" for h in allow_hosts)]
        hosts = frozenset(netloc(u) for u in urls)
        named = frozenset(n for n in hosts if is_private(n.rsplit(":", 1)[0]))
        return cls(hosts, tuple(re.compile(p) for p in allow_paths), named)

    def refusal(self, url: str) -> Refusal | None:
        """None when `url` may be requested, else why not."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return Refusal.NOT_HTTP
        where = netloc(url)
        if where not in self.hosts:
            return Refusal.OFF_SITE
        if where not in self.named_private and self._is_private(parts.hostname):
            return Refusal.PRIVATE_ADDRESS
        path = parts.path or "/"
        if self.paths and path != "/" and not any(p.search(path) for p in self.paths):
            return Refusal.PATH_NOT_ALLOWED
        return None

    def _is_private(self, host: str) -> bool:
        if host not in self._private:
            self._private[host] = is_private(host)
        return self._private[host]


class GuardMiddleware:
    """A downloader middleware: every request passes here, redirects and robots.txt included, so none leaves the
    allowed hosts. A spider names its guard as `spider.guard`; refusals are counted in `guard/<reason>`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GuardMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        guard: HostGuard | None = request.meta.get("guard") or getattr(self.crawler.spider, "guard", None)
        if guard is None:
            return
        if request.url.endswith("/robots.txt") and netloc(request.url) in guard.hosts:
            return  # the allowed hosts' own robots.txt is always asked
        reason = guard.refusal(request.url)
        if reason is not None:
            self.stats.inc_value(f"guard/{reason}")
            raise IgnoreRequest(f"{reason}: {request.url}")
