"""Calibrate the simulator from a measured timeline, and explain measurement vs formula.

A measured step differs from the formula ``(p - 1) / (m v + p - 1)`` for these reasons,
each of which this module measures from the timeline itself (times in the timeline's
unit, ms for a trace):

1. **durations**: real stages are unequal (per-stage, per-kind mean durations; a mean,
   so that the simulated busy time equals the measured one);
2. **overhead**: between two actions a rank spends time outside any action (Python,
   posting sends and receives, the loss) even when it needs nothing from another rank;
3. **latency**: a hop between ranks takes time (the delay between a producer's end and a
   waiting consumer's start, minus the overhead);
4. **pickup**: an action whose input from another rank was sent while this rank was
   still busy starts later than one with only local inputs: the message has to be
   picked up (the receive is posted only now, and with a rendezvous protocol such as
   gloo's the transfer needs the sender, which is busy computing, to make progress).
   Measured as the gap before such actions minus the overhead;
5. **stalls, stragglers and jitter**: a few gaps far longer than the typical one, and
   actions slower or faster than their stage's mean. No single per-action number can
   stand for them; :func:`replay` and :func:`jitter_simulation` look at them.

Which statistic: the overhead, latency and pickup are **medians** by default (the
typical gap). A step holds only a handful of gaps of each kind, and on a busy machine a
few of them are stalls tens of times longer than the rest (a blocked send, the OS
descheduling a rank). The simulator charges the overhead to *every* action, in series
along the critical path, so a mean that a few stalls dominate overcharges the whole step:
on the shipped 1F1B sample the mean overhead is tens of times the median, and the
simulation with it ends further from the measurement than the one with durations alone. With the
median each row of :func:`compare_measured` moves toward the measurement, and what is left
is the stalls themselves (``statistic="mean"`` gives the old behaviour, for comparison).

:func:`calibrate` returns a :class:`~bubblekit.Costs` (unit ms; each action's cost is its
mean duration plus the overhead) and a :class:`CalibrationReport`;
:func:`calibrated_simulation` simulates with them and returns the compute-only spans, so
its bubble ratio compares directly with the measurement; :func:`compare_measured` puts
measurement, formula and the simulations side by side.

How the pickup enters the calibrated simulation: whether a message arrives while its
receiver is busy depends on sub-millisecond differences between stages, so a simulation
with mean durations cannot decide it reliably action by action. Instead each (stage,
kind) that takes an input from another rank is charged the pickup times the share of its
actions whose message did arrive early (:attr:`CalibrationReport.pickup_shares`), added
to that stage's cost, and :func:`~bubblekit.simulate` runs as usual. These per-stage
charges are schedule-specific: they explain the measured run (which stages happen to
receive early depends on the schedule and on m) and do not carry over to another
schedule. What transfers is the rule itself, which :func:`jitter_simulation` and
:func:`replay` apply per action: the pickup is paid only when a message arrived early.

Used in lesson 06.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bubblekit._validate import Number, check_int, check_number
from bubblekit.actions import Action, inputs
from bubblekit.costs import Costs
from bubblekit.formulas import bubble_ratio as formula_bubble_ratio
from bubblekit.i18n import register, tr
from bubblekit.schedules import schedule as build_schedule
from bubblekit.schedules import spec
from bubblekit.schedules.base import Schedule
from bubblekit.simulator import Arrival, run_orders, simulate
from bubblekit.text import Table
from bubblekit.timeline import Timeline

__all__ = [
    "calibrate",
    "CalibrationReport",
    "KindStats",
    "calibrated_simulation",
    "replay",
    "jitter_simulation",
    "JitterResult",
    "compare_measured",
    "Comparison",
    "Row",
    "LADDER",
    "predict",
]

register({
    # the calibration's report, gap table and comparison ladder (lesson 06); row keys and column keys stay English
    "calibrate.stat.median": {"en": "median", "zh": "中位数"},
    "calibrate.stat.mean": {"en": "mean", "zh": "均值"},
    "calibrate.gaps.between": {"en": "between actions (overhead)", "zh": "动作之间（开销）"},
    "calibrate.gaps.remote": {"en": "after a remote input (latency + overhead)", "zh": "等远端输入之后（延迟 + 开销）"},
    "calibrate.gaps.early": {"en": "after an early message (pickup + overhead)", "zh": "消息提前到达之后（处理延迟 + 开销）"},
    "calibrate.gaps.gap": {"en": "gap", "zh": "间隙"},
    "calibrate.gaps.samples": {"en": "samples", "zh": "样本数"},
    "calibrate.gaps.median": {"en": "median ({u})", "zh": "中位数（{u}）"},
    "calibrate.gaps.mean": {"en": "mean ({u})", "zh": "均值（{u}）"},
    "calibrate.gaps.used": {"en": "{stat} used ({u})", "zh": "采用的{stat}（{u}）"},
    "calibrate.gaps.note": {"en": "raw gaps; 'used': the overhead per action, the latency and pickup net of the overhead",
                            "zh": "原始间隙；“采用”一列：每个动作的开销，以及扣除开销后的延迟和处理延迟"},
    "calibrate.describe.head": {"en": "calibration ({u}):", "zh": "校准结果（{u}）："},
    "calibrate.describe.stage": {"en": "  stage {s} {k}: mean {mean:.3f} {u} (median {median:.3f}, sd {sd:.3f}, n={n})",
                                 "zh": "  流水级 {s} {k}：均值 {mean:.3f} {u}（中位数 {median:.3f}，标准差 {sd:.3f}，n={n}）"},
    "calibrate.describe.overhead": {"en": "  overhead per action: {x:.3f} {u} ({stat} of {n} gaps; the {other}: {alt:.3f})",
                                    "zh": "  每个动作的开销：{x:.3f} {u}（{n} 个间隙的{stat}；改用{other}为 {alt:.3f}）"},
    "calibrate.describe.latency": {"en": "  latency per hop: {x:.3f} {u} ({stat} of {n} delays minus the {stat} overhead; "
                                         "the same with the {other}: {alt:.3f})",
                                   "zh": "  每跳延迟：{x:.3f} {u}（{n} 个等待时间的{stat}减去开销的{stat}；"
                                         "改用{other}为 {alt:.3f}）"},
    "calibrate.describe.pickup": {"en": "  pickup of a message sent while the rank was busy: {x:.3f} {u} ({stat} of {n} gaps "
                                        "minus the {stat} overhead; the same with the {other}: {alt:.3f})",
                                  "zh": "  rank 忙时到达的消息的处理延迟：{x:.3f} {u}（{n} 个间隙的{stat}减去开销的{stat}；"
                                        "改用{other}为 {alt:.3f}）"},
    "calibrate.describe.shares": {"en": "  pickup charged per action (the pickup x the share of its messages that came early): "
                                        "{shares} {u}",
                                  "zh": "  每个动作计入的处理延迟（处理延迟 x 其消息中提前到达的比例）：{shares} {u}"},
    "calibrate.describe.note": {"en": "  note: {note}", "zh": "  注：{note}"},
    "calibrate.note.no_overhead": {"en": "no gap with all inputs ready: overhead taken as 0",
                                   "zh": "没有输入全部就绪的间隙：开销按 0 计"},
    "calibrate.note.all_remote": {"en": "every action needs an input from another rank: overhead from those gaps, "
                                        "pickup taken as 0",
                                  "zh": "每个动作都需要来自其他 rank 的输入：开销取自这些间隙，处理延迟按 0 计"},
    "calibrate.note.no_latency": {"en": "no action waited for a remote input: latency taken as 0",
                                  "zh": "没有动作等待远端输入：延迟按 0 计"},
    "calibrate.costs_name": {"en": "calibrated from {source}", "zh": "根据{source}校准"},
    "calibrate.a_measured_step": {"en": "a measured step", "zh": "一个实测步"},
    "calibrate.row.formula": {"en": "formula (p-1)/(m v+p-1), p={p} m={m} v={v}", "zh": "公式 (p-1)/(m v+p-1)，p={p} m={m} v={v}"},
    "calibrate.why.formula": {"en": "equal stages, no overhead, no latency (t_f and t_b cancel)",
                              "zh": "各流水级相同，无开销，无延迟（t_f 和 t_b 约掉了）"},
    "calibrate.row.textbook": {"en": "textbook simulation (F=1, B=2 slots)", "zh": "教科书代价的模拟（F=1, B=2 个时间槽）"},
    "calibrate.why.textbook": {"en": "the schedule's own shape", "zh": "调度本身的形状"},
    "calibrate.row.durations": {"en": "measured durations (mean per stage)", "zh": "实测耗时（每个流水级取均值）"},
    "calibrate.why.durations": {"en": "unequal stages", "zh": "流水级不均衡"},
    "calibrate.row.overhead": {"en": "+ overhead {x:.3f} {u}/action", "zh": "+ 开销 {x:.3f} {u}/动作"},
    "calibrate.why.overhead": {"en": "the {stat} gap between actions whose inputs were ready",
                               "zh": "输入已就绪的动作之间间隙的{stat}"},
    "calibrate.row.latency": {"en": "+ latency {x:.3f} {u}/hop", "zh": "+ 延迟 {x:.3f} {u}/跳"},
    "calibrate.why.latency": {"en": "the hop between ranks", "zh": "rank 之间的一跳"},
    "calibrate.row.calibrated": {"en": "+ pickup {x:.3f} {u}/early message: calibrated",
                                 "zh": "+ 消息处理 {x:.3f} {u}/提前到达的消息：校准结果"},
    "calibrate.why.calibrated": {"en": "a message that came while its rank was busy (charged per stage: {what})",
                                 "zh": "rank 忙时到达的消息（按流水级计入：{what}）"},
    "calibrate.none": {"en": "none", "zh": "无"},
    "calibrate.row.jitter": {"en": "measured jitter ({draws} draws)", "zh": "实测抖动（抽样 {draws} 次）"},
    "calibrate.why.jitter": {"en": "durations and gaps drawn at random from the measured ones",
                             "zh": "耗时和间隙从实测值中随机抽取"},
    "calibrate.row.replay": {"en": "replay (each action's own duration)", "zh": "回放（每个动作用自己的实测耗时）"},
    "calibrate.why.replay": {"en": "this step's stragglers, with the typical gaps", "zh": "这一步里的慢动作，间隙取典型值"},
    "calibrate.row.measured": {"en": "measured", "zh": "实测"},
    "calibrate.why.measured": {"en": "everything, stalls included", "zh": "全部因素，包括停顿"},
    "calibrate.table.model": {"en": "model", "zh": "模型"},
    "calibrate.table.vs": {"en": "vs measured", "zh": "与实测之差"},
    "calibrate.table.makespan": {"en": "makespan ({u})", "zh": "单步耗时（{u}）"},
    "calibrate.table.adds": {"en": "what it adds", "zh": "新加入的因素"},
    "calibrate.table.note": {"en": "bubble_ratio = idle / (ranks x makespan); 'vs measured' in percentage points",
                             "zh": "bubble_ratio（气泡比例）= 空闲 / (ranks x makespan)；“与实测之差”的单位是百分点"},
    "calibrate.table.order": {"en": "; executed order differs from the schedule: {diffs}",
                              "zh": "；实际执行顺序与调度不同：{diffs}"},
    "calibrate.diff.position": {"en": "rank {r} position {k}: ran {got}, schedule says {want}",
                                "zh": "rank {r} 第 {k} 个位置：实际执行 {got}，调度为 {want}"},
    "calibrate.diff.end": {"en": "end", "zh": "结束"},
    "calibrate.diff.ranks": {"en": "{ran} ranks ran, the schedule has {has}", "zh": "实际运行了 {ran} 个 rank，调度有 {has} 个"},
    "calibrate.predict.per_s": {"en": "microbatches / s", "zh": "微批 / 秒"},
    "calibrate.predict.per_1000": {"en": "microbatches / 1000 {u}", "zh": "微批 / 1000 {u}"},
    "calibrate.predict.per_mb": {"en": "per microbatch ({u})", "zh": "每个微批（{u}）"},
    "calibrate.predict.formula": {"en": "formula (equal stages)", "zh": "公式（各流水级相同）"},
    "calibrate.predict.title": {"en": "{name}, p={p}, simulated with {costs}", "zh": "{name}，p={p}，按“{costs}”的耗时模拟"},
    "calibrate.predict.title_given": {"en": "{name}, p={p}, simulated with the given costs",
                                      "zh": "{name}，p={p}，按给定的耗时模拟"},
    "calibrate.predict.note": {"en": "bubble_ratio = idle / (p x makespan)", "zh": "bubble_ratio（气泡比例）= 空闲 / (p x makespan)"},
})


@dataclass(frozen=True)
class KindStats:
    """Durations of one kind of action on one stage, in the timeline's unit."""

    stage: int
    kind: str
    count: int
    mean: float
    median: float
    stdev: float
    minimum: float
    maximum: float


