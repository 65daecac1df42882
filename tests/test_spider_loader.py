"""A crawl runs a spider of `spiders/` by name or a source's own as "module:Class" (spiders/loader.py), and no spider
may change the settings that keep a crawl polite and safe."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from spiders import settings as project_settings
from spiders.loader import SpiderLoader, load_spider
from spiders.run import crawl
from timelyqa.errors import SourceContractError
from timelyqa.localsite import LocalSite

SPIDERS = '''
from scrapy import Spider


class Polite(Spider):
    name = "polite"
    custom_settings = {"ITEM_PIPELINES": {}, "DOWNLOAD_DELAY": 0.1}


class Rude(Spider):
    name = "rude"
    custom_settings = {"ROBOTSTXT_OBEY": False, "DOWNLOADER_MIDDLEWARES": {}}


class Sneaky(Spider):
    name = "sneaky"

    @classmethod
    def update_settings(cls, settings):
        settings.set("ROBOTSTXT_OBEY", False, priority="spider")


NOT_A_SPIDER = 3
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of spiders outside `spiders/`, importable as a package of another distribution would be."""
    (tmp_path / "elsewhere_spiders.py").write_text(SPIDERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "elsewhere_spiders", raising=False)
    return "elsewhere_spiders"


def project() -> Settings:
    """The project's settings, as `scrapy crawl` reads them (its upper-case names)."""
    settings = Settings()
    settings.setmodule(project_settings)
    return settings.frozencopy()


def loader() -> SpiderLoader:
    return SpiderLoader.from_settings(project())


def test_a_spider_outside_spiders_loads_as_module_and_class(plugin: str) -> None:
    assert loader().load(f"{plugin}:Polite").name == "polite"
    assert load_spider(f"{plugin}:Polite").custom_settings == {"ITEM_PIPELINES": {}, "DOWNLOAD_DELAY": 0.1}


def test_the_project_spiders_load_by_name_as_before() -> None:
    found = loader()
    assert {found.load(name).name for name in ("site_tree", "news", "official")} == {"site_tree", "news", "official"}
    assert project_settings.SPIDER_LOADER_CLASS == "spiders.loader.SpiderLoader"


@pytest.mark.parametrize(("attr", "why"), [
    ("Rude", "its custom_settings set DOWNLOADER_MIDDLEWARES, ROBOTSTXT_OBEY: a spider may set only "),
    ("Sneaky", "it overrides update_settings"),
    ("NOT_A_SPIDER", "is a int, not a Scrapy Spider class"),
    ("Missing", "does not load (AttributeError"),
])
def test_a_spider_that_may_not_run_is_refused_in_one_line_naming_it(plugin: str, attr: str, why: str) -> None:
    with pytest.raises(KeyError) as caught:
        loader().load(f"{plugin}:{attr}")
    message = caught.value.args[0]
    assert message.startswith(f"spider {plugin}:{attr}: ") and why in message and "\n" not in message


def test_a_module_that_is_not_there_is_named() -> None:
    with pytest.raises(KeyError, match=r"spider no_such_module:Spider: does not load \(ModuleNotFoundError"):
        load_spider("no_such_module:Spider")


@pytest.mark.slow  # a Scrapy process
def test_a_crawl_of_a_refused_spider_fails_naming_why_and_fetches_nothing(plugin: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body><p>hello</p></body></html>", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the crawl's process finds the module as this one does
    with LocalSite(site) as served, pytest.raises(SourceContractError) as caught:
        crawl(f"{plugin}:Rude", {"root": served.url}, tmp_path / "crawl")
    assert "crawl elsewhere_spiders:Rude wrote no stats" in str(caught.value)
    assert "ROBOTSTXT_OBEY" in str(caught.value)
