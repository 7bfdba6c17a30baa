"""Pictures of pipelines (matplotlib): diagrams, memory curves, sweeps, animations.

Every function takes a :class:`bubblekit.Timeline` (a :class:`bubblekit.SimResult` from the
simulator, or a measured trace) and returns a :class:`matplotlib.figure.Figure` that is
*not* registered with pyplot: make it the last expression of a notebook cell (or call
``display(fig)``) to show it, ``fig.savefig(path)`` to write it. Nothing is shown twice
and nothing leaks into pyplot's figure list.

Diagram conventions (the papers' style): one row per rank, rank 0 on top, time to the
right in the timeline's unit; each action is a box labelled with its kind and microbatch
(``F3``, ``B3``); with ``v > 1`` chunks per rank, chunk 1 is hatched ``//``, chunk 2 ``\\\\``
and so on; idle time (the bubble) is drawn as light grey hatched boxes from
:meth:`bubblekit.Timeline.idle_intervals`. Every panel title names both bubble measures:
``bubble_ratio`` = idle / (p x makespan) and ``bubble_overhead`` = idle / busy.

Boxes are drawn as one :class:`~matplotlib.collections.PolyCollection` per kind of mark
(actions, bubbles, chunk hatches), so 100,000 actions draw in about a second; labels are
kept only where they fit the box in display pixels, and not at all for more than
:data:`LABEL_LIMIT` boxes (unless ``labels=True``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from html import escape as html_escape
from pathlib import Path
from typing import Any, Union, cast

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib import animation as manimation
from matplotlib import colors as mcolors
from matplotlib import font_manager, rcParams
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.path import Path as MplPath
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator, PercentFormatter
from matplotlib.transforms import Bbox, TransformedBbox

from bubblekit._progress import Progress, reporter
from bubblekit.actions import Action
from bubblekit.costs import Costs
from bubblekit.i18n import get_language, register, tr
from bubblekit.presentation import (
    diagram,
    fonts,  # the figures' font follows bk.set_language from now on
)
from bubblekit.presentation.diagram import (
    BOX_HEIGHT,
    BUBBLE_COLOR,
    BUBBLE_HATCH_COLOR,
    CHUNK_EDGE_COLOR,
    CHUNK_EDGE_WIDTH,
    COMM_ARROW_AUTO,
    COMM_ARROW_LIMIT,
    CRITICAL_COLOR,
    KIND_COLORS,
    LINE_COLORS,
    PALETTE,
    SECOND_ROUND_DARKEN,
    SERIES_COLORS,
    microbatch_color,
)
from bubblekit.simulator import SimResult
from bubblekit.text import format_number, time_label  # noqa: F401  (format_number: plotting.format_number)
from bubblekit.timeline import Timeline

__all__ = [
    "PALETTE", "SECOND_ROUND_DARKEN", "SERIES_COLORS", "microbatch_color", "placement_strip_width", "LINE_COLORS", "KIND_COLORS", "BUBBLE_COLOR",
    "CRITICAL_COLOR", "CURSOR_COLOR", "CHUNK_EDGE_COLOR", "CHUNK_EDGE_WIDTH",
    "BOX_HEIGHT", "LABEL_LIMIT", "COMPOUND_ABOVE", "COMM_ARROW_LIMIT", "COMM_ARROW_AUTO", "SMALL_LABEL_PT",
    "use_course_style", "plot_pipeline", "plot_memory", "plot_sweep",
    "animate_pipeline", "pipeline_animation_html", "save_animation_gif",
    "time_label", "plot_frontier",
]

TimelineOrList = Union[Timeline, Sequence[Timeline]]

register({
    # every text the pictures draw, in both languages (bubblekit.i18n; read when a figure is drawn)
    "plot.phase.fill": {"en": "fill", "zh": "填充"},
    "plot.phase.steady": {"en": "steady", "zh": "稳态"},
    "plot.phase.between": {"en": "between fill and drain", "zh": "填充与排空之间"},
    "plot.phase.drain": {"en": "drain", "zh": "排空"},
    "plot.anim.once": {"en": "Once", "zh": "播放一次"},
    "plot.anim.loop": {"en": "Loop", "zh": "循环"},
    "plot.anim.reflect": {"en": "Reflect", "zh": "往返"},
    "plot.anim.repeat": {"en": "Repetition mode", "zh": "重复方式"},
    "plot.frontier.gpu_memory": {"en": " GPU memory", "zh": " 显存容量"},
    "plot.frontier.x.total": {"en": "memory per device (GB): parameters, gradients, optimizer state, activations",
                              "zh": "每卡显存（GB）：参数、梯度、优化器状态、激活"},
    "plot.frontier.x.activations": {"en": "activation memory per device (GB)", "zh": "每卡激活显存（GB）"},
    "plot.frontier.x.state": {"en": "model state per device (GB)", "zh": "每卡模型状态显存（GB）"},
    "plot.frontier.y.bubble_ratio": {"en": "bubble_ratio (% of the step)", "zh": "气泡比例（占单步的 %）"},
})


class _KindNames:
    """Legend names of the action kinds, in the current language (``_KIND_NAMES["F"]``)."""

    def __getitem__(self, kind: str) -> str:
        return tr(f"plot.kind.{kind}")


_KIND_NAMES = _KindNames()
#: The animation's time cursor (the critical path's outline is diagram's CRITICAL_COLOR; a box's height in
#: rank rows diagram's BOX_HEIGHT).
CURSOR_COLOR = diagram.CURSOR_COLOR
#: Above this many boxes, action boxes are drawn as one compound path per colour (same
#: rectangles, far faster to build and render) instead of one polygon per box.
COMPOUND_ABOVE = 5000
#: Above this many boxes, automatic labels (``labels=None``) are switched off (the SVG pictures' rule too).
LABEL_LIMIT = diagram.LABEL_LIMIT
# COMM_ARROW_LIMIT (no arrows beyond it, with a warning) and COMM_ARROW_AUTO (comm_arrows=None draws them for a
# simulation with latency and at most this many hops) are diagram's, shared with the SVG pictures.
#: Chunks 1, 2, ... of a rank (its second, third ... stage) are outlined in :data:`CHUNK_EDGE_COLOR`, solid
#: for chunk 1, then dashed, dotted, dash-dotted: nothing like the idle boxes' grey hatch.
_CHUNK_LINESTYLES: tuple[Any, ...] = ("solid", "solid", (0, (3.0, 1.6)), (0, (1.0, 1.2)), (0, (3.0, 1.2, 1.0, 1.2)))
# the diagram's rules, shared with the SVG pictures (bubblekit.presentation.diagram, pure Python)
_KIND_LIGHTEN = diagram.KIND_LIGHTEN
_KIND_ORDER = diagram.KIND_ORDER
_ACTION_TEXT = diagram.ACTION_TEXT


# ----------------------------------------------------------------------------- style
def use_course_style(*, font_size: float = 12.0) -> None:
    """Set rcParams for readable, projectable figures (returns nothing, so a notebook cell
    ending with it prints nothing machine-dependent; read ``rcParams["font.family"]``).

    Larger fonts, no top/right spines, the Okabe-Ito colour cycle, and a font family
    with a CJK-capable font first when one is installed (:func:`bubblekit.presentation.fonts.find_cjk_font`:
    Debian ``fonts-noto-cjk`` gives "Noto Sans CJK SC"), then DejaVu Sans; matplotlib falls back glyph by
    glyph, so Chinese labels and Latin text both render. A missing CJK font is skipped
    here; in the Chinese edition :mod:`~bubblekit.presentation.fonts` warns once how to install one.

    Used in lessons 01, 02, 03, 04, 05, 06, 07, 08, 09 and 10.
    """
    cjk = fonts.find_cjk_font()
    family = ([cjk] if cjk else []) + ["DejaVu Sans"]
    rcParams.update({
        "font.family": family,
        "font.size": font_size,
        "axes.titlesize": font_size + 1,
        "axes.labelsize": font_size,
        "xtick.labelsize": font_size - 1,
        "ytick.labelsize": font_size - 1,
        "legend.fontsize": font_size - 2,
        "figure.titlesize": font_size + 2,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": cycler(color=list(LINE_COLORS)),
        "lines.linewidth": 2.0,
        "figure.dpi": 100,
        "savefig.dpi": 150,
        "figure.facecolor": "white",
        "axes.unicode_minus": True,
    })


def _title_size() -> float:
    """Panel titles: 90 % of rcParams' axes.titlesize (which may be a word like "large")."""
    return float(font_manager.FontProperties(size=rcParams["axes.titlesize"]).get_size_in_points()) * 0.9


