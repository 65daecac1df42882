"""What a name or a number of a summary is asked with when the sentence alone gives no question word: the kind of
thing a name is, as the sentence or the event's articles say it, and the measure a number is of.

A name is asked "which <class>" when its own last word is a class ("the Port Alder Film Festival" -> "which festival"),
a role noun stands before it in the sentence ("sign striker Mateo Ferreira" -> "sign which striker"), or an article
calls it one ("Salt and Signal, the debut film of ..." -> "which film"); who, whom or whose when the articles treat it
as a person's name (the surname alone: "Ruiz shot the film"); "which place" after "near" or "in". Any other name is
not asked about: a cloze is no question, and a guessed class is a wrong one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

PERSON_ROLES = frozenset("""striker forward midfielder defender goalkeeper coach manager incumbent director author
    novelist writer poet singer actor actress artist composer architect player captain candidate leader chief mayor
    minister president senator governor judge founder chairman chairwoman rival challenger""".split())
PLACE_CLASSES = frozenset("town city village port county region province island district capital country".split())
THING_CLASSES = frozenset("""town city village port county region province island district capital country company
    firm film novel book album song play festival prize award probe ship asteroid club team party airline bank
    observatory institute university college school museum river lake bridge airport stadium marathon agency council
    court hospital railway league cup championship mission satellite telescope programme""".split())
CLASS_HEADS = {"Festival": "festival", "Observatory": "observatory", "Institute": "institute", "River": "river",
               "Prize": "prize", "Award": "award", "Marathon": "marathon", "Agency": "agency",
               "University": "university", "College": "college", "Museum": "museum", "Airport": "airport",
               "Bridge": "bridge", "Stadium": "stadium", "Party": "party", "Council": "council", "Port": "port",
               "Cup": "cup", "League": "league", "Bank": "bank", "Hospital": "hospital", "Railway": "railway",
               "Lake": "lake", "Island": "island", "Court": "court", "Championship": "championship"}
"""A name's last word (or its word before "of") that says what it is: "Lakeside Institute of Data Science"."""
_DETERMINERS = frozenset({"the", "a", "an"})
_FUNCTION_WORDS = frozenset("and or as after during which who that is was are were has have".split())
_POSSESSIVES = frozenset({"its", "their", "his", "her", "our"})
_LINKS = frozenset("""by with against to from of for at on in near into over after before sign signs signed names
    appoints appointed beat beats defeat defeats""".split())
"""Words a role noun may follow and still be read as the head of the phrase ("sign striker X", "by director X")."""
_PLACE_PREPOSITIONS = frozenset({"near", "in"})
_SENTENCE_OPENERS = frozenset({"The", "A", "An", "In", "On", "At", "But", "And", "After", "When"})


