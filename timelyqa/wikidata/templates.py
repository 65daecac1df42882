"""English phrasing per property: a question asking for the object, and a clause describing a subject.

`{s}` is the subject's label, `{o}` the object's rendering; time objects arrive with their preposition
("on 5 February 1990", "in 1990"). `{wh}` is the question word the answer's class gives (synth.py): "Who" for a
human, "Which association football club" for an item of one class, else "which <noun>" with the property's own
`noun`, else "What"; for a date the word its precision gives ("On what date", "In what year"); inside a sentence it
is written in lower case ("In which country is {s}?").

Properties not listed fall back to their English label, by the value's kind (`template`): a date is asked when its
event was ("On what date was the official opening of X?", "In what year was X discontinued?"), never "What is the
<date property> of X?"; a count, a quantity whose label is a plural noun or says "number of"/"count", "how many"
("How many participants does X have?"); another quantity "What is the <label> of X?" with its unit said after. The
table holds the properties whose fallback reads badly: a count whose label is no plural ("employees" is, but
"floors above ground", "maximum capacity" and "attendance" are not), a date whose event is a verb ("start time" ->
"When did X start?"), a size asked by its adjective ("How long is X?").
"""

from __future__ import annotations

from dataclasses import dataclass

from timelyqa.wikidata.render import article
from timelyqa.wikidata.values import Kind, split_quantity, split_time


@dataclass(frozen=True)
class Template:
    ask: str
    """A question whose answer is the object: "{wh} is the head coach of {s}?"; one without `{wh}` asks the same
    way whatever the answer is ("When was {s} born?", "Where did {s} die?")."""
    clause: str
    """A predicate about the subject, third person: "has {o} as head coach"."""
    noun: str | None = None
    """The class the property's values belong to ("country"), said when the answer's own class is not known."""
    article: bool = False
    """The clause says a value in lower case (a class, a role) with "a" or "an": "works as an association football
    player", not "works as association football player"."""