@dataclass
class CalibrationReport:
    """What :func:`calibrate` measured (times in the timeline's unit, usually ms).

    Attributes:
        durations: per (stage, kind), :class:`KindStats` of the action durations.
        overhead: gap between two actions of a rank whose inputs were already there
            (the median, or the mean with ``statistic="mean"``).
        overhead_samples: how many gaps it is over.
        latency: per-hop latency: (consumer start - producer end) over consumers that were
            waiting for a remote input, minus the overhead (same statistic).
        latency_samples: how many hops it is over.
        costs: the calibrated :class:`Costs`.
        unit: the time unit.
        notes: remarks (fallbacks used).
        statistic: ``"median"`` or ``"mean"``.
        overhead_median, overhead_mean, latency_median, latency_mean, pickup_median,
            pickup_mean: both statistics, to show heavy tails (a few long stalls make the
            mean much larger than the median).
        pickup: extra gap, over the overhead, before an action whose input from another
            rank had arrived while the rank was busy (same statistic; 0 when none).
        pickup_samples: how many such gaps it is over.
        pickup_shares: per (stage, kind) that takes an input from another rank, the pickup
            times the share of its actions whose message arrived while the rank was busy:
            what :func:`calibrated_simulation` adds to that stage's cost; schedule-specific
            (see the module doc).
        overhead_gaps, latency_delays, pickup_gaps: the raw samples, in the order the
            ranks ran them (the delays and pickup gaps still include the overhead).
    """

    durations: dict[tuple[int, str], KindStats]
    overhead: float
    overhead_samples: int
    latency: float
    latency_samples: int
    costs: Costs
    unit: str = "ms"
    notes: list[str] = field(default_factory=list)
    statistic: str = "median"
    overhead_median: float = 0.0
    overhead_mean: float = 0.0
    latency_median: float = 0.0
    latency_mean: float = 0.0
    pickup: float = 0.0
    pickup_samples: int = 0
    pickup_median: float = 0.0
    pickup_mean: float = 0.0
    pickup_shares: dict[tuple[int, str], float] = field(default_factory=dict)
    overhead_gaps: tuple[float, ...] = ()
    latency_delays: tuple[float, ...] = ()
    pickup_gaps: tuple[float, ...] = ()

    def stalls(self, factor: float = 10.0) -> tuple[float, ...]:
        """The overhead gaps longer than ``factor`` x the median gap (and than 1 time unit): the stalls.

        A per-action overhead cannot stand for them (see the module doc); they are most of
        what the calibrated simulation leaves unexplained. Used in lesson 06.
        """
        check_number("factor", factor, minimum=1.0)
        limit = max(factor * self.overhead_median, 1.0)
        return tuple(g for g in self.overhead_gaps if g > limit)

    def gap_table(self) -> Table:
        """The measured gaps of each kind, raw: how many, their median and mean, and the value used.

        Median and mean are of the raw samples (the delays and pickup gaps include the
        overhead), so the two columns compare like with like; ``used`` is what the
        calibration charges: the overhead's statistic per action, and the latency and pickup
        net of the overhead (the delays' statistic minus the overhead's). Used in lesson 06
        (why the median, not the mean).
        """
        u = self.unit

        def row(name: str, xs: tuple[float, ...], used: float) -> dict[str, Any]:
            return {"gap": name, "samples": len(xs), "median": _median(xs) if xs else None,
                    "mean": statistics.fmean(xs) if xs else None, "used": used}

        rows = [row(tr("calibrate.gaps.between"), self.overhead_gaps, self.overhead),
                row(tr("calibrate.gaps.remote"), self.latency_delays, self.latency),
                row(tr("calibrate.gaps.early"), self.pickup_gaps, self.pickup)]
        return Table(rows, formats={"median": "float2", "mean": "float2", "used": "float2"},
                     headers={"gap": tr("calibrate.gaps.gap"), "samples": tr("calibrate.gaps.samples"),
                              "median": tr("calibrate.gaps.median", u=u), "mean": tr("calibrate.gaps.mean", u=u),
                              "used": tr("calibrate.gaps.used", stat=tr(f"calibrate.stat.{self.statistic}"), u=u)},
                     note=tr("calibrate.gaps.note"))

    def describe(self) -> str:
        """A few lines of text: durations per stage and kind, overhead, latency. Used in lesson 06."""
        u = self.unit
        lines = [tr("calibrate.describe.head", u=u)]
        for (s, k), st in sorted(self.durations.items()):
            lines.append(tr("calibrate.describe.stage", s=s, k=k, mean=st.mean, u=u, median=st.median, sd=st.stdev,
                            n=st.count))
        other = "mean" if self.statistic == "median" else "median"
        alt = {"overhead": self.overhead_mean, "latency": self.latency_mean, "pickup": self.pickup_mean}
        if other == "median":
            alt = {"overhead": self.overhead_median, "latency": self.latency_median, "pickup": self.pickup_median}
        words = {"stat": tr(f"calibrate.stat.{self.statistic}"), "other": tr(f"calibrate.stat.{other}"), "u": u}
        lines.append(tr("calibrate.describe.overhead", x=self.overhead, n=self.overhead_samples, alt=alt["overhead"],
                        **words))
        lines.append(tr("calibrate.describe.latency", x=self.latency, n=self.latency_samples, alt=alt["latency"], **words))
        lines.append(tr("calibrate.describe.pickup", x=self.pickup, n=self.pickup_samples, alt=alt["pickup"], **words))
        shares = ", ".join(f"{s}{k} {x:.3f}" for (s, k), x in sorted(self.pickup_shares.items()))
        if shares:
            lines.append(tr("calibrate.describe.shares", shares=shares, u=u))
        lines.extend(tr("calibrate.describe.note", note=n) for n in self.notes)
        return "\n".join(lines)


