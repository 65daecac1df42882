"""WebWalker's LLM writer for site trees: its QA writers on the writer model, its strict verifiers on the checker.

Two steps, so that a flow runs (and retries) each on its own:

- `write`: the single- or multi-source QA writer reads a candidate's documents (`candidates`) and proposes a query
  and a short answer; the answer must then pass the template generator's rules (no placeholder, short, not in
  the question, asked once); a single-source answer must not be on the pages on the way there
  (`answer_on_click_path`, WebWalker's "must not be found in doc1"). The question is then released naming its
  page(s) (`candidates.released`) and passes the source's gate (`site_tree.gate`: its words, and the answer in the
  text of the pages it names) before the checker sees it. A multi-source writer must name the two pages it was given as its sublinks.
- `verify`: the strict verifier of the same type judges query and answer against the same documents on the
  checker model; only its `decision: true` keeps a question. A multi-source question must also need both pages:
  WebWalker's verifier returns false for one "answered using only one document", but says no more than false, so
  the checker is then asked the query with each page alone (`dailyqa/rag_answerer`), and an answer that matches
  from either page is `verifier_single_page_suffices`.

A reply that is not the JSON asked for is a reject named by the step and the failure (`writer_malformed_json`,
`verifier_refused`, ...). A check by the writer's own model says `same-model` in `verification.method`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from timelyqa.llm import prompts
from timelyqa.llm.check import Models, models_from_env, normalize, sub_match
from timelyqa.llm.client import LLM, Prompt, Reply, ReplyFailure
from timelyqa.reasons import Reason
from timelyqa.record import Verification
from timelyqa.site_tree.candidates import Candidate
from timelyqa.site_tree.questions import MAX_VALUE_CHARS, MAX_VALUE_WORDS, PLACEHOLDERS, QuestionReject

WRITERS = {"single_source": "webwalker/single_source_qa_writer", "multi_source": "webwalker/multi_source_qa_writer"}
VERIFIERS = {"single_source": "webwalker/single_source_verifier", "multi_source": "webwalker/multi_source_verifier"}
ONE_PAGE = "dailyqa/rag_answerer"
"""The question put to the checker with one page of a multi-source pair: a page that answers it alone suffices."""

WriterReject = Reason.derived(
    "WriterReject", "writer_", ReplyFailure, "the writer model gave no question: {explanation}",
    {"EMPTY_QUESTION": ("writer_empty_question", "the writer model's query or answer is empty"),
     "WRONG_SUBLINKS": ("writer_wrong_sublinks", "multi-source: the writer's sublinks are not the two pages it read")})
VerifierReject = Reason.derived(
    "VerifierReject", "verifier_", ReplyFailure, "the checker model gave no verdict: {explanation}",
    {"REJECTED": ("verifier_rejected", "WebWalker's strict verifier returned false for the query and answer"),
     "SINGLE_PAGE_SUFFICES": ("verifier_single_page_suffices",
                              "multi-source: the checker model answers the query from one of its two pages alone")})


class AnswerReject(Reason):
    ANSWER_ON_CLICK_PATH = ("answer_on_click_path",
                            "single-source: the answer is on a page on the way to its page, so depth overstates it")


@dataclass(frozen=True, slots=True)
class Draft:
    """A query and answer for one candidate, and its verification; `reason` and `detail` say why it is refused."""

    question: str | None
    answer: str | None
    reason: Reason | None
    detail: str
    generator: str
    verification: Verification | None = None

    @property
    def kept(self) -> bool:
        return self.reason is None and self.question is not None


def answer_reject(c: Candidate, question: str, answer: str, seen: set[str]) -> Reason | None:
    """The first rule the pair fails, or None: the template's rules on the answer, then where the answer is. The
    question's words, and the answer's being on its pages, are the gate's to judge (`site_tree.gate`)."""
    value = normalize(answer)
    if value in PLACEHOLDERS or not any(ch.isalnum() for ch in value):
        return QuestionReject.PLACEHOLDER_VALUE
    if len(answer.split()) > MAX_VALUE_WORDS or len(answer) > MAX_VALUE_CHARS:
        return QuestionReject.FACT_TOO_LONG
    if c.type == "single_source" and sub_match(c.doc1, answer) and sub_match(c.doc2, answer):
        return AnswerReject.ANSWER_ON_CLICK_PATH
    return QuestionReject.DUPLICATE_QUESTION if normalize(question) in seen else None


