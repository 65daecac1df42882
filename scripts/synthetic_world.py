"""The vocabulary and entity builders of the synthetic Wikidata world that scripts/synthetic_dumps.py writes.

Entities are built as the dump's JSON objects, key for key in the dump's order, with statement ids,
snak hashes, qualifiers and references. Synthetic items are `Q{BASE + i}`; what kind item `i` is
(article, human, place...) depends only on `i`, so any builder can point at "a random human" without
holding the world in memory. Properties, classes, countries, languages and reference sources carry
their real Wikidata ids and English labels.
"""

from __future__ import annotations

import random
from typing import Any

Json = dict[str, Any]
ENTITY = "http://www.wikidata.org/entity/"
GREGORIAN = ENTITY + "Q1985727"
BASE = 50_000_000
"""Synthetic items are Q50000000 onwards: eight-digit ids, like items created in recent years."""
POOL_BASE = 40_000_000
POOLS = {"award": 400, "league": 150, "industry": 80, "timezone": 30, "constellation": 88, "subject": 600}
"""Small closed classes, written once at the head of each dump: `POOL_BASE + offset + k`."""

PROPERTIES: dict[str, tuple[str, str]] = {  # id: (datatype, English label)
    "P31": ("wikibase-item", "instance of"), "P21": ("wikibase-item", "sex or gender"),
    "P27": ("wikibase-item", "country of citizenship"), "P19": ("wikibase-item", "place of birth"),
    "P20": ("wikibase-item", "place of death"), "P569": ("time", "date of birth"), "P570": ("time", "date of death"),
    "P106": ("wikibase-item", "occupation"), "P735": ("wikibase-item", "given name"),
    "P734": ("wikibase-item", "family name"), "P1412": ("wikibase-item", "languages spoken, written or signed"),
    "P69": ("wikibase-item", "educated at"), "P108": ("wikibase-item", "employer"),
    "P54": ("wikibase-item", "member of sports team"), "P166": ("wikibase-item", "award received"),
    "P26": ("wikibase-item", "spouse"), "P214": ("external-id", "VIAF ID"), "P213": ("external-id", "ISNI"),
    "P227": ("external-id", "GND ID"), "P244": ("external-id", "Library of Congress authority ID"),
    "P646": ("external-id", "Freebase ID"), "P2671": ("external-id", "Google Knowledge Graph ID"),
    "P496": ("external-id", "ORCID iD"), "P18": ("commonsMedia", "image"), "P373": ("string", "Commons category"),
    "P856": ("url", "official website"), "P1476": ("monolingualtext", "title"), "P577": ("time", "publication date"),
    "P1433": ("wikibase-item", "published in"), "P478": ("string", "volume"), "P433": ("string", "issue"),
    "P304": ("string", "page(s)"), "P356": ("external-id", "DOI"), "P698": ("external-id", "PubMed ID"),
    "P932": ("external-id", "PMCID"), "P50": ("wikibase-item", "author"), "P2093": ("string", "author name string"),
    "P2860": ("wikibase-item", "cites work"), "P921": ("wikibase-item", "main subject"),
    "P407": ("wikibase-item", "language of work or name"), "P225": ("string", "taxon name"),
    "P105": ("wikibase-item", "taxon rank"), "P171": ("wikibase-item", "parent taxon"),
    "P1843": ("monolingualtext", "taxon common name"), "P846": ("external-id", "GBIF taxon ID"),
    "P685": ("external-id", "NCBI taxonomy ID"), "P815": ("external-id", "ITIS TSN"),
    "P17": ("wikibase-item", "country"), "P131": ("wikibase-item", "located in the administrative territorial entity"),
    "P625": ("globe-coordinate", "coordinate location"), "P1082": ("quantity", "population"),
    "P571": ("time", "inception"), "P421": ("wikibase-item", "located in time zone"), "P2046": ("quantity", "area"),
    "P2044": ("quantity", "elevation above sea level"), "P1566": ("external-id", "GeoNames ID"),
    "P402": ("external-id", "OpenStreetMap relation ID"), "P6": ("wikibase-item", "head of government"),
    "P159": ("wikibase-item", "headquarters location"), "P452": ("wikibase-item", "industry"),
    "P112": ("wikibase-item", "founded by"), "P169": ("wikibase-item", "chief executive officer"),
    "P1128": ("quantity", "employees"), "P749": ("wikibase-item", "parent organization"),
    "P118": ("wikibase-item", "league"), "P286": ("wikibase-item", "head coach"), "P641": ("wikibase-item", "sport"),
    "P301": ("wikibase-item", "category's main topic"), "P4224": ("wikibase-item", "category contains"),
    "P59": ("wikibase-item", "constellation"), "P6257": ("quantity", "right ascension"),
    "P6258": ("quantity", "declination"), "P1215": ("quantity", "apparent magnitude"),
    "P528": ("string", "catalog code"), "P972": ("wikibase-item", "catalog"), "P585": ("time", "point in time"),
    "P580": ("time", "start time"), "P582": ("time", "end time"), "P1545": ("string", "series ordinal"),
    "P1932": ("string", "object named as"), "P276": ("wikibase-item", "location"), "P1346": ("wikibase-item", "winner"),
    "P710": ("wikibase-item", "participant"), "P248": ("wikibase-item", "stated in"), "P813": ("time", "retrieved"),
    "P854": ("url", "reference URL"), "P143": ("wikibase-item", "imported from Wikimedia project"),
    "P1448": ("monolingualtext", "official name"), "P1705": ("monolingualtext", "native label"),
    "P282": ("wikibase-item", "writing system"), "P236": ("external-id", "ISSN"), "P123": ("wikibase-item", "publisher"),
    "P495": ("wikibase-item", "country of origin"), "P1813": ("monolingualtext", "short name"),
    "P1559": ("monolingualtext", "name in native language"), "P1343": ("wikibase-item", "described by source"),
    "P7859": ("external-id", "WorldCat Identities ID"), "P268": ("external-id", "Bibliothèque nationale de France ID"),
    "P269": ("external-id", "IdRef ID"), "P3430": ("external-id", "SNAC ARK ID"),
    "P6766": ("external-id", "Who's on First ID"), "P1281": ("external-id", "WOEID"),
    "P190": ("wikibase-item", "twinned administrative body"), "P830": ("external-id", "Encyclopedia of Life ID"),
    "P3151": ("external-id", "iNaturalist taxon ID"), "P10585": ("external-id", "Catalogue of Life ID"),
}

