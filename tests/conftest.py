"""Hypothesis profiles: `ci` (derandomized, bounded) is chosen automatically when CI is set."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=2000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("SINKCHECK_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
