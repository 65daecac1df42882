"""Who writes a Wikipedia question and how it is checked: the offline template writer, or DailyQA's LLM writer.

Both take `Unit`s (DailyQA's data unit: the changed value, its key, the infobox, the page's title, URL
and first paragraph) and give each a `Written`: the question and how it was verified, or the reason
it has none. The answer itself was already re-derived from the page's revision by the pipeline; a
writer only has to put a question to it that names the page's subject, gives nothing away and holds
no date. The LLM writer then asks the checker model the question with the page as its reference
(DailyQA's correctness check) and keeps the question only when the checker finds the value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, get_args

from timelyqa.llm import prompts
from timelyqa.llm.check import Models, check_answers, models_from_env
from timelyqa.llm.client import LLM, Prompt, ReplyFailure
from timelyqa.llm.settings import ENV_PREFIX, LLMSettings
from timelyqa.llm.shapes import Domain as DomainName
from timelyqa.reasons import Reason
from timelyqa.record import Verification
from timelyqa.wikipedia.questions import (GENERATOR, UNIT_PHRASE, descriptive, say_unit, template_question,
                                         well_formed)

WRITER_PROMPT = "dailyqa/query_writer"
CHECK_PROMPT = "dailyqa/rag_answerer"
DOMAIN_PROMPT = "dailyqa/domain_classifier"
_DOMAIN_VALUES = {name: name.lower().replace(" ", "_") for name in get_args(DomainName)}
"""The paper's domain names as labels.Domain values: 'Politics and Law' -> 'politics_and_law'."""
WriterReject = Reason.derived(
    "WriterReject", "writer_", ReplyFailure, "the writer model gave no question: {explanation}",
    {"EMPTY_QUESTION": ("writer_empty_question", "the writer model's question is empty")})
"""Why the writer gave no question."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One chosen change, ready for a question."""

    title: str
    url: str
    key: str
    value: str
    infobox: Mapping[str, str]
    first_paragraph: str
    rule: str
    """The recompute rule (JSON): how the question is answered on any date."""
    where: str
    """Where the page's revisions were read: `dump:{file name}` or the API's URL."""
    unit_phrase: str = ""
    """What the question must say for a bare number to answer it: "in millions of US dollars", or nothing."""
    answer_type: str = ""
    """The typed answer's type (timelyqa.answers): a person's role is asked "who" only when the answer is a name."""


@dataclass(frozen=True, slots=True)
class Written:
    """A question and its verification; `reason` and `detail` say why it is refused, if it is.

    `question` is what was written, refused or not (None when the writer wrote nothing); `verification` is None
    until the question is checked."""

    question: str | None
    reason: Reason | None
    detail: str
    generator: str
    verification: Verification | None

    @property
    def kept(self) -> bool:
        return self.reason is None and self.question is not None


class Writer(Protocol):
    """Writes a question for each unit, then checks the written ones: two steps, so each retries on its own."""

    generator: str

    def write(self, units: Sequence[Unit]) -> list[Written]: ...

    def check(self, units: Sequence[Unit], written: Sequence[Written]) -> list[Written]: ...

    @property
    def llms(self) -> tuple[LLM, ...]: ...


class TemplateWriter:
    """The key's own question ('Who is the mayor of {title}?'), else the title its numbered pair names ('Who is the
    President of Albania?'), else its label ("who" for a person's role): offline, deterministic, checked by rule."""

    generator = GENERATOR
    llms: tuple[LLM, ...] = ()

    def write(self, units: Sequence[Unit]) -> list[Written]:
        return [_form(u, template_question(u.title, u.key, u.infobox, u.answer_type), self.generator) for u in units]

    def check(self, units: Sequence[Unit], written: Sequence[Written]) -> list[Written]:
        """The answer was re-derived from the revision before any question was written: that is the check."""
        return [replace(w, verification=Verification(method="infobox_rederive", query=u.rule, endpoint=u.where,
                                                     result_count=1, passed=True)) if w.kept else w
                for u, w in zip(units, written, strict=True)]


