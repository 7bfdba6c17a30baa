"""GPU traces, kernel by kernel: what the GPU did, not when the CPU asked for it.

On a GPU, a CPU-side range such as PyTorch's ``PP:1F3`` ends when its kernels are *launched*,
long before they run: the CPU runs ahead of the GPU. A PyTorch-profiler (Kineto) trace of a GPU
run holds both sides:

* **GPU activity**: events of category ``kernel``, ``gpu_memcpy`` and ``gpu_memset`` on the
  device's tracks (``args.device``, ``args.stream``), each with ``args.correlation``;
* **CPU launches**: ``cuda_runtime`` / ``cuda_driver`` events (``cudaLaunchKernel``,
  ``cudaMemcpyAsync``, ...) carrying the same ``args.correlation``, and the ``ac2g`` flow events
  (``ph`` ``s`` / ``f``) that join them;
* ``gpu_user_annotation`` ranges on the GPU tracks that recent PyTorch writes for
  ``record_function`` ranges (the GPU-side span of ``PP:1F3``).

This module reads that side (one pass over each file, as the rest of the reader does) and gives:

* :func:`retime_on_gpu`: each pipeline action timed by the compute kernels it launched (the
  launches inside its CPU range, from any thread of its process: PyTorch launches backward
  kernels from the autograd thread), so :func:`~bubblekit.analysis.traces.read_trace` measures
  the GPU's bubble on a GPU trace (the result's ``clock`` says ``"gpu"``);
* :func:`gpu_breakdown`: per rank, Holistic Trace Analysis's temporal breakdown with HTA's own
  definitions (``hta/analyzers/breakdown_analysis.py``, ``get_temporal_breakdown``):
  ``span_us`` from the first GPU event's start to the last one's end, ``idle_us`` = span minus
  the union of all GPU events, ``compute_us`` = the union of compute kernels, ``non_compute_us``
  = the rest (communication kernels, memory copies and sets); and the source article's
  *kernel time share* (``kernel_share``: the share of the span some GPU event runs);
* :func:`gpu_activity`: per rank, the merged intervals of compute, communication and memory
  events (the measured picture ``bubblekit trace --plot`` draws).

**Kinds of GPU event** follow HTA's name patterns (``hta/common/types.py``):
communication = names starting ``nccl`` / ``hccl`` / ``hip`` or containing ``ncclKernel``;
memory = names starting ``Memcpy`` / ``Memset`` / ``dma`` (and the ``gpu_memcpy`` /
``gpu_memset`` categories); everything else that is not a synchronisation is compute. An NCCL
kernel spins while a receive waits for its neighbour: a GPU inside one is *not* computing, so
the pipeline bubble counts it as idle.

Times are microseconds, as the file has them.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bubblekit.i18n import register, tr
from bubblekit.text import Table

from .records import PathLike, TraceError

__all__ = [
    "GPU_CATEGORIES", "COMPUTE", "COMMUNICATION", "MEMORY", "kernel_kind", "GpuEvents",
    "retime_on_gpu", "gpu_breakdown", "gpu_activity", "idle_split", "merge_intervals", "union_length",
]

#: Kineto categories of GPU activity (HTA: ``KERNEL_CATEGORY_PATTERN``).
GPU_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
#: Kineto categories of CPU-side launches (they carry ``args.correlation``).
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "hip_runtime"})
#: The category of the GPU-side spans of ``record_function`` ranges.
GPU_ANNOTATION = "gpu_user_annotation"

register({
    "traces.gpu.title": {"en": "GPU time per rank (HTA's temporal breakdown, us)",
                         "zh": "各 rank 的 GPU 时间（HTA 的时间分解，μs）"},
    "traces.gpu.note": {"en": "idle: no GPU event runs; compute: compute kernels; non-compute: communication and "
                              "memory; kernel_share: (span - idle) / span",
                        "zh": "空闲：GPU 上没有任何事件；计算：计算 kernel；非计算：通信与内存拷贝；"
                              "kernel 占比 =（时间跨度 − 空闲）/ 时间跨度；各列即 HTA 的 kernel_time、idle_time、compute_time、non_compute_time"},
    # the tables' column headers (the row keys stay HTA's names: span_us, idle_us, ...)
    "traces.gpu.col.span_us": {"en": "span_us", "zh": "时间跨度（μs）"},
    "traces.gpu.col.idle_us": {"en": "idle_us", "zh": "空闲（μs）"},
    "traces.gpu.col.compute_us": {"en": "compute_us", "zh": "计算（μs）"},
    "traces.gpu.col.non_compute_us": {"en": "non_compute_us", "zh": "非计算（μs）"},
    "traces.gpu.col.kernel_share": {"en": "kernel_share", "zh": "kernel 占比"},
    "traces.gpu.col.idle_ms": {"en": "idle_ms", "zh": "气泡（ms）"},
    "traces.gpu.col.communication_ms": {"en": "communication_ms", "zh": "通信（ms）"},
    "traces.gpu.col.memory_ms": {"en": "memory_ms", "zh": "内存拷贝（ms）"},
    "traces.gpu.col.nothing_ms": {"en": "nothing_ms", "zh": "完全空闲（ms）"},
    "traces.gpu.idle_title": {"en": "What the GPU did in the pipeline's bubble (ms per rank)",
                              "zh": "流水线气泡里 GPU 在做什么（每个 rank，ms）"},
    "traces.gpu.idle_note": {"en": "communication: an NCCL kernel spins (waiting for the neighbour); memory: only "
                                   "copies run; nothing: the GPU is empty (the rank's drain, or the CPU launching late)",
                             "zh": "通信：NCCL kernel 在空转（等邻居）；内存拷贝：只有拷贝在跑；"
                                   "完全空闲：GPU 上什么都没有（排空阶段，或 CPU 启动 kernel 晚了）"},
})

COMPUTE, COMMUNICATION, MEMORY = 0, 1, 2
KIND_NAMES = ("compute", "communication", "memory")

_COMM = re.compile(r"(^nccl)|(^hccl)|(^hip)|(.*ncclKernel)")
_MEMORY = re.compile(r"(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)")
#: HTA's "not compute" names (``ComputeKernelGroupingPattern``, inverse match).
_NOT_COMPUTE = re.compile(
    r"(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)"
    r"|(^hip)|(^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)"
)
_STEP = re.compile(r"^ProfilerStep\s*#\s*(\d+)")


def kernel_kind(name: str, category: str = "kernel") -> int | None:
    """:data:`COMPUTE`, :data:`COMMUNICATION` or :data:`MEMORY` for a GPU event, as HTA classifies it.

    ``None`` for an event that is neither (a synchronisation such as ``Stream Wait Event``):
    it counts as GPU time but not as compute. ``gpu_memcpy`` / ``gpu_memset`` events are memory
    whatever their name.
    """
    if category in ("gpu_memcpy", "gpu_memset"):
        return MEMORY
    if _COMM.match(name):
        return COMMUNICATION
    if _MEMORY.match(name):
        return MEMORY
    if _NOT_COMPUTE.match(name):
        return None
    return COMPUTE


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


@dataclass
class GpuEvents:
    """The GPU side of one trace file, gathered while it is scanned (times in us).

    Attributes:
        start, end, kind, correlation: one entry per GPU event (kernel, memcpy, memset), in file
            order; ``kind`` is :func:`kernel_kind` (-1 for neither), ``correlation`` -1 when absent.
        devices, streams: the devices and (device, stream) pairs seen.
        launches: per CPU process id, the launches' (ts, correlation), in file order.
        annotations: ``gpu_user_annotation`` ranges: (name, start, end).
        flows: ``ac2g`` flow ids -> CPU start (pid, ts) and GPU end (device track, ts).
        steps: ``ProfilerStep#N`` CPU ranges (start, end, N).
        ignored: GPU events without a usable time (counted, reported as a note).
    """

    start: array = field(default_factory=lambda: array("d"))
    end: array = field(default_factory=lambda: array("d"))
    kind: array = field(default_factory=lambda: array("b"))
    correlation: array = field(default_factory=lambda: array("q"))
    devices: set[Any] = field(default_factory=set)
    streams: set[tuple[Any, Any]] = field(default_factory=set)
    launches: dict[Any, tuple[array, array]] = field(default_factory=dict)
    annotations: list[tuple[str, float, float]] = field(default_factory=list)
    flow_cpu: dict[Any, tuple[Any, float]] = field(default_factory=dict)
    flow_gpu: dict[Any, tuple[Any, float]] = field(default_factory=dict)
    gpu_track_start: dict[tuple[Any, Any, float], int] = field(default_factory=dict)
    steps: list[tuple[float, float, int]] = field(default_factory=list)
    ignored: int = 0
    fractional: bool = False

    def __len__(self) -> int:
        return len(self.start)

    # ---- gathering, one event at a time
    def take(self, ev: dict[str, Any], cat: str) -> bool:
        """Keep ``ev`` if it is GPU activity, a launch, a GPU annotation or an ``ac2g`` flow;
        True when it was one of them (the caller then ignores it)."""
        ph = ev.get("ph")
        if ph in ("s", "f") and cat == "ac2g":
            self._flow(ev)
            return True
        if ph != "X":
            return False
        if cat in GPU_CATEGORIES:
            self._gpu(ev, cat)
            return True
        if cat in LAUNCH_CATEGORIES:
            self._launch(ev)
            return True
        if cat == GPU_ANNOTATION:
            times = self._times(ev)
            if times is not None:
                self.annotations.append((str(ev.get("name", "")), times[0], times[1]))
            return True
        return False

    def note_step(self, start: float, end: float, number: int) -> None:
        self.steps.append((start, end, number))

    @staticmethod
    def _times(ev: dict[str, Any]) -> tuple[float, float] | None:
        ts, dur = _number(ev.get("ts")), _number(ev.get("dur"))
        if ts is None or dur is None or dur < 0 or not math.isfinite(ts + dur):
            return None
        return ts, ts + dur

    def _gpu(self, ev: dict[str, Any], cat: str) -> None:
        times = self._times(ev)
        if times is None:
            self.ignored += 1
            return
        raw = ev.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = kernel_kind(str(ev.get("name", "")), cat)
        corr = _int(args.get("correlation"))
        device = args.get("device", ev.get("pid"))
        stream = args.get("stream", ev.get("tid"))
        if not self.fractional and not float(times[0]).is_integer():
            self.fractional = True
        self.start.append(times[0])
        self.end.append(times[1])
        self.kind.append(-1 if kind is None else kind)
        self.correlation.append(-1 if corr is None else corr)
        try:
            self.devices.add(device)
            self.streams.add((device, stream))
            if corr is None:  # only then may an ac2g flow be needed to find its launch
                self.gpu_track_start.setdefault((ev.get("pid"), ev.get("tid"), times[0]), len(self.start) - 1)
        except TypeError:  # an unhashable device or stream: the event still counts
            pass

    def _launch(self, ev: dict[str, Any]) -> None:
        ts = _number(ev.get("ts"))
        raw = ev.get("args")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        corr = _int(args.get("correlation"))
        if ts is None or corr is None:
            return
        pid = ev.get("pid")
        try:
            arrs = self.launches.get(pid)
        except TypeError:
            return
        if arrs is None:
            arrs = self.launches[pid] = (array("d"), array("q"))
        arrs[0].append(ts)
        arrs[1].append(corr)

    def _flow(self, ev: dict[str, Any]) -> None:
        ts = _number(ev.get("ts"))
        fid = ev.get("id")
        if ts is None or isinstance(fid, (dict, list)):
            return
        if ev.get("ph") == "s":
            self.flow_cpu[fid] = (ev.get("pid"), ts)
        else:
            self.flow_gpu[fid] = ((ev.get("pid"), ev.get("tid")), ts)

    # ---- after the scan
    def finish(self) -> None:
        """Give correlation ids to GPU events that lack them, from the ``ac2g`` flows (when the file
        has flows but the events carry no ``args.correlation``), and launches from the flows' CPU ends."""
        if not self.flow_gpu:
            self.gpu_track_start.clear()
            return
        for fid, (track, ts) in self.flow_gpu.items():
            index = self.gpu_track_start.get((track[0], track[1], ts))
            if index is None or self.correlation[index] != -1 or fid not in self.flow_cpu:
                continue
            corr = _int(fid) if _int(fid) is not None else hash(fid) & 0x3FFFFFFFFFFFFFFF
            self.correlation[index] = corr
            pid, cpu_ts = self.flow_cpu[fid]
            arrs = self.launches.setdefault(pid, (array("d"), array("q")))
            arrs[0].append(cpu_ts)
            arrs[1].append(corr)
        self.gpu_track_start.clear()
        self.flow_cpu.clear()
        self.flow_gpu.clear()

    def launch_index(self) -> dict[Any, tuple[list[float], list[int]]]:
        """Per CPU process: the launches sorted by time, as (times, correlations)."""
        out = {}
        for pid, (ts, corr) in self.launches.items():
            order = sorted(range(len(ts)), key=ts.__getitem__)
            out[pid] = ([ts[i] for i in order], [corr[i] for i in order])
        return out

    def by_correlation(self) -> dict[int, tuple[int, ...]]:
        """correlation id -> indices of the GPU events it launched (usually one)."""
        first: dict[int, int] = {}
        more: dict[int, list[int]] = {}
        for i, c in enumerate(self.correlation):
            if c == -1:
                continue
            if c in first:
                more.setdefault(c, [first[c]]).append(i)
            else:
                first[c] = i
        out: dict[int, tuple[int, ...]] = {c: (i,) for c, i in first.items()}
        out.update({c: tuple(v) for c, v in more.items()})
        return out


