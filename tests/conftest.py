"""Suite-wide settings: the property tests draw the same cases on every run and keep no example database."""

from hypothesis import HealthCheck, settings

# Derandomized: a failure seen once is seen again on the next run and on CI. No deadline: the readers' cases run
# beside servers on two cores, and a slow case is a bench figure, not a failure.
settings.register_profile(
    "suite",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("suite")
