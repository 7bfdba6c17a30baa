"""Live explorers (ipywidgets): move a slider, see the pipeline, its bubble and its memory.

Two explorers, both objects that tests (and notebooks) can drive by setting ``.value`` on
their controls, the way ipywidgets' own tests do::

    from bubblekit.presentation.explorers import pipeline_explorer, schedule_builder
    ex = pipeline_explorer("1f1b", p=4, m=8)
    ex                                   # displays the widget in Jupyter or Voila
    ex.controls["m"].value = 16          # redraws at once
    ex.result.bubble_ratio, ex.readouts["bubble_ratio"].value

* :func:`pipeline_explorer` -- schedule, ``p``, ``m``, ``v``, a cost preset, F/B/I/W
  sliders that override it, a communication latency and a memory cap; shows the
  pipeline diagram above the memory curves, and readouts named by their convention
  (``bubble_ratio`` = idle / (p x makespan), ``bubble_overhead`` = idle / busy), the
  closed form where one exists, the makespan with its unit and the peak memory per rank.
  A compare mode puts a second schedule on the same time axis.
* :func:`schedule_builder` -- write per-rank orders (``rank 0: 0F0 0F1 0B0 ...``), see the
  diagram, the simulator's legality message when the orders are illegal, and a score
  against GPipe and 1F1B for the same ``p`` and ``m``.

Units: times are in the cost preset's unit (abstract *slots*, or *ms* for the measured
H200 preset); memory is in *microbatch activations* (1.0 = what one microbatch leaves on a
rank holding its whole share of the model), plus bytes for the measured preset.

Pictures are drawn with matplotlib's Agg backend into one reused
:class:`~matplotlib.figure.Figure` (never registered with pyplot, so nothing leaks) and
shown as PNG bytes in an :class:`ipywidgets.Image`, which works the same in JupyterLab, in
Voila (``python -m bubblekit classroom``) and in a headless browser test. Bad input never
raises out of a callback: the library's own message is shown in the ``message`` readout.
"""

from __future__ import annotations

import html
import io
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import ipywidgets as widgets
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from bubblekit._validate import Number
from bubblekit.costs import PRESETS, Costs
from bubblekit.costs import preset as cost_preset
from bubblekit.formulas import bubble_overhead as formula_overhead
from bubblekit.presentation import plotting
from bubblekit.schedules import REGISTRY, Schedule, ScheduleError, display_name, names, spec
from bubblekit.schedules import schedule as build_schedule
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import format_number, plural

__all__ = [
    "pipeline_explorer",
    "PipelineExplorer",
    "schedule_builder",
    "ScheduleBuilder",
    "BuilderScore",
    "COST_PRESETS",
    "render_png",
]


#: Cost presets offered by the explorers (see :func:`bubblekit.preset`).
COST_PRESETS: tuple[str, ...] = (*PRESETS, "h200")

_NONE = "none"

#: Pixels per inch of the PNG sent to the browser (figures are 12 in wide: 960 px), legible
#: when projected and quick to draw; see ``benchmarks/bench_explorer.py``.
DPI = 80
_WIDTH_IN = 12.0

