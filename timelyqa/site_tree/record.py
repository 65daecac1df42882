"""The site-tree record: the common fields plus WebWalkerQA's own (root, source pages, click chains, type, domain)."""

from __future__ import annotations

from pydantic import field_validator, model_validator

from timelyqa.record import QARecord

TYPES = ("single_source", "multi_source")
DIFFICULTIES = ("easy", "medium", "hard")
DOMAINS = ("conference", "organization", "education", "game", "other")
"""WebWalkerQA's four domains, and `other` for a site that is none of them."""


class SiteTreeRecord(QARecord):
    """A question answered by facts on one or two pages of one website, found by clicking from its root."""

    root_url: str
    source_urls: list[str]
    golden_path: list[list[str]]
    """One click chain per source page, each from `root_url` to that page."""
    type: str
    difficulty: str
    domain: str
    language: str = "en"
    facts: str
    """JSON list of {"url", "label", "value"}: the facts the answer comes from, which a later crawl re-checks."""

    @model_validator(mode="after")
    def _paths(self) -> SiteTreeRecord:
        if len(self.golden_path) != len(self.source_urls):
            raise ValueError("golden_path needs one click chain per source page")
        for url, path in zip(self.source_urls, self.golden_path, strict=True):
            if not path or path[0] != self.root_url or path[-1] != url:
                raise ValueError(f"the click chain to {url} must run from {self.root_url} to it: {path}")
        return self

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        return _one_of(value, TYPES, "type")

    @field_validator("difficulty")
    @classmethod
    def _difficulty(cls, value: str) -> str:
        return _one_of(value, DIFFICULTIES, "difficulty")

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str) -> str:
        return _one_of(value, DOMAINS, "domain")


def _one_of(value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return value