TEMPLATES: dict[str, Template] = {
    "P6": Template("{wh} is the head of government of {s}?", "has {o} as head of government"),
    "P17": Template("In {wh} is {s}?", "is in {o}", noun="country"),
    "P19": Template("Where was {s} born?", "was born in {o}"),
    "P20": Template("Where did {s} die?", "died in {o}"),
    "P26": Template("{wh} is the spouse of {s}?", "is married to {o}"),
    "P27": Template("Of {wh} is {s} a citizen?", "is a citizen of {o}", noun="country"),
    "P35": Template("{wh} is the head of state of {s}?", "has {o} as head of state"),
    "P36": Template("{wh} is the capital of {s}?", "has {o} as its capital"),
    "P39": Template("{wh} has {s} held?", "has held the position of {o}", noun="position"),
    "P50": Template("{wh} is the author of {s}?", "was written by {o}"),
    "P54": Template("{wh} has {s} played for?", "has played for {o}", noun="sports team"),
    "P57": Template("{wh} directed {s}?", "was directed by {o}"),
    "P69": Template("Where was {s} educated?", "was educated at {o}"),
    "P106": Template("{wh} does {s} have?", "works as {o}", noun="occupation", article=True),
    "P108": Template("{wh} employs {s}?", "works for {o}"),
    "P112": Template("{wh} founded {s}?", "was founded by {o}"),
    "P118": Template("In {wh} does {s} play?", "plays in {o}", noun="league"),
    "P127": Template("{wh} owns {s}?", "is owned by {o}"),
    "P131": Template("In {wh} is {s} located?", "is located in {o}", noun="administrative territorial entity"),
    "P159": Template("Where is {s} headquartered?", "is headquartered in {o}"),
    "P166": Template("{wh} has {s} received?", "has received {o}", noun="award"),
    "P169": Template("{wh} is the chief executive officer of {s}?", "has {o} as chief executive officer"),
    "P170": Template("{wh} created {s}?", "was created by {o}"),
    "P175": Template("{wh} performed {s}?", "was performed by {o}"),
    "P276": Template("Where is {s} located?", "is located at {o}"),
    "P286": Template("{wh} is the head coach of {s}?", "has {o} as head coach"),
    "P361": Template("{wh} is {s} part of?", "is part of {o}"),
    "P413": Template("{wh} does {s} play?", "plays as {o}", noun="position", article=True),
    "P452": Template("In {wh} does {s} work?", "works in the industry {o}", noun="industry"),
    "P488": Template("{wh} is the chairperson of {s}?", "has {o} as chairperson"),
    "P569": Template("When was {s} born?", "was born {o}"),
    "P570": Template("When did {s} die?", "died {o}"),
    "P571": Template("When was {s} founded?", "was founded {o}"),
    "P575": Template("When was {s} discovered or invented?", "was discovered or invented {o}"),
    "P576": Template("When was {s} dissolved, abolished or demolished?", "was dissolved, abolished or demolished {o}"),
    "P577": Template("When was {s} published?", "was published {o}"),
    "P580": Template("When did {s} start?", "started {o}"),
    "P582": Template("When did {s} end?", "ended {o}"),
    "P585": Template("When did {s} take place?", "took place {o}"),
    "P606": Template("When did {s} first fly?", "first flew {o}"),
    "P619": Template("When was {s} launched?", "was launched {o}"),
    "P620": Template("When did {s} land?", "landed {o}"),
    "P641": Template("{wh} is {s} associated with?", "is associated with the sport {o}", noun="sport"),
    "P710": Template("{wh} took part in {s}?", "had {o} as a participant"),
    "P729": Template("When did {s} enter service?", "entered service {o}"),
    "P730": Template("When was {s} retired from service?", "was retired from service {o}"),
    "P746": Template("When did {s} disappear?", "disappeared {o}"),
    "P749": Template("{wh} is the parent organization of {s}?", "is a subsidiary of {o}"),
    "P1037": Template("{wh} is the director or manager of {s}?", "is directed by {o}"),
    "P1082": Template("What is the population of {s}?", "has a population of {o}"),
    "P1083": Template("How many people can {s} hold?", "can hold {o} people"),
    "P1092": Template("How many units of {s} were produced?", "was produced in {o} units"),
    "P1098": Template("How many people speak {s}?", "is spoken by {o} people"),
    "P1101": Template("How many floors above ground does {s} have?", "has {o} floors above ground"),
    "P1110": Template("How many people attended {s}?", "was attended by {o} people"),
    "P1113": Template("How many episodes does {s} have?", "has {o} episodes"),
    "P1120": Template("How many people died in {s}?", "caused {o} deaths"),
    "P1128": Template("How many employees does {s} have?", "has {o} employees"),
    "P1129": Template("How many national team appearances has {s} made?", "has made {o} national team appearances"),
    "P1132": Template("How many participants does {s} have?", "has {o} participants"),
    "P1174": Template("How many visitors does {s} receive per year?", "receives {o} visitors per year"),
    "P1191": Template("When was {s} first performed?", "was first performed {o}"),
    "P1308": Template("{wh} holds the office of {s}?", "is held by {o}"),
    "P1317": Template("When was {s} active?", "was active {o}"),
    "P1339": Template("How many people were injured in {s}?", "left {o} people injured"),
    "P1344": Template("{wh} did {s} take part in?", "took part in {o}", noun="event"),
    "P1346": Template("{wh} won {s}?", "was won by {o}"),
    "P1350": Template("How many matches has {s} played?", "has played {o} matches"),
    "P1351": Template("How many points or goals has {s} scored?", "has scored {o} points or goals"),
    "P1448": Template("What is the official name of {s}?", "has the official name {o}"),
    "P1538": Template("How many households does {s} have?", "has {o} households"),
    "P1619": Template("When was {s} officially opened?", "was officially opened {o}"),
    "P1734": Template("When did {s} take the oath of office?", "took the oath of office {o}"),
    "P1971": Template("How many children does {s} have?", "has {o} children"),
    "P2031": Template("When did {s} start working?", "started working {o}"),
    "P2032": Template("When did {s} stop working?", "stopped working {o}"),
    "P2043": Template("How long is {s}?", "is {o} long"),
    "P2044": Template("How high above sea level is {s}?", "is {o} above sea level"),
    "P2046": Template("What is the area of {s}?", "has an area of {o}"),
    "P2048": Template("How tall is {s}?", "is {o} tall"),
    "P2049": Template("How wide is {s}?", "is {o} wide"),
    "P2067": Template("What is the mass of {s}?", "has a mass of {o}"),
    "P2124": Template("How many members does {s} have?", "has {o} members"),
    "P2196": Template("How many students does {s} have?", "has {o} students"),
    "P2437": Template("How many seasons does {s} have?", "has {o} seasons"),
    "P2669": Template("When was {s} discontinued?", "was discontinued {o}"),
    "P2754": Template("When was {s} produced?", "was produced {o}"),
    "P3999": Template("When was {s} officially closed?", "was officially closed {o}"),
    "P4602": Template("When was {s} buried or cremated?", "was buried or cremated {o}"),
    "P5017": Template("When was {s} last updated?", "was last updated {o}"),
}