# ----------------------------------------------------------------------------- intervals

def merge_intervals(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of ``spans`` as sorted, disjoint (start, end) intervals (touching ones merged)."""
    out: list[tuple[float, float]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def union_length(spans: Iterable[tuple[float, float]]) -> float:
    """Total length of the union of ``spans``."""
    return sum(e - s for s, e in merge_intervals(spans))


# ----------------------------------------------------------------------------- pipeline actions on the GPU

def retime_on_gpu(spans: Sequence[Any], gpu: GpuEvents, path: str) -> tuple[list[Any], list[str]]:
    """Each pipeline action's span (a :class:`~.records.RawSpan`) retimed to the compute kernels it launched.

    An action's GPU time runs from the first start to the last end of the compute kernels
    launched while its CPU range was open, from any thread of its process; communication and
    memory kernels are not the action's work (a receive's NCCL kernel spins through the wait).
    An action that launched no compute kernel takes its ``gpu_user_annotation`` range if the
    file has one of the same name and CPU order, and otherwise stops the reading: a GPU trace
    must not be measured half on the CPU's clock.

    Returns the retimed spans (``pretrimmed``: no receive wait is left in them) and notes.

    Raises:
        TraceError: an action launched no compute kernel and has no GPU annotation.
    """
    launches = gpu.launch_index()
    kernels = gpu.by_correlation()
    annotations: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for name, s, e in sorted(gpu.annotations, key=lambda a: a[1]):
        annotations[name].append((s, e))
    used: dict[str, int] = defaultdict(int)
    out = []
    from_annotations = 0
    for span in spans:
        pid = span.thread[0]
        times, corrs = launches.get(pid, ([], []))
        lo = bisect_left(times, span.start)  # [start, end): a launch at the end belongs to the next range
        hi = bisect_left(times, span.end) if span.end > span.start else bisect_right(times, span.end)
        first = math.inf
        last = -math.inf
        for c in corrs[lo:hi]:
            for k in kernels.get(c, ()):
                if gpu.kind[k] == COMPUTE:
                    first = min(first, gpu.start[k])
                    last = max(last, gpu.end[k])
        if first == math.inf:
            name = _span_name(span)
            candidates = annotations.get(name, [])
            if used[name] < len(candidates):
                first, last = candidates[used[name]]
                used[name] += 1
                from_annotations += 1
            else:
                raise TraceError(
                    f"{path}: {span.where} ({name}) launched no compute kernel on the GPU (no launch with a "
                    f"matching args.correlation inside its CPU range) and the file has no gpu_user_annotation "
                    f"for it: the trace holds GPU kernels, so its actions must be timed on the GPU"
                )
        out.append(span._replace(start=first, end=last, pretrimmed=True))
    notes = [f"{path}: timed on the GPU: each action from its first to its last compute kernel "
             f"({len(gpu)} GPU events, {len(out)} actions)"]
    if from_annotations:
        notes.append(f"{path}: {from_annotations} action(s) timed by their gpu_user_annotation range "
                     "(no launch of theirs was found)")
    if gpu.ignored:
        notes.append(f"{path}: {gpu.ignored} GPU event(s) without a usable time ignored")
    return out, notes


def _span_name(span: Any) -> str:
    if span.backward is not None:
        return f"PP:({span.stage}{'F'}{span.mb};{span.backward})OVERLAP_F_B"
    stage = "" if span.stage is None else span.stage
    return f"PP:{stage}{span.kind}{span.mb}"


# ----------------------------------------------------------------------------- the breakdown

@dataclass(frozen=True)
class RankGpu:
    """One rank's GPU events after HTA's filtering (see :func:`gpu_breakdown`), times in us."""

    rank: int
    file: str
    intervals: tuple[tuple[float, float, int], ...]  # (start, end, kind or -1)
    notes: tuple[str, ...]


def _last_step_start(gpu: GpuEvents) -> float | None:
    """HTA drops the kernels launched in the trace's last profiler step (when it has two or more)."""
    if len({n for _, _, n in gpu.steps}) < 2:
        return None
    return max(s for s, _, _ in gpu.steps)


