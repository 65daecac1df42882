"""The JSON each prompt must return, as pydantic models whose JSON schema is sent to the server."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Field order is generation order under a schema-constrained decoder: a reason field comes before the
# verdict it supports, so the model thinks first and decides second, as the papers' prompts ask.


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QueryOut(_Shape):
    """One query or question, nothing else (LiveNewsBench Figure 3, DailyQA Figure 7)."""

    query: str = Field(description="The search query, or the question, asked for; no answer and no explanation.")


class RelevanceOut(_Shape):
    """Whether an article reports the news event (LiveNewsBench Figure 5)."""

    reason: str = Field(description="Step-by-step thinking about whether the article reports the event.")
    relevant: bool = Field(description="True only if the article reports roughly the same event as the summary.")


TemporalStability = Literal["Unlikely to change over time", "May change in the next few years",
                            "May change within one year", "N/A"]


class QAOut(_Shape):
    """A Q&A pair written from one news article, or N/A everywhere when the article is skipped (Figure 6)."""

    question: str = Field(description="The proposed question, or N/A when the article is skipped.")
    answer: str = Field(description="The proposed answer: a few words or a short phrase, or N/A.")
    temporal_stability: TemporalStability = Field(
        description="Judgement of the temporal stability of the Q&A pair; N/A when the article is skipped.")
    explanation: str = Field(description="Why the pair meets the requirements, or why the article was skipped.")

    @property
    def skipped(self) -> bool:
        """True when the writer declined the article (the paper prefers a skip to a low-quality pair)."""
        return self.question.strip() == "N/A" or self.answer.strip() == "N/A"


class ReasonedAnswerOut(_Shape):
    """An answer derived independently from a source, with the reasoning before it (LiveNewsBench 2.2)."""

    reasoning: str = Field(description="Step-by-step reasoning from the source to the answer.")
    answer: str = Field(description="The answer: a few words or a short phrase, or N/A if the source lacks it.")


class AnswerOut(_Shape):
    """A bare answer, no analysis (DailyQA Figure 8)."""

    answer: str = Field(description="The answer, in the original words of the reference.")


class GuidelineOut(_Shape):
    """Whether a Q&A pair satisfies every guideline (LiveNewsBench 2.2, guideline adherence)."""

    reasoning: str = Field(description="Step-by-step assessment of the pair against each requirement.")
    compliant: bool = Field(description="True only if the Q&A pair satisfies all the requirements.")


_VERDICTS = {"A": "correct", "B": "incorrect", "C": "not_attempted"}


class GradeOut(_Shape):
    """A SimpleQA-style grade of a predicted answer against a gold target (LiveNewsBench Figure 8)."""

    grade: Literal["A", "B", "C"] = Field(description="A: CORRECT, B: INCORRECT, C: NOT ATTEMPTED.")

    @property
    def verdict(self) -> str:
        """The grade as a snake_case word: correct, incorrect or not_attempted."""
        return _VERDICTS[self.grade]

    @property
    def correct(self) -> bool:
        return self.grade == "A"


class MultiSourceQAOut(_Shape):
    """A query that needs two sublinks of one site together (WebWalker, multi-source Question Generate)."""

    sublink_reason: str = Field(
        description="Describe why these specific sublinks were chosen and how they are interrelated.")
    sublinks: list[str] = Field(description="The selected sublink URLs, at least two.")
    reason: str = Field(description="Explain the reason for designing this query and how it encourages the "
                                    "user to engage in multi-step reasoning.")
    query: str = Field(description="Your query statement.")
    answer: str = Field(description="The answer to the query: a short entity or judgment.")


class SingleSourceQAOut(_Shape):
    """A query whose answer lies in one deep page of a site (WebWalker, single-source Question Generate)."""

    reason: str = Field(description="Explain the reason for designing this query and how it encourages the "
                                    "user to engage in multi-step reasoning.")
    query: str = Field(description="Your query statement.")
    answer: str = Field(description="The answer to the query: a short entity or judgment.")


class VerifyOut(_Shape):
    """A strict judge's decision on a generated query and answer (WebWalker, Question-Answer Verify)."""

    reason: str = Field(description="Each condition assessed in sequence; if met, the helpful parts of the docs.")
    decision: bool = Field(description="True only if the query and answer meet every condition.")


