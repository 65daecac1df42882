"""Write the demo news archive in data/demo/news/: Current Events Portal day pages and the outlets they cite.

The same invented world as the other demos (Valmora, Port Alder, Northwind Analytics, Harriet Lowe...), as news:

- `portal.xml`: a MediaWiki XML export of nine "Portal:Current events/YYYY Month D" day pages of 2026, the May and
  June ones in the older form (the news in the `content=` parameter of `{{Current events}}`, `;Heading` lines),
  the later ones in the newer (between `{{Current events|...|top=yes}}` and `{{...|bottom=yes}}`, `'''Bold'''`
  headings), with topics heading nested items, several cited links an item and a `<ref>`;
- `outlets/<host>/`: three allowed outlets, each served on a loopback address of its own (127.0.0.2-4, port
  47312), and one not on the list (127.0.0.5) that a link cites and the crawl must never ask;
- `outlets.yaml`: the demo's allow-list (the three outlets; Port Alder Times rendered by the `auto` rule).

The cases a news crawl must handle, once each: a story written by a script (Port Alder Times, 2026-09-09); an
article dated outside its event's window; a section front cited as if it were an article; a dead link (a page the
outlet does not have); a link to an outlet off the list. Every article states its event's facts in its own words,
so that the template generator finds its answers there.

Run it again after editing the world: the output is deterministic, and files the archive no longer has are removed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import date
from html import escape
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

OUT = Path(__file__).resolve().parent.parent / "data" / "demo" / "news"
PORT = 47312
HOSTS = {"valmora-herald": "127.0.0.2", "port-alder-times": "127.0.0.3", "northwind-wire": "127.0.0.4",
         "rumour-mill": "127.0.0.5"}
NAMES = {"valmora-herald": "Valmora Herald", "port-alder-times": "Port Alder Times",
         "northwind-wire": "Northwind Wire", "rumour-mill": "Rumour Mill"}
NEW_FORM_FROM = date(2026, 7, 1)
"""Day pages from July 2026 on are written in the newer form."""


def url(outlet: str, path: str) -> str:
    return f"http://{HOSTS[outlet]}:{PORT}{path}"


@dataclass(frozen=True)
class Story:
    """An article an outlet serves: where, its headline, its date and author, and its paragraphs."""

    outlet: str
    path: str
    headline: str
    published: str
    author: str
    paragraphs: tuple[str, ...]
    scripted: bool = False
    """The body is written by a script from data in the page (the outlet's story app): no text as served."""


@dataclass(frozen=True)
class Item:
    """One news item of a day page: its category, its topic line (or none) and its wikitext, links included."""

    category: str
    topic: str | None
    text: str


STORIES = (
    Story("valmora-herald", "/2026/05/12/northwind-buys-ferrovia-data.html",
          "Northwind Analytics to buy Ferrovia Data", "2026-05-12T08:30:00+00:00", "Elena Marsh",
          ("Northwind Analytics has agreed to acquire Ferrovia Data, a logistics software firm based in Campo Alto, "
           "for 240 million euros, the company said on Tuesday.",
           "The acquisition brings 310 engineers and Ferrovia's route-planning tools to Northwind. Chief executive "
           "Elena Varga told analysts the purchase would let Northwind sell freight forecasting to the ports of the "
           "northern coast.",
           "Ferrovia Data's founders will stay on for two years. The acquisition still needs the approval of the "
           "Coastal Competition Authority, which has thirty working days to review it.",
           "Shares of Northwind rose by 4 percent in morning trading after the announcement.")),
    Story("port-alder-times", "/news/2026-06-03/earthquake-north-pier.html",
          "Earthquake damages Port Alder's north pier", "2026-06-03T17:10:00+00:00", "Samir Okafor",
          ("An earthquake of magnitude 5.8 struck near Port Alder on Wednesday afternoon, cracking the harbour's "
           "north pier and cutting power to parts of the old town for several hours.",
           "The quake's epicentre lay 11 kilometres offshore, at a depth of 14 kilometres, the regional seismology "
           "office said. No deaths were reported; the harbour master closed the north pier to ships until engineers "
           "have inspected it.",
           "Residents described plates falling from shelves and car alarms sounding across the seafront. Schools "
           "will reopen on Thursday after a check of their buildings, the council said.")),
    Story("valmora-herald", "/2026/07/14/lowe-wins-valmora.html",
          "Harriet Lowe elected mayor of Valmora", "2026-07-14T22:05:00+00:00", "Elena Marsh",
          ("Harriet Lowe has been elected mayor of Valmora, winning 54 percent of the vote and unseating the "
           "incumbent, Tomas Reyes, after a single term.",
           "Turnout reached 61 percent, the highest in a Valmora mayoral election since 1998, the city's electoral "
           "office said. Lowe, a former harbour engineer, campaigned on a new tram line to the eastern districts.",
           "Reyes conceded shortly before midnight and congratulated his successor. Lowe takes office on "
           "1 September.")),
    Story("port-alder-times", "/news/2026-07-15/valmora-elects-lowe.html",
          "Valmora turns to Lowe", "2026-07-15T06:45:00+00:00", "Samir Okafor",
          ("Voters in neighbouring Valmora elected Harriet Lowe as their mayor on Tuesday. Lowe took 54 percent "
           "of the vote against the incumbent Tomas Reyes.",
           "Port Alder's council leader said he hoped the new mayor would revive talks on a shared coastal railway, "
           "stalled since 2024. Lowe has promised a tram line to Valmora's eastern districts within four years.")),
    Story("valmora-herald", "/2026/08/21/ferreira-joins-valmora-cf.html",
          "Valmora CF sign Mateo Ferreira for club-record fee", "2026-08-21T19:00:00+00:00", "Jonas Brandt",
          ("Valmora CF have signed the striker Mateo Ferreira from Lunetta Calcio for a club-record fee of 18 "
           "million euros, the club announced on Friday evening.",
           "Ferreira returns to the club he played for from 2015 to 2022. Ferreira has signed a contract until 2030 "
           "and will wear the number 9 shirt, left free since the departure of Rafael Nunes.",
           "The fee beats the previous record of 11 million euros, paid for Nunes in 2019.")),
    Story("port-alder-times", "/news/2026-09-09/wrenmere-observatory-opens.html",
          "Wrenmere Observatory opens its doors", "2026-09-09T11:00:00+00:00", "Ines Calder",
          ("The Lakeside Institute of Data Science opened the Wrenmere Observatory on Wednesday. Its telescope, "
           "built with a 2.4-metre mirror, is the largest on the northern coast.",
           "The observatory cost 36 million euros. A third of the observing nights will go to schools and amateur "
           "astronomers, the institute's director said at the opening.",
           "The first public viewing evening, of Saturn and its rings, is planned for October."),
          scripted=True),
    Story("valmora-herald", "/2026/09/10/salt-and-signal-review.html",
          "Review: Salt and Signal", "2026-09-10T09:00:00+00:00", "Clara Nyberg",
          ("Salt and Signal, the debut film of director Ana Ruiz, is a patient story of a lighthouse keeper and "
           "the radio operator she never meets. It opens in cinemas across the coast this week.",
           "Ruiz shot the film over six weeks on the cliffs north of Port Alder, and the sea is never out of "
           "frame. It is slow, and it is very good.")),
    Story("northwind-wire", "/festival/2026/10/02/golden-gull.html",
          "Salt and Signal takes the Golden Gull", "2026-10-03T10:20:00+00:00", "Clara Nyberg",
          ("Salt and Signal, directed by Ana Ruiz, won the Golden Gull, the top award of the Port Alder Film "
           "Festival, on Friday night.",
           "The jury praised the film's patience and its sound design. Ruiz, who grew up in Port Alder, dedicated "
           "the award to the town's lifeboat crews. The festival screened 48 films over nine days.")),
    Story("port-alder-times", "/news/2026-10-19/tallyframe-4.html",
          "Tallyframe 4.0 arrives with 31 currencies", "2026-10-19T14:00:00+00:00", "Ines Calder",
          ("Northwind Analytics released Tallyframe 4.0, the newest version of its accounting software, on "
           "Monday. The release supports 31 currencies, up from 12, and adds automatic tax reports for the "
           "Coastal Union.",
           "Northwind said 4,200 firms use Tallyframe. Existing customers can upgrade free of charge until "
           "31 December 2026.")),
    Story("northwind-wire", "/business/2026/11/04/valmora-budget.html",
          "Valmora council approves 1.2 billion euro budget", "2026-11-04T18:30:00+00:00", "Jonas Brandt",
          ("Valmora's city council approved a budget of 1.2 billion euros for 2027 on Wednesday. The council passed "
           "the budget by 31 votes to 14.",
           "The budget sets aside 140 million euros for the first section of the tram line to the eastern "
           "districts that Mayor Harriet Lowe promised, and freezes council tax for a second year. Opposition councillors said the tram's "
           "cost had been underestimated.")),
    Story("port-alder-times", "/news/2026-11-12/alder-river-floods.html",
          "Alder River floods: thousands evacuated", "2026-11-12T07:50:00+00:00", "Samir Okafor",
          ("Flooding along the Alder River forced the evacuation of 3,400 residents from Port Alder's eastern "
           "districts overnight, the council said on Thursday.",
           "The river rose 2.7 metres above the usual level after three days of rain. Emergency shelters opened in "
           "the town's two secondary schools, and the coast road to Valmora was closed.",
           "Rescue crews in boats brought 85 people out of flooded homes in the eastern districts.",
           "Forecasters expect the rain to ease by the weekend.")),
)


def _links(*pairs: tuple[str, str]) -> str:
    return " ".join(f"[{link} ({name})]" for link, name in pairs)


DAYS: dict[date, tuple[Item, ...]] = {
    date(2026, 5, 12): (
        Item("Business and economy", "[[Northwind Analytics]]",
             "[[Northwind Analytics]] agrees to acquire the [[Campo Alto]] logistics software firm Ferrovia Data for "
             "240 million euros. " + _links((url("valmora-herald", "/2026/05/12/northwind-buys-ferrovia-data.html"),
                                             "Valmora Herald"),
                                            (url("rumour-mill", "/northwind-deal.html"), "Rumour Mill"))),
    ),
    date(2026, 6, 3): (
        Item("Disasters and accidents", None,
             "A magnitude 5.8 [[earthquake]] strikes near [[Port Alder]], damaging the harbour's north pier; no "
             "deaths are reported.<ref>Regional seismology office bulletin.</ref> "
             + _links((url("port-alder-times", "/news/2026-06-03/earthquake-north-pier.html"), "Port Alder Times"))),
    ),
    date(2026, 7, 14): (
        Item("Politics and elections", "[[2026 Valmora mayoral election]]",
             "[[Harriet Lowe]] is elected [[Mayor of Valmora|mayor of Valmora]] with 54 percent of the vote, "
             "defeating incumbent Tomas Reyes. "
             + _links((url("valmora-herald", "/2026/07/14/lowe-wins-valmora.html"), "Valmora Herald"),
                      (url("port-alder-times", "/news/2026-07-15/valmora-elects-lowe.html"), "Port Alder Times"))),
    ),
    date(2026, 8, 21): (
        Item("Sports", "[[2026–27 Coastal League]]",
             "[[Valmora CF]] sign striker [[Mateo Ferreira]] from [[Lunetta Calcio]] for a club-record fee of 18 "
             "million euros. "
             + _links((url("valmora-herald", "/2026/08/21/ferreira-joins-valmora-cf.html"), "Valmora Herald"))),
    ),
    date(2026, 9, 9): (
        Item("Science and technology", None,
             "The [[Lakeside Institute of Data Science]] opens the Wrenmere Observatory, whose telescope has a "
             "2.4-metre mirror. "
             + _links((url("port-alder-times", "/news/2026-09-09/wrenmere-observatory-opens.html"),
                       "Port Alder Times"))),
    ),
    date(2026, 10, 2): (
        Item("Arts and culture", "[[Port Alder Film Festival]]",
             "''[[Salt and Signal]]'', directed by Ana Ruiz, wins the Golden Gull at the Port Alder Film Festival. "
             + _links((url("valmora-herald", "/2026/09/10/salt-and-signal-review.html"), "Valmora Herald"),
                      (url("northwind-wire", "/festival/2026/10/02/golden-gull.html"), "Northwind Wire"))),
    ),
    date(2026, 10, 19): (
        Item("Business and economy", "[[Northwind Analytics]]",
             "Northwind Analytics releases [[Tallyframe]] 4.0, which supports 31 currencies. "
             + _links((url("valmora-herald", "/2026/10/19/tallyframe-launch.html"), "Valmora Herald"),
                      (url("port-alder-times", "/news/2026-10-19/tallyframe-4.html"), "Port Alder Times"))),
    ),
    date(2026, 11, 4): (
        Item("Politics and elections", None,
             "The [[Valmora]] city council approves a budget of 1.2 billion euros for 2027. "
             + _links((url("valmora-herald", "/politics/"), "Valmora Herald"),
                      (url("northwind-wire", "/business/2026/11/04/valmora-budget.html"), "Northwind Wire"))),
    ),
    date(2026, 11, 12): (
        Item("Disasters and accidents", "[[2026 Alder River floods]]",
             "Flooding along the [[Alder River]] forces the evacuation of 3,400 residents from [[Port Alder]]'s "
             "eastern districts. "
             + _links((url("port-alder-times", "/news/2026-11-12/alder-river-floods.html"), "Port Alder Times"))),
    ),
}
"""Each day's items. Cited and never fetched: Rumour Mill (off the list). Dropped: the Salt and Signal review
(dated 2026-09-10, more than 3 days before its event), the Tallyframe launch on the Valmora Herald (the outlet has
no such page), the Valmora Herald's politics front (a list of headlines, no article)."""


def day_page(day: date, items: tuple[Item, ...]) -> str:
    """The wikitext of one day page, in the form of its time."""
    lines: list[str] = []
    category = None
    for item in items:
        if item.category != category:
            category = item.category
            lines.append(f"'''{category}'''" if day >= NEW_FORM_FROM else f";{category}")
        if item.topic:
            lines += [f"*{item.topic}", f"**{item.text}"]
        else:
            lines.append(f"*{item.text}")
    body = "\n".join(["<!-- All news items below this line -->", *lines, "<!-- All news items above this line -->"])
    params = f"year={day.year}|month={day.month:02d}|day={day.day:02d}"
    if day >= NEW_FORM_FROM:
        return f"{{{{Current events|{params}|top=yes}}}}\n{body}\n{{{{Current events|{params}|bottom=yes}}}}\n"
    return f"{{{{Current events|{params}|content=\n{body}\n}}}}\n"


def title(day: date) -> str:
    return f"Portal:Current events/{day.year} {day.strftime('%B')} {day.day}"


def export_xml() -> str:
    """The day pages as a MediaWiki XML export (one revision each, saved the day after)."""
    pages = []
    for n, (day, items) in enumerate(sorted(DAYS.items())):
        text = day_page(day, items)
        pages.append(
            f"  <page>\n    <title>{xml_escape(title(day))}</title>\n    <ns>100</ns>\n    <id>{70_000_100 + n}</id>\n"
            f"    <revision>\n      <id>{1_320_000_000 + 1000 * n}</id>\n"
            f"      <timestamp>{day.isoformat()}T23:59:00Z</timestamp>\n"
            f"      <contributor><username>PortalEditor</username><id>4242</id></contributor>\n"
            f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f"      <text bytes=\"{len(text.encode())}\" xml:space=\"preserve\">{xml_escape(text)}</text>\n"
            f"    </revision>\n  </page>\n")
    return ("<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\" version=\"0.11\" xml:lang=\"en\">\n"
            "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n"
            "    <base>https://en.wikipedia.org/wiki/Main_Page</base>\n    <generator>MediaWiki 1.46.0</generator>\n"
            "    <case>first-letter</case>\n    <namespaces>\n      <namespace key=\"0\" case=\"first-letter\" />\n"
            "      <namespace key=\"100\" case=\"first-letter\">Portal</namespace>\n    </namespaces>\n"
            "  </siteinfo>\n" + "".join(pages) + "</mediawiki>\n")


def page(outlet: str, head: str, body: str, *, script: str = "") -> str:
    """An outlet's page: its masthead and menu, the body, its footer."""
    name = NAMES[outlet]
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{head}"
            f"<link rel=\"stylesheet\" href=\"/style.css\">\n</head>\n<body>\n"
            f"<header><a href=\"/\">{escape(name)}</a>\n<nav><a href=\"/politics/\">Politics</a> "
            f"<a href=\"/business/\">Business</a> <a href=\"/sport/\">Sport</a> <a href=\"/culture/\">Culture</a>"
            f"</nav></header>\n<main>\n{body}\n</main>\n"
            f"<footer><p>&copy; 2026 {escape(name)}. All rights reserved.</p>\n<p><a href=\"/about/\">About us</a> "
            f"<a href=\"/privacy/\">Privacy</a> <a href=\"/newsletter/\">Newsletter</a></p></footer>\n"
            f"{script}</body>\n</html>\n")


