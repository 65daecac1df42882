"""Random but plausible Wikipedia revision histories, written as real MediaWiki XML exports, for the tests only.

A world is pages in the main namespace (footballers, towns, companies, officeholders, films, software,
people) whose infobox values change at known moments, beside pages that must never give a question:
talk, user and template pages, pages without an infobox, a redirect. Edits change facts, change only
markup (a value rendered the same), change setting-type keys (image, caption, colour...) or file
values, vandalise a value or blank the page and get reverted, or touch only the prose. Each revision
keeps the truth the tests check against: the plain infobox values a reader sees, written independently
of the markup. Everything is drawn from `random.Random(seed)`: a seed is one world, always the same.
"""

from __future__ import annotations

import bz2
import hashlib
import random
import zlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

NS = "http://www.mediawiki.org/xml/export-0.11/"
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
CLUBS = ("Atalanta", "Hajduk Split", "Dinamo Zagreb", "Sporting Lisbon", "Real Betis", "Ajax", "Celtic",
         "Feyenoord", "Olympiacos", "Red Star Belgrade", "Rapid Wien", "Young Boys")
PEOPLE = ("Ana Kovač", "Liam Okafor", "Mei Tanaka", "Jonas Berg", "Priya Raman", "Tomasz Wielki", "Sara Lindqvist",
          "Omar Haddad", "Elena Petrova", "Kofi Mensah", "Lucía Ortega", "Henrik Dahl")
PARTIES = ("Green Alliance", "Liberal Union", "Workers' Front", "Civic Platform", "People's Movement")
SYSTEMS = ("Linux", "Windows", "macOS", "FreeBSD", "Android", "iOS")
OCCUPATIONS = ("Painter", "Engineer", "Broadcaster", "Architect", "Novelist", "Diplomat")
SUFFIXES = ("Kestova", "Linthby", "Marrowdale")
VANDAL = ("LOL HACKED", "poop", "my friend Dave is the best", "asdfgh")

# kind of every key the world uses; setting keys never give a question, file keys hold file names.
SETTING = "setting"
FILE = "file"
TEMPLATES: dict[str, dict[str, str]] = {
    "Infobox football biography": {"image": SETTING, "caption": SETTING, "image_size": SETTING,
                                   "birth_date": "birth", "currentclub": "club", "clubnumber": "number",
                                   "caps1": "number", "goals1": "number", "badge": FILE},
    "Infobox settlement": {"image_skyline": SETTING, "map_caption": SETTING, "pushpin_map": SETTING,
                           "population_total": "number", "leader_name": "person", "area_total_km2": "number",
                           "population_as_of": "date"},
    "Infobox company": {"logo": SETTING, "alt": SETTING, "key_people": "people", "num_employees": "number",
                        "revenue": "money", "ceo": "person", "badge": FILE},
    "Infobox officeholder": {"image": SETTING, "signature": SETTING, "office": "office", "term_start": "date",
                             "party": "party", "predecessor": "person"},
    "Infobox film": {"image": SETTING, "caption": SETTING, "gross": "money", "runtime": "minutes",
                     "released": "film_date", "director": "person"},
    "Infobox software": {"logo": SETTING, "screenshot": SETTING, "latest_release_version": "version",
                         "latest_release_date": "date", "operating_system": "systems", "developer": "person"},
    "Infobox person": {"image": SETTING, "color": SETTING, "occupation": "occupations", "spouse": "person",
                       "children": "number", "net_worth": "money"},
}
DOMAINS = {"Infobox football biography": "sports_and_entertainment", "Infobox settlement": "geography_and_environment",
           "Infobox company": "business_and_economics", "Infobox officeholder": "politics_and_law",
           "Infobox film": "culture_and_arts", "Infobox software": "science_and_technology",
           "Infobox person": "others"}
