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

Lesson 03 also checks three claims of the article with the tables here: "U → 0 when p ≫ m"
(:func:`utilization_table`), the smallest m for a target bubble (:func:`min_micro_batch_table`)
and "42.9 % → 8.6 % as m grows from 4 to 32" (:func:`article_fits`, :func:`article_claim_table`).

Pure core: no matplotlib. ``python -m bubblekit demo`` prints :func:`demo_text`.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from bubblekit._validate import check_fraction_open, check_int
from bubblekit.costs import Costs, preset
from bubblekit.formulas import bubble_ratio, bubble_ratio_exact, min_micro_batch, utilization
from bubblekit.i18n import get_language, register, tr, translate, using_language
from bubblekit.schedules import display_name, schedule
from bubblekit.simulator import simulate
from bubblekit.text import Table

__all__ = [
    "ARTICLE_P", "ARTICLE_MS", "ARTICLE_V", "ARTICLE_UTIL_M", "ARTICLE_TARGET",
    "DemoRow", "SimCheck", "demo_table", "check_against_simulator", "demo_text",
    "utilization_table", "min_micro_batch_table", "article_fits", "article_claim_table",
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
                     "zh": "用模拟器逐格核对（t_f = t_b = 1 个时间槽，不计通信）："},
    "demo.all_equal": {"en": "  {label}: simulated bubble_ratio equals the formula for every m",
                       "zh": "  {label}：每个 m 的模拟气泡比例都等于公式值"},
    "demo.equal_for": {"en": "  {label}: equal for m = {ms}", "zh": "  {label}：m = {ms} 时与公式相等"},
    "demo.none": {"en": "none", "zh": "无"},
    "demo.refused": {"en": "m={m}: the schedule refuses it: {note}", "zh": "m={m}：该调度不接受这个 m：{note}"},
    "demo.differs": {"en": "    m={m}: formula {formula:6.1%}, simulated {simulated:6.1%}",
                     "zh": "    m={m}：公式 {formula:6.1%}，模拟 {simulated:6.1%}"},
    "demo.below_p": {"en": "* m < p = {p}: the formula needs m >= p (any m >= p that PyTorch accepts); "
                           "below p the pipeline runs dry between chunk rounds and the bubble is larger",
                     "zh": "注：公式只在 m ≥ p 时成立（m 还得是 PyTorch 接受的取值）；"
                           "m < p = {p} 时，前后两遍 chunk 之间会断流，实际气泡比公式大"},
    "demo.one_f_one_b": {"en": "the article's 1F1B column repeats the ordinary one: 1F1B has GPipe's bubble; "
                               "it saves activation memory (rank 0 holds min(p, m) microbatches instead of m: "
                               "p once m >= p, the same as GPipe when m <= p)",
                         "zh": "原文的 1F1B 列和普通列一样，因为 1F1B 的气泡与 GPipe 相同；"
                               "它省的是激活显存（rank 0 只存 min(p, m) 个微批的激活，而不是 m 个："
                               "m ≥ p 时是 p 个，m ≤ p 时与 GPipe 相同）"},
    "demo.u.title": {"en": "m = {m} microbatches, {schedule}", "zh": "m = {m} 个微批，{schedule}"},
    "demo.u.simulated": {"en": "U simulated", "zh": "U（模拟值）"},
    "demo.mmin.at": {"en": "b at m_min", "zh": "m_min 时的 b"},
    "demo.mmin.below": {"en": "b at m_min − 1", "zh": "m_min − 1 时的 b"},
    "demo.mmin.note": {"en": "b simulated (1F1B, F = 1, B = 2 slots): m_min meets b*, m_min − 1 does not",
                       "zh": "b 为模拟值（1F1B，t_f = 1、t_b = 2 个时间槽）：m_min 达到 b*，m_min − 1 达不到"},
    "demo.claim.at": {"en": "b at m = {m}", "zh": "m = {m} 时的 b"},
    "demo.search": {"en": "the article's search stopped at m = 128; bubblekit.min_micro_batch solves "
                          "(p-1)/(m+p-1) <= {target:g} exactly",
                    "zh": "原文只搜到 m = 128；bubblekit 的 min_micro_batch 直接解 b ≤ {target:g}，不设上限"},
})


