"""A writer model and a checker model, and the answer check that keeps a question only if the checker agrees.

The papers check with a different model than the one that wrote, to avoid self-preference. The
checker here is configured apart (its own settings and prompt); when it is the same model as the
writer the check still runs, but is never called independent: `Check.independent` is False, and so is
the `verification.method` it gives a record.
"""

from __future__ import annotations

import os
import re
import string
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from timelyqa.llm.client import LLM, Prompt, Reply, ReplyFailure
from timelyqa.llm.settings import ENV_PREFIX, LLMSettings
from timelyqa.reasons import Reason

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation + "–—‘’“”"})


CHECK_PREFIX = "TIMELYQA_CHECK_LLM_"
"""Where the checker model's settings come from; the writer's are `TIMELYQA_LLM_*`."""

CheckReject = Reason.derived(
    "CheckReject", "check_", ReplyFailure, "the checker model gave no answer: {explanation}",
    {"ANSWER_MISMATCH": ("answer_mismatch", "the checker model's answer, read from the source, is not the answer")})
"""Why the answer check fails a question."""


@dataclass(frozen=True)
class Check:
    """The verdict on one question: `passed`, or `reason` (snake_case) and `detail` saying why not."""

    passed: bool
    reason: Reason | None
    detail: str
    answer: str | None  # what the checker answered, when it answered
    prompt_id: str
    model: str
    independent: bool

    @property
    def method(self) -> str:
        """How a record's `verification.method` names this check."""
        return f"llm-answer-check:{'independent' if self.independent else 'same-model'}"


@dataclass(frozen=True)
class Models:
    """The model that writes questions and the one that checks them (the same one when no checker is set)."""

    writer: LLM
    checker: LLM

    @classmethod
    def of(cls, writer: LLM, checker: LLM | None = None) -> Models:
        return cls(writer, checker or writer)

    @property
    def independent(self) -> bool:
        return not self.writer.settings.same_model(self.checker.settings)

    def usage(self) -> dict[str, float]:
        """Both models' usage summed, once when they are one client."""
        total = dict(self.writer.usage.as_manifest())
        if self.checker is not self.writer:
            for key, amount in self.checker.usage.as_manifest().items():
                total[key] = round(total.get(key, 0) + amount, 3)
        return total


def models_from_env(*, cache_dir: Path, environ: Mapping[str, str] | None = None, api_key: str | None = None,
                    check_api_key: str | None = None) -> Models:
    """The writer as `TIMELYQA_LLM_*` configures it and the checker as `TIMELYQA_CHECK_LLM_*` does (the writer itself
    when neither its model nor its URL is set), both checked before any work.

    Replies are cached in `cache_dir` unless `TIMELYQA_LLM_CACHE_DIR` says where, so that a re-run costs no call."""
    env = dict(os.environ if environ is None else environ)
    writer = LLMSettings.from_env(environ=env, cache_dir=env.get(f"{ENV_PREFIX}CACHE_DIR") or cache_dir,
                                  api_key=api_key)
    checker = None
    if env.get(f"{CHECK_PREFIX}MODEL") or env.get(f"{CHECK_PREFIX}BASE_URL"):
        checker = LLMSettings.from_env(CHECK_PREFIX, environ=env, cache_dir=env.get(f"{CHECK_PREFIX}CACHE_DIR")
                                       or writer.cache_dir, api_key=check_api_key)
    models = Models.of(LLM(writer), LLM(checker) if checker else None)
    models.writer.preflight()
    if models.checker is not models.writer:
        models.checker.preflight()
    return models


def normalize(text: str) -> str:
    """Lower case, no accents, punctuation or articles, single spaces: the form answers are compared in."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def sub_match(predicted: str, truth: str) -> bool:
    """DailyQA's sub match: the normalized truth occurs, on word boundaries, in the normalized prediction."""
    want, got = normalize(truth), normalize(predicted)
    return bool(want) and f" {want} " in f" {got} "


def check_answers(models: Models, prompt: Prompt, rows: Sequence[Mapping[str, str]], truths: Sequence[str]
                  ) -> list[Check]:
    """Ask the checker each row's question (rendered by `prompt`, whose shape has an `answer`) and compare.

    A reply that is no answer (malformed, refused, ...) fails as `check_<reason>`; an answer that does not
    sub-match the truth fails as `answer_mismatch`."""
    independent = models.independent
    replies: list[Reply] = models.checker.ask_all(prompt, rows)
    checks = []
    for reply, truth in zip(replies, truths, strict=True):
        answer = getattr(reply.value, "answer", None) if reply.value is not None else None
        if reply.value is None:
            passed, reason, detail = False, CheckReject(f"check_{reply.reason}"), reply.detail
        elif sub_match(str(answer), truth):
            passed, reason, detail = True, None, ""
        else:
            passed, reason = False, CheckReject.ANSWER_MISMATCH
            detail = f"checker answered {answer!r}, expected {truth!r}"
        checks.append(Check(passed, reason, detail, None if answer is None else str(answer), reply.prompt_id,
                            reply.model, independent))
    return checks
