"""The pipeline diagram's conventions, in pure Python: colours, the spans' kinds and labels, the texts.

:func:`bubblekit.presentation.plotting.plot_pipeline` (matplotlib) and
:func:`bubblekit.presentation.svg.pipeline_svg` (plain SVG text, for the no-install edition
on Pyodide where numpy and matplotlib are missing) draw the same picture from the rules here:
one rule, one place. The module imports the standard library and bubblekit's core only.

* colours: :data:`PALETTE` per microbatch (second round darker by :data:`SECOND_ROUND_DARKEN`,
  backward kinds lighter by :data:`KIND_LIGHTEN`), :data:`KIND_COLORS` per kind, the idle boxes'
  :data:`BUBBLE_COLOR`; :func:`microbatch_color`, :func:`text_color`;
* spans: :class:`SpanRows` reads a :class:`~bubblekit.Timeline` into flat lists (kind,
  microbatch, chunk, label; sends and receives, which take no time, left out);
* texts: :func:`timeline_name`, :func:`costs_title`, :func:`metrics_line` and the legend's
  words, in the i18n catalogue (``bk.set_language("zh")`` gives the Chinese);
* the marks drawn over the boxes: the critical path (:func:`critical_boxes`, :func:`critical_hops`,
  :data:`CRITICAL_COLOR`) and the cross-rank hops' arrows (:func:`want_arrows`,
  :func:`dependency_pairs`, :func:`comm_arrow_segments`, :data:`COMM_ARROW_LIMIT`), in the
  diagram's coordinates (time, rank), for both pictures;
* the animation of the diagram filling in (matplotlib's frames and the SVG ones): its frame
  times (:func:`frame_times`), the cursor's colour (:data:`CURSOR_COLOR`) and the readout line
  under it (:func:`animation_readout`).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from bubblekit._validate import check_int
from bubblekit.actions import Action, Pair, inputs, is_comm, parts
from bubblekit.costs import PRESETS, Costs
from bubblekit.formulas import bubble_ratio
from bubblekit.i18n import get_language, register, tr
from bubblekit.schedules import ScheduleSpec, display_name, schedule, spec
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import format_number, plural
from bubblekit.timeline import Timeline

__all__ = [
    "PALETTE", "SECOND_ROUND_DARKEN", "KIND_COLORS", "KIND_ORDER", "KIND_LIGHTEN", "BUBBLE_COLOR",
    "BUBBLE_HATCH_COLOR", "CHUNK_EDGE_COLOR", "CHUNK_EDGE_WIDTH", "LABEL_LIMIT", "hex_to_rgb", "rgb_to_hex", "lighten",
    "round_color", "microbatch_color", "text_color", "SpanRows", "span_color", "costs_title", "timeline_name",
    "metrics_line", "kind_name", "chunk_name", "ordinal", "label_stage", "rank_stages",
    "CRITICAL_COLOR", "BOX_HEIGHT", "COMM_ARROW_LIMIT", "COMM_ARROW_AUTO", "critical_boxes", "critical_hops",
    "want_arrows", "dependency_pairs", "comm_arrow_segments",
    "CURSOR_COLOR", "frame_times", "animation_readout",
    "SERIES_COLORS", "LINE_COLORS", "LINE_STYLES", "MARKERS", "ChartSeries", "memory_arguments", "memory_series",
    "memory_title", "memory_top", "SweepData", "sweep_arguments", "sweep_data",
]

#: Microbatch colours: Okabe & Ito's colour-blind-safe palette (2008) without black (orange,
#: sky blue, bluish green, yellow, blue, vermillion, reddish purple), then five distinct hues
#: from Paul Tol's palettes (wine, olive, indigo, brown, teal), so that up to 12 microbatches
#: get 12 colours. Microbatch ``i`` gets ``PALETTE[i % 12]``, drawn darker (mixed with
#: :data:`SECOND_ROUND_DARKEN` of black) for ``12 <= i % 24 < 24``: 24 microbatches in a row
#: get different colours, and boxes wide enough carry their microbatch number anyway.
PALETTE: tuple[str, ...] = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7",
                            "#882255", "#999933", "#332288", "#8C510A", "#44AA99")
#: How much black the second round of microbatch colours is mixed with (see :data:`PALETTE`).
SECOND_ROUND_DARKEN = 0.4
#: Colours per action kind (``color_by="kind"``), from the same palette.
KIND_COLORS: dict[str, str] = {"F": "#56B4E9", "B": "#E69F00", "I": "#009E73", "W": "#CC79A7", "other": "#B0B0B0"}
#: The kinds in legend order; a span's kind is an index into it.
KIND_ORDER: tuple[str, ...] = ("F", "B", "I", "W", "other")
#: Lighter shades of the microbatch colour for the backward kinds (how much white is mixed in).
KIND_LIGHTEN: dict[str, float] = {"F": 0.0, "B": 0.5, "I": 0.4, "W": 0.72, "other": 0.3}
#: Idle boxes: very light grey with a grey hatch.
BUBBLE_COLOR = "#F0F0F0"
BUBBLE_HATCH_COLOR = "#A8A8A8"
#: Chunks 1, 2, ... of a rank (its second, third ... stage) are outlined in this colour.
CHUNK_EDGE_COLOR = "#1A1A1A"
CHUNK_EDGE_WIDTH = 1.6
#: The animation's time cursor and the outline of the actions running at its time (also the memory cap's line).
CURSOR_COLOR = "#D55E00"

#: Colours for compared series (schedules in a sweep or a frontier), most distinct first:
#: blue, vermillion, bluish green, reddish purple, orange, sky blue, black, wine.
SERIES_COLORS: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                                  "#882255")
#: Colours for lines and markers on white (the palette without its pale yellow).
LINE_COLORS: tuple[str, ...] = ("#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#000000")
#: Line styles of the charts' lines, in turn (matplotlib's names; the SVG charts dash them alike).
LINE_STYLES: tuple[str, ...] = ("-", "--", "-.", ":")
#: Markers of the sweep's simulated points, one per series in turn (matplotlib's names).
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "*")

#: Above this many boxes, automatic labels (``labels=None``) are switched off.
LABEL_LIMIT = 3000
#: Outline of the critical path (and its hops between boxes).
CRITICAL_COLOR = "#000000"
#: Height of one box in rank rows (a row is 1.0 high): a box of duration ``d`` has area ``d * BOX_HEIGHT``.
BOX_HEIGHT = 0.8
#: Above this many dependency arrows, ``comm_arrows=True`` draws none and warns.
COMM_ARROW_LIMIT = 300
#: ``comm_arrows=None`` (the default) draws the arrows of a simulation with a latency
#: (``costs.comm > 0``) that has at most this many cross-rank hops: its gaps then show why.
COMM_ARROW_AUTO = 120

LABEL_TRAIL_INT = re.compile(r"(\d+)\D*$")
ACTION_TEXT = re.compile(r"^\s*(\d+)\s*([FBIW])\s*(\d+)\s*$")
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")

register({
    # the diagram's texts, in both languages (bubblekit.i18n; read when a picture is drawn)
    "plot.costs.uniform": {"en": "uniform (F = B = 1)", "zh": "均匀（F = B = 1）"},
    "plot.costs.b=2f": {"en": "backward = 2 x forward", "zh": "反向 = 2 × 前向"},
    "plot.costs.f=i=w": {"en": "F = I = W = 1", "zh": "F = I = W = 1（拆分反向）"},
    "plot.kind.F": {"en": "F forward", "zh": "F 前向"},
    "plot.kind.B": {"en": "B backward", "zh": "B 反向"},
    "plot.kind.I": {"en": "I input-grad", "zh": "I 输入梯度"},
    "plot.kind.W": {"en": "W weight-grad", "zh": "W 权重梯度"},
    "plot.kind.other": {"en": "other", "zh": "其他"},
    "plot.colour_is_microbatch": {"en": " (colour = microbatch)", "zh": "（颜色 = 微批）"},
    "plot.pair": {"en": "F&B overlapped pair (top F, bottom B)", "zh": "F&B 重叠的前向+反向对（上 F，下 B）"},
    "plot.chunk": {"en": "chunk {chunk}: each rank's {ordinal} stage", "zh": "chunk {chunk}：每个 rank 的第 {ordinal} 个流水级"},
    "plot.idle": {"en": "idle (bubble)", "zh": "空闲（气泡）"},
    "plot.critical_path": {"en": "critical path", "zh": "关键路径"},
    "plot.metrics": {
        "en": "bubble_ratio {ratio:.1%} (idle ÷ (p × makespan))   |   bubble_overhead {overhead:.1%} (idle ÷ busy)"
              "   |   makespan {makespan} {unit}",
        "zh": "气泡比例 bubble_ratio {ratio:.1%}（空闲 ÷ (p × 单步耗时)）   |   气泡开销 bubble_overhead {overhead:.1%}"
              "（空闲 ÷ 忙碌）   |   单步耗时 {makespan} {unit}",
    },
    "plot.stages": {"en": "stages", "zh": "流水级"},
    "plot.anim.readout": {
        "en": "t = {t} of {total} {unit}  |  running now: {running:>2}  |  bubble so far: {bubble:6.1%}",
        "zh": "t = {t} / {total} {unit}  |  正在计算：{running:>2}  |  目前气泡：{bubble:6.1%}",
    },
    # the memory chart's and the sweep's texts (plotting's plot_memory and plot_sweep, and their SVG versions)
    "plot.memory.rank_peak": {"en": "rank {rank}: peak {peak}", "zh": "rank {rank}：峰值 {peak}"},
    "plot.memory.peak_marker": {"en": "peak (where first reached)", "zh": "峰值（首次达到处）"},
    "plot.memory.max_peak": {"en": "max peak {peak} microbatch activations", "zh": "显存峰值：{peak} 个微批的激活"},
    "plot.memory.cap": {"en": "cap {cap}", "zh": "上限 {cap}"},
    "plot.memory.over_cap": {"en": "over the cap: {ranks}", "zh": "超过上限：{ranks}"},
    "plot.memory.under_cap": {"en": "all ranks under the cap", "zh": "所有 rank 都在上限以内"},
    "plot.memory.ylabel": {"en": "activations held\n(microbatch activations)", "zh": "占用显存（个微批的激活）"},
    "plot.sweep.skipped": {"en": "not simulated: {what}", "zh": "未模拟：{what}"},
    "plot.sweep.more": {"en": "... and {n} more", "zh": "……另有 {n} 项"},
    "plot.sweep.closed_form": {"en": "closed form {form}", "zh": "闭式解 {form}"},
    "plot.sweep.xlabel": {"en": "microbatches per step, m", "zh": "每步微批数 m"},
    "plot.sweep.ylabel": {"en": "bubble_ratio = idle ÷ (p × makespan)", "zh": "气泡比例 = 空闲 ÷ (p × 单步耗时)"},
    "plot.sweep.simulated": {"en": "{name} (simulated)", "zh": "{name}（模拟）"},
    "plot.sweep.simulated_v": {"en": "{name}, v={v} (simulated)", "zh": "{name}，v={v}（模拟）"},
    "plot.sweep.title": {"en": "Bubble ratio against m, p = {p}   |   {costs}", "zh": "气泡比例随 m 的变化，p = {p}   |   {costs}"},
})


# ----------------------------------------------------------------------------- colours
def hex_to_rgb(color: str) -> tuple[float, float, float]:
    """``"#RRGGBB"`` as three floats in ``[0, 1]`` (each channel ``/ 255``, as matplotlib reads it)."""
    if not isinstance(color, str) or not _HEX.match(color):
        raise ValueError(f"color must be a hex colour '#RRGGBB', got {color!r}")
    return (int(color[1:3], 16) / 255, int(color[3:5], 16) / 255, int(color[5:7], 16) / 255)


def rgb_to_hex(rgb: tuple[float, float, float]) -> str:
    """Three floats in ``[0, 1]`` as ``"#rrggbb"`` (each rounded to the nearest of 0..255, as matplotlib writes it)."""
    return "#" + "".join(format(round(x * 255), "02x") for x in rgb)


def lighten(color: str, amount: float) -> tuple[float, float, float]:
    """``color`` (hex) mixed with ``amount`` of white (0: itself, 1: white), as RGB floats."""
    return tuple(x + (1.0 - x) * amount for x in hex_to_rgb(color))  # type: ignore[return-value]


def round_color(k: int) -> str:
    """Colour ``k`` of the two rounds of :data:`PALETTE` (the second round darker), as hex."""
    base = PALETTE[k % len(PALETTE)]
    if (k // len(PALETTE)) % 2 == 0:
        return base
    r, g, b = (x * (1.0 - SECOND_ROUND_DARKEN) for x in hex_to_rgb(base))
    return rgb_to_hex((r, g, b))


def microbatch_color(microbatch: int, kind: str = "F") -> str:
    """The colour of ``kind`` (``"F"``, ``"B"``, ``"I"``, ``"W"``) of microbatch ``microbatch``
    in :func:`plot_pipeline` with ``color_by="microbatch"`` (hex): its :data:`PALETTE` colour,
    darker for the second round, lighter for the backward kinds."""
    from bubblekit._validate import check_int

    check_int("microbatch", microbatch, minimum=0)
    if kind not in KIND_ORDER:
        raise ValueError(f"kind must be one of {list(KIND_ORDER)}, got {kind!r}")
    return rgb_to_hex(lighten(round_color(microbatch % (2 * len(PALETTE))), KIND_LIGHTEN[kind]))


def text_color(rgb: Any) -> str:
    """Black or white, whichever reads on a box of colour ``rgb`` (floats in ``[0, 1]``; relative luminance)."""
    r, g, b = rgb[:3]
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else "black"


# ------------------------------------------------------------------------------- spans
class SpanRows:
    """Flat lists over all spans of a timeline, rank by rank (``spans()`` order).

    ``kind`` indexes :data:`KIND_ORDER`; ``mb`` is the microbatch (-1 when a text label has
    no number); ``chunk`` is the index of the span's stage among its rank's stages; ``key``
    is the colour key of text labels that are not actions (``""`` for actions). Sends and
    receives of a lowered schedule take no time and are left out.
    """

    def __init__(self, tl: Timeline) -> None:
        self.start: list[float] = []
        self.end: list[float] = []
        self.rank: list[int] = []
        self.kind: list[int] = []
        self.mb: list[int] = []
        self.chunk: list[int] = []
        self.labels: list[Action | str] = []
        self.key: list[str] = []
        #: overlapped pairs: span index -> (backward part's microbatch, its kind index, its stage)
        self.pair_b: dict[int, tuple[int, int, int]] = {}
        starts, ends, ranks, kinds, mbs, chunks = self.start, self.end, self.rank, self.kind, self.mb, self.chunk
        kind_index = {k: i for i, k in enumerate(KIND_ORDER)}
        for r in range(tl.p):
            st, en, lbs = tl.arrays(r)
            if any(isinstance(lb, Action) and is_comm(lb) for lb in lbs):  # a lowered schedule: sends and
                keep = [k for k, lb in enumerate(lbs) if not (isinstance(lb, Action) and is_comm(lb))]  # receives
                st, en, lbs = [st[k] for k in keep], [en[k] for k in keep], [lbs[k] for k in keep]  # take no time
            starts.extend(st)
            ends.extend(en)
            ranks.extend([r] * len(st))
            self.labels.extend(lbs)
            if all(type(lb) is Action for lb in lbs):  # the simulator's case: fast path
                acts: list[Action] = lbs  # type: ignore[assignment]
                chunk_of = {s: i for i, s in enumerate(sorted({a.stage for a in acts}))}
                kinds.extend([kind_index[a.kind] for a in acts])
                mbs.extend([a.microbatch for a in acts])
                chunks.extend([chunk_of[a.stage] for a in acts])
                self.key.extend([""] * len(acts))
                continue
            parsed: list[tuple[int, str, int] | None] = []
            for lb in lbs:
                if type(lb) is Pair:  # one box: coloured as its forward, both labels, backward drawn below
                    self.pair_b[len(kinds) + len(parsed)] = (lb.backward.microbatch, kind_index["B"], lb.backward.stage)
                    parsed.append((lb.stage, "F", lb.microbatch))
                    continue
                if isinstance(lb, Action):
                    parsed.append((lb.stage, lb.kind, lb.microbatch))
                    continue
                mt = ACTION_TEXT.match(str(lb))
                parsed.append((int(mt.group(1)), mt.group(2), int(mt.group(3))) if mt else None)
            chunk_of = {s: i for i, s in enumerate(sorted({a[0] for a in parsed if a is not None}))}
            for lb, pa in zip(lbs, parsed):
                if pa is not None:
                    kinds.append(kind_index[pa[1]])
                    mbs.append(pa[2])
                    chunks.append(chunk_of[pa[0]])
                    self.key.append(f"F{lb.forward.microbatch}&B{lb.backward.microbatch}" if type(lb) is Pair else "")
                    continue
                text = str(lb)
                low = text.lower()
                kind = ("F" if ("forward" in low or "fwd" in low) else
                        "W" if "weight" in low else
                        "B" if ("backward" in low or "bwd" in low) else "other")
                mt2 = LABEL_TRAIL_INT.search(text)
                kinds.append(kind_index[kind])
                mbs.append(int(mt2.group(1)) if mt2 else -1)
                chunks.append(0)
                self.key.append(text)
        self.n = len(starts)

    def text(self, i: int) -> str:
        """The full label of span ``i``: ``F3`` for actions, the label text otherwise."""
        if self.key[i]:
            return self.key[i]
        return f"{KIND_ORDER[self.kind[i]]}{self.mb[i]}"

    def kinds_present(self) -> list[str]:
        """Kinds that occur, in :data:`KIND_ORDER`."""
        return [KIND_ORDER[k] for k in sorted(set(self.kind))]

    def color_key(self, i: int, color_by: str, distinct: dict[str, int]) -> tuple[int, int]:
        """``(kind index, colour column)`` of span ``i``: the column is the microbatch's colour in the two
        rounds of :data:`PALETTE` (text labels without a number: one per distinct label, counted in ``distinct``)."""
        if color_by == "kind":
            return self.kind[i], 0
        n_pal = 2 * len(PALETTE)
        mb = self.mb[i]
        return self.kind[i], (mb % n_pal if mb >= 0 else distinct.setdefault(self.key[i], len(distinct)) % n_pal)


def span_color(kind: int, column: int, color_by: str) -> str:
    """The hex colour of a span from :meth:`SpanRows.color_key`."""
    if color_by == "kind":
        return KIND_COLORS[KIND_ORDER[kind]]
    return rgb_to_hex(lighten(round_color(column), KIND_LIGHTEN[KIND_ORDER[kind]]))


# -------------------------------------------------------------------------------- texts
def kind_name(kind: str) -> str:
    """The legend's name of an action kind (``"F forward"``), in the current language."""
    return tr(f"plot.kind.{kind}")


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ... ``11th``, ``12th``, ``21st``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def chunk_name(c: int) -> str:
    """The legend's name of chunk ``c >= 1`` (a rank's ``c+1``-th stage), in the current language."""
    return tr("plot.chunk", chunk=c, ordinal=ordinal(c + 1) if get_language() == "en" else c + 1)


