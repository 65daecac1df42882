"""A page's content as the site-tree crawl keeps it: read after the crawl by its extraction stage
(timelyqa/site_tree/extract.py), no longer during it; `read` is named here too for the callers that read a page the
way the crawl's pages are read."""

from timelyqa.site_tree.content import Content, read

__all__ = ["Content", "read"]
