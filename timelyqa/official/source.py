"""The official-site source's registry entry: what the shared code needs to know of it."""

from __future__ import annotations

import polars as pl

from timelyqa.official.reasons import Failure, Health, RecipeReject
from timelyqa.official.record import OfficialRecord
from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject
from timelyqa.sources import Card, Deployment, GroupKey, SourceSpec, Stage

DEMO = ("data/demo/official/bundle.yaml",)
"""The bundled world: a statistics office, a river-gauge agency and a weather service whose values depend on the date,
served on 127.0.0.1 at the bundle's port, with their recipes and the fixed clocks the demo checks them at."""

SECTION = (
    "## Official sites: real-time questions answered by recipes (RT-QA)", "",
    "Each `official_site` row is a question about an authoritative site whose answer changes with time (\"What was "
    "the highest river level at the Caton gauge over the past 7 days, excluding today?\"). Its `recipe` column holds "
    "the recipe, format v1 (YAML), that answers it at any evaluation clock: the page's URL with date placeholders, "
    "the CSS or XPath selector, the value's type, how values over several days combine, rounding, unit and valid "
    "range. `level` is RT-QA's: L1 names the target, L2 and L3 describe it through one or two hops and reuse their "
    "L1's recipe (`family`).", "",
    "`train` and `validation` hold resolved snapshots (`kind` = `snapshot`): the answer the recipe gave at `as_of`, "
    "with the current time written into the question, and the dates it resolved (`dates`). `test` holds live "
    "questions (`kind` = `live`, `answer` empty): compute the answer when your model is evaluated, with "
    "`timelyqa live resolve --recipes <test parquet> --at <the model's clock> --out answers/` (a recipe whose URL "
    "starts with `{site}` needs `--var site=https://...`, the site's origin), as RT-QA does, or let `timelyqa eval` "
    "resolve them and tell the model that clock (\"Current time: ...\"). Live rows are only "
    "in this config, never in `default`. A recipe that fails its daily check N days in a row leaves the test split "
    "until a repair is accepted, and the changelog says so. Recipes never carry code: a dataset read from the Hub "
    "never runs any.", "",
    "Answers are typed by their recipe (`answer_type`, `answer_value`): a number or integer with a `unit` pint "
    "knows is a `quantity` (\"1.92 m\": value 1.92, precision -2 from `round: 2`, unit m, so \"1.92\" and "
    "\"192 cm\" are right), without one a `number`; a `date` a date; a `list` a list, graded as a set, also on a day "
    "it holds one item; anything else `text`. The question says the unit (\"..., in metres?\") when the recipe's "
    "does not. A live row carries the type and what is known of the value (unit, precision) before it is resolved, "
    "and `live resolve` writes each answer's `answer_type`, `answer_value` and `answer_aliases` beside it.", "",
    "Splits go by the day a recipe's family joined (`event_date`), and a family never crosses splits.", "",
    "Recipe format v1, the fields: `recipe` (1), `id`, `question`, `level` (L1, L2, L3), `base` and `hops` (L2/L3: "
    "the L1 recipe reused and the descriptions standing for its target), `timezone` (the zone the evaluation "
    "clock's dates are taken in), `added`, `each_day` (`from`, `to`: fetch once per day, as `{day}`), `fetch` (`url` "
    "with placeholders, `render`: never, always or auto), `extract` (`css` or `xpath`, optional `regex`, `type`: "
    "number, integer, date, text or list), `combine` (first, last, min, max, mean, sum, count, join), `round`, "
    "`unit`, `valid` (`min`, `max`), `vars`. Date placeholders: `today`, `yesterday`, `today-N`, `today+N`, "
    "`last-<weekday>`, `next-<weekday>`, `workday`, ISO or with a format (`{today:%d/%m/%Y}`); other names are "
    "variables (`{site}`, overridden with `--var`). A failure is never a guessed answer: `site_down`, "
    "`page_missing`, `robots_disallowed`, `host_not_allowed`, `extracted_nothing`, `value_invalid`, "
    "`not_live_clock`, `extract_limit`, `extract_error`.", "",
    "A release's recipes are third-party data: each reaches only the host written in its own text (or the origin "
    "given for `{site}`), a private or loopback address only when you name it (`--allow-host`, `--var`), and its "
    "selector and regex (RE2) run under a time and memory limit.", "",
)


def released(df: pl.DataFrame) -> pl.DataFrame:
    """Test holds the live questions, train and validation the snapshots (RT-QA: the answer is computed at
    evaluation time; a trainer needs fixed answers)."""
    if "kind" not in df.columns:  # rows with the common columns only: nothing says which are live
        return df
    test = pl.col("split") == "test"
    live = pl.col("kind") == "live"
    return df.filter((test & live) | (~test & ~live))


SOURCE = SourceSpec(
    name="official_site",
    record=OfficialRecord,
    # An L2/L3 question reuses its L1's recipe: the same pages give the same answers, so the family shares a split.
    group_key=GroupKey("family", pl.col("family"), "the recipe family (`family`: an L1 recipe and its L2/L3 "
                       "variants)"),
    licence="other",  # questions, recipes and single values; each site's terms are its owner's
    card=Card("real-time questions about official sites, answered at evaluation time by declarative recipes, as "
              "RT-QA asks them", SECTION),
    stages=(
        Stage("recipes", ("recipe_files", "recipes"), (RecipeReject,)),
        Stage("resolve", ("resolutions", "resolved"), (Failure,)),
        # The gate reads a recipe's question with its answer, so it follows the resolution that gives the answer.
        Stage(GATE_STAGE, (GATE_PASSED,), (QualityReject,)),
        # `refresh`: the release's changelog reads a retired row's reason from this stage (publish/release.py).
        Stage("refresh", ("live_questions",), (Health,)),
    ),
    deployment=Deployment("official-daily", "flows.official:official_flow", "0 5 * * *"),
    spider="official",
    command="timelyqa.cli.official:official",
    released=released,
    run="timelyqa.official.pipeline:run_on",
    demo_inputs=DEMO,
    fixtures=("tests/fixtures/official/bundle.yaml",),
)
