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

Which statistic (``statistic=``; the default, ``"per-kind"``, was chosen by measurement:
``benchmarks/bench_calibration.py`` calibrates real lab runs and the shipped samples with
each one and prints how far each lands from the measured bubble):

* ``"median"``: every gap summarised by its median (the typical gap). A few stalls do not
  move it, which is right on the shipped samples (a handful of 20 ms stalls among
  sub-millisecond gaps) and wrong on small models run on a busy 2-core machine, where the
  "stalls" are most of the bubble: there it lands 10 to 25 points below the measurement.
* ``"mean"``: the mean gap (stalls included), spread over every action of every stage: it
  overcharges when a few long stalls sit among many short gaps (the simulator charges the
  overhead to every action, in series along the critical path).
* ``"trimmed"``: the mean of the middle 60% of each kind of gap (a trimmed mean).
* ``"per-kind"``: stalls as their own term, charged where they happened. Every action is
  charged the typical (median) overhead and every hop the typical (median) latency; each
  (stage, kind) is charged, per action, the mean of its *own* gaps beyond those (the
  pickups and the stalls measured before that stage's actions of that kind, and a hop's
  delay beyond the typical one). A stall thus costs its rank its measured length once,
  where it happened, not a share on every action of every stage.

:func:`calibrate` returns a :class:`~bubblekit.Costs` (unit ms; each action's cost is its
mean duration plus the overhead) and a :class:`CalibrationReport`;
:func:`calibrated_simulation` simulates with them and returns the compute-only spans, so
its bubble ratio compares directly with the measurement; :func:`compare_measured` puts
measurement, formula and the simulations side by side.

How the pickup (and, with ``"per-kind"``, the stalls) enters the calibrated simulation:
whether a message arrives while its receiver is busy depends on sub-millisecond
differences between stages, so a simulation with mean durations cannot decide it reliably
action by action. Instead each (stage, kind) is charged a per-action share
(:attr:`CalibrationReport.pickup_shares`): with ``"median"``, ``"mean"`` and ``"trimmed"``
the pickup times the share of its actions whose message did arrive early; with
``"per-kind"`` the mean of its own extra gaps. The share is added to that stage's cost and
:func:`~bubblekit.simulate` runs as usual. The shares are rates per action of a stage and
kind, so they carry over to the same schedule at another m (the benchmark measures how
well); they do not carry over to another schedule, where other stages receive early. What
transfers there is the rule itself, which :func:`jitter_simulation` and :func:`replay` apply
per action: the pickup is paid only when a message arrived early.