# ------------------------------------------------------------------------ inputs
def _as_list(obj: Any, name: str = "result_or_results") -> list[Timeline]:
    if isinstance(obj, Timeline):
        return [obj]
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(t, Timeline) for t in obj):
        return list(obj)
    raise TypeError(
        f"{name} must be a bubblekit Timeline (e.g. bk.simulate(...)) or a non-empty list of them, "
        f"got {type(obj).__name__}"
    )


def _check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")


_timeline_name = diagram.timeline_name
_metrics_line = diagram.metrics_line


# ------------------------------------------------------------------- span tables
class _Spans:
    """Flat numpy arrays over all spans of a timeline, rank by rank (``spans()`` order).

    ``kind`` indexes :data:`_KIND_ORDER`; ``mb`` is the microbatch (-1 when a text label has
    no number); ``chunk`` is the index of the span's stage among its rank's stages; ``key``
    is the colour key of text labels that are not actions (``""`` for actions).
    """

    def __init__(self, tl: Timeline) -> None:
        rows = diagram.SpanRows(tl)  # the pure-Python reading of the spans, shared with the SVG pictures
        self.labels: list[Action | str] = rows.labels
        self.key: list[str] = rows.key
        #: overlapped pairs: span index -> (backward part's microbatch, its kind index, its stage)
        self.pair_b: dict[int, tuple[int, int, int]] = rows.pair_b
        self.start = np.asarray(rows.start, dtype=float)
        self.end = np.asarray(rows.end, dtype=float)
        self.rank = np.asarray(rows.rank, dtype=float)
        self.kind = np.asarray(rows.kind, dtype=np.int64)
        self.mb = np.asarray(rows.mb, dtype=np.int64)
        self.chunk = np.asarray(rows.chunk, dtype=np.int64)
        self.n = rows.n

    def text(self, i: int) -> str:
        """The full label of span ``i``: ``F3`` for actions, the label text otherwise."""
        if self.key[i]:
            return self.key[i]
        return f"{_KIND_ORDER[int(self.kind[i])]}{int(self.mb[i])}"

    def kinds_present(self) -> list[str]:
        """Kinds that occur, in :data:`_KIND_ORDER`."""
        return [_KIND_ORDER[int(k)] for k in np.unique(self.kind)]

    def verts(self, mask: np.ndarray | None = None, height: float = BOX_HEIGHT) -> np.ndarray:
        """Rectangles as an ``(n, 4, 2)`` array."""
        s, e, y = (self.start, self.end, self.rank) if mask is None else (
            self.start[mask], self.end[mask], self.rank[mask])
        return _rects(s, e, y, height)


def _poly(verts: np.ndarray, **kw: Any) -> PolyCollection:
    """A PolyCollection from an ``(n, 4, 2)`` vertex array (matplotlib's fast path)."""
    return PolyCollection(cast(Any, verts), **kw)


_RECT_CODES = np.array([MplPath.MOVETO, MplPath.LINETO, MplPath.LINETO, MplPath.LINETO, MplPath.CLOSEPOLY],
                       dtype=MplPath.code_type)


def _compound_rects(verts: np.ndarray) -> MplPath:
    """One path holding every rectangle of an ``(n, 4, 2)`` array (filled in one pass)."""
    n = len(verts)
    v5 = np.concatenate([verts, verts[:, :1, :]], axis=1).reshape(-1, 2) if n else np.zeros((0, 2))
    return MplPath(v5, np.tile(_RECT_CODES, n))


def _compound(verts_groups: Sequence[np.ndarray], **kw: Any) -> PathCollection:
    """A collection with one compound path per group of rectangles.

    Agg fills (and hatches) a compound path in one pass, so a hatch over many boxes, or
    tens of thousands of boxes grouped by colour, draw several times faster than one
    polygon per box. ``facecolors`` in ``kw`` give one colour per group.
    """
    return PathCollection([_compound_rects(v) for v in verts_groups], **kw)


def _rects(s: np.ndarray, e: np.ndarray, y: np.ndarray, height: float) -> np.ndarray:
    h = height / 2.0
    v = np.empty((len(s), 4, 2))
    v[:, 0, 0] = s
    v[:, 1, 0] = s
    v[:, 2, 0] = e
    v[:, 3, 0] = e
    v[:, 0, 1] = y - h
    v[:, 1, 1] = y + h
    v[:, 2, 1] = y + h
    v[:, 3, 1] = y - h
    return v


def _lighten(color: str, amount: float) -> np.ndarray:
    return np.append(np.asarray(diagram.lighten(color, amount)), 1.0)


_round_color = diagram.round_color


@functools.lru_cache(maxsize=1)
def _microbatch_table() -> np.ndarray:
    """RGBA rows of ``color_by="microbatch"``: per kind (:data:`_KIND_ORDER`), the two rounds of
    :data:`PALETTE` lightened for that kind (computed once; read-only)."""
    n_pal = 2 * len(PALETTE)
    table = np.array([_lighten(_round_color(c), _KIND_LIGHTEN[k]) for k in _KIND_ORDER for c in range(n_pal)])
    table.setflags(write=False)
    return table


def _color_index(sp: _Spans, color_by: str) -> tuple[np.ndarray, np.ndarray]:
    """``(table, index)``: RGBA rows and, per span, its row (so equal colours share a row)."""
    if color_by == "kind":
        table = np.array([np.append(mcolors.to_rgb(KIND_COLORS[k]), 1.0) for k in _KIND_ORDER])
        return table, sp.kind.copy()
    n_pal = 2 * len(PALETTE)  # two rounds: the palette, then the palette darker
    table = _microbatch_table()
    col = np.where(sp.mb >= 0, sp.mb % n_pal, 0)
    no_mb = np.flatnonzero(sp.mb < 0)
    if len(no_mb):  # text labels without a number: one colour per distinct label
        distinct: dict[str, int] = {}
        for i in no_mb:
            col[i] = distinct.setdefault(sp.key[i], len(distinct)) % n_pal
    return table, sp.kind * n_pal + col


def _face_colors(sp: _Spans, color_by: str) -> np.ndarray:
    """RGBA per span: by kind, or by microbatch (backward kinds lighter)."""
    table, index = _color_index(sp, color_by)
    return table[index] if sp.n else np.zeros((0, 4))


_text_color = diagram.text_color


