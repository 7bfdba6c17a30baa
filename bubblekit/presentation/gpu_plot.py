"""The measured GPU timeline of a trace: per rank, compute, communication, memory and idle.

``bubblekit trace --plot`` draws it for a GPU trace without pipeline actions (a pipeline trace is
drawn with :func:`~bubblekit.presentation.plotting.plot_pipeline` on the GPU's clock). Same style
as the course's pipeline pictures: one row per rank, rank 0 on top, time to the right, idle left
blank over a hatched background.
"""

from __future__ import annotations

from typing import Any

from bubblekit.i18n import register, tr

__all__ = ["plot_gpu_activity"]

register({
    "gpu_plot.title": {"en": "Measured GPU timeline", "zh": "实测 GPU 时间线"},
    "gpu_plot.time": {"en": "time (ms)", "zh": "时间（ms）"},
    "gpu_plot.compute": {"en": "compute kernels", "zh": "计算 kernel"},
    "gpu_plot.communication": {"en": "communication (NCCL)", "zh": "通信（NCCL）"},
    "gpu_plot.memory": {"en": "memory copies", "zh": "内存拷贝"},
    "gpu_plot.idle": {"en": "idle", "zh": "空闲"},
})

_COLOURS = {"compute": "#0072B2", "communication": "#E69F00", "memory": "#009E73"}


def plot_gpu_activity(activity: dict[int, dict[str, list[tuple[float, float]]]], *, title: str | None = None,
                      ax: Any = None) -> Any:
    """Draw :func:`~bubblekit.analysis.traces.gpu_activity`'s intervals (us) per rank; returns the figure.

    Compute is drawn over communication and memory (a GPU computing while a copy runs is computing).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    if not isinstance(activity, dict) or not activity:
        raise ValueError("activity must be gpu_activity(path)'s result: a dict rank -> intervals, not empty")
    ranks = sorted(activity)
    everything = [iv for parts in activity.values() for ivs in parts.values() for iv in ivs]
    if not everything:
        raise ValueError("activity holds no GPU interval to draw")
    t0 = min(s for s, _ in everything)
    t1 = max(e for _, e in everything)
    if ax is None:
        fig, ax = plt.subplots(figsize=(11, 0.6 + 0.55 * len(ranks)))
    else:
        fig = ax.figure
    for row, rank in enumerate(ranks):
        y = len(ranks) - 1 - row
        ax.broken_barh([((t0) / 1000.0 - t0 / 1000.0, (t1 - t0) / 1000.0)], (y - 0.4, 0.8), facecolor="none",
                       edgecolor="#bbbbbb", hatch="///", linewidth=0)
        for kind in ("memory", "communication", "compute"):
            bars = [((s - t0) / 1000.0, (e - s) / 1000.0) for s, e in activity[rank][kind]]
            if bars:
                ax.broken_barh(bars, (y - 0.4, 0.8), facecolor=_COLOURS[kind], edgecolor="none")
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([f"rank {r}" for r in reversed(ranks)])
    ax.set_xlim(0, (t1 - t0) / 1000.0)
    ax.set_xlabel(tr("gpu_plot.time"))
    ax.set_title(title if title is not None else tr("gpu_plot.title"))
    handles = [Patch(facecolor=_COLOURS[k], label=tr(f"gpu_plot.{k}")) for k in ("compute", "communication", "memory")]
    handles.append(Patch(facecolor="none", edgecolor="#bbbbbb", hatch="///", label=tr("gpu_plot.idle")))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig
