"""Suite-wide settings of the property tests (hypothesis): the same cases on every `make test`, many new ones in
`make fuzz`."""

import os

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
