"""Write the demo website in data/demo/site/: the Lakeside Institute of Data Science, a small static site to crawl.

An invented postgraduate institute in Wrenmere, as it stands in the autumn of 2026, in the spirit of WebWalkerQA's
education and organisation sites: 34 HTML pages in folders (each folder's page is its index.html), up to four
clicks from the home page (home -> Study -> a programme -> its modules -> a module). Every page states facts a
question can ask about (dates, fees, rooms, heads and chairs, counts) in the forms sites use: two-column tables,
tables with a header row, <dl> lists and "Label: value" lines. The cases a site-tree crawler must handle, once each:

- the main menu (About, Study, Research, Events, News) is built by menu.js on DOMContentLoaded into an empty
  <nav id="menu">; no static anchor anywhere links a section, so a crawl that does not run scripts sees the home
  page and nothing under it;
- /apply/ is reached only by a button whose onclick navigates (on /study/ and on each programme's page);
- /private/ (a staff intranet and its payroll page) is linked from the home page and disallowed by robots.txt;
- /about/ links off-site to https://example.org/, never to be followed;
- /files/brochure.pdf is a one-page PDF, linked from /study/; /files/ itself has no index.html;
- every page links home from its header, and deep pages link their siblings and their parent: the graph has cycles.

Run it again after editing the site: the output is deterministic (files written in sorted order, no dates of the
run), and files under site/ that the site no longer has are removed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from html import escape as _escape
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "demo" / "site"
NAME = "Lakeside Institute of Data Science"
ADDRESS = "3 Shore Road, Wrenmere WR4 7LD"
SECTIONS = (("/about/", "About"), ("/study/", "Study"), ("/research/", "Research"), ("/events/", "Events"),
            ("/news/", "News"))
"""The main menu: its links exist only in menu.js."""


def escape(text: str) -> str:
    """Text for an element or a double-quoted attribute: apostrophes stay as they are."""
    return _escape(text, quote=False).replace('"', "&quot;")


@dataclass(frozen=True)
class Page:
    path: str  # a folder, "/" or "/a/b/"; written as that folder's index.html
    title: str
    body: str
    links: tuple[tuple[str, str], ...] = ()  # (href, text), listed under the content
    apply_button: bool = False
    menu: bool = False  # the page carries the script-built main menu


# --- how facts are written ------------------------------------------------------------------------------------

def table(rows: dict[str, str]) -> str:
    """Two columns: label, value."""
    cells = "\n".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows.items())
    return f"<table>\n{cells}\n</table>"


def grid(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A header row, then one row per thing."""
    head = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"
    body = "\n".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>\n{head}\n{body}\n</table>"


def dl(rows: dict[str, str]) -> str:
    items = "\n".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows.items())
    return f"<dl>\n{items}\n</dl>"


def lines(rows: dict[str, str]) -> str:
    """"Label: value" lines, as plain paragraphs."""
    return "\n".join(f"<p>{escape(k)}: {escape(v)}</p>" for k, v in rows.items())


def para(text: str) -> str:
    return f"<p>{escape(text)}</p>"


# --- the site ---------------------------------------------------------------------------------------------

def home() -> list[Page]:
    body = "\n".join([
        para(f"The {NAME} is an independent postgraduate institute on the shore of Lake Wren, in Wrenmere. It teaches "
             "two master's programmes and a doctoral programme, and runs three research groups."),
        dl({"Founded": "1998", "Director": "Prof. Helen Marsh", "Students (2026-27)": "412",
            "Academic staff": "87", "Address": ADDRESS}),
    ])
    return [Page("/", "Welcome", body, (("/private/", "Staff intranet"),), menu=True)]


def private() -> list[Page]:
    """Linked from home, disallowed by robots.txt: a polite crawler fetches neither page."""
    return [
        Page("/private/", "Staff intranet", para("Sign in with your Lakeside account.")
             + "\n" + lines({"IT help desk": "extension 4400"}), (("/private/payroll/", "Payroll calendar"),)),
        Page("/private/payroll/", "Payroll calendar", lines({"Pay day": "25th of each month",
                                                              "Payroll office": "Room H.009"}),
             (("/private/", "Staff intranet"),)),
    ]


