"""Verified repair of a broken recipe (RT-QA section 3.3): a model proposes a new extract from the live page, and
the proposal is accepted only if it reproduces the last good answer on the pages stored then and reads a valid value
live; otherwise it is held for review. Every repair is recorded with both pages' hashes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from timelyqa.llm import prompts
from timelyqa.llm.client import LLM
from timelyqa.official.bounded import shared_reader
from timelyqa.official.extract import Fail, Value
from timelyqa.official.recipe import Extract, Recipe, RecipeError, dump_recipe, recipe_of
from timelyqa.official.typed import declared
from timelyqa.reasons import Reason

PROMPT = "rtqa/recipe_repair"
PAGE_CHARS = 24_000
"""The live page's share of the prompt, in characters after trimming: a page past it is cut, and says so."""
MIN_LITERAL = 3
"""A good answer shorter than this (a "2") sits in selectors by chance (nth-child(2)); longer, it is a hard-coding."""

Status = Literal["accepted", "held"]


class RepairHeld(Reason):
    """Why a proposed repair was held for review instead of accepted."""

    NO_PROPOSAL = "no_proposal", "the model gave no repair: its reply was not the JSON asked for (the detail says how)"
    PROPOSAL_INVALID = "proposal_invalid", "the proposed extract is not valid in format v1 (the detail names the field)"
    PROPOSAL_UNCHANGED = "proposal_unchanged", "the model proposed the very extract that fails"
    GOOD_PAGES_MISSING = ("good_pages_missing",
                          "a page of the last good resolution is not in the page store: the proposal cannot be checked")
    LIVE_PAGES_MISSING = "live_pages_missing", "a live page is not in the page store: there is nothing to repair from"
    NOT_REPRODUCED = ("good_answer_not_reproduced",
                      "on the pages stored at the last good resolution the proposal does not give the answer of then")
    LIVE_INVALID = ("live_value_invalid",
                    "on the live pages the proposal gives no valid value (nothing matched, or not of its type/range)")
    TYPE_CHANGED = ("answer_type_changed", "the proposal changes the answer's type (a number read as text): its "
                    "rows would be graded another way")
    HARD_CODED = ("hard_coded_value",
                  "the proposed selector or regex holds the answer itself, a fallback RT-QA forbids (appendix A.2)")


@dataclass(frozen=True)
class Good:
    """The last good resolution of a recipe: its answer text and the stored copies of the pages it read."""

    answer: str
    page_sha256s: list[str]
    at: datetime


@dataclass(frozen=True)
class Proposal:
    """The model's proposal: a valid Extract with its diagnosis, or the reason there is none."""

    extract: Extract | None
    diagnosis: str
    raw: dict[str, Any] | None  # what the model wrote, kept for review even when it is not a valid extract
    reason: RepairHeld | None
    detail: str
    model: str
    prompt_id: str


@dataclass(frozen=True)
class Verdict:
    """The check of a proposal against the stored good pages and the live ones."""

    status: Status
    reason: RepairHeld | None
    detail: str
    answer_on_good: str | None
    live_answer: str | None


@dataclass(frozen=True)
class Repair:
    """One repair attempt, as recorded in repairs.jsonl."""

    recipe_id: str
    status: Status
    reason: str  # a RepairHeld value, "" when accepted
    detail: str  # one line
    diagnosis: str
    old_extract: dict[str, Any]
    new_extract: dict[str, Any] | None
    good_pages: list[str]  # sha256s of the page copies stored at the last good resolution
    live_pages: list[str]  # sha256s of the live pages the failure was seen on
    good_answer: str
    good_at: datetime
    answer_on_good: str | None
    live_answer: str | None
    failure: str  # the failure that sent the recipe here: "<reason>: <detail>"
    model: str
    prompt_id: str
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def to_json(self) -> str:
        row = asdict(self)
        row["good_at"], row["at"] = self.good_at.isoformat(), self.at.isoformat()
        return json.dumps(row, ensure_ascii=False, sort_keys=False)


class PageSource(Protocol):
    """What repair needs of the page store (timelyqa.official.pages.PageStore is one)."""

    def get(self, sha256: str) -> str | None: ...


_DROP = re.compile(r"<(script|style|noscript|svg|template)\b.*?</\1\s*>|<!--.*?-->|<(?:meta|link)\b[^>]*>",
                   re.IGNORECASE | re.DOTALL)
