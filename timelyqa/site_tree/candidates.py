"""What the LLM writer is given: the pages and pairs of pages of a crawl it writes about, and their text, trimmed.

Pages are chosen as the template generator chooses them, with whole pages in place of their facts:

- single-source: every page at depth 2, 3 or 4 with extracted text (`markdown`, else `text`), at most
  `pages_per_root` of a root, each depth in a seeded stable order and the depths taken in turn (2, 3, 4, 2, ...);
- multi-source: `pairs.page_pairs` over the pages at depth 1 to 4 with text (neither on the other's click chain,
  difficulty by the sum of their depths, seeded, the bands in turn), at most `pairs_per_root` of a root.

A document is a page as WebWalker's prompts give it, "URL; INFO", its text cut at a word to `page_chars`. A
single-source question's doc1 is the known knowledge, the pages on the click chain from the root to the page
(sharing the budget), and doc2 the page; a multi-source question's doc1 and doc2 are its two pages.
`page_record` is the record a kept question makes of its pages.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from timelyqa.answers import Typed, text, unit_phrase
from timelyqa.llm.check import sub_match
from timelyqa.reasons import Dropped, Reason
from timelyqa.record import Evidence, Verification, record_id
from timelyqa.site_tree.evidence import SOURCE, facts_json, fetched
from timelyqa.site_tree.kinds import fact_answer, unit_suffix
from timelyqa.site_tree.pairs import in_turn, page_pairs
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.site_tree.tree import MULTI_DEPTHS, SINGLE_DEPTHS, Located, chain, norm, seeded_key, site_name, subject

CANDIDATE_SCHEMA = pl.Schema({"type": pl.String(), "root_url": pl.String(), "urls": pl.List(pl.String()),
                              "difficulty": pl.String(), "doc1": pl.String(), "doc2": pl.String()})
FUNNEL = ("single_pages_eligible", "single_pages_chosen", "pair_pages_possible", "pair_pages_chosen")
"""The counts `choose_candidates` adds to the template's `pages_read` and `pages_failed`, in funnel order."""
_BLANK_LINES = re.compile(r"\n\s*\n\s*")


class PageReject(Reason):
    PAGE_WITHOUT_TEXT = "page_without_text", "the page (depth 1 to 4) has no extracted text for the writer to read"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A page, or a pair of pages, for the writer model: the documents it reads, and what a record says of them."""

    type: str  # single_source or multi_source
    root_url: str
    urls: tuple[str, ...]  # the source page, or the two (the shallower first, then by url)
    difficulty: str
    doc1: str
    doc2: str

    def item(self) -> dict[str, object]:
        return {"root_url": self.root_url, "type": self.type, "urls": list(self.urls), "difficulty": self.difficulty}

    def row(self) -> dict[str, object]:
        return {**self.item(), "doc1": self.doc1, "doc2": self.doc2}

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Candidate:
        return cls(row["type"], row["root_url"], tuple(row["urls"]), row["difficulty"], row["doc1"], row["doc2"])


@dataclass
class Chosen:
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Dropped] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def content(page: Mapping[str, Any]) -> str:
    """The page's extracted main content: markdown (tables kept), else plain text; "" when the crawl kept neither."""
    return (page.get("markdown") or page.get("text") or "").strip()


def trim(text: str, budget: int) -> str:
    """The text with blank lines collapsed, cut at a word to at most `budget` characters, " [...]" marking a cut."""
    text = _BLANK_LINES.sub("\n\n", text.strip())
    if len(text) <= budget:
        return text
    cut = text[: max(budget - 6, 0)]
    return (cut.rsplit(None, 1)[0] if " " in cut or "\n" in cut else cut) + " [...]"


def document(page: Mapping[str, Any], budget: int) -> str:
    return f"{page['url']}; {trim(content(page), budget)}"


def choose_candidates(pages: pl.DataFrame, *, seed: int, pages_per_root: int, pairs_per_root: int,
                      page_chars: int) -> Chosen:
    """The single pages and page pairs of every root the writer model is given, with every page it cannot read."""
    out = Chosen()
    by_root: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in pages.to_dicts():
        by_root[row["root_url"]].append(row)
    for root in sorted(by_root, key=str):
        _root(by_root[root], out, seed=seed, pages_per_root=pages_per_root, pairs_per_root=pairs_per_root,
              page_chars=page_chars)
    return out