def about() -> list[Page]:
    people = [("Prof. Helen Marsh", "Director", "H.301", "2026"),
              ("Dr Samuel Okafor", "Deputy director", "H.302", "2021"),
              ("Dr Amara Okoye", "Head of Teaching", "H.215", "2019"),
              ("Prof. Lukas Brenner", "Head of Research", "H.310", "2017"),
              ("Ms Joanna Pike", "Head of Admissions", "L.012", "2022")]
    return [
        Page("/about/", "About the Institute", "\n".join([
            para("The Institute was founded in 1998 as the statistics unit of the Wrenmere Water Board and became "
                 "independent in 2004."),
            lines({"Director": "Prof. Helen Marsh", "Deputy director": "Dr Samuel Okafor", "Founded": "1998",
                   "Students (2026-27)": "412", "Academic staff": "87"}),
        ]), (("/about/people/", "Leadership and heads"), ("/about/facilities/", "Facilities"),
             ("https://example.org/", "Wrenmere Data Alliance, our partner network")), menu=True),
        Page("/about/people/", "Leadership and heads", grid(("Name", "Role", "Room", "Since"), people),
             (("/about/facilities/", "Facilities"),)),
        Page("/about/facilities/", "Facilities", dl({
            "Library opening hours": "08:00-22:00, Monday to Saturday",
            "Computing cluster": "Heron, 48 nodes with 192 GPUs, in service since 1 April 2026",
            "Lecture theatres": "3",
            "Largest lecture theatre": "Shore Theatre, 220 seats",
        }), (("/about/people/", "Leadership and heads"),)),
    ]


@dataclass(frozen=True)
class Module:
    slug: str
    code: str
    title: str
    credits: str
    term: str
    leader: str
    lectures: str
    room: str
    assessment: str


PROGRAMMES = {  # slug -> (title, facts, modules)
    "msc-data-science": ("MSc Data Science", {
        "Duration": "12 months, full time", "Start date": "20 September 2027", "Places": "60",
        "Tuition fee (home)": "£11,900", "Tuition fee (international)": "£25,400",
        "Programme director": "Dr Amara Okoye", "Application deadline": "30 July 2027"}, (
        Module("statistical-learning", "LDS401", "Statistical Learning", "20", "Autumn", "Dr Priya Raman",
               "Tuesdays 10:00-12:00", "Shore Theatre", "exam 70%, coursework 30%"),
        Module("data-engineering", "LDS402", "Data Engineering at Scale", "20", "Autumn", "Dr Owen Hale",
               "Thursdays 14:00-16:00", "Room H.204", "coursework 100%"),
        Module("causal-inference", "LDS405", "Causal Inference", "15", "Spring", "Dr Amara Okoye",
               "Mondays 09:00-11:00", "Room H.118", "exam 50%, project 50%"),
    )),
    "msc-applied-ml": ("MSc Applied Machine Learning", {
        "Duration": "12 months, full time", "Start date": "20 September 2027", "Places": "45",
        "Tuition fee (home)": "£12,600", "Tuition fee (international)": "£26,900",
        "Programme director": "Dr Ines Calder", "Application deadline": "30 June 2027"}, (
        Module("deep-learning-systems", "LML410", "Deep Learning Systems", "20", "Autumn", "Dr Ines Calder",
               "Wednesdays 10:00-13:00", "Heron Lab L.105", "project 60%, exam 40%"),
        Module("reinforcement-learning", "LML412", "Reinforcement Learning", "15", "Spring", "Dr Felix Amadi",
               "Fridays 10:00-12:00", "Room H.204", "coursework 100%"),
    )),
    "phd": ("PhD in Data Science", {
        "Duration": "4 years, full time", "Start date": "1 October 2027", "Funded places": "8",
        "Stipend": "£21,400 a year", "Admissions tutor": "Prof. Lukas Brenner",
        "Application deadline": "15 January 2027"}, ()),
}


