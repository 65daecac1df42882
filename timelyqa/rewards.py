"""Answer rewards for RLVR trainers: exact match and token F1 against an answer and its aliases, for verl and TRL.

The rules, in the order a completion meets them:

- The final answer is the last `<answer>...</answer>` in the completion (the LiveSearchBench/Search-R1
  prompt format the export asks for); without one, the last non-empty line if it reads `Answer: ...`
  (`Final answer:` and markdown bold too); without either, the whole text minus `<think>` blocks. A long
  rambling answer without a tag or an answer line is therefore compared whole: exact match fails and
  token F1 is low (the gold tokens over every token written).
- Text is compared after SQuAD normalisation: lowercase, punctuation dropped, articles a/an/the dropped,
  whitespace collapsed. An empty prediction scores 0.
- Numbers are compared by value: "163,900" == "163900" == "163900.0", and "1.850 metres" == "1.85 metre"
  (units equal up to plural, metre/meter spelling, "%" == "percent"). The unit is part of the answer:
  "1.85" earns "1.85 metre" only when the row lists the bare number as an alias, as Wikidata rows do for
  every quantity. So "2026" never earns "2026 FIFA World Cup", and a word appended to a number
  ("163,900 people", "163,900 or more") fails unless the gold has it.
- Thousands may be grouped by commas or by spaces, no-break and narrow no-break spaces too ("1 219 530" ==
  "1,219,530"), with one separator throughout and groups of three: "1 5" and "1,219 530" are not numbers.
- A whole answer from "zero" to "ninety-nine" in words is that number ("ten" == "10", "twenty-one" ==
  "21"); so a gold that is such a word alone ("One", a song) also accepts the digits. A number word in a
  longer answer stays text, so names keep their words: "one of them" != "1", "Ten Downing Street" !=
  "10 Downing Street". Scale words are not read ("one hundred" != "100"): their combinations ("a hundred",
  "two hundred thousand") are where misreadings start.
- Dates are compared by value: "5 February 1990" == "1990-02-05" == "February 5, 1990" (also
  "the 5th of Feb. 1990", an ISO timestamp, a leading "on"/"in"). A prediction must be at least as precise
  as the gold and agree on every field the gold has: gold "February 1990" is matched by "1990-02" and by
  "5 February 1990", never by "1990"; gold "5 February 1990" is not matched by "February 1990". A bare
  four-digit number counts as a year. Numeric day/month orders ("02/05/1990") are ambiguous and not read.
- Every score is the best over the answer and its aliases.

Only the standard library is used, on purpose: verl loads a custom reward function from a file path
(`reward.custom_reward_function.path`), so this file must work copied alone into a trainer's environment.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

# ---------------------------------------------------------------- the final answer in a completion

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_THINK_END = re.compile(r"</think>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>.*", re.IGNORECASE | re.DOTALL)
_ANSWER_LINE = re.compile(r"^[\s*_#>-]*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[*_]*\s*[:：]\s*(.*)$",
                          re.IGNORECASE)
_WRAPPING = "*_\"'`“”‘’()[] \t\n"


def extract_answer(completion: str) -> str:
    """The final answer a completion gives (see the module docstring for the order of the rules)."""
    tagged = _ANSWER_TAG.findall(completion)
    if tagged:
        return tagged[-1].strip()
    # Reasoning is not the answer: drop all up to the last </think> (chat templates may open <think> in
    # the prompt), and an unterminated <think> to the end (a completion cut off while thinking).
    text = _THINK_OPEN.sub(" ", _THINK_END.split(completion)[-1])
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and (line := _ANSWER_LINE.match(lines[-1])):
        return line.group(1).strip().strip("*_").strip()
    return text.strip()


# ---------------------------------------------------------------- SQuAD normalisation and token F1

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _is_punctuation(ch: str) -> bool:
    # SQuAD's string.punctuation, plus Unicode punctuation (curly quotes, dashes) that models emit.
    return ch in string.punctuation or unicodedata.category(ch).startswith("P")


def normalize(text: str) -> str:
    """SQuAD normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if not _is_punctuation(ch))
    return " ".join(_ARTICLES.sub(" ", text).split())