FIXED: dict[str, str] = {  # real ids of classes, values and sources the builders use
    "Q5": "human", "Q13442814": "scholarly article", "Q16521": "taxon", "Q515": "city", "Q532": "village",
    "Q3957": "town", "Q4830453": "business", "Q43229": "organization", "Q476028": "association football club",
    "Q4167836": "Wikimedia category", "Q523": "star", "Q1656682": "event", "Q5633421": "scientific journal",
    "Q202444": "given name", "Q101352": "family name", "Q6581097": "male", "Q6581072": "female", "Q7432": "species",
    "Q34740": "genus", "Q1860": "English", "Q150": "French", "Q188": "German", "Q1321": "Spanish", "Q652": "Italian",
    "Q7737": "Russian", "Q5287": "Japanese", "Q8229": "Latin script", "Q82955": "politician", "Q36180": "writer",
    "Q1650915": "researcher", "Q937857": "association football player", "Q33999": "actor", "Q1930187": "journalist",
    "Q39631": "physician", "Q81096": "engineer", "Q170790": "mathematician", "Q177220": "singer",
    "Q2736": "association football", "Q11573": "metre", "Q712226": "square kilometre", "Q28390": "degree",
    "Q5188229": "Crossref", "Q180686": "PubMed", "Q54919": "Virtual International Authority File",
    "Q36578": "Integrated Authority File", "Q328": "English Wikipedia", "Q48183": "German Wikipedia",
    "Q8447": "French Wikipedia", "Q206855": "Russian Wikipedia", "Q1264450": "Global Biodiversity Information Facility",
    "Q830106": "GeoNames", "Q2": "Earth", "Q654724": "SIMBAD",
}
COUNTRIES = {
    "Q30": "United States of America", "Q183": "Germany", "Q142": "France", "Q145": "United Kingdom", "Q38": "Italy",
    "Q29": "Spain", "Q17": "Japan", "Q148": "People's Republic of China", "Q159": "Russia", "Q155": "Brazil",
    "Q16": "Canada", "Q408": "Australia", "Q668": "India", "Q96": "Mexico", "Q36": "Poland", "Q55": "Netherlands",
    "Q34": "Sweden", "Q39": "Switzerland", "Q40": "Austria", "Q31": "Belgium", "Q45": "Portugal", "Q20": "Norway",
    "Q35": "Denmark", "Q33": "Finland", "Q27": "Ireland", "Q41": "Greece", "Q43": "Turkey", "Q414": "Argentina",
    "Q298": "Chile", "Q739": "Colombia", "Q419": "Peru", "Q258": "South Africa", "Q1033": "Nigeria", "Q79": "Egypt",
    "Q114": "Kenya", "Q851": "Saudi Arabia", "Q794": "Iran", "Q884": "South Korea", "Q252": "Indonesia",
    "Q928": "Philippines", "Q881": "Vietnam", "Q869": "Thailand", "Q664": "New Zealand", "Q213": "Czech Republic",
    "Q28": "Hungary", "Q218": "Romania", "Q212": "Ukraine",
}
OCCUPATIONS = ["Q82955", "Q36180", "Q1650915", "Q937857", "Q33999", "Q1930187", "Q39631", "Q81096", "Q170790",
               "Q177220"]
