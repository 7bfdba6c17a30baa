"""Real pipelines: run ``torch.distributed.pipelining`` and measure its bubbles (optional extra).

Install with ``pip install bubblekit[lab]`` (torch). One call runs a small transformer-like
model as a real pipeline, one process per rank, on CPU with the ``gloo`` backend (or
``nccl`` with one GPU per rank), and returns every rank's F / B / I / W actions as
bubblekit timelines::

    from bubblekit import lab
    res = lab.run("1F1B", ranks=2, microbatches=8, hidden=256, seq=128, layers=2, steps=5)
    res.median_bubble_ratio          # measured, idle / (ranks x makespan)
    print(res.compare().table())     # measured vs formula vs calibrated simulation
    res.order_check()                # executed order == bubblekit's order?

The same from a shell: ``python -m bubblekit.lab run --schedule 1F1B --ranks 2 --microbatches 8``
(or under ``torchrun --nproc-per-node 2 -m bubblekit.lab run ...``).

Any schedule runs: a name with a ``torch.distributed.pipelining`` class (``"1F1B"``, ``"zbv"``)
runs that class; any other registered schedule (``"zb-h2"``, ``"v-half"``, ``"v-min"``) and a
:class:`~bubblekit.Schedule` of your own run through PyTorch's ``_PipelineScheduleRuntime``,
which loads the schedule's compute-only CSV (:meth:`Schedule.to_torch_csv
<bubblekit.Schedule.to_torch_csv>`, ``_load_csv``) and adds its own sends and receives::

    lab.run("zb-h2", ranks=2, microbatches=8).order_check()["bubblekit_matches"]   # True
    lab.run(bk.Schedule.from_text("rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1"))

What that runtime cannot run is refused before any worker starts, naming the schedule and
why (:func:`runtime_problem`): DualPipe's two pipelines (PyTorch's stages are one chain), an
order that deadlocks, one rank. Overlapped pairs run as PyTorch runs every ``OVERLAP_F_B``
without an overlap function: the forward part, then the backward part.

Torch is imported only by the worker processes and :mod:`bubblekit.lab._worker`; this
module, the result type and the command-line parser work without it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bubblekit.actions import Action
from bubblekit.analysis.calibrate import Comparison, compare_measured
from bubblekit.analysis.traces import MeasuredTimeline, write_csv
from bubblekit.i18n import all_messages, register, tr
from bubblekit.lab._config import (
    RUNTIME,
    TORCH_SCHEDULES,
    LabConfig,
    TorchScheduleInfo,
    bubblekit_name,
    resolve_schedule,
    runtime_problem,
)
from bubblekit.lab._launch import LabInterrupted, LabRunError, free_port, preflight
from bubblekit.schedules import schedule as build_schedule
from bubblekit.schedules.base import Schedule
from bubblekit.text import joined

__all__ = [
    "run",
    "LabConfig",
    "LabResult",
    "LabRunError",
    "LabInterrupted",
    "preflight",
    "TORCH_SCHEDULES",
    "TorchScheduleInfo",
    "RUNTIME",
    "runtime_problem",
    "resolve_schedule",
    "bubblekit_name",
    "torch_available",
    "free_port",
    "KNOWN_ORDER_DIFFERENCES",
]

#: Where PyTorch's *static* ``pipeline_order`` differs from what its runtime executes
#: (torch 2.13). The lab compares bubblekit with the executed order.
KNOWN_ORDER_DIFFERENCES: dict[str, str] = {
    "1F1B": (
        "Schedule1F1B.pipeline_order (the static IR) is wrong on the last rank: its forward counter is "
        "incremented before use, so it lists F1 .. Fm (F0 missing, Fm out of range). The runtime "
        "(_step_microbatches) runs F0 B0 F1 B1 ..., which is bubblekit's 1f1b order."
    ),
    "GPipe": "ScheduleGPipe.pipeline_order pads with idle slots; without them it equals the executed order.",
}


register({
    # the lab's summary (lesson 06); the configuration's field names stay as the code spells them
    "lab.run": {"en": "lab run: {config}", "zh": "真实运行：{config}"},
    "lab.config": {"en": "{schedule} ({torch_class}) p={ranks} m={microbatches} v={v} hidden={hidden} seq={seq} "
                         "batch={batch} layers/stage={layers} backend={backend} threads/rank={threads}",
                   "zh": "{schedule}（{torch_class}），p={ranks} m={microbatches} v={v}，隐藏维度 {hidden}，序列长度 {seq}，"
                         "每个微批 {batch} 个样本，每级 {layers} 层，后端 {backend}，每个 rank {threads} 个线程"},
    "lab.per_step": {"en": "measured bubble_ratio per step: {ratios}  (median step {median:.4f}, the lower middle one "
                           "for an even count; the table below is that step)",
                     "zh": "每步实测的气泡比例：{ratios}（中位数那一步 {median:.4f}：步数为偶数时取中间两步里较低的一步；下表就是这一步）"},
    "lab.order.bubblekit": {"en": "executed order == bubblekit's order: {verdict}",
                            "zh": "实际执行顺序与 bubblekit 的顺序一致：{verdict}"},
    "lab.order.torch": {"en": "executed order == PyTorch's static pipeline_order: {verdict}",
                        "zh": "实际执行顺序与 PyTorch 静态的 pipeline_order 一致：{verdict}"},
    "lab.yes": {"en": "yes", "zh": "是"},
    "lab.no": {"en": "NO: {why}", "zh": "否：{why}"},
    "lab.no_known": {"en": "no ({why})", "zh": "否。{why}"},
    "lab.see_order_check": {"en": "see order_check()", "zh": "见 order_check()"},
    "lab.rss": {"en": "peak memory per rank (resident): {sizes}", "zh": "每个 rank 的内存峰值（常驻）：{sizes}"},
    "lab.known.1F1B": {"en": KNOWN_ORDER_DIFFERENCES["1F1B"],
                       "zh": "Schedule1F1B 的静态调度表 pipeline_order（即 IR）在最后一个 rank 上有误：前向计数器在使用前就先加了 1，"
                             "所以列出的是 F1 .. Fm（缺 F0，Fm 越界）；运行时（_step_microbatches）实际执行的是 F0 B0 F1 B1 ……，"
                             "也就是 bubblekit 的 1f1b 顺序。"},
    "lab.known.GPipe": {"en": KNOWN_ORDER_DIFFERENCES["GPipe"],
                        "zh": "ScheduleGPipe.pipeline_order 用空闲槽补齐；去掉它们后与实际执行顺序相同。"},
})


def torch_available() -> bool:
    """True when ``torch`` (with ``torch.distributed.pipelining``) can be imported."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def _timelines_from_events(events: list[list[Any]], p: int, steps: list[int], source: str) -> list[MeasuredTimeline]:
    by_step: dict[int, list[list[tuple[int, int, Action]]]] = defaultdict(lambda: [[] for _ in range(p)])
    for rank, step, stage, kind, mb, t0, t1 in events:
        by_step[int(step)][int(rank)].append((int(t0), int(t1), Action(int(stage), str(kind), int(mb))))
    out: list[MeasuredTimeline] = []
    for k, st in enumerate(steps):
        rows = [sorted(r) for r in by_step[st]]
        if any(not r for r in rows):
            raise ValueError(f"step {st} of the lab record has a rank without actions")
        origin = min(r[0][0] for r in rows)
        out.append(MeasuredTimeline(
            [[(s - origin) / 1e6 for s, _, _ in r] for r in rows],
            [[(e - origin) / 1e6 for _, e, _ in r] for r in rows],
            [[a for _, _, a in r] for r in rows],
            files=["lab record"] * p, family="lab", step=k, n_steps=len(steps), offsets_ms=[0.0] * p,
            includes_wait=False, notes=[], origin=0.0, source=f"{source} step {st}",
        ))
    return out


