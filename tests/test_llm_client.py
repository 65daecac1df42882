"""The LLM client against a scripted OpenAI-compatible server (tests/llmserver.py, a test double: the
failures below cannot be provoked from a real model at will; tests/test_llm_real.py drives a real one)."""

from __future__ import annotations

import email.utils
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from tests.llmserver import ScriptedLLM, Step, reply
from timelyqa.errors import ConfigError, TransientSourceError
from timelyqa.llm.client import LLM, REPAIR_VERSION
from timelyqa.llm.settings import JsonMode, LLMSettings

KEY = "sk-test-7f3c9a1d0e5b4c2a"

pytestmark = pytest.mark.timeout(60)


class Capital(BaseModel):
    model_config = ConfigDict(extra="forbid")
    country: str
    capital: str


@dataclass(frozen=True)
class AskCapital:
    """A prompt in the shape the client takes; the registry's own prompts are tested in test_llm_prompts."""

    id: str = "test_capital_v1"
    shape: type[BaseModel] = Capital

    def render(self, **values: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": "Answer with JSON."},
                {"role": "user", "content": f"What is the capital of {values['country']}?"}]


PROMPT = AskCapital()
GOOD = {"country": "France", "capital": "Paris"}


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as s:
        yield s


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(server: ScriptedLLM, tmp_path: Path | None = None, **overrides: object) -> tuple[LLM, Sleeps]:
    sleeps = Sleeps()
    values: dict[str, object] = {"base_url": server.url, "model": "scripted-model", "api_key": KEY,
                                 "timeout": 2.0, "cache_dir": tmp_path, **overrides}
    return LLM(LLMSettings.build(**values), sleep=sleeps), sleeps


def test_a_good_answer_is_validated_and_names_its_prompt_and_model(server: ScriptedLLM) -> None:
    server.then(reply(GOOD))
    llm, _ = make(server, temperature=0.3, seed=7)
    answer = llm.ask(PROMPT, {"country": "France"})
    assert answer.ok and answer.value == Capital(**GOOD)
    assert (answer.prompt_id, answer.model, answer.reason) == ("test_capital_v1", "scripted-model", None)
    sent = server.requests[0]
    assert sent["model"] == "scripted-model" and sent["temperature"] == 0.3 and sent["seed"] == 7
    assert sent["messages"][-1]["content"] == "What is the capital of France?"
    # llama.cpp's server form of structured output: json_object with the shape's schema.
    assert sent["response_format"] == {"type": "json_object", "schema": Capital.model_json_schema()}
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert llm.usage.as_manifest()["llm_calls"] == 1 and llm.usage.prompt_tokens == 11


@pytest.mark.parametrize(("mode", "expected"), [
    (JsonMode.SCHEMA, {"type": "json_schema",
                       "json_schema": {"name": "Capital", "schema": Capital.model_json_schema(), "strict": True}}),
    (JsonMode.OBJECT, {"type": "json_object"}),
    (JsonMode.NONE, None),
])
def test_json_mode_picks_the_response_format_a_server_accepts(server: ScriptedLLM, mode: JsonMode,
                                                               expected: dict | None) -> None:
    server.then(reply(GOOD))
    llm, _ = make(server, json_mode=mode)
    assert llm.ask(PROMPT, {"country": "France"}).ok
    assert server.requests[0].get("response_format") == expected


def test_json_in_a_code_fence_is_accepted(server: ScriptedLLM) -> None:
    server.then(Step(content='```json\n{"country": "France", "capital": "Paris"}\n```'))
    llm, _ = make(server)
    assert llm.ask(PROMPT, {"country": "France"}).value == Capital(**GOOD)


def test_malformed_json_is_re_asked_with_the_problem_then_accepted(server: ScriptedLLM) -> None:
    server.then(Step(content='{"country": "France", "capital": '), reply(GOOD))
    llm, _ = make(server)
    answer = llm.ask(PROMPT, {"country": "France"})
    assert answer.ok and server.calls == 2
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"country": "France", "capital": '}
    assert "not JSON" in repair[-1]["content"] and '"capital"' in repair[-1]["content"]


