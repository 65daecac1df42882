"""Questions from infobox changes: the template generator (no date in the question) and DailyQA's two checks."""

from __future__ import annotations

import re
from collections.abc import Mapping

from timelyqa.reasons import Reason
from timelyqa.wikipedia.answer import value_in

GENERATOR = "wikipedia_infobox_template_v5"
"""v5: the subject as English names it ('the United Kingdom', from the box's linking_name; 'Alsea', not 'Alsea
(company)', when the box's name says it without the disambiguator) and an office held by several asked 'Who are
the Co-Princes of Andorra?' (v4: 'Who is the Prime Minister of United Kingdom?', 'Who is the Co-Princes of
Andorra?', 'What is the revenue of Alsea (company)?': real infoboxes, tests/fixtures/wikipedia/real_infoboxes.xml);
v4: a numbered key reads with its paired title ('leader_name1' with 'leader_title1' = President: 'Who is the
President of Albania?', no longer 'What is the leader name 1 of Albania?') or its career row ('goals2' with
'clubs2': 'How many goals has X scored for Valmora CF?') and a person-valued key asks "who" ('Who
is the premier of Alberta?'); v3: a question whose answer has a unit or scale says it ('..., in millions of US dollars?'); v2: questions for
the common keys read as English ('Who is the mayor of X?'); v1 asked every key as 'What is the {label} of X?'."""
UNIT_PHRASE = "wikipedia_unit_phrase_v1"
"""The step that adds the unit or scale to a question that does not say it (`say_unit`): part of the LLM writer's
generator name, whose prompt is the paper's."""

# Questions for the keys infoboxes share; {s} is the page's subject. Every other key falls back to its label.
QUESTIONS: dict[str, str] = {
    # sports
    "currentclub": "Which club does {s} play for?", "current_club": "Which club does {s} play for?",
    "clubnumber": "What squad number does {s} wear?", "club_number": "What squad number does {s} wear?",
    "position": "What position does {s} play?", "manager": "Who is the manager of {s}?",
    "head_coach": "Who is the head coach of {s}?", "coach": "Who is the coach of {s}?",
    "chairman": "Who is the chairman of {s}?", "owner": "Who owns {s}?", "league": "Which league does {s} play in?",
    "ground": "What is the home ground of {s}?", "stadium": "What is the home stadium of {s}?",
    "capacity": "What is the capacity of {s}?", "captain": "Who is the captain of {s}?",
    # places
    "leader_name": "Who is the leader of {s}?", "mayor": "Who is the mayor of {s}?",
    "governor": "Who is the governor of {s}?", "population_total": "What is the total population of {s}?",
    "population": "What is the population of {s}?", "population_est": "What is the estimated population of {s}?",
    "population_as_of": "In which year was the population of {s} counted?",
    "area_total_km2": "What is the total area of {s} in square kilometres?",
    # organisations
    "ceo": "Who is the chief executive of {s}?", "key_people": "Who are the key people of {s}?",
    "num_employees": "How many employees does {s} have?", "revenue": "What is the revenue of {s}?",
    "net_income": "What is the net income of {s}?", "parent": "What is the parent company of {s}?",
    "headquarters": "Where is {s} headquartered?", "president": "Who is the president of {s}?",
    # officeholders and people
    "office": "What office does {s} hold?", "party": "Which political party does {s} belong to?",
    "term_start": "When did the current term of {s} begin?", "term_end": "When did the term of {s} end?",
    "predecessor": "Who was the predecessor of {s}?", "successor": "Who succeeded {s}?",
    "spouse": "Who is the spouse of {s}?", "children": "How many children does {s} have?",
    "occupation": "What is the occupation of {s}?", "net_worth": "What is the net worth of {s}?",
    "employer": "Who is the employer of {s}?", "residence": "Where does {s} live?",
    # works and products
    "gross": "What is the box office gross of {s}?", "budget": "What is the budget of {s}?",
    "runtime": "What is the running time of {s}?", "released": "When was {s} released?",
    "release_date": "When was {s} released?", "director": "Who directed {s}?",
    "latest_release_version": "What is the latest release version of {s}?",
    "latest release version": "What is the latest release version of {s}?",
    "latest_release_date": "When was the latest version of {s} released?",
    "operating_system": "Which operating systems does {s} run on?", "developer": "Who develops {s}?",
    "license": "Under which licence is {s} released?", "num_episodes": "How many episodes does {s} have?",
    "num_seasons": "How many seasons does {s} have?",
}