def costs_title(costs: Costs, *, split: bool = True) -> str:
    """How a figure names its costs: a preset's name in the current language, else the costs' own
    name, else :meth:`Costs.describe` (``F=1 B=2 (I=1 W=1) comm=0 slot``; without ``(I=... W=...)``
    when ``split`` is False: the schedule drawn runs only fused backwards). Used by every diagram title."""
    for key, entry in PRESETS.items():
        if costs == entry:
            return tr(f"plot.costs.{key}")
    return costs.name if costs.name != "custom" else costs.describe(split=split)


def timeline_name(tl: Timeline) -> str:
    """A diagram's default title: schedule, p, m, v and costs of a simulation, or a trace's own name."""
    if isinstance(tl, SimResult):
        s = tl.schedule
        name, cost = display_name(s.name), costs_title(tl.costs, split=s.split_backward)
        if get_language() == "zh":  # Chinese punctuation, as the explorers' panel titles write it
            return f"{name}：p = {s.p}，m = {s.m}" + (f"，v = {s.v}" if s.v > 1 else "") + f"；{cost}"
        return f"{name}  p={s.p}, m={s.m}" + (f", v={s.v}" if s.v > 1 else "") + f"   |   {cost}"
    return tl.source or "timeline"  # a trace's own name (its file), never translated


