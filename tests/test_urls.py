"""The one URL check (timelyqa.urls): a URL passes exactly when it has a canonical form, every bad one says why in
one line naming it, and the host every part compares is the canonical form's."""

from __future__ import annotations

import pytest

from timelyqa.news.outlets import host_port as outlet_host_port
from timelyqa.official.origin import host_port as recipe_host_port
from timelyqa.urls import UrlError, canonical, host_port, is_crawlable, netloc, why_not


@pytest.mark.parametrize(("url", "why"), [
    ("https://www.reuters.com:99999/world/europe/x", "its port is out of range (1-65535)"),
    ("http://[::1/x", "invalid IPv6 URL"),
    ("http://[::g]/x", "does not appear to be an IPv4 or IPv6 address"),
    ("http://example.org:0/", "port 0 is no port"),
    ("http://example.org:-1/", "port could not be cast"),
    ("http://example.org:8o/", "port could not be cast"),
    ("http://example.org:8\uff10/", "port could not be cast"),  # a full-width digit: int() would read 80
    ("http://exa mple.org/", "a space or control character in its host"),
    ("http://a..b/", "'a..b' is not a host name"),
    ("http://-a.org/", "'-a.org' is not a host name"),
    ("http://" + "a" * 64 + ".org/", "is not a host name"),
    ("https://www.reuters.com\\@evil.example/", "a backslash before its query"),  # Chromium goes to reuters.com
    ("http://\u2100.org/", "invalid characters under NFKC"),
    ("ftp://example.org/f", "not an http(s) URL"),
    ("mailto:x@example.org", "not an http(s) URL"),
    ("http:///path", "no host"),
])
def test_a_url_with_no_canonical_form_is_refused_in_one_line_naming_it(url: str, why: str) -> None:
    assert not is_crawlable(url)
    assert host_port(url) is None and netloc(url) == ""
    with pytest.raises(UrlError) as caught:
        canonical(url)
    message = why_not(url)
    assert message == str(caught.value) and "\n" not in message
    assert message.startswith(repr(url)) and why in message, message
    assert caught.value.url == url and why in caught.value.why


@pytest.mark.parametrize(("url", "expected", "where"), [
    ("HTTPS://WWW.Example.org:443/a", "https://www.example.org/a", ("www.example.org", 443)),
    ("http://example.org:/x", "http://example.org/x", ("example.org", 80)),  # an empty port is the default one
    ("http://127.0.0.1:65535/", "http://127.0.0.1:65535/", ("127.0.0.1", 65535)),
    ("http://[::1]:8080/x", "http://[::1]:8080/x", ("::1", 8080)),
    ("http://ex\u00e4mple.org/", "http://xn--exmple-cua.org/", ("xn--exmple-cua.org", 80)),
    ("http://user@example.org/", "http://user@example.org/", ("example.org", 80)),
    ("  http://example.org/a b  ", "http://example.org/a%20b", ("example.org", 80)),
])
def test_a_url_with_a_canonical_form_passes_and_names_its_host_as_that_form_does(
        url: str, expected: str, where: tuple[str, int]) -> None:
    assert why_not(url) is None and is_crawlable(url)
    assert canonical(url) == expected and canonical(expected) == expected
    assert host_port(url) == where and netloc(url) == f"{where[0]}:{where[1]}"


@pytest.mark.parametrize("url", ["https://www.reuters.com:99999/world/x", "https://www.reuters.com\\@evil.example/",
                                 "http://[::1/x"])
def test_the_outlets_and_the_recipes_read_hosts_through_the_one_check(url: str) -> None:
    assert outlet_host_port(url) is None and recipe_host_port(url) is None
    assert outlet_host_port("https://WWW.Reuters.com./x") == ("www.reuters.com", 443)
    assert recipe_host_port("http://127.0.0.1/x") == "127.0.0.1:80"
