"""Facts a page states as label and value: the parser `site_facts_v2`, a pure function of the page's HTML.

Rules, in document order over the page's body (never inside nav, header, footer, script, style,
noscript, template or svg, nor any element with role="navigation"):

- **table** with a header row (its first row, of at least two cells, all `<th>`, or all cells whose whole text is
  bold, `<strong>` or `<b>`, as Sphinx writes a header row in a table of `<td>`): each later row's first cell
  names the row, and every other cell gives the fact "<column header> for <row label>"; the context is
  the table's caption, else its first header cell, else the nearest heading. A table without a header
  row gives one fact per row of exactly two cells (label cell, value cell: th/td or td/td), its context
  the caption, else the nearest heading. Rows holding a table of their own (layout tables) give nothing.
  (v2: a bold first row is a header row; v1 read "Text data | Binary data", two columns' names, as a label and its
  value.)
- **dl**: each `<dd>` gives a fact labelled by the `<dt>` before it (dt/dd directly in the dl or in a
  `<div>` of it, as HTML allows).
- **field**: a line of a `<p>` or `<li>` (lines are split at `<br>`) reading "Label: value", the label
  1-5 words starting with an uppercase letter, the colon followed by a space (so "10:30" is no field),
  and the value non-empty and at most 12 words (a longer value is a sentence, not a fact).

The context of dl and field facts is the nearest heading (h1-h6) before them. Whitespace is collapsed,
a label's trailing colon dropped, and cells, terms and values that are empty give no fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl
from lxml import etree
from lxml.html import HtmlElement

from timelyqa.page import tree_of

FACTS_PARSER = "site_facts_v2"
"""The versioned name of these rules: a change to what they extract gets a new name."""
FACT_DTYPE = pl.List(pl.Struct({"label": pl.String(), "value": pl.String(), "kind": pl.String(),
                                "context": pl.String()}))
"""The `facts` column of a crawl's pages."""

SKIP = frozenset({"nav", "header", "footer", "script", "style", "noscript", "template", "head", "svg"})
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
BLOCKS = ("p", "li", "table", "dl", "ul", "ol", "div")
_BR = "\x00"  # where a <br> broke a line
_FIELD = re.compile(r"^(?P<label>[^:]{1,80}?)\s*:\s+(?P<value>\S.*)$")
MAX_FIELD_LABEL_WORDS = 5
MAX_FIELD_VALUE_WORDS = 12


@dataclass(frozen=True, slots=True)
class Fact:
    label: str
    value: str
    kind: str  # table, dl or field
    context: str = ""


def extract_facts(html: str | HtmlElement | None) -> list[Fact]:
    """Every fact the page states, in document order: the page's text or its tree (`timelyqa.page` reads either)."""
    root = tree_of(html)
    if root is None:
        return []
    body = root.find("body") if root.find("body") is not None else root
    return list(_walk(body, [""]))


def with_facts(pages: pl.DataFrame) -> pl.DataFrame:
    """A crawl's pages (with an `html` column) with their `facts` column, read by `extract_facts`."""
    facts = [[{"label": f.label, "value": f.value, "kind": f.kind, "context": f.context}
              for f in extract_facts(html or "")] for html in pages.get_column("html").to_list()]
    return pages.with_columns(pl.Series("facts", facts, dtype=FACT_DTYPE))


def _walk(el: etree._Element, heading: list[str]) -> Iterator[Fact]:
    """`heading` holds the nearest heading seen so far (a one-item list, so that the walk can move it on). A loop
    over a stack in document order, not recursion: a page nested a thousand deep is walked like any other."""
    stack = list(reversed(el))
    while stack:
        child = stack.pop()
        tag = child.tag if isinstance(child.tag, str) else ""
        if not tag or tag in SKIP or child.get("role") == "navigation":
            continue
        if tag in HEADINGS:
            heading[0] = _text(child)
        elif tag == "table":
            yield from _table(child, heading[0])
        elif tag == "dl":
            yield from _dl(child, heading[0])
        elif tag in ("p", "li") and next(child.iterdescendants(*BLOCKS), None) is None:
            yield from _fields(child, heading[0])
        else:
            stack.extend(reversed(child))


def _table(table: etree._Element, heading: str) -> Iterator[Fact]:
    rows = [r for r in table.xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr") if not r.xpath(".//table")]
    grid = [[(c.tag, _text(c)) for c in row.xpath("./th | ./td")] for row in rows]
    caption = _text(table.find("caption")) if table.find("caption") is not None else ""
    if grid and len(grid[0]) >= 2 and all(tag == "th" or _bold(cell) for (tag, _), cell in
                                          zip(grid[0], rows[0].xpath("./th | ./td"))):
        header = [text for _, text in grid[0]]
        context = caption or header[0] or heading
        for row in grid[1:]:
            if not row or not row[0][1]:
                continue
            for column, (_, value) in zip(header[1:], row[1:]):
                if column and value:
                    yield Fact(f"{column} for {row[0][1]}", value, "table", context)
        return
    for row in grid:
        if len(row) == 2 and (label := _label(row[0][1])) and row[1][1]:
            yield Fact(label, row[1][1], "table", caption or heading)


def _bold(cell: etree._Element) -> bool:
    """The cell's whole text is bold: a header cell written as a <td> ("<td><p><strong>Text data</strong></p></td>")."""
    text = _text(cell)
    bold = " ".join(_text(b) for b in cell.iterdescendants("strong", "b") if not _inside_bold(b, cell))
    return bool(text) and " ".join(bold.split()) == text


def _inside_bold(el: etree._Element, cell: etree._Element) -> bool:
    parent = el.getparent()
    while parent is not None and parent is not cell:
        if parent.tag in ("strong", "b"):
            return True
        parent = parent.getparent()
    return False


def _dl(dl: etree._Element, heading: str) -> Iterator[Fact]:
    term = ""
    for item in dl.xpath("./dt | ./dd | ./div/dt | ./div/dd"):
        if item.tag == "dt":
            term = _label(_text(item))
        elif term and (value := _text(item)):
            yield Fact(term, value, "dl", heading)


def _fields(el: etree._Element, heading: str) -> Iterator[Fact]:
    for line in _lines(el):
        if not (m := _FIELD.match(line)):
            continue
        label, value = m["label"].strip(), m["value"].strip()
        if (label[0].isupper() and len(label.split()) <= MAX_FIELD_LABEL_WORDS
                and len(value.split()) <= MAX_FIELD_VALUE_WORDS):
            yield Fact(label, value, "field", heading)


def _label(text: str) -> str:
    return text.rstrip(":").strip()


def _lines(el: etree._Element) -> list[str]:
    """The element's text, split where a <br> breaks it, each line with its whitespace collapsed. A loop over a
    stack of elements to visit and tails to add, in document order: any depth is read."""
    parts: list[str] = []
    stack: list[etree._Element | str] = [el]
    while stack:
        e = stack.pop()
        if isinstance(e, str):  # a child's tail, added after the child
            parts.append(e)
        elif e.tag == "br":
            parts.append(_BR)
        elif isinstance(e.tag, str) and e.tag not in SKIP:
            parts.append(e.text or "")
            for c in reversed(e):
                stack += [c.tail or "", c]
        # comments and processing instructions say nothing; their tails are added by the parent
    return [line for raw in "".join(parts).split(_BR) if (line := " ".join(raw.split()))]


def _text(el: etree._Element) -> str:
    return " ".join(" ".join(_lines(el)).split())
