"""Read profiler traces of pipeline runs into bubblekit timelines (no torch needed).

The engineering practice this package automates: *profile every rank, find the idle gaps, add
them up, divide by ranks x time* (lesson 06). Supported inputs:

* **Chrome / Kineto trace JSON** as written by ``torch.profiler`` (``export_chrome_trace``,
  ``.json`` or ``.json.gz``): one file per rank, a folder of them, or one file holding
  several ranks (threads or processes named ``rank N``, as :meth:`Timeline.to_chrome_trace`
  writes). Times in the file are microseconds.
* **CSV** with the header ``rank,stage,kind,microbatch,start,end`` (and optionally ``step``):
  one row per action, times in ``time_unit`` (ms by default). :func:`write_csv` writes it.

The steps, one module each, in the order :func:`read_trace_steps` runs them:

1. :mod:`.stream`, streaming JSON: one event at a time, never the whole file in memory;
2. :mod:`.parse` (JSON events), :mod:`.csvfile` (CSV rows) and :mod:`.ranks` (files and
   ranks): events become candidate actions, each with its rank; the event name families
   (``compute:1F3``, ``PP:1F3``, ``Forward 3``, ``1F3``) are listed in :mod:`.parse`;
3. :mod:`.steps`: the actions of each training step, ranges trimmed to their operators,
   numbering and completeness checked;
4. :mod:`.align`: per-rank clock offsets from the pipeline's dependencies
   (:func:`bubblekit.actions.inputs`);
5. :mod:`.gaps`: the idle gaps and what each rank waited for (:func:`bubble_report`).

**GPU traces** (PyTorch-profiler traces of GPU runs, :mod:`.gpu`): when a file holds GPU kernels,
each action is timed by the compute kernels it launched, not by its CPU range (which ends at
launch), and the result's ``clock`` is ``"gpu"``; :func:`gpu_breakdown` gives Holistic Trace
Analysis's per-rank temporal breakdown of any Kineto GPU trace, :func:`idle_split` what the GPU
did in the pipeline's bubble, and :func:`write_kineto_gpu` writes a simulated step as such a
trace. ``bubblekit trace PATH`` prints all of it.

The result, :class:`MeasuredTimeline`, is in **ms** with 0 at the step's earliest action.
The reader never returns a silently wrong bubble: a trace it cannot measure raises
:class:`TraceError` naming the file, the problem and (where it can) the event or line; what
it repairs or ignores (copies of events, operators without a usable time, skipped steps,
shifted clocks) is listed in the result's ``notes``.
"""

from __future__ import annotations

from .csvfile import write_csv
from .gaps import GapReport, bubble_report, explain_gaps
from .gpu import gpu_activity, gpu_breakdown, idle_split, kernel_kind
from .kineto_gpu import write_kineto_gpu
from .measured import MeasuredTimeline
from .parse import FAMILIES
from .read import read_csv, read_trace, read_trace_steps
from .records import TraceError
from .samples import HTA_SAMPLE_DIR, SAMPLE_DIR, sample_info, sample_names, sample_record, sample_trace
from .stream import iter_trace_events

__all__ = [
    "TraceError",
    "MeasuredTimeline",
    "read_trace",
    "read_trace_steps",
    "read_csv",
    "write_csv",
    "iter_trace_events",
    "GapReport",
    "explain_gaps",
    "bubble_report",
    "FAMILIES",
    "gpu_breakdown",
    "gpu_activity",
    "idle_split",
    "kernel_kind",
    "write_kineto_gpu",
    "SAMPLE_DIR",
    "HTA_SAMPLE_DIR",
    "sample_names",
    "sample_trace",
    "sample_record",
    "sample_info",
]
