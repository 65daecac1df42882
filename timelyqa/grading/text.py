"""SQuAD normalisation and token F1: how the grader compares names and text."""

import re
import string
import unicodedata
from collections import Counter

WRAPPING = "*_\"'`“”‘’()[] \t\n"
"""What a model may wrap an answer in (quotes, brackets, bold), stripped before a value is read."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _is_punctuation(ch: str) -> bool:
    # SQuAD's string.punctuation, plus Unicode punctuation (curly quotes, dashes) that models emit.
    return ch in string.punctuation or unicodedata.category(ch).startswith("P")


_DIGIT_PUNCTUATION = re.compile(r"(?<=\d)[^\w\s]+(?=\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def normalize(text: str) -> str:
    """SQuAD normalisation: lowercase, no punctuation, no articles, single spaces; except that punctuation between
    two digits separates them ("4.3.1" -> "4 3 1"), so that "4.31" is not "4.3.1" nor "192 m" "1.92 m", but for a
    comma grouping thousands ("1,200 widgets" == "1200 widgets")."""
    text = _DIGIT_PUNCTUATION.sub(" ", _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower()))
    text = "".join(ch for ch in text if not _is_punctuation(ch))
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    pred, truth = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(pred) & Counter(truth)).values())
    if not pred or not truth or not common:
        return 0.0
    precision, recall = common / len(pred), common / len(truth)
    return 2 * precision * recall / (precision + recall)

