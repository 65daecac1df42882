"""The one grader: a completion's final answer against a row's typed gold, for verl, TRL and `timelyqa eval`.

Every row carries `answer_type` and a normalised `answer_value` beside the display string `answer`; the grade
follows the type, and is the best over the answer and its aliases:

- `entity`, `text`: SQuAD normalisation (lowercase, no punctuation, no articles a/an/the, single spaces), equal to
  the answer or an alias. "Ravi Menon" == "ravi menon."; "2026" never earns "2026 FIFA World Cup". Punctuation
  between two digits separates them rather than vanishing: "4.31" is not "4.3.1".
- `number`: by value at the gold's precision (`answer_value.precision`, the power of ten of its last digit). Digits
  may be grouped by commas or by (no-break) spaces; a scale word counts ("18 million" == "18,000,000"); a bare
  number is also read in the question's scale (`answer_value.scale`: asked "in millions", "18" == 18,000,000).
  "ten" == "10" for a whole answer from zero to ninety-nine. A value more precise than the gold is rounded to it;
  a coarser one is wrong unless it is the same value: gold "1.92" takes "1.920" and "1.9204", never "1.9" or
  "1.93"; gold "1.00" takes "1". A prediction that reads as a number is judged by its value alone, never by its
  text ("-14" is not "14", "192" is not "1.92"); the answer and aliases as text count for one that does not.
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
  prediction that reads as a date is judged by its value alone. Numeric day/month orders ("02/05/1990") are
  ambiguous and not read.
- `list`: the items (`answer_value.items`) as a set, in any order and with any separators ("A, B and C",
  "A; B; C"); each item exactly once, nothing else; an item's parenthetical may be left out ("Ravi Menon" for
  "Ravi Menon (CEO)").
- A row without a type (an older release) is graded as text (as above), or numbers and dates by value.

The final answer in a completion is the last `<answer>...</answer>`; without one, the last non-empty line if it
reads `Answer: ...` (also `Final answer:` and markdown bold); without either, the whole text minus `<think>`
blocks, which a long rambling answer then fails.

verl loads a reward function from a file path (`reward.custom_reward_function.path`): this file must work copied
alone into a trainer's environment, so it imports nothing of timelyqa, and one package beside the standard library:
`pint`, for units. GRADER_VERSION names these rules: a change of a verdict is a new version.
"""

# No `from __future__ import annotations`: with string annotations, @dataclass looks this module up in sys.modules,
# and a loader that executes the file by path without registering it there (as tests/test_cli.py does) fails.
import re
import string
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import pint

GRADER_VERSION = "timelyqa_grader_v2"
"""Versioned name of the grading rules above; the manifest and the card name it, and rows are graded by it."""
ANSWER_TYPES = ("entity", "number", "quantity", "date", "list", "text")

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


_DIGIT_PUNCTUATION = re.compile(r"(?<=\d)[^\w\s]+(?=\d)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def normalize(text: str) -> str:
    """SQuAD normalisation: lowercase, no punctuation, no articles, single spaces; except that punctuation between
    two digits separates them ("4.3.1" -> "4 3 1"), so that "4.31" is not "4.3.1" nor "192 m" "1.92 m", but for a
    comma grouping thousands ("1,200 widgets" == "1200 widgets")."""
    text = _DIGIT_PUNCTUATION.sub(" ", _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower()))
    text = "".join(ch for ch in text if not _is_punctuation(ch))
    return " ".join(_ARTICLES.sub(" ", text).split())


def _token_f1(prediction: str, gold: str) -> float:
    pred, truth = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(pred) & Counter(truth)).values())
    if not pred or not truth or not common:
        return 0.0
    precision, recall = common / len(pred), common / len(truth)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------- units (pint)

_CURRENCIES = {"EUR": ("€", "euro"), "GBP": ("£", "pound_sterling"), "USD": ("$", "US_dollar"),
               "JPY": ("¥", "yen"), "CHF": ("", "Swiss_franc"), "INR": ("₹", "rupee")}