def _token_f1(prediction: str, gold: str) -> float:
    pred, truth = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(pred) & Counter(truth)).values())
    if not pred or not truth or not common:
        return 0.0
    precision, recall = common / len(pred), common / len(truth)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------- numbers by value

# Thousands separated by one separator, used throughout: "1,219 530" reads as a number followed by digits, not
# a number. No-break, narrow no-break and thin spaces are plain spaces here: parse_number applies NFKC first.
_NUMBER = re.compile(
    r"^(?P<sign>[-+]?)(?P<int>\d{1,3}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*|\d*)(?P<frac>\.\d+)?\.?\s*(?P<unit>.*)$")
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS = {word: n for n, word in enumerate(_ONES)} | {
    f"{tens} {one}".strip(): 20 + 10 * t + n
    for t, tens in enumerate(_TENS) for n, one in enumerate(["", *_ONES[1:10]])}
_UNIT_SPELLINGS = {"meter": "metre", "kilometer": "kilometre", "centimeter": "centimetre",
                   "millimeter": "millimetre", "liter": "litre", "%": "percent", "per cent": "percent"}


def _unit(text: str) -> str:
    words = [w for w in re.split(r"\s+", text.lower().strip().rstrip(".")) if w]
    # Plural to singular, word by word ("square metres" -> "square metre"); "%" is kept as a word.
    words = [w[:-2] if w.endswith("es") and w[:-2] in {"inch", "foot"} else
             w[:-1] if w.endswith("s") and len(w) > 2 and not w.endswith("ss") else w for w in words]
    joined = " ".join(words)
    return _UNIT_SPELLINGS.get(joined, " ".join(_UNIT_SPELLINGS.get(w, w) for w in words))


def parse_number(text: str) -> tuple[Decimal, str] | None:
    """(value, normalised unit) of "163,900", "1 219 530", "1.85 metres", "-3.5", "12%", "ten"; else None."""
    text = unicodedata.normalize("NFKC", text).strip(_WRAPPING).replace("\u2212", "-")
    word = _NUMBER_WORDS.get(" ".join(re.split(r"[\s\u2010-]+", text.lower().rstrip("."))))
    if word is not None:  # only the whole answer: a number word opening a name stays text
        return Decimal(word), ""
    match = _NUMBER.match(text)
    if match is None or not (match["int"] or match["frac"]):
        return None
    digits = re.sub(r"[, ]", "", match["int"]) or "0"
    try:
        value = Decimal(f"{match['sign']}{digits}{match['frac'] or ''}")
    except InvalidOperation:
        return None
    unit = match["unit"]
    if unit and not re.fullmatch(r"[^\W\d][\w\s.²³/-]*|%", unit):
        return None  # "1990-02-05", "5-6": not a number followed by words
    return value, _unit(unit)


def _same_number(prediction: str, gold: str) -> bool:
    pred, truth = parse_number(prediction), parse_number(gold)
    # Units must agree too: a bare number is accepted through the row's aliases, not by dropping words here.
    return pred is not None and truth is not None and pred == truth


# ---------------------------------------------------------------- dates by value

_MONTHS = {name: n for n, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for name in names}
_MONTH = r"(?P<month>[a-z]+)\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATE_FORMS = [re.compile(f"^{form}$") for form in (
    r"(?P<year>\d{4})-(?P<mnum>\d{1,2})-(?P<day>\d{1,2})(?:t[\d:.]+(?:z|[+-]\d{2}:?\d{2})?)?",
    r"(?P<year>\d{4})-(?P<mnum>\d{1,2})",
    rf"(?:the )?{_DAY}(?: of)? {_MONTH},? {_YEAR}",
    rf"{_MONTH} {_DAY},? {_YEAR}",
    rf"{_MONTH},? {_YEAR}",
    _YEAR,
)]


def parse_date(text: str) -> tuple[int, ...] | None:
    """(year,), (year, month) or (year, month, day) of a date written in a common English or ISO form."""
    text = " ".join(unicodedata.normalize("NFKC", text).lower().strip(_WRAPPING).rstrip(".").split())
    text = re.sub(r"^(?:on|in) ", "", text)
    for form in _DATE_FORMS:
        match = form.match(text)
        if match is None:
            continue
        fields = match.groupdict()
        month = int(fields["mnum"]) if fields.get("mnum") else _MONTHS.get(fields.get("month") or "", 0)
        if fields.get("month") and not month:
            return None  # a word that is not a month
        year = int(fields["year"])
        try:
            date(year, month or 1, int(fields.get("day") or 1))  # rejects 30 February and month 13
        except ValueError:
            return None
        if fields.get("day"):
            return year, month, int(fields["day"])
        return (year, month) if month else (year,)
    return None


