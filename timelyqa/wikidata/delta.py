"""The knowledge delta of two snapshots: triples new in T1, and (s, p) pairs that lost or gained objects.

The big joins run on a 64-bit hash of the key columns, several times faster than joining strings.
Every (s, p) the hashes flag is then compared on the strings, so a hash never invents a change; a
change can hide only behind a full 64-bit collision (odds about n0 * n1 / 2**64, 5e-6 for two
10-million-triple snapshots).
"""

from __future__ import annotations

import polars as pl

DELTA_SCHEMA = pl.Schema({"s": pl.String(), "p": pl.String(), "o": pl.String(), "kind": pl.String(),
                          "change": pl.String(), "before": pl.List(pl.String())})


def _keys(triples: pl.DataFrame) -> pl.DataFrame:
    return triples.select(h=pl.struct("s", "p", "o").hash(seed=0), hsp=pl.struct("s", "p").hash(seed=0))


def compute_delta(t0: pl.DataFrame, t1: pl.DataFrame) -> pl.DataFrame:
    """T1 triples that are new (`change=insert`), or sit in an (s, p) that lost an object (`update`).

    An (s, p) whose object set grew yields only its new objects: the objects it kept are no change.
    `before` lists the T0 objects of the row's (s, p), empty when the pair is new. Rows come in T1's order.
    """
    return delta_rows(t0, t1.with_row_index("row")).drop("row")


def delta_rows(t0: pl.DataFrame, t1: pl.DataFrame) -> pl.DataFrame:
    """compute_delta of a T1 whose `row` column places each triple in its snapshot, kept in the output.

    Every rule keys on the subject, so the delta of a whole snapshot pair is the union of the deltas of any
    partition by subject, ordered by `row`: that is how a full dump pair runs a bucket at a time.
    """
    k0 = _keys(t0)
    k1 = _keys(t1).with_columns(row=t1.get_column("row"))
    inserted = k1.join(k0, on="h", how="anti").select("row", "hsp")
    lost = k0.join(k1, on="h", how="anti").select("hsp").unique()
    touched = pl.concat([inserted.select("hsp"), lost]).unique()

    after = t1.filter(pl.col("row").is_in(k1.join(touched, on="hsp", how="semi").get_column("row").implode()))
    before = (t0.filter(_in(k0, touched)).group_by("s", "p")
              .agg(before=pl.col("o").unique().sort()))
    after_sets = after.group_by("s", "p").agg(objects=pl.col("o").unique())
    rows = (after.join(before, on=["s", "p"], how="left")
            .join(after_sets, on=["s", "p"], how="left")
            .with_columns(pl.col("before").fill_null(pl.lit([], dtype=pl.List(pl.String()))))
            .with_columns(
                is_new=~pl.col("o").is_in(pl.col("before")),
                lost=(pl.col("before").list.set_difference(pl.col("objects")).list.len() > 0))
            .filter(pl.col("is_new") | pl.col("lost"))
            .with_columns(change=pl.when(pl.col("is_new")).then(pl.lit("insert")).otherwise(pl.lit("update"))))
    # A triple stated twice counts once, as its first statement in T1.
    return rows.sort("row").unique(["s", "p", "o"], keep="first", maintain_order=True).select(*DELTA_SCHEMA, "row")


def _in(keys: pl.DataFrame, touched: pl.DataFrame) -> pl.Series:
    return keys.get_column("hsp").is_in(touched.get_column("hsp").implode())
