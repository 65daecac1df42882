"""One settings base: every wrong value is one line naming the setting, and `from_env` reads every client alike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

import pytest
from pydantic import Field, SecretStr, ValidationError

from timelyqa.errors import ConfigError
from timelyqa.llm.settings import LLMSettings
from timelyqa.mediawiki.client import ApiSettings
from timelyqa.settings import Settings
from timelyqa.wikidata.api import WikidataApiSettings
from timelyqa.wikidata.mirror import MirrorSettings
from timelyqa.wikipedia import options

UA = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"


class Probe(Settings):
    NAME: ClassVar[str] = "probe"
    ENV_PREFIX: ClassVar[str] = "PROBE_"
    REQUIRED_FROM_ENV: ClassVar[tuple[str, ...]] = ("url",)

    url: str
    retries: int = Field(default=3, ge=0, le=9)
    token: SecretStr = SecretStr("")
    mode: str = "a"


def message(**values: object) -> str:
    with pytest.raises(ConfigError) as caught:
        Probe(**values)
    text = str(caught.value)
    assert "\n" not in text
    return text


def test_a_wrong_value_names_the_setting_and_the_value_given() -> None:
    assert message(url="u", retries=12) == "probe setting retries 12: Input should be less than or equal to 9"
    assert message(url="u", retries="many") == ("probe setting retries 'many': Input should be a valid integer, "
                                                "unable to parse string as an integer")
    assert message(url="u", colour="red") == "probe setting colour 'red': Extra inputs are not permitted"
    assert message() == "probe setting url: Field required"


def test_a_secret_is_never_repeated() -> None:
    assert message(url="u", token=12345) == "probe setting token: Input should be a valid string"


def test_from_env_reads_the_prefix_and_puts_the_options_on_top() -> None:
    env = {"PROBE_URL": "http://a", "PROBE_RETRIES": "5", "PROBE_MODE": "", "OTHER_URL": "http://b"}
    assert Probe.from_env(environ=env) == Probe(url="http://a", retries=5)  # the empty MODE is left unset
    assert Probe.from_env(environ=env, retries=1, mode=None).retries == 1  # None: an option not given
    assert Probe.from_env("OTHER_", environ=env).url == "http://b"
    with pytest.raises(ConfigError, match=r"^probe setting retries '99': Input should be less than or equal to 9$"):
        Probe.from_env(environ={**env, "PROBE_RETRIES": "99"})
    with pytest.raises(ConfigError, match=r"^probe settings need PROBE_URL \(or the matching option\)$"):
        Probe.from_env(environ={})


@pytest.mark.parametrize(("cls", "variable"), [
    (ApiSettings, "TIMELYQA_WIKIPEDIA_API_USER_AGENT"), (WikidataApiSettings, "TIMELYQA_WIKIDATA_API_USER_AGENT"),
    (MirrorSettings, "TIMELYQA_WIKIDATA_MIRROR_USER_AGENT"), (LLMSettings, "TIMELYQA_LLM_BASE_URL")])
def test_every_client_is_read_from_its_own_variables(cls: type[Settings], variable: str) -> None:
    assert issubclass(cls, Settings)
    with pytest.raises(ConfigError, match=variable):
        cls.from_env(environ={})


def test_each_client_names_itself_in_its_messages() -> None:
    """The value is said once: a message that quotes it already (5: ...) is not given it again."""
    with pytest.raises(ConfigError, match=r"^Wikidata API setting concurrency: 5: Wikimedia allows 1 to 3"):
        WikidataApiSettings.from_env(environ={"TIMELYQA_WIKIDATA_API_USER_AGENT": UA}, concurrency=5)
    with pytest.raises(ConfigError, match=r"^dump mirror setting compression 'xz': Input should be 'gz' or 'bz2'$"):
        MirrorSettings(user_agent=UA, compression="xz")
    with pytest.raises(ConfigError, match=r"^LLM setting temperature 3: Input should be less than or equal to 2$"):
        LLMSettings(base_url="http://127.0.0.1:1/v1", model="m", temperature=3)


def test_a_run_built_in_code_keeps_pydantic_s_error_but_of_gives_one_line() -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    with pytest.raises(ValidationError):
        options.Settings(start=start, end=start)
    with pytest.raises(ConfigError, match=r"^window 2026-03-01T00:00:00\+00:00 \.\. 2026-03-01T00:00:00\+00:00: "
                                          r"the start must come before the end$"):
        options.Settings.of(start=start, end=start)
    with pytest.raises(ConfigError, match=r"^setting seed 'x': Input should be a valid integer"):
        options.Settings.of(start=start, end=datetime(2026, 3, 8, tzinfo=UTC), seed="x")


def test_a_value_is_left_out_only_when_the_message_quotes_it_whole() -> None:
    class Floor(Settings):
        NAME: ClassVar[str] = "floor"
        least: int = Field(default=10, ge=10)

    with pytest.raises(ConfigError, match=r"^floor setting least 1: Input should be greater than or equal to 10$"):
        Floor(least=1)