"""What the domain rule must say for each infobox (the person's categories name no domain)."""
SUBJECTS = {"Infobox football biography": ("Vela Korin", "Dario Mesk", "Ivo Landa", "Tin Brava"),
            "Infobox settlement": ("Port Ambrel", "Kestova", "Marrowdale", "Linthby"),
            "Infobox company": ("Quillon Systems", "Harbek Foods", "Nordlys Shipping", "Orvane Labs"),
            "Infobox officeholder": ("Mira Solvei", "Arnaud Pell", "Kemal Oruç", "Hana Stryk"),
            "Infobox film": ("The Glass Orchard", "Northbound Tide", "A Quiet Engine", "Sable Hours"),
            "Infobox software": ("Fernwick", "Tallowdb", "Kipper OS", "Brambleshell"),
            "Infobox person": ("Rosalind Vey", "Colm Ardagh", "Yusra Beld", "Petra Holm")}


@dataclass(frozen=True)
class Rev:
    """One revision and its truth: `values` is what a reader sees in the infobox (None: no infobox)."""

    id: int
    parent_id: int | None
    timestamp: datetime
    text: str
    values: dict[str, str] | None
    kind: str
    user: str = "Editor"
    missing_text: bool = False
    bogus_tag: bool = False


@dataclass
class WikiPage:
    id: int
    title: str
    ns: int
    revisions: list[Rev]
    template: str | None = None
    redirect: str | None = None


@dataclass
class World:
    pages: list[WikiPage]
    start: datetime
    end: datetime
    horizon: timedelta = timedelta(days=7)

    def main_pages(self) -> list[WikiPage]:
        return [p for p in self.pages if p.ns == 0 and p.redirect is None]


@dataclass
class _Box:
    """A page's infobox as written: each key's markup and its plain truth."""

    markup: dict[str, str] = field(default_factory=dict)
    truth: dict[str, str] = field(default_factory=dict)


def value_at(page: WikiPage, key: str, when: datetime) -> str | None:
    """The truth: the key's plain value in the last readable revision at or before `when`."""
    revs = [r for r in page.revisions if r.timestamp <= when and not r.missing_text]
    if not revs:
        return None
    last = max(revs, key=lambda r: (r.timestamp, r.id))
    return (last.values or {}).get(key)


def make_world(seed: int, *, pages: int = 42, start: datetime | None = None, days: int = 7) -> World:
    rng = random.Random(seed)
    start = start or datetime(2026, 3, 1, tzinfo=UTC)
    world = World(pages=[], start=start, end=start + timedelta(days=days))
    ids = iter(range(1000, 10**6))
    rev_ids = _RevIds(rng)
    names = [(t, s) for t, subjects in SUBJECTS.items() for s in subjects]
    rng.shuffle(names)
    for n in range(pages):
        template, subject = names[n % len(names)]
        title = subject if n < len(names) else f"{subject} ({SUFFIXES[n // len(names) - 1]})"
        world.pages.append(_infobox_page(rng, next(ids), title, subject, template, world, rev_ids))
    for title, ns in (("Talk:Vela Korin", 1), ("User:Sandbox editor", 2), ("Template:Infobox widget", 10)):
        page = _infobox_page(rng, next(ids), title, title.split(":")[1], "Infobox person", world, rev_ids)
        world.pages.append(replace(page, ns=ns))
    world.pages.append(_prose_page(rng, next(ids), "History of tides", world, rev_ids))
    world.pages.append(WikiPage(id=next(ids), title="Vela K.", ns=0, redirect="Vela Korin", revisions=[
        Rev(rev_ids.next(), None, start + timedelta(days=2), "#REDIRECT [[Vela Korin]]", None, "redirect")]))
    return world


class _RevIds:
    def __init__(self, rng: random.Random) -> None:
        self._next = 500_000 + rng.randint(0, 1000)

    def next(self) -> int:
        self._next += 1 + (self._next % 7)
        return self._next


