"""The source article's Python demo, reproduced with bubblekit and checked by simulation.

The article prints, for p = 8 pipeline stages and m in 2, 4, 8, 16, 32, the bubble
ratio ``b`` (idle device-time / (p x makespan)) of the ordinary schedule, of 1F1B and
of interleaved 1F1B with v = 2 chunks per rank, then the utilisation at m = 8 and the
smallest m that brings the bubble down to 20 %. :func:`demo_text` prints the same
numbers with the same format strings (``{x:6.1%}``), computed by
:func:`bubblekit.bubble_ratio`, :func:`bubblekit.utilization` and
:func:`bubblekit.min_micro_batch`; :func:`check_against_simulator` simulates every row.

The simulator check and its notes are in the language asked for (the message catalogue);
the article's own table is its Chinese lines, character for character.

Pure core: no matplotlib. ``python -m bubblekit demo`` prints :func:`demo_text`.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from fractions import Fraction
from typing import NamedTuple

from bubblekit._validate import check_fraction_open, check_int
from bubblekit.costs import Costs, preset
from bubblekit.formulas import bubble_ratio, bubble_ratio_exact, min_micro_batch, utilization
from bubblekit.i18n import get_language, register, translate
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

register({
    "demo.checked": {"en": "checked against the simulator (F = B = 1 slot, no communication):",
                     "zh": "用模拟器逐格核对（F = B = 1 个时间槽，不计通信）："},
    "demo.all_equal": {"en": "  {label}: simulated bubble_ratio equals the formula for every m",
                       "zh": "  {label}：每个 m 的模拟 bubble_ratio 都等于公式值"},
    "demo.equal_for": {"en": "  {label}: equal for m = {ms}", "zh": "  {label}：m = {ms} 时与公式相等"},
    "demo.none": {"en": "none", "zh": "无"},
    "demo.refused": {"en": "m={m}: the schedule refuses it: {note}", "zh": "m={m}：该调度不接受这个 m：{note}"},
    "demo.differs": {"en": "    m={m}: formula {formula:6.1%}, simulated {simulated:6.1%}",
                     "zh": "    m={m}：公式 {formula:6.1%}，模拟 {simulated:6.1%}"},
    "demo.below_p": {"en": "* m < p = {p}: the formula needs m >= p (any m >= p that PyTorch accepts); "
                           "below p the pipeline runs dry between chunk rounds and the bubble is larger",
                     "zh": "注：公式要求 m >= p（PyTorch 接受的任意 m >= p 都适用）；m < p = {p} 时，"
                           "流水线在两轮 chunk 之间会断流，实际气泡比公式算的大"},
    "demo.one_f_one_b": {"en": "the article's 1F1B column repeats the ordinary one: 1F1B has GPipe's bubble; "
                               "it saves activation memory (p instead of m microbatches)",
                         "zh": "原文的 1F1B 列和普通列一样，因为 1F1B 的气泡与 GPipe 相同；"
                               "它省的是激活显存（只存 p 个微批，而不是 m 个）"},
    "demo.search": {"en": "the article's search stopped at m = 128; bubblekit.min_micro_batch solves "
                          "(p-1)/(m+p-1) <= {target:g} exactly",
                    "zh": "原文只搜索到 m = 128；bubblekit.min_micro_batch 直接精确求解 (p-1)/(m+p-1) <= {target:g}"},
})


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


def _check_lines(checks: list[SimCheck], p: int, v: int, target: float, lang: str) -> list[str]:
    """The simulator check under the demo's table, and its notes, in ``lang``."""
    def t(key: str, **fields: object) -> str:
        return translate(key, lang, **fields)

    lines = ["", t("demo.checked")]
    for name, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
        mine = [c for c in checks if c.schedule == name]
        ok = [c.m for c in mine if c.equal]
        label = name if vv == 1 else f"{name} v={vv}"
        if len(ok) == len(mine):
            lines.append(t("demo.all_equal", label=label))
            continue
        lines.append(t("demo.equal_for", label=label, ms=", ".join(map(str, ok)) or t("demo.none")))
        for c in mine:
            if c.equal:
                continue
            if c.simulated is None:
                lines += _wrapped(t("demo.refused", m=c.m, note=c.note), "    ")
                continue
            lines.append(t("demo.differs", m=c.m, formula=c.formula, simulated=c.simulated))
        if any(c.note and c.simulated is not None for c in mine):
            lines += _wrapped(t("demo.below_p", p=p), "  ")
    lines += _wrapped(t("demo.one_f_one_b"), "  ")
    lines += _wrapped(t("demo.search", target=target), "  ")
    return lines


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


def _columns(text: str) -> int:
    """Terminal columns of ``text`` (a CJK character or full-width punctuation takes two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _wrapped(text: str, indent: str, width: int = 76) -> list[str]:
    """``text`` as lines of at most ``width`` columns, the first indented by ``indent``, the rest by two more.

    English wraps at spaces (:func:`textwrap.wrap`); Chinese may also break between two CJK
    characters (and never before its punctuation), counting each as two columns.
    """
    if text.isascii():
        return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ")
    pieces = re.findall(r"[\u3000-\u303f\uff00-\uffef]+|[\u3400-\u9fff][\u3000-\u303f\uff00-\uffef]*|\s+|[^\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+", text)
    lines: list[str] = []
    line = indent
    for piece in pieces:
        if piece.isspace():
            piece = " "
        if _columns(line) + _columns(piece.rstrip()) > width and line.strip():
            lines.append(line.rstrip())
            line = indent + "  "
            if piece == " ":
                continue
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines


def demo_text(lang: str | None = None, *, check: bool = True) -> str:
    """The article's demo output, computed by bubblekit (p = 8, m = 2 ... 32). Used in lesson 03.

    Args:
        lang: ``"zh"`` prints the article's own lines (Chinese labels) character for
            character; ``"en"`` the same numbers and format strings with English labels;
            ``None`` (the default) the current language (:func:`bubblekit.get_language`).
        check: append the simulator check (:func:`check_against_simulator`) and notes, in
            ``lang``. In English, a ``*`` marks an interleaved cell the formula gets wrong.
            Lines are at most 80 columns (no sideways scrolling in a notebook; a CJK
            character counts two).

    Bubble ratios are fractions of device-time (idle / (p x makespan)), not Megatron's
    overhead (p - 1) / m.
    """
    if lang is None:
        lang = get_language()
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
        lines += _check_lines(checks, p, v, target, lang)
    return "\n".join(lines) + "\n"
