"""The recorded traces shipped with bubblekit (``bubblekit/data/traces``, made by ``scripts/record_traces.py``).

Real ``torch.distributed.pipelining`` runs, so that lesson 06 can read and measure real traces
without torch installed; ``bubblekit/data/traces/README.md`` says how they were made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SAMPLE_DIR", "HTA_SAMPLE_DIR", "sample_names", "sample_info", "sample_trace", "sample_record"]

#: Recorded traces shipped with bubblekit (made by ``scripts/record_traces.py``).
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "data" / "traces"
#: Two ranks of a real multi-GPU job's PyTorch-profiler trace (HTA's test data, MIT; README.md there).
HTA_SAMPLE_DIR = SAMPLE_DIR / "hta"


def _manifest() -> dict[str, Any]:
    path = SAMPLE_DIR / "manifest.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the shipped sample traces are not installed")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def sample_names() -> list[str]:
    """Names of the shipped sample traces (e.g. ``"1f1b-p2-m8"``)."""
    return list(_manifest()["samples"])


def sample_info(name: str) -> dict[str, Any]:
    """The shipped sample's metadata: lab configuration, torch version, files, profiled step."""
    samples = _manifest()["samples"]
    if name not in samples:
        raise ValueError(f"unknown sample trace {name!r}; shipped: {', '.join(samples)}")
    return dict(samples[name])


def sample_trace(name: str) -> list[Path]:
    """The per-rank ``torch.profiler`` trace files of a shipped sample (pass them to :func:`read_trace`)."""
    return [SAMPLE_DIR / f for f in sample_info(name)["trace_files"]]


def sample_record(name: str) -> Path:
    """The lab's own record of the same run, as bubblekit CSV (ms; every measured step)."""
    return SAMPLE_DIR / str(sample_info(name)["record_csv"])