def _infobox_page(rng: random.Random, page_id: int, title: str, subject: str, template: str, world: World,
                  rev_ids: _RevIds) -> WikiPage:
    keys = TEMPLATES[template]
    box = _Box()
    box.markup["name"], box.truth["name"] = subject, subject
    for key, kind in keys.items():
        if rng.random() < 0.9:
            _set(rng, box, key, kind)
    created = world.start - timedelta(days=rng.choice([60, 30, 9, 2])) if rng.random() < 0.85 else \
        world.start + timedelta(hours=rng.randint(1, 100))
    moments = sorted({created, *(_moment(rng, world) for _ in range(rng.randint(2, 12)))})
    moments = [m for m in moments if m >= created]
    prose = f"'''{subject}''' is a subject of [[Example|examples]]."
    revs: list[Rev] = []
    category = {"Infobox person": "1950 births", "Infobox football biography": "Association footballers"}.get(
        template, "Articles")
    for i, moment in enumerate(moments):
        kind = "create" if i == 0 else rng.choice(("fact", "fact", "fact", "markup", "setting", "file", "prose",
                                                   "vandal", "blank", "add", "remove", "revert"))
        if kind == "revert" and len(revs) >= 2 and revs[-2].values:
            old = revs[-2]
            revs.append(Rev(rev_ids.next(), revs[-1].id, moment, old.text, old.values, "revert"))
            box = _box_from(old, box)
            continue
        if kind == "revert":
            kind = "fact"
        if kind in ("vandal", "blank") and revs and len(box.markup) > 1:
            text = "" if kind == "blank" else None
            vandal = _Box(dict(box.markup), dict(box.truth))
            if text is None:
                key = rng.choice(sorted(k for k in box.markup if k != "name"))
                junk = rng.choice(VANDAL)
                vandal.markup[key], vandal.truth[key] = junk, junk
                text = _text(template, vandal, prose, category)
            revs.append(Rev(rev_ids.next(), revs[-1].id, moment, text, dict(vandal.truth) if kind == "vandal" else None,
                            kind, user="203.0.113.7"))
            back = moment + timedelta(minutes=rng.choice([3, 40, 600]))
            revs.append(Rev(rev_ids.next(), revs[-1].id, back, revs[-2].text, revs[-2].values, "revert"))
            continue
        _edit(rng, box, keys, kind)
        if kind == "prose":
            prose += f" It was mentioned on day {i}."
        revs.append(Rev(rev_ids.next(), revs[-1].id if revs else None, moment, _text(template, box, prose, category),
                        dict(box.truth), kind))
    return WikiPage(id=page_id, title=title, ns=0, revisions=revs, template=template)


def _box_from(rev: Rev, box: _Box) -> _Box:
    """After a revert the page is the old revision again; markup follows its truth only where it matters."""
    parsed = _Box()
    for key, value in (rev.values or {}).items():
        parsed.truth[key] = value
        parsed.markup[key] = box.markup[key] if box.truth.get(key) == value else value  # plain text reads as itself
    return parsed


def _prose_page(rng: random.Random, page_id: int, title: str, world: World, rev_ids: _RevIds) -> WikiPage:
    revs = []
    for i, moment in enumerate(sorted(_moment(rng, world) for _ in range(4))):
        text = f"{{{{Short description|Tides}}}}\n'''{title}''' covers tides. Edit {i}.\n[[Category:Tides]]\n"
        revs.append(Rev(rev_ids.next(), revs[-1].id if revs else None, moment, text, None, "prose"))
    return WikiPage(id=page_id, title=title, ns=0, revisions=revs)


def _moment(rng: random.Random, world: World) -> datetime:
    """Most edits fall in the window; some exactly on its ends, some before it and in the week after."""
    roll = rng.random()
    if roll < 0.05:
        return world.start
    if roll < 0.1:
        return world.end
    if roll < 0.6:
        return world.start + timedelta(seconds=rng.randint(1, int((world.end - world.start).total_seconds()) - 1))
    if roll < 0.8:
        return world.end + timedelta(seconds=rng.randint(1, 14 * 86400))
    return world.start - timedelta(seconds=rng.randint(1, 20 * 86400))


def _edit(rng: random.Random, box: _Box, keys: dict[str, str], kind: str) -> None:
    facts = sorted(k for k, v in keys.items() if v not in (SETTING, FILE))
    if kind == "fact":
        for key in rng.sample(facts, rng.randint(1, min(3, len(facts)))):
            _set(rng, box, key, keys[key])
    elif kind == "markup":
        for key in [k for k in facts if k in box.truth][:2]:
            box.markup[key] = _remark(rng, box.truth[key], box.markup[key], keys[key])
    elif kind in ("setting", "file"):
        wanted = SETTING if kind == "setting" else FILE
        for key in [k for k, v in keys.items() if v == wanted]:
            _set(rng, box, key, wanted)
    elif kind == "add":
        missing = [k for k in facts if k not in box.truth]
        if missing:
            key = rng.choice(missing)
            _set(rng, box, key, keys[key])
    elif kind == "remove":
        present = [k for k in facts if k in box.truth]
        if present:
            key = rng.choice(present)
            del box.truth[key], box.markup[key]