def _filtered(gpu: GpuEvents, hta_rules: bool) -> tuple[list[tuple[float, float, int]], list[str]]:
    """The GPU events HTA's temporal breakdown counts (``Trace._filter_irrelevant_gpu_kernels``).

    With ``hta_rules``: a nanosecond-resolution trace (fractional microseconds) is rounded
    inwards, start up and end down, as HTA's parser does (``round_down_time_stamps``, for
    PyTorch's overlapping-events issue #122425), and an event that then ends before it starts is
    dropped; when the file has CPU launches, only GPU events whose correlation matches one
    count, and, when it has two or more ``ProfilerStep#N`` ranges, only those launched before the
    last one began (HTA leaves out the last, partial, profiler step).
    """
    rows = [(gpu.start[i], gpu.end[i], gpu.kind[i], gpu.correlation[i]) for i in range(len(gpu))]
    if not hta_rules:
        return [(s, e, k) for s, e, k, _ in rows], []
    notes = []
    if gpu.fractional:
        rows = [(float(math.ceil(s)), float(math.floor(e)), k, c) for s, e, k, c in rows]
        shorter = sum(1 for s, e, _, _ in rows if e < s)
        rows = [r for r in rows if r[1] >= r[0]]
        notes.append("nanosecond times rounded to whole microseconds inwards, as HTA does"
                     + (f" ({shorter} event(s) shorter than 1 us dropped)" if shorter else ""))
    if gpu.launches:
        cutoff = _last_step_start(gpu)
        allowed = {c for ts, corr in gpu.launches.values() for t, c in zip(ts, corr) if cutoff is None or t < cutoff}
        before = len(rows)
        rows = [r for r in rows if r[3] in allowed]
        if len(rows) < before:
            why = "launched in the last profiler step or without a CPU launch" if cutoff is not None else \
                "without a CPU launch in the trace"
            notes.append(f"{before - len(rows)} of {before} GPU events left out ({why}), as HTA does")
    return [(s, e, k) for s, e, k, _ in rows], notes


