"""Reading a trace, step by step: the functions lesson 06 calls.

:func:`read_trace_steps` is the whole reader in order: check the options, find the files,
scan them (:mod:`.stream`, :mod:`.parse`, :mod:`.csvfile`), split the spans by rank
(:mod:`.ranks`), pick the actions of each step (:mod:`.steps`), align the clocks
(:mod:`.align`) and build one :class:`~.measured.MeasuredTimeline` (ms) per complete step.
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bubblekit._gc import gc_paused
from bubblekit._validate import check_number
from bubblekit.actions import Action
from bubblekit.i18n import register, tr

from .align import ALIGN_MODES, align_clocks
from .csvfile import check_time_unit
from .gpu import retime_on_gpu
from .measured import MeasuredTimeline
from .parse import resolve_pattern
from .ranks import RankData, resolve_files, scan_files, split_ranks
from .records import PathLike, Pattern, TraceError, shown
from .steps import (
    Occ,
    assign_steps,
    by_step,
    check_numbering,
    check_step_times,
    choose_family,
    complete_steps,
    place_stages,
    prepare_spans,
)

__all__ = ["read_trace", "read_trace_steps", "read_csv"]


register({
    # the name a measured step goes by in reports and plots (lesson 06)
    "traces.source": {"en": "measured: {name} step {k}", "zh": "实测 {name} 第 {k} 步"},
})

_gc_paused = gc_paused  # the collector paused while a trace is read (its millions of small tuples)


def _check_options(align: Any, trim: Any, time_unit: Any, tolerance_ms: Any) -> float:
    """Refuse bad options before any file is read; returns ``tolerance_ms`` as a number."""
    if align not in ALIGN_MODES:
        raise ValueError(f"align must be 'auto', 'none' or 'causal', got {align!r}")
    if trim not in (None, True, False):
        raise TypeError(f"trim must be None (automatic), True or False, got {trim!r}")
    check_time_unit(time_unit)
    return float(check_number("tolerance_ms", tolerance_ms, minimum=0.0))


def _check_step(step: Any) -> int:
    """``step`` as an int (numpy ints too); bools, floats and text are refused."""
    if isinstance(step, bool) or not isinstance(step, numbers.Integral):
        raise TypeError(f"step must be an int (a whole number: 0 is the first complete step, -1 the last), got {step!r} "
                        f"of type {type(step).__name__}")
    return int(step)


def _per_rank_steps(data: list[RankData], family: str) -> tuple[list[list[Occ]], list[str]]:
    """Every rank's occurrences with their steps (ProfilerStep ranges when every rank has them)."""
    use_markers = family != "csv" and all(d.scan.steps for d in data)
    per_rank: list[list[Occ]] = []
    notes: list[str] = []
    for d in data:
        occs, more = assign_steps(d, family, use_markers)
        if not occs:
            raise TraceError(f"{d.file}: rank {d.rank} has no '{family}' events inside any profiler step")
        per_rank.append(occs)
        notes.extend(more)
    return per_rank, notes


CLOCKS = ("auto", "gpu", "cpu")


def _check_clock(clock: Any) -> str:
    if not isinstance(clock, str) or clock not in CLOCKS:
        raise ValueError(f"clock must be 'auto' (the GPU's when the trace holds GPU kernels), 'gpu' or 'cpu', got {clock!r}")
    return clock


def _on_gpu(data: list[RankData], per_rank: list[list[Occ]], family: str) -> tuple[list[list[Occ]], str, list[str]]:
    """Time every occurrence by the GPU kernels it launched when the trace holds GPU activity.

    Steps were assigned on the CPU's clock (``ProfilerStep`` ranges are CPU ranges); the times
    then move to the GPU's. A trace where some ranks have GPU activity and others do not is refused.
    """
    with_gpu = [d for d in data if d.scan.gpu is not None]
    if not with_gpu:
        return per_rank, "cpu", []
    if len(with_gpu) < len(data):
        cpu_only = [f"rank {d.rank} ({d.file})" for d in data if d.scan.gpu is None]
        raise TraceError(f"some ranks hold GPU kernels and others do not ({shown(cpu_only)} have none): a step "
                         f"cannot be measured half on the GPU's clock and half on the CPU's")
    out: list[list[Occ]] = []
    notes: list[str] = []
    for d, occs in zip(data, per_rank):
        spans = [s for s in d.spans if s.family == family]
        timed, more = retime_on_gpu(spans, d.scan.gpu, d.file)
        notes.extend(n for n in more if n not in notes)
        by_where = {s.where: (g.start, g.end) for s, g in zip(spans, timed)}
        out.append(sorted((o._replace(start=by_where[o.where][0], end=by_where[o.where][1]) for o in occs),
                          key=lambda o: (o.start, o.end)))
    return out, "gpu", notes


