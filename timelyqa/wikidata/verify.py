"""Checks many questions' queries against a SPARQL endpoint in a few batched round trips."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.reasons import Reason
from timelyqa.sparql import SparqlEndpoint
from timelyqa.wikidata.query import ANSWER, PREFIXES, Const, Pattern, Query, Var
from timelyqa.wikidata.values import Kind, rdf_lexical, rdf_term

# Result variables of the batch query; the question's own variables are x, y1, y2...
_KEY, _COUNT, _VALUE = "tqa_key", "tqa_count", "tqa_answer"
UNVERIFIABLE = -1
# What join_order expects a pattern reached through a bound variable to add: a few rows, far fewer
# than a constant's thousands, so that a query walks out from its rarest constant.
_FANOUT_GUESS = 10
_UNKNOWN = 1 << 62

Shape = tuple[tuple[str | None, str | None], ...]


class SparqlReject(Reason):
    NO_ANSWER = "sparql_no_answer", "the question's SPARQL query finds no answer in T1"
    NOT_UNIQUE = "sparql_not_unique", "the question's SPARQL query finds more than one answer in T1"
    WRONG_ANSWER = "sparql_wrong_answer", "the question's SPARQL query finds one answer in T1, not the stated one"
    UNVERIFIABLE = "sparql_unverifiable", "the endpoint could not evaluate the question's query"


class ChangeReject(Reason):
    """Why a question that T1 answers rightly still tests nothing new."""

    ANSWERABLE_BEFORE_CHANGE = ("answerable_before_change", "T0 already gives the same answer alone: a model "
                                "trained before the change gets it right")


@dataclass(frozen=True)
class Outcome:
    """What the endpoint says about one query: how many distinct answers, and the answer when there is one.

    `count` is -1 when the endpoint could not evaluate the query even alone; `reason` then says why.
    """

    count: int
    answer: str | None
    reason: str | None = None


def verify_all(endpoint: SparqlEndpoint, items: dict[str, Query], *, batch_size: int = 200,
               concurrency: int = 2, plan: bool = True) -> dict[str, Outcome]:
    """An Outcome for every key, in max(ceil(len(items) / batch_size), concurrency) requests when the endpoint
    behaves, plus up to `concurrency` requests that count for the plan.

    With `plan` (for Oxigraph, which joins in the written order and spends about 0.12 ms parsing and
    planning every UNION branch), the client plans: one request counts the triples matching each
    constant pattern of the chains with a constant at both ends (L3), each such query is rewritten
    from its rarer end (`join_order`), and a batch is one UNION branch per query shape whose VALUES
    rows hold the queries (`shape_query`). A failed count costs only the order, never an outcome. With
    plan=False, for an engine that plans each query itself (Wikidata's Blazegraph), a batch is one
    UNION branch per query with its constants in place (`batch_query`), and nothing is counted.

    Up to `concurrency` requests are in flight at once (Wikidata's public endpoint allows five per client;
    a local Oxigraph answers each on its own thread). A batch the endpoint rejects (SourceContractError:
    HTML, a cut body, a 400) is split in halves down to single queries, so one bad query or a passing
    proxy hiccup costs only the queries that still fail. TransientSourceError (after the endpoint's own
    retries) propagates: the caller stops and retries the run.
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    keys = list(items)
    # Dealt like cards, so that each batch holds its share of the costly questions and none runs alone last;
    # never fewer batches than requests in flight, so that a small run keeps every slot busy too.
    n = min(len(keys), max(-(-len(keys) // batch_size), concurrency))
    outcomes: dict[str, Outcome] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        if plan:
            counts = _counts(endpoint, items, pool, concurrency)
            items = {key: join_order(query, counts) for key, query in items.items()}
        build = shape_query if plan else batch_query
        batches = [{k: items[k] for k in keys[i::n]} for i in range(n)]
        for result in pool.map(lambda batch: _verify_batch(endpoint, batch, build), batches):
            outcomes.update(result)
    return outcomes


# Batch queries -------------------------------------------------------------------------------------
# Both select ?tqa_key, COUNT(DISTINCT ?x) and MIN(STR(?x)), grouped by key. COUNT(DISTINCT ?x) counts
# RDF terms, so `"a"@en` and `"a"@fr` are two answers even though their STR() is equal; MIN(STR(?x)) is
# then the single answer's lexical value whenever the count is 1. A query with no solution has no
# group: its key is simply absent from the results. Keys are the queries' positions in the batch.

def batch_query(items: dict[str, Query]) -> str:
    """One SELECT with a UNION branch per query, its constants in place, tagged with the query's position."""
    if not items:
        raise ValueError("batch_query needs at least one query")
    branches = [f"{query.where()} BIND({n} AS ?{_KEY})" for n, query in enumerate(items.values())]
    return _grouped(_balanced_union(branches))


def shape_query(items: dict[str, Query]) -> str:
    """One SELECT with a UNION branch per query shape: `VALUES (?tqa_key ?tqa_key_p0 ?tqa_key_o0 ...) { rows }
    ?x ?tqa_key_p0 ?tqa_key_o0 . ...`, each row a query's position, properties and constants.

    A VALUES row costs only its index lookups, joined in the patterns' order, where a UNION branch of its
    own costs Oxigraph 0.12 ms more: 500 questions of three shapes are three branches, not 500.
    """
    if not items:
        raise ValueError("shape_query needs at least one query")
    shapes: dict[Shape, dict[int, Query]] = {}
    for n, query in enumerate(items.values()):
        shapes.setdefault(_shape(query), {})[n] = query
    return _grouped(_balanced_union([_values_branch(shape, group) for shape, group in shapes.items()]))


def _grouped(where: str) -> str:
    return (f"{PREFIXES}SELECT ?{_KEY} (COUNT(DISTINCT ?{ANSWER}) AS ?{_COUNT}) (MIN(STR(?{ANSWER})) AS ?{_VALUE})\n"
            f"WHERE {{\n{where}\n}}\nGROUP BY ?{_KEY}")


def _shape(query: Query) -> Shape:
    """The patterns with properties and constants left out: each term its variable's name, or None."""
    return tuple((_var(pt.s), _var(pt.o)) for pt in query.patterns)


def _var(t: Const | Var) -> str | None:
    return t.name if isinstance(t, Var) else None


def _values_branch(shape: Shape, group: dict[int, Query]) -> str:
    columns, where = [f"?{_KEY}"], []
    for i, (s, o) in enumerate(shape):
        s_term, o_term = f"?{s}" if s else f"?{_KEY}_s{i}", f"?{o}" if o else f"?{_KEY}_o{i}"
        columns += [f"?{_KEY}_p{i}"] + ([s_term] if s is None else []) + ([o_term] if o is None else [])
        where.append(f"{s_term} ?{_KEY}_p{i} {o_term} .")
    rows = []
    for n, query in group.items():
        row = [str(n)]
        for pt in query.patterns:
            row += [f"wdt:{pt.p}"] + [_term(t) for t in (pt.s, pt.o) if isinstance(t, Const)]
        rows.append(f"({' '.join(row)})")
    return f"VALUES ({' '.join(columns)}) {{\n{chr(10).join(rows)}\n}} {' '.join(where)}"


def _balanced_union(branches: list[str]) -> str:
    """`{A} UNION {B} UNION {C}...` nests left-deep, which Oxigraph evaluates in time quadratic in the branch
    count (200 branches: 70 ms, 1,600: 6 s); a balanced tree of the same union stays linear (27 ms, 0.19 s)."""
    if len(branches) == 1:
        return branches[0]
    half = len(branches) // 2
    return f"{{ {_balanced_union(branches[:half])} }}\nUNION\n{{ {_balanced_union(branches[half:])} }}"


def _term(c: Const) -> str:
    return f"wd:{c.form}" if c.kind is Kind.ENTITY else rdf_term(c.kind, c.form)


# Join order ----------------------------------------------------------------------------------------

def join_order(query: Query, counts: dict[Pattern, int]) -> Query:
    """The same patterns (so the same answers), cheapest first: start from the constant pattern with the
    fewest matches (`counts`; among ties and unknowns, the written order), then always take a pattern
    joined to what is bound, fully bound ones (checks) first.

    `?x p1 "9" . ?x p2 ?y . ?y p3 c3` with 2,000 subjects of "9" and 3 of c3 becomes
    `?y p3 c3 . ?x p2 ?y . ?x p1 "9"`: a few dozen index lookups instead of 20,000.
    """
    if not all(pt in counts for pt in query.patterns if _is_start(pt)):
        counts = {}  # half the counts would rank an uncounted pattern last, whatever it matches
    todo, bound, out = list(query.patterns), set[str](), []
    while todo:
        best = min(todo, key=lambda pt: _cost(pt, bound, counts))  # min keeps the first of equals
        todo.remove(best)
        out.append(best)
        bound |= {t.name for t in (best.s, best.o) if isinstance(t, Var)}
    return Query(tuple(out))


def _cost(pt: Pattern, bound: set[str], counts: dict[Pattern, int]) -> tuple[int, int]:
    """(0 if the pattern joins what is bound, 1 for a cross product; how many rows it is expected to add)."""
    names = {t.name for t in (pt.s, pt.o) if isinstance(t, Var)}
    if names <= bound:
        return (0, 0)  # a check on rows already there
    if names & bound:
        return (0, _FANOUT_GUESS)
    return (int(bool(bound)), counts.get(pt, _UNKNOWN) if _is_start(pt) else _UNKNOWN)


def _is_start(pt: Pattern) -> bool:
    """One constant and one variable: a pattern a query can start from."""
    return isinstance(pt.s, Const) != isinstance(pt.o, Const)


def _two_ended_chain(query: Query) -> bool:
    """Two patterns a query can start from, and a join between two variables that makes the choice count."""
    two_vars = any(isinstance(pt.s, Var) and isinstance(pt.o, Var) for pt in query.patterns)
    return two_vars and sum(map(_is_start, query.patterns)) > 1


def _counts(endpoint: SparqlEndpoint, items: dict[str, Query], pool: ThreadPoolExecutor,
            parts: int) -> dict[Pattern, int]:
    """How many triples match each start pattern of the chains with two ends, in `parts` requests.

    Stars (`?x p1 c1 . ?x p2 c2`, L2) keep their written order: synthesis already writes them rarest
    first, and their common constraints are costly to count (the bench's 668 L2 questions: 121,800
    matches counted, to reorder 2 of them, 10% slower in all). A chain's order is the one synthesis
    cannot choose well (its hop comes last), and the one that costs most when wrong.
    """
    starts = sorted({pt for query in items.values() if _two_ended_chain(query)
                     for pt in query.patterns if _is_start(pt)}, key=Pattern.sparql)
    chunks = [starts[n::parts] for n in range(parts) if starts[n::parts]]
    counts: dict[Pattern, int] = {}
    for part in pool.map(lambda chunk: _count_chunk(endpoint, chunk), chunks):
        counts |= part
    return counts


def _count_chunk(endpoint: SparqlEndpoint, patterns: list[Pattern]) -> dict[Pattern, int]:
    """The counts, split in halves on a rejected request so that one bad constant loses only its own count.

    Any failure costs only the order (the batches report errors themselves), so a busy endpoint is not
    asked again here either."""
    try:
        rows = endpoint.select(count_query(patterns))
        return dict.fromkeys(patterns, 0) | {patterns[int(row[_KEY])]: int(row[_COUNT]) for row in rows}
    except TransientSourceError:
        return {}
    except (SourceContractError, KeyError, ValueError, IndexError):
        if len(patterns) == 1:
            return {}
        half = len(patterns) // 2
        return _count_chunk(endpoint, patterns[:half]) | _count_chunk(endpoint, patterns[half:])


def count_query(patterns: list[Pattern]) -> str:
    """One SELECT giving, for the i-th pattern (one constant and one variable each), ?tqa_key i and how many
    triples match it as ?tqa_count; a pattern nothing matches has no row. VALUES rows that bind the
    constant are joined by index lookups, so the request costs about the matches it counts."""
    by_subject = [f"({i} {_term(pt.s)} wdt:{pt.p})" for i, pt in enumerate(patterns) if isinstance(pt.s, Const)]
    by_object = [f"({i} wdt:{pt.p} {_term(pt.o)})" for i, pt in enumerate(patterns) if isinstance(pt.o, Const)]
    parts = ([f"{{ VALUES (?{_KEY} ?s ?p) {{ {' '.join(by_subject)} }} ?s ?p ?o }}"] if by_subject else []) + (
        [f"{{ VALUES (?{_KEY} ?p ?o) {{ {' '.join(by_object)} }} ?s ?p ?o }}"] if by_object else [])
    return (f"{PREFIXES}SELECT ?{_KEY} (COUNT(*) AS ?{_COUNT})\nWHERE {{ {' UNION '.join(parts)} }}\n"
            f"GROUP BY ?{_KEY}")


# Outcomes ------------------------------------------------------------------------------------------

def _verify_batch(endpoint: SparqlEndpoint, batch: dict[str, Query],
                  build: Callable[[dict[str, Query]], str]) -> dict[str, Outcome]:
    try:
        return _outcomes(batch, endpoint.select(build(batch)))
    except SourceContractError as exc:
        if len(batch) == 1:
            return {key: Outcome(UNVERIFIABLE, None, reason=str(exc)) for key in batch}
        keys = list(batch)
        half = len(keys) // 2
        left = _verify_batch(endpoint, {k: batch[k] for k in keys[:half]}, build)
        return left | _verify_batch(endpoint, {k: batch[k] for k in keys[half:]}, build)


def _outcomes(batch: dict[str, Query], rows: list[dict[str, str]]) -> dict[str, Outcome]:
    """Each row names a query by its position in the batch."""
    keys = list(batch)
    outcomes = {key: Outcome(0, None) for key in keys}
    for row in rows:
        tag = row.get(_KEY, "")
        if not tag.isdigit() or int(tag) >= len(keys):
            raise SourceContractError(f"batch result names an unknown query tag {tag!r}")
        key = keys[int(tag)]
        try:
            count = int(row[_COUNT])
        except (KeyError, ValueError) as exc:
            raise SourceContractError(f"batch result for {key!r} has no integer count: {row!r}") from exc
        outcomes[key] = Outcome(count, row.get(_VALUE) if count == 1 else None)
    return outcomes


def expected_lexical(kind: Kind, form: str) -> str:
    """What Outcome.answer holds when the answer is this value: the entity IRI, else the literal's lexical form."""
    return rdf_lexical(kind, form)[0]


def check(outcome: Outcome, kind: Kind, form: str) -> SparqlReject | None:
    """None when the query has exactly the expected answer; otherwise the reject reason."""
    if outcome.count < 0:
        return SparqlReject.UNVERIFIABLE
    if outcome.count == 0:
        return SparqlReject.NO_ANSWER
    if outcome.count > 1:
        return SparqlReject.NOT_UNIQUE
    if outcome.answer is None or not _same_value(kind, outcome.answer, expected_lexical(kind, form)):
        return SparqlReject.WRONG_ANSWER
    return None


def answered_before(before: Outcome, kind: Kind, form: str) -> ChangeReject | SparqlReject | None:
    """None when T0 does not give the question's answer as its only one; otherwise the reject reason.

    A question whose answer T0 already gives alone tests nothing new: a model trained before the change
    gets it right. This happens when the changed triple held at T0 too (its subject lost another value
    of the property), when an L3 hop stands in for the changed triple and matches the old value as well,
    and when a value changed only its spelling ("+1.8" to "+1.80"). A query T0 could not evaluate is
    unverifiable: whether it tests anything new is not known.
    """
    verdict = check(before, kind, form)
    if verdict is None:
        return ChangeReject.ANSWERABLE_BEFORE_CHANGE
    return SparqlReject.UNVERIFIABLE if verdict == SparqlReject.UNVERIFIABLE else None


def _same_value(kind: Kind, got: str, expected: str) -> bool:
    # Stores print xsd:decimal in their own canonical form (Oxigraph answers 12.5 for "12.50"): compare values.
    if kind is Kind.QUANTITY:
        try:
            return Decimal(got) == Decimal(expected)
        except InvalidOperation:
            return False
    return got == expected
