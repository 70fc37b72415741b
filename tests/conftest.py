"""Test-suite settings shared by every test module.

Hypothesis runs derandomised by default (profile ``ci``), so ``make test`` checks the same examples
on every run and CI never turns red on a new random draw; ``HYPOTHESIS_PROFILE=explore`` draws
fresh, more numerous examples to look for new failures (then pin each one as a plain test).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