"""Currencies pint lacks, each a dimension of its own: a price in euros never converts to pounds."""
_CURRENCY_WORDS = {"euro": "EUR", "pound": "GBP", "pounds sterling": "GBP", "pound sterling": "GBP",
                   "dollar": "USD", "us dollar": "USD", "united states dollar": "USD", "yen": "JPY",
                   "japanese yen": "JPY", "swiss franc": "CHF", "franc": "CHF", "rupee": "INR", "indian rupee": "INR"}
"""Currency names as people and Wikidata's unit labels write them ("United States dollar")."""


@lru_cache(maxsize=1)
def units() -> pint.UnitRegistry:
    """pint's registry with the currencies defined (built once: about 0.4 s)."""
    registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    for code, (_, name) in _CURRENCIES.items():
        registry.define(f"{code} = [currency_{code}] = _ = {name}")
    return registry


def _unit_text(text: str) -> str:
    """What pint should read of a unit as people write it: "degrees Celsius" -> "degC", "km2" -> "km**2"."""
    text = text.strip().rstrip(".")
    # A bare "C" or "F" after a number is a temperature ("14C", "57.2F"), never coulombs or farads.
    text = re.sub(r"(?i)^(?:(?:degrees?|deg\.?|°)\s*)?(c|f|celsius|fahrenheit|centigrade)$",
                  lambda m: "deg" + m[1][0].upper(), text)
    text = re.sub(r"(?i)^(?:per\s*cent|percent(?:age)?(?:\s+points?)?|%)$", "percent", text)
    text = re.sub(r"(?i)\bsq(?:uare)?\.?\s+([a-z]+)", r"\1**2", text)
    text = re.sub(r"(?i)\bcu(?:bic)?\.?\s+([a-z]+)", r"\1**3", text)
    text = re.sub(r"(?<=[A-Za-z])([23])\b", r"**\1", text)
    return text.replace("²", "**2").replace("³", "**3")


def parse_unit(text: str) -> pint.Unit | None:
    """The pint unit of a unit written in a common form ("m", "metres", "°C", "km²", "%", "EUR"), or None."""
    text = _unit_text(text)
    if not text:
        return None
    code = _CURRENCY_WORDS.get(re.sub(r"e?s$", "", text.lower())) or _CURRENCY_WORDS.get(text.lower())
    if code:
        return units().Unit(code)
    # A unit named in several words is one pint name ("kilowatt hour", "light-year", "astronomical unit"); read
    # as written, pint would multiply the words (hour * kilowatt) or fail on the hyphen.
    joined = re.sub(r"[\s-]+", "_", text) if re.fullmatch(r"[A-Za-z]+(?:[\s-]+[A-Za-z]+)+", text) else None
    for candidate in filter(None, (joined, text)):
        try:
            return units().parse_units(candidate)
        except Exception:  # pint raises several kinds (undefined unit, tokenizer, definition syntax) for non-units
            continue
    return None


def currency_sign(code: str) -> str:
    """The sign a currency is written with ("EUR" -> "€"), or "" when it has none or is no currency."""
    return _CURRENCIES.get(code, ("", ""))[0]


def unit_symbol(unit: pint.Unit) -> str:
    """The compact pint symbol a row stores: "m", "°C", "km**2", "%", "EUR"."""
    return format(unit, "~C")


# ---------------------------------------------------------------- numbers and amounts by value

# Thousands separated by one separator, used throughout: "1,219 530" reads as a number followed by digits, not
# a number. No-break, narrow no-break and thin spaces are plain spaces here: NFKC applies first.
_NUMBER = re.compile(
    r"^(?P<sign>[-+]?)(?P<int>\d{1,3}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*|\d*)(?P<frac>\.\d+)?\s*(?P<rest>.*)$")
_PREFIX = re.compile(r"^(?P<code>[A-Z]{3}\s+|US\$|[€£$¥₹])\s*")
_SIGNS = {sign: code for code, (sign, _) in _CURRENCIES.items() if sign} | {"US$": "USD"}
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12, "mn": 6, "mln": 6, "bn": 9, "tn": 12}
_SHORT_SCALES = {"k": 3, "m": 6, "bn": 9, "b": 9}
"""Only with a currency: "€18m" and "18m euros" are 18 million euros, "18 m" is 18 metres."""
_SCALE_WORD = re.compile(r"^(?P<word>[A-Za-z]+)\b\.?\s*(?:of\s+)?(?P<rest>.*)$")
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS = {word: n for n, word in enumerate(_ONES)} | {
    f"{tens} {one}".strip(): 20 + 10 * t + n
    for t, tens in enumerate(_TENS) for n, one in enumerate(["", *_ONES[1:10]])}