class _Obs:
    """Indexed spans of one measured step."""

    def __init__(self, timeline: Timeline) -> None:
        self.by_action: dict[Action, tuple[int, float, float]] = {}
        self.rank_spans: list[list[tuple[float, float, Action]]] = [[] for _ in range(timeline.p)]
        for sp in timeline.spans():
            if sp.action is None:
                continue
            if sp.action in self.by_action:
                raise ValueError(
                    f"action {sp.action} appears twice in the timeline: give one training step "
                    f"(read_trace returns one step; read_trace_steps a list)"
                )
            self.by_action[sp.action] = (sp.rank, float(sp.start), float(sp.end))
            self.rank_spans[sp.rank].append((float(sp.start), float(sp.end), sp.action))
        if not self.by_action:
            raise ValueError("the timeline has no spans labelled with actions (0F3, 1B2, ...): nothing to calibrate")
        for row in self.rank_spans:
            row.sort()
        self.n_stages = 1 + max(a.stage for a in self.by_action)

    def deps(self, a: Action) -> list[Action]:
        return [d for d in inputs(a, self.n_stages, lambda x: x in self.by_action) if d in self.by_action]


def _stats(stage: int, kind: str, xs: Sequence[float]) -> KindStats:
    return KindStats(stage, kind, len(xs), statistics.fmean(xs), statistics.median(xs),
                     statistics.pstdev(xs) if len(xs) > 1 else 0.0, min(xs), max(xs))


