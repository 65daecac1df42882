"""How well an extracted article body matches the true one: the metric of the article-extraction benchmark
(scrapinghub/article-extraction-benchmark), so that our scores stand beside the published ones."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

TOKEN = re.compile(r"\w+")
"""A token is a run of Unicode word characters; case is kept."""
SHINGLE = 4
"""Tokens in a shingle; a shorter text is one shingle of all its tokens."""


@dataclass(frozen=True, slots=True)
class Match:
    """One page's shingle counts, each divided by their sum so that a long page weighs no more than a short one."""

    tp: float
    fp: float
    fn: float
    exact: bool
    """The predicted token list equals the true one."""


@dataclass(frozen=True, slots=True)
class Scores:
    f1: float
    precision: float
    recall: float
    accuracy: float
    pages: int

    def line(self) -> str:
        return (f"F1 {self.f1:.3f} (precision {self.precision:.3f}, recall {self.recall:.3f}), "
                f"accuracy {self.accuracy:.3f} on {self.pages} pages")


def tokens(text: str | None) -> list[str]:
    return TOKEN.findall(text or "")


def shingles(text: str | None) -> Counter[str]:
    """The text's runs of SHINGLE tokens, counted with multiplicity; none for a text without tokens."""
    words = tokens(text)
    if not words:
        return Counter()
    return Counter(" ".join(words[i:i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1)))


def match(true: str | None, predicted: str | None) -> Match:
    """The shingles the prediction shares with the truth (tp), has in excess (fp) and misses (fn), normalised."""
    want, got = shingles(true), shingles(predicted)
    tp = sum((want & got).values())
    fp = sum((got - want).values())
    fn = sum((want - got).values())
    total = tp + fp + fn
    scale = 1 / total if total else 0.0
    return Match(tp * scale, fp * scale, fn * scale, exact=tokens(true) == tokens(predicted))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def score(pairs: Iterable[tuple[str | None, str | None]]) -> Scores:
    """Scores of (true, predicted) texts: precision is the mean of tp/(tp+fp) over pages with tp+fp > 0, recall
    of tp/(tp+fn) over pages with tp+fn > 0, both 1 on a page with fp = fn = 0 (two empty texts agree)."""
    matches = [match(true, predicted) for true, predicted in pairs]
    precision = _mean([1.0 if m.fp == m.fn == 0 else m.tp / (m.tp + m.fp)
                       for m in matches if m.fp == m.fn == 0 or m.tp + m.fp > 0])
    recall = _mean([1.0 if m.fp == m.fn == 0 else m.tp / (m.tp + m.fn)
                    for m in matches if m.fp == m.fn == 0 or m.tp + m.fn > 0])
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    accuracy = _mean([1.0 if m.exact else 0.0 for m in matches])
    return Scores(f1=f1, precision=precision, recall=recall, accuracy=accuracy, pages=len(matches))