def study() -> list[Page]:
    programmes = [(f"/study/{slug}/", title) for slug, (title, _, _) in PROGRAMMES.items()]
    pages = [Page("/study/", "Study", "\n".join([
        para("All programmes start in the autumn of 2027. Applications opened on 2 November 2026."),
        grid(("Programme", "Duration", "Places"),
             [(title, facts["Duration"], facts.get("Places") or facts["Funded places"])
              for title, facts, _ in PROGRAMMES.values()]),
    ]), (*programmes, ("/files/brochure.pdf", "Prospectus for 2027 entry (PDF)")), apply_button=True, menu=True)]
    for slug, (title, facts, modules) in PROGRAMMES.items():
        home_of = f"/study/{slug}/"
        siblings = tuple(p for p in programmes if p[0] != home_of)
        own = ((f"{home_of}modules/", f"{title}: modules"),) if modules else ()
        pages.append(Page(home_of, title, table(facts), own + siblings, apply_button=True))
        if not modules:
            continue
        listing = [(f"{home_of}modules/{m.slug}/", m.title) for m in modules]
        pages.append(Page(f"{home_of}modules/", f"{title}: modules",
                          grid(("Code", "Module", "Credits", "Term"), [(m.code, m.title, m.credits, m.term)
                                                                       for m in modules]),
                          (*listing, (home_of, title))))
        for m in modules:
            here = f"{home_of}modules/{m.slug}/"
            pages.append(Page(here, f"{m.code} {m.title}", dl({
                "Code": m.code, "Programme": title, "Credits": m.credits, "Term": m.term, "Module leader": m.leader,
                "Lectures": m.lectures, "Room": m.room, "Assessment": m.assessment}),
                (*(link for link in listing if link[0] != here), (f"{home_of}modules/", "All modules"),
                 (home_of, title))))
    return pages


def apply() -> list[Page]:
    """Reached only by the Apply buttons: no anchor and no menu entry leads here."""
    deadlines = [(title, facts["Application deadline"]) for title, facts, _ in PROGRAMMES.values()]
    return [Page("/apply/", "Apply", "\n".join([
        lines({"Applications open": "2 November 2026", "Application fee": "£75 (none for PhD applicants)",
               "Head of Admissions": "Ms Joanna Pike", "Admissions office": "Room L.012",
               "Decision within": "6 weeks"}),
        grid(("Programme", "Application deadline"), deadlines),
    ]))]


GROUPS = {  # slug -> (name, facts, projects: slug -> (title, facts))
    "climate-data-lab": ("Climate Data Lab", {
        "Head": "Dr Nadia Ferris", "Members": "14", "Room": "H.120", "Founded": "2011"}, {
        "lake-ice-records": ("Lake Wren Ice Records", {
            "Principal investigator": "Dr Nadia Ferris", "Funder": "Northern Environment Research Council",
            "Grant": "£1.2 million", "Start": "1 March 2024", "End": "28 February 2027"}),
        "flood-forecasting": ("Flood Forecasting for the Wren Valley", {
            "Principal investigator": "Dr Callum Reid", "Funder": "Wren Valley Water Trust",
            "Grant": "£640,000", "Start": "1 October 2025", "End": "30 September 2028"}),
    }),
    "health-analytics": ("Health Analytics Group", {
        "Head": "Prof. Lukas Brenner", "Members": "11", "Room": "H.312", "Founded": "2015"}, {
        "ward-capacity": ("Forecasting Ward Capacity", {
            "Principal investigator": "Prof. Lukas Brenner", "Funder": "Wrenmere Health Board",
            "Grant": "£380,000", "Start": "1 January 2025", "End": "31 December 2026"}),
    }),
    "language-technology": ("Language Technology Group", {
        "Head": "Dr Yusuf Demir", "Members": "9", "Room": "H.214", "Founded": "2019"}, {
        "dialect-atlas": ("A Spoken Atlas of Lakeland Dialects", {
            "Principal investigator": "Dr Yusuf Demir", "Funder": "Heritage Speech Foundation",
            "Grant": "£210,000", "Start": "1 September 2025", "End": "31 August 2027"}),
    }),
}


