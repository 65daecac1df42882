"""Wikitext to the plain text an infobox value reads as: references gone, dates as ISO dates, links as their text."""

from __future__ import annotations

import re
from datetime import datetime

import mwparserfromhell
from mwparserfromhell.nodes import (Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag, Template, Text,
                                    Wikilink)
from mwparserfromhell.wikicode import Wikicode

_REF_START = re.compile(r"<ref\b", re.IGNORECASE)
_REF_CLOSE = re.compile(r"</ref\s*>", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_SPACES = re.compile(r"[ \t\u00a0\u2009\u202f]+")

FILE_NAMESPACES = frozenset({"file", "image", "media"})

_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), start=1)}
_MONTHS |= {m[:3]: i for m, i in list(_MONTHS.items())} | {"sept": 9}

# Templates whose leading positional parameters are year, month, day (the rest, if any, are ignored).
DATE_TEMPLATES = frozenset({
    "birth date", "birth date and age", "bda", "dob", "death date", "death date and age", "dda",
    "start date", "start date and age", "end date", "end date and age", "film date", "release date",
    "date", "dts", "birth year", "birth year and age", "death year", "death year and age", "start year",
    "end year", "birth-date", "death-date", "start-date", "end-date", "birth-date and age", "death-date and age",
    "date and age", "start and end dates",
})
_DROPPED = frozenset({
    # references and maintenance tags that live in values: "references removed first"
    "efn", "efn-ua", "efn-lr", "refn", "sfn", "sfnp", "sfnm", "harvnb", "r", "rp", "cn", "citation needed", "fact",
    "dubious", "clarify", "when", "update needed", "update after", "better source needed", "verify source",
    "failed verification", "ref label", "note label", "notetag", "nbsp", "snd", "spaced ndash",
    # decorations with no text of their own
    "flagicon", "flagdeco", "flag icon", "increase", "decrease", "steady", "increasenegative", "decreasepositive",
    "coord", "coord missing", "official website", "official url", "anchor", "clear", "-", "break",
    # values that MediaWiki computes from the reading date, which no revision holds
    "age", "age in years", "age in years and days", "years ago", "currentyear",
})
LISTS = frozenset({"ubl", "unbulleted list", "ublist", "plainlist", "plain list", "flatlist", "flat list",
                    "hlist", "bulleted list", "bulletedlist", "ul", "ordered list", "collapsible list", "cslist",
                    "bulleted", "indented plainlist", "endplainlist", "startplainlist"})
FIRST = frozenset({"nowrap", "nobr", "no wrap", "small", "smaller", "big", "larger", "resize", "abbr", "flag",
                    "flagcountry", "flagu", "flag country", "flagathlete", "nihongo", "ill", "interlanguage link",
                    "url", "marriage", "married", "tooltip", "visible anchor", "nts", "ntsh", "nowrap begin",
                    "sup", "sub", "longitem", "small caps", "smallcaps", "lower", "upper",
                    "unbulleted", "awrap", "tl", "em", "strong", "sic"})
SECOND = frozenset({"lang", "native name", "native phrase", "langx", "transliteration", "transl"})
UNITS = frozenset({"convert", "cvt", "height", "cvt2"})


def strip_refs(wikitext: str) -> str:
    """References and comments go before parsing: they are never part of a value, and their markup trips parsers.

    A tag ends at its first '>' ('/>' closes it there); a <ref> runs to the first </ref> after it. In one pass:
    patterns tried at each of 20,000 unclosed <ref> tags took seconds, each try reading to the end of the page.
    """
    text = _COMMENT.sub("", wikitext)
    kept: list[str] = []
    pos, gt, closings = 0, -1, True
    while (tag := _REF_START.search(text, pos)) is not None:
        if gt < tag.end():
            gt = text.find(">", tag.end())
            if gt < 0:
                break  # no tag ends after here
        kept.append(text[pos:tag.start()])
        pos = gt + 1
        if text[gt - 1] == "/" and gt - 1 >= tag.end():
            continue
        close = _REF_CLOSE.search(text, pos) if closings else None
        if close is None:  # an unclosed <ref> is text to MediaWiki too, and no later one can close
            closings = False
            kept.append(text[tag.start():pos])
        else:
            pos = close.end()
    kept.append(text[pos:])
    return "".join(kept)


def plain(code: Wikicode | str) -> str:
    """The value as a reader sees it: one line, list items joined by ', '."""
    if isinstance(code, str):
        code = mwparserfromhell.parse(strip_refs(code))
    return tidy(render(code))


def tidy(text: str) -> str:
    lines = (_SPACES.sub(" ", line).strip(" ,;") for line in text.replace("\r", "").split("\n"))
    return ", ".join(line for line in lines if line)


def render(code: Wikicode) -> str:
    return "".join(node_text(node) for node in code.nodes)


def template_name(template: Template) -> str:
    return normal_name(str(template.name))


