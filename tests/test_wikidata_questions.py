"""Questions end to end on random worlds: each one checked against an independent reading of the T1 dump.

`tests/worldgen.py` makes the worlds (seeded, each a different world), `pipeline.run` makes the questions
with its default local Oxigraph, and `tests/truthy.py` re-derives every answer from the raw dump JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.truthy import Snapshot, read_entities
from tests.test_wikidata_gate import question_word_problem
from tests.worldgen import entity, item_value, make_world, quantity_value, statement, write_dump
from timelyqa.oxigraph import LocalOxigraph
from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject, judge
from timelyqa.rewards import Gold, grade, normalize
from timelyqa.wikidata.filters import DENY_LIST
from timelyqa.wikidata.gate import RULES, WikidataQualityReject
from timelyqa.wikidata.pipeline import Settings, run
from timelyqa.wikidata.snapshot import read_snapshot
from timelyqa.wikidata.synth import GENERATORS

pytestmark = pytest.mark.slow  # each world runs the whole pipeline through a local Oxigraph server

WORLDS = (1207, 3319, 5581, 8846)
OTHER_SEED = 7
"""A second `Settings(seed=...)`, run on the first two worlds: other choices, the same guarantees."""
FORMATS = (("t0.json.gz", "t1.json.bz2"), ("t0.json", "t1.json.gz"), ("t0.json.bz2", "t1.json"),
           ("t0.json.gz", "t1.json.gz"))
BROKEN_LINE = '{"type":"item","id":"Q999","labels":{"en":{"language":"en","value":"Cut'
RAW_ID = re.compile(r"\b[QPL]\d+\b")
ITEM = re.compile(r"Q\d+")
NOT_ANSWERS = {"external-id", "commonsMedia", "url", "globe-coordinate", "geo-shape", "tabular-data"}


@dataclass
class Run:
    world: int
    settings: Settings
    before: Path
    after: Path
    out: Path
    manifest: dict[str, Any]
    questions: pl.DataFrame
    rejected: pl.DataFrame
    t0: Snapshot
    t1: Snapshot
    datatypes: dict[str, str]

    def rows(self) -> Iterator[dict[str, Any]]:
        yield from self.questions.iter_rows(named=True)

    def name(self, q: dict[str, Any] | None = None) -> str:
        where = f"world {self.world}, Settings(seed={self.settings.seed})"
        return f"{where}: {q['level']} {q['question']!r} {q['query_triples']}" if q else where


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    out: list[Run] = []
    for world_seed, (t0_name, t1_name) in zip(WORLDS, FORMATS, strict=True):
        folder = tmp_path_factory.mktemp(f"world{world_seed}")
        before, after = make_world(world_seed).write(folder, t0_name=t0_name, t1_name=t1_name,
                                                     t1_bad_lines=[BROKEN_LINE + ","])
        t0, t1 = Snapshot.read(before), Snapshot.read(after)
        datatypes = {e["id"]: e.get("datatype") for e in t1.entities.values() if e["id"].startswith("P")}
        for seed in (0, OTHER_SEED) if world_seed in WORLDS[:2] else (0,):
            settings = Settings(seed=seed)
            dest = folder / f"out-{seed}"
            manifest = run(before, after, dest, settings=settings).model_dump(mode="json")
            out.append(Run(world_seed, settings, before, after, dest, manifest,
                           pl.read_parquet(dest / "questions.parquet"), pl.read_parquet(dest / "rejected.parquet"),
                           t0, t1, datatypes))
    return out


def problems(runs: list[Run], check: Callable[[Run, dict[str, Any]], str | None]) -> list[str]:
    found = []
    for r in runs:
        assert r.questions.height > 50, f"{r.name()}: only {r.questions.height} questions"
        for q in r.rows():
            if (why := check(r, q)) is not None:
                found.append(f"{r.name(q)}: {why}")
    return found


def show(found: list[str]) -> str:
    return f"{len(found)} questions wrong, first ones:\n" + "\n".join(found[:8])


# Every released question -------------------------------------------------------------------------

def test_every_question_has_exactly_its_answer_in_t1(runs: list[Run]) -> None:
    memo: dict[tuple[int, str], set[str]] = {}

    def check(r: Run, q: dict[str, Any]) -> str | None:
        key = (r.world, json.dumps(q["query_triples"]))
        if key not in memo:
            memo[key] = r.t1.answers(q["query_triples"])
        if memo[key] == {q["answer_id"]}:
            return None
        return f"truthy answers {sorted(memo[key])[:5]} ({len(memo[key])}), released {q['answer_id']}"

    found = problems(runs, check)
    assert not found, show(found)


def test_no_question_has_its_answer_alone_in_t0(runs: list[Run]) -> None:
    """A question T0 already answers with the same single answer tests nothing new; the worlds make such
    questions (L2 questions on a club a player kept when he left another, L3 hops that match the old value
    too), and each must be rejected, never released."""
    def check(r: Run, q: dict[str, Any]) -> str | None:
        before = r.t0.answers(q["query_triples"])
        return f"T0 answers {q['answer_id']} alone too" if before == {q["answer_id"]} else None

    found = problems(runs, check)
    assert not found, show(found)
    for r in runs:
        rejected = r.rejected.filter(pl.col("reason") == "answerable_before_change")
        assert rejected.height > 0, r.name()
        released = set(r.questions["id"])
        for row in rejected.iter_rows(named=True):
            level, qid = row["detail"].split(":")[0].split(" ")
            assert row["stage"] == "verify" and level in ("L1", "L2", "L3") and "at T0" in row["detail"], row
            assert qid not in released, row


def test_every_question_is_anchored_on_a_real_change(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        s, p, o = q["delta_triple"]
        if not r.t1.has(s, p, o):
            return f"delta triple {q['delta_triple']} is not a truthy triple of T1"
        if r.t0.has(s, p, o) and r.t0.objects.get((s, p)) == r.t1.objects.get((s, p)):
            return f"delta triple {q['delta_triple']} did not change: ({s}, {p}) is {sorted(r.t1.objects[(s, p)])}"
        if q["answer_id"] not in (s, o):
            return f"the answer {q['answer_id']} is neither end of the delta triple {q['delta_triple']}"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_no_question_uses_a_deny_listed_property_or_an_identifier(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        for _, p, _ in q["query_triples"]:
            if p in DENY_LIST:
                return f"deny-listed {p}"
            if r.datatypes.get(p) in NOT_ANSWERS:
                return f"{p} holds {r.datatypes[p]} values"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_question_text_names_everything_by_its_english_label(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        if RAW_ID.search(q["question"]) or RAW_ID.search(q["answer"]):
            return "a raw id in the text"
        mentioned = [p for _, p, _ in q["query_triples"]]
        for term in (t for s, _, o in q["query_triples"] for t in (s, o)):
            mentioned += [w for w in term.split(" ") if ITEM.fullmatch(w)]  # items, and units of quantities
        if ITEM.fullmatch(q["answer_id"]):
            mentioned.append(q["answer_id"])
            if q["answer"] != r.t1.labels.get(q["answer_id"]):
                return f"answer {q['answer']!r} is not the English label of {q['answer_id']}"
        if unlabelled := [m for m in mentioned if m not in r.t1.labels]:
            return f"{unlabelled} have no English label in T1"
        named = [r.t1.labels[t] for s, _, o in q["query_triples"] for t in (s, o) if ITEM.fullmatch(t)]
        if missing := [n for n in named if n not in q["question"]]:
            return f"{missing} not named in the question"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_levels_have_their_shape_and_all_three_occur(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        variables = {t for s, _, o in q["query_triples"] for t in (s, o) if t.startswith("?")}
        shape = {"L1": len(q["query_triples"]) == 1 and variables == {"?x"},
                 "L2": len(q["query_triples"]) >= 2 and variables == {"?x"},
                 "L3": len(variables) >= 2 and "?x" in variables}[q["level"]]
        if not shape:
            return "the query does not have the level's shape"
        if q["generator"] != GENERATORS[q["level"]] or not re.fullmatch(rf"wikidata_{q['level'].lower()}_v\d+",
                                                                        q["generator"]):
            return f"generator {q['generator']}"
        return None

    found = problems(runs, check)
    assert not found, show(found)
    assert {lv for r in runs for lv in r.questions["level"]} == {"L1", "L2", "L3"}
    for world in WORLDS:
        assert {lv for r in runs if r.world == world for lv in r.questions["level"]} == {"L1", "L2", "L3"}


def test_every_question_was_verified_by_sparql_with_one_result(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        v = q["verification"]
        if not (v["passed"] is True and v["result_count"] == 1 and v["query"] == q["sparql"]):
            return f"verification {v}"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_each_question_has_its_own_id(runs: list[Run]) -> None:
    duplicated = [f"{r.name()}: {q}" for r in runs
                  for q in r.questions.filter(pl.col("id").is_duplicated())["question"]]
    assert not duplicated, "\n".join(duplicated[:6])


UNIT_SYMBOLS = {"Q11573": "m"}
"""The worlds' units with an English label, as pint writes them (metre: m)."""


