"""Random but plausible Wikidata worlds at T0 and T1, written as real JSON dumps, for the tests only.

A world is countries, regions, cities, football clubs and people (players, politicians, coaches),
described by the properties questions are made of (P27, P54, P17, P131, P569, P1082, P2048, P286,
P6...), beside the ones that must never reach a question (deny-listed P18, P31, P856; the external id
P214; a property without an English label). Some entities lack an English label; ranks are mixed
(historic values normal, the current one preferred, mistakes deprecated); some snaks are somevalue
or novalue. T1 is T0 after transfers, new preferred values, deletions, rank flips, renames and new
entities. Everything is drawn from `random.Random(seed)`: a seed is one world, always the same.
"""

from __future__ import annotations

import bz2
import copy
import gzip
import json
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WD = "http://www.wikidata.org/entity/"
GREGORIAN = WD + "Q1985727"
JULIAN = WD + "Q1985786"

# id -> (datatype, English label or None). P1449 has only a German label.
PROPERTIES: dict[str, tuple[str, str | None]] = {
    "P6": ("wikibase-item", "head of government"),
    "P17": ("wikibase-item", "country"),
    "P18": ("commonsMedia", "image"),
    "P27": ("wikibase-item", "country of citizenship"),
    "P31": ("wikibase-item", "instance of"),
    "P36": ("wikibase-item", "capital"),
    "P54": ("wikibase-item", "member of sports team"),
    "P106": ("wikibase-item", "occupation"),
    "P131": ("wikibase-item", "located in the administrative territorial entity"),
    "P159": ("wikibase-item", "headquarters location"),
    "P214": ("external-id", "VIAF ID"),
    "P286": ("wikibase-item", "head coach"),
    "P395": ("string", "licence plate code"),
    "P413": ("wikibase-item", "position played on team / speciality"),
    "P569": ("time", "date of birth"),
    "P571": ("time", "inception"),
    "P580": ("time", "start time"),
    "P585": ("time", "point in time"),
    "P856": ("url", "official website"),
    "P1082": ("quantity", "population"),
    "P1448": ("monolingualtext", "official name"),
    "P1449": ("monolingualtext", None),
    "P2048": ("quantity", "height"),
}

HUMAN, CITY, COUNTRY, CLUB, REGION = "Q5", "Q515", "Q6256", "Q476028", "Q10864048"
METRE, CENTIMETRE = "Q11573", "Q174728"  # centimetre carries only a German label here
POSITIONS = ("Q201330", "Q336286", "Q193592", "Q280658")
PLAYER, POLITICIAN, MANAGER = "Q937857", "Q82955", "Q628099"
FIXED_ITEMS: dict[str, str | None] = {
    HUMAN: "human", CITY: "city", COUNTRY: "country", CLUB: "association football club",
    REGION: "first-level administrative country subdivision", METRE: "metre", CENTIMETRE: None,
    "Q201330": "goalkeeper", "Q336286": "defender", "Q193592": "midfielder", "Q280658": "forward",
    PLAYER: "association football player", POLITICIAN: "politician", MANAGER: "association football manager",
}

FIRST = ("Lucas", "Mateo", "Aline", "Karim", "Pedro", "Sofia", "Jonas", "Amara", "Ravi", "Elena", "Tomasz", "Yuki",
         "Chidi", "Ingrid", "Omar", "Lea", "Diego", "Hana", "Nils", "Zoë", "Seán", "Marta", "Ibrahim", "Clara")
LAST = ("Andrade", "Ferreira", "Costa", "Al-Sayed", "Salgado", "Okafor", "Menon", "Wielki", "Müller", "O'Neill",
        "Nakamura", "Lindqvist", "Haddad", "Rossi", "Petrov", "Dubois", "Mbeki", "Novak", "Santos", "Keller",
        "Quiroga", "Berg", "Ionescu", "D'Amico")
SYLLABLES = ("al", "ve", "ro", "dan", "mer", "tis", "lo", "ka", "stra", "bel", "nor", "wen", "ta", "ri", "gar",
             "mon", "sel", "ha", "ven", "du")
