"""Suite-wide settings of the property tests (hypothesis): the same cases on every `make test`, many new ones in
`make fuzz`."""

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# Derandomized: a failure seen once is seen again on the next run and on CI. No deadline: the readers' cases run
# beside servers on two cores, and a slow case is a bench figure, not a failure. Tests set no max_examples of
# their own, so the profile decides how many cases each property draws.
settings.register_profile(
    "suite",
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# `make fuzz`: fresh random cases each run, TIMELYQA_FUZZ_CASES of them per property; a failing case is kept
# in .hypothesis/ and tried first next time.
settings.register_profile(
    "fuzz",
    max_examples=int(os.environ.get("TIMELYQA_FUZZ_CASES", "10000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("TIMELYQA_HYPOTHESIS_PROFILE", "suite"))


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A throwaway Prefect server and database for the module that asks for it (by argument, or all its tests with
    `pytest.mark.usefixtures("prefect_api")`); nothing is written under ~/.prefect."""
    from prefect.events.worker import EventsWorker  # Prefect imports its server: seconds, so only here
    from prefect.settings import PREFECT_HOME, PREFECT_SERVER_ANALYTICS_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    home = tmp_path_factory.mktemp("prefect-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DO_NOT_TRACK", "1")
        mp.setenv("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        with temporary_settings(updates={PREFECT_HOME: home, PREFECT_SERVER_ANALYTICS_ENABLED: False}):
            with prefect_test_harness(server_startup_timeout=120):
                # Prefect's events worker is one per process: one started for another module's server would keep
                # sending this module's task runs there. Drained, the next event starts one for this one.
                EventsWorker.drain_all()
                yield
