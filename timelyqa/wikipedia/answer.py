"""Answers on any date: a question's infobox value from the page's last revision at or before that moment.

The release stores each answer at `as_of` and this rule beside it (page, page id, infobox key, the
parser's name), so that anyone can answer the same question on another day from the revision
history: a dump (`answers_on`) or revisions fetched from the Action API (`resolve`), as DailyQA's
answer script does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from timelyqa.errors import ConfigError
from timelyqa.names import current_name
from timelyqa.stages import Dropped
from timelyqa.mediawiki.dump import DumpReader
from timelyqa.mediawiki.revisions import Source, revision_at
from timelyqa.wikipedia.infobox import PARSER, parse_infobox
from timelyqa.wikipedia.typed import Value


class HasText(Protocol):
    id: int
    timestamp: datetime
    text: str


@dataclass(frozen=True, slots=True)
class Rule:
    """How to answer a question on any date: this page's infobox value under this key."""

    page: str
    key: str
    page_id: int | None = None
    parser: str = PARSER

    def to_json(self) -> str:
        return json.dumps({"page": self.page, "page_id": self.page_id, "key": self.key, "parser": self.parser},
                          ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Rule:
        data = json.loads(text)
        if current_name(data.get("parser", PARSER)) != PARSER:  # rows released under a legacy spelling still read
            raise ConfigError(f"recompute rule made by parser {data['parser']!r}; this code is {PARSER!r}")
        return cls(page=data["page"], key=data["key"], page_id=data.get("page_id"))


def value_in(wikitext: str, key: str) -> str | None:
    """The key's value in one revision's infobox; None when the page has no infobox or no such key."""
    read = read_in(wikitext, key)
    return read.text if read else None


def read_in(wikitext: str, key: str) -> Value | None:
    """The key's value in one revision's infobox as the renderer read it (its text and kind of answer)."""
    box = parse_infobox(wikitext)
    return box.values.get(key) if box else None


def last_at_or_before(revisions: Iterable[HasText], when: datetime) -> HasText | None:
    return max((r for r in revisions if r.timestamp <= when), key=lambda r: (r.timestamp, r.id), default=None)


def resolve(revisions: Iterable[HasText], key: str, when: datetime) -> str | None:
    """The answer at `when` from a page's revisions (any order): only the revision that counts is parsed."""
    best = last_at_or_before(revisions, when)
    return None if best is None else value_in(best.text, key)


def answers_on(dump: Path, rules: Sequence[Rule], moments: Sequence[datetime], *,
               stood_on: dict[Rule, list[tuple[int, datetime] | None]] | None = None
               ) -> tuple[dict[Rule, list[str | None]], list[Dropped]]:
    """Every rule's answer at every moment as text (`values_on` says the rest)."""
    found, rejected = values_on(dump, rules, moments, stood_on=stood_on)
    return {rule: [None if v is None else v.text for v in values] for rule, values in found.items()}, rejected


def values_on(dump: Path, rules: Sequence[Rule], moments: Sequence[datetime], *,
              stood_on: dict[Rule, list[tuple[int, datetime] | None]] | None = None
              ) -> tuple[dict[Rule, list[Value | None]], list[Dropped]]:
    """Every rule's answer at every moment, as the renderer read it, in one streamed pass over a dump with revision
    history.

    A rule names its page by id when it has one (titles change), else by title. A page the dump lacks,
    or whose history could not be read whole, answers None; the reasons are in the rejects returned.
    `stood_on`, when given, tells that None apart from a key the page lacks: it receives, for each rule whose
    page the dump holds whole, the (id, timestamp) of the revision each answer stands on (None: none so early).
    """
    answers: dict[Rule, list[Value | None]] = {rule: [None] * len(moments) for rule in rules}
    by_id: dict[int, list[Rule]] = {}
    by_title: dict[str, list[Rule]] = {}
    for rule in rules:
        if rule.page_id is not None:
            by_id.setdefault(rule.page_id, []).append(rule)
        else:
            by_title.setdefault(rule.page, []).append(rule)
    reader = DumpReader(dump)
    for page in reader:
        wanted = by_id.get(page.id, []) + by_title.get(page.title, [])
        if not wanted:
            continue
        best: list[HasText | None] = [None] * len(moments)
        for rev in page.revisions:
            for i, moment in enumerate(moments):
                current = best[i]
                if rev.timestamp <= moment and (current is None or (rev.timestamp, rev.id) > (current.timestamp,
                                                                                               current.id)):
                    best[i] = rev
        if not page.complete:
            continue
        parsed = {rev.id: parse_infobox(rev.text) for rev in best if rev is not None}
        for rule in wanted:
            answers[rule] = [None if rev is None or parsed[rev.id] is None else parsed[rev.id].values.get(rule.key)
                             for rev in best]
            if stood_on is not None:
                stood_on[rule] = [None if rev is None else (rev.id, rev.timestamp) for rev in best]
    return answers, reader.rejected


def answer_at(source: Source, rule: Rule, when: datetime) -> str | None:
    """A released question's answer on any date, from the live wiki (`answers_on` does it from a dump)."""
    read = read_at(source, rule, when)
    return None if read is None else read.text


def read_at(source: Source, rule: Rule, when: datetime) -> Value | None:
    """The same answer as the renderer read it: its text and the kind of answer its markup makes."""
    rev = revision_at(source, rule.page_id if rule.page_id is not None else rule.page, when)
    return None if rev is None else read_in(rev.text, rule.key)
