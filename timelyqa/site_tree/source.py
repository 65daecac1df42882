"""The site-tree source's registry entry: what the shared code needs to know of it."""

from __future__ import annotations

import polars as pl

from timelyqa.site_tree import candidates
from timelyqa.site_tree.candidates import PageReject
from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject
from timelyqa.site_tree.refresh import RefreshReject
from timelyqa.site_tree.gate import SiteGateReject
from timelyqa.site_tree.llm import AnswerReject, VerifierReject, WriterReject
from timelyqa.site_tree.questions import FUNNEL, QuestionReject
from timelyqa.site_tree.record import SiteTreeRecord
from timelyqa.sources import Card, Deployment, GroupKey, SourceSpec, Stage

DEMO = ("data/demo/site/index.html",)
DEMO_PORT = 47311
"""The bundled sites are served on this port, so their root URL, and with it every question's id, is the same on
every run."""

SECTION = (
    "## Site trees: questions by click depth", "",
    "Each `site_tree` row is WebWalkerQA's kind of question about one website (`root_url`): `single_source` from "
    "one page two to four clicks from the root (easy, medium, hard by depth), or `multi_source`, needing two pages "
    "whose depths sum to 2-4, 5-6 or 7-8. `golden_path` is the click chain from the root to each page in "
    "`source_urls`; `facts` names the labelled values on those pages the answer comes from, and `as_of` is the "
    "crawl's time: answers on a website change, and a later crawl re-checks every row against its pages.", "",
)


SOURCE = SourceSpec(
    name="site_tree",
    record=SiteTreeRecord,
    # Questions about one site share its pages; keeping a site in one split stops train leaking test answers.
    group_key=GroupKey("root_url", pl.col("root_url"), "the website (`root_url`)"),
    licence="other",  # the terms of each site's pages, named in every row's `evidence`
    card=Card("questions over whole website trees, by click depth, as WebWalkerQA makes them", SECTION),
    stages=(
        Stage("questions", FUNNEL, (QuestionReject,)),
        # The LLM writer (`--generator llm`): pages and pairs chosen and written about, then verified. Its rule checks
        # share the template's reasons where they mean the same (placeholder_value, duplicate_question, ...).
        Stage("write", (*candidates.FUNNEL, "questions_written"), (PageReject, WriterReject, AnswerReject)),
        # Both generators' questions, as released, before any verification: the common rules and the source's own.
        Stage(GATE_STAGE, (GATE_PASSED,), (QualityReject, SiteGateReject)),
        Stage("verify", ("questions_verified",), (VerifierReject,)),
        Stage("refresh", ("rechecked", "still_true"), (RefreshReject,)),
    ),
    deployment=Deployment("site-tree-monthly", "flows.site_tree:site_tree_flow", "0 4 1 * *"),
    spider="site_tree",
    command="timelyqa.cli.site_tree:site_tree",
    run="timelyqa.site_tree.pipeline:run_on",
    demo_inputs=DEMO,
    fixtures=("tests/fixtures/site_tree/site/index.html",),
)