Domain = Literal["Science and Technology", "Culture and Arts", "Geography and Environment", "Politics and Law",
                 "Business and Economics", "Sports and Entertainment", "Others"]


class DomainOut(_Shape):
    """One of DailyQA's seven domains for a query (DailyQA section 3, Classification)."""

    domain: Domain = Field(description="The query's domain, written exactly as one of the seven.")


class RepairOut(_Shape):
    """A repaired extraction workflow (RT-QA appendix A.2)."""

    diagnosis: str = Field(description="Why the workflow no longer works (site structure change, dead URL, "
                                       "stale element locator, ...).")
    workflow: str = Field(description="The complete repaired workflow code; same question, same output format.")


SHAPES: dict[str, type[BaseModel]] = {
    cls.__name__: cls
    for cls in (QueryOut, RelevanceOut, QAOut, ReasonedAnswerOut, AnswerOut, GuidelineOut, GradeOut,
                MultiSourceQAOut, SingleSourceQAOut, VerifyOut, RepairOut, DomainOut)
}
"""Every shape by class name: a template's `shape:` header names one of these."""


# RT-QA's recipes (timelyqa.official): the model writes data, never code. The nested objects are closed like
# the shapes, and every field is required (null where it does not apply), so strict JSON-schema decoders take them.

ExtractKind = Literal["number", "integer", "date", "text", "list"]


class ExtractOut(_Shape):
    """A recipe's `extract` (format v1): one of css or xpath, an optional regex, and the value's type."""

    css: str | None = Field(description="A CSS selector for the element(s) holding the value, or null with xpath.")
    xpath: str | None = Field(description="An XPath for the element(s) holding the value, or null with css.")
    regex: str | None = Field(description="A regular expression applied to each matched text (group 1 is taken "
                                          "when it has a group), or null when the text is the value as it is.")
    type: ExtractKind = Field(description="The value's type: number, integer, date, text or list.")


class RecipeRepairOut(_Shape):
    """A repaired extraction for a failing recipe (RT-QA appendix A.2, ported to recipes)."""

    diagnosis: str = Field(description="Why the recipe no longer works (layout change, moved class names, ...).")
    extract: ExtractOut = Field(description="The new extract: same question, same value, same output format.")


class DraftOut(_Shape):
    """One drafted question and its recipe."""

    reason: str = Field(description="Why the question is real-time and which part of the page answers it.")
    recipe: dict[str, Any] = Field(description="The recipe in format v1, as a JSON object.")


class RecipeDraftOut(_Shape):
    """Real-time questions and their recipes drafted for a site and a topic (RT-QA appendix A.1, ported)."""

    drafts: list[DraftOut] = Field(description="The drafted questions with their recipes, best first.")


class HopOut(_Shape):
    """An L2 or L3 variant of an L1 question: its target described through one or more hops."""

    base: str = Field(description="The id of the L1 recipe whose question this rewrites.")
    hops: list[str] = Field(description="The steps from what the question says to the target, in the order a "
                                        "reader resolves them: one for L2, two or more for L3.")
    question: str = Field(description="The rewritten question: same time window, same value, target described.")


class RecipeHopsOut(_Shape):
    """L2/L3 variants of L1 questions (RT-QA section 3.2, multi-hop expansion)."""

    variants: list[HopOut] = Field(description="The variants, each naming its L1 recipe.")


SHAPES.update({cls.__name__: cls for cls in (RecipeRepairOut, RecipeDraftOut, RecipeHopsOut)})