class _Gaps(NamedTuple):
    local: list[float]  # gap after the rank's previous end; no input from another rank
    pickup: list[float]  # gap after the rank's previous end; an input from another rank arrived earlier
    data_bound: list[float]  # delay after the end of a remote input the rank was waiting for


def _gap_samples(obs: _Obs, latency_guess: float) -> _Gaps:
    """Classify the gap before every action (see the module doc)."""
    gaps = _Gaps([], [], [])
    for r, row in enumerate(obs.rank_spans):
        prev_end = float("-inf")
        for start, _end, a in row:
            remote = [obs.by_action[d] for d in obs.deps(a) if obs.by_action[d][0] != r]
            waited = [dend for _, _, dend in remote if dend >= prev_end]
            if waited:
                gaps.data_bound.append(start - max(waited))
            elif prev_end > float("-inf") and not remote:
                gaps.local.append(start - prev_end)
            elif prev_end > float("-inf") and all(dend + latency_guess <= prev_end for _, _, dend in remote):
                gaps.pickup.append(start - prev_end)
            prev_end = max(prev_end, _end)
    return gaps


def _fit_gaps(obs: _Obs) -> tuple[_Gaps, list[float]]:
    """The classified gaps (with a latency guess from a first pass) and the overhead samples.

    The overhead samples are the local gaps; a step without any (every action needs a
    remote input) falls back on the pickup gaps, with no pickup left over.
    """
    first = _gap_samples(obs, 0.0)
    guess = max(0.0, statistics.median(first.data_bound)) if first.data_bound else 0.0
    gaps = _gap_samples(obs, guess)
    return gaps, (gaps.local or gaps.pickup)


def _early_shares(obs: _Obs, latency: float) -> dict[tuple[int, str], float]:
    """Per (stage, kind) with an input from another rank: the share of its actions whose message came early.

    A message came early when every remote input of the action ended at least ``latency``
    before its rank's previous action ended (the message waited for the rank). A rank's
    first action never counts as early: :func:`~bubblekit.simulate` already charges its wait.
    """
    per: dict[tuple[int, str], list[bool]] = defaultdict(list)
    for r, row in enumerate(obs.rank_spans):
        prev_end: float | None = None
        for _start, end, a in row:
            remote = [obs.by_action[d][2] for d in obs.deps(a) if obs.by_action[d][0] != r]
            if remote:
                per[(a.stage, a.kind)].append(prev_end is not None and all(e + latency <= prev_end for e in remote))
            prev_end = end if prev_end is None else max(prev_end, end)
    return {key: sum(xs) / len(xs) for key, xs in sorted(per.items())}


def _median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


#: How :func:`calibrate` summarises a list of gaps.
_STATISTICS: dict[str, Callable[[Sequence[float]], float]] = {"median": _median, "mean": statistics.fmean}


def calibrate(
    timeline: Timeline, schedule: Schedule | None = None, *, statistic: str = "median"
) -> tuple[Costs, CalibrationReport]:
    """Measure per-stage durations, per-action overhead, per-hop latency and the pickup from one step.

    Args:
        timeline: one measured step (e.g. :func:`bubblekit.analysis.traces.read_trace`), spans
            labelled with actions.
        schedule: the schedule that ran; only its stage count is used (default: the
            timeline's own, largest stage + 1).
        statistic: how the gaps are summarised: ``"median"`` (default: the typical gap; a
            few stalls do not move it) or ``"mean"`` (stalls included, spread over every
            action: see the module doc for why that overcharges). Durations are always
            means (the simulated busy time then equals the measured one).

    Returns ``(costs, report)``: ``costs`` per stage (``f``, ``b``, ``i``, ``w`` each =
    mean duration + overhead; a kind never seen on a stage is derived: ``b = i + w`` or
    ``i = w = b / 2``), ``comm`` = latency, unit = the timeline's unit; ``extra`` holds the
    ``overhead`` and the ``pickup``. The costs leave the pickup out (they stay usable for
    other schedules and m); :func:`calibrated_simulation` adds the per-stage pickups of
    ``report.pickup_shares`` for the measured run.

    Used in lesson 06.
    """
    if not isinstance(timeline, Timeline):
        raise TypeError(f"timeline must be a bubblekit Timeline, got {type(timeline).__name__}")
    if statistic not in _STATISTICS:
        raise ValueError(f"statistic must be 'median' or 'mean', got {statistic!r}")
    obs = _Obs(timeline)
    n_stages = obs.n_stages
    if schedule is not None:
        if not isinstance(schedule, Schedule):
            raise TypeError(f"schedule must be a bubblekit Schedule or None, got {type(schedule).__name__}")
        if schedule.n_stages < n_stages:
            raise ValueError(
                f"the timeline has stages up to {n_stages - 1} but the schedule has only {schedule.n_stages}"
            )
        n_stages = schedule.n_stages
    notes: list[str] = []
    per: dict[tuple[int, str], list[float]] = defaultdict(list)
    for a, (_, s, e) in obs.by_action.items():
        per[(a.stage, a.kind)].append(e - s)
    durations = {key: _stats(key[0], key[1], xs) for key, xs in per.items()}
    gaps, rb = _fit_gaps(obs)
    db = gaps.data_bound
    pk = gaps.pickup if gaps.local else []
    both: dict[str, tuple[float, float, float]] = {}
    for name, fn in _STATISTICS.items():
        oh = max(0.0, fn(rb)) if rb else 0.0
        both[name] = (oh, max(0.0, fn(db) - oh) if db else 0.0, max(0.0, fn(pk) - oh) if pk else 0.0)
    overhead, latency, pickup = both[statistic]
    if not rb:
        notes.append(tr("calibrate.note.no_overhead"))
    elif not gaps.local:
        notes.append(tr("calibrate.note.all_remote"))
    if not db:
        notes.append(tr("calibrate.note.no_latency"))

    def mean(stage: int, kind: str) -> float | None:
        st = durations.get((stage, kind))
        return st.mean if st is not None else None

    f: list[float] = []
    b: list[float] = []
    i: list[float] = []
    w: list[float] = []
    for s in range(n_stages):
        fs = mean(s, "F")
        if fs is None:
            raise ValueError(f"stage {s} has no forward (F) in the timeline: cannot calibrate it")
        bs, is_, ws = mean(s, "B"), mean(s, "I"), mean(s, "W")
        if bs is None and (is_ is None or ws is None):
            raise ValueError(f"stage {s} has neither B nor both I and W in the timeline: cannot calibrate it")
        if bs is None:
            bs = float(is_) + float(ws)  # type: ignore[arg-type]
        if is_ is None or ws is None:
            is_ = ws = bs / 2
        f.append(fs + overhead)
        b.append(bs + overhead)
        i.append(is_ + overhead)
        w.append(ws + overhead)
    shares = {key: pickup * x for key, x in _early_shares(obs, latency).items()} if pk else {}
    costs = Costs(f=tuple(f), b=tuple(b), i=tuple(i), w=tuple(w), comm=latency, unit=timeline.unit,
                  name=tr("calibrate.costs_name", source=timeline.source or tr("calibrate.a_measured_step")),
                  extra={"overhead": overhead, "pickup": pickup})
    (oh_med, lat_med, pk_med), (oh_mean, lat_mean, pk_mean) = both["median"], both["mean"]
    report = CalibrationReport(durations, overhead, len(rb), latency, len(db), costs, unit=timeline.unit, notes=notes,
                               statistic=statistic, overhead_median=oh_med, overhead_mean=oh_mean,
                               latency_median=lat_med, latency_mean=lat_mean, pickup=pickup,
                               pickup_samples=len(pk), pickup_median=pk_med, pickup_mean=pk_mean,
                               pickup_shares=shares, overhead_gaps=tuple(rb), latency_delays=tuple(db),
                               pickup_gaps=tuple(pk))
    return costs, report


