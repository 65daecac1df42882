"""The HTTP cache that lets a re-run read pages as they were, but never a robots.txt older than RFC 9309 allows."""

from __future__ import annotations

from time import time
from typing import TYPE_CHECKING

from scrapy.extensions.httpcache import FilesystemCacheStorage
from scrapy.utils.httpobj import urlparse_cached

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.http import Response

ROBOTS_MAX_AGE = 24 * 3600
"""RFC 9309 2.4: a crawler SHOULD NOT use a cached robots.txt for more than 24 hours."""


class CacheStorage(FilesystemCacheStorage):
    """Scrapy's filesystem cache (pages kept until asked `fresh`), except that a robots.txt stored more than
    ROBOTS_MAX_AGE ago is fetched again, so a re-run obeys the file as the host serves it today."""

    def retrieve_response(self, spider: Spider, request: Request) -> Response | None:
        if urlparse_cached(request).path == "/robots.txt":
            meta = self._read_meta(spider, request)
            if meta is None or time() - float(meta.get("timestamp", 0)) > ROBOTS_MAX_AGE:
                return None
        return super().retrieve_response(spider, request)
