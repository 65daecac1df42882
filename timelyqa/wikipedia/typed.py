"""An infobox value rendered with what its markup says it is: a date, a link, a list, a number, a quantity or text.

The renderer (render.py) turns wikitext into the text a reader sees; `read` renders a value the same way and keeps
what the markup told it on the way: a date template ({{start date}}, {{birth date}}...) or a date written out is a
date, a value that is one wikilink is an entity (its target page an alias), list templates ({{ubl}},
{{plainlist}}), lines (<br>, bullets) and links parted by commas are a list, {{convert}} is a quantity in its
unit, a linked name with its party or role in parentheses is that name (the whole text an alias), and a value written as a number is a number, or a quantity with its currency or unit. `answer` makes the
row's typed answer of it through timelyqa.answers, which writes the aliases.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import mwparserfromhell
from mwparserfromhell.nodes import HTMLEntity, Node, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from timelyqa import answers
from timelyqa.answers import NotTyped, Typed
from timelyqa.record import AnswerType, AnswerValue
from timelyqa.mediawiki.wikitext import (DATE_TEMPLATES, FILE_NAMESPACES, FIRST, LISTS, SECOND, UNITS, node_text,
                                         positional, render, strip_refs, template_name, text_date, tidy)

_ISO = re.compile(r"\d{4}(?:-\d{2}){0,2}")
_DATED = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")  # a date written out: with its month at least, never a bare year
_CURRENCY = r"(?:[A-Z]{0,2}\$|€|£|¥|₹|(?:USD|EUR|GBP|JPY|CHF|INR)\s?)"
_AMOUNT = re.compile(rf"[~≈]?\s?(?P<currency>{_CURRENCY})?-?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?"
                     r"(?:\s?(?:thousand|million|billion|trillion))?"
                     r"(?:\s?(?P<unit>%|[^\W\d_][^\s\d()]*(?:\s[^\W\d_][^\s\d()]*){0,2}|°[CF]))?")
_ITEM_BREAK = re.compile(r"\s*(?:[,;]|\band\b)\s*")
_QUALIFIER = re.compile(r"(?P<name>[^()]+?)\s*\((?P<qualifier>[^()]+)\)")
_PARTY = re.compile(r"\b(?:party|parti|partido|partei|partito|independent politician|coalition|alliance)\b",
                    re.IGNORECASE)
_ROLES = frozenset({"ceo", "chief executive", "chief executive officer", "chair", "chairman", "chairwoman",
                    "chairperson", "president", "vice president", "founder", "co-founder", "cfo", "coo", "cto",
                    "managing director", "executive chairman", "acting", "interim", "caretaker", "mayor", "leader",
                    "manager", "head coach", "captain", "owner"})
"""Roles an infobox writes in parentheses after a person's name."""
_WRAPPING_TAGS = frozenset({"b", "i", "span", "small", "big", "abbr", "u", "em", "strong", "sup", "sub", "nowiki"})


@dataclass(frozen=True, slots=True)
class Value:
    """An infobox value: the text a reader sees (what render.plain gives) and the kind of answer its markup makes.

    `kind` is one of the record's answer types; `date` is the ISO date of a `date`, `link` the target page of an
    `entity`, `unit` the unit a template named for a `quantity` (else the text's own), `items` those of a `list`.
    """

    text: str
    kind: str = "text"
    date: str | None = None
    link: str | None = None
    unit: str | None = None
    items: tuple[str, ...] = ()
    name: str | None = None
    """An `entity` whose text qualifies it ("Danielle Smith (UCP)"): the name alone, which is the answer."""


def read(code: Wikicode | str) -> Value:
    """The value's text, as render.plain reads it, and its kind, from its markup."""
    if isinstance(code, str):
        code = mwparserfromhell.parse(strip_refs(code))
    parts = [(node, node_text(node)) for node in code.nodes]
    raw = "".join(shown for _, shown in parts)
    text = tidy(raw)
    if not text:
        return Value(text)
    return _lines(raw, text) or _one_node(parts, text) or _qualified(parts, text) or _written(parts, text) \
        or _linked_items(parts, text) or Value(text)


def answer(value: Value) -> Typed:
    """The typed answer of a value. A value whose markup said number, quantity or date but whose text is none after
    all (a unit no units library knows: "48,500 seats") is kept as text, as is a list of one item."""
    try:
        if value.kind == "date":
            return answers.date(value.text, value.date)
        if value.kind == "entity" and value.name:  # the name answers; the text with its party or role is an alias
            return answers.entity(value.name, [*([value.link] if value.link else []), value.text])
        if value.kind == "entity":
            return answers.entity(value.text, [value.link] if value.link else [])
        if value.kind == "list":
            return answers.listing(value.items, value.text)
        if value.kind == "number":
            return answers.number(value.text)
        if value.kind == "quantity":
            return answers.quantity(value.text, value.unit)
    except NotTyped:
        pass
    return answers.text(value.text)


def _lines(raw: str, text: str) -> Value | None:
    """Lines (list templates, <br>, bullets) are items; a line all in parentheses qualifies the one before it."""
    items: list[str] = []
    for line in (tidy(line) for line in raw.split("\n")):
        if not line:
            continue
        if items and line.startswith("(") and line.endswith(")"):
            items[-1] = f"{items[-1]} {line}"
        else:
            items.append(line)
    return Value(text, "list", items=tuple(items)) if len(items) >= 2 else None


