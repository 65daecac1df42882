"""LiveNewsBench's LLM steps (section 2.2): relevance and QA writing on the writer model, the independent answer,
the grader's agreement and the guideline check on the checker model.

The unit is one (event, article) pair, a flat row of the event's columns (EVENT_SCHEMA) and the article's
(ARTICLE_SCHEMA); `pairs` makes them. Two steps, so that a flow runs (and retries) each on its own; each takes rows
and returns them with what it found added (`question`, `answer`, `temporal_stability`, `generator`, `reason`,
`detail`, `verification`):

- `write`: the relevance check (Figure 5: irrelevant is `article_not_relevant`), then the QA writer (Figure 6: a
  skip is `writer_skipped`), the question asked once; then the question-quality gate (`timelyqa.news.gate.RULES`,
  the template's too: the answer not in the question, nor the event's day, nor the released summary, nor the
  portal's summary when the article states a fact it does not) and the
  article check (the answer stated in the article), both before any checker model sees the pair.
- `check`: the checker answers the question from the article alone (`independent_answerer`), the grader (Figure 8)
  compares that answer with the writer's (not A is `answers_disagree`), and the guideline check judges the pair
  (not compliant is `guideline_failed`).

A reply that is not the JSON asked for is a reject named by the model's role and the failure (`relevance_refused`,
`writer_malformed_json`, `checker_wrong_shape`, ...). The writer's temporal-stability judgement sends a pair that may
change to the `longitudinal` split; it is not dropped. A check by the writer's own model says `same-model`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.answers import text
from timelyqa.errors import ConfigError
from timelyqa.llm import prompts
from timelyqa.llm.check import Models, models_from_env, normalize, sub_match
from timelyqa.llm.client import LLM, Reply, ReplyFailure
from timelyqa.news.facts import article_masks
from timelyqa.news.frames import ARTICLE_SCHEMA, EVENT_SCHEMA
from timelyqa.news.gate import RULES, NewsQualityReject, gate_row
from timelyqa.news.questions import ANSWERED, ArticleCheckReject, TemplateReject, Written, article_groups, news_record
from timelyqa.quality import GATE_PASSED, Gate, QualityReject
from timelyqa.reasons import Dropped, Reason
from timelyqa.site_tree.candidates import trim
from timelyqa.record import Verification

RELEVANCE, WRITER = "livenewsbench/relevance_check", "livenewsbench/qa_writer"
ANSWERER, GRADER, GUIDELINE = ("livenewsbench/independent_answerer", "livenewsbench/grader",
                               "livenewsbench/guideline_check")
LEVEL = "phrase"
MIN_ARTICLE_CHARS = 200
"""Fewer characters of an article in a prompt and no model can tell what it reports."""
FUNNEL = ("events_read", "events_with_articles", "articles_read", "articles_relevant", "questions_written",
          GATE_PASSED, ANSWERED, "questions_verified")
"""The counts of the LLM path, in funnel order: `pairs` counts the events, `written` the rest."""

RelevanceReject = Reason.derived(
    "RelevanceReject", "relevance_", ReplyFailure, "the writer model gave no relevance verdict: {explanation}",
    {"NOT_RELEVANT": ("article_not_relevant", "the writer model judged that the article does not report its event "
                                              "(LiveNewsBench Figure 5)")})
WriterReject = Reason.derived(
    "WriterReject", "writer_", ReplyFailure, "the writer model gave no Q&A pair: {explanation}",
    {"SKIPPED": ("writer_skipped", "the writer model skipped the article (N/A), as Figure 6 prefers to a weak pair"),
     "EMPTY_PAIR": ("writer_empty_pair", "the writer model's question or answer is empty"),
     "NO_STABILITY": ("writer_no_stability", "the writer model wrote a pair but judged no temporal stability (N/A)")})
CheckerReject = Reason.derived(
    "CheckerReject", "checker_", ReplyFailure, "the checker model gave no answer or verdict: {explanation}",
    {"ANSWERS_DISAGREE": ("answers_disagree", "the checker's own answer from the article is not graded A (correct) "
                                              "against the writer's answer (Figure 8)"),
     "GUIDELINE_FAILED": ("guideline_failed", "the checker model judged that the pair breaks a guideline of Figure 6")})
REASONS: dict[str, Reason] = {str(r): r for family in (RelevanceReject, WriterReject, CheckerReject, TemplateReject,
                                                     QualityReject, NewsQualityReject, ArticleCheckReject)
                              for r in family}
"""Every reason a row of the LLM path can carry, by its value (rows hold plain strings)."""


def pairs(events: pl.DataFrame, articles: pl.DataFrame) -> tuple[list[dict[str, Any]], list[Dropped],
                                                                 Counter[str]]:
    """One flat row an (event, article) pair, events by day and articles by URL; an event with none is `no_article`."""
    by_event = article_groups(articles.select(list(ARTICLE_SCHEMA)))
    rows: list[dict[str, Any]] = []
    dropped: list[Dropped] = []
    counts: Counter[str] = Counter()
    for event in events.select(list(EVENT_SCHEMA)).sort("date", "event_id").to_dicts():
        counts["events_read"] += 1
        kept = by_event.get(event["event_id"], [])
        counts["events_with_articles"] += bool(kept)
        if not kept:
            dropped.append(Dropped({"event_id": event["event_id"], "date": str(event["date"]),
                                    "summary": event["summary"]}, TemplateReject.NO_ARTICLE,
                                   f"{event['event_id']}: no article kept of {len(event['urls'] or [])} cited link(s)"))
        rows += [{**event, **article} for article in kept]
    return rows, dropped, counts


class NewsLLMWriter:
    """LiveNewsBench's writer steps on the writer model and its checks on the checker model."""

    def __init__(self, models: Models, *, article_chars: int = 12_000) -> None:
        if article_chars < MIN_ARTICLE_CHARS:
            raise ConfigError(f"article_chars must be {MIN_ARTICLE_CHARS} or more, not {article_chars}")
        self.models = models
        self.article_chars = article_chars
        self.relevance, self.writer = prompts.get(RELEVANCE), prompts.get(WRITER)
        self.answerer, self.grader, self.guideline = prompts.get(ANSWERER), prompts.get(GRADER), prompts.get(GUIDELINE)

    @property
    def generator(self) -> str:
        return f"{self.writer.id}+{self.models.writer.generator}"

    @property
    def llms(self) -> tuple[LLM, ...]:
        return (self.models.writer, self.models.checker)

    def write(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Each row judged relevant or not, and a relevant one given a Q&A pair checked by rule; in the rows' order."""
        out = [{**row, "question": None, "answer": None, "temporal_stability": None, "generator": self.generator,
                "reason": None, "detail": "", "verification": None} for row in rows]
        verdicts = self.models.writer.ask_all(self.relevance, [
            {"summary": r["summary"], "title": r["title"] or "", "content": self._text(r)} for r in out])
        for row, reply in zip(out, verdicts, strict=True):
            if not reply.ok:
                _drop(row, RelevanceReject(f"relevance_{reply.reason}"), reply.detail)
            elif not getattr(reply.value, "relevant", False):
                _drop(row, RelevanceReject.NOT_RELEVANT, _line(getattr(reply.value, "reason", "")))
        asked = [row for row in out if row["reason"] is None]
        written = self.models.writer.ask_all(self.writer, [{"article": self._text(r)} for r in asked])
        seen: set[str] = set()
        for row, reply in zip(asked, written, strict=True):
            self._pair(row, reply, seen)
        gate = Gate(RULES)
        for row in out:
            if row["reason"] is not None:
                continue
            told = [m.answer for m in article_masks(row, [row["text"] or ""])]
            candidate = gate_row(row, row["question"], text(row["answer"]), articles=[row], facts=told)
            if (sent_back := gate.check(candidate)) is not None:
                _drop(row, sent_back.reason, sent_back.detail)
            elif not sub_match(row["text"] or "", row["answer"]):
                _drop(row, ArticleCheckReject.ANSWER_NOT_IN_ARTICLE, f"{row['answer']!r} not in {row['url']}")
        return out

    def check(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Each written pair answered again from its article, graded against it, and checked by the guidelines."""
        out = [dict(row) for row in rows]
        asked = [row for row in out if row["reason"] is None and row["question"]]
        answers = self.models.checker.ask_all(self.answerer, [{"question": r["question"], "article": self._text(r)}
                                                              for r in asked])
        graded = []
        for row, reply in zip(asked, answers, strict=True):
            if not reply.ok:
                _drop(row, CheckerReject(f"checker_{reply.reason}"), f"{self.answerer.id}: {reply.detail}")
            else:
                graded.append((row, str(getattr(reply.value, "answer", ""))))
        grades = self.models.checker.ask_all(self.grader, [{"question": r["question"], "expected_answer": r["answer"],
                                                            "answer": a} for r, a in graded])
        agreed = []
        for (row, answer), reply in zip(graded, grades, strict=True):
            if not reply.ok:
                _drop(row, CheckerReject(f"checker_{reply.reason}"), f"{self.grader.id}: {reply.detail}")
            elif not getattr(reply.value, "correct", False):
                _drop(row, CheckerReject.ANSWERS_DISAGREE, f"the checker answered {_line(answer)!r}, graded "
                      f"{getattr(reply.value, 'grade', '?')} against {row['answer']!r}")
            else:
                agreed.append(row)
        verdicts = self.models.checker.ask_all(self.guideline, [{"question": r["question"], "answer": r["answer"]}
                                                                for r in agreed])
        for row, reply in zip(agreed, verdicts, strict=True):
            if not reply.ok:
                _drop(row, CheckerReject(f"checker_{reply.reason}"), f"{self.guideline.id}: {reply.detail}")
            elif not getattr(reply.value, "compliant", False):
                _drop(row, CheckerReject.GUIDELINE_FAILED, _line(getattr(reply.value, "reasoning", "")))
            else:
                row["verification"] = self._verification(row["question"]).model_dump()
        return out

    def _pair(self, row: dict[str, Any], reply: Reply[Any], seen: set[str]) -> None:
        """The writer's reply on `row`, or the first rule it fails: skipped, empty, no stability, asked before."""
        if not reply.ok:
            _drop(row, WriterReject(f"writer_{reply.reason}"), reply.detail)
            return
        value = reply.value
        question, answer = (" ".join(str(getattr(value, f, "") or "").split()) for f in ("question", "answer"))
        row.update(question=question or None, answer=answer or None)
        if getattr(value, "skipped", False):
            _drop(row, WriterReject.SKIPPED, _line(getattr(value, "explanation", "")))
        elif not question or not answer:
            _drop(row, WriterReject.EMPTY_PAIR, f"question {question!r}, answer {answer!r}")
        elif value.temporal_stability == "N/A":
            _drop(row, WriterReject.NO_STABILITY, f"{question!r} -> {answer!r}")
        elif normalize(question) in seen:
            _drop(row, TemplateReject.DUPLICATE_QUESTION, question)
        else:
            row["temporal_stability"] = value.temporal_stability
            seen.add(normalize(question))

    def _text(self, row: Mapping[str, Any]) -> str:
        return trim(row["text"] or "", self.article_chars)

    def _verification(self, question: str) -> Verification:
        """How a kept pair was verified: the three checker prompts, each one reply, on the checker's endpoint."""
        method = f"llm-verify:{'independent' if self.models.independent else 'same-model'}"
        return Verification(method=method, query=f"{self.answerer.id}+{self.grader.id}+{self.guideline.id}: "
                            f"{question}", endpoint=f"llm:{self.models.checker.settings.model}", result_count=3,
                            passed=True)


def written(rows: Sequence[Mapping[str, Any]], counts: Mapping[str, int] | None = None) -> Written:
    """The records of the rows that passed both steps, and every other row dropped with its reason; the funnel."""
    out = Written([], [], Counter(counts or {}))
    for row in rows:
        reason = REASONS[row["reason"]] if row["reason"] is not None else None
        out.counts["articles_read"] += 1
        out.counts["articles_relevant"] += not isinstance(reason, RelevanceReject)
        out.counts["questions_written"] += reason is None or isinstance(reason, (
            CheckerReject, QualityReject, NewsQualityReject, ArticleCheckReject))
        out.counts[GATE_PASSED] += reason is None or isinstance(reason, (CheckerReject, ArticleCheckReject))
        out.counts[ANSWERED] += reason is None or isinstance(reason, CheckerReject)
        if reason is None and row["verification"] is None:
            raise ValueError(f"the pair of {row['url']} was written but never checked: run `check` before `written`")
        if reason is not None:
            item = {k: (str(row[k]) if k == "date" else row[k]) for k in ("event_id", "date", "url", "question",
                                                                          "answer")}
            out.rejected.append(Dropped(item, reason, row["detail"]))
            continue
        out.counts["questions_verified"] += 1
        event = {k: row[k] for k in EVENT_SCHEMA}
        article = {k: row[k] for k in ARTICLE_SCHEMA}
        # The writer model's answer is a phrase of its own: the path knows no span or kind to type it by, and a type
        # guessed from the string afterwards is what issue 20 rules out. Text, graded by its words and the checker.
        out.records.append(news_record(event, article, question=row["question"], answer=text(row["answer"]),
                                       level=LEVEL,
                                       generator=row["generator"], verification=Verification(**row["verification"]),
                                       stability=row["temporal_stability"]))
    return out


def write_questions(events: pl.DataFrame, articles: pl.DataFrame, writer: NewsLLMWriter) -> Written:
    """Both steps in one call (a flow runs them as two tasks, `write` then `check`)."""
    rows, dropped, counts = pairs(events, articles)
    out = written(writer.check(writer.write(rows)), counts)
    out.rejected[:0] = dropped
    return out


def _drop(row: dict[str, Any], reason: Reason, detail: str) -> None:
    row["reason"], row["detail"] = str(reason), detail


def _line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def llm_news_writer(*, cache_dir: Path, environ: Mapping[str, str] | None = None, api_key: str | None = None,
                    check_api_key: str | None = None, article_chars: int = 12_000) -> NewsLLMWriter:
    """The writer as `TIMELYQA_LLM_*` and the checker as `TIMELYQA_CHECK_LLM_*` configure them (the writer checks
    itself when no checker is set), both checked before any work; replies cached in `cache_dir`."""
    return NewsLLMWriter(models_from_env(cache_dir=cache_dir, environ=environ, api_key=api_key,
                                         check_api_key=check_api_key), article_chars=article_chars)
