"""The source article's Python demo, reproduced with bubblekit and checked by simulation.

The article prints, for p = 8 pipeline stages and m in 2, 4, 8, 16, 32, the bubble
ratio ``b`` (idle device-time / (p x makespan)) of the ordinary schedule, of 1F1B and
of interleaved 1F1B with v = 2 chunks per rank, then the utilisation at m = 8 and the
smallest m that brings the bubble down to 20 %. :func:`demo_text` prints the same
numbers with the same format strings (``{x:6.1%}``), computed by
:func:`bubblekit.bubble_ratio`, :func:`bubblekit.utilization` and
:func:`bubblekit.min_micro_batch`; :func:`check_against_simulator` simulates every row.

Pure core: no matplotlib. ``python -m bubblekit demo`` prints :func:`demo_text`.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction
from typing import NamedTuple

from bubblekit._validate import check_fraction_open, check_int
from bubblekit.costs import Costs, preset
from bubblekit.formulas import bubble_ratio, bubble_ratio_exact, min_micro_batch, utilization
from bubblekit.schedules import schedule
from bubblekit.simulator import simulate

__all__ = [
    "ARTICLE_P", "ARTICLE_MS", "ARTICLE_V", "ARTICLE_UTIL_M", "ARTICLE_TARGET",
    "DemoRow", "SimCheck", "demo_table", "check_against_simulator", "demo_text",
]

#: The article's settings: p = 8 stages, these microbatch counts, v = 2 chunks per rank.
ARTICLE_P = 8
ARTICLE_MS: tuple[int, ...] = (2, 4, 8, 16, 32)
ARTICLE_V = 2
#: The article prints the utilisation at m = 8 and the smallest m for a 20 % bubble.
ARTICLE_UTIL_M = 8
ARTICLE_TARGET = 0.2


class DemoRow(NamedTuple):
    """One line of the article's table: bubble ratios (fractions of device-time) at ``m``."""

    m: int
    ordinary: float
    """GPipe, the article's "ordinary" (naive) schedule: ``(p-1)/(m+p-1)``."""
    one_f_one_b: float
    """1F1B: the same formula (1F1B saves memory, not bubble)."""
    interleaved: float
    """Interleaved 1F1B with ``v`` chunks per rank: ``(p-1)/(m*v+p-1)``."""


class SimCheck(NamedTuple):
    """A formula value next to the simulated ``bubble_ratio`` of the same configuration."""

    m: int
    schedule: str
    v: int
    formula: float
    simulated: float | None
    """``None`` when the schedule generator refuses this ``m`` (see ``note``)."""
    equal: bool
    """Exact equality of the two fractions (simulation in integer ticks)."""
    note: str


def demo_table(p: int = ARTICLE_P, ms: tuple[int, ...] = ARTICLE_MS, v: int = ARTICLE_V) -> list[DemoRow]:
    """The article's table as rows, computed by :func:`bubblekit.bubble_ratio`.

    Args:
        p: pipeline stages (ranks), int >= 1.
        ms: microbatch counts, ints >= 1.
        v: chunks per rank for the interleaved column, int >= 2.
    """
    p = check_int("p", p)
    v = check_int("v", v, minimum=2)
    rows = []
    for m in ms:
        m = check_int("m", m)
        ordinary = bubble_ratio(p, m)
        rows.append(DemoRow(m, ordinary, ordinary, bubble_ratio(p, m, v)))
    return rows


def check_against_simulator(
    p: int = ARTICLE_P,
    ms: tuple[int, ...] = ARTICLE_MS,
    v: int = ARTICLE_V,
    costs: Costs | None = None,
) -> list[SimCheck]:
    """Simulate every cell of the table: GPipe, 1F1B and interleaved (``v`` chunks).

    Args:
        p, ms, v: as in :func:`demo_table`.
        costs: the cost model; default ``preset("uniform")`` (F = B = 1 slot, no
            communication), the formulas' assumption.

    The interleaved formula holds for every ``m >= p`` that PyTorch's
    ``ScheduleInterleaved1F1B`` accepts (a multiple of ``p`` or not). PyTorch also accepts
    ``m < p``; such rows are simulated and come out *larger* than the formula (``equal`` is
    False, ``note`` says why). A schedule that refuses an ``m`` gives ``simulated=None`` and
    the refusal.
    """
    p = check_int("p", p)
    v = check_int("v", v, minimum=2)
    costs = preset("uniform") if costs is None else costs
    out: list[SimCheck] = []
    for m in ms:
        m = check_int("m", m)
        for name, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
            formula: Fraction = bubble_ratio_exact(p, m, vv)
            try:
                sched = schedule(name, p, m, None if vv == 1 else vv)
            except ValueError as exc:
                out.append(SimCheck(m, name, vv, float(formula), None, False, str(exc)))
                continue
            sim = simulate(sched, costs).bubble_ratio_exact
            equal = sim == formula
            note = ""
            if not equal and vv > 1 and m < p:
                note = (
                    f"m={m} is below p={p}: the interleaved formula needs m >= p (it holds for every "
                    "m >= p that PyTorch's ScheduleInterleaved1F1B accepts); with fewer microbatches "
                    "than ranks the pipeline runs dry between chunk rounds and the simulated bubble is larger"
                )
            out.append(SimCheck(m, name, vv, float(formula), float(sim), equal, note))
    return out