class SiteLLMWriter:
    """WebWalker's QA writers on the writer model and its strict verifiers on the checker model."""

    def __init__(self, models: Models) -> None:
        self.models = models
        self.writers = {kind: prompts.get(name) for kind, name in WRITERS.items()}
        self.verifiers = {kind: prompts.get(name) for kind, name in VERIFIERS.items()}
        self.one_page = prompts.get(ONE_PAGE)

    def generator(self, kind: str) -> str:
        return f"{self.writers[kind].id}+{self.models.writer.generator}"

    @property
    def llms(self) -> tuple[LLM, ...]:
        return (self.models.writer, self.models.checker)

    def write(self, candidates: Sequence[Candidate]) -> list[Draft]:
        """A query and answer for each candidate, checked by rule; in the order of `candidates`."""
        replies = _ask(self.models.writer, self.writers, [(c.type, _writer_values(c)) for c in candidates])
        seen: set[str] = set()
        drafts = []
        for c, reply in zip(candidates, replies, strict=True):
            drafts.append(draft := self._draft(c, reply, seen))
            if draft.kept:
                seen.add(normalize(draft.question or ""))
        return drafts

    def verify(self, candidates: Sequence[Candidate], drafts: Sequence[Draft]) -> list[Draft]:
        """Each kept draft judged by the strict verifier, a multi-source one also asked with each page alone."""
        asked = [(at, c, d) for at, (c, d) in enumerate(zip(candidates, drafts, strict=True)) if d.kept]
        verdicts = _ask(self.models.checker, self.verifiers,
                        [(c.type, {"query": d.question or "", "answer": d.answer or "", "doc1": c.doc1, "doc2": c.doc2})
                         for _, c, d in asked])
        out = list(drafts)
        accepted: list[tuple[int, Candidate, Draft]] = []
        for (at, c, d), reply in zip(asked, verdicts, strict=True):
            if not reply.ok:
                out[at] = replace(d, reason=VerifierReject(f"verifier_{reply.reason}"), detail=reply.detail)
            elif not getattr(reply.value, "decision", False):
                out[at] = replace(d, reason=VerifierReject.REJECTED, detail=_line(getattr(reply.value, "reason", "")))
            elif c.type == "single_source":
                out[at] = replace(d, verification=self._verification(self.verifiers[c.type].id, d, 1))
            else:
                accepted.append((at, c, d))
        probes = self.models.checker.ask_all(self.one_page, [{"reference": doc, "query": d.question or ""}
                                                             for _, c, d in accepted for doc in (c.doc1, c.doc2)])
        for n, (at, c, d) in enumerate(accepted):
            out[at] = self._needs_both(c, d, probes[2 * n: 2 * n + 2])
        return out

    def _draft(self, c: Candidate, reply: Reply, seen: set[str]) -> Draft:
        generator = self.generator(c.type)
        query, answer = (" ".join(str(getattr(reply.value, f, "") or "").split()) for f in ("query", "answer"))
        if not reply.ok:
            return Draft(None, None, WriterReject(f"writer_{reply.reason}"), reply.detail, generator)
        if not query or not answer:
            return Draft(query or None, answer or None, WriterReject.EMPTY_QUESTION, "an empty query or answer",
                         generator)
        named = {u.rstrip("/") for u in getattr(reply.value, "sublinks", c.urls)}
        if named != {u.rstrip("/") for u in c.urls}:
            return Draft(query, answer, WriterReject.WRONG_SUBLINKS, f"it named {sorted(named)}", generator)
        failed = answer_reject(c, query, answer, seen)
        return Draft(query, answer, failed, f"{query!r} -> {answer!r}" if failed else "", generator)

    def _needs_both(self, c: Candidate, d: Draft, probes: Sequence[Reply]) -> Draft:
        for url, probe in zip(c.urls, probes, strict=True):
            if not probe.ok:
                return replace(d, reason=VerifierReject(f"verifier_{probe.reason}"),
                               detail=f"asked with {url} alone: {probe.detail}")
            if sub_match(answer := str(getattr(probe.value, "answer", "")), d.answer or ""):
                return replace(d, reason=VerifierReject.SINGLE_PAGE_SUFFICES,
                               detail=f"from {url} alone the checker answers {_line(answer)!r}")
        return replace(d, verification=self._verification(f"{self.verifiers[c.type].id}+{self.one_page.id}", d, 3))

    def _verification(self, prompt_ids: str, d: Draft, replies: int) -> Verification:
        """How a kept record was verified; `result_count` is the checker's replies its verdict stands on."""
        method = f"llm-verify:{'independent' if self.models.independent else 'same-model'}"
        return Verification(method=method, query=f"{prompt_ids}: {d.question}",
                            endpoint=f"llm:{self.models.checker.settings.model}", result_count=replies, passed=True)


def _writer_values(c: Candidate) -> dict[str, str]:
    if c.type == "single_source":
        return {"doc1": c.doc1, "doc2": c.doc2}
    return {"sublinks": f"{c.doc1}\n\n{c.doc2}"}


def _ask(llm: LLM, by_type: Mapping[str, Prompt], rows: Sequence[tuple[str, dict[str, str]]]) -> list[Reply]:
    """Each (type, values) row asked with its type's prompt, one batch per prompt, the replies in the rows' order."""
    replies: dict[int, Reply] = {}
    for kind, prompt in by_type.items():
        at = [n for n, (k, _) in enumerate(rows) if k == kind]
        replies.update(zip(at, llm.ask_all(prompt, [rows[n][1] for n in at]), strict=True))
    return [replies[n] for n in range(len(rows))]


def _line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def llm_site_writer(*, cache_dir: Path, environ: Mapping[str, str] | None = None, api_key: str | None = None,
                    check_api_key: str | None = None) -> SiteLLMWriter:
    """The writer as `TIMELYQA_LLM_*` and the checker as `TIMELYQA_CHECK_LLM_*` configure them (the writer checks
    itself when no checker is set), both checked before any work; replies cached in `cache_dir`."""
    return SiteLLMWriter(models_from_env(cache_dir=cache_dir, environ=environ, api_key=api_key,
                                         check_api_key=check_api_key))