LANGUAGES = ["Q1860", "Q150", "Q188", "Q1321", "Q652", "Q7737", "Q5287"]
WIKIS = ["Q328", "Q48183", "Q8447", "Q206855"]

# Label languages in the order bots fill them; sites for sitelinks.
LANGS = ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "pl", "ca", "da", "nb", "fi", "cs", "hu", "ro", "ast",
         "gl", "eu", "sq", "sk", "sl", "hr", "id", "ms", "tr", "vi", "ga", "cy", "lb", "oc", "af", "eo", "et", "lv",
         "lt", "is", "nn", "fy", "br", "an", "ia", "ie", "io", "la", "sc", "wa", "pms", "vec", "lmo"]
SITES = ["enwiki", "dewiki", "frwiki", "eswiki", "itwiki", "nlwiki", "svwiki", "cebwiki", "ruwiki", "plwiki",
         "jawiki", "zhwiki", "ptwiki", "ukwiki", "arwiki", "commonswiki"]
# Descriptions as bots write them: (language, text) with the non-Latin scripts real dumps carry.
DESCRIPTIONS = {
    "article": [("en", "scientific article published in {y}"), ("nl", "wetenschappelijk artikel"),
                ("es", "artículo científico publicado en {y}"), ("fr", "article scientifique"),
                ("de", "wissenschaftlicher Artikel"), ("it", "articolo scientifico"), ("ru", "научная статья"),
                ("uk", "наукова стаття, опублікована в {y}"), ("ar", "مقالة علمية نشرت في {y}"),
                ("zh", "{y}年学术文章"), ("zh-hant", "{y}年學術文章"), ("ja", "{y}年の論文"), ("ko", "{y}년 논문"),
                ("he", "מאמר מדעי"), ("bg", "научна статия"), ("sr", "научни чланак"), ("el", "επιστημονικό άρθρο"),
                ("ca", "article científic"), ("pt", "artigo científico"), ("pl", "artykuł naukowy"),
                ("sv", "vetenskaplig artikel"), ("cs", "vědecký článek"), ("hu", "tudományos cikk"),
                ("fi", "tieteellinen artikkeli"), ("da", "videnskabelig artikel udgivet {y}"), ("ro", "articol științific"),
                ("tr", "bilimsel makale"), ("id", "artikel ilmiah"), ("vi", "bài báo khoa học"), ("th", "บทความทางวิทยาศาสตร์"),
                ("ka", "სამეცნიერო სტატია"), ("bn", "বৈজ্ঞানিক নিবন্ধ"), ("sk", "vedecký článok"), ("nb", "vitenskapelig artikkel"),
                ("gl", "artigo científico"), ("ast", "artículu científicu"), ("eo", "scienca artikolo"),
                ("et", "teaduslik artikkel"), ("sq", "artikull shkencor"), ("tl", "artikulong pang-agham")],
    "human": [("en", "{nat} {occ}"), ("de", "{occ_de}"), ("fr", "{occ_fr}"), ("nl", "{occ_nl}"), ("es", "{occ_es}"),
              ("ru", "персона"), ("it", "persona")],
    "category": [("en", "Wikimedia category"), ("de", "Wikimedia-Kategorie"), ("fr", "page de catégorie d'un projet Wikimédia"),
                 ("es", "categoría de Wikimedia"), ("it", "categoria di un progetto Wikimedia"), ("nl", "Wikimedia-categorie"),
                 ("ru", "категория в проекте Викимедиа"), ("ja", "ウィキメディアのカテゴリ"), ("zh", "维基媒体分类"),
                 ("pl", "kategoria w projekcie Wikimedia"), ("pt", "categoria de um projeto da Wikimedia"),
                 ("sv", "Wikimedia-kategori"), ("uk", "категорія проєкту Вікімедіа"), ("ar", "تصنيف ويكيميديا"),
                 ("ca", "categoria de Wikimedia"), ("cs", "kategorie na projektech Wikimedia"), ("fi", "Wikimedia-luokka"),
                 ("he", "דף קטגוריה"), ("hu", "Wikimédia-kategória"), ("ko", "위키미디어 분류"), ("tr", "Vikimedya kategorisi"),
                 ("vi", "thể loại Wikimedia"), ("da", "Wikimedia-kategori"), ("nb", "Wikimedia-kategori"),
                 ("el", "κατηγορία εγχειρημάτων Wikimedia"), ("sr", "категорија на Викимедији"), ("id", "kategori Wikimedia"),
                 ("ro", "categorie a unui proiect Wikimedia"), ("eo", "kategorio en Vikimedio"), ("bg", "категория на Уикимедия")],
    "taxon": [("en", "species of insect"), ("de", "Art der Gattung {g}"), ("fr", "espèce d'insectes"),
              ("nl", "soort uit het geslacht {g}"), ("es", "especie de insecto"), ("it", "specie di insetto"),
              ("ru", "вид насекомых"), ("sv", "art av insekter"), ("ceb", "kaliwatan sa insekto"), ("vi", "loài côn trùng")],
    "place": [("en", "human settlement in {nat}"), ("de", "Ort in {nat}"), ("fr", "localité"), ("nl", "plaats in {nat}"),
              ("es", "localidad"), ("ru", "населённый пункт"), ("ceb", "lungsod")],
    "star": [("en", "star in the constellation {c}"), ("de", "Stern im Sternbild {c}"), ("fr", "étoile"),
             ("ru", "звезда"), ("es", "estrella"), ("it", "stella")],
    "org": [("en", "company"), ("de", "Unternehmen"), ("fr", "entreprise"), ("nl", "bedrijf")],
    "club": [("en", "association football club"), ("de", "Fußballverein"), ("fr", "club de football"),
             ("es", "club de fútbol"), ("it", "società calcistica"), ("ru", "футбольный клуб")],
    "event": [("en", "sports event"), ("de", "Sportveranstaltung"), ("fr", "événement sportif")],
    "journal": [("en", "scientific journal"), ("de", "wissenschaftliche Fachzeitschrift"), ("fr", "revue scientifique"),
                ("es", "revista científica"), ("ru", "научный журнал"), ("nl", "wetenschappelijk tijdschrift")],
    "name": [("en", "{what}"), ("de", "{what_de}"), ("fr", "{what_fr}"), ("nl", "{what_nl}"), ("es", "{what_es}"),
             ("it", "{what_it}"), ("ru", "{what_ru}"), ("pl", "{what_pl}"), ("sv", "{what_sv}"), ("cs", "{what_cs}")],
}
NAME_WHAT = {"given": dict(what="male given name", what_de="männlicher Vorname", what_fr="prénom masculin",
                           what_nl="jongensnaam", what_es="nombre masculino", what_it="prenome maschile",
                           what_ru="мужское личное имя", what_pl="imię męskie", what_sv="mansnamn",
                           what_cs="mužské křestní jméno"),
             "family": dict(what="family name", what_de="Familienname", what_fr="nom de famille",
                            what_nl="achternaam", what_es="apellido", what_it="cognome", what_ru="фамилия",
                            what_pl="nazwisko", what_sv="efternamn", what_cs="příjmení")}