def _root(rows: list[dict[str, Any]], out: Chosen, *, seed: int, pages_per_root: int, pairs_per_root: int,
          page_chars: int) -> None:
    out.counts["pages_read"] += len(rows)
    ok = sorted((r for r in rows if r["error"] is None and r["depth"] is not None),
                key=lambda r: (r["depth"], r["url"]))
    out.counts["pages_failed"] += len(rows) - len(ok)
    pages = {r["url"]: r for r in ok}
    parent_of = {r["url"]: r["parent"] for r in rows}
    paths = {url: chain(parent_of, url) for url in pages}
    readable = {}
    for r in ok:
        if r["depth"] in MULTI_DEPTHS and not content(r):
            out.rejected.append(Dropped({"root_url": r["root_url"], "url": r["url"], "depth": r["depth"]},
                                        PageReject.PAGE_WITHOUT_TEXT, f"depth {r['depth']}: {r['url']}"))
        elif content(r):
            readable[r["url"]] = r
    singles = {d: [(seeded_key(seed, url), url) for url, r in readable.items() if r["depth"] == depth]
               for depth, d in SINGLE_DEPTHS.items()}
    chosen = in_turn(singles, pages_per_root)
    out.counts["single_pages_eligible"] += sum(map(len, singles.values()))
    out.counts["single_pages_chosen"] += len(chosen)
    for url in chosen:
        on_way = [pages[u] for u in paths[url][:-1] if u in pages]
        doc1 = "\n\n".join(document(p, page_chars // max(len(on_way), 1)) for p in on_way)
        out.candidates.append(Candidate("single_source", pages[url]["root_url"], (url,),
                                        SINGLE_DEPTHS[pages[url]["depth"]], doc1, document(pages[url], page_chars)))
    depths = {url: r["depth"] for url, r in readable.items() if r["depth"] in MULTI_DEPTHS}
    pairs, possible = page_pairs(depths, paths, seed=seed, limit=pairs_per_root)
    out.counts["pair_pages_possible"] += possible
    out.counts["pair_pages_chosen"] += len(pairs)
    for first, second, band in pairs:
        out.candidates.append(Candidate("multi_source", pages[first]["root_url"], (first, second), band,
                                        document(pages[first], page_chars), document(pages[second], page_chars)))


def llm_answer(answer: str, holding: list[Located]) -> Typed:
    """The writer's answer typed by the page's fact it is the whole value of (the label knows its kind, `kinds`);
    an answer in prose, or one that several facts hold, is text: the writer says nothing of its answer's type."""
    whole = {(f.label, f.value, f.kind) for f in holding if norm(f.value) == norm(answer)}
    if len(whole) != 1:
        return text(answer)
    label, _, kind = whole.pop()
    return fact_answer(label, answer, cell=kind == "table" and " for " in label)


def released(c: Candidate, question: str, answer: str, pages: Mapping[str, Mapping[str, Any]]
             ) -> tuple[str, Typed, list[Located]]:
    """The writer's question as it is released, its typed answer, and the pages' facts that hold the answer.

    The answer is typed by `llm_answer`; the question names each of its pages by its subject in quotes when the
    writer did not ('On the WebQA 2026 website, on the "Awards" page: ...'), and says the answer's unit when the
    writer did not (", in pounds?")."""
    rows = [pages[url] for url in c.urls]
    holding = [Located(c.root_url, url, row["depth"], f["label"], f["value"], f["kind"], "")
               for url, row in zip(c.urls, rows, strict=True) for f in row.get("facts") or ()
               if sub_match(f["value"], answer)]
    typed = llm_answer(answer, holding)
    if (unit := unit_suffix(typed)) and unit_phrase(typed.value).split()[-1] not in question.casefold():
        question = f"{question.rstrip(' ?')}{unit}?"
    site = site_name((p.get("title") for p in pages.values() if p.get("root_url") == c.root_url), c.root_url)
    subjects = [subject(row.get("title"), site) for row in rows]
    if not all(f'"{s}"' in question for s in subjects):
        named = " and ".join(f'"{s}"' for s in subjects)
        question = f"On the {site} website, on the {named} page{'s' if len(subjects) > 1 else ''}: {question}"
    return question, typed, holding


def page_record(c: Candidate, *, question: str, answer: str, generator: str, verification: Verification,
                pages: Mapping[str, Mapping[str, Any]], paths: Mapping[str, list[str]], domain: str, language: str
                ) -> SiteTreeRecord:
    """The record of a kept question on the candidate's pages (the crawl's rows in `pages`): `question` as it is
    released (`released` made it, and the gate judged it; made again here it is the same).

    Its `facts` are the pages' labelled values that hold the answer, for a later crawl to re-check (none when the
    answer stands in prose); its id hangs on the pages, the question and the answer."""
    rows = [pages[url] for url in c.urls]
    when = max(t for row in rows if (t := fetched(row["fetched_at"])) is not None)
    question, typed, holding = released(c, question, answer, pages)
    return SiteTreeRecord(
        id=record_id(SOURCE, c.root_url, c.type, *c.urls, norm(question), norm(answer)), question=question,
        **typed.fields(), source=SOURCE, level=c.difficulty, event_date=when.date(), as_of=when,
        evidence=[Evidence(url=url, title=row.get("title") or url, fetched_at=fetched(row["fetched_at"]),
                           sha256=row.get("sha256")) for url, row in zip(c.urls, rows, strict=True)],
        verification=verification, generator=generator, root_url=c.root_url, source_urls=list(c.urls),
        golden_path=[paths[url] for url in c.urls], type=c.type, difficulty=c.difficulty, domain=domain,
        language=language, facts=facts_json(holding))