def _same_date(prediction: str, gold: str) -> bool:
    pred, truth = parse_date(prediction), parse_date(gold)
    # The prediction must be at least as precise as the gold: "1990" never earns "February 1990".
    return pred is not None and truth is not None and len(pred) >= len(truth) and pred[:len(truth)] == truth


# ---------------------------------------------------------------- scores


def _golds(answers: str | Iterable[str]) -> list[str]:
    if isinstance(answers, str):
        return [answers]
    return [a for a in answers if isinstance(a, str) and a.strip()]


def _value_match(prediction: str, gold: str) -> bool:
    return _same_number(prediction, gold) or _same_date(prediction, gold)


def exact_match(prediction: str, answers: str | Iterable[str]) -> float:
    """1.0 when the prediction equals the answer or an alias after normalisation, or by value; else 0.0."""
    key = normalize(prediction)
    if not key:
        return 0.0
    return float(any(normalize(g) == key or _value_match(prediction, g) for g in _golds(answers)))


def token_f1(prediction: str, answers: str | Iterable[str]) -> float:
    """SQuAD token F1, best over the answer and its aliases; 1.0 for a match by value."""
    if not normalize(prediction):
        return 0.0
    return max((1.0 if _value_match(prediction, g) else _token_f1(prediction, g) for g in _golds(answers)),
               default=0.0)


def ground_truth_answers(ground_truth: Any) -> list[str]:
    """The accepted answers in a verl ground_truth: {"target": [answer, *aliases]} as the export writes it.

    Also taken: a plain string, a list, and numpy arrays in place of lists (what pandas gives back).
    """
    if isinstance(ground_truth, dict):
        ground_truth = ground_truth.get("target", [])
    if hasattr(ground_truth, "tolist"):
        ground_truth = ground_truth.tolist()
    if isinstance(ground_truth, str):
        return [ground_truth]
    return [str(a) for a in ground_truth or [] if a is not None]


# verl's reward managers pass reward_router_address and reward_model_tokenizer when a reward model is on, and
# every entry of reward_kwargs: the scorers take **kwargs and ignore them, or verl fails on the first batch.


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  **kwargs: Any) -> float:
    """verl's custom reward function: exact match (1.0 or 0.0) of the completion's final answer."""
    return exact_match(extract_answer(solution_str), ground_truth_answers(ground_truth))


def compute_score_f1(data_source: str, solution_str: str, ground_truth: Any,
                     extra_info: dict[str, Any] | None = None, **kwargs: Any) -> float:
    """verl's custom reward function, graded: token F1 of the completion's final answer."""
    return token_f1(extract_answer(solution_str), ground_truth_answers(ground_truth))


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    messages = [m for m in completion if isinstance(m, dict)]
    replies = [m for m in messages if m.get("role", "assistant") == "assistant"] or messages
    content = replies[-1].get("content", "") if replies else ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _accepted(answer: str, aliases: Any) -> list[str]:
    if hasattr(aliases, "tolist"):
        aliases = aliases.tolist()
    return [answer, *(aliases or [])]


def answer_reward(completions: list[Any], answer: list[str], answer_aliases: list[Any], **kwargs: Any
                  ) -> list[float]:
    """TRL GRPOTrainer reward function: exact match per completion against the row's answer and aliases."""
    return [exact_match(extract_answer(completion_text(c)), _accepted(a, aliases))
            for c, a, aliases in zip(completions, answer, answer_aliases, strict=True)]


def answer_f1_reward(completions: list[Any], answer: list[str], answer_aliases: list[Any], **kwargs: Any
                     ) -> list[float]:
    """TRL GRPOTrainer reward function, graded: token F1 per completion."""
    return [token_f1(extract_answer(completion_text(c)), _accepted(a, aliases))
            for c, a, aliases in zip(completions, answer, answer_aliases, strict=True)]
