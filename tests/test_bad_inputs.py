"""Bad input to the core: each is a clear error naming the argument, or the right value.

One test per case found by a hostile-but-honest tester (formulas, costs, timelines, the
schedule text format, sizes that would hang or exhaust memory, the command line). A size
check must answer at once: the tests would hang otherwise.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import bubblekit as bk
from bubblekit.analysis import balance, planner, search
from bubblekit.schedules import legal_ms


def names_argument(message: str, name: str) -> bool:
    """The message names ``name`` as a word (``m``, ``max_actions``, ``--dpi``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w])", message) is not None


@pytest.fixture(scope="module")
def result() -> bk.SimResult:
    return bk.simulate(bk.schedule("1f1b", 4, 8))


# ------------------------------------------------------------------ formulas: right values
def test_min_micro_batch_reads_a_fraction_exactly() -> None:
    assert bk.bubble_ratio_exact(3, 4) == Fraction(1, 3)
    assert bk.min_micro_batch(3, Fraction(1, 3)) == 4


def test_min_micro_batch_reads_a_float32_as_written() -> None:
    assert bk.bubble_ratio_exact(8, 3) == Fraction(7, 10)
    assert bk.min_micro_batch(8, np.float32(0.7)) == 3


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_ratio_from_overhead_rejects_nan_and_inf(value: float) -> None:
    with pytest.raises(ValueError) as info:
        bk.ratio_from_overhead(value)
    assert names_argument(str(info.value), "overhead") and "finite" in str(info.value)


def test_overhead_from_ratio_rejects_a_string() -> None:
    with pytest.raises(TypeError) as info:
        bk.overhead_from_ratio("0.5")  # type: ignore[arg-type]
    assert names_argument(str(info.value), "ratio") and "'0.5'" in str(info.value)


def test_ratio_from_overhead_rejects_none() -> None:
    with pytest.raises(TypeError) as info:
        bk.ratio_from_overhead(None)  # type: ignore[arg-type]
    assert names_argument(str(info.value), "overhead")


def test_costs_whose_sums_overflow_are_refused() -> None:
    with pytest.raises(ValueError) as info:
        bk.Costs(f=1e308, b=1e308)
    msg = str(info.value)
    assert names_argument(msg, "f") and "overflow" in msg and f"{bk.costs.MAX_COST:g}" in msg
    r = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=bk.costs.MAX_COST, b=bk.costs.MAX_COST))
    assert math.isfinite(float(r.makespan)) and not math.isnan(r.bubble_ratio)


# ------------------------------------------------------------------------------ timelines
def test_largest_gaps_rejects_a_negative_count(result: bk.SimResult) -> None:
    with pytest.raises(ValueError) as info:
        result.largest_gaps(-1)
    assert names_argument(str(info.value), "n")


def test_largest_gaps_rejects_a_string(result: bk.SimResult) -> None:
    with pytest.raises(TypeError) as info:
        result.largest_gaps("3")  # type: ignore[arg-type]
    assert names_argument(str(info.value), "n")


def test_spans_rejects_a_negative_rank(result: bk.SimResult) -> None:
    with pytest.raises(ValueError) as info:
        list(result.spans(-1))
    assert names_argument(str(info.value), "rank")


def test_idle_intervals_rejects_a_rank_out_of_range(result: bk.SimResult) -> None:
    with pytest.raises(ValueError) as info:
        result.idle_intervals(99)
    assert names_argument(str(info.value), "rank") and "3" in str(info.value)


# ------------------------------------------------------------------------- schedule text
TEXT = "rank 0: 0F0 0B0\nrank 1: 1F0 1B0"


def test_from_text_rejects_m_as_a_string() -> None:
    with pytest.raises(TypeError) as info:
        bk.Schedule.from_text(TEXT, m="2")  # type: ignore[arg-type]
    assert names_argument(str(info.value), "m")


def test_from_text_rejects_placement_as_a_string() -> None:
    with pytest.raises(TypeError) as info:
        bk.Schedule.from_text(TEXT, placement="0")  # type: ignore[arg-type]
    assert names_argument(str(info.value), "placement")


def test_from_text_with_a_huge_rank_number_answers_at_once() -> None:
    t = time.monotonic()
    with pytest.raises(bk.ScheduleError) as info:
        bk.Schedule.from_text("rank 99999999999: 0F0")
    assert time.monotonic() - t < 5  # generous; the check itself is instant
    assert "rank 99999999999" in str(info.value) and "no line" in str(info.value)


def test_from_text_with_a_huge_microbatch_number_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        bk.Schedule.from_text("rank 0: 0F0 0B0 0F999999999")
    msg = str(info.value)
    assert names_argument(msg, "m") and "1000000000" in msg and names_argument(msg, "max_actions")


def test_from_text_with_a_huge_m_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        bk.Schedule.from_text(TEXT, m=10**9)
    assert names_argument(str(info.value), "m") and names_argument(str(info.value), "max_actions")


def test_a_hand_built_schedule_with_a_huge_m_fails_fast() -> None:
    s = bk.Schedule("x", 1, 10**9, (0,), ((bk.Action(0, "F", 0),),))
    with pytest.raises(bk.ScheduleError) as info:
        bk.simulate(s)
    assert "m=1000000000" in str(info.value)