def metrics_line(tl: Timeline) -> str:
    """The line under every diagram's title: bubble_ratio, bubble_overhead and makespan with its unit."""
    unit = plural(tl.unit)
    if get_language() == "zh" and tl.unit in ("slot", "slots"):
        unit = "个" + unit  # 21 个时间槽 (a counted unit takes its measure word; ms does not)
    return tr("plot.metrics", ratio=tl.bubble_ratio, overhead=tl.bubble_overhead,
              makespan=format_number(float(tl.makespan)), unit=unit)


def label_stage(label: Any) -> int:
    """The stage of a span's label: an action's stage, ``int`` of ``"3F1"``-style text, else -1."""
    stage = getattr(label, "stage", None)
    if isinstance(stage, int):
        return stage
    mt = ACTION_TEXT.match(str(label)) if isinstance(label, str) else None
    return int(mt.group(1)) if mt else -1


def rank_stages(tl: Timeline) -> list[tuple[int, ...]]:
    """Per rank, the stages it holds in increasing order (chunk 0, chunk 1, ...): the placement."""
    if isinstance(tl, SimResult):
        return [tuple(tl.schedule.stages_of(r)) for r in range(tl.p)]
    out = []
    for r in range(tl.p):
        found = {label_stage(lb) for lb in tl.arrays(r)[2]}
        out.append(tuple(sorted(x for x in found if x >= 0)))
    return out