def expected_answer(r: Run, q: dict[str, Any]) -> tuple[str, dict[str, Any], list[str] | None]:
    """(type, value fields, aliases or None when any) the answer must have, read from the raw T1 dump: an item is
    an entity with its English aliases, a quantity a number or a quantity in its unit, a time a date at its
    precision (day 11, month 10, year 9; a Julian date is text), a string or monolingual text a text."""
    form = q["answer_id"]
    if ITEM.fullmatch(form):
        e = r.t1.entities[form]
        raw = [a["value"] for a in (e.get("aliases") or {}).get("en", [])]
        return "entity", {}, [a for n, a in enumerate(raw) if a not in raw[:n] and a != r.t1.labels[form]]
    datatype = r.datatypes[q["query_triples"][0][1]]  # a value is only ever the answer of an L1 question
    if datatype in ("string", "monolingualtext"):
        return "text", {}, None
    if datatype == "quantity":
        m = re.fullmatch(r"([+-][0-9.]+)(?: (Q[0-9]+))?", form)
        assert m, form
        amount = Decimal(m.group(1))
        value = {"number": amount, "precision": amount.as_tuple().exponent, "unit": UNIT_SYMBOLS.get(m.group(2))}
        return ("quantity" if m.group(2) else "number"), value, None
    m = re.fullmatch(r"\+([0-9]{4})-([0-9]{2})-([0-9]{2})T00:00:00Z/(9|10|11)(/julian)?", form)
    assert datatype == "time" and m, f"an answer the worlds do not make: {form} ({datatype})"
    if m.group(5):
        return "text", {}, None
    iso = "-".join(m.groups()[: {"9": 1, "10": 2, "11": 3}[m.group(4)]])
    return "date", {"date": iso, "date_precision": {"9": "year", "10": "month", "11": "day"}[m.group(4)]}, None