# ------------------------------------------------------------------------------- sizes
def test_schedule_with_a_huge_m_is_refused_with_the_cost() -> None:
    with pytest.raises(ValueError) as info:
        bk.schedule("1f1b", 4, 10**9)
    msg = str(info.value)
    assert names_argument(msg, "m") and names_argument(msg, "max_actions") and "µs" in msg and "GB" in msg
    assert "max_actions=None" in msg and "bk.bubble_ratio" in msg  # what to do instead


def test_schedule_with_a_huge_v_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        bk.schedule("interleaved", 4, 8, v=10**6)
    assert names_argument(str(info.value), "v") and names_argument(str(info.value), "max_actions")


def test_the_size_limit_is_an_explicit_opt_in() -> None:
    with pytest.raises(ValueError, match="max_actions=10"):
        bk.schedule("1f1b", 2, 4, max_actions=10)
    assert bk.schedule("1f1b", 2, 4, max_actions=None).n_actions == 16
    assert bk.schedules.MAX_ACTIONS >= 1_000_000


def test_plan_with_a_huge_m_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        planner.plan(4, ms=[10**9])
    assert names_argument(str(info.value), "ms") and names_argument(str(info.value), "max_actions")


def test_plan_with_a_huge_p_is_refused() -> None:
    t = time.monotonic()
    with pytest.raises(ValueError) as info:
        planner.plan(1000)
    assert time.monotonic() - t < 5
    assert names_argument(str(info.value), "p") and names_argument(str(info.value), "max_actions")


def test_plan_reports_progress_when_asked() -> None:
    lines: list[str] = []
    table = planner.plan(4, ms=[4, 8], progress=lines.append)
    assert len(table) > 0 and lines and lines[-1].startswith(f"plan: {len(table)} of {len(table)}")


def test_partition_of_20000_layers_is_fast_and_optimal() -> None:
    rnd = random.Random(0)
    layers = [rnd.uniform(0.5, 2.0) for _ in range(20_000)]
    t = time.monotonic()
    part = balance.partition(layers, 8)
    assert time.monotonic() - t < 30  # was n^2/2 = 2e8 sums: minutes and gigabytes
    assert len(part.boundaries) == 9 and part.boundaries[0] == 0 and part.boundaries[-1] == 20_000
    assert all(a < b for a, b in zip(part.boundaries, part.boundaries[1:]))
    best = part.bottleneck
    # optimal: a greedy packing under any smaller contiguous sum needs more than 8 stages
    assert best == max(part.stage_costs)
    assert not balance._fits(balance._prefix(layers), 0, best * (1 - 1e-12), 8)


def test_partition_dp_on_a_huge_input_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        balance.partition([1.0] * 20_000, 8, method="dp")
    assert names_argument(str(info.value), "method") and "search" in str(info.value)


def test_search_with_a_huge_m_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        search.search_schedule(4, 10**6)
    msg = str(info.value)
    assert names_argument(msg, "m") and names_argument(msg, "max_actions") and "s)" in msg


def test_search_reports_progress_when_asked() -> None:
    lines: list[str] = []
    search.search_schedule(3, 6, improve=False, progress=lines.append)
    assert lines and "greedy rules" in lines[-1] and "100%" in lines[-1]


# ---------------------------------------------------------------------- schedule rules
def test_interleaved_rule_is_stated_right() -> None:
    assert legal_ms("interleaved", 4, up_to=20) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 16, 20]
    for m in legal_ms("interleaved", 4, up_to=40):
        bk.schedule("interleaved", 4, m)  # every listed m builds
    with pytest.raises(ValueError) as info:
        bk.schedule("interleaved", 4, 9)
    msg = str(info.value)
    assert names_argument(msg, "m") and "below 2p = 8" in msg and "nearest allowed: m = 8 or 10" in msg
    assert "e.g. m = 4, 8, 12" not in msg  # the old, wrong examples


def test_dualpipev_rule_is_stated_with_its_nearest_value() -> None:
    assert legal_ms("dualpipev", 4, up_to=10) == [8, 9, 10]
    with pytest.raises(ValueError, match=r"m=6 .* m >= 2p = 8"):
        bk.schedule("dualpipev", 4, 6)


# ------------------------------------------------------------------------ command line
def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bubblekit", *args], capture_output=True, text=True, timeout=120)


def test_cli_refuses_a_huge_dpi(tmp_path: Path) -> None:
    out = _cli("plot", "-o", str(tmp_path / "x.png"), "--dpi", "100000")
    assert out.returncode == 2 and "--dpi" in out.stderr and "1200" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "x.png").exists()


def test_cli_refuses_a_latency_that_overflows(tmp_path: Path) -> None:
    out = _cli("plot", "-o", str(tmp_path / "x.svg"), "--comm", "1e308")
    assert out.returncode == 2 and "--comm" in out.stderr and "overflow" in out.stderr
    assert "Traceback" not in out.stderr


def test_cli_refuses_an_output_that_is_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "figures.svg"
    folder.mkdir()
    out = _cli("plot", "-o", str(folder))
    assert out.returncode == 2 and "-o/--output" in out.stderr and "is a folder" in out.stderr
    assert "Traceback" not in out.stderr
