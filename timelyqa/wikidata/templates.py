"""English phrasing per property: a question asking for the object, and a clause describing a subject.

`{s}` is the subject's label, `{o}` the object's rendering; time objects arrive with their preposition
("on 5 February 1990", "in 1990"). `{wh}` is the question word the answer's class gives (synth.py): "Who" for a
human, "Which association football club" for an item of one class, else "which <noun>" with the property's own
`noun`, else "What"; inside a sentence it is written in lower case ("In which country is {s}?"). Properties not
listed fall back to their English label.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    "P577": Template("When was {s} published?", "was published {o}"),
    "P585": Template("When did {s} take place?", "took place {o}"),
    "P641": Template("{wh} is {s} associated with?", "is associated with the sport {o}", noun="sport"),
    "P710": Template("{wh} took part in {s}?", "had {o} as a participant"),
    "P749": Template("{wh} is the parent organization of {s}?", "is a subsidiary of {o}"),
    "P1037": Template("{wh} is the director or manager of {s}?", "is directed by {o}"),
    "P1082": Template("What is the population of {s}?", "has a population of {o}"),
    "P1308": Template("{wh} holds the office of {s}?", "is held by {o}"),
    "P1344": Template("{wh} did {s} take part in?", "took part in {o}", noun="event"),
    "P1346": Template("{wh} won {s}?", "was won by {o}"),
    "P1448": Template("What is the official name of {s}?", "has the official name {o}"),
    "P2048": Template("How tall is {s}?", "is {o} tall"),
}

TIME_CLAUSE = "has {p} {o}"
"""The generic clause for a time value, which arrives with its preposition: "has inception in 1990"."""


def template(prop: str, prop_label: str) -> Template:
    """The property's own template, else one made from its English label."""
    return TEMPLATES.get(prop) or Template(f"{{wh}} is the {prop_label} of {{s}}?", f"has {prop_label} {{o}}")


def ask(t: Template, subject: str, wh: str) -> str:
    """The question with its question word: `wh` as a sentence starts ("Who", "Which city", "What"), in lower case
    inside one ("In which country is X?"; a person there is "whom")."""
    if t.ask.startswith("{wh}"):
        return t.ask.format(s=subject, wh=wh)
    inner = "whom" if wh == "Who" else wh[:1].lower() + wh[1:]
    return t.ask.format(s=subject, wh=inner)
