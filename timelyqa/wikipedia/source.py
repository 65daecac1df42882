"""The Wikipedia source's registry entry: what the shared code needs to know of it."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from timelyqa.llm.check import CheckReject
from timelyqa.llm.client import ReplyFailure
from timelyqa.record import WikipediaRecord
from timelyqa.sources import Card, Deployment, GroupKey, SourceSpec, Stage
from timelyqa.wikipedia.changes import Drop
from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject
from timelyqa.mediawiki.dump import ReadReject
from timelyqa.wikipedia.gate import InfoboxGateReject
from timelyqa.wikipedia.labels import LabelReject
from timelyqa.wikipedia.questions import Reject
from timelyqa.wikipedia.refresh import RefreshReject
from timelyqa.wikipedia.writers import WriterReject

DEMO = ("data/demo/wikipedia-history.xml.bz2",)
DEMO_WINDOW = (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 11, 16, tzinfo=UTC))
"""The window of the bundled export's edits that the demo asks about."""


SECTION = (
    "## Wikipedia: answers on any date", "",
    "Each `wikipedia` row asks for one infobox value of one page (`page_title`, `infobox_key`); `answer` is "
    "that value at `as_of`, the end of the window the change was found in, and `level` is "
    "`frequent_update` when the value changed again in the week after. `recompute` is the rule that "
    "answers the question on any other date: the value under that key in the last revision of the page at "
    "or before the date. Apply it to a MediaWiki dump with history or to the live API:", "",
    "```", "timelyqa wikipedia answer --date 2027-01-15 --questions RELEASE_FOLDER "
    "--api https://en.wikipedia.org/w/api.php --user-agent 'you (you@example.org)' --out answers.parquet",
    "```", "",
)

SOURCE = SourceSpec(
    name="wikipedia",
    record=WikipediaRecord,
    # Questions about one page (over several windows merged) share its facts and its history.
    group_key=GroupKey("page_id", pl.col("page_id").cast(pl.String()), "the page (`page_id`)"),
    licence="cc-by-sa-4.0",  # Wikipedia text is CC BY-SA 4.0
    card=Card("infobox values that changed between Wikipedia revisions, as DailyQA makes them", SECTION),
    stages=(
        Stage("read", ("pages_listed", "pages_read", "pages_other_namespace", "pages_redirect", "pages_incomplete",
                       "revisions_read"), (ReadReject,)),
        Stage("changes", ("pages_unchanged_in_window", "pages_changed_in_window", "revisions_in_window",
                          "keys_changed", "keys_superseded", "keys_not_chosen", "changes_chosen"), (Drop,)),
        Stage("write", ("questions_written",), (WriterReject,)),
        # Every written question, template or model, as it will be released, before the checker model reads it.
        Stage(GATE_STAGE, (GATE_PASSED,), (QualityReject, InfoboxGateReject)),
        Stage("check", ("questions_checked",), (Reject, CheckReject)),
        # A question keeps the rule's domain when the model gives none of the seven: counted by why.
        Stage("label", ("domains_by_llm", "domains_by_rule", *(f"domains_by_rule_{f}" for f in ReplyFailure)),
              (LabelReject,)),
        # `refresh`: the released rows asked again (--previous); its rejects retire them (publish/release.py). A row
        # whose page the input does not hold gets no verdict and carries (`not_rechecked`).
        Stage("refresh", ("rechecked", "still_true", "not_rechecked"), (RefreshReject,)),
    ),
    deployment=Deployment("wikipedia-weekly", "flows.wikipedia:wikipedia_flow", "0 3 * * 1"),
    command="timelyqa.cli.wikipedia:wikipedia_app",
    run="timelyqa.wikipedia.pipeline:run_on",
    demo_inputs=DEMO,
    fixtures=("tests/fixtures/wikipedia/history.xml.gz",),
)
