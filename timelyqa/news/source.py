"""The news source's registry entry: what the shared code needs to know of it."""

from __future__ import annotations

import polars as pl

from timelyqa.news import questions
from timelyqa.news.articles import ArticleReject
from timelyqa.news.gate import NewsQualityReject
from timelyqa.news.llm import CheckerReject, RelevanceReject, WriterReject
from timelyqa.news.portal import PortalReject
from timelyqa.news.questions import ArticleCheckReject, TemplateReject
from timelyqa.news.record import NewsRecord
from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject
from timelyqa.sources import Card, Deployment, GroupKey, SourceSpec, Stage
from timelyqa.mediawiki.dump import ReadReject

DEMO = ("data/demo/news/portal.xml", "data/demo/news/outlets.yaml")
"""The bundled archive: the portal's day pages as an export, and the allow-list; the outlets' pages are in
`outlets/<host>/` beside them, each served on its loopback host at `ARCHIVE_PORT` for the run."""
ARCHIVE_PORT = 47312
"""The port the bundled archives' outlets are served on: their links, and with them the ids, are the same on every
run."""

SECTION = (
    "## News: questions about the Current Events Portal's events", "",
    "Each `news` row is LiveNewsBench's kind of question about one event of Wikipedia's Current Events Portal "
    "(`event_id`, `event_summary`, `category`, `topic`; `event_date` is the event's day), answered by an article "
    "the portal cites on an outlet of the allow-list (`article_url`, `outlet`, `published`; the first `evidence` "
    "entry names the article with its title, fetch time and sha256, and `revision` the archived copy when one was "
    "fetched). Only articles dated from 3 days before to 11 days after their event are used. The rows carry "
    "questions, answers and URLs, never the articles' text: the articles belong to their outlets.", "",
    "`event_summary` and `topic` say which event a question is about, with the answer masked (`___`): the template "
    "asks about a span of that very summary, so unmasked it would hand the answer to a model shown the row. The "
    "article and `evidence` columns are the answer's source, for a grader or a reviewer, not for the model asked. "
    "Every question passed the quality gate before its answer was checked against the article; the gate's drops "
    "are counted under the stage `quality`.", "",
    "Splits go by event date, and an event's questions never cross splits. A refresh moves the previous release's "
    "validation and test rows into train. `longitudinal` holds pairs the writer judged may change over time "
    "(`temporal_stability`); `human_verified` holds test pairs a person accepted as they are (accept or reject, "
    "no edits), decisions kept from release to release.", "",
)


SOURCE = SourceSpec(
    name="news",
    record=NewsRecord,
    # Questions about one event share its articles; keeping an event in one split stops train leaking test answers.
    group_key=GroupKey("event_id", pl.col("event_id"), "the portal event (`event_id`)"),
    licence="other",  # questions and answers only; each article's terms are its outlet's
    card=Card("questions about the news events of Wikipedia's Current Events Portal, answered by the articles it "
              "cites, as LiveNewsBench makes them", SECTION),
    stages=(
        Stage("events", ("day_pages", "events"), (PortalReject, ReadReject)),
        Stage("articles", ("links_cited", "links_allowed", "articles_fetched", "articles_kept"), (ArticleReject,)),
        Stage("questions", questions.FUNNEL, (TemplateReject,)),
        # The LLM writer (`--generator llm`): relevance and the writer on the writer model. Its rule checks share the
        # template's reasons where they mean the same.
        Stage("write", ("articles_read", "articles_relevant", "questions_written"), (RelevanceReject, WriterReject)),
        # Both paths: the question-quality gate on the question as released, then the checks that verify it (the
        # answer stated in an article; for the LLM path, the checker model too).
        Stage(GATE_STAGE, (GATE_PASSED,), (QualityReject, NewsQualityReject)),
        Stage("article_check", questions.CHECKED, (ArticleCheckReject,)),
        Stage("check", ("questions_verified",), (CheckerReject,)),
    ),
    deployment=Deployment("news-daily", "flows.news:news_flow", "0 6 * * *"),
    spider="news",
    command="timelyqa.cli.news:news",
    refresh_to_train=True,  # LiveNewsBench 2.3: each refresh moves the previous validation and test into train
    run="timelyqa.news.pipeline:run_on",
    demo_inputs=DEMO,
    fixtures=("tests/fixtures/news/world/portal.xml", "tests/fixtures/news/world/outlets.yaml"),
)
