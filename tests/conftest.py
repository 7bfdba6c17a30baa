"""Shared pytest set-up for bubblekit's tests.

* Matplotlib draws off-screen (``MPLBACKEND=Agg``), also in kernels the tests start.
* Hypothesis has no deadline: the machines are shared and tests must not assert on time
  (speed lives in ``benchmarks/``).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet debugger warning in test kernels

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "course", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))
except ImportError:  # hypothesis is in the test extra; plain unit tests still run without it
    pass

#: The repository root (the folder holding pyproject.toml).
ROOT = Path(__file__).resolve().parent.parent
