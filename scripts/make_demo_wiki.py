"""Write the demo Wikipedia export in data/demo/: a small MediaWiki XML export with full 2026 revision histories.

The same invented world as `make_demo_dumps.py` (Valmora CF, Riyadh Falcons FC, Port Alder, Northwind
Analytics...), seen from English Wikipedia: articles with infoboxes whose values change between June and
November 2026, for the Wikipedia source's demo window 2026-06-01 .. 2026-11-16 (and its week after).

Every page is written as a story of edits, each with the reason it is there:

- fact changes that make a question: a manager, a squad number, a current club, a league, a stadium's
  capacity, a population, two mayors, a term's start, key people, a software release, a film's box office,
  an album's delayed release date;
- two answers that move again in the week after the window (a box office gross, a software release):
  `frequent_update`; the others do not, one only by a reference added in that week (no change to a reader);
- edits that make none, each for its own reason: a crest or caption change only (setting keys), vandalism
  reverted within minutes, a manager change reverted weeks later, prose-only edits, a chairman written with a
  flag file (a file value), a talk page, a user page, a redirect, a list without an infobox, a page not
  edited in the window.

Revision ids grow with time across the whole wiki, as they do on Wikipedia; histories start in 2026, so a
page older than that begins with a revision whose parent is not in the file. Run it again after editing
the world: the output is deterministic.
"""

from __future__ import annotations

import bz2
import hashlib
import sys
import zlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

OUT = Path(__file__).resolve().parent.parent / "data" / "demo" / "wikipedia-history.xml.bz2"
NS = "http://www.mediawiki.org/xml/export-0.11/"
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
FIRST_REV_ID = 1_331_204_118
"""The first revision id of 2026; ids then grow at about 1.7 a second, as English Wikipedia's do."""


# --- articles as data -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Doc:
    """One revision's article: short description, top templates, the infobox (ordered), lead, sections, categories."""

    short: str
    infobox: str | None
    box: dict[str, str]
    lead: str
    sections: tuple[tuple[str, str], ...]
    categories: tuple[str, ...]
    top: tuple[str, ...] = ("{{Use dmy dates|date=January 2026}}",)

    def set(self, values: dict[str, str | None]) -> Doc:
        """Infobox values changed (None or '' removes the key's value but keeps it in place, as editors do)."""
        box = dict(self.box)
        for key, value in values.items():
            box[key] = value or ""
        return replace(self, box=box)

    def section(self, heading: str, body: str) -> Doc:
        """A section's text replaced, or a new section added before the references."""
        sections = list(self.sections)
        for i, (h, _) in enumerate(sections):
            if h == heading:
                sections[i] = (h, body)
                return replace(self, sections=tuple(sections))
        return replace(self, sections=(*sections, (heading, body)))

    def add(self, heading: str, text: str) -> Doc:
        """A paragraph appended to a section."""
        body = dict(self.sections)[heading]
        return self.section(heading, body + "\n\n" + text)

    def text(self) -> str:
        lines = [f"{{{{Short description|{self.short}}}}}", *self.top]
        if self.infobox:
            width = max(len(k) for k in self.box)
            lines.append(f"{{{{{self.infobox}")
            lines += [f"| {k.ljust(width)} = {v}".rstrip() for k, v in self.box.items()]
            lines.append("}}")
        lines.append(self.lead)
        for heading, body in self.sections:
            lines += ["", f"== {heading} ==", body]
        lines += ["", "== References ==", "{{Reflist}}", ""]
        lines += [f"[[Category:{c}]]" for c in self.categories]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Rev:
    timestamp: datetime
    user: str
    comment: str
    text: str
    minor: bool = False


@dataclass
class Page:
    title: str
    id: int
    ns: int = 0
    redirect: str | None = None
    older: bool = True
    """The page existed before 2026: its first revision here has a parent that the export does not hold."""
    revisions: list[Rev] = field(default_factory=list)

    def save(self, when: str, user: str, comment: str, doc: Doc | str, *, minor: bool = False) -> Page:
        text = doc if isinstance(doc, str) else doc.text()
        self.revisions.append(Rev(ts(when), user, comment, text, minor))
        return self

    def rollback(self, when: str, user: str, vandal: str, *, to: str) -> Page:
        """MediaWiki's rollback: the text of the revision before the vandal's, byte for byte."""
        comment = (f"Reverted edits by [[Special:Contributions/{vandal}|{vandal}]] ([[User talk:{vandal}|talk]]) "
                   f"to last version by {to}")
        self.revisions.append(Rev(ts(when), user, comment, self.revisions[-2].text, False))
        return self


def ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def cite_web(url: str, title: str, website: str, date: str, access: str) -> str:
    return (f"<ref>{{{{cite web |url={url} |title={title} |website={website} |date={date} "
            f"|access-date={access}}}}}</ref>")


def cite_news(name: str, url: str, title: str, work: str, date: str, language: str = "") -> str:
    lang = f" |language={language}" if language else ""
    return (f'<ref name="{name}">{{{{cite news |url={url} |title={title} |work={work} |date={date}{lang}}}}}'
            f"</ref>")


# --- football clubs ---------------------------------------------------------------------------------------

def riyadh_falcons() -> list[Page]:
    """The head coach changes in October (a question); the season's keys changed in August (superseded)."""
    doc = Doc(
        short="Saudi Arabian association football club",
        infobox="Infobox football club",
        box={
            "clubname": "Riyadh Falcons FC",
            "image": "Riyadh Falcons FC logo.svg",
            "image_size": "180px",
            "fullname": "Riyadh Falcons Football Club",
            "nickname": "''Al-Suqour'' (The Falcons)",
            "founded": "{{start date|1961|4|2|df=y}}",
            "ground": "[[Falcons Park]]",
            "capacity": "32,000",
            "chairman": "Khalid Al-Mutairi",
            "manager": "[[Samir Haddad]]",
            "league": "[[Saudi Pro League]]",
            "season": "[[2025–26 Saudi Pro League|2025–26]]",
            "position": "Saudi Pro League, 7th of 18",
            "website": "{{URL|riyadhfalcons.example}}",
        },
        lead=("'''Riyadh Falcons Football Club''' is a professional [[association football|football]] club based in "
              "[[Riyadh Gardens]], [[Saudi Arabia]], that competes in the [[Saudi Pro League]]. Founded in 1961, the "
              "club plays its home matches at [[Falcons Park]]."),
        sections=(
            ("History", "The club was founded in 1961 by workers of the Riyadh Gardens waterworks. It won its first "
                        "national title in 1988 and has played in the top division since 2009."),
            ("Stadium", "Falcons Park opened in 1994 and has held 32,000 spectators since its 2019 renovation."),
            ("Current squad", "{{main|List of Riyadh Falcons FC players}}\nAs of July 2026."),
        ),
        categories=("Riyadh Falcons FC", "Football clubs in Saudi Arabia", "Association football clubs established "
                    "in 1961", "1961 establishments in Saudi Arabia"),
        top=("{{Use dmy dates|date=March 2024}}",),
    )
    p = Page("Riyadh Falcons FC", 14520388)
    p.save("2026-02-10T16:41:09Z", "Najd Ultra", "/* History */ copyedit", doc, minor=True)
    doc = doc.add("History", "In July 2026 the club signed [[Mateo Ferreira]] from [[Lunetta Calcio]]."
                  + cite_news("ferreira", "https://www.arabfootballdaily.example/2026/07/02/ferreira-falcons",
                              "Falcons land Ferreira from Lunetta", "Arab Football Daily", "2 July 2026"))
    p.save("2026-07-03T09:15:44Z", "Najd Ultra", "/* History */ Ferreira signing", doc)
    doc = doc.set({"season": "[[2026–27 Saudi Pro League|2026–27]]", "position": "Saudi Pro League, 5th of 18"})
    p.save("2026-08-21T18:02:31Z", "GoalLineEditor", "new season", doc)
    doc = doc.set({"manager": "[[Tomasz Wielki]]"}).add(
        "History", "Haddad was dismissed on 2 October 2026 after five league matches without a win; the Polish coach "
                   "[[Tomasz Wielki]] was appointed the next day.")
    p.save("2026-10-03T16:02:12Z", "Najd Ultra", "Wielki appointed head coach", doc)
    doc = doc.set({"manager": "[[Tomasz Wielki]]" + cite_news(
        "wielki", "https://www.arabfootballdaily.example/2026/10/03/wielki-falcons", "Wielki named Falcons coach",
        "Arab Football Daily", "3 October 2026")})
    p.save("2026-10-03T16:40:57Z", "GoalLineEditor", "ref", doc, minor=True)
    return [p]