_SPACE = re.compile(r"\s+")
_BETWEEN_TAGS = re.compile(r">\s+<")


def trim_html(html: str, cap: int = PAGE_CHARS) -> str:
    """The page as a model reads it: no scripts, styles, comments or metadata, spaces collapsed, cut at `cap`."""
    text = _BETWEEN_TAGS.sub("><", _SPACE.sub(" ", _DROP.sub("", html))).strip()
    return text if len(text) <= cap else text[: max(cap - 6, 0)] + " [...]"


def propose(llm: LLM, recipe: Recipe, failure: Fail, live_html: str, *, page_chars: int = PAGE_CHARS) -> Proposal:
    """One call of the ported repair prompt: the question, the recipe, how it failed, and the live page."""
    prompt = prompts.get(PROMPT)
    reply = llm.ask(prompt, {"question": recipe.question, "recipe": dump_recipe(recipe).strip(),
                             "reason": str(failure.reason), "detail": failure.detail,
                             "page": trim_html(live_html, page_chars)})
    if not reply.ok:
        return Proposal(None, "", None, RepairHeld.NO_PROPOSAL, f"{reply.reason}: {reply.detail}", reply.model,
                        reply.prompt_id)
    out = reply.value
    raw = out.extract.model_dump()
    try:  # checked as a whole recipe: a new type must still suit the recipe's combine, round, unit and valid
        extract = with_extract(recipe, raw).extract
    except RecipeError as exc:
        return Proposal(None, out.diagnosis, raw, RepairHeld.PROPOSAL_INVALID, str(exc), reply.model,
                        reply.prompt_id)
    return Proposal(extract, out.diagnosis, raw, None, "", reply.model, reply.prompt_id)


def judge(recipe: Recipe, new: Extract, *, good_pages: Sequence[str], good_answer: str,
          live_pages: Sequence[str]) -> Verdict:
    """Accepted only if `new` gives `good_answer` on the stored good pages and a valid value on the live ones."""
    if _same(new, recipe.extract):
        return Verdict("held", RepairHeld.PROPOSAL_UNCHANGED, "the proposal is the recipe's current extract",
                       None, None)
    try:
        repaired = with_extract(recipe, new)
    except RecipeError as exc:
        return Verdict("held", RepairHeld.PROPOSAL_INVALID, str(exc), None, None)
    if (was := declared(recipe)) != (now := declared(repaired)):  # the same text, but the same answer no more
        return Verdict("held", RepairHeld.TYPE_CHANGED, f"the answer would be of type {now}, not {was}", None, None)
    # a model's proposal is read as a stranger's recipe is: in the bounded worker (timelyqa.official.bounded)
    on_good = shared_reader().evaluate(repaired, list(good_pages))
    good_text = on_good.text if isinstance(on_good, Value) else None
    live = shared_reader().evaluate(repaired, list(live_pages))
    live_text = live.text if isinstance(live, Value) else None
    if literal := _hard_coded(new, [good_answer, *([live_text] if live_text else [])], recipe.unit):
        return Verdict("held", RepairHeld.HARD_CODED, f"{literal!r} is written into the extract", good_text,
                       live_text)
    if good_text != good_answer:
        said = f"gives {good_text!r}" if good_text is not None else f"fails ({_fail(on_good)})"
        return Verdict("held", RepairHeld.NOT_REPRODUCED, f"on the stored good pages it {said}, not {good_answer!r}",
                       good_text, live_text)
    if live_text is None:
        return Verdict("held", RepairHeld.LIVE_INVALID, f"on the live pages it fails ({_fail(live)})", good_text, None)
    return Verdict("accepted", None, f"reproduces {good_answer!r} on the stored good pages and reads {live_text!r} "
                                     "live", good_text, live_text)


