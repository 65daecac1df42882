"""The prompt registry: every template loads, renders strictly, returns a declared shape, and is the paper's text."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import zipfile
from functools import cache
from importlib.resources import files
from pathlib import Path

import pytest
from pydantic import ValidationError

from timelyqa.errors import ConfigError
from timelyqa.llm import prompts
from timelyqa.llm.prompts import Prompt, all_prompts, get
from timelyqa.llm.shapes import SHAPES, GradeOut, QAOut, VerifyOut

ROOT = Path(__file__).resolve().parent.parent
# The seed papers live beside the repository, not in it, so the lines the templates are checked against
# are quoted in tests/fixtures/seed_excerpts/: one file per paper, written once from the seeds.
EXCERPTS = Path(__file__).resolve().parent / "fixtures" / "seed_excerpts"
SEED_OF_FAMILY = {"rtqa": "000_1dbf778873c79f47.txt", "livenewsbench": "001_5b68a21493587f95.txt",
                  "dailyqa": "002_01bc4c24dd0c27fd.txt", "webwalker": "003_cb44cdedb9fa3c61.txt"}

PROMPTS = all_prompts()
BY_ID = {p.id: p for p in PROMPTS}


def _norm(text: str) -> str:
    # Compare text, not typography: curly quotes, markdown bold and line wrapping differ between the
    # PDF extraction and a template, the words do not.
    text = text.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}))
    return " ".join(text.replace("*", "").split())


_LINE_NUMBER = re.compile(r"(?m)^[ \t]*\d{1,4}(?:[ \t]+|$)")  # the review copy numbers every line
_SLICE = re.compile(r"(?m)^@@ lines (\d+)-(\d+)\n")
_SHA = re.compile(r"^# sha256 of the body \(the first @@ line to the end\): ([0-9a-f]{64})$")


def _excerpt(family: str) -> tuple[list[str], str, bytes]:
    """An excerpt file's header lines, its stated body hash and its body (from the first "@@" line)."""
    raw = (EXCERPTS / f"{family}.txt").read_bytes()
    start = raw.index(b"\n@@ lines ") + 1
    header = raw[:start].decode("utf-8").splitlines()
    sha = _SHA.match(header[-1])
    return header, sha.group(1) if sha else "", raw[start:]


@cache
def _seed(family: str) -> tuple[str, ...]:
    """The excerpt's slices, each normalised on its own: a sentence must sit inside one slice."""
    _, _, body = _excerpt(family)
    slices = _SLICE.split(body.decode("utf-8"))[3::3]
    return tuple(_norm(_LINE_NUMBER.sub("", text)) for text in slices)


def _in_paper(family: str, text: str) -> bool:
    return any(_norm(text) in piece for piece in _seed(family))


# A template's sentences are of three kinds: the paper's own words; a sentence around a slot (the paper
# names its inputs in many ways: "summary", "-question"", "{Doc1 INFO}"); and the JSON output
# instruction, the one rewrite allowed.
_SLOT_UNIT = re.compile(r"\{\{")
_JSON_UNIT = re.compile(r'\{"|"\w+":|JSON')


def _units(text: str) -> list[tuple[str, str]]:
    units = []
    for line in text.splitlines():
        if line.lstrip().startswith(('"', "{", "}")) and not _SLOT_UNIT.match(line):  # a JSON example
            units.append((line.strip(), "json"))
            continue
        for unit in re.split(r"(?<=[.!?。])\s+", line):
            unit = unit.strip()
            if re.search(r"\w", unit):
                kind = "slot" if _SLOT_UNIT.search(unit) else "json" if _JSON_UNIT.search(unit) else "paper"
                units.append((unit, kind))
    return units


def _paper_units(text: str) -> list[str]:
    return [unit for unit, kind in _units(text) if kind == "paper"]


def _values(prompt: Prompt) -> dict[str, str]:
    return {slot: f"<{slot} value 7f3a>" for slot in prompt.slots}


