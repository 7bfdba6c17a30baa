"""Live explorers (ipywidgets): move a slider, see the pipeline, its bubble and its memory.

Three explorers, all objects that tests (and notebooks) can drive by setting ``.value`` on
their controls, the way ipywidgets' own tests do::

    from bubblekit.presentation.explorers import pipeline_explorer, schedule_builder
    ex = pipeline_explorer("1f1b", p=4, m=8)
    ex                                   # displays the widget in Jupyter or Voila
    ex.controls["m"].value = 16          # redraws at once
    ex.result.bubble_ratio, ex.readouts["bubble_ratio"].value

* :func:`pipeline_explorer` -- schedule, ``p``, ``m``, ``v``, a cost preset, one slider per
  cost that :class:`~bubblekit.Costs` has (:data:`COST_CONTROLS`: F, B, I, W, latency) that
  overrides it, and a memory cap; shows the pipeline diagram above the memory curves, and
  readouts named by their convention (``bubble_ratio`` = idle / (p x makespan),
  ``bubble_overhead`` = idle / busy), the closed form where one exists, the makespan with
  its unit and the peak memory per rank. A compare mode puts a second schedule on the same
  time axis. The ``m`` slider only stops on values every shown schedule accepts (an ``m``
  a schedule refuses moves on to the next allowed one, and a note says why); the ``v``
  slider shows the ``v`` the shown schedules use.
* :func:`schedule_builder` -- write per-rank orders (``rank 0: 0F0 0F1 0B0 ...``), see the
  diagram, the simulator's legality message when the orders are illegal, and a score
  against GPipe and 1F1B for the same ``p`` and ``m``.
* :func:`frontier_explorer` -- every registered schedule at the same ``p``, ``m`` and costs
  as a point of bubble against peak memory, the memory/bubble frontier marked.

Units: times are in the cost preset's unit (abstract *slots*, or *ms* for the measured
H200 preset); memory is in *microbatch activations* (1.0 = what one microbatch leaves on a
rank holding its whole share of the model), plus bytes for the measured preset.

Pictures are drawn with matplotlib's Agg backend into one reused
:class:`~matplotlib.figure.Figure` (never registered with pyplot, so nothing leaks) and
shown as PNG bytes in an :class:`ipywidgets.Image`, which works the same in JupyterLab, in
Voila (``bubblekit classroom``) and in a headless browser test. Where matplotlib cannot be
imported (the browser edition on Pyodide, which has ipywidgets but no numpy or matplotlib) the
module still imports and every explorer draws SVG in pure Python (``picture="svg"``, then the
default), from the one drawing model of :mod:`~bubblekit.presentation.diagram` and
:mod:`~bubblekit.presentation.svg`: the pipeline explorer and the schedule builder their pipeline
diagram (:func:`~bubblekit.presentation.svg.pipeline_svg`; no memory curves, the peak readout
gives the memory), the frontier explorer its points and frontier as a chart
(:func:`~bubblekit.presentation.svg.line_chart_svg`). Bad input never raises out of a callback:
the library's own message is shown in the ``message`` readout.

**A picture before anything runs.** Displaying an explorer gives the widget and, beside it
in the same output, a still picture of its current state (``text/html``: the readouts and
the diagram as a PNG) with a line saying to run the cell for the sliders. A live front-end
shows the widget; a notebook opened without a kernel or without saved widget state (a
lesson as shipped, see ``scripts/execute_notebooks.py``; GitHub; an untrusted notebook)
shows the picture, never ``VBox(children=...)``.

**Layouts.** ``layout="presenter"`` draws larger letters and pictures for a projector
(``bubblekit classroom --presenter`` makes it the default of every explorer it serves, by
setting the environment variable :data:`PRESENTER_ENV` to ``1`` for its kernels).
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import math
import os
import re
import struct
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from bubblekit._validate import Number, check_choice
from bubblekit.compare import compare as compare_table
from bubblekit.costs import PRESETS, Costs
from bubblekit.costs import preset as cost_preset
from bubblekit.i18n import get_language, register, tr
from bubblekit.presentation.diagram import MARKERS, SERIES_COLORS, ChartSeries, costs_title
from bubblekit.presentation.svg import LineChart, SvgPicture, line_chart_svg, pipeline_svg
from bubblekit.schedules import (
    REGISTRY,
    Schedule,
    ScheduleError,
    ScheduleSpec,
    display_name,
    legal_ms,
    names,
    spec,
)
from bubblekit.schedules import schedule as build_schedule
from bubblekit.simulator import DeadlockError, SimResult, simulate
from bubblekit.text import counted, format_number, plural

if TYPE_CHECKING:  # matplotlib and numpy are imported where a PNG picture is drawn: the module (and the
    import numpy as np  # pipeline explorer's picture="svg") works without them (the browser edition)
    from matplotlib.figure import Figure

__all__ = [
    "pipeline_explorer",
    "PipelineExplorer",
    "schedule_builder",
    "ScheduleBuilder",
    "BuilderScore",
    "frontier_explorer",
    "FrontierExplorer",
    "COST_PRESETS",
    "COST_CONTROLS",
    "CostControl",
    "LAYOUTS",
    "PRESENTER_ENV",
    "PICTURES",
    "render_png",
]

register({
    # every label, tooltip and readout of the explorers, in both languages (read when an explorer is built or redrawn)
    "ex.schedule": {"en": "schedule", "zh": "调度"},
    "ex.schedule.tip": {"en": "the pipeline schedule", "zh": "流水线调度"},
    "ex.compare": {"en": "compare with", "zh": "对比"},
    "ex.compare.tip": {"en": "a second schedule on the same time axis", "zh": "在同一时间轴上对比的第二个调度"},
    "ex.p": {"en": "p (ranks)", "zh": "p（rank 数）"},
    "ex.p.tip": {"en": "pipeline stages = devices", "zh": "rank 数，即参与流水线的设备数"},
    "ex.m": {"en": "m (microbatches)", "zh": "m（微批数）"},
    "ex.m.tip": {"en": "microbatches per step; stops only on values the shown schedules accept",
                 "zh": "每步微批数；滑块只会停在当前调度允许的取值上"},
    "ex.m.tip_plain": {"en": "microbatches per step", "zh": "每步微批数"},
    "ex.v": {"en": "v (chunks/rank)", "zh": "v（每个 rank 的 chunk 数）"},
    "ex.card.ratio.name": {"en": "bubble_ratio = idle / (p × makespan)", "zh": "气泡比例 bubble_ratio = 空闲 / (p × 单步耗时)"},
    "ex.card.overhead.name": {"en": "bubble_overhead = idle / busy", "zh": "气泡开销 bubble_overhead = 空闲 / 忙碌"},
    "ex.v.tip": {"en": "stages per rank: interleaved 1F1B and looped BFS take v >= 2, V shapes (ZB-V, DualPipeV, ...) "
                        "and the bidirectional DualPipe 2, the others 1",
                 "zh": "每个 rank 上的 chunk 数：交错式 1F1B 和 looped BFS 取 v ≥ 2，V 形调度（ZB-V、DualPipeV 等）"
                       "和双向的 DualPipe 固定为 2，其余为 1"},
    "ex.v.tip_frontier": {"en": "stages per rank of interleaved 1F1B and looped BFS (V shapes and DualPipe hold 2)",
                          "zh": "交错式 1F1B 和 looped BFS 每个 rank 上的 chunk 数（V 形调度和 DualPipe 固定为 2）"},
    "ex.preset": {"en": "cost preset", "zh": "耗时预设"},
    "ex.none": {"en": "none", "zh": "无"},
    "ex.preset.tip": {"en": "uniform: F=B; b=2f: B=2F; f=i=w: split backward; h200: measured, ms",
                      "zh": "uniform：F=B；b=2f：B=2F；f=i=w：拆分反向；h200：实测，单位 ms"},
    "ex.cap": {"en": "memory cap", "zh": "显存上限"},
    "ex.cap.tip": {"en": "activation budget per rank, microbatch activations; 0 = no cap",
                   "zh": "每个 rank 的激活预算，单位：一个微批的激活；0 = 不设上限"},
    "ex.cost.f": {"en": "F (forward)", "zh": "F（前向）"},
    "ex.cost.f.tip": {"en": "forward time, one rank's share", "zh": "一个 rank 上一次前向的耗时"},
    "ex.cost.b": {"en": "B (backward)", "zh": "B（反向）"},
    "ex.cost.b.tip": {"en": "full backward time", "zh": "完整反向的耗时"},
    "ex.cost.i": {"en": "I (input grad)", "zh": "I（输入梯度）"},
    "ex.cost.i.tip": {"en": "input-gradient backward", "zh": "反向中计算输入梯度的部分"},
    "ex.cost.w": {"en": "W (weight grad)", "zh": "W（权重梯度）"},
    "ex.cost.w.tip": {"en": "weight-gradient backward", "zh": "反向中计算权重梯度的部分"},
    "ex.cost.comm": {"en": "comm latency", "zh": "通信延迟"},
    "ex.cost.comm.tip": {"en": "latency of one hop between ranks", "zh": "rank 之间一跳的延迟"},
    "ex.cost.comm.tip_unit": {"en": "latency of one hop between ranks, in the preset's unit",
                              "zh": "rank 之间一跳的延迟，单位同所选预设"},
    "ex.title.pipeline": {"en": "Pipeline bubble explorer", "zh": "流水线探索器"},
    "ex.group.schedule": {"en": "Schedule and memory", "zh": "调度与显存"},
    "ex.group.costs": {"en": "Costs (time per action)", "zh": "各动作耗时"},
    "ex.settings.other": {"en": ", compared with {other}", "zh": "，对比 {other}"},
    "ex.settings": {"en": "{name}, p = {p}, m = {m}, costs {preset}{other}",
                    "zh": "{name}，p = {p}，m = {m}，耗时预设 {preset}{other}"},
    "ex.settings.v": {"en": "{name}, p = {p}, m = {m}, v = {v}, costs {preset}{other}",
                      "zh": "{name}，p = {p}，m = {m}，v = {v}，耗时预设 {preset}{other}"},
    "ex.plain.pipeline": {"en": "Pipeline explorer ({settings}): run the cell to move its sliders.",
                          "zh": "流水线探索器（{settings}）：运行这个单元格即可拖动滑块。"},
    "ex.kind.pipeline": {"en": "pipeline explorer", "zh": "流水线探索器"},
    "ex.still": {"en": "▶ A still picture of the {kind} ({settings}): run this cell (Shift+Enter) to move its sliders.",
                 "zh": "▶ {kind}的静态截图（{settings}）：运行这个单元格（Shift+Enter）即可拖动滑块。"},
    "ex.unit_note": {"en": "{preset}; times in {unit}", "zh": "{preset}；时间单位：{unit}"},
    "ex.cap.none": {"en": "0 = no cap (no limit on activations per rank)", "zh": "0 = 不设上限（每个 rank 的激活不受限制）"},
    "ex.cap.some": {"en": "at most {cap} microbatch activations per rank: the dashed line in the memory panel",
                    "zh": "每个 rank 最多存 {cap} 个微批的激活（显存面板里的虚线）"},
    "ex.m.accepts": {"en": "{name} accepts {rule}.", "zh": "{name} 要求 {rule}。"},
    "ex.m.moved": {"en": "m = {m} is not allowed here ({reasons}; p = {p}), so the slider moved on to m = {target}. "
                         "Allowed here: m = {allowed}",
                   "zh": "当前调度不支持 m = {m}（{reasons}；现在 p = {p}），滑块已移到 m = {target}。可选的 m：{allowed}"},
    "ex.m.moved.end": {"en": "m = {m} is not allowed here ({reasons}; p = {p}), so the slider moved on to m = {target}. "
                             "Allowed here: m = {allowed}.",
                       "zh": "当前调度不支持 m = {m}（{reasons}；现在 p = {p}），滑块已移到 m = {target}。可选的 m：{allowed}。"},
    "ex.error.draw": {"en": "could not draw the picture ({error})", "zh": "无法绘图（{error}）"},
    "ex.error.compare": {"en": "compare schedule {name}: {error}", "zh": "对比调度 {name}：{error}"},
    # an explorer's own arguments (explorer(p=...), builder(m=...)): parameter names and values stay as typed
    "ex.arg.not_int": {"en": "{name} must be a whole number (int) between 1 and {hi} for the {where}, got {value}",
                       "zh": "{where}的 {name} 必须是 1 到 {hi} 之间的整数（int），收到的是 {value}"},
    "ex.arg.range": {"en": "{name} must be between 1 and {hi} for the {where} (its slider's range), got {value}",
                     "zh": "{where}的 {name} 必须在 1 到 {hi} 之间（即滑块的范围），收到的是 {value}"},
    "ex.arg.where.explorer": {"en": "explorer", "zh": "探索器"},
    "ex.arg.where.builder": {"en": "builder", "zh": "调度构建器"},
    "ex.arg.where.frontier_explorer": {"en": "frontier explorer", "zh": "显存–气泡前沿探索器"},
    "ex.arg.frontier_v": {"en": "v must be between 2 and 8 for the frontier explorer (the v of interleaved 1F1B "
                                "and looped BFS), got {value}",
                          "zh": "显存–气泡前沿探索器的 v 必须在 2 到 8 之间（交错式 1F1B 和 looped BFS 的 v），收到的是 {value}"},
    "ex.over_cap": {"en": "⚠ over the memory cap: {n} of {p} ranks hold more than {cap} microbatch activations "
                          "(rank {rank} peaks at {peak} microbatch activations). Fewer microbatches in flight bring the peak down: {advice}.",
                    "zh": "⚠ 超出显存上限：{p} 个 rank 中有 {n} 个超过上限（{cap} 个微批的激活），峰值最高达 {peak} 个微批的激活（rank {rank}）。"
                          "想降低峰值，就得减少同时驻留的微批：{advice}。"},
    "ex.over_cap.all": {"en": "⚠ over the memory cap: all {p} ranks hold more than {cap} microbatch activations "
                              "(rank {rank} peaks at {peak} microbatch activations). Fewer microbatches in flight bring the peak down: {advice}.",
                        "zh": "⚠ 超出显存上限：{p} 个 rank 全部超过上限（{cap} 个微批的激活），峰值最高达 {peak} 个微批的激活（rank {rank}）。"
                              "想降低峰值，就得减少同时驻留的微批：{advice}。"},
    # the advice follows the schedules' memory rules (the registry's peak(p, m, v)): a smaller m only where
    # the peak grows with m, another schedule only where one holds fewer
    "ex.over_cap.schedule": {"en": "a schedule that holds fewer ({name}: at most {peak})",
                             "zh": "换用驻留更少的调度（{name} 最多 {peak} 个）"},
    "ex.over_cap.smaller_m": {"en": "a smaller m ({name}'s peak grows with m)", "zh": "减小 m（{name} 的峰值随 m 增长）"},
    "ex.over_cap.recompute": {"en": "activation recomputation (the explorer has no switch for it: see lesson 05, "
                                     "or memory_per_rank(..., recompute=...))",
                              "zh": "改用激活重算（探索器里没有这个开关：见第 05 课，或 API 的 "
                                    "memory_per_rank(..., recompute=...)）"},
    "ex.over_cap.or": {"en": " or ", "zh": "，或者"},
    "ex.formula.name": {"en": "closed form", "zh": "公式值"},
    "ex.formula.none": {"en": "not given here for {name}; simulated only",
                        "zh": "{name}：这里不给公式，只给模拟结果"},
    "ex.formula.none_small_m": {"en": "not given here for {name} when m < p; simulated only",
                                "zh": "{name} 在 m < p 时没有闭式解，这里只给模拟结果"},
    "ex.formula.agree": {"en": "= simulated ✓", "zh": "= 模拟结果 ✓"},
    "ex.formula.differ": {"en": "≠ simulated: it assumes equal stages, no latency",
                          "zh": "≠ 模拟结果：闭式解假设各流水级耗时相等、没有通信延迟"},
    "ex.formula.title": {"en": "closed form bubble_ratio {formula}", "zh": "公式值 bubble_ratio {formula}"},
    "ex.card.ratio.note": {"en": "{ratio:.1%} of device-time idle (simulated)", "zh": "{ratio:.1%} 的设备时间在空等（模拟值）"},
    "ex.card.overhead.note": {"en": "Megatron's convention (simulated)", "zh": "Megatron 口径（模拟值）"},
    "ex.card.makespan": {"en": "makespan (one step)", "zh": "单步耗时"},
    "ex.card.makespan.short": {"en": "makespan", "zh": "单步耗时"},
    "ex.card.utilization": {"en": "utilization {u:.1%}", "zh": "利用率 {u:.1%}"},
    "ex.peak.bytes": {"en": " (max {gib:.2f} GiB per rank, measured bytes)", "zh": "（按实测字节数，峰值最高的 rank 约 {gib:.2f} GiB）"},
    "ex.peak.title": {"en": "<b>peak memory per rank</b> (microbatch activations, curves below): {ranks}{extra}",
                      "zh": "<b>每个 rank 的显存峰值</b>（单位：一个微批的激活，曲线见下图）：{ranks}{extra}"},
    "ex.peak.title_no_curves": {"en": "<b>peak memory per rank</b> (microbatch activations): {ranks}{extra}",
                                "zh": "<b>每个 rank 的显存峰值</b>（单位：一个微批的激活）：{ranks}{extra}"},
    "ex.costs": {"en": "costs: {costs}", "zh": "耗时：{costs}"},
    # the costs in Chinese words (costs.describe() in English): "F = 1，B = 2，通信延迟 = 0（单位：时间槽）"
    "ex.costs.unit": {"en": " ({unit})", "zh": "（单位：{unit}）"},
    "ex.panel.title": {"en": "{name}  (p={p}, m={m}{v}; {costs})", "zh": "{name}：p = {p}，m = {m}{v}；耗时 {costs}"},
    "ex.costs.changed": {"en": "{base}, changed: {fields}", "zh": "{base}，已改：{fields}"},
    # the changed fields by their sliders' names (English: the field names, f, b, comm, ...)
    "ex.costs.field.comm": {"en": "comm", "zh": "通信延迟"},
    "ex.rel.same": {"en": "the same time as {main}", "zh": "和{main}相同"},
    "ex.rel.longer": {"en": "{d:.1%} longer than {main}", "zh": "比{main}慢 {d:.1%}"},
    "ex.rel.shorter": {"en": "{d:.1%} shorter than {main}", "zh": "比{main}快 {d:.1%}"},
    "ex.compare.line": {"en": "<b>{other}</b> (lower panel): bubble_ratio {ratio:.4f}, bubble_overhead {overhead:.4f}, "
                              "makespan {makespan} {unit} ({rel}), peak {peak} microbatch activations.",
                        "zh": "<b>{other}</b>（下方面板）：气泡比例 {ratio:.4f}，气泡开销 {overhead:.4f}，"
                              "单步耗时 {makespan} {unit}（{rel}），显存峰值 {peak} 个微批的激活。"},
    "ex.title.builder": {"en": "Schedule builder", "zh": "调度构建器"},
    "ex.builder.p.tip": {"en": "ranks of the templates; an unedited template follows p", "zh": "模板的 rank 数；未修改的模板会随 p 更新"},
    "ex.builder.m.tip": {"en": "microbatches every rank must run; an unedited template follows m",
                         "zh": "每个 rank 必须运行的微批数；未修改的模板会随 m 更新"},
    "ex.builder.check": {"en": "check", "zh": "检查"},
    "ex.builder.load": {"en": "load {name}", "zh": "载入 {name}"},
    "ex.builder.settings": {"en": "p = {p}, m = {m}, costs {preset}", "zh": "p = {p}，m = {m}，耗时预设 {preset}"},
    "ex.plain.builder": {"en": "Schedule builder ({settings}): run the cell to write and check a schedule.",
                         "zh": "调度构建器（{settings}）：运行这个单元格即可编写并检查调度。"},
    "ex.kind.builder": {"en": "schedule builder", "zh": "调度构建器"},
    "ex.builder.deadlock": {"en": "deadlock", "zh": "死锁"},
    "ex.builder.illegal": {"en": "illegal schedule", "zh": "调度不合法"},
    "ex.builder.title": {"en": "your schedule (p={p}, m={m}; {costs})", "zh": "你的调度：p = {p}，m = {m}；耗时 {costs}"},
    "ex.builder.legal": {"en": "✓ legal schedule: p={p}, m={m}, v={v}, {n} actions", "zh": "✓ 合法调度：p = {p}，m = {m}，v = {v}，共 {n} 个动作"},
    "ex.builder.yours": {"en": "yours", "zh": "你的调度"},
    "ex.builder.overhead": {"en": "bubble_overhead (idle / busy) {overhead:.4f}", "zh": "气泡开销 bubble_overhead（空闲 / 忙碌）：{overhead:.4f}"},
    "ex.builder.peak": {"en": "<b>peak memory per rank</b> (microbatch activations): ", "zh": "<b>每个 rank 的显存峰值</b>（单位：一个微批的激活）："},
    "ex.builder.same": {"en": "matches {name} (the same orders, action for action)", "zh": "与 {name} 完全一致（每个动作的顺序都相同）"},
    "ex.builder.matches": {"en": "matches {name} (same makespan and peak memory)", "zh": "与 {name} 等效（单步耗时和显存峰值都相同）"},
    "ex.builder.fast_but": {"en": "as fast as the best ({best}) but peaks at {mine} microbatch activations instead of {theirs}",
                            "zh": "和 {best} 一样快，但显存峰值是 {mine} 个微批的激活，它只要 {theirs} 个"},
    "ex.builder.slower": {"en": "{pct:.1f}% slower than the best ({best})", "zh": "比内置调度中最快的 {best} 慢 {pct:.1f}%"},
    "ex.builder.faster": {"en": "{pct:.1f}% faster than every built-in compared (best: {best})",
                          "zh": "比所有参与对比的内置调度都快 {pct:.1f}%（其中最好的是 {best}）"},
    # the score line: English puts a space after its colon, Chinese a full-width colon and none
    "ex.builder.score.line": {"en": "<b>Score:</b> {verdict}", "zh": "<b>评分：</b>{verdict}"},
    "ex.builder.table.ratio": {"en": "bubble_ratio", "zh": "气泡比例"},
    # the builder's still says what the builder is for: its text is edited, not only its sliders moved
    "ex.still.builder": {"en": "▶ A still picture of the schedule builder ({settings}): run this cell (Shift+Enter) "
                               "to move its sliders.",
                         "zh": "▶ 调度构建器的静态截图（{settings}）：运行这个单元格（Shift+Enter）后，就能编辑动作顺序，再点“检查”验证。"},
    "ex.builder.table.makespan": {"en": "makespan ({unit})", "zh": "单步耗时（{unit}）"},
    "ex.builder.table.peak": {"en": "peak memory (microbatch act.)", "zh": "显存峰值（单位：一个微批的激活）"},
    "ex.title.frontier": {"en": "Memory / bubble frontier", "zh": "显存–气泡前沿"},
    "ex.frontier.settings": {"en": "p = {p}, m = {m}, v = {v}, costs {preset}", "zh": "p = {p}，m = {m}，v = {v}，耗时预设 {preset}"},
    "ex.plain.frontier": {"en": "Memory/bubble frontier ({settings}): run the cell to move its sliders.",
                          "zh": "显存–气泡前沿（{settings}）：运行这个单元格即可拖动滑块。"},
    "ex.kind.frontier": {"en": "memory/bubble frontier", "zh": "显存–气泡前沿"},
    "ex.frontier.on": {"en": "<b>On the frontier</b> (no other schedule needs at most as much memory and as much bubble, "
                             "and less of one), least memory first: {names}",
                       "zh": "<b>帕累托前沿上的调度</b>（没有别的调度能在显存和气泡上都不输给它、还至少赢一项），"
                             "按显存从少到多：{names}"},
    "ex.frontier.skipped": {"en": "Not shown at this m: {what}", "zh": "在这个 m 下未显示：{what}"},
    "ex.frontier.point.on": {"en": "{name}  (on the frontier)", "zh": "{name}（在帕累托前沿上）"},
    "ex.frontier.label": {"en": "frontier", "zh": "帕累托前沿"},
    "ex.frontier.xlabel": {"en": "peak activations per rank (microbatch activations)", "zh": "激活峰值（各 rank 中最大，单位：一个微批的激活）"},
    "ex.frontier.ylabel": {"en": "bubble_ratio (%)\n= idle ÷ (p × makespan)", "zh": "气泡比例（%）\n= 空闲 / (p × 单步耗时)"},
    "ex.frontier.title": {"en": "Bubble against memory: p={p}, m={m}, v={v} (interleaved, looped BFS)\n{costs}",
                          "zh": "气泡与显存：p = {p}，m = {m}，v = {v}（滑块的 v 只作用于交错式 1F1B 和 looped BFS；"
                                "V 形调度和 DualPipe 固定为 2）\n{costs}"},
})



#: Cost presets offered by the explorers (see :func:`bubblekit.preset`).
COST_PRESETS: tuple[str, ...] = (*PRESETS, "h200")

_NONE = "none"

#: Pixels per inch of the PNG sent to the browser (figures are 12 in wide: 960 px), legible
#: when projected and quick to draw; see ``benchmarks/bench_explorer.py``.
DPI = 80
#: Pixels per inch in the presenter layout (1200 px wide, with larger letters).
PRESENTER_DPI = 100
_WIDTH_IN = 12.0

#: The explorers' layouts: ``"notebook"`` (default) and ``"presenter"`` (large letters for a projector).
LAYOUTS: tuple[str, ...] = ("notebook", "presenter")
#: Environment variable: ``1`` makes ``"presenter"`` the default layout (``bubblekit classroom --presenter``).
PRESENTER_ENV = "BUBBLEKIT_PRESENTER"
#: How the explorers draw (``picture=``): ``"png"`` (matplotlib, the default where it imports) or
#: ``"svg"`` (pure Python, the default where it does not: the browser edition).
PICTURES: tuple[str, ...] = ("png", "svg")


def _default_picture() -> str:
    """``"png"`` where matplotlib and numpy import, else ``"svg"`` (the browser edition)."""
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        return "svg"
    return "png"

_CSS = """
<style>
.bk-explorer { font-size: 15px; }
.bk-explorer .widget-label, .bk-explorer .widget-readout, .bk-explorer .widget-html-content { font-size: 15px; }
.bk-explorer .bk-group { font-size: 15px; font-weight: 600; color: #333; }
.bk-card { border: 1px solid #d0d0d0; border-radius: 6px; padding: 4px 10px; margin: 2px;
           background: #fafafa; min-width: 150px; display: inline-block; vertical-align: top; }
.bk-card .bk-name { font-size: 12px; color: #555; }
.bk-card .bk-value { font-size: 22px; font-weight: 600; color: #111; }
.bk-card .bk-note { font-size: 12px; color: #555; }
.bk-msg-error { color: #a00000; background: #fff3f3; border: 1px solid #e0a0a0; border-radius: 6px;
                padding: 6px 10px; white-space: pre-wrap; font-family: monospace; font-size: 14px; }
.bk-msg-warn { color: #7a4d00; background: #fff8e6; border: 1px solid #e6c27a; border-radius: 6px;
               padding: 6px 10px; font-size: 15px; }
.bk-msg-note { color: #1d3f66; background: #eef5fc; border: 1px solid #a9c6e6; border-radius: 6px;
               padding: 6px 10px; font-size: 15px; }
.bk-msg-ok { color: #225522; font-size: 14px; }
.bk-hint { font-size: 13px; color: #555; margin: 0 0 4px 150px; }
.bk-control-text textarea { font-family: monospace; font-size: 15px; white-space: pre; overflow-wrap: normal; }
.bk-score table, .bk-table table { border-collapse: collapse; font-size: 15px; }
.bk-score td, .bk-score th, .bk-table td, .bk-table th { padding: 2px 10px; border-bottom: 1px solid #ddd;
                                                        text-align: right; }
.bk-score th:first-child, .bk-score td:first-child, .bk-table th:first-child, .bk-table td:first-child {
  text-align: left; }
.bk-static img { max-width: 100%; height: auto; }
.bk-static .bk-run { font-size: 14px; color: #1d3f66; background: #eef5fc; border: 1px solid #a9c6e6;
                     border-radius: 6px; padding: 4px 10px; margin: 4px 0; display: inline-block; }
.bk-presenter, .bk-presenter .widget-label, .bk-presenter .widget-readout, .bk-presenter select,
.bk-presenter button, .bk-presenter .bk-msg-warn, .bk-presenter .bk-msg-note,
.bk-presenter .widget-html-content, .bk-presenter .bk-group { font-size: 21px; }
.bk-presenter .widget-slider, .bk-presenter .widget-dropdown { height: 36px; }
.bk-presenter .bk-card .bk-name, .bk-presenter .bk-card .bk-note, .bk-presenter .bk-hint { font-size: 17px; }
.bk-presenter .bk-card .bk-value { font-size: 32px; }
.bk-presenter .bk-score table, .bk-presenter .bk-table table { font-size: 20px; }
.bk-presenter .bk-control-text textarea { font-size: 20px; }
.bk-presenter h2 { font-size: 30px; }
</style>
"""


# ----------------------------------------------------------------------------- helpers
def _exact(x: float) -> Number:
    """A slider's float as an exact int/Fraction when it is one with a small denominator.

    Keeps simulations of textbook costs exact (``1.0`` -> ``1``, ``0.25`` -> ``1/4``);
    measured values (``2.734175...`` ms) stay floats.
    """
    q = Fraction(x).limit_denominator(1000)
    if abs(float(q) - x) > 1e-12:
        return float(x)
    return q.numerator if q.denominator == 1 else q


def _field_name(key: str) -> str:
    """A changed cost field as the explorer names it: ``comm`` is 通信延迟 in Chinese, F, B, I, W are letters."""
    return tr("ex.costs.field.comm") if key == "comm" else key


def _over_cap_advice(s: Schedule) -> str:
    """What brings the peak of ``s`` down, from the schedules' memory rules (the registry's ``peak``):
    another schedule that holds fewer at this ``p`` and ``m`` (1F1B first, else the one holding fewest),
    a smaller ``m`` only where one microbatch fewer lowers the peak (GPipe, looped BFS, m <= p), and
    activation recomputation always."""
    options: list[str] = []
    own = REGISTRY.get(s.name)
    mine = own.peak(s.p, s.m, s.v) if own is not None and own.peak is not None else None
    if mine is not None:
        fewer: list[tuple[float, int, str, Any]] = []
        for k, (name, entry) in enumerate(REGISTRY.items()):
            if name == s.name or entry.peak is None or entry.m_problem is not None and entry.m_problem(s.p, s.m):
                continue
            v = max(s.v, 2) if entry.chunks == "many" else (2 if entry.chunks == "two" else 1)
            pk = entry.peak(s.p, s.m, v)
            if float(pk) < float(mine) - 1e-9:
                fewer.append((0.0 if name == "1f1b" else float(pk), k, name, pk))
        if fewer:
            _, _, name, pk = min(fewer)
            options.append(tr("ex.over_cap.schedule", name=display_name(name), peak=format_number(pk, 3, fractions=False)))
        if s.m > 1 and float(own.peak(s.p, s.m - 1, s.v)) < float(mine) - 1e-9:  # type: ignore[union-attr,misc]
            options.append(tr("ex.over_cap.smaller_m", name=display_name(s.name)))
    options.append(tr("ex.over_cap.recompute"))
    if len(options) == 1:
        return options[0]
    return ("、" if _zh() else ", ").join(options[:-1]) + tr("ex.over_cap.or") + options[-1]


def _same(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float, Fraction)) and isinstance(b, (int, float, Fraction)) and math.isclose(
        float(a), float(b), rel_tol=1e-9, abs_tol=1e-12
    )


def _card(name: str, value: str, note: str = "") -> str:
    note_html = f'<div class="bk-note">{note}</div>' if note else ""
    return f'<div class="bk-card"><div class="bk-name">{name}</div><div class="bk-value">{value}</div>{note_html}</div>'


def _error_html(text: str) -> str:
    return f'<div class="bk-msg-error">{html.escape(text)}</div>'


def _check_size(name: str, value: Any, hi: int, where: str) -> None:
    """``value`` must be an int in 1..hi (the slider's range): TypeError / ValueError naming it otherwise."""
    place = tr(f"ex.arg.where.{where.replace(' ', '_')}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(tr("ex.arg.not_int", name=name, hi=hi, where=place, value=repr(value)))
    if not 1 <= value <= hi:
        raise ValueError(tr("ex.arg.range", name=name, hi=hi, where=place, value=repr(value)))


def _picture(picture: str | None) -> str:
    """The ``picture=`` of an explorer, checked: ``"png"``, ``"svg"``, or ``None`` for :func:`_default_picture`."""
    return str(check_choice("picture", _default_picture() if picture is None else picture, PICTURES))


def _svg_view() -> widgets.HTML:
    """The widget an explorer with ``picture="svg"`` shows its picture in (the SVG's text as HTML)."""
    view = widgets.HTML(value="", layout=widgets.Layout(width="100%", max_width="1200px"))
    view.add_class("bk-figure")
    return view


def _check_layout(layout: str | None) -> str:
    """``layout`` checked, or the default: ``"presenter"`` when :data:`PRESENTER_ENV` is ``1``."""
    if layout is None:
        return "presenter" if os.environ.get(PRESENTER_ENV, "").strip() == "1" else "notebook"
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    return layout


def render_png(fig: Figure, dpi: float | None = None, *, compress: int = 1) -> bytes:
    """PNG bytes of ``fig`` at ``dpi`` (default :data:`DPI`), Agg.

    ``compress`` is zlib's level: 1 (default, fast) for what the explorers send on every
    move; 9 for the still pictures stored in notebooks. An opaque picture (every explorer's)
    is stored as RGB, a quarter fewer bytes to encode, send and decode than RGBA.
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    old = fig.dpi
    fig.set_dpi(dpi or DPI)
    try:
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())  # type: ignore[attr-defined]
        return _png(rgba[..., :3] if bool((rgba[..., 3] == 255).all()) else rgba, compress)
    finally:
        fig.set_dpi(old)


def _png(pixels: np.ndarray, level: int) -> bytes:
    """A PNG file of ``pixels`` (rows top-down, uint8 RGB or RGBA), rows unfiltered, zlib ``level``.

    Pillow's encoder tries its five row filters on every row; for these flat-coloured
    diagrams no filter compresses about as well and encodes 2-3 times faster (``benchmarks/
    bench_explorer.py --breakdown``).
    """
    import numpy as np

    h, w, channels = pixels.shape
    rows = np.zeros((h, w * channels + 1), dtype=np.uint8)  # each row: filter type 0, then its bytes
    rows[:, 1:] = pixels.reshape(h, w * channels)

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    header = struct.pack(">IIBBBBB", w, h, 8, 6 if channels == 4 else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), level))
            + chunk(b"IEND", b""))


def _new_figure(what: str) -> Figure:
    """The explorer's reused figure; ``what`` (the explorer) is named when matplotlib cannot be imported."""
    try:
        from matplotlib.figure import Figure

        from bubblekit.presentation.textcache import TextCacheCanvas
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("matplotlib", "numpy"):
            raise
        from bubblekit.presentation.svg_plotting import needs_matplotlib

        raise needs_matplotlib(what) from error
    fig = Figure(figsize=(_WIDTH_IN, 6.0))  # fixed margins: a layout engine would double the draw time
    TextCacheCanvas(fig)  # Agg, each distinct text rasterized once (text was 80 % of a redraw)
    return fig


#: Fixed layout in inches at the notebook's 12-point letters (a layout engine would double
#: the draw time): left margin (rank names, memory label), right margin (the legends plotting
#: puts outside the axes), space above a panel (its two-line title) and below it (tick labels
#: and the time label). The presenter layout scales them with its letters.
_LEFT_IN, _RIGHT_IN, _TITLE_IN, _XLABEL_IN = 1.25, 2.75, 0.62, 0.55


@dataclass(frozen=True)
class _Look:
    """Sizes of one layout: the course style's font size (points) and how much larger than the notebook's."""

    name: str
    font_size: float
    scale: float

    @property
    def dpi(self) -> float:
        return float(PRESENTER_DPI if self.name == "presenter" else DPI)


def _look(layout: str) -> _Look:
    return _Look("presenter", 16.0, 16.0 / 12.0) if layout == "presenter" else _Look("notebook", 12.0, 1.0)


def _pipeline_height(p: int, scale: float = 1.0) -> float:
    """Height in inches of a pipeline panel with ``p`` rank rows."""
    return (0.5 + 0.36 * p) * scale


def _positions(fig: Figure, heights: Sequence[float], scale: float = 1.0,
               left_extra_in: float = 0.0) -> list[tuple[float, float, float, float]]:
    """Resize ``fig`` for full-width panels of ``heights`` inches, top to bottom; their positions.

    ``left_extra_in`` widens the left margin (a placement strip beside the rank names).
    """
    title, xlabel = _TITLE_IN * scale, _XLABEL_IN * scale
    left, right = _LEFT_IN * scale + left_extra_in, _RIGHT_IN * scale
    total = sum(h + title + xlabel for h in heights) + 0.1
    fig.set_size_inches(_WIDTH_IN, total)
    out = []
    top = total - 0.1
    x0, w = left / _WIDTH_IN, 1 - (left + right) / _WIDTH_IN
    for h in heights:
        top -= title
        out.append((x0, (top - h) / total, w, h / total))
        top -= h + xlabel
    return out


def _stack_axes(fig: Figure, heights: Sequence[float], scale: float = 1.0, left_extra_in: float = 0.0) -> list[Any]:
    """Resize ``fig`` and add one full-width Axes per height (inches), top to bottom."""
    import matplotlib

    # a fixed title height skips matplotlib's title-vs-ticks overlap search at every draw
    with matplotlib.rc_context({"axes.titley": 1.0}):
        return [fig.add_axes(pos) for pos in _positions(fig, heights, scale, left_extra_in)]


def _place_axes(fig: Figure, axes: Sequence[Any], heights: Sequence[float], scale: float = 1.0,
                left_extra_in: float = 0.0) -> None:
    """Resize ``fig`` and move existing ``axes`` to the panel positions for ``heights``."""
    for ax, pos in zip(axes, _positions(fig, heights, scale, left_extra_in)):
        ax.set_position(pos)


def _strip(ax: Any) -> None:
    """Remove what the plotting functions drew on ``ax`` but keep the Axes and its ticks.

    Recreating axes (and their tick objects) costs ~20% of a redraw; the next
    ``plot_pipeline`` / ``plot_memory`` call sets limits, ticks, labels and title again.
    ``tests/test_explorers.py`` checks the result is the same picture as on fresh axes.
    """
    for group in (ax.collections, ax.patches, ax.lines, ax.texts, ax.images, ax.artists):
        for artist in list(group):
            artist.remove()
    legend = ax.get_legend()
    if legend is not None:
        legend.remove()
    ax.set_title("")
    ax.set_title("", loc="left")
    ax.set_title("", loc="right")
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.relim()
    ax.set_autoscale_on(True)


def _line_styles(ax: Any) -> dict[int, tuple[str, str]]:
    """Colour (hex) and line style of each rank's memory curve, read from the drawn lines."""
    from matplotlib.colors import to_hex

    out: dict[int, tuple[str, str]] = {}
    for line in ax.get_lines():
        gid = line.get_gid() or ""
        if gid.startswith("memory-rank-") and gid[12:].isdigit():
            out[int(gid[12:])] = (to_hex(line.get_color()), str(line.get_linestyle()))
    return out


def _rank_chip(rank: int, style: tuple[str, str] | None) -> str:
    """A short line in the rank's memory-curve colour and dash, as inline SVG."""
    if style is None:
        return ""
    color, ls = style
    dash = {"--": "6,3", "-.": "6,2,2,2", ":": "2,2"}.get(ls, "")
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<svg width="22" height="10" style="vertical-align:middle;margin-right:4px"><line x1="0" y1="5" x2="22" y2="5" '
            f'stroke="{color}" stroke-width="3"{dash_attr}/></svg>')


def _zh() -> bool:
    """True when the explorers write Chinese: the punctuation between their numbers follows it."""
    return get_language() == "zh"


def _costs_text(costs: Costs, split: bool = True) -> str:
    """The costs as the explorers show them: :meth:`Costs.describe` (``F=1 B=2 comm=0 slot``; in Chinese
    ``F = 1，B = 2，通信延迟 = 0（单位：时间槽）``, the latency named as its slider is), exact fractions as
    decimals (``comm=0.5``), as the sliders show them."""
    return costs.describe(split=split, fractions=False)


def _panel_title(x: SimResult) -> str:
    s = x.schedule
    v = ("，v = " if _zh() else ", v=") + str(s.v) if s.v > 1 else ""
    return tr("ex.panel.title", name=display_name(s.name), p=s.p, m=s.m, v=v,
              costs=_costs_text(x.costs, split=s.split_backward))


@contextmanager
def _style(look: _Look | None = None) -> Iterator[None]:
    """The course style, applied only while an explorer draws (global rcParams are restored)."""
    import matplotlib

    from bubblekit.presentation import plotting

    with matplotlib.rc_context():
        plotting.use_course_style(font_size=(look or _look("notebook")).font_size)
        yield


def _slider(kind: str, key: str, description: str, value: float, lo: float, hi: float, step: float,
            fmt: str = ".2f", tooltip: str = "") -> widgets.Widget:
    common: dict[str, Any] = dict(
        description=description, value=value, min=lo, max=hi, step=step, continuous_update=False,
        style={"description_width": "145px"}, layout=widgets.Layout(width="360px"), tooltip=tooltip,
    )
    w: widgets.Widget
    if kind == "int":
        w = widgets.IntSlider(**common)
    else:
        w = widgets.FloatSlider(readout_format=fmt, **common)
    w.add_class(f"bk-control-{key}")
    return w


def _schedule_label(name: str) -> str:
    """How a schedule menu shows ``name``: the registry name in English (what a learner types), the
    course's Chinese name in Chinese (``交错式 1F1B``); ``"none"`` is ``无``. The value stays ``name``."""
    if get_language() != "zh":
        return name
    return tr("ex.none") if name == _NONE else display_name(name)


def _dropdown(key: str, description: str, options: Sequence[str], value: str, tooltip: str = "",
              labels: Callable[[str], str] | None = None) -> widgets.Dropdown:
    """A menu of ``options`` (its values); ``labels`` gives each option's shown text (default: the value)."""
    pairs = [(labels(o), o) for o in options] if labels is not None else []
    shown: list[Any] = pairs if any(label != o for label, o in pairs) else list(options)
    w = widgets.Dropdown(
        description=description, options=shown, value=value,
        style={"description_width": "145px"}, layout=widgets.Layout(width="360px"), tooltip=tooltip,
    )
    w.add_class(f"bk-control-{key}")
    return w


def _readout(key: str) -> widgets.HTML:
    w = widgets.HTML(value="")
    w.add_class(f"bk-readout-{key}")
    return w


def _box_class(box: widgets.Box, look: _Look, *classes: str) -> widgets.Box:
    for c in ("bk-explorer", *classes):
        box.add_class(c)
    if look.name == "presenter":
        box.add_class("bk-presenter")
        for child in box.children:
            if isinstance(child, widgets.Image):
                child.layout.max_width = "none"
    return box


def _ranges(values: Sequence[int], limit: int = 14) -> str:
    """``1–8, 10, 12, 15, 16, 20, …``: sorted integers with runs of three or more joined."""
    parts: list[str] = []
    k = 0
    while k < len(values) and len(parts) < limit:
        j = k
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j - k >= 2:
            parts.append(f"{values[k]}–{values[j]}")
        else:
            parts.extend(str(x) for x in values[k:j + 1])
        k = j + 1
    sep = "、" if _zh() else ", "  # a Chinese list takes the enumeration comma
    return sep.join(parts[:limit]) + (f"{sep}…" if k < len(values) or len(parts) > limit else "")


def _overhead_formula(bubble_text: str) -> str:
    """The bubble_overhead (idle / busy) closed form that goes with a bubble_ratio closed form.

    ``b = (p−1)/(X+p−1)`` means ``idle / busy = b / (1 − b) = (p−1)/X``: ``"(p−1)/m"`` for
    GPipe and 1F1B, ``"(p−1)/(m·v)"`` for interleaving; any other form is left as ``b/(1−b)``.
    """
    mt = re.fullmatch(r"\((?P<n>[^()]+)\)/\((?P<d>.+)\+(?P=n)\)", bubble_text.strip())
    if mt is None:
        return "b/(1−b)"
    d = mt.group("d")
    return f"({mt.group('n')})/{d}" if re.fullmatch(r"\w+", d) else f"({mt.group('n')})/({d})"


def _still_png(fig: Figure, dpi: float) -> bytes:
    """``fig`` as a small PNG for notebooks: 256 colours (a diagram has far fewer), zlib level 9.

    About a third of the full-colour PNG's bytes (~70 kB for a two-schedule comparison).
    """
    from PIL import Image

    im = Image.open(io.BytesIO(render_png(fig, dpi))).convert("RGB")
    buf = io.BytesIO()
    im.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(buf, format="PNG", compress_level=9)
    return buf.getvalue()


def _static_html(kind: str, settings: str, look: _Look, fig: Figure | None, parts: Sequence[str],
                 still: str | None = None, svg: str | None = None) -> str:
    """A still picture of an explorer: a line saying how to get the live one, its readouts
    (``parts``, HTML) and the figure as a PNG (or ``svg``, an SVG picture's text, inline): what a
    notebook shows before its kernel has run the cell. ``still``: that line's own catalogue key
    (fields ``{settings}``), in place of the sliders' ``ex.still``."""
    cls = "bk-static bk-explorer" + (" bk-presenter" if look.name == "presenter" else "")
    if svg is not None:
        picture = f'<div class="bk-figure-static">{svg}</div>'
    else:
        assert fig is not None, "a still picture needs the figure or the SVG"
        png = base64.b64encode(_still_png(fig, look.dpi)).decode("ascii")
        colon = "：" if _zh() else ": "
        picture = (f'<img class="bk-figure-static" alt="{html.escape(kind)}{colon}{html.escape(settings)}" '
                   f'src="data:image/png;base64,{png}"/>')
    return (
        f'{_CSS}<div class="{cls}">'
        f'<div class="bk-run">{html.escape(tr(still, settings=settings) if still else tr("ex.still", kind=kind, settings=settings))}</div>'
        + "".join(f"<div>{x}</div>" for x in parts if x)
        + picture + "</div>"
    )


# ----------------------------------------------------------------------- cost controls
@dataclass(frozen=True)
class CostControl:
    """One cost slider of the pipeline explorer, bound to the field ``key`` of :class:`~bubblekit.Costs`.

    Attributes:
        key: the ``Costs`` field it sets (``"f"``, ``"comm"``, ...); also the control's key.
        description: the catalogue key of the slider's label (:mod:`bubblekit.i18n`; both languages registered).
        tooltip: the catalogue key of the one line shown on hover.
        uses: ``uses(entry)`` is True when a schedule (its registry entry) uses this cost;
            the slider is disabled when no schedule shown uses it.
        hi: the slider's largest value (it grows to twice a preset's value), in the preset's unit.
        step: the slider's step.
    """

    key: str
    description: str
    tooltip: str
    uses: Callable[[ScheduleSpec], bool] = lambda entry: True
    hi: float = 10.0
    step: float = 0.05


#: The explorer's cost sliders, in order. Only those whose ``key`` is a field of
#: :class:`~bubblekit.Costs` are shown, so a new kind of cost (e.g. the time of an overlapped
#: F&B pair) is one more line here once ``Costs`` has it. ``b`` on one side and ``i``/``w``
#: on the other are the two ways of pricing a backward: a full backward (``B``) for
#: schedules that do not split it, its input and weight parts for those that do.
COST_CONTROLS: tuple[CostControl, ...] = (
    CostControl("f", "ex.cost.f", "ex.cost.f.tip"),
    CostControl("b", "ex.cost.b", "ex.cost.b.tip", lambda e: not e.split_backward),
    CostControl("i", "ex.cost.i", "ex.cost.i.tip", lambda e: e.split_backward),
    CostControl("w", "ex.cost.w", "ex.cost.w.tip", lambda e: e.split_backward),
    CostControl("comm", "ex.cost.comm", "ex.cost.comm.tip", hi=4.0),
)
_SPLIT_KEYS = ("i", "w")


def _cost_controls() -> tuple[CostControl, ...]:
    """The entries of :data:`COST_CONTROLS` that :class:`~bubblekit.Costs` supports."""
    fields = {f.name for f in dataclasses.fields(Costs)}
    return tuple(c for c in COST_CONTROLS if c.key in fields)


def _cost_value(costs: Costs, key: str) -> float:
    value = getattr(costs, key)
    return float(value) if isinstance(value, (int, float, Fraction)) else 0.0


# ----------------------------------------------------------------------- the explorer
class PipelineExplorer:
    """Sliders for a schedule, its size and its costs; a live diagram, memory curves and readouts.

    Attributes:
        controls: widgets keyed ``"schedule"``, ``"p"``, ``"m"``, ``"v"``, ``"preset"``,
            one per :data:`COST_CONTROLS` entry (``"f"``, ``"b"``, ``"i"``, ``"w"``,
            ``"comm"``), ``"cap"``, ``"compare"``. Cost sliders are in the preset's unit
            (slots or ms); ``cap`` is in microbatch activations (0 = no cap); ``compare`` is
            ``"none"`` or a schedule name. ``m`` stops only on values every shown schedule
            accepts; ``v`` shows the chunks per rank the shown schedules use (1 and disabled
            for single-chunk schedules, 2 for V shapes).
        readouts: HTML widgets keyed ``"bubble_ratio"``, ``"bubble_overhead"``,
            ``"formula"``, ``"makespan"``, ``"peak"``, ``"costs"``, ``"compare"``, ``"cap"``,
            ``"message"``.
        figure: the matplotlib Figure drawn last (reused between redraws; ``None`` with ``picture="svg"``).
        image: the :class:`ipywidgets.Image` showing ``figure`` as PNG.
        picture: ``"png"`` (matplotlib's diagrams and memory curves as PNG in ``image``) or ``"svg"``
            (the pipeline diagram of :func:`bubblekit.presentation.svg.pipeline_svg` in ``svg_view``;
            no memory curves: the peak readout gives the memory).
        svg_view: the :class:`ipywidgets.HTML` showing ``svg`` with ``picture="svg"``.
        svg: the last :class:`~bubblekit.presentation.svg.SvgPicture` drawn (``None`` with ``picture="png"``).
        result: the main schedule's :class:`~bubblekit.SimResult`, ``None`` after an error.
        compare_result: the compared schedule's result, or ``None``.
        error: the library's message when the current settings are invalid, else ``None``.
        m_note: why ``m`` moved past a value a shown schedule refuses ("" when it did not).
        costs: the :class:`~bubblekit.Costs` simulated last.
        layout: ``"notebook"`` or ``"presenter"``.
        widget: the box to display.
        last_redraw_ms: wall time of the last update (simulate + draw + PNG), in ms.
    """

    def __init__(
        self,
        schedule: str = "1f1b",
        p: int = 4,
        m: int = 8,
        v: int = 2,
        preset: str = "b=2f",
        compare: str | None = None,
        layout: str | None = None,
        picture: str | None = None,
    ) -> None:
        all_names = names()
        self.picture = _picture(picture)
        schedule = spec(schedule).name
        compare = None if compare is None or compare == _NONE else spec(compare).name
        if preset not in COST_PRESETS:
            cost_preset(preset)  # raises the library's message
        for key, val, hi in (("p", p, 16), ("m", m, 64), ("v", v, 8)):
            _check_size(key, val, hi, "explorer")
        for name in (schedule, compare):
            if name is not None and REGISTRY[name].chunks == "many":
                REGISTRY[name].resolve_v(v)  # v=1 for interleaving: the library's message
        self.look = _look(_check_layout(layout))
        self.layout = self.look.name
        self._hold = 0
        self._dirty = False
        self._snapping = False
        self.figure: Figure | None = (_new_figure("bk.explorers.pipeline_explorer(picture='png')")
                                      if self.picture == "png" else None)
        self.result: SimResult | None = None
        self.compare_result: SimResult | None = None
        self.error: str | None = None
        self.m_note = ""
        self.costs: Costs | None = None
        self.last_redraw_ms = 0.0
        self._rank_styles: dict[int, tuple[str, str]] = {}
        self._axes: list[Any] = []
        self._left_extra = 0.0
        self._base = cost_preset(preset)
        self._v_chosen = v if v >= 2 else 2  # the learner's v for multi-chunk schedules
        self._cost_controls = _cost_controls()

        c: dict[str, widgets.Widget] = {}
        c["schedule"] = _dropdown("schedule", tr("ex.schedule"), all_names, schedule, tr("ex.schedule.tip"),
                                  labels=_schedule_label)
        c["compare"] = _dropdown("compare", tr("ex.compare"), [_NONE, *all_names], compare or _NONE,
                                 tr("ex.compare.tip"), labels=_schedule_label)
        c["p"] = _slider("int", "p", tr("ex.p"), p, 1, 16, 1, tooltip=tr("ex.p.tip"))
        c["m"] = _slider("int", "m", tr("ex.m"), m, 1, 64, 1, tooltip=tr("ex.m.tip"))
        c["v"] = _slider("int", "v", tr("ex.v"), v, 1, 8, 1, tooltip=tr("ex.v.tip"))
        c["preset"] = _dropdown("preset", tr("ex.preset"), COST_PRESETS, preset, tr("ex.preset.tip"))
        for ctl in self._cost_controls:
            c[ctl.key] = _slider("float", ctl.key, tr(ctl.description), _cost_value(self._base, ctl.key), 0.0,
                                 ctl.hi, ctl.step, tooltip=tr(ctl.tooltip))
        c["cap"] = _slider("float", "cap", tr("ex.cap"), 0.0, 0.0, 64.0, 0.5, ".1f", tooltip=tr("ex.cap.tip"))
        self.controls: dict[str, widgets.Widget] = c

        self.readouts: dict[str, widgets.HTML] = {
            k: _readout(k)
            for k in ("bubble_ratio", "bubble_overhead", "formula", "makespan", "peak", "costs", "compare", "cap",
                      "message")
        }
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1200px"))
        self.image.add_class("bk-figure")
        self.svg: SvgPicture | None = None
        self.svg_view = _svg_view()
        self._unit_note = widgets.HTML(value="")
        self.widget = self._layout()

        self._load_preset(preset)
        self._sync_enabled()
        self._snap_m(0)
        for key, w in c.items():
            w.observe(self._on_change(key), names="value")
        self.update()

    # ------------------------------------------------------------------ layout
    def _layout(self) -> widgets.Box:
        """Controls in two groups (wrapping on narrow screens), readouts, then the full-width picture."""
        c, r = self.controls, self.readouts
        title = widgets.HTML(_CSS + f"<h2 style='margin:4px 0'>{tr('ex.title.pipeline')}</h2>")
        width = "490px" if self.layout == "presenter" else "370px"

        def group(name: str, items: list[widgets.Widget]) -> widgets.VBox:
            head = widgets.HTML(f"<span class='bk-group'>{name}</span>")
            return widgets.VBox([head, *items], layout=widgets.Layout(width=width, margin="0 12px 6px 0"))

        costs = [c[ctl.key] for ctl in self._cost_controls]
        controls = widgets.HBox(
            [group(tr("ex.group.schedule"), [c["schedule"], c["compare"], c["p"], c["m"], c["v"], c["cap"], r["cap"]]),
             group(tr("ex.group.costs"), [c["preset"], self._unit_note, *costs])],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        if self.layout == "presenter":
            for w in c.values():
                w.layout.width = "480px"
                w.style.description_width = "190px"
        cards = widgets.HBox(
            [r["bubble_ratio"], r["bubble_overhead"], r["makespan"], r["formula"]],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        box = widgets.VBox([title, controls, cards, r["peak"], r["compare"], r["message"], self._view, r["costs"]])
        return _box_class(box, self.look, "bk-pipeline-explorer")

    @property
    def _view(self) -> widgets.DOMWidget:
        """The widget that shows the picture: the PNG image, or the SVG's HTML."""
        return self.svg_view if self.picture == "svg" else self.image

    def _settings(self) -> str:
        c = self.controls
        main, comp = c["schedule"].value, c["compare"].value
        other = tr("ex.settings.other", other=display_name(comp)) if comp != _NONE else ""
        fields = {"name": display_name(main), "p": c["p"].value, "m": c["m"].value, "preset": c["preset"].value,
                  "other": other}
        if any(REGISTRY[n].chunks != "one" for n in self._shown()):
            return tr("ex.settings.v", v=c["v"].value, **fields)
        return tr("ex.settings", **fields)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget for Jupyter and Voila, with a still picture beside it for viewers without
        one (a notebook opened before it runs) and a one-line text instead of the widget's repr."""
        bundle = dict(self.widget._repr_mimebundle_())
        r = self.readouts
        bundle["text/plain"] = tr("ex.plain.pipeline", settings=self._settings())
        bundle["text/html"] = _static_html(
            tr("ex.kind.pipeline"), self._settings(), self.look, self.figure,
            [r["bubble_ratio"].value + r["bubble_overhead"].value + r["makespan"].value + r["formula"].value,
             r["peak"].value, r["compare"].value, r["message"].value],
            svg=self.svg.svg if self.picture == "svg" and self.svg is not None else None,
        )
        return bundle

    # ---------------------------------------------------------------- batching
    @contextmanager
    def hold(self) -> Iterator[None]:
        """Change several controls, redraw once at the end (``with ex.hold(): ...``)."""
        if self._hold == 0:
            self.m_note = ""  # a new change: a note about an earlier move of m no longer applies
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
            if self._hold == 0 and self._dirty:
                self._dirty = False
                self.update()

    def _on_change(self, key: str) -> Callable[[Any], None]:
        def handler(change: Any) -> None:
            with self.hold():
                self._dirty = True
                if key == "preset":
                    self._load_preset(change["new"])
                if key in ("schedule", "compare"):
                    self._sync_enabled()
                if key == "v" and not self.controls["v"].disabled and self._chunks_chosen():
                    self._v_chosen = int(change["new"])
                if key in ("m", "p", "v", "schedule", "compare") and not self._snapping:
                    step = int(change["new"]) - int(change["old"]) if key == "m" else 0
                    self._snap_m(step)
                if key == "cap":
                    self._cap_note()

        return handler

    def _load_preset(self, name: str) -> None:
        """Set the cost sliders to the preset's values (they override it from then on)."""
        try:
            base = cost_preset(name)
        except (ValueError, TypeError, FileNotFoundError) as exc:
            self.error = str(exc)
            return
        self._base = base
        c = self.controls
        with self.hold():
            for ctl in self._cost_controls:
                val = _cost_value(base, ctl.key)
                c[ctl.key].max = max(ctl.hi, math.ceil(val * 2))
                c[ctl.key].value = val
        self._show_unit_note(costs_title(base))

    def _show_unit_note(self, title: str) -> None:
        """The note under the preset menu: the preset (with what the sliders changed) and its time unit."""
        unit = plural(self._base.unit)
        self._unit_note.value = f"<span class='bk-hint' style='margin:0'>{html.escape(tr('ex.unit_note', preset=title, unit=unit))}</span>"

    def _chunks_chosen(self) -> bool:
        """True when a shown schedule runs with the learner's ``v`` (interleaved 1F1B, looped BFS)."""
        return any(REGISTRY[n].chunks == "many" for n in self._shown())

    def _shown(self) -> list[str]:
        """The schedules on screen: the main one and the compared one."""
        c = self.controls
        return [n for n in (c["schedule"].value, c["compare"].value) if n != _NONE]

    def _sync_enabled(self) -> None:
        """Enable the controls the shown schedules use; ``v`` shows the v they run with."""
        c = self.controls
        shown = [REGISTRY[n] for n in self._shown()]
        with self.hold():
            if any(e.chunks == "many" for e in shown):
                c["v"].min = 2
                c["v"].value = self._v_chosen
                c["v"].disabled = False
            else:  # v is fixed: 2 for V shapes, 1 otherwise (shown, not the learner's choice)
                c["v"].min = 1
                c["v"].value = 2 if any(e.chunks == "two" for e in shown) else 1
                c["v"].disabled = True
            for ctl in self._cost_controls:
                c[ctl.key].disabled = not any(ctl.uses(e) for e in shown)
        self._cap_note()

    def _cap_note(self) -> None:
        cap = float(self.controls["cap"].value)
        self.readouts["cap"].value = (
            f"<div class='bk-hint'>{tr('ex.cap.none')}</div>" if cap <= 0 else
            f"<div class='bk-hint'>{tr('ex.cap.some', cap=format_number(cap, fractions=False))}</div>")

    # ------------------------------------------------------------------ m rule
    def _legal_ms(self) -> list[int]:
        """The ``m`` on the slider's range that every shown schedule accepts at the current ``p`` (and ``v``)."""
        c = self.controls
        p, hi = int(c["p"].value), int(c["m"].max)
        allowed: set[int] | None = None
        for name in self._shown():
            try:
                got = set(legal_ms(name, p, self._v_for(name), up_to=hi))
            except (ValueError, TypeError):  # settings the library refuses: update() shows its message
                return []
            allowed = got if allowed is None else allowed & got
        return sorted(allowed or ())

    def _snap_m(self, step: int) -> None:
        """Move ``m`` to an allowed value when a shown schedule refuses it, and say why.

        ``step`` is how the learner moved ``m`` (+1: to the right): the slider goes on in that
        direction to the next allowed ``m`` (or back, at the end of the range); after a change of
        schedule or ``p`` (``step`` 0) to the nearest allowed one (the larger on a tie).
        """
        c = self.controls
        m = int(c["m"].value)
        legal = self._legal_ms()
        if not legal or m in legal:
            return
        above = [x for x in legal if x > m]
        below = [x for x in legal if x < m]
        if step > 0:
            target = above[0] if above else below[-1]
        elif step < 0:
            target = below[-1] if below else above[0]
        else:
            cands = ([above[0]] if above else []) + ([below[-1]] if below else [])
            target = min(cands, key=lambda x: (abs(x - m), -x))
        p = int(c["p"].value)
        refusing = [n for n in self._shown() if not REGISTRY[n].allows(p, m, self._v_for(n))]
        reasons = " ".join(tr("ex.m.accepts", name=display_name(n), rule=REGISTRY[n].m_rule_text) for n in refusing)
        allowed = _ranges(legal)
        key = "ex.m.moved" if allowed.endswith("…") else "ex.m.moved.end"  # a list cut short ends without a stop
        note = tr(key, m=m, reasons=reasons.rstrip(".。"), p=p, target=target, allowed=allowed)
        self._snapping = True
        try:
            with self.hold():
                c["m"].value = target
        finally:
            self._snapping = False
        self.m_note = note  # after the move: starting a hold clears an older note

    # ------------------------------------------------------------------ model
    def _v_for(self, name: str) -> int | None:
        return int(self.controls["v"].value) if REGISTRY[name].chunks == "many" else None

    def _costs(self, split: bool) -> Costs:
        """The preset, with every slider that differs from it applied (times in its unit)."""
        c, base = self.controls, self._base
        vals = {ctl.key: float(c[ctl.key].value) for ctl in self._cost_controls}
        changed: dict[str, Any] = {}
        for key, val in vals.items():
            if key in ("b", *_SPLIT_KEYS) or _same(val, _cost_value(base, key)):
                continue
            changed[key] = _exact(val)
        if split:
            if not all(_same(vals[k], _cost_value(base, k)) for k in _SPLIT_KEYS):
                changed.update(b=None, **{k: _exact(vals[k]) for k in _SPLIT_KEYS})
        elif not _same(vals["b"], base.b):
            changed.update(b=_exact(vals["b"]), **{k: None for k in _SPLIT_KEYS})
        if not changed:
            return base
        costs = base.with_(**changed)
        return costs.with_(name=tr("ex.costs.changed", base=costs_title(base), fields=("、" if _zh() else ", ").join(_field_name(k) for k in sorted(changed))))

    def _simulate(self, name: str) -> SimResult:
        c = self.controls
        sched = build_schedule(name, int(c["p"].value), int(c["m"].value), self._v_for(name))
        return simulate(sched, self._costs(sched.split_backward))

    # ----------------------------------------------------------------- update
    def update(self) -> None:
        """Re-simulate and redraw from the controls; errors go to the ``message`` readout."""
        t0 = time.perf_counter()
        c, r = self.controls, self.readouts
        comp = c["compare"].value
        note = f'<div class="bk-msg-note">{html.escape(self.m_note)}</div>' if self.m_note else ""
        try:
            result = self._simulate(c["schedule"].value)
        except (ValueError, TypeError) as exc:  # ScheduleError and DeadlockError are ValueErrors
            self.result = self.compare_result = None
            self.error = str(exc)
            for key in ("bubble_ratio", "bubble_overhead", "formula", "makespan", "peak", "compare", "costs"):
                r[key].value = ""
            r["message"].value = note + _error_html(self.error)
            self._view.layout.visibility = "hidden"
            self.last_redraw_ms = (time.perf_counter() - t0) * 1e3
            return
        self.error = None
        other: SimResult | None = None
        notes: list[str] = []
        if comp != _NONE:
            try:
                other = self._simulate(comp)
            except (ValueError, TypeError) as exc:
                self.error = tr("ex.error.compare", name=display_name(comp), error=exc)
        self.result, self.compare_result, self.costs = result, other, result.costs
        self._show_unit_note(costs_title(result.costs))  # a moved slider shows in the note: "…, changed: F"
        cap = float(c["cap"].value)
        # the picture first: the browser receives it before the numbers that describe it
        try:
            self._draw(result, other, cap if cap > 0 else None)
        except Exception as exc:  # a drawing bug must not leave a traceback in a classroom UI
            self.error = tr("ex.error.draw", error=f"{type(exc).__name__}: {exc}")
        self._readouts(result, other)
        over = [(k, pk) for k, pk in enumerate(result.peak_activations) if cap > 0 and pk > cap + 1e-9]
        if over:
            worst = max(over, key=lambda x: x[1])
            key = "ex.over_cap.all" if len(over) == result.p > 1 else "ex.over_cap"
            notes.append(tr(key, n=len(over), p=result.p, cap=format_number(cap, fractions=False),
                            rank=worst[0], peak=format_number(worst[1], 3, fractions=False),
                            advice=_over_cap_advice(result.schedule)))
        warn = "".join(f'<div class="bk-msg-warn">{html.escape(n)}</div>' for n in notes)
        r["message"].value = note + (_error_html(self.error) if self.error else "") + warn
        self._view.layout.visibility = "visible"
        self.last_redraw_ms = (time.perf_counter() - t0) * 1e3

    def _formula_card(self, res: SimResult) -> str:
        """The registry's closed form for the schedule shown, with the bubble_overhead that goes with it."""
        s = res.schedule
        cf = REGISTRY[s.name].closed_form(s.p, s.m, s.v) if s.name in REGISTRY else None
        if cf is None:  # a schedule with a closed form for m >= p only (interleaving) says so
            small_m = s.name in REGISTRY and REGISTRY[s.name].bubble is not None and s.m < s.p
            return _card(tr("ex.formula.name"), "—",
                         html.escape(tr("ex.formula.none_small_m" if small_m else "ex.formula.none",
                                        name=display_name(s.name))))
        val, text = cf
        agree = math.isclose(float(val), res.bubble_ratio, rel_tol=1e-9, abs_tol=1e-12)
        why = tr("ex.formula.agree") if agree else tr("ex.formula.differ")
        overhead = Fraction(val) / (1 - Fraction(val)) if val < 1 else None
        semi, lp, comma, rp = ("；", "（", "，", "）") if _zh() else ("; ", " (", ", ", ")")
        over = (f"{semi}bubble_overhead {_overhead_formula(text)} = {float(overhead):.4f}" if overhead is not None else "")
        return _card(tr("ex.formula.title", formula=text), f"{float(val):.4f}",
                     f"{why}{lp}p = {s.p}{comma}m = {s.m}{comma}v = {s.v}{rp}{over}")

    def _readouts(self, res: SimResult, other: SimResult | None) -> None:
        r, s = self.readouts, res.schedule
        r["bubble_ratio"].value = _card(
            tr("ex.card.ratio.name"), f"{res.bubble_ratio:.4f}",
            tr("ex.card.ratio.note", ratio=res.bubble_ratio))
        r["bubble_overhead"].value = _card(
            tr("ex.card.overhead.name"), f"{res.bubble_overhead:.4f}",
            tr("ex.card.overhead.note"))
        r["makespan"].value = _card(tr("ex.card.makespan"), f"{format_number(res.makespan, fractions=False)} {counted(res.unit)}",
                                    tr("ex.card.utilization", u=res.utilization))
        r["formula"].value = self._formula_card(res)
        peaks = res.peak_activations
        colon = "：" if _zh() else ": "
        per_rank = " &nbsp; ".join(
            f"<span style='white-space:nowrap'>{_rank_chip(k, self._rank_styles.get(k))}rank {k}{colon}"
            f"<b>{format_number(pk, 3, fractions=False)}</b></span>" for k, pk in enumerate(peaks))
        extra = ""
        nbytes = res.costs.extra.get("activation_bytes_per_microbatch")
        if nbytes:
            extra = tr("ex.peak.bytes", gib=max(peaks) * nbytes / 2**30)
        title = "ex.peak.title" if self.picture == "png" else "ex.peak.title_no_curves"  # SVG: no memory curves
        r["peak"].value = f"<div style='line-height:1.7'>{tr(title, ranks=per_rank, extra=extra)}</div>"
        r["costs"].value = (f"<div class='bk-hint' style='margin:0'>"
                            f"{html.escape(tr('ex.costs', costs=_costs_text(res.costs, split=res.schedule.split_backward)))}</div>")
        if other is None:
            r["compare"].value = ""
        else:
            a, b = display_name(s.name), display_name(other.schedule.name)
            main = html.escape(a)
            if _zh():  # "比 1F1B 慢", "比交错式 1F1B 慢": a space only next to Latin letters
                main = (" " if main[0].isascii() else "") + main + (" " if main[-1].isascii() else "")
            diff = (float(other.makespan) - float(res.makespan)) / float(res.makespan)
            rel = tr("ex.rel.same", main=main) if abs(diff) < 1e-12 else tr(
                "ex.rel.longer" if diff > 0 else "ex.rel.shorter", d=abs(diff), main=main)
            line = tr("ex.compare.line", other=html.escape(b), ratio=other.bubble_ratio, overhead=other.bubble_overhead,
                      makespan=format_number(other.makespan, fractions=False), unit=counted(other.unit), rel=rel,
                      peak=format_number(other.max_peak_activations, 3, fractions=False))
            r["compare"].value = f"<div>{line}</div>"

    def _draw(self, res: SimResult, other: SimResult | None, cap: float | None) -> None:
        look = self.look
        results = [res] if other is None else [res, other]
        if self.picture == "svg":  # the pure-Python diagram (no memory curves: the peak readout has them)
            self.svg = pipeline_svg(results, title=[_panel_title(x) for x in results], width=round(1100 * look.scale))
            self.svg_view.value = self.svg.svg
            return
        from bubblekit.presentation import plotting

        mem_h = (2.1 if other is None else 1.6) * look.scale
        panels = [(x, "pipeline", _pipeline_height(x.p, look.scale)) for x in results] + [
            (x, "memory", mem_h) for x in results]
        fig = self.figure
        assert fig is not None  # picture="png" made it
        heights = [h for _, _, h in panels]
        t_end = max(float(x.t1) for x in results)
        strip_in = max(plotting.placement_strip_width(x) for x in results) / 72.0
        with _style(look):  # axes made inside the style get its spines and tick sizes
            if len(self._axes) == len(panels):  # same panels: keep the axes (and their ticks), swap the content
                for ax in self._axes:
                    _strip(ax)
                _place_axes(fig, self._axes, heights, look.scale, strip_in)
                axes = self._axes
            else:
                fig.clear()
                axes = self._axes = _stack_axes(fig, heights, look.scale, strip_in)
            for ax, (x, kind, _) in zip(axes, panels):
                if kind == "pipeline":
                    plotting.plot_pipeline(x, ax=ax, title=_panel_title(x))
                else:
                    # Ranks are keyed, and their peaks given, by colour chips in the peak readout:
                    # a legend would cost ~30% of a redraw.
                    plotting.plot_memory(x, ax=ax, cap=cap, legend=False)
                    if _zh():  # name the run as the timeline above it does (its costs in the same words)
                        below = ax.get_title(loc="left").partition("\n")[2]
                        ax.set_title(_panel_title(x) + "\n" + below, loc="left",
                                     fontsize=plotting._title_size())
                    if x is res:
                        self._rank_styles = _line_styles(ax)
                ax.set_xlim(0, t_end * 1.005)
            self.image.value = render_png(fig, look.dpi)


def pipeline_explorer(
    schedule: str = "1f1b",
    p: int = 4,
    m: int = 8,
    v: int = 2,
    preset: str = "b=2f",
    compare: str | None = None,
    layout: str | None = None,
    picture: str | None = None,
) -> PipelineExplorer:
    """A live explorer: schedule, ``p``, ``m``, ``v``, costs, latency and memory cap on sliders.

    Args:
        schedule: a registered schedule (``bk.names()``).
        p: ranks, 1..16. m: microbatches, 1..64 (an ``m`` a shown schedule refuses moves to
            the nearest allowed one, with a note). v: chunks per rank for ``interleaved`` and
            ``looped-bfs`` (2..8; the slider shows 1, disabled, for single-chunk schedules and
            2 for V shapes, and comes back to this ``v`` for a multi-chunk one).
        preset: cost preset, one of :data:`COST_PRESETS`; the cost sliders start at its
            values and override it when moved.
        compare: ``None`` or a second schedule drawn below on the same time axis.
        layout: ``"notebook"``, ``"presenter"`` (large letters for a projector), or ``None``:
            ``"presenter"`` when the environment variable :data:`PRESENTER_ENV` is ``1``.
        picture: ``"png"`` (matplotlib: the diagram and the memory curves) or ``"svg"`` (the
            pipeline diagram as SVG text, :func:`bubblekit.presentation.svg.pipeline_svg`, for the
            browser edition; the memory is in the peak readout); ``None`` (default): ``"png"`` where
            matplotlib and numpy import, else ``"svg"``.

    Display the result in a notebook cell; drive it from code with
    ``ex.controls["m"].value = 16`` and read ``ex.result`` / ``ex.readouts``.

    Used in lessons 01, 02, 03, 04, 05 and 07 and the classroom app.
    """
    return PipelineExplorer(schedule, p, m, v, preset, compare, layout, picture)


# ------------------------------------------------------------------ schedule builder
@dataclass(frozen=True)
class BuilderScore:
    """How a hand-written schedule compares with the built-in ones for the same ``p``, ``m``.

    Times in ``unit``; memory in microbatch activations (largest per-rank peak).

    Attributes:
        makespan, bubble_ratio, bubble_overhead, peak: the learner's schedule.
        references: built-in name -> ``(makespan, bubble_ratio, peak)``.
        best: the fastest built-in (ties: the one with less peak memory).
        slower_pct: ``100 * (makespan - best makespan) / best makespan`` (negative: faster).
        matches: the built-in whose makespan *and* peak the schedule equals, or ``None``.
        verdict: one sentence (``"matches 1F1B"``, ``"12.5% slower than the best (1F1B)"``).
    """

    makespan: float
    bubble_ratio: float
    bubble_overhead: float
    peak: float
    unit: str
    references: dict[str, tuple[float, float, float]]
    best: str
    slower_pct: float
    matches: str | None
    verdict: str


_TEMPLATE_HELP = """# One line per rank, actions in the order the rank runs them.
# 0F3 = stage 0, Forward, microbatch 3;  B = full backward
# (or split B into I = input grad and W = weight grad).
"""
register({"ex.builder.help": {"en": _TEMPLATE_HELP,
                              "zh": "# 每个 rank 一行，按这个 rank 执行的顺序写出它的动作。\n"
                                    "# 0F3 = 流水级 0、前向、微批 3；B = 完整的反向\n"
                                    "# 也可以把 B 拆成 I（输入梯度）和 W（权重梯度）两步。\n"}})


def _template_text(name: str, p: int, m: int) -> str:
    """The help comment (in the current language) plus the built-in schedule ``name`` for ``p`` ranks and ``m`` microbatches."""
    return tr("ex.builder.help") + build_schedule(name, p, m).to_text() + "\n"


class ScheduleBuilder:
    """Write a schedule by hand, see it simulated, and get a score against GPipe and 1F1B.

    Attributes:
        controls: ``"text"`` (the Textarea), ``"p"``, ``"m"`` (size of the templates and the
            expected microbatch count; an unedited template follows them), ``"preset"``
            (costs), and the buttons ``"check"``, ``"load_1f1b"``, ``"load_gpipe"``.
        readouts: HTML widgets keyed ``"message"`` (legality: the simulator's own words),
            ``"score"`` (a table and a verdict), ``"bubble_ratio"``, ``"makespan"``, ``"peak"``.
        score: a :class:`BuilderScore`, ``None`` while the text is illegal.
        schedule, result: the parsed :class:`~bubblekit.Schedule` and its simulation, or ``None``.
        error: the message shown when the text is illegal, else ``None``.
        picture: ``"png"`` (matplotlib's diagram in ``image``) or ``"svg"`` (the diagram of
            :func:`bubblekit.presentation.svg.pipeline_svg` in ``svg_view``, its picture in ``svg``).
        figure, image, svg_view, svg, widget, layout: as in :class:`PipelineExplorer`.
    """

    def __init__(self, p: int = 2, m: int = 4, text: str | None = None, layout: str | None = None,
                 picture: str | None = None) -> None:
        self.picture = _picture(picture)
        for key, val, hi in (("p", p, 8), ("m", m, 16)):
            _check_size(key, val, hi, "builder")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"text must be a string of per-rank orders or None, got {type(text).__name__}")
        self.look = _look(_check_layout(layout))
        self.layout = self.look.name
        self.figure: Figure | None = (_new_figure("bk.explorers.schedule_builder(picture='png')")
                                      if self.picture == "png" else None)
        self.schedule: Schedule | None = None
        self.result: SimResult | None = None
        self.score: BuilderScore | None = None
        self.error: str | None = None
        self._template: tuple[str, str] | None = None  # (name, text) of the template loaded last
        if text is None:
            text = _template_text("gpipe", p, m)
            self._template = ("gpipe", text)
        c: dict[str, widgets.Widget] = {}
        c["p"] = _slider("int", "p", tr("ex.p"), p, 1, 8, 1, tooltip=tr("ex.builder.p.tip"))
        c["m"] = _slider("int", "m", tr("ex.m"), m, 1, 16, 1, tooltip=tr("ex.builder.m.tip"))
        c["preset"] = _dropdown("preset", tr("ex.preset"), COST_PRESETS, "b=2f", tr("ex.preset.tip"))
        c["text"] = widgets.Textarea(
            value=text,
            continuous_update=False,
            layout=widgets.Layout(width="100%", height=f"{7 + 1.6 * max(2, p)}em"),
        )
        c["text"].add_class("bk-control-text")
        for key, label, style in (("check", tr("ex.builder.check"), "primary"),
                                  ("load_1f1b", tr("ex.builder.load", name="1F1B"), ""),
                                  ("load_gpipe", tr("ex.builder.load", name="GPipe"), "")):
            c[key] = widgets.Button(description=label, button_style=style)
            c[key].add_class(f"bk-control-{key}")
        self.controls = c
        self.readouts: dict[str, widgets.HTML] = {
            k: _readout(k) for k in ("message", "score", "bubble_ratio", "makespan", "peak")
        }
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1200px"))
        self.image.add_class("bk-figure")
        self.svg: SvgPicture | None = None
        self.svg_view = _svg_view()
        c["check"].on_click(lambda _b: self.update())
        c["load_1f1b"].on_click(lambda _b: self.load("1f1b"))
        c["load_gpipe"].on_click(lambda _b: self.load("gpipe"))
        for key in ("text", "preset"):
            c[key].observe(lambda _ch: self.update(), names="value")
        for key in ("p", "m"):
            c[key].observe(lambda _ch: self._resize(), names="value")
        self.widget = self._layout()
        self.update()

    def _layout(self) -> widgets.Box:
        c, r = self.controls, self.readouts
        title = widgets.HTML(_CSS + f"<h2 style='margin:4px 0'>{tr('ex.title.builder')}</h2>")
        left = widgets.VBox(
            [c["text"], widgets.HBox([c["check"], c["load_gpipe"], c["load_1f1b"]]), c["p"], c["m"], c["preset"]],
            layout=widgets.Layout(width="48%", min_width="420px"),
        )
        right = widgets.VBox([r["message"], widgets.HBox([r["bubble_ratio"], r["makespan"]]), r["peak"], r["score"]],
                             layout=widgets.Layout(width="50%"))
        if self.layout == "presenter":
            for key in ("p", "m", "preset"):
                c[key].layout.width = "480px"
                c[key].style.description_width = "190px"
        box = widgets.VBox([title, widgets.HBox([left, right]), self._view])
        return _box_class(box, self.look, "bk-schedule-builder")

    @property
    def _view(self) -> widgets.DOMWidget:
        """The widget that shows the picture: the PNG image, or the SVG's HTML."""
        return self.svg_view if self.picture == "svg" else self.image

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget, with a still picture beside it (see :meth:`PipelineExplorer._repr_mimebundle_`)."""
        bundle = dict(self.widget._repr_mimebundle_())
        c, r = self.controls, self.readouts
        settings = tr("ex.builder.settings", p=c["p"].value, m=c["m"].value, preset=c["preset"].value)
        bundle["text/plain"] = tr("ex.plain.builder", settings=settings)
        text = f"<pre style='font-size:13px'>{html.escape(c['text'].value)}</pre>"
        bundle["text/html"] = _static_html(tr("ex.kind.builder"), settings, self.look, self.figure,
                                           [text, r["message"].value, r["score"].value], still="ex.still.builder",
                                           svg=self.svg.svg if self.picture == "svg" and self.svg is not None else None)
        return bundle

    def load(self, name: str) -> None:
        """Replace the text by the built-in ``name`` (``"1f1b"`` or ``"gpipe"``) for the current p, m."""
        c = self.controls
        text = _template_text(name, int(c["p"].value), int(c["m"].value))
        self._template = (name, text)
        if c["text"].value == text:
            self.update()
        else:
            c["text"].value = text  # the observer updates

    def _resize(self) -> None:
        """p or m moved: an unedited template is reloaded at the new size; edited text is re-checked."""
        self.controls["text"].layout.height = f"{7 + 1.6 * max(2, int(self.controls['p'].value))}em"
        if self._template is not None and self.controls["text"].value == self._template[1]:
            self.load(self._template[0])
        else:
            self.update()

    def _costs(self) -> Costs:
        return cost_preset(self.controls["preset"].value)

    def update(self) -> None:
        """Parse, validate and simulate the text; show the diagram, the message and the score."""
        r = self.readouts
        try:
            sched = Schedule.from_text(self.controls["text"].value, m=int(self.controls["m"].value))
            res = simulate(sched, self._costs())
        except (ScheduleError, ValueError, TypeError) as exc:  # DeadlockError is a ScheduleError
            self.schedule = self.result = self.score = None
            self.error = str(exc)
            kind = tr("ex.builder.deadlock") if isinstance(exc, DeadlockError) else tr("ex.builder.illegal")
            body = self.error  # the heading says deadlock / illegal: the message does not say it again
            for sep in ("：", ": ", ":"):
                if body.lower().startswith(kind.lower() + sep):
                    body = body[len(kind) + len(sep):].lstrip("\n ")
                    if not _zh():  # an English sentence starts with a capital; "rank 3 缺少 ..." keeps its lowercase rank
                        body = body[:1].upper() + body[1:]
                    break
            r["message"].value = f"<b style='color:#a00000'>✗ {kind}</b>" + _error_html(body)
            for key in ("score", "bubble_ratio", "makespan", "peak"):
                r[key].value = ""
            self._view.layout.visibility = "hidden"
            return
        self.error = None
        self.schedule, self.result = sched, res
        self.score = self._score(res)
        try:  # the picture first: the browser receives it before the numbers that describe it
            self._draw(res)
            self._view.layout.visibility = "visible"
        except Exception as exc:  # a drawing bug must not leave a traceback in a classroom UI
            self.error = tr("ex.error.draw", error=f"{type(exc).__name__}: {exc}")
        legal = tr("ex.builder.legal", p=sched.p, m=sched.m, v=sched.v, n=sched.n_actions)
        r["message"].value = f"<div class='bk-msg-ok'>{legal}</div>"
        r["bubble_ratio"].value = _card(tr("ex.card.ratio.name"), f"{res.bubble_ratio:.4f}",
                                        tr("ex.builder.overhead", overhead=res.bubble_overhead))
        r["makespan"].value = _card(tr("ex.card.makespan.short"), f"{format_number(res.makespan, fractions=False)} {counted(res.unit)}")
        r["peak"].value = ("<div style='font-size:15px'>" + tr("ex.builder.peak")
                           + " · ".join((f"rank {k}：" if _zh() else f"r{k} ") + format_number(x, 3, fractions=False)
                                        for k, x in enumerate(res.peak_activations)) + "</div>")
        r["score"].value = self._score_html(self.score)
        if self.error:
            r["message"].value += _error_html(self.error)

    def _draw(self, res: SimResult) -> None:
        sched = res.schedule
        look = self.look
        title = tr("ex.builder.title", p=sched.p, m=sched.m, costs=_costs_text(res.costs, split=sched.split_backward))
        if self.picture == "svg":  # the pure-Python diagram
            self.svg = pipeline_svg(res, title=title, width=round(1100 * look.scale))
            self.svg_view.value = self.svg.svg
            return
        from bubblekit.presentation import plotting

        fig = self.figure
        assert fig is not None  # picture="png" made it
        fig.clear()
        with _style(look):
            (ax,) = _stack_axes(fig, [_pipeline_height(sched.p, look.scale) + 0.3], look.scale,
                                plotting.placement_strip_width(res) / 72.0)
            plotting.plot_pipeline(res, ax=ax, title=title)
            self.image.value = render_png(fig, look.dpi)

    def _references(self, sched: Schedule) -> dict[str, SimResult]:
        refs = ["gpipe", "1f1b"]
        if sched.split_backward:  # compare hand-split backwards with the built-in split schedules too
            refs += [n for n, s in REGISTRY.items() if s.chunks == "one" and s.split_backward]
        out: dict[str, SimResult] = {}
        for name in refs:
            try:
                out[name] = simulate(build_schedule(name, sched.p, sched.m), self._costs())
            except (ValueError, TypeError):  # a built-in that does not exist for this p, m
                continue
        return out

    def _score(self, res: SimResult) -> BuilderScore:
        sched = res.schedule
        refs = self._references(sched)
        mine_t, mine_peak = float(res.makespan), float(res.max_peak_activations)
        table = {n: (float(x.makespan), x.bubble_ratio, float(x.max_peak_activations)) for n, x in refs.items()}
        best = min(table, key=lambda n: (round(table[n][0], 9), table[n][2]))
        best_t = table[best][0]
        pct = 100.0 * (mine_t - best_t) / best_t
        matches = next((n for n, (t, _, pk) in table.items()
                        if math.isclose(t, mine_t, rel_tol=1e-9) and math.isclose(pk, mine_peak, rel_tol=1e-9)), None)
        same = next((n for n, x in refs.items() if x.schedule.orders == sched.orders), None)
        bname = display_name(best)
        if same is not None:
            verdict = tr("ex.builder.same", name=display_name(same))
        elif matches is not None:
            verdict = tr("ex.builder.matches", name=display_name(matches))
        elif math.isclose(mine_t, best_t, rel_tol=1e-9):
            verdict = tr("ex.builder.fast_but", best=bname, mine=format_number(mine_peak, 3, fractions=False),
                         theirs=format_number(table[best][2], 3, fractions=False))
        elif pct > 0:
            verdict = tr("ex.builder.slower", pct=pct, best=bname)
        else:
            verdict = tr("ex.builder.faster", pct=-pct, best=bname)
        return BuilderScore(
            makespan=mine_t, bubble_ratio=res.bubble_ratio, bubble_overhead=res.bubble_overhead, peak=mine_peak,
            unit=res.unit, references=table, best=best, slower_pct=pct, matches=same or matches, verdict=verdict,
        )

    @staticmethod
    def _score_html(score: BuilderScore) -> str:
        unit = plural(score.unit)
        rows = [(tr("ex.builder.yours"), score.makespan, score.bubble_ratio, score.peak)] + [
            (display_name(n), t, b, pk) for n, (t, b, pk) in score.references.items()
        ]
        body = "".join(
            f"<tr><td>{'<b>' + name + '</b>' if k == 0 else html.escape(name)}</td><td>{format_number(t, fractions=False)}</td>"
            f"<td>{b:.1%}</td><td>{format_number(pk, 3, fractions=False)}</td></tr>"
            for k, (name, t, b, pk) in enumerate(rows)
        )
        return (
            f"<div class='bk-score'><div style='font-size:18px;margin:4px 0'>"
            f"{tr('ex.builder.score.line', verdict=html.escape(score.verdict))}</div><table><tr><th>{tr('ex.schedule')}</th>"
            f"<th>{tr('ex.builder.table.makespan', unit=unit)}</th><th>{tr('ex.builder.table.ratio')}</th>"
            f"<th>{tr('ex.builder.table.peak')}</th></tr>{body}</table></div>"
        )


def schedule_builder(p: int = 2, m: int = 4, text: str | None = None, layout: str | None = None,
                     picture: str | None = None) -> ScheduleBuilder:
    """A text box for per-rank orders, the simulated diagram, legality messages and a score.

    Args:
        p: ranks for the templates ("load 1F1B", "load GPipe"), 1..8.
        m: microbatches the schedule must cover, 1..16.
        text: initial orders, one line per rank (``rank 0: 0F0 0F1 0B0 0B1``); default the
            GPipe template for ``p``, ``m``.
        layout: ``"notebook"``, ``"presenter"`` or ``None`` (see :func:`pipeline_explorer`).
        picture: ``"png"`` (matplotlib), ``"svg"`` (pure Python, the browser edition) or ``None``:
            ``"png"`` where matplotlib and numpy import, else ``"svg"`` (see :func:`pipeline_explorer`).

    The defaults (and the classroom pages' sizes) are chosen so that neither template
    answers an exercise that asks for a schedule written by hand (``tests/test_explorers.py``
    checks every such exercise).

    Used in the classroom app (apps/explorer.ipynb, apps/builder.ipynb).
    """
    return ScheduleBuilder(p, m, text, layout, picture)


# ------------------------------------------------------------------ frontier explorer
def _dominated(point: tuple[float, float], others: Sequence[tuple[float, float]]) -> bool:
    """True when another point needs at most as much memory *and* bubble, and less of one."""
    x, y = point
    return any(ox <= x + 1e-12 and oy <= y + 1e-12 and (ox < x - 1e-12 or oy < y - 1e-12) for ox, oy in others)


_FRONTIER_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")
#: The frontier's staircase (both pictures) and the outline of a point on it.
_FRONTIER_LINE = "#777777"
_FRONTIER_EDGE = "#000000"


def _frontier_point_name(row: dict[str, Any]) -> str:
    """A point's name in the legend: the schedule, and its ``v`` when it has several chunks."""
    return row["schedule"] + ((f"，v={row['v']}" if _zh() else f", v={row['v']}") if row["v"] > 1 else "")


def _frontier_chart(rows: Sequence[dict[str, Any]], points: Sequence[tuple[float, float]], on: Sequence[bool],
                    title: str) -> LineChart:
    """The frontier explorer's picture as a :class:`~bubblekit.presentation.svg.LineChart` (``picture="svg"``).

    The same picture as the matplotlib one: the frontier as a dashed staircase (steps after each
    point, on to the right edge), each schedule one marker (outlined black when on the frontier), y
    the bubble_ratio in percent. Colours :data:`~bubblekit.presentation.diagram.SERIES_COLORS` in
    turn; the marker :data:`~bubblekit.presentation.diagram.MARKERS` ``[(k + k // 8) % 8]`` for
    the ``k``-th schedule, so that no two of 64 schedules look alike (matplotlib has more marker shapes).
    """
    series: list[ChartSeries] = []
    right = max(x for x, _ in points) * 1.08 + 0.5
    front = sorted(pt for pt, ok in zip(points, on) if ok)
    if front:
        xs = tuple(x for x, _ in front) + (right,)
        ys = tuple(y for _, y in front)
        series.append(ChartSeries("frontier", tr("ex.frontier.label"), xs, ys + ys[-1:], _FRONTIER_LINE, style=1,
                                  steps=True))
    n = len(SERIES_COLORS)
    for k, (row, (x, y), ok) in enumerate(zip(rows, points, on)):
        name = _frontier_point_name(row)
        series.append(ChartSeries(f"point:{row['schedule']}", tr("ex.frontier.point.on", name=name) if ok else name,
                                  (x,), (y,), SERIES_COLORS[k % n], marker=(k + k // n) % len(MARKERS),
                                  edge=_FRONTIER_EDGE if ok else None))
    top = max(y for _, y in points)
    return LineChart(series, title=title, ylabel=tr("ex.frontier.ylabel"), xlabel=tr("ex.frontier.xlabel"),
                     x_range=(0.0, right), y_range=(0.0, max(top * 1.1, 0.01)), percent_y=True)


class FrontierExplorer:
    """Every registered schedule at the same ``p``, ``m`` and costs: bubble against peak memory.

    Each schedule is a point: its largest per-rank peak of activations (microbatch
    activations, x) and its ``bubble_ratio`` (idle / (p x makespan), y), both simulated by
    :func:`bubblekit.compare.compare`. A schedule is *on the frontier* when no other needs at
    most as much memory and as much bubble, and less of one; the frontier is drawn as a
    staircase (with at least that much memory, at most that much bubble).

    Attributes:
        controls: ``"p"`` (1..16), ``"m"`` (1..64), ``"v"`` (chunks per rank of interleaved
            1F1B and looped BFS, 2..8), ``"preset"`` (costs), ``"comm"`` (latency per hop, in
            the preset's unit).
        readouts: HTML widgets keyed ``"frontier"``, ``"table"``, ``"message"``.
        table: the :class:`~bubblekit.text.Table` of the schedules shown (``bk.compare``).
        frontier: display names of the schedules on the frontier, least memory first.
        skipped: display name -> why a schedule is not shown (an ``m`` it refuses).
        picture: ``"png"`` (matplotlib's chart in ``image``) or ``"svg"`` (the same chart drawn by
            :func:`bubblekit.presentation.svg.line_chart_svg` in ``svg_view``, its picture in ``svg``:
            one ``bk-series`` element per schedule, ``data-series="point:NAME"``, ``data-points`` its
            peak and bubble_ratio).
        figure, image, svg_view, svg, widget, layout: as in :class:`PipelineExplorer`.
    """

    def __init__(self, p: int = 4, m: int = 8, v: int = 2, preset: str = "f=i=w", layout: str | None = None,
                 picture: str | None = None) -> None:
        self.picture = _picture(picture)
        for key, val, hi in (("p", p, 16), ("m", m, 64), ("v", v, 8)):
            _check_size(key, val, hi, "frontier explorer")
        if v < 2:
            raise ValueError(tr("ex.arg.frontier_v", value=repr(v)))
        if preset not in COST_PRESETS:
            cost_preset(preset)
        self.look = _look(_check_layout(layout))
        self.layout = self.look.name
        self.figure: Figure | None = (_new_figure("bk.explorers.frontier_explorer(picture='png')")
                                      if self.picture == "png" else None)
        self.table: Any = None
        self.frontier: list[str] = []
        self.skipped: dict[str, str] = {}
        self.error: str | None = None
        c: dict[str, widgets.Widget] = {
            "p": _slider("int", "p", tr("ex.p"), p, 1, 16, 1, tooltip=tr("ex.p.tip")),
            "m": _slider("int", "m", tr("ex.m"), m, 1, 64, 1, tooltip=tr("ex.m.tip_plain")),
            "v": _slider("int", "v", tr("ex.v"), v, 2, 8, 1, tooltip=tr("ex.v.tip_frontier")),
            "preset": _dropdown("preset", tr("ex.preset"), COST_PRESETS, preset, tr("ex.preset.tip")),
            "comm": _slider("float", "comm", tr("ex.cost.comm"), 0.0, 0.0, 4.0, 0.05, tooltip=tr("ex.cost.comm.tip_unit")),
        }
        self.controls = c
        self.readouts: dict[str, widgets.HTML] = {k: _readout(k) for k in ("frontier", "table", "message")}
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1200px"))
        self.image.add_class("bk-figure")
        self.svg: SvgPicture | None = None
        self.svg_view = _svg_view()
        self.widget = self._layout()
        for w in c.values():
            w.observe(lambda _ch: self.update(), names="value")
        self.update()

    def _layout(self) -> widgets.Box:
        c, r = self.controls, self.readouts
        title = widgets.HTML(_CSS + f"<h2 style='margin:4px 0'>{tr('ex.title.frontier')}</h2>")
        if self.layout == "presenter":
            for w in c.values():
                w.layout.width = "480px"
                w.style.description_width = "190px"
        controls = widgets.HBox([widgets.VBox([c["p"], c["m"], c["v"]]), widgets.VBox([c["preset"], c["comm"]])],
                                layout=widgets.Layout(flex_flow="row wrap"))
        box = widgets.VBox([title, controls, r["frontier"], r["message"], self._view, r["table"]])
        return _box_class(box, self.look, "bk-frontier-explorer")

    @property
    def _view(self) -> widgets.DOMWidget:
        """The widget that shows the picture: the PNG image, or the SVG's HTML."""
        return self.svg_view if self.picture == "svg" else self.image

    def _settings(self) -> str:
        c = self.controls
        return tr("ex.frontier.settings", p=c["p"].value, m=c["m"].value, v=c["v"].value, preset=c["preset"].value)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget, with a still picture beside it (see :meth:`PipelineExplorer._repr_mimebundle_`)."""
        bundle = dict(self.widget._repr_mimebundle_())
        r = self.readouts
        bundle["text/plain"] = tr("ex.plain.frontier", settings=self._settings())
        bundle["text/html"] = _static_html(tr("ex.kind.frontier"), self._settings(), self.look, self.figure,
                                           [r["frontier"].value, r["message"].value, r["table"].value],
                                           svg=self.svg.svg if self.picture == "svg" and self.svg is not None else None)
        return bundle

    def _costs(self) -> Costs:
        c = self.controls
        base = cost_preset(c["preset"].value)
        comm = float(c["comm"].value)
        return base if _same(comm, _cost_value(base, "comm")) else base.with_(comm=_exact(comm))

    def update(self) -> None:
        """Simulate every schedule that accepts ``p``, ``m``; redraw the points, the frontier and the table."""
        c, r = self.controls, self.readouts
        p, m, v = int(c["p"].value), int(c["m"].value), int(c["v"].value)
        self.skipped = {}
        shown: list[str] = []
        for name, entry in REGISTRY.items():
            vv = v if entry.chunks == "many" else None
            try:
                entry.check(p, m, vv)
            except (ValueError, TypeError) as exc:
                self.skipped[display_name(name)] = str(exc).splitlines()[0]
                continue
            shown.append(name)
        try:
            costs = self._costs()
            self.table = compare_table(shown, p, m, v=v, costs=costs, closed_form=False)
        except (ValueError, TypeError) as exc:
            self.table, self.frontier, self.error = None, [], str(exc)
            r["message"].value, r["frontier"].value, r["table"].value = _error_html(self.error), "", ""
            self._view.layout.visibility = "hidden"
            return
        self.error = None
        rows = list(self.table)
        points = [(float(row["peak"]), float(row["bubble_ratio"])) for row in rows]
        on = [not _dominated(pt, points) for pt in points]
        order = sorted((pt[0], -pt[1], row["schedule"]) for pt, row, ok in zip(points, rows, on) if ok)
        self.frontier = list(dict.fromkeys(name for _, _, name in order))
        self._draw(rows, points, on, costs)
        self._view.layout.visibility = "visible"
        names = ("、" if _zh() else ", ").join(html.escape(n) for n in self.frontier)
        r["frontier"].value = f"<div>{tr('ex.frontier.on', names=names)}</div>"
        r["table"].value = f"<div class='bk-table'>{self.table._repr_html_()}</div>"
        r["message"].value = "" if not self.skipped else "<div class='bk-msg-note'>" + html.escape(
            tr("ex.frontier.skipped", what=("；" if _zh() else "; ").join(
                f"{n}{'：' if _zh() else ': '}{why}" for n, why in self.skipped.items()))) + "</div>"

    def _draw(self, rows: list[dict[str, Any]], points: list[tuple[float, float]], on: list[bool],
              costs: Costs) -> None:
        look = self.look
        c = self.controls
        title = tr("ex.frontier.title", p=c["p"].value, m=c["m"].value, v=c["v"].value, costs=_costs_text(costs))
        if self.picture == "svg":  # the same chart in pure Python (svg.line_chart_svg)
            self.svg = line_chart_svg(_frontier_chart(rows, points, on, title), width=round(1100 * look.scale))
            self.svg_view.value = self.svg.svg
            return
        from bubblekit.presentation import plotting

        fig = self.figure
        assert fig is not None  # picture="png" made it
        fig.clear()
        with _style(look):
            (ax,) = _stack_axes(fig, [4.2 * look.scale], look.scale)
            front = sorted(pt for pt, ok in zip(points, on) if ok)
            if front:
                xs = [x for x, _ in front]
                ys = [100 * y for _, y in front]
                right = max(x for x, _ in points) * 1.08 + 0.5
                ax.plot([*xs, right], [*ys, ys[-1]], drawstyle="steps-post", color=_FRONTIER_LINE, linestyle="--",
                        linewidth=1.4, zorder=1, label=tr("ex.frontier.label"), gid="frontier")
            for k, (row, (x, y), ok) in enumerate(zip(rows, points, on)):
                color = plotting.SERIES_COLORS[k % len(plotting.SERIES_COLORS)]
                name = _frontier_point_name(row)
                ax.plot([x], [100 * y], linestyle="none", marker=_FRONTIER_MARKERS[k % len(_FRONTIER_MARKERS)],
                        markersize=11, color=color, markeredgecolor=_FRONTIER_EDGE if ok else color,
                        markeredgewidth=1.6 if ok else 1.0, zorder=3,
                        label=tr("ex.frontier.point.on", name=name) if ok else name, gid=f"point:{row['schedule']}")
            ax.set_xlim(left=0)
            ax.set_ylim(bottom=0)
            ax.set_xlabel(tr("ex.frontier.xlabel"))
            ax.set_ylabel(tr("ex.frontier.ylabel"))
            ax.grid(color="#E5E5E5", linewidth=0.6)
            ax.set_title(title, loc="left",
                         fontsize=plotting.rcParams["axes.titlesize"])
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
                      borderaxespad=0.0)
            self.image.value = render_png(fig, look.dpi)


def frontier_explorer(p: int = 4, m: int = 8, v: int = 2, preset: str = "f=i=w",
                      layout: str | None = None, picture: str | None = None) -> FrontierExplorer:
    """Every registered schedule as a point of bubble against peak memory, the frontier marked.

    Args:
        p: ranks, 1..16. m: microbatches, 1..64 (schedules that refuse ``m`` are listed, not shown).
        v: chunks per rank of interleaved 1F1B and looped BFS, 2..8.
        preset: cost preset, one of :data:`COST_PRESETS` (default ``"f=i=w"``: the split-backward
            schedules' textbook costs).
        layout: ``"notebook"``, ``"presenter"`` or ``None`` (see :func:`pipeline_explorer`).
        picture: ``"png"`` (matplotlib), ``"svg"`` (pure Python, the browser edition: the same chart by
            :func:`bubblekit.presentation.svg.line_chart_svg`) or ``None``: ``"png"`` where matplotlib and
            numpy import, else ``"svg"``.

    Used in the classroom app (apps/frontier.ipynb) and the workshop track's memory/bubble block.
    """
    return FrontierExplorer(p, m, v, preset, layout, picture)