class LLMWriter:
    """DailyQA's query writer (Figure 7) on the writer model, its correctness check on the checker model."""

    def __init__(self, models: Models, *, writer_prompt: Prompt | None = None, check_prompt: Prompt | None = None
                 ) -> None:
        self.models = models
        self.writer_prompt = writer_prompt or prompts.get(WRITER_PROMPT)
        self.check_prompt = check_prompt or prompts.get(CHECK_PROMPT)
        self.generator = f"{self.writer_prompt.id}+{UNIT_PHRASE}+{models.writer.generator}"

    def write(self, units: Sequence[Unit]) -> list[Written]:
        replies = self.models.writer.ask_all(self.writer_prompt, [_writer_values(u) for u in units])
        out: list[Written] = []
        for unit, reply in zip(units, replies, strict=True):
            query = getattr(reply.value, "query", None)
            if not reply.ok or not isinstance(query, str) or not query.strip():
                reason = WriterReject(f"writer_{reply.reason}") if reply.reason else WriterReject.EMPTY_QUESTION
                out.append(Written(None, reason, f"the writer gave no question: {reply.detail or 'an empty one'}",
                                   self.generator, None))
            else:
                out.append(_form(unit, " ".join(query.split()), self.generator))
        return out

    def check(self, units: Sequence[Unit], written: Sequence[Written]) -> list[Written]:
        """DailyQA's correctness check: the checker answers each kept question from the page."""
        asked = [(at, u, w) for at, (u, w) in enumerate(zip(units, written, strict=True)) if w.kept]
        checks = check_answers(self.models, self.check_prompt,
                               [{"reference": reference(u), "query": w.question or ""} for _, u, w in asked],
                               [u.value for _, u, _ in asked])
        out = list(written)
        for (at, _, w), check in zip(asked, checks, strict=True):
            verification = Verification(method=check.method, query=f"{check.prompt_id}: {w.question}",
                                        endpoint=f"llm:{check.model}", result_count=int(check.answer is not None),
                                        passed=check.passed)
            detail = f"the checker gave no answer: {check.detail}" if check.answer is None else check.detail
            out[at] = replace(w, reason=check.reason, detail=detail, verification=verification)
        return out

    @property
    def llms(self) -> tuple[LLM, ...]:
        return (self.models.writer, self.models.checker)


class LLMDomains:
    """DailyQA's zero-shot domain labels, asked only when a run is told to; the rule's label stays otherwise."""

    def __init__(self, llm: LLM, prompt: Prompt | None = None) -> None:
        self.llm = llm
        self.prompt = prompt or prompts.get(DOMAIN_PROMPT)
        self.name = f"{self.prompt.id}+{llm.generator}"

    def classify(self, items: Sequence[tuple[str, Unit]]) -> list[tuple[str | None, ReplyFailure | None]]:
        """(domain, None) for each (question, unit) the model labels (labels.Domain's value), else (None, the
        reply's reason): `wrong_shape` for a label that is none of the seven, `malformed_json`, `refused`..."""
        replies = self.llm.ask_all(self.prompt, [{"query": q, "title": u.title, "first_paragraph": u.first_paragraph}
                                                 for q, u in items])
        return [(_DOMAIN_VALUES[r.value.domain], None) if r.ok else (None, r.reason) for r in replies]


def llm_writer(*, cache_dir: Path, environ: Mapping[str, str] | None = None, api_key: str | None = None,
               check_api_key: str | None = None) -> LLMWriter:
    """The LLM writer as `TIMELYQA_LLM_*` (writer) and `TIMELYQA_CHECK_LLM_*` (checker, optional) configure it,
    both models checked before any work.

    Replies are cached in `cache_dir` unless `TIMELYQA_LLM_CACHE_DIR` says where, so that a re-run costs no call.
    Without a checker of its own the writer checks itself, and every record says the check was not independent.
    """
    models = models_from_env(cache_dir=cache_dir, environ=environ, api_key=api_key, check_api_key=check_api_key)
    return LLMWriter(models)


def llm_domains(*, cache_dir: Path, environ: Mapping[str, str] | None = None, api_key: str | None = None,
                writer: LLMWriter | None = None) -> LLMDomains:
    """Domain labels from the writer's model, or (with the template writer) from the model `TIMELYQA_LLM_*` names,
    checked before any work."""
    if writer is not None:
        return LLMDomains(writer.models.writer)
    env = dict(os.environ if environ is None else environ)
    llm = LLM(LLMSettings.from_env(environ=env, cache_dir=env.get(f"{ENV_PREFIX}CACHE_DIR") or cache_dir,
                                   api_key=api_key))
    llm.preflight()
    return LLMDomains(llm)


def reference(unit: Unit) -> str:
    """What the checker reads, as the paper gives it: the page's title, first paragraph and infobox."""
    return f"Title: {unit.title}\n{unit.first_paragraph}\nInfobox: {dict(unit.infobox)!r}"


def _writer_values(unit: Unit) -> dict[str, str]:
    return {"value": unit.value, "name": unit.key, "infobox": repr(dict(unit.infobox)), "title": unit.title,
            "url": unit.url, "first_paragraph": unit.first_paragraph}


def _form(unit: Unit, question: str, generator: str) -> Written:
    """The question says its answer's unit or scale, then the rule checks on its text: it names the subject and
    holds no date (the quality gate judges the rest: wikipedia/gate.py)."""
    question = say_unit(question, unit.unit_phrase)
    failed = descriptive(question, unit.title, unit.infobox) or well_formed(question, unit.title, unit.infobox)
    if failed:
        return Written(question, failed, f"{question!r} -> {unit.value!r} ({failed.value})", generator, None)
    return Written(question, None, "", generator, None)