def test_malformed_json_past_the_repairs_is_a_reject_with_its_reason(server: ScriptedLLM) -> None:
    server.then(*[Step(content="Paris, of course.") for _ in range(3)])
    llm, _ = make(server, repairs=2)
    answer = llm.ask(PROMPT, {"country": "France"})
    assert not answer.ok and answer.reason == "malformed_json" and "not JSON" in answer.detail
    assert server.calls == 3  # the first ask and two repairs, no more


@pytest.mark.parametrize(("content", "named"), [
    ('{"country": "France"}', "capital"),  # a field missing
    ('{"country": "France", "capital": "Paris", "mayor": "x"}', "mayor"),  # a field the shape forbids
    ('{"country": "France", "capital": ["Paris"]}', "capital"),  # the wrong type
    ('["France", "Paris"]', "list"),  # not an object
])
def test_a_wrong_shape_is_re_asked_then_rejected_naming_the_field(server: ScriptedLLM, content: str,
                                                                   named: str) -> None:
    server.then(*[Step(content=content) for _ in range(2)])
    llm, _ = make(server, repairs=1)
    answer = llm.ask(PROMPT, {"country": "France"})
    assert (answer.ok, answer.reason) == (False, "wrong_shape") and named in answer.detail
    assert "\n" not in answer.detail and server.calls == 2


def test_a_reply_cut_at_the_token_limit_is_truncated(server: ScriptedLLM) -> None:
    server.then(Step(content='{"country": "Fra', finish_reason="length"))
    llm, _ = make(server, repairs=0)
    assert llm.ask(PROMPT, {"country": "France"}).reason == "truncated"


@pytest.mark.parametrize("step", [
    Step(content=None, refusal="I can't help with that request."),  # the API's refusal field
    Step(content="", finish_reason="content_filter"),
    Step(content="I'm sorry, but I cannot answer questions about capitals."),  # a refusal in plain words
])
def test_a_refusal_is_rejected_at_once_and_not_re_asked(server: ScriptedLLM, step: Step) -> None:
    server.then(step)
    llm, _ = make(server, repairs=2)
    answer = llm.ask(PROMPT, {"country": "France"})
    assert (answer.ok, answer.reason) == (False, "refused") and server.calls == 1


def test_a_timeout_is_retried_with_backoff(server: ScriptedLLM) -> None:
    server.then(Step(delay=1.5, content="{}"), reply(GOOD))
    llm, sleeps = make(server, timeout=0.5, backoff=0.25)
    assert llm.ask(PROMPT, {"country": "France"}).ok
    assert sleeps == [0.25] and llm.usage.retries == 1 and llm.usage.calls == 2


@pytest.mark.slow
def test_timeouts_past_the_retries_raise_a_transient_error_naming_the_endpoint(server: ScriptedLLM) -> None:
    server.then(*[Step(delay=1.0) for _ in range(3)])
    llm, sleeps = make(server, timeout=0.3, retries=2, backoff=1.0)
    with pytest.raises(TransientSourceError, match=r"127\.0\.0\.1.*3 times.*Timeout"):
        llm.ask(PROMPT, {"country": "France"})
    assert sleeps == [1.0, 2.0]  # doubling, and no sleep after the last try


def test_429_waits_as_long_as_retry_after_says(server: ScriptedLLM) -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.then(Step(status=429, headers={"Retry-After": "7"}), Step(status=429, headers={"Retry-After": later}),
                Step(status=429), reply(GOOD))
    llm, sleeps = make(server, backoff=0.5)
    assert llm.ask(PROMPT, {"country": "France"}).ok
    assert sleeps[0] == 7.0
    assert 25 <= sleeps[1] <= 30  # an HTTP date, less the time since
    assert sleeps[2] == 2.0  # no Retry-After: our own backoff, third try


def test_retry_after_is_capped_by_max_wait(server: ScriptedLLM) -> None:
    server.then(Step(status=429, headers={"Retry-After": "3600"}), reply(GOOD))
    llm, sleeps = make(server, max_wait=5.0)
    assert llm.ask(PROMPT, {"country": "France"}).ok and sleeps == [5.0]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_retried_then_raised_as_transient(server: ScriptedLLM, status: int) -> None:
    server.then(*[Step(status=status) for _ in range(3)])
    llm, sleeps = make(server, retries=2, backoff=0.1)
    with pytest.raises(TransientSourceError, match=f"HTTP {status}"):
        llm.ask(PROMPT, {"country": "France"})
    assert server.calls == 3 and sleeps == [0.1, 0.2]


