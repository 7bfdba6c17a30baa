"""bubblekit: schedules, an exact event simulator, formulas and pictures for pipeline bubbles.

The package has four layers; each imports only the layers above it::

    core            actions (the dependency and memory rules), schedules/ (generators and
                    the registry), costs, simulator (the readable engine; _fast_engine is
                    the tuned one), timeline, formulas, symbolic, text, memory (bytes per
                    rank) (pure Python: no matplotlib, widgets or torch)
    analysis/       traces, calibrate, planner, search, balance
    presentation/   plotting, explorers, classroom (matplotlib, ipywidgets, Voila: the
                    "plots" extra; the rest of bubblekit needs only sympy); diagram and svg
                    (the pipeline diagram as SVG) are pure Python
    course/         checks, published, demo, envcheck (what the lessons need)
    lab/            real pipeline runs with torch.distributed.pipelining (optional extra)

The core is this namespace::

    import bubblekit as bk
    s = bk.schedule("1f1b", p=4, m=8)
    r = bk.simulate(s, bk.Costs(f=1, b=2))
    r.makespan, r.bubble_ratio, r.bubble_overhead, r.peak_activations
    bk.needs(bk.Action(1, "B", 0), 4)       # the dependency rule: what 1B0 waits for

The other modules load on first use under short names, so ``import bubblekit`` stays
light: ``bk.plotting``, ``bk.explorers``, ``bk.traces``, ``bk.planner``, ``bk.memory``, ``bk.checks``, ...
(``from bubblekit import plotting`` works too), and ``bk.check("03.2", answer)`` checks an
exercise. ``bk.plot_pipeline(r)`` draws a pipeline diagram: matplotlib's where it is installed,
else an SVG picture in pure Python (``bk.svg.pipeline_svg``, for the browser edition); there
``bk.plotting`` is :mod:`bubblekit.presentation.svg_plotting` (the diagram and its animation as SVG). ``bk.set_language("zh")`` switches learner-facing text (checks, labels, figures) to
Chinese (see :mod:`bubblekit.i18n`).
"""

from __future__ import annotations

from typing import Any

from bubblekit.actions import KINDS, Action, Event, Pair, inputs, memory_delta, needs, parse_action, produces
from bubblekit.compare import compare
from bubblekit.costs import PRESETS, Costs, h200_costs, preset
from bubblekit.formulas import (
    bubble_overhead,
    bubble_ratio,
    bubble_ratio_exact,
    min_micro_batch,
    overhead_from_ratio,
    ratio_from_overhead,
    utilization,
)
from bubblekit.i18n import get_language, local_text, set_language
from bubblekit.i18n import register as _register_messages
from bubblekit.schedules import (
    MAX_ACTIONS,
    REGISTRY,
    Schedule,
    ScheduleError,
    ScheduleSpec,
    display_name,
    legal_ms,
    names,
    register,
    schedule,
    spec,
)
from bubblekit.simulator import DeadlockError, SimResult, simulate, simulate_readable
from bubblekit.text import Table
from bubblekit.timeline import Gap, Span, Timeline

__version__ = "0.1.0"

__all__ = [
    "Action", "Pair", "KINDS", "parse_action", "Event", "needs", "produces", "inputs", "memory_delta",
    "Costs", "PRESETS", "preset", "h200_costs",
    "bubble_ratio", "bubble_ratio_exact", "utilization", "bubble_overhead", "min_micro_batch",
    "overhead_from_ratio", "ratio_from_overhead",
    "Schedule", "ScheduleError", "ScheduleSpec", "schedule", "names", "register", "REGISTRY",
    "spec", "display_name", "legal_ms", "MAX_ACTIONS",
    "simulate", "simulate_readable", "SimResult", "DeadlockError",
    "Timeline", "Span", "Gap",
    "Table", "compare",
    "set_language", "get_language", "local_text",
    "__version__",
]


#: Short names for the modules outside the core, loaded on first use (see the docstring).
_LAZY_MODULES = {
    "symbolic": "bubblekit.symbolic",
    "memory": "bubblekit.memory",
    "layout": "bubblekit.layout",
    "traces": "bubblekit.analysis.traces",
    "calibrate": "bubblekit.analysis.calibrate",
    "planner": "bubblekit.analysis.planner",
    "search": "bubblekit.analysis.search",
    "balance": "bubblekit.analysis.balance",
    "plotting": "bubblekit.presentation.plotting",
    "svg": "bubblekit.presentation.svg",
    "explorers": "bubblekit.presentation.explorers",
    "classroom": "bubblekit.presentation.classroom",
    "checks": "bubblekit.course.checks",
    "published": "bubblekit.course.published",
    "demo": "bubblekit.course.demo",
    "envcheck": "bubblekit.course.envcheck",
    "fonts": "bubblekit.presentation.fonts",
    "factory": "bubblekit.course.factory",
    "paths": "bubblekit.course.paths",
    "workspace": "bubblekit.course.workspace",
    "lab": "bubblekit.lab",
}


