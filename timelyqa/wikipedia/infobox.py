"""A page's infobox as {key: value}: which templates are infoboxes, their fields, and the page's categories and lead."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import mwparserfromhell
from mwparserfromhell.nodes import Tag, Template, Wikilink
from mwparserfromhell.wikicode import Wikicode

from timelyqa.wikipedia.render import FILE_NAMESPACES, normal_name, plain, render, strip_refs, template_name, tidy

PARSER = "wikipedia_infobox_parser_v1"
"""The name of the rules below; a change in what a value reads as gets a new name."""

_BOXES = frozenset({"taxobox", "automatic taxobox", "speciesbox", "subspeciesbox", "chembox", "drugbox",
                    "geobox", "planetbox", "starbox begin"})
_CATEGORY = re.compile(r"\[\[\s*category\s*:\s*([^\]|\n]+)", re.IGNORECASE)
_OPEN = re.compile(r"\{\{\s*([^|{}\n<]*)")
_BRACES = re.compile(r"\{\{|\}\}")
_HEADING = re.compile(r"^=+[^=\n].*?=+\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Infobox:
    """One revision's infobox: the template's name (the first infobox's) and every non-empty field."""

    template: str
    fields: dict[str, str] = field(default_factory=dict)


def is_infobox(name: str) -> bool:
    """'Infobox football biography', 'Football club infobox', 'Taxobox' and the like."""
    return name.startswith("infobox") or name.endswith("infobox") or name in _BOXES


def parse_infobox(wikitext: str) -> Infobox | None:
    """The page's infobox fields; None when the page has none.

    A page with several infoboxes (a person's infobox with an embedded module, say) gets one dict: the
    keys of every infobox in document order, the first infobox holding a key keeping it, so that one
    key names one value on every revision.
    """
    code = mwparserfromhell.parse("\n".join(infobox_sources(strip_refs(wikitext))))
    boxes = [t for t in code.filter_templates(recursive=True) if is_infobox(template_name(t))]
    if not boxes:
        return None
    fields: dict[str, str] = {}
    for box in boxes:
        for param in box.params:
            if not param.showkey:
                continue
            key = _key(str(param.name))
            if key and key not in fields:
                value = plain(param.value)
                if value:
                    fields[key] = value
    return Infobox(template=template_name(boxes[0]), fields=fields)


def infobox_sources(wikitext: str) -> list[str]:
    """The wikitext of each outermost infobox, found by matching braces.

    Parsing a whole article costs some 200 ms for 100 kB, and a week of edits holds a million
    revisions; the infoboxes alone are a few kB. Only these spans go to the parser.
    """
    spans: list[str] = []
    taken = -1
    for match in _OPEN.finditer(wikitext):
        if match.start() < taken or not is_infobox(normal_name(match.group(1))):
            continue
        end = _closing(wikitext, match.start())
        if end is not None:  # an unclosed '{{' is text to MediaWiki too
            spans.append(wikitext[match.start():end])
            taken = end
    return spans


def _closing(wikitext: str, start: int) -> int | None:
    depth = 0
    for brace in _BRACES.finditer(wikitext, start):
        depth += 1 if brace.group() == "{{" else -1
        if depth == 0:
            return brace.end()
    return None


def categories(wikitext: str) -> list[str]:
    """The page's categories as written (templates can add more; those are not visible in a dump)."""
    seen: dict[str, None] = {}
    for match in _CATEGORY.finditer(strip_refs(wikitext)):
        seen.setdefault(match.group(1).strip().replace("_", " "), None)
    return list(seen)


def first_paragraph(wikitext: str) -> str:
    """The first paragraph of prose in the lead: the background the paper gives its question writer."""
    heading = _HEADING.search(wikitext)
    lead = mwparserfromhell.parse(strip_refs(wikitext[: heading.start()] if heading else wikitext))
    _drop_blocks(lead)
    for paragraph in re.split(r"\n\s*\n", render(lead)):
        text = tidy(paragraph.replace("\n", " "))
        if re.search(r"[^\W\d_]{3}", text):
            return text
    return ""


def _drop_blocks(code: Wikicode) -> None:
    """Templates on a line of their own (infoboxes, hatnotes), files and tables are not prose."""
    tail = "\n"  # the end of what is kept so far: a template right after a line break is a block
    for node in list(code.nodes):
        block = isinstance(node, Template) and tail.rstrip(" \t").endswith("\n")
        file_link = isinstance(node, Wikilink) and str(node.title).split(":", 1)[0].strip().lower() in FILE_NAMESPACES
        table = isinstance(node, Tag) and str(node.tag).strip().lower() == "table"
        if block or file_link or table:
            code.remove(node)
        else:
            tail = (tail + str(node))[-64:]


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip()
