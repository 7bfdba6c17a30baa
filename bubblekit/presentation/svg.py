"""Pipeline diagrams as SVG text, in pure Python: pictures where numpy and matplotlib are missing.

The no-install edition of the course runs in the browser (JupyterLite on Pyodide), where only
pure-Python packages load. :func:`pipeline_svg` draws the course's pipeline diagram there as
plain SVG text, from the same rules as :func:`bubblekit.presentation.plotting.plot_pipeline`
(:mod:`bubblekit.presentation.diagram`: one rule, one place):

* one row per rank, rank 0 on top; time to the right in the timeline's unit (``"slot"`` for
  the simulator's slots, ``"ms"`` or ``"us"`` for measured traces), with a time axis whose
  label names the unit (``time (slots)``);
* each compute action a box, coloured by microbatch (backward kinds lighter, the second round
  of 12 colours darker) or by kind, labelled with its kind and microbatch (``F3``, or ``3`` when
  only the number fits) and, where a rank holds several stages, a second line with the stage
  (``s5``); chunk 1, 2, ... outlined solid, dashed, dotted; sends and receives (which take no
  time) are not drawn;
* idle time (the bubble) as light grey hatched boxes; left of the rank names the placement
  strip (the stages each rank holds, and the way a forward runs through them) when a rank
  holds two or more; a legend under the time axis;
* on request (``critical_path``, ``comm_arrows``) the critical path outlined in black with its
  hops, and an arrow per cross-rank hop, from the diagram's geometry
  (:func:`~bubblekit.presentation.diagram.critical_boxes`,
  :func:`~bubblekit.presentation.diagram.comm_arrow_segments`), as matplotlib draws them;
* the title (schedule, p, m, v and costs, or ``title``) and the metrics line: ``bubble_ratio``
  = idle / (p x makespan), ``bubble_overhead`` = idle / busy, the makespan in its unit.

All text comes from the i18n catalogue (``bk.set_language("zh")`` draws Chinese) and is
drawn by the browser's fonts: a Latin font first, then CJK fonts. Every text is XML-escaped.
Sizes are in CSS pixels (``width``); the height follows from the number of ranks.

:func:`line_chart_svg` draws line charts the same way (axes, ticks, one ``<polyline>`` or marker
``<path>`` per series, a legend): ``bk.plotting.plot_memory`` and ``plot_sweep`` of the browser
edition, from :mod:`~bubblekit.presentation.diagram`'s numbers (:class:`LineChart`).

The picture is a :class:`SvgPicture`: a notebook shows it inline (``_repr_svg_``, also in
JupyterLite), ``.svg`` is the text and ``.save(path)`` writes a new file (never overwriting one
without ``force=True``).

Used by ``bk.plot_pipeline`` and ``bk.plotting`` where matplotlib cannot be imported (the browser
edition: the pipeline diagrams of every lesson but 08 come from it there, and lesson 01's
animation, :mod:`bubblekit.presentation.svg_plotting`), and by the explorers with ``picture="svg"``
(the default there): :func:`~bubblekit.presentation.explorers.pipeline_explorer` and
:func:`~bubblekit.presentation.explorers.schedule_builder` draw :func:`pipeline_svg`,
:func:`~bubblekit.presentation.explorers.frontier_explorer` a :func:`line_chart_svg` chart.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from bubblekit._validate import check_bool, check_int
from bubblekit.i18n import tr
from bubblekit.presentation import diagram
from bubblekit.presentation.diagram import (
    BUBBLE_COLOR,
    BUBBLE_HATCH_COLOR,
    CHUNK_EDGE_COLOR,
    CHUNK_EDGE_WIDTH,
    CRITICAL_COLOR,
    KIND_COLORS,
    KIND_LIGHTEN,
    LABEL_LIMIT,
    PALETTE,
    SpanRows,
)
from bubblekit.simulator import SimResult
from bubblekit.text import format_number, plural, time_label
from bubblekit.timeline import Timeline

__all__ = ["SvgPicture", "PanelGeometry", "pipeline_svg", "plot_pipeline_svg", "LineChart", "line_chart_svg", "MAX_BOXES", "MIN_WIDTH", "MAX_WIDTH", "FONT_FAMILY"]

#: The most action boxes one picture draws (``max_boxes``' default): an SVG holds one element per
#: box, and beyond about ten thousand a notebook grows by megabytes and the browser slows down.
MAX_BOXES = 10_000
#: The widths a picture may have, in CSS pixels.
MIN_WIDTH = 320
MAX_WIDTH = 4096
#: The fonts the browser draws the text with: Latin first, then CJK fonts for Chinese.
FONT_FAMILY = ("'DejaVu Sans', 'Noto Sans', Arial, Helvetica, 'Noto Sans CJK SC', 'Source Han Sans SC', "
               "'PingFang SC', 'Microsoft YaHei', 'WenQuanYi Micro Hei', sans-serif")

_FONT_PX = 13.0  # axis, rank names and legend
_TITLE_PX = 14.0
_STRIP_PX = 11.0  # the placement strip's stage numbers
_ROW_PX = 30.0  # one rank's row (a box is diagram.BOX_HEIGHT of it)
_PLOT_MAX_PX = 560.0  # the rows of many ranks share this height
_BOX_HEIGHT = 0.8
_SMALL_LABEL_PX = 8.7  # a narrow box's number is never smaller than this
_DIGIT_EM = 0.62
_CHUNK_DASHES = ("", "", "3 1.6", "1 1.2", "3 1.2 1 1.2")  # in line widths, as matplotlib scales them
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HATCH = "\x00hatch\x00"  # stands for the hatch pattern's id until the picture is complete


@dataclass(frozen=True)
class PanelGeometry:
    """Where one panel's plot lies in a picture, in CSS pixels from its top left corner, and its time scale.

    ``left``, ``top``, ``width``, ``height``: the plot (the rank rows, without the rank names and
    the time axis); time ``t`` is at ``x_of(t) = left + (t - lo) * scale``; rank ``r``'s row is
    centred on ``y_of(r)``, ``row_height`` high, its boxes ``box_height`` high; ``t0`` and ``t1``
    are the time window drawn. What the animation of the diagram draws over it.
    """

    left: float
    top: float
    width: float
    height: float
    lo: float
    scale: float
    row_height: float
    box_height: float
    t0: float
    t1: float

    def x_of(self, t: float) -> float:
        return self.left + (t - self.lo) * self.scale

    def y_of(self, rank: float) -> float:
        return self.top + (rank + 0.5) * self.row_height


class SvgPicture:
    """An SVG picture: Jupyter shows it inline; ``.svg`` is its text; ``.save(path)`` writes it.

    ``width`` and ``height`` are its size in CSS pixels; ``panels`` the :class:`PanelGeometry`
    of each panel of a pipeline picture, top to bottom.
    """

    def __init__(self, svg: str, width: float, height: float, panels: Sequence[PanelGeometry] = ()) -> None:
        self.svg = svg
        self.width = width
        self.height = height
        self.panels = tuple(panels)

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"<SvgPicture {format_number(self.width)} x {format_number(self.height)} px, {len(self.svg):,} characters>"

    def save(self, path: str | PathLike[str], force: bool = False) -> Path:
        """Write the picture to ``path`` (a new ``.svg`` file; an existing one only with ``force=True``).

        Returns the path. Raises ``FileExistsError`` naming the path when it exists (a file you own
        is never overwritten by surprise), ``ValueError`` for a folder, a missing folder or a name
        that does not end in ``.svg``, ``TypeError`` for a path that is not a string or Path.
        """
        from bubblekit.schedules.base import _output_file

        force = check_bool("force", force)
        out = _output_file(path, force, example="pipeline.svg")
        if out.suffix.lower() != ".svg":
            raise ValueError(f"path must end in .svg, got {str(out)!r}")
        try:
            with open(out, "w" if force else "x", encoding="utf-8") as fh:
                fh.write(self.svg)
        except FileExistsError:
            raise FileExistsError(f"path {str(out)!r} exists and is kept: pass force=True to overwrite it, "
                                  f"or choose a new file name") from None
        except OSError as exc:
            raise ValueError(f"path {str(out)!r} cannot be written: {exc.strerror or exc}") from None
        return out


# ------------------------------------------------------------------------------- text
def _clean(text: str) -> str:
    """Text for XML: characters XML 1.0 cannot hold become U+FFFD (escaping comes after)."""
    return _NOT_XML.sub("\ufffd", text)


def _esc(text: str) -> str:
    """Escaped text for an element; runs of spaces kept (SVG collapses them) with no-break spaces."""
    return escape(_clean(text)).replace("  ", "\u00a0 ")


def _attr(value: str) -> str:
    return quoteattr(_clean(value), {"\n": "&#10;", "\t": "&#9;", "\r": "&#13;"})


def _em(text: str) -> float:
    """An estimate of the text's width in em (the browser's fonts are unknown here): CJK and
    full-width characters are 1 em, capitals 0.7, other characters 0.58."""
    width = 0.0
    for ch in text:
        if ord(ch) >= 0x2E80:
            width += 1.0
        elif ch.isdigit():
            width += _DIGIT_EM
        elif ch.isupper() or ch in "mw%":
            width += 0.72
        elif ch in " .,:;|il()'!":
            width += 0.34
        else:
            width += 0.58
    return width


def _num(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _text(x: float, y: float, text: str, *, size: float = _FONT_PX, anchor: str = "start", fill: str = "#222222",
          cls: str = "", extra: str = "") -> str:
    """A one-line <text> centred vertically on ``y``."""
    klass = f' class="{cls}"' if cls else ""
    return (f'<text x="{_num(x)}" y="{_num(y)}" dy="0.35em" font-size="{_num(size)}" text-anchor="{anchor}" '
            f'fill="{fill}"{klass}{extra}>{_esc(text)}</text>')


def _wrap(text: str, avail_px: float, size: float) -> list[str]:
    """Lines of ``text`` that fit ``avail_px``: split at its "   |   " separators (and after a Chinese
    title's "；", which stays at the line's end), then packed greedily."""
    lines: list[str] = []
    for raw in text.split("\n"):
        parts: list[tuple[str, str]] = []  # (separator before it, part)
        for i, chunk in enumerate(raw.split("   |   ")):
            pieces = re.split(r"(?<=；)", chunk)
            parts += [("   |   " if i and not j else "", piece) for j, piece in enumerate(pieces) if piece or not j]
        current = ""
        for sep, part in parts:
            trial = part if not current else f"{current}{sep}{part}"
            if current and _em(trial) * size > avail_px:
                lines.append(current)
                current = part
            else:
                current = trial
        lines.append(current)
    return lines


# ------------------------------------------------------------------------------ inputs
def _as_list(obj: Any) -> list[Timeline]:
    if isinstance(obj, Timeline):
        return [obj]
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(t, Timeline) for t in obj):
        return list(obj)
    raise TypeError(
        "result_or_timeline must be a bubblekit Timeline (e.g. bk.simulate(...)) or a non-empty list of them, "
        f"got {type(obj).__name__}"
    )


def _check_width(width: Any) -> float:
    if isinstance(width, bool) or not isinstance(width, numbers.Real):
        raise TypeError(f"width must be a number of pixels from {MIN_WIDTH} to {MAX_WIDTH}, got {width!r} "
                        f"of type {type(width).__name__}")
    px = float(width)
    if not (MIN_WIDTH <= px <= MAX_WIDTH):  # also refuses nan
        raise ValueError(f"width must be a number of pixels from {MIN_WIDTH} to {MAX_WIDTH}, got {width!r}")
    return px


def _titles(title: Any, n: int) -> list[str | None]:
    if title is None:
        return [None] * n
    if isinstance(title, str):
        return [title] + [None] * (n - 1)
    if isinstance(title, (list, tuple)) and all(isinstance(t, str) or t is None for t in title):
        if len(title) != n:
            raise ValueError(f"title has {len(title)} entries but there are {n} timelines")
        return list(title)
    raise TypeError(f"title must be None, a string or one string per timeline, got {title!r}")


def _compute_spans(tl: Timeline) -> int:
    """How many boxes ``tl`` draws: its spans but the sends and receives (which take no time)."""
    from bubblekit.actions import Action, is_comm

    total = tl.n_spans
    for r in range(tl.p):
        labels = tl.arrays(r)[2]
        total -= sum(1 for lb in labels if isinstance(lb, Action) and is_comm(lb))
    return total


# ------------------------------------------------------------------------------ drawing
def pipeline_svg(
    result_or_timeline: Timeline | Sequence[Timeline],
    *,
    title: str | Sequence[str | None] | None = None,
    width: float = 960,
    color_by: str = "microbatch",
    show_bubbles: bool = True,
    labels: bool | None = None,
    unit_label: str | None = None,
    max_boxes: int = MAX_BOXES,
    critical_path: bool = False,
    comm_arrows: bool | None = False,
    _stacklevel: int = 1,
) -> SvgPicture:
    """Draw a pipeline diagram as SVG (pure Python): one row per rank, time to the right.

    Args:
        result_or_timeline: a :class:`~bubblekit.Timeline` (``bk.simulate(...)`` or a trace), or a
            non-empty list of them: one panel each, stacked, sharing the time axis when their units agree.
        title: a name for the (first) panel, or one per panel (``None`` entries: the default); the
            metrics line is always added. Default: schedule, p, m, v and costs.
        width: the picture's width in CSS pixels, :data:`MIN_WIDTH` to :data:`MAX_WIDTH`.
        color_by: ``"microbatch"`` (a colour per microbatch, backward lighter) or ``"kind"``.
        show_bubbles: draw idle intervals as light grey hatched boxes.
        labels: ``None`` labels boxes where the text fits (none beyond :data:`diagram.LABEL_LIMIT
            <bubblekit.presentation.diagram.LABEL_LIMIT>` boxes); ``True`` wherever it fits; ``False`` none.
        unit_label: the time axis' label; default from the unit, e.g. "time (slots)".
        max_boxes: the most action boxes drawn over all panels (default :data:`MAX_BOXES`); a larger
            schedule is refused with a ``ValueError`` naming the limit.
        critical_path: outline the chain of actions that sets the makespan, and its hops (needs
            simulated results, ``bk.simulate(...)``).
        comm_arrows: an arrow per cross-rank hop (activation F -> F, gradient B/I -> B/I; needs
            simulated results); none beyond :data:`~bubblekit.presentation.diagram.COMM_ARROW_LIMIT`
            hops, with a warning. ``None``: drawn for simulations with a latency (``costs.comm > 0``)
            and few hops (:func:`~bubblekit.presentation.diagram.want_arrows`, plot_pipeline's default).

    Returns an :class:`SvgPicture` (shown inline by Jupyter; ``.svg``; ``.save(path)``).
    """
    tls = _as_list(result_or_timeline)
    titles = _titles(title, len(tls))
    width = _check_width(width)
    if color_by not in ("microbatch", "kind"):
        raise ValueError(f"color_by must be one of ['microbatch', 'kind'], got {color_by!r}")
    show_bubbles = check_bool("show_bubbles", show_bubbles)
    if labels is not None and not isinstance(labels, bool):
        raise TypeError(f"labels must be None (auto), True or False, got {labels!r}")
    if unit_label is not None and not isinstance(unit_label, str):
        raise TypeError(f"unit_label must be None or a string, got {unit_label!r} of type {type(unit_label).__name__}")
    max_boxes = check_int("max_boxes", max_boxes, minimum=1)
    critical_path = check_bool("critical_path", critical_path)
    if comm_arrows is not None:
        comm_arrows = check_bool("comm_arrows", comm_arrows)
    for flag, name in ((critical_path, "critical_path"), (comm_arrows, "comm_arrows")):
        if flag and not all(isinstance(t, SimResult) for t in tls):
            raise TypeError(f"{name}=True needs simulated results (bk.simulate(...)), not a measured Timeline")
    counts = [_compute_spans(t) for t in tls]
    if sum(counts) > max_boxes:
        raise ValueError(
            f"the picture would draw {sum(counts):,} action boxes, more than max_boxes={max_boxes:,} "
            f"(MAX_BOXES = {MAX_BOXES:,} by default): use a smaller p or m, or pass a larger max_boxes"
        )
    for k, (t, n) in enumerate(zip(tls, counts)):
        where = "the timeline" if len(tls) == 1 else f"timeline {k}"
        if n == 0:
            raise ValueError(f"{where} has no compute action to draw (only sends and receives)")
        if not t.makespan > 0:
            raise ValueError(f"{where} has a step of zero length (t0 = t1 = {t.t0!r} {t.unit}): nothing to draw")
    same_unit = len({t.unit for t in tls}) == 1
    window = (min(float(t.t0) for t in tls), max(float(t.t1) for t in tls)) if same_unit else None
    body: list[str] = []
    panels: list[PanelGeometry] = []
    y = 0.0
    for k, tl in enumerate(tls):
        last = k == len(tls) - 1
        xlabel = (unit_label or time_label(tl.unit)) if (last or not same_unit) else None
        arrows = (diagram.comm_arrow_segments(tl, _BOX_HEIGHT, stacklevel=_stacklevel + 1)
                  if isinstance(tl, SimResult) and diagram.want_arrows(tl, comm_arrows) else [])
        y = _panel(body, tl, y, width, title=titles[k], color_by=color_by, show_bubbles=show_bubbles,
                   labels=labels, xlabel=xlabel, window=window, geometry=panels,
                   critical=critical_path and isinstance(tl, SimResult), arrows=arrows)
    height = math.ceil(y + 8)
    text = "\n".join(body)
    uid = "bk" + hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:10]
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" height="{height}" '
        f'viewBox="0 0 {_num(width)} {height}" font-family={_attr(FONT_FAMILY)} role="img" class="bk-pipeline" '
        f'style="max-width:100%;height:auto">',
        f"<title>{_esc(titles[0] if titles[0] is not None else diagram.timeline_name(tls[0]))}</title>",
        f'<defs><pattern id="{uid}-hatch" patternUnits="userSpaceOnUse" width="6" height="6" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{BUBBLE_COLOR}"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{BUBBLE_HATCH_COLOR}" stroke-width="1.2"/></pattern></defs>',
        f'<rect class="bk-background" x="0" y="0" width="{_num(width)}" height="{height}" fill="white"/>',
    ]
    return SvgPicture("\n".join(head) + "\n" + text.replace(_HATCH, f"{uid}-hatch") + "\n</svg>\n", width, height,
                      panels)


def plot_pipeline_svg(
    result_or_results: Timeline | Sequence[Timeline],
    *,
    ax: Any = None,
    color_by: str = "microbatch",
    show_bubbles: bool = True,
    phases: bool = False,
    critical_path: bool = False,
    comm_arrows: bool | None = None,
    labels: bool | None = None,
    title: str | Sequence[str | None] | None = None,
    unit_label: str | None = None,
) -> SvgPicture:
    """``bk.plot_pipeline`` where matplotlib cannot be imported: the same call, an SVG picture back.

    Takes :func:`bubblekit.presentation.plotting.plot_pipeline`'s arguments and draws its marks
    (``critical_path``, ``comm_arrows``) but ``phases``, which is left out with a warning that says
    so; ``ax`` (a matplotlib Axes) is a ``TypeError``.
    """
    import warnings

    if ax is not None:
        raise TypeError("ax is a matplotlib Axes, and matplotlib is not available here: call bk.plot_pipeline "
                        "without ax (it returns an SVG picture)")
    for flag, name in ((phases, "phases"), (critical_path, "critical_path"), (comm_arrows, "comm_arrows")):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if phases:
        warnings.warn("phases=True is not drawn in the SVG picture (matplotlib is not available here)",
                      stacklevel=2)
    return pipeline_svg(result_or_results, title=title, color_by=color_by, show_bubbles=show_bubbles,
                        labels=labels, unit_label=unit_label, critical_path=critical_path,
                        comm_arrows=comm_arrows, _stacklevel=2)


def _nice_step(span: float, target: int) -> float:
    """The smallest of 1, 2, 2.5 or 5 x 10^k at least ``span / target``."""
    raw = span / max(target, 1)
    exp = math.floor(math.log10(raw)) if raw > 0 else 0
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = m * 10.0 ** exp
        if step >= raw * (1 - 1e-9):
            return step
    return 10.0 ** (exp + 1)


def _strip(tl: Timeline) -> tuple[list[tuple[int, ...]], int, float, float]:
    """``(stages per rank, columns, cell width, gap)`` of the placement strip (0 columns: none)."""
    stages = diagram.rank_stages(tl)
    v = max((len(x) for x in stages), default=0)
    if v < 2 or tl.p > 16:
        return stages, 0, 0.0, 0.0
    digits = len(str(max((max(x) for x in stages if x), default=0)))
    return stages, v, (digits * _DIGIT_EM + 1.1) * _STRIP_PX, 0.8 * _STRIP_PX


def _panel(
    out: list[str], tl: Timeline, top: float, width: float, *, title: str | None, color_by: str,
    show_bubbles: bool, labels: bool | None, xlabel: str | None, window: tuple[float, float] | None,
    geometry: list[PanelGeometry], critical: bool = False, arrows: Sequence[diagram.Segment] = (),
) -> float:
    """Draw one timeline's panel from ``top`` down (its plot's place appended to ``geometry``); return the y below it."""
    sp = SpanRows(tl)
    p = tl.p
    stages, v, cell, gap = _strip(tl)
    strip_w = gap + v * cell if v else 0.0
    rank_w = (_em(f"rank {p - 1}") * _FONT_PX + 10.0) if p <= 16 else (_em(str(p - 1)) * _FONT_PX + 30.0)
    left = 10.0 + strip_w + rank_w
    right = 16.0
    plot_w = max(width - left - right, 40.0)
    avail = width - 20.0
    # title and metrics line
    name = title if title is not None else diagram.timeline_name(tl)
    y = top + 10.0
    out.append('<g class="bk-panel">')
    for line in _wrap(name, avail, _TITLE_PX):
        y += _TITLE_PX * 1.35
        out.append(_text(10.0, y - _TITLE_PX * 0.5, line, size=_TITLE_PX, fill="#111111", cls="bk-title",
                         extra=' font-weight="bold"'))
    for line in _wrap(diagram.metrics_line(tl), avail, _FONT_PX):
        y += _FONT_PX * 1.35
        out.append(_text(10.0, y - _FONT_PX * 0.5, line, cls="bk-metrics"))
    y += 8.0 + (2.6 * _STRIP_PX if v else 0.0)
    row_h = max(min(_ROW_PX, _PLOT_MAX_PX / p), 3.0)
    plot_top, plot_h = y, row_h * p
    t0, t1 = window if window is not None else (float(tl.t0), float(tl.t1))
    pad = (t1 - t0) * 0.005
    lo, hi = t0 - pad, t1 + pad
    scale = plot_w / (hi - lo)

    def x_of(t: float) -> float:
        return left + (t - lo) * scale

    def y_of(rank: float) -> float:  # the centre of a rank's row
        return plot_top + (rank + 0.5) * row_h

    geometry.append(PanelGeometry(left, plot_top, plot_w, row_h * p, lo, scale, row_h, row_h * _BOX_HEIGHT,
                                  float(tl.t0), float(tl.t1)))

    clip_id = f"{_HATCH}-clip{_num(top)}"  # boxes of a trace outside its window are cut at the plot's edges
    out.append(f'<clipPath id="{clip_id}"><rect x="{_num(left)}" y="{_num(plot_top)}" width="{_num(plot_w)}" '
               f'height="{_num(row_h * p)}"/></clipPath>')
    out.append(f'<g clip-path="url(#{clip_id})">')

    # time grid and axis
    step = _nice_step(t1 - t0, max(int(plot_w / 90), 2))
    first = math.ceil((t0 - 1e-9 * step) / step)
    ticks = [k * step for k in range(first, math.floor((t1 + 1e-9 * step) / step) + 1)]
    axis_y = plot_top + plot_h
    out.append('<g class="bk-grid" stroke="#DDDDDD" stroke-width="0.6">')
    out.extend(f'<line x1="{_num(x_of(t))}" y1="{_num(plot_top)}" x2="{_num(x_of(t))}" y2="{_num(axis_y)}"/>'
               for t in ticks)
    out.append("</g>")
    # idle time
    if show_bubbles:
        d = []
        for g in tl.idle_intervals():
            gs, ge = float(g.start), float(g.end)
            yc = y_of(g.rank)
            d.append(f"M{_num(x_of(gs))} {_num(yc - row_h * _BOX_HEIGHT / 2)}h{_num((ge - gs) * scale)}"
                     f"v{_num(row_h * _BOX_HEIGHT)}h{_num(-(ge - gs) * scale)}z")
        if d:
            out.append(f'<path class="bk-idle" fill="url(#{_HATCH})" stroke="none" d="{"".join(d)}"/>')
    # action boxes
    widths = [(e - s) * scale for s, e in zip(sp.start, sp.end)]
    median = sorted(widths)[len(widths) // 2] if widths else 0.0
    edge = ' stroke="white" stroke-width="0.7"' if median >= 5 else ""
    tips = sp.n <= LABEL_LIMIT
    unit = plural(tl.unit)
    distinct: dict[str, int] = {}
    colors: list[str] = []
    box_h = row_h * _BOX_HEIGHT
    out.append(f'<g class="bk-actions"{edge}>')
    for i in range(sp.n):
        kind, column = sp.color_key(i, color_by, distinct)
        color = diagram.span_color(kind, column, color_by)
        colors.append(color)
        x0 = x_of(sp.start[i])
        rect = (f'<rect class="bk-action" x="{_num(x0)}" y="{_num(y_of(sp.rank[i]) - box_h / 2)}" '
                f'width="{_num(widths[i])}" height="{_num(box_h)}" fill="{color}"')
        if tips:
            tip = (f"rank {sp.rank[i]}: {sp.text(i)}  {format_number(sp.start[i])}–{format_number(sp.end[i])} {unit}")
            out.append(f"{rect}><title>{_esc(tip)}</title></rect>")
        else:
            out.append(rect + "/>")
    out.append("</g>")
    if sp.pair_b:  # an overlapped pair is one box: its lower half in its backward part's colour
        out.append(f'<g class="bk-pair-backward"{edge}>')
        for i, (b_mb, _, _) in sorted(sp.pair_b.items()):
            color = (KIND_COLORS["B"] if color_by == "kind" else
                     diagram.rgb_to_hex(diagram.lighten(PALETTE[b_mb % len(PALETTE)], KIND_LIGHTEN["B"])))
            out.append(f'<rect x="{_num(x_of(sp.start[i]))}" y="{_num(y_of(sp.rank[i]))}" width="{_num(widths[i])}" '
                       f'height="{_num(box_h / 2)}" fill="{color}"/>')
        out.append("</g>")
    chunks = sorted(set(sp.chunk))
    for c in chunks:
        if c:
            _chunk_outlines(out, sp, c, x_of, y_of, box_h)
    if labels is not False and (labels or sp.n <= LABEL_LIMIT):
        _labels(out, tl, sp, colors, widths, x_of, y_of, box_h)
    if arrows:
        _comm_arrows(out, arrows, x_of, y_of)
    if critical and isinstance(tl, SimResult):
        _critical_path(out, tl, x_of, y_of, box_h)
    out.append("</g>")
    # rank names, the placement strip and the time axis
    out.append(f'<line class="bk-axis" x1="{_num(left)}" y1="{_num(axis_y)}" x2="{_num(left + plot_w)}" '
               f'y2="{_num(axis_y)}" stroke="#333333" stroke-width="0.8"/>')
    if p <= 16:
        out.extend(_text(left - strip_w - 6.0, y_of(r), f"rank {r}", anchor="end", cls="bk-rank") for r in range(p))
    else:
        rstep = max(1, int(_nice_step(p - 1, 10)))
        out.extend(_text(left - 6.0, y_of(r), str(r), anchor="end", cls="bk-rank") for r in range(0, p, rstep))
        out.append(f'<text x="14" y="{_num(plot_top + plot_h / 2)}" font-size="{_num(_FONT_PX)}" text-anchor="middle" '
                   f'fill="#222222" transform="rotate(-90 14 {_num(plot_top + plot_h / 2)})">rank</text>')
    if v:
        _placement_strip(out, stages, v, cell, gap, left, plot_top, y_of)
    for t in ticks:
        xt = x_of(t)
        out.append(f'<line x1="{_num(xt)}" y1="{_num(axis_y)}" x2="{_num(xt)}" y2="{_num(axis_y + 4)}" '
                   f'stroke="#333333" stroke-width="0.8"/>')
        out.append(_text(xt, axis_y + 4 + _FONT_PX * 0.8, format_number(t), anchor="middle", cls="bk-tick"))
    y = axis_y + 6 + _FONT_PX * 1.4
    if xlabel:
        y += _FONT_PX * 1.4
        out.append(_text(left + plot_w / 2, y - _FONT_PX * 0.6, xlabel, anchor="middle", cls="bk-xlabel"))
    y = _legend(out, sp, color_by, show_bubbles, chunks, y + 4.0, width, critical=critical)
    out.append("</g>")
    return y + 6.0


def _chunk_outlines(out: list[str], sp: SpanRows, c: int, x_of: Any, y_of: Any, box_h: float) -> None:
    """Outline every box of chunk ``c >= 1`` just inside the box (solid, dashed, dotted, ...)."""
    inset = box_h * 0.04
    dashes = _dasharray(c, CHUNK_EDGE_WIDTH)
    out.append(f'<g class="bk-chunk-{c}" fill="none" stroke="{CHUNK_EDGE_COLOR}" '
               f'stroke-width="{CHUNK_EDGE_WIDTH}"{dashes}>')
    for i in range(sp.n):
        if sp.chunk[i] != c:
            continue
        x0, x1 = x_of(sp.start[i]), x_of(sp.end[i])
        shrink = min(inset, (x1 - x0) * 0.2)
        out.append(f'<rect x="{_num(x0 + shrink)}" y="{_num(y_of(sp.rank[i]) - box_h / 2 + inset)}" '
                   f'width="{_num(max(x1 - x0 - 2 * shrink, 0.0))}" height="{_num(box_h - 2 * inset)}"/>')
    out.append("</g>")


def _critical_path(out: list[str], tl: SimResult, x_of: Any, y_of: Any, box_h: float) -> None:
    """The critical path (:func:`~bubblekit.presentation.diagram.critical_boxes`): each box outlined in
    :data:`~bubblekit.presentation.diagram.CRITICAL_COLOR`, and a line for each hop between boxes."""
    boxes = diagram.critical_boxes(tl)
    out.append(f'<g class="bk-critical-path" fill="none" stroke="{CRITICAL_COLOR}" stroke-width="2">')
    for s, e, r in boxes:
        out.append(f'<rect x="{_num(x_of(s))}" y="{_num(y_of(r) - box_h / 2)}" width="{_num(x_of(e) - x_of(s))}" '
                   f'height="{_num(box_h)}"/>')
    for x0, r0, x1, r1 in diagram.critical_hops(boxes, _BOX_HEIGHT):
        out.append(f'<line class="bk-critical-hop" x1="{_num(x_of(x0))}" y1="{_num(y_of(r0))}" '
                   f'x2="{_num(x_of(x1))}" y2="{_num(y_of(r1))}"/>')
    out.append("</g>")


def _comm_arrows(out: list[str], arrows: Sequence[diagram.Segment], x_of: Any, y_of: Any) -> None:
    """An arrow per cross-rank hop (:func:`~bubblekit.presentation.diagram.comm_arrow_segments`): a line
    and a filled head at the receiving box."""
    head, half = 6.0, 2.4
    out.append('<g class="bk-comm-arrows" fill="#333333" stroke="#333333" stroke-width="0.8">')
    for t0, r0, t1, r1 in arrows:
        x0, y0, x1, y1 = x_of(t0), y_of(r0), x_of(t1), y_of(r1)  # both scales are linear: a fractional row is fine
        length = math.hypot(x1 - x0, y1 - y0)
        if length == 0:
            continue
        ux, uy = (x1 - x0) / length, (y1 - y0) / length
        bx, by = x1 - ux * min(head, length), y1 - uy * min(head, length)
        out.append(f'<path class="bk-comm-arrow" d="M{_num(x0)} {_num(y0)}L{_num(bx)} {_num(by)}'
                   f'M{_num(x1)} {_num(y1)}L{_num(bx - uy * half)} {_num(by + ux * half)}'
                   f'L{_num(bx + uy * half)} {_num(by - ux * half)}Z"/>')
    out.append("</g>")


def _dasharray(c: int, line_width: float) -> str:
    """The stroke-dasharray of chunk ``c``'s outline (matplotlib's dashes, scaled by the line width)."""
    if c <= 0:
        return ""
    pattern = _CHUNK_DASHES[1 + (c - 1) % (len(_CHUNK_DASHES) - 1)]
    if not pattern:
        return ""
    return ' stroke-dasharray="' + " ".join(_num(float(x) * line_width) for x in pattern.split()) + '"'


def _labels(out: list[str], tl: Timeline, sp: SpanRows, colors: list[str], widths: list[float],
            x_of: Any, y_of: Any, box_h: float) -> None:
    """Label boxes whose width fits the text (kind + microbatch, or the microbatch number)."""
    fontsize = min(14.0, box_h / 1.35)
    several = max(sp.chunk, default=0) > 0 and box_h / 2.5 >= 7.3
    if several:  # several stages per rank: a second line names the box's stage ("s5")
        fontsize = min(fontsize, box_h / 2.5)
    if fontsize < 6.7:
        return
    stages = [diagram.label_stage(lb) for lb in sp.labels] if several else []
    small = max(_SMALL_LABEL_PX, fontsize * 0.7) / fontsize
    pad = 4.0
    out.append('<g class="bk-labels" text-anchor="middle">')
    for i in range(sp.n):
        w = widths[i]
        if w < _DIGIT_EM * fontsize * small + pad:
            continue
        size = fontsize
        full = sp.text(i)
        short = str(sp.mb[i]) if sp.mb[i] >= 0 and not sp.key[i] else ""
        if i in sp.pair_b:
            short = f"{sp.mb[i]}&{sp.pair_b[i][0]}"
        if _em(full) * fontsize + pad <= w:
            text = full
        elif short and _em(short) * fontsize + pad <= w:
            text = short
        elif short and small < 1 and _em(short) * fontsize * small + pad <= w:
            text, size = short, fontsize * small
        else:
            continue
        stage = f"s{stages[i]}" if several and stages[i] >= 0 else ""
        if stage and i in sp.pair_b:
            stage = f"{stage}&s{sp.pair_b[i][2]}"
        fill = diagram.text_color(diagram.hex_to_rgb(colors[i]))
        xc, yc = x_of((sp.start[i] + sp.end[i]) / 2), y_of(sp.rank[i])
        if stage and _em(stage) * size + pad <= w:
            out.append(f'<text class="bk-label" x="{_num(xc)}" y="{_num(yc)}" font-size="{_num(size)}" fill="{fill}">'
                       f'<tspan x="{_num(xc)}" dy="-0.2em">{_esc(text)}</tspan>'
                       f'<tspan x="{_num(xc)}" dy="1.1em">{_esc(stage)}</tspan></text>')
        else:
            out.append(f'<text class="bk-label" x="{_num(xc)}" y="{_num(yc)}" dy="0.35em" font-size="{_num(size)}" '
                       f'fill="{fill}">{_esc(text)}</text>')
    out.append("</g>")


def _placement_strip(out: list[str], stages: list[tuple[int, ...]], v: int, cell: float, gap: float, left: float,
                     plot_top: float, y_of: Any) -> None:
    """Left of the plot, one cell per stage a rank holds (chunk 0 first, in its chunk's outline), above
    each column an arrow for the way a forward runs through it (down: rank 0 to p-1; up: back)."""
    digits = len(str(max((max(x) for x in stages if x), default=0)))
    out.append('<g class="bk-placement">')
    h = _STRIP_PX * 1.5
    for r, held in enumerate(stages):
        for c, stage in enumerate(held):
            xc = left - (gap + (v - c - 0.5) * cell)
            edge = (f'stroke="{CHUNK_EDGE_COLOR}" stroke-width="{_num(CHUNK_EDGE_WIDTH * 0.8)}"'
                    f"{_dasharray(c, CHUNK_EDGE_WIDTH * 0.8)}" if c else 'stroke="#9A9A9A" stroke-width="0.7"')
            w = cell - 0.8 * _STRIP_PX * 0.5
            out.append(f'<rect x="{_num(xc - w / 2)}" y="{_num(y_of(r) - h / 2)}" width="{_num(w)}" height="{_num(h)}" '
                       f'fill="white" {edge}/>')
            out.append(_text(xc, y_of(r), f"{stage:>{digits}}".replace(" ", "\u2007"), size=_STRIP_PX, anchor="middle", cls="bk-stage"))
    for c in range(v):
        column = [held[c] for held in stages if len(held) > c]
        arrow = "↓" if column == sorted(column) else "↑" if column == sorted(column, reverse=True) else "·"
        out.append(_text(left - (gap + (v - c - 0.5) * cell), plot_top - _STRIP_PX * 0.7, arrow, size=_STRIP_PX,
                         anchor="middle", fill="#333333", cls="bk-direction"))
    out.append(_text(left - (gap + v * cell / 2), plot_top - _STRIP_PX * 1.9, tr("plot.stages"), size=_STRIP_PX,
                     anchor="middle", fill="#333333", cls="bk-strip-title"))
    out.append("</g>")


def _legend(out: list[str], sp: SpanRows, color_by: str, show_bubbles: bool, chunks: list[int], top: float,
            width: float, *, critical: bool = False) -> float:
    """The legend under the time axis, in rows that fit the width; returns the y below it."""
    items: list[tuple[str | None, str]] = []  # (swatch attributes, or None for the critical path's line; text)
    for k in sp.kinds_present():
        if color_by == "kind":
            fill = KIND_COLORS[k]
        else:
            fill = diagram.rgb_to_hex(diagram.lighten(PALETTE[0], KIND_LIGHTEN[k]))
        text = diagram.kind_name(k) + (tr("plot.colour_is_microbatch") if k == "F" and color_by == "microbatch" else "")
        items.append((f'fill="{fill}"', text))
    if sp.pair_b:
        items.append((f'fill="{KIND_COLORS["F"]}" stroke="{KIND_COLORS["B"]}" stroke-width="3"', tr("plot.pair")))
    for c in chunks:
        if c:
            items.append((f'fill="#DDDDDD" stroke="{CHUNK_EDGE_COLOR}" stroke-width="{CHUNK_EDGE_WIDTH}"'
                          f"{_dasharray(c, CHUNK_EDGE_WIDTH)}", diagram.chunk_name(c)))
    if show_bubbles:
        items.append((f'fill="url(#{_HATCH})" stroke="{BUBBLE_HATCH_COLOR}" stroke-width="0.6"', tr("plot.idle")))
    if critical:
        items.append((None, tr("plot.critical_path")))
    size = _FONT_PX * 0.92
    x, y = 10.0, top + size * 0.8
    out.append('<g class="bk-legend">')
    for attrs, text in items:
        w = 22.0 + 6.0 + _em(text) * size + 18.0
        if x > 10.0 and x + w > width - 10.0:
            x, y = 10.0, y + size * 1.7
        if attrs is None:
            out.append(f'<line x1="{_num(x)}" y1="{_num(y)}" x2="{_num(x + 22)}" y2="{_num(y)}" '
                       f'stroke="{CRITICAL_COLOR}" stroke-width="2"/>')
        else:
            out.append(f'<rect x="{_num(x)}" y="{_num(y - 6)}" width="22" height="12" {attrs}/>')
        out.append(_text(x + 28.0, y, text, size=size))
        x += w
    out.append("</g>")
    return y + size



# ------------------------------------------------------------------------------ line charts
@dataclass(frozen=True)
class LineChart:
    """One panel of :func:`line_chart_svg`: its series (:class:`~bubblekit.presentation.diagram.ChartSeries`,
    in data units), texts and axes.

    ``x_range``/``y_range``: the data window; ``x_ticks``: where the x axis is labelled (default:
    round numbers); ``log2_x``: a base-2 logarithmic x axis; ``percent_y``: y is a fraction shown in
    percent; ``integer_y``: only whole y ticks; ``note``: a small line under the panel; ``legend``:
    name the series right of the plot.
    """

    series: Sequence[diagram.ChartSeries]
    title: str
    ylabel: str
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    xlabel: str | None = None
    x_ticks: Sequence[float] | None = None
    log2_x: bool = False
    percent_y: bool = False
    integer_y: bool = False
    note: str = ""
    legend: bool = True


#: The charts' dashes per :data:`~bubblekit.presentation.diagram.LINE_STYLES` entry, in pixels.
_LINE_DASHES = {"-": "", "--": "6 3", "-.": "6 2.5 1.5 2.5", ":": "1.5 2.5"}
_MARKER_PX = 4.5  # a marker's half size


def _marker_path(kind: str, x: float, y: float, r: float = _MARKER_PX) -> str:
    """One marker (matplotlib's ``o s ^ D v P X *``) centred on ``(x, y)`` as path data."""
    if kind == "o":
        return f"M{_num(x - r)} {_num(y)}a{_num(r)} {_num(r)} 0 1 0 {_num(2 * r)} 0a{_num(r)} {_num(r)} 0 1 0 {_num(-2 * r)} 0z"
    if kind == "s":
        return f"M{_num(x - r)} {_num(y - r)}h{_num(2 * r)}v{_num(2 * r)}h{_num(-2 * r)}z"
    if kind in "^v":
        s = -1 if kind == "^" else 1
        return f"M{_num(x)} {_num(y + s * r)}L{_num(x + r)} {_num(y - s * r)}L{_num(x - r)} {_num(y - s * r)}z"
    if kind == "D":
        return f"M{_num(x)} {_num(y - r)}L{_num(x + r)} {_num(y)}L{_num(x)} {_num(y + r)}L{_num(x - r)} {_num(y)}z"
    if kind in "PX":
        a = r * 0.38
        pts = [(-a, -r), (a, -r), (a, -a), (r, -a), (r, a), (a, a), (a, r), (-a, r), (-a, a), (-r, a), (-r, -a), (-a, -a)]
        if kind == "X":
            c = math.sqrt(0.5)
            pts = [((px - py) * c, (px + py) * c) for px, py in pts]
        return "M" + "L".join(f"{_num(x + px)} {_num(y + py)}" for px, py in pts) + "z"
    pts = []
    for k in range(10):  # "*": a five-pointed star
        rad = r * 1.2 if k % 2 == 0 else r * 0.5
        ang = math.pi * k / 5 - math.pi / 2
        pts.append((x + rad * math.cos(ang), y + rad * math.sin(ang)))
    return "M" + "L".join(f"{_num(px)} {_num(py)}" for px, py in pts) + "z"


def _data_points(s: diagram.ChartSeries) -> str:
    return " ".join(f"{float(x)!r},{float(y)!r}" for x, y in zip(s.xs, s.ys))


def _y_ticks(lo: float, hi: float, integer: bool) -> list[float]:
    step = _nice_step(hi - lo, 5)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    first = math.ceil((lo - 1e-9 * step) / step)
    return [k * step for k in range(first, math.floor((hi + 1e-9 * step) / step) + 1)]


def _chart(out: list[str], chart: LineChart, top: float, width: float) -> float:
    """Draw one chart panel from ``top`` down; return the y below it."""
    size = _FONT_PX * 0.92
    labels = [s.label for s in chart.series] if chart.legend else []
    legend_w = min(max((_em(t) * size for t in labels), default=0.0) + 44.0, width * 0.4) if labels else 0.0
    ylabel_lines = chart.ylabel.split("\n")
    left = 14.0 + len(ylabel_lines) * _FONT_PX * 1.25 + 46.0
    plot_w = max(width - left - legend_w - 16.0, 60.0)
    out.append('<g class="bk-chart">')
    y = top + 10.0
    for raw in chart.title.split("\n"):
        for line in _wrap(raw, width - 20.0, _TITLE_PX):
            y += _TITLE_PX * 1.35
            out.append(_text(10.0, y - _TITLE_PX * 0.5, line, size=_TITLE_PX, fill="#111111", cls="bk-title",
                             extra=' font-weight="bold"'))
    plot_top = y + 12.0
    plot_h = 300.0 if chart.percent_y else 220.0
    x0, x1 = chart.x_range
    y0, y1 = chart.y_range
    if chart.log2_x:
        lx0, lx1 = math.log2(x0), math.log2(x1)
        pad = (lx1 - lx0) * 0.04 or 0.5

        def x_of(x: float) -> float:
            return left + (math.log2(x) - lx0 + pad) / (lx1 - lx0 + 2 * pad) * plot_w
    else:
        pad = (x1 - x0) * (0.04 if chart.x_ticks is not None else 0.0) or 0.5

        def x_of(x: float) -> float:
            return left + (x - x0 + pad) / (x1 - x0 + 2 * pad) * plot_w

    def y_of(v: float) -> float:
        return plot_top + plot_h - (v - y0) / (y1 - y0) * plot_h

    axis_y = plot_top + plot_h
    if chart.x_ticks is not None:
        xt = list(chart.x_ticks)
    else:
        xstep = _nice_step(x1 - x0, max(int(plot_w / 90), 2))
        xt = [k * xstep for k in range(math.ceil(x0 / xstep - 1e-9), math.floor(x1 / xstep + 1e-9) + 1)]
    yt = _y_ticks(y0, y1, chart.integer_y)
    out.append('<g class="bk-grid" stroke="#E5E5E5" stroke-width="0.6">')
    out.extend(f'<line x1="{_num(left)}" y1="{_num(y_of(v))}" x2="{_num(left + plot_w)}" y2="{_num(y_of(v))}"/>'
               for v in yt)
    if chart.percent_y:
        out.extend(f'<line x1="{_num(x_of(x))}" y1="{_num(plot_top)}" x2="{_num(x_of(x))}" y2="{_num(axis_y)}"/>'
                   for x in xt)
    out.append("</g>")
    clip_id = f"{_HATCH}-chart{_num(top)}"
    out.append(f'<clipPath id="{clip_id}"><rect x="{_num(left)}" y="{_num(plot_top - 8)}" width="{_num(plot_w)}" '
               f'height="{_num(plot_h + 8)}"/></clipPath>')
    out.append(f'<g clip-path="url(#{clip_id})">')
    for s in chart.series:
        key = _attr(s.key)
        data = _attr(_data_points(s))
        if s.marker is None:
            pts: list[tuple[float, float]] = []
            for k, (x, v) in enumerate(zip(s.xs, s.ys)):
                if s.steps and k:
                    pts.append((x_of(x), y_of(s.ys[k - 1])))
                pts.append((x_of(x), y_of(v)))
            dash = _LINE_DASHES[diagram.LINE_STYLES[s.style % len(diagram.LINE_STYLES)]]
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<polyline class="bk-series" data-series={key} data-points={data} fill="none" '
                       f'stroke="{s.color}" stroke-width="1.8"{dashes} stroke-linejoin="round" '
                       f'points="{" ".join(f"{_num(a)},{_num(b)}" for a, b in pts)}"/>')
        else:
            kind = diagram.MARKERS[s.marker % len(diagram.MARKERS)]
            d = "".join(_marker_path(kind, x_of(x), y_of(v)) for x, v in zip(s.xs, s.ys))
            fill = s.color if s.filled else "white"
            out.append(f'<path class="bk-series" data-series={key} data-points={data} fill="{fill}" '
                       f'stroke="{s.edge or s.color}" stroke-width="1.6" d="{d}"/>')
    out.append("</g>")
    # axes, ticks and labels
    out.append(f'<g class="bk-axes" stroke="#333333" stroke-width="0.8">'
               f'<line x1="{_num(left)}" y1="{_num(axis_y)}" x2="{_num(left + plot_w)}" y2="{_num(axis_y)}"/>'
               f'<line x1="{_num(left)}" y1="{_num(plot_top)}" x2="{_num(left)}" y2="{_num(axis_y)}"/>'
               + "".join(f'<line x1="{_num(x_of(x))}" y1="{_num(axis_y)}" x2="{_num(x_of(x))}" y2="{_num(axis_y + 4)}"/>'
                         for x in xt)
               + "".join(f'<line x1="{_num(left - 4)}" y1="{_num(y_of(v))}" x2="{_num(left)}" y2="{_num(y_of(v))}"/>'
                         for v in yt)
               + "</g>")
    out.extend(_text(x_of(x), axis_y + 4 + _FONT_PX * 0.8, format_number(x), anchor="middle", cls="bk-tick")
               for x in xt)
    out.extend(_text(left - 7.0, y_of(v), f"{format_number(round(v * 100, 9))}%" if chart.percent_y
                     else format_number(round(v, 9)), anchor="end", cls="bk-tick") for v in yt)
    yc = plot_top + plot_h / 2
    for k, line in enumerate(ylabel_lines):
        xl = 16.0 + k * _FONT_PX * 1.25
        out.append(f'<text class="bk-ylabel" x="{_num(xl)}" y="{_num(yc)}" dy="0.35em" font-size="{_num(_FONT_PX)}" '
                   f'text-anchor="middle" fill="#222222" transform="rotate(-90 {_num(xl)} {_num(yc)})">'
                   f"{_esc(line)}</text>")
    y = axis_y + 6 + _FONT_PX * 1.4
    if chart.xlabel:
        y += _FONT_PX * 1.4
        out.append(_text(left + plot_w / 2, y - _FONT_PX * 0.6, chart.xlabel, anchor="middle", cls="bk-xlabel"))
    if labels:  # the legend, right of the plot
        out.append('<g class="bk-legend">')
        lx, ly = left + plot_w + 14.0, plot_top + size * 0.6
        for s in chart.series:
            if s.marker is None:
                dash = _LINE_DASHES[diagram.LINE_STYLES[s.style % len(diagram.LINE_STYLES)]]
                dashes = f' stroke-dasharray="{dash}"' if dash else ""
                out.append(f'<line x1="{_num(lx)}" y1="{_num(ly)}" x2="{_num(lx + 24)}" y2="{_num(ly)}" '
                           f'stroke="{s.color}" stroke-width="1.8"{dashes}/>')
            else:
                kind = diagram.MARKERS[s.marker % len(diagram.MARKERS)]
                out.append(f'<path d="{_marker_path(kind, lx + 12, ly)}" fill="{s.color if s.filled else "white"}" '
                           f'stroke="{s.edge or s.color}" stroke-width="1.6"/>')
            out.append(_text(lx + 30.0, ly, s.label, size=size))
            ly += size * 1.6
        out.append("</g>")
        y = max(y, ly)
    if chart.note:
        for line in _wrap(chart.note, width - 20.0, size * 0.9):
            y += size * 1.3
            out.append(_text(10.0, y - size * 0.5, line, size=size * 0.9, cls="bk-note"))
    out.append("</g>")
    return y + 6.0


def line_chart_svg(charts: LineChart | Sequence[LineChart], *, width: float = 960) -> SvgPicture:
    """Line charts as SVG (pure Python), stacked top to bottom: the memory curves and the bubble sweep
    of the browser edition (:mod:`bubblekit.presentation.svg_plotting`).

    Each series is one element of class ``bk-series`` (a ``<polyline>`` for a line, a ``<path>`` of
    markers for points) whose ``data-series`` is its key and ``data-points`` its points in data units.
    """
    panels = [charts] if isinstance(charts, LineChart) else list(charts)
    if not panels or not all(isinstance(c, LineChart) for c in panels):
        raise TypeError("charts must be a LineChart or a non-empty list of them")
    width = _check_width(width)
    body: list[str] = []
    y = 0.0
    for chart in panels:
        y = _chart(body, chart, y, width)
    height = math.ceil(y + 8)
    text = "\n".join(body)
    uid = "bk" + hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:10]
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" height="{height}" '
        f'viewBox="0 0 {_num(width)} {height}" font-family={_attr(FONT_FAMILY)} role="img" class="bk-chart-svg" '
        f'style="max-width:100%;height:auto">',
        f"<title>{_esc(panels[0].title.splitlines()[0] if panels[0].title else '')}</title>",
        f'<rect class="bk-background" x="0" y="0" width="{_num(width)}" height="{height}" fill="white"/>',
    ]
    return SvgPicture("\n".join(head) + "\n" + text.replace(_HATCH, uid) + "\n</svg>\n", width, height)