Used in lesson 06.
"""

from __future__ import annotations

import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
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
from bubblekit.text import Table, joined
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
    "STATISTICS",
    "DEFAULT_STATISTIC",
    "BenchmarkCase",
    "CalibrationBenchmark",
    "benchmark",
    "calibration_gaps",
    "prediction_gaps",
    "load_benchmark",
    "benchmark_overview",
    "best_statistic",
    "SHIPPED_BENCHMARKS",
    "benchmark_from_data",
    "shipped_sample_cases",
    "step_record",
]

register({
    # the calibration's report, gap table and comparison ladder (lesson 06); row keys and column keys stay English
    "calibrate.stat.median": {"en": "median", "zh": "中位数"},
    "calibrate.stat.mean": {"en": "mean", "zh": "均值"},
    "calibrate.stat.trimmed": {"en": "trimmed mean", "zh": "截尾均值"},
    "calibrate.stat.per-kind": {"en": "per-kind model", "zh": "逐类型模型"},
    "calibrate.gaps.between": {"en": "between actions (overhead)", "zh": "动作之间（开销）"},
    "calibrate.gaps.remote": {"en": "after a remote input (latency + overhead)", "zh": "等其他 rank 的输入（延迟 + 开销）"},
    "calibrate.gaps.early": {"en": "after an early message (pickup + overhead)", "zh": "rank 忙时消息已到达（接收滞后 + 开销）"},
    "calibrate.gaps.gap": {"en": "gap", "zh": "间隙"},
    "calibrate.gaps.samples": {"en": "samples", "zh": "样本数"},
    "calibrate.gaps.median": {"en": "median ({u})", "zh": "中位数（{u}）"},
    "calibrate.gaps.mean": {"en": "mean ({u})", "zh": "均值（{u}）"},
    "calibrate.gaps.used": {"en": "{stat} used ({u})", "zh": "{stat}的取值（{u}）"},
    "calibrate.gaps.note": {"en": "raw gaps; 'used': the overhead per action, the latency and pickup net of the overhead",
                            "zh": "中位数和均值按原始间隙算；“取值”一列里，开销按每个动作计，延迟和接收滞后都已扣掉开销"},
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
                                  "zh": "  rank 忙时到达的消息的接收滞后：{x:.3f} {u}（{n} 个间隙的{stat}减去开销的{stat}；"
                                        "改用{other}为 {alt:.3f}）"},
    "calibrate.describe.shares_own": {"en": "  extra gap charged per action (the mean of each stage and kind's own gaps "
                                            "beyond the typical overhead and hop: pickups and stalls): {shares} {u}",
                                      "zh": "  每个动作计入的额外耗时（各流水级、各类动作自己超出典型开销和典型一跳的间隙的均值，"
                                            "含接收滞后和停顿）：{shares} {u}"},
    "calibrate.describe.shares": {"en": "  pickup charged per action (the pickup x the share of its messages that came early): "
                                        "{shares} {u}",
                                  "zh": "  每个动作计入的接收滞后（接收滞后 x 其消息中提前到达的比例）：{shares} {u}"},
    "calibrate.describe.note": {"en": "  note: {note}", "zh": "  注：{note}"},
    "calibrate.note.no_overhead": {"en": "no gap with all inputs ready: overhead taken as 0",
                                   "zh": "没有输入全部就绪的间隙：开销按 0 计"},
    "calibrate.note.all_remote": {"en": "every action needs an input from another rank: overhead from those gaps, "
                                        "pickup taken as 0",
                                  "zh": "每个动作都需要来自其他 rank 的输入：开销取自这些间隙，接收滞后按 0 计"},
    "calibrate.note.no_latency": {"en": "no action waited for a remote input: latency taken as 0",
                                  "zh": "没有动作等待远端输入：延迟按 0 计"},
    "calibrate.costs_name": {"en": "calibrated from {source}", "zh": "由{source}校准"},
    "calibrate.a_measured_step": {"en": "a measured step", "zh": "一个实测步"},
    "calibrate.row.formula": {"en": "formula (p-1)/(m v+p-1), p={p} m={m} v={v}", "zh": "公式 (p−1)/(m·v+p−1)，p={p} m={m} v={v}"},
    "calibrate.why.formula": {"en": "equal stages, no overhead, no latency (t_f and t_b cancel)",
                              "zh": "各流水级相同，无开销，无延迟（t_f 和 t_b 约掉了）"},
    "calibrate.row.textbook": {"en": "textbook simulation (F=1, B=2 slots)", "zh": "按教科书耗时模拟（F=1、B=2 个时间槽）"},
    "calibrate.why.textbook": {"en": "the schedule's own shape", "zh": "调度本身的形状"},
    "calibrate.row.durations": {"en": "measured durations (mean per stage)", "zh": "实测耗时（每个流水级取均值）"},
    "calibrate.why.durations": {"en": "unequal stages", "zh": "流水级不均衡"},
    "calibrate.row.overhead": {"en": "+ overhead {x:.3f} {u}/action", "zh": "+ 开销 {x:.3f} {u}/动作"},
    "calibrate.why.overhead": {"en": "the {stat} gap between actions whose inputs were ready",
                               "zh": "输入已就绪时相邻动作间隙的{stat}"},
    "calibrate.row.latency": {"en": "+ latency {x:.3f} {u}/hop", "zh": "+ 延迟 {x:.3f} {u}/跳"},
    "calibrate.why.latency": {"en": "the hop between ranks", "zh": "rank 之间的一跳"},
    "calibrate.row.calibrated": {"en": "+ pickup {x:.3f} {u}/early message: calibrated",
                                 "zh": "+ 接收滞后 {x:.3f} {u}/提前到达的消息：校准结果"},
    "calibrate.row.calibrated_own": {"en": "+ each stage's own extra gaps (pickups, stalls): calibrated",
                                     "zh": "+ 各流水级自己的额外耗时（接收滞后、停顿）：校准结果"},
    "calibrate.why.calibrated_own": {"en": "charged per action where they happened ({what})",
                                     "zh": "在发生的位置按动作计入（{what}）"},
    "calibrate.why.calibrated": {"en": "a message that came while its rank was busy (charged per stage: {what})",
                                 "zh": "rank 忙时到达的消息（按流水级计入：{what}）"},
    "calibrate.none": {"en": "none", "zh": "无"},
    "calibrate.row.jitter": {"en": "measured jitter ({draws} draws)", "zh": "实测抖动（抽样 {draws} 次）"},
    "calibrate.why.jitter": {"en": "durations and gaps drawn at random from the measured ones",
                             "zh": "耗时和间隙从实测值中随机抽取"},
    "calibrate.row.replay": {"en": "replay (each action's own duration)", "zh": "回放（每个动作用自己的实测耗时）"},
    "calibrate.why.replay": {"en": "this step's stragglers, with the typical gaps", "zh": "这一步里每个动作自己的实测耗时（拖后腿的动作也照实计入），间隙取典型值"},
    "calibrate.row.measured": {"en": "measured", "zh": "实测"},
    "calibrate.why.measured": {"en": "everything, stalls included", "zh": "全部因素，包括停顿"},
    "calibrate.table.model": {"en": "model", "zh": "计算方式"},
    "calibrate.table.vs": {"en": "vs measured", "zh": "与实测之差"},
    "calibrate.table.makespan": {"en": "makespan ({u})", "zh": "单步耗时（{u}）"},
    "calibrate.table.adds": {"en": "what it adds", "zh": "新加入的因素"},
    "calibrate.table.note": {"en": "bubble_ratio = idle / (ranks x makespan); 'vs measured' in percentage points",
                             "zh": "bubble_ratio（气泡比例）= 空闲 / (rank 数 × 单步耗时)；“与实测之差”的单位是百分点"},
    "calibrate.table.order": {"en": "; executed order differs from the schedule: {diffs}",
                              "zh": "；实际执行顺序与调度不同：{diffs}"},
    "calibrate.diff.position": {"en": "rank {r} position {k}: ran {got}, schedule says {want}",
                                "zh": "rank {r} 第 {k} 个位置：实际执行 {got}，调度为 {want}"},
    "calibrate.diff.end": {"en": "end", "zh": "结束"},
    "calibrate.diff.ranks": {"en": "{ran} ranks ran, the schedule has {has}", "zh": "实际运行了 {ran} 个 rank，调度有 {has} 个"},
    "calibrate.predict.per_s": {"en": "microbatches / s", "zh": "微批 / 秒"},
    "calibrate.predict.per_1000": {"en": "microbatches / 1000 {u}", "zh": "微批 / 1000 {u}"},
    "calibrate.predict.per_mb": {"en": "per microbatch ({u})", "zh": "每微批耗时（{u}）"},
    "calibrate.predict.formula": {"en": "formula (equal stages)", "zh": "公式（各流水级相同）"},
    "calibrate.predict.title": {"en": "{name}, p={p}, simulated with the costs “{costs}”", "zh": "{name}，p={p}，模拟所用耗时：{costs}"},
    "calibrate.predict.title_given": {"en": "{name}, p={p}, simulated with the given costs",
                                      "zh": "{name}，p={p}，按给定的耗时模拟"},
    "calibrate.predict.note": {"en": "bubble_ratio = idle / (p x makespan)", "zh": "bubble_ratio（气泡比例）= 空闲 / (p × 单步耗时)"},
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
            (the median with ``"per-kind"``; else the ``statistic``).
        overhead_samples: how many gaps it is over.
        latency: per-hop latency: (consumer start - producer end) over consumers that were
            waiting for a remote input, minus the overhead (the same statistic).
        latency_samples: how many hops it is over.
        costs: the calibrated :class:`Costs`.
        unit: the time unit.
        notes: remarks (fallbacks used).
        statistic: one of :data:`STATISTICS` (see the module doc).
        overhead_median, overhead_mean, latency_median, latency_mean, pickup_median,
            pickup_mean: both statistics, to show heavy tails (a few long stalls make the
            mean much larger than the median).
        pickup: extra gap, over the overhead, before an action whose input from another
            rank had arrived while the rank was busy (the same statistic; 0 when none).
        pickup_samples: how many such gaps it is over.
        pickup_shares: per (stage, kind), what :func:`calibrated_simulation` adds to each
            of its actions: the pickup times the share of its actions whose message arrived
            while the rank was busy, or with ``"per-kind"`` the mean of its own gaps beyond
            the typical overhead and hop (pickups and stalls; see the module doc).
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
    statistic: str = "per-kind"
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
        own = self.statistic == "per-kind"
        stat = "median" if own else self.statistic
        other = "mean" if stat == "median" else "median"
        alt = {"overhead": self.overhead_mean, "latency": self.latency_mean, "pickup": self.pickup_mean}
        if other == "median":
            alt = {"overhead": self.overhead_median, "latency": self.latency_median, "pickup": self.pickup_median}
        words = {"stat": tr(f"calibrate.stat.{stat}"), "other": tr(f"calibrate.stat.{other}"), "u": u}
        lines.append(tr("calibrate.describe.overhead", x=self.overhead, n=self.overhead_samples, alt=alt["overhead"],
                        **words))
        lines.append(tr("calibrate.describe.latency", x=self.latency, n=self.latency_samples, alt=alt["latency"], **words))
        lines.append(tr("calibrate.describe.pickup", x=self.pickup, n=self.pickup_samples, alt=alt["pickup"], **words))
        shares = joined(f"{s}{k} {x:.3f}" for (s, k), x in sorted(self.pickup_shares.items()))
        if shares:
            lines.append(tr("calibrate.describe.shares_own" if own else "calibrate.describe.shares", shares=shares, u=u))
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


def _own_gap_shares(obs: _Obs, overhead: float, latency: float) -> dict[tuple[int, str], float]:
    """Per (stage, kind): the mean over its actions of its own extra gap (the ``"per-kind"`` charge).

    An action that waited for a remote input (one ended less than ``latency`` before its
    rank's previous action ended) has the extra gap ``start - that input's end - latency -
    overhead``: a hop slower than the typical one. Any other action has ``start - previous
    end - overhead``: a pickup or a stall. Both count at least 0; a rank's first action counts
    0 (:func:`~bubblekit.simulate` already charges its wait). The charges of a rank's
    actions then add up to the extra gap time the rank measured, where it measured it.
    """
    per: dict[tuple[int, str], list[float]] = defaultdict(list)
    for r, row in enumerate(obs.rank_spans):
        prev_end: float | None = None
        for start, end, a in row:
            extra = 0.0  # a rank's first action: simulate() already charges its wait
            if prev_end is not None:
                remote = [obs.by_action[d][2] for d in obs.deps(a) if obs.by_action[d][0] != r]
                waited = [e for e in remote if e + latency > prev_end]
                ready = max(waited) + latency if waited else prev_end
                extra = max(0.0, start - ready - overhead)
            per[(a.stage, a.kind)].append(extra)
            prev_end = end if prev_end is None else max(prev_end, end)
    return {key: statistics.fmean(xs) for key, xs in sorted(per.items())}


def _median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def _trimmed_mean(xs: Sequence[float], cut: float = 0.2) -> float:
    """The mean of ``xs`` without its lowest and highest ``cut`` share (all of ``xs`` when that leaves none)."""
    ordered = sorted(xs)
    k = int(len(ordered) * cut)
    return statistics.fmean(ordered[k:len(ordered) - k] or ordered)


#: How :func:`calibrate` summarises one list of gaps, per summary.
_SUMMARIES: dict[str, Callable[[Sequence[float]], float]] = {"median": _median, "mean": statistics.fmean,
                                                             "trimmed": _trimmed_mean}

#: The statistics :func:`calibrate` offers (see the module doc); ``benchmarks/bench_calibration.py``
#: compares them on real runs. Used in lesson 06.
STATISTICS: tuple[str, ...] = ("per-kind", "median", "mean", "trimmed")

#: The default statistic: the one closest to the measured bubble over everything the calibration benchmark
#: measured (:func:`best_statistic` of both shipped benchmarks, their lab runs and the samples;
#: ``benchmarks/bench_calibration.py``; lesson 06 shows the tables).
DEFAULT_STATISTIC = "per-kind"


def calibrate(
    timeline: Timeline, schedule: Schedule | None = None, *, statistic: str = DEFAULT_STATISTIC
) -> tuple[Costs, CalibrationReport]:
    """Measure per-stage durations, per-action overhead, per-hop latency and the pickup from one step.

    Args:
        timeline: one measured step (e.g. :func:`bubblekit.analysis.traces.read_trace`), spans
            labelled with actions.
        schedule: the schedule that ran; only its stage count is used (default: the
            timeline's own, largest stage + 1).
        statistic: how the gaps are summarised, one of :data:`STATISTICS`: ``"per-kind"``
            (default: the median overhead and latency on every action and hop, and each
            stage and kind's own extra gaps, pickups and stalls, charged where they happened),
            ``"median"`` (the typical gap; stalls left out), ``"mean"`` (stalls spread over
            every action) or ``"trimmed"`` (the mean of the middle 60%). The module doc says
            when each misleads. Durations are always means (the simulated busy time then
            equals the measured one).

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
    if not isinstance(statistic, str) or statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(repr(x) for x in STATISTICS)}, got {statistic!r}")
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
    for name, fn in _SUMMARIES.items():
        oh = max(0.0, fn(rb)) if rb else 0.0
        both[name] = (oh, max(0.0, fn(db) - oh) if db else 0.0, max(0.0, fn(pk) - oh) if pk else 0.0)
    # "per-kind": the typical (median) gaps, and the rest per stage and kind (_own_gap_shares)
    overhead, latency, pickup = both["median" if statistic == "per-kind" else statistic]
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
    if statistic == "per-kind":
        shares = _own_gap_shares(obs, overhead, latency)
    else:
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

    Each simulated slot is the overhead, the stage's share for that kind
    (``report.pickup_shares``: the pickup, or with ``"per-kind"`` its own extra gaps; 0 when
    none) and then the action's mean
    duration; the returned timeline keeps only the action part (the slot's end minus the
    mean duration), like the measurement, so their bubble ratios compare directly. It is
    :func:`bubblekit.simulate` with ``costs`` plus the shares. ``costs`` / ``report``
    reuse an earlier :func:`calibrate`.

    ``schedule`` may be the measured schedule at another m (a prediction: the shares are
    per-action rates of a stage and kind; ``benchmarks/bench_calibration.py`` measures it
    from m = 4 to m = 8). They do not carry over to another schedule (see the module doc):
    there simulate ``costs`` itself, or use :func:`jitter_simulation`, whose per-action
    pickup rule transfers.
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
    statistic: str = DEFAULT_STATISTIC,
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
        statistic: how overhead, latency, pickup and stalls are summarised (one of
            :data:`STATISTICS`, see :func:`calibrate`; ``"per-kind"`` by default).
        draws, seed: for the jitter row (:func:`jitter_simulation`).

    Rows (keys in brackets), each adding one effect: the formula [formula]; the simulator
    with textbook costs, F = 1 and B = 2 slots [textbook]; with the measured mean durations
    per stage and kind [durations]; plus the overhead [overhead]; plus the latency
    [latency]; plus the pickup (with ``"per-kind"``: each stage's own extra gaps, pickups
    and stalls), charged per stage (= the calibrated simulation, see
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
    own = report.statistic == "per-kind"
    oh_stat = "median" if own else report.statistic
    rows.append(Row("overhead", tr("calibrate.row.overhead", x=oh, u=u), sim_o.bubble_ratio, float(sim_o.makespan),
                    tr("calibrate.why.overhead", stat=tr(f"calibrate.stat.{oh_stat}"))))
    sim_l = _compute_only(simulate(sched, costs), sched.orders, oh, "durations + overhead + latency")
    tls["latency"] = sim_l
    rows.append(Row("latency", tr("calibrate.row.latency", x=lat, u=u), sim_l.bubble_ratio, float(sim_l.makespan),
                    tr("calibrate.why.latency")))
    sim_c = calibrated_simulation(timeline, sched, costs, report)
    tls["calibrated"] = sim_c
    shares = {k: x for k, x in report.pickup_shares.items() if x}
    what = joined(f"{s}{k} {x:.3f}" for (s, k), x in sorted(shares.items())) if shares else tr("calibrate.none")
    label = tr("calibrate.row.calibrated_own") if own else tr("calibrate.row.calibrated", x=pk, u=u)
    why = tr("calibrate.why.calibrated_own" if own else "calibrate.why.calibrated", what=what)
    rows.append(Row("calibrated", label, sim_c.bubble_ratio, float(sim_c.makespan), why))
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


# ------------------------------------------------------------------ the statistics, measured side by side

#: The format tag of a calibration benchmark's data file (:func:`load_benchmark`).
BENCHMARK_FORMAT = "bubblekit-calibration-benchmark/1"

#: Within this many (as a fraction of the step) of the measured bubble ratio counts as a hit.
BENCHMARK_TOLERANCE = 0.05

register({
    # the calibration benchmark's tables (lesson 06; benchmarks/bench_calibration.py); column keys stay English
    "calibrate.bench.run": {"en": "run", "zh": "运行"},
    "calibrate.bench.kind": {"en": "kind", "zh": "来源"},
    "calibrate.bench.real": {"en": "lab run", "zh": "真实运行"},
    "calibrate.bench.sample": {"en": "recorded sample", "zh": "录制样例"},
    "calibrate.bench.measured": {"en": "measured", "zh": "实测"},
    "calibrate.bench.statistic": {"en": "statistic", "zh": "统计量"},
    "calibrate.bench.within": {"en": "within {tol:.2f}", "zh": "误差 ≤ {tol:.2f}"},
    "calibrate.bench.mean_gap": {"en": "mean |gap|", "zh": "平均 |误差|"},
    "calibrate.bench.worst": {"en": "worst |gap|", "zh": "最大 |误差|"},
    "calibrate.bench.default": {"en": "default", "zh": "默认"},
    "calibrate.bench.with_default": {"en": "{stat} (default)", "zh": "{stat}（默认）"},
    # a run's schedule as the benchmark data names it (PyTorch's class name) -> the course's name
    "calibrate.bench.schedule.Interleaved1F1B": {"en": "Interleaved1F1B", "zh": "交错式 1F1B"},
    "calibrate.bench.runs_note": {"en": "calibrated - measured bubble_ratio, per statistic; {where}",
                                  "zh": "各统计量校准结果与实测 bubble_ratio（气泡比例）之差；{where}"},
    "calibrate.bench.summary_note": {"en": "{n} steps ({which}); {where}", "zh": "共 {n} 步（{which}）；{where}"},
    "calibrate.bench.which.all": {"en": "lab runs and recorded samples", "zh": "真实运行和录制样例"},
    "calibrate.bench.which.real": {"en": "lab runs", "zh": "真实运行"},
    "calibrate.bench.which.sample": {"en": "recorded samples", "zh": "录制样例"},
    "calibrate.bench.from": {"en": "calibrated from", "zh": "校准所用的步"},
    "calibrate.bench.to": {"en": "predicted", "zh": "预测的步"},
    "calibrate.bench.predicted": {"en": "predicted", "zh": "预测"},
    "calibrate.bench.gap": {"en": "gap", "zh": "误差"},
    "calibrate.bench.pred_note": {"en": "calibrated on the first run (statistic: {stat}), simulated at the second's m, "
                                        "compared with its measured bubble_ratio; {where}",
                                  "zh": "每一行用“校准所用的步”校准（统计量：{stat}），按“预测的步”的 m 模拟，"
                                        "再与那一步实测的 bubble_ratio（气泡比例）比较；{where}"},
    "calibrate.bench.where": {"en": "measured {when} on {machine} ({condition}), load average {load_start} at start, "
                                    "{load_end} at end; model {model}",
                              "zh": "{when} 测于 {machine}（开始时{condition}）；负载均值（1/5/15 分钟）开始时 {load_start}，"
                                    "结束时 {load_end}；模型 {model}"},
    "calibrate.bench.machine": {"en": "{arch}, {cores} CPU cores, {system}", "zh": "{arch}、{cores} 核 CPU、{system}"},
    "calibrate.bench.lab_defaults": {"en": "the lab's defaults", "zh": "实验室的默认模型"},
    "calibrate.overview.benchmark": {"en": "benchmark", "zh": "基准"},
    "calibrate.overview.model": {"en": "model", "zh": "模型"},
    "calibrate.overview.action": {"en": "typical action (ms)", "zh": "典型动作耗时（ms）"},
    "calibrate.overview.bubble": {"en": "measured bubble", "zh": "实测气泡比例"},
    "calibrate.overview.spread": {"en": "spread between runs", "zh": "同配置各次之差"},
    "calibrate.overview.explained": {"en": "default within {tol:.2f}", "zh": "默认统计量误差 ≤ {tol:.2f}"},
    "calibrate.overview.predicted": {"en": "predictions within {tol:.2f}", "zh": "预测误差 ≤ {tol:.2f}"},
    "calibrate.overview.machine": {"en": "machine at the start", "zh": "开始时的机器"},
    "calibrate.overview.condition": {"en": "{condition}, load {load}", "zh": "{condition}，负载均值 {load}"},
    "calibrate.overview.note": {"en": "lab runs only; spread: the widest difference between runs of one configuration; "
                                      "default statistic: {stat}",
                                "zh": "只计真实运行；同配置各次之差：同一配置各次运行实测气泡比例的最大差；"
                                      "默认统计量：{stat}"},
    "calibrate.bench.busy": {"en": "busy with other jobs", "zh": "较忙"},
    "calibrate.bench.quiet": {"en": "quiet", "zh": "较空闲"},
    "calibrate.bench.unknown": {"en": "load unknown", "zh": "负载未知"},
})


@dataclass(frozen=True)
class BenchmarkCase:
    """One measured step of a calibration benchmark.

    Attributes:
        name: how tables name it (``"1F1B m=4 #1"``, ``"1f1b-p2-m4"``).
        kind: ``"real"`` (a lab run of this benchmark) or ``"sample"`` (a shipped recording).
        schedule: the schedule that ran (bubblekit's, pairs split as the runtime ran them).
        step: the measured step (ms), the one every statistic is calibrated on.
        bubble_ratios: every measured step's bubble ratio of that run (for the record).
    """

    name: str
    kind: str
    schedule: Schedule
    step: Timeline
    bubble_ratios: tuple[float, ...] = ()


def calibration_gaps(step: Timeline, schedule: Schedule,
                     statistics_: Sequence[str] = STATISTICS) -> dict[str, float]:
    """Per statistic: the calibrated simulation's bubble ratio minus the measured one (a fraction of the step).

    :func:`calibrate` then :func:`calibrated_simulation` on ``step`` with each statistic.
    Used by :func:`benchmark` (lesson 06, ``benchmarks/bench_calibration.py``).
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    out: dict[str, float] = {}
    for name in statistics_:
        costs, report = calibrate(step, schedule, statistic=name)
        out[name] = calibrated_simulation(step, schedule, costs, report).bubble_ratio - step.bubble_ratio
    return out


def prediction_gaps(source: BenchmarkCase, target: BenchmarkCase,
                    statistics_: Sequence[str] = STATISTICS) -> dict[str, float]:
    """Per statistic: calibrate on ``source``'s step, simulate ``target``'s schedule, minus ``target``'s measured bubble.

    The prediction of another m: the calibration's costs and per-action shares
    (:func:`calibrated_simulation` with ``target.schedule``). The two schedules must have
    the same stages. Used by :func:`benchmark`.
    """
    for name, case in (("source", source), ("target", target)):
        if not isinstance(case, BenchmarkCase):
            raise TypeError(f"{name} must be a BenchmarkCase, got {type(case).__name__}")
    if source.schedule.n_stages != target.schedule.n_stages:
        raise ValueError(f"cannot predict {target.name} from {source.name}: {target.schedule.n_stages} stages, "
                         f"not {source.schedule.n_stages}")
    out: dict[str, float] = {}
    for name in statistics_:
        costs, report = calibrate(source.step, source.schedule, statistic=name)
        sim = calibrated_simulation(source.step, target.schedule, costs, report)
        out[name] = sim.bubble_ratio - target.step.bubble_ratio
    return out


def _f3(x: float) -> str:
    return f"{x:.3f}"


def _signed3(x: float) -> str:
    return f"{x:+.3f}"


def _gap_format(tolerance: float, signed: bool = False) -> Callable[[float], str]:
    """Three decimals, or more where three would hide which side of the tolerance ``|x|`` is on.

    A gap of 0.0503 shown as 0.050 reads as within 0.05 although it is counted as outside;
    this shows it as 0.0503, so the digits agree with the verdict.
    """
    def fmt(x: float) -> str:
        text = ""
        for digits in range(3, 8):
            text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
            if (abs(float(text)) <= tolerance) == (abs(x) <= tolerance):
                break
        return text
    return fmt


def _machine_text(machine: Any) -> str:
    """The benchmark's machine (``"x86_64, 2 CPU cores, Linux"``, as bench_calibration.py writes it) in the
    course's language; any other text as it is."""
    found = re.fullmatch(r"(.+), (\d+) CPU cores, (.+)", str(machine))
    if not found:
        return str(machine)
    return tr("calibrate.bench.machine", arch=found[1], cores=found[2], system=found[3])


def _load_text(load: Any) -> str:
    if isinstance(load, (list, tuple)) and load:
        return "/".join(f"{float(x):.2f}" for x in load)
    return "?"


def _model_text(model: Any) -> str:
    if isinstance(model, dict) and model:
        return ", ".join(f"{k}={v}" for k, v in model.items())
    return tr("calibrate.bench.lab_defaults")


@dataclass
class CalibrationBenchmark:
    """Every statistic of :func:`calibrate` on the same measured steps: how far each lands from the measurement.

    Attributes:
        cases: the measured steps (:class:`BenchmarkCase`).
        gaps: per case (same order), ``{statistic: calibrated - measured}``.
        predictions: ``(source index, target index, {statistic: predicted - measured})`` for
            each prediction of another m.
        meta: where and when it was measured (``when``, ``machine``, ``cores``, ``load_start``,
            ``load_end`` (1, 5 and 15 minute load averages), ``command``, ``torch``).
        tolerance: what counts as a hit (:data:`BENCHMARK_TOLERANCE`).

    :meth:`summary` / :meth:`runs_table` / :meth:`predictions_table` render it; :meth:`best`
    names the statistic closest to the measurement over the whole set. Used in lesson 06.
    """

    cases: list[BenchmarkCase]
    gaps: list[dict[str, float]]
    predictions: list[tuple[int, int, dict[str, float]]]
    meta: dict[str, Any]
    tolerance: float = BENCHMARK_TOLERANCE

    @property
    def busy(self) -> bool | None:
        """Whether other jobs kept the machine busy: a 1-minute load average above half its cores when
        the benchmark started (``None`` when the data has no load average or core count).

        Only the start counts: while it runs, the benchmark's own rank processes (one per rank)
        raise the load by about the rank count, so the load at the end says how loaded the
        machine was with the benchmark, not without it (it is printed beside it).
        """
        cores, start = self.meta.get("cores"), self.meta.get("load_start")
        if not isinstance(cores, int) or cores < 1 or not isinstance(start, list) or not start:
            return None
        return float(start[0]) > cores / 2

    def _where(self) -> str:
        m = self.meta
        condition = {True: "busy", False: "quiet", None: "unknown"}[self.busy]
        return tr("calibrate.bench.where", when=m.get("when", "?"), machine=_machine_text(m.get("machine", "?")),
                  condition=tr(f"calibrate.bench.{condition}"),
                  load_start=_load_text(m.get("load_start")), load_end=_load_text(m.get("load_end")),
                  model=_model_text(m.get("model")))

    def _selected(self, which: str) -> list[int]:
        if which not in ("all", "real", "sample"):
            raise ValueError(f"which must be 'all', 'real' or 'sample', got {which!r}")
        return [k for k, c in enumerate(self.cases) if which == "all" or c.kind == which]

    def scores(self, which: str = "all") -> dict[str, tuple[int, int, float, float]]:
        """Per statistic: (hits within the tolerance, steps, mean |gap|, worst |gap|) over ``which`` steps."""
        chosen = self._selected(which)
        out: dict[str, tuple[int, int, float, float]] = {}
        for name in STATISTICS:
            xs = [abs(self.gaps[k][name]) for k in chosen if name in self.gaps[k]]
            if xs:
                out[name] = (sum(x <= self.tolerance for x in xs), len(xs), statistics.fmean(xs), max(xs))
        return out

    def best(self, which: str = "all") -> str:
        """The statistic with the most steps within the tolerance, then the smallest mean |gap|."""
        scores = self.scores(which)
        if not scores:
            raise ValueError(f"the benchmark has no {which!r} steps")
        return min(scores, key=lambda s: (-scores[s][0], scores[s][2]))

    def prediction_hits(self, statistic: str = DEFAULT_STATISTIC) -> tuple[int, int]:
        """How many predictions of another m land within the tolerance with ``statistic``, of how many."""
        if statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {', '.join(repr(x) for x in STATISTICS)}, got {statistic!r}")
        xs = [abs(g[statistic]) for _, _, g in self.predictions if statistic in g]
        return sum(x <= self.tolerance for x in xs), len(xs)

    def action_ms(self) -> float:
        """The median duration of one action over the lab runs' steps (the steps' unit, ms); NaN without lab runs."""
        xs = [float(e) - float(b) for c in self.cases if c.kind == "real"
              for r in range(c.step.p) for b, e in zip(c.step.arrays(r)[0], c.step.arrays(r)[1])]
        return float(statistics.median(xs)) if xs else float("nan")

    def run_spread(self) -> float:
        """The widest difference between the measured bubble ratios of two lab runs of one configuration.

        A configuration is a schedule and m (the runs' names without their ``#k``); 0.0 when
        no configuration ran twice. Noise a calibration cannot predict: when it is larger than
        the tolerance, no statistic predicts one run from another reliably.
        """
        per: dict[str, list[float]] = defaultdict(list)
        for c in self.cases:
            if c.kind == "real":
                per[c.name.rsplit(" #", 1)[0]].append(c.step.bubble_ratio)
        return max((max(xs) - min(xs) for xs in per.values() if len(xs) > 1), default=0.0)

    def summary(self, which: str = "all") -> Table:
        """One row per statistic: steps within the tolerance, mean and worst |gap| (``which``: all, real, sample)."""
        scores = self.scores(which)
        rows = [{"statistic": (tr("calibrate.bench.with_default", stat=tr(f"calibrate.stat.{s}"))
                               if s == DEFAULT_STATISTIC else tr(f"calibrate.stat.{s}")),
                 "within": f"{hit} / {n}", "mean |gap|": mean, "worst": worst}
                for s, (hit, n, mean, worst) in scores.items()]
        n = len(self._selected(which))
        return Table(rows, formats={"mean |gap|": _gap_format(self.tolerance), "worst": _gap_format(self.tolerance)},
                     headers={"statistic": tr("calibrate.bench.statistic"),
                              "within": tr("calibrate.bench.within", tol=self.tolerance),
                              "mean |gap|": tr("calibrate.bench.mean_gap"), "worst": tr("calibrate.bench.worst")},
                     note=tr("calibrate.bench.summary_note", n=n, which=tr(f"calibrate.bench.which.{which}"),
                             where=self._where()))

    def runs_table(self) -> Table:
        """One row per step: its measured bubble ratio and each statistic's gap (calibrated - measured)."""
        rows = []
        for case, g in zip(self.cases, self.gaps):
            row: dict[str, Any] = {"run": _run_label(case.name), "kind": tr(f"calibrate.bench.{case.kind}"),
                                   "measured": case.step.bubble_ratio}
            row.update({s: g.get(s) for s in STATISTICS})
            rows.append(row)
        fmt = dict.fromkeys(STATISTICS, _gap_format(self.tolerance, signed=True))
        return Table(rows, formats={"measured": _f3, **fmt},
                     headers={"run": tr("calibrate.bench.run"), "kind": tr("calibrate.bench.kind"),
                              "measured": tr("calibrate.bench.measured"),
                              **{s: tr(f"calibrate.stat.{s}") for s in STATISTICS}},
                     note=tr("calibrate.bench.runs_note", where=self._where()))

    def predictions_table(self, statistic: str = DEFAULT_STATISTIC) -> Table:
        """One row per prediction of another m: the two runs, measured, predicted, the gap."""
        if statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {', '.join(repr(x) for x in STATISTICS)}, got {statistic!r}")
        rows = []
        for i, j, g in self.predictions:
            measured = self.cases[j].step.bubble_ratio
            rows.append({"from": _run_label(self.cases[i].name), "to": _run_label(self.cases[j].name), "measured": measured,
                         "predicted": measured + g[statistic], "gap": g[statistic]})
        return Table(rows, formats={"measured": _f3, "predicted": _f3, "gap": _gap_format(self.tolerance, signed=True)},
                     headers={"from": tr("calibrate.bench.from"), "to": tr("calibrate.bench.to"),
                              "measured": tr("calibrate.bench.measured"), "predicted": tr("calibrate.bench.predicted"),
                              "gap": tr("calibrate.bench.gap")},
                     note=tr("calibrate.bench.pred_note", stat=tr(f"calibrate.stat.{statistic}"), where=self._where()))


def benchmark(cases: Sequence[BenchmarkCase], predictions: Sequence[tuple[int, int]] = (), *,
              meta: dict[str, Any] | None = None) -> CalibrationBenchmark:
    """Calibrate every case with every statistic (:func:`calibration_gaps`) and make the predictions.

    Args:
        cases: the measured steps.
        predictions: pairs ``(source, target)`` of indices into ``cases``: calibrate on the
            source, predict the target (same schedule, another m).
        meta: where and when the steps were measured (see :class:`CalibrationBenchmark`).

    Used by ``benchmarks/bench_calibration.py`` and :func:`load_benchmark` (lesson 06).
    """
    cases = list(cases)
    if not cases:
        raise ValueError("cases must hold at least one measured step")
    for k, c in enumerate(cases):
        if not isinstance(c, BenchmarkCase):
            raise TypeError(f"cases[{k}] must be a BenchmarkCase, got {type(c).__name__}")
    pairs: list[tuple[int, int, dict[str, float]]] = []
    for pair in predictions:
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, int) for x in pair)
                and all(0 <= x < len(cases) for x in pair)):
            raise ValueError(f"each prediction must be a pair of indices into cases (0..{len(cases) - 1}), got {pair!r}")
        pairs.append((pair[0], pair[1], prediction_gaps(cases[pair[0]], cases[pair[1]])))
    gaps = [calibration_gaps(c.step, c.schedule) for c in cases]
    return CalibrationBenchmark(cases, gaps, pairs, dict(meta or {}))