def _common_name(files: Sequence[Path]) -> str:
    """``1f1b-p2-m4`` for ``1f1b-p2-m4-rank0.json.gz`` and ``...-rank1...``; a folder's name otherwise."""
    if len(files) == 1:
        return files[0].name
    prefix = os.path.commonprefix([f.name for f in files])
    prefix = re.sub(r"[-_.]*(rank|r)?[-_.]*$", "", prefix, flags=re.IGNORECASE)
    return prefix or files[0].parent.name


def _build_timelines(data: list[RankData], steps: list[list[list[Occ]]], offsets: list[float],
                     *, scale: float, family: str, wait_inclusive: bool, notes: list[str],
                     name: str, clock: str = "cpu") -> list[MeasuredTimeline]:
    """One timeline per complete step: shift each rank's clock, put 0 at the step's first action, convert to ms.

    ``steps[k][r]`` are rank r's occurrences in the k-th complete step, in time order.
    """
    out: list[MeasuredTimeline] = []
    for k, rows in enumerate(steps):
        origin = min(row[0].start + offsets[r] for r, row in enumerate(rows) if row)
        starts = [[(o.start + offsets[r] - origin) / scale for o in row] for r, row in enumerate(rows)]
        ends = [[(o.end + offsets[r] - origin) / scale for o in row] for r, row in enumerate(rows)]
        labels: list[list[Action | str]] = [[o.action for o in row] for row in rows]
        out.append(MeasuredTimeline(
            starts, ends, labels, files=[d.file for d in data], family=family, step=k, n_steps=len(steps),
            offsets_ms=[o / scale for o in offsets], includes_wait=wait_inclusive, notes=notes,
            origin=origin / scale, source=tr("traces.source", name=name, k=k), clock=clock,
        ))
    return out


def read_trace_steps(
    source: PathLike | Sequence[PathLike],
    *,
    pattern: Pattern | None = "auto",
    align: str = "auto",
    trim: bool | None = None,
    time_unit: str = "ms",
    tolerance_ms: float = 0.005,
    clock: str = "auto",
) -> list[MeasuredTimeline]:
    """Read every complete step of a trace (timelines in ms); see :func:`read_trace` for the arguments.

    Used in lesson 06 (the bubble of every measured step of a recorded run).
    """
    tol_ms = _check_options(align, trim, time_unit, tolerance_ms)
    clock = _check_clock(clock)
    forced, user = resolve_pattern(pattern)
    files = resolve_files(source)
    with _gc_paused():
        return _read_steps(files, forced, user, trim=trim, time_unit=time_unit, align=align, tol_ms=tol_ms,
                           clock=clock)


def _read_steps(files: list[Path], forced: str | None, user: Pattern | None, *, trim: bool | None, time_unit: str,
                align: str, tol_ms: float, clock: str) -> list[MeasuredTimeline]:
    """:func:`read_trace_steps` once its arguments are checked."""
    scans = scan_files(files, user, keep_ops=trim is not False, time_unit=time_unit)
    notes = [n for _, scan in scans for n in scan.notes]
    if clock == "cpu":
        for _, scan in scans:
            scan.gpu = None  # read the CPU-side ranges, as a CPU run's trace is read
    elif clock == "gpu" and not all(scan.gpu is not None for _, scan in scans):
        raise TraceError(f"clock='gpu' but {shown([str(f) for f, sc in scans if sc.gpu is None])} hold no GPU "
                         f"kernels (categories kernel, gpu_memcpy, gpu_memset)")
    data = split_ranks(scans)
    family = choose_family(data, forced, user)
    if any(d.scan.gpu is not None for d in data):
        wait_inclusive = False  # timed by their compute kernels: no receive wait is left to trim
    else:
        data, wait_inclusive, more = prepare_spans(data, family, trim)
        notes.extend(more)
    per_rank, more = _per_rank_steps(data, family)
    notes.extend(more)
    per_rank, clock, more = _on_gpu(data, per_rank, family)
    notes.extend(more)
    check_numbering(data, per_rank)
    placement = place_stages(data, per_rank)
    occ = {d.rank: {(o.step, o.action): o for o in occs} for d, occs in zip(data, per_rank)}
    scale = data[0].scan.units_per_ms
    files_of = [d.file for d in data]
    offsets, more = align_clocks(occ, placement, files_of, align, wait_inclusive, tol_ms * scale, scale)
    notes.extend(more)
    complete, more = complete_steps(data, per_rank)
    notes.extend(more)
    steps = by_step(per_rank, complete)
    notes.extend(check_step_times(data, steps, offsets, wait_inclusive, tol_ms * scale, scale))
    return _build_timelines(data, steps, offsets, scale=scale, family=family,
                            wait_inclusive=wait_inclusive, notes=notes, name=_common_name(files), clock=clock)


