"""What a site-tree run is told, parsed once: `timelyqa crawl site-tree` and `timelyqa site-tree` build it from their
options, the site-tree flow from its parameters; each value has one default and one check here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from timelyqa import checks
from timelyqa.crawling import Crawl, check_roots
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.settings import Settings
from timelyqa.site_tree import pipeline
from timelyqa.site_tree.llm import llm_site_writer
from timelyqa.useragent import user_agent


class SiteTreeRequest(Settings):
    """A crawl of `roots` (or of the bundled `site`, served for the run) into pages and a click graph, and questions
    by click depth from it; or, with `crawl`, questions from a crawl already finished."""

    out: checks.OutFolder
    """The command's `--out` (the crawl's folder, or the questions'); the flow's run folder (crawl in out/crawl)."""
    roots: list[str] | None = None
    site: Path | None = None
    crawl: Path | None = None
    max_depth: int = Field(default=4, ge=0, description="most clicks from a root")
    max_pages: int = Field(default=1000, ge=1, description="most pages requested (a site, in the flow)")
    allow_paths: list[str] = Field(default_factory=list, description="regexes a path must match")
    render: Literal["auto", "never", "always"] = "auto"
    fresh: bool = False
    domain: str = "other"
    seed: int = 0
    generator: Literal["template", "llm"] = "template"
    previous: Path | None = None
    llm_secret_block: str | None = None
    dask_address: str | None = None
    shard_prefixes: list[str] = Field(default_factory=list, description="path prefixes a site is split by, a shard "
                                      "each (`/docs/`, or `http://host:port/docs/` for one of several sites)")

    @field_validator("roots")
    @classmethod
    def _roots(cls, roots: list[str] | None) -> list[str] | None:
        return None if roots is None else [checks.http_url(root, "--root") for root in roots]

    @field_validator("previous")
    @classmethod
    def _previous(cls, previous: Path | None) -> Path | None:
        # A release folder not there yet is the flow's first month (nothing to re-check); one that is there must
        # hold a release or an earlier output.
        return checks.previous_folder(previous) if previous is not None and previous.exists() else previous

    @model_validator(mode="after")
    def _one_input(self) -> SiteTreeRequest:
        if self.crawl is None and (self.roots is None) == (self.site is None):
            raise ConfigError("give roots (a list of URLs) or site (a folder to serve), one of them")
        if self.shard_prefixes and self.allow_paths:
            raise ConfigError("--shard-prefix and --allow-path: give one (each shard's paths are its prefix)")
        return self

    @property
    def settings(self) -> pipeline.Settings:
        """What shapes the questions, as the manifest records it."""
        return pipeline.Settings(domain=self.domain, seed=self.seed, generator=self.generator)

    def crawl_args(self, roots: list[str]) -> dict[str, Any]:
        """The site_tree spider's arguments for `roots` (the request's, or the bundled site's URL)."""
        return {"roots": json.dumps(roots), "max_depth": self.max_depth, "max_pages": self.max_pages,
                "allow_paths": json.dumps(self.allow_paths), "render": self.render}


def crawl_site(request: SiteTreeRequest, *, crawl: Crawl) -> dict[str, Any]:
    """`timelyqa crawl site-tree`: the roots answer, then one crawl of them into `out`; its stats."""
    roots = request.roots or []
    check_roots(roots, user_agent=user_agent())
    return crawl("site_tree", request.crawl_args(roots), request.out, fresh=request.fresh)


def questions(request: SiteTreeRequest) -> Manifest:
    """`timelyqa site-tree`: questions by click depth from the finished crawl `crawl` into `out`."""
    if request.crawl is None:
        raise ConfigError("give --crawl, a finished `timelyqa crawl site-tree` folder")
    if request.previous is not None:  # typed by a person: a folder not there is a mistake, not a first month
        checks.previous_folder(request.previous, "--previous")
    settings = request.settings
    pipeline.check_crawl(request.crawl)
    writer = llm_site_writer(cache_dir=request.out / "llm-cache") if settings.generator == "llm" else None
    return pipeline.run(request.crawl, request.out, settings, writer=writer, previous=request.previous)