def best_statistic(benchmarks: Sequence[CalibrationBenchmark]) -> str:
    """The statistic closest to the measurement over several benchmarks: the most steps within the tolerance, then
    the smallest mean |gap|, over the lab runs of every benchmark and the recorded samples (counted once).

    Why :data:`DEFAULT_STATISTIC` is what it is: the shipped benchmarks (:data:`SHIPPED_BENCHMARKS`, lesson 06's
    model and the lab's tiny one) and the samples together. Used in lesson 06.
    """
    if isinstance(benchmarks, (str, bytes, CalibrationBenchmark)) or not isinstance(benchmarks, Sequence) or not benchmarks:
        raise ValueError(f"benchmarks must be a non-empty list of CalibrationBenchmark, got {benchmarks!r}")
    gaps: list[dict[str, float]] = []
    samples_seen: set[str] = set()
    for k, bench in enumerate(benchmarks):
        if not isinstance(bench, CalibrationBenchmark):
            raise TypeError(f"benchmarks[{k}] must be a CalibrationBenchmark (load_benchmark()), got {type(bench).__name__}")
        for case, g in zip(bench.cases, bench.gaps):
            if case.kind == "sample":
                if case.name in samples_seen:
                    continue
                samples_seen.add(case.name)
            gaps.append(g)
    tol = benchmarks[0].tolerance
    scores = {}
    for name in STATISTICS:
        xs = [abs(g[name]) for g in gaps if name in g]
        if xs:
            scores[name] = (sum(x <= tol for x in xs), statistics.fmean(xs))
    return min(scores, key=lambda s: (-scores[s][0], scores[s][1]))