_CSS = """
<style>
.bk-explorer { font-size: 15px; }
.bk-explorer .widget-label, .bk-explorer .widget-readout { font-size: 15px; }
.bk-card { border: 1px solid #d0d0d0; border-radius: 6px; padding: 4px 10px; margin: 2px;
           background: #fafafa; min-width: 150px; }
.bk-card .bk-name { font-size: 12px; color: #555; }
.bk-card .bk-value { font-size: 22px; font-weight: 600; color: #111; }
.bk-card .bk-note { font-size: 12px; color: #555; }
.bk-msg-error { color: #a00000; background: #fff3f3; border: 1px solid #e0a0a0; border-radius: 6px;
                padding: 6px 10px; white-space: pre-wrap; font-family: monospace; font-size: 14px; }
.bk-msg-warn { color: #7a4d00; background: #fff8e6; border: 1px solid #e6c27a; border-radius: 6px;
               padding: 6px 10px; font-size: 15px; }
.bk-msg-ok { color: #225522; font-size: 14px; }
.bk-control-text textarea { font-family: monospace; font-size: 15px; }
.bk-score table { border-collapse: collapse; font-size: 15px; }
.bk-score td, .bk-score th { padding: 2px 10px; border-bottom: 1px solid #ddd; text-align: right; }
.bk-score th:first-child, .bk-score td:first-child { text-align: left; }
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
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number (int) between 1 and {hi} for the {where}, got {value!r}")
    if not 1 <= value <= hi:
        raise ValueError(f"{name} must be between 1 and {hi} for the {where} (its slider's range), got {value!r}")


def render_png(fig: Figure, dpi: float | None = None) -> bytes:
    """PNG bytes of ``fig`` at ``dpi`` (default :data:`DPI`), Agg, fast zlib level: what the explorers send."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or DPI, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def _new_figure() -> Figure:
    fig = Figure(figsize=(_WIDTH_IN, 6.0))  # fixed margins: a layout engine would double the draw time
    FigureCanvasAgg(fig)
    return fig


#: Fixed layout in inches (a layout engine would double the draw time): left margin (rank
#: names, memory label), right margin (the legends plotting puts outside the axes), space above
#: a panel (its two-line title) and below it (tick labels and the time label).
_LEFT_IN, _RIGHT_IN, _TITLE_IN, _XLABEL_IN = 1.25, 2.75, 0.62, 0.55


def _pipeline_height(p: int) -> float:
    """Height in inches of a pipeline panel with ``p`` rank rows."""
    return 0.5 + 0.36 * p


def _positions(fig: Figure, heights: Sequence[float]) -> list[tuple[float, float, float, float]]:
    """Resize ``fig`` for full-width panels of ``heights`` inches, top to bottom; their positions."""
    total = sum(h + _TITLE_IN + _XLABEL_IN for h in heights) + 0.1
    fig.set_size_inches(_WIDTH_IN, total)
    out = []
    top = total - 0.1
    x0, w = _LEFT_IN / _WIDTH_IN, 1 - (_LEFT_IN + _RIGHT_IN) / _WIDTH_IN
    for h in heights:
        top -= _TITLE_IN
        out.append((x0, (top - h) / total, w, h / total))
        top -= h + _XLABEL_IN
    return out


def _stack_axes(fig: Figure, heights: Sequence[float]) -> list[Any]:
    """Resize ``fig`` and add one full-width Axes per height (inches), top to bottom."""
    # a fixed title height skips matplotlib's title-vs-ticks overlap search at every draw
    with matplotlib.rc_context({"axes.titley": 1.0}):
        return [fig.add_axes(pos) for pos in _positions(fig, heights)]


def _place_axes(fig: Figure, axes: Sequence[Any], heights: Sequence[float]) -> None:
    """Resize ``fig`` and move existing ``axes`` to the panel positions for ``heights``."""
    for ax, pos in zip(axes, _positions(fig, heights)):
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
    return (f'<svg width="22" height="10" style="vertical-align:middle"><line x1="0" y1="5" x2="22" y2="5" '
            f'stroke="{color}" stroke-width="3"{dash_attr}/></svg>')


def _panel_title(x: SimResult) -> str:
    s = x.schedule
    v = f", v={s.v}" if s.v > 1 else ""
    return f"{display_name(s.name)}  (p={s.p}, m={s.m}{v}; {x.costs.describe()})"


@contextmanager
def _style() -> Iterator[None]:
    """The course style, applied only while an explorer draws (global rcParams are restored)."""
    with matplotlib.rc_context():
        plotting.use_course_style()
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


def _dropdown(key: str, description: str, options: Sequence[str], value: str, tooltip: str = "") -> widgets.Dropdown:
    w = widgets.Dropdown(
        description=description, options=list(options), value=value,
        style={"description_width": "145px"}, layout=widgets.Layout(width="360px"), tooltip=tooltip,
    )
    w.add_class(f"bk-control-{key}")
    return w


def _readout(key: str) -> widgets.HTML:
    w = widgets.HTML(value="")
    w.add_class(f"bk-readout-{key}")
    return w


