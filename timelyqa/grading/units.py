"""Units as pint reads them, with the currencies pint lacks, each a dimension of its own."""

import re
from functools import lru_cache

import pint

CURRENCIES = {"EUR": ("€", "euro"), "GBP": ("£", "pound_sterling"), "USD": ("$", "US_dollar"),
              "JPY": ("¥", "yen"), "CHF": ("", "Swiss_franc"), "INR": ("₹", "rupee")}
"""Currencies pint lacks, each a dimension of its own: a price in euros never converts to pounds."""
CURRENCY_WORDS = {"euro": "EUR", "pound": "GBP", "pounds sterling": "GBP", "pound sterling": "GBP",
                  "dollar": "USD", "us dollar": "USD", "united states dollar": "USD", "yen": "JPY",
                  "japanese yen": "JPY", "swiss franc": "CHF", "franc": "CHF", "rupee": "INR", "indian rupee": "INR"}
"""Currency names as people and Wikidata's unit labels write them ("United States dollar")."""


@lru_cache(maxsize=1)
def units() -> pint.UnitRegistry:
    """pint's registry with the currencies defined (built once: about 0.4 s)."""
    registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    for code, (_, name) in CURRENCIES.items():
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
    code = CURRENCY_WORDS.get(re.sub(r"e?s$", "", text.lower())) or CURRENCY_WORDS.get(text.lower())
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
    return CURRENCIES.get(code, ("", ""))[0]


def unit_symbol(unit: pint.Unit) -> str:
    """The compact pint symbol a row stores: "m", "°C", "km**2", "%", "EUR"."""
    return format(unit, "~C")