# ---------------------------------------------------- marks: the critical path and the hops
#: A segment in the diagram's coordinates: ``(t0, rank0, t1, rank1)``, rank a fractional row (0 the top row's centre).
Segment = tuple[float, float, float, float]


def critical_boxes(tl: SimResult) -> list[tuple[float, float, int]]:
    """The compute actions on ``tl``'s critical path (:attr:`~bubblekit.SimResult.critical_path`), in its
    order, as ``(start, end, rank)`` in the timeline's unit; sends and receives (which take no time) are left
    out: their hop is drawn between the compute boxes (:func:`critical_hops`)."""
    index = [{a: i for i, a in enumerate(order)} for order in tl.schedule.orders]
    arrays = [tl.arrays(r) for r in range(tl.p)]
    out = []
    for r, a in tl.critical_path:
        if is_comm(a):
            continue
        i = index[r][a]
        out.append((arrays[r][0][i], arrays[r][1][i], r))
    return out


def _edge(r0: float, r1: float, height: float) -> float:
    """Where a line from row ``r0`` towards row ``r1`` leaves a box ``height`` high: its bottom, top or middle."""
    return r0 + (height / 2 if r1 > r0 else -height / 2 if r1 < r0 else 0.0)


def critical_hops(boxes: Sequence[tuple[float, float, int]], height: float = BOX_HEIGHT) -> list[Segment]:
    """The lines between consecutive boxes of the critical path (:func:`critical_boxes`) that do not touch
    (a wait or a message): from the end of one (its bottom or top edge when the next is on another rank,
    boxes ``height`` rows high) to the start of the next."""
    out = []
    for (_, e0, r0), (s1, _, r1) in zip(boxes, boxes[1:]):
        if r0 == r1 and e0 == s1:
            continue
        out.append((e0, _edge(r0, r1, height), s1, _edge(r1, r0, height)))
    return out