def benchmark_overview(benchmarks: Mapping[str, CalibrationBenchmark]) -> Table:
    """One row per benchmark: its model, how long an action lasts, how noisy its runs are, how well it is explained.

    Args:
        benchmarks: a label per benchmark (e.g. ``{"section 6's model": load_benchmark(),
            "tiny model": load_benchmark(shipped="tiny")}``).

    Columns: the model, the typical action (:meth:`CalibrationBenchmark.action_ms`, ms), the
    lab runs' measured bubble ratios (lowest to highest), the spread between runs of one
    configuration (:meth:`CalibrationBenchmark.run_spread`), the default statistic's steps and
    predictions within the tolerance, and the machine's condition and load at the start.
    Used in lesson 06.
    """
    if not isinstance(benchmarks, Mapping) or not benchmarks:
        raise ValueError(f"benchmarks must be a non-empty mapping of label -> CalibrationBenchmark, got {benchmarks!r}")
    rows = []
    tol = BENCHMARK_TOLERANCE
    for label, bench in benchmarks.items():
        if not isinstance(bench, CalibrationBenchmark):
            raise TypeError(f"benchmarks[{label!r}] must be a CalibrationBenchmark (load_benchmark()), "
                            f"got {type(bench).__name__}")
        tol = bench.tolerance
        real = [c.step.bubble_ratio for c in bench.cases if c.kind == "real"]
        hit, n = (bench.scores("real").get(DEFAULT_STATISTIC, (0, 0, 0.0, 0.0))[:2]) if real else (0, 0)
        p_hit, p_n = bench.prediction_hits()
        condition = {True: "busy", False: "quiet", None: "unknown"}[bench.busy]
        rows.append({"benchmark": str(label), "model": _model_text(bench.meta.get("model")),
                     "action": bench.action_ms(),
                     "bubble": f"{min(real):.3f}–{max(real):.3f}" if real else "—",
                     "spread": bench.run_spread(), "explained": f"{hit} / {n}", "predicted": f"{p_hit} / {p_n}",
                     "machine": tr("calibrate.overview.condition", condition=tr(f"calibrate.bench.{condition}"),
                                   load=_load_text(bench.meta.get("load_start")))})
    return Table(rows, formats={"action": "float1", "spread": _f3},
                 headers={"benchmark": tr("calibrate.overview.benchmark"), "model": tr("calibrate.overview.model"),
                          "action": tr("calibrate.overview.action"), "bubble": tr("calibrate.overview.bubble"),
                          "spread": tr("calibrate.overview.spread"),
                          "explained": tr("calibrate.overview.explained", tol=tol),
                          "predicted": tr("calibrate.overview.predicted", tol=tol),
                          "machine": tr("calibrate.overview.machine")},
                 note=tr("calibrate.overview.note", stat=tr(f"calibrate.stat.{DEFAULT_STATISTIC}")))