@pytest.mark.parametrize(("status", "says"), [(401, "refused the API key"), (403, "denied access"),
                                              (404, "no model 'scripted-model'")])
def test_a_wrong_key_or_model_stops_the_run_without_retrying(server: ScriptedLLM, status: int, says: str) -> None:
    server.then(Step(status=status))
    llm, sleeps = make(server)
    with pytest.raises(ConfigError, match=says):
        llm.ask(PROMPT, {"country": "France"})
    assert server.calls == 1 and sleeps == []


def test_a_request_the_server_rejects_is_a_reject_and_the_next_one_goes_on(server: ScriptedLLM) -> None:
    server.then(Step(status=400, body=b'{"error": {"message": "context length exceeded"}}'), reply(GOOD))
    llm, sleeps = make(server)
    first = llm.ask(PROMPT, {"country": "a very long country"})
    assert (first.reason, "context length exceeded" in first.detail) == ("request_rejected", True)
    assert llm.ask(PROMPT, {"country": "France"}).ok and sleeps == []


def test_a_second_run_with_the_same_cache_makes_no_call_and_gives_the_same_answers(server: ScriptedLLM,
                                                                                      tmp_path: Path) -> None:
    countries = ["France", "Peru", "Japan", "Chad"]
    server.default = lambda request: reply({"country": request["messages"][-1]["content"].split()[-1][:-1],
                                            "capital": f"capital-{len(server.requests)}"})
    first, _ = make(server, tmp_path)
    before = [a.value for a in first.ask_all(PROMPT, [{"country": c} for c in countries])]
    assert server.calls == 4 and first.usage.cached == 0

    again, _ = make(server, tmp_path)
    after = [a.value for a in again.ask_all(PROMPT, [{"country": c} for c in countries])]
    assert after == before and server.calls == 4  # every answer from the cache
    assert again.usage.as_manifest()["llm_calls"] == 0 and again.usage.cached == 4

    hotter, _ = make(server, tmp_path, temperature=0.7)  # a parameter is part of the key
    hotter.ask(PROMPT, {"country": "France"})
    assert server.calls == 5


def test_repairs_replay_from_the_cache_too(server: ScriptedLLM, tmp_path: Path) -> None:
    server.then(Step(content="not json"), reply(GOOD))
    first, _ = make(server, tmp_path)
    assert first.ask(PROMPT, {"country": "France"}).ok and server.calls == 2
    again, _ = make(server, tmp_path)
    assert again.ask(PROMPT, {"country": "France"}).value == Capital(**GOOD) and server.calls == 2


def test_failures_are_not_cached(server: ScriptedLLM, tmp_path: Path) -> None:
    server.then(Step(status=503), Step(status=503))
    llm, _ = make(server, tmp_path, retries=1)
    with pytest.raises(TransientSourceError):
        llm.ask(PROMPT, {"country": "France"})
    server.then(reply(GOOD))
    assert make(server, tmp_path)[0].ask(PROMPT, {"country": "France"}).ok and server.calls == 3


def test_ask_all_keeps_order_and_never_exceeds_the_concurrency(server: ScriptedLLM) -> None:
    in_flight, peak, lock = 0, 0, threading.Lock()

    def slow(request: dict) -> Step:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        country = request["messages"][-1]["content"].split()[-1][:-1]
        return reply({"country": country, "capital": country.upper()})

    server.default = slow
    llm, _ = make(server, concurrency=3)
    countries = [f"C{i}" for i in range(12)]
    answers = llm.ask_all(PROMPT, [{"country": c} for c in countries])
    assert [a.value.capital for a in answers if a.value] == [c.upper() for c in countries]
    assert 1 < peak <= 3


def test_preflight_stops_on_a_model_the_server_does_not_serve(server: ScriptedLLM) -> None:
    llm, _ = make(server, model="gpt-9")
    with pytest.raises(ConfigError, match="does not serve model 'gpt-9'; it serves: scripted-model"):
        llm.preflight()
    make(server)[0].preflight()  # the served one passes
    assert server.calls == 0