def _set(rng: random.Random, box: _Box, key: str, kind: str) -> None:
    """A new value for the key, different from the current one, in one of its markups."""
    for _ in range(20):
        markup, truth = _value(rng, key, kind)
        if truth != box.truth.get(key):
            break
    box.markup[key], box.truth[key] = markup, truth


def _remark(rng: random.Random, truth: str, current: str, kind: str) -> str:
    """The same truth in another markup (a reference added, a link piped): no change a reader would see."""
    options = [f"{current}<ref name=\"src{rng.randint(1, 99)}\">{{{{cite web |url=https://example.org/s |title=Source"
               f" }}}}</ref>", f"{current} <!-- please keep this up to date -->", f"{current}<ref name=\"b\" />"]
    if kind in ("club", "person", "party", "office") and "[[" not in current:
        options.append(f"[[{truth}]]")
    return rng.choice(options)


def _value(rng: random.Random, key: str, kind: str) -> tuple[str, str]:
    if kind == SETTING:
        if "caption" in key or key == "alt":
            text = f"{rng.choice(PEOPLE)} at an event"
            return text, text
        if key in ("color", "colour"):
            text = f"#{rng.randint(0, 0xFFFFFF):06x}"
            return text, text
        if key == "image_size":
            text = f"{rng.choice([180, 200, 220, 250])}px"
            return text, text
        text = f"{key.title()} {rng.randint(1, 999)}.jpg"
        return text, text
    if kind == FILE:
        text = f"Badge {rng.randint(1, 999)}.svg"
        return (f"[[File:{text}|20px]]", f"File:{text}") if rng.random() < 0.3 else (text, text)
    if kind in ("club", "person", "party", "office"):
        pool = {"club": CLUBS, "person": PEOPLE, "party": PARTIES,
                "office": ("Mayor of Port Ambrel", "Minister of Finance", "Governor of Kestova")}[kind]
        v = rng.choice(pool)
        return rng.choice([f"[[{v}]]", f"[[{v} (organisation)|{v}]]", v, f"{{{{nowrap|[[{v}]]}}}}"]), v
    if kind == "number":
        v = str(rng.randint(10, 99_999))
        return rng.choice([v, f"{{{{formatnum:{v}}}}}", f"{v}<ref>{{{{cite web|url=https://example.org/{v}"
                           f"|title=Stats}}}}</ref>", f"{v} <!-- updated weekly -->"]), v
    if kind in ("date", "birth", "film_date"):
        y, m, d = rng.randint(1950, 2026), rng.randint(1, 12), rng.randint(1, 28)
        name = {"date": rng.choice(["start date", "Start date", "start_date"]),
                "birth": rng.choice(["birth date and age", "Birth date and age", "birth date"]),
                "film_date": "Film date"}[kind]
        month = rng.choice([str(m), MONTHS[m - 1]]) if kind == "date" else str(m)
        extra = rng.choice(["", "|df=y", "|mf=yes"])
        return f"{{{{{name}|{y}|{month}|{d}{extra}}}}}", f"{y:04d}-{m:02d}-{d:02d}"
    if kind in ("people", "systems", "occupations"):
        pool = {"people": PEOPLE, "systems": SYSTEMS, "occupations": OCCUPATIONS}[kind]
        items = rng.sample(pool, rng.randint(2, 3))
        forms = ["{{ubl|" + "|".join(items) + "}}", "{{plainlist|\n" + "".join(f"* [[{i}]]\n" for i in items) + "}}",
                 "<br />".join(f"[[{i}]]" for i in items)]
        return rng.choice(forms), ", ".join(items)
    if kind == "money":
        v = f"US${rng.randint(2, 900)}.{rng.randint(1, 9)} million"
        return rng.choice([v, f"{v}<ref>{{{{cite news|title=Box office}}}}</ref>", f"{{{{nowrap|{v}}}}}"]), v
    if kind == "minutes":
        v = f"{rng.randint(80, 200)} minutes"
        return v, v
    if kind == "version":
        v = f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        return v, v
    raise ValueError(kind)