def step_record(step: Timeline) -> dict[str, Any]:
    """A measured step as JSON-able data (starts, ends in the step's unit; actions as text), for a benchmark file."""
    if not isinstance(step, Timeline):
        raise TypeError(f"step must be a bubblekit Timeline, got {type(step).__name__}")
    rows = [step.arrays(r) for r in range(step.p)]
    return {"unit": step.unit, "starts": [[float(x) for x in s] for s, _, _ in rows],
            "ends": [[float(x) for x in e] for _, e, _ in rows],
            "actions": [[str(a) for a in labels] for _, _, labels in rows]}


def _step_from_record(data: dict[str, Any], source: str) -> Timeline:
    from bubblekit.actions import parse_action

    labels = [[parse_action(a) for a in row] for row in data["actions"]]
    return Timeline(data["starts"], data["ends"], labels, unit=str(data.get("unit", "ms")), source=source)


def shipped_sample_cases() -> list[BenchmarkCase]:
    """The shipped recordings (``bk.traces.sample_names()``), each its profiled step, as benchmark cases."""
    from bubblekit.analysis import traces

    out = []
    for name in traces.sample_names():
        info = traces.sample_info(name)
        cfg = info["config"]
        v = int(cfg.get("v") or 1)
        sched = build_schedule(info["bubblekit"], int(cfg["ranks"]), int(cfg["microbatches"]), v if v > 1 else None)
        if sched.has_pairs:
            sched = sched.split_pairs()
        step = traces.read_trace(traces.sample_trace(name))
        out.append(BenchmarkCase(name, "sample", sched, step, tuple(info.get("measured_bubble_ratios", ()))))
    return out