def _one_node(parts: list[tuple[Node, str]], text: str) -> Value | None:
    """A value that is one template, link or tag beside nothing a reader sees (a flag icon, spaces)."""
    shown = [(node, out) for node, out in parts if out.strip()]
    if len(shown) != 1:
        return None
    node = shown[0][0]
    if isinstance(node, Wikilink):
        title = render(node.title).strip()
        namespace, colon, _ = title.lstrip(":").partition(":")
        if colon and namespace.strip().lower() in (*FILE_NAMESPACES, "category"):
            return None
        page = title.lstrip(":").partition("#")[0].strip()
        return Value(text, "entity", link=page or None)
    if isinstance(node, Tag) and str(node.tag).strip().lower() in _WRAPPING_TAGS and node.contents is not None:
        return _same_text(read(node.contents), text)
    if isinstance(node, Template):
        return _template(node, text)
    return None


def _qualified(parts: list[tuple[Node, str]], text: str) -> Value | None:
    """A linked name and, in parentheses after it, a party ("[[Danielle Smith]] ([[United Conservative Party|UCP]])":
    a link to a party's page) or a role ("[[Ravi Menon]] (CEO)"): the name is the answer. What the markup says
    decides, never the words alone: the name must be one link, the parenthesis a party's link or a role's word."""
    match = _QUALIFIER.fullmatch(text)
    if match is None:
        return None
    at = next((i for i, (node, _) in enumerate(parts) if isinstance(node, Text) and "(" in node.value), None)
    if at is None or parts[at][1].partition("(")[0].strip():
        return None
    head = _one_node(parts[:at], tidy("".join(out for _, out in parts[:at])))
    if head is None or head.kind != "entity" or head.text != match["name"]:
        return None
    inside = parts[at + 1:]
    targets = [render(node.title).lstrip(":").partition("#")[0].strip() for node, _ in inside
               if isinstance(node, Wikilink)]
    party = any(_PARTY.search(target) for target in targets)
    role = match["qualifier"].strip().casefold() in _ROLES
    return replace(head, text=text, name=match["name"]) if party or role else None


def _template(template: Template, text: str) -> Value | None:
    name = template_name(template)
    if name in DATE_TEMPLATES:
        return Value(text, "date", date=text) if _ISO.fullmatch(text) else None
    if str(template.name).partition(":")[0].strip().lower() == "formatnum":
        return Value(text, "number")
    args = [p for p in template.params if not p.showkey]
    if name in LISTS:  # each parameter an item, or, in {{plainlist}}, each of its lines; one item reads as itself
        listed = _lines("\n".join(render(arg.value) for arg in args), text)
        return listed or (_same_text(read(args[0].value), text) if len(args) == 1 else None)
    if name in UNITS:
        unit = positional(template)[1:2]
        return Value(text, "quantity", unit=unit[0]) if unit and unit[0] else None
    at = 0 if name in FIRST or re.fullmatch(r"lang-[a-z-]+", name) else 1 if name in SECOND else None
    if at is not None and len(args) > at:
        return _same_text(read(args[at].value), text)
    return None


def _same_text(inner: Value, text: str) -> Value | None:
    return replace(inner, text=text) if inner.kind != "text" and inner.text == text else None


def _written(parts: list[tuple[Node, str]], text: str) -> Value | None:
    """A value written as plain text: a date with its month, a number, a number with a currency or unit."""
    if not all(isinstance(node, (Text, HTMLEntity)) or not out.strip() for node, out in parts):
        return None
    iso = text_date(text)
    if _DATED.fullmatch(iso):
        return Value(text, "date", date=iso)
    amount = _AMOUNT.fullmatch(text)
    if amount is None:
        return None
    if amount["currency"] or amount["unit"]:
        return Value(text, "quantity")
    return Value(text, "number")


def _linked_items(parts: list[tuple[Node, str]], text: str) -> Value | None:
    """Links parted by commas, semicolons or "and" ("[[A]] (CEO), [[B]] (chairman)"): each part with a link of
    its own is an item."""
    items: list[tuple[list[str], bool]] = [([], False)]
    for node, out in parts:
        if isinstance(node, Text):
            pieces = _ITEM_BREAK.split(out)
            items[-1][0].append(pieces[0])
            items += [([piece], False) for piece in pieces[1:]]
        else:
            shown, linked = items[-1]
            items[-1] = ([*shown, out], linked or (isinstance(node, Wikilink) and bool(out.strip())
                                                   and not out.startswith("File:")))
    kept = [(tidy("".join(shown)), linked) for shown, linked in items]
    kept = [(item, linked) for item, linked in kept if item]
    if len(kept) < 2 or not all(linked for _, linked in kept):
        return None
    return Value(text, "list", items=tuple(item for item, _ in kept))


def to_json(typed: Typed) -> str:
    """A typed answer as the work files between stages hold it."""
    return json.dumps(typed.row(), ensure_ascii=False, sort_keys=True)


def from_json(text: str) -> Typed:
    data = json.loads(text)
    return Typed(data["answer"], AnswerType(data["answer_type"]), AnswerValue.model_validate(data["answer_value"]),
                 tuple(data["answer_aliases"]))
