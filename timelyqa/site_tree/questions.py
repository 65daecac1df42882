"""Template questions from a crawl's pages (offline, deterministic): WebWalkerQA's single- and multi-source types.

Facts are checked first (`QuestionReject`, each rule a function beside its reason): a label is asked only when it
names a fact (a noun phrase in sentence case, not code, a pilcrow, a version note, a footnote column, a see-also
entry, a label ending in a preposition, nor a term of a long list no other page uses), and a value only when it is a
short answer (not a sentence, code, a URL or footnote markers). Each page then gives at most
`facts_per_page` of its facts, in a seeded stable order, asked alone when the page is at depth 2 to 4, and each
root at most `pairs_per_root` pairs of them (`pairs.choose_pairs`), asked together. The wording is in
`templates`; the record's evidence, id and click chains in `evidence`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

import polars as pl

from timelyqa.answers import listing
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.reasons import Reason
from timelyqa.site_tree.evidence import make_record, refound
from timelyqa.site_tree.kinds import fact_answer, is_person, unit_suffix
from timelyqa.site_tree.pairs import choose_pairs
from timelyqa.site_tree.record import DOMAINS, SiteTreeRecord
from timelyqa.site_tree.templates import askable, clause, is_cell, multi_question, single_question
from timelyqa.site_tree.tree import (MULTI_DEPTHS, SINGLE_DEPTHS, Located, chain, golden_path, norm, seeded_key,
                                     site_name, subject)
from timelyqa.stages import Dropped

__all__ = ["FUNNEL", "MULTI_GENERATOR", "SINGLE_GENERATOR", "QuestionReject", "Written", "golden_path",
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

GENERIC_LABELS = frozenset({"name", "value", "item", "items", "detail", "details", "info", "information", "note",
                            "notes", "more", "link", "links", "description", "other", "misc", "comment", "comments",
                            "remarks", "total", "text", "content", "here", "read more", "click here", "see also"})
PLACEHOLDERS = frozenset({"-", "–", "—", "n/a", "na", "none", "nil", "null", "tba", "tbd", "tbc", "unknown",
                          "coming soon", "to be announced", "?", "...", "…", "empty"})
MAX_LABEL_WORDS, MAX_LABEL_CHARS = 8, 60
MAX_VALUE_WORDS, MAX_VALUE_CHARS = 12, 80
MAX_SHORT_WORDS = 8
MAX_LABEL_SHARE = 0.25
"""No label (normalised; a table cell's column) is asked by more than this share of a site's single-source questions
(the Python documentation's "Source code", on 200 of its 300 pages): which of its facts are kept is a seeded hash
of the page's URL. A label is always allowed `MIN_PER_LABEL` questions, so a small site is not thinned."""
MIN_PER_LABEL = 3
LONG_LIST = 6
"""A page's list of this many labelled values or more, whose labels no other page uses, is a list of terms."""
"""A template's value of more words is a description, however it is punctuated."""
_PARENS = re.compile(r"\s*\([^)]*\)")


class QuestionReject(Reason):
    GENERIC_LABEL = "generic_label", "the label names no property (a stock word, or it starts with no letter)"
    LABEL_TOO_LONG = "label_too_long", "the label is too long to ask by (over 8 words or 60 characters)"
    PLACEHOLDER_VALUE = "placeholder_value", "the value is a placeholder (none, TBA, a dash), not an answer"
    FACT_TOO_LONG = "fact_too_long", "the value is longer than a short answer (over 12 words or 80 characters)"
    AMBIGUOUS_FACT = "ambiguous_fact", "the page gives the label more than one value"
    FACT_ON_SHALLOWER_PAGE = ("fact_on_shallower_page",
                              "a shallower page states the same label and value: the depth overstates the difficulty")
    LABEL_NAMES_NO_FACT = ("label_names_no_fact", "the label is no noun phrase naming a fact (code, a pilcrow, a "
                           "version note, a sentence, a footnote column, a trailing preposition, the page's own title)")
    VALUE_IS_SENTENCE = "value_is_sentence", "the value is a sentence or a description, not a short answer"
    VALUE_IS_CODE = ("value_is_code", "the value is code (a signature, an expression, markup, a URL), or in a table's "
                     "column most of whose values are code")
    FOOTNOTE_VALUE = "footnote_value", "the value is only footnote markers such as (5) or [1][2]"
    LABEL_ON_ONE_PAGE = ("label_on_one_page", "a term of a long list on one page (a glossary, a see-also list), used "
                         "on no other page of the site: a term defined, not a field the site's pages share")
    VALUE_IN_TITLE = "value_in_title", "the value is in the title of its page, which the question names"
    DATE_OF_NOTHING = ("date_of_nothing", "a bare \"Date\" on a page that does not say what it is the date of (no "
                       "event's page: a documentation page's build date, a stamp)")
    PROSE_CELL = ("prose_cell", "a table's cell of prose: a column of descriptions (features, purpose, remarks), or "
                  "a lower-case phrase of five words or more in parts")
    FACT_NOT_REFOUND = "fact_not_refound", "the fact is not found again on the stored page"
    LABEL_OVER_SHARE = ("label_over_share", "the site's questions already ask this label (normalised; a table's "
                        "column) as often as its share allows: one kind of question must not make up a site")
    PAGE_TOO_SHALLOW = "page_too_shallow", "the page is at depth 0 or 1; single-source questions ask depths 2 to 4"
    PAGE_TOO_DEEP = "page_too_deep", "the page is deeper than 4; single-source questions ask depths 2 to 4"
    DUPLICATE_QUESTION = "duplicate_question", "an earlier candidate (from a shallower page) asks the same question"


class Written(NamedTuple):
    records: list[SiteTreeRecord]
    rejected: list[Dropped]
    counts: Counter[str]


_CODE_LABEL = re.compile(r"[¶\[\]{}=*<>|`_/\\%'\"+^~&@]|^\w+ [-] \w+$|\w\(|\(\)|\w\.\w|\w::\w|^[a-z]+[A-Z]")
_VERSION_NOTE = re.compile(r"\b(?:changed|new|added|deprecated|removed)\b.*\bversion\b|\bversion \d", re.IGNORECASE)
_ENDS_FUNCTION = frozenset("""to of in on at by for with and or the a an as is are was were within per via than
                              into onto upon about after before""".split())
_CODE_VALUE = re.compile(r"https?://|\w\(.*\)|__\w|%\(|\w\[|[=*{}<>|`\\]|->|\[[^\]]*[,\s][^\]]*\]|\w \+ \w|^\w+\[")
_MARKERS = re.compile(r"^(?:\s*(?:[(\[]\s*[0-9a-z]{1,3}\s*[)\]]|[*†‡§¶#]+))+\s*$", re.IGNORECASE)
_REFERENCE = re.compile(r"^(?:module|package|class|function|method|attribute|exception|pep|rfc)\s+\S+$", re.IGNORECASE)
"""A see-also entry ("Module fnmatch", "PEP 8"): a reference to another page, not a property."""
_VERBS = frozenset("is are was were be been can could will would should must may might does do did has have".split())
_SENTENCE = re.compile(r"[.!?;]\s+\S|[.!?]$")
_ABBREVIATION = re.compile(r"\b(?:Prof|Dr|Mr|Mrs|Ms|Mx|St|Jr|Sr|No|vs|etc|e\.g|i\.e|approx|incl)\.", re.IGNORECASE)


def label_names_no_fact(fact: Located) -> bool:
    """The label (a cell's column and row each) is no noun phrase naming one fact of the page."""
    if _VERSION_NOTE.search(fact.label) or "¶" in fact.label or norm(fact.label) in (norm(fact.subject), ""):
        return True
    if is_cell(fact):
        column, row = fact.label.split(" for ", 1)
        # a table from an acronym's names to a column of one word ("TOML" -> "Python") maps vocabularies
        conversion = bool(re.fullmatch(r"[A-Z]{2,}", fact.context)) and len(column.split()) == 1
        return (conversion or norm(column) in GENERIC_LABELS or _noun_fails(column) or not column[:1].isupper()
                or sum(c.isalpha() for c in row) < 2 or bool(_CODE_LABEL.search(row)) or operator_row(row))
    return _noun_fails(fact.label) or not askable(fact.label) or not sentence_case(fact.label)


_OPERATOR_WORDS = _ENDS_FUNCTION | _VERBS | frozenset("not if else elif lambda yield await async del pass return "
                                                      "global nonlocal import from".split())


def operator_row(row: str) -> bool:
    """A table's row keyed by an operator or keyword ("is not", "not in", "and"): code written in words, not a
    name ("what is the meaning for is not" reads as no English)."""
    words = row.split()
    return bool(words) and all(w.islower() and w in _OPERATOR_WORDS for w in words)


def sentence_case(label: str) -> bool:
    """A property's label is written in sentence case ("Principal investigator", "Tuition fee (home)", "GPUs");
    a term or a title is not ("UserString", "module poplib", "Installing Python Modules", "PEP 540 – Add a new
    UTF-8 mode", "Tcl'2004 conference presentation"): a definition list of terms gives descriptions, not facts."""
    words = _PARENS.sub("", label).split()
    if not words or not words[0][:1].isupper():
        return False
    first, later = words[0], words[1:]
    acronym = bool(re.fullmatch(r"[A-Z]{2,}s?", first))
    return (acronym or first[1:].islower() or first[1:] == "") and first.replace("-", "").isalpha() and all(
        w.islower() and not any(c.isdigit() for c in w) for w in later)


def _noun_fails(label: str) -> bool:
    words = [w.casefold() for w in re.findall(r"[\w'’-]+", label)]
    return (not words or bool(_REFERENCE.match(label)) or bool(_CODE_LABEL.search(label)) or label.rstrip().endswith(("?", ".", "!", ":"))
            or (words[-1] in _ENDS_FUNCTION) or bool(_VERBS & set(words)) or (words[-1] in ("from", "since") and not askable(label)))


def value_is_sentence(value: str) -> bool:
    """A sentence, or a description of clauses: a full stop inside or at the end of four words or more, or more
    than seven words with a comma."""
    words = value.split()
    plain = _ABBREVIATION.sub("", value).strip()
    return (len(words) > MAX_SHORT_WORDS or (len(words) >= 2 and plain.endswith(".")) or (len(words) >= 4 and bool(_SENTENCE.search(plain)))
            or (len(words) > 7 and "," in value))


DESCRIBING = frozenset("""features feature purpose explanation summary remarks usage use effect effects example
                          examples comments synopsis""".split())
"""A table's columns that describe their row in prose ("Features for nim": "turtles as nimsticks, event driven")."""
_PARTS = re.compile(r"[,;:]\s")


def prose_cell(fact: Located) -> bool:
    """A table's cell of prose: its column describes the row (`DESCRIBING`), or its value is five words or more in
    parts, most of them lower-case ("Shift-in, resume default character set"); a title ("Annual Lecture: Counting
    What Changes") or a column of people (a list of names) is no prose."""
    if not is_cell(fact):
        return False
    column = fact.label.split(" for ", 1)[0]
    if norm(column) in DESCRIBING:
        return True
    words = fact.value.split()
    lower = sum(w[:1].islower() for w in words)
    return not is_person(column) and len(words) >= 5 and bool(_PARTS.search(fact.value)) and lower * 2 > len(words)


EVENT_FIELDS = frozenset({"time", "times", "venue", "room", "location", "speaker", "speakers", "registration",
                          "where", "place", "start time", "end time", "doors open", "tickets", "booking"})
"""Labels that make a page an event's: its "Date" is the event's date."""
EVENT_WORDS = frozenset("""lecture event workshop conference seminar symposium festival meeting talk webinar
                           ceremony exhibition concert summit colloquium fair""".split())
"""Words of a page's subject that name an event ("Annual Lecture: Counting What Changes", "Open Day")."""


def date_of_nothing(fact: Located, on_page: Mapping[str, set[str]]) -> bool:
    """A bare "Date" (or "Dates"), no table cell, on a page that is no event's: the page does not say what it is
    the date of (the Python documentation's "Date: October 07, 2026" is the day the pages were built). An event's
    page has an event's fields (a time, a room, a speaker: `EVENT_FIELDS`) or an event's name (`EVENT_WORDS`,
    "Open Day")."""
    if is_cell(fact) or norm(fact.label) not in ("date", "dates"):
        return False
    words = {w.casefold() for w in re.findall(r"[A-Za-z]+", fact.subject)}
    event = bool(words & EVENT_WORDS) or "open day" in norm(fact.subject) or bool(set(on_page) & EVENT_FIELDS)
    return not event


def fact_reject(fact: Located, page: Mapping[str, Any], on_page: Mapping[str, set[str]],
                shallowest: Mapping[tuple[str, str], int], pages_of: Mapping[str, int],
                list_length: Mapping[str, int]) -> QuestionReject | None:
    """The first rule the fact fails, or None: its label, its value, its page, the stored page. `pages_of` counts
    the pages of the site that use each label (normalised), `list_length` the page's facts of each kind that are
    no table cell."""
    label, value = norm(fact.label), norm(fact.value)
    if label in GENERIC_LABELS or not fact.label[:1].isalpha():
        return QuestionReject.GENERIC_LABEL
    if len(label.split()) > MAX_LABEL_WORDS or len(label) > MAX_LABEL_CHARS:
        return QuestionReject.LABEL_TOO_LONG
    if label_names_no_fact(fact):
        return QuestionReject.LABEL_NAMES_NO_FACT
    if not is_cell(fact) and pages_of.get(label, 0) < 2 and list_length.get(fact.kind, 0) >= LONG_LIST:
        return QuestionReject.LABEL_ON_ONE_PAGE
    if _MARKERS.match(fact.value):
        return QuestionReject.FOOTNOTE_VALUE
    if value.strip("()[] ") in PLACEHOLDERS or not any(c.isalnum() for c in value):
        return QuestionReject.PLACEHOLDER_VALUE
    if len(value.split()) > MAX_VALUE_WORDS or len(value) > MAX_VALUE_CHARS:
        return QuestionReject.FACT_TOO_LONG
    if value_is_sentence(fact.value):
        return QuestionReject.VALUE_IS_SENTENCE
    if prose_cell(fact):
        return QuestionReject.PROSE_CELL
    if _CODE_VALUE.search(fact.value):
        return QuestionReject.VALUE_IS_CODE
    if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", norm(fact.subject)):
        return QuestionReject.VALUE_IN_TITLE
    if len(on_page[label]) > 1:
        return QuestionReject.AMBIGUOUS_FACT
    if date_of_nothing(fact, on_page):
        return QuestionReject.DATE_OF_NOTHING
    if shallowest[(label, value)] < fact.depth:
        return QuestionReject.FACT_ON_SHALLOWER_PAGE
    return None if refound(page, fact) else QuestionReject.FACT_NOT_REFOUND


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


def _code_columns(facts: list[Located]) -> set[tuple[str, str]]:
    """The (table, column) pairs of a page's tables half or more of whose values are code ("print len" among
    "o.attr", "a[i]", "f(arg) C(arg)"): the column's other values are code too, written plainly."""
    values: dict[tuple[str, str], list[str]] = defaultdict(list)
    for f in facts:
        if is_cell(f):
            values[(f.context, f.label.split(" for ", 1)[0])].append(f.value)
    return {key for key, vs in values.items() if sum(bool(_CODE_VALUE.search(v)) for v in vs) * 2 >= len(vs)}


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
        code_columns = _code_columns(facts)
        kept = []
        for f in facts:
            reason = fact_reject(f, page, on_page, shallowest, pages_of, list_length)
            if reason is None and is_cell(f) and (f.context, f.label.split(" for ", 1)[0]) in code_columns:
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