def managers_list() -> list[Page]:
    """An article without an infobox, edited in the window: nothing to ask."""
    def table(rows: list[str]) -> str:
        return ("{| class=\"wikitable sortable\"\n! Name !! Nationality !! From !! To\n"
                + "".join(f"|-\n| {r}\n" for r in rows) + "|}")
    rows = ["[[Fahad Al-Harbi]] || Saudi Arabia || 2012 || 2016", "[[Jorge Almada]] || Argentina || 2016 || 2019",
            "[[Omar Qureshi]] || Saudi Arabia || 2019 || 2023", "[[Samir Haddad]] || Tunisia || 2023 || Present"]
    doc = Doc(short="none", infobox=None, box={},
              lead="This is a list of '''managers of [[Riyadh Falcons FC]]''' since the club turned professional in "
                   "2012.",
              sections=(("Managers", table(rows)),),
              categories=("Riyadh Falcons FC managers", "Lists of association football managers by club in Saudi "
                          "Arabia"), top=())
    p = Page("List of Riyadh Falcons FC managers", 63377290)
    p.save("2026-03-30T12:00:41Z", "GoalLineEditor", "update", doc)
    rows[-1] = "[[Samir Haddad]] || Tunisia || 2023 || 2026"
    rows.append("[[Tomasz Wielki]] || Poland || 2026 || Present")
    p.save("2026-10-03T16:11:05Z", "Najd Ultra", "Wielki", replace(doc, sections=(("Managers", table(rows)),)))
    return [p]


def valmora_cf() -> list[Page]:
    """A rumoured manager in July, undone in August (reverted in the window); the renovated stadium's capacity."""
    doc = Doc(
        short="Spanish association football club",
        infobox="Infobox football club",
        box={
            "clubname": "Valmora CF",
            "image": "Valmora CF crest.svg",
            "image_size": "150px",
            "fullname": "Valmora Club de Fútbol, S.A.D.",
            "nickname": "''Los Ribereños''",
            "founded": "{{start date|1921|9|14|df=y}}",
            "ground": "[[Estadio de la Ribera]]",
            "capacity": "48,500",
            "owner": "Grupo Ribera",
            "chairman": "Álvaro Medina",
            "manager": "[[Ines Albarran]]",
            "league": "[[La Liga]]",
            "season": "[[2025–26 La Liga|2025–26]]",
            "position": "La Liga, 9th of 20",
            "website": "{{URL|valmoracf.example}}",
        },
        lead=("'''Valmora Club de Fútbol''' is a Spanish professional football club based in [[Valmora]]. It plays "
              "in [[La Liga]] and holds its home matches at the [[Estadio de la Ribera]]."),
        sections=(
            ("History", "Founded in 1921 by students of the Valmora polytechnic, the club reached the top flight for "
                        "the first time in 1954."),
            ("Stadium", "The Estadio de la Ribera was closed in 2025 for a renovation that added a roof and a third "
                        "tier."),
        ),
        categories=("Valmora CF", "Football clubs in Spain", "Association football clubs established in 1921"),
    )
    p = Page("Valmora CF", 1904712)
    p.save("2026-03-14T10:05:50Z", "Ribereño", "/* Stadium */ renovation", doc)
    rumour = doc.set({"manager": "[[Rui Canedo]]" + cite_news(
        "canedo", "https://www.diariovalmora.example/deportes/2026/07/15/canedo", "Canedo, en la agenda del Valmora",
        "Diario de Valmora", "15 July 2026", "es")})
    p.save("2026-07-15T21:48:03Z", "Futbolero2009", "new manager", rumour)
    doc = doc.set({"season": "[[2026–27 La Liga|2026–27]]"})
    p.save("2026-08-02T08:30:17Z", "Ribereño", "Canedo joined as assistant coach, not manager (see talk); season",
           doc)
    doc = doc.set({"capacity": "51,200" + cite_news(
        "renovation", "https://www.diariovalmora.example/deportes/2026/09/04/estadio-reabre",
        "El Estadio de la Ribera reabre con 51.200 asientos", "Diario de Valmora", "4 September 2026", "es")}).add(
        "Stadium", "It reopened on 4 September 2026 with 51,200 seats.")
    p.save("2026-09-05T07:12:40Z", "Ribereño", "/* Stadium */ reopened", doc)
    return [p]


def valmora_cf_talk() -> list[Page]:
    """A talk page (namespace 1): never read for questions."""
    head = ("{{Talk header}}\n{{WikiProject banner shell|class=B|\n{{WikiProject Football|importance=Mid|Spain=yes}}"
            "\n}}\n")
    p = Page("Talk:Valmora CF", 27715090, ns=1)
    p.save("2026-01-20T19:04:11Z", "Ribereño", "assess", head)
    thread = (head + "\n== Manager ==\nIs [[Rui Canedo]] really the new manager? The source only says that talks "
              "took place. [[User:Ribereño|Ribereño]] ([[User talk:Ribereño|talk]]) 07:58, 16 July 2026 (UTC)")
    p.save("2026-07-16T07:58:22Z", "Ribereño", "/* Manager */ new section", thread)
    thread += ("\n:He was named assistant coach on 1 August; I have put Albarran back. "
               "[[User:Ribereño|Ribereño]] ([[User talk:Ribereño|talk]]) 08:31, 2 August 2026 (UTC)")
    p.save("2026-08-02T08:31:50Z", "Ribereño", "/* Manager */ reply", thread)
    return [p]


