"""Batched SPARQL verification against a real Oxigraph loaded with Wikidata-shaped RDF."""

from __future__ import annotations

import json
import math
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import polars as pl
import pytest

from tests.localserver import LocalServer
from tests.worldgen import make_world
from timelyqa.errors import TransientSourceError
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.sparql import SparqlEndpoint
from timelyqa.wikidata import pipeline
from timelyqa.wikidata.query import Const, Pattern, Query, Var, from_json
from timelyqa.wikidata.values import Kind, rdf_term
from timelyqa.wikidata.verify import (
    Outcome,
    answered_before,
    batch_query,
    check,
    expected_lexical,
    join_order,
    shape_query,
    verify_all,
)

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
    # A chain with a constant at both ends: planned from the rarer one (one capital named London, two humans).
    "human_citizen_of_a_country_with_capital_london": (
        Query((Pattern(X, "P31", item("Q5")), Pattern(X, "P27", Y1), Pattern(Y1, "P36", item("Q84")))),
        1, (Kind.ENTITY, "Q42"), None,
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


@pytest.mark.parametrize("plan", [True, False])
def test_verify_all_gives_each_question_its_outcome(endpoint: SparqlEndpoint, plan: bool) -> None:
    before = endpoint.calls
    outcomes = verify_all(endpoint, {key: case[0] for key, case in CASES.items()}, plan=plan)
    # Two batches, one for each request in flight; planning adds a count request for each end of the one
    # two-ended chain.
    assert endpoint.calls - before == (2 + 2 if plan else 2)
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


def test_a_question_t0_answers_alone_with_the_same_answer_is_rejected() -> None:
    """The outcome of a question's query against T0, for a question that passed against T1."""
    assert answered_before(Outcome(1, f"{WD}Q84"), Kind.ENTITY, "Q84") == "answerable_before_change"
    assert answered_before(Outcome(1, "1572.5"), Kind.QUANTITY, AREA) == "answerable_before_change"  # same value
    assert answered_before(Outcome(1, "1952-03-11T00:00:00Z"), Kind.TIME, BIRTH) == "answerable_before_change"
    assert answered_before(Outcome(1, f"{WD}Q61"), Kind.ENTITY, "Q84") is None  # another answer then
    assert answered_before(Outcome(0, None), Kind.ENTITY, "Q84") is None  # no answer then
    assert answered_before(Outcome(2, None), Kind.ENTITY, "Q84") is None  # not yet unique then
    assert answered_before(Outcome(-1, None, reason="html"), Kind.ENTITY, "Q84") == "sparql_unverifiable"


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


@pytest.mark.parametrize("plan", [True, False])
def test_batches_cost_one_call_each_and_agree_with_single_queries(endpoint: SparqlEndpoint, plan: bool) -> None:
    items = bulk()
    before = endpoint.calls
    outcomes = verify_all(endpoint, items, batch_size=200, plan=plan)
    assert endpoint.calls - before == math.ceil(500 / 200) + (2 if plan else 0)
    assert {o.count for o in outcomes.values()} == {0, 1, 2}
    for key, query in items.items():
        rows = endpoint.select(query.sparql())  # the standalone query stops at 2 rows
        assert min(outcomes[key].count, 2) == len(rows), key
        assert outcomes[key].answer == (rows[0]["x"] if len(rows) == 1 else None), key


@pytest.mark.parametrize("plan", [True, False])
def test_a_bad_query_costs_only_itself(endpoint: SparqlEndpoint, plan: bool) -> None:
    items = {key: case[0] for key, case in CASES.items()}
    # A 400 from the server, for the batch and (with plan) for the count request too.
    items["broken"] = Query((Pattern(X, "P31", Const(Kind.ENTITY, "Q5 }")), Pattern(X, "P27", Y1),
                             Pattern(Y1, "P36", item("Q84"))))
    outcomes = verify_all(endpoint, items, plan=plan)
    assert outcomes["broken"].count == -1 and "400" in (outcomes["broken"].reason or "")
    assert check(outcomes["broken"], Kind.ENTITY, "Q5") == "sparql_unverifiable"
    assert {k: o for k, o in outcomes.items() if k != "broken"} == verify_all(
        endpoint, {key: case[0] for key, case in CASES.items()}, plan=plan
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

    with LocalServer(Handler) as server:
        yield f"{server.url}/query"


@pytest.mark.parametrize("plan", [True, False])
def test_html_mid_run_marks_only_the_queries_it_hits(html_proxy: str, endpoint: SparqlEndpoint, plan: bool) -> None:
    marked = {
        "m1": Query((Pattern(X, "P214", Const(Kind.STRING, MARKER)),)),
        "m2": Query((Pattern(X, "P31", item("Q5")), Pattern(X, "P27", Y1),
                     Pattern(Y1, "P1448", Const(Kind.STRING, MARKER)))),
    }
    cases = list(CASES.items())
    # 35 queries dealt into 5 batches of 7: the marked ones land in the first and third, among normal ones.
    items = dict(
        [(k, c[0]) for k, c in cases[:10]] + [("m1", marked["m1"])] + [(k, c[0]) for k, c in cases[10:]]
        + [(f"q{i}", Query((Pattern(item(f"Q{1000 + i}"), "P1082", X),))) for i in range(12)]
        + [("m2", marked["m2"])] + [(f"q{i}", Query((Pattern(item(f"Q{1000 + i}"), "P1082", X),))) for i in range(12, 19)]
    )
    assert len(items) == 35 and list(items).index("m1") % 5 == 0 and list(items).index("m2") % 5 == 2
    proxied = SparqlEndpoint(html_proxy, backoff=0.001)
    outcomes = verify_all(proxied, items, batch_size=8, plan=plan)
    assert set(outcomes) == set(items)
    for key in marked:
        assert outcomes[key].count == -1 and "text/html" in (outcomes[key].reason or "")
        assert check(outcomes[key], Kind.ENTITY, "Q42") == "sparql_unverifiable"
    clean = {k: q for k, q in items.items() if k not in marked}
    assert {k: o for k, o in outcomes.items() if k not in marked} == verify_all(endpoint, clean, plan=plan)
    # 5 batches; each of the two hit is split 7 -> 3 + 4 -> ... -> 1: 6 more requests each. With plan, the
    # two count requests come first; the one with m2's marker fails alone, and m2 keeps its written order.
    assert proxied.calls == 5 + 2 * 6 + (2 if plan else 0)


@pytest.mark.parametrize("plan", [True, False])
def test_transient_failure_propagates(plan: bool) -> None:
    # A port held bound and never listened on refuses every connection, and no other process (a store another test
    # starts) can take it meanwhile, as it could a port found free and let go.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        dead = SparqlEndpoint(f"http://127.0.0.1:{held.getsockname()[1]}/query", retries=1, backoff=0.001)
        with pytest.raises(TransientSourceError):
            verify_all(dead, {key: case[0] for key, case in CASES.items()}, plan=plan)
    # Each request is tried twice; the two count requests give up on their own, the two batches propagate.
    assert dead.calls == (2 * 2 + 2 * 2 if plan else 2 * 2)


def test_batch_query_is_one_grouped_select() -> None:
    text = batch_query({key: case[0] for key, case in CASES.items()})
    assert text.count("UNION") == len(CASES) - 1
    assert text.count("GROUP BY") == 1 and "PREFIX wdt:" in text
    assert "odd" not in text  # queries are tagged by position: any key is safe


def test_shape_query_has_one_branch_per_shape() -> None:
    text = shape_query({key: case[0] for key, case in CASES.items()})
    shapes = {tuple((isinstance(pt.s, Var), isinstance(pt.o, Var)) for pt in case[0].patterns) for case in CASES.values()}
    assert text.count("VALUES") == len(shapes) == 6 and text.count("UNION") == len(shapes) - 1
    assert text.count("GROUP BY") == 1 and "PREFIX wdt:" in text


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


# Planned batches against one query per question, on generated questions ----------------------------

def test_join_order_starts_from_the_rarer_end_and_never_crosses() -> None:
    a, b, c = (Pattern(X, "P433", Const(Kind.STRING, "9")), Pattern(X, "P2860", Y1),
               Pattern(Y1, "P577", Const(Kind.TIME, BIRTH)))
    chain = Query((a, b, c))
    assert join_order(chain, {a: 2000, c: 3}).patterns == (c, b, a)
    assert join_order(chain, {a: 3, c: 2000}).patterns == (a, b, c)
    assert join_order(chain, {}).patterns == (a, b, c)  # nothing counted: the written order
    assert join_order(chain, {a: 2000}).patterns == (a, b, c)  # c's count failed: not ranked after a for that
    star = Query((Pattern(X, "P31", item("Q5")), Pattern(X, "P27", item("Q145"))))
    assert join_order(star, {star.patterns[0]: 900, star.patterns[1]: 40}).patterns == star.patterns[::-1]
    # After ?y1's rare pattern, the join to ?x comes before ?x's own constant, which would be a cross product.
    d = Pattern(X, "P106", item("Q36180"))
    assert join_order(Query((d, b, c)), {d: 50, c: 1}).patterns == (c, b, d)


Case = tuple[Query, Kind, str]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SparqlEndpoint, dict[str, Case]]]:
    """The pipeline's own L1/L2/L3 candidates for a generated world, served from its T1 RDF, and variants of
    them that must fail: another question's answer, a constant nobody has, a constraint dropped."""
    work = tmp_path_factory.mktemp("generated")
    before, after = make_world(4242).write(work)
    t0 = pipeline.read_snapshot(before, work, "t0", rdf=False)
    t1 = pipeline.read_snapshot(after, work, "t1", rdf=True)
    delta = pipeline.compute_delta(t0, t1, work)
    rows = pl.read_parquet(pipeline.synthesize(t1, delta, work, pipeline.Settings(seed=0))).sort("id").to_dicts()
    cases: dict[str, Case] = {}
    for n, row in enumerate(rows):
        query, kind, answer = from_json(json.loads(row["query_json"])), Kind(row["answer_kind"]), row["answer_id"]
        cases[row["id"]] = (query, kind, answer)
        cases[f"{row['id']}-reversed"] = (Query(query.patterns[::-1]), kind, answer)
        other = rows[(n + 1) % len(rows)]
        if other["answer_kind"] == row["answer_kind"] and other["answer_id"] != answer:
            cases[f"{row['id']}-other-answer"] = (query, kind, other["answer_id"])
        first = next(i for i, pt in enumerate(query.patterns) if isinstance(pt.s, Const) or isinstance(pt.o, Const))
        pt = query.patterns[first]
        nobody = Pattern(item("Q987654321"), pt.p, pt.o) if isinstance(pt.s, Const) else Pattern(
            pt.s, pt.p, item("Q987654321"))
        cases[f"{row['id']}-nobody"] = (Query((*query.patterns[:first], nobody, *query.patterns[first + 1:])),
                                        kind, answer)
        if len(query.patterns) > 1:
            cases[f"{row['id']}-wider"] = (Query(query.patterns[:1]), kind, answer)
    with LocalOxigraph(t1 / "rdf.nt", workdir=work) as server:
        yield SparqlEndpoint(server.query_url), cases


