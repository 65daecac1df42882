"""Released Wikipedia rows asked again: each row's recompute rule at the run's end, on the input the week reads.

A row holds while its page's infobox still gives its key the stored answer at the run's end (the last revision
at or before it, as `resolve` answers any date). Otherwise it is rejected at stage `refresh` with why (another
value, the key gone, the page gone), which retires it from the next release (publish/release.py); a change inside
the week's window enters that week as a new row of its own. A page the input does not hold (an export of other
pages, a history that could not be read whole) gives no verdict: the row carries, counted as not re-checked.
The ids that hold go to `rechecked.parquet`.
"""

from __future__ import annotations

import re

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl

from timelyqa import sources
from timelyqa.errors import ConfigError
from timelyqa.reasons import Dropped, Reason
from timelyqa.manifest import RECHECKED
from timelyqa.refresh import NO_VERDICT, REFRESH, Check, Verdict, refresh, verdicts
from timelyqa.stages import StageWriter
from timelyqa.wikipedia.answer import Rule, answers_on
from timelyqa.mediawiki.revisions import PageUnavailable, revision_at
from timelyqa.mediawiki.client import ApiError, ApiSettings, MediaWikiAPI
from timelyqa.wikipedia.infobox import parse_infobox
from timelyqa.wikipedia.options import Source


class RefreshReject(Reason):
    ANSWER_CHANGED = ("answer_changed", "a released row's page now gives its infobox key another value: the row is "
                      "retired (a change inside the window is asked about in a new row)")
    KEY_GONE = ("key_gone", "a released row's page no longer has its infobox key (or no infobox): the row is retired")
    PAGE_GONE = ("page_gone", "a released row's page is gone from the wiki (deleted, or its id or title no longer "
                 "valid): the row is retired")
    RECHECK_FAILED = ("recheck_failed", "a released row's check raised an error (the detail names it): the row is "
                      "retired, since it can no longer be checked")


@dataclass(frozen=True, slots=True)
class Seen:
    """What the input says of a rule's page at the moment: the key's value (None: not in the infobox) and the
    revision it stands on; or that the page is gone (`gone` holds why)."""

    value: str | None = None
    revision: int | None = None
    timestamp: datetime | None = None
    gone: str | None = None


def seen_in_dump(dump: Path, rules: list[Rule], when: datetime) -> dict[Rule, Seen]:
    """Each rule's page at `when` in one streamed pass over an export; a rule whose page the export does not hold
    whole, or holds only after `when`, is left out (no verdict)."""
    stood_on: dict[Rule, list[tuple[int, datetime] | None]] = {}
    found, _ = answers_on(dump, rules, [when], stood_on=stood_on)  # unreadable pages: the week's read rejects them
    return {rule: Seen(found[rule][0], *rev) for rule, (rev,) in stood_on.items() if rev is not None}


def seen_on_api(api: MediaWikiAPI, rules: list[Rule], when: datetime) -> dict[Rule, Seen]:
    """Each rule's page at `when` from the live wiki, one request a page (rules on one page share it), as many in
    flight as the client allows; a page the API answers an error for is left out (its rows get no verdict).
    TransientSourceError propagates: the run fails and is retried, and no row is retired for the API's bad minute."""
    pages = sorted({_ref(rule) for rule in rules}, key=str)

    def look(ref: int | str) -> tuple[dict[str, str], Seen] | str | None:
        """(the infobox's fields, the revision) at `when`; why the page is gone; or None (no verdict)."""
        try:
            rev = revision_at(api, ref, when, gone_ok=False)
        except PageUnavailable as exc:
            return str(exc)
        except ApiError:
            return None  # an answer about this request, not about the page's facts: its rows carry
        if rev is None:  # no revision so early: the wiki's history does not cover the moment
            return None
        box = parse_infobox(rev.text)
        return (dict(box.fields) if box else {}), Seen(None, rev.id, rev.timestamp)

    with ThreadPoolExecutor(max_workers=api.settings.concurrency, thread_name_prefix="refresh") as pool:
        looked = dict(zip(pages, pool.map(look, pages), strict=True))
    seen: dict[Rule, Seen] = {}
    for rule in rules:
        page = looked[_ref(rule)]
        if isinstance(page, str):
            seen[rule] = Seen(gone=page)
        elif page is not None:
            fields, at = page
            seen[rule] = Seen(fields.get(rule.key), at.revision, at.timestamp)
    return seen