def _article_lines_zh(p: int, rows: list[DemoRow], util_m: int, target: float) -> list[str]:
    """The article's ``main()`` output, line for line (its Chinese labels and format strings)."""
    lines = [f"流水级 p = {p}", "微批 m   普通气泡   1F1B气泡   交错v=2气泡"]
    for r in rows:
        lines.append(f"m={r.m:3d}   {r.ordinary:6.1%}    {r.one_f_one_b:6.1%}      {r.interleaved:6.1%}")
    lines.append("")
    lines.append(f"m={util_m} 时 GPU 利用率约 {utilization(p, util_m):.1%}")
    need = min_micro_batch(p, target)
    lines.append(f"要把气泡压到 {target:.0%} 以下，至少需要 m = {need}")
    return lines


def _wrapped(text: str, indent: str, width: int = 76) -> list[str]:
    """``text`` as lines of at most ``width`` characters, the first indented by ``indent``, the rest by two more."""
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ")


def demo_text(lang: str = "en", *, check: bool = True) -> str:
    """The article's demo output, computed by bubblekit (p = 8, m = 2 ... 32).

    Args:
        lang: ``"zh"`` prints the article's own lines (Chinese labels) character for
            character; ``"en"`` the same numbers and format strings with English labels.
        check: append the simulator check (:func:`check_against_simulator`) and notes.
            In English, a ``*`` marks an interleaved cell the formula gets wrong. Lines are
            at most 80 characters (no sideways scrolling in a notebook).

    Bubble ratios are fractions of device-time (idle / (p x makespan)), not Megatron's
    overhead (p - 1) / m.
    """
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', got {lang!r}")
    p, v, util_m, target = ARTICLE_P, ARTICLE_V, ARTICLE_UTIL_M, ARTICLE_TARGET
    rows = demo_table(p, ARTICLE_MS, v)
    checks = check_against_simulator(p, ARTICLE_MS, v) if check else []
    bad = {(c.m, c.schedule) for c in checks if not c.equal}
    if lang == "zh":
        lines = _article_lines_zh(p, rows, util_m, target)
    else:
        lines = [
            f"pipeline stages p = {p}",
            "bubble ratio b = idle / (p x makespan)",
            f"columns: naive (GPipe, the article's ordinary), 1F1B, interleaved v={v}",
            f"{'m':<5}   {'naive':>6}    {'1F1B':>6}      {f'v={v}':>6}",
        ]
        for r in rows:
            star = "*" if (r.m, "interleaved") in bad else ""
            lines.append(f"m={r.m:3d}   {r.ordinary:6.1%}    {r.one_f_one_b:6.1%}      {r.interleaved:6.1%}{star}")
        lines.append("")
        lines.append(f"GPU utilisation at m={util_m}: about {utilization(p, util_m):.1%}")
        need = min_micro_batch(p, check_fraction_open("target", target))
        lines.append(f"to bring the bubble down to {target:.0%} or less, m must be at least {need}")
    if check:
        lines.append("")
        lines.append("checked against the simulator (F = B = 1 slot, no communication):")
        for name, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
            mine = [c for c in checks if c.schedule == name]
            ok = [c.m for c in mine if c.equal]
            label = name if vv == 1 else f"{name} v={vv}"
            if len(ok) == len(mine):
                lines.append(f"  {label}: simulated bubble_ratio equals the formula for every m")
                continue
            lines.append(f"  {label}: equal for m = {', '.join(map(str, ok)) or 'none'}")
            for c in mine:
                if c.equal:
                    continue
                if c.simulated is None:
                    lines += _wrapped(f"m={c.m}: the schedule refuses it: {c.note}", "    ")
                    continue
                lines.append(f"    m={c.m}: formula {c.formula:6.1%}, simulated {c.simulated:6.1%}")
            if any(c.note and c.simulated is not None for c in mine):
                lines += _wrapped(f"* m < p = {p}: the formula needs m >= p (any m >= p that PyTorch accepts); "
                                  "below p the pipeline runs dry between chunk rounds and the bubble is larger",
                                  "  ")
        lines += _wrapped("the article's 1F1B column repeats the ordinary one: 1F1B has GPipe's bubble; "
                          "it saves activation memory (p instead of m microbatches)", "  ")
        lines += _wrapped(f"the article's search stopped at m = 128; bubblekit.min_micro_batch solves "
                          f"(p-1)/(m+p-1) <= {target:g} exactly", "  ")
    return "\n".join(lines) + "\n"