# Keys whose words read badly as a noun phrase; every other key is read by splitting it into words.
LABELS = {
    "pop": "population", "population_total": "total population", "population_est": "estimated population",
    "leader_name": "leader", "leader_title": "leader's title", "birth_date": "date of birth",
    "death_date": "date of death", "birth_place": "place of birth", "death_place": "place of death",
    "currentclub": "current club", "current_club": "current club", "clubnumber": "squad number",
    "club_number": "squad number", "num_employees": "number of employees", "key_people": "key people",
    "latest_release_version": "latest release version", "latest release version": "latest release version",
    "population_as_of": "population census date", "gross": "box office gross", "released": "release date",
    "ceo": "chief executive", "children": "number of children", "area_total_km2": "total area in km²",
}
PERSON_KEYS = frozenset({
    "leader", "mayor", "premier", "governor", "president", "prime minister", "chancellor", "monarch", "viceroy",
    "chairman", "chairwoman", "chairperson", "chair", "manager", "coach", "captain", "ceo", "chief executive",
    "key people", "spouse", "partner", "founder", "founders", "director", "principal", "headteacher", "dean", "rector",
    "provost", "deputy", "speaker", "secretary general", "incumbent", "successor", "predecessor", "owner",
    "archbishop", "bishop", "pope", "people"})
"""Keys whose value is the person who holds the role, by their words (a last word is enough: 'deputy leader')."""
_PLURAL_PEOPLE = frozenset({"key_people", "founders"})
_NAMES = frozenset({"entity", "list", "text"})
_LEADER = re.compile(r"leader_name(?P<n>\d*)")
_TITLED = {"viceroy": "viceroytype"}
_CAREER = re.compile(r"(?P<national>national)?(?P<stat>caps|goals)(?P<n>\d+)")
"""Person keys whose office is named by another key of the box."""
NAME_KEYS = ("name", "official_name", "common_name", "conventional_long_name", "fullname", "full_name",
             "native_name", "birth_name", "clubname", "club_name", "title", "show_name")
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(rf"\b(?:1[0-9]{{3}}|20[0-9]{{2}})\b|\b\d{{1,2}}\s+{_MONTH}\b|\b{_MONTH}\s+\d{{1,2}}\b|"
                   r"\b(?:today|yesterday|tomorrow|as of|this year|last year|this week)\b", re.IGNORECASE)


class Reject(Reason):
    ANSWER_NOT_REDERIVED = "answer_not_rederived", "the changed value is not what the revision's infobox reads"
    SUBJECT_NOT_NAMED = "subject_not_named", "the question does not name the page's subject"
    DATE_IN_QUESTION = "date_in_question", "the question sets a date (the release states `as_of` beside it)"


def label(key: str) -> str:
    """'current_club' -> 'current club', 'clubs1' -> 'clubs 1'."""
    if key.lower() in LABELS:
        return LABELS[key.lower()]
    words = re.sub(r"(?<=[A-Za-z])(?=\d)", " ", key.replace("_", " ").replace("-", " "))
    return re.sub(r"\s+", " ", words).strip().lower()


def template_question(title: str, key: str, infobox: Mapping[str, str] | None = None, answer_type: str = "") -> str:
    """The offline generator: the key's own question, else the title its numbered pair names ('leader_title1' for
    'leader_name1'), else its label, about the page's subject; "who" for a person-valued key; never a date.

    `answer_type` is the typed answer's (timelyqa.answers): a key read as a person asks "who" only when its answer
    is a name (an entity, a list or text), never a number or a date."""
    box = infobox or {}
    if (paired := paired_question(title, key, box, answer_type)) is not None:
        return paired
    title = subject(title, box)
    if (career := career_question(title, key, box)) is not None:
        return career
    pattern = QUESTIONS.get(key.strip().lower())
    if pattern:
        return pattern.format(s=title)
    word = "Who" if person_valued(key) and answer_type in _NAMES else "What"
    return f"{word} {'are' if key.strip().lower() in _PLURAL_PEOPLE else 'is'} the {label(key)} of {title}?"


def paired_question(title: str, key: str, infobox: Mapping[str, str], answer_type: str = "") -> str | None:
    """'leader_name1' asked with 'leader_title1' ("President"): 'Who is the President of Albania?', 'Viceroy' with
    'ViceroyType' ("Lieutenant Governor"); a leader's key without its title in the box is the leader's ('Who is the
    leader of X?'). An office several hold (a list answer, or a plural title: "Co-Princes") is asked 'Who are the
    Co-Princes of Andorra?'. None for other keys."""
    low = key.strip().lower()
    match = _LEADER.fullmatch(low)
    if match is None and low not in _TITLED:
        return None
    pair = f"leader_title{match['n']}" if match else _TITLED[low]
    office = _office(next((v for k, v in infobox.items() if k.strip().lower() == pair), ""))
    named = subject(title, infobox)
    if not office:
        return f"Who is the {'leader' if match else label(key)} of {named}?"
    verb = "are" if answer_type == "list" or _plural_office(office) else "is"
    if any(_norm(name) in _norm(office) for name in subject_names(title, infobox)):
        return f"Who {verb} the {office}?"  # 'Mayor of Valmora' names its place already
    return f"Who {verb} the {office} of {named}?"