def serrano() -> list[Page]:
    """Promotion in June (the league, a question); vandalism of the manager in July, rolled back in minutes."""
    doc = Doc(
        short="Portuguese association football club",
        infobox="Infobox football club",
        box={
            "clubname": "Serrano Atlético",
            "image": "Serrano Atlético.png",
            "fullname": "Serrano Atlético Clube",
            "founded": "{{start date|1932|5|28|df=y}}",
            "ground": "[[Estádio do Monte]]",
            "capacity": "18,200",
            "chairman": "Henrique Matos",
            "manager": "[[Rui Canedo]]",
            "league": "[[Liga Portugal 2]]",
            "position": "[[2025–26 Liga Portugal 2|Liga Portugal 2]], 2nd of 18 (promoted)",
            "website": "{{URL|serranoatletico.example}}",
        },
        lead=("'''Serrano Atlético Clube''' is a Portuguese football club from [[Porto Serrano]]. Founded in 1932, it "
              "plays its home matches at the [[Estádio do Monte]]."),
        sections=(("History", "The club spent most of its history in the second tier, with top-flight spells in the "
                              "1960s and between 2011 and 2019."),),
        categories=("Serrano Atlético", "Football clubs in Portugal", "Association football clubs established in "
                    "1932"),
        top=("{{Use dmy dates|date=May 2026}}",),
    )
    p = Page("Serrano Atlético", 3390211)
    p.save("2026-05-25T22:10:36Z", "Alvalade77", "runners-up", doc)
    doc = doc.set({"league": "[[Primeira Liga]]"}).add(
        "History", "On 7 June 2026 Serrano won the promotion play-off and returned to the [[Primeira Liga]] after "
                   "seven seasons." + cite_news("promo", "https://www.jornaldomonte.example/2026/06/07/serrano-sobe",
                                                "Serrano está de volta à Primeira Liga", "Jornal do Monte",
                                                "7 June 2026", "pt"))
    p.save("2026-06-08T06:55:02Z", "Alvalade77", "promoted to the Primeira Liga", doc)
    p.save("2026-07-11T23:14:09Z", "198.51.100.23", "",
           doc.set({"manager": "Rui Canedo is the worst manager ever LOL"}))
    p.rollback("2026-07-11T23:20:31Z", "SentinelBot", "198.51.100.23", to="Alvalade77")
    doc = doc.add("History", "Before the 2026–27 season the club signed eleven new players.")
    p.save("2026-08-30T13:27:48Z", "Alvalade77", "/* History */ summer signings", doc)
    return [p]


def lunetta_calcio() -> list[Page]:
    """Only the crest and its size change, and some prose: setting keys, no question."""
    doc = Doc(
        short="Italian association football club",
        infobox="Infobox football club",
        box={
            "clubname": "Lunetta Calcio",
            "image": "Lunetta Calcio logo.svg",
            "image_size": "160px",
            "fullname": "Lunetta Calcio S.r.l.",
            "nickname": "''I Lunari''",
            "founded": "{{start date|1909|3|1|df=y}}",
            "ground": "[[Stadio Comunale di Lunetta]]",
            "capacity": "21,000",
            "chairman": "Marco Pellegrini",
            "manager": "[[Paola Ventresca]]",
            "league": "[[Serie B]]",
            "website": "{{URL|lunettacalcio.example}}",
        },
        lead=("'''Lunetta Calcio''' is an Italian football club based in [[Lunetta]], [[Lombardy]]. The club plays in "
              "[[Serie B]]; its women's section, [[Lunetta Calcio Femminile]], plays in [[Serie A (women)|Serie A]]."),
        sections=(("History", "The club was founded in 1909 and first reached [[Serie A]] in 1948."),),
        categories=("Lunetta Calcio", "Football clubs in Italy", "Association football clubs established in 1909"),
    )
    p = Page("Lunetta Calcio", 11402593)
    p.save("2026-04-18T15:33:27Z", "Curva Sud Lunetta", "/* History */", doc)
    doc = doc.set({"image": "Lunetta Calcio logo (2026).svg", "image_size": "180px"})
    p.save("2026-07-30T11:03:52Z", "Curva Sud Lunetta", "new crest from 1 July 2026", doc)
    doc = doc.add("History", "In July 2026 the club unveiled a new crest, a crescent over the town's bridge.")
    p.save("2026-10-10T17:45:06Z", "Curva Sud Lunetta", "/* History */ crest", doc)
    return [p]


def desert_stars() -> list[Page]:
    """The chairman changes, but written with a flag file: a file value, no question."""
    doc = Doc(
        short="Saudi Arabian association football club",
        infobox="Infobox football club",
        box={
            "clubname": "Desert Stars SC",
            "image": "Desert Stars SC logo.png",
            "fullname": "Desert Stars Sports Club",
            "founded": "{{start date|1977}}",
            "ground": "[[Riyadh Gardens Municipal Stadium]]",
            "capacity": "15,000",
            "chairman": "Faisal Al-Otaibi",
            "manager": "[[Omar Qureshi]]",
            "league": "[[Saudi First Division League]]",
        },
        lead=("'''Desert Stars Sports Club''' is a Saudi football club based in [[Riyadh Gardens]]. It plays in the "
              "[[Saudi First Division League]]."),
        sections=(("History", "Desert Stars were founded in 1977 and share the Municipal Stadium with several "
                              "amateur clubs."),),
        categories=("Football clubs in Saudi Arabia", "Association football clubs established in 1977"),
    )
    p = Page("Desert Stars SC", 33650021)
    p.save("2026-02-02T08:19:30Z", "Najd Ultra", "cleanup", doc)
    doc = doc.set({"chairman": "[[File:Flag of Saudi Arabia.svg|20px]] Nasser Al-Harbi"})
    p.save("2026-10-15T20:37:58Z", "StarsFan10", "new chairman", doc)
    doc = doc.add("History", "Nasser Al-Harbi was elected chairman in October 2026.")
    p.save("2026-10-16T06:02:14Z", "StarsFan10", "/* History */", doc)
    return [p]


# --- footballers ------------------------------------------------------------------------------------------

def footballer(name: str, short: str, box: dict[str, str], lead: str, career: str, cats: tuple[str, ...]) -> Doc:
    return Doc(short=short, infobox="Infobox football biography", box={"name": name, **box}, lead=lead,
               sections=(("Club career", career),), categories=cats)


