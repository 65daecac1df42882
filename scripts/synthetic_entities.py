"""Synthetic Wikidata items by kind (article, human, place...) and their edits between two dumps.

`Maker.entity(i)` is a pure function of (seed, i): the T1 writer rebuilds item i exactly as the T0
writer wrote it, then `Maker.edit` changes it with its own random stream, so the two dumps can be
written by two processes at once and never held in memory.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from synthetic_world import (BASE, FastRandom, COUNTRIES, DESCRIPTIONS, FIXED, KINDS, LANGS, LANGUAGES, NAME_WHAT,
                             OCC_WORDS, OCCUPATIONS, SITES, SYLLABLES, WIKIS, WORDS, Hasher, Json, coordinate, item,
                             mono, pool_ids, quantity, reference, statement, string, term_map, time)

# (property, probability present, least, most values): counts skew low, as on Wikidata.
PROFILES: dict[str, list[tuple[str, float, int, int]]] = {
    "article": [("P31", 1, 1, 1), ("P1476", 1, 1, 1), ("P577", 1, 1, 1), ("P1433", .95, 1, 1), ("P478", .9, 1, 1),
                ("P433", .8, 1, 1), ("P304", .9, 1, 1), ("P356", .95, 1, 1), ("P698", .7, 1, 1), ("P932", .3, 1, 1),
                ("P407", .8, 1, 1), ("P921", .5, 1, 3), ("P50", .6, 1, 8), ("P2093", .7, 1, 12),
                ("P2860", .6, 1, 45)],
    "human": [("P31", 1, 1, 1), ("P21", .97, 1, 1), ("P27", .9, 1, 2), ("P19", .75, 1, 1), ("P20", .35, 1, 1),
              ("P569", .9, 1, 1), ("P570", .35, 1, 1), ("P106", .95, 1, 3), ("P735", .75, 1, 1), ("P734", .55, 1, 1),
              ("P1412", .6, 1, 3), ("P69", .4, 1, 2), ("P108", .35, 1, 3), ("P166", .25, 1, 3), ("P26", .1, 1, 1),
              ("P214", .7, 1, 1), ("P213", .45, 1, 1), ("P227", .45, 1, 1), ("P244", .35, 1, 1), ("P646", .45, 1, 1),
              ("P2671", .25, 1, 1), ("P496", .2, 1, 1), ("P18", .2, 1, 1), ("P373", .1, 1, 1),
              ("P1559", .3, 1, 1), ("P1343", .2, 1, 2), ("P7859", .35, 1, 1), ("P268", .3, 1, 1), ("P269", .25, 1, 1),
              ("P3430", .2, 1, 1)],
    "category": [("P31", 1, 1, 1), ("P301", .6, 1, 1), ("P4224", .3, 1, 1)],
    "place": [("P31", 1, 1, 1), ("P17", .98, 1, 1), ("P131", .9, 1, 1), ("P625", .95, 1, 1), ("P1082", .75, 1, 5),
              ("P571", .35, 1, 1), ("P421", .5, 1, 1), ("P2046", .5, 1, 1), ("P2044", .45, 1, 1), ("P1566", .85, 1, 1),
              ("P402", .3, 1, 1), ("P6", .2, 1, 3), ("P18", .4, 1, 1), ("P373", .35, 1, 1), ("P856", .2, 1, 1),
              ("P1448", .2, 1, 1), ("P646", .4, 1, 1),
              ("P6766", .4, 1, 1), ("P1281", .3, 1, 1), ("P190", .25, 1, 4)],
    "taxon": [("P31", 1, 1, 1), ("P225", 1, 1, 1), ("P105", 1, 1, 1), ("P171", .97, 1, 1), ("P846", .85, 1, 1),
              ("P685", .5, 1, 1), ("P815", .3, 1, 1), ("P1843", .3, 1, 4), ("P18", .25, 1, 1),
              ("P830", .6, 1, 1), ("P3151", .5, 1, 1), ("P10585", .6, 1, 1), ("P1343", .1, 1, 1)],
    "star": [("P31", 1, 1, 1), ("P59", 1, 1, 1), ("P6257", 1, 1, 1), ("P6258", 1, 1, 1), ("P1215", .9, 1, 3),
             ("P528", 1, 1, 5)],
    "org": [("P31", 1, 1, 1), ("P17", .95, 1, 1), ("P159", .7, 1, 1), ("P571", .7, 1, 1), ("P452", .7, 1, 2),
            ("P112", .3, 1, 2), ("P169", .3, 1, 3), ("P856", .75, 1, 1), ("P1128", .4, 1, 4), ("P749", .15, 1, 1),
            ("P646", .4, 1, 1), ("P2671", .3, 1, 1), ("P1448", .3, 1, 1), ("P18", .1, 1, 1)],
    "event": [("P31", 1, 1, 1), ("P585", .9, 1, 1), ("P17", .9, 1, 1), ("P276", .7, 1, 1), ("P1346", .5, 1, 1),
              ("P710", .5, 1, 8), ("P580", .3, 1, 1), ("P582", .3, 1, 1)],
    "name": [("P31", 1, 1, 1), ("P282", .95, 1, 1), ("P1705", .9, 1, 1)],
    "journal": [("P31", 1, 1, 1), ("P1476", 1, 1, 1), ("P236", .9, 1, 2), ("P123", .7, 1, 1), ("P495", .6, 1, 1),
                ("P407", .8, 1, 1), ("P571", .5, 1, 1)],
    "club": [("P31", 1, 1, 1), ("P17", 1, 1, 1), ("P118", .9, 1, 1), ("P286", .7, 1, 3), ("P641", 1, 1, 1),
             ("P571", .8, 1, 1), ("P159", .8, 1, 1), ("P856", .7, 1, 1), ("P1448", .5, 1, 1), ("P373", .4, 1, 1),
             ("P18", .3, 1, 1), ("P646", .5, 1, 1)],
}
CLASSES = {"article": ["Q13442814"], "human": ["Q5"], "category": ["Q4167836"], "place": ["Q515", "Q532", "Q3957"],
           "taxon": ["Q16521"], "star": ["Q523"], "org": ["Q4830453", "Q43229"], "event": ["Q1656682"],
           "name": ["Q202444", "Q101352"], "journal": ["Q5633421"], "club": ["Q476028"]}
HISTORY = frozenset({"P1082", "P1128", "P169", "P6", "P286"})
"""Values that succeed each other: the latest is ranked preferred when there are several, as editors do."""
# (label languages, description languages, sitelinks) drawn per kind: most, and the chance of sitelinks.
TERMS = {"article": (2, 40, .01), "human": (35, 7, .3), "category": (12, 30, .8), "place": (30, 7, .5),
         "taxon": (20, 10, .3), "star": (6, 6, .1), "org": (10, 4, .3), "event": (8, 3, .2), "name": (40, 10, .3),
         "journal": (6, 6, .2), "club": (20, 6, .6)}
NAMED = {"article": ("P1476", lambda label: mono(label, "en")), "journal": ("P1476", lambda label: mono(label, "en")),
         "taxon": ("P225", string)}
EDIT_SHARE = 0.2
"""Items edited between the dumps (one to three edits each): a few % of statements change."""
NEW_SHARE, DELETED_SHARE = 0.015, 0.002


def php_escaped(text: str) -> str:
    """Non-ASCII text as Wikidata's dumps carry it, `\\uXXXX` escapes (PHP's json_encode).

    orjson doubles the backslash; the dump writer undoes exactly that (`\\\\u` -> `\\u`), which is
    safe because no synthetic string holds a backslash of its own.
    """
    return json.dumps(text)[1:-1]


ESCAPED_DESCRIPTIONS = {k: [(lang, php_escaped(t)) for lang, t in v] for k, v in DESCRIPTIONS.items()}
ESCAPED_NAME_WHAT = {k: {f: php_escaped(t) for f, t in v.items()} for k, v in NAME_WHAT.items()}
ESCAPED_OCC_WORDS = {k: tuple(php_escaped(t) for t in v) for k, v in OCC_WORDS.items()}


def _count(r: FastRandom, lo: int, hi: int) -> int:
    return lo + int((hi - lo + 1) * r.random() ** 2)


class Maker:
    """Builds synthetic item i (and its edit) from (seed, i) alone; n is the T0 item count."""

    def __init__(self, seed: int, n: int) -> None:
        self.seed, self.n = seed, n
        self.r = FastRandom(seed)
        self.h = Hasher(self.r)
        slots = [k for k, share in KINDS.items() for _ in range(share)]
        random.Random(seed).shuffle(slots)
        self.slots = slots
        self.positions = {k: [s for s, kind in enumerate(slots) if kind == k] for k in KINDS}
        self.blocks = max(1, n // len(slots))
        names = FastRandom(seed + 1)
        self.given = [self._word(names, 2).capitalize() for _ in range(600)]
        self.family = [self._word(names, names.choice((2, 3))).capitalize() for _ in range(8000)]
        self.pools = {name: pool_ids(name) for name in ("award", "league", "industry", "timezone", "constellation",
                                                         "subject")}
        self._values = self._value_table()

    # --- ids and random picks -----------------------------------------------------------------------
    def kind(self, i: int) -> str:
        return self.slots[i % len(self.slots)]

    def pick(self, kind: str) -> str:
        """A random item of this kind; low ids (older, better known items) are picked more often."""
        block = int(self.blocks * self.r.random() ** 1.5)
        return f"Q{BASE + block * len(self.slots) + self.r.choice(self.positions[kind])}"

    @staticmethod
    def _word(r: FastRandom, syllables: int) -> str:
        return "".join(r.choice(SYLLABLES) for _ in range(syllables))

    def _date(self, lo: int, hi: int) -> Json:
        r = self.r
        precision = 11 if r.random() < 0.7 else (9 if r.random() < 0.7 else 10)
        return time(r.randrange(lo, hi), r.randrange(1, 13), r.randrange(1, 29), precision)

    def _digits(self, n: int) -> str:
        return str(self.r.randrange(10 ** (n - 1), 10**n))

    # --- values per property --------------------------------------------------------------------------
    def value(self, prop: str, kind: str) -> Json:
        if prop == "P31":
            return item(self.r.choice(CLASSES[kind]))
        return self._values[prop]()

    def _value_table(self) -> dict[str, Callable[[], Json]]:
        r, pick = self.r, self.pick
        countries = list(COUNTRIES)
        table: dict[str, Callable[[], Json]] = {}
        for props, make in ((("P27", "P17", "P495"), lambda: item(r.choice(countries))),
                            (("P19", "P20", "P131", "P159", "P276", "P190"), lambda: item(pick("place"))),
                            (("P26", "P50", "P112", "P169", "P286", "P6", "P710", "P1346"), lambda: item(pick("human"))),
                            (("P69", "P108", "P749", "P123"), lambda: item(pick("org")))):
            table |= dict.fromkeys(props, make)
        return table | {"P21": lambda: item(r.choice(("Q6581097", "Q6581072"))), "P106": lambda: item(r.choice(OCCUPATIONS)),
                  "P735": lambda: item(pick("name")), "P734": lambda: item(pick("name")),
                  "P1412": lambda: item(r.choice(LANGUAGES)), "P407": lambda: item(r.choice(LANGUAGES)),
                  "P54": lambda: item(pick("club")), "P166": lambda: item(r.choice(self.pools["award"])),
                  "P1433": lambda: item(pick("journal")), "P2860": lambda: item(pick("article")),
                  "P921": lambda: item(r.choice(self.pools["subject"])), "P105": lambda: item(r.choice(("Q7432", "Q34740"))),
                  "P171": lambda: item(pick("taxon")), "P421": lambda: item(r.choice(self.pools["timezone"])),
                  "P452": lambda: item(r.choice(self.pools["industry"])), "P118": lambda: item(r.choice(self.pools["league"])),
                  "P641": lambda: item("Q2736"), "P301": lambda: item(pick(r.choice(("human", "place", "org", "taxon")))),
                  "P4224": lambda: item("Q5"), "P59": lambda: item(r.choice(self.pools["constellation"])),
                  "P282": lambda: item("Q8229"), "P1082": lambda: quantity(f"+{int(10 ** r.uniform(1.5, 6.5))}"),
                  "P1128": lambda: quantity(f"+{int(10 ** r.uniform(1, 5))}"),
                  "P2046": lambda: quantity(f"+{r.uniform(0.5, 900):.2f}", "Q712226"),
                  "P2044": lambda: quantity(f"+{r.randrange(0, 2500)}", "Q11573", bounds=1.0 if r.random() < .3 else None),
                  "P6257": lambda: quantity(f"+{r.uniform(0, 360):.6f}", "Q28390"),
                  "P6258": lambda: quantity(f"{r.uniform(-90, 90):+.6f}", "Q28390"),
                  "P1215": lambda: quantity(f"+{r.uniform(2, 16):.2f}", bounds=0.01),
                  "P625": lambda: coordinate(round(r.uniform(-60, 70), 6), round(r.uniform(-180, 180), 6)),
                  "P569": lambda: self._date(1800, 2005), "P570": lambda: self._date(1850, 2025),
                  "P571": lambda: self._date(1200, 2024), "P577": lambda: self._date(1950, 2026),
                  "P585": lambda: self._date(1950, 2026), "P580": lambda: self._date(1950, 2020),
                  "P582": lambda: self._date(2000, 2026), "P214": lambda: string(self._digits(9)),
                  "P213": lambda: string(f"0000 000{r.randrange(10)} {self._digits(4)} {self._digits(4)}"),
                  "P227": lambda: string(f"{self._digits(9)}-{r.randrange(10)}"),
                  "P244": lambda: string(f"n{self._digits(10)}"), "P646": lambda: string(f"/m/0{self._word(r, 2)}"),
                  "P2671": lambda: string(f"/g/11{self._word(r, 3)}"),
                  "P496": lambda: string(f"0000-000{r.randrange(2)}-{self._digits(4)}-{self._digits(4)}"),
                  "P18": lambda: string(f"{self._word(r, 3).capitalize()} {r.randrange(1990, 2026)}.jpg"),
                  "P373": lambda: string(self._word(r, 3).capitalize()),
                  "P856": lambda: string(f"https://www.{self._word(r, 3)}.org/"),
                  "P1476": lambda: mono(self._title(), "en"), "P478": lambda: string(str(r.randrange(1, 300))),
                  "P433": lambda: string(str(r.randrange(1, 13))),
                  "P304": lambda: string(f"{(p := r.randrange(1, 3000))}-{p + r.randrange(3, 30)}"),
                  "P356": lambda: string(f"10.{self._digits(4)}/{self._word(r, 2).upper()}.{self._digits(6)}"),
                  "P698": lambda: string(self._digits(8)), "P932": lambda: string(self._digits(7)),
                  "P2093": lambda: string(f"{r.choice(self.given)[0]}. {r.choice(self.family)}"),
                  "P225": lambda: string(self._taxon()), "P1843": lambda: mono(self._word(r, 3), r.choice(LANGS[:8])),
                  "P846": lambda: string(self._digits(7)), "P685": lambda: string(self._digits(6)),
                  "P815": lambda: string(self._digits(6)), "P1566": lambda: string(self._digits(7)),
                  "P402": lambda: string(self._digits(7)), "P528": lambda: string(f"HD {self._digits(6)}"),
                  "P236": lambda: string(f"{self._digits(4)}-{self._digits(4)}"),
                  "P1448": lambda: mono(self._word(r, 3).capitalize(), r.choice(("en", "de", "fr", "es"))),
                  "P1705": lambda: mono(self._word(r, 2).capitalize(), r.choice(("en", "de", "fr", "es"))),
                  "P1813": lambda: mono(self._word(r, 1).upper(), "en"),
                  "P1559": lambda: mono(f"{r.choice(self.given)} {r.choice(self.family)}", r.choice(LANGS[:6])),
                  "P1343": lambda: item(r.choice(self.pools["subject"])), "P7859": lambda: string(f"lccn-n{self._digits(8)}"),
                  "P268": lambda: string(f"1{self._digits(7)}x"), "P269": lambda: string(self._digits(8) + "X"),
                  "P3430": lambda: string(f"w6{self._word(r, 2)}{self._digits(4)}"),
                  "P6766": lambda: string(self._digits(9)), "P1281": lambda: string(self._digits(7)),
                  "P830": lambda: string(self._digits(7)), "P3151": lambda: string(self._digits(6)),
                  "P10585": lambda: string(self._word(r, 2).upper()[:4] + self._digits(2))}

    def _title(self) -> str:
        w = self.r.sample(WORDS, 4)
        return f"{w[0].capitalize()} of {w[1]} {w[2]} in {self._taxon()} {w[3]}"

    def _taxon(self) -> str:
        return f"{self._word(self.r, 3).capitalize()}us {self._word(self.r, 2)}ensis"

    def qualifiers(self, prop: str, ordinal: int) -> list[tuple[str, Json]]:
        r = self.r
        if prop in ("P50", "P2093"):
            out = [("P1545", string(str(ordinal)))]
            return out + [("P1932", string(f"{r.choice(self.given)} {r.choice(self.family)}"))] if prop == "P50" else out
        if prop in ("P108", "P54", "P69") and r.random() < 0.6:
            return [("P580", self._date(1950, 2015)), ("P582", self._date(2000, 2026))]
        if prop in ("P1082", "P1128", "P166"):
            return [("P585", time(1990 + 5 * ordinal + r.randrange(5), precision=9))]
        if prop in HISTORY:
            return [("P580", self._date(1990, 2026))]
        if prop == "P528":
            return [("P972", item(r.choice(self.pools["subject"])))]
        return []

    # --- whole items -------------------------------------------------------------------------------
    def entity(self, i: int, modified: str) -> Json:
        """Item i as a dump writes it, references and qualifiers included."""
        r = self.r
        r.seed((self.seed << 40) | (i << 1))
        self.h.start()
        kind, eid = self.kind(i), f"Q{BASE + i}"
        label = self._label(kind)
        refs = self._references(kind)
        claims: dict[str, list[Json]] = {}
        for prop, chance, lo, hi in PROFILES[kind]:
            if chance < 1 and r.random() >= chance:
                continue
            n = _count(r, lo, hi)
            values = [statement(self.h, eid, prop, self.value(prop, kind) if r.random() > 0.003 else None,
                                qualifiers=self.qualifiers(prop, k + 1),
                                references=[refs[0]] if r.random() < refs[1] else ())
                      for k in range(n)]
            if prop in HISTORY and n > 1:
                values[-1]["rank"] = "preferred"
            elif r.random() < 0.004:
                values[0]["rank"] = "deprecated"
            claims[prop] = values
        named = NAMED.get(kind)
        if named and named[0] in claims:  # the item's own name as a statement says what its label says
            claims[named[0]][0]["mainsnak"]["datavalue"] = named[1](label)
        return self._wrap(eid, kind, label, claims, modified)

    def _label(self, kind: str) -> str:
        r = self.r
        if kind == "human":
            return f"{r.choice(self.given)} {r.choice(self.family)}"
        if kind == "article":
            return self._title()
        if kind == "taxon":
            return self._taxon()
        if kind == "category":
            return f"Category:{self._word(r, 3).capitalize()} {r.choice(WORDS)}"
        if kind == "star":
            return f"HD {self._digits(6)}"
        if kind == "org":
            return f"{r.choice(self.family)} {r.choice(('Group', 'Holding', 'Systems', 'Industries', 'Media'))}"
        if kind == "club":
            return f"FC {self._word(r, 3).capitalize()}"
        if kind == "event":
            return f"{r.randrange(1950, 2026)} {self._word(r, 3).capitalize()} Cup"
        if kind == "journal":
            return f"Journal of {r.choice(WORDS).capitalize()} {r.choice(WORDS).capitalize()}"
        return self._word(r, r.choice((2, 3))).capitalize()

    def _references(self, kind: str) -> tuple[Json, float]:
        """The reference this item's statements share, and the share of statements that carry it."""
        r, h = self.r, self.h
        retrieved = ("P813", time(2018 + r.randrange(8), r.randrange(1, 13), r.randrange(1, 29)))
        if kind == "article":
            doi = f"10.{self._digits(4)}/{self._word(r, 3)}.{self._digits(5)}"
            return reference(h, [("P248", item("Q5188229")), ("P854", string(f"https://api.crossref.org/v1/works/{doi}"))]), .9
        if kind == "human":
            return reference(h, [("P248", item("Q54919")), ("P214", string(self._digits(9))), retrieved]), .55
        if kind == "taxon":
            return reference(h, [("P248", item("Q1264450")), ("P846", string(self._digits(7))), retrieved]), .8
        if kind == "place":
            return reference(h, [("P248", item("Q830106")), ("P1566", string(self._digits(7))), retrieved]), .6
        if kind == "star":
            return reference(h, [("P248", item("Q654724")), retrieved]), .9
        return reference(h, [("P143", item(r.choice(WIKIS)))]), .4

    def _wrap(self, eid: str, kind: str, label: str, claims: dict[str, list[Json]], modified: str) -> Json:
        r = self.r
        most_labels, most_descriptions, with_sitelinks = TERMS[kind]
        n_labels = 1 + int(most_labels * r.random() ** 2)
        labels = [(lang, label) for lang in LANGS[:n_labels]] if r.random() > 0.08 else []
        fill = self._fill(kind, claims)
        texts = ESCAPED_DESCRIPTIONS[kind][: 1 + int(most_descriptions * r.random() ** 0.5)]
        descriptions = [(lang, text.format(**fill) if "{" in text else text) for lang, text in texts]
        aliases: Json = {}
        if kind in ("human", "org", "place", "club") and r.random() < 0.3:
            aliases = {"en": [{"language": "en", "value": f"{label.split()[0][0]}. {label.split()[-1]}"}]}
        sitelinks: Json = {}
        if r.random() < with_sitelinks:
            for site in r.sample(SITES, 1 + int(6 * r.random() ** 2)):
                sitelinks[site] = {"site": site, "title": label, "badges": []}
        return {"type": "item", "id": eid, "labels": term_map(labels), "descriptions": term_map(descriptions),
                "aliases": aliases, "claims": claims, "sitelinks": sitelinks,
                "pageid": 48_000_000 + int(eid[1:]) - BASE, "ns": 0, "title": eid,
                "lastrevid": 2_100_000_000 + self.r.randrange(100_000_000), "modified": modified}

    def _fill(self, kind: str, claims: dict[str, list[Json]]) -> dict[str, str]:
        r = self.r
        occupation = ESCAPED_OCC_WORDS[r.choice(OCCUPATIONS)]
        nationality = COUNTRIES[r.choice(list(COUNTRIES))]
        fill = {"y": str(r.randrange(1950, 2026)), "nat": nationality, "occ": occupation[0], "occ_de": occupation[1],
                "occ_fr": occupation[2], "occ_nl": occupation[3], "occ_es": occupation[4], "g": "Xus", "c": "Lyra"}
        if kind == "name":
            fill |= ESCAPED_NAME_WHAT["given" if r.random() < 0.5 else "family"]
        return fill

    # --- edits between the dumps ----------------------------------------------------------------------
    def edit(self, i: int, entity: Json, modified: str) -> tuple[Json | None, bool]:
        """Item i as T1 has it, and whether it changed: unchanged, edited in place (statements added, removed,
        changed, re-ranked; a label), or None when deleted."""
        r = self.r
        r.seed((self.seed << 40) | (i << 1) | 1)
        if r.random() < DELETED_SHARE:
            return None, True
        if r.random() >= EDIT_SHARE:
            return entity, False
        kind, eid, claims = self.kind(i), entity["id"], entity["claims"]
        for _ in range(1 + (r.random() < 0.4) + (r.random() < 0.15)):
            op = r.random()
            props = [p for p in claims if p != "P31"]
            if op < 0.4 or not props:
                many = [p for p, _, _, most in PROFILES[kind] if most > 1]
                prop = r.choice(many if many and r.random() < 0.7 else [p for p, *_ in PROFILES[kind]])
                values = claims.setdefault(prop, [])
                new = statement(self.h, eid, prop, self.value(prop, kind), qualifiers=self.qualifiers(prop, len(values) + 1))
                if prop in HISTORY and values:
                    for old in values:
                        old["rank"] = "normal"
                    new["rank"] = "preferred"
                values.append(new)
            elif op < 0.55:
                prop = r.choice(props)
                claims[prop].pop(r.randrange(len(claims[prop])))
                if not claims[prop]:
                    del claims[prop]
            elif op < 0.8:
                st = r.choice(claims[r.choice(props)])
                prop = st["mainsnak"]["property"]
                st["mainsnak"] = {**st["mainsnak"], "snaktype": "value", "hash": self.h.hash(),
                                  "datavalue": self.value(prop, kind)}
            elif op < 0.9:
                values = claims[r.choice(props)]
                st = r.choice(values)
                st["rank"] = "deprecated" if len(values) == 1 or r.random() < 0.3 else (
                    "normal" if st["rank"] == "preferred" else "preferred")
            else:
                lang = r.choice(LANGS)
                entity["labels"][lang] = {"language": lang, "value": self._label(kind)}
        entity["modified"] = modified
        entity["lastrevid"] += 1 + r.randrange(5_000_000)
        return entity, True

    def pool_entity(self, qid: str, label: str, cls: str | None) -> Json:
        """A fixed or pooled item (a class, country, award, league...): English label, maybe one class."""
        self.r.seed((self.seed << 40) ^ int(qid[1:]) << 1)
        claims = {"P31": [statement(self.h, qid, "P31", item(cls))]} if cls else {}
        labels = [(lang, label) for lang in LANGS[:12]]
        return {"type": "item", "id": qid, "labels": term_map(labels), "descriptions": {}, "aliases": {},
                "claims": claims, "sitelinks": {"enwiki": {"site": "enwiki", "title": label, "badges": []}},
                "pageid": int(qid[1:]) + 100, "ns": 0, "title": qid, "lastrevid": 2_000_000_000,
                "modified": "2025-01-01T00:00:00Z"}


