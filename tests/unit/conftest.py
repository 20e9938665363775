"""The property tests' depth. `quick` (the default) keeps `make unit` and `make check` fast in the
edit-test loop; `thorough` is what `make test`, and so CI, runs. HYPOTHESIS_PROFILE picks one."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("quick", max_examples=40)
settings.register_profile("thorough", max_examples=400)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))