def read_trace(
    source: PathLike | Sequence[PathLike],
    *,
    step: int = -1,
    pattern: Pattern | None = "auto",
    align: str = "auto",
    trim: bool | None = None,
    time_unit: str = "ms",
    tolerance_ms: float = 0.005,
    clock: str = "auto",
) -> MeasuredTimeline:
    """Read a pipeline trace into a :class:`MeasuredTimeline` (ms; every metric and plot works on it).

    Used in lesson 06 (the recorded 1F1B run, its bubble and its gaps).

    Args:
        source: a trace file (Chrome / Kineto JSON, ``.json.gz``, or CSV), a folder of them
            (one per rank), or a list of files. Each file is read once, front to back, so a
            named pipe works too (``read_trace("/dev/stdin")``, ``<(zcat trace.json.gz)``). A file's rank comes from its
            ``distributedInfo`` (Kineto), thread or process names ``rank N``, or ``rank<N>``
            in its name; a folder of unnamed files is taken in name order.
        step: which complete training step (``-1``: the last one; numpy ints too); steps are found from
            ``ProfilerStep#N`` ranges, a CSV ``step`` column, or repeated actions.
        pattern: ``"auto"`` (the families in :mod:`bubblekit.analysis.traces.parse`), a family
            name, a regular expression with named groups ``kind`` and ``mb`` (and optionally
            ``stage``; without it the stage is the rank), or a callable ``name -> Action | None``.
        align: ``"auto"`` (shift clocks only when they violate a dependency), ``"none"``
            (never; a note reports violations) or ``"causal"`` (always the midpoint shift).
        trim: cut ranges that include the receive wait down to their operator events
            (default: yes for ``pp`` and ``gpipe``).
        time_unit: the unit of CSV times (``ms``, ``us``, ``ns`` or ``s``); JSON is always us.
        tolerance_ms: clock differences below this many ms are profiler jitter, not clock
            offsets (a finite number >= 0).
        clock: ``"auto"`` (time actions by their GPU kernels when the trace holds some, else by
            their CPU ranges), ``"gpu"`` (refuse a trace without GPU kernels) or ``"cpu"`` (the
            CPU ranges even on a GPU trace: what a reader that ignores the GPU would measure).

    Returns:
        The step as a :class:`MeasuredTimeline` (ms, 0 at the step's first action); its
        ``notes`` say what the reader trimmed, shifted, skipped or ignored on the way. On a
        trace that holds GPU kernels (a PyTorch-profiler trace of a GPU run) every action is
        timed by the compute kernels it launched, not by its CPU range (which ends at launch),
        and ``clock`` is ``"gpu"``: the bubble is the GPU's (see :mod:`.gpu`).

    Raises:
        TraceError: not JSON, truncated, empty, nested too deeply, no pipeline events, an
            action without a usable time, missing or duplicate ranks (two threads or
            processes named after one rank), a ``distributedInfo`` rank or world size that is
            not one, absurd stage, microbatch or rank numbers, no complete step, a step whose
            actions all last 0, an action that starts before an input from its own rank ends,
            clocks that cannot be reconciled: the message names the file and problem (and the
            event or line where it can). Actions that last 0 and actions of one rank that
            overlap are listed in the result's ``notes``.
        TypeError, ValueError: a bad argument, named with its value.
    """
    step = _check_step(step)
    steps = read_trace_steps(source, pattern=pattern, align=align, trim=trim, time_unit=time_unit,
                             tolerance_ms=tolerance_ms, clock=clock)
    if not -len(steps) <= step < len(steps):
        raise ValueError(f"step={step} is out of range: the trace has {len(steps)} complete step(s)")
    return steps[step]


def read_csv(path: PathLike, *, step: int = -1, time_unit: str = "ms") -> MeasuredTimeline:
    """Read the documented CSV (``rank,stage,kind,microbatch,start,end[,step]``) into a timeline (ms).

    ``time_unit`` is the unit of the file's times; see :func:`read_trace` for the rest and
    :mod:`bubblekit.analysis.traces.csvfile` for the format. Used in lesson 06 (the exercise's
    profiled step).
    """
    return read_trace(path, step=step, time_unit=time_unit)