def _compute_only(sim: Timeline, orders: Sequence[Sequence[Action]], overhead: float, source: str) -> Timeline:
    starts, ends, labels = [], [], []
    for r in range(sim.p):
        s, e, _ = sim.arrays(r)
        starts.append([x + overhead for x in s])
        ends.append(list(e))
        labels.append(list(orders[r]))
    return Timeline(starts, ends, labels, unit=sim.unit, source=source)


def _with_pickup(costs: Costs, schedule: Schedule, shares: dict[tuple[int, str], float]) -> Costs:
    """``costs`` with each stage's pickup share added to its cost of that kind."""
    rc = costs.resolve(schedule.n_stages, schedule.v)
    fields = {k: tuple(float(x) + shares.get((s, k.upper()), 0.0) for s, x in enumerate(getattr(rc, k)))
              for k in ("f", "b", "i", "w")}
    return costs.with_(**fields)


def calibrated_simulation(
    timeline: Timeline, schedule: Schedule, costs: Costs | None = None, report: CalibrationReport | None = None
) -> Timeline:
    """Simulate ``schedule`` with the costs calibrated from ``timeline``; return compute-only spans.

    Each simulated slot is the overhead, the stage's pickup share for that kind
    (``report.pickup_shares``; 0 when the step has no pickup) and then the action's mean
    duration; the returned timeline keeps only the action part (the slot's end minus the
    mean duration), like the measurement, so their bubble ratios compare directly. It is
    :func:`bubblekit.simulate` with ``costs`` plus the shares. ``costs`` / ``report``
    reuse an earlier :func:`calibrate`.

    The shares explain the measured run: they are specific to its schedule and m (see
    the module doc). To simulate another schedule from a calibration, simulate
    ``costs`` itself, or use :func:`jitter_simulation`, whose per-action pickup rule
    transfers.
    """
    if costs is None or report is None:
        costs, report = calibrate(timeline, schedule)
    if not report.pickup_shares or not any(report.pickup_shares.values()):
        sim = simulate(schedule, costs)
        return _compute_only(sim, schedule.orders, report.overhead, "calibrated simulation")
    rc = costs.resolve(schedule.n_stages, schedule.v)
    overhead = report.overhead
    sim = simulate(schedule, _with_pickup(costs, schedule, report.pickup_shares))
    starts, ends = [], []
    for r, order in enumerate(schedule.orders):
        e = [float(x) for x in sim.arrays(r)[1]]
        ends.append(e)
        starts.append([x - (float(rc.time(a)) - overhead) for x, a in zip(e, order)])  # any kind, pairs too
    return Timeline(starts, ends, [list(o) for o in schedule.orders], unit=timeline.unit,
                    source="calibrated simulation")


class _GapTiming:
    """Calibration's timing rule, a hook for the simulator's engine (:func:`~bubblekit.simulator.run_orders`).

    An action starts at the later of (the latest of its rank's previous end and its inputs
    made on the same rank) + one ``local_gap()``, and each input from another rank's end +
    one ``remote_gap()``; it lasts ``duration(action)``. With ``early`` a remote input that
    ended at least ``early`` before the rank was free arrived while the rank was busy: it
    adds no delay of its own, and the gap after the rank's previous end is one
    ``pickup_gap()`` (when given) instead of ``local_gap()``. An action with no input at
    all starts at 0. The gaps and durations may be drawn at random: the engine calls the
    rule once per action, always in the same order.
    """

    def __init__(
        self,
        duration: Callable[[Action], float],
        local_gap: Callable[[], float],
        remote_gap: Callable[[], float],
        *,
        early: float | None = None,
        pickup_gap: Callable[[], float] | None = None,
    ) -> None:
        self.duration, self.local_gap, self.remote_gap = duration, local_gap, remote_gap
        self.early, self.pickup_gap = early, pickup_gap

    def __call__(self, rank: int, action: Action, free: Number | None, arrivals: list[Arrival]) -> tuple[float, float]:
        local = [float(a.end) for a in arrivals if a.rank == rank]
        if free is not None:
            local.append(float(free))
        free_at = max(local) if local else float("-inf")
        remote = [float(a.end) for a in arrivals if a.rank != rank]
        waited = [e for e in remote if self.early is None or e + self.early > free_at]
        gap = self.pickup_gap if self.pickup_gap is not None and len(waited) < len(remote) else self.local_gap
        candidates = [free_at + gap()] if local else []
        candidates += [e + self.remote_gap() for e in waited]
        start = max(candidates, default=0.0)
        return start, start + self.duration(action)


def _run(orders: Sequence[Sequence[Action]], n_stages: int, timing: _GapTiming) -> tuple[list[list[float]], list[list[float]]]:
    """Starts and ends of ``orders`` under ``timing``, by the simulator's engine (inputs no
    action of the step makes, e.g. of actions missing from a trace, count as there)."""
    run = run_orders(orders, n_stages, timing, missing_inputs="given")
    return run.starts, run.ends  # type: ignore[return-value]