def research() -> list[Page]:
    groups = [(f"/research/{slug}/", name) for slug, (name, _, _) in GROUPS.items()]
    pages = [Page("/research/", "Research", grid(("Group", "Head", "Members"), [
        (name, facts["Head"], facts["Members"]) for name, facts, _ in GROUPS.values()]), tuple(groups), menu=True)]
    for slug, (name, facts, projects) in GROUPS.items():
        group = f"/research/{slug}/"
        own = [(f"{group}{p}/", title) for p, (title, _) in projects.items()]
        pages.append(Page(group, name, table({**facts, "Projects": str(len(projects))}),
                          (*own, *(g for g in groups if g[0] != group))))
        for p, (title, details) in projects.items():
            here = f"{group}{p}/"
            pages.append(Page(here, title, dl({"Group": name, **details}),
                              (*(o for o in own if o[0] != here), (group, name))))
    return pages


EVENTS = {  # slug -> (title, date, room, facts)
    "open-day": ("Open Day", "14 October 2026", "Shore Theatre", {
        "Date": "Wednesday 14 October 2026", "Time": "10:00-16:00", "Room": "Shore Theatre",
        "Registration": "free", "Places": "220"}),
    "annual-lecture": ("Annual Lecture: Counting What Changes", "5 November 2026", "Shore Theatre", {
        "Date": "Thursday 5 November 2026", "Time": "18:30-20:00", "Speaker": "Prof. Mei Lindqvist",
        "Chair": "Prof. Helen Marsh", "Room": "Shore Theatre", "Registration": "free, booking required"}),
    "winter-school": ("Winter School on Causal Inference", "2-3 December 2026", "Room H.204", {
        "Dates": "Wednesday 2 and Thursday 3 December 2026", "Room": "Room H.204", "Chair": "Dr Amara Okoye",
        "Fee": "£180 (students £90)", "Places": "40", "Registration deadline": "13 November 2026"}),
}


def events() -> list[Page]:
    listing = [(f"/events/2026/{slug}/", title) for slug, (title, _, _, _) in EVENTS.items()]
    pages = [
        Page("/events/", "Events", lines({"Events office": "Room H.010", "Upcoming events": str(len(EVENTS)),
                                          "Contact": "events@lakeside-ids.example"}),
             (("/events/2026/", "Events in 2026"),), menu=True),
        Page("/events/2026/", "Events in 2026", grid(("Date", "Event", "Room"), [
            (date, title, room) for title, date, room, _ in EVENTS.values()]), tuple(listing)),
    ]
    for here, (title, _, _, facts) in zip((h for h, _ in listing), EVENTS.values(), strict=True):
        pages.append(Page(here, title, lines(facts),
                          (*(e for e in listing if e[0] != here), ("/events/2026/", "Events in 2026"))))
    return pages


def news() -> list[Page]:
    items = (("/news/new-director/", "New director appointed", "2 June 2026"),
             ("/news/heron-cluster/", "Heron computing cluster ordered", "18 March 2026"))
    pages = [Page("/news/", "News", grid(("Published", "Headline"), [(d, t) for _, t, d in items]),
                  tuple((h, t) for h, t, _ in items), menu=True)]
    bodies = {
        "/news/new-director/": "\n".join([
            para("Prof. Helen Marsh, professor of environmental statistics at the University of North Shore, "
                 "will lead the Institute."),
            lines({"Published": "2 June 2026", "Director from": "1 September 2026",
                   "Previous director": "Prof. David Ellery (2014-2026)"}),
        ]),
        "/news/heron-cluster/": "\n".join([
            para("The Institute's new computing cluster will serve teaching and the three research groups."),
            lines({"Published": "18 March 2026", "Nodes": "48", "GPUs": "192", "In service from": "1 April 2026",
                   "Location": "Library basement, room L.B02"}),
        ]),
    }
    for here, title, _ in items:
        pages.append(Page(here, title, bodies[here], tuple((h, t) for h, t, _ in items if h != here)))
    return pages


SITE = (home, private, about, study, apply, research, events, news)


# --- the files --------------------------------------------------------------------------------------------

