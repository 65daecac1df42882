"""The shared URL rules: one identity per page, and spider traps bounded with a reason."""

import pytest

from spiders.urls import TrapBounds, TrapReason, canonical, is_crawlable, pattern


def test_one_page_reached_by_two_spellings_is_one_url() -> None:
    assert canonical("http://Example.ORG:80/a?b=2&a=1#top") == canonical("http://example.org/a?a=1&b=2")
    assert canonical("http://example.org/a?a=1&b=2") == "http://example.org/a?a=1&b=2"


@pytest.mark.parametrize(("url", "expected"), [
    ("HTTPS://WWW.Example.org:443", "https://www.example.org/"),
    ("https://example.org:8443/x", "https://example.org:8443/x"),  # not the default port: another server
    ("http://example.org:8080/", "http://example.org:8080/"),
    ("http://example.org/%7efoo/a%2fb", "http://example.org/~foo/a%2Fb"),
    ("http://example.org/r\u00e9sum\u00e9", "http://example.org/r%C3%A9sum%C3%A9"),
    ("http://example.org/a/./b/../c", "http://example.org/a/c"),
    ("http://example.org/Case/Kept?Q=A", "http://example.org/Case/Kept?Q=A"),
])
def test_host_port_path_and_encoding_are_normalised(url: str, expected: str) -> None:
    assert canonical(url) == expected
    assert canonical(expected) == expected


def test_tracking_parameters_are_dropped_and_the_page_id_kept() -> None:
    assert canonical("http://example.org/p?utm_source=x&id=3") == "http://example.org/p?id=3"
    url = "http://example.org/p?UTM_Campaign=a&utm_whatever=b&gclid=1&fbclid=2&msclkid=3&mc_cid=4&mc_eid=5" \
          "&_ga=6&yclid=7&ref_src=twsrc&id=3"
    assert canonical(url) == "http://example.org/p?id=3"
    assert canonical("http://example.org/p?utm_source=x") == "http://example.org/p"


@pytest.mark.parametrize("session", ["jsessionid=ABC", "PHPSESSID=abc", "sid=1", "sessionid=z", "session_id=z"])
def test_session_ids_are_dropped(session: str) -> None:
    assert canonical(f"http://example.org/cart?{session}&item=9") == "http://example.org/cart?item=9"


def test_a_jsessionid_path_parameter_is_dropped() -> None:
    assert canonical("http://example.org/shop/list;jsessionid=ABC123?page=2") == "http://example.org/shop/list?page=2"
    assert canonical("http://example.org/shop;JSESSIONID=x") == "http://example.org/shop"


def test_duplicate_arguments_collapse_but_distinct_values_stay_sorted() -> None:
    assert canonical("http://example.org/s?q=a&q=a&p=1&p=1") == "http://example.org/s?p=1&q=a"
    assert canonical("http://example.org/s?tag=b&tag=a&tag=b") == "http://example.org/s?tag=a&tag=b"


@pytest.mark.parametrize("url", [
    "javascript:void(0)", "mailto:someone@example.org", "tel:+4912345", "data:text/html,hi", "ftp://example.org/f",
    "http://", "/relative/path",
])
def test_what_is_not_a_web_page_is_not_crawlable(url: str) -> None:
    assert not is_crawlable(url)
    with pytest.raises(ValueError, match="cannot canonicalise"):
        canonical(url)


def test_web_pages_are_crawlable() -> None:
    assert is_crawlable("http://example.org")
    assert is_crawlable("HTTPS://example.org/a?b=1")


def test_pattern_puts_placeholders_for_ids_and_keeps_query_keys() -> None:
    assert pattern("http://example.org/item/12") == pattern("http://example.org/item/250") == "example.org/item/{n}?"
    assert pattern("http://example.org/p/3f2a9c1be7d04a55?b=2&a=1&a=3") == "example.org/p/{id}?a&b"
    assert pattern("http://example.org/about-us") == "example.org/about-us?"
    assert pattern("http://example.org/item/12") != pattern("http://example.org/item/12?sort=up")