class _ShortNameFinder:
    """Makes ``import bubblekit.traces`` (and every other short name of :data:`_LAZY_MODULES`) work.

    The short name is the same module object as its long name (``bubblekit.traces is
    bubblekit.analysis.traces``), so ``from bubblekit.traces import read_trace`` and
    ``bk.traces.read_trace`` are one function. Short names that are real modules of the
    top level (``bubblekit.symbolic``, ``bubblekit.memory``) are found as usual.
    """

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> Any:
        prefix, _, short = fullname.partition(".")
        if prefix != "bubblekit" or short not in _LAZY_MODULES or _LAZY_MODULES[short] == fullname:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _ShortNameLoader(_LAZY_MODULES[short]))  # type: ignore[arg-type]


class _ShortNameLoader:
    """Loads a short name by importing its long name and handing back that very module."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> Any:
        module = _import_layer(self.target)
        self._spec = module.__spec__  # the import system would stamp the short name's spec on it
        return module

    def exec_module(self, module: Any) -> None:
        """Nothing to run (the long name's import ran the module): put its own spec back."""
        module.__spec__ = self._spec


_register_messages({
    "core.needs_plots_extra": {
        "en": ("bk.{module} needs {package} (for pictures and widgets), which is not installed here: "
               "pip install \"bubblekit[plots]\" (bash course.sh setup installs it). "
               "Schedules, the simulator, formulas and checks work without it."),
        "zh": ("bk.{module} 要用到 {package}（画图和交互控件都靠它），但当前环境没有安装：请运行 pip install \"bubblekit[plots]\""
               "（课程的安装脚本会一并装好）。调度、模拟器、公式和自测不依赖它。"),
    },
})

#: Packages of the "plots" extra (``pip install "bubblekit[plots]"``; the course's set-up installs it).
#: The core, the analysis layer and the checks import none of them.
_PLOTS_EXTRA = ("matplotlib", "numpy", "ipywidgets")

#: Modules with a pure-Python stand-in where matplotlib or numpy cannot be imported (the browser
#: edition on Pyodide): ``bk.plotting`` is then :mod:`bubblekit.presentation.svg_plotting` (SVG pictures).
_STAND_INS = {"bubblekit.presentation.plotting": "bubblekit.presentation.svg_plotting"}


def _import_layer(target: str) -> Any:
    """Import ``target`` (or its stand-in of :data:`_STAND_INS` without matplotlib); a module of the
    plots layer without its packages says how to get them."""
    import importlib

    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing not in _PLOTS_EXTRA:
            raise
        if target in _STAND_INS and missing in ("matplotlib", "numpy"):
            return importlib.import_module(_STAND_INS[target])
        from bubblekit.i18n import tr

        short = target.rsplit(".", 1)[-1]
        raise ModuleNotFoundError(tr("core.needs_plots_extra", module=short, package=missing),
                                  name=error.name) from error


def _install_short_names() -> None:
    import sys

    if not any(isinstance(f, type) and f.__name__ == "_ShortNameFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, _ShortNameFinder)  # type: ignore[arg-type]


_install_short_names()


def _without_matplotlib_in_ipython() -> None:
    """In an IPython kernel where matplotlib or numpy cannot be found (the browser edition), make
    ``%matplotlib inline`` a quiet no-op: the lessons' first cell runs it right after ``import bubblekit``."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    if shell is None or not hasattr(shell, "register_magic_function"):
        return
    import importlib.util

    try:
        if all(importlib.util.find_spec(name) is not None for name in ("matplotlib", "numpy")):
            return
    except (ImportError, ValueError):  # a module without a spec: leave IPython's magic alone
        return
    from bubblekit.presentation.svg_plotting import install_matplotlib_magic

    install_matplotlib_magic(shell)


def __getattr__(name: str) -> Any:
    """Load ``bk.plotting``, ``bk.traces``, ... on first use; ``bk.check`` is the exercise check."""
    if name in _LAZY_MODULES:
        module = _import_layer(_LAZY_MODULES[name])
        globals()[name] = module
        return module
    if name == "check":
        from bubblekit.course.checks import check

        globals()["check"] = check
        return check
    if name == "plot_pipeline":
        function = _plot_pipeline_function()
        globals()["plot_pipeline"] = function
        return function
    raise AttributeError(f"module 'bubblekit' has no attribute {name!r}")


def _plot_pipeline_function() -> Any:
    """``bk.plot_pipeline``: matplotlib's :func:`~bubblekit.presentation.plotting.plot_pipeline` where
    matplotlib and numpy import, else (the browser edition on Pyodide) the SVG picture of
    :func:`~bubblekit.presentation.svg.pipeline_svg`, with the options an SVG cannot draw left out."""
    try:
        plotting = _import_layer(_LAZY_MODULES["plotting"])
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("matplotlib", "numpy"):
            raise
        from bubblekit.presentation.svg import plot_pipeline_svg

        return plot_pipeline_svg
    return plotting.plot_pipeline


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_MODULES) | {"check", "plot_pipeline"})


_without_matplotlib_in_ipython()