OCC_WORDS = {"Q82955": ("politician", "Politiker", "homme politique", "politicus", "político"),
             "Q36180": ("writer", "Schriftsteller", "écrivain", "schrijver", "escritor"),
             "Q1650915": ("researcher", "Forscher", "chercheur", "onderzoeker", "investigador"),
             "Q937857": ("association football player", "Fußballspieler", "footballeur", "voetballer", "futbolista"),
             "Q33999": ("actor", "Schauspieler", "acteur", "acteur", "actor"),
             "Q1930187": ("journalist", "Journalist", "journaliste", "journalist", "periodista"),
             "Q39631": ("physician", "Arzt", "médecin", "arts", "médico"),
             "Q81096": ("engineer", "Ingenieur", "ingénieur", "ingenieur", "ingeniero"),
             "Q170790": ("mathematician", "Mathematiker", "mathématicien", "wiskundige", "matemático"),
             "Q177220": ("singer", "Sänger", "chanteur", "zanger", "cantante")}

SYLLABLES = ["ka", "lo", "ri", "man", "sel", "to", "vi", "ra", "nen", "dor", "bel", "sa", "mi", "gor", "ta", "len",
             "che", "ven", "tis", "mar", "ol", "fa", "ber", "gu", "sen", "ko", "li", "va", "der", "no", "pe", "ru",
             "zan", "hel", "da", "mo", "qui", "ster", "wen", "ya", "bri", "col", "dra", "fin", "har", "jor", "kel",
             "mun", "ost", "pra", "rem", "sol", "tur", "ul", "wes", "zor"]