CITY_FORMS = ("{0}", "Port {0}", "{0} Springs", "San {0}", "{0}burg", "New {0}", "{0} Bay")
CLUB_FORMS = ("{0} FC", "Sporting {0}", "{0} United", "Atlético {0}", 'Club "{0}"', "{0} Rovers")

T0_FROM, T0_TO = datetime(2025, 6, 1, tzinfo=UTC), datetime(2026, 4, 30, tzinfo=UTC)
T1_FROM, T1_TO = datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 10, 31, tzinfo=UTC)


@dataclass
class World:
    """One world at two moments: entity JSON objects exactly as the dump lines carry them."""

    seed: int
    t0: list[dict[str, Any]]
    t1: list[dict[str, Any]]

    def write(self, folder: Path, *, t0_name: str = "t0.json.gz", t1_name: str = "t1.json.bz2",
              t1_bad_lines: Sequence[str] = ()) -> tuple[Path, Path]:
        """Both dumps in `folder`; the suffix picks the compression (.gz, .bz2, anything else plain)."""
        folder.mkdir(parents=True, exist_ok=True)
        return (write_dump(self.t0, folder / t0_name),
                write_dump(self.t1, folder / t1_name, bad_lines=t1_bad_lines))


def write_dump(entities: Iterable[dict[str, Any]], path: Path, *, bad_lines: Sequence[str] = ()) -> Path:
    """Wikidata's JSON dump layout: `[`, one entity per line with a trailing comma (not the last), `]`.

    `bad_lines` are written verbatim (with the trailing comma) after the first third of the entities.
    """
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entities]
    at = len(lines) // 3
    lines[at:at] = list(bad_lines)
    body = ("[\n" + ",\n".join(lines) + "\n]\n").encode()
    if path.name.endswith(".gz"):
        with gzip.GzipFile(path, "wb", mtime=0) as f:
            f.write(body)
    elif path.name.endswith(".bz2"):
        path.write_bytes(bz2.compress(body))
    else:
        path.write_bytes(body)
    return path


# Datavalues and statements in the dump's own JSON --------------------------------------------------

_DATATYPE = {"wikibase-entityid": "wikibase-item", "time": "time", "quantity": "quantity", "string": "string",
             "monolingualtext": "monolingualtext"}

def item_value(q: str) -> dict[str, Any]:
    return {"value": {"entity-type": "item", "numeric-id": int(q[1:]), "id": q}, "type": "wikibase-entityid"}


def time_value(stamp: str, precision: int, *, julian: bool = False) -> dict[str, Any]:
    return {"value": {"time": stamp, "timezone": 0, "before": 0, "after": 0, "precision": precision,
                      "calendarmodel": JULIAN if julian else GREGORIAN}, "type": "time"}


def quantity_value(amount: str, unit: str | None = None) -> dict[str, Any]:
    return {"value": {"amount": amount, "unit": WD + unit if unit else "1"}, "type": "quantity"}


def string_value(text: str) -> dict[str, Any]:
    return {"value": text, "type": "string"}


def text_value(text: str, language: str) -> dict[str, Any]:
    return {"value": {"text": text, "language": language}, "type": "monolingualtext"}