def test_the_registry_holds_every_prompt_of_the_seed_papers() -> None:
    assert set(BY_ID) == {
        "livenewsbench_query_writer_v1", "livenewsbench_relevance_check_v1", "livenewsbench_qa_writer_v1",
        "livenewsbench_independent_answerer_v1", "livenewsbench_guideline_check_v1", "livenewsbench_grader_v1",
        "dailyqa_query_writer_v1", "dailyqa_rag_answerer_v1", "dailyqa_domain_classifier_v1",
        "webwalker_single_source_qa_writer_v1", "webwalker_multi_source_qa_writer_v1",
        "webwalker_single_source_verifier_v1", "webwalker_multi_source_verifier_v1",
        "rtqa_workflow_repair_v1", "rtqa_recipe_repair_v2", "rtqa_recipe_generation_v1", "rtqa_recipe_hops_v1",
    }
    assert len(BY_ID) == len(PROMPTS), "two templates share an id"


def test_templates_are_package_data_read_through_importlib_resources() -> None:
    folder = files("timelyqa.llm") / "prompts"
    found = sorted(f"{family.name}/{item.name}" for family in folder.iterdir() if family.is_dir()
                   for item in family.iterdir() if item.name.endswith(".md"))
    assert found == sorted(f"{p.name}.v{p.version}.md" for p in PROMPTS)


def test_templates_load_from_a_zipped_install(tmp_path: Path) -> None:
    """No path tricks: the registry reads its files the way an installed wheel (or a zip) serves them."""
    archive = tmp_path / "timelyqa.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (ROOT / "timelyqa").rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(ROOT).as_posix())
    code = ("import timelyqa.llm.prompts as p; assert p.__file__.startswith(%r), p.__file__; "
            "print(sorted(x.id for x in p.all_prompts()))" % str(archive))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(archive)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(sorted(BY_ID))


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.id)
def test_every_prompt_renders_with_all_its_values(prompt: Prompt) -> None:
    values = _values(prompt)
    messages = prompt.render(**values)
    assert [m["role"] for m in messages] == (["system", "user"] if prompt.system else ["user"])
    text = "\n".join(m["content"] for m in messages)
    for slot, value in values.items():
        assert value in text, f"{prompt.id}: slot {slot} not filled"
    assert "{{" not in text and "}}" not in text
    assert prompt.slots, f"{prompt.id} takes no input"


def test_a_missing_value_is_named_with_the_prompt() -> None:
    prompt = get("livenewsbench/relevance_check")
    with pytest.raises(ConfigError, match=r"livenewsbench_relevance_check_v1.*no value for slot content"):
        prompt.render(summary="s", title="t")


def test_an_unknown_value_is_named_with_the_prompt() -> None:
    prompt = get("livenewsbench/query_writer")
    with pytest.raises(ConfigError, match=r"livenewsbench_query_writer_v1.*unknown slot category"):
        prompt.render(headline="h", summary="s", category="Politics and elections")


def test_a_value_that_is_not_text_is_refused() -> None:
    with pytest.raises(ConfigError, match="slot summary needs text"):
        get("livenewsbench/query_writer").render(headline="h", summary=3)  # type: ignore[arg-type]


def test_values_are_inserted_literally() -> None:
    """An article quoting template syntax must not pull another slot's value in."""
    [message] = get("livenewsbench/query_writer").render(headline="{{summary}}", summary="S")
    assert "Headline: {{summary}}\nSummary: S\nQuery:" in message["content"]


def test_a_paper_with_a_system_part_keeps_it() -> None:
    system, user = get("rtqa/workflow_repair").render(question="Q", workflow="def main(): ...")
    assert system["role"] == "system"
    assert system["content"].startswith("你是一个专业的代码修复和验证助手")
    assert user["content"].endswith("相应的工作流代码:\ndef main(): ...")


def test_get_returns_the_newest_version_or_the_one_asked() -> None:
    assert get("dailyqa/query_writer") is get("dailyqa/query_writer", 1)
    assert get("dailyqa/query_writer").id == "dailyqa_query_writer_v1"


