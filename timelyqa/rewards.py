"""The one grader: a completion's final answer against a row's typed gold, for verl, TRL and `timelyqa eval`.

Every row carries `answer_type` and a normalised `answer_value` beside the display string `answer`; the grade
follows the type, and is the best over the answer and its aliases:

- `entity`, `text`: SQuAD normalisation (lowercase, no punctuation, no articles a/an/the, single spaces), equal to
  the answer or an alias. "Ravi Menon" == "ravi menon."; "2026" never earns "2026 FIFA World Cup". Punctuation
  between two digits separates them rather than vanishing: "4.31" is not "4.3.1". An entity's title before a name
  (Dr, Prof, Professor, Mr, Mrs, Ms, Mx, Sir, Dame) may be given or left out, on either side: "Dr Ravi Menon" ==
  "Ravi Menon", "Mei Lindqvist" == "Prof. Mei Lindqvist"; a title with one word after it stays ("Mr Bean").
- `number`: by value at the gold's precision (`answer_value.precision`, the power of ten of its last digit). Digits
  may be grouped by commas or by (no-break) spaces; a scale word counts ("18 million" == "18,000,000"); a bare
  number is also read in the question's scale (`answer_value.scale`: asked "in millions", "18" == 18,000,000).
  "ten" == "10" for a whole answer from zero to ninety-nine, and before a scale word ("eighteen million"). A value
  more precise than the gold is rounded to it; a coarser one is wrong unless it is the same value: gold "1.92" takes
  "1.920" and "1.9204", never "1.9" or "1.93"; gold "1.00" takes "1". A prediction that reads as a number is judged
  by its value alone, never by its text ("-14" is not "14", "192" is not "1.92"); the answer and aliases as text
  count for one that does not.
  A count may name what it counts ("31 currencies"), never a unit or a month ("31 hours", "31 May" are wrong).
- `quantity`: a number with a unit (`answer_value.unit`, a pint symbol such as `m`, `°C`, `km**2`, `%`, `EUR`).
  A bare number is read in the gold's unit (and scale); a number with a unit is converted by pint: "192 cm" ==
  "1.92 m", "57.2 °F" == "57.2F" == "14 °C", "€18 million" == "€18m" == "18m euros" == "18 million €" ==
  "EUR 18,000,000". A lone "C" or "F" is a temperature, and "14°" or "14 degrees" is in the gold's temperature
  unit. A unit of another kind ("1.92 kg") or another currency ("£18 million") is wrong.
- `date`: by value at the gold's precision (`answer_value.date`, ISO: `2026-11-05`, `2026-11` or `2026`), read
  with the standard library's `strptime` in any common English or ISO form, with or without the weekday (a wrong
  weekday is wrong), ordinals, "Sept" and "on"/"in" allowed. The prediction must be at least as precise as the gold
  and agree on every field it has: gold "February 1990" takes "1990-02" and "5 February 1990", never "1990". A
  prediction that reads as a date is judged by its value alone. Dates in digits are read where their order is
  certain: year first ("1990/02/05"), dots day first ("05.02.1990"), and slashes or dashes where one number cannot
  be a month or both are the same ("19/07/2026", "07/19/2026"); "02/05/1990" could be either and is not read.
- `list`: the items (`answer_value.items`) as a set, in any order and with any separators ("A, B and C",
  "A; B; C"); each item exactly once, nothing else; an item's parenthetical may be left out ("Ravi Menon" for
  "Ravi Menon (CEO)"). An item that is a number, an amount or a date is also read by value, as a row without a type
  is: "48; December 31, 2026" for "48; 31 December 2026", "1; 25,400 pounds" for "1; £25,400"; a count may name
  what it counts ("1 project"), never a unit.
- A row without a type (an older release) is graded as text (as above), or numbers and dates by value.

The final answer in a completion is the last `<answer>...</answer>`; without one, the last non-empty line if it
reads `Answer: ...` (also `Final answer:` and markdown bold); without either, the whole text minus `<think>`
blocks, which a long rambling answer then fails.

verl loads a reward function from a file path (`reward.custom_reward_function.path`): this file and the folder
`grading/` beside it (the grader's parts) must work copied into a trainer's environment, so they import nothing else
of timelyqa, and one package beside the standard library: `pint`, for units. GRADER_VERSION names these rules: a
change of a verdict is a new version.
"""