def read_gpu_ranks(source: PathLike | Sequence[PathLike], *, hta_rules: bool = True) -> list[RankGpu]:
    """Every rank's GPU events from a Kineto trace (a file, a folder or a list), rank order.

    A file's rank comes from its ``distributedInfo.rank``, ``rank<N>`` in its name, or its
    position in the folder. A subset of a job's ranks is fine (no rank need be complete).

    Raises:
        TraceError: no file holds GPU events, two files claim the same rank, a file is not a trace.
    """
    from .ranks import is_csv, resolve_files
    from .stream import TraceEntries

    files = resolve_files(source)
    found: dict[int, RankGpu] = {}
    ignored: dict[str, int] = {}
    unnamed: list[tuple[Path, GpuEvents, dict[str, Any]]] = []
    for f in files:
        if is_csv(f):  # .csv or .csv.gz
            raise TraceError(f"{f}: a CSV of actions has no GPU events; give the Kineto JSON trace")
        header: dict[str, Any] = {}
        if f.name.lower().endswith((".sqlite", ".sqlite3")):
            from .nsys import scan_nsys

            scanned = scan_nsys(f).gpu
            gpu = scanned if scanned is not None else GpuEvents()
            rank = _rank_of(f, header)
            if rank is None:
                unnamed.append((f, gpu, header))
            else:
                _add_rank(found, rank, f, gpu, hta_rules)
            continue
        gpu = GpuEvents()
        for _, ev in TraceEntries(f, header):
            if not isinstance(ev, dict):
                continue
            cat = str(ev.get("cat", ""))
            if gpu.take(ev, cat):
                continue
            name = ev.get("name")
            if ev.get("ph") == "X" and isinstance(name, str) and name.startswith("ProfilerStep"):
                m = _STEP.match(name)
                times = GpuEvents._times(ev)
                if m and times is not None:
                    gpu.note_step(times[0], times[1], int(m.group(1)))
        gpu.finish()
        ignored[str(f)] = gpu.ignored
        rank = _rank_of(f, header)
        if rank is None:
            unnamed.append((f, gpu, header))
        else:
            _add_rank(found, rank, f, gpu, hta_rules)
    next_free = 0
    for f, gpu, _ in unnamed:
        while next_free in found:
            next_free += 1
        _add_rank(found, next_free, f, gpu, hta_rules)
    with_gpu = [r for r in found.values() if r.intervals]
    if not with_gpu:
        unusable = sum(ignored.values())
        why = f" ({unusable} GPU event(s) without a usable ts/dur were ignored)" if unusable else ""
        raise TraceError(f"{files[0] if len(files) == 1 else files[0].parent}: no GPU events (categories kernel, "
                         f"gpu_memcpy, gpu_memset) in {len(files)} file(s){why}: a CPU-only trace has no GPU breakdown")
    return [found[r] for r in sorted(found)]


