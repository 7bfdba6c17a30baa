"""``bk.plotting`` where matplotlib cannot be imported: the lessons' pictures as SVG, in pure Python.

The no-install edition of the course runs in the browser (JupyterLite on Pyodide) without numpy
and matplotlib. There ``bk.plotting`` (and ``from bubblekit import plotting``) is this module, so
that a lesson's cells run unchanged; it draws with :mod:`bubblekit.presentation.svg` and the
diagram's rules of :mod:`bubblekit.presentation.diagram` (one drawing model, no second copy of
:mod:`bubblekit.presentation.plotting`):

* :func:`use_course_style` does nothing (the SVG pictures carry their own letters and colours);
* :func:`plot_pipeline` is :func:`bubblekit.presentation.svg.plot_pipeline_svg` (``bk.plot_pipeline``
  there too): the pipeline diagram as an :class:`~bubblekit.presentation.svg.SvgPicture`, with the
  critical path (``critical_path=True``, lesson 02) and the hops' arrows (``comm_arrows``) as
  matplotlib draws them, from the same geometry (:func:`~bubblekit.presentation.diagram.critical_boxes`,
  :func:`~bubblekit.presentation.diagram.comm_arrow_segments`); only ``phases`` is not drawn (a warning says so);
* :func:`pipeline_animation_html` is the diagram filling in over time: SVG frames that a CSS
  animation shows one after the other (``frames=`` and ``interval_ms=`` as in matplotlib's;
  ``dpi`` is accepted and ignored), the cursor, the actions running and the readout line of
  matplotlib's animation, and a button that plays it again;
* the diagram's colours and constants (``PALETTE``, ``microbatch_color``, ``CRITICAL_COLOR``,
  ``COMM_ARROW_LIMIT``, ...) are those of
  :mod:`~bubblekit.presentation.diagram`, the same objects as ``plotting``'s;
* :func:`plot_memory` (lesson 04) and :func:`plot_sweep` (lessons 03 and 05) draw their charts as
  SVG line charts (:func:`bubblekit.presentation.svg.line_chart_svg`) from the same numbers as
  matplotlib's (:func:`~bubblekit.presentation.diagram.memory_series`,
  :func:`~bubblekit.presentation.diagram.sweep_data`);
* every other picture function of ``plotting`` (``plot_frontier``, ``animate_pipeline``, ...) is here
  and raises a ``ModuleNotFoundError`` that names it and says it needs matplotlib: the JupyterLab
  edition (``bash course.sh setup``) draws it.

``import bubblekit`` in an IPython kernel without matplotlib also makes ``%matplotlib inline`` (the
first cell of the lessons) a quiet no-op (:func:`install_matplotlib_magic`): IPython's own magic
can only fail there, and bubblekit's pictures need no backend.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, NoReturn

from bubblekit._progress import Progress, reporter
from bubblekit.costs import Costs
from bubblekit.i18n import register, tr
from bubblekit.presentation import diagram
from bubblekit.presentation.diagram import (
    BOX_HEIGHT,
    BUBBLE_COLOR,
    CHUNK_EDGE_COLOR,
    CHUNK_EDGE_WIDTH,
    COMM_ARROW_AUTO,
    COMM_ARROW_LIMIT,
    CRITICAL_COLOR,
    CURSOR_COLOR,
    KIND_COLORS,
    LABEL_LIMIT,
    LINE_COLORS,
    PALETTE,
    SECOND_ROUND_DARKEN,
    SERIES_COLORS,
    SpanRows,
    microbatch_color,
)
from bubblekit.presentation.svg import (
    FONT_FAMILY,
    LineChart,
    SvgPicture,
    _attr,
    _esc,
    _num,
    line_chart_svg,
    plot_pipeline_svg,
)
from bubblekit.simulator import SimResult
from bubblekit.text import time_label
from bubblekit.timeline import Timeline

#: What ``bk.plotting`` offers without matplotlib: the same names as plotting's, those that need
#: matplotlib raising :func:`needs_matplotlib`'s error when called.
__all__ = [
    "PALETTE", "SECOND_ROUND_DARKEN", "microbatch_color", "KIND_COLORS", "BUBBLE_COLOR", "CURSOR_COLOR",
    "CHUNK_EDGE_COLOR", "CHUNK_EDGE_WIDTH", "LABEL_LIMIT", "SERIES_COLORS", "LINE_COLORS", "time_label",
    "CRITICAL_COLOR", "BOX_HEIGHT", "COMM_ARROW_LIMIT", "COMM_ARROW_AUTO",
    "use_course_style", "plot_pipeline", "pipeline_animation_html",
    "plot_memory", "plot_sweep", "plot_frontier", "animate_pipeline", "save_animation_gif", "placement_strip_width",
    "needs_matplotlib", "install_matplotlib_magic", "SVG_EDITION",
]

#: True: this is the stand-in (``bk.plotting.SVG_EDITION`` tells a notebook which pictures it gets).
SVG_EDITION = True

register({
    "svgplot.needs_matplotlib": {
        "en": ("{name} needs matplotlib, which is not installed here (the browser edition of the course draws only "
               "the pipeline diagram, its animation, the memory curves and the bubble sweep, as SVG): open this lesson in the JupyterLab edition "
               "(bash course.sh setup installs matplotlib) to draw it"),
        "zh": ("{name} 需要 matplotlib，但当前环境没有安装（课程的浏览器版只用 SVG 画流水线图、它的动画、显存曲线和气泡随 m 变化的曲线）："
               "请在 JupyterLab 版中打开这一课（课程的安装脚本会装好 matplotlib）再画这张图"),
    },
    "svgplot.replay": {"en": "↻ play again", "zh": "↻ 重新播放"},
})

_READOUT_PX = 13.0
_READOUT_FONT = "'DejaVu Sans Mono', Menlo, Consolas, 'Noto Sans Mono CJK SC', monospace"


def needs_matplotlib(name: str) -> ModuleNotFoundError:
    """The error of a picture that only matplotlib draws: it names ``name`` and says where it is drawn."""
    return ModuleNotFoundError(tr("svgplot.needs_matplotlib", name=name), name="matplotlib")


def _matplotlib_only(name: str, doc: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> NoReturn:
        raise needs_matplotlib(f"bk.plotting.{name}")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{doc} Needs matplotlib (the JupyterLab edition): here it raises ``ModuleNotFoundError``."
    return function


plot_frontier = _matplotlib_only("plot_frontier", "Bubble against memory for every schedule.")
animate_pipeline = _matplotlib_only("animate_pipeline", "The animation as a matplotlib FuncAnimation.")
save_animation_gif = _matplotlib_only("save_animation_gif", "The animation written as a GIF.")
placement_strip_width = _matplotlib_only("placement_strip_width", "The placement strip's width in points.")

#: plotting's constants that only matter to matplotlib's drawing: not here, with a clear AttributeError.
_MATPLOTLIB_CONSTANTS = ("COMPOUND_ABOVE", "SMALL_LABEL_PT", "READABLE_PX", "rcParams")


def __getattr__(name: str) -> Any:
    if name in _MATPLOTLIB_CONSTANTS:
        raise AttributeError(tr("svgplot.needs_matplotlib", name=f"bk.plotting.{name}"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def use_course_style(*, font_size: float = 12.0) -> None:
    """Nothing to set: the SVG pictures carry their letters, colours and fonts (matplotlib's
    :func:`~bubblekit.presentation.plotting.use_course_style` sets its rcParams)."""
    return None


plot_pipeline = plot_pipeline_svg


def _no_ax(ax: Any, name: str) -> None:
    if ax is not None:
        raise TypeError(f"ax is a matplotlib Axes, and matplotlib is not available here: call bk.plotting.{name} "
                        f"without ax (it returns an SVG picture), got ax={ax!r}")


def plot_memory(
    result_or_results: SimResult | Sequence[SimResult],
    *,
    ax: Any = None,
    cap: float | None = None,
    ranks: Sequence[int] | None = None,
    legend: bool = True,
) -> SvgPicture:
    """``bk.plotting.plot_memory`` without matplotlib: activations held over time, one step line per
    rank, the peaks marked, as an SVG picture (:func:`bubblekit.presentation.svg.line_chart_svg`).

    The same arguments and numbers as :func:`bubblekit.presentation.plotting.plot_memory`
    (:func:`bubblekit.presentation.diagram.memory_series`): one panel per result, sharing the y
    scale; ``cap`` a dashed line; ``ranks`` the ranks drawn; ``legend`` the names and peaks right of
    the plot. ``ax`` (a matplotlib Axes) is a ``TypeError``. Used in lesson 04.
    """
    _no_ax(ax, "plot_memory")
    if not isinstance(legend, bool):
        raise TypeError(f"legend must be True or False, got {legend!r}")
    res, sels = diagram.memory_arguments(result_or_results, cap, ranks)
    same_unit = len({r.unit for r in res}) == 1
    top = diagram.memory_top(res, cap)
    window = (min(float(r.t0) for r in res), max(float(r.t1) for r in res))
    charts = []
    for k, (r, sel) in enumerate(zip(res, sels)):
        lines, peaks = diagram.memory_series(r, sel)
        series = [*lines, peaks]
        x_range = window if same_unit and len(res) > 1 else (float(r.t0), float(r.t1))
        if cap is not None:
            series.append(diagram.ChartSeries("cap", tr("plot.memory.cap", cap=f"{cap:g}"), x_range,
                                              (float(cap), float(cap)), CURSOR_COLOR, style=1))
        charts.append(LineChart(series, diagram.memory_title(r, sel, cap), tr("plot.memory.ylabel"), x_range,
                                (0.0, top), xlabel=time_label(r.unit) if k == len(res) - 1 or not same_unit else None,
                                integer_y=True, legend=legend and len(sel) <= 12))
    return line_chart_svg(charts)


def plot_sweep(
    schedule_names: str | Sequence[str],
    p: int,
    ms: Sequence[int],
    *,
    v: int | Sequence[int] = 1,
    costs: Costs | None = None,
    ax: Any = None,
    progress: Progress = None,
) -> SvgPicture:
    """``bk.plotting.plot_sweep`` without matplotlib: bubble ratio against m, simulated points over
    the closed forms, as an SVG picture (:func:`bubblekit.presentation.svg.line_chart_svg`).

    The same arguments and numbers as :func:`bubblekit.presentation.plotting.plot_sweep`
    (:func:`bubblekit.presentation.diagram.sweep_data`): points ``bk.simulate(...).bubble_ratio``,
    lines ``bk.bubble_ratio(p, m, v)``, m on a base-2 log axis when it spans 8x, the bubble in
    percent, an ``m`` a schedule refuses listed under the chart. ``ax`` is a ``TypeError``. Used in
    lessons 03 and 05.
    """
    _no_ax(ax, "plot_sweep")
    data = diagram.sweep_data(schedule_names, p, ms, v, costs,
                              reporter_for=lambda n, estimate: reporter(progress, "plot_sweep", n, estimate))
    note = ""
    if data.skipped:
        shown = data.skipped[:4] + ([tr("plot.sweep.more", n=len(data.skipped) - 4)] if len(data.skipped) > 4 else [])
        note = tr("plot.sweep.skipped", what="; ".join(shown))
    top = max([y for s in data.points + data.forms for y in s.ys] + [0.01]) * 1.05
    chart = LineChart([*data.points, *data.forms], data.title, tr("plot.sweep.ylabel"),
                      (float(data.m_list[0]), float(data.m_list[-1])), (0.0, top), xlabel=tr("plot.sweep.xlabel"),
                      x_ticks=[float(m) for m in data.m_list], log2_x=data.log_m, percent_y=True, note=note)
    return line_chart_svg(chart)


def pipeline_animation_html(
    result: Timeline,
    *,
    frames: int = 60,
    interval_ms: float = 80,
    color_by: str = "microbatch",
    dpi: float = 72.0,
    **plot_kw: Any,
) -> str:
    """The diagram filling in over time, as self-contained HTML with an SVG picture (no matplotlib, no network).

    The same frames as matplotlib's animation (:func:`bubblekit.presentation.diagram.frame_times`:
    at most ``frames``, on round times, the last one the whole step), one every ``interval_ms``
    milliseconds, played once by a CSS animation when the output is shown: the time not yet reached
    veiled in white, the cursor and the actions running at its time outlined, and under the diagram
    the readout line (elapsed time, actions running, bubble so far). A button plays it again. Where
    CSS does not run, the last frame shows. ``dpi`` is accepted (and checked) for the same call as
    matplotlib's and ignored: an SVG is sharp at any size. ``color_by`` and ``plot_kw`` go to
    :func:`plot_pipeline`.
    """
    diagram.check_animation(result, frames, interval_ms, dpi)
    picture = plot_pipeline_svg(result, color_by=color_by, **plot_kw)
    g = picture.panels[0]
    times = diagram.frame_times(float(result.t0), float(result.t1), frames)
    sp = SpanRows(result)
    body = picture.svg.rstrip("\n")
    uid = "bkanim" + hashlib.sha1(body.encode("utf-8"), usedforsecurity=False).hexdigest()[:10] + f"x{len(times)}"
    readout_y = picture.height + _READOUT_PX * 0.9
    height = picture.height + round(_READOUT_PX * 2.0)
    width = picture.width
    interval = float(interval_ms)
    x_end = g.x_of(g.t1)
    out: list[str] = []
    # a frame is hidden but while its animation runs (interval ms from its delay); the last one stays
    rules = [f".{uid} .bk-frame {{ visibility: hidden; animation: {uid}-show {_num(interval)}ms linear 1 none; }}",
             f".{uid} .bk-frame-last {{ animation-fill-mode: forwards; }}",
             f"@keyframes {uid}-show {{ from, to {{ visibility: visible; }} }}"]
    for k, t in enumerate(times):
        last = k == len(times) - 1
        rules.append(f".{uid} .bk-frame-{k} {{ animation-delay: {_num(k * interval)}ms; }}")
        hidden = "" if last else ' visibility="hidden"'
        cls = f"bk-frame bk-frame-{k}" + (" bk-frame-last" if last else "")
        out.append(f'<g class="{cls}"{hidden}>')
        x = g.x_of(t)
        if x_end - x > 0:
            out.append(f'<rect class="bk-veil" x="{_num(x)}" y="{_num(g.top)}" width="{_num(x_end - x)}" '
                       f'height="{_num(g.height)}" fill="white" fill-opacity="0.72"/>')
        running = [i for i in range(sp.n) if sp.start[i] <= t < sp.end[i]]
        for i in running:
            x0, x1 = g.x_of(sp.start[i]), g.x_of(sp.end[i])
            out.append(f'<rect class="bk-running" x="{_num(x0)}" y="{_num(g.y_of(sp.rank[i]) - g.box_height / 2)}" '
                       f'width="{_num(x1 - x0)}" height="{_num(g.box_height)}" fill="none" stroke="{CURSOR_COLOR}" '
                       f'stroke-width="2.5"/>')
        out.append(f'<line class="bk-cursor" x1="{_num(x)}" y1="{_num(g.top)}" x2="{_num(x)}" '
                   f'y2="{_num(g.top + g.height)}" stroke="{CURSOR_COLOR}" stroke-width="2.2"/>')
        text = diagram.animation_readout(result, t, times, len(running))
        out.append(f'<text class="bk-readout" x="{_num(width / 2)}" y="{_num(readout_y)}" dy="0.35em" '
                   f'font-size="{_num(_READOUT_PX)}" text-anchor="middle" fill="#222222" '
                   f'font-family={_attr(_READOUT_FONT)} xml:space="preserve">{_esc(text)}</text>')
        out.append("</g>")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="{uid} bk-animation-svg" width="{_num(width)}" '
           f'height="{height}" viewBox="0 0 {_num(width)} {height}" font-family={_attr(FONT_FAMILY)} role="img" '
           f'style="max-width:100%;height:auto">\n'
           f'<title>{_esc(diagram.animation_readout(result, times[-1], times, 0))}</title>\n'
           f'<style>\n' + "\n".join(rules) + "\n</style>\n"
           f'<rect x="0" y="{_num(picture.height)}" width="{_num(width)}" height="{_num(height - picture.height)}" '
           f'fill="white"/>\n' + body + "\n" + "\n".join(out) + "\n</svg>")
    replay = ("var box = this.parentNode.parentNode; var old = box.querySelector('svg.bk-animation-svg'); "
              "old.parentNode.replaceChild(old.cloneNode(true), old);")
    return (f'<div class="bk-animation" style="max-width:100%;overflow-x:auto">{svg}'
            f'<div><button type="button" class="bk-replay" onclick="{replay}">{_esc(tr("svgplot.replay"))}</button>'
            f"</div></div>")


def _matplotlib_magic(line: str = "") -> None:
    """``%matplotlib`` without matplotlib (the browser edition): nothing to set up, so nothing is done.

    bubblekit draws its pictures as SVG here (``bk.plotting`` is :mod:`bubblekit.presentation.svg_plotting`);
    IPython's own ``%matplotlib`` would fail on the missing package.
    """
    return None


def install_matplotlib_magic(shell: Any) -> None:
    """Register :func:`_matplotlib_magic` as ``shell``'s ``%matplotlib`` line magic (called by ``import
    bubblekit`` in an IPython kernel where matplotlib or numpy cannot be found, and only there)."""
    shell.register_magic_function(_matplotlib_magic, "line", "matplotlib")
