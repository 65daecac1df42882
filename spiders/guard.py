"""Which requests a crawl may send: the allowed hosts and paths, also after a redirect, and no private address
unless the operator named that host; checked again on the address a name resolves to, the one connected to."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from spiders.urls import netloc


class Refusal(StrEnum):
    OFF_SITE = "off_site"  # another host than the roots' (or the allow-list's)
    PATH_NOT_ALLOWED = "path_not_allowed"  # on the site, outside the allowed paths
    PRIVATE_ADDRESS = "private_address"  # a loopback, private or link-local address nobody named
    NOT_HTTP = "not_http"  # mailto:, javascript:, ftp: ...
    ROBOTS_DISALLOWED = "robots_disallowed"  # a browser's sub-request robots.txt forbids (spiders/proxy.py)


def is_private_ip(address: str) -> bool:
    """True for a loopback, private, link-local, reserved, multicast or unspecified address."""
    a = ipaddress.ip_address(address)
    return a.is_private or a.is_loopback or a.is_link_local or a.is_reserved or a.is_multicast or a.is_unspecified


def is_private(host: str) -> bool:
    """True when `host` is, or resolves to, a loopback, private, link-local or reserved address."""
    try:
        addresses = {str(ipaddress.ip_address(host))}
    except ValueError:
        try:
            addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
        except OSError:
            return False  # unresolvable: the download fails on its own, with its own reason
    return any(is_private_ip(a) for a in addresses)


class Guard(Protocol):
    """What GuardMiddleware, the resolver and spiders.proxy.PolicyProxy ask of a guard (HostGuard, the news
    spider's OutletGuard)."""

    def refusal(self, url: str, *, resolve: bool = True) -> Refusal | None: ...

    def may_be_private(self, where: str) -> bool: ...


def _netlocs(names: Iterable[str]) -> frozenset[str]:
    return frozenset(netloc(n if "://" in n else f"http://{n}") for n in names)


@dataclass
class HostGuard:
    """The hosts (host:port) a crawl may request and, on them, the paths; a private address only on a host the
    operator named (`named_private`)."""

    hosts: frozenset[str]
    paths: tuple[re.Pattern[str], ...] = ()
    named_private: frozenset[str] = frozenset()
    root_paths: frozenset[str] = frozenset({"/"})  # allowed whatever `paths` say: the roots' own
    _private: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, roots: Iterable[str], *, allow_hosts: Iterable[str] = (), allow_paths: Iterable[str] = (),
           named_private: Iterable[str] | None = None) -> HostGuard:
        """The guard of `roots` (URLs) and `allow_hosts` (URLs or host:port). `named_private` are the hosts the
        operator named (URLs or host:port), which may be private or loopback; None: every root and allowed host
        is the operator's own (a site-tree crawl's --root). Hosts that come from data pass `named_private` with the
        operator's hosts only (or none), so that they reach public addresses only."""
        roots, allow_hosts = list(roots), list(allow_hosts)
        hosts = _netlocs([*roots, *allow_hosts])
        named = hosts if named_private is None else _netlocs(named_private)
        # the roots' own paths stay allowed under `allow_paths`, and only those: a shard of one path prefix
        # (spiders/shards.py) must not fetch `/`, which the site's own shard holds
        root_paths = frozenset(urlsplit(r).path or "/" for r in roots if "://" in r)
        return cls(hosts, tuple(re.compile(p) for p in allow_paths), named, root_paths=root_paths)

    def may_be_private(self, where: str) -> bool:
        """True when host:port `where` was named by the operator, so may be a private or loopback address."""
        return where in self.named_private

    def refusal(self, url: str, *, resolve: bool = True) -> Refusal | None:
        """None when `url` may be requested, else why not. `resolve=False` leaves the address to the caller who
        connects (spiders.proxy), checking only names, ports and paths here."""
        if not (where := netloc(url)):  # no canonical form (timelyqa.urls): not a page's address
            return Refusal.NOT_HTTP
        parts = urlsplit(url)
        if where not in self.hosts:
            return Refusal.OFF_SITE
        if resolve and not self.may_be_private(where) and self._is_private(parts.hostname):
            return Refusal.PRIVATE_ADDRESS
        path = parts.path or "/"
        if self.paths and path not in self.root_paths and not any(p.search(path) for p in self.paths):
            return Refusal.PATH_NOT_ALLOWED
        return None

    def _is_private(self, host: str) -> bool:
        if host not in self._private:
            self._private[host] = is_private(host)
        return self._private[host]


NAMED_HOSTS: set[str] = set()
"""Host names some guard of this crawl says the operator named (one crawl per process): the resolver lets only
these resolve to a private address."""
REFUSED_ANSWERS: dict[str, str] = {}
"""Host names the resolver refused, with the private address they resolved to."""


def guard_of(request: Request, spider: Any) -> Guard | None:
    """The request's own guard (`meta["guard"]`), else the spider's."""
    return request.meta.get("guard") or getattr(spider, "guard", None)


class GuardMiddleware:
    """A downloader middleware: every request passes here, redirects and robots.txt included, so none leaves the
    allowed hosts. A request names its guard as `meta["guard"]`, else the spider's `spider.guard` holds; refusals are
    counted in `guard/<reason>`."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> GuardMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        guard = guard_of(request, self.crawler.spider)
        if guard is None:
            return
        where = netloc(request.url)
        if guard.may_be_private(where):
            NAMED_HOSTS.add(where.rsplit(":", 1)[0])
        reason = guard.refusal(request.url)
        if reason == Refusal.PATH_NOT_ALLOWED and urlsplit(request.url).path == "/robots.txt":
            return  # the allowed hosts' own robots.txt is always asked
        if reason is not None:
            self.stats.inc_value(f"guard/{reason}")
            raise IgnoreRequest(f"{reason}: {request.url}")


class AnswerMiddleware:
    """A downloader middleware next to the downloader: a name the resolver refused (it resolved to a private
    address nobody named, GuardedResolver) is a refusal, `guard/private_address`, not a DNS failure to retry."""

    def __init__(self, crawler: Crawler) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AnswerMiddleware:
        return cls(crawler)

    def process_exception(self, request: Request, exception: Exception) -> None:
        host = urlsplit(request.url).hostname or ""
        if isinstance(exception, CannotResolveHostError) and host in REFUSED_ANSWERS:
            self.stats.inc_value(f"guard/{Refusal.PRIVATE_ADDRESS}")
            raise IgnoreRequest(f"{Refusal.PRIVATE_ADDRESS}: {request.url} resolves to {REFUSED_ANSWERS[host]}")


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's resolver (TWISTED_DNS_RESOLVER), whose answer is checked and then connected to: a name that resolves
    to a private address is refused unless a guard says the operator named it. The check and the connection use
    the one answer, so a name cannot turn private between them (DNS rebinding)."""

    def getHostByName(self, name: str, timeout: Any = ()) -> defer.Deferred[str]:
        return super().getHostByName(name, timeout).addCallback(self._checked, name)

    @staticmethod
    def _checked(address: str, name: str) -> str:
        if name.lower().rstrip(".") not in NAMED_HOSTS and is_private_ip(address):
            REFUSED_ANSWERS[name] = address
            raise DNSLookupError(f"{Refusal.PRIVATE_ADDRESS}: {name} resolves to {address}")
        return address
