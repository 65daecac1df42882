"""The Wikipedia source end to end on MediaWiki XML exports of generated histories the code never saw.

What the tests expect is worked out here from each world's own truth (the plain values every revision
was written with), never by calling the code under test.
"""

from __future__ import annotations

import bz2
import hashlib
import json
import random
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from pydantic import ValidationError

from tests.wikiworld import (DOMAINS, SETTING, TEMPLATES, Rev, WikiPage, World, export_xml, make_world, value_at,
                             write_export)
from timelyqa.errors import ConfigError
from timelyqa.record import CANARY, REJECTED_SCHEMA, WikipediaRecord
from timelyqa.rewards import units
from timelyqa.wikipedia.answer import Rule, answers_on, resolve
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.questions import GENERATOR
from timelyqa.wikipedia.source import SOURCE

SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class Expected:
    """A page's question as its history says: the revision, the keys it may ask about, and their values."""

    page: WikiPage
    rev_id: int
    timestamp: datetime
    keys: frozenset[str]
    answers: dict[str, str]
    before: dict[str, str | None]


def _is_file(value: str) -> bool:
    return value.startswith("File:") or value.endswith(".svg")


def expected(world: World) -> dict[int, Expected]:
    """Per page: the last revision in (start, end] that changed a key whose end value differs from its start value
    and whose replaced value does not come back within the horizon after the end."""
    out: dict[int, Expected] = {}
    for page in world.main_pages():
        if page.template is None:
            continue
        kinds = TEMPLATES[page.template]
        revs = sorted((r for r in page.revisions if not r.missing_text), key=lambda r: (r.timestamp, r.id))
        before = [r for r in revs if r.timestamp <= world.start]
        inside = [r for r in revs if world.start < r.timestamp <= world.end]
        if not inside:
            continue
        values = [(before[-1].values or {}) if before else {}] + [r.values or {} for r in inside]
        first, last = values[0], values[-1]
        later = [r.values or {} for r in revs if world.end < r.timestamp <= world.end + world.horizon]

        def undone_later(k: str) -> bool:  # the value the key's last change replaced comes back after the window
            i = max(i for i in range(1, len(values)) if values[i - 1].get(k) != values[i].get(k))
            return values[i - 1].get(k) is not None and any(v.get(k) == values[i - 1][k] for v in later)

        eligible = {k for k in first.keys() | last.keys()
                    if first.get(k) != last.get(k) and last.get(k) is not None
                    and kinds.get(k) != SETTING and not _is_file(last[k]) and not undone_later(k)}
        for i in range(len(inside), 0, -1):
            changed = {k for k in eligible if values[i - 1].get(k) != values[i].get(k)}
            if changed:
                rev = inside[i - 1]
                out[page.id] = Expected(page, rev.id, rev.timestamp, frozenset(changed),
                                        {k: values[i][k] for k in changed}, {k: values[i - 1].get(k) for k in changed})
                break
    return out


def frequency(page: WikiPage, key: str, world: World) -> str:
    at_end = value_at(page, key, world.end)
    later = [r for r in page.revisions if world.end < r.timestamp <= world.end + world.horizon and not r.missing_text]
    return "frequent_update" if any((r.values or {}).get(key) != at_end for r in later) else "infrequent_update"


def _run(world: World, path: Path, out: Path, seed: int = 0, **kw: object) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    settings = Settings(start=world.start, end=world.end, seed=seed, **kw)
    manifest = run(path, out, settings).model_dump(mode="json")
    return pl.read_parquet(out / "questions.parquet"), pl.read_parquet(out / "rejected.parquet"), manifest