def test_an_endless_calendar_is_bounded_after_max_calendar_steps() -> None:
    bounds = TrapBounds(max_calendar_steps=12)
    months = [f"http://example.org/calendar/{2026 + m // 12}/{m % 12 + 1:02d}" for m in range(40)]
    kept, parent, reason = [], None, None
    for month in months:
        if (reason := bounds.check(month, parent)) is not None:
            break
        kept.append(month)
        parent = month
    assert reason == TrapReason.CALENDAR_TRAP == "calendar_trap"
    assert len(kept) == 1 + 12  # the first month, then twelve steps
    assert kept[-1] == "http://example.org/calendar/2027/01"


@pytest.mark.parametrize("step", ["date=2026-01-{:02d}", "week={}&year=2026", "day={}"])
def test_a_calendar_by_query_is_bounded_too(step: str) -> None:
    bounds = TrapBounds(max_calendar_steps=3)
    days = [f"http://example.org/events?{step.format(d)}" for d in range(1, 6)]
    reasons = [bounds.check(day, parent) for parent, day in zip([None, *days], days, strict=False)]
    assert reasons == [None] * 4 + [TrapReason.CALENDAR_TRAP]  # the crawl never fetches the bounded day


def test_dated_news_stories_linked_from_a_section_page_are_kept() -> None:
    bounds = TrapBounds(max_calendar_steps=12)
    section = "http://example.org/news"
    stories = [f"http://example.org/news/2026/01/story-{i}" for i in range(40)]
    assert [bounds.check(story, section) for story in stories] == [None] * 40
    assert bounds.check("http://example.org/news/2026/01/story", section) is None


def test_a_growing_query_is_bounded() -> None:
    bounds = TrapBounds()
    urls = ["http://example.org/list?a=1", "http://example.org/list?a=1&b=1", "http://example.org/list?a=1&b=1&c=1",
            "http://example.org/list?a=1&b=1&c=1&d=1"]
    assert bounds.check(urls[0], None) is None
    assert bounds.check(urls[1], urls[0]) is None  # one step: a filter added
    assert bounds.check(urls[2], urls[1]) == TrapReason.QUERY_GROWTH == "query_growth"


def test_a_search_then_its_next_page_is_not_growth() -> None:
    bounds = TrapBounds()
    pages = ["http://example.org/search", "http://example.org/search?q=x", "http://example.org/search?page=2&q=x",
             "http://example.org/search?page=3&q=x"]
    assert [bounds.check(url, parent) for parent, url in zip([None, *pages], pages, strict=False)] == [None] * 4


def test_too_many_query_arguments_are_bounded() -> None:
    bounds = TrapBounds(max_query_args=8)
    eight = "&".join(f"k{i}=v" for i in range(8))
    assert bounds.check(f"http://example.org/f?{eight}", None) is None
    assert bounds.check(f"http://example.org/f?{eight}&k8=v", None) == TrapReason.QUERY_GROWTH


def test_one_pattern_gets_its_budget_and_no_more() -> None:
    bounds = TrapBounds(pattern_budget=200)
    reasons = [bounds.check(f"http://example.org/item/{i}", "http://example.org/") for i in range(1, 251)]
    assert reasons.count(None) == 200
    assert reasons[200:] == [TrapReason.PATTERN_BUDGET] * 50
    assert bounds.check("http://example.org/other/1", "http://example.org/") is None  # another pattern, its own budget


def test_asking_twice_for_a_kept_url_spends_no_budget() -> None:
    bounds = TrapBounds(pattern_budget=2)
    assert bounds.check("http://example.org/item/1", None) is None
    assert bounds.check("http://Example.org/item/1#x", None) is None
    assert bounds.check("http://example.org/item/2", None) is None
    assert bounds.check("http://example.org/item/3", None) == TrapReason.PATTERN_BUDGET