@pytest.mark.parametrize("plan", [True, False])
@pytest.mark.slow
def test_batches_give_every_generated_question_the_verdict_of_its_own_query(
        generated: tuple[SparqlEndpoint, dict[str, Case]], plan: bool) -> None:
    endpoint, cases = generated
    batched = verify_all(endpoint, {key: case[0] for key, case in cases.items()}, batch_size=97, plan=plan)
    verdicts = set()
    for key, (query, kind, answer) in cases.items():
        rows = endpoint.select(query.sparql())  # SELECT DISTINCT ?x ... LIMIT 2, as a user would ask
        alone = Outcome(len(rows), rows[0]["x"] if len(rows) == 1 else None)
        assert (min(batched[key].count, 2), batched[key].answer) == (alone.count, alone.answer), key
        assert check(batched[key], kind, answer) == check(alone, kind, answer), key
        verdicts.add(check(alone, kind, answer))
    assert verdicts == {None, "sparql_no_answer", "sparql_not_unique", "sparql_wrong_answer"}
    assert sum(len(case[0].patterns) == 3 for case in cases.values()) >= 10  # L3 chains, planned and not
    assert len(cases) > 200 and sum(batched[key].count == 1 for key in cases) > 100


def test_verified_records_carry_the_check_that_passed_them() -> None:
    """records_frame takes what it uses, the counts and the endpoint (it once also took an unused `checked_at`)."""
    from timelyqa.record import WikidataRecord, polars_schema
    from timelyqa.wikidata.candidates import CANDIDATE_SCHEMA, records_frame

    row = {name: None for name in CANDIDATE_SCHEMA}
    row |= {"id": "q1", "question": "Who?", "answer": "Tomasz Wielki", "answer_aliases": [], "source": "wikidata",
            "level": "L1", "sparql": "SELECT ?x WHERE { wd:Q1 wdt:P286 ?x }", "answer_id": "Q2",
            "query_triples": [["Q1", "P286", "?x"]], "delta_triple": ["Q1", "P286", "Q2"], "evidence": [],
            "generator": "wikidata_l1_v1"}
    passed = pl.DataFrame([row], schema=CANDIDATE_SCHEMA, orient="row")
    records = records_frame(passed, {"q1": 1}, "local oxigraph (T1)")
    assert records.columns == list(polars_schema(WikidataRecord))
    assert records["verification"].to_list() == [{"method": "sparql_unique_answer", "query": row["sparql"],
                                                  "endpoint": "local oxigraph (T1)", "result_count": 1,
                                                  "passed": True}]