#: The benchmark data shipped with bubblekit: the lab runs of ``benchmarks/bench_calibration.py``.
BENCHMARK_DATA = "calibration_benchmark.json"

#: The benchmark data files shipped with bubblekit (``bubblekit/data/``), by the model they ran:
#: ``"lesson"`` is lesson 06's real-run model (actions of tens of ms on a CPU core), ``"tiny"`` the
#: lab's default model (actions of about a millisecond, the size of the OS's scheduling noise).
SHIPPED_BENCHMARKS: dict[str, str] = {"lesson": BENCHMARK_DATA, "tiny": "calibration_benchmark_tiny.json"}


def benchmark_from_data(data: dict[str, Any], *, samples: bool = True) -> CalibrationBenchmark:
    """The benchmark of a data record (the JSON of ``benchmarks/bench_calibration.py --save-data``), recomputed.

    Rebuilds each lab run's measured step and schedule, adds the shipped recordings when
    ``samples`` (:func:`shipped_sample_cases`) and calls :func:`benchmark`. Used by
    :func:`load_benchmark` and the benchmark script.
    """
    if not isinstance(data, dict) or data.get("format") != BENCHMARK_FORMAT:
        raise ValueError(f"not a calibration benchmark record (expected format {BENCHMARK_FORMAT!r})")
    cases = []
    try:
        for run in data["runs"]:
            v = int(run.get("v") or 1)
            sched = build_schedule(run["bubblekit"], int(run["p"]), int(run["m"]), v if v > 1 else None)
            if sched.has_pairs:
                sched = sched.split_pairs()
            cases.append(BenchmarkCase(run["name"], "real", sched, _step_from_record(run["step"], run["name"]),
                                       tuple(run.get("bubble_ratios", ()))))
        pairs = [(int(a), int(b)) for a, b in data.get("predictions", [])]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"a calibration benchmark record with a malformed run or prediction: {exc!r}") from exc
    if samples:
        cases.extend(shipped_sample_cases())
    return benchmark(cases, pairs, meta=data.get("meta", {}))