def subject(title: str, infobox: Mapping[str, str]) -> str:
    """The page's subject as a question names it: the box's linking_name when it is the title with its article ('the
    United Kingdom': 'of United Kingdom' is no English), the title without a disambiguator that only says what kind
    of thing it is when the box's own name begins with it ('Alsea' for 'Alsea (company)', whose box names 'Alsea,
    S.A.B. de C.V.'), else the title: a disambiguator that is a name ('Athens (Georgia)') tells two subjects apart."""
    match = re.fullmatch(r"(?P<bare>.+?)\s*\((?P<kind>[^)]*)\)\s*", title)
    bare = match["bare"] if match else title
    linking = " ".join(str(infobox.get("linking_name") or "").split())
    if linking.casefold() == f"the {bare}".casefold():
        return linking
    kind_only = match is not None and match["kind"][:1].islower()
    if kind_only and any(str(infobox.get(k) or "").strip().startswith(bare) for k in NAME_KEYS):
        return bare
    return title


def _plural_office(office: str) -> bool:
    """'Co-Princes', 'MPs', 'Representatives': a title several people hold at once; not 'Chief of Ministers'."""
    last = office.split()[-1]
    return len(office.split()) <= 3 and last[:1].isupper() and last.endswith("s") and not last.endswith(("ss", "us"))


def career_question(title: str, key: str, infobox: Mapping[str, str]) -> str | None:
    """A footballer's career row: 'caps2' and 'goals2' read with 'clubs2' ('nationalcaps1' with 'nationalteam1'):
    'How many goals has X scored for Valmora CF?'. None for other keys, or when the row names no club."""
    match = _CAREER.fullmatch(key.strip().lower())
    if match is None:
        return None
    row = f"nationalteam{match['n']}" if match["national"] else f"clubs{match['n']}"
    club = re.sub(r"^[→\s]+|\s*\((?:loan|on loan)\)$", "", next((v for k, v in infobox.items()
                                                              if k.strip().lower() == row), "").strip())
    if not club or len(club.split()) > 8:
        return None
    if match["stat"] == "caps":
        return f"How many appearances has {title} made for {club}?"
    return f"How many goals has {title} scored for {club}?"


def person_valued(key: str) -> bool:
    """The key names a person's role ('manager', 'Premier', 'leader_name2', 'key_people', 'spouse'): its value is
    who holds it. Read from the key's words, numbers and case aside."""
    words = label(re.sub(r"\d+$", "", key.strip())).split()
    return bool(words) and (" ".join(words) in PERSON_KEYS or words[-1] in PERSON_KEYS)


def _office(title: str) -> str:
    """A leader's title as a question says it: one line, no trailing punctuation; nothing when it is no office
    ('' or a sentence)."""
    office = " ".join(title.split()).strip(" .,;:")
    return office if office and len(office.split()) <= 6 and not re.search(r"[?!]", office) else ""


def subject_names(title: str, infobox: Mapping[str, str]) -> list[str]:
    """How a question may name the page's subject: its title, the title without '(disambiguator)', the box's names."""
    names = [title, re.sub(r"\s*\([^)]*\)\s*$", "", title)]
    names += [infobox[k] for k in NAME_KEYS if infobox.get(k)]
    return sorted({n.strip() for n in names if len(n.strip()) >= 2}, key=lambda n: (-len(n), n))


def correct(key: str, answer: str, wikitext: str) -> Reject | None:
    """Correctness: the checker reads the key from the revision's own wikitext and gets the answer back."""
    rederived = value_in(wikitext, key)
    return None if rederived is not None and _norm(rederived) == _norm(answer) else Reject.ANSWER_NOT_REDERIVED


def descriptive(question: str, title: str, infobox: Mapping[str, str]) -> Reject | None:
    """Descriptiveness: the question names the page's subject by its title or an alias, so it stands alone."""
    text = _norm(question)
    return None if any(_norm(n) in text for n in subject_names(title, infobox)) else Reject.SUBJECT_NOT_NAMED


def well_formed(question: str, title: str, infobox: Mapping[str, str]) -> Reject | None:
    """No date: the release sets the date beside the question, as DailyQA's prompt asks. (An answer given away is
    the quality gate's to judge, on the typed answer: timelyqa.quality.answer_in_question.)"""
    rest = question
    for name in subject_names(title, infobox):  # a year in the subject's own name ('2026 FIFA World Cup') is no date
        rest = re.sub(re.escape(name), " ", rest, flags=re.IGNORECASE)
    return Reject.DATE_IN_QUESTION if _DATE.search(rest) else None


def check(question: str, key: str, answer: str, title: str, wikitext: str, infobox: Mapping[str, str]
          ) -> Reject | None:
    """The first failed check, or None: correctness, descriptiveness, then the question's own form."""
    return (correct(key, answer, wikitext) or descriptive(question, title, infobox)
            or well_formed(question, title, infobox))


def say_unit(question: str, phrase: str) -> str:
    """The question with the unit or scale its answer is in ("in millions of US dollars"), unless it says it already
    ("in square kilometres", "what percentage"): then a bare number answers it right."""
    words = phrase.removeprefix("in ").strip()
    if not words or _norm(words) in _norm(question):
        return question
    return f"{question.rstrip().rstrip('?').rstrip()}, {phrase}?"


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())
