"""The temporal split: month windows, whole groups, determinism."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from timelyqa.record import QARecord, Verification, WikidataRecord, WikipediaRecord, record_id, to_frame
from timelyqa.split import DEFAULT_GROUP_KEY, assign_splits, group_key_for, group_key_text, split_dates

AS_OF = datetime(2026, 5, 31, tzinfo=UTC)
CHECK = Verification(method="sparql", query="ASK {}", endpoint="http://127.0.0.1:7878/query", result_count=1,
                     passed=True)


def wikidata_row(entity: str, n: int, day: date) -> WikidataRecord:
    facts = (entity, f"P{n}", f"Q{1000 + n}")
    return WikidataRecord(
        id=record_id("wikidata", *facts), question=f"What is P{n} of {entity}?", answer=f"answer {n}",
        answer_type="text",
        source="wikidata", level="L1", event_date=day, as_of=AS_OF, verification=CHECK, generator="wikidata_l1_v1",
        answer_id=facts[2], query_triples=[list(facts)], delta_triple=list(facts), sparql="SELECT ?x WHERE {}",
    )


# Five months, newest 2026-05-20, so M = May: test from April 1st, validation from March 1st.
GROUPS: dict[str, list[date]] = {
    "Q1": [date(2026, 1, 5), date(2026, 1, 20)],  # train
    "Q2": [date(2026, 2, 1), date(2026, 2, 28)],  # train (M-3)
    "Q3": [date(2026, 3, 1), date(2026, 3, 31)],  # validation
    "Q4": [date(2026, 4, 1), date(2026, 4, 2)],  # test (M-1)
    "Q5": [date(2026, 5, 2), date(2026, 5, 20)],  # test (M)
    "Q6": [date(2026, 3, 15), date(2026, 4, 10), date(2026, 3, 2)],  # spans March and April: all test
    "Q7": [date(2026, 1, 3), date(2026, 3, 9)],  # spans January and March: all validation
}
EXPECTED = {"Q1": "train", "Q2": "train", "Q3": "validation", "Q4": "test", "Q5": "test", "Q6": "test",
            "Q7": "validation"}


def frame() -> pl.DataFrame:
    rows = [wikidata_row(entity, n, day) for entity, days in GROUPS.items() for n, day in enumerate(days)]
    return to_frame(rows, WikidataRecord)


def split_of_groups(df: pl.DataFrame) -> dict[str, set[str]]:
    pairs = df.select(pl.col("delta_triple").list.get(0).alias("entity"), "split").unique().iter_rows()
    result: dict[str, set[str]] = {}
    for entity, split in pairs:
        result.setdefault(entity, set()).add(split)
    return result


def test_groups_go_by_their_latest_month_and_never_span_two_splits() -> None:
    out = assign_splits(frame(), group_key=group_key_for("wikidata"))
    assert split_of_groups(out) == {entity: {split} for entity, split in EXPECTED.items()}


def test_rows_keep_their_order_and_values() -> None:
    df = frame()
    out = assign_splits(df, group_key=group_key_for("wikidata"))
    assert out.columns == df.columns
    assert out.drop("split").equals(df.drop("split"))
    assert out.get_column("split").null_count() == 0


def test_the_same_rows_in_any_order_get_the_same_splits() -> None:
    df = frame()
    first = dict(assign_splits(df, group_key=group_key_for("wikidata")).select("id", "split").iter_rows())
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=7)
    second = dict(assign_splits(shuffled, group_key=group_key_for("wikidata")).select("id", "split").iter_rows())
    assert first == second


def test_split_dates_name_the_window_boundaries() -> None:
    assert split_dates(frame()) == {"newest_event_date": "2026-05-20", "test_from": "2026-04-01",
                                    "validation_from": "2026-03-01"}


def test_windows_cross_the_year_boundary() -> None:
    df = to_frame([wikidata_row("Q9", 0, date(2026, 2, 3)), wikidata_row("Q8", 0, date(2026, 1, 1)),
                   wikidata_row("Q7", 0, date(2025, 12, 31)), wikidata_row("Q6", 0, date(2025, 11, 30))],
                  WikidataRecord)
    out = assign_splits(df, group_key=group_key_for("wikidata"))
    assert out.get_column("split").to_list() == ["test", "test", "validation", "train"]
    assert split_dates(df)["test_from"] == "2026-01-01"
    assert split_dates(df)["validation_from"] == "2025-12-01"


def test_a_newest_date_from_outside_moves_the_window() -> None:
    # A release takes M over all its sources: here another source has rows in July.
    out = assign_splits(frame(), group_key=group_key_for("wikidata"), newest=date(2026, 7, 1))
    assert split_of_groups(out) == {"Q1": {"train"}, "Q2": {"train"}, "Q3": {"train"}, "Q4": {"train"},
                                    "Q5": {"validation"}, "Q6": {"train"}, "Q7": {"train"}}


def test_rows_without_an_anchor_are_each_their_own_group() -> None:
    rows = [wikidata_row("Q1", 0, date(2026, 5, 1)), wikidata_row("Q2", 1, date(2026, 1, 1))]
    df = to_frame(rows, WikidataRecord).with_columns(pl.lit([], dtype=pl.List(pl.String())).alias("delta_triple"))
    out = assign_splits(df, group_key=group_key_for("wikidata"))
    assert out.get_column("split").to_list() == ["test", "train"]


def test_other_sources_split_row_by_row() -> None:
    rows = [QARecord(id=record_id("bulletin", str(n)), question=f"q{n}", answer="a", answer_type="text",
                     source="bulletin",
                     level="L1", event_date=day, as_of=AS_OF, verification=CHECK, generator="bulletin_llm_v1")
            for n, day in enumerate([date(2026, 5, 9), date(2026, 3, 9), date(2026, 1, 9)])]
    out = assign_splits(to_frame(rows, QARecord), group_key=group_key_for("bulletin"))
    assert out.get_column("split").to_list() == ["test", "validation", "train"]


def test_a_pages_questions_from_two_windows_stay_together() -> None:
    """A page asked about in January and again in May: both questions go where May's goes."""
    def row(page_id: int, key: str, day: date) -> WikipediaRecord:
        return WikipediaRecord(
            id=record_id("wikipedia", str(page_id), key), question=f"What is the {key} of page {page_id}?", answer="a",
            answer_type="text",
            source="wikipedia", level="infrequent_update", event_date=day, as_of=AS_OF, verification=CHECK,
            generator="wikipedia_infobox_template_v2", page_title=f"Page {page_id}", page_id=page_id,
            infobox_key=key, revision_id=page_id * 10, value_before=None, recompute="{}",
            update_frequency="infrequent_update", domain="others", infobox="{}", first_paragraph="")

    rows = [row(1, "mayor", date(2026, 1, 9)), row(1, "population", date(2026, 5, 9)), row(2, "mayor",
                                                                                             date(2026, 1, 9))]
    out = assign_splits(to_frame(rows, WikipediaRecord), group_key=group_key_for("wikipedia"))
    assert out.get_column("split").to_list() == ["test", "test", "train"]


def test_an_empty_frame_keeps_its_schema() -> None:
    empty = to_frame([], WikidataRecord)
    out = assign_splits(empty, group_key=group_key_for("wikidata"))
    assert out.height == 0 and out.schema == empty.schema
    assert split_dates(empty) == {"newest_event_date": None, "test_from": None, "validation_from": None}


def test_rows_without_their_sources_key_column_are_each_their_own_group() -> None:
    """A source folder need only start with the common columns: without `page_id`, no page groups rows."""
    rows = [QARecord(id=record_id("wikipedia", str(n)), question=f"q{n}", answer="a", answer_type="text",
                     source="wikipedia",
                     level="infrequent_update", event_date=day, as_of=AS_OF, verification=CHECK,
                     generator="wikipedia_infobox_template_v2")
            for n, day in enumerate([date(2026, 5, 9), date(2026, 1, 9)])]
    df = to_frame(rows, QARecord)
    assert group_key_for("wikipedia", df.columns) is DEFAULT_GROUP_KEY
    assert group_key_text("wikipedia", df.columns) == "the row itself (`id`)"
    assert assign_splits(df, group_key=group_key_for("wikipedia", df.columns))["split"].to_list() == ["test", "train"]
