"""The template generator's run over a day's events: each event's candidates, from its articles' facts
(`timelyqa.news.facts`) and from spans of its summary (`timelyqa.news.questions`), through the duplicate check and
the gate, and the first an article states kept as the event's question; every drop with a reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import polars as pl

from timelyqa.errors import SourceContractError
from timelyqa.llm.check import normalize, sub_match
from timelyqa.news import facts
from timelyqa.news.frames import ARTICLE_SCHEMA, EVENT_SCHEMA
from timelyqa.news.gate import RULES, gate_row
from timelyqa.news.questions import (ANSWERED, GENERATOR, STABLE, ArticleCheckReject, Masked, TemplateReject,
                                     Written, article_groups, masks, news_record)
from timelyqa.quality import GATE_PASSED, Gate
from timelyqa.record import Verification
from timelyqa.site_tree.tree import seeded_key
from timelyqa.stages import Dropped


def template_questions(events: pl.DataFrame, articles: pl.DataFrame, *, seed: int = 0) -> Written:
    """One question an event, from a span of its summary that one of its articles states; every drop with a reason."""
    for frame, schema, name in ((events, EVENT_SCHEMA, "events"), (articles, ARTICLE_SCHEMA, "articles")):
        if missing := [c for c in schema if c not in frame.columns]:
            raise SourceContractError(f"the {name} lack the columns {', '.join(missing)}")
    by_event = article_groups(articles)
    out = Written([], [], Counter())
    seen: set[str] = set()
    for event in events.sort("date", "event_id").to_dicts():
        out.counts["events_read"] += 1
        kept = by_event.get(event["event_id"], [])
        if not kept:
            out.rejected.append(Dropped(event_item(event), TemplateReject.NO_ARTICLE, f"{event['event_id']}: "
                                        f"no article kept of {len(event['urls'] or [])} cited link(s)"))
            continue
        out.counts["events_with_articles"] += 1
        _event(event, kept, out, seen, seed=seed)
    return out


def _event(event: dict[str, Any], kept: list[dict[str, Any]], out: Written, seen: set[str], *, seed: int) -> None:
    """The event's candidates through the duplicate check and the gate, then tried in order (the article's facts
    first, then tier, then seeded) against its articles: the first whose answer an article states is the event's
    question. A span of the summary passes the gate only when no fact of the article did (`summary_answers`)."""
    day: date = event["date"]
    texts = [a["text"] for a in kept if a["text"]]
    told = facts.article_masks(event, texts)
    found = masks(event["summary"], day, texts)
    out.counts["candidates"] += len(told) + len(found)
    if not told and not found:
        out.rejected.append(Dropped(event_item(event), TemplateReject.NO_MASKABLE_SPAN,
                                    f"{event['event_id']}: {event['summary']}"))
        return
    gate = Gate(RULES)
    gated: list[tuple[int, Masked]] = []
    for rank, batch in enumerate((told, found)):
        stated = [m.answer for _, m in gated]  # the article's facts that passed: a summary span is no question then
        for m in batch:
            item = {**event_item(event), "question": m.question, "answer": m.answer, "level": m.level}
            row = gate_row(event, m.question, m.answer_fields(), articles=kept, facts=stated)
            if normalize(m.question) in seen:
                out.rejected.append(Dropped(item, TemplateReject.DUPLICATE_QUESTION, f"asked before: {m.question}"))
            elif (sent_back := gate.check(row)) is None:
                gated.append((rank, m))
            else:
                out.rejected.append(Dropped(item, sent_back.reason, sent_back.detail))
    out.counts[GATE_PASSED] += gate.passed
    order = [m for _, m in sorted(gated, key=lambda g: (g[0], g[1].tier,
                                                         seeded_key(seed, event["event_id"], g[1].question)))]
    for tried, m in enumerate(order, 1):
        out.counts["candidates_tried"] += 1
        stating = [a for a in kept if a["text"] and sub_match(a["text"], m.answer)]
        if not stating:
            item = {**event_item(event), "question": m.question, "answer": m.answer, "level": m.level}
            out.rejected.append(Dropped(item, ArticleCheckReject.ANSWER_NOT_IN_ARTICLE,
                                        f"{m.answer!r} in none of the {len(kept)} article(s): {m.question}"))
            continue
        seen.add(normalize(m.question))
        out.counts["candidates_not_tried"] += len(order) - tried
        article = stating[0]
        verification = Verification(method="article-match", query=m.answer, endpoint=article["url"],
                                    result_count=len(stating), passed=True)
        out.records.append(news_record(event, article, question=m.question, answer=m.answer_fields(),
                                       level=m.level, generator=GENERATOR, verification=verification,
                                       stability=STABLE))
        out.counts[ANSWERED] += 1
        return


def event_item(event: Mapping[str, Any]) -> dict[str, Any]:
    return {"event_id": event["event_id"], "date": str(event["date"]), "summary": event["summary"]}
