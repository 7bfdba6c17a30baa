"""Exercises of lesson 09, *Misconceptions* (``solutions/09_misconceptions.ipynb``)."""

from __future__ import annotations

from fractions import Fraction

import bubblekit as bk
from bubblekit.analysis import planner
from bubblekit.costs import load_h200_layer_costs
from bubblekit.course import published
from bubblekit.course.checks._mistakes import swapped_pm, upside_down, utilisation
from bubblekit.course.checks._registry import Mistake, exercise
from bubblekit.i18n import register, tr


@exercise("09.1", hint=("The fraction of the step is (p-1)/(m+p-1), not (p-1)/m; give an exact Fraction.",
                        "Fraction(p - 1, m + p - 1) with p = 8, m = 4; a float is not exact."),
          exact=True,
          fraction_of="the step",
          mistakes=(Mistake(lambda _e: Fraction(8 - 1, 4),
                            "that is (p - 1)/m, the misconception itself (Megatron's overhead, idle over busy time)"),
                    swapped_pm(bk.bubble_ratio_exact, 8, 4), utilisation()))
def _e091() -> Fraction:
    return bk.bubble_ratio_exact(8, 4)


def fixed_gpu_step_times(gpus: int = 16, batch: int = 32, f_model: int = 16, b_model: int = 32) -> dict[int, Fraction]:
    """Step time (slots) for each pipeline depth p dividing ``gpus`` at a fixed global batch.

    ``gpus / p`` data-parallel replicas share ``batch`` sequences (micro-batch 1), so each
    pipeline runs ``m = batch * p / gpus`` microbatches; each stage does ``1/p`` of the
    model's forward ``f_model`` and backward ``b_model``. 1F1B, no communication cost.
    """
    out: dict[int, Fraction] = {}
    for p in (1, 2, 4, 8, 16):
        if gpus % p:
            continue
        m = batch * p // gpus
        costs = bk.Costs(f=Fraction(f_model, p), b=Fraction(b_model, p))
        out[p] = Fraction(bk.simulate(bk.schedule("1f1b", p, m), costs).makespan)
    return out


register({
    # fixed_gpu_table's title, headers and note (lesson 09); column keys stay English
    "checks.l09.fixed_gpu.pipelines": {"en": "pipelines", "zh": "流水线条数"},
    "checks.l09.fixed_gpu.step": {"en": "step (slots)", "zh": "单步耗时（时间槽）"},
    "checks.l09.fixed_gpu.title": {"en": "{gpus} GPUs, {batch} sequences per step, micro-batch 1, 1F1B",
                                   "zh": "{gpus} 张 GPU，每步 {batch} 条序列，微批大小 1，1F1B"},
    "checks.l09.fixed_gpu.note": {"en": "the whole model costs F = {f}, B = {b} slots per sequence; each stage does 1/p of it",
                                  "zh": "整个模型每条序列耗时 F = {f}、B = {b} 个时间槽；每个流水级承担其中的 1/p"},
})


def fixed_gpu_table(gpus: int = 16, batch: int = 32, f_model: int = 16, b_model: int = 32) -> bk.Table:
    """:func:`fixed_gpu_step_times` as a table: ``p``, ``pipelines`` (``gpus / p``), ``m`` and the step time.

    Used in lesson 09 (misconception 2).
    """
    times = fixed_gpu_step_times(gpus, batch, f_model, b_model)
    rows = [{"p": p, "pipelines": gpus // p, "m": batch * p // gpus, "step": t} for p, t in times.items()]
    return bk.Table(
        rows, formats={"step": "decimal"},
        headers={"pipelines": tr("checks.l09.fixed_gpu.pipelines"), "step": tr("checks.l09.fixed_gpu.step")},
        title=tr("checks.l09.fixed_gpu.title", gpus=gpus, batch=batch),
        note=tr("checks.l09.fixed_gpu.note", f=f_model, b=b_model),
    )


@exercise("09.2", hint=("Simulate 1F1B for each p with m = 32 p / 16 microbatches and per-stage costs 16/p, 32/p.",
                        "Compare the simulated makespans of p = 1, 2, 4, 8, 16 and give the p (an int) with the "
                        "shortest step."))
def _e092() -> int:
    times = fixed_gpu_step_times()
    return min(times, key=lambda p: (times[p], p))


@exercise("09.3", hint=("Simulate zb-h2 and read bubble_ratio: idle over ranks x makespan, corners included.",
                        "bk.simulate(bk.schedule('zb-h2', 4, 8), bk.Costs(f=1, i=1, w=1)).bubble_ratio counts the "
                        "idle corners before each rank's first and after its last action."),
          fraction_of="the step",
          mistakes=(Mistake(lambda _e: published.stage_span_bubble_rate(_zb_h2()),
                            "that is the per-rank-span rate (zero inside each rank's span); this asks for idle over "
                            "ranks x makespan, the corners included"),))
def _e093() -> float:
    return _zb_h2().bubble_ratio


def _zb_h2() -> bk.SimResult:
    return bk.simulate(bk.schedule("zb-h2", 4, 8), bk.Costs(f=1, i=1, w=1))


@exercise("09.4", hint=("Every stage boundary between two ranks carries one activation and one gradient per microbatch.",
                        "With v = 2 there are p v = 8 stages: count the boundaries between consecutive stages that "
                        "sit on different ranks, then the messages over them."),
          mistakes=(Mistake(lambda e: e // 2, "that counts one direction only: gradients travel back over every "
                                              "boundary too"),
                    Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 4, 8)),
                            "that is plain 1F1B's count (p - 1 boundaries); interleaving adds boundaries")))
def _e094() -> int:
    return planner.hops_per_step(bk.schedule("interleaved", 4, 8, 2))


def _measured_ratio(hidden: int, seq: int) -> float:
    for cfg in load_h200_layer_costs()["configs"]:
        if cfg["hidden"] == hidden and cfg["seq"] == seq:
            layer = cfg["layer"]
            return float(layer["full_backward_ms"] / layer["F_ms"])
    raise KeyError((hidden, seq))


@exercise("09.5", hint=("Read the 'layer' entry of the h=4096, seq=8192 configuration: full_backward_ms / F_ms.",
                        "Pick the configuration with c['hidden'] == 4096 and c['seq'] == 8192, then divide its "
                        "layer's full_backward_ms by its F_ms."),
          rel_tol=1e-9,
          mistakes=(upside_down(),))
def _e095() -> float:
    return _measured_ratio(4096, 8192)


@exercise("09.6", hint=("DualPipeV puts 2p stages on p ranks in a V (rank r holds stages r and 2p-1-r). Count the "
                        "boundaries between consecutive stages that sit on different ranks.",
                        "With p = 4 the V has 8 stages and one of its 7 boundaries stays inside a rank; every "
                        "crossing boundary carries one activation forward and one gradient back per microbatch."),
          mistakes=(Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 4, 16)),
                            "that is 1F1B's count on the same 4 devices (p - 1 boundaries), or one direction only: "
                            "the V has 2p stages on p ranks"),
                    Mistake(lambda _e: planner.hops_per_step(bk.schedule("1f1b", 8, 16)),
                            "that is 1F1B's count on the same 8 stages, one per rank: in the V, two consecutive "
                            "stages share a rank")))
def _e096() -> int:
    return planner.hops_per_step(bk.schedule("dualpipev", 4, 16))