def want_arrows(tl: Timeline, comm_arrows: bool | None) -> bool:
    """``comm_arrows`` as given, or for ``None``: a simulation with a latency (``costs.comm > 0``) and at
    most :data:`COMM_ARROW_AUTO` cross-rank hops."""
    if comm_arrows is not None:
        return comm_arrows
    if not isinstance(tl, SimResult):
        return False
    comm = tl.costs.comm
    return bool(isinstance(comm, (int, float, Fraction)) and comm > 0 and tl.schedule.hops_per_step <= COMM_ARROW_AUTO)


def dependency_pairs(tl: SimResult) -> list[tuple[int, float, int, float]]:
    """Cross-rank hops as ``(from_rank, send_time, to_rank, start_time)``, by the dependency
    rule (:func:`bubblekit.actions.inputs`): an activation forward, a gradient backward."""
    where: dict[Action, tuple[int, float, float]] = {}
    for r in range(tl.p):
        st, en, lbs = tl.arrays(r)
        for s0, e0, a in zip(st, en, lbs):
            if isinstance(a, Action):
                for x in parts(a):  # a pair's parts start and end with it
                    where[x] = (r, s0, e0)
    out = []
    for a, (r, s0, _) in where.items():
        for src in inputs(a, tl.schedule.n_stages, where.__contains__, tl.schedule.pipes):
            made = where.get(src)
            if made is not None and made[0] != r:
                out.append((made[0], made[2], r, s0))
    return out


