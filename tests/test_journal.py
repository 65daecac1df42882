"""The crawls' journal (spiders/journal.py): a line a kill cut short is cut off before the resumed crawl appends,
so the next page's line neither runs on from it nor is lost with it."""

from __future__ import annotations

import json
from pathlib import Path

from spiders.journal import JOURNAL, entries, open_journal


def test_a_line_cut_by_a_kill_is_cut_off_and_the_next_line_is_read(tmp_path: Path) -> None:
    whole = json.dumps({"url": "http://a.example/1", "clickables": []}) + "\n"
    (tmp_path / JOURNAL).write_text(whole + '{"url": "http://a.example/2", "click')  # the kill fell mid-line
    assert [e["url"] for e in entries(tmp_path)] == ["http://a.example/1"]
    with open_journal(tmp_path) as journal:
        journal.write(json.dumps({"url": "http://a.example/3", "clickables": []}) + "\n")
    assert [e["url"] for e in entries(tmp_path)] == ["http://a.example/1", "http://a.example/3"]
    assert (tmp_path / JOURNAL).read_text().count("\n") == 2


def test_a_whole_journal_is_appended_to_as_it_is(tmp_path: Path) -> None:
    assert list(entries(tmp_path)) == []
    with open_journal(tmp_path / "new") as journal:
        journal.write('{"key": "k1"}\n')
    with open_journal(tmp_path / "new") as journal:
        journal.write('{"key": "k2"}\nnot json\n')
    assert [e["key"] for e in entries(tmp_path / "new")] == ["k1", "k2"], "a line that is no JSON object is skipped"
