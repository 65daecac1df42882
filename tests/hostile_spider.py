"""The site-tree spider as a crawl of hosts that came from data would hold it (run with `scrapy runspider`): its
roots are the operator's, `data_hosts` are allowed but not named, so they may be public addresses only. At the end it
writes every stat and what the browser's proxy refused (`all_stats.json`, `proxy_refused.json`) into `out`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spiders.browser import BrowserPolicy
from spiders.guard import HostGuard
from spiders.site_tree import SiteTreeSpider


class HostileSiteTreeSpider(SiteTreeSpider):
    name = "hostile_site_tree"

    def __init__(self, *args: Any, data_hosts: str = "[]", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.guard = HostGuard.of(self.roots, allow_hosts=json.loads(data_hosts), named_private=self.roots)

    def closed(self, reason: str) -> None:
        out = Path(self.out)
        (out / "all_stats.json").write_text(json.dumps(self.crawler.stats.get_stats(), default=str), encoding="utf-8")
        policy = [e for e in self.crawler.extensions.middlewares if isinstance(e, BrowserPolicy)]
        refused = policy[0].proxy.refused if policy else []
        (out / "proxy_refused.json").write_text(json.dumps(refused), encoding="utf-8")
