"""What a site-tree record carries from its pages: the id, evidence, click chains, and the fact found again."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from timelyqa.answers import Typed
from timelyqa.record import Evidence, Verification, record_id
from timelyqa.site_tree.facts import extract_facts
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.site_tree.tree import Located, norm

SOURCE = "site_tree"
VERIFY_METHOD = "page_fact"


def fetched(value: str | datetime | None) -> datetime | None:
    """A page's `fetched_at` (ISO text as the crawl writes it, or a datetime) as an aware datetime."""
    if value is None or value == "":
        return None
    when = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def refound(page: Mapping[str, Any], fact: Located) -> bool:
    """The fact is on the stored page once more: read again from its `html` by the same parser when the crawl kept
    the HTML, else its value in the page's extracted `text` (or `markdown`); a page with neither proves nothing."""
    if html := page.get("html"):
        return (norm(fact.label), norm(fact.value)) in _facts_of(html)
    text = page.get("text") or page.get("markdown")
    return bool(text) and norm(fact.value) in norm(text)


@lru_cache(maxsize=64)
def _facts_of(html: str) -> frozenset[tuple[str, str]]:
    return frozenset((norm(f.label), norm(f.value)) for f in extract_facts(html))


def facts_json(facts: Sequence[Located]) -> str:
    """The facts an answer comes from, as a later crawl re-checks them (`refresh.recheck`)."""
    return json.dumps([{"url": f.url, "label": f.label, "value": f.value} for f in facts], ensure_ascii=False)


def make_record(facts: Sequence[Located], *, question: str, answer: Typed, type: str,
                difficulty: str, generator: str, pages: Mapping[str, Mapping[str, Any]],
                paths: Mapping[str, list[str]], domain: str, language: str) -> SiteTreeRecord:
    """A record from the facts (one per source page) that answer `question` with the typed `answer`; the pages are
    the crawl's rows."""
    root = facts[0].root
    rows = [pages[f.url] for f in facts]
    when = max(t for row in rows if (t := fetched(row["fetched_at"])) is not None)
    # the id hangs on where the facts are and what they say, in a fixed order: the same facts, the same id
    defining = sorted(f"{f.url}\x1e{f.label}\x1e{f.value}" for f in facts)
    locations = [{"url": f.url, "label": f.label, "kind": f.kind} for f in facts]
    return SiteTreeRecord(
        id=record_id(SOURCE, root, type, *defining), question=question, **answer.fields(),
        source=SOURCE, level=difficulty, event_date=when.date(), as_of=when,
        evidence=[Evidence(url=f.url, title=row.get("title") or f.subject, fetched_at=fetched(row["fetched_at"]),
                           sha256=row.get("sha256")) for f, row in zip(facts, rows, strict=True)],
        verification=Verification(method=VERIFY_METHOD, query=json.dumps(locations, ensure_ascii=False),
                                  endpoint=root, result_count=len(facts), passed=True),
        generator=generator, root_url=root, source_urls=[f.url for f in facts],
        golden_path=[paths[f.url] for f in facts], type=type, difficulty=difficulty, domain=domain,
        language=language, facts=facts_json(facts))