def comm_arrow_segments(tl: SimResult, height: float = BOX_HEIGHT, *, stacklevel: int = 2) -> list[Segment]:
    """One arrow per cross-rank hop (:func:`dependency_pairs`): from the sending box's edge facing the
    receiver, at the send time, to the receiving box's edge, at its start. Beyond :data:`COMM_ARROW_LIMIT`
    hops: none, with a warning that names the limit (``stacklevel`` as :func:`warnings.warn`'s, counted from
    the caller)."""
    pairs = dependency_pairs(tl)
    if len(pairs) > COMM_ARROW_LIMIT:
        warnings.warn(
            f"comm_arrows: {len(pairs)} cross-rank hops is more than COMM_ARROW_LIMIT={COMM_ARROW_LIMIT}; "
            "no arrows drawn (use a smaller p or m)", stacklevel=stacklevel + 1,
        )
        return []
    return [(x0, _edge(r0, r1, height), x1, _edge(r1, r0, height)) for r0, x0, r1, x1 in pairs]


# ---------------------------------------------------------------------------- animation
def frame_times(t0: float, t1: float, frames: int) -> list[float]:
    """An animation's frame times ``t0, t0 + step, ...`` and ``t1`` (at most ``frames``): ``step`` is the
    smallest of 1, 2, 2.5, 5 x 10^k with ``(t1 - t0) / step <= frames - 1``, so readouts show round times."""
    span = t1 - t0
    if not span > 0:
        return [t0, t1]
    want = span / (frames - 1)
    power = 10.0 ** math.floor(math.log10(want))
    step = next(f * power for f in (1.0, 2.0, 2.5, 5.0, 10.0) if f * power >= want * (1 - 1e-12))
    n = int(math.floor(span / step * (1 + 1e-12)))
    times = [t0 + k * step for k in range(n + 1)]
    if t1 - times[-1] > step * 1e-9:
        times.append(t1)
    else:
        times[-1] = t1
    return [float(t) for t in times]


def animation_readout(tl: Timeline, t: float, times: list[float], running: int) -> str:
    """The line under an animation's frame at time ``t``: the elapsed time (as wide as the widest of
    ``times``), of the whole step, the ``running`` actions and the bubble ratio so far
    (:meth:`~bubblekit.Timeline.bubble_so_far`), in the current language."""
    t0, t1 = float(tl.t0), float(tl.t1)
    width = max(len(format_number(float(x) - t0)) for x in times)
    return tr("plot.anim.readout", t=f"{format_number(t - t0):>{width}}", total=format_number(t1 - t0),
              unit=plural(tl.unit), running=running, bubble=tl.bubble_so_far(t))


# ------------------------------------------------------------------ charts: memory and sweep
@dataclass(frozen=True)
class ChartSeries:
    """One series of a chart, in data units: what plotting's matplotlib charts and the SVG ones both draw.

    ``key``: its name in the picture (matplotlib's gid, the SVG's ``data-series``); ``label``: the
    legend's text; ``xs``, ``ys``: its points; ``color``; ``style``: an index into
    :data:`LINE_STYLES`; ``marker``: an index into :data:`MARKERS` for points drawn without a line
    (``None``: a line); ``filled``: the marker filled with the colour (else white or hollow);
    ``steps``: a step line (each value holds until the next point); ``edge``: the markers' outline
    colour (``None``: ``color``), e.g. black for the schedules on the memory/bubble frontier.
    """

    key: str
    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    color: str
    style: int = 0
    marker: int | None = None
    filled: bool = True
    steps: bool = False
    edge: str | None = None

    def __post_init__(self) -> None:
        if self.edge is not None and (not isinstance(self.edge, str) or not _HEX.match(self.edge)):
            raise ValueError(f"edge must be None or a colour written #RRGGBB (e.g. '#000000'), got {self.edge!r}")