def _gap_arrays(tl: Timeline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gaps = tl.idle_intervals()
    return (np.array([float(g.start) for g in gaps]), np.array([float(g.end) for g in gaps]),
            np.array([g.rank for g in gaps], dtype=float))


# ------------------------------------------------------------------------ diagram
def _new_figure(width: float, heights: Sequence[float]) -> Figure:
    return Figure(figsize=(width, sum(heights)), layout="constrained")


def _panels(
    ax: Axes | Sequence[Axes] | None, width: float, heights: list[float], what: str, **subplots_kw: Any
) -> tuple[Figure, list[Axes]]:
    """One panel per height, stacked in a new figure of ``width`` inches, or the Axes given
    (one per panel; ``what`` names the panels in the error when the counts differ)."""
    if ax is None:
        fig = _new_figure(width, heights)
        got = fig.subplots(len(heights), 1, squeeze=False, **subplots_kw)
        return fig, list(got[:, 0])
    axes = [ax] if isinstance(ax, Axes) else list(ax)
    if len(axes) != len(heights):
        raise ValueError(f"ax has {len(axes)} Axes but there are {len(heights)} {what}")
    return cast(Figure, axes[0].get_figure()), axes


def _panel_height(p: int) -> float:
    return float(min(max(0.42 * p + 1.3, 2.2), 7.5))


def plot_pipeline(
    result_or_results: TimelineOrList,
    *,
    ax: Axes | Sequence[Axes] | None = None,
    color_by: str = "microbatch",
    show_bubbles: bool = True,
    phases: bool = False,
    critical_path: bool = False,
    comm_arrows: bool | None = None,
    labels: bool | None = None,
    title: str | Sequence[str] | None = None,
    unit_label: str | None = None,
) -> Figure:
    """Draw pipeline diagram(s): one row per rank (rank 0 on top), time to the right.

    Args:
        result_or_results: a :class:`~bubblekit.Timeline` (``bk.simulate(...)`` or a trace),
            or a list of them: one panel each, stacked, sharing the time axis when their
            units agree.
        ax: an Axes to draw one timeline into (or one Axes per timeline); default a new figure.
        color_by: ``"microbatch"`` (Okabe-Ito colour per microbatch, backward lighter) or
            ``"kind"`` (F / B / I / W colours).
        show_bubbles: draw idle intervals as light grey hatched boxes.
        phases: mark fill / steady / drain (see :meth:`bubblekit.Timeline.phases`); the
            middle window is called "steady" only when no rank idles in it (else "between
            fill and drain": GPipe has no steady state, and a 1F1B rank may still wait there).
        critical_path: outline the chain of actions that sets the makespan (needs a
            :class:`~bubblekit.SimResult`).
        comm_arrows: arrows for cross-rank dependencies (activation F -> F, gradient
            B/I -> B/I); needs a SimResult; skipped with a warning beyond
            :data:`COMM_ARROW_LIMIT` arrows. ``None`` (default): drawn for simulations
            with a latency (``costs.comm > 0``) and at most :data:`COMM_ARROW_AUTO` hops.
        labels: ``None`` labels boxes where the text fits (none beyond :data:`LABEL_LIMIT`
            boxes); ``True`` labels wherever text fits; ``False`` none.
        title: a name for the panel (or one per panel); the bubble_ratio and
            bubble_overhead line is always added. Default: schedule, p, m, v and costs.
        unit_label: x-axis label; default from the timeline's unit, e.g. "time (slots)".

    Returns the Figure (not registered with pyplot).

    Used in every lesson but 08.
    """
    tls = _as_list(result_or_results)
    _check_choice("color_by", color_by, ("microbatch", "kind"))
    if labels is not None and not isinstance(labels, bool):
        raise TypeError(f"labels must be None (auto), True or False, got {labels!r}")
    titles: list[str | None]
    if title is None or isinstance(title, str):
        titles = [title] * len(tls) if len(tls) == 1 or title is None else [None] * len(tls)
        suptitle = title if (isinstance(title, str) and len(tls) > 1) else None
    else:
        titles = list(title)
        suptitle = None
        if len(titles) != len(tls):
            raise ValueError(f"title has {len(titles)} entries but there are {len(tls)} timelines")
    for flag, name in ((critical_path, "critical_path"), (comm_arrows, "comm_arrows")):
        if flag and not all(isinstance(t, SimResult) for t in tls):
            raise TypeError(f"{name}=True needs simulated results (bk.simulate(...)), not a measured Timeline")
    same_unit = len({t.unit for t in tls}) == 1
    heights = [_panel_height(t.p) + (0.25 if phases else 0.0) for t in tls]
    fig, axes = _panels(ax, 12.0, heights, "timelines", sharex=same_unit, height_ratios=heights)
    if suptitle:
        fig.suptitle(suptitle)
    engine = fig.get_layout_engine()
    for i, (tl, a) in enumerate(zip(tls, axes)):
        last = i == len(tls) - 1
        _draw_timeline(
            a, tl, color_by=color_by, show_bubbles=show_bubbles, phases=phases,
            critical_path=critical_path, comm_arrows=_want_arrows(tl, comm_arrows), title=titles[i],
            xlabel=(unit_label or time_label(tl.unit)) if (last or not same_unit or ax is not None) else None,
        )
    if same_unit and len(tls) > 1:
        lo, hi = min(float(t.t0) for t in tls), max(float(t.t1) for t in tls)
        pad = (hi - lo) * 0.005
        for a in axes:
            a.set_xlim(lo - pad, hi + pad)
    if labels is not False and any(labels or t.n_spans <= LABEL_LIMIT for t in tls):
        if ax is None and engine is not None:
            engine.execute(fig)  # settle the layout so box widths in pixels are known
        for tl, a in zip(tls, axes):
            if labels or tl.n_spans <= LABEL_LIMIT:
                _add_labels(a, tl, color_by)
    return fig


_want_arrows = diagram.want_arrows


def _draw_timeline(
    ax: Axes, tl: Timeline, *, color_by: str, show_bubbles: bool, phases: bool,
    critical_path: bool, comm_arrows: bool, title: str | None, xlabel: str | None,
) -> None:
    sp = _Spans(tl)
    t0, t1 = float(tl.t0), float(tl.t1)
    p = tl.p
    fig = cast(Figure, ax.get_figure(root=True))
    width_in = fig.get_figwidth() * 0.8
    px_per_unit = width_in * fig.dpi / max(t1 - t0, 1e-300)
    widths = sp.end - sp.start
    median_px = float(np.median(widths)) * px_per_unit if sp.n else 0.0
    edge_w = 0.7 if median_px >= 5 else 0.0
    if sp.n <= COMPOUND_ABOVE:  # one polygon per box, in spans() order
        boxes: PolyCollection | PathCollection = _poly(
            sp.verts(), facecolors=_face_colors(sp, color_by), edgecolors="white",
            linewidths=edge_w, zorder=2, gid="actions",
        )
    else:  # one compound path per colour: the same boxes, drawn several times faster
        table, index = _color_index(sp, color_by)
        groups = np.unique(index)
        verts = sp.verts()
        boxes = _compound([verts[index == g] for g in groups], facecolors=table[groups],
                          edgecolors="white", linewidths=edge_w, zorder=2, gid="actions")
    ax.add_collection(boxes, autolim=False)
    if sp.pair_b:  # an overlapped pair is one box: its lower half in its backward part's colour
        idx = np.array(sorted(sp.pair_b))
        b_mb = np.array([sp.pair_b[i][0] for i in idx])
        lower = _rects(sp.start[idx], sp.end[idx], sp.rank[idx] + BOX_HEIGHT / 4, BOX_HEIGHT / 2)
        if color_by == "kind":
            b_colors = np.tile(np.append(mcolors.to_rgb(KIND_COLORS["B"]), 1.0), (len(idx), 1))
        else:
            b_colors = np.array([_lighten(PALETTE[mb % len(PALETTE)], _KIND_LIGHTEN["B"]) for mb in b_mb])
        ax.add_collection(_poly(lower, facecolors=b_colors, edgecolors="white", linewidths=edge_w, zorder=2.1,
                                gid="pair-backward"), autolim=False)
    chunks_present = sorted(set(sp.chunk.tolist())) if sp.n else [0]
    for c in chunks_present:
        if c == 0:
            continue
        _draw_chunk_outlines(ax, sp, c)
    if show_bubbles:
        gs, ge, gr = _gap_arrays(tl)
        bub = _compound(
            [_rects(gs, ge, gr, BOX_HEIGHT)], facecolors=BUBBLE_COLOR, edgecolors="none",
            linewidths=0.0, hatch="////", zorder=1.5, gid="bubbles",
        )
        bub.set_hatchcolor(BUBBLE_HATCH_COLOR)
        bub.set_hatch_linewidth(0.6)
        ax.add_collection(bub, autolim=False)
    if critical_path and isinstance(tl, SimResult):
        _draw_critical_path(ax, tl)
    if comm_arrows and isinstance(tl, SimResult):
        _draw_comm_arrows(ax, tl)
    # axes
    pad = (t1 - t0) * 0.005
    ax.set_xlim(t0 - pad, t1 + pad)
    ax.set_ylim(p - 0.5, -0.5)  # rank 0 on top
    if p <= 16:
        ax.set_yticks(range(p), [f"rank {r}" for r in range(p)])
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=10))
        ax.set_ylabel("rank")
    strip_pt = _draw_placement_strip(ax, tl) if p <= 16 else 0.0
    ax.tick_params(axis="y", length=0, pad=3.5 + strip_pt)  # the rank names sit left of the strip
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_axisbelow(True)
    ax.grid(axis="x", color="#DDDDDD", linewidth=0.6, zorder=0)
    if xlabel:
        ax.set_xlabel(xlabel)
    name = title if title is not None else _timeline_name(tl)
    ax.set_title(f"{name}\n{_metrics_line(tl)}", loc="left", fontsize=_title_size(),
                 pad=24 if phases else 6)
    if phases:
        _draw_phases(ax, tl)
    _legend(ax, sp, color_by, show_bubbles, critical_path, chunks_present)


