"""Which spider a crawl runs: one of `spiders/` by its name, or a source's own as "module:Class" (a package of its
own, outside `spiders/`), held to the settings every crawl shares.

Scrapy's loader (SPIDER_LOADER_CLASS) finds spiders by name in SPIDER_MODULES; this one also takes "module:Class",
imported in the crawl's own process. A spider may set its item pipelines and the pace a caller may tune
(spiders.settings.TUNABLE) in `custom_settings`, never robots.txt, the guard, the size limits or anything else that
keeps a crawl polite and safe; one that tries is refused before the crawl starts, naming the setting.
"""

from __future__ import annotations

import importlib

from scrapy import Spider
from scrapy.spiderloader import SpiderLoader as ScrapyLoader

from spiders.settings import TUNABLE

SPIDER_SETTINGS = frozenset({"ITEM_PIPELINES"}) | TUNABLE
"""What a spider's `custom_settings` may hold."""


def spider_problem(spider: type[Spider]) -> str | None:
    """Why `spider` may not run in a crawl of this project, or None."""
    if unknown := sorted(set(spider.custom_settings or {}) - SPIDER_SETTINGS):
        return (f"its custom_settings set {', '.join(unknown)}: a spider may set only "
                f"{', '.join(sorted(SPIDER_SETTINGS))}")
    if getattr(spider.update_settings, "__func__", None) is not Spider.update_settings.__func__:
        return "it overrides update_settings: a spider may not change the settings every crawl shares"
    return None


def load_spider(reference: str) -> type[Spider]:
    """The spider class `reference` ("module:Class") names; KeyError, in one line naming it, when there is none or
    it may not run."""
    module, _, name = reference.partition(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise KeyError(f"spider {reference}: does not load ({type(exc).__name__}: {exc})") from None
    if not (isinstance(found, type) and issubclass(found, Spider)):
        raise KeyError(f"spider {reference}: is a {type(found).__name__}, not a Scrapy Spider class")
    if problem := spider_problem(found):
        raise KeyError(f"spider {reference}: {problem}")
    return found


class SpiderLoader(ScrapyLoader):
    """Scrapy's loader, plus "module:Class" for a spider outside SPIDER_MODULES; either is checked the same way."""

    def load(self, spider_name: str) -> type[Spider]:
        if ":" in spider_name:
            return load_spider(spider_name)
        found = super().load(spider_name)
        if problem := spider_problem(found):
            raise KeyError(f"spider {spider_name}: {problem}")
        return found
