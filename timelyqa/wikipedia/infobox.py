"""A page's infobox as {key: value}: which templates are infoboxes, their fields, and the page's categories and lead."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import mwparserfromhell
from mwparserfromhell.nodes import Tag, Template, Wikilink
from mwparserfromhell.wikicode import Wikicode

from timelyqa.mediawiki.wikitext import FILE_NAMESPACES, normal_name, render, strip_refs, template_name, tidy
from timelyqa.wikipedia.typed import Value, read

PARSER = "wikipedia_infobox_parser_v1"
"""The name of the rules below; a change in what a value reads as gets a new name."""

_BOXES = frozenset({"taxobox", "automatic taxobox", "speciesbox", "subspeciesbox", "chembox", "drugbox",
                    "geobox", "planetbox", "starbox begin"})
_CATEGORY = re.compile(r"\[\[\s*category\s*:\s*([^\]|\n]+)", re.IGNORECASE)
_OPEN = re.compile(r"\{\{\s*([^|{}\n<]*)")
_BRACES = re.compile(r"\{\{|\}\}")
_BLANK_LINES = re.compile(r"\n[ \t\n]*\n")  # one blank line parts paragraphs as well as many
_HEADING_LINE = re.compile(r"^=+[^=\n][^\n]*", re.MULTILINE)
MAX_INFOBOX_CHARS = 2**17
"""An infobox is a few kB, the largest on English Wikipedia some tens: past this much, parsing costs time and
memory for no value a reader would read, so later infoboxes are left out."""
MAX_LEAD_CHARS = 2**16
"""A lead's first paragraph comes within its first few kB once the templates standing on their own lines are
gone; a longer lead is cut here before parsing (a lead of 3 M templates would take minutes and gigabytes)."""


@dataclass(frozen=True, slots=True)
class Infobox:
    """One revision's infobox: the template's name (the first infobox's) and every non-empty field, as text
    (`fields`) and as the renderer read it (`values`: the text and the kind of answer its markup makes)."""

    template: str
    fields: dict[str, str] = field(default_factory=dict)
    values: dict[str, Value] = field(default_factory=dict)


def is_infobox(name: str) -> bool:
    """'Infobox football biography', 'Football club infobox', 'Taxobox' and the like."""
    return name.startswith("infobox") or name.endswith("infobox") or name in _BOXES


def parse_infobox(wikitext: str) -> Infobox | None:
    """The page's infobox fields; None when the page has none.

    A page with several infoboxes (a person's infobox with an embedded module, say) gets one dict: the
    keys of every infobox in document order, the first infobox holding a key keeping it, so that one
    key names one value on every revision.
    """
    spans, total = [], 0
    for span in infobox_sources(strip_refs(wikitext)):
        total += len(span) + 1
        if total > MAX_INFOBOX_CHARS:
            break
        spans.append(span)
    code = mwparserfromhell.parse("\n".join(spans))
    boxes = [t for t in code.filter_templates(recursive=True) if is_infobox(template_name(t))]
    if not boxes:
        return None
    values: dict[str, Value] = {}
    for box in boxes:
        for param in box.params:
            if not param.showkey:
                continue
            key = _key(str(param.name))
            if key and key not in values:
                value = read(param.value)
                if value.text:
                    values[key] = value
    return Infobox(template=template_name(boxes[0]), fields={key: value.text for key, value in values.items()},
                   values=values)


def infobox_sources(wikitext: str) -> list[str]:
    """The wikitext of each outermost infobox, found by matching braces.

    Parsing a whole article costs some 200 ms for 100 kB, and a week of edits holds a million
    revisions; the infoboxes alone are a few kB. Only these spans go to the parser. One pass over the
    braces matches them all: seeking each infobox's end on its own reads to the end of the page for each
    unclosed one.
    """
    found: list[tuple[int, int]] = []
    opened: list[tuple[int, bool]] = []  # each '{{' still open: where, and whether it opens an infobox
    for brace in _BRACES.finditer(wikitext):
        if brace.group() == "{{":
            name = _OPEN.match(wikitext, brace.start())
            raw = name.group(1) if name is not None else ""
            # every infobox name holds "box": the cheap test spares most templates the name's normalisation
            opened.append((brace.start(), "box" in raw.lower() and is_infobox(normal_name(raw))))
        elif opened:  # a '}}' with nothing open, or an unclosed '{{', is text to MediaWiki too
            start, infobox = opened.pop()
            if infobox:
                found.append((start, brace.end()))
    spans: list[str] = []
    taken = -1
    for start, end in sorted(found):
        if start >= taken:
            spans.append(wikitext[start:end])
            taken = end
    return spans


def categories(wikitext: str) -> list[str]:
    """The page's categories as written (templates can add more; those are not visible in a dump)."""
    seen: dict[str, None] = {}
    for match in _CATEGORY.finditer(strip_refs(wikitext)):
        seen.setdefault(match.group(1).strip().replace("_", " "), None)
    return list(seen)


def first_paragraph(wikitext: str) -> str:
    """The first paragraph of prose in the lead: the background the paper gives its question writer."""
    lead = strip_refs(wikitext[:_lead_end(wikitext)])
    if len(lead) > MAX_LEAD_CHARS:
        lead = _BLANK_LINES.sub("\n\n", _without_block_templates(lead))[:MAX_LEAD_CHARS]
    for paragraph in re.split(r"\n\s*\n", render(_prose(mwparserfromhell.parse(lead)))):
        text = tidy(paragraph.replace("\n", " "))
        if re.search(r"[^\W\d_]{3}", text):
            return text
    return ""


def _lead_end(wikitext: str) -> int:
    """Where the first section heading starts (a line '== Title ==')."""
    for line in _HEADING_LINE.finditer(wikitext):
        text = line.group().rstrip()
        if text.endswith("=") and text.strip("="):
            return line.start()
    return len(wikitext)


def _prose(code: Wikicode) -> Wikicode:
    """Templates on a line of their own (infoboxes, hatnotes), files and tables are not prose."""
    kept = []
    tail = "\n"  # the end of what is kept so far: a template right after a line break is a block
    for node in code.nodes:
        block = isinstance(node, Template) and tail.rstrip(" \t").endswith("\n")
        file_link = isinstance(node, Wikilink) and str(node.title).split(":", 1)[0].strip().lower() in FILE_NAMESPACES
        table = isinstance(node, Tag) and str(node.tag).strip().lower() == "table"
        if not (block or file_link or table):
            kept.append(node)
            tail = (tail + str(node))[-64:]
    return Wikicode(kept)


def _without_block_templates(lead: str) -> str:
    """The lead without the outermost templates that stand on a line of their own, in one pass over its braces:
    what `_prose` drops anyway, gone before a long lead is cut to what the parser is given."""
    kept: list[str] = []
    pos = seen = opened_at = depth = 0
    at_line_start = True
    for brace in _BRACES.finditer(lead):
        if brace.group() == "{{":
            if depth == 0:
                gap = lead[seen:brace.start()]
                if gap.strip(" \t"):
                    at_line_start = gap.rstrip(" \t").endswith("\n")
                opened_at = seen = brace.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                seen = brace.end()
                if at_line_start:
                    kept.append(lead[pos:opened_at])
                    pos = seen
                else:  # a template kept inline: what follows it is not at a line's start
                    at_line_start = False
    kept.append(lead[pos:])
    return "".join(kept)


def _key(name: str) -> str:
    return re.sub(r"\s+", " ", name).strip()