_ordinal = diagram.ordinal


def _chunk_linestyle(c: int) -> Any:
    """Line style of the outline of chunk ``c >= 1`` (solid, dashed, dotted, dash-dotted, ...)."""
    return _CHUNK_LINESTYLES[1 + (c - 1) % (len(_CHUNK_LINESTYLES) - 1)]


def _draw_chunk_outlines(ax: Axes, sp: _Spans, c: int) -> None:
    """Outline every box of chunk ``c >= 1`` (a rank's ``c``-th stage) in :data:`CHUNK_EDGE_COLOR`.

    The outline sits just inside the box (shrunk by 4 % of the box height), so neighbouring
    boxes of other chunks keep their white separators; the idle boxes have no outline at all.
    """
    mask = sp.chunk == c
    if not mask.any():
        return
    inset = BOX_HEIGHT * 0.04
    s, e, y = sp.start[mask], sp.end[mask], sp.rank[mask]
    shrink = np.minimum(inset, (e - s) * 0.2)
    outline = _poly(_rects(s + shrink, e - shrink, y, BOX_HEIGHT - 2 * inset), facecolors="none",
                    edgecolors=CHUNK_EDGE_COLOR, linewidths=CHUNK_EDGE_WIDTH, linestyles=_chunk_linestyle(c),
                    zorder=2.5, gid=f"chunk-outline-{c}")
    ax.add_collection(outline, autolim=False)


def _legend(ax: Axes, sp: _Spans, color_by: str, show_bubbles: bool, critical_path: bool,
            chunks: list[int]) -> None:
    handles: list[Any] = []
    kinds_present = sp.kinds_present()
    if color_by == "kind":
        handles += [Patch(facecolor=KIND_COLORS[k], label=_KIND_NAMES[k]) for k in kinds_present]
    else:
        for k in kinds_present:
            handles.append(Patch(facecolor=tuple(_lighten(PALETTE[0], _KIND_LIGHTEN[k])),
                                 label=f"{_KIND_NAMES[k]}" + (tr("plot.colour_is_microbatch") if k == "F" else "")))
    if sp.pair_b:
        handles.append(Patch(facecolor=KIND_COLORS["F"], edgecolor=KIND_COLORS["B"], linewidth=3,
                             label=tr("plot.pair")))
    for c in chunks:
        if c:
            handles.append(Patch(facecolor="#DDDDDD", edgecolor=CHUNK_EDGE_COLOR, linewidth=CHUNK_EDGE_WIDTH,
                                 linestyle=_chunk_linestyle(c), label=tr("plot.chunk", chunk=c, ordinal=_ordinal(c + 1) if get_language() == "en" else c + 1)))
    if show_bubbles:
        handles.append(Patch(facecolor=BUBBLE_COLOR, edgecolor=BUBBLE_HATCH_COLOR, hatch="////",
                             label=tr("plot.idle")))
    if critical_path:
        handles.append(Line2D([], [], color=CRITICAL_COLOR, linewidth=2.0, label=tr("plot.critical_path")))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small",
              frameon=False, borderaxespad=0.0)


def _draw_phases(ax: Axes, tl: Timeline) -> None:
    ph = tl.phases()
    trans = ax.get_xaxis_transform()
    (f0, f1), (s0, s1), (d0, d1) = ph["fill"], ph["steady"], ph["drain"]
    for x in sorted({f1, d0}):  # behind the boxes (above the idle hatch): it never cuts a label
        ax.axvline(x, color="#555555", linestyle="--", linewidth=1.0, zorder=1.7, gid="phase-line")
    # "steady" only when every rank is busy all through it (the glossary's steady state); else neutral
    idle_inside = any(min(float(g.end), s1) > max(float(g.start), s0) for g in tl.idle_intervals())
    spans = [("fill", f0, f1), ("steady", s0, s1), ("drain", d0, d1)]
    words = {"fill": tr("plot.phase.fill"), "drain": tr("plot.phase.drain"),
             "steady": tr("plot.phase.between") if idle_inside else tr("plot.phase.steady")}
    for name, a, b in spans:
        if b <= a:
            continue
        ax.annotate("", xy=(a, 1.02), xytext=(b, 1.02), xycoords=trans, textcoords=trans,
                    arrowprops={"arrowstyle": "<->", "color": "#555555", "linewidth": 0.8,
                                "shrinkA": 0, "shrinkB": 0})
        ax.text((a + b) / 2, 1.03, words.get(name, name), transform=trans, ha="center", va="bottom", fontsize="small",
                style="italic", color="#333333", gid=f"phase-{name}",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})


def _draw_critical_path(ax: Axes, tl: SimResult) -> None:
    boxes = diagram.critical_boxes(tl)  # the geometry is diagram's, shared with the SVG picture
    sa, ea, ya = (np.array([b[k] for b in boxes], dtype=float) for k in range(3))
    ax.add_collection(_poly(
        _rects(sa, ea, ya, BOX_HEIGHT), facecolors="none", edgecolors=CRITICAL_COLOR,
        linewidths=2.0, zorder=4, gid="critical-path"), autolim=False)
    for x0, y0, x1, y1 in diagram.critical_hops(boxes, BOX_HEIGHT):  # the hops between boxes (waits and messages)
        ax.add_line(Line2D([x0, x1], [y0, y1], color=CRITICAL_COLOR, linewidth=2.0, zorder=4.5,
                           gid="critical-path-line"))


def _draw_comm_arrows(ax: Axes, tl: SimResult) -> None:
    for x0, y0, x1, y1 in diagram.comm_arrow_segments(tl, BOX_HEIGHT, stacklevel=4):
        ax.annotate(
            "", xy=(x1, y1), xytext=(x0, y0),
            arrowprops={"arrowstyle": "-|>", "color": "#333333", "linewidth": 0.8, "mutation_scale": 7,
                        "shrinkA": 0, "shrinkB": 0},
            zorder=3.5, gid="comm-arrow",
        )