def _text(template: str, box: _Box, prose: str, category: str) -> str:
    lines = [f"{{{{Short description|{box.truth.get('name', 'a subject')}}}}}", f"{{{{{template}"]
    lines += [f"| {key} = {markup}" for key, markup in box.markup.items()]
    lines += ["}}", prose, "", "== History ==", "Some history.", "", f"[[Category:{category}]]"]
    return "\n".join(lines) + "\n"


# --- the export -------------------------------------------------------------------------------------------

SITEINFO = """  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.46.0-wmf.3</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Media</namespace>
      <namespace key="-1" case="first-letter">Special</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="2" case="first-letter">User</namespace>
      <namespace key="3" case="first-letter">User talk</namespace>
      <namespace key="4" case="first-letter">Wikipedia</namespace>
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def base36_sha1(text: str) -> str:
    """MediaWiki's revision sha1: SHA-1 in base 36, 31 characters."""
    n = int(hashlib.sha1(text.encode()).hexdigest(), 16)
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def export_xml(pages: list[WikiPage], *, rng: random.Random | None = None) -> str:
    """The pages as a MediaWiki export (schema 0.11); `rng` shuffles revisions inside pages, as imports can."""
    out = [f'<mediawiki xmlns="{NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           f'xsi:schemaLocation="{NS} http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">\n',
           SITEINFO]
    for page in pages:
        out.append(f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>{page.ns}</ns>\n"
                   f"    <id>{page.id}</id>\n")
        if page.redirect:
            out.append(f"    <redirect title={quoteattr(page.redirect)} />\n")
        revisions = list(page.revisions)
        if rng is not None:
            rng.shuffle(revisions)
        out += [_revision(rev) for rev in revisions]
        out.append("  </page>\n")
    out.append("</mediawiki>\n")
    return "".join(out)


def _revision(rev: Rev) -> str:
    sha1 = base36_sha1(rev.text)
    size = len(rev.text.encode())
    who = (f"<ip>{rev.user}</ip>" if rev.user[0].isdigit() else f"<username>{escape(rev.user)}</username>"
           f"<id>{zlib.crc32(rev.user.encode()) % 10**6}</id>")
    if rev.missing_text:
        text = f'      <text bytes="{size}" sha1="{sha1}" />\n'
    elif rev.text:
        text = f'      <text bytes="{size}" sha1="{sha1}" xml:space="preserve">{escape(rev.text)}</text>\n'
    else:
        text = f'      <text bytes="0" sha1="{sha1}" />\n'
    parent = f"      <parentid>{rev.parent_id}</parentid>\n" if rev.parent_id else ""
    return (f"    <revision>\n      <id>{rev.id}</id>\n{parent}"
            f"      <timestamp>{rev.timestamp.strftime('%Y-%m-%dT%H:%M:%SZ')}</timestamp>\n"
            f"      <contributor>{who}</contributor>\n"
            + ("      <minor />\n" if rev.kind == "markup" else "")
            + f"      <comment>{escape(rev.kind)} edit</comment>\n      <origin>{rev.id}</origin>\n"
            + ("      <bogus>1</bogus>\n" if rev.bogus_tag else "")
            + f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n{text}"
            f"      <sha1>{sha1}</sha1>\n    </revision>\n")


def write_export(pages: list[WikiPage], path: Path, *, shuffle: int | None = None) -> Path:
    """Write the export plain, or bz2-compressed when the path ends in .bz2; `shuffle` reorders pages and revisions."""
    if shuffle is not None:
        rng = random.Random(shuffle)
        pages = list(pages)
        rng.shuffle(pages)
        xml = export_xml(pages, rng=rng)
    else:
        xml = export_xml(pages)
    data = xml.encode()
    path.write_bytes(bz2.compress(data) if path.suffix == ".bz2" else data)
    return path