def normal_name(name: str) -> str:
    """Lower case, spaces for underscores, no namespace: 'Template:Birth_date' is 'birth date'."""
    name = _COMMENT.sub("", name).strip().replace("_", " ")
    name = re.sub(r"^(?:template|msg|subst|safesubst)\s*:\s*", "", name, flags=re.IGNORECASE)
    return _SPACES.sub(" ", name).lower()


def positional(template: Template) -> list[str]:
    return [plain(p.value) for p in template.params if not p.showkey]


def iso_date(parts: list[str]) -> str | None:
    """Year, month, day parameters (month by number or name) as YYYY, YYYY-MM or YYYY-MM-DD; None if not a date."""
    if not parts or not re.fullmatch(r"\d{1,4}", parts[0]):
        return None
    values = [int(parts[0])]
    for part in parts[1:3]:
        word = part.strip().lower().rstrip(".")
        if re.fullmatch(r"\d{1,2}", word):
            values.append(int(word))
        elif len(values) == 1 and word in _MONTHS:
            values.append(_MONTHS[word])
        else:
            break
    if len(values) > 1 and not 1 <= values[1] <= 12 or len(values) > 2 and not 1 <= values[2] <= 31:
        return None
    return "-".join([f"{values[0]:04d}", *(f"{v:02d}" for v in values[1:])])


def text_date(text: str) -> str:
    """'5 May 2020', 'May 5, 2020' and friends as ISO; other text as it is."""
    cleaned = text.strip().replace(",", "")
    for fmt, out in (("%d %B %Y", "%Y-%m-%d"), ("%B %d %Y", "%Y-%m-%d"), ("%d %b %Y", "%Y-%m-%d"),
                     ("%b %d %Y", "%Y-%m-%d"), ("%Y-%m-%d", "%Y-%m-%d"), ("%B %Y", "%Y-%m"), ("%Y", "%Y")):
        try:
            return datetime.strptime(cleaned, fmt).strftime(out)
        except ValueError:
            continue
    return text.strip()


def render_template(template: Template) -> str:
    name = template_name(template)
    if ":" in name:  # parser functions and magic words: {{formatnum:1234}} keeps its number, the rest go
        head, _, rest = str(template.name).partition(":")
        return plain(rest) if head.strip().lower() == "formatnum" else ""
    if name in DATE_TEMPLATES:
        args = [a for a in positional(template) if a]
        return (iso_date(args) or text_date(args[0])) if args else ""
    if name in _DROPPED or name.startswith(("cite ", "citation", "infobox", "short description")):
        return ""
    args = positional(template)
    if name in LISTS:
        return "\n" + "\n".join(a for a in args if a) + "\n"
    if name == "sortname":
        return " ".join(a for a in args[:2] if a)
    if name in FIRST or re.fullmatch(r"lang-[a-z-]+", name):  # {{lang-it|text}}: the language is in the name
        return args[0] if args else ""
    if name in SECOND:
        return args[1] if len(args) > 1 else ""
    if name in UNITS:
        return " ".join(a for a in args[:2] if a)
    return ""  # an unknown template's output cannot be known without MediaWiki; better nothing than its code


def node_text(node: object) -> str:
    if isinstance(node, Text):
        return node.value
    if isinstance(node, HTMLEntity):
        return node.normalize()
    if isinstance(node, Template):
        return render_template(node)
    if isinstance(node, Wikilink):
        return _wikilink(node)
    if isinstance(node, ExternalLink):
        return render(node.title) if node.title else ("" if node.brackets else str(node.url))
    if isinstance(node, Tag):
        return _tag(node)
    if isinstance(node, Heading):
        return "\n" + render(node.title) + "\n"
    if isinstance(node, (Comment, Argument)):
        return ""
    return ""


def _wikilink(link: Wikilink) -> str:
    title = render(link.title).strip()
    namespace, colon, rest = title.lstrip(":").partition(":")
    if colon and namespace.strip().lower() in FILE_NAMESPACES and not title.startswith(":"):
        return "File:" + rest.strip()  # kept visible so that the file-value rule can see it
    if colon and namespace.strip().lower() == "category" and not title.startswith(":"):
        return ""
    if link.text is not None and render(link.text).strip():
        return render(link.text)
    page, _, fragment = title.lstrip(":").partition("#")
    return page or fragment


def _tag(tag: Tag) -> str:
    name = str(tag.tag).strip().lower()
    if name in ("ref", "references", "math", "chem", "gallery", "timeline", "score", "s", "del", "strike",
                "templatestyles", "syntaxhighlight", "imagemap", "mapframe", "maplink"):
        return ""
    if name == "nowiki":
        return str(tag.contents) if tag.contents is not None else ""
    if name in ("br", "hr", "li", "dd", "dt", "tr", "td", "th", "p", "div", "table", "ul", "ol", "dl"):
        return "\n" + (render(tag.contents) if tag.contents is not None else "") + "\n"
    return render(tag.contents) if tag.contents is not None else ""
