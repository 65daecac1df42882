"""The Wikidata source's registry entry: what the shared code needs to know of it."""

from __future__ import annotations

import polars as pl

from timelyqa.quality import GATE_PASSED, GATE_STAGE, QualityReject
from timelyqa.record import WikidataRecord
from timelyqa.sources import Card, Deployment, GroupKey, SourceSpec, Stage
from timelyqa.wikidata.candidates import RenderReject
from timelyqa.wikidata.dump import LineReject
from timelyqa.wikidata.filters import Drop
from timelyqa.wikidata.gate import WikidataQualityReject
from timelyqa.wikidata.refresh import RefreshReject
from timelyqa.wikidata.statements import StatementReject
from timelyqa.wikidata.synth import Miss
from timelyqa.wikidata.values import ValueReject
from timelyqa.wikidata.verify import ChangeReject, SparqlReject

DEMO = ("data/demo/wikidata-t0.json.gz", "data/demo/wikidata-t1.json.bz2")


SOURCE = SourceSpec(
    name="wikidata",
    record=WikidataRecord,
    # Questions about one entity share facts; keeping the entity in one split stops train leaking test answers.
    group_key=GroupKey("delta_triple", pl.col("delta_triple").list.get(0, null_on_oob=True),
                       "the anchoring entity (the subject of the changed triple, `delta_triple[0]`)"),
    licence="cc0-1.0",  # Wikidata's structured data is CC0
    card=Card("facts that changed between two Wikidata snapshots, answers proven by a SPARQL query"),
    stages=(
        Stage("read", ("t0_entities", "t0_triples", "t1_entities", "t1_triples"),
              (LineReject, StatementReject, ValueReject)),
        Stage("delta", ("delta_triples",)),
        Stage("filter", ("anchors",), (Drop,)),
        Stage("synthesize", ("candidates_L1", "candidates_L2", "candidates_L3"), (Miss,)),
        Stage("render", ("rendered",), (RenderReject,)),
        Stage(GATE_STAGE, (GATE_PASSED,), (QualityReject, WikidataQualityReject)),
        Stage("verify", ("verified",), (SparqlReject, ChangeReject)),
        # `refresh`: the released rows asked again (--previous); its rejects retire them (publish/release.py).
        Stage("refresh", ("rechecked", "still_true"), (RefreshReject,)),
    ),
    deployment=Deployment("wikidata-weekly", "flows.wikidata:wikidata_flow", "0 3 * * 1"),
    command="timelyqa.cli.wikidata:wikidata",
    run="timelyqa.wikidata.pipeline:run_on",
    demo_inputs=DEMO,
    fixtures=("tests/fixtures/wikidata/t0.json.gz", "tests/fixtures/wikidata/t1.json.gz"),
)
