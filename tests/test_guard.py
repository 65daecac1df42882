"""The request guard: a request may carry its own guard (else the spider's holds), hosts from data reach public
addresses only while the operator's may be private, and a name is checked on the very answer the connection uses
(the resolver refuses a private answer for a name nobody named, counted as `private_address`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.resolver import dnscache
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError

from spiders import guard as guarding
from spiders.guard import AnswerMiddleware, GuardedResolver, GuardMiddleware, HostGuard, Refusal


def test_hosts_from_data_may_be_public_only_and_the_operators_may_be_private() -> None:
    operator = "http://127.0.0.1:8000/"
    guard = HostGuard.of([operator, "http://169.254.169.254/", "http://10.0.0.1:6379/", "http://localhost:8000/"],
                         named_private=[operator])
    assert guard.refusal(operator + "page") is None
    assert guard.refusal("http://169.254.169.254/latest/meta-data/") == Refusal.PRIVATE_ADDRESS
    assert guard.refusal("http://10.0.0.1:6379/") == Refusal.PRIVATE_ADDRESS
    assert guard.refusal("http://localhost:8000/") == Refusal.PRIVATE_ADDRESS, "a name that resolves to loopback"
    assert guard.refusal("http://127.0.0.1:8001/") == Refusal.OFF_SITE, "the operator's host on another port"
    assert HostGuard.of([operator]).refusal(operator) is None, "roots alone are the operator's own"


def _middleware(spider_guard: HostGuard) -> tuple[GuardMiddleware, object]:
    crawler = get_crawler()
    crawler.spider = SimpleNamespace(guard=spider_guard)  # type: ignore[assignment]
    crawler.stats.open_spider()
    return GuardMiddleware(crawler), crawler.stats


def test_a_request_carrying_its_own_guard_is_held_to_it_not_to_the_spiders() -> None:
    mw, stats = _middleware(HostGuard.of(["http://a.example/", "http://b.example/"]))
    own = HostGuard.of(["http://a.example/"], named_private=())
    mw.process_request(Request("http://a.example/x", meta={"guard": own}))
    with pytest.raises(IgnoreRequest, match="off_site: http://b.example/y"):
        mw.process_request(Request("http://b.example/y", meta={"guard": own}))
    mw.process_request(Request("http://b.example/y"))  # the spider's guard allows it
    assert stats.get_value("guard/off_site") == 1  # type: ignore[attr-defined]


def test_the_resolver_refuses_a_private_answer_for_a_name_nobody_named(monkeypatch: pytest.MonkeyPatch) -> None:
    resolver = GuardedResolver(reactor=None, cache_size=100, timeout=1.0)  # type: ignore[arg-type]
    monkeypatch.setitem(dnscache, "rebound.test", "10.0.0.1")  # what it answers now (a cached answer is checked too)
    monkeypatch.setitem(dnscache, "public.test", "93.184.216.34")
    monkeypatch.setitem(dnscache, "mine.test", "127.0.0.1")
    monkeypatch.setattr(guarding, "NAMED_HOSTS", {"mine.test"})  # a guard said the operator named it
    monkeypatch.setattr(guarding, "REFUSED_ANSWERS", {})
    failures: list[object] = []
    resolver.getHostByName("rebound.test").addErrback(failures.append)
    answers: list[str] = []
    resolver.getHostByName("public.test").addCallback(answers.append)
    resolver.getHostByName("mine.test").addCallback(answers.append)
    assert len(failures) == 1 and failures[0].check(DNSLookupError)  # type: ignore[attr-defined]
    assert "private_address: rebound.test resolves to 10.0.0.1" in str(failures[0].value)  # type: ignore[attr-defined]
    assert answers == ["93.184.216.34", "127.0.0.1"]
    crawler = get_crawler()
    crawler.stats.open_spider()
    with pytest.raises(IgnoreRequest, match="private_address: http://rebound.test/ resolves to 10.0.0.1"):
        AnswerMiddleware(crawler).process_exception(Request("http://rebound.test/"), CannotResolveHostError("x"))
    assert crawler.stats.get_value("guard/private_address") == 1
    assert AnswerMiddleware(crawler).process_exception(Request("http://nowhere.test/"), CannotResolveHostError("x")) \
        is None, "a name that does not resolve stays a DNS failure"