# ----------------------------------------------------------------------- the explorer
class PipelineExplorer:
    """Sliders for a schedule, its size and its costs; a live diagram, memory curves and readouts.

    Attributes:
        controls: widgets keyed ``"schedule"``, ``"p"``, ``"m"``, ``"v"``, ``"preset"``,
            ``"f"``, ``"b"``, ``"i"``, ``"w"``, ``"comm"``, ``"cap"``, ``"compare"``. Cost
            sliders are in the preset's unit (slots or ms); ``cap`` is in microbatch
            activations (0 = no cap); ``compare`` is ``"none"`` or a schedule name.
        readouts: HTML widgets keyed ``"bubble_ratio"``, ``"bubble_overhead"``,
            ``"formula"``, ``"makespan"``, ``"peak"``, ``"costs"``, ``"compare"``, ``"message"``.
        figure: the matplotlib Figure drawn last (reused between redraws).
        image: the :class:`ipywidgets.Image` showing ``figure`` as PNG.
        result: the main schedule's :class:`~bubblekit.SimResult`, ``None`` after an error.
        compare_result: the compared schedule's result, or ``None``.
        error: the library's message when the current settings are invalid, else ``None``.
        costs: the :class:`~bubblekit.Costs` simulated last.
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
    ) -> None:
        all_names = names()
        schedule = spec(schedule).name
        compare = None if compare is None or compare == _NONE else spec(compare).name
        if preset not in COST_PRESETS:
            cost_preset(preset)  # raises the library's message
        for key, val, hi in (("p", p, 16), ("m", m, 64), ("v", v, 8)):
            _check_size(key, val, hi, "explorer")
        self._hold = 0
        self._dirty = False
        self.figure: Figure = _new_figure()
        self.result: SimResult | None = None
        self.compare_result: SimResult | None = None
        self.error: str | None = None
        self.costs: Costs | None = None
        self.last_redraw_ms = 0.0
        self._rank_styles: dict[int, tuple[str, str]] = {}
        self._axes: list[Any] = []
        self._base = cost_preset(preset)

        c: dict[str, widgets.Widget] = {}
        c["schedule"] = _dropdown("schedule", "schedule", all_names, schedule, "the pipeline schedule")
        c["compare"] = _dropdown("compare", "compare with", [_NONE, *all_names], compare or _NONE,
                                 "a second schedule on the same time axis")
        c["p"] = _slider("int", "p", "p (ranks)", p, 1, 16, 1, tooltip="pipeline stages = devices")
        c["m"] = _slider("int", "m", "m (microbatches)", m, 1, 64, 1, tooltip="microbatches per step")
        c["v"] = _slider("int", "v", "v (chunks/rank)", v, 1, 8, 1,
                         tooltip="virtual stages per rank (interleaved, looped BFS)")
        c["preset"] = _dropdown("preset", "cost preset", COST_PRESETS, preset,
                                "uniform: F=B; b=2f: B=2F; f=i=w: split backward; h200: measured, ms")
        c["f"] = _slider("float", "f", "F (forward)", 1.0, 0.0, 10.0, 0.05, tooltip="forward time, one rank's share")
        c["b"] = _slider("float", "b", "B (backward)", 2.0, 0.0, 10.0, 0.05, tooltip="full backward time")
        c["i"] = _slider("float", "i", "I (input grad)", 1.0, 0.0, 10.0, 0.05, tooltip="input-gradient backward")
        c["w"] = _slider("float", "w", "W (weight grad)", 1.0, 0.0, 10.0, 0.05, tooltip="weight-gradient backward")
        c["comm"] = _slider("float", "comm", "comm latency", 0.0, 0.0, 4.0, 0.05, tooltip="latency of one hop")
        c["cap"] = _slider("float", "cap", "memory cap", 0.0, 0.0, 64.0, 0.5, ".1f",
                           tooltip="activation budget per rank, microbatch activations; 0 = no cap")
        self.controls: dict[str, widgets.Widget] = c

        self.readouts: dict[str, widgets.HTML] = {
            k: _readout(k)
            for k in ("bubble_ratio", "bubble_overhead", "formula", "makespan", "peak", "costs", "compare", "message")
        }
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1200px"))
        self.image.add_class("bk-figure")
        self._unit_note = widgets.HTML(value="")
        self.widget = self._layout()

        self._load_preset(preset)
        self._sync_enabled()
        for key, w in c.items():
            w.observe(self._on_change(key), names="value")
        self.update()

    # ------------------------------------------------------------------ layout
    def _layout(self) -> widgets.Box:
        """Controls in two groups (wrapping on narrow screens), readouts, then the full-width picture."""
        c, r = self.controls, self.readouts
        title = widgets.HTML(_CSS + "<h2 style='margin:4px 0'>Pipeline bubble explorer</h2>")

        def group(name: str, items: list[widgets.Widget]) -> widgets.VBox:
            head = widgets.HTML(f"<b style='font-size:15px;color:#333'>{name}</b>")
            return widgets.VBox([head, *items], layout=widgets.Layout(width="370px", margin="0 12px 6px 0"))

        controls = widgets.HBox(
            [group("Schedule and memory", [c["schedule"], c["compare"], c["p"], c["m"], c["v"], c["cap"]]),
             group("Costs (time per action)", [c["preset"], self._unit_note, c["f"], c["b"], c["i"], c["w"],
                                               c["comm"]])],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        cards = widgets.HBox(
            [r["bubble_ratio"], r["bubble_overhead"], r["makespan"], r["formula"]],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        box = widgets.VBox([title, controls, cards, r["peak"], r["compare"], r["message"], self.image, r["costs"]])
        box.add_class("bk-explorer")
        box.add_class("bk-pipeline-explorer")
        return box

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    # ---------------------------------------------------------------- batching
    @contextmanager
    def hold(self) -> Iterator[None]:
        """Change several controls, redraw once at the end (``with ex.hold(): ...``)."""
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
            if key == "preset":
                with self.hold():
                    self._load_preset(change["new"])
            if key in ("schedule", "compare"):
                self._sync_enabled()
            if self._hold:
                self._dirty = True
                return
            self.update()

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
        self._hold += 1
        try:
            for key in ("f", "b", "i", "w"):
                val = float(getattr(base, key))
                c[key].max = max(10.0, math.ceil(val * 2))
                c[key].value = val
            c["comm"].value = float(base.comm)
        finally:
            self._hold -= 1
        unit = plural(base.unit)
        self._unit_note.value = f"<span style='font-size:13px;color:#555'>{html.escape(base.name)}; times in {unit}</span>"

    def _sync_enabled(self) -> None:
        """Disable controls that do not apply: ``v`` for single-chunk schedules, B vs I/W."""
        c = self.controls
        main = c["schedule"].value
        comp = c["compare"].value
        chunked = [n for n in (main, comp) if n != _NONE]
        c["v"].disabled = not any(REGISTRY[n].chunks == "many" for n in chunked)
        split = any(REGISTRY[n].split_backward for n in chunked)
        full = any(not REGISTRY[n].split_backward for n in chunked)
        c["b"].disabled = not full
        c["i"].disabled = not split
        c["w"].disabled = not split

    # ------------------------------------------------------------------ model
    def _v_for(self, name: str) -> int | None:
        return int(self.controls["v"].value) if REGISTRY[name].chunks == "many" else None

    def _costs(self, split: bool) -> Costs:
        """The preset, with every slider that differs from it applied (times in its unit)."""
        c, base = self.controls, self._base
        vals = {k: float(c[k].value) for k in ("f", "b", "i", "w", "comm")}
        changed: dict[str, Any] = {}
        if not _same(vals["f"], base.f):
            changed["f"] = _exact(vals["f"])
        if split:
            if not (_same(vals["i"], base.i) and _same(vals["w"], base.w)):
                changed.update(b=None, i=_exact(vals["i"]), w=_exact(vals["w"]))
        elif not _same(vals["b"], base.b):
            changed.update(b=_exact(vals["b"]), i=None, w=None)
        if not _same(vals["comm"], base.comm):
            changed["comm"] = _exact(vals["comm"])
        if not changed:
            return base
        costs = base.with_(**changed)
        return costs.with_(name=f"{base.name}, changed: {', '.join(sorted(changed))}")

    def _simulate(self, name: str) -> SimResult:
        c = self.controls
        sched = build_schedule(name, int(c["p"].value), int(c["m"].value), self._v_for(name))
        return simulate(sched, self._costs(sched.split_backward))

    # ----------------------------------------------------------------- update
    def update(self) -> None:
        """Re-simulate and redraw from the controls; errors go to the ``message`` readout."""
        t0 = time.perf_counter()
        c, r = self.controls, self.readouts
        main, comp = c["schedule"].value, c["compare"].value
        try:
            result = self._simulate(main)
        except (ValueError, TypeError) as exc:  # ScheduleError and DeadlockError are ValueErrors
            self.result = self.compare_result = None
            self.error = str(exc)
            for key in ("bubble_ratio", "bubble_overhead", "formula", "makespan", "peak", "compare", "costs"):
                r[key].value = ""
            r["message"].value = _error_html(self.error)
            self.image.layout.visibility = "hidden"
            self.last_redraw_ms = (time.perf_counter() - t0) * 1e3
            return
        self.error = None
        other: SimResult | None = None
        notes: list[str] = []
        if comp != _NONE:
            try:
                other = self._simulate(comp)
            except (ValueError, TypeError) as exc:
                self.error = f"compare schedule {comp!r}: {exc}"
        self.result, self.compare_result, self.costs = result, other, result.costs
        cap = float(c["cap"].value)
        # the picture first: the browser receives it before the numbers that describe it
        try:
            self._draw(result, other, cap if cap > 0 else None)
        except Exception as exc:  # a drawing bug must not leave a traceback in a classroom UI
            self.error = f"could not draw the picture ({type(exc).__name__}: {exc})"
        self._readouts(result, other)
        over = [(k, pk) for k, pk in enumerate(result.peak_activations) if cap > 0 and pk > cap + 1e-9]
        if over:
            worst = max(over, key=lambda x: x[1])
            notes.append(
                f"⚠ over the memory cap: {len(over)} of {result.p} ranks hold more than {format_number(cap, fractions=False)} microbatch "
                f"activations (rank {worst[0]} peaks at {format_number(worst[1], fractions=False)}). Fewer microbatches in flight "
                f"(1F1B instead of GPipe, smaller m, recomputation) bring the peak down."
            )
        if self.error:
            r["message"].value = _error_html(self.error) + "".join(
                f'<div class="bk-msg-warn">{html.escape(n)}</div>' for n in notes)
        elif notes:
            r["message"].value = "".join(f'<div class="bk-msg-warn">{html.escape(n)}</div>' for n in notes)
        else:
            r["message"].value = ""
        self.image.layout.visibility = "visible"
        self.last_redraw_ms = (time.perf_counter() - t0) * 1e3

    def _readouts(self, res: SimResult, other: SimResult | None) -> None:
        r, s = self.readouts, res.schedule
        unit = plural(res.unit)
        r["bubble_ratio"].value = _card(
            "bubble_ratio = idle / (p × makespan)", f"{res.bubble_ratio:.4f}",
            f"{res.bubble_ratio:.1%} of device-time idle (simulated)")
        r["bubble_overhead"].value = _card(
            "bubble_overhead = idle / busy", f"{res.bubble_overhead:.4f}",
            "Megatron's convention (simulated)")
        r["makespan"].value = _card("makespan (one step)", f"{format_number(res.makespan, fractions=False)} {unit}",
                                    f"utilization {res.utilization:.1%}")
        cf = REGISTRY[s.name].closed_form(s.p, s.m, s.v) if s.name in REGISTRY else None
        if cf is None:
            r["formula"].value = _card("closed form", "—", f"none for {display_name(s.name)}; simulated only")
        else:
            val, text = cf
            o = formula_overhead(s.p, s.m, s.v if s.v > 1 else 1)
            agree = math.isclose(float(val), res.bubble_ratio, rel_tol=1e-9, abs_tol=1e-12)
            why = "= simulated ✓" if agree else "≠ simulated: it assumes equal stages, no latency"
            r["formula"].value = _card(f"closed form bubble_ratio {text}", f"{float(val):.4f}",
                                       f"{why}; overhead (p−1)/(m·v) = {o:.4f}")
        peaks = res.peak_activations
        per_rank = " &nbsp; ".join(
            f"<span style='white-space:nowrap'>{_rank_chip(k, self._rank_styles.get(k))} rank {k}: "
            f"<b>{format_number(pk, 3, fractions=False)}</b></span>" for k, pk in enumerate(peaks))
        extra = ""
        nbytes = res.costs.extra.get("activation_bytes_per_microbatch")
        if nbytes:
            extra = f" (max {max(peaks) * nbytes / 2**30:.2f} GiB per rank, measured bytes)"
        r["peak"].value = (
            f"<div style='font-size:15px;line-height:1.7'><b>peak memory per rank</b> (microbatch activations, "
            f"curves below): {per_rank}{extra}</div>"
        )
        r["costs"].value = f"<div style='font-size:13px;color:#555'>costs: {html.escape(res.costs.describe())}</div>"
        if other is None:
            r["compare"].value = ""
        else:
            a, b = display_name(s.name), display_name(other.schedule.name)
            diff = (float(other.makespan) - float(res.makespan)) / float(res.makespan)
            rel = "the same time as" if abs(diff) < 1e-12 else (
                f"{abs(diff):.1%} {'longer' if diff > 0 else 'shorter'} than")
            r["compare"].value = (
                f"<div style='font-size:15px'><b>{html.escape(b)}</b> (lower panel): bubble_ratio "
                f"{other.bubble_ratio:.4f}, bubble_overhead {other.bubble_overhead:.4f}, makespan "
                f"{format_number(other.makespan, fractions=False)} {plural(other.unit)} ({rel} {html.escape(a)}), peak "
                f"{format_number(other.max_peak_activations, 3, fractions=False)} microbatch activations.</div>"
            )

    def _draw(self, res: SimResult, other: SimResult | None, cap: float | None) -> None:
        results = [res] if other is None else [res, other]
        mem_h = 2.1 if other is None else 1.6
        panels = [(x, "pipeline", _pipeline_height(x.p)) for x in results] + [(x, "memory", mem_h) for x in results]
        fig = self.figure
        heights = [h for _, _, h in panels]
        t_end = max(float(x.t1) for x in results)
        with _style():  # axes made inside the style get its spines and tick sizes
            if len(self._axes) == len(panels):  # same panels: keep the axes (and their ticks), swap the content
                for ax in self._axes:
                    _strip(ax)
                _place_axes(fig, self._axes, heights)
                axes = self._axes
            else:
                fig.clear()
                axes = self._axes = _stack_axes(fig, heights)
            for ax, (x, kind, _) in zip(axes, panels):
                if kind == "pipeline":
                    plotting.plot_pipeline(x, ax=ax, title=_panel_title(x))
                else:
                    plotting.plot_memory(x, ax=ax, cap=cap)
                    # Ranks are keyed, and their peaks given, by colour chips in the peak readout:
                    # the legend and the peak labels (which overlap for p > 4) cost ~30% of a redraw.
                    legend = ax.get_legend()
                    if legend is not None:
                        legend.remove()
                    for text in list(ax.texts):
                        text.remove()
                    if x is res:
                        self._rank_styles = _line_styles(ax)
                ax.set_xlim(0, t_end * 1.005)
            self.image.value = render_png(fig)


def pipeline_explorer(
    schedule: str = "1f1b",
    p: int = 4,
    m: int = 8,
    v: int = 2,
    preset: str = "b=2f",
    compare: str | None = None,
) -> PipelineExplorer:
    """A live explorer: schedule, ``p``, ``m``, ``v``, costs, latency and memory cap on sliders.

    Args:
        schedule: a registered schedule (``bk.names()``).
        p: ranks, 1..16. m: microbatches, 1..64. v: chunks per rank for ``interleaved`` and
            ``looped-bfs`` (1..8; ignored, and its slider disabled, for single-chunk schedules).
        preset: cost preset, one of :data:`COST_PRESETS`; the F/B/I/W sliders start at its
            values and override it when moved.
        compare: ``None`` or a second schedule drawn below on the same time axis.

    Display the result in a notebook cell; drive it from code with
    ``ex.controls["m"].value = 16`` and read ``ex.result`` / ``ex.readouts``.

    Used in lessons 01, 02, 03, 04, 05 and 07 and the classroom app.
    """
    return PipelineExplorer(schedule, p, m, v, preset, compare)


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


def _template_text(name: str, p: int, m: int) -> str:
    """The help comment plus the built-in schedule ``name`` for ``p`` ranks and ``m`` microbatches."""
    return _TEMPLATE_HELP + build_schedule(name, p, m).to_text() + "\n"


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
        figure, image, widget: as in :class:`PipelineExplorer`.
    """

    def __init__(self, p: int = 2, m: int = 4, text: str | None = None) -> None:
        for key, val, hi in (("p", p, 8), ("m", m, 16)):
            _check_size(key, val, hi, "builder")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"text must be a string of per-rank orders or None, got {type(text).__name__}")
        self.figure: Figure = _new_figure()
        self.schedule: Schedule | None = None
        self.result: SimResult | None = None
        self.score: BuilderScore | None = None
        self.error: str | None = None
        self._template: tuple[str, str] | None = None  # (name, text) of the template loaded last
        if text is None:
            text = _template_text("gpipe", p, m)
            self._template = ("gpipe", text)
        c: dict[str, widgets.Widget] = {}
        c["p"] = _slider("int", "p", "p (ranks)", p, 1, 8, 1,
                         tooltip="ranks of the templates; an unedited template follows p")
        c["m"] = _slider("int", "m", "m (microbatches)", m, 1, 16, 1,
                         tooltip="microbatches every rank must run; an unedited template follows m")
        c["preset"] = _dropdown("preset", "cost preset", COST_PRESETS, "b=2f")
        c["text"] = widgets.Textarea(
            value=text,
            continuous_update=False,
            layout=widgets.Layout(width="100%", height=f"{7 + 1.6 * max(2, p)}em"),
        )
        c["text"].add_class("bk-control-text")
        for key, label, style in (("check", "check", "primary"), ("load_1f1b", "load 1F1B", ""),
                                  ("load_gpipe", "load GPipe", "")):
            c[key] = widgets.Button(description=label, button_style=style)
            c[key].add_class(f"bk-control-{key}")
        self.controls = c
        self.readouts: dict[str, widgets.HTML] = {
            k: _readout(k) for k in ("message", "score", "bubble_ratio", "makespan", "peak")
        }
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="1200px"))
        self.image.add_class("bk-figure")
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
        title = widgets.HTML(_CSS + "<h2 style='margin:4px 0'>Schedule builder</h2>")
        left = widgets.VBox(
            [c["text"], widgets.HBox([c["check"], c["load_gpipe"], c["load_1f1b"]]), c["p"], c["m"], c["preset"]],
            layout=widgets.Layout(width="48%", min_width="420px"),
        )
        right = widgets.VBox([r["message"], widgets.HBox([r["bubble_ratio"], r["makespan"]]), r["peak"], r["score"]],
                             layout=widgets.Layout(width="50%"))
        box = widgets.VBox([title, widgets.HBox([left, right]), self.image])
        box.add_class("bk-explorer")
        box.add_class("bk-schedule-builder")
        return box

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

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
            kind = "deadlock" if "deadlock" in self.error else "illegal schedule"
            r["message"].value = f"<b style='color:#a00000'>✗ {kind}</b>" + _error_html(self.error)
            for key in ("score", "bubble_ratio", "makespan", "peak"):
                r[key].value = ""
            self.image.layout.visibility = "hidden"
            return
        self.error = None
        self.schedule, self.result = sched, res
        self.score = self._score(res)
        try:  # the picture first: the browser receives it before the numbers that describe it
            self._draw(res)
            self.image.layout.visibility = "visible"
        except Exception as exc:  # a drawing bug must not leave a traceback in a classroom UI
            self.error = f"could not draw the picture ({type(exc).__name__}: {exc})"
        unit = plural(res.unit)
        r["message"].value = (
            f"<div class='bk-msg-ok'>✓ legal schedule: p={sched.p}, m={sched.m}, v={sched.v}, "
            f"{sched.n_actions} actions</div>"
        )
        r["bubble_ratio"].value = _card("bubble_ratio = idle / (p × makespan)", f"{res.bubble_ratio:.4f}",
                                        f"bubble_overhead (idle / busy) {res.bubble_overhead:.4f}")
        r["makespan"].value = _card("makespan", f"{format_number(res.makespan, fractions=False)} {unit}")
        r["peak"].value = ("<div style='font-size:15px'><b>peak memory per rank</b> (microbatch activations): "
                           + " · ".join(f"r{k} {format_number(x, 3, fractions=False)}" for k, x in enumerate(res.peak_activations)) + "</div>")
        r["score"].value = self._score_html(self.score)
        if self.error:
            r["message"].value += _error_html(self.error)

    def _draw(self, res: SimResult) -> None:
        sched = res.schedule
        fig = self.figure
        fig.clear()
        with _style():
            (ax,) = _stack_axes(fig, [_pipeline_height(sched.p) + 0.3])
            plotting.plot_pipeline(res, ax=ax, title=f"your schedule (p={sched.p}, m={sched.m}; "
                                                     f"{res.costs.describe()})")
            self.image.value = render_png(fig)

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
            verdict = f"matches {display_name(same)} (the same orders, action for action)"
        elif matches is not None:
            verdict = f"matches {display_name(matches)} (same makespan and peak memory)"
        elif math.isclose(mine_t, best_t, rel_tol=1e-9):
            verdict = (f"as fast as the best ({bname}) but peaks at {format_number(mine_peak, 3, fractions=False)} microbatch activations "
                       f"instead of {format_number(table[best][2], 3, fractions=False)}")
        elif pct > 0:
            verdict = f"{pct:.1f}% slower than the best ({bname})"
        else:
            verdict = f"{-pct:.1f}% faster than every built-in compared (best: {bname})"
        return BuilderScore(
            makespan=mine_t, bubble_ratio=res.bubble_ratio, bubble_overhead=res.bubble_overhead, peak=mine_peak,
            unit=res.unit, references=table, best=best, slower_pct=pct, matches=same or matches, verdict=verdict,
        )

    @staticmethod
    def _score_html(score: BuilderScore) -> str:
        unit = plural(score.unit)
        rows = [("yours", score.makespan, score.bubble_ratio, score.peak)] + [
            (display_name(n), t, b, pk) for n, (t, b, pk) in score.references.items()
        ]
        body = "".join(
            f"<tr><td>{'<b>' + name + '</b>' if k == 0 else html.escape(name)}</td><td>{format_number(t, fractions=False)}</td>"
            f"<td>{b:.4f}</td><td>{format_number(pk, 3, fractions=False)}</td></tr>"
            for k, (name, t, b, pk) in enumerate(rows)
        )
        return (
            f"<div class='bk-score'><div style='font-size:18px;margin:4px 0'><b>Score:</b> {html.escape(score.verdict)}"
            f"</div><table><tr><th>schedule</th><th>makespan ({unit})</th><th>bubble_ratio</th>"
            f"<th>peak memory (microbatch act.)</th></tr>{body}</table></div>"
        )


def schedule_builder(p: int = 2, m: int = 4, text: str | None = None) -> ScheduleBuilder:
    """A text box for per-rank orders, the simulated diagram, legality messages and a score.

    Args:
        p: ranks for the templates ("load 1F1B", "load GPipe"), 1..8.
        m: microbatches the schedule must cover, 1..16.
        text: initial orders, one line per rank (``rank 0: 0F0 0F1 0B0 0B1``); default the
            GPipe template for ``p``, ``m``.

    Used in the classroom app (apps/explorer.ipynb).
    """
    return ScheduleBuilder(p, m, text)