import importlib.util
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def _grading_beside() -> None:
    """Load the folder `grading/` beside this file as the package `timelyqa_grading`, for a trainer that loads this
    file by path where timelyqa is not installed (verl in its own environment)."""
    if "timelyqa_grading" in sys.modules:
        return
    folder = Path(__file__).resolve().with_name("grading")
    if not (folder / "__init__.py").is_file():
        raise ImportError(f"the grader's parts are missing: copy the folder {folder.name}/ beside {__file__}")
    spec = importlib.util.spec_from_file_location("timelyqa_grading", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ImportError(f"{folder}/__init__.py cannot be loaded as a package")
    package = importlib.util.module_from_spec(spec)
    sys.modules["timelyqa_grading"] = package
    spec.loader.exec_module(package)


try:  # imported as timelyqa.rewards, or loaded by path where timelyqa is installed
    from timelyqa.grading.amounts import Amount, parse_amount
    from timelyqa.grading.completion import completion_text, extract_answer
    from timelyqa.grading.dates import parse_date
    from timelyqa.grading.gold import Gold, grade, graded_f1, plain
    from timelyqa.grading.text import normalize
    from timelyqa.grading.units import currency_sign, parse_unit, unit_symbol, units
except ModuleNotFoundError as missing:
    if missing.name not in ("timelyqa", "timelyqa.grading"):
        raise
    _grading_beside()
    from timelyqa_grading.amounts import Amount, parse_amount  # type: ignore[no-redef]
    from timelyqa_grading.completion import completion_text, extract_answer  # type: ignore[no-redef]
    from timelyqa_grading.dates import parse_date  # type: ignore[no-redef]
    from timelyqa_grading.gold import Gold, grade, graded_f1, plain  # type: ignore[no-redef]
    from timelyqa_grading.text import normalize  # type: ignore[no-redef]
    from timelyqa_grading.units import currency_sign, parse_unit, unit_symbol, units  # type: ignore[no-redef]

__all__ = ["ANSWER_TYPES", "GRADER_VERSION", "Amount", "Gold", "answer_f1_reward", "answer_reward", "completion_text",
           "compute_score", "compute_score_f1", "currency_sign", "exact_match", "extract_answer",
           "gold_from_ground_truth", "grade", "graded_f1", "ground_truth_answers", "normalize", "parse_amount",
           "parse_date", "parse_unit", "token_f1", "unit_symbol", "units"]

GRADER_VERSION = "timelyqa_grader_v4"
"""Versioned name of the grading rules above; the manifest and the card name it, and rows are graded by it."""
ANSWER_TYPES = ("entity", "number", "quantity", "date", "list", "text")

# ---------------------------------------------------------------- older entry points (untyped answers)


def _golds(answers: str | Iterable[str]) -> list[str]:
    return [answers] if isinstance(answers, str) else [a for a in answers if isinstance(a, str) and a.strip()]


def exact_match(prediction: str, answers: str | Iterable[str]) -> float:
    """Grader v1 on an untyped answer and its aliases: text, or a number or date by value."""
    golds = _golds(answers)
    return grade(prediction, Gold(golds[0] if golds else "", tuple(golds[1:])))


def token_f1(prediction: str, answers: str | Iterable[str]) -> float:
    """SQuAD token F1, best over the answer and its aliases; 1.0 for a match by value."""
    golds = _golds(answers)
    return graded_f1(prediction, Gold(golds[0] if golds else "", tuple(golds[1:])))


# ---------------------------------------------------------------- verl


def gold_from_ground_truth(ground_truth: Any) -> Gold:
    """The gold in a verl ground_truth as the export writes it: {"target": [answer, *aliases], "answer_type": ...,
    "answer_value": {...}}. Also taken: a plain string or list, with numpy arrays in place of lists."""
    if isinstance(ground_truth, Mapping):
        target = plain(ground_truth.get("target"))
        value = ground_truth.get("answer_value")
        return Gold.of(target[0] if target else "", target[1:], ground_truth.get("answer_type"),
                       value if isinstance(value, Mapping) else None)
    target = [str(a) for a in plain(ground_truth) if a is not None]
    return Gold.of(target[0] if target else "", target[1:])


def ground_truth_answers(ground_truth: Any) -> list[str]:
    """The accepted answers in a verl ground_truth: the answer and its aliases."""
    return gold_from_ground_truth(ground_truth).accepted


# verl's reward managers pass reward_router_address and reward_model_tokenizer when a reward model is on, and
# every entry of reward_kwargs: the scorers take **kwargs and ignore them, or verl fails on the first batch.


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  **kwargs: Any) -> float:
    """verl's custom reward function: the grade (1.0 or 0.0) of the completion's final answer."""
    return grade(extract_answer(solution_str), gold_from_ground_truth(ground_truth))


def compute_score_f1(data_source: str, solution_str: str, ground_truth: Any,
                     extra_info: dict[str, Any] | None = None, **kwargs: Any) -> float:
    """verl's custom reward function, graded: token F1 for names and text, the grade for the other types."""
    return graded_f1(extract_answer(solution_str), gold_from_ground_truth(ground_truth))


# ---------------------------------------------------------------- TRL


def _trl_golds(answer: list[str], answer_aliases: list[Any], answer_type: list[Any] | None,
               answer_value: list[Any] | None) -> list[Gold]:
    types = answer_type if answer_type is not None else [None] * len(answer)
    values = answer_value if answer_value is not None else [None] * len(answer)
    return [Gold.of(a, aliases, t, v) for a, aliases, t, v in zip(answer, answer_aliases, types, values,
                                                                    strict=True)]


def answer_reward(completions: list[Any], answer: list[str], answer_aliases: list[Any],
                  answer_type: list[Any] | None = None, answer_value: list[Any] | None = None, **kwargs: Any
                  ) -> list[float]:
    """TRL GRPOTrainer reward function: the grade per completion against the row's typed gold."""
    golds = _trl_golds(answer, answer_aliases, answer_type, answer_value)
    return [grade(extract_answer(completion_text(c)), g) for c, g in zip(completions, golds, strict=True)]


def answer_f1_reward(completions: list[Any], answer: list[str], answer_aliases: list[Any],
                     answer_type: list[Any] | None = None, answer_value: list[Any] | None = None, **kwargs: Any
                     ) -> list[float]:
    """TRL GRPOTrainer reward function, graded: token F1 for names and text, the grade for the other types."""
    golds = _trl_golds(answer, answer_aliases, answer_type, answer_value)
    return [graded_f1(extract_answer(completion_text(c)), g) for c, g in zip(completions, golds, strict=True)]