def _check_against_truth(world: World, questions: pl.DataFrame, rejected: pl.DataFrame,
                         dropped_pages: set[int] = frozenset()) -> None:
    want = {pid: e for pid, e in expected(world).items() if pid not in dropped_pages}
    checked = rejected.filter(pl.col("stage").is_in(["quality", "check"]))
    asked = {row["page_id"]: row for row in questions.iter_rows(named=True)}
    refused = {json.loads(row["item"])["page_id"]: row for row in checked.iter_rows(named=True)}
    assert set(asked) | set(refused) == set(want), "questions exactly for the pages whose infobox changed for good"
    assert not set(asked) & set(refused)
    for pid, row in asked.items():
        e = want[pid]
        assert row["revision_id"] == e.rev_id
        assert row["infobox_key"] in e.keys
        assert row["answer"] == e.answers[row["infobox_key"]]
        assert row["answer"] == value_at(e.page, row["infobox_key"], world.end), "the answer holds at as_of"
        assert row["value_before"] == e.before[row["infobox_key"]]
        assert row["event_date"] == e.timestamp.date()
        assert row["as_of"] == world.end
        assert row["page_title"] == e.page.title and e.page.title in row["question"]
        assert row["update_frequency"] == frequency(e.page, row["infobox_key"], world) == row["level"]
        assert row["domain"] == DOMAINS[e.page.template]
        assert json.loads(row["recompute"]) == {"page": e.page.title, "page_id": pid, "key": row["infobox_key"],
                                                "parser": "wikipedia_infobox_parser_v1"}
        assert not any(str(y) in row["question"] for y in range(1950, 2027))
        assert row["canary"] == CANARY and row["source"] == "wikipedia"
        assert row["generator"] == GENERATOR
        assert [ev["revision"] for ev in row["evidence"]][0] == str(e.rev_id)
        rev = next(r for r in e.page.revisions if r.id == e.rev_id)
        assert row["evidence"][0]["sha256"] == hashlib.sha256(rev.text.encode()).hexdigest()
        assert row["evidence"][0]["url"] == f"https://en.wikipedia.org/w/index.php?oldid={e.rev_id}"
    for pid, row in refused.items():  # a template question fails here only at the quality gate, and only for
        item = json.loads(row["item"])  # what a reviewer would send back:
        assert row["stage"] == "quality" and item["key"] in want[pid].keys
        if row["reason"] == "answer_in_question":  # a page's new name asked about
            assert item["key"] == "name"
        elif row["reason"] == "numbered_label":  # a career row's caps or goals, with no club in the box to read it by
            assert re.fullmatch(r"(caps|goals)\d", item["key"]) and "clubs1" not in want[pid].answers
        else:  # a town named like its disambiguator: "the total area of Kestova (Kestova)"
            assert row["reason"] == "entity_named_twice" and re.fullmatch(r"(\w+) \(\1\)", item["page"])


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[World, Path]]:
    folder = tmp_path_factory.mktemp("worlds")
    return {seed: (world := make_world(seed), write_export(world.pages, folder / f"w{seed}.xml")) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_questions_match_the_histories(worlds: dict, seed: int, tmp_path: Path) -> None:
    world, path = worlds[seed]
    questions, rejected, manifest = _run(world, path, tmp_path / "out")
    _check_against_truth(world, questions, rejected)
    assert questions.height >= 15
    assert questions.schema == SOURCE.schema
    assert [WikipediaRecord.model_validate(r).id for r in questions.iter_rows(named=True)] == questions["id"].to_list()
    assert rejected.schema == REJECTED_SCHEMA
    assert manifest["counts"]["questions"] == questions.height
    assert manifest["rejects"] == dict(sorted(rejected["reason"].value_counts().iter_rows()))
    assert manifest["inputs"]["dump"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads((tmp_path / "out" / "manifest.json").read_text()) == manifest
    assert {"setting_key", "reverted_in_window"} <= set(rejected["reason"])


@pytest.mark.slow
def test_bz2_and_any_page_or_revision_order_give_the_same_release(worlds: dict, tmp_path: Path) -> None:
    world, path = worlds[1]
    plain, _, _ = _run(world, path, tmp_path / "plain")
    packed = write_export(world.pages, tmp_path / "w.xml.bz2")
    shuffled = write_export(world.pages, tmp_path / "shuffled.xml", shuffle=7)
    for other in (packed, shuffled):
        questions, rejected, _ = _run(world, other, tmp_path / other.stem)
        assert questions.drop("verification").equals(plain.drop("verification"))
        assert set(questions["verification"].struct.field("endpoint")) == {f"dump:{other.name}"}
        _check_against_truth(world, questions, rejected)


def test_the_seed_picks_one_key_per_revision_and_nothing_else(worlds: dict, tmp_path: Path) -> None:
    world, path = worlds[2]
    first, _, _ = _run(world, path, tmp_path / "a", seed=0)
    again, _, _ = _run(world, path, tmp_path / "b", seed=0)
    other, rejected, _ = _run(world, path, tmp_path / "c", seed=99)
    assert first.equals(again), "the same seed gives the same release"
    _check_against_truth(world, other, rejected)
    choices = [len(e.keys) for e in expected(world).values()]
    assert sum(c > 1 for c in choices) >= 3, "the world has revisions that changed several keys"
    keys0 = dict(zip(first["page_id"], first["infobox_key"], strict=True))
    keys99 = dict(zip(other["page_id"], other["infobox_key"], strict=True))
    assert any(keys0[p] != keys99[p] for p in keys0.keys() & keys99.keys()), "another seed, another pick"


def test_reverts_and_vandalism_inside_the_window_give_no_question(tmp_path: Path) -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    world = World(pages=[], start=start, end=start + timedelta(days=7))
    base = {"name": "Ivo Landa", "currentclub": "Ajax", "caps1": "120", "image": "Ivo 1.jpg"}

    def text(values: dict[str, str], club_markup: str | None = None) -> str:
        lines = [f"| {k} = {club_markup if k == 'currentclub' and club_markup else v}" for k, v in values.items()]
        return "{{Infobox football biography\n" + "\n".join(lines) + "\n}}\n'''Ivo Landa''' plays football.\n"

    def page(pid: int, title: str, steps: list[tuple[float, dict[str, str], str | None]]) -> WikiPage:
        values = {**base, "name": title}
        revs = [Rev(pid * 100, None, start - timedelta(days=3), text(values), dict(values), "create")]
        for n, (day, change, markup) in enumerate(steps, start=1):
            values = {**values, **change}
            revs.append(Rev(pid * 100 + n, revs[-1].id, start + timedelta(days=day), text(values, markup),
                            dict(values), "edit"))
        return WikiPage(id=pid, title=title, ns=0, revisions=revs, template="Infobox football biography")

    world.pages = [
        page(1, "Vandalised Player", [(1, {"caps1": "LOL"}, None), (1.01, {"caps1": "120"}, None)]),
        page(2, "Reverted Player", [(2, {"currentclub": "Celtic"}, None), (3, {"currentclub": "Ajax"}, None)]),
        page(3, "Blanked Player", [(2, {}, None)]),
        page(4, "Restyled Player", [(2, {"image": "Ivo 2.jpg"}, "[[AFC Ajax|Ajax]]<ref>{{cite web|title=x}}</ref>")]),
        page(5, "Moved Player", [(2, {"currentclub": "Celtic"}, None), (2.5, {"caps1": "LOL"}, None),
                                 (2.6, {"caps1": "120"}, None)]),
    ]
    blank = world.pages[2].revisions
    blank.append(Rev(399, 301, start + timedelta(days=2.5), "", None, "blank"))
    blank.append(Rev(398, 399, start + timedelta(days=2.6), blank[1].text, blank[1].values, "revert"))
    path = write_export(world.pages, tmp_path / "reverts.xml")
    questions, rejected, _ = _run(world, path, tmp_path / "out")
    assert questions["page_title"].to_list() == ["Moved Player"]
    assert questions.row(0, named=True)["answer"] == "Celtic" and questions.row(0, named=True)["revision_id"] == 501
    reasons = {(json.loads(r["item"])["page"], json.loads(r["item"])["key"]): r["reason"]
               for r in rejected.iter_rows(named=True)}
    assert reasons[("Vandalised Player", "caps1")] == "reverted_in_window"
    assert reasons[("Reverted Player", "currentclub")] == "reverted_in_window"
    assert reasons[("Moved Player", "caps1")] == "reverted_in_window"
    assert reasons[("Restyled Player", "image")] == "setting_key"
    assert all(page != "Restyled Player" or key == "image" for page, key in reasons), "markup alone changes nothing"
    assert {page for page, _ in reasons} >= {"Blanked Player"}


def test_answers_on_any_date_follow_the_revisions(worlds: dict) -> None:
    world, path = worlds[3]
    rng = random.Random(5)
    pages = world.main_pages()
    rules = []
    for page in pages:
        keys = sorted({k for r in page.revisions for k in (r.values or {})})
        for key in rng.sample(keys, min(2, len(keys))):
            rules.append(Rule(page=page.title, key=key, page_id=page.id if rng.random() < 0.7 else None))
    rules.append(Rule(page="No Such Page", key="caps1"))
    stamps = sorted({r.timestamp for p in pages for r in p.revisions})
    moments = [stamps[0] - timedelta(days=1), *rng.sample(stamps, 12), *(s - timedelta(seconds=1) for s in
               rng.sample(stamps, 6)), world.start, world.end, world.end + timedelta(days=30)]
    answers, bad = answers_on(path, rules, moments)
    assert not bad
    by_title = {p.title: p for p in pages}
    checked = 0
    for rule in rules:
        page = by_title.get(rule.page)
        truth = [value_at(page, rule.key, m) if page else None for m in moments]
        assert answers[rule] == truth, rule
        checked += sum(t is not None for t in truth)
    assert checked > 100
    for rule in rules[:10]:  # the same rule over revisions handed over directly, as an API client would
        page = by_title[rule.page]
        for moment in moments[:8]:
            assert resolve(page.revisions, rule.key, moment) == value_at(page, rule.key, moment)


def test_the_domain_cap_keeps_a_seeded_sample(worlds: dict, tmp_path: Path) -> None:
    world, path = worlds[1]
    full, _, _ = _run(world, path, tmp_path / "full")
    capped, rejected, manifest = _run(world, path, tmp_path / "capped", cap_per_domain=2)
    again, _, _ = _run(world, write_export(world.pages, tmp_path / "s.xml", shuffle=3), tmp_path / "again",
                       cap_per_domain=2)
    per_domain = full["domain"].value_counts()
    assert capped.height == sum(min(2, n) for n in per_domain["count"])
    assert capped["domain"].value_counts()["count"].max() <= 2
    assert set(capped["id"]) <= set(full["id"])
    assert capped.drop("verification").equals(again.drop("verification")), "the sample does not depend on input order"
    over = rejected.filter(pl.col("reason") == "domain_cap")
    assert over.height == full.height - capped.height == manifest["rejects"]["domain_cap"]


def _cut_inside(data: bytes, title: str) -> bytes:
    at = data.index(f"<title>{title}</title>".encode())
    second_text = data.index(b"<text", data.index(b"<text", at) + 5)
    return data[: second_text + 40]


def test_a_truncated_export_keeps_what_came_before_the_cut(worlds: dict, tmp_path: Path) -> None:
    world, _ = worlds[1]
    pages = world.main_pages()
    cut_page = next(p for p in pages[len(pages) // 2:] if len(p.revisions) >= 3)
    head = world.pages[: world.pages.index(cut_page)]
    path = tmp_path / "cut.xml"
    path.write_bytes(_cut_inside(export_xml(world.pages).encode(), cut_page.title))
    questions, rejected, _ = _run(world, path, tmp_path / "out")
    broken = rejected.filter(pl.col("reason") == "malformed_xml")
    assert broken.height == 1
    assert str(path) in broken["detail"][0] and repr(cut_page.title) in broken["detail"][0]
    _check_against_truth(replace(world, pages=head), questions, rejected)


def test_a_truncated_bz2_dump_keeps_its_whole_blocks(worlds: dict, tmp_path: Path) -> None:
    world, _ = worlds[2]
    data = bz2.compress(export_xml(world.pages).encode(), compresslevel=1)  # 100 kB blocks
    path = tmp_path / "cut.xml.bz2"
    path.write_bytes(data[: int(len(data) * 0.7)])
    questions, rejected, _ = _run(world, path, tmp_path / "out")
    broken = rejected.filter(pl.col("reason") == "malformed_xml")
    assert broken.height == 1 and str(path) in broken["detail"][0] and "EOFError" in broken["detail"][0]
    item = json.loads(broken["item"][0])
    titles = [p.title for p in world.pages]
    head = world.pages[: titles.index(item["page"])] if "page" in item else \
        world.pages[: titles.index(item["after_page"]) + 1]
    assert len(head) >= 5
    _check_against_truth(replace(world, pages=head), questions, rejected)


def test_revisions_without_text_and_unreadable_revisions_are_kept_aside(worlds: dict, tmp_path: Path) -> None:
    world, _ = worlds[3]
    pages = list(world.pages)
    changed = [i for i, p in enumerate(pages) if p.id in expected(world)]
    missing_at, bogus_at = changed[0], changed[1]
    target = pages[missing_at]
    inside = [r for r in target.revisions if world.start < r.timestamp <= world.end]
    gone = inside[-1]
    pages[missing_at] = replace(target, revisions=[replace(r, missing_text=r.id == gone.id) for r in target.revisions])
    odd = pages[bogus_at]
    pages[bogus_at] = replace(odd, revisions=[replace(r, bogus_tag=n == 0) for n, r in enumerate(odd.revisions)])
    damaged = replace(world, pages=pages)
    path = write_export(pages, tmp_path / "damaged.xml")
    questions, rejected, manifest = _run(damaged, path, tmp_path / "out")
    missing = rejected.filter(pl.col("reason") == "missing_text").row(0, named=True)
    assert all(part in missing["detail"] for part in (str(path), repr(target.title), str(gone.id)))
    assert json.loads(missing["item"])["revision"] == gone.id
    unreadable = rejected.filter(pl.col("reason") == "malformed_revision").row(0, named=True)
    assert repr(odd.title) in unreadable["detail"] and str(path) in unreadable["detail"]
    assert odd.id not in questions["page_id"].to_list()
    _check_against_truth(damaged, questions, rejected, dropped_pages={odd.id})
    assert manifest["rejects"]["missing_text"] == 1 and manifest["rejects"]["malformed_revision"] == 1


def test_inputs_that_are_not_exports_stop_the_run_before_any_work(tmp_path: Path) -> None:
    not_xml = tmp_path / "dump.json"
    not_xml.write_text('[\n{"id": "Q1"}\n]\n')
    start = datetime(2026, 3, 1, tzinfo=UTC)
    week = Settings(start=start, end=start + timedelta(days=7))
    with pytest.raises(ConfigError, match="not a MediaWiki XML export"):
        run(not_xml, tmp_path / "out", week)
    with pytest.raises(ConfigError, match="no such file"):
        run(tmp_path / "missing.xml", tmp_path / "out", week)
    with pytest.raises(ValidationError, match="before the end"):
        Settings(start=start, end=start)
    with pytest.raises(ValidationError, match="time zone"):
        Settings(start=datetime(2026, 3, 1), end=datetime(2026, 3, 8))
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # a memory measurement (tracemalloc slows every allocation): make test only
def test_the_dump_is_streamed_not_held(tmp_path: Path) -> None:
    """A dump several times larger than what the run ever holds, and one twice as long again: memory follows a page,
    not the file, so the second costs about what the first does."""
    import tracemalloc
    world = make_world(6, pages=8)
    old = world.start - timedelta(days=40)
    filler = "\n".join(f"Paragraph {i} of a long article about tides, [[Moon|lunar]] pull and all." for i in range(40))

    def export(towns: int, name: str) -> tuple[World, Path, int]:
        pages = []
        for n in range(towns):  # long histories that end before the window: read, and almost all passed over
            revs = [Rev(9_000_000 + n * 100 + i, None, old + timedelta(hours=i),
                        f"{{{{Infobox settlement\n| name = Town {n}\n| population_total = {n * 10 + i}\n}}}}\n"
                        f"{filler}\n", {"name": f"Town {n}", "population_total": str(n * 10 + i)}, "fact")
                    for i in range(12)]
            pages.append(WikiPage(id=50_000 + n, title=f"Town {n}", ns=0, revisions=revs,
                                  template="Infobox settlement"))
        big = replace(world, pages=pages + world.pages)
        path = write_export(big.pages, tmp_path / name)
        return big, path, len(bz2.decompress(path.read_bytes()))

    # What a process pays once, whatever the dump's size (the units registry that types answers, pyarrow's compute
    # functions imported by the first parquet write): paid by a run on the small world first, as in any suite order.
    units()
    _run(world, write_export(world.pages, tmp_path / "small.xml.bz2"), tmp_path / "warm")
    peaks, sizes = [], []
    for towns in (80, 160):
        big, path, size = export(towns, f"big{towns}.xml.bz2")
        tracemalloc.start()
        questions, rejected, _ = _run(big, path, tmp_path / f"out{towns}")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        _check_against_truth(big, questions, rejected)
        peaks.append(peak)
        sizes.append(size)
    assert sizes[0] > 3_000_000 and sizes[1] > 1.9 * sizes[0]
    assert peaks[1] < sizes[1] / 2, f"peak {peaks[1]:,} bytes for a {sizes[1]:,}-byte export"
    # Twice the file, not twice the memory: what grows with it is a small part of what it adds (4 % alone, 14 % after
    # the other Wikipedia tests in one process, whose caches the run then shares; holding the text would be 100 %).
    assert peaks[1] - peaks[0] < (sizes[1] - sizes[0]) / 4, f"peaks {peaks} for exports of {sizes} bytes"


@pytest.mark.slow  # a memory measurement (tracemalloc slows every allocation): make test only
def test_what_waits_for_the_writer_holds_no_page_text(tmp_path: Path) -> None:
    """Every page changes, and every page is long: the questions wait for one batch of writing, the pages' texts
    do not (they would be half the export)."""
    import tracemalloc
    start = datetime(2026, 3, 1, tzinfo=UTC)
    world = World(pages=[], start=start, end=start + timedelta(days=7))
    body = "\n".join(f"Paragraph {i} on the [[harbour]] and its tides, long enough to weigh." for i in range(900))
    for n in range(120):
        def text(pop: int) -> str:
            return (f"{{{{Infobox settlement\n| name = Town {n}\n| population_total = {pop}\n}}}}\n"
                    f"'''Town {n}''' is a town.\n\n== History ==\n{body}\n")
        revs = [Rev(7_000_000 + 2 * n, None, start - timedelta(days=3), text(100 + n),
                    {"name": f"Town {n}", "population_total": str(100 + n)}, "create"),
                Rev(7_000_001 + 2 * n, 7_000_000 + 2 * n, start + timedelta(days=2), text(200 + n),
                    {"name": f"Town {n}", "population_total": str(200 + n)}, "fact")]
        world.pages.append(WikiPage(id=60_000 + n, title=f"Town {n}", ns=0, revisions=revs,
                                    template="Infobox settlement"))
    path = write_export(world.pages, tmp_path / "towns.xml.bz2")
    size = len(bz2.decompress(path.read_bytes()))
    # What a process pays once, whatever the dump's size (the units registry that types answers, pyarrow's compute
    # functions imported by the first parquet write): paid by a run on the small world first, as in any suite order.
    units()
    _run(world, write_export(world.pages, tmp_path / "small.xml.bz2"), tmp_path / "warm")
    tracemalloc.start()
    questions, rejected, _ = _run(world, path, tmp_path / "out")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert questions.height == 120
    assert size > 12_000_000
    assert peak < size / 4, f"peak {peak:,} bytes for a {size:,}-byte export"
    _check_against_truth(world, questions, rejected)