def replay(timeline: Timeline, schedule: Schedule | None = None, *, overhead: float = 0.0,
           latency: float = 0.0, pickup: float = 0.0) -> Timeline:
    """Re-run the measured step's orders with every action's *own* measured duration.

    Starts follow the calibrated simulation's rules (a rank's previous action, each input
    plus ``latency`` when it comes from another rank, then ``overhead``; ``pickup`` more
    when an input from another rank arrived while the rank was busy), so the difference to
    the calibrated simulation is the effect of stragglers and jitter, and the difference
    to the measurement is variable overhead and latency. Returns compute-only spans.
    ``overhead``, ``latency`` and ``pickup`` are finite numbers in the timeline's unit.
    """
    _check_measured(timeline, schedule)
    overhead, latency, pickup = (float(check_number(n, x, minimum=float("-inf"))) for n, x in
                                 (("overhead", overhead), ("latency", latency), ("pickup", pickup)))
    obs = _Obs(timeline)
    orders = schedule.orders if schedule is not None else tuple(tuple(a for _, _, a in row) for row in obs.rank_spans)
    missing = [a for order in orders for a in order if a not in obs.by_action]
    if missing:
        raise ValueError(f"the schedule has actions the timeline lacks, e.g. {missing[0]}: replay needs the same step")
    timing = _GapTiming(lambda a: obs.by_action[a][2] - obs.by_action[a][1], lambda: overhead,
                        lambda: latency + overhead, early=latency, pickup_gap=lambda: overhead + pickup)
    starts, ends = _run(orders, obs.n_stages, timing)
    return Timeline(starts, ends, [list(o) for o in orders], unit=timeline.unit, source="replay of measured durations")


#: ``jitter_simulation``'s size guard: at most this many draws, and draws x actions at most
#: :data:`MAX_JITTER_ACTIONS`. Each draw simulates every action once, in Python: 10,000 draws of
#: a 16-action step (160,000 actions) took 7.7 s on the course's loaded 2-core container, so the
#: limit is under a minute there, and 30 draws (the default) of a 30,000-action step still fit.
MAX_DRAWS = 100_000
MAX_JITTER_ACTIONS = 1_000_000


def _check_measured(timeline: Any, schedule: Any) -> None:
    """``TypeError`` naming the argument unless ``timeline`` is a Timeline and ``schedule`` a Schedule or None."""
    if not isinstance(timeline, Timeline):
        raise TypeError(f"timeline must be a bubblekit Timeline (a measured step, e.g. from "
                        f"bubblekit.analysis.traces.read_trace), got {timeline!r} of type {type(timeline).__name__}")
    if schedule is not None and not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule (e.g. bk.schedule('1f1b', 2, 4)) or None, got "
                        f"{schedule!r} of type {type(schedule).__name__}")


class JitterResult(NamedTuple):
    """A stochastic calibrated simulation: ``bubble_ratio`` is the mean over ``bubble_ratios``
    (one per draw); ``timeline`` is the draw with the median bubble (compute-only spans)."""

    bubble_ratio: float
    bubble_ratios: list[float]
    timeline: Timeline


