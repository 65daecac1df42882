"""Write the demo Wikidata dumps in data/demo/: a small fictional football-and-civic world at T0 and T1.

The people, clubs, cities and companies are invented; countries, classes and properties carry their real
Wikidata ids and labels. Run it again after editing the world: the output is deterministic.
"""

from __future__ import annotations

import bz2
import gzip
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "demo"
T0_MODIFIED = "2026-06-01T08:00:00Z"

PROPERTIES = {  # id: (English label, datatype)
    "P6": ("head of government", "wikibase-item"), "P17": ("country", "wikibase-item"),
    "P18": ("image", "commonsMedia"), "P19": ("place of birth", "wikibase-item"),
    "P27": ("country of citizenship", "wikibase-item"), "P31": ("instance of", "wikibase-item"),
    "P36": ("capital", "wikibase-item"), "P54": ("member of sports team", "wikibase-item"),
    "P106": ("occupation", "wikibase-item"), "P112": ("founded by", "wikibase-item"),
    "P118": ("league", "wikibase-item"), "P131": ("located in the administrative territorial entity", "wikibase-item"),
    "P159": ("headquarters location", "wikibase-item"), "P169": ("chief executive officer", "wikibase-item"),
    "P214": ("VIAF ID", "external-id"), "P276": ("location", "wikibase-item"),
    "P286": ("head coach", "wikibase-item"), "P373": ("Commons category", "string"),
    "P413": ("position played on team / speciality", "wikibase-item"), "P452": ("industry", "wikibase-item"),
    "P569": ("date of birth", "time"), "P571": ("inception", "time"), "P585": ("point in time", "time"),
    "P641": ("sport", "wikibase-item"), "P856": ("official website", "url"), "P1082": ("population", "quantity"),
    "P1346": ("winner", "wikibase-item"), "P2048": ("height", "quantity"),
}

CLASSES = {
    "Q5": "human", "Q6256": "country", "Q476028": "association football club", "Q515": "city",
    "Q4830453": "business", "Q937857": "association football player", "Q2736": "association football",
    "Q193592": "association football midfielder", "Q280658": "forward", "Q201330": "goalkeeper",
    "Q2085381": "publisher", "Q11661": "information technology", "Q11573": "metre",
    "Q1656682": "event", "Q15275719": "recurring event", "Q15991290": "professional sports league",
}
COUNTRIES = {"Q29": "Spain", "Q38": "Italy", "Q45": "Portugal", "Q155": "Brazil", "Q851": "Saudi Arabia",
             "Q142": "France", "Q145": "United Kingdom"}


