"""The allow-list of outlets: the shipped one is the paper's, a file of one's own is checked line by line, a host
matches its outlet's domains and their subdomains only, and cited links are planned (fetched once, kept per event)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from spiders.guard import Refusal
from spiders.news import OutletGuard
from timelyqa.errors import ConfigError
from timelyqa.files import write_parquet
from timelyqa.news.frames import EVENT_SCHEMA, LINK_SCHEMA, event_id
from timelyqa.news.outlets import Outlets, archived, crawl_args, plan_links

FIGURE_4 = Path(__file__).parent / "fixtures" / "news" / "figure4.txt"
PAPER_TYPOS = {"washingtontpost.com": "washingtonpost.com", "justthene.ws.com": "justthenews.com",
               "washingtontexaminer.com": "washingtonexaminer.com", "newmax.com": "newsmax.com",
               "themocowtimes.com": "themoscowtimes.com", "telephragindia.com": "telegraphindia.com"}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "outlets.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_list_is_the_papers_figure_4_with_its_ocr_slips_fixed() -> None:
    shipped = Outlets.default()
    domains = [(d, o.paths) for o in shipped.outlets for d in o.domains]
    assert len(shipped.outlets) == len(domains) == 95
    assert {"apnews.com", "washingtonpost.com", "newsmax.com", "themoscowtimes.com", "abcnews.go.com",
            "asia.nikkei.com", "timesofindia.indiatimes.com", "mexiconewsdaily.com"} <= {d for d, _ in domains}
    assert not set(PAPER_TYPOS) & {d for d, _ in domains}
    assert ("spiegel.de", ("/international/",)) in domains and ("lemonde.fr", ("/en/",)) in domains
    assert {o.render for o in shipped.outlets} == {"never"}, "no browser needed for the shipped list"
    assert Path(shipped.source).name == "outlets.yaml" and Path(shipped.source).parent.name == "news"


def test_the_shipped_list_has_every_domain_the_seed_figure_prints() -> None:
    printed = [line.lstrip(".").split("/")[0] for line in FIGURE_4.read_text(encoding="utf-8").splitlines()
               if line.startswith(".")]
    assert len(printed) == 95
    shipped = [d for o in Outlets.default().outlets for d in o.domains]
    assert [PAPER_TYPOS.get(d, d) for d in printed] == shipped


@pytest.mark.parametrize(("url", "outlet"), [
    ("https://apnews.com/article/x", "Associated Press"),
    ("https://www.apnews.com/article/x", "Associated Press"),
    ("https://APNEWS.COM/article/x", "Associated Press"),
    ("https://notapnews.com/article/x", None),
    ("https://apnews.com.evil.example/article/x", None),
    ("https://www.spiegel.de/international/world/a-1.html", "Der Spiegel International"),
    ("https://www.spiegel.de/politik/a-1.html", None),
    ("https://www.lemonde.fr/en/international/article/x", "Le Monde in English"),
    ("https://www.lemonde.fr/international/article/x", None),
    ("https://timesofindia.indiatimes.com/india/x.cms", "The Times of India"),
    ("https://economictimes.indiatimes.com/news/x.cms", "The Economic Times"),
    ("https://indiatimes.com/x", None),
    ("ftp://apnews.com/x", None),
    ("mailto:tips@apnews.com", None),
    ("http://[::1", None),
])
def test_a_url_matches_its_outlets_domain_and_subdomains_only(url: str, outlet: str | None) -> None:
    found = Outlets.default().match(url)
    assert (found.name if found else None) == outlet


def test_the_most_specific_domain_wins(tmp_path: Path) -> None:
    outlets = Outlets.load(write(tmp_path, "outlets:\n"
                                 "  - {name: Times Group, domains: [indiatimes.com], render: never}\n"
                                 "  - {name: Economic Times, domains: [economictimes.indiatimes.com], render: auto}\n"))
    assert outlets.match("https://economictimes.indiatimes.com/x").name == "Economic Times"  # type: ignore[union-attr]
    assert outlets.match("https://www.indiatimes.com/x").name == "Times Group"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "says"), [
    ("outlets: [\n", "not a readable outlets file"),
    ("outlets: []\n", "give a non-empty list"),
    ("sources: [{name: A, domains: [a.org]}]\n", "give a non-empty list"),
    ("outlets:\n  - {name: AP, domains: [apnews.com], render: sometimes}\n",
     "outlet 1 (AP): render 'sometimes' is not one of never, always, auto"),
    ("outlets:\n  - {name: AP, domains: [apnews.com]}\n  - {name: CNN, domains: ['https://cnn.com']}\n",
     "outlet 2 (CNN): domain 'https://cnn.com': write the host name only, without a scheme"),
    ("outlets:\n  - {name: Spiegel, domains: [spiegel.de/international]}\n", "put a path in `paths`"),
    ("outlets:\n  - {name: Planet, domains: ['planet.example:0']}\n", "a port after a colon"),
    ("outlets:\n  - {name: AP, domain: [apnews.com]}\n", "outlet 1 (AP): unknown key domain"),
    ("outlets:\n  - {name: AP, domains: []}\n", "outlet 1 (AP): give a non-empty list of `domains`"),
    ("outlets:\n  - {domains: [apnews.com]}\n", "outlet 1: give the outlet a `name`"),
    ("outlets:\n  - {name: AP, domains: [apnews.com], paths: [en/]}\n", "path prefixes starting with /"),
    ("outlets:\n  - {name: AP, domains: [apnews.com]}\n  - {name: AP2, domains: [apnews.com]}\n",
     "domain apnews.com is 'AP''s already"),
])
def test_a_bad_outlets_file_is_one_line_naming_the_file_and_the_entry(tmp_path: Path, text: str, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        Outlets.load(path)
    message = str(caught.value)
    assert says in message and str(path) in message and "\n" not in message


def test_a_missing_outlets_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nowhere.yaml: not a readable outlets file"):
        Outlets.load(tmp_path / "nowhere.yaml")


def _events() -> pl.DataFrame:
    rows = [
        {"event_id": event_id("2026-05-04", "A quake."), "date": date(2026, 5, 4), "category": "Disasters",
         "topic": None, "summary": "A quake.", "page": "p", "revision": "1",
         "urls": ["https://apnews.com/article/quake", "https://quakeblog.example/post", "ftp://apnews.com/x",
                  " https://apnews.com/article/quake "],
         "outlets": ["AP", "Quake Blog", "AP FTP", "AP again"]},
        {"event_id": event_id("2026-05-06", "Aftershocks."), "date": date(2026, 5, 6), "category": "Disasters",
         "topic": "Quake", "summary": "Aftershocks.", "page": "p", "revision": "2",
         "urls": ["https://apnews.com/article/quake", "https://www.spiegel.de/politik/beben.html"],
         "outlets": ["AP", "Der Spiegel"]},
    ]
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")


def test_plan_links_keeps_allowed_links_per_event_and_drops_the_rest_with_reasons() -> None:
    events = _events()
    links, dropped = plan_links(events, Outlets.default())
    assert links.schema == LINK_SCHEMA
    first, second = events["event_id"].to_list()
    assert links.rows() == [
        ("https://apnews.com/article/quake", first, date(2026, 5, 4), "Associated Press", "never"),
        ("https://apnews.com/article/quake", second, date(2026, 5, 6), "Associated Press", "never"),
    ], "a URL cited by two events is a row for each (fetched once, judged by each event's window); twice by one: once"
    assert dropped.select("url", "event_id", "outlet", "reason").rows() == [
        ("https://quakeblog.example/post", first, "Quake Blog", "outlet_not_allowed"),
        ("ftp://apnews.com/x", first, "AP FTP", "not_http"),
        ("https://www.spiegel.de/politik/beben.html", second, "Der Spiegel", "outlet_not_allowed"),
    ]
    assert "quakeblog.example/post is on no outlet of" in dropped["detail"][0]


def test_crawl_args_check_every_setting_before_any_work(tmp_path: Path) -> None:
    links, _ = plan_links(_events(), Outlets.default())
    write_parquet(links, tmp_path / "links.parquet")
    shipped = Path(Outlets.default().source)
    args = crawl_args(tmp_path / "links.parquet", shipped, archive="wayback")
    assert (args["render"], args["archive"], args["archive_base"]) == ("never", "wayback", "https://web.archive.org")
    with pytest.raises(ConfigError, match="--archive 'wayback_machine': one of none, wayback, archive_today"):
        crawl_args(tmp_path / "links.parquet", shipped, archive="wayback_machine")
    with pytest.raises(ConfigError, match="--archive-base 'web.archive.org': not an http"):
        crawl_args(tmp_path / "links.parquet", shipped, archive="wayback", archive_base="web.archive.org")
    with pytest.raises(ConfigError, match="nothing.parquet: not a links file"):
        crawl_args(tmp_path / "nothing.parquet", shipped)
    with pytest.raises(ConfigError, match="bad.yaml: not a readable outlets file"):
        crawl_args(tmp_path / "links.parquet", tmp_path / "bad.yaml")


def test_a_link_on_an_outlet_that_renders_asks_the_crawl_for_chromium(tmp_path: Path) -> None:
    path = write(tmp_path, "outlets:\n  - {name: AP, domains: [apnews.com], render: auto}\n")
    links, _ = plan_links(_events(), Outlets.load(path))
    write_parquet(links, tmp_path / "links.parquet")
    assert crawl_args(tmp_path / "links.parquet", path)["render"] == "auto"
    assert links["render"].unique().to_list() == ["auto"]


def test_archived_copies_are_addressed_as_each_archive_does() -> None:
    url, day = "https://apnews.com/article/quake?id=1", date(2026, 5, 4)
    assert archived(url, day, "wayback", "https://web.archive.org") == (
        "https://web.archive.org/web/20260504id_/https://apnews.com/article/quake?id=1")
    assert archived(url, day, "archive_today", "https://archive.ph") == (
        "https://archive.ph/newest/https://apnews.com/article/quake?id=1")
    assert archived(url, day, "none", "") == url


def test_the_crawls_guard_keeps_to_the_outlets_their_paths_and_the_archive(tmp_path: Path) -> None:
    outlets = Outlets.load(write(tmp_path, "outlets:\n"
                                 "  - {name: Planet, domains: ['127.0.0.2:8080'], render: never}\n"
                                 "  - {name: Spiegel, domains: [spiegel.de], paths: [/international/]}\n"
                                 "  - {name: Odd, domains: [0.0.1]}\n"))
    guard = OutletGuard(outlets, "127.0.0.6:8080")
    assert guard.refusal("http://127.0.0.2:8080/2026/05/04/a.html") is None, "a private host the operator named"
    assert guard.refusal("http://127.0.0.3:8080/a.html") == Refusal.OFF_SITE
    assert guard.refusal("http://127.0.0.2:8081/a.html") == Refusal.OFF_SITE, "the outlet's host on another port"
    assert guard.refusal("http://127.0.0.2/a.html") == Refusal.OFF_SITE, "nor on the default port"
    assert guard.refusal("http://www.spiegel.de:8080/international/a.html") == Refusal.OFF_SITE, "80 and 443 only"
    assert guard.refusal("http://www.spiegel.de/international/a.html") is None
    assert guard.refusal("https://www.spiegel.de/international/a.html") is None
    assert guard.refusal("https://www.spiegel.de/politik/a.html") == Refusal.PATH_NOT_ALLOWED
    assert guard.refusal("http://127.0.0.6:8080/web/20260504id_/https://www.spiegel.de/x") is None
    assert guard.refusal("http://127.0.0.6:9090/web/") == Refusal.OFF_SITE, "the archive is one host:port"
    # 127.0.0.1 ends in .0.0.1, so it is "under" the outlet's domain, but nobody named that loopback address
    assert guard.refusal("http://127.0.0.1/") == Refusal.PRIVATE_ADDRESS
    assert guard.refusal("mailto:desk@spiegel.de") == Refusal.NOT_HTTP
    assert "www.spiegel.de:443" in guard.hosts, "robots.txt of an outlet's host is asked, whatever its paths"
    assert "127.0.0.6:8080" in guard.hosts and "notspiegel.de:443" not in guard.hosts
    assert "127.0.0.2:8080" in guard.hosts and "127.0.0.2:8081" not in guard.hosts
    assert guard.may_be_private("127.0.0.2:8080") and not guard.may_be_private("127.0.0.2:8081")
    assert not guard.may_be_private("127.0.0.1:80"), "a subdomain of a named host is not named"


def test_an_outlets_host_on_another_port_is_on_no_outlet(tmp_path: Path) -> None:
    outlets = Outlets.load(write(tmp_path, "outlets:\n  - {name: Planet, domains: ['planet.example:8080']}\n"
                                 "  - {name: AP, domains: [apnews.com]}\n"))
    assert outlets.match("http://www.planet.example:8080/a").name == "Planet"  # type: ignore[union-attr]
    assert outlets.match("http://planet.example/a") is None
    assert outlets.match("https://apnews.com/a").name == "AP"  # type: ignore[union-attr]
    assert outlets.match("http://apnews.com:443/a").name == "AP"  # type: ignore[union-attr]
    assert outlets.match("https://apnews.com:8443/a") is None