def _rank_of(path: Path, header: dict[str, Any]) -> int | None:
    from .ranks import _file_rank  # one rule for a file's rank
    from .records import FileScan

    scan = FileScan(str(path), header=header)
    rank = _file_rank(scan, path)
    if rank is not None and rank < 0:
        raise TraceError(f"{path}: distributedInfo.rank is {rank}; a rank is a number >= 0")
    return rank


def _add_rank(found: dict[int, RankGpu], rank: int, path: Path, gpu: GpuEvents, hta_rules: bool) -> None:
    if rank in found:
        raise TraceError(f"rank {rank} appears twice: in {found[rank].file} and in {path}")
    events, notes = _filtered(gpu, hta_rules)
    if gpu.ignored:
        notes.append(f"{gpu.ignored} GPU event(s) without a usable time ignored")
    found[rank] = RankGpu(rank, str(path), tuple(events), tuple(f"{path}: {n}" for n in notes))


def gpu_breakdown(source: PathLike | Sequence[PathLike], *, hta_rules: bool = True) -> Table:
    """Per rank, where the GPU's time went: HTA's temporal breakdown plus the kernel time share.

    Works on any Kineto GPU trace (pipeline or not), one file per rank, a folder, or a subset of
    a job's ranks. Each row is a mapping with exactly the keys ``rank``, ``span_us`` (first GPU
    event start to last end), ``idle_us`` (span minus the union of all GPU events),
    ``compute_us`` (union of compute kernels), ``non_compute_us`` (the rest of the busy time:
    communication kernels, memory copies and sets) and ``kernel_share`` (the source article's
    *kernel time share*: the fraction of the span some GPU event runs, (span − idle) / span).
    Times are microseconds. HTA's definitions, so the two can be compared
    (``benchmarks/bench_gpu_trace.py`` runs both): with ``hta_rules`` (the default) the GPU
    events launched in the last profiler step, or with no CPU launch in the trace, are left
    out as HTA leaves them out; ``hta_rules=False`` counts every GPU event.

    Note that ``kernel_share`` counts an NCCL kernel that spins while waiting as busy: a rank
    whose share looks high can still be idle for the pipeline (compare ``compute_us`` / ``span_us``).
    Used in lesson 06 ("Reading a GPU trace").

    Raises:
        TraceError: no GPU events, duplicate ranks, a file that is not a trace.
        TypeError: ``hta_rules`` is not a bool.
    """
    if not isinstance(hta_rules, bool):
        raise TypeError(f"hta_rules must be True or False, got {hta_rules!r}")
    rows = []
    notes: list[str] = []
    for r in read_gpu_ranks(source, hta_rules=hta_rules):
        notes.extend(r.notes)
        if not r.intervals:
            notes.append(f"{r.file}: rank {r.rank} has no GPU events (left out)")
            continue
        span_start = min(s for s, _, _ in r.intervals)
        span_end = max(e for _, e, _ in r.intervals)
        span = span_end - span_start
        busy = union_length((s, e) for s, e, _ in r.intervals)
        compute = union_length((s, e) for s, e, k in r.intervals if k == COMPUTE)
        rows.append({
            "rank": r.rank,
            "span_us": span,
            "idle_us": span - busy,
            "compute_us": compute,
            "non_compute_us": busy - compute,
            "kernel_share": busy / span if span > 0 else 0.0,
        })
    columns = ["rank", "span_us", "idle_us", "compute_us", "non_compute_us", "kernel_share"]
    table = Table(rows, columns, title=tr("traces.gpu.title"), note=tr("traces.gpu.note"),
                  formats={"kernel_share": "percent"},
                  headers={k: tr(f"traces.gpu.col.{k}") for k in columns[1:]})
    table.notes = notes  # type: ignore[attr-defined]
    return table


