"""Hostile MediaWiki exports (issue 13): one bad page costs only itself, no input holds memory past a bound or
takes quadratic time, and an export that would make every URL wrong stops the run before any work.

Exports are written here in the real format, by hand or from the generated worlds of tests/wikiworld.py.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.wikiworld import NS, SITEINFO, WikiPage, export_xml, make_world
from timelyqa.errors import ConfigError
from timelyqa.mediawiki.dump import DumpReader, ReadReject, check_dump
from timelyqa.mediawiki.exportxml import MAX_REVISION_CHARS
from timelyqa.wikipedia.infobox import first_paragraph, parse_infobox
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run

ROOT = Path(__file__).resolve().parent.parent


def _rev(rev_id: int, text: str, day: int = 1) -> str:
    return (f"<revision><id>{rev_id}</id><timestamp>2026-03-{day:02d}T10:00:00Z</timestamp>"
            f'<text bytes="{len(text.encode())}" xml:space="preserve">{text}</text></revision>')


def _page(title: str, page_id: int | str, revs: str, *, ns: str = "0", head: str = "", tail: str = "") -> str:
    return f"<page><title>{title}</title><ns>{ns}</ns><id>{page_id}</id>{head}{revs}{tail}</page>\n"


def _export(*pages: str, siteinfo: str = SITEINFO) -> str:
    return f'<mediawiki xmlns="{NS}" version="0.11" xml:lang="en">\n{siteinfo}{"".join(pages)}</mediawiki>\n'


def _read(path: Path, **kw: int) -> tuple[list[tuple[int, list[int], bool]], DumpReader]:
    reader = DumpReader(path, **kw)
    return [(p.id, [r.id for r in p.revisions], p.complete) for p in reader], reader


BAD_PAGES = {  # the middle page's damage -> what its reject must say
    "ns_word": (_page("Bad", 2, _rev(21, "b"), ns="zero"), "<ns> 'zero' is not a number"),
    "id_word": (_page("Bad", "2a", _rev(21, "b")), "<id> '2a' is not a number"),
    "id_empty": (_page("Bad", "", _rev(21, "b")), "<id> '' is not a number"),
    "unknown_element": (_page("Bad", 2, _rev(21, "b"), head="<flavour>sweet</flavour>"), "a <flavour> element"),
    "element_after_revisions": (_page("Bad", 2, _rev(21, "b"), tail="<ns>0</ns>"), "<ns> after the revisions"),
    "title_with_pipe": (_page("Bad|page", 2, _rev(21, "b")), "the title holds '|'"),
}


@pytest.mark.parametrize("case", sorted(BAD_PAGES))
def test_a_page_with_a_bad_head_costs_only_itself(case: str, tmp_path: Path) -> None:
    """mwxml raised inside its iterator here, and every later page was lost with exit 0."""
    bad, why = BAD_PAGES[case]
    path = tmp_path / "export.xml"
    path.write_text(_export(_page("Good one", 1, _rev(11, "a") + _rev(12, "a2", 2)), bad,
                            _page("Good two", 3, _rev(31, "c") + _rev(32, "c2", 2))))
    pages, reader = _read(path)
    assert [(pid, revs) for pid, revs, whole in pages if whole] == [(1, [11, 12]), (3, [31, 32])]
    assert [d.reason for d in reader.rejected] == [ReadReject.MALFORMED_PAGE]
    detail = reader.rejected[0].detail
    assert detail.startswith(f"{path}: page ") and why in detail and "dropped" in detail and "\n" not in detail
    assert reader.counts["pages_read"] == 3


def test_a_bad_page_in_a_dump_costs_one_question_not_every_later_one(tmp_path: Path) -> None:
    world = make_world(1)
    week = Settings(start=world.start, end=world.end)
    clean, damaged = tmp_path / "clean.xml", tmp_path / "damaged.xml"
    xml = export_xml(world.pages)
    clean.write_text(xml)
    first = world.main_pages()[0]
    damaged.write_text(xml.replace(f"<id>{first.id}</id>", f"<id>{first.id}x</id>", 1))
    run(clean, tmp_path / "a", week)
    run(damaged, tmp_path / "b", week)
    asked = {pid for pid in pl.read_parquet(tmp_path / "a" / "questions.parquet")["page_id"]}
    still = {pid for pid in pl.read_parquet(tmp_path / "b" / "questions.parquet")["page_id"]}
    assert len(asked) >= 10 and first.id not in still and still == asked - {first.id}
    rejected = pl.read_parquet(tmp_path / "b" / "rejected.parquet").filter(pl.col("reason") == "malformed_page")
    assert rejected.height == 1 and f"'{first.id}x' is not a number" in rejected["detail"][0]


def test_a_duplicate_page_id_gives_one_question_and_says_so(tmp_path: Path) -> None:
    """The later page with an id already read is dropped: the first was given out as the reader streams."""
    world = make_world(2)
    week = Settings(start=world.start, end=world.end)
    run(_write(world.pages, tmp_path / "once.xml"), tmp_path / "once", week)
    asked = pl.read_parquet(tmp_path / "once" / "questions.parquet")
    twin = next(p for p in world.main_pages() if p.id in set(asked["page_id"]))
    copy = WikiPage(id=twin.id, title=twin.title + " (copy)", ns=0, template=twin.template,
                    revisions=[replace(r, id=r.id + 10**7, parent_id=None) for r in twin.revisions])
    run(_write([*world.pages, copy], tmp_path / "twice.xml"), tmp_path / "twice", week)
    questions = pl.read_parquet(tmp_path / "twice" / "questions.parquet")
    assert questions["page_id"].to_list().count(twin.id) == 1 and questions.height == asked.height
    assert copy.title not in questions["page_title"].to_list()
    rejected = pl.read_parquet(tmp_path / "twice" / "rejected.parquet").filter(pl.col("reason") == "duplicate_page")
    assert rejected.height == 1 and f"page id {twin.id} was given by an earlier page" in rejected["detail"][0]
    assert json.loads(rejected["item"][0])["page"] == copy.title


def _write(pages: list[WikiPage], path: Path) -> Path:
    path.write_text(export_xml(pages))
    return path


BAD_BASES = ["javascript:alert(1)//https://en.wikipedia.org/wiki/Main_Page", "file:///etc/passwd",
             "https:///wiki/Main_Page", "ftp://en.wikipedia.org/wiki/Main_Page", "http://en.wiki pedia.org/wiki/X",
             "https://user@en.wikipedia.org/wiki/Main_Page", "https://en.wikipedia.org:0/wiki/Main_Page", ""]


@pytest.mark.parametrize("base", BAD_BASES)
def test_a_base_that_is_no_web_address_stops_the_run_before_any_work(base: str, tmp_path: Path) -> None:
    path = tmp_path / "export.xml"
    path.write_text(_export(_page("P", 1, _rev(11, "a")),
                            siteinfo=SITEINFO.replace("https://en.wikipedia.org/wiki/Main_Page", base)))
    with pytest.raises(ConfigError) as err:
        check_dump(path)
    message = str(err.value)
    assert message.startswith(f"{path}: <base> ") and "http(s)" in message and "\n" not in message
    with pytest.raises(ConfigError):
        list(DumpReader(path))  # read without the check, the export still gives no page built on it
    start = datetime(2026, 3, 1, tzinfo=UTC)
    with pytest.raises(ConfigError, match="<base>"):
        run(path, tmp_path / "out", Settings(start=start, end=start + timedelta(days=7)))
    assert not (tmp_path / "out").exists()


def test_a_web_base_of_another_wiki_is_the_one_every_evidence_url_uses(tmp_path: Path) -> None:
    path = tmp_path / "export.xml"
    path.write_text(_export(_page("P", 1, _rev(11, "a")),
                            siteinfo=SITEINFO.replace("https://en.wikipedia.org", "http://127.0.0.1:8080")))
    check_dump(path)
    reader = DumpReader(path)
    assert [p.id for p in reader] == [1] and reader.wiki_url == "http://127.0.0.1:8080"


@pytest.mark.slow  # the installed command in a new interpreter
def test_the_command_refuses_a_javascript_base_in_one_line_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "export.xml"
    path.write_text(_export(_page("P", 1, _rev(11, "a")), siteinfo=SITEINFO.replace(
        "https://en.wikipedia.org/wiki/Main_Page", "javascript:alert(1)//en.wikipedia.org/wiki/Main_Page")))
    exe = Path(sys.executable).with_name("timelyqa")
    proc = subprocess.run([str(exe), "wikipedia", "--dump", str(path), "--start", "2026-03-01", "--end",
                           "2026-03-08", "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200"})
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert str(path) in lines[0] and "javascript:alert(1)" in lines[0] and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_revision_larger_than_any_wiki_saves_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "export.xml"
    huge = "x" * (MAX_REVISION_CHARS + 1)
    path.write_text(_export(_page("Big", 1, _rev(11, "a") + _rev(12, huge, 2) + _rev(13, "c", 3)),
                            _page("Next", 2, _rev(21, "d"))))
    pages, reader = _read(path)
    assert pages == [(1, [11, 13], True), (2, [21], True)]
    assert [d.reason for d in reader.rejected] == [ReadReject.REVISION_TOO_LARGE]
    assert reader.rejected[0].item["revision"] == 12 and "'Big'" in reader.rejected[0].detail
    assert f"{MAX_REVISION_CHARS + 1:,} characters" in reader.rejected[0].detail


def test_a_revision_of_unreadable_fields_drops_its_page_and_no_other(tmp_path: Path) -> None:
    path = tmp_path / "export.xml"
    month_13 = _rev(22, "b").replace("2026-03-01", "2026-13-01")
    path.write_text(_export(_page("A", 1, _rev(11, "a")), _page("B", 2, _rev(21, "b") + month_13),
                            _page("C", 3, _rev(31, "c"))))
    pages, reader = _read(path)
    assert [(pid, whole) for pid, _, whole in pages] == [(1, True), (2, False), (3, True)]
    assert [d.reason for d in reader.rejected] == [ReadReject.MALFORMED_REVISION]
    assert "timestamp '2026-13-01T10:00:00Z' is not a date" in reader.rejected[0].detail


BOX, LEAD = "{{Infobox person\n| name = Ana\n}}\n", "'''Ana''' paints.\n\n"
HOSTILE_WIKITEXT = {  # each took seconds to minutes on main (a quadratic scan), and must take well under one
    "10,000 templates on their own lines before the lead": BOX + "{{hatnote}}\n" * 10_000 + LEAD,
    "20,000 unclosed references": BOX + LEAD + "== Notes ==\n" + "<ref>" * 20_000,
    "10,000 reference tags that never end": BOX + LEAD + "== Notes ==\n" + "<ref " * 10_000,
    "5,000 infoboxes that never close": LEAD + "{{Infobox x\n" * 5_000 + BOX,
    "a heading line of 30,000 signs": LEAD + "=x" + "=" * 30_000 + "y\n" + BOX,
}


@pytest.mark.parametrize("case", sorted(HOSTILE_WIKITEXT))
def test_hostile_wikitext_is_parsed_in_linear_time(case: str) -> None:
    text = HOSTILE_WIKITEXT[case]
    began = time.perf_counter()
    box, paragraph = parse_infobox(text), first_paragraph(text)
    took = time.perf_counter() - began
    assert box is not None and box.fields == {"name": "Ana"}
    assert paragraph == "Ana paints."
    assert took < 1.0, f"{took:.1f} s"


CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from pathlib import Path
    from timelyqa.mediawiki.dump import DumpReader
    from timelyqa.wikipedia.infobox import first_paragraph, parse_infobox
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.argv[1] == "lead":
        text = "{{Infobox person\\n| name = Ana\\n}}\\n" + "{{a}}\\n" * 1_300_000 + "'''Ana''' paints.\\n"
        out = [first_paragraph(text), parse_infobox(text).fields]
    else:
        reader = DumpReader(Path(sys.argv[1]))
        out = [(p.id, [r.id for r in p.revisions]) for p in reader] + [[d.reason for d in reader.rejected]]
    print(json.dumps([out, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024]))
""")


