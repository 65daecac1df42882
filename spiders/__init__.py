"""Scrapy spiders, their settings and item pipelines (the crawling sources land here)."""