@dataclass(frozen=True, slots=True)
class Amount:
    """A number as written: its value with the scale word applied, the scale word's power, and its unit text."""

    value: Decimal
    scale: int
    unit: str


def parse_amount(text: str) -> Amount | None:
    """"163,900", "1 219 530", "1.92 m", "€18 million", "18m euros", "18 million €", "-3.5", "54%", "ten"; else
    None."""
    # "º" (the ordinal sign some keyboards give for a degree) would be an "o" after NFKC.
    text = unicodedata.normalize("NFKC", text.replace("º", "°")).strip(_WRAPPING).replace("\u2212", "-").rstrip(".")
    word = _NUMBER_WORDS.get(" ".join(re.split(r"[\s\u2010-]+", text.lower())))
    if word is not None:  # only the whole answer: a number word opening a name stays text
        return Amount(Decimal(word), 0, "")
    currency = ""
    if prefix := _PREFIX.match(text):
        symbol = prefix["code"].strip()
        currency = _SIGNS.get(symbol, symbol)
        text = text[prefix.end():]
    match = _NUMBER.match(text)
    if match is None or not (match["int"] or match["frac"]):
        return None
    try:
        value = Decimal(f"{match['sign']}{re.sub(r'[, ]', '', match['int']) or '0'}{match['frac'] or ''}")
    except InvalidOperation:
        return None
    rest, scale = match["rest"].strip(), 0
    if rest and (scaled := _SCALE_WORD.match(rest)):
        word = scaled["word"].lower()
        power = _SCALES.get(word.rstrip("s") if word.endswith("s") and len(word) > 3 else word)
        if power is None and (currency or _currency_after(scaled["rest"])):
            power = _SHORT_SCALES.get(word)
        if power is not None:
            scale, rest = power, scaled["rest"].strip()
    if not currency and rest in _SIGNS:  # "18 million €", "26 900 £"
        currency, rest = _SIGNS[rest], ""
    if rest and not re.fullmatch(r"[^\W\d][\w\s.²³/*°-]*|%|°\s*[CF]?", rest):
        return None  # "1990-02-05", "5-6", "4.3.1": not a number followed by words
    if currency and rest:
        return None  # "€18 metres"
    return Amount(value.scaleb(scale), scale, currency or rest)


def _currency_after(rest: str) -> bool:
    """Whether what follows a short scale ("m", "bn", "k") names a currency: "18m euros", "18m €", "18m EUR"."""
    rest = rest.strip()
    if rest in _SIGNS:
        return True
    unit = parse_unit(rest) if rest and rest[0].isalpha() else None
    return unit is not None and str(unit) in _CURRENCIES


def _precision(value: Decimal) -> int:
    """The power of ten of a decimal's last digit as written: 1.92 -> -2, 163900 -> 0, 18E+6 -> 6."""
    exponent = value.as_tuple().exponent
    return exponent if isinstance(exponent, int) else 0


def _rounded(value: Decimal, precision: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(precision), rounding=ROUND_HALF_EVEN)


# ---------------------------------------------------------------- dates by value

_DAY_FORMS = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y")
_MONTH_FORMS = ("%B %Y", "%b %Y")


def _weekday(word: str) -> int | None:
    for form in ("%A", "%a"):
        try:
            return time.strptime(word, form).tm_wday
        except ValueError:
            continue
    return None