def mateo_ferreira() -> list[Page]:
    """Joins Riyadh Falcons on 2 July; the squad number follows on 20 July (the last change, the question)."""
    doc = footballer(
        "Mateo Ferreira", "Portuguese footballer (born 1990)",
        {"image": "Mateo Ferreira 2024.jpg", "caption": "Ferreira with [[Lunetta Calcio]] in 2024",
         "full_name": "Mateo Ferreira da Silva", "birth_date": "{{birth date and age|1990|2|5|df=y}}",
         "birth_place": "[[Porto Serrano]], Portugal", "height": "{{height|m=1.84}}",
         "position": "[[Forward (association football)#Centre-forward|Centre-forward]]",
         "currentclub": "[[Lunetta Calcio]]", "clubnumber": "9",
         "youthyears1": "2002–2009", "youthclubs1": "[[Serrano Atlético]]",
         "years1": "2009–2015", "clubs1": "[[Serrano Atlético]]", "caps1": "168", "goals1": "61",
         "years2": "2015–2022", "clubs2": "[[Valmora CF]]", "caps2": "214", "goals2": "97",
         "years3": "2022–", "clubs3": "[[Lunetta Calcio]]", "caps3": "121", "goals3": "58",
         "nationalyears1": "2012–2023", "nationalteam1": "[[Portugal national football team|Portugal]]",
         "nationalcaps1": "41", "nationalgoals1": "12"},
        "'''Mateo Ferreira da Silva''' (born 5 February 1990) is a Portuguese professional [[association football|"
        "footballer]] who plays as a [[Forward (association football)|centre-forward]] for [[Lunetta Calcio]].",
        "Ferreira came through the youth system of [[Serrano Atlético]] and moved to [[Valmora CF]] in 2015, "
        "where he scored 97 league goals in seven seasons.",
        ("1990 births", "Living people", "Portuguese footballers", "Association football forwards",
         "Serrano Atlético players", "Valmora CF players", "Lunetta Calcio players"))
    p = Page("Mateo Ferreira", 19877012)
    p.save("2026-01-15T14:28:05Z", "Alvalade77", "stats", doc)
    doc = replace(doc.set({
        "currentclub": "[[Riyadh Falcons FC]]", "clubnumber": None, "years3": "2022–2026",
        "years4": "2026–", "clubs4": "[[Riyadh Falcons FC]]", "caps4": "0", "goals4": "0"}),
        lead=doc.lead.replace("[[Lunetta Calcio]]", "[[Saudi Pro League]] club [[Riyadh Falcons FC]]"))
    # keys added after goals3 land at the end of the box; move the national team back to the end
    doc = replace(doc, box={k: v for k, v in doc.box.items() if not k.startswith("national")}
                  | {k: v for k, v in doc.box.items() if k.startswith("national")})
    doc = doc.add("Club career", "On 2 July 2026 he joined [[Riyadh Falcons FC]] on a two-year contract."
                  + cite_news("falcons", "https://www.arabfootballdaily.example/2026/07/02/ferreira-falcons",
                              "Falcons land Ferreira from Lunetta", "Arab Football Daily", "2 July 2026"))
    p.save("2026-07-02T11:20:00Z", "Najd Ultra", "transfer to Riyadh Falcons", doc)
    doc = doc.set({"clubnumber": "10"})
    p.save("2026-07-20T09:41:37Z", "Najd Ultra", "squad number", doc, minor=True)
    doc = doc.set({"image": "Mateo Ferreira Riyadh Falcons 2026.jpg",
                   "caption": "Ferreira with [[Riyadh Falcons FC]] in 2026"})
    p.save("2026-09-30T19:55:21Z", "Shutterbug Ahmed", "new photo", doc)
    return [p]


def karim_al_sayed() -> list[Page]:
    """The career table first, then the current club with a new portrait (an image, a setting key) on 7 September."""
    doc = footballer(
        "Karim Al-Sayed", "Saudi Arabian footballer (born 1998)",
        {"birth_date": "{{birth date and age|1998|11|30|df=y}}", "birth_place": "[[Riyadh Gardens]], Saudi Arabia",
         "height": "{{height|m=1.79}}", "position": "[[Forward (association football)#Winger|Winger]]",
         "currentclub": "[[Desert Stars SC]]", "clubnumber": "11",
         "youthyears1": "2011–2017", "youthclubs1": "[[Desert Stars SC]]",
         "years1": "2017–", "clubs1": "[[Desert Stars SC]]", "caps1": "184", "goals1": "52",
         "nationalyears1": "2019–", "nationalteam1": "[[Saudi Arabia national football team|Saudi Arabia]]",
         "nationalcaps1": "23", "nationalgoals1": "6"},
        "'''Karim Al-Sayed''' (born 30 November 1998) is a Saudi Arabian professional footballer who plays as a "
        "[[Winger (association football)|winger]] for [[Desert Stars SC]] and the [[Saudi Arabia national football "
        "team|Saudi Arabia national team]].",
        "Al-Sayed joined the Desert Stars academy at twelve and made his senior debut in 2017.",
        ("1998 births", "Living people", "Saudi Arabian footballers", "Association football wingers",
         "Desert Stars SC players"))
    p = Page("Karim Al-Sayed", 52260813)
    p.save("2026-03-02T17:12:44Z", "StarsFan10", "stats", doc)
    doc = doc.set({"years1": "2017–2026", "years2": "2026–", "clubs2": "[[Riyadh Falcons FC]]", "caps2": "0",
                   "goals2": "0"})
    doc = replace(doc, box={k: v for k, v in doc.box.items() if not k.startswith("national")}
                  | {k: v for k, v in doc.box.items() if k.startswith("national")})
    p.save("2026-09-06T22:03:10Z", "StarsFan10", "career table", doc)
    moved = doc.set({"currentclub": "[[Riyadh Falcons FC]]"})
    doc = replace(moved, box={"name": moved.box["name"], "image": "Karim Al-Sayed 2026.jpg",
                              "caption": "Al-Sayed in 2026", **moved.box},
                  lead=doc.lead.replace("[[Desert Stars SC]]", "[[Riyadh Falcons FC]]", 1)).add(
        "Club career", "On 7 September 2026 he moved across the city to [[Riyadh Falcons FC]]."
        + cite_web("https://www.riyadhfalcons.example/news/al-sayed", "Karim Al-Sayed is a Falcon",
                   "Riyadh Falcons FC", "7 September 2026", "7 September 2026"))
    p.save("2026-09-07T08:00:00Z", "Najd Ultra", "joined Riyadh Falcons; photo", doc)
    return [p]