def test_every_answer_has_the_type_wikidatas_datatype_gives(runs: list[Run]) -> None:
    seen: Counter[str] = Counter()

    def check(r: Run, q: dict[str, Any]) -> str | None:
        kind, value, aliases = expected_answer(r, q)
        seen[kind] += 1
        if q["answer_type"] != kind:
            return f"answer {q['answer']!r} ({q['answer_id']}) typed {q['answer_type']}, not {kind}"
        got = {k: (Decimal(v) if k == "number" else v) for k, v in q["answer_value"].items() if k in value}
        if got != value or any(v is not None for k, v in q["answer_value"].items() if k not in value):
            return f"answer value {q['answer_value']}, not {value}"
        if aliases is not None and q["answer_aliases"] != aliases:
            return f"aliases {q['answer_aliases']}, not the entity's English aliases {aliases}"
        return None

    found = problems(runs, check)
    assert not found, show(found)
    assert {"entity", "number", "quantity", "date"} <= set(seen), seen
    assert sum(1 for r in runs for q in r.rows() if q["answer_aliases"] and q["answer_type"] == "entity") > 0


def wrong_value(q: dict[str, Any]) -> str:
    """The row's answer one step off at its own precision, in a form the right value would be accepted in."""
    value = q["answer_value"]
    if q["answer_type"] in ("number", "quantity"):
        off = Decimal(value["number"]) + Decimal(1).scaleb(value["precision"])
        return f"{off} {value['unit']}" if value["unit"] else str(off)
    fields = [int(f) for f in value["date"].split("-")]
    if len(fields) == 3:
        return (date(*fields) - timedelta(days=1)).isoformat()
    return "-".join([str(fields[0] - 1), *(f"{f:02d}" for f in fields[1:])])