def memory_arguments(result_or_results: Any, cap: Any, ranks: Any) -> tuple[list[SimResult], list[list[int]]]:
    """Check ``plot_memory``'s arguments: the simulated results, and the ranks drawn of each."""
    if isinstance(result_or_results, Timeline):
        res: list[Any] = [result_or_results]
    elif (isinstance(result_or_results, (list, tuple)) and result_or_results
          and all(isinstance(t, Timeline) for t in result_or_results)):
        res = list(result_or_results)
    else:
        raise TypeError("result_or_results must be a bubblekit Timeline (e.g. bk.simulate(...)) or a non-empty list "
                        f"of them, got {type(result_or_results).__name__}")
    for r in res:
        if not isinstance(r, SimResult):
            raise TypeError(f"plot_memory needs simulated results (bk.simulate(...)), got {type(r).__name__}")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or not cap > 0):
        raise ValueError(f"cap must be a positive number of microbatch activations, got {cap!r}")
    if ranks is not None and (isinstance(ranks, (str, bytes)) or not isinstance(ranks, Sequence)):
        raise TypeError(f"ranks must be None (all ranks) or a list of rank numbers, got {ranks!r}")
    sels: list[list[int]] = []
    for r in res:
        sel = list(range(r.p)) if ranks is None else list(ranks)
        if not sel:
            raise ValueError("ranks must name at least one rank (None draws all of them), got []")
        for q in sel:
            if isinstance(q, bool) or not isinstance(q, int) or not 0 <= q < r.p:
                raise ValueError(f"ranks must be rank numbers in 0..{r.p - 1}, got {q!r}")
        sels.append(sel)
    return res, sels


