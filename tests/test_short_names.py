"""Every short name ``bk.X`` is importable as ``bubblekit.X`` and is the same module (issue 22).

Lessons write ``import bubblekit as bk`` and ``bk.traces.read_trace``; a learner who writes
``from bubblekit.traces import read_trace`` or ``import bubblekit.explorers`` gets the very same
objects, not an ImportError and not a second copy of the module.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import bubblekit as bk


@pytest.mark.parametrize("short", sorted(bk._LAZY_MODULES))
def test_short_name_is_importable_and_is_the_long_module(short: str) -> None:
    long = bk._LAZY_MODULES[short]
    code = (
        "import importlib, sys\n"
        f"short = importlib.import_module('bubblekit.{short}')\n"
        f"long = importlib.import_module('{long}')\n"
        "import bubblekit as bk\n"
        f"assert short is long is bk.{short}, 'three different modules'\n"
        f"assert long.__spec__.name == '{long}', long.__spec__.name\n"
        "print('ok')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_the_issue_s_import_line_works() -> None:
    code = "import bubblekit.traces, bubblekit.explorers, bubblekit.checks, bubblekit.calibrate\n" \
           "from bubblekit.traces import read_trace\nimport bubblekit as bk\n" \
           "assert read_trace is bk.traces.read_trace\nprint('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_an_unknown_short_name_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        __import__("bubblekit.no_such_module")


def test_the_core_import_stays_light() -> None:
    code = "import sys, bubblekit\nprint(sorted(m for m in ('matplotlib', 'ipywidgets', 'torch') if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.strip() == "[]"