def test_preflight_stops_when_no_server_answers() -> None:
    with ScriptedLLM() as gone:
        url = gone.url
    llm = LLM(LLMSettings.build(base_url=url, model="m", timeout=1.0))
    with pytest.raises(ConfigError, match="no OpenAI-compatible API answers"):
        llm.preflight()


def test_the_api_key_is_never_logged_or_shown(server: ScriptedLLM, caplog: pytest.LogCaptureFixture) -> None:
    server.then(Step(status=429, headers={"Retry-After": "0"}), Step(status=500), Step(status=500),
                Step(status=401))
    llm, _ = make(server, retries=2)
    shown = [repr(llm.settings), str(llm.settings), llm.settings.model_dump_json()]
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(TransientSourceError) as transient:
            llm.ask(PROMPT, {"country": "France"})
        with pytest.raises(ConfigError) as config:
            llm.ask(PROMPT, {"country": "Peru"})
    shown += [caplog.text, str(transient.value), str(config.value)]
    assert "retry 1 of 2" in caplog.text  # the retries are logged...
    assert all(KEY not in text for text in shown)  # ...and the key nowhere


def test_settings_come_from_the_environment_and_a_wrong_one_fails_in_one_line(tmp_path: Path) -> None:
    env = {"TIMELYQA_LLM_BASE_URL": "http://127.0.0.1:9/v1/", "TIMELYQA_LLM_MODEL": "writer",
           "TIMELYQA_LLM_API_KEY": KEY, "TIMELYQA_LLM_CONCURRENCY": "4", "TIMELYQA_LLM_TEMPERATURE": "0.6",
           "TIMELYQA_CHECK_LLM_BASE_URL": "http://127.0.0.1:9/v1", "TIMELYQA_CHECK_LLM_MODEL": "checker"}
    writer = LLMSettings.from_env(environ=env)
    assert (writer.base_url, writer.model, writer.concurrency, writer.temperature) == (
        "http://127.0.0.1:9/v1", "writer", 4, 0.6)
    assert writer.api_key.get_secret_value() == KEY
    checker = LLMSettings.from_env("TIMELYQA_CHECK_LLM_", environ=env)
    assert checker.model == "checker" and checker.api_key.get_secret_value() == ""
    assert LLMSettings.from_env(environ=env, model="override").model == "override"

    with pytest.raises(ConfigError, match="TIMELYQA_LLM_BASE_URL and TIMELYQA_LLM_MODEL"):
        LLMSettings.from_env(environ={})
    for bad, says in [({"TIMELYQA_LLM_TIMEOUT": "-1"}, "timeout"), ({"TIMELYQA_LLM_CONCURRENCY": "many"},
                                                                    "concurrency"),
                      ({"TIMELYQA_LLM_BASE_URL": "127.0.0.1:8080"}, "base_url"),
                      ({"TIMELYQA_LLM_JSON_MODE": "xml"}, "json_mode")]:
        with pytest.raises(ConfigError, match=says) as error:
            LLMSettings.from_env(environ={**env, **bad})
        assert "\n" not in str(error.value)


@pytest.mark.parametrize(("writer", "checker", "same"), [
    ("gpt-4.1", "gpt-4.1", True), ("openai/gpt-4.1", "GPT-4.1", True),
    ("gpt-4.1", "gpt-4.1-mini", False), ("qwen3-8b", "smollm2-135m", False),
])
def test_same_model_tells_when_a_check_cannot_be_independent(writer: str, checker: str, same: bool) -> None:
    a = LLMSettings.build(base_url="http://127.0.0.1:1/v1", model=writer)
    b = LLMSettings.build(base_url="http://127.0.0.1:2/v1", model=checker)
    assert a.same_model(b) is same and b.same_model(a) is same


def test_the_repair_prompt_is_versioned_in_the_cache_key(server: ScriptedLLM, tmp_path: Path) -> None:
    assert REPAIR_VERSION.endswith("_v1")
    server.then(Step(content="nope"), reply(GOOD))
    llm, _ = make(server, tmp_path)
    llm.ask(PROMPT, {"country": "France"})
    assert len(list(tmp_path.rglob("*.json"))) == 2  # the first ask and the repair, each its own entry