def gpu_activity(source: PathLike | Sequence[PathLike], *,
                 hta_rules: bool = False) -> dict[int, dict[str, list[tuple[float, float]]]]:
    """Per rank, the merged intervals (us) of ``compute``, ``communication`` and ``memory`` GPU events.

    What ``bubblekit trace --plot`` draws: the measured timeline per rank. Communication time
    that overlaps compute is drawn as compute (the GPU was computing).
    """
    if not isinstance(hta_rules, bool):
        raise TypeError(f"hta_rules must be True or False, got {hta_rules!r}")
    out: dict[int, dict[str, list[tuple[float, float]]]] = {}
    for r in read_gpu_ranks(source, hta_rules=hta_rules):
        parts = {name: merge_intervals((s, e) for s, e, k in r.intervals if k == code)
                 for code, name in enumerate(KIND_NAMES)}
        out[r.rank] = parts
    return out


def _intersection(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Intersection of two sorted, disjoint interval lists."""
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _minus(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``a`` without ``b`` (both sorted and disjoint)."""
    out = []
    j = 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def idle_split(timeline: Any) -> Table:
    """Per rank, what the GPU did while the pipeline idled: NCCL kernels, memory copies, or nothing.

    ``timeline`` is a step read from a GPU trace (``read_trace(path)``, ``clock == "gpu"``); its
    files are read again for their GPU events, and its idle time per rank (no action's compute kernels running) is split into
    ``communication_ms`` (a communication kernel runs, typically an NCCL receive spinning while
    it waits for the neighbour), ``memory_ms`` (only memory copies or sets run) and
    ``nothing_ms`` (the GPU is empty: the rank's drain, or the CPU did not launch in time). Times in ms. Used by
    ``bubblekit trace`` and lesson 06.

    Raises:
        TypeError: ``timeline`` is not a measured timeline read on the GPU's clock.
    """
    from .measured import MeasuredTimeline

    if not isinstance(timeline, MeasuredTimeline) or getattr(timeline, "clock", "cpu") != "gpu":
        raise TypeError("timeline must be a step read from a GPU trace (bk.traces.read_trace(path) with clock 'gpu')")
    activity = gpu_activity(list(dict.fromkeys(timeline.files)))
    ranks = sorted(activity)
    if len(ranks) != timeline.p:
        raise TraceError(f"the trace has {len(ranks)} rank(s) with GPU events but the timeline has {timeline.p}")
    rows = []
    for r, rank in enumerate(ranks):
        shift = timeline.origin - timeline.offsets_ms[r]  # timeline ms -> file ms on this rank's clock
        idle = [((float(g.start) + shift) * 1000.0, (float(g.end) + shift) * 1000.0) for g in timeline.idle_intervals(r)]
        idle = merge_intervals(idle)
        comm = _intersection(idle, activity[rank]["communication"])
        rest = _minus(idle, comm)
        mem = _intersection(rest, activity[rank]["memory"])
        total = sum(e - s for s, e in idle)
        c, mm = sum(e - s for s, e in comm), sum(e - s for s, e in mem)
        rows.append({"rank": rank, "idle_ms": total / 1000.0, "communication_ms": c / 1000.0,
                     "memory_ms": mm / 1000.0, "nothing_ms": (total - c - mm) / 1000.0})
    columns = ["rank", "idle_ms", "communication_ms", "memory_ms", "nothing_ms"]
    return Table(rows, columns, title=tr("traces.gpu.idle_title"), note=tr("traces.gpu.idle_note"),
                 headers={k: tr(f"traces.gpu.col.{k}") for k in columns[1:]})