_DIGIT_EM = 0.62  # digit advance in DejaVu Sans / Noto Sans, in em


def _text_em(text: str) -> float:
    """A label's width in em in the current font (rcParams' family), from the font's own
    metrics (cached per text and family), plus 4 % to spare."""
    family = rcParams["font.family"]
    return _text_width_em(text, tuple(family) if isinstance(family, (list, tuple)) else (str(family),)) * 1.04


@functools.lru_cache(maxsize=8192)
def _text_width_em(text: str, family: tuple[str, ...]) -> float:
    from matplotlib.textpath import text_to_path

    prop = font_manager.FontProperties(family=list(family), size=100)
    width, _, _ = text_to_path.get_text_width_height_descent(text, prop, ismath=False)
    return float(width) / 100.0


_label_stage = diagram.label_stage


def _span_stages(tl: Timeline) -> np.ndarray:
    """The stage of every span, rank by rank in ``spans()`` order (the order of :class:`_Spans`); -1 unknown."""
    out: list[int] = []
    for r in range(tl.p):
        out.extend(_label_stage(lb) for lb in tl.arrays(r)[2])
    return np.asarray(out, dtype=np.int64)


_rank_stages = diagram.rank_stages


#: Smallest font size (points) of a box label: a box too narrow for its label at the panel's
#: size shows its microbatch number at 70 % of it, but never smaller than this.
SMALL_LABEL_PT = 6.5
#: Font size (points) of the placement strip's stage numbers.
STRIP_FONT_PT = 8.0


def _strip_geometry(stages: list[tuple[int, ...]]) -> tuple[int, int, float, float]:
    """``(columns, digits, cell width, gap)`` of a placement strip (widths in points)."""
    v = max((len(x) for x in stages), default=0)
    digits = len(str(max((max(x) for x in stages if x), default=0)))
    cell = (digits * _DIGIT_EM + 1.1) * STRIP_FONT_PT  # the digits, their box's padding and a gap
    return v, digits, cell, 0.8 * STRIP_FONT_PT


def placement_strip_width(tl: Timeline) -> float:
    """Width in points of the placement strip :func:`plot_pipeline` draws left of the rank
    names of ``tl`` (0 when every rank holds one stage), for layouts with fixed margins."""
    if not isinstance(tl, Timeline):
        raise TypeError(f"tl must be a bubblekit Timeline, got {type(tl).__name__}")
    if tl.p > 16:
        return 0.0
    v, _, cell, gap = _strip_geometry(_rank_stages(tl))
    return gap + v * cell if v >= 2 else 0.0


def _draw_placement_strip(ax: Axes, tl: Timeline) -> float:
    """Left of the rank names, one small cell per stage a rank holds, chunk 0 first, in the
    chunk's style (chunk 1 outlined like its boxes), and above each column an arrow for the
    direction a microbatch's forward runs through it (down: rank 0 to p-1; up: the V's way
    back). Drawn only when a rank holds two stages or more (interleaved, looped, V shapes).

    Returns the strip's width in points (0 when none is drawn), for the rank names' padding.
    """
    stages = _rank_stages(tl)
    v, digits, cell, gap = _strip_geometry(stages)
    if v < 2:
        return 0.0
    fs = STRIP_FONT_PT
    for r, held in enumerate(stages):
        for c, stage in enumerate(held):
            x = -(gap + (v - c - 0.5) * cell)
            edge = ({"edgecolor": CHUNK_EDGE_COLOR, "linewidth": CHUNK_EDGE_WIDTH * 0.8,
                     "linestyle": _chunk_linestyle(c)} if c else {"edgecolor": "#9A9A9A", "linewidth": 0.7})
            ax.annotate(f"{stage:>{digits}}".replace(" ", "\u2007"), xy=(0, r), xycoords=("axes fraction", "data"),
                        xytext=(x, 0), textcoords="offset points", ha="center", va="center", fontsize=fs,
                        annotation_clip=False, gid="placement-cell",
                        bbox={"boxstyle": "square,pad=0.28", "facecolor": "white", **edge})
    for c in range(v):
        column = [held[c] for held in stages if len(held) > c]
        arrow = "↓" if column == sorted(column) else "↑" if column == sorted(column, reverse=True) else "·"
        ax.annotate(arrow, xy=(0, 1), xycoords="axes fraction", xytext=(-(gap + (v - c - 0.5) * cell), 1.0),
                    textcoords="offset points", ha="center", va="bottom", fontsize=fs, color="#333333",
                    annotation_clip=False, gid="placement-direction")
    ax.annotate(tr("plot.stages"), xy=(0, 1), xycoords="axes fraction", xytext=(-(gap + v * cell / 2), 1.0 + 1.4 * fs),
                textcoords="offset points", ha="center", va="bottom", fontsize=fs, color="#333333",
                annotation_clip=False, gid="placement-title")
    return gap + v * cell


def _add_labels(ax: Axes, tl: Timeline, color_by: str) -> None:
    """Label boxes whose width in display pixels fits the text (kind + microbatch, or microbatch)."""
    sp = _Spans(tl)
    if not sp.n:
        return
    fig = ax.get_figure()
    assert fig is not None
    bbox = ax.get_window_extent()
    x0, x1 = ax.get_xlim()
    px_per_unit = bbox.width / max(x1 - x0, 1e-300)
    box_px = bbox.height / tl.p * BOX_HEIGHT
    pt_per_px = 72.0 / fig.dpi
    fontsize = min(10.5, box_px * pt_per_px / 1.35)
    stages = _span_stages(tl) if sp.chunk.max() > 0 and box_px * pt_per_px / 2.5 >= 5.5 else None
    if stages is not None:  # several stages per rank: a second line names the box's stage ("s5")
        fontsize = min(fontsize, box_px * pt_per_px / 2.5)
    if fontsize < 5.0:
        return
    em_px = fontsize / pt_per_px
    pad_px = 4.0
    fc = _face_colors(sp, color_by)
    widths_px = (sp.end - sp.start) * px_per_unit
    small = max(SMALL_LABEL_PT, fontsize * 0.7) / fontsize  # narrow boxes: their number, smaller
    # ax.text clips each text to the Axes with a clip box of its own, built from the Axes patch's
    # transform (costly to build, and evaluated per text at every draw): one shared box does the same
    clip = TransformedBbox(Bbox.unit(), ax.patch.get_transform())
    add = getattr(ax, "_add_text", ax.add_artist)  # add_artist would set the costly clip box again
    for i in np.flatnonzero(widths_px >= _DIGIT_EM * em_px * small + pad_px).tolist():  # a digit fits
        w_px = widths_px[i]
        size = fontsize
        full = sp.text(i)
        short = str(int(sp.mb[i])) if sp.mb[i] >= 0 and not sp.key[i] else ""
        if i in sp.pair_b:  # an overlapped pair: both microbatches, forward's first
            short = f"{int(sp.mb[i])}&{sp.pair_b[i][0]}"
        if _text_em(full) * em_px + pad_px <= w_px:
            text = full
        elif short and _text_em(short) * em_px + pad_px <= w_px:
            text = short
        else:
            if not (short and small < 1 and _text_em(short) * em_px * small + pad_px <= w_px):
                continue
            text, size = short, fontsize * small
        stage_text = f"s{stages[i]}" if stages is not None and stages[i] >= 0 else ""
        if stage_text and i in sp.pair_b:  # a pair runs two stages: its forward's and its backward's
            stage_text = f"{stage_text}&s{sp.pair_b[i][2]}"
        if stage_text and _text_em(stage_text) * em_px * size / fontsize + pad_px <= w_px:
            text = f"{text}\n{stage_text}"
        color = _text_color(fc[i])
        add(Text((sp.start[i] + sp.end[i]) / 2, sp.rank[i], text, ha="center", va="center", fontsize=size,
                 color=color, transform=ax.transData, clip_on=True, clip_box=clip, zorder=3, gid="box-label",
                 linespacing=1.05))