WORDS = ["effects", "analysis", "protein", "expression", "cells", "patients", "model", "structure", "dynamics",
         "regulation", "genome", "synthesis", "response", "evolution", "signalling", "network", "receptor",
         "binding", "mutations", "treatment", "inhibition", "population", "diversity", "climate", "soil", "water",
         "temperature", "imaging", "membrane", "transport", "kinase", "pathway", "infection", "immune", "neural",
         "cortex", "sediment", "catalysis", "polymer", "crystal", "spectroscopy", "quantum", "lattice", "magnetic"]
KINDS = {  # share of items per 100, chosen to echo Wikidata's mix (scholarly articles and people dominate)
    "article": 31, "human": 20, "category": 7, "place": 9, "taxon": 8, "star": 6, "org": 6, "event": 4,
    "name": 3, "journal": 3, "club": 3,
}


def pool_ids(name: str) -> list[str]:
    offset = list(POOLS).index(name) * 1000
    return [f"Q{POOL_BASE + offset + k}" for k in range(POOLS[name])]


# --- datavalues --------------------------------------------------------------------------------------
def item(qid: str) -> Json:
    return {"value": {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid}, "type": "wikibase-entityid"}


def time(year: int, month: int = 0, day: int = 0, precision: int = 11) -> Json:
    if precision <= 9:
        month = day = 0
    elif precision == 10:
        day = 0
    return {"value": {"time": f"+{year:04d}-{month:02d}-{day:02d}T00:00:00Z", "timezone": 0, "before": 0, "after": 0,
                      "precision": precision, "calendarmodel": GREGORIAN}, "type": "time"}


