"""Batched SPARQL verification against a real Oxigraph loaded with Wikidata-shaped RDF."""

from __future__ import annotations

import math
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from timelyqa.errors import TransientSourceError
from timelyqa.oxigraph import LocalOxigraph, free_port
from timelyqa.sparql import SparqlEndpoint
from timelyqa.wikidata.query import Const, Pattern, Query, Var
from timelyqa.wikidata.values import Kind, rdf_term
from timelyqa.wikidata.verify import Outcome, batch_query, check, expected_lexical, verify_all

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

X, Y1 = Var("x"), Var("y1")
BIRTH = "+1952-03-11T00:00:00Z/11"
AREA = "+1572.50 Q712226"  # Oxigraph prints this xsd:decimal back as 1572.5
VIAF = "113230702"
MARKER = "HTML-MARKER"


def item(q: str) -> Const:
    return Const(Kind.ENTITY, q)


def statement(s: str, p: str, kind: Kind, form: str, *, rank: str = "NormalRank", n: int = 1) -> list[str]:
    """A statement as Wikidata's RDF export writes it: p:/ps:/rank, plus the wdt: triple unless deprecated."""
    node = f"<{WD}statement/{s}-{p}-{n}>"
    obj = rdf_term(kind, form)
    lines = [f"<{WD}{s}> <{P}{p}> {node} .", f"{node} <{PS}{p}> {obj} .", f"{node} <{WIKIBASE}rank> <{WIKIBASE}{rank}> ."]
    if rank != "DeprecatedRank":
        lines.append(f"<{WD}{s}> <{WDT}{p}> {obj} .")
    return lines


def label(s: str, text: str) -> str:
    return f'<{WD}{s}> <{LABEL}> "{text}"@en .'


def triples() -> list[str]:
    lines = [label("Q42", "Douglas Adams"), label("Q145", "United Kingdom"), label("Q84", "London")]
    for s, p, kind, form in [
        ("Q42", "P31", Kind.ENTITY, "Q5"),
        ("Q42", "P27", Kind.ENTITY, "Q145"),
        ("Q42", "P569", Kind.TIME, BIRTH),
        ("Q42", "P214", Kind.STRING, VIAF),
        ("Q1", "P31", Kind.ENTITY, "Q5"),
        ("Q1", "P27", Kind.ENTITY, "Q30"),
        ("Q145", "P36", Kind.ENTITY, "Q84"),
        ("Q30", "P36", Kind.ENTITY, "Q61"),
        ("Q84", "P2046", Kind.QUANTITY, AREA),
        ("Q8", "P106", Kind.ENTITY, "Q36180"),
        ("Q8", "P27", Kind.ENTITY, "Q145"),
        ("Q8", "P27", Kind.ENTITY, "Q30"),
        ("Q145", "P1448", Kind.MONOLINGUAL, "United Kingdom@en"),
        ("Q145", "P1448", Kind.MONOLINGUAL, "Royaume-Uni@fr"),
    ]:
        lines += statement(s, p, kind, form, n=len(lines))
    lines += statement("Q2", "P40", Kind.ENTITY, "Q3", n=1) + statement("Q2", "P40", Kind.ENTITY, "Q4", n=2)
    # The only head of government of Q145 is deprecated: it is in p:/ps: but has no truthy wdt: triple.
    lines += statement("Q145", "P6", Kind.ENTITY, "Q999", rank="DeprecatedRank")
    for i in range(100):  # bulk items for the batching test: one or two populations each
        lines += statement(f"Q{1000 + i}", "P1082", Kind.QUANTITY, f"+{i}.50", n=1)
        if i % 3 == 0:
            lines += statement(f"Q{1000 + i}", "P1082", Kind.QUANTITY, f"+{i + 1000}", n=2)
    return lines