# ------------------------------------------------------------------------- memory
def plot_memory(
    result_or_results: SimResult | Sequence[SimResult],
    *,
    ax: Axes | Sequence[Axes] | None = None,
    cap: float | None = None,
    ranks: Sequence[int] | None = None,
    legend: bool = True,
) -> Figure:
    """Activations held over time, one step line per rank, peak marked per rank.

    Args:
        result_or_results: a :class:`~bubblekit.SimResult` or a list of them (stacked
            panels sharing both axes, so memory compares at a glance).
        ax: an Axes (or one per result) to draw into; default a new figure.
        cap: a memory budget in microbatch activations, drawn as a dashed line; ranks
            whose peak exceeds it are named in the title.
        ranks: which ranks to draw (default all).
        legend: name each rank and its peak in a legend outside the axes (up to 12 ranks);
            ``False`` for a caller that keys the ranks itself (the explorers' readouts do).

    Memory is in microbatch activations (1.0 = what one microbatch leaves on a rank that
    holds its whole share of the model, see :mod:`bubblekit.costs`).

    Used in lesson 04.
    """
    res, sels = diagram.memory_arguments(result_or_results, cap, ranks)
    same_unit = len({r.unit for r in res}) == 1
    fig, axes = _panels(ax, 11.0, [3.4] * len(res), "results", sharex=same_unit, sharey=True)
    for k, (r, a, sel) in enumerate(zip(res, axes, sels)):
        _draw_memory(a, r, sel, cap, legend)
        if k == len(res) - 1 or not same_unit or ax is not None:
            a.set_xlabel(time_label(r.unit))
    # one y scale for every panel (they share it), one time range when the units agree
    top = diagram.memory_top(res, cap)
    for a in axes:
        a.set_ylim(0, top)
        if same_unit and len(res) > 1:
            a.set_xlim(min(float(x.t0) for x in res), max(float(x.t1) for x in res))
    return fig


_LINESTYLES = diagram.LINE_STYLES


def _draw_memory(ax: Axes, r: SimResult, sel: list[int], cap: float | None, legend: bool = True) -> None:
    lines, peaks = diagram.memory_series(r, sel)
    for s in lines:
        # the peak's value goes into the legend, not beside the marker: ranks often peak at the
        # same moment, and labels there overlap the markers and each other
        ax.plot(list(s.xs), list(s.ys), drawstyle="steps-post", color=s.color, linestyle=_LINESTYLES[s.style],
                linewidth=1.8, label=s.label, gid=s.key)
    ax.plot(list(peaks.xs), list(peaks.ys), linestyle="none", marker="v", markersize=7, markerfacecolor="white",
            markeredgecolor="black", zorder=5, label=peaks.label, gid=peaks.key)
    if cap is not None:
        ax.axhline(cap, color=CURSOR_COLOR, linestyle="--", linewidth=1.5, label=tr("plot.memory.cap", cap=f"{cap:g}"), gid="cap")
    ax.set_title(diagram.memory_title(r, sel, cap), loc="left", fontsize=_title_size())
    ax.set_ylabel(tr("plot.memory.ylabel"))
    ax.set_xlim(float(r.t0), float(r.t1))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(axis="y", color="#E5E5E5", linewidth=0.6)
    if legend and len(sel) <= 12:
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize="small", frameon=False,
                  borderaxespad=0.0)

# -------------------------------------------------------------------------- sweep

def plot_sweep(
    schedule_names: str | Sequence[str],
    p: int,
    ms: Sequence[int],
    *,
    v: int | Sequence[int] = 1,
    costs: Costs | None = None,
    ax: Axes | None = None,
    progress: Progress = None,
) -> Figure:
    """Bubble ratio against the number of microbatches: simulated points over closed forms.

    Args:
        schedule_names: registered schedule names (``"gpipe"``, ``"1f1b"``, ``"interleaved"``...).
        p: ranks, int >= 1.
        ms: microbatch counts to simulate, ints >= 1.
        v: chunks per rank (or several) for the multi-chunk schedules; single-chunk
            schedules always use v = 1 and V-shape schedules v = 2.
        costs: the cost model for the simulation (default ``Costs()``: F = 1, B = 2 slots).
        ax: an Axes to draw into.
        progress: ``None`` reports progress on standard error for sweeps estimated to take
            more than a few seconds; ``True``/``False`` always/never; or a function of one line.

    Points are ``bk.simulate(...).bubble_ratio`` (idle / (p x makespan)); lines are
    ``bk.bubble_ratio(p, m, v)`` for each v used. An ``m`` a schedule refuses (PyTorch's
    interleaving rule) is skipped and listed under the plot, never silently dropped.

    Used in lessons 03 and 05.
    """
    data = diagram.sweep_data(schedule_names, p, ms, v, costs,
                              reporter_for=lambda n, estimate: reporter(progress, "plot_sweep", n, estimate))
    if ax is None:
        fig = _new_figure(11.5, [5.0])
        ax = fig.subplots()
    else:
        fig = ax.get_figure()  # type: ignore[assignment]
    assert fig is not None
    for s in data.points:
        ax.plot(list(s.xs), list(s.ys), linestyle="none", marker=_MARKERS[s.marker or 0], markersize=8,
                markerfacecolor=s.color if s.filled else "none", markeredgewidth=1.8, color=s.color,
                label=s.label, zorder=3, gid=s.key)
    for s in data.forms:  # the closed form (p-1)/(m v+p-1), a line for each v used
        ax.plot(list(s.xs), list(s.ys), color=s.color, linestyle=_LINESTYLES[s.style], linewidth=1.4, zorder=2,
                label=s.label, gid=s.key)
    _style_sweep_axes(ax, data)
    skipped = data.skipped
    if skipped:
        shown = skipped[:4] + ([tr("plot.sweep.more", n=len(skipped) - 4)] if len(skipped) > 4 else [])
        fig.text(0.01, 0.0, tr("plot.sweep.skipped", what="; ".join(shown)), fontsize="x-small", va="bottom",
                 wrap=True, gid="skipped")
    return fig


_MARKERS = diagram.MARKERS


def _style_sweep_axes(ax: Axes, data: diagram.SweepData) -> None:
    """Axes of the sweep: log m when it spans 8x, percent bubble, labels, title, legend."""
    m_list = data.m_list
    if data.log_m:
        ax.set_xscale("log", base=2)
    ax.set_xticks(m_list, [str(m) for m in m_list])
    ax.minorticks_off()
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(bottom=0)
    ax.set_xlabel(tr("plot.sweep.xlabel"))
    ax.set_ylabel(tr("plot.sweep.ylabel"))
    ax.set_title(data.title, loc="left")
    ax.grid(color="#E5E5E5", linewidth=0.6)
    ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0)  # outside the axes: it never covers a point


# ---------------------------------------------------------------------- animation
#: The animation's titles, axis and tick labels and legend are at least this many pixels high in
#: its frames (at most 15 pt): at a low dpi, which keeps a notebook light, 10 pt would be 9 px.
READABLE_PX = 12.0


