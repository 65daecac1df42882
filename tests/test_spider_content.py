"""The crawl's content workers read pages exactly as the crawl's own process would, and a worker that fails costs no
page; a caller may change a crawl's pace, never what keeps it safe."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from spiders.content import ContentWorkers, read
from spiders.run import command
from tests.sites import tree_site
from timelyqa.errors import ConfigError

SITE = tree_site(12, fanout=3)
PAGES = [(f"http://127.0.0.1:9{path}", SITE.html(page)) for path, page in SITE.pages.items()]


@pytest.mark.slow  # starts Python processes
def test_workers_read_every_page_as_read_does() -> None:
    async def run() -> list[object]:
        workers = await ContentWorkers.start(2)
        try:
            return list(await asyncio.gather(*(workers.read(html, url, with_facts=True) for url, html in PAGES)))
        finally:
            await workers.close()

    answers = asyncio.run(run())
    assert answers == [read(html, url, with_facts=True) for url, html in PAGES]
    assert all(a["facts"] and a["title"] and "Identifier" in a["text"] for a in answers)  # type: ignore[index]


@pytest.mark.slow
def test_a_page_a_worker_fails_on_and_a_dead_worker_answer_none_and_cost_nothing_else() -> None:
    async def run() -> tuple[object, object, object, object]:
        workers = await ContentWorkers.start(1)
        (url, html), bad = PAGES[0], 12345  # not a page: reading it raises in the worker
        failed = await workers.read(bad, url, with_facts=True)  # type: ignore[arg-type]
        after = await workers.read(html, url, with_facts=False)  # the worker goes on
        workers.workers[0].proc.kill()
        await workers.workers[0].proc.wait()
        dead = await workers.read(html, url, with_facts=True)
        await workers.close()
        return failed, after, dead, await ContentWorkers([]).read(html, url, with_facts=True)

    failed, after, dead, none = asyncio.run(run())
    assert failed is None and dead is None and none is None  # the crawl then reads the page itself
    assert after == read(PAGES[0][1], PAGES[0][0], with_facts=False) and after["facts"] == []  # type: ignore[index]


def test_a_crawl_may_change_its_pace_never_its_safety(tmp_path: Path) -> None:
    args = {"roots": '["http://127.0.0.1:9/"]'}
    argv, _ = command("site_tree", args, tmp_path / "out", settings={"EXTRACT_WORKERS": 0,
                                                                      "AUTOTHROTTLE_TARGET_CONCURRENCY": 16})
    assert "EXTRACT_WORKERS=0" in argv and "AUTOTHROTTLE_TARGET_CONCURRENCY=16" in argv
    with pytest.raises(ConfigError, match="ROBOTSTXT_OBEY: not one a crawl may change"):
        command("site_tree", args, tmp_path / "out", settings={"ROBOTSTXT_OBEY": False})