class DemoRow(NamedTuple):
    """One line of the article's table: bubble ratios (fractions of device-time) at ``m``."""

    m: int
    ordinary: float
    """GPipe, the article's "ordinary" (naive) schedule: ``(p-1)/(m+p-1)``."""
    one_f_one_b: float
    """1F1B: the same formula (1F1B saves memory, not bubble: min(p, m) activations on rank 0, not m)."""
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


def _simulated_ratio(name: str, p: int, m: int, costs: Costs | None = None) -> Fraction:
    return simulate(schedule(name, p, m), costs).bubble_ratio_exact


def _int_list(name: str, values: Sequence[int]) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise TypeError(f"{name} must be a non-empty list of whole numbers, got {values!r}")
    return [check_int(f"{name}[{i}]", x) for i, x in enumerate(values)]


def utilization_table(m: int = 8, ratios: Sequence[int] = (1, 4, 10), name: str = "1f1b") -> Table:
    """Simulated utilisation U = 1 − bubble_ratio for p = k·m ranks, beside 1/(1 + p/m). Used in lesson 03.

    The article says U → 0 "when p ≫ m"; with p = k·m, U = m/(m + p − 1) tends to 1/(1 + k) as
    m grows and stays a little above it. Args: ``m`` microbatches (int >= 1), ``ratios`` the
    values of k = p/m (ints >= 1), ``name`` the schedule (default 1F1B; F = 1, B = 2 slots).
    Columns ``p/m``, ``U`` (simulated, a fraction of the step) and ``1/(1 + p/m)``.
    """
    m = check_int("m", m)
    rows = []
    for k in _int_list("ratios", ratios):
        r = simulate(schedule(name, k * m, m))
        rows.append({"p/m": k, "U": r.utilization, "1/(1 + p/m)": 1 / (1 + k)})
    return Table(rows, headers={"U": tr("demo.u.simulated")},
                 formats={"U": "percent", "1/(1 + p/m)": "percent"},
                 title=tr("demo.u.title", m=m, schedule=display_name(name)))


#: The most microbatches :func:`min_micro_batch_table` simulates (a tiny b* would otherwise run for hours).
MAX_SIMULATED_M = 20_000


def min_micro_batch_table(ps: Sequence[int] = (8, 16),
                          targets: Sequence[Fraction] = (Fraction(1, 20), Fraction(1, 10), Fraction(1, 5))) -> Table:
    """The fewest microbatches ``m_min`` for a bubble of at most b*, and the simulated b at m_min and m_min − 1.

    Used in lesson 03 (step 4): m_min = ⌈(p − 1)(1 − b*)/b*⌉ (:func:`bubblekit.min_micro_batch`,
    no search limit), and the 1F1B simulation (F = 1, B = 2 slots) meets b* at m_min and misses
    it at m_min − 1. Args: ``ps`` ranks (ints >= 2), ``targets`` b* values in (0, 1).
    """
    goals = [Fraction(check_fraction_open(f"targets[{i}]", t)) for i, t in enumerate(targets)]
    rows = []
    for p in _int_list("ps", ps):
        if p < 2:
            raise ValueError(f"ps must hold ranks >= 2 (p = 1 has no bubble), got {p}")
        for goal in goals:
            m_min = min_micro_batch(p, float(goal))
            if m_min is None or m_min > MAX_SIMULATED_M:
                raise ValueError(f"targets: b* = {float(goal):g} needs m_min = {m_min} microbatches for p = {p}; "
                                 f"this table simulates at most {MAX_SIMULATED_M}: choose a larger b*")
            rows.append({"p": p, "b*": goal, "m_min": m_min,
                         "b at m_min": _simulated_ratio("1f1b", p, m_min),
                         "b at m_min − 1": _simulated_ratio("1f1b", p, m_min - 1) if m_min > 1 else None})
    return Table(rows, headers={"b at m_min": tr("demo.mmin.at"), "b at m_min − 1": tr("demo.mmin.below")},
                 formats={"b*": "percent", "b at m_min": "percent2", "b at m_min − 1": "percent2"},
                 note=tr("demo.mmin.note"))


