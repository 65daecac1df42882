"""The crawl's clock: the moment each page's `fetched_at` records.

Live crawls stamp the real clock. A run dated by its inputs (`timelyqa demo`) starts its crawls inside
`timelyqa.clock.fixed`, and the crawl process reads that moment from the environment it inherits, so the same
inputs give the same rows, ids, splits and release version on any day. Stamps are taken where no crawler is at
hand (the spiders' item helpers, a pipeline's close), which is why the moment comes from the environment and not
from a Scrapy setting.
"""

from __future__ import annotations

from timelyqa import clock


def fetched_at() -> str:
    """Now, as the crawl's clock says, in ISO 8601 with its UTC offset (what every spider's items carry)."""
    return clock.now().isoformat()