def test_get_names_what_exists_when_asked_for_what_does_not() -> None:
    with pytest.raises(ConfigError, match=r"unknown prompt 'livenewsbench/judge'; prompts: dailyqa/domain_classifier, dailyqa/query_writer"):
        get("livenewsbench/judge")
    with pytest.raises(ConfigError, match=r"'livenewsbench/grader' has no version 2; versions: 1$"):
        get("livenewsbench/grader", 2)


_TEMPLATE = """name: demo/writer
version: {version}
source: a test
shape: QueryOut
notes:
- a note that goes on
  over two lines

## user
{text} {{{{topic}}}}
"""


@pytest.fixture
def template_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A registry read from a folder of the test's own, so versions and bad files can be tried."""
    (tmp_path / "demo").mkdir()
    monkeypatch.setattr(prompts, "template_root", lambda: tmp_path)
    prompts._registry.cache_clear()
    yield tmp_path / "demo"
    prompts._registry.cache_clear()


def test_a_new_wording_is_a_new_version(template_tree: Path) -> None:
    for version in (1, 2, 10):
        (template_tree / f"writer.v{version}.md").write_text(_TEMPLATE.format(version=version, text=f"W{version}"))
    assert get("demo/writer").version == 10
    assert get("demo/writer", 2).render(topic="x") == [{"role": "user", "content": "W2 x"}]
    assert get("demo/writer", 1).notes == ("a note that goes on over two lines",)
    with pytest.raises(ConfigError, match="versions: 1, 2, 10"):
        get("demo/writer", 3)


@pytest.mark.parametrize(("filename", "text", "message"), [
    ("writer.v2.md", _TEMPLATE.format(version=1, text="W"), "the header says demo/writer v1, the file name says"),
    ("writer.md", _TEMPLATE.format(version=1, text="W"), "must be <name>.v<N>.md"),
    ("writer.v1.md", _TEMPLATE.format(version=1, text="W").replace("QueryOut", "Query"), "unknown shape 'Query'"),
    ("writer.v1.md", _TEMPLATE.format(version=1, text="W").replace("## user", "## assistant"), "no '## user'"),
    ("writer.v1.md", "shape QueryOut\n## user\nW", "cannot read header line 1"),
])
def test_a_broken_template_names_its_file(template_tree: Path, filename: str, text: str, message: str) -> None:
    (template_tree / filename).write_text(text)
    with pytest.raises(ConfigError, match=re.escape(f"demo/{filename}") + ".*" + re.escape(message)):
        all_prompts()


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.id)
def test_the_json_the_prompt_asks_for_is_its_shape(prompt: Prompt) -> None:
    asked = set(re.findall(r'"(\w+)":', prompt.system + prompt.user))
    assert asked == set(prompt.shape.model_fields), prompt.id


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=lambda s: s.__name__)
def test_every_shape_is_a_closed_object_with_described_fields(shape: type) -> None:
    schema = shape.model_json_schema()
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    assert all(field.get("description") for field in schema["properties"].values())
    with pytest.raises(ValidationError):
        shape.model_validate({**{name: "x" for name in schema["properties"]}, "extra": "x"})


def test_every_shape_is_used_by_a_prompt() -> None:
    assert {p.shape for p in PROMPTS} == set(SHAPES.values())


def test_replies_in_the_papers_own_forms_validate() -> None:
    skipped = QAOut.model_validate_json('{"question": "N/A", "answer": "N/A", "temporal_stability": "N/A", '
                                        '"explanation": "The article is a live blog."}')
    assert skipped.skipped
    with pytest.raises(ValidationError):  # the three options of Figure 6, or N/A
        QAOut(question="q", answer="a", temporal_stability="Stable", explanation="e")
    assert VerifyOut.model_validate_json('{"reason": "r", "decision": "false"}').decision is False
    assert [GradeOut(grade=g).verdict for g in "ABC"] == ["correct", "incorrect", "not_attempted"]


def test_the_guideline_check_gets_the_writers_full_guidelines_and_examples() -> None:
    writer = get("livenewsbench/qa_writer").user
    guidelines = writer[writer.index("# Q&A Pair Requirements"): writer.index("# Step-by-Step Process")].strip()
    assert guidelines.count("- Question:") == 8
    assert guidelines in get("livenewsbench/guideline_check").user