def memory_series(r: SimResult, sel: Sequence[int]) -> tuple[list[ChartSeries], ChartSeries]:
    """The memory chart of one result: a step line per rank in ``sel`` (activations held over time,
    from :attr:`SimResult.memory_curves`, to the step's end) and the peaks, each where first reached."""
    curves = r.memory_curves
    t1 = float(r.t1)
    peaks = r.peak_activations
    lines: list[ChartSeries] = []
    px: list[float] = []
    py: list[float] = []
    for q in sel:
        pts = curves[q]
        xs = tuple([float(t) for t, _ in pts] + [t1])
        ys = tuple([v for _, v in pts] + [pts[-1][1]])
        peak = peaks[q]
        lines.append(ChartSeries(f"memory-rank-{q}", tr("plot.memory.rank_peak", rank=q,
                                                         peak=format_number(peak, 3, fractions=False)),
                                 xs, ys, LINE_COLORS[q % len(LINE_COLORS)],
                                 style=(q // len(LINE_COLORS)) % len(LINE_STYLES), steps=True))
        px.append(next(float(t) for t, v in pts if round(v, 9) >= peak))
        py.append(peak)
    marks = ChartSeries("peaks", tr("plot.memory.peak_marker"), tuple(px), tuple(py), "#000000", marker=4,
                        filled=False)
    return lines, marks


def memory_title(r: SimResult, sel: Sequence[int], cap: float | None) -> str:
    """The memory chart's title: the run's name, its largest peak and, with a cap, the ranks over it."""
    title = f"{timeline_name(r)}\n" + tr("plot.memory.max_peak", peak=format_number(r.max_peak_activations, 3, fractions=False))
    if cap is not None:
        over = [q for q in sel if r.peak_activations[q] > cap]
        title += "   |   " + (tr("plot.memory.over_cap", ranks=("、" if get_language() == "zh" else ", ").join(f"rank {q}" for q in over)) if over
                                else tr("plot.memory.under_cap"))
    return title


def memory_top(res: Sequence[SimResult], cap: float | None) -> float:
    """The top of the memory charts' shared y axis: the largest peak (or the cap) and some room."""
    return max([max(r.peak_activations) for r in res] + [cap or 0.0]) * 1.15 + 0.1


def sweep_arguments(
    schedule_names: Any, p: Any, ms: Any, v: Any, costs: Any
) -> tuple[list[ScheduleSpec], list[int], list[int], Costs]:
    """Check ``plot_sweep``'s arguments: registry entries, sorted ``m``, the ``v`` list, costs."""
    if not isinstance(schedule_names, str) and not (isinstance(schedule_names, Sequence)
                                                    and all(isinstance(n, str) for n in schedule_names)):
        raise TypeError(f"schedule_names must be a schedule name or a list of them (e.g. ['gpipe', '1f1b']), "
                        f"got {schedule_names!r}")
    names = [schedule_names] if isinstance(schedule_names, str) else list(schedule_names)
    if not names:
        raise ValueError("schedule_names must name at least one schedule")
    entries = [spec(n) for n in names]
    check_int("p", p)
    if isinstance(ms, (str, bytes)) or not isinstance(ms, Sequence):
        raise TypeError(f"ms must be a list of microbatch counts (whole numbers >= 1, e.g. [2, 4, 8]), got {ms!r}")
    m_list = sorted({check_int(f"ms[{k}]", m) for k, m in enumerate(ms)})
    if not m_list:
        raise ValueError("ms must hold at least one microbatch count")
    vs = [v] if isinstance(v, int) and not isinstance(v, bool) else list(v)
    for x in vs:
        check_int("v", x)
    costs = Costs() if costs is None else costs
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    return entries, m_list, vs, costs


@dataclass(frozen=True)
class SweepData:
    """What ``plot_sweep`` draws: simulated points per (schedule, v), the closed form per v used,
    the m values (the x ticks), the title, the ``m`` a schedule refused (``skipped``) and whether
    the m axis is logarithmic (base 2: when m spans 8x or more)."""

    points: list[ChartSeries]
    forms: list[ChartSeries]
    m_list: list[int]
    title: str
    skipped: list[str]
    log_m: bool


def _geom_grid(lo: int, hi: int, n: int = 200) -> list[int]:
    """Whole numbers spread evenly on a log scale from ``lo`` to ``hi`` (numpy's geomspace, rounded)."""
    if hi == lo:
        return [lo]
    ratio = math.log(hi / lo)
    inner = {int(round(lo * math.exp(ratio * k / (n - 1)))) for k in range(1, n - 1)}
    return sorted(inner | {lo, hi})


def sweep_data(
    schedule_names: Any, p: Any, ms: Any, v: Any = 1, costs: Any = None,
    step: Callable[[int], Any] | None = None, reporter_for: Callable[[int, float], Callable[[int], Any]] | None = None,
) -> SweepData:
    """The bubble sweep's numbers (``plot_sweep``'s arguments, checked): ``bk.simulate(...).bubble_ratio``
    for each schedule, v and m (an ``m`` a schedule refuses is skipped and listed), and the closed form
    ``bk.bubble_ratio(p, m, v)`` on a dense m grid for each v used (for ``v >= 2`` only from ``m = p``
    on: with fewer microbatches than ranks it does not hold). ``reporter_for(series, estimate_s)``
    gives a progress step called after each series."""
    entries, m_list, vs, costs = sweep_arguments(schedule_names, p, ms, v, costs)
    runs = [(entry, vv) for entry in entries
            for vv in ([1] if entry.chunks == "one" else [2] if entry.chunks == "two" else [x for x in vs if x >= 2] or [2])]
    if reporter_for is not None:
        total = sum(e.n_actions(p, m, vv) for e, vv in runs for m in m_list)
        step = reporter_for(len(runs), total * 2e-6)
    skipped: list[str] = []
    used_v: list[int] = []
    points: list[ChartSeries] = []
    for series, (entry, vv) in enumerate(runs):
        xs: list[int] = []
        ys: list[float] = []
        for m in m_list:
            try:
                sched = schedule(entry.name, p, m, None if entry.chunks == "one" else vv)
            except ValueError as exc:
                skipped.append(f"{entry.name} v={vv} m={m}: {str(exc).splitlines()[0]}")
                continue
            xs.append(m)
            ys.append(simulate(sched, costs).bubble_ratio)
        if vv not in used_v:
            used_v.append(vv)
        name = display_name(entry.name)
        label = (tr("plot.sweep.simulated", name=name) if entry.chunks == "one"
                 else tr("plot.sweep.simulated_v", name=name, v=vv))
        points.append(ChartSeries(f"sim:{entry.name}:v={vv}", label, tuple(xs), tuple(ys),
                                  SERIES_COLORS[series % len(SERIES_COLORS)], marker=series % len(MARKERS),
                                  filled=not series % 2))
        if step is not None:
            step(series + 1)
    grid = _geom_grid(m_list[0], m_list[-1])
    grid = sorted(set(grid) | set(m_list))
    forms: list[ChartSeries] = []
    for j, vv in enumerate(sorted(used_v)):
        form = "(p−1)/(m+p−1)" if vv == 1 else f"(p−1)/(m·v+p−1), v={vv}, m ≥ p"
        fx = grid if vv == 1 else [m for m in grid if m >= p]
        if not fx:
            continue
        forms.append(ChartSeries(f"formula:v={vv}", tr("plot.sweep.closed_form", form=form), tuple(fx),
                                 tuple(bubble_ratio(p, m, vv) for m in fx), "#444444", style=j % len(LINE_STYLES)))
    return SweepData(points, forms, m_list, tr("plot.sweep.title", p=p, costs=costs_title(costs)), skipped,
                     m_list[-1] / m_list[0] >= 8)


def check_animation(result: Any, frames: Any, interval_ms: Any, dpi: Any) -> None:
    """The animation's arguments, checked alike by plotting's (matplotlib) and svg_plotting's (SVG) animations."""
    if not isinstance(result, Timeline):
        raise TypeError(f"result must be one bubblekit Timeline, got {type(result).__name__}")
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 2:
        raise ValueError(f"frames must be a whole number >= 2, got {frames!r}")
    if isinstance(interval_ms, bool) or not isinstance(interval_ms, (int, float)) or not interval_ms > 0:
        raise ValueError(f"interval_ms must be a positive number of milliseconds, got {interval_ms!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not 20 <= dpi <= 600:
        raise ValueError(f"dpi must be a number of dots per inch from 20 to 600, got {dpi!r}")
