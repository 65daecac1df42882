"""English phrasing per property: a question asking for the object, and a clause describing a subject.

`{s}` is the subject's label, `{o}` the object's rendering; time objects arrive with their preposition
("on 5 February 1990", "in 1990"). Properties not listed fall back to their English label.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    ask: str
    """A question whose answer is the object: "Who is the head coach of {s}?"."""
    clause: str
    """A predicate about the subject, third person: "has {o} as head coach"."""


TEMPLATES: dict[str, Template] = {
    "P6": Template("Who is the head of government of {s}?", "has {o} as head of government"),
    "P17": Template("In which country is {s}?", "is in {o}"),
    "P19": Template("Where was {s} born?", "was born in {o}"),
    "P20": Template("Where did {s} die?", "died in {o}"),
    "P26": Template("Who is the spouse of {s}?", "is married to {o}"),
    "P27": Template("Of which country is {s} a citizen?", "is a citizen of {o}"),
    "P35": Template("Who is the head of state of {s}?", "has {o} as head of state"),
    "P36": Template("What is the capital of {s}?", "has {o} as its capital"),
    "P39": Template("Which position has {s} held?", "has held the position of {o}"),
    "P50": Template("Who is the author of {s}?", "was written by {o}"),
    "P54": Template("Which sports team has {s} played for?", "has played for {o}"),
    "P57": Template("Who directed {s}?", "was directed by {o}"),
    "P69": Template("Where was {s} educated?", "was educated at {o}"),
    "P106": Template("What is the occupation of {s}?", "works as {o}"),
    "P108": Template("Who is the employer of {s}?", "works for {o}"),
    "P112": Template("Who founded {s}?", "was founded by {o}"),
    "P118": Template("In which league does {s} play?", "plays in {o}"),
    "P127": Template("Who owns {s}?", "is owned by {o}"),
    "P131": Template("In which administrative territorial entity is {s} located?", "is located in {o}"),
    "P159": Template("Where is {s} headquartered?", "is headquartered in {o}"),
    "P166": Template("Which award has {s} received?", "has received {o}"),
    "P169": Template("Who is the chief executive officer of {s}?", "has {o} as chief executive officer"),
    "P170": Template("Who created {s}?", "was created by {o}"),
    "P175": Template("Who performed {s}?", "was performed by {o}"),
    "P276": Template("Where is {s} located?", "is located at {o}"),
    "P286": Template("Who is the head coach of {s}?", "has {o} as head coach"),
    "P361": Template("What is {s} part of?", "is part of {o}"),
    "P413": Template("Which position does {s} play?", "plays as {o}"),
    "P452": Template("In which industry does {s} work?", "works in the industry {o}"),
    "P488": Template("Who is the chairperson of {s}?", "has {o} as chairperson"),
    "P569": Template("When was {s} born?", "was born {o}"),
    "P570": Template("When did {s} die?", "died {o}"),
    "P571": Template("When was {s} founded?", "was founded {o}"),
    "P577": Template("When was {s} published?", "was published {o}"),
    "P585": Template("When did {s} take place?", "took place {o}"),
    "P641": Template("Which sport is {s} associated with?", "is associated with the sport {o}"),
    "P710": Template("Who took part in {s}?", "had {o} as a participant"),
    "P749": Template("What is the parent organization of {s}?", "is a subsidiary of {o}"),
    "P1037": Template("Who is the director or manager of {s}?", "is directed by {o}"),
    "P1082": Template("What is the population of {s}?", "has a population of {o}"),
    "P1308": Template("Who holds the office of {s}?", "is held by {o}"),
    "P1344": Template("Which event did {s} take part in?", "took part in {o}"),
    "P1346": Template("Who won {s}?", "was won by {o}"),
    "P1448": Template("What is the official name of {s}?", "has the official name {o}"),
    "P2048": Template("How tall is {s}?", "is {o} tall"),
}

TIME_CLAUSE = "has {p} {o}"
"""The generic clause for a time value, which arrives with its preposition: "has inception in 1990"."""


def template(prop: str, prop_label: str) -> Template:
    """The property's own template, else one made from its English label."""
    return TEMPLATES.get(prop) or Template(f"What is the {prop_label} of {{s}}?", f"has {prop_label} {{o}}")