def _run_label(name: str) -> str:
    """A benchmark run's name as tables show it: ``"Interleaved1F1B m=4 #1"`` is ``"交错式 1F1B m=4 #1"`` in Chinese.

    Only the leading schedule name is translated (and only where the catalogue has it); the
    name itself, a key, stays as the data writes it.
    """
    head, sep, rest = name.partition(" ")
    if head == "Interleaved1F1B":
        return tr(f"calibrate.bench.schedule.{head}") + sep + rest
    return name


def load_benchmark(path: str | Any | None = None, *, samples: bool = True,
                   shipped: str = "lesson") -> CalibrationBenchmark:
    """Read a benchmark's lab runs (default: the data shipped with bubblekit) and recompute every statistic.

    The file (``benchmarks/bench_calibration.py --save-data``) holds each run's measured
    step and configuration and where and when it ran; the gaps are computed here, by this
    bubblekit, so a change in :func:`calibrate` shows in the table. ``samples`` adds the
    shipped recordings (:func:`shipped_sample_cases`). Without ``path``, ``shipped`` names
    which shipped file (:data:`SHIPPED_BENCHMARKS`: ``"lesson"``, the default, or
    ``"tiny"``). No torch needed. Used in lesson 06.
    """
    import json
    from pathlib import Path

    if path is None:
        if not isinstance(shipped, str) or shipped not in SHIPPED_BENCHMARKS:
            raise ValueError(f"shipped must be one of {', '.join(repr(k) for k in SHIPPED_BENCHMARKS)}, "
                             f"got {shipped!r}")
        file = Path(__file__).resolve().parents[1] / "data" / SHIPPED_BENCHMARKS[shipped]
    else:
        file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no calibration benchmark data at {file}")
    try:
        return benchmark_from_data(json.loads(file.read_text(encoding="utf-8")), samples=samples)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{file} is not a readable calibration benchmark file: {exc}") from exc
