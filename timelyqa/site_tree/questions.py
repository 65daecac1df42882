"""Template questions from a crawl's pages (offline, deterministic): WebWalkerQA's single- and multi-source types.

Facts are checked first (`fact_rules`: each rule a function beside its reason in `QuestionReject`): a label is
asked only when it names a fact, and a value only when it is a short answer. Each page then gives at most
`facts_per_page` of its facts, in a seeded stable order, asked alone when the page is at depth 2 to 4, and each
root at most `pairs_per_root` pairs of them (`pairs.choose_pairs`), asked together. The wording is in
`templates`; the record's evidence, id and click chains in `evidence`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any, NamedTuple

import polars as pl

from timelyqa.answers import listing
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.site_tree.evidence import make_record
from timelyqa.site_tree.fact_rules import (GENERIC_LABELS, LONG_LIST, MAX_LABEL_CHARS, MAX_LABEL_WORDS,
                                           MAX_SHORT_WORDS, MAX_VALUE_CHARS, MAX_VALUE_WORDS, PLACEHOLDERS,
                                           QuestionReject, code_columns, date_of_nothing, fact_reject,
                                           label_names_no_fact, operator_row, prose_cell, sentence_case,
                                           value_is_sentence)
from timelyqa.site_tree.kinds import fact_answer, unit_suffix
from timelyqa.site_tree.pairs import choose_pairs
from timelyqa.site_tree.record import DOMAINS, SiteTreeRecord
from timelyqa.site_tree.templates import clause, is_cell, multi_question, single_question
from timelyqa.site_tree.tree import (MULTI_DEPTHS, SINGLE_DEPTHS, Located, chain, golden_path, norm, seeded_key,
                                     site_name, subject)
from timelyqa.stages import Dropped

__all__ = ["FUNNEL", "GENERIC_LABELS", "LONG_LIST", "MAX_LABEL_CHARS", "MAX_LABEL_SHARE", "MAX_LABEL_WORDS",
           "MAX_SHORT_WORDS", "MAX_VALUE_CHARS", "MAX_VALUE_WORDS", "MIN_PER_LABEL", "MULTI_GENERATOR", "PLACEHOLDERS",
           "SINGLE_GENERATOR", "QuestionReject", "Written", "date_of_nothing", "fact_reject", "golden_path",
           "label_names_no_fact", "operator_row", "prose_cell", "sentence_case", "value_is_sentence",
           "write_questions"]

SINGLE_GENERATOR = "site_tree_single_template_v5"
"""v5: a bare "Date" asked only of an event's page and as the event's date ("when does the event on the "Open Day"
page take place?"; a documentation page's build date not asked, `date_of_nothing`), an e-mail address as one ("what
e-mail address does ... give?"), a release number as one ("which release number does ... give?"), a column of
meanings as English ("what does DC4 mean, according to ...?"), and a table's cells of prose not asked
(`prose_cell`); facts read by `site_facts_v2` (a bold first row is a table's header, not a label and its value).
v4: no "it" without an antecedent (a verb or predicate said of what the page is about, or of the label's date),
"who" only for a value that can be a person ("what is the contact e-mail address ..."), names kept with their
capital ("what does ... give for Windows"), "which folder" for a folder, operator rows of a table not asked, and
no label asked more than a share of a site's questions (`MAX_LABEL_SHARE`). v3: the page always named in quotes,
the question word by the answer's type (who, how many, when, how much, which), and labels that name no fact (code,
version notes, footnote columns, sentences) not asked."""
MULTI_GENERATOR = "site_tree_multi_template_v5"
"""v5: its clauses worded as v5's single questions, and no page or value in more than a tenth of a site's pairs
(`pairs.most_per_page`). v4: its clauses worded as v4's single questions, from the facts left after the share cap. v3: two clauses, each
naming its own page with its own question word; the answer a list of the two values."""
FUNNEL = ("pages_read", "pages_failed", "pages_with_facts", "facts_found", "facts_eligible", "facts_not_chosen",
          "single_candidates", "multi_pairs_possible", "multi_candidates")
"""The counts `write_questions` returns, in funnel order (the kept questions follow them)."""
COLUMNS = ("url", "depth", "parent", "root_url", "title", "facts", "error", "fetched_at", "sha256")

MAX_LABEL_SHARE = 0.25
"""No label (normalised; a table cell's column) is asked by more than this share of a site's single-source questions
(the Python documentation's "Source code", on 200 of its 300 pages): which of its facts are kept is a seeded hash
of the page's URL. A label is always allowed `MIN_PER_LABEL` questions, so a small site is not thinned."""
MIN_PER_LABEL = 3


class Written(NamedTuple):
    records: list[SiteTreeRecord]
    rejected: list[Dropped]
    counts: Counter[str]



def write_questions(pages: pl.DataFrame, *, domain: str = "other", language: str = "en", seed: int = 0,
                    facts_per_page: int = 3, pairs_per_root: int = 20) -> Written:
    """Single- and multi-source questions from a crawl's pages (one or more roots), with every reject and count."""
    if domain not in DOMAINS:
        raise ConfigError(f"domain must be one of {', '.join(DOMAINS)}, not {domain!r}")
    if facts_per_page < 1 or pairs_per_root < 0:
        raise ConfigError(f"facts_per_page must be 1 or more and pairs_per_root 0 or more, not "
                          f"{facts_per_page} and {pairs_per_root}")
    if missing := [c for c in COLUMNS if c not in pages.columns]:
        raise SourceContractError(f"the crawl's pages lack the columns {', '.join(missing)}")
    out = Written([], [], Counter())
    by_root: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in pages.to_dicts():
        by_root[row["root_url"]].append(row)
    seen: set[str] = set()
    for root in sorted(by_root, key=str):
        _root(by_root[root], out, seen, domain=domain, language=language, seed=seed, facts_per_page=facts_per_page,
              pairs_per_root=pairs_per_root)
    return out


def single_reject(fact: Located, question: str, seen: set[str]) -> QuestionReject | None:
    """A chosen fact is asked alone from a page at depth 2 to 4, once."""
    if fact.depth < min(SINGLE_DEPTHS):
        return QuestionReject.PAGE_TOO_SHALLOW
    if fact.depth > max(SINGLE_DEPTHS):
        return QuestionReject.PAGE_TOO_DEEP
    return QuestionReject.DUPLICATE_QUESTION if question in seen else None


def multi_reject(question: str, seen: set[str]) -> QuestionReject | None:
    """A pair's question is asked once (the gate then judges its words, `site_tree.gate`)."""
    return QuestionReject.DUPLICATE_QUESTION if question in seen else None


def _root(rows: list[dict[str, Any]], out: Written, seen: set[str], *, domain: str, language: str, seed: int,
          facts_per_page: int, pairs_per_root: int) -> None:
    """The questions of one site: its facts checked and chosen per page, then asked alone and in pairs."""
    out.counts["pages_read"] += len(rows)
    ok = sorted((r for r in rows if r["error"] is None and r["depth"] is not None),
                key=lambda r: (r["depth"], r["url"]))
    out.counts["pages_failed"] += len(rows) - len(ok)
    root = rows[0]["root_url"]
    site = site_name((r["title"] for r in ok), root)
    parent_of = {r["url"]: r["parent"] for r in rows}
    paths = {r["url"]: chain(parent_of, r["url"]) for r in ok}
    pages = {r["url"]: r for r in ok}
    chosen = _chosen(ok, site, out, seed=seed, facts_per_page=facts_per_page)
    common = {"pages": pages, "paths": paths, "domain": domain, "language": language}
    asked = []
    for f in chosen:
        out.counts["single_candidates"] += 1
        answer = fact_answer(f.label, f.value, cell=is_cell(f))
        question = single_question(site, f, answer, unit_suffix(answer))
        if reason := single_reject(f, question, seen):
            out.rejected.append(Dropped({**f.item(), "question": question}, reason, f"depth {f.depth}: {question}"))
            continue
        seen.add(question)
        asked.append((f, question, answer))
    over = over_share([f for f, _, _ in asked], seed=seed)
    for f, question, answer in asked:
        if f in over:
            out.rejected.append(Dropped({**f.item(), "question": question}, QuestionReject.LABEL_OVER_SHARE,
                                        f"{label_key(f)!r} over its share: {question}"))
            continue
        out.records.append(make_record([f], question=question, answer=answer, type="single_source",
                                       difficulty=SINGLE_DEPTHS[f.depth], generator=SINGLE_GENERATOR, **common))
    pool = [f for f in chosen if f.depth in MULTI_DEPTHS and f not in over]
    pool = [f for f in pool if f not in over_share(pool, seed=seed)]  # the pairs' facts share-capped alike
    pairs, possible = choose_pairs(pool, paths, seed=seed, limit=pairs_per_root)
    out.counts["multi_pairs_possible"] += possible
    out.counts["multi_candidates"] += len(pairs)
    for pair in pairs:
        a, b = pair.first, pair.second
        question = multi_question(site, a.phrase, b.phrase)
        if reason := multi_reject(question, seen):
            item = {"root_url": root, "urls": [a.url, b.url], "labels": [a.label, b.label],
                    "values": [a.value, b.value], "question": question}
            out.rejected.append(Dropped(item, reason, f"depths {a.depth}+{b.depth}: {question}"))
            continue
        seen.add(question)
        # Two facts asked together: a list of their values, each as the page writes it. The question says no unit,
        # since the grader compares a list's items as text ("£26,900" is an item, not a sum to convert).
        out.records.append(make_record([a, b], question=question, answer=listing([a.value, b.value]),
                                       type="multi_source",
                                       difficulty=pair.difficulty, generator=MULTI_GENERATOR, **common))


def label_key(fact: Located) -> str:
    """What a question asks by: the label normalised, a table cell's column ("numeric value" of "Numeric value for
    WARNING")."""
    return norm(fact.label.split(" for ", 1)[0] if is_cell(fact) else fact.label)


def over_share(facts: list[Located], *, seed: int) -> set[Located]:
    """The facts beyond their label's share (`MAX_LABEL_SHARE`) of `facts`: a label asked n times, beside `others`
    facts of other labels, keeps max(MIN_PER_LABEL, share / (1 - share) * others) of them, so that what it keeps is
    at most its share of what the site then asks; those kept are the first by a seeded hash of their page's URL."""
    by_label: dict[str, list[Located]] = defaultdict(list)
    for f in facts:
        by_label[label_key(f)].append(f)
    over: set[Located] = set()
    for group in by_label.values():
        others = len(facts) - len(group)
        cap = max(MIN_PER_LABEL, int(MAX_LABEL_SHARE / (1 - MAX_LABEL_SHARE) * others))
        if len(group) > cap:
            ranked = sorted(group, key=lambda f: seeded_key(seed, f.url, f.label, f.value))
            over.update(ranked[cap:])
    return over



def _chosen(ok: list[dict[str, Any]], site: str, out: Written, *, seed: int, facts_per_page: int) -> list[Located]:
    """Each page's facts that pass the checks, at most `facts_per_page` of them in a seeded order; pages by depth."""
    located = {r["url"]: [Located(r["root_url"], r["url"], r["depth"], f["label"], f["value"], f["kind"],
                                  subject(r["title"], site), context=f.get("context") or "")
                          for f in r["facts"] or ()] for r in ok}
    shallowest: dict[tuple[str, str], int] = {}
    pages_of = Counter(label for facts in located.values() for label in {norm(f.label) for f in facts})
    for f in (f for facts in located.values() for f in facts):
        key = (norm(f.label), norm(f.value))
        shallowest[key] = min(shallowest.get(key, f.depth), f.depth)
    chosen: list[Located] = []
    for page in ok:
        facts = located[page["url"]]
        out.counts["pages_with_facts"] += bool(facts)
        out.counts["facts_found"] += len(facts)
        on_page: dict[str, set[str]] = defaultdict(set)
        for f in facts:
            on_page[norm(f.label)].add(norm(f.value))
        list_length = Counter(f.kind for f in facts if not is_cell(f))
        columns = code_columns(facts)
        kept = []
        for f in facts:
            reason = fact_reject(f, page, on_page, shallowest, pages_of, list_length)
            if reason is None and is_cell(f) and (f.context, f.label.split(" for ", 1)[0]) in columns:
                reason = QuestionReject.VALUE_IS_CODE
            if reason:
                out.rejected.append(Dropped(f.item(), reason, f"{f.url}: {f.label!r} = {f.value!r}"))
            else:
                kept.append(replace(f, phrase=clause(f, fact_answer(f.label, f.value, cell=is_cell(f)))))
        out.counts["facts_eligible"] += len(kept)
        kept.sort(key=lambda f: seeded_key(seed, f.url, f.label, f.value))
        out.counts["facts_not_chosen"] += len(kept[facts_per_page:])
        chosen += kept[:facts_per_page]
    return chosen