def animate_pipeline(
    result: Timeline,
    *,
    frames: int = 60,
    interval_ms: int = 80,
    color_by: str = "microbatch",
    dpi: float = 72.0,
    **plot_kw: Any,
) -> manimation.FuncAnimation:
    """A time cursor sweeping the diagram, running actions outlined, live bubble readout.

    Args:
        result: one timeline (simulated or measured).
        frames: the most frames (>= 2). Frames fall on round times: every ``step`` from
            ``t0``, ``step`` the smallest of 1, 2, 2.5 or 5 x 10^k (in the timeline's unit) that
            keeps to ``frames``, and a last frame at the end, which shows the whole step.
        interval_ms: delay between frames in the player, ms.
        color_by, **plot_kw: passed to :func:`plot_pipeline`.
        dpi: figure resolution of the frames (20 to 600). Each frame is a PNG of roughly
            40-60 kB at the default 72 dpi, so 60 frames add about 3 MB to a notebook: use fewer
            frames (or a lower dpi) for committed notebooks. Titles, axis and tick labels and
            the legend are at least :data:`READABLE_PX` pixels high in the frames (readable in
            small frames; the figure grows by what they grew).

    The readout, one line under the diagram in letters at least 15 pixels high at ``dpi``,
    gives the elapsed time, the actions running and the bubble ratio of the window so far
    (:meth:`bubblekit.Timeline.bubble_so_far`). The returned animation carries
    ``frame_times`` (the time of each frame) and ``readout(k)`` (the text of frame k).
    Every frame re-renders the whole figure: keep timelines small (a few hundred boxes).
    """
    diagram.check_animation(result, frames, interval_ms, dpi)
    fig = plot_pipeline(result, color_by=color_by, **plot_kw)
    fig.set_dpi(dpi)
    _readable_text(fig, min(READABLE_PX * 72.0 / float(dpi), 15.0))  # tiny frames: no room for more than 15 pt
    ax = fig.axes[0]
    t0, t1 = float(result.t0), float(result.t1)
    times = np.asarray(diagram.frame_times(t0, t1, frames), dtype=float)
    sp = _Spans(result)
    veil = Rectangle((t0, -0.5), t1 - t0, result.p, facecolor="white", alpha=0.72, edgecolor="none",
                     zorder=5, gid="veil")
    ax.add_patch(veil)
    cursor = ax.axvline(t0, color=CURSOR_COLOR, linewidth=2.2, zorder=6, gid="cursor")
    running = _poly(np.empty((0, 4, 2)), facecolors="none", edgecolors=CURSOR_COLOR,
                             linewidths=2.5, zorder=6, gid="running")
    ax.add_collection(running, autolim=False)
    # one line under the axes, in a fixed-width font (its width, hence the layout, never changes),
    # at least 15 pixels high in the frames
    cjk = fonts.find_cjk_font() if get_language() == "zh" else None  # Chinese words after the fixed-width digits
    text = fig.supxlabel("", fontsize=max(13.0, 15.0 * 72.0 / float(dpi)),
                         family=["DejaVu Sans Mono", cjk] if cjk else "monospace",
                         color="#222222", gid="readout")
    time_list = [float(x) for x in times]

    def readout(k: int) -> str:
        t = float(times[k])
        n_run = int(np.count_nonzero((sp.start <= t) & (t < sp.end)))
        return diagram.animation_readout(result, t, time_list, n_run)

    def update(k: int) -> list[Any]:
        t = float(times[k])
        cursor.set_xdata([t, t])
        veil.set_x(t)
        veil.set_width(max(t1 - t, 0.0))
        mask = (sp.start <= t) & (t < sp.end)
        running.set_verts(list(sp.verts(mask)))
        text.set_text(readout(k))
        return [cursor, veil, running, text]

    update(0)
    anim = manimation.FuncAnimation(fig, update, frames=len(times), interval=interval_ms, blit=False,
                                    repeat=True, cache_frame_data=False)
    anim.frame_times = times  # type: ignore[attr-defined]
    anim.readout = readout  # type: ignore[attr-defined]
    return anim


def _readable_text(fig: Figure, min_pt: float) -> None:
    """Grow the figure's titles, axis labels, tick labels and legend to at least ``min_pt`` points
    (the box labels, fitted to their boxes, keep their size), and the figure's height by what the
    text above and below the diagram grew, so that the diagram keeps its height."""
    grown_pt = 0.0  # how much taller the text above and below the axes got, in points

    def grow(text: Any, counts: bool) -> None:
        nonlocal grown_pt
        size = float(text.get_fontsize())
        if size < min_pt:
            if counts and text.get_text():
                grown_pt += (min_pt - size) * 1.2 * (text.get_text().count("\n") + 1)
            text.set_fontsize(min_pt)

    for ax in fig.axes:
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):  # type: ignore[attr-defined]
            grow(text, counts=True)
        grow(ax.yaxis.label, counts=False)
        xticks, yticks = ax.xaxis.get_major_ticks(), ax.yaxis.get_major_ticks()
        if xticks and xticks[0].label1.get_visible():
            grow(xticks[0].label1, counts=True)
        if yticks:
            grow(yticks[0].label1, counts=False)
        for ticks, which in ((xticks, "x"), (yticks, "y")):  # every tick, also those made at draw time
            if ticks:
                ax.tick_params(axis=which, labelsize=max(float(ticks[0].label1.get_fontsize()), min_pt))  # type: ignore[arg-type]
        legend = ax.get_legend()
        if legend is not None:
            for text in legend.get_texts():
                grow(text, counts=False)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + grown_pt / 72.0)


#: Inline SVG for the icons of matplotlib's animation player (it asks for font-awesome from a
#: CDN, which an offline classroom cannot reach): 16 x 16 paths drawn in the text colour.
_PLAYER_ICONS = {
    "minus": '<rect x="2" y="7" width="12" height="2"/>',
    "plus": '<rect x="2" y="7" width="12" height="2"/><rect x="7" y="2" width="2" height="12"/>',
    "fast-backward": '<rect x="1" y="2" width="2" height="12"/><path d="M9 2 3 8l6 6zM15 2 9 8l6 6z"/>',
    "step-backward": '<rect x="2" y="2" width="2" height="12"/><path d="M14 2 5 8l9 6z"/>',
    "play fa-flip-horizontal": '<path d="M12 2 2 8l10 6z"/>',
    "pause": '<rect x="3" y="2" width="4" height="12"/><rect x="9" y="2" width="4" height="12"/>',
    "play": '<path d="M4 2l10 6-10 6z"/>',
    "step-forward": '<path d="M2 2l9 6-9 6z"/><rect x="12" y="2" width="2" height="12"/>',
    "fast-forward": '<path d="M1 2l6 6-6 6zM7 2l6 6-6 6z"/><rect x="13" y="2" width="2" height="12"/>',
}
_FA_ICON = re.compile(r'<i class="fa fa-([a-z -]+?)"></i>')
_FA_LINK = re.compile(r'<link rel="stylesheet"\s+href="[^"]*font-awesome[^"]*">\s*')


def _offline_player(html: str) -> str:
    """matplotlib's jshtml player with its font-awesome icons as inline SVG and no CDN link."""
    def icon(m: re.Match[str]) -> str:
        shape = _PLAYER_ICONS.get(m.group(1))
        if shape is None:  # an icon this matplotlib added: keep a readable name rather than nothing
            return html_escape(m.group(1))
        return (f'<svg viewBox="0 0 16 16" width="14" height="14" fill="currentColor" aria-hidden="true" '
                f'style="vertical-align:middle">{shape}</svg>')

    html = _FA_ICON.sub(icon, _FA_LINK.sub("", html))
    for mode in ("Once", "Loop", "Reflect"):  # the repeat-mode labels, in the current language
        html = html.replace(f">{mode}</label>", f">{html_escape(tr('plot.anim.' + mode.lower()))}</label>")
    return html.replace('title="Repetition mode" aria-label="Repetition mode"',
                        f'title="{tr("plot.anim.repeat")}" aria-label="{tr("plot.anim.repeat")}"')