def _plain(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _class_of_name(name: str) -> str | None:
    words = name.split(" of ")[0].split()
    return CLASS_HEADS.get(words[-1]) if words else None


def _said_class(name: str, texts: Sequence[str]) -> str | None:
    """The class an article gives the name: "Salt and Signal, the debut film", "the town of Port Alder", "the striker
    Mateo Ferreira"."""
    n = re.escape(name)
    classes = "|".join(sorted(PERSON_ROLES | THING_CLASSES))
    places = "|".join(sorted(PLACE_CLASSES))  # "the town of Port Alder"; "the mayor of Valmora" is no mayor
    patterns = (rf"\b{n}, (?:a|an|the) (?:[a-z-]+ ){{0,3}}?(?P<c>{classes})\b",
                rf"\b(?P<c>{places}) of {n}\b", rf"\b(?:the |a |an )?(?P<c>{classes}) {n}\b")
    for text in texts:
        for pattern in patterns:
            if found := re.search(pattern, text):
                return found["c"]
    return None


def is_person(name: str, texts: Sequence[str]) -> bool:
    """A name of two or three capitalised words whose last word an article uses alone ("Lowe took 54 percent"),
    and whose first it never does (a firm is shortened to its first word: "Northwind said")."""
    name, texts = _plain(name), [_plain(t) for t in texts]  # "Milanović" is "Milanovic" in many an article
    words = name.split()
    if not 2 <= len(words) <= 3 or _class_of_name(name) or not all(w[:1].isupper() for w in words):
        return False
    if _said_class(name, texts) in THING_CLASSES:
        return False

    def alone(word: str) -> bool:
        for text in texts:
            tokens = re.findall(r"[\w'’-]+|[^\w\s]", text.replace(name, " , "))
            for i, token in enumerate(tokens):
                if token.removesuffix("'s").removesuffix("’s") != word:
                    continue
                prev = tokens[i - 1] if i else "."
                nxt = tokens[i + 1] if i + 1 < len(tokens) else "."
                if not (prev[:1].isupper() and prev not in _SENTENCE_OPENERS) and not nxt[:1].isupper():
                    return True
        return False

    return alone(words[-1]) and not alone(words[0])


def name_wh(s: str, start: int, end: int, name: str, texts: Sequence[str]) -> tuple[int, int, str] | None:
    """(start, end, wh-phrase) that replaces the name (with the determiner or role noun before it) in `s`, or None
    when the name is not asked about."""
    after = s[end:]
    before = s[:start].split()
    following = re.match(r" ([a-z]+)\b", after)
    if before and before[-1].lower() in _DETERMINERS | _POSSESSIVES and following and \
            following[1] not in _LINKS | _FUNCTION_WORDS and not _class_of_name(name):
        return None  # the name modifies a noun ("the Valmora city council", "its Veyne plant")
    possessive = re.match(r"['’]s\b", after)
    person = is_person(name, texts)
    if person and possessive:
        return start, end + len(possessive.group()), "whose"
    if possessive:
        return None
    if before and before[-1] in PERSON_ROLES | THING_CLASSES:
        role = before[-1]
        ahead = before[-2] if len(before) > 1 else ""
        role_start = start - len(role) - 1
        if ahead in _DETERMINERS:
            return role_start - len(ahead) - 1, end, f"which {role}"
        if ahead in _LINKS or ahead.endswith("ing") or not ahead:
            return role_start, end, f"which {role}"
        return None  # "the Campo Alto logistics software firm X": no "which" fits inside the phrase
    cls = _class_of_name(name) or _said_class(name, texts)
    if person or cls in PERSON_ROLES:
        wh = "who" if not before else "whom"
        return start, end, wh
    head = before[-1] if before else ""
    lead = start - len(head) - 1 if head.lower() in _DETERMINERS else start
    if cls:
        return lead, end, f"which {cls}"
    if head in _PLACE_PREPOSITIONS:
        return start, end, "which place"
    return None


_MAGNITUDE = re.compile(r"(?P<det>\b[Aa]n? )magnitude (?P<num>\d+(?:\.\d+)?) (?P<noun>[a-z]+)")
_SIZE = re.compile(r"(?P<det>\b[Aa]n? )(?P<num>\d+(?:\.\d+)?)-(?P<unit>metre|meter|kilometre|kilometer|mile|foot|"
                   r"inch|centimetre|centimeter) (?P<noun>[a-z]+)(?=[,.;]|$| (?:and|with|for|of|that|which|in|on|at|to|from)\b)")
"""A length as a noun's modifier ("a 2.4-metre mirror"): "what size" fits it; a weight or a count of seats would not,
nor a compound noun ("a 12-kilometre tram line": "a tram of what size line")."""
_VERSION = re.compile(r"(?<![\w-])(?P<name>[A-Z][\w-]*) (?P<num>\d+\.\d+(?:\.\d+)?)(?![\w.])")
_DURATION = re.compile(r"\b(?:in )?(?P<ans>\d+ hours?(?: (?:and )?\d+ minutes?)?|\d+ minutes?(?: \d+ seconds?)?)\b")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def measure_spans(s: str) -> list[tuple[int, int, str, str, str, str]]:
    """(start, end, answer, kind, replacement, unit) of the numbers a measure asks: "a magnitude 5.8 earthquake" ->
    "an earthquake of what magnitude", "a 2.4-metre mirror" -> "a mirror of what size" (with its unit, "metre"),
    "Tallyframe 4.0" -> "which version of Tallyframe", "in 2 hours 21 minutes" -> "in what time". `kind` is
    "number", "quantity", "version" or "duration"."""
    out = []
    for m in _MAGNITUDE.finditer(s):
        det = _article(m["noun"])
        det = det.capitalize() if m["det"][0].isupper() else det
        out.append((m.start("det"), m.end(), m["num"], "number", f"{det} {m['noun']} of what magnitude", ""))
    for m in _SIZE.finditer(s):
        det = _article(m["noun"])
        det = det.capitalize() if m["det"][0].isupper() else det
        out.append((m.start("det"), m.end(), m["num"], "quantity", f"{det} {m['noun']} of what size", m["unit"]))
    for m in _VERSION.finditer(s):
        out.append((m.start(), m.end(), m["num"], "version", f"which version of {m['name']}", ""))
    for m in _DURATION.finditer(s):
        out.append((m.start(), m.end(), m["ans"], "duration", "in what time" if m.group().startswith("in ")
                    else "how long", ""))
    return out