# key -> (query, expected count, expected answer kind and form or None, check() result)
CASES: dict[str, tuple[Query, int, tuple[Kind, str] | None, str | None]] = {
    "capital": (Query((Pattern(item("Q145"), "P36", X),)), 1, (Kind.ENTITY, "Q84"), None),
    "children": (Query((Pattern(item("Q2"), "P40", X),)), 2, (Kind.ENTITY, "Q3"), "sparql_not_unique"),
    "deprecated_only": (Query((Pattern(item("Q145"), "P6", X),)), 0, (Kind.ENTITY, "Q999"), "sparql_no_answer"),
    "birth": (Query((Pattern(item("Q42"), "P569", X),)), 1, (Kind.TIME, BIRTH), None),
    "area": (Query((Pattern(item("Q84"), "P2046", X),)), 1, (Kind.QUANTITY, AREA), None),
    "viaf": (Query((Pattern(item("Q42"), "P214", X),)), 1, (Kind.STRING, VIAF), None),
    "british_human": (
        Query((Pattern(X, "P31", item("Q5")), Pattern(X, "P27", item("Q145")))), 1, (Kind.ENTITY, "Q42"), None,
    ),
    "capital_of_citizenship": (
        Query((Pattern(item("Q42"), "P27", Y1), Pattern(Y1, "P36", X))), 1, (Kind.ENTITY, "Q84"), None,
    ),
    # One writer reached through two citizenships is still one answer.
    "writer_with_citizenship": (
        Query((Pattern(X, "P106", item("Q36180")), Pattern(X, "P27", Y1))), 1, (Kind.ENTITY, "Q8"), None,
    ),
    "born_that_day": (Query((Pattern(X, "P569", Const(Kind.TIME, BIRTH)),)), 1, (Kind.ENTITY, "Q42"), None),
    "wrong_capital": (Query((Pattern(item("Q30"), "P36", X),)), 1, (Kind.ENTITY, "Q84"), "sparql_wrong_answer"),
    "official_name": (Query((Pattern(item("Q145"), "P1448", X),)), 2, None, "sparql_not_unique"),
    'odd "key" \\ with\nnewline é': (Query((Pattern(X, "P214", Const(Kind.STRING, VIAF)),)), 1, (Kind.ENTITY, "Q42"), None),
}


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalOxigraph]:
    nt = tmp_path_factory.mktemp("wikidata") / "after.nt"
    nt.write_text("\n".join(triples()) + "\n")
    with LocalOxigraph(nt) as server:
        yield server


@pytest.fixture(scope="module")
def endpoint(oxigraph: LocalOxigraph) -> SparqlEndpoint:
    return SparqlEndpoint(oxigraph.query_url, backoff=0.001)


def test_verify_all_gives_each_question_its_outcome(endpoint: SparqlEndpoint) -> None:
    before = endpoint.calls
    outcomes = verify_all(endpoint, {key: case[0] for key, case in CASES.items()})
    assert endpoint.calls - before == 1
    assert set(outcomes) == set(CASES)
    for key, (_, count, value, reason) in CASES.items():
        assert outcomes[key].count == count, key
        if value is not None:
            assert check(outcomes[key], *value) == reason, key
    assert outcomes["capital"] == Outcome(1, f"{WD}Q84")
    assert outcomes["birth"].answer == "1952-03-11T00:00:00Z"
    assert outcomes["area"].answer == "1572.5"  # the store's canonical decimal, still a correct answer
    assert outcomes["viaf"].answer == VIAF
    assert outcomes["children"] == Outcome(2, None)
    assert outcomes["deprecated_only"] == Outcome(0, None)


def test_check_reasons() -> None:
    assert check(Outcome(1, f"{WD}Q84"), Kind.ENTITY, "Q84") is None
    assert check(Outcome(1, "1572.5"), Kind.QUANTITY, AREA) is None
    assert check(Outcome(1, "1572.6"), Kind.QUANTITY, AREA) == "sparql_wrong_answer"
    assert check(Outcome(1, "1952-03-12T00:00:00Z"), Kind.TIME, BIRTH) == "sparql_wrong_answer"
    assert check(Outcome(0, None), Kind.ENTITY, "Q84") == "sparql_no_answer"
    assert check(Outcome(3, None), Kind.ENTITY, "Q84") == "sparql_not_unique"
    assert check(Outcome(-1, None, reason="html"), Kind.ENTITY, "Q84") == "sparql_unverifiable"
    assert expected_lexical(Kind.TIME, BIRTH) == "1952-03-11T00:00:00Z"
    assert expected_lexical(Kind.ENTITY, "Q84") == f"{WD}Q84"