def quantity(amount: str, unit: str = "1", bounds: float | None = None) -> Json:
    value: Json = {"amount": amount, "unit": unit if unit == "1" else ENTITY + unit}
    if bounds is not None:
        base = float(amount)
        value["upperBound"], value["lowerBound"] = f"{base + bounds:+.3f}", f"{base - bounds:+.3f}"
    return {"value": value, "type": "quantity"}


def string(text: str) -> Json:
    return {"value": text, "type": "string"}


def mono(text: str, lang: str) -> Json:
    return {"value": {"text": text, "language": lang}, "type": "monolingualtext"}


def coordinate(lat: float, lon: float) -> Json:
    return {"value": {"latitude": lat, "longitude": lon, "altitude": None, "precision": 0.0001,
                      "globe": ENTITY + "Q2"}, "type": "globecoordinate"}


class FastRandom(random.Random):
    """choice and randrange through one random() call: several times faster than the exact versions, and
    the tiny bias toward low indices is irrelevant to synthetic data. Still deterministic by seed."""

    def choice(self, seq):  # type: ignore[no-untyped-def, override]
        return seq[int(self.random() * len(seq))]

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        if stop is None:
            start, stop = 0, start
        return start + int(self.random() * (stop - start))


class Hasher:
    """Snak hashes and statement GUIDs in Wikidata's shapes, drawn from pools made once per seed.

    Real snak hashes repeat wherever the same snak does, so a pool of 65,536 loses nothing that
    matters; GUIDs step through their pool from a random start, so none repeats within an entity.
    """

    SIZE = 1 << 16

    def __init__(self, rng: random.Random) -> None:
        pools = random.Random(rng.random())
        self.rng = rng
        self._hashes = [f"{pools.getrandbits(160):040x}" for _ in range(self.SIZE)]
        guids = (f"{pools.getrandbits(128):032X}" for _ in range(self.SIZE))
        self._guids = [f"${g[:8]}-{g[8:12]}-{g[12:16]}-{g[16:20]}-{g[20:]}" for g in guids]
        self._next = 0

    def start(self) -> None:
        """A new entity: its GUIDs start at a random place in the pool."""
        self._next = int(self.rng.random() * self.SIZE)

    def hash(self) -> str:
        return self._hashes[int(self.rng.random() * self.SIZE)]

    def guid(self, eid: str) -> str:
        self._next = (self._next + 1) % self.SIZE
        return eid + self._guids[self._next]


def snak(h: Hasher, prop: str, datavalue: Json | None) -> Json:
    if datavalue is None:
        return {"snaktype": "somevalue", "property": prop, "hash": h.hash(), "datatype": PROPERTIES[prop][0]}
    return {"snaktype": "value", "property": prop, "hash": h.hash(), "datavalue": datavalue,
            "datatype": PROPERTIES[prop][0]}


def reference(h: Hasher, pairs: list[tuple[str, Json]]) -> Json:
    snaks: dict[str, list[Json]] = {}
    for prop, value in pairs:
        snaks.setdefault(prop, []).append(snak(h, prop, value))
    return {"hash": h.hash(), "snaks": snaks, "snaks-order": list(snaks)}


def statement(h: Hasher, eid: str, prop: str, datavalue: Json | None, *, rank: str = "normal",
              qualifiers: list[tuple[str, Json]] = (), references: list[Json] = ()) -> Json:  # type: ignore[assignment]
    st: Json = {"mainsnak": snak(h, prop, datavalue), "type": "statement"}
    if qualifiers:
        quals: dict[str, list[Json]] = {}
        for qp, qv in qualifiers:
            quals.setdefault(qp, []).append(snak(h, qp, qv))
        st["qualifiers"], st["qualifiers-order"] = quals, list(quals)
    st["id"], st["rank"] = h.guid(eid), rank
    if references:
        st["references"] = list(references)
    return st


def term_map(pairs: list[tuple[str, str]]) -> Json:
    return {lang: {"language": lang, "value": value} for lang, value in pairs}