@dataclass
class LabResult:
    """A finished lab run: measured timelines per step, the schedules to compare with.

    Attributes:
        config: the :class:`LabConfig` that ran.
        record: the raw record (JSON-able; :meth:`save` / :meth:`load`).
        steps: one :class:`~bubblekit.analysis.traces.MeasuredTimeline` (ms) per measured step
            (warm-up steps excluded).
        schedule: bubblekit's schedule with the same name, p, m, v (``None`` when bubblekit
            has no counterpart registered).
        torch_orders: PyTorch's static ``pipeline_order`` per rank (compute actions only).
    """

    config: LabConfig
    record: dict[str, Any]
    steps: list[MeasuredTimeline]
    schedule: Schedule | None
    torch_orders: dict[int, list[str]] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> LabResult:
        """Rebuild a result from a record (the JSON written by :meth:`save` or ``--record``)."""
        if not isinstance(record, dict) or record.get("format") != "bubblekit-lab-record/1":
            raise ValueError("not a bubblekit lab record (expected format 'bubblekit-lab-record/1')")
        cfg = LabConfig(**record["config"])
        measured = list(range(cfg.warmup, cfg.warmup + cfg.steps))
        src = f"lab {cfg.schedule} p={cfg.ranks} m={cfg.microbatches}"
        tls = _timelines_from_events(record["events"], cfg.ranks, measured, src)
        name = bubblekit_name(cfg.info, cfg.v) if cfg.orders is None else None
        sched = None
        if cfg.orders is not None:  # the schedule that ran, from its CSV
            sched = cfg.runtime_schedule.split_pairs()
        elif name is not None:  # PyTorch's default runtime runs an OVERLAP_F_B's two parts one after the other
            sched = build_schedule(name, cfg.ranks, cfg.microbatches, cfg.v).split_pairs()
        torch_orders = {int(r): list(o) for r, o in record.get("torch_static_orders", {}).items()}
        return cls(cfg, record, tls, sched, torch_orders)

    @classmethod
    def load(cls, path: str | Path) -> LabResult:
        """Read a record saved by :meth:`save`."""
        return cls.from_record(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | Path) -> Path:
        """Write the raw record as JSON; :meth:`load` reads it back."""
        out = Path(path)
        out.write_text(json.dumps(self.record), encoding="utf-8")
        return out

    def to_csv(self, path: str | Path) -> Path:
        """Write the measured steps as bubblekit's trace CSV (ms, with a ``step`` column)."""
        return write_csv(self.steps, path)

    # ----------------------------------------------------------------- metrics
    @property
    def bubble_ratios(self) -> list[float]:
        """Measured bubble ratio (idle / (ranks x makespan)) of each measured step."""
        return [t.bubble_ratio for t in self.steps]

    @property
    def median_bubble_ratio(self) -> float:
        """The bubble ratio of :attr:`median_step` (the lower middle for an even count of steps).

        It is a measured step's own value, not the mean of the two middle ones, so it is the
        "measured" row of :meth:`compare` and :meth:`summary`.
        """
        return float(self.median_step.bubble_ratio)

    @property
    def median_step(self) -> MeasuredTimeline:
        """The measured step whose bubble ratio is the median (the lower middle for an even count)."""
        order = sorted(range(len(self.steps)), key=lambda k: self.steps[k].bubble_ratio)
        return self.steps[order[(len(order) - 1) // 2]]

    @property
    def timeline(self) -> MeasuredTimeline:
        """Shorthand for :attr:`median_step`."""
        return self.median_step

    @property
    def executed_orders(self) -> tuple[tuple[Action, ...], ...]:
        """Per rank, the actions in the order the first measured step ran them."""
        return self.steps[0].orders

    def order_check(self) -> dict[str, Any]:
        """Compare the executed orders with bubblekit's and PyTorch's static order.

        Returns ``{"steps_agree", "bubblekit_matches", "bubblekit_differences",
        "torch_static_matches", "torch_static_differences", "note"}``; ``*_matches`` is ``None``
        when there is nothing to compare with.
        """
        from bubblekit.analysis.calibrate import _order_diffs

        executed = self.executed_orders
        steps_agree = all(t.orders == executed for t in self.steps)
        out: dict[str, Any] = {"steps_agree": steps_agree, "bubblekit_matches": None, "bubblekit_differences": [],
                               "torch_static_matches": None, "torch_static_differences": [],
                               "note": "" if self.config.orders is not None  # bubblekit's own CSV ran
                               else KNOWN_ORDER_DIFFERENCES.get(self.config.schedule, "")}
        if self.schedule is not None:
            d = _order_diffs(executed, self.schedule.orders)
            out["bubblekit_matches"], out["bubblekit_differences"] = not d, d
        if self.torch_orders:
            torch_o = [[str(a) for a in self.torch_orders.get(r, [])] for r in range(self.config.ranks)]
            ex = [[str(a) for a in o] for o in executed]
            d = [f"rank {r}: ran {' '.join(ex[r])}; static order {' '.join(torch_o[r])}"
                 for r in range(len(ex)) if ex[r] != torch_o[r]]
            out["torch_static_matches"], out["torch_static_differences"] = not d, d
        return out

    def compare(self, step: int | None = None) -> Comparison:
        """Measured vs formula vs calibrated simulation for one step (default: the median step).

        Uses bubblekit's schedule when it exists and matches the executed order, otherwise
        the executed orders themselves.
        """
        tl = self.median_step if step is None else self.steps[step]
        sched = self.schedule
        if sched is not None and self.order_check()["bubblekit_matches"] is False:
            sched = None
        return compare_measured(tl, sched)

    def summary(self) -> str:
        """Text: configuration, per-step bubble ratios, the comparison table and the order check."""
        c = self.config
        config = tr("lab.config", schedule=c.schedule, torch_class=c.info.torch_class, ranks=c.ranks,
                    microbatches=c.microbatches, v=c.v, hidden=c.hidden, seq=c.seq, batch=c.batch, layers=c.layers,
                    backend=c.backend, threads=c.threads)
        lines = [
            tr("lab.run", config=config),
            tr("lab.per_step", ratios=joined(f"{b:.4f}" for b in self.bubble_ratios), median=self.median_bubble_ratio),
        ]
        chk = self.order_check()
        if chk["bubblekit_matches"] is not None:
            verdict = tr("lab.yes") if chk["bubblekit_matches"] else tr("lab.no", why="; ".join(chk["bubblekit_differences"]))
            lines.append(tr("lab.order.bubblekit", verdict=verdict))
        if chk["torch_static_matches"] is not None:
            known = f"lab.known.{c.schedule}"
            why = tr(known) if chk["note"] and known in all_messages() else (chk["note"] or tr("lab.see_order_check"))
            verdict = tr("lab.yes") if chk["torch_static_matches"] else tr("lab.no_known", why=why)
            lines.append(tr("lab.order.torch", verdict=verdict))
        rss = self.record.get("peak_rss_bytes")
        if isinstance(rss, list) and rss:
            lines.append(tr("lab.rss", sizes=joined(f"{int(b) / 1e6:.0f} MB" for b in rss)))
        lines.append("")
        lines.append(self.compare().table())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<LabResult {self.config.schedule} p={self.config.ranks} m={self.config.microbatches} "
                f"steps={len(self.steps)} median bubble_ratio={self.median_bubble_ratio:.4f}>")


def run(schedule: str | Schedule = "1F1B", ranks: int | None = None, microbatches: int | None = None, *,
        config: LabConfig | None = None, **options: Any) -> LabResult:
    """Run a real pipeline and return its measured timelines (see :class:`LabConfig` for options).

    ``schedule`` is a name (a PyTorch class such as ``"1F1B"``, or any registered bubblekit
    schedule: those without a PyTorch class run through ``_PipelineScheduleRuntime`` from their
    CSV) or a :class:`~bubblekit.Schedule`, which brings its own ranks and microbatches
    (:meth:`LabConfig.for_schedule`). ``ranks`` and ``microbatches`` default to 2 and 4 for a name.

    Everything is checked before any process starts (the configuration, bubblekit's rules
    for the schedule, CUDA for ``nccl``, a writable ``trace_dir``); more ranks than CPU cores
    give a ``RuntimeWarning`` with the memory one rank takes. Then it starts ``ranks`` local
    processes (127.0.0.1, a free port), waits at most ``timeout_s`` seconds, and always kills
    and reaps them and removes their temporary folder, also on Ctrl-C, ``SIGTERM`` and
    ``SIGHUP``. Used in lesson 06.

    Raises:
        ImportError: torch is not installed (``pip install bubblekit[lab]``).
        TypeError, ValueError: a bad option, named (nothing was started).
        LabRunError: a rank failed, or the run passed its time limit (the message names the
            rank that stopped progressing first).
        LabInterrupted: stopped by Ctrl-C, ``SIGTERM`` or ``SIGHUP`` (workers already ended).
    """
    if not torch_available():
        raise ImportError("bubblekit.lab.run needs torch: pip install 'bubblekit[lab]' (torch==2.13.0)")
    from bubblekit.lab._launch import launch

    if config is not None:
        cfg = config
    elif isinstance(schedule, Schedule):
        cfg = LabConfig.for_schedule(schedule, ranks=ranks, microbatches=microbatches, **options)
    else:
        cfg = LabConfig(schedule=schedule, ranks=2 if ranks is None else ranks,
                        microbatches=4 if microbatches is None else microbatches, **options)
    return LabResult.from_record(launch(cfg))