def judge(row: dict, rule: Rule, seen: Seen, when: datetime) -> Dropped | None:
    """None when the page still gives the row's stored answer at `when`; else the reject that retires the row."""
    where = f"released row {row['id']}: page {rule.page!r} (id {rule.page_id})"
    if seen.gone is not None:
        return Dropped(_item(row), RefreshReject.PAGE_GONE, f"{where} is gone at {when.isoformat()}: {seen.gone}")
    at = f"revision {seen.revision} ({seen.timestamp.isoformat() if seen.timestamp else '?'})"
    if seen.value is None:
        return Dropped(_item(row), RefreshReject.KEY_GONE,
                       f"{where}: {at}, the last at or before {when.isoformat()}, has no {rule.key!r} in its infobox")
    if _norm(seen.value) == _norm(row["answer"]):  # the same comparison as the week's correctness check
        return None
    if _norm(re.sub(r"\s*\([^()]*\)$", "", seen.value)) == _norm(row["answer"]):
        return None  # a name released without its party or role (typed.py): it holds while the name does
    return Dropped(_item(row), RefreshReject.ANSWER_CHANGED,
                   f"{where}: {at}, the last at or before {when.isoformat()}, gives {rule.key} = {seen.value!r}, "
                   f"not {row['answer']!r}")


def looked_up(rows: pl.DataFrame, source: Source, when: datetime) -> tuple[Check, dict]:
    """The week's input read once for the pages of every released row's rule (one pass over an export, or one
    request a page, as many in flight as the client allows), and the check of a row against what it says at
    `when`; with the API's usage. `source` is the week's input: the export or dump it reads, or the API's settings.
    A row whose rule this code cannot apply (another parser's), or whose page the input does not hold, gets no
    verdict: it carries."""
    rules: dict[str, Rule] = {}
    for row_id, recompute in rows.select("id", "recompute").iter_rows():
        try:
            rules[row_id] = Rule.from_json(recompute)
        except (ConfigError, ValueError, KeyError, TypeError):
            continue
    wanted = sorted(set(rules.values()), key=lambda r: (str(r.page_id), r.page, r.key))
    usage: dict = {}
    if isinstance(source, ApiSettings):
        with MediaWikiAPI(source) as api:
            api.check()
            seen = seen_on_api(api, wanted, when)
            usage = dict(api.usage)
    else:
        seen = seen_in_dump(Path(source), wanted, when)

    def check_row(row: dict) -> Verdict:
        rule = rules.get(row["id"])
        if rule is None or rule not in seen:
            return NO_VERDICT
        return judge(row, rule, seen[rule], when)

    return check_row, usage


def refresh_rows(rows: pl.DataFrame, source: Source, when: datetime) -> tuple[list[str], list[Dropped], int, dict]:
    """(the ids that hold, a reject for each that does not, how many rows got no verdict, the API's usage), in id
    order: what `refresh_released` writes."""
    check_row, usage = looked_up(rows, source, when) if rows.height else (_no_row, {})
    done = verdicts(rows, check_row, failed=RefreshReject.RECHECK_FAILED, item=_item)
    return done.kept, done.rejected, done.unchecked, usage


def refresh_released(rows: pl.DataFrame, source: Source, workdir: Path, when: datetime) -> Path:
    """The stage `refresh` of a run: the released rows asked of the week's input at `when`; counts `rechecked`
    (rows given a verdict), `still_true` and `not_rechecked`, rejects the rest, and writes the ids that hold to
    `workdir/rechecked.parquet` (finish_refresh puts it beside the questions)."""
    # The entry is found by name: it imports this module's reasons, so this module never imports it.
    ledger = StageWriter.part(sources.get("wikipedia"), workdir)
    with ledger.timed(REFRESH):
        check_row, usage = looked_up(rows, source, when) if rows.height else (_no_row, {})
    refresh(rows, check_row, ledger, failed=RefreshReject.RECHECK_FAILED, into=workdir, item=_item)
    ledger.use(usage)
    ledger.save(REFRESH)
    return workdir / RECHECKED


def _no_row(row: dict) -> Verdict:
    """The check when there are no released rows: the input is not read for nothing (never called)."""
    return NO_VERDICT


def _ref(rule: Rule) -> int | str:
    """How the wiki names the rule's page: its id when the rule has one (titles change), else its title."""
    return rule.page_id if rule.page_id is not None else rule.page


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _item(row: dict) -> dict[str, str]:
    return {"id": row["id"], "question": row["question"], "answer": row["answer"], "recompute": row["recompute"]}
