"""Choosing a pipeline configuration: schedule x microbatches m x chunks v x recomputation.

:func:`plan` enumerates candidate configurations for ``p`` ranks, simulates each one with
:func:`bubblekit.simulate`, checks its peak activation memory against a budget, and ranks
them. Every number comes from the simulator (no closed form is assumed), so unequal
costs, communication latency and per-stage costs are all taken into account.

Conventions:

* **Time** is in the costs' unit (``"slot"`` or ``"ms"``). The default ranking is
  *time per microbatch* = makespan / m (lower is better; its inverse is throughput),
  because a larger m also does more work per step: with a fixed microbatch size, m
  microbatches are m x the samples.
* **Memory** is per rank, in *microbatch activations* of the plain model: 1.0 is what one
  microbatch leaves on a rank holding its whole share of the model without
  recomputation (see :mod:`bubblekit.costs`). A budget may also be given in bytes when
  the bytes of one microbatch activation are known (the measured presets carry them in
  ``costs.extra["activation_bytes_per_microbatch"]``). With ``model=`` and ``gpu_memory=``
  the whole rank counts instead: weights, gradients, optimizer state and activations in
  bytes (:mod:`bubblekit.memory`), so a schedule that holds two copies of the parameters
  (DualPipe) or more activations can be refused for the GPU it would run on.
* **Recomputation** (activation checkpointing, 激活重算) is a second :class:`Costs`: its
  backward is longer (it re-runs the forward) and its ``activation`` is smaller.
  :func:`h200_recompute_costs` builds the pair from the measured H200 data;
  :func:`with_recompute` builds it from a rule of thumb.

Pure core: no matplotlib, widgets or torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bubblekit._progress import Progress, reporter
from bubblekit._validate import Number, check_bool, check_int, check_number, check_sequence
from bubblekit.costs import Costs
from bubblekit.i18n import get_language, register, tr
from bubblekit.memory import GB, MemoryReport, Model, check_options, memory_per_rank
from bubblekit.schedules import REGISTRY, Schedule, schedule, spec
from bubblekit.schedules.base import MAX_ACTIONS, check_size
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table

__all__ = [
    "Candidate",
    "PlanTable",
    "plan",
    "evaluate",
    "hops_per_step",
    "with_recompute",
    "h200_recompute_costs",
    "load_h200_recompute_costs",
    "recompute_table",
    "RANK_BY",
    "MAX_PLAN_ACTIONS",
]


register({
    # the recomputation table and the plan's tables (lessons 05 and 07); column keys stay English
    "planner.rc.title": {"en": "measured on one {device}, torch {torch}, {dtype}, {layers} layers per stage, micro-batch 1",
                         "zh": "在一张 {device} 上实测，torch {torch}，{dtype}，每个流水级 {layers} 层，微批大小 1"},
    "planner.rc.F": {"en": "F ms", "zh": "前向 ms"},
    "planner.rc.F_rc": {"en": "F ms (recompute)", "zh": "前向 ms（重算）"},
    "planner.rc.hidden": {"en": "hidden", "zh": "隐藏维度"},
    "planner.rc.seq": {"en": "seq", "zh": "序列长度"},
    "planner.label.recompute": {"en": " +recompute", "zh": " +重算"},
    "planner.rc.bwd": {"en": "backward ms", "zh": "反向 ms"},
    "planner.rc.bwd_rc": {"en": "backward ms (recompute)", "zh": "反向 ms（重算）"},
    "planner.rc.extra_F": {"en": "extra backward (plain F)", "zh": "反向多出的耗时（单位：不重算时的一次前向）"},
    "planner.rc.act": {"en": "activations MiB", "zh": "激活 MiB"},
    "planner.rc.act_rc": {"en": "activations MiB (recompute)", "zh": "激活 MiB（重算）"},
    "planner.rc.ratio": {"en": "activations ÷", "zh": "激活之比（不重算 ÷ 重算）"},
    "planner.rank_by.time_per_microbatch": {"en": "time per microbatch", "zh": "每微批耗时"},
    "planner.rank_by.makespan": {"en": "makespan", "zh": "单步耗时"},
    "planner.rank_by.bubble_ratio": {"en": "bubble ratio", "zh": "气泡比例"},
    "planner.rank_by.peak_activations": {"en": "peak activations", "zh": "激活峰值"},
    "planner.title": {"en": "ranked by {rank_by}; {budget}", "zh": "按{rank_by}排序；{budget}"},
    "planner.no_budget": {"en": "no memory budget", "zh": "不限显存"},
    "planner.budget_gib": {"en": "budget {gib:.3g} GiB per rank", "zh": "每个 rank 的显存预算 {gib:.3g} GiB"},
    "planner.budget_act": {"en": "budget {act:.3g} microbatch activations per rank",
                           "zh": "每个 rank 的预算为 {act:.3g} 个微批的激活"},
    "planner.slot": {"en": "slot", "zh": "时间槽"},
    "planner.configuration": {"en": "configuration", "zh": "配置"},
    "planner.step": {"en": "step ({unit})", "zh": "单步耗时（{unit}）"},
    "planner.per_mb": {"en": "per microbatch ({unit})", "zh": "每微批耗时（{unit}）"},
    "planner.peak_gib": {"en": "peak GiB", "zh": "峰值 GiB"},
    "planner.peak_act": {"en": "peak (microbatch activations)", "zh": "激活峰值（单位：一个微批的激活）"},
    "planner.messages": {"en": "messages per step", "zh": "每步消息数"},
    "planner.fits": {"en": "fits", "zh": "放得下"},
    # PlanTable.to_text's fixed-width columns
    "planner.text.step": {"en": "step {unit}", "zh": "单步耗时（{unit}）"},
    "planner.text.per_mb": {"en": "per mb", "zh": "每微批耗时"},
    "planner.text.bubble": {"en": "bubble", "zh": "气泡比例"},
    "planner.text.total_gb": {"en": "total GB", "zh": "合计 GB"},
    "planner.text.peak_gib": {"en": "peak GiB", "zh": "峰值 GiB"},
    "planner.text.peak_act": {"en": "peak act", "zh": "激活峰值"},
    "planner.text.hops": {"en": "hops", "zh": "消息数"},
    "planner.text.no_reason": {"en": "no ({reason})", "zh": "否（{reason}）"},
    "planner.text.none_fits": {"en": "(no configuration fits)", "zh": "（没有放得下的配置）"},
    # why a candidate does not fit (shown in the tables' fits column)
    "planner.reason.cannot_run": {"en": "cannot run: {error}", "zh": "无法运行：{error}"},
    "planner.reason.budget": {"en": "memory: peak {peak:.3g} > budget {budget:.3g} microbatch activations",
                              "zh": "显存：峰值 {peak:.3g} > 预算 {budget:.3g}（单位：微批的激活）"},
    "planner.reason.memory": {"en": "memory: {error}", "zh": "显存：{error}"},
    "planner.reason.gpu": {"en": "memory: rank {rank} needs {need:.3g} GB > {gpu:.3g} GB per GPU",
                           "zh": "显存：rank {rank} 需要 {need:.3g} GB > 每张 GPU 的 {gpu:.3g} GB"},
})


def _unit(unit: str) -> str:
    """A time unit as the tables print it: ``"slot"`` (Chinese: ``"时间槽"``), ``"ms"`` unchanged."""
    return tr("planner.slot") if unit == "slot" else unit


def _ljust(text: str, width: int) -> str:
    """``text`` padded on the right to ``width`` terminal columns (a Chinese character takes two)."""
    return text + " " * (width - Table._width(text))


def _rjust(text: str, width: int) -> str:
    """``text`` padded on the left to ``width`` terminal columns (a Chinese character takes two)."""
    return " " * (width - Table._width(text)) + text


#: Ranking keys accepted by :func:`plan`.
RANK_BY: tuple[str, ...] = ("time_per_microbatch", "makespan", "bubble_ratio", "peak_activations")

_DEFAULT_SCHEDULES: tuple[str, ...] = ("gpipe", "1f1b", "interleaved", "looped-bfs")

#: :func:`plan` refuses to simulate more actions than this in all (about ten seconds) unless
#: given ``max_actions=None``.
MAX_PLAN_ACTIONS = 10_000_000
_EPS = 1e-9


# ----------------------------------------------------------------------------- hops
def hops_per_step(sched: Schedule) -> int:
    """``sched.hops_per_step``: cross-rank messages per step (see
    :attr:`bubblekit.Schedule.hops_per_step`).

    Used in lessons 05, 06, 07, 09 and 10.
    """
    if not isinstance(sched, Schedule):
        raise TypeError(f"sched must be a bubblekit Schedule, got {type(sched).__name__}")
    return sched.hops_per_step


# ----------------------------------------------------------------------------- recomputation
def with_recompute(costs: Costs, *, activation: Number, extra_backward: Number | None = None) -> Costs:
    """The same model with activation recomputation: a longer backward, fewer activations.

    Args:
        costs: the plain model's costs (scalar ``f``/``b``, or per stage).
        activation: activations one microbatch holds with recomputation, as a fraction of
            the plain model's (0 < activation <= 1); e.g. ``1/16`` as measured on an H200.
        extra_backward: time added to every backward, as a multiple of that stage's forward;
            default 1.0 (the forward runs again). Measured on an H200: about 0.7.

    The split backward (``i``, ``w``) is not kept: recomputation happens before the input
    gradient, so ``i`` grows by the extra time and ``w`` stays.

    Used in lesson 05.
    """
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    act = check_number("activation", activation, minimum=0, allow_equal=False)
    if act > 1:
        raise ValueError(f"activation must be a fraction of the plain model's activations (0 < activation <= 1), got {act!r}")
    extra = 1 if extra_backward is None else check_number("extra_backward", extra_backward, minimum=0)

    def grow(x: Any, f: Any) -> Any:
        if isinstance(x, tuple):
            fs = f if isinstance(f, tuple) else (f,) * len(x)
            return tuple(xi + extra * fi for xi, fi in zip(x, fs))
        return x + extra * f

    def scale(x: Any) -> Any:
        return tuple(a * act for a in x) if isinstance(x, tuple) else x * act

    extra_info = dict(costs.extra)
    if "activation_bytes_per_microbatch" in extra_info:
        extra_info["activation_bytes_per_microbatch_recomputed"] = extra_info["activation_bytes_per_microbatch"] * float(act)
    return costs.with_(  # the links, the reduction and the pair rule stay as they were
        b=grow(costs.b, costs.f), i=grow(costs.i, costs.f), activation=scale(costs.activation),
        name=f"{costs.name} + recomputation", extra=extra_info,
    )


_RECOMPUTE_DATA = Path(__file__).resolve().parents[1] / "data" / "h200_recompute_costs.json"


def load_h200_recompute_costs() -> dict[str, Any]:
    """The measured H200 recomputation table shipped with bubblekit.

    Source: one NVIDIA H200, PyTorch 2.11 (CUDA 13), bf16, micro-batch 1, a stage of 4
    GPT layers, ``torch.utils.checkpoint`` (non-reentrant) around every layer
    (``bubblekit/data/README.md``).

    Used in lesson 05.
    """
    if not _RECOMPUTE_DATA.exists():
        raise FileNotFoundError("bubblekit/data/h200_recompute_costs.json is missing from the installation")
    return json.loads(_RECOMPUTE_DATA.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _whole(x: Any) -> str:
    """A size rounded to a whole number, with thousands separators."""
    return f"{float(x):,.0f}"


def recompute_table() -> Table:
    """The measured H200 recomputation data as a :class:`~bubblekit.text.Table`, one row per configuration.

    Columns: ``hidden``, ``seq``; the forward (``F_ms``, ``F_rc_ms``) and backward
    (``bwd_ms``, ``bwd_rc_ms``) of a 4-layer stage without and with full recomputation, in
    ms; ``extra_F``: the backward's growth in plain forwards
    (``(bwd_rc_ms - bwd_ms) / F_ms``, a textbook says 1.0); the activations one microbatch
    leaves on the stage (``act_MiB``, ``act_rc_MiB``) and their ``ratio``.

    Used in lesson 05.
    """
    data = load_h200_recompute_costs()
    rows = []
    for c in data["configs"]:
        none, full = c["none"], c["full"]
        rows.append({
            "hidden": c["hidden"], "seq": c["seq"],
            "F_ms": none["F_ms"], "F_rc_ms": full["F_ms"], "bwd_ms": none["bwd_ms"], "bwd_rc_ms": full["bwd_ms"],
            "extra_F": (full["bwd_ms"] - none["bwd_ms"]) / none["F_ms"],
            "act_MiB": none["activation_bytes_per_microbatch"] / 2**20,
            "act_rc_MiB": full["activation_bytes_per_microbatch"] / 2**20,
            "ratio": none["activation_bytes_per_microbatch"] / full["activation_bytes_per_microbatch"],
        })
    two = dict.fromkeys(("F_ms", "F_rc_ms", "bwd_ms", "bwd_rc_ms", "extra_F"), "float2")
    return Table(
        rows, formats={**two, "act_MiB": _whole, "act_rc_MiB": _whole, "ratio": "float1"},
        headers={"hidden": tr("planner.rc.hidden"), "seq": tr("planner.rc.seq"),
                 "F_ms": tr("planner.rc.F"), "F_rc_ms": tr("planner.rc.F_rc"), "bwd_ms": tr("planner.rc.bwd"),
                 "bwd_rc_ms": tr("planner.rc.bwd_rc"), "extra_F": tr("planner.rc.extra_F"),
                 "act_MiB": tr("planner.rc.act"), "act_rc_MiB": tr("planner.rc.act_rc"),
                 "ratio": tr("planner.rc.ratio")},
        title=tr("planner.rc.title", device=data["device"], torch=data["torch"],
                 dtype="bf16" if get_language() == "zh" and data["dtype"] == "bfloat16" else data["dtype"],
                 layers=data["layers_per_stage"]),
    )


def h200_recompute_costs(hidden: int = 4096, seq: int = 4096, *, comm_ms: Number = 0) -> tuple[Costs, Costs]:
    """``(plain, recomputed)`` costs in ms of a 4-layer GPT stage per rank, measured on one H200.

    ``plain.activation`` is 1 (one microbatch activation) and
    ``recomputed.activation`` is the measured ratio of held bytes (about 1/16);
    both carry ``extra["activation_bytes_per_microbatch"]`` = the plain model's bytes,
    the size of one unit, so a byte budget converts the same way for both.

    Caveat from the data README: in the smallest configuration (hidden=2048) the
    checkpointed *forward* measured slower than the plain one (5.7 vs 2.1 ms), probably
    per-kernel overhead on small layers (not verified); treat that row with care.

    Args:
        hidden, seq: a measured configuration: (2048, 2048), (4096, 4096) or (8192, 4096).
        comm_ms: latency of one hop between ranks, ms (not measured; 0 by default).

    Used in lessons 05, 06, 09 and 10.
    """
    data = load_h200_recompute_costs()
    match = next((c for c in data["configs"] if c["hidden"] == hidden and c["seq"] == seq), None)
    if match is None:
        avail = sorted((c["hidden"], c["seq"]) for c in data["configs"])
        raise ValueError(f"no measured recomputation configuration with hidden={hidden}, seq={seq}; available: {avail}")
    comm = check_number("comm_ms", comm_ms, minimum=0)
    none, full = match["none"], match["full"]
    unit_bytes = none["activation_bytes_per_microbatch"]
    layers = data.get("layers_per_stage", 4)
    plain = Costs(
        f=none["F_ms"], b=none["bwd_ms"], comm=comm, unit="ms",
        name=f"measured H200 (h={hidden}, seq={seq}, {layers} layers/rank)",
        extra={"activation_bytes_per_microbatch": unit_bytes, "source": "h200_recompute_costs.json: none"},
    )
    recomputed = Costs(
        f=full["F_ms"], b=full["bwd_ms"], comm=comm, unit="ms",
        activation=full["activation_bytes_per_microbatch"] / unit_bytes,
        name=f"measured H200 (h={hidden}, seq={seq}, {layers} layers/rank) + full recomputation",
        extra={"activation_bytes_per_microbatch": unit_bytes, "source": "h200_recompute_costs.json: full",
               "held_bytes_per_microbatch": full["activation_bytes_per_microbatch"]},
    )
    return plain, recomputed


# ----------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class Candidate:
    """One configuration and what the simulator says about it.

    Attributes:
        schedule: registry name (``"1f1b"``).
        p, m, v: ranks, microbatches per step, chunks per rank.
        recompute: True when evaluated with the recomputation costs.
        makespan: step time in ``unit`` (``None`` when the schedule could not be built).
        unit: time unit of the costs.
        time_per_microbatch: ``makespan / m`` (the default ranking key; lower is better).
        bubble_ratio: idle / (p x makespan), the article's b.
        bubble_overhead: idle / busy, Megatron's convention.
        peak_activations: the largest per-rank peak, in microbatch activations of the plain model.
        peak_bytes: ``peak_activations`` x bytes per activation, when known.
        hops: cross-rank messages per step (:func:`hops_per_step`).
        fits: built, simulated, and within the memory budget (and the GPU, with a model).
        reason: why it does not fit (empty when it does).
        result: the :class:`SimResult` (not shown in reprs).
        total_bytes: the largest rank's weights + gradients + optimizer state + activations, in
            bytes, when a :class:`~bubblekit.memory.Model` was given (else ``None``).
        memory: the per-rank :class:`~bubblekit.memory.MemoryReport` (not shown in reprs).
        group: interleaved 1F1B's ``microbatch_group_size`` (Megatron-Core's
            ``microbatch_group_size_per_vp_stage``), ``None`` for PyTorch's order.
    """

    schedule: str
    p: int
    m: int
    v: int
    recompute: bool
    makespan: Number | None
    unit: str
    time_per_microbatch: float | None
    bubble_ratio: float | None
    bubble_overhead: float | None
    peak_activations: float | None
    peak_bytes: float | None
    hops: int | None
    fits: bool
    reason: str = ""
    result: SimResult | None = field(default=None, repr=False, compare=False)
    total_bytes: float | None = None
    memory: MemoryReport | None = field(default=None, repr=False, compare=False)
    group: int | None = None

    @property
    def label(self) -> str:
        """``"1f1b m=16"``, ``"interleaved v=2 m=16 +recompute"`` (Chinese, with the display name:
        ``"交错式 1F1B v=2 m=16 +重算"``). Used in lesson 05's tables. ``v`` only where it is a choice
        (interleaving): the V schedules and DualPipe always hold two stages per rank, so ``"dualpipe m=32"``."""
        v = f" v={self.v}" if self.v > 1 and spec(self.schedule).chunks == "many" else ""
        g = f" g={self.group}" if self.group is not None else ""
        rc = tr("planner.label.recompute") if self.recompute else ""
        name = spec(self.schedule).display_name if get_language() == "zh" else self.schedule
        return f"{name}{v}{g} m={self.m}{rc}"


def _per_stage_length(costs: Costs) -> int | None:
    """How many stages per-stage costs describe (``None`` for scalar costs, which fit any schedule)."""
    lengths = {len(x) for x in (costs.f, costs.b, costs.i, costs.w, costs.activation) if isinstance(x, tuple)}
    return lengths.pop() if lengths else None


def _check_memory_args(model: Any, gpu_memory: Any, memory_options: Any) -> dict[str, Any]:
    """``model``, ``gpu_memory`` and ``memory_options`` of :func:`evaluate` and :func:`plan`, checked together."""
    if model is not None and not isinstance(model, Model):
        raise TypeError(f"model must be a bubblekit.memory.Model or None, got {type(model).__name__}")
    if gpu_memory is not None:
        if model is None:
            raise ValueError("gpu_memory needs model=bubblekit.memory.Model(...): the bytes of the parameters, "
                             "gradients, optimizer state and activations come from the model's size")
        check_number("gpu_memory", gpu_memory, minimum=0, allow_equal=False)
    if memory_options is None:
        return {}
    if not isinstance(memory_options, dict):
        raise TypeError(f"memory_options must be a dict of memory_per_rank options, got {memory_options!r}")
    if memory_options and model is None:
        raise ValueError(
            f"memory_options={memory_options!r} needs model=bubblekit.memory.Model(...): the options describe how "
            f"the model's bytes are counted; without a model they would be ignored"
        )
    return check_options(model, dict(memory_options), where="memory_options") if model is not None else {}


def evaluate(
    name: str,
    p: int,
    m: int,
    v: int | None = None,
    *,
    costs: Costs,
    recompute: bool = False,
    memory_budget: float | None = None,
    activation_bytes: float | None = None,
    max_actions: int | None = MAX_ACTIONS,
    model: Model | None = None,
    gpu_memory: float | None = None,
    memory_options: dict[str, Any] | None = None,
    group: int | None = None,
) -> Candidate:
    """Build, simulate and measure one configuration (see :func:`plan` for the conventions).

    ``v`` defaults to the schedule's own (1, 2 for the V shapes and DualPipe, 2 for interleaved).
    Bad arguments raise a ``TypeError`` / ``ValueError`` naming them: a ``v`` the schedule does not
    take, per-stage costs whose length is not the schedule's ``p * v`` stages, an unknown or bad
    memory option, ``memory_options`` or ``gpu_memory`` without a ``model``. A configuration that
    is valid but cannot run (an ``m`` PyTorch's interleaved schedule refuses, a schedule larger
    than ``max_actions``, layers that do not split into its stages) comes back with ``fits=False``
    and the reason in ``reason``. ``group``: interleaved 1F1B's ``microbatch_group_size`` (an int
    >= 1; a group Megatron's rule refuses for this m comes back with ``fits=False``). With a ``model``, the bytes of every rank are computed
    (:func:`bubblekit.memory.memory_per_rank`, ``recompute="full"`` for a recomputed candidate)
    and, with ``gpu_memory`` (bytes), checked against it.
    """
    entry = spec(name)
    name = entry.name
    p = check_int("p", p)
    m = check_int("m", m)
    v = entry.resolve_v(v)
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    recompute = check_bool("recompute", recompute)
    if memory_budget is not None:
        memory_budget = float(check_number("memory_budget", memory_budget, minimum=0, allow_equal=False))
    if activation_bytes is not None:
        activation_bytes = float(check_number("activation_bytes", activation_bytes, minimum=0, allow_equal=False))
    if max_actions is not None:
        max_actions = check_int("max_actions", max_actions)
    options = _check_memory_args(model, gpu_memory, memory_options)
    length = _per_stage_length(costs)
    if length is not None and length != p * v:
        raise ValueError(
            f"costs give {length} per-stage values but {entry.display_name} with p={p}, v={v} has {p * v} stages "
            f"(p * v): give one value per stage or single numbers"
        )
    if group is not None:
        group = check_int("group", group, minimum=1)
        if name != "interleaved":
            raise ValueError(f"group={group!r} is interleaved 1F1B's microbatch_group_size, not a knob of {name!r}: "
                             f"leave it out (None)")
    spec_v = None if entry.chunks == "one" else v
    try:
        sched = schedule(name, p, m, spec_v, max_actions=max_actions, microbatch_group_size=group)
        res = simulate(sched, costs)
    except ValueError as err:
        return Candidate(name, p, m, v, recompute, None, costs.unit, None, None, None, None, None, None, False,
                         tr("planner.reason.cannot_run", error=err), group=group)
    peak = float(res.max_peak_activations)
    pbytes = peak * activation_bytes if activation_bytes is not None else None
    fits, reason = True, ""
    if memory_budget is not None and peak > memory_budget + _EPS:
        fits = False
        reason = tr("planner.reason.budget", peak=peak, budget=memory_budget)
    report = None
    if model is not None:
        options.setdefault("recompute", "full" if recompute else "none")
        try:
            report = memory_per_rank(sched, model, gpu_memory=gpu_memory, **options)
        except ValueError as err:  # e.g. layers that do not split into this many stages
            return Candidate(name, p, m, sched.v, recompute, res.makespan, res.unit, float(res.makespan) / m,
                             res.bubble_ratio, res.bubble_overhead, peak, pbytes, sched.hops_per_step, False,
                             tr("planner.reason.memory", error=err), res, group=group)
        if report.fits is False and fits:
            fits = False
            reason = tr("planner.reason.gpu", rank=report.worst_rank, need=report.max_total / GB,
                        gpu=report.gpu_memory / GB)  # type: ignore[operator]
    return Candidate(
        name, p, m, sched.v, recompute, res.makespan, res.unit, float(res.makespan) / m,
        res.bubble_ratio, res.bubble_overhead, peak, pbytes, sched.hops_per_step, fits, reason, res,
        None if report is None else report.max_total, report, group,
    )


@dataclass(frozen=True)
class PlanTable:
    """Ranked candidates: feasible ones first, best first.

    Attributes:
        candidates: every configuration tried, ranked.
        rank_by: the ranking key.
        memory_budget: the budget in microbatch activations per rank (``None``: no limit).
        activation_bytes: bytes of one microbatch activation (``None`` when unknown).
    """

    candidates: tuple[Candidate, ...]
    rank_by: str
    memory_budget: float | None
    activation_bytes: float | None

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates)

    def __len__(self) -> int:
        return len(self.candidates)

    def __getitem__(self, k: int) -> Candidate:
        return self.candidates[k]

    @property
    def feasible(self) -> tuple[Candidate, ...]:
        """The candidates that fit the budget, ranked."""
        return tuple(c for c in self.candidates if c.fits)

    @property
    def best(self) -> Candidate | None:
        """The top feasible candidate, or ``None`` when nothing fits."""
        return next(iter(self.feasible), None)

    def to_text(self, limit: int | None = 10, *, show_infeasible: bool = False) -> str:
        """A fixed-width table of the top ``limit`` candidates (feasible only unless asked).

        ``limit``: how many rows, an int >= 0, or ``None`` for all.
        """
        limit = _check_limit(limit)
        rows = list(self.candidates if show_infeasible else self.feasible)
        if limit is not None:
            rows = rows[:limit]
        unit = self.candidates[0].unit if self.candidates else ""
        totals = any(c.total_bytes is not None for c in rows)
        mem_head = tr("planner.text.total_gb" if totals else "planner.text.peak_gib" if self.activation_bytes is not None
                      else "planner.text.peak_act")
        heads = [tr("planner.text.step", unit=_unit(unit)), tr("planner.text.per_mb"), tr("planner.text.bubble"),
                 mem_head, tr("planner.text.hops")]
        # each column as wide as its header when that is wider than the usual width (a Chinese header can be)
        ws, wp, wb, wm, wh = (max(w, Table._width(h)) for w, h in zip((10, 8, 7, 8, 5), heads))
        head = (f"{'#':>2}  {_ljust(tr('planner.configuration'), 32)} {_rjust(heads[0], ws)} "
                f"{_rjust(heads[1], wp)} {_rjust(heads[2], wb)} "
                f"{_rjust(heads[3], wm)} {_rjust(heads[4], wh)}  {tr('planner.fits')}")
        lines = [head, "-" * Table._width(head)]
        for k, c in enumerate(rows, 1):
            if c.makespan is None:
                lines.append(f"{k:>2}  {_ljust(c.label, 32)} {'-':>{ws}} {'-':>{wp}} {'-':>{wb}} {'-':>{wm}} {'-':>{wh}}  "
                             + tr("planner.text.no_reason", reason=c.reason[:40]))
                continue
            if totals:
                mem_text = f"{c.total_bytes / GB:>{wm}.3g}" if c.total_bytes is not None else f"{'-':>{wm}}"
            else:
                mem = c.peak_bytes / 2**30 if c.peak_bytes is not None else c.peak_activations
                mem_text = f"{mem:>{wm}.3g}"
            lines.append(
                f"{k:>2}  {_ljust(c.label, 32)} {float(c.makespan):>{ws}.4g} {c.time_per_microbatch:>{wp}.4g} "
                f"{c.bubble_ratio:>{wb}.1%} {mem_text} {c.hops:>{wh}}  {tr('text.yes' if c.fits else 'text.no')}"
            )
        if not rows:
            lines.append(tr("planner.text.none_fits"))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def table(
        self,
        limit: int | None = 10,
        *,
        show_infeasible: bool = False,
        where: Callable[[Candidate], bool] | None = None,
        title: str = "",
    ) -> Table:
        """The top ``limit`` candidates as a :class:`~bubblekit.text.Table` (renders itself).

        Args:
            limit: how many rows (``None``: all).
            show_infeasible: include the candidates that do not fit (with the reason).
            where: keep only the candidates for which ``where(candidate)`` is true
                (e.g. ``lambda c: not c.recompute``).
            title: a caption; default says what is ranked and the budget.

        Memory is in GiB when the bytes of one microbatch activation are known, else in
        microbatch activations; the budget is stated in the same unit in the title.

        Used in lesson 05.
        """
        limit = _check_limit(limit)
        if where is not None and not callable(where):
            raise TypeError(f"where must be a function of one Candidate returning True or False, got {where!r}")
        rows = [c for c in (self.candidates if show_infeasible else self.feasible) if where is None or where(c)]
        rows = rows[:limit] if limit is not None else rows
        unit = self.candidates[0].unit if self.candidates else ""
        in_gib = self.activation_bytes is not None
        out = []
        for k, c in enumerate(rows, 1):
            mem = None if c.peak_activations is None else (
                c.peak_bytes / 2**30 if in_gib and c.peak_bytes is not None else c.peak_activations)
            out.append({"rank": k, "configuration": c.label, "makespan": c.makespan,
                        "per_mb": c.time_per_microbatch, "bubble_ratio": c.bubble_ratio, "peak": mem,
                        "hops": c.hops, "fits": c.fits if c.makespan is not None else c.reason})
        if self.memory_budget is None:
            budget = tr("planner.no_budget")
        elif in_gib:
            budget = tr("planner.budget_gib", gib=self.memory_budget * float(self.activation_bytes or 0) / 2**30)
        else:
            budget = tr("planner.budget_act", act=self.memory_budget)
        return Table(
            out, ["rank", "configuration", "makespan", "per_mb", "bubble_ratio", "peak", "hops", "fits"],
            formats={"makespan": _whole if unit == "ms" else "decimal", "per_mb": "float1" if unit == "ms" else "decimal",
                     "bubble_ratio": "percent", "peak": "float1" if in_gib else "auto"},
            headers={"rank": "#", "configuration": tr("planner.configuration"), "makespan": tr("planner.step", unit=_unit(unit)),
                     "per_mb": tr("planner.per_mb", unit=_unit(unit)),
                     "peak": tr("planner.peak_gib" if in_gib else "planner.peak_act"),
                     "hops": tr("planner.messages"), "fits": tr("planner.fits")},
            title=title or tr("planner.title", rank_by=tr(f"planner.rank_by.{self.rank_by}"), budget=budget),
        )


def _check_limit(limit: Any) -> int | None:
    """A row limit: ``None`` (all rows) or an int >= 0."""
    return None if limit is None else check_int("limit", limit, minimum=0)


def _sort_key(rank_by: str) -> Any:
    order = {name: k for k, name in enumerate(REGISTRY)}

    def key(c: Candidate) -> tuple[Any, ...]:
        if c.makespan is None:
            return (2, math.inf, 0.0, 0, order.get(c.schedule, 99), c.m, c.v, c.recompute)
        main: Any = {
            "time_per_microbatch": c.time_per_microbatch,
            "makespan": float(c.makespan),
            "bubble_ratio": c.bubble_ratio,
            "peak_activations": c.peak_activations,
        }[rank_by]
        return (0 if c.fits else 1, round(float(main), 12), round(float(c.peak_activations or 0), 12), c.hops or 0,
                order.get(c.schedule, 99), c.m, c.v, c.recompute)

    return key


def _v_options(chunks: str, vs: tuple[int, ...]) -> tuple[int, ...]:
    """The ``v`` values a schedule is tried with: 1, 2 (V shape) or each of ``vs``."""
    return (1,) if chunks == "one" else (2,) if chunks == "two" else vs


def _actions_of(name: str, p: int, m: int, v: int) -> int:
    """Actions of one configuration (0 when the schedule refuses it: it is not simulated)."""
    entry = REGISTRY[name]
    return entry.n_actions(p, m, v) if entry.allows(p, m, v) else 0


def _ints(name: str, values: Any, minimum: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}")
    values = check_sequence(name, values, empty=True)
    if not values:
        raise ValueError(f"{name} is empty: give at least one value")
    return tuple(dict.fromkeys(check_int(f"{name}[{k}]", x, minimum=minimum) for k, x in enumerate(values)))


def plan(
    p: int,
    *,
    costs: Costs | None = None,
    recompute: Costs | None = None,
    memory_budget: Number | None = None,
    memory_budget_bytes: Number | None = None,
    activation_bytes: Number | None = None,
    ms: Sequence[int] | None = None,
    schedules: Sequence[str] = _DEFAULT_SCHEDULES,
    vs: Sequence[int] = (2, 4),
    rank_by: str = "time_per_microbatch",
    max_actions: int | None = MAX_PLAN_ACTIONS,
    progress: Progress = None,
    model: Model | None = None,
    gpu_memory: Number | None = None,
    memory_options: dict[str, Any] | None = None,
    groups: Sequence[int | None] = (None,),
) -> PlanTable:
    """Enumerate schedule x m x v (x recomputation), simulate each, rank by speed under a memory budget.

    Args:
        p: pipeline ranks, int >= 1.
        costs: the plain model's costs (default ``Costs(f=1, b=2)``, slots).
        recompute: costs of the same model with activation recomputation (see
            :func:`with_recompute`, :func:`h200_recompute_costs`); ``None`` tries none.
        memory_budget: activations each rank may hold, in microbatch activations of the
            plain model (> 0); ``None`` means no limit.
        memory_budget_bytes: the same budget in bytes (give one or the other); needs
            ``activation_bytes`` or ``costs.extra["activation_bytes_per_microbatch"]``.
        activation_bytes: bytes of one microbatch activation (one rank's share, no recomputation).
        ms: microbatch counts to try; default ``p, 2p, 4p, 8p``.
        schedules: registry names to try; multi-chunk schedules are tried with each ``v`` in ``vs``.
        vs: chunks per rank for interleaved and looped-BFS schedules (ints >= 2).
        rank_by: ``"time_per_microbatch"`` (default; makespan / m), ``"makespan"``,
            ``"bubble_ratio"`` or ``"peak_activations"``.
        max_actions: refuse plans that would simulate more actions than this in total
            (default :data:`MAX_PLAN_ACTIONS`, about ten seconds); ``None`` lifts the limit.
        progress: ``None`` reports progress on standard error for plans estimated to take
            more than a few seconds; ``True``/``False`` always/never; or a function of one line.
        model: the model (:class:`bubblekit.memory.Model`): each candidate then gets its bytes
            per rank (weights, gradients, optimizer state, activations; ``Candidate.total_bytes``).
        gpu_memory: bytes per GPU (e.g. ``80 * bubblekit.memory.GB``); needs ``model``; a
            candidate whose largest rank exceeds it does not fit.
        memory_options: further options of :func:`bubblekit.memory.memory_per_rank`
            (``precision``, ``tp``, ``dp``, ``zero``, ``activations``, ...).
        groups: interleaved 1F1B's ``microbatch_group_size`` values to try (Megatron-Core's
            ``microbatch_group_size_per_vp_stage``: ``p`` depth-first, ``m`` breadth-first);
            ``None`` in the list is PyTorch's order (the default, ``(None,)``). Other schedules
            ignore it. A group Megatron's rule refuses for an m comes back with ``fits=False``.

    Returns:
        A :class:`PlanTable`: feasible candidates first, best first; ``.best``, ``.to_text()``.

    Raises:
        TypeError / ValueError naming the parameter for bad input (unknown schedule, empty
        ``ms``, both budgets, a byte budget without a byte size, ...).

    Used in lessons 05 and 07.
    """
    p = check_int("p", p)
    _check_memory_args(model, gpu_memory, memory_options)
    gpu = None if gpu_memory is None else float(gpu_memory)
    if costs is None:
        costs = Costs()
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    if recompute is not None and not isinstance(recompute, Costs):
        raise TypeError(f"recompute must be a bubblekit Costs (the recomputed model) or None, got {type(recompute).__name__}")
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {RANK_BY}, got {rank_by!r}")
    if activation_bytes is None and "activation_bytes_per_microbatch" in costs.extra:
        activation_bytes = costs.extra["activation_bytes_per_microbatch"]
    if activation_bytes is not None:
        activation_bytes = float(check_number("activation_bytes", activation_bytes, minimum=0, allow_equal=False))
    if memory_budget is not None and memory_budget_bytes is not None:
        raise ValueError("give memory_budget (microbatch activations) or memory_budget_bytes, not both")
    budget: float | None = None
    if memory_budget is not None:
        budget = float(check_number("memory_budget", memory_budget, minimum=0, allow_equal=False))
    elif memory_budget_bytes is not None:
        nbytes = float(check_number("memory_budget_bytes", memory_budget_bytes, minimum=0, allow_equal=False))
        if activation_bytes is None:
            raise ValueError(
                "memory_budget_bytes needs the size of one microbatch activation: pass activation_bytes=... "
                "or costs with extra['activation_bytes_per_microbatch'] (the measured presets have it)"
            )
        budget = nbytes / activation_bytes
    ms_t = _ints("ms", ms if ms is not None else (p, 2 * p, 4 * p, 8 * p), 1)
    vs_t = _ints("vs", vs, 2)
    if isinstance(schedules, str) or not isinstance(schedules, Sequence) or not schedules:
        raise TypeError(f"schedules must be a non-empty sequence of schedule names, got {schedules!r}")
    names = [spec(name).name for name in schedules]
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence) or not groups:
        raise TypeError(f"groups must be a non-empty sequence of microbatch group sizes (ints >= 1) or None, got {groups!r}")
    groups_t = tuple(None if g is None else check_int(f"groups[{k}]", g, minimum=1) for k, g in enumerate(groups))
    variants: list[tuple[bool, Costs]] = [(False, costs)]
    if recompute is not None:
        variants.append((True, recompute))
    configs = [(name, v, m, rc, c, g) for name in dict.fromkeys(names)
               for v in _v_options(REGISTRY[name].chunks, vs_t) for m in ms_t for rc, c in variants
               for g in (dict.fromkeys(groups_t) if name == "interleaved" else (None,))]
    lengths = {n for n in (_per_stage_length(c) for _, c in variants) if n is not None}
    if lengths:  # per-stage costs describe one stage count: try the configurations that have it
        configs = [cf for cf in configs if _per_stage_length(cf[4]) in (None, p * cf[1])]
        if not configs:
            raise ValueError(
                f"the per-stage costs give {sorted(lengths)} stage value(s), but none of the schedules tried has "
                f"that many stages (p * v with p={p}, v in {sorted({1, 2, *vs_t})}): give one value per stage of "
                f"a schedule you try, or single numbers"
            )
    total = sum(_actions_of(name, p, m, v) if g is None else REGISTRY[name].n_actions(p, m, v)
                for name, v, m, _, _, g in configs)
    check_size(f"plan(p={p}, ms={list(ms_t)}) over {len(configs)} configurations", total, max_actions,
               instead="give fewer ms, schedules or vs", at_once=False)
    step = reporter(progress, "plan", len(configs), total * 2e-6)
    out: list[Candidate] = []
    for k, (name, v, m, rc, c, g) in enumerate(configs, 1):
        out.append(evaluate(name, p, m, v, costs=c, recompute=rc, memory_budget=budget,
                            activation_bytes=activation_bytes, max_actions=MAX_ACTIONS if max_actions else None,
                            model=model, gpu_memory=gpu, memory_options=memory_options, group=g))
        step(k)
    out.sort(key=_sort_key(rank_by))
    return PlanTable(tuple(out), rank_by, budget, activation_bytes)