#: The article's claim in 「气泡优化方法」: the bubble falls from 42.9 % to 8.6 % as m grows from 4 to 32.
ARTICLE_CLAIM = (("42.9%", "8.6%"), (4, 32))


def article_fits(claim: tuple[str, str] = ARTICLE_CLAIM[0], ms: tuple[int, int] = ARTICLE_CLAIM[1],
                 ps: Sequence[int] = range(2, 129)) -> list[int]:
    """Every p in ``ps`` whose bubble ratios at the two ``ms``, printed ``{:.1%}``, read ``claim``. Used in lesson 03.

    The article does not say which p its "42.9 % → 8.6 %" is for; only p = 4 prints that way.
    """
    if len(claim) != 2 or not all(isinstance(x, str) for x in claim):
        raise TypeError(f"claim must be two percentages as printed, e.g. ('42.9%', '8.6%'), got {claim!r}")
    m0, m1 = _int_list("ms", ms)[:2]
    return [p for p in _int_list("ps", list(ps))
            if (f"{bubble_ratio(p, m0):.1%}", f"{bubble_ratio(p, m1):.1%}") == tuple(claim)]


def _both(x: Fraction) -> str:
    return f"{x} = {float(x):.1%}"


def article_claim_table(ps: Sequence[int] = (4, 8), ms: tuple[int, int] = ARTICLE_CLAIM[1]) -> Table:
    """b = (p − 1)/(m + p − 1) at the article's two m, exact and as a percentage, for each p. Used in lesson 03."""
    m0, m1 = _int_list("ms", ms)[:2]
    keys = {m: f"b at m = {m}" for m in (m0, m1)}
    rows = [{"p": p, **{keys[m]: bubble_ratio_exact(p, m) for m in (m0, m1)}} for p in _int_list("ps", ps)]
    return Table(rows, headers={keys[m]: tr("demo.claim.at", m=m) for m in (m0, m1)},
                 formats={keys[m]: _both for m in (m0, m1)})


def _check_lines(checks: list[SimCheck], p: int, v: int, target: float, lang: str) -> list[str]:
    """The simulator check under the demo's table, and its notes, in ``lang``."""
    def t(key: str, **fields: object) -> str:
        return translate(key, lang, **fields)

    lines = ["", t("demo.checked")]
    for name, vv in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
        mine = [c for c in checks if c.schedule == name]
        ok = [c.m for c in mine if c.equal]
        with using_language(lang):
            shown = display_name(name)  # "GPipe", "1F1B", "interleaved 1F1B" (Chinese: "交错式 1F1B")
        label = shown if vv == 1 else f"{shown}（v = {vv}）" if lang == "zh" else f"{shown} v={vv}"
        if len(ok) == len(mine):
            lines.append(t("demo.all_equal", label=label))
            continue
        lines.append(t("demo.equal_for", label=label, ms=("、" if lang == "zh" else ", ").join(map(str, ok)) or t("demo.none")))
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

    English wraps at spaces (:func:`textwrap.wrap`); Chinese breaks at spaces and after its
    punctuation, never inside a run of Chinese characters (which would split a word such as
    流水线, lesson 03's demo) nor inside a run of Latin words and symbols and the Chinese word after it
    (``m ≥ p 时``), counting each Chinese character as two columns; a run longer than the line stays whole.
    """
    if text.isascii():
        return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ")
    latin = r"[^\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+"  # a run of Latin words and symbols ("m ≥ p") stays whole
    pieces = re.findall(r"[\u3000-\u303f\uff00-\uffef]+|[\u3400-\u9fff]+[\u3000-\u303f\uff00-\uffef]*|\s+|"
                        + latin + r"(?: " + latin + r")*(?: [\u3400-\u9fff]+[\u3000-\u303f\uff00-\uffef]*)?", text)
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
