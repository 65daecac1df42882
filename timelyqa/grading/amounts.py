"""Numbers as written, read by value: digits grouped or not, a scale word, a currency or a unit after them."""

# No `from __future__ import annotations`: with string annotations, @dataclass looks this module up in sys.modules.
import re
import unicodedata
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from .text import WRAPPING
from .units import CURRENCIES, parse_unit

# Thousands separated by one separator, used throughout: "1,219 530" reads as a number followed by digits, not
# a number. No-break, narrow no-break and thin spaces are plain spaces here: NFKC applies first.
_NUMBER = re.compile(
    r"^(?P<sign>[-+]?)(?P<int>\d{1,3}(?P<sep>[, ])\d{3}(?:(?P=sep)\d{3})*|\d*)(?P<frac>\.\d+)?\s*(?P<rest>.*)$")
_PREFIX = re.compile(r"^(?P<code>[A-Z]{3}\s+|US\$|[€£$¥₹])\s*")
_SIGNS = {sign: code for code, (sign, _) in CURRENCIES.items() if sign} | {"US$": "USD"}
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


_SPELLED = re.compile(r"^(?P<words>[A-Za-z][A-Za-z\s\u2010-]*?)\s+(?P<rest>(?:thousand|million|billion|trillion)\b.*)$",
                      re.IGNORECASE)


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
    text = unicodedata.normalize("NFKC", text.replace("º", "°")).strip(WRAPPING).replace("\u2212", "-").rstrip(".")
    word = _NUMBER_WORDS.get(" ".join(re.split(r"[\s\u2010-]+", text.lower())))
    if word is not None:  # only the whole answer: a number word opening a name stays text
        return Amount(Decimal(word), 0, "")
    if (spelled := _SPELLED.match(text)) and \
            (word := _NUMBER_WORDS.get(" ".join(re.split(r"[\s\u2010-]+", spelled["words"].lower())))) is not None:
        text = f"{word} {spelled['rest']}"  # "eighteen million euros": a number word before a scale word
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
    return unit is not None and str(unit) in CURRENCIES


def precision_of(value: Decimal) -> int:
    """The power of ten of a decimal's last digit as written: 1.92 -> -2, 163900 -> 0, 18E+6 -> 6."""
    exponent = value.as_tuple().exponent
    return exponent if isinstance(exponent, int) else 0


def rounded(value: Decimal, precision: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(precision), rounding=ROUND_HALF_EVEN)