@pytest.mark.parametrize("prompt", [p for p in PROMPTS if p.port == "verbatim"], ids=lambda p: p.id)
def test_a_verbatim_port_is_the_papers_text(prompt: Prompt) -> None:
    """Every sentence without a slot or the JSON instruction is in the paper, and they are most of the prompt."""
    family = prompt.name.split("/")[0]
    body = prompt.system + "\n" + prompt.user
    units = _paper_units(body)
    drifted = [unit for unit in units if not _in_paper(family, unit)]
    assert not drifted, f"{prompt.id}: not in the paper: {drifted}"
    # The JSON instruction must stay a small part of what the model reads.
    sizes = {"paper": 0, "json": 0, "slot": 0}
    for unit, kind in _units(body):
        sizes[kind] += len(_norm(unit))
    share = sizes["paper"] / (sizes["paper"] + sizes["json"])
    assert share > 0.6, f"{prompt.id}: only {share:.0%} of the prompt is checked against the paper"


@pytest.mark.parametrize("prompt", [p for p in PROMPTS if p.port == "described"], ids=lambda p: p.id)
def test_a_described_prompt_quotes_the_sentences_it_implements(prompt: Prompt) -> None:
    family = prompt.name.split("/")[0]
    assert prompt.quotes, f"{prompt.id} is written from the paper's prose but quotes none of it"
    missing = [quote for quote in prompt.quotes if not _in_paper(family, quote)]
    assert not missing, f"{prompt.id}: quotes not in the paper: {missing}"


def test_the_drift_check_catches_an_edited_sentence() -> None:
    edited = get("livenewsbench/grader").user.replace("Hedging and guessing are permissible",
                                                      "Hedging is permissible")
    assert [u for u in _paper_units(edited) if not _in_paper("livenewsbench", u)] == [
        "- Hedging is permissible, provided that the gold target is fully included and the response contains "
        "no incorrect information or contradictions."]


@pytest.mark.parametrize("family", sorted(SEED_OF_FAMILY))
def test_an_excerpt_is_the_slices_its_header_names_unedited(family: str) -> None:
    """The hash was taken when the excerpt was cut from the seed; an edited line no longer matches it."""
    header, sha, body = _excerpt(family)
    assert all(line.startswith("# ") for line in header), f"{family}: every header line is a comment"
    assert header[0].startswith(f"# From {SEED_OF_FAMILY[family]} ("), header[0]
    assert sha == hashlib.sha256(body).hexdigest(), f"{family}.txt was edited after it was cut from the seed"
    parts = _SLICE.split(body.decode("utf-8"))
    assert parts[0] == ""
    spans = [(int(a), int(b)) for a, b in zip(parts[1::3], parts[2::3])]
    assert f"lines {', '.join(f'{a}-{b}' for a, b in spans)}:" in header[0]
    for (first, last), text in zip(spans, parts[3::3]):
        assert text.count("\n") == last - first + 1, f"{family}: slice {first}-{last} has lost or gained lines"
    assert spans == sorted(spans) and all(b < c for (_, b), (c, _) in zip(spans, spans[1:]))


@pytest.mark.parametrize("family", sorted(SEED_OF_FAMILY))
def test_every_excerpt_slice_is_needed_by_a_check(family: str) -> None:
    """Quote, don't copy: a slice no template or quote is found in has no business in the fixtures."""
    checked = [unit for p in PROMPTS if p.name.startswith(f"{family}/")
               for unit in (_paper_units(p.system + "\n" + p.user) if p.port == "verbatim" else p.quotes)]
    unused = [i for i, piece in enumerate(_seed(family)) if not any(_norm(u) in piece for u in checked)]
    assert not unused, f"{family}: slices {unused} hold no checked sentence"


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.id)
def test_every_prompt_says_where_it_comes_from(prompt: Prompt) -> None:
    assert prompt.source.split(",")[0] in {"LiveNewsBench", "DailyQA", "WebWalker", "RT-QA"}
    assert prompt.paper and prompt.notes, f"{prompt.id}: a port states its paper and its changes"