def bulk() -> dict[str, Query]:
    """500 questions: the cases above and populations of items that have none, one or two."""
    base = [case[0] for case in CASES.values()]
    items: dict[str, Query] = {}
    for i in range(500):
        if i % 5 == 0:
            items[f"q{i}"] = base[(i // 5) % len(base)]
        else:
            items[f"q{i}"] = Query((Pattern(item(f"Q{1000 + i % 130}"), "P1082", X),))
    return items


def test_batches_cost_one_call_each_and_agree_with_single_queries(endpoint: SparqlEndpoint) -> None:
    items = bulk()
    before = endpoint.calls
    outcomes = verify_all(endpoint, items, batch_size=200)
    assert endpoint.calls - before == math.ceil(500 / 200)
    assert {o.count for o in outcomes.values()} == {0, 1, 2}
    for key, query in items.items():
        rows = endpoint.select(query.sparql())  # the standalone query stops at 2 rows
        assert min(outcomes[key].count, 2) == len(rows), key
        assert outcomes[key].answer == (rows[0]["x"] if len(rows) == 1 else None), key


def test_a_bad_query_costs_only_itself(endpoint: SparqlEndpoint) -> None:
    items = {key: case[0] for key, case in CASES.items()}
    items["broken"] = Query((Pattern(X, "P31", Const(Kind.ENTITY, "Q5 }")),))  # 400 from the server
    outcomes = verify_all(endpoint, items)
    assert outcomes["broken"].count == -1 and "400" in (outcomes["broken"].reason or "")
    assert check(outcomes["broken"], Kind.ENTITY, "Q5") == "sparql_unverifiable"
    assert {k: o for k, o in outcomes.items() if k != "broken"} == verify_all(
        endpoint, {key: case[0] for key, case in CASES.items()}
    )


@pytest.fixture
def html_proxy(oxigraph: LocalOxigraph) -> Iterator[str]:
    """Forwards queries to Oxigraph, except those that mention MARKER: a login page answers those with 200."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if MARKER.encode() in body:
                status, ctype, payload = 200, "text/html; charset=utf-8", b"<html><body>Sign in</body></html>"
            else:
                request = urllib.request.Request(
                    oxigraph.query_url, data=body, headers={"Accept": self.headers["Accept"]}
                )
                try:
                    with urllib.request.urlopen(request, timeout=10) as answer:
                        status, ctype, payload = answer.status, answer.headers["Content-Type"], answer.read()
                except urllib.error.HTTPError as exc:
                    status, ctype, payload = exc.code, exc.headers["Content-Type"], exc.read()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/query"
    server.shutdown()
    server.server_close()


def test_html_mid_run_marks_only_the_queries_it_hits(html_proxy: str, endpoint: SparqlEndpoint) -> None:
    marked = {
        "m1": Query((Pattern(X, "P214", Const(Kind.STRING, MARKER)),)),
        "m2": Query((Pattern(item("Q42"), "P27", Y1), Pattern(Y1, "P1448", Const(Kind.STRING, MARKER)))),
    }
    cases = list(CASES.items())
    # The marked queries sit inside the second and fourth batches of 8, between normal ones.
    items = dict(
        [(k, c[0]) for k, c in cases[:10]] + [("m1", marked["m1"])] + [(k, c[0]) for k, c in cases[10:]]
        + [(f"q{i}", Query((Pattern(item(f"Q{1000 + i}"), "P1082", X),))) for i in range(12)]
        + [("m2", marked["m2"])] + [(f"q{i}", Query((Pattern(item(f"Q{1000 + i}"), "P1082", X),))) for i in range(12, 20)]
    )
    assert list(items).index("m1") // 8 == 1 and list(items).index("m2") // 8 == 3
    proxied = SparqlEndpoint(html_proxy, backoff=0.001)
    outcomes = verify_all(proxied, items, batch_size=8)
    assert set(outcomes) == set(items)
    for key in marked:
        assert outcomes[key].count == -1 and "text/html" in (outcomes[key].reason or "")
        assert check(outcomes[key], Kind.ENTITY, "Q42") == "sparql_unverifiable"
    clean = {k: q for k, q in items.items() if k not in marked}
    assert {k: o for k, o in outcomes.items() if k not in marked} == verify_all(endpoint, clean)
    # 5 batches; each of the two hit is split 8 -> 4 -> 2 -> 1: 6 more requests each.
    assert proxied.calls == 5 + 2 * 6


def test_transient_failure_propagates() -> None:
    dead = SparqlEndpoint(f"http://127.0.0.1:{free_port()}/query", retries=1, backoff=0.001)
    with pytest.raises(TransientSourceError):
        verify_all(dead, {key: case[0] for key, case in CASES.items()})
    assert dead.calls == 2


def test_batch_query_is_one_grouped_select() -> None:
    text = batch_query({key: case[0] for key, case in CASES.items()})
    assert text.count("UNION") == len(CASES) - 1
    assert text.count("GROUP BY") == 1 and "PREFIX wdt:" in text
    assert '"odd \\"key\\" \\\\ with\\nnewline é"' in text


def test_fixture_file_has_the_deprecated_statement_in_p_only(oxigraph: LocalOxigraph, endpoint: SparqlEndpoint) -> None:
    rows = endpoint.select(
        f"SELECT ?v ?r WHERE {{ <{WD}Q145> <{P}P6> ?s . ?s <{PS}P6> ?v ; <{WIKIBASE}rank> ?r }}"
    )
    assert rows == [{"v": f"{WD}Q999", "r": f"{WIKIBASE}DeprecatedRank"}]


def test_batches_in_flight_together_give_the_same_outcomes(endpoint: SparqlEndpoint) -> None:
    """Concurrency changes how fast, never what: the same outcomes with one batch in flight or four."""
    queries = bulk()
    one = verify_all(endpoint, queries, batch_size=7, concurrency=1)
    four = verify_all(endpoint, queries, batch_size=7, concurrency=4)
    assert one == four and len(one) == len(queries)
    assert {o.count for o in one.values()} >= {0, 1}