def parse_date(text: str) -> tuple[int, ...] | None:
    """(year,), (year, month) or (year, month, day) of a date in a common English or ISO form; else None."""
    text = unicodedata.normalize("NFKC", text).strip(_WRAPPING).rstrip(".")
    text = re.sub(r"(?i)^(?:on|in)\s+", "", text)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?", text):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00")) if len(text) > 10 else \
                date.fromisoformat(text)
        except ValueError:
            return None
        return moment.year, moment.month, moment.day
    if re.fullmatch(r"\d{4}-\d{1,2}", text):
        year, month = map(int, text.split("-"))
        return (year, month) if 1 <= month <= 12 else None
    if re.fullmatch(r"\d{4}", text):
        return (int(text),)
    words = re.sub(r"(?i)(\d)(?:st|nd|rd|th)\b", r"\1", text)
    words = re.sub(r"(?i)\bsept\b", "Sep", words)  # strptime's %b knows "Sep" only
    words = re.sub(r"(?i)\b(?:the|of)\b|,|(?<=[A-Za-z])\.", " ", words).split()
    if not words:
        return None
    weekday = _weekday(words[0])
    if weekday is not None:
        words = words[1:]
    joined = " ".join(words)
    for forms, fields in ((_DAY_FORMS, 3), (_MONTH_FORMS, 2)):
        for form in forms:
            try:
                parsed = datetime.strptime(joined, form)
            except ValueError:
                continue
            if weekday is not None and (fields < 3 or parsed.weekday() != weekday):
                return None  # "Friday 5 November 2026" when the 5th is a Thursday
            return (parsed.year, parsed.month, parsed.day)[:fields]
    return None


def _iso_fields(iso: str) -> tuple[int, ...] | None:
    try:
        return tuple(int(part) for part in iso.split("-")) or None
    except ValueError:
        return None


# ---------------------------------------------------------------- the typed gold


@dataclass(frozen=True)
class Gold:
    """What a row says its answer is: the display string, its aliases, its type and its normalised value."""

    answer: str
    aliases: tuple[str, ...] = ()
    type: str | None = None
    number: Decimal | None = None
    precision: int | None = None
    unit: str | None = None
    scale: int = 0
    date: tuple[int, ...] | None = None
    items: tuple[str, ...] = ()

    @classmethod
    def of(cls, answer: str, aliases: Any = (), answer_type: str | None = None,
           answer_value: Mapping[str, Any] | None = None) -> "Gold":
        """The gold of a row's fields as any consumer holds them (lists or numpy arrays, a dict or None)."""
        value = dict(answer_value or {})
        number = value.get("number")
        precision = value.get("precision")
        parsed = Decimal(str(number)) if number not in (None, "") else None
        return cls(
            answer=str(answer or ""), aliases=tuple(str(a) for a in _plain(aliases) if a),
            type=str(answer_type) if answer_type else None, number=parsed,
            precision=int(precision) if precision is not None else (_precision(parsed) if parsed is not None
                                                                    else None),
            unit=value.get("unit") or None, scale=int(value.get("scale") or 0),
            date=_iso_fields(str(value["date"])) if value.get("date") else None,
            items=tuple(str(i) for i in _plain(value.get("items")) if i))

    @property
    def accepted(self) -> list[str]:
        return [a for a in (self.answer, *self.aliases) if a.strip()]


def _plain(values: Any) -> list[Any]:
    if values is None:
        return []
    if hasattr(values, "tolist"):
        values = values.tolist()
    return [values] if isinstance(values, str) else list(values)


def _same_amount(prediction: str, gold: Gold) -> bool:
    amount = parse_amount(prediction)
    if amount is None or gold.number is None:
        return False
    precision = gold.precision if gold.precision is not None else _precision(gold.number)
    target = _rounded(gold.number, precision)
    if amount.unit and not gold.unit:
        # A count may name what it counts ("31 currencies", "3 departures"), never a unit: "14 °C" or "3 hours" for
        # "how many members" is wrong, and so is a month ("4 November" is a date, not 4).
        if parse_unit(amount.unit) is not None or _is_month(amount.unit.split()[0]):
            return False
        amount = Amount(amount.value, amount.scale, "")
    if amount.unit:
        want, have = parse_unit(gold.unit), parse_unit(amount.unit)
        if want is None or have is None:
            return False
        if have == units().degree and want.dimensionality == units().kelvin.dimensionality:
            have = want  # "14°" or "14 degrees" asked in degrees Celsius: the question's degrees, not an angle
        try:
            converted = units().Quantity(float(amount.value), have).to(want).magnitude
        except Exception:  # pint.DimensionalityError and kin: "1.92 kg" for "1.92 m"
            return False
        values = [Decimal(repr(float(converted)))]
    else:
        # A bare number: in the gold's unit, as the full number or in the question's scale ("18" for 18 million).
        values = [amount.value]
        if gold.scale and not amount.scale:
            values.append(amount.value.scaleb(gold.scale))
    return any(_rounded(v, precision) == target for v in values)