def aline_costa() -> list[Page]:
    """Joins Lunetta on 10 November, her old squad number removed (a value removed); in the week after, a reference
    on the club (no change to a reader) and the new number (another key): the club stays infrequent_update."""
    doc = footballer(
        "Aline Costa", "Brazilian footballer (born 2000)",
        {"image": "Aline Costa 2025.jpg", "birth_date": "{{birth date and age|2000|12|1|df=y}}",
         "birth_place": "[[Campo Alto]], Brazil", "position": "[[Midfielder]]",
         "currentclub": "[[Campo Alto EC (women)|Campo Alto EC]]", "clubnumber": "8",
         "years1": "2018–", "clubs1": "[[Campo Alto EC (women)|Campo Alto EC]]", "caps1": "96", "goals1": "21",
         "nationalyears1": "2021–", "nationalteam1": "[[Brazil women's national football team|Brazil]]",
         "nationalcaps1": "17", "nationalgoals1": "2"},
        "'''Aline Costa''' (born 1 December 2000) is a Brazilian professional footballer who plays as a "
        "[[midfielder]] for [[Campo Alto EC (women)|Campo Alto EC]] and the [[Brazil women's national football "
        "team|Brazil national team]].",
        "Costa has played for Campo Alto since 2018 and won the [[Campeonato Brasileiro de Futebol Feminino Série "
        "A1|Brasileirão Feminino]] with the club in 2024.",
        ("2000 births", "Living people", "Brazilian women's footballers", "Women's association football "
         "midfielders", "Campo Alto EC (women) players"))
    p = Page("Aline Costa", 69012554)
    p.save("2026-02-27T01:13:36Z", "Torcedora", "", doc)
    club = "[[Lunetta Calcio Femminile|Lunetta Calcio]]"
    doc = doc.set({"years1": "2018–2026", "years2": "2026–", "clubs2": club, "caps2": "0", "goals2": "0"})
    doc = replace(doc, box={k: v for k, v in doc.box.items() if not k.startswith("national")}
                  | {k: v for k, v in doc.box.items() if k.startswith("national")})
    p.save("2026-11-09T19:22:35Z", "Torcedora", "career: transfer agreed, official from 10 November", doc)
    # the old squad number goes with the move; the new one is only known in the week after the window
    doc = doc.set({"currentclub": club, "clubnumber": None})
    doc = replace(doc, lead=doc.lead.replace("[[Campo Alto EC (women)|Campo Alto EC]] and", f"{club} and"))
    p.save("2026-11-10T10:00:00Z", "Torcedora", "transfer to Lunetta", doc)
    doc = doc.set({"currentclub": club + cite_web("https://www.lunettacalcio.example/femminile/costa",
                                                  "Benvenuta Aline Costa", "Lunetta Calcio", "10 November 2026",
                                                  "19 November 2026"), "clubnumber": "14"})
    p.save("2026-11-19T12:26:51Z", "Curva Sud Lunetta", "ref; squad number", doc)
    return [p]


def rafael_nunes() -> list[Page]:
    """Prose-only edits in the window: the infobox never changes."""
    doc = footballer(
        "Rafael Nunes", "Portuguese footballer (born 1994)",
        {"birth_date": "{{birth date and age|1994|4|18|df=y}}", "birth_place": "[[Porto Serrano]], Portugal",
         "position": "[[Goalkeeper (association football)|Goalkeeper]]", "currentclub": "[[Serrano Atlético]]",
         "clubnumber": "1", "years1": "2013–", "clubs1": "[[Serrano Atlético]]", "caps1": "301", "goals1": "0"},
        "'''Rafael Nunes''' (born 18 April 1994) is a Portuguese professional footballer who plays as a "
        "[[Goalkeeper (association football)|goalkeeper]] and captains [[Serrano Atlético]].",
        "Nunes has spent his whole career at Serrano.",
        ("1994 births", "Living people", "Portuguese footballers", "Association football goalkeepers",
         "Serrano Atlético players"))
    p = Page("Rafael Nunes", 41907366)
    p.save("2026-01-08T20:51:02Z", "Alvalade77", "", doc)
    doc = doc.add("Club career", "He was named captain in 2021 and kept 19 clean sheets in the 2025–26 "
                                 "[[Liga Portugal 2]] season, helping the club to promotion.")
    p.save("2026-06-10T10:30:19Z", "Alvalade77", "/* Club career */ expand", doc)
    doc = doc.section("Style of play", "A tall goalkeeper, Nunes is known for his distribution and for saving "
                                       "penalties.")
    p.save("2026-09-19T15:16:28Z", "Mariposa88", "style of play", doc)
    return [p]


# --- places -----------------------------------------------------------------------------------------------

def port_alder() -> list[Page]:
    """A census figure in July (superseded), then the new mayor on 14 September (the question)."""
    doc = Doc(
        short="Town in Cumbria, England",
        infobox="Infobox settlement",
        box={
            "name": "Port Alder",
            "settlement_type": "[[Town]]",
            "image_skyline": "Port Alder harbour 2019.jpg",
            "image_caption": "The harbour from Castle Hill",
            "pushpin_map": "United Kingdom",
            "coordinates": "{{coord|54.12|N|3.05|W|display=inline,title}}",
            "subdivision_type": "Country",
            "subdivision_name": "[[England]]",
            "subdivision_type1": "[[Regions of England|Region]]",
            "subdivision_name1": "[[North West England]]",
            "government_type": "[[Unitary authority]]",
            "leader_title": "[[Mayor]]",
            "leader_name": "[[Martin Sowerby]]",
            "area_total_km2": "61.4",
            "population_total": "151,200",
            "population_as_of": "[[2021 United Kingdom census|2021]]",
            "timezone": "[[Greenwich Mean Time|GMT]]",
            "postal_code_type": "[[Postcode]]",
            "postal_code": "PA1–PA9",
            "website": "{{URL|portalder.gov.example}}",
        },
        lead=("'''Port Alder''' is a port town on the coast of [[Cumbria]], England. It covers {{convert|61.4|km2|"
              "sqmi}} and is home to [[Northwind Analytics]] and the [[Alder Bay Ferries]] terminal."),
        sections=(("Governance", "Port Alder has had a directly elected mayor since 2014."),
                  ("Economy", "Fishing and shipbuilding gave way to software and logistics in the 2000s.")),
        categories=("Port Alder", "Towns in Cumbria", "Port cities and towns of the Irish Sea"),
    )
    p = Page("Port Alder", 5128844)
    p.save("2026-02-19T13:37:25Z", "Cumbrian Rambler", "/* Economy */", doc)
    doc = doc.set({"population_total": "163,900" + cite_web(
        "https://www.ons.example/peoplepopulationandcommunity/portalder2025", "Mid-2025 population estimates",
        "Office for National Statistics", "8 July 2026", "9 July 2026"), "population_as_of": "2025"})
    p.save("2026-07-09T08:14:03Z", "Cumbrian Rambler", "ONS mid-2025 estimate", doc)
    doc = doc.set({"leader_name": "[[Daniel Okafor]]"}).add(
        "Governance", "[[Daniel Okafor]] won the mayoral election of 10 September 2026 and took office two days "
                      "later, succeeding [[Martin Sowerby]].")
    p.save("2026-09-14T10:31:00Z", "Cumbrian Rambler", "new mayor", doc)
    return [p]