def test_every_accepted_form_of_the_gold_grades_right_and_a_wrong_value_wrong(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        gold = Gold.of(q["answer"], q["answer_aliases"], q["answer_type"], q["answer_value"])
        forms = [q["answer"], *q["answer_aliases"]]
        if q["answer_type"] in ("number", "quantity"):
            forms.append(str(Decimal(q["answer_value"]["number"])))  # the bare number, in the question's unit
        if q["answer_type"] == "date":
            forms.append(q["answer_value"]["date"])
        if failed := [f for f in forms if grade(f, gold) != 1.0]:
            return f"gold {q['answer']!r} refuses its own forms {failed}"
        if q["answer_type"] in ("number", "quantity", "date") and grade(wrong := wrong_value(q), gold) != 0.0:
            return f"gold {q['answer']!r} takes the wrong value {wrong!r}"
        others = [o for o in r.questions.filter(pl.col("answer_id") != q["answer_id"])["answer"]
                  if normalize(o) not in {normalize(f) for f in forms}]
        if q["answer_type"] == "entity" and (taken := [o for o in others if grade(o, gold) != 0.0]):
            return f"gold {q['answer']!r} takes other answers {taken[:3]}"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_a_quantity_question_says_its_unit(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        if q["answer_type"] == "quantity" and not q["question"].endswith(", in metres?"):
            return f"a question for {q['answer']!r} that does not say the unit"
        if q["answer_type"] == "number" and re.search(r", in [a-z ]+\?$", q["question"]):
            return f"a question for the count {q['answer']!r} that names a unit"
        return None

    found = problems(runs, check)
    assert not found, show(found)
    assert any(q["answer_type"] == "quantity" for r in runs for q in r.rows())


def test_a_quantity_in_a_clause_says_its_unit_in_words(runs: list[Run]) -> None:
    # The worlds' heights are in metres (Q11573): "Who is 1.85 metres tall?", never v1's "1.85 metre".
    def check(r: Run, q: dict[str, Any]) -> str | None:
        for amount in re.findall(r"\b([0-9][0-9,.]*) metres?\b", q["question"]):
            if q["question"].count(f"{amount} metre{'' if Decimal(amount) == 1 else 's'}") == 0:
                return f"{amount} in the wrong number"
        return None

    found = problems(runs, check)
    assert not found, show(found)
    assert any(re.search(r"is [0-9.]+ metres tall and", q["question"]) for r in runs for q in r.rows())


# The quality gate ------------------------------------------------------------------------------------

def test_every_question_word_follows_its_answers_class(runs: list[Run]) -> None:
    """Who for a human, which <class> for an item of one class, when for a date: the classes read from the raw T1."""
    found = problems(runs, lambda r, q: question_word_problem(q, r.t1))
    assert not found, show(found)
    rows = [q for r in runs for q in r.rows()]
    assert sum(q["question"].startswith("Which association football club ") for q in rows) >= 10
    assert sum(q["question"].startswith("Who ") for q in rows) >= 100
    assert not [q["question"] for q in rows if re.search(r"\b(?:works|plays) as (?!an? )[a-z]", q["question"])]


def test_no_question_names_an_item_twice_or_its_answer(runs: list[Run]) -> None:
    def check(r: Run, q: dict[str, Any]) -> str | None:
        objects = Counter(o for _, _, o in q["query_triples"] if ITEM.fullmatch(o))
        if twice := [r.t1.labels[o] for o, n in objects.items() if n > 1]:
            return f"{twice} named twice"
        if f" {normalize(q['answer'])} " in f" {normalize(q['question'])} ":
            return "the question says its answer"
        return None

    found = problems(runs, check)
    assert not found, show(found)


def test_the_gate_drops_before_verification_and_its_drops_are_counted(runs: list[Run]) -> None:
    for r in runs:
        counts, gated = r.manifest["counts"], r.rejected.filter(pl.col("stage") == GATE_STAGE)
        funnel = list(counts)
        assert funnel.index("rendered") < funnel.index(GATE_PASSED) < funnel.index("verified"), r.name()
        assert counts["rendered"] - counts[GATE_PASSED] == gated.height, r.name()
        assert counts[GATE_PASSED] >= counts["verified"] >= r.questions.height
        assert [q["question"] for q in r.rows() if judge(q, RULES) is not None] == [], r.name()
        for row in gated.iter_rows(named=True):  # each drop names the question, its level and its generator
            item = json.loads(row["item"])
            assert item["question"] in row["detail"] and item["level"] in row["detail"], row
            assert row["reason"] in {str(x) for family in (QualityReject, WikidataQualityReject) for x in family}
    # Some L1 questions cannot help saying their answer ("Where is San Alve Rovers headquartered?" -> San Alve): the
    # gate drops them, and they are counted.
    assert sum(r.rejected.filter(pl.col("reason") == "answer_in_question").height for r in runs) > 0


# The funnel -----------------------------------------------------------------------------------------

def test_rejects_are_kept_and_counted_as_the_manifest_says(runs: list[Run]) -> None:
    for r in runs:
        assert dict(Counter(r.rejected["reason"])) == r.manifest["rejects"], r.name()
        assert r.manifest["counts"]["questions"] == r.questions.height
        assert r.manifest["rejects"]["malformed_json"] == 1  # the broken line, and nothing else lost
        (line,) = r.rejected.filter(pl.col("reason") == "malformed_json")["detail"]
        assert str(r.after) in line
        assert r.manifest["inputs"]["before"]["sha256"] == hashlib.sha256(r.before.read_bytes()).hexdigest()
        assert r.manifest["inputs"]["after"]["sha256"] == hashlib.sha256(r.after.read_bytes()).hexdigest()
        assert r.rejected["detail"].str.len_chars().min() > 0


def test_every_filter_reject_states_a_true_reason(runs: list[Run]) -> None:
    def false_reason(r: Run, reason: str, s: str, p: str, o: str) -> bool:
        unit = o.split(" ")[1] if " " in o and ITEM.fullmatch(o.split(" ")[-1]) else None
        return {"deny_listed_property": lambda: p not in DENY_LIST,
                "unaskable_datatype": lambda: r.datatypes.get(p) not in NOT_ANSWERS | {"math", "musical-notation"},
                "property_without_english_label": lambda: p in r.t1.labels,
                "subject_without_english_label": lambda: s in r.t1.labels,
                "object_without_english_label": lambda: o in r.t1.labels,
                "unit_without_english_label": lambda: unit is None or unit in r.t1.labels,
                }.get(reason, lambda: False)()

    wrong = []
    for r in runs:
        for row in r.rejected.filter(pl.col("stage") == "filter").iter_rows(named=True):
            s, p, o = json.loads(row["item"])["delta_triple"]
            if false_reason(r, row["reason"], s, p, o):
                wrong.append(f"{r.name()}: {row['reason']}: {row['detail']}")
    assert not wrong, f"{len(wrong)} rejects with a false reason:\n" + "\n".join(wrong[:6])


# Determinism ----------------------------------------------------------------------------------------

def test_the_same_inputs_give_the_same_questions_in_another_process(runs: list[Run], tmp_path: Path) -> None:
    """Python's string hashing differs between processes; the questions must not."""
    first = next(r for r in runs if r.settings.seed == 0)
    cli = Path(sys.executable).parent / "timelyqa"
    env = {**os.environ, "PYTHONHASHSEED": "4242"}
    proc = subprocess.run([str(cli), "wikidata", "--before", str(first.before), "--after", str(first.after),
                           "--out", str(tmp_path / "again")], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = pl.read_parquet(tmp_path / "again" / "questions.parquet")
    columns = ["id", "question", "answer", "level", "answer_id", "query_triples", "delta_triple", "sparql"]
    assert again.select(columns).rows() == first.questions.select(columns).rows()


# A small world made by hand: the two kinds of change that should make an L1 question ---------------

MODIFIED_T0 = datetime(2026, 1, 10, tzinfo=UTC)
MODIFIED_T1 = datetime(2026, 9, 1, tzinfo=UTC)


def _small_world() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def props() -> list[dict[str, Any]]:
        return [entity(p, label, kind="property", datatype=dt, modified=MODIFIED_T0)
                for p, label, dt in (("P54", "member of sports team", "wikibase-item"),
                                     ("P2048", "height", "quantity"),
                                     ("P27", "country of citizenship", "wikibase-item"))]

    def person(q: str, name: str, clubs: list[str], height: str, modified: datetime) -> dict[str, Any]:
        e = entity(q, name, modified=modified)
        e["claims"]["P27"] = [statement(f"{q}$c", "P27", item_value("Q3000"))]
        e["claims"]["P54"] = [statement(f"{q}$t{n}", "P54", item_value(c)) for n, c in enumerate(clubs)]
        e["claims"]["P2048"] = [statement(f"{q}$h", "P2048", quantity_value(height, "Q11573"))]
        return e

    fixed = [entity("Q11573", "metre", modified=MODIFIED_T0), entity("Q3000", "Veloria", modified=MODIFIED_T0),
             entity("Q2001", "Alder Rovers", modified=MODIFIED_T0),
             entity("Q2002", "Sporting Kestrel", modified=MODIFIED_T0)]
    squad = [person(f"Q{1000 + n}", name, ["Q2001"], f"+1.{70 + n}", MODIFIED_T0)
             for n, name in enumerate(("Mateo Costa", "Karim Haddad", "Ingrid Berg"))]
    t0 = props() + fixed + squad + [person("Q1100", "Lucas Andrade", ["Q2002"], "+1.85", MODIFIED_T0)]
    # T1: Lucas grows a centimetre; Yuki, new, played for Alder Rovers in two spells (two statements).
    t1 = props() + fixed + squad + [person("Q1100", "Lucas Andrade", ["Q2002"], "+1.86", MODIFIED_T1),
                                    person("Q1200", "Yuki Nakamura", ["Q2001", "Q2001"], "+1.79", MODIFIED_T1)]
    return t0, t1


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    folder = tmp_path_factory.mktemp("small")
    t0, t1 = _small_world()
    before, after = write_dump(t0, folder / "t0.json"), write_dump(t1, folder / "t1.json")
    run(before, after, folder / "out")
    questions = pl.read_parquet(folder / "out" / "questions.parquet")
    # Every question of this world holds too, by the same independent reading.
    snapshot = Snapshot.of(read_entities(after))
    for q in questions.iter_rows(named=True):
        assert snapshot.answers(q["query_triples"]) == {q["answer_id"]}, q["question"]
    return questions


def _asked(questions: pl.DataFrame, delta: list[str], level: str = "L1") -> list[tuple[str, str]]:
    rows = questions.filter((pl.col("level") == level) & (pl.col("delta_triple") == delta))
    return list(zip(rows["question"], rows["answer"], strict=True))


def test_a_new_citizen_is_asked_about(small_run: pl.DataFrame) -> None:
    assert _asked(small_run, ["Q1200", "P27", "Q3000"]) == [("Of which country is Yuki Nakamura a citizen?",
                                                             "Veloria")]


def test_a_changed_height_with_a_unit_gives_an_l1_question_in_that_unit(small_run: pl.DataFrame) -> None:
    assert _asked(small_run, ["Q1100", "P2048", "+1.86 Q11573"]) == [("How tall is Lucas Andrade, in metres?",
                                                                     "1.86 m")]
    (row,) = small_run.filter(pl.col("answer_id") == "+1.86 Q11573").iter_rows(named=True)
    assert row["answer_type"] == "quantity"
    assert (row["answer_value"]["number"], row["answer_value"]["precision"], row["answer_value"]["unit"]) == (
        "1.86", -2, "m")
    gold = Gold.of(row["answer"], row["answer_aliases"], row["answer_type"], row["answer_value"])
    for right in ("1.86", "1.86 m", "186 cm", "1.86 metres", "1,860 mm", "1.860 m"):
        assert grade(right, gold) == 1.0, right
    for wrong in ("1.85", "1.87 m", "1.9 m", "185 cm", "1.86 kg"):
        assert grade(wrong, gold) == 0.0, wrong


def test_one_club_in_two_statements_is_still_one_answer(small_run: pl.DataFrame) -> None:
    assert _asked(small_run, ["Q1200", "P54", "Q2001"]) == [("Which sports team has Yuki Nakamura played for?",
                                                             "Alder Rovers")]


# A small world made by hand: changes whose questions T0 already answers -------------------------------

def _moved_world() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Lucas moves from Alder Rovers to Sporting Kestrel, both clubs of Veloria; Ingrid, who played for Alder
    Rovers and Borvia United, is left with Borvia United (her Alder Rovers statement removed); Mateo's height
    is re-entered as 1.7 metres, the same value as 1.70."""
    props = [entity(p, label, kind="property", datatype=dt, modified=MODIFIED_T0)
             for p, label, dt in (("P31", "instance of", "wikibase-item"), ("P17", "country", "wikibase-item"),
                                  ("P54", "member of sports team", "wikibase-item"), ("P2048", "height", "quantity"))]
    fixed = [entity(q, name, modified=MODIFIED_T0) for q, name in (
        ("Q5", "human"), ("Q476028", "association football club"), ("Q11573", "metre"),
        ("Q3000", "Veloria"), ("Q3001", "Borvia"))]

    def club(q: str, name: str, country: str) -> dict[str, Any]:
        e = entity(q, name, modified=MODIFIED_T0)
        e["claims"] = {"P31": [statement(f"{q}$i", "P31", item_value("Q476028"))],
                       "P17": [statement(f"{q}$c", "P17", item_value(country))]}
        return e

    def person(q: str, name: str, clubs: list[str], height: str, modified: datetime = MODIFIED_T0) -> dict[str, Any]:
        e = entity(q, name, modified=modified)
        e["claims"] = {"P31": [statement(f"{q}$i", "P31", item_value("Q5"))],
                       "P54": [statement(f"{q}${c}", "P54", item_value(c)) for c in clubs],
                       "P2048": [statement(f"{q}$h", "P2048", quantity_value(height, "Q11573"))]}
        return e

    clubs = [club("Q2001", "Alder Rovers", "Q3000"), club("Q2002", "Sporting Kestrel", "Q3000"),
             club("Q2003", "Borvia United", "Q3001")]
    karim = person("Q1001", "Karim Haddad", ["Q2003"], "+1.72")
    t0 = [*props, *fixed, *clubs, karim, person("Q1000", "Mateo Costa", ["Q2002"], "+1.70"),
          person("Q1100", "Lucas Andrade", ["Q2001"], "+1.85"),
          person("Q1300", "Ingrid Berg", ["Q2001", "Q2003"], "+1.79")]
    t1 = [*props, *fixed, *clubs, karim, person("Q1000", "Mateo Costa", ["Q2002"], "+1.7", MODIFIED_T1),
          person("Q1100", "Lucas Andrade", ["Q2002"], "+1.85", MODIFIED_T1),
          person("Q1300", "Ingrid Berg", ["Q2003"], "+1.79", MODIFIED_T1)]
    return t0, t1


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("moved")
    t0, t1 = _moved_world()
    before, after = write_dump(t0, folder / "t0.json"), write_dump(t1, folder / "t1.json.gz")
    run(before, after, folder / "out")
    return before, after, folder / "out"


def _outcome(out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(question -> answer) of the released questions, (question -> reason) of the rejected ones."""
    questions = pl.read_parquet(out / "questions.parquet")
    rejected = pl.read_parquet(out / "rejected.parquet").filter(pl.col("stage") == "verify")
    return (dict(zip(questions["question"], questions["answer"], strict=True)),
            {json.loads(r["item"])["question"]: r["reason"] for r in rejected.iter_rows(named=True)})


LUCAS_L3 = "Who is 1.85 metres tall and has played for an association football club that is in Veloria?"
INGRID_L2 = "Who has played for Borvia United and is 1.79 metres tall?"
MATEO_L1 = "How tall is Mateo Costa, in metres?"


def test_a_question_t0_already_answers_alone_is_rejected(moved: tuple[Path, Path, Path]) -> None:
    _, _, out = moved
    kept, rejected = _outcome(out)
    # The L3 hop "a club in Veloria" stands in for Lucas's new club, and matches his old one too.
    # Ingrid played for Borvia United at T0 as well: her L2 question is anchored on a triple T0 holds.
    # Mateo's height is a new triple ("+1.7" for "+1.70") but not a new value.
    assert rejected == dict.fromkeys((LUCAS_L3, INGRID_L2, MATEO_L1), "answerable_before_change")
    assert not {LUCAS_L3, INGRID_L2, MATEO_L1} & set(kept)
    details = pl.read_parquet(out / "rejected.parquet").filter(pl.col("reason") == "answerable_before_change")
    named = [re.fullmatch(r"(L[123]) ([0-9a-f]{24}): the same only answer at T0, from local oxigraph \(T0\)", d)
             for d in details["detail"]]
    assert all(named) and sorted(m.group(1) for m in named if m) == ["L1", "L2", "L3"]
    released = set(pl.read_parquet(out / "questions.parquet")["id"])
    assert not {m.group(2) for m in named if m} & released
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["rejects"]["answerable_before_change"] == 3


def test_questions_whose_answer_changed_are_kept(moved: tuple[Path, Path, Path]) -> None:
    kept, _ = _outcome(moved[2])
    assert kept == {
        # The clubs are association football clubs (P31): the question says so (v3 said "Which sports team").
        "Which association football club has Lucas Andrade played for?": "Sporting Kestrel",  # Alder Rovers at T0
        "Who has played for Sporting Kestrel and is 1.85 metres tall?": "Lucas Andrade",  # nobody at T0
        "Which association football club has Ingrid Berg played for?": "Borvia United",  # two clubs at T0
    }


@pytest.mark.parametrize("served", [("T1",), ("T1", "T0")])
def test_endpoints_given_for_the_snapshots_give_the_same_questions(moved: tuple[Path, Path, Path], tmp_path: Path,
                                                                 served: tuple[str, ...]) -> None:
    """With `endpoint` for T1 and no `before_endpoint`, T0 is still checked, in a local Oxigraph of its own."""
    before, after, default = moved
    with ExitStack() as stack:
        urls = {}
        for name, dump in (("T1", after), ("T0", before)):
            if name in served:
                read_snapshot(dump, tmp_path / name, rdf=True, reject=lambda *dropped: None)  # a clean dump
                server = LocalOxigraph(tmp_path / name / "rdf.nt", workdir=tmp_path)
                urls[name] = stack.enter_context(server).query_url
        run(before, after, tmp_path / "out", endpoint=urls["T1"], before_endpoint=urls.get("T0"))
    assert _outcome(tmp_path / "out") == _outcome(default)
    work = tmp_path / "out" / "work"
    assert not (work / "t1" / "rdf.nt").exists()
    assert (work / "t0" / "rdf.nt").exists() == ("T0" not in served)


def test_the_reference_finds_none_one_or_many_answers() -> None:
    """The checks above are only as good as the evaluator: it must tell 0, 1 and many apart."""
    _, t1 = _small_world()
    snapshot = Snapshot.of(t1)
    assert snapshot.answers([["?x", "P54", "Q2001"]]) == {"Q1000", "Q1001", "Q1002", "Q1200"}
    assert snapshot.answers([["?x", "P54", "Q2001"], ["?x", "P2048", "+1.79 Q11573"]]) == {"Q1200"}
    assert snapshot.answers([["?x", "P54", "Q2001"], ["?x", "P2048", "+1.79"]]) == set()  # the unit counts
    assert snapshot.answers([["Q1100", "P54", "?x"]]) == {"Q2002"}
    assert snapshot.answers([["?x", "P54", "?y1"], ["?y1", "P54", "?y2"]]) == set()
    hop = [["?x", "P2048", "+1.86 Q11573"], ["?x", "P27", "?y1"], ["?y1", "P54", "Q2001"]]
    assert snapshot.answers(hop) == set()
    assert snapshot.answers([["?x", "P27", "?y1"], ["?y2", "P27", "?y1"], ["?y2", "P2048", "+1.86 Q11573"]]) == {
        "Q1000", "Q1001", "Q1002", "Q1100", "Q1200"}