def _is_month(word: str) -> bool:
    for form in ("%B", "%b"):
        try:
            time.strptime(word.rstrip("."), form)
            return True
        except ValueError:
            continue
    return False


def _same_date(prediction: str, gold: Gold) -> bool:
    pred = parse_date(prediction)
    # The prediction must be at least as precise as the gold: "1990" never earns "February 1990".
    return pred is not None and gold.date is not None and len(pred) >= len(gold.date) and \
        pred[:len(gold.date)] == gold.date


def _item_forms(item: str) -> list[tuple[str, ...]]:
    forms = {tuple(normalize(re.sub(r"[;,&|/\n•·]", " ", item)).split())}
    bare = re.sub(r"\s*\([^)]*\)", "", item).strip()
    if bare and bare != item:
        forms.add(tuple(normalize(bare).split()))
    return sorted((f for f in forms if f), key=len, reverse=True)


def _same_list(prediction: str, items: tuple[str, ...]) -> bool:
    """Every item exactly once and nothing else but separators and "and", in any order."""
    tokens = normalize(re.sub(r"[;,&|/\n•·]", " ", prediction)).split()
    forms = [_item_forms(item) for item in items]
    if not tokens or not all(forms) or len(items) > 64:
        return False

    def cover(position: int, used: frozenset[int]) -> bool:
        if position == len(tokens):
            return len(used) == len(items)
        if tokens[position] == "and":
            return cover(position + 1, used)
        for index, item in enumerate(forms):
            if index in used:
                continue
            for form in item:
                if tuple(tokens[position:position + len(form)]) == form and \
                        cover(position + len(form), used | {index}):
                    return True
        return False

    return cover(0, frozenset())


def _text_match(prediction: str, gold: Gold) -> bool:
    key = normalize(prediction)
    return bool(key) and any(normalize(a) == key for a in gold.accepted)


def _same_unit(one: str, other: str) -> bool:
    if normalize(one) == normalize(other):
        return True
    first, second = parse_unit(one) if one else None, parse_unit(other) if other else None
    return first is not None and first == second


def _untyped_value_match(prediction: str, answer: str) -> bool:
    """The rules of rows without a type (grader v1): a number or a date written in another form."""
    amount, truth = parse_amount(prediction), parse_amount(answer)
    if amount is not None and truth is not None and amount.value == truth.value and _same_unit(amount.unit, truth.unit):
        return True
    pred, want = parse_date(prediction), parse_date(answer)
    return pred is not None and want is not None and len(pred) >= len(want) and pred[:len(want)] == want


def grade(prediction: str, gold: Gold) -> float:
    """1.0 when the prediction is the gold answer by the rules of its type (the module docstring), else 0.0."""
    prediction = prediction.strip()
    if not normalize(prediction):
        return 0.0
    kind = gold.type
    # A number or a date the grader can read is judged by its value alone: text equality drops signs and would
    # take "-14 °C" for "14 °C". The text of the answer and aliases still counts for what reads as no value.
    if kind in ("number", "quantity") and parse_amount(prediction) is not None:
        return float(_same_amount(prediction, gold))
    if kind == "date" and parse_date(prediction) is not None:
        return float(_same_date(prediction, gold))
    if _text_match(prediction, gold):
        return 1.0
    if kind == "list":
        return float(_same_list(prediction, gold.items))
    if kind is None:
        return float(any(_untyped_value_match(prediction, a) for a in gold.accepted))
    return 0.0


def graded_f1(prediction: str, gold: Gold) -> float:
    """Token F1 for names and text (best over the answer and aliases); for the other types their grade."""
    if grade(prediction, gold):
        return 1.0
    if gold.type in ("entity", "text", None):
        return max((_token_f1(prediction, a) for a in gold.accepted), default=0.0)
    return 0.0


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
        target = _plain(ground_truth.get("target"))
        value = ground_truth.get("answer_value")
        return Gold.of(target[0] if target else "", target[1:], ground_truth.get("answer_type"),
                       value if isinstance(value, Mapping) else None)
    target = [str(a) for a in _plain(ground_truth) if a is not None]
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
