"""The site the crawl bench crawls: a tree of static pages written to a folder, each stating a few facts.

Page i links its children fanout*i+1 .. fanout*i+fanout, its parent and home, like tests/sites.py's `tree_site`;
page 0 is /index.html ("/"), page i /item/i.html. The pages are built like a real site's, about 26 KB each: a
stylesheet and two small scripts in the head, a menu of some fifty links, a breadcrumb, prose, a fact table, a
<dl> and "Label: value" lines (what `site_facts_v1` reads), related links and a footer of links, about a hundred
links a page, every one to a page of the site. Real pages are larger still: the 181 of the extraction benchmark
(../shared/extraction-benchmark) have a median of 115 KB and none under 21 KB. Deterministic by seed.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

WORDS = ("the river station archive council harbour library museum school bridge market garden valley north "
         "south old new founded built opened rebuilt served hosts holds keeps near along above since during "
         "century records visitors members families workers trains ferries roads fields mills churches halls "
         "a of in on by with from to and its their was were is are has have after before each every").split()
SECTIONS = ("About", "History", "Places", "People", "Events", "News", "Visit", "Contact")
STYLE = "\n".join(f".{name} {{ margin: 0 {i}px; padding: {i % 7}px; color: #{i * 37 % 4096:03x}; "
                  f"font: {12 + i % 6}px/1.4 sans-serif; border-bottom: 1px solid #ddd; }}"
                  for i, name in enumerate(f"{part}-{k}" for part in ("menu", "nav", "card", "foot", "crumb")
                                           for k in range(24)))
SCRIPTS = ("<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}"
           " gtag('js', new Date()); gtag('config', 'G-BENCH0000');</script>\n"
           "<script>document.documentElement.className = document.documentElement.className.replace('no-js', 'js');"
           "</script>")


def path_of(i: int) -> str:
    return "/" if i == 0 else f"/item/{i}.html"


def _prose(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(12, 22))]
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def _links(items: list[tuple[str, str]], css: str) -> str:
    return "".join(f'<li class="{css}"><a href="{h}">{t}</a></li>' for h, t in items)


def _menu(pages: int, fanout: int) -> str:
    """The site menu on every page: each top-level item with its first children."""
    groups = []
    for top in range(1, min(fanout, pages - 1) + 1):
        kids = [(path_of(c), f"Item {c}") for c in range(fanout * top + 1, min(fanout * top + 4, pages - 1) + 1)]
        groups.append(f'<li class="menu-{top}"><a href="{path_of(top)}">Item {top}</a>'
                      f'<ul class="menu-sub">{_links(kids, "menu-item")}</ul></li>')
    return f'<ul class="menu">{"".join(groups)}</ul>'


def page_html(i: int, pages: int, fanout: int, rng: random.Random, menu: str) -> str:
    children = [(path_of(c), f"Item {c}") for c in range(fanout * i + 1, min(fanout * (i + 1), pages - 1) + 1)]
    parent = (i - 1) // fanout
    nav = children + ([(path_of(parent), "Up"), ("/", "Home")] if i else [])
    crumbs, up = [], parent
    while i and up:
        crumbs.insert(0, (path_of(up), f"Item {up}"))
        up = (up - 1) // fanout
    related = [(path_of(rng.randrange(1, pages)), f"See also item {n}") for n in range(5)]
    footer = [(path_of(rng.randrange(1, pages)), f"{SECTIONS[n % len(SECTIONS)]} {n}") for n in range(24)]
    facts = {"Identifier": f"T{i:05d}", "Founded": str(rng.randint(1800, 2020)),
             "Population": f"{rng.randint(1_000, 9_999_999):,}", "Elevation": f"{rng.randint(0, 4000)} m"}
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts.items())
    dl = (f"<dt>Mayor</dt><dd>{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}</dd>"
          f"<dt>Twin town</dt><dd>Item {rng.randrange(pages)}</dd>")
    fields = (f"<li>Area: {rng.randint(1, 900)} km2</li><li>Postcode: {rng.randint(10000, 99999)}</li>"
              f"<li>Opening hours: {rng.randint(7, 10)}:00 to {rng.randint(16, 20)}:00</li>")
    paragraphs = "\n".join(f"<p>{_prose(rng, rng.randint(6, 10))}</p>" for _ in range(5))
    ld = (f'{{"@context": "https://schema.org", "@type": "Place", "name": "Item {i}", '
          f'"identifier": "T{i:05d}", "description": "{_prose(rng, 1)}"}}')
    return (f'<!DOCTYPE html>\n<html lang="en" class="no-js">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="description" content="{_prose(rng, 1)}">\n'
            f"<title>Item {i} | Tree of {pages}</title>\n<style>\n{STYLE}\n</style>\n"
            f'<script type="application/ld+json">{ld}</script>\n{SCRIPTS}\n</head>\n<body>\n'
            f'<header><a class="logo" href="/">Tree of {pages}</a>\n<nav class="site">{menu}</nav></header>\n'
            f'<ol class="crumb">{_links([("/", "Home"), *crumbs], "crumb-item")}</ol>\n'
            f'<nav class="local"><ul>{_links(nav, "nav-item")}</ul></nav>\n<main>\n<h1>Item {i}</h1>\n'
            f'<p class="lead">{_prose(rng, 3)}</p>\n{paragraphs}\n'
            f"<h2>Facts</h2>\n<table>{table}</table>\n<dl>{dl}</dl>\n<ul>{fields}</ul>\n"
            f"<h2>Notes</h2>\n<p>{_prose(rng, 6)}</p>\n"
            f'<aside><h2>Related</h2><ul>{_links(related, "card-item")}</ul></aside>\n</main>\n'
            f'<footer><ul class="foot">{_links(footer, "foot-item")}</ul>\n'
            f"<p>Tree of {pages}, a generated site. {_prose(rng, 2)}</p></footer>\n</body>\n</html>\n")


def write_site(folder: Path, pages: int, *, fanout: int = 10, seed: int = 0) -> dict[str, Path]:
    """Write the site afresh under `folder`; its pages by path ("/", "/item/1.html", ...)."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "item").mkdir(parents=True)
    (folder / "robots.txt").write_text("User-agent: *\nDisallow:\n")
    rng, menu = random.Random(seed), _menu(pages, fanout)
    written = {}
    for i in range(pages):
        file = folder / ("index.html" if i == 0 else f"item/{i}.html")
        file.write_text(page_html(i, pages, fanout, rng, menu), encoding="utf-8")
        written[path_of(i)] = file
    return written