_FIRST_FRAME = re.compile(r'frames\[0\] = "(data:image/[a-z]+;base64,[^"]*)"')
_ANIM_IMG = re.compile(r'<img id="(_anim_img[0-9a-f]+)">')
_ANIM_START = re.compile(r"setTimeout\(function\(\) \{\s*(anim[0-9a-f]+) = new Animation\(([^;]*?)\);\s*\}, 0\);")


def _frame_size(data_uri: str) -> tuple[int, int] | None:
    """(width, height) in pixels of a base64 image data URI, or None when it cannot be read."""
    import base64
    import io

    try:
        from PIL import Image  # matplotlib's own dependency

        raw = base64.b64decode(data_uri.split(",", 1)[1].replace("\\\n", "").replace("\n", ""))
        with Image.open(io.BytesIO(raw)) as im:
            return int(im.size[0]), int(im.size[1])
    except Exception:  # an unreadable frame: no size attributes, the player still works
        return None


def _robust_player(html: str, alt: str) -> str:
    """matplotlib's player, made to show its picture however the page renders the output.

    JupyterLab renders a notebook's cells lazily (windowing: cells off screen are laid out late
    or not at all), and matplotlib's player leaves its ``<img>`` empty until a script, run by a
    ``setTimeout``, finds it by id and sets its source: an output rendered off screen could show
    its buttons with an image that has its source but no layout box, until something made the
    cell lay out again (the page then jumped by the picture's height). Here the ``<img>`` carries
    the first frame in the markup itself, with its width and height (the box exists before any
    script runs and before the image decodes, so nothing jumps), and the player starts once its
    elements are in the document (retried every 100 ms for a minute) instead of once, blind.
    """
    first = _FIRST_FRAME.search(html)
    img = _ANIM_IMG.search(html)
    if first is None or img is None:  # another matplotlib's template: leave it as it is
        return html
    src = first.group(1).replace("\\\n", "")
    size = _frame_size(src)
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    tag = (f'<img id="{img.group(1)}" src="{src}"{dims} alt="{html_escape(alt)}" decoding="sync" loading="eager" '
           'style="max-width:100%;height:auto;display:block;margin:0 auto">')
    html = html[: img.start()] + tag + html[img.end():]

    def start(m: re.Match[str]) -> str:
        return (";(function start(tries) {  // ';': the frame lines above may end without one\n"
                "        if (document.getElementById(img_id) && document.getElementById(slider_id)\n"
                "            && document[loop_select_id]) {\n"
                f"            {m.group(1)} = new Animation({m.group(2)});\n"
                "        } else if (tries < 600) {\n"
                "            setTimeout(function() { start(tries + 1); }, 100);\n"
                "        }\n"
                "    })(0);")

    return _ANIM_START.sub(start, html, count=1)


def pipeline_animation_html(result: Timeline, **kw: Any) -> str:
    """The animation as self-contained HTML + JavaScript (``to_jshtml``): plays in a notebook
    (``IPython.display.HTML(...)``) with no kernel round-trip per frame and no network (the
    player's icons are inline SVG, not font-awesome from a CDN). ``kw`` go to
    :func:`animate_pipeline`.

    The picture shows however JupyterLab renders the cell (see :func:`_robust_player`): the first
    frame and its size are in the ``<img>`` itself, and the player starts once it is in the page.

    Used in lesson 01.
    """
    # Frames are saved at the figure's own dpi (not the course style's savefig.dpi) and as
    # JPEG, which keeps a 40-frame animation near 1.5 MB instead of 5 MB in a notebook.
    with matplotlib.rc_context({"savefig.dpi": "figure", "animation.frame_format": "jpeg"}):
        anim = animate_pipeline(result, **kw)
        html: str = anim.to_jshtml(default_mode="once")
    return _offline_player(_robust_player(html, anim.readout(0)))  # type: ignore[attr-defined]


def save_animation_gif(result: Timeline, path: str | Path, **kw: Any) -> Path:
    """Write the animation as a GIF with matplotlib's Pillow writer; return the path.

    ``kw`` go to :func:`animate_pipeline`; frames per second = 1000 / ``interval_ms``.
    Raises ``RuntimeError`` when Pillow is not available to matplotlib.
    """
    if not manimation.writers.is_available("pillow"):
        raise RuntimeError("saving a GIF needs Pillow (pip install pillow); matplotlib cannot find it")
    path = Path(path)
    if path.suffix.lower() != ".gif":
        raise ValueError(f"path must end in .gif, got {str(path)!r}")
    anim = animate_pipeline(result, **kw)
    fps = max(1, round(1000.0 / float(kw.get("interval_ms", 80))))
    anim.save(str(path), writer=manimation.PillowWriter(fps=fps))
    return path


# ------------------------------------------------------------------------- frontier
#: Distinct colours and markers for the schedules of a frontier (colour-blind safe first, then
#: further distinct hues; the marker shapes alone also tell the points apart).
_FRONTIER_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#8C564B",
                    "#7F7F7F", "#B8860B")
_FRONTIER_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<")


def plot_frontier(
    table: Any,
    *,
    x: str = "total",
    y: str = "bubble_ratio",
    gpu_memory_gb: float | None = None,
    title: str | None = None,
    colors: Sequence[str] | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> Figure:
    """Bubble against memory per device: one distinct point per schedule of a frontier table.

    Args:
        table: a :class:`~bubblekit.text.Table` from :func:`bubblekit.memory.frontier` (or any
            table with a ``schedule`` column and the ``x`` and ``y`` columns).
        x: the memory column (GB per device): ``"total"`` (default), ``"activations"`` or ``"state"``.
        y: the bubble column: ``"bubble_ratio"`` (a fraction, drawn in %) or ``"time_per_microbatch"``.
        gpu_memory_gb: draw the GPU's memory as a vertical line (GB).
        title: the title (default the table's title).
        colors: one colour per row (default: distinct colours, and a distinct marker per row).
        xlabel, ylabel: axis labels (default: what the frontier's columns hold).

    Used in lesson 07.
    """
    rows = list(table)
    if not rows or any(k not in rows[0] for k in ("schedule", x, y)):
        raise ValueError(f"table must have rows with columns 'schedule', {x!r} and {y!r}")
    pal = list(colors) if colors is not None else list(_FRONTIER_COLORS)
    if len(pal) < len(rows):
        raise ValueError(f"colors has {len(pal)} colours for {len(rows)} schedules")
    fig = Figure(figsize=(9.0, 5.0), layout="constrained")
    ax = fig.subplots()
    scale = 100.0 if y == "bubble_ratio" else 1.0
    for k, row in enumerate(rows):
        marker = _FRONTIER_MARKERS[k % len(_FRONTIER_MARKERS)]
        ax.plot(float(row[x]), float(row[y]) * scale, marker, ms=14 if marker == "*" else 10,
                color=pal[k], markeredgecolor="white", label=str(row["schedule"]), gid=f"frontier-{k}")
    if gpu_memory_gb is not None:
        ax.axvline(float(gpu_memory_gb), color="#555555", linestyle="--", linewidth=1.0, gid="gpu-memory")
        ax.text(float(gpu_memory_gb), 1.0, tr("plot.frontier.gpu_memory"), transform=ax.get_xaxis_transform(), ha="left", va="top",
                fontsize="small", color="#333333")
    ax.set_xlabel(xlabel if xlabel is not None else
                  tr(f"plot.frontier.x.{x}") if x in ("total", "activations", "state") else x)
    ax.set_ylabel(ylabel if ylabel is not None else
                  tr("plot.frontier.y.bubble_ratio") if y == "bubble_ratio" else y.replace("_", " "))
    if y == "bubble_ratio":
        ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(title if title is not None else getattr(table, "title", ""), loc="left", fontsize=_title_size())
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    return fig