def repair(llm: LLM, recipe: Recipe, failure: Fail, live_pages: Sequence[str], good: Good, store: PageSource, *,
           page_chars: int = PAGE_CHARS, now: datetime | None = None) -> Repair:
    """Propose, judge and describe one repair; pages are sha256s of copies in `store` (live ones from the crawl)."""
    at = now or datetime.now(UTC)
    base = {"recipe_id": recipe.id, "old_extract": _plain(recipe.extract), "good_pages": list(good.page_sha256s),
            "live_pages": list(live_pages), "good_answer": good.answer, "good_at": good.at,
            "failure": f"{failure.reason}: {failure.detail}", "at": at}
    live_html = [store.get(sha) for sha in live_pages]
    good_html = [store.get(sha) for sha in good.page_sha256s]
    # Both checks before the call: a proposal that cannot be checked is not worth paying for.
    missing = _missing(live_pages, live_html) or ("no live page" if not live_pages else "")
    if missing:
        return Repair(**base, status="held", reason=str(RepairHeld.LIVE_PAGES_MISSING), detail=missing, diagnosis="",
                      new_extract=None, answer_on_good=None, live_answer=None, model="", prompt_id="")
    missing = _missing(good.page_sha256s, good_html) or ("no good page" if not good.page_sha256s else "")
    if missing:
        return Repair(**base, status="held", reason=str(RepairHeld.GOOD_PAGES_MISSING), detail=missing,
                      diagnosis="", new_extract=None, answer_on_good=None, live_answer=None, model="", prompt_id="")
    proposal = propose(llm, recipe, failure, live_html[0] or "", page_chars=page_chars)
    who = {"diagnosis": _line(proposal.diagnosis), "model": proposal.model, "prompt_id": proposal.prompt_id}
    if proposal.extract is None:
        return Repair(**base, **who, status="held", reason=str(proposal.reason), detail=_line(proposal.detail),
                      new_extract=proposal.raw, answer_on_good=None, live_answer=None)
    verdict = judge(recipe, proposal.extract, good_pages=[h or "" for h in good_html], good_answer=good.answer,
                    live_pages=[h or "" for h in live_html])
    return Repair(**base, **who, status=verdict.status, reason=str(verdict.reason or ""), detail=_line(verdict.detail),
                  new_extract=_plain(proposal.extract), answer_on_good=verdict.answer_on_good,
                  live_answer=verdict.live_answer)


def with_extract(recipe: Recipe, extract: Extract | Mapping[str, Any]) -> Recipe:
    """The recipe with `extract` in place of its own (same id, question, URL, dates and output format), validated
    as a whole; RecipeError naming the field when the result is not a valid recipe."""
    data = recipe.model_dump(mode="python", by_alias=True, exclude_none=True)
    new = extract.model_dump(exclude_none=True) if isinstance(extract, Extract) else dict(extract)
    return recipe_of({**data, "extract": new}, name=f"proposed repair of {recipe.id}")


def record(result: Repair, recipe: Recipe, out: Path) -> Path | None:
    """Append `result` to out/repairs.jsonl; an accepted repair's recipe goes to out/repaired/, a held proposal to
    out/review/ (both as <id>.yaml). Returns the recipe file written, None when there was no proposal to write."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "repairs.jsonl").open("a", encoding="utf-8") as log:
        log.write(result.to_json() + "\n")
    if result.new_extract is None:
        return None
    folder = out / ("repaired" if result.status == "accepted" else "review")
    folder.mkdir(exist_ok=True)
    path = folder / f"{recipe.id}.yaml"
    try:
        text = dump_recipe(with_extract(recipe, result.new_extract))
    except RecipeError:  # an invalid proposal is still worth a reviewer's look: beside the recipe, as written
        text = dump_recipe(recipe) + "# proposed extract (invalid): " + json.dumps(result.new_extract) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def _same(a: Extract, b: Extract) -> bool:
    return _plain(a) == _plain(b)


def _plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


def _hard_coded(new: Extract, answers: Sequence[str], unit: str | None) -> str | None:
    """The answer text (with or without its unit) found inside the proposal's selector or regex, if any."""
    written = " ".join(part for part in (new.css, new.xpath, new.regex) if part)
    for answer in answers:
        bare = answer[: -len(unit) - 1] if unit and answer.endswith(" " + unit) else answer
        for literal in dict.fromkeys((answer, bare)):
            if len(literal) >= MIN_LITERAL and literal in written:
                return literal
    return None


def _missing(shas: Sequence[str], pages: Sequence[str | None]) -> str:
    gone = [sha for sha, html in zip(shas, pages, strict=True) if html is None]
    return f"{len(gone)} of {len(shas)} page(s) not in the store: {', '.join(s[:12] for s in gone)}" if gone else ""


def _fail(result: Value | Fail) -> str:
    return f"{result.reason}: {result.detail}" if isinstance(result, Fail) else "no value"


def _line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
