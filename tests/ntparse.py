"""N-Triples as Oxigraph reads them: the same binary that loads `rdf.nt` for verification parses the text, and its
JSON-LD rendering gives each triple back unambiguously (no hand-written N-Triples parser to agree with)."""

from __future__ import annotations

import json
import subprocess

from timelyqa.oxigraph import find_oxigraph

Term = tuple[str, ...]
"""("iri", iri) or ("literal", lexical, datatype or "", language lower-cased or "")."""
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


class Refused(Exception):
    """Oxigraph refused the text: the first line of its message."""


def oxigraph_triples(text: str) -> list[tuple[Term, Term, Term]]:
    """Every triple of `text` as Oxigraph parses it, in its order; Refused when it does not parse."""
    proc = subprocess.run([find_oxigraph(), "convert", "--from-format", "nt", "--to-format", "jsonld"],
                          input=text.encode(), capture_output=True, timeout=60, check=False)
    if proc.returncode:
        raise Refused(proc.stderr.decode(errors="replace").strip().splitlines()[0])
    out = []
    for node in json.loads(proc.stdout or b"[]"):
        s = ("iri", node["@id"])
        for p, objects in node.items():
            if p == "@id":
                continue
            for o in objects:
                out.append((s, ("iri", p), _term(o)))
    return out


def _term(o: dict[str, str]) -> Term:
    if "@id" in o:
        return ("iri", o["@id"])
    datatype = o.get("@type", "")
    return ("literal", o["@value"], "" if datatype == XSD_STRING else datatype, o.get("@language", "").lower())