def _child(arg: str) -> tuple[list, int]:
    proc = subprocess.run([sys.executable, "-c", CHILD, arg], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out, grew_mb = json.loads(proc.stdout)
    return out, grew_mb


@pytest.mark.slow  # 300 MB of text and 100 MB of comment streamed through the reader, and an 8 MB lead parsed
def test_memory_stays_bounded_on_a_huge_revision_a_huge_comment_and_a_huge_lead(tmp_path: Path) -> None:
    """On main, mwxml held the 300 MB text whole (an 8 GB one: MemoryError), and the lead took minutes."""
    head = _export(_page("Huge", 1, _rev(11, "\0"))).split("\0")[0].encode()  # open inside the revision's text
    huge = tmp_path / "huge.xml.gz"
    block = b"lorem ipsum " * 87_382  # 1 MiB
    with gzip.open(huge, "wb", compresslevel=1) as f:
        f.write(head)
        for _ in range(300):
            f.write(block)
        f.write(b"</text></revision></page>\n" + _page("After", 2, _rev(21, "b")).encode() + b"</mediawiki>\n")
    out, grew = _child(str(huge))
    assert out == [[1, []], [2, [21]], ["revision_too_large"]]
    assert grew < 100, f"{grew} MB more for a 300 MB revision"
    comment = tmp_path / "comment.xml.gz"
    with gzip.open(comment, "wb", compresslevel=1) as f:
        f.write(_export(_page("Before", 1, _rev(11, "a"))).encode().split(b"</mediawiki>")[0] + b"<!--")
        for _ in range(100):
            f.write(block)
    out, grew = _child(str(comment))
    assert out == [[1, [11]], ["malformed_xml"]]
    assert grew < 100, f"{grew} MB more for a 100 MB comment"
    began = time.perf_counter()
    out, grew = _child("lead")
    assert out == ["Ana paints.", {"name": "Ana"}]
    assert grew < 250 and time.perf_counter() - began < 30, f"{grew} MB"