def article(story: Story) -> str:
    head = (f"<title>{escape(story.headline)} | {escape(NAMES[story.outlet])}</title>\n"
            f"<meta property=\"og:type\" content=\"article\">\n"
            f"<meta property=\"og:title\" content=\"{escape(story.headline)}\">\n"
            f"<meta property=\"article:published_time\" content=\"{story.published}\">\n"
            f"<meta name=\"author\" content=\"{escape(story.author)}\">\n")
    byline = (f"<p class=\"byline\">By {escape(story.author)}, <time datetime=\"{story.published}\">"
              f"{story.published[:10]}</time></p>")
    if story.scripted:
        data = json.dumps(list(story.paragraphs), ensure_ascii=False)
        script = ("<script>\nconst paragraphs = " + data + ";\nconst body = document.getElementById('story');\n"
                  "for (const text of paragraphs) {\n  const p = document.createElement('p');\n"
                  "  p.textContent = text;\n  body.appendChild(p);\n}\n</script>\n")
        body = (f"<article>\n<h1>{escape(story.headline)}</h1>\n{byline}\n<div id=\"story\"></div>\n</article>")
        return page(story.outlet, head, body, script=script)
    paragraphs = "\n".join(f"<p>{escape(p)}</p>" for p in story.paragraphs)
    body = f"<article>\n<h1>{escape(story.headline)}</h1>\n{byline}\n{paragraphs}\n</article>"
    return page(story.outlet, head, body)