def html(page: Page) -> str:
    head = ['<!DOCTYPE html>', '<html lang="en">', "<head>", '<meta charset="utf-8">',
            f"<title>{escape(page.title)} | {NAME}</title>"]
    if page.menu:
        head.append('<script src="/menu.js"></script>')
    body = ["</head>", "<body>", f'<header><a href="/">{NAME}</a></header>']
    if page.menu:
        body.append('<nav id="menu"></nav>')
    body += ["<main>", f"<h1>{escape(page.title)}</h1>", page.body]
    if page.apply_button:
        body.append("<p><button onclick=\"location.href='/apply/'\">Apply now</button></p>")
    if page.links:
        items = "\n".join(f'<li><a href="{escape(h)}">{escape(t)}</a></li>' for h, t in page.links)
        body.append(f'<ul class="links">\n{items}\n</ul>')
    body += ["</main>", f"<footer><p>{NAME}, {ADDRESS}</p></footer>", "</body>", "</html>", ""]
    return "\n".join(head + body)


def menu_js() -> str:
    entries = ",\n".join(f"    ['{href}', '{text}']" for href, text in SECTIONS)
    return f"""// The main menu of the {NAME}: built once the page has loaded, into <nav id="menu">.
document.addEventListener('DOMContentLoaded', function () {{
  var sections = [
{entries}
  ];
  var nav = document.getElementById('menu');
  if (!nav) {{
    return;
  }}
  var list = document.createElement('ul');
  sections.forEach(function (section) {{
    var item = document.createElement('li');
    var link = document.createElement('a');
    link.setAttribute('href', section[0]);
    link.textContent = section[1];
    item.appendChild(link);
    list.appendChild(item);
  }});
  nav.appendChild(list);
}});
"""


def brochure_pdf() -> bytes:
    """A one-page PDF 1.4 with a few lines of text, its cross-reference table computed: a valid file."""
    text = ["Lakeside Institute of Data Science", "Prospectus for 2027 entry",
            "MSc Data Science: 60 places, tuition GBP 11,900 (home)",
            "MSc Applied Machine Learning: 45 places, tuition GBP 12,600 (home)",
            "PhD in Data Science: 8 funded places"]
    shown = "".join(f"({line}) Tj 0 -24 Td " for line in text)
    stream = f"BT /F1 14 Tf 72 770 Td {shown}ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


ROBOTS = f"# {NAME}\nUser-agent: *\nDisallow: /private/\n"

README = (f"The {NAME}, an invented postgraduate institute, as a small static website for the site-tree crawl's "
          "demo: `make demo` serves this folder on 127.0.0.1 (timelyqa/localsite.py) and crawls it from its home "
          "page. Its main menu is built by menu.js, /apply/ is reached only by a button, /private/ is disallowed "
          "by robots.txt, /about/ links off-site and /files/brochure.pdf is not HTML. Every file here is written "
          "by scripts/make_demo_site.py; edit the script and run it again rather than editing a file, since a "
          "test checks that the script reproduces these files byte for byte.\n")


def site_files() -> dict[str, bytes]:
    """Every file of the site, by its path relative to the site's folder."""
    pages = [page for build in SITE for page in build()]
    files = {f"{p.path.strip('/')}/index.html".lstrip("/"): html(p).encode() for p in pages}
    if len(files) != len(pages):
        raise SystemExit("two pages share a path")
    files.update({"menu.js": menu_js().encode(), "robots.txt": ROBOTS.encode(), "README": README.encode(),
                  "files/brochure.pdf": brochure_pdf()})
    return dict(sorted(files.items()))


def main(folder: Path = OUT.parent) -> None:
    site = folder / OUT.name
    files = site_files()
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
    for stale in sorted(p for p in site.rglob("*") if p.is_file() and p.relative_to(site).as_posix() not in files):
        stale.unlink()
    for folder_left in sorted((p for p in site.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder_left.iterdir()):
            folder_left.rmdir()
    pages = sum(rel.endswith(".html") for rel in files)
    print(f"wrote {site}: {pages} pages, {len(files)} files, {sum(map(len, files.values())):,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT.parent)  # another folder, to compare with the committed site
