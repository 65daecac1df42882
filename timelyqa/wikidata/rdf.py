"""An entity as N-Triples in Wikidata's RDF vocabulary (wdt:, p:, ps:, wikibase:rank, rdfs:label).

Every IRI goes through `iri` and every literal through `nt_escape`: an id the reader let through by mistake still
makes one term of one line, never a second triple."""

from __future__ import annotations

from timelyqa.wikidata.statements import EntityStatements
from timelyqa.wikidata.values import ENTITY_IRI, iri, nt_escape, rdf_term

WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
WDS = "http://www.wikidata.org/entity/statement/"
RANK = "<http://wikiba.se/ontology#rank>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
ALIAS = "<http://www.w3.org/2004/02/skos/core#altLabel>"
RANK_IRI = {r: f"<http://wikiba.se/ontology#{r.capitalize()}Rank>" for r in ("preferred", "normal", "deprecated")}


def entity_ntriples(entity_id: str, label: str | None, aliases: list[str], es: EntityStatements) -> str:
    """All lines for one entity: truthy wdt: triples, full statements with rank, and English labels."""
    s = iri(ENTITY_IRI, entity_id)
    lines = []
    if label is not None:
        lines.append(f'{s} {LABEL} "{nt_escape(label)}"@en .')
    lines.extend(f'{s} {ALIAS} "{nt_escape(a)}"@en .' for a in aliases)
    for st in es.truthy:
        lines.append(f"{s} {iri(WDT, st.prop)} {rdf_term(st.kind, st.form)} .")
    for st in es.statements:
        node = iri(WDS, st.sid.replace("$", "-"))
        lines.append(f"{s} {iri(P, st.prop)} {node} .")
        lines.append(f"{node} {iri(PS, st.prop)} {rdf_term(st.kind, st.form)} .")
        lines.append(f"{node} {RANK} {RANK_IRI[st.rank]} .")
    return "\n".join(lines) + "\n" if lines else ""