_TIME_WORDS = ("date", "time", "day", "year")
_NOT_PLURAL = ("ss", "us", "is", "ics")


def template(prop: str, prop_label: str, kind: Kind | None = None, form: str | None = None) -> Template:
    """The property's own template, else one made from its English label by the value's kind (and its canonical
    form, for a quantity's unit): a date asks when its event was, a count (no unit) how many, another quantity "What
    is the <label> of X?" ("total assets" in dollars is no count); anything else "<wh> is the <label> of X?"."""
    if prop in TEMPLATES:
        return TEMPLATES[prop]
    if kind is Kind.TIME:
        return _date_template(prop_label)
    if kind is Kind.QUANTITY:
        counted = counted_noun(prop_label) if form is None or split_quantity(form)[1] is None else None
        if counted is not None:
            head, _, done = counted.rpartition(" ")
            if head and done.endswith("ed"):  # "number of goals conceded": "How many goals has X conceded?"
                return Template(f"How many {head} has {{s}} {done}?", f"has {done} {{o}} {head}")
            return Template(f"How many {counted} does {{s}} have?", f"has {{o}} {counted}")
        if _plural(prop_label.rpartition(" ")[2]):  # "total assets" in dollars: what are they
            return Template(f"What are the {prop_label} of {{s}}?", f"has {prop_label} of {{o}}")
        return Template(f"What is the {prop_label} of {{s}}?", f"has {article(prop_label)} of {{o}}")
    return Template(f"{{wh}} is the {prop_label} of {{s}}?", f"has {prop_label} {{o}}")


def event_noun(label: str) -> str:
    """What a date property's label dates, without its time word: "start time" -> "start", "date of official
    opening" -> "official opening", "publication date" -> "publication", "first flight" as it is."""
    words = label.split()
    for n, word in enumerate(words[:-1]):
        if word in _TIME_WORDS and words[n + 1] == "of":  # "date of ...", "UTC date of ..."
            return " ".join(words[n + 2:])
    if len(words) > 1 and words[-1] in _TIME_WORDS:
        return " ".join(words[:-1])
    return label


def _date_template(label: str) -> Template:
    """A date property the table lacks: "{wh} was X discontinued?" for a participle, else "{wh} was the <event> of
    X?", `wh` the precision's ("On what date", "In what year"); the clause "was discontinued in 2019", "had its
    official opening on 5 May 1990"."""
    event = event_noun(label)
    if event.endswith("ed"):
        return Template(f"{{wh}} was {{s}} {event}?", f"was {event} {{o}}")
    return Template(f"{{wh}} was the {event} of {{s}}?", f"had its {event} {{o}}")


def counted_noun(label: str) -> str | None:
    """What a quantity property's label counts, if it counts: "number of participants" -> "participants", "member
    count" -> "members", "employees" (a plural noun) -> "employees"; None for "population", "ranking", "area"."""
    words = label.split()
    if len(words) > 2 and words[0] == "number" and words[1] == "of":
        return " ".join(words[2:])
    if len(words) > 1 and words[-1] == "count":
        head = " ".join(words[:-1])
        return head if _plural(words[-2]) else f"{head}s"
    return label if words and _plural(words[-1]) else None


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(_NOT_PLURAL)


def when(form: str) -> str:
    """The question word for a date at its precision: "On what date" (a day or finer), "In what month and year",
    "In what year", "In what decade", else "When"."""
    precision = split_time(form)[3]
    if precision >= 11:
        return "On what date"
    return {10: "In what month and year", 9: "In what year", 8: "In what decade"}.get(precision, "When")


def ask(t: Template, subject: str, wh: str) -> str:
    """The question with its question word: `wh` as a sentence starts ("Who", "Which city", "What"), in lower case
    inside one ("In which country is X?"; a person there is "whom")."""
    if t.ask.startswith("{wh}"):
        return t.ask.format(s=subject, wh=wh)
    inner = "whom" if wh == "Who" else wh[:1].lower() + wh[1:]
    return t.ask.format(s=subject, wh=inner)