def campo_alto() -> list[Page]:
    """The yearly IBGE estimate at the end of August."""
    doc = Doc(
        short="Municipality in Brazil",
        infobox="Infobox settlement",
        box={
            "name": "Campo Alto",
            "settlement_type": "[[Municipalities of Brazil|Municipality]]",
            "image_skyline": "Campo Alto skyline.jpg",
            "subdivision_type": "Country",
            "subdivision_name": "{{flag|Brazil}}",
            "subdivision_type1": "[[States of Brazil|State]]",
            "subdivision_name1": "[[Minas Gerais]]",
            "leader_title": "Mayor",
            "leader_name": "Marcia Prado",
            "area_total_km2": "1,842",
            "elevation_m": "912",
            "population_total": "1,204,000",
            "population_as_of": "2025",
            "timezone": "[[Time in Brazil|BRT]]",
        },
        lead=("'''Campo Alto''' is a municipality in the state of [[Minas Gerais]], Brazil. At {{convert|912|m|ft}} "
              "above sea level, it is one of the highest large cities in the country."),
        sections=(("Sport", "The city is home to [[Campo Alto EC]], whose men's and women's teams play at the "
                            "Estádio Serra Alta."),),
        categories=("Municipalities in Minas Gerais", "Campo Alto"),
    )
    p = Page("Campo Alto", 8861077)
    p.save("2026-03-05T23:41:18Z", "Torcedora", "", doc)
    doc = doc.set({"population_total": "1,219,530" + cite_web(
        "https://www.ibge.example/estimativas/2026", "Estimativas da população 2026", "IBGE", "28 August 2026",
        "29 August 2026"), "population_as_of": "2026"})
    p.save("2026-08-29T12:05:44Z", "Torcedora", "IBGE 2026 estimate", doc)
    return [p]


def valmora() -> list[Page]:
    """Harriet Lowe, elected on 14 July (the news demo's story), takes office as mayor on 1 September: the question."""
    doc = Doc(
        short="City in Spain",
        infobox="Infobox settlement",
        box={
            "name": "Valmora",
            "settlement_type": "City",
            "image_skyline": "Valmora desde el río.jpg",
            "subdivision_type": "Country",
            "subdivision_name": "[[Spain]]",
            "leader_title": "[[Mayor]]",
            "leader_name": "Tomas Reyes",
            "population_total": "412,000",
            "population_as_of": "2025",
        },
        lead="'''Valmora''' is a city in eastern [[Spain]], on the river Mora, and the home of [[Valmora CF]].",
        sections=(("History", "Valmora was a Roman river port."),
                  ("Government", "The city is governed by a directly elected mayor and a council of 45 members.")),
        categories=("Municipalities in Spain", "Valmora"),
    )
    p = Page("Valmora", 2217350)
    p.save("2026-04-02T09:09:09Z", "Ribereño", "", doc)
    doc = doc.add("Government", "[[Harriet Lowe]] won the mayoral election of 14 July 2026 with 54 percent of the "
                                "vote, unseating Tomas Reyes.")
    p.save("2026-07-15T08:02:51Z", "Ribereño", "/* Government */ election", doc)
    doc = doc.set({"leader_name": "[[Harriet Lowe]]"})
    p.save("2026-09-01T10:12:40Z", "Ribereño", "Lowe takes office", doc)
    p.save("2026-11-21T18:30:00Z", "Ribereño", "/* History */",
           doc.add("History", "Its medieval bridge still carries traffic."))
    return [p]


def alder_river() -> list[Page]:
    """Not edited in the window at all (edited before it and in the week after it)."""
    doc = Doc(
        short="River in Cumbria, England",
        infobox="Infobox river",
        box={
            "name": "Alder River",
            "image": "Alder River at Mill Ford.jpg",
            "subdivision_type1": "Country",
            "subdivision_name1": "England",
            "source1_location": "Mill Ford Fell",
            "mouth": "[[Port Alder]] harbour",
            "length": "{{convert|38|km|mi}}",
        },
        lead="The '''Alder River''' is a river in [[Cumbria]], England, that reaches the sea at [[Port Alder]].",
        sections=(("Course", "The river rises on Mill Ford Fell and flows west through Mill Ford."),),
        categories=("Rivers of Cumbria",),
    )
    p = Page("Alder River", 4410267)
    p.save("2026-04-11T16:20:05Z", "Cumbrian Rambler", "", doc)
    p.save("2026-11-21T19:02:11Z", "Cumbrian Rambler", "/* Floods */",
           doc.section("Floods", "In November 2026 the river flooded the eastern districts of Port Alder, and 3,400 "
                                 "residents were evacuated."))
    return [p]


# --- people, companies, works -----------------------------------------------------------------------------

def harriet_lowe() -> list[Page]:
    """Elected mayor of Valmora on 14 July, she takes office on 1 September: the office, its start and her
    predecessor arrive in one edit (the news demo tells the election)."""
    doc = Doc(
        short="Engineer and politician (born 1967)",
        infobox="Infobox officeholder",
        box={
            "name": "Harriet Lowe",
            "image": "Harriet Lowe 2023.jpg",
            "caption": "Lowe in 2023",
            "birth_date": "{{birth date and age|1967|2|19|df=y}}",
            "birth_place": "[[Port Alder]], England",
            "alma_mater": "[[University of Manchester]]",
            "occupation": "Harbour engineer",
        },
        lead=("'''Harriet Lowe''' (born 19 February 1967) is a harbour engineer and politician, a candidate for mayor "
              "of [[Valmora]] in 2026."),
        sections=(("Career", "Lowe worked on the harbours of the northern coast for thirty years."),),
        categories=("1967 births", "Living people", "People from Port Alder"),
    )
    p = Page("Harriet Lowe", 30118472)
    p.save("2026-01-27T11:48:15Z", "Cumbrian Rambler", "", doc)
    doc = doc.section("Mayor of Valmora", "She campaigned on a new tram line to the city's eastern districts.")
    p.save("2026-03-16T18:24:41Z", "Cumbrian Rambler", "campaign", doc)
    doc = replace(doc, lead=doc.lead.replace("a candidate for mayor of [[Valmora]] in 2026",
                                             "elected [[Mayor of Valmora]] in 2026")).add(
        "Mayor of Valmora", "She won the election of 14 July 2026 with 54 percent of the vote, unseating Tomas Reyes.")
    p.save("2026-07-15T09:30:12Z", "Cumbrian Rambler", "elected", doc)
    box = {"name": doc.box["name"], "office": "[[Mayor of Valmora]]", "term_start": "{{start date|2026|9|1|df=y}}",
           "predecessor": "Tomas Reyes", **doc.box}
    doc = replace(doc, box=box, lead=doc.lead.replace("elected [[Mayor of Valmora]] in 2026",
                                                      "[[Mayor of Valmora]] since September 2026")).add(
        "Mayor of Valmora", "She took office on 1 September 2026.")
    p.save("2026-09-01T11:05:33Z", "Cumbrian Rambler", "took office", doc)
    return [p]