def jitter_simulation(
    timeline: Timeline, schedule: Schedule | None = None, *, draws: int = 30, seed: int = 0
) -> JitterResult:
    """Simulate ``schedule`` with durations, overheads and hop delays *drawn* from the measured ones.

    Where :func:`calibrated_simulation` uses one mean per stage and kind, this draws every
    action's duration from the durations measured for its stage and kind, every gap after
    a rank's own previous action from the measured overhead gaps (from the measured pickup
    gaps when an input from another rank arrived while the rank was busy), and every hop
    the rank waits for from the measured remote delays (latency + overhead), ``draws``
    times with a fixed ``seed``. It
    models stragglers and jitter statistically, which a mean cannot: when actions wait on
    each other, random delays add up (``E[max] >= max E``).
    """
    _check_measured(timeline, schedule)
    try:
        draws = check_int("draws", draws, minimum=1, maximum=MAX_DRAWS)
    except TypeError as exc:
        raise ValueError(str(exc)) from None  # a ValueError, as before numpy ints were accepted
    seed = check_int("seed", seed, minimum=0)
    n_actions = sum(len(o) for o in schedule.orders) if schedule is not None else timeline.n_spans
    if draws * n_actions > MAX_JITTER_ACTIONS:
        raise ValueError(f"draws={draws} x {n_actions} actions = {draws * n_actions:,} simulated actions, more than "
                         f"the limit of {MAX_JITTER_ACTIONS:,} (each draw simulates every action once; 30 draws are the "
                         f"default); use draws <= "
                         f"{max(1, MAX_JITTER_ACTIONS // max(1, n_actions))}")
    obs = _Obs(timeline)
    orders = schedule.orders if schedule is not None else tuple(tuple(a for _, _, a in row) for row in obs.rank_spans)
    gaps, rb = _fit_gaps(obs)
    local_pool = [max(0.0, x) for x in rb] or [0.0]
    pickup_pool = [max(0.0, x) for x in gaps.pickup] if gaps.local and gaps.pickup else local_pool
    remote_pool = [max(0.0, x) for x in gaps.data_bound] or local_pool
    pools: dict[tuple[int, str], list[float]] = defaultdict(list)
    for a, (_, s0, e0) in obs.by_action.items():
        pools[(a.stage, a.kind)].append(e0 - s0)
    for a in (a for order in orders for a in order):
        if (a.stage, a.kind) not in pools:
            if a.kind == "B" and pools.get((a.stage, "I")) and pools.get((a.stage, "W")):
                pools[(a.stage, "B")] = [i + w for i, w in zip(pools[(a.stage, "I")], pools[(a.stage, "W")])]
            elif a.kind in ("I", "W") and pools.get((a.stage, "B")):
                pools[(a.stage, a.kind)] = [b / 2 for b in pools[(a.stage, "B")]]
            else:
                raise ValueError(f"no measured duration for {a.kind} on stage {a.stage}: cannot simulate {a}")
    rnd = random.Random(seed)
    results: list[tuple[float, Timeline]] = []
    for _ in range(draws):
        timing = _GapTiming(lambda a: rnd.choice(pools[(a.stage, a.kind)]), lambda: rnd.choice(local_pool),
                            lambda: rnd.choice(remote_pool), early=statistics.median(remote_pool),
                            pickup_gap=lambda: rnd.choice(pickup_pool))
        starts, ends = _run(orders, obs.n_stages, timing)
        tl = Timeline(starts, ends, [list(o) for o in orders], unit=timeline.unit,
                      source="calibrated simulation with measured jitter")
        results.append((tl.bubble_ratio, tl))
    ratios = [b for b, _ in results]
    median_tl = sorted(results, key=lambda x: x[0])[(len(results) - 1) // 2][1]
    return JitterResult(statistics.fmean(ratios), ratios, median_tl)


class Row(NamedTuple):
    """One line of a :class:`Comparison`: ``key`` (short name), label, bubble ratio, makespan, why."""

    key: str
    label: str
    bubble_ratio: float
    makespan: float | None
    explanation: str


#: The rows of :func:`compare_measured` that each add one measured effect, in order.
LADDER: tuple[str, ...] = ("durations", "overhead", "latency", "calibrated")


@dataclass
class Comparison:
    """Measured bubble vs formula vs simulations, each step adding one real-world effect.

    ``rows``: :class:`Row` s with keys ``formula``, ``textbook``, ``durations``, ``overhead``,
    ``latency``, ``calibrated`` (+ the pickup), ``jitter``, ``replay`` (when the orders
    match) and ``measured``; ``timelines``: the timelines behind the rows (for plots);
    ``order_matches``: whether the executed per-rank orders equal the schedule's;
    ``order_differences``: the first few differing ranks. Renders itself as a table
    (:meth:`to_table`: HTML in JupyterLab, text elsewhere).
    """

    schedule: Schedule
    rows: list[Row]
    timelines: dict[str, Timeline]
    costs: Costs
    report: CalibrationReport
    order_matches: bool
    order_differences: list[str]
    unit: str = "ms"

    @property
    def measured(self) -> float:
        """Measured bubble ratio (idle / (ranks x makespan))."""
        return self._get("measured")

    @property
    def formula(self) -> float:
        """The closed form ``(p - 1) / (m v + p - 1)``."""
        return self._get("formula")

    @property
    def calibrated(self) -> float:
        """The calibrated simulation's bubble ratio (mean durations, typical gaps, the pickup)."""
        return self._get("calibrated")

    @property
    def jitter(self) -> float:
        """The calibrated simulation with measured jitter: mean bubble ratio over the draws."""
        return self._get("jitter")

    def row(self, key: str) -> Row:
        """The row with this ``key`` (KeyError naming the keys there are)."""
        for row in self.rows:
            if row.key == key:
                return row
        raise KeyError(f"no row {key!r}; rows are {[r.key for r in self.rows]}")

    def _get(self, key: str) -> float:
        return self.row(key).bubble_ratio

    def as_dict(self) -> dict[str, Any]:
        """``{key: bubble_ratio}`` plus ``order_matches``, for tests and notebooks. Used in lesson 06."""
        out: dict[str, Any] = {row.key: row.bubble_ratio for row in self.rows}
        out["order_matches"] = self.order_matches
        return out

    def distances(self, keys: Sequence[str] = LADDER) -> list[float]:
        """``|bubble_ratio - measured|`` for each row of ``keys`` (default the :data:`LADDER`), in order.

        Non-increasing when every added effect moves the simulation toward the measurement.
        Used in lesson 06.
        """
        return [abs(self._get(k) - self.measured) for k in keys]

    def to_table(self, keys: Sequence[str] | None = None) -> Table:
        """The rows as a :class:`~bubblekit.text.Table` (all rows, or those of ``keys`` in that order).

        Columns: the model, its bubble ratio (idle / (ranks x makespan), the article's b),
        the difference to the measurement in percentage points, the makespan (in the
        timeline's unit; none for the formula) and what the row adds. Used in lesson 06.
        """
        chosen = self.rows if keys is None else [self.row(k) for k in keys]
        rows = [{"model": r.label, "bubble_ratio": r.bubble_ratio, "vs measured": r.bubble_ratio - self.measured,
                 "makespan": r.makespan, "what it adds": r.explanation} for r in chosen]
        note = tr("calibrate.table.note")
        if not self.order_matches:
            note += tr("calibrate.table.order", diffs="; ".join(self.order_differences))
        return Table(rows, formats={"bubble_ratio": "ratio", "vs measured": lambda x: f"{100 * x:+.1f}",
                                    "makespan": "float1"},
                     headers={"model": tr("calibrate.table.model"), "vs measured": tr("calibrate.table.vs"),
                              "makespan": tr("calibrate.table.makespan", u=self.unit),
                              "what it adds": tr("calibrate.table.adds")}, note=note)

    def table(self) -> str:
        """The comparison as aligned text (:meth:`to_table`). Used in lesson 06 and by ``bubblekit.lab``."""
        return self.to_table().to_text()

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        return self.to_table()._repr_html_()


def _order_diffs(executed: Sequence[Sequence[Action]], expected: Sequence[Sequence[Action]]) -> list[str]:
    out = []
    for r, (a, b) in enumerate(zip(executed, expected)):
        if tuple(a) != tuple(b):
            k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            got = str(a[k]) if k < len(a) else tr("calibrate.diff.end")
            want = str(b[k]) if k < len(b) else tr("calibrate.diff.end")
            out.append(tr("calibrate.diff.position", r=r, k=k, got=got, want=want))
    if len(executed) != len(expected):
        out.append(tr("calibrate.diff.ranks", ran=len(executed), has=len(expected)))
    return out


def compare_measured(
    timeline: Timeline,
    schedule: str | Schedule | None = None,
    p: int | None = None,
    m: int | None = None,
    v: int | None = None,
    *,
    statistic: str = "median",
    draws: int = 30,
    seed: int = 0,
) -> Comparison:
    """Put a measured step next to the formula and the simulator.

    Args:
        timeline: one measured step (ms), spans labelled with actions.
        schedule: a registry name (``"1f1b"``), a :class:`Schedule`, or ``None`` for the
            executed orders themselves.
        p, m, v: for a name: ranks (default: the timeline's), microbatches (default: the
            largest microbatch seen + 1) and chunks per rank (default: stages / ranks).
        statistic: how overhead, latency and pickup are summarised (see :func:`calibrate`;
            the median by default).
        draws, seed: for the jitter row (:func:`jitter_simulation`).

    Rows (keys in brackets), each adding one effect: the formula [formula]; the simulator
    with textbook costs, F = 1 and B = 2 slots [textbook]; with the measured mean durations
    per stage and kind [durations]; plus the overhead [overhead]; plus the latency
    [latency]; plus the pickup, charged per stage (= the calibrated simulation, see
    :func:`calibrated_simulation`; the explanation lists the charge per stage and kind,
    e.g. ``1F 3.254`` ms before every forward of stage 1) [calibrated]; with durations and
    gaps drawn from the measured ones (jitter, stalls: a statistical model) [jitter]; a
    replay with each action's own duration (this step's stragglers) [replay]; the
    measurement [measured]. The rows of :data:`LADDER` are the ones each adding one
    measured effect.

    Used in lesson 06.
    """
    obs = _Obs(timeline)
    executed = tuple(tuple(a for _, _, a in row) for row in obs.rank_spans)
    if schedule is None or isinstance(schedule, str):
        pp = timeline.p if p is None else p
        mm = 1 + max(a.microbatch for a in obs.by_action) if m is None else m
        vv = max(1, obs.n_stages // pp) if v is None else v
        if schedule is None:
            placement = [0] * obs.n_stages
            for a, (r, _, _) in obs.by_action.items():
                placement[a.stage] = r
            sched = Schedule("measured", pp, mm, tuple(placement), executed, source=timeline.source)
        else:
            sched = build_schedule(schedule, pp, mm, vv if vv > 1 else None)
    elif isinstance(schedule, Schedule):
        sched = schedule
    else:
        raise TypeError(f"schedule must be a name, a bubblekit Schedule or None, got {type(schedule).__name__}")
    if sched.has_pairs and not any(a.kind == "F&B" for a in obs.by_action):
        # the runtime ran each overlapped pair as its two parts (PyTorch's default): compare like with like
        sched = sched.split_pairs()
    if sched.p != timeline.p:
        raise ValueError(f"the schedule has p={sched.p} ranks but the timeline has {timeline.p}")
    costs, report = calibrate(timeline, sched, statistic=statistic)
    oh, lat, pk = report.overhead, report.latency, report.pickup
    diffs = _order_diffs(executed, sched.orders)
    p_, m_, v_ = sched.p, sched.m, sched.v
    rows: list[Row] = []
    tls: dict[str, Timeline] = {"measured": timeline}
    u = timeline.unit
    rows.append(Row("formula", tr("calibrate.row.formula", p=p_, m=m_, v=v_), formula_bubble_ratio(p_, m_, v_), None,
                    tr("calibrate.why.formula")))
    text = simulate(sched, Costs(f=1, b=2))
    rows.append(Row("textbook", tr("calibrate.row.textbook"), text.bubble_ratio, None, tr("calibrate.why.textbook")))
    durations_only = costs.with_(
        f=tuple(x - oh for x in costs.f), b=tuple(x - oh for x in costs.b),  # type: ignore[union-attr]
        i=tuple(x - oh for x in costs.i), w=tuple(x - oh for x in costs.w), comm=0,  # type: ignore[union-attr]
    )
    sim_d = simulate(sched, durations_only)
    tls["durations"] = sim_d
    rows.append(Row("durations", tr("calibrate.row.durations"), sim_d.bubble_ratio, float(sim_d.makespan),
                    tr("calibrate.why.durations")))
    sim_o = _compute_only(simulate(sched, costs.with_(comm=0)), sched.orders, oh, "durations + overhead")
    tls["overhead"] = sim_o
    rows.append(Row("overhead", tr("calibrate.row.overhead", x=oh, u=u), sim_o.bubble_ratio, float(sim_o.makespan),
                    tr("calibrate.why.overhead", stat=tr(f"calibrate.stat.{report.statistic}"))))
    sim_l = _compute_only(simulate(sched, costs), sched.orders, oh, "durations + overhead + latency")
    tls["latency"] = sim_l
    rows.append(Row("latency", tr("calibrate.row.latency", x=lat, u=u), sim_l.bubble_ratio, float(sim_l.makespan),
                    tr("calibrate.why.latency")))
    sim_c = calibrated_simulation(timeline, sched, costs, report)
    tls["calibrated"] = sim_c
    shares = {k: x for k, x in report.pickup_shares.items() if x}
    what = ", ".join(f"{s}{k} {x:.3f}" for (s, k), x in sorted(shares.items())) if shares else tr("calibrate.none")
    rows.append(Row("calibrated", tr("calibrate.row.calibrated", x=pk, u=u), sim_c.bubble_ratio, float(sim_c.makespan),
                    tr("calibrate.why.calibrated", what=what)))
    jit = jitter_simulation(timeline, sched, draws=draws, seed=seed)
    tls["jitter"] = jit.timeline
    rows.append(Row("jitter", tr("calibrate.row.jitter", draws=draws), jit.bubble_ratio,
                    float(jit.timeline.makespan), tr("calibrate.why.jitter")))
    if not diffs:
        rep = replay(timeline, sched, overhead=oh, latency=lat, pickup=pk)
        tls["replay"] = rep
        rows.append(Row("replay", tr("calibrate.row.replay"), rep.bubble_ratio, float(rep.makespan),
                        tr("calibrate.why.replay")))
    rows.append(Row("measured", tr("calibrate.row.measured"), timeline.bubble_ratio, float(timeline.makespan),
                    tr("calibrate.why.measured")))
    return Comparison(sched, rows, tls, costs, report, not diffs, diffs[:4], unit=timeline.unit)


def predict(costs: Costs, schedule: str, p: int, ms: Sequence[int], *, v: int | None = None) -> Table:
    """The article's benchmark, simulated: one row per ``m`` under the same (calibrated) costs.

    "Fix the model and the rank count, double m and watch the throughput": with costs
    measured from one profile (:func:`calibrate`; or any :class:`~bubblekit.Costs`) this
    asks the simulator instead of rerunning the job.

    Args:
        costs: the costs to simulate with (their per-stage tuples must fit the schedule's stages).
        schedule: a registry name (``"1f1b"``, ``"gpipe"``, ``"interleaved"``, ...).
        p: ranks (int >= 1).
        ms: microbatch counts (ints >= 1), e.g. ``[2, 4, 8, 16]``.
        v: chunks per rank, for schedules that take several.

    Returns a :class:`~bubblekit.text.Table` with columns ``m``, ``makespan`` (the costs'
    unit), ``per_microbatch`` (makespan / m), ``throughput`` (microbatches per second when
    the unit is ms, else per 1000 units), ``bubble_ratio`` (idle / (p x makespan)) and
    ``formula`` (the closed form for equal stages, where one holds). Used in lesson 06.
    """
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs (e.g. from calibrate), got {type(costs).__name__}")
    if not isinstance(schedule, str):
        raise TypeError(f"schedule must be a registry name such as '1f1b', got {schedule!r}")
    entry = spec(schedule)
    p = check_int("p", p)
    if isinstance(ms, (str, bytes)) or not isinstance(ms, Sequence) or not ms:
        raise ValueError(f"ms must be a non-empty list of microbatch counts, got {ms!r}")
    m_list = [check_int(f"ms[{k}]", m) for k, m in enumerate(ms)]
    rows: list[dict[str, Any]] = []
    for m in m_list:
        sched = build_schedule(schedule, p, m, v)
        res = simulate(sched, costs)
        span = float(res.makespan)
        closed = entry.closed_form(sched.p, sched.m, sched.v)
        rows.append({"m": m, "makespan": span, "per_microbatch": span / m, "throughput": 1000.0 * m / span,
                     "bubble_ratio": res.bubble_ratio, "formula": None if closed is None else float(closed[0])})
    u = costs.unit
    rate = tr("calibrate.predict.per_s") if u == "ms" else tr("calibrate.predict.per_1000", u=u)
    return Table(rows, formats={"makespan": "float1", "per_microbatch": "float2", "throughput": "float2",
                                "bubble_ratio": "percent", "formula": "percent"},
                 headers={"makespan": tr("calibrate.table.makespan", u=u), "per_microbatch": tr("calibrate.predict.per_mb", u=u),
                          "throughput": rate, "formula": tr("calibrate.predict.formula")},
                 title=tr("calibrate.predict.title" if costs.name else "calibrate.predict.title_given",
                          name=entry.display_name, p=p, costs=costs.name),
                 note=tr("calibrate.predict.note"))