def item(v: str) -> dict[str, Any]:
    return {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": int(v[1:]), "id": v}}


def day(iso: str, precision: int = 11) -> dict[str, Any]:
    return {"type": "time", "value": {"time": f"+{iso}T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                                      "precision": precision, "calendarmodel": "http://www.wikidata.org/entity/Q1985727"}}


def qty(amount: str, unit: str = "1") -> dict[str, Any]:
    u = unit if unit == "1" else f"http://www.wikidata.org/entity/{unit}"
    return {"type": "quantity", "value": {"amount": amount, "unit": u}}


def text(s: str) -> dict[str, Any]:
    return {"type": "string", "value": s}


def entity(eid: str, labels: dict[str, str], claims: list[tuple], modified: str = T0_MODIFIED,
           aliases: list[str] = (), description: str = "") -> dict[str, Any]:
    """claims: (property, datavalue or None for somevalue, rank) tuples, in order."""
    out: dict[str, list] = {}
    for n, (prop, value, *rest) in enumerate(claims):
        rank = rest[0] if rest else "normal"
        snak: dict[str, Any] = {"snaktype": "value" if value is not None else "somevalue", "property": prop}
        if value is not None:
            snak["datavalue"] = value
            snak["datatype"] = PROPERTIES[prop][1]
        out.setdefault(prop, []).append({"mainsnak": snak, "type": "statement", "rank": rank,
                                         "id": f"{eid}$demo-{prop}-{n:03d}"})
    return {"type": "item", "id": eid, "modified": modified,
            "labels": {lang: {"language": lang, "value": v} for lang, v in labels.items()},
            "descriptions": {"en": {"language": "en", "value": description}} if description else {},
            "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
            "claims": out, "sitelinks": {}}


def prop_entity(pid: str) -> dict[str, Any]:
    label, datatype = PROPERTIES[pid]
    return {"type": "property", "id": pid, "datatype": datatype, "modified": T0_MODIFIED,
            "labels": {"en": {"language": "en", "value": label}}, "descriptions": {}, "aliases": {}, "claims": {}}


def en(label: str) -> dict[str, str]:
    return {"en": label}


def world(t1: bool) -> list[dict[str, Any]]:
    """The whole world at T0 (t1=False) or T1; every difference between the two is spelled out here."""
    ents = [prop_entity(p) for p in PROPERTIES]
    ents += [entity(q, en(label), []) for q, label in CLASSES.items()]
    ents += [entity(q, en(label), [("P31", item("Q6256"))]) for q, label in COUNTRIES.items()]
    city = lambda q, name, country, pop, extra=(), mod=T0_MODIFIED: entity(  # noqa: E731
        q, en(name), [("P31", item("Q515")), ("P17", item(country)), *pop, *extra], mod)
    ents += [
        city("Q9100001", "Valmora", "Q29", [("P1082", qty("+412000"))]),
        city("Q9100002", "Porto Serrano", "Q45", [("P1082", qty("+88500"))]),
        city("Q9100003", "Riyadh Gardens", "Q851", [("P1082", qty("+250300"))]),
        city("Q9100004", "Lunetta", "Q38", [("P1082", qty("+97000"))]),
        # Port Alder: a new census figure becomes preferred at T1; the old one stays, normal rank.
        city("Q9100005", "Port Alder", "Q145",
             [("P1082", qty("+151200"), "preferred" if not t1 else "normal")]
             + ([("P1082", qty("+163900"), "preferred")] if t1 else []),
             [("P6", item("Q9400001" if not t1 else "Q9400002"))],
             "2026-09-14T10:31:00Z" if t1 else T0_MODIFIED),
        city("Q9100006", "Campo Alto", "Q155", [("P1082", qty("+1204000"))],
             [("P6", item("Q9400003"))]),
    ]
    club = lambda q, name, country, coach, city_q, extra=(), mod=T0_MODIFIED, labels=None, aliases=(): entity(  # noqa
        q, labels or en(name), [("P31", item("Q476028")), ("P17", item(country)), ("P159", item(city_q)),
                                ("P641", item("Q2736")), ("P286", item(coach)), *extra], mod, list(aliases))
    ents += [
        club("Q9200001", "Valmora CF", "Q29", "Q9400010", "Q9100001"),
        club("Q9200002", "Serrano Atlético", "Q45", "Q9400011", "Q9100002"),
        # Riyadh Falcons change head coach at T1. English aliases, as Wikidata has them: accepted answers too.
        club("Q9200003", "Riyadh Falcons FC", "Q851", "Q9400012" if not t1 else "Q9400013", "Q9100003",
             mod="2026-10-03T16:02:00Z" if t1 else T0_MODIFIED, aliases=["Riyadh Falcons", "Falcons FC"]),
        club("Q9200004", "Desert Stars SC", "Q851", "Q9400014", "Q9100003"),
        club("Q9200005", "Lunetta Calcio", "Q38", "Q9400015", "Q9100004"),
        club("Q9200006", "Campo Alto EC", "Q155", "Q9400016", "Q9100006"),
    ]
    if t1:  # a club that exists only in Portuguese: no English label, so nothing may ask about it
        ents.append(club("Q9200007", "", "Q155", "Q9400016", "Q9100006", labels={"pt": "Clube Aurora"},
                         mod="2026-10-20T09:00:00Z"))
    person = lambda q, name, claims, mod=T0_MODIFIED, aliases=(): entity(  # noqa: E731
        q, en(name), [("P31", item("Q5")), *claims], mod, list(aliases))
    coaches = {"Q9400010": "Ines Albarran", "Q9400011": "Rui Canedo", "Q9400012": "Samir Haddad",
               "Q9400013": "Tomasz Wielki", "Q9400014": "Omar Qureshi", "Q9400015": "Paola Ventresca",
               "Q9400016": "Beatriz Lobo"}
    coach_aliases = {"Q9400013": ["Tomek Wielki"]}
    ents += [person(q, name, [("P106", item("Q937857"))], aliases=coach_aliases.get(q, ()))
             for q, name in coaches.items()]
    # Port Alder's mayor until 12 September 2026 (Harriet Lowe, of the news and Wikipedia demos, is Valmora's).
    ents += [person("Q9400001", "Martin Sowerby", []), person("Q9400002", "Daniel Okafor", []),
             person("Q9400003", "Marcia Prado", [])]
    fw, mf, gk = item("Q280658"), item("Q193592"), item("Q201330")
    players = [  # id, name, citizenship, birth, position, clubs at T0, clubs added at T1, T1 modified
        ("Q9300001", "Mateo Ferreira", "Q45", "1990-02-05", fw, ["Q9200002", "Q9200001", "Q9200005"], ["Q9200003"],
         "2026-07-02T11:20:00Z"),
        ("Q9300002", "Lucas Andrade", "Q155", "1995-06-11", mf, ["Q9200006", "Q9200001"], ["Q9200003"],
         "2026-08-19T13:45:00Z"),
        ("Q9300003", "Karim Al-Sayed", "Q851", "1998-11-30", fw, ["Q9200004"], ["Q9200003"],
         "2026-09-07T08:00:00Z"),
        ("Q9300004", "Giulia Marchetti", "Q38", "1997-03-22", mf, ["Q9200005"], [], None),
        ("Q9300005", "Pedro Salgado", "Q45", "1993-09-09", gk, ["Q9200002", "Q9200004"], ["Q9200006"],
         "2026-10-28T19:10:00Z"),
        ("Q9300006", "Yusuf Demir", "Q142", "1996-01-15", fw, ["Q9200001", "Q9200004"], [], None),
        ("Q9300007", "Aline Costa", "Q155", "2000-12-01", mf, ["Q9200006"], ["Q9200005"], "2026-11-10T10:00:00Z"),
        ("Q9300008", "Rafael Nunes", "Q45", "1994-04-18", gk, ["Q9200002"], [], None),
    ]
    for q, name, country, born, pos, clubs0, clubs1, mod in players:
        clubs = clubs0 + (clubs1 if t1 else [])
        claims = [("P27", item(country)), ("P106", item("Q937857")), ("P569", day(born)), ("P413", pos)]
        claims += [("P54", item(c)) for c in clubs]
        if t1 and q == "Q9300001":  # a wrong citizenship recorded at T1 and deprecated at once
            claims.append(("P27", item("Q29"), "deprecated"))
        if t1 and q == "Q9300002":  # a birthplace known to exist but not which: somevalue
            claims.append(("P19", None))
        if t1 and q == "Q9300003":  # new portrait and VIAF id: deny-listed and external-id changes
            claims += [("P18", text("Karim Al-Sayed 2026.jpg")), ("P214", text("9153300003"))]
        ents.append(person(q, name, claims, mod if (t1 and mod) else T0_MODIFIED))
    ents += [
        entity("Q9500001", en("Northwind Analytics"),
               [("P31", item("Q4830453")), ("P452", item("Q11661")), ("P159", item("Q9100005")),
                ("P17", item("Q145")), ("P169", item("Q9400020" if not t1 else "Q9400021")),
                ("P856", text("https://northwind.example" if not t1 else "https://northwind-analytics.example"))],
               "2026-08-03T12:00:00Z" if t1 else T0_MODIFIED, aliases=["Northwind"]),
        person("Q9400020", "Elena Varga", []), person("Q9400021", "Ravi Menon", []),
        entity("Q9600001", en("Atlantic Cup 2026"),
               [("P31", item("Q1656682")), ("P641", item("Q2736"))]
               + ([("P1346", item("Q9200003")), ("P585", day("2026-07-19")), ("P276", item("Q9100006")),
                   ("P17", item("Q155"))] if t1 else []),
               "2026-07-20T07:30:00Z" if t1 else T0_MODIFIED),
    ]
    if t1:  # a change on an entity with only a German label: no question may come from it
        ents.append(entity("Q9700001", {"de": "Nordsee-Pokal"}, [("P31", item("Q1656682")),
                                                                  ("P1346", item("Q9200002"))],
                           "2026-10-11T09:00:00Z"))
    return ents


def write(path: Path, ents: list[dict[str, Any]]) -> None:
    body = "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in ents) + "\n]\n"
    opener = gzip.open if path.suffix == ".gz" else bz2.open
    if path.suffix == ".gz":
        with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(body.encode())
        return
    with opener(path, "wb") as f:
        f.write(body.encode())


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT  # another folder, to compare with the committed files
    out.mkdir(parents=True, exist_ok=True)
    write(out / "wikidata-t0.json.gz", world(t1=False))
    write(out / "wikidata-t1.json.bz2", world(t1=True))
    print(f"wrote {out}/wikidata-t0.json.gz and wikidata-t1.json.bz2")