def northwind() -> list[Page]:
    """A new chief executive on 3 August (the question); the new logo later that month is a setting key."""
    doc = Doc(
        short="British software company",
        infobox="Infobox company",
        box={
            "name": "Northwind Analytics Ltd",
            "logo": "Northwind Analytics logo.svg",
            "type": "[[Private company|Private]]",
            "industry": "[[Information technology]]",
            "founded": "{{start date|2009|3|2|df=y}}",
            "founders": "{{ubl|Elena Varga|Tom Ashworth}}",
            "hq_location_city": "[[Port Alder]]",
            "hq_location_country": "England",
            "area_served": "Worldwide",
            "key_people": "{{ubl|[[Elena Varga]] ([[Chief executive officer|CEO]])|Alan Pryce (chairman)}}",
            "products": "[[Tallyframe]]",
            "revenue": "{{increase}} [[Pound sterling|£]]212.4 million (2025)",
            "num_employees": "1,240 (2025)",
            "website": "{{URL|northwind.example}}",
        },
        lead=("'''Northwind Analytics Ltd''' is a British software company based in [[Port Alder]], England. It makes "
              "[[Tallyframe]], a [[business intelligence]] suite."),
        sections=(("History", "Northwind was founded in 2009 by Elena Varga and Tom Ashworth in a former net loft on "
                              "the Port Alder quay."),),
        categories=("Software companies of the United Kingdom", "Companies based in Cumbria",
                    "Software companies established in 2009"),
    )
    p = Page("Northwind Analytics", 24301655)
    p.save("2026-02-06T15:00:02Z", "Ledgerline", "", doc)
    doc = doc.set({"key_people": "{{ubl|[[Ravi Menon]] ([[Chief executive officer|CEO]])|Alan Pryce (chairman)}}"}
                  ).add("History", "Varga stepped down as chief executive on 3 August 2026 and was succeeded by "
                                   "[[Ravi Menon]], formerly the chief technology officer."
                        + cite_news("menon", "https://www.northernbusiness.example/2026/08/03/northwind-ceo",
                                    "Northwind names Menon chief executive", "Northern Business Post",
                                    "3 August 2026"))
    p.save("2026-08-03T12:00:00Z", "Ledgerline", "new CEO", doc)
    doc = doc.set({"logo": "Northwind Analytics logo 2026.svg"})
    p.save("2026-08-20T09:17:33Z", "Ledgerline", "rebrand: new logo", doc, minor=True)
    redirect = Page("Northwind", 58804127, redirect="Northwind Analytics")
    redirect.save("2026-04-11T07:40:12Z", "Ledgerline", "[[WP:AES|←]]Redirected page to [[Northwind Analytics]]",
                  "#REDIRECT [[Northwind Analytics]]\n\n{{Redirect category shell|\n{{R from short name}}\n}}\n")
    return [p, redirect]


def tallyframe() -> list[Page]:
    """Four releases in the window and one in the week after it: frequent_update."""
    doc = Doc(
        short="Business intelligence software",
        infobox="Infobox software",
        box={
            "name": "Tallyframe",
            "logo": "Tallyframe logo.svg",
            "screenshot": "Tallyframe 4 dashboard.png",
            "caption": "The Tallyframe 4 dashboard",
            "developer": "[[Northwind Analytics]]",
            "released": "{{start date and age|2014|10|6|df=yes}}",
            "latest release version": "4.0.2",
            "latest release date": "{{start date and age|2026|3|24|df=yes}}",
            "programming language": "[[Rust (programming language)|Rust]], [[TypeScript]]",
            "operating system": "{{plainlist|\n* [[Linux]]\n* [[Microsoft Windows|Windows]]\n* [[macOS]]\n}}",
            "genre": "[[Business intelligence]]",
            "license": "[[Proprietary software|Proprietary]]",
            "website": "{{URL|tallyframe.example}}",
        },
        lead=("'''Tallyframe''' is a [[business intelligence]] suite developed by [[Northwind Analytics]]. It was "
              "first released in 2014."),
        sections=(("Releases", "Tallyframe 4.0 added a query engine written in [[Rust (programming language)|"
                               "Rust]]."),),
        categories=("Business intelligence software", "2014 software", "Proprietary software"),
    )
    p = Page("Tallyframe", 38211940)
    p.save("2026-03-25T08:02:51Z", "Ledgerline", "4.0.2", doc)
    changelog = "https://tallyframe.example/changelog"
    for when, version, (y, m, d) in (("2026-06-16T14:22:07Z", "4.1.0", (2026, 6, 16)),
                                     ("2026-08-11T13:05:49Z", "4.2.0", (2026, 8, 11)),
                                     ("2026-10-27T16:48:30Z", "4.3.0", (2026, 10, 27)),
                                     ("2026-11-12T09:30:12Z", "4.3.1", (2026, 11, 12)),
                                     ("2026-11-19T15:12:40Z", "4.4.0", (2026, 11, 19))):
        date = f"{d} {datetime(y, m, d):%B} {y}"
        doc = doc.set({"latest release version": version + cite_web(changelog, "Tallyframe changelog", "Tallyframe",
                                                                     date, date),
                       "latest release date": f"{{{{start date and age|{y}|{m}|{d}|df=yes}}}}"})
        p.save(when, "Ledgerline", f"{version} released", doc)
    return [p]


def lunetta_affair() -> list[Page]:
    """A film in cinemas: its box office gross is updated every week or two, into the week after the window."""
    doc = Doc(
        short="2026 Italian film",
        infobox="Infobox film",
        box={
            "name": "The Lunetta Affair",
            "image": "",
            "caption": "",
            "director": "Chiara Benassi",
            "writer": "{{plainlist|\n* Chiara Benassi\n* Davide Orsi\n}}",
            "starring": "{{plainlist|\n* [[Giorgio Valli]]\n* [[Marta Lenzi]]\n* [[Harriet Cole]]\n}}",
            "music": "Nico Arnaldi",
            "studio": "Ponte Film",
            "distributor": "[[01 Distribution]]",
            "released": "{{film date|2026|10|16|df=y}}",
            "runtime": "118 minutes",
            "country": "Italy",
            "language": "Italian",
            "budget": "€14 million",
        },
        lead=("'''''The Lunetta Affair''''' (Italian: {{lang|it|L'affare Lunetta}}) is a 2026 Italian "
              "[[thriller film]] directed by Chiara Benassi, set during the 1978 flood of [[Lunetta]]."),
        sections=(("Production", "Filming took place in Lunetta and Turin in the spring of 2025."),),
        categories=("2026 films", "2026 thriller films", "Italian thriller films", "Films set in Lombardy"),
    )
    p = Page("The Lunetta Affair", 80113609, older=False)
    p.save("2026-02-14T10:26:33Z", "Cinefilo Lombardo", "Created page", doc)
    doc = doc.set({"image": "The Lunetta Affair poster.jpg", "caption": "Theatrical release poster"})
    p.save("2026-09-22T19:03:18Z", "Cinefilo Lombardo", "poster", doc)
    mojo = "https://www.boxofficemojo.example/title/lunetta-affair/"
    for when, gross, access in (("2026-10-19T21:14:02Z", "$12.6 million", "19 October 2026"),
                                ("2026-11-02T20:40:56Z", "$31.4 million", "2 November 2026"),
                                ("2026-11-13T22:08:11Z", "$38.9 million", "13 November 2026"),
                                ("2026-11-20T21:35:27Z", "$41.2 million", "20 November 2026")):
        doc = doc.set({"gross": gross + cite_web(mojo, "The Lunetta Affair (2026)", "Box Office Mojo", access,
                                                 access)})
        if "Box office" not in dict(doc.sections):
            doc = doc.section("Box office", "The film opened at first place in Italy.")
        p.save(when, "Cinefilo Lombardo", "box office", doc)
    return [p]