def statement(sid: str, prop: str, datavalue: dict[str, Any] | None, *, rank: str = "normal",
              snaktype: str = "value", qualifiers: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    vtype = (datavalue or {}).get("type", "wikibase-entityid")
    datatype = PROPERTIES[prop][0] if prop in PROPERTIES else _DATATYPE[vtype]
    snak: dict[str, Any] = {"snaktype": snaktype, "property": prop, "datatype": datatype}
    if snaktype == "value":
        snak["datavalue"] = datavalue
    out: dict[str, Any] = {"mainsnak": snak, "type": "statement", "id": sid, "rank": rank}
    if qualifiers:
        out["qualifiers"] = qualifiers
        out["qualifiers-order"] = list(qualifiers)
    return out


def qualifier(prop: str, datavalue: dict[str, Any]) -> dict[str, Any]:
    return {"snaktype": "value", "property": prop, "datavalue": datavalue, "datatype": PROPERTIES[prop][0]}


def entity(eid: str, label: str | None, *, kind: str = "item", other_labels: dict[str, str] | None = None,
           aliases: Sequence[str] = (), modified: datetime, datatype: str | None = None) -> dict[str, Any]:
    labels = {lang: {"language": lang, "value": text} for lang, text in (other_labels or {}).items()}
    if label is not None:
        labels["en"] = {"language": "en", "value": label}
    out: dict[str, Any] = {"type": kind, "id": eid}
    if datatype:
        out["datatype"] = datatype
    out |= {"labels": labels, "descriptions": {},
            "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": {}, "lastrevid": 1, "modified": stamp(modified)}
    if kind == "item":
        out["sitelinks"] = {}
    return out


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# The world itself ------------------------------------------------------------------------------------

class _Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.entities: dict[str, dict[str, Any]] = {}
        self.next_q = 1_000_001 + 10_000 * (seed % 50)
        self.names: set[str] = set()
        self.countries: list[str] = []
        self.regions: dict[str, list[str]] = {}
        self.cities: dict[str, list[str]] = {}
        self.clubs: list[str] = []
        self.players: list[str] = []
        self.politicians: list[str] = []
        self.coaches: list[str] = []

    # identifiers, names, dates
    def qid(self) -> str:
        self.next_q += self.rng.randint(1, 3)
        return f"Q{self.next_q}"

    def sid(self, subject: str) -> str:
        return f"{subject}${str(uuid.UUID(int=self.rng.getrandbits(128))).upper()}"

    def unique(self, make: Any) -> str:
        for _ in range(1000):
            name = make()
            if name not in self.names:
                self.names.add(name)
                return name
        raise RuntimeError("name space exhausted")

    def word(self, parts: int = 2) -> str:
        return "".join(self.rng.choice(SYLLABLES) for _ in range(parts)).capitalize()

    def when(self, start: datetime, end: datetime) -> datetime:
        return start + timedelta(seconds=self.rng.randrange(int((end - start).total_seconds())))

    def new(self, label: str | None, *, labelled: float = 0.94, aliases: Sequence[str] = ()) -> dict[str, Any]:
        """An item that has an English label with probability `labelled`, else a German one or none."""
        eid = self.qid()
        has_en = label is not None and self.rng.random() < labelled
        other = {"de": label} if label is not None and (not has_en or self.rng.random() < 0.3) else {}
        e = entity(eid, label if has_en else None, other_labels=other, aliases=aliases if has_en else (),
                   modified=self.when(T0_FROM, T0_TO))
        self.entities[eid] = e
        return e

    def add(self, e: dict[str, Any], prop: str, datavalue: dict[str, Any] | None, **kw: Any) -> dict[str, Any]:
        st = statement(self.sid(e["id"]), prop, datavalue, **kw)
        e["claims"].setdefault(prop, []).append(st)
        return st

    # T0
    def build(self, *, countries: int, cities_per_country: int, clubs: int, players: int) -> None:
        for pid, (datatype, label) in PROPERTIES.items():
            other = {"de": "Spitzname"} if pid == "P1449" else {}
            self.entities[pid] = entity(pid, label, kind="property", datatype=datatype, other_labels=other,
                                        modified=datetime(2025, 1, 1, tzinfo=UTC))
        for qid, label in FIXED_ITEMS.items():
            other = {"de": "Zentimeter"} if qid == CENTIMETRE else {}
            self.entities[qid] = entity(qid, label, other_labels=other, modified=datetime(2025, 1, 1, tzinfo=UTC))
        for _ in range(countries):
            c = self.new(self.unique(lambda: self.word(3)), labelled=1.0)
            self.add(c, "P31", item_value(COUNTRY))
            self.countries.append(c["id"])
        for c in self.countries:
            self.regions[c] = []
            for _ in range(2):
                r = self.new(self.unique(lambda: f"{self.word(2)} Province"))
                self.add(r, "P31", item_value(REGION))
                self.add(r, "P17", item_value(c))
                self.regions[c].append(r["id"])
            self.cities[c] = [self.city(c) for _ in range(cities_per_country)]
        self.politicians = [self.person(POLITICIAN) for _ in range(5 * countries)]
        self.coaches = [self.person(MANAGER) for _ in range(clubs + 6)]
        for c in self.countries:
            country = self.entities[c]
            self.add(country, "P36", item_value(self.cities[c][0]))
            self.history(country, "P6", [item_value(p) for p in self.rng.sample(self.politicians, 2)])
            self.history(country, "P1082", [quantity_value(f"+{self.rng.randint(10**6, 9 * 10**7)}")
                                            for _ in range(self.rng.randint(1, 3))])
        for c in self.countries:
            for city in self.cities[c]:
                e = self.entities[city]
                if self.rng.random() < 0.6:
                    self.history(e, "P6", [item_value(self.rng.choice(self.politicians))
                                           for _ in range(self.rng.randint(1, 2))])
                elif self.rng.random() < 0.3:
                    self.add(e, "P6", None, snaktype="novalue")
        self.clubs = [self.club() for _ in range(clubs)]
        for club, coach in zip(self.clubs, self.coaches, strict=False):
            self.add(self.entities[club], "P286", item_value(coach))
        self.players = [self.person(PLAYER) for _ in range(players)]

    def city(self, country: str) -> str:
        e = self.new(self.unique(lambda: self.rng.choice(CITY_FORMS).format(self.word(2))))
        self.add(e, "P31", item_value(CITY))
        self.add(e, "P17", item_value(country))
        self.add(e, "P131", item_value(self.rng.choice(self.regions[country])))
        self.history(e, "P1082", [quantity_value(f"+{self.rng.randint(2_000, 900_000)}")
                                  for _ in range(self.rng.randint(1, 3))])
        # Few distinct codes, so that a code alone rarely singles a city out.
        self.add(e, "P395", string_value(self.rng.choice(("AB", "KT", "MR", "ZV", "LO"))))
        return e["id"]

    def club(self) -> str:
        country = self.rng.choice(self.countries)
        city = self.rng.choice(self.cities[country])
        labels = self.entities[city]["labels"]
        base = (labels.get("en") or labels.get("de") or {"value": self.word(2)})["value"]
        label = self.unique(lambda: self.rng.choice(CLUB_FORMS).format(base if self.rng.random() < 0.7
                                                                       else self.word(2)))
        e = self.new(label, aliases=[label.replace('"', "")] if '"' in label else ())
        self.add(e, "P31", item_value(CLUB))
        self.add(e, "P17", item_value(country))
        self.add(e, "P159", item_value(city))
        year = self.rng.randint(1870, 2010)
        if year < 1890 and self.rng.random() < 0.5:
            self.add(e, "P571", time_value(f"+{year}-03-1{self.rng.randint(0, 9)}T00:00:00Z", 11, julian=True))
        else:
            self.add(e, "P571", time_value(f"+{year}-00-00T00:00:00Z", 9))
        host = "".join(ch for ch in label.lower() if ch.isalnum())
        self.add(e, "P856", string_value(f"https://{host}.example"))
        self.add(e, "P1448", text_value(f"{label} Futebol Clube", "pt"))
        if self.rng.random() < 0.3:
            self.add(e, "P1449", text_value(f"Die {self.word(2)}", "de"))
        return e["id"]

    def person(self, occupation: str) -> str:
        name = self.unique(lambda: f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}")
        e = self.new(name, aliases=[name.split()[1]] if self.rng.random() < 0.1 else ())
        self.add(e, "P31", item_value(HUMAN))
        self.add(e, "P106", item_value(occupation))
        roll = self.rng.random()
        citizen = self.rng.choice(self.countries)
        if roll < 0.04:  # an unknown citizenship, preferred: Wikidata's wdt: then holds no value at all
            self.add(e, "P27", None, snaktype="somevalue", rank="preferred")
            self.add(e, "P27", item_value(citizen))
        else:
            self.add(e, "P27", item_value(citizen))
            if roll < 0.15:
                self.add(e, "P27", item_value(self.rng.choice(self.countries)))
        self.birth(e)
        if occupation == PLAYER:
            for club in self.rng.sample(self.clubs, self.rng.choice((1, 1, 2, 2, 3))):
                self.add(e, "P54", item_value(club),
                         qualifiers={"P580": [qualifier("P580", time_value(
                             f"+{self.rng.randint(2005, 2024)}-00-00T00:00:00Z", 9))]})
            if self.rng.random() < 0.05:  # back at a former club: two statements, one value
                first = e["claims"]["P54"][0]["mainsnak"]["datavalue"]
                self.add(e, "P54", copy.deepcopy(first))
            self.add(e, "P413", item_value(self.rng.choice(POSITIONS)))
            self.add(e, "P2048", self.height())
            self.add(e, "P18", string_value(f"{e['id']} portrait.jpg"))
            self.add(e, "P214", string_value(str(self.rng.randint(10**7, 10**9))))
        elif occupation == MANAGER and self.rng.random() < 0.4 and self.clubs:
            self.add(e, "P54", item_value(self.rng.choice(self.clubs)))
        return e["id"]

    def birth(self, e: dict[str, Any]) -> None:
        roll = self.rng.random()
        year = self.rng.randint(1960 if e["claims"]["P106"][0]["mainsnak"]["datavalue"]["value"]["id"] != PLAYER
                                else 1988, 2006)
        if roll < 0.03:
            self.add(e, "P569", None, snaktype="somevalue")
            return
        if roll < 0.10:
            self.add(e, "P569", time_value(f"+{year}-00-00T00:00:00Z", 9))
            return
        month, mday = (1, 1) if roll > 0.97 else (self.rng.randint(1, 12), self.rng.randint(1, 28))
        day = f"+{year}-{month:02d}-{mday:02d}T00:00:00Z"  # 1 January: one RDF term with the year alone
        if roll < 0.14:  # a wrong date kept as deprecated beside the right one
            self.add(e, "P569", time_value(f"+{year + 1}-01-01T00:00:00Z", 11), rank="deprecated")
        self.add(e, "P569", time_value(day, 11))

    def height(self) -> dict[str, Any]:
        cm = self.rng.randint(165, 200)
        if self.rng.random() < 0.05:
            return quantity_value(f"+{cm}", CENTIMETRE)
        amount = f"+{cm // 100}.{cm % 100:02d}"
        # Wikidata keeps amounts as entered: "+1.80" and "+1.8" are both found, and are one xsd:decimal.
        return quantity_value(amount.rstrip("0") if cm % 10 == 0 and self.rng.random() < 0.5 else amount, METRE)

    def history(self, e: dict[str, Any], prop: str, values: list[dict[str, Any]]) -> None:
        """Past values normal, the last one preferred (a single value stays normal), dated by P585."""
        for n, value in enumerate(values):
            last = n == len(values) - 1
            self.add(e, prop, value, rank="preferred" if last and len(values) > 1 else "normal",
                     qualifiers={"P585": [qualifier("P585", time_value(f"+{2015 + 3 * n}-00-00T00:00:00Z", 9))]})

    # T1
    def mutate(self) -> None:
        rng, touched = self.rng, set()

        def touch(e: dict[str, Any]) -> dict[str, Any]:
            touched.add(e["id"])
            return e

        for p in list(self.players):
            e = self.entities[p]
            roll = rng.random()
            if roll < 0.18:  # a transfer; half the time the old club's statement is removed
                current = {self.value_id(st) for st in e["claims"].get("P54", [])}
                club = rng.choice([c for c in self.clubs if c not in current])
                if current and rng.random() < 0.5:
                    e["claims"]["P54"].pop(0)
                self.add(touch(e), "P54", item_value(club))
            elif roll < 0.22:
                self.add(touch(e), "P27", item_value(rng.choice(self.countries)))
            elif roll < 0.26:  # rank flips: one of several values preferred, or a mistake deprecated
                sts = e["claims"].get("P27", [])
                if len(sts) > 1:
                    sts[-1]["rank"] = "preferred"
                else:
                    for st in e["claims"].get("P54", [])[:1]:
                        st["rank"] = "deprecated"
                touch(e)
            elif roll < 0.29:  # a corrected birth date: the old one deprecated
                for st in e["claims"].get("P569", []):
                    st["rank"] = "deprecated"
                self.birth(touch(e))
            elif roll < 0.31:
                e["claims"]["P2048"] = []
                self.add(touch(e), "P2048", self.height())
            elif roll < 0.36:
                e["claims"]["P18"][0]["mainsnak"]["datavalue"] = string_value(f"{p} in 2026.jpg")
                touch(e)
            elif roll < 0.39:
                e["claims"]["P214"][0]["mainsnak"]["datavalue"] = string_value(str(rng.randint(10**7, 10**9)))
                touch(e)
            elif roll < 0.41:
                e["claims"].pop("P413", None)
                touch(e)
            elif roll < 0.43:
                del self.entities[p]
        for club in self.clubs:
            e = self.entities[club]
            roll = rng.random()
            if roll < 0.25:
                self.replace(touch(e), "P286", item_value(rng.choice(self.coaches)))
            elif roll < 0.32:
                e["claims"]["P856"][0]["mainsnak"]["datavalue"] = string_value(f"https://{club.lower()}.example")
                touch(e)
            elif roll < 0.37:
                e["claims"]["P1448"] = []
                self.add(touch(e), "P1448", text_value(f"{self.word(2)} Futebol Clube", "pt"))
            elif roll < 0.42:
                self.add(touch(e), "P1449", text_value(f"Die {self.word(2)}", "de"))
        for c in self.countries:
            if rng.random() < 0.4:
                self.replace(touch(self.entities[c]), "P6", item_value(rng.choice(self.politicians)))
            if rng.random() < 0.5:
                self.replace(touch(self.entities[c]), "P1082",
                             quantity_value(f"+{rng.randint(10**6, 9 * 10**7)}"))
            for city in self.cities[c]:
                e = self.entities[city]
                if rng.random() < 0.3:
                    self.replace(touch(e), "P1082", quantity_value(f"+{rng.randint(2_000, 900_000)}"))
                if rng.random() < 0.12:
                    self.replace(touch(e), "P6", item_value(rng.choice(self.politicians)))
        for eid, e in list(self.entities.items()):
            if eid[0] != "Q" or eid in FIXED_ITEMS:
                continue
            labels = e["labels"]
            if "en" in labels and rng.random() < 0.02:
                del touch(e)["labels"]["en"]
            elif "en" not in labels and "de" in labels and rng.random() < 0.3:
                touch(e)["labels"]["en"] = {"language": "en", "value": labels["de"]["value"]}
        for _ in range(rng.randint(1, 2)):
            club = self.club()
            self.add(self.entities[club], "P286", item_value(rng.choice(self.coaches)))
            touched.add(club)
        for _ in range(rng.randint(6, 10)):
            touched.add(self.person(PLAYER))
        for eid in touched:
            if eid in self.entities:
                e = self.entities[eid]
                e["modified"] = stamp(self.when(T1_FROM, T1_TO))
                e["lastrevid"] += rng.randint(1, 40)

    def replace(self, e: dict[str, Any], prop: str, value: dict[str, Any]) -> None:
        """A new current value: preferred over the old ones (made normal), or the old ones removed."""
        sts = [st for st in e["claims"].get(prop, []) if st["mainsnak"]["snaktype"] == "value"]
        if sts and self.rng.random() < 0.7:
            for st in sts:
                if st["rank"] == "preferred":
                    st["rank"] = "normal"
            self.add(e, prop, value, rank="preferred")
        else:
            e["claims"][prop] = []
            self.add(e, prop, value)

    @staticmethod
    def value_id(st: dict[str, Any]) -> str | None:
        dv = st["mainsnak"].get("datavalue")
        return dv["value"].get("id") if dv else None

    def snapshot(self) -> list[dict[str, Any]]:
        order = sorted(self.entities)
        self.rng.shuffle(order)  # dumps are in no particular order
        return [copy.deepcopy(self.entities[eid]) for eid in order]


def make_world(seed: int, *, countries: int = 6, cities_per_country: int = 5, clubs: int = 20,
               players: int = 130) -> World:
    """A world of about 300 entities at T0 (sizes are parameters) and its T1."""
    b = _Builder(seed)
    b.build(countries=countries, cities_per_country=cities_per_country, clubs=clubs, players=players)
    t0 = b.snapshot()
    b.mutate()
    return World(seed, t0, b.snapshot())