def front(outlet: str, section: str, stories: list[Story]) -> str:
    """A section front: a list of headlines, no article."""
    items = "\n".join(f"<li><a href=\"{s.path}\">{escape(s.headline)}</a></li>" for s in stories)
    head = f"<title>{section} | {escape(NAMES[outlet])}</title>\n"
    return page(outlet, head, f"<h1>{section}</h1>\n<ul class=\"headlines\">\n{items}\n</ul>")


OUTLETS_YAML = """\
# The demo's allow-list: the three outlets the demo archive serves, each on its own loopback address.
# Rumour Mill (127.0.0.5) is cited by the portal and is not on the list, so it is never asked.
outlets:
  - name: Valmora Herald
    domains: ['127.0.0.2:47312']
    render: never
  - name: Port Alder Times
    domains: ['127.0.0.3:47312']
    render: auto
  - name: Northwind Wire
    domains: ['127.0.0.4:47312']
    render: never
"""


def files() -> dict[str, str]:
    """Every file of the archive by its path under data/demo/news/."""
    out = {"portal.xml": export_xml(), "outlets.yaml": OUTLETS_YAML}
    for outlet in ("valmora-herald", "port-alder-times", "northwind-wire", "rumour-mill"):
        own = [s for s in STORIES if s.outlet == outlet]
        base = f"outlets/{HOSTS[outlet]}"
        out[f"{base}/robots.txt"] = "User-agent: *\nDisallow: /private/\n"
        out[f"{base}/style.css"] = "body { font-family: serif; max-width: 40em; margin: auto; }\n"
        out[f"{base}/index.html"] = front(outlet, "Latest", own)
        for story in own:
            out[f"{base}{story.path}"] = article(story)
    out[f"outlets/{HOSTS['valmora-herald']}/politics/index.html"] = front(
        "valmora-herald", "Politics", [s for s in STORIES if s.outlet == "valmora-herald"][:3])
    out[f"outlets/{HOSTS['rumour-mill']}/northwind-deal.html"] = page(
        "rumour-mill", "<title>Northwind deal: what they are not telling you</title>\n",
        "<article><h1>What they are not telling you</h1><p>Sources say the deal is worth far more.</p></article>")
    return out


def main(parent: Path = OUT.parent) -> None:
    folder = parent / OUT.name
    wanted = files()
    if folder.exists():
        for path in sorted(folder.rglob("*"), reverse=True):
            rel = path.relative_to(folder).as_posix()
            if path.is_file() and rel not in wanted:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for rel, text in sorted(wanted.items()):
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT.parent)  # another folder, to compare with the committed one