def fixed_items() -> dict[str, tuple[str, str | None]]:
    """Every non-synthetic item the builders point at: {qid: (English label, class or None)}."""
    out: dict[str, tuple[str, str | None]] = {q: (label, None) for q, label in FIXED.items()}
    out |= {q: (label, "Q6256") for q, label in COUNTRIES.items()}
    out["Q6256"] = ("country", None)
    kinds = {"award": ("award", "Q618779"), "league": ("league", "Q15991290"), "industry": ("industry", "Q268592"),
             "timezone": ("time zone", "Q12143"), "constellation": ("constellation", "Q8928"),
             "subject": ("topic", None)}
    for name, (noun, cls) in kinds.items():
        r = FastRandom(name)
        for qid in pool_ids(name):
            out[qid] = (f"{''.join(r.choice(SYLLABLES) for _ in range(3)).capitalize()} {noun}", cls)
        if cls:
            out[cls] = (noun, None)
    return out


def property_entity(pid: str, datatype: str, label: str) -> dict[str, Any]:
    return {"type": "property", "datatype": datatype, "id": pid,
            "labels": term_map([(lang, label) for lang in ("en", "de", "fr", "es", "it", "nl")]),
            "descriptions": {}, "aliases": {}, "claims": {}, "pageid": 10_000 + int(pid[1:]), "ns": 120,
            "title": f"Property:{pid}", "lastrevid": 2_000_000_000, "modified": "2025-01-01T00:00:00Z"}