def salt_and_signal() -> list[Page]:
    """An album announced in June; in October its release is put back four weeks (the question)."""
    doc = Doc(
        short="2026 studio album by The Alder Tides",
        infobox="Infobox album",
        box={
            "name": "Salt and Signal",
            "type": "studio",
            "artist": "[[The Alder Tides]]",
            "cover": "",
            "released": "{{start date|2026|10|16|df=y}}",
            "recorded": "2025–2026",
            "studio": "Quayside Sound, [[Port Alder]]",
            "genre": "{{hlist|[[Indie rock]]|[[Folk rock]]}}",
            "label": "[[Harbourline Records]]",
            "producer": "Sam Keel",
            "prev_title": "[[Low Water]]",
            "prev_year": "2023",
        },
        lead=("'''''Salt and Signal''''' is the upcoming third studio album by the English band [[The Alder Tides]], "
              "from [[Port Alder]]."),
        sections=(("Background", "The band announced the album on 11 June 2026 with the single \"Harbour "
                                 "Lights\"."),),
        categories=("2026 albums", "The Alder Tides albums", "Harbourline Records albums"),
        top=("{{Use dmy dates|date=June 2026}}", "{{Use British English|date=June 2026}}"),
    )
    p = Page("Salt and Signal", 81240977, older=False)
    p.save("2026-06-12T17:50:29Z", "Tidewatcher", "Created page with the album announcement", doc)
    doc = doc.set({"cover": "Salt and Signal cover.jpg"})
    p.save("2026-07-21T12:12:12Z", "Tidewatcher", "cover art", doc)
    doc = doc.set({"released": "{{start date|2026|11|13|df=y}}" + cite_news(
        "delay", "https://www.quietus-north.example/news/2026/10/14/alder-tides-delay",
        "The Alder Tides push back Salt and Signal", "North Sound", "14 October 2026")}).add(
        "Background", "In October the release was moved from 16 October to 13 November 2026 because of vinyl "
                      "pressing delays.")
    p.save("2026-10-14T08:26:45Z", "Tidewatcher", "release date moved", doc)
    doc = replace(doc, lead=doc.lead.replace("is the upcoming third", "is the third"))
    p.save("2026-11-13T07:01:02Z", "Tidewatcher", "released", doc, minor=True)
    doc = doc.set({"length": "41:27"}).section(
        "Track listing", "{{Track listing\n| title1 = Harbour Lights | length1 = 3:58\n"
                         "| title2 = Salt and Signal | length2 = 5:12\n| total_length = 41:27\n}}")
    p.save("2026-11-17T22:40:06Z", "Tidewatcher", "track listing", doc)
    return [p]


def user_page() -> list[Page]:
    """A user page (namespace 2) with a personal infobox that changes in the window: never read for questions."""
    def text(job: str) -> str:
        return ("{{User page}}\n{{Infobox person\n| name       = Tom\n| occupation = " + job + "\n"
                "| known_for  = Editing football articles\n}}\nHello! I mostly edit articles about football in "
                "[[Port Alder]] and the north-west.\n\n{{Userboxtop}}\n{{User en}}\n{{User WikiProject Football}}\n"
                "{{Userboxbottom}}\n")
    p = Page("User:Touchline Tom", 74480291, ns=2)
    p.save("2026-01-03T21:00:15Z", "Touchline Tom", "", text("Groundskeeper"))
    p.save("2026-08-28T20:13:07Z", "Touchline Tom", "new job", text("Physiotherapist"))
    return [p]


WORLD = (riyadh_falcons, managers_list, valmora_cf, valmora_cf_talk, serrano, lunetta_calcio, desert_stars,
         mateo_ferreira, karim_al_sayed, aline_costa, rafael_nunes, port_alder, campo_alto, valmora, alder_river,
         harriet_lowe, northwind, tallyframe, lunetta_affair, salt_and_signal, user_page)


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


def rev_id(when: datetime, tie: int = 0) -> int:
    return FIRST_REV_ID + int((when - EPOCH).total_seconds() * 1.7) + tie


def export_xml(pages: list[Page]) -> str:
    out = [f'<mediawiki xmlns="{NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           f'xsi:schemaLocation="{NS} http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">\n',
           SITEINFO]
    for page in sorted(pages, key=lambda p: p.id):
        out.append(f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>{page.ns}</ns>\n"
                   f"    <id>{page.id}</id>\n")
        if page.redirect:
            out.append(f"    <redirect title={quoteattr(page.redirect)} />\n")
        revisions = sorted(page.revisions, key=lambda r: r.timestamp)
        ids = [rev_id(r.timestamp, page.id % 97) for r in revisions]
        parent = rev_id(revisions[0].timestamp, 0) - 9_000_000 - page.id % 1_000_000 if page.older else None
        for rev, this in zip(revisions, ids, strict=True):
            out.append(_revision(rev, this, parent))
            parent = this
        out.append("  </page>\n")
    out.append("</mediawiki>\n")
    return "".join(out)


def _revision(rev: Rev, this: int, parent: int | None) -> str:
    sha1 = base36_sha1(rev.text)
    if rev.user[0].isdigit():
        who = f"\n        <ip>{rev.user}</ip>\n      "
    else:
        who = (f"\n        <username>{escape(rev.user)}</username>\n"
               f"        <id>{zlib.crc32(rev.user.encode()) % 40_000_000 + 1_000_000}</id>\n      ")
    return ("    <revision>\n"
            f"      <id>{this}</id>\n"
            + (f"      <parentid>{parent}</parentid>\n" if parent else "")
            + f"      <timestamp>{rev.timestamp:%Y-%m-%dT%H:%M:%SZ}</timestamp>\n"
            f"      <contributor>{who}</contributor>\n"
            + ("      <minor />\n" if rev.minor else "")
            + (f"      <comment>{escape(rev.comment)}</comment>\n" if rev.comment else "")
            + "      <origin>" + str(this) + "</origin>\n"
            "      <model>wikitext</model>\n"
            "      <format>text/x-wiki</format>\n"
            f'      <text bytes="{len(rev.text.encode())}" sha1="{sha1}" xml:space="preserve">'
            f"{escape(rev.text)}</text>\n"
            f"      <sha1>{sha1}</sha1>\n"
            "    </revision>\n")


def main(folder: Path = OUT.parent) -> None:
    out = folder / OUT.name
    pages = [page for build in WORLD for page in build()]
    xml = export_xml(pages).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(bz2.compress(xml, compresslevel=9))
    revisions = sum(len(p.revisions) for p in pages)
    print(f"wrote {out}: {len(pages)} pages, {revisions} revisions, {len(xml):,} bytes of XML, "
          f"{out.stat().st_size:,} compressed")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT.parent)  # another folder, to compare with the committed file
