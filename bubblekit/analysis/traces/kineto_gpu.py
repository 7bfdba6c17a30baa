"""A simulated step written as the PyTorch-profiler (Kineto) trace of a GPU run, one file per rank.

Lesson 06 uses it to show why a GPU trace must be read on the GPU's clock: the CPU launches
every action's kernels ahead of the GPU (``cpu_lead_us``), so the CPU-side ``PP:1F3`` ranges
are short and early, while the kernels run when the GPU gets to them; and a rank waiting for
its neighbour sits inside an NCCL kernel (``ncclDevKernel_SendRecv``) that spins through the
wait, so "some kernel is running" is not "the GPU is computing".

What :func:`write_kineto_gpu` writes per rank (``rank{r}.json``, Kineto's own layout):

* ``distributedInfo`` (``rank``, ``world_size``, backend ``nccl``) and a ``ProfilerStep#1`` range;
* per action, a CPU ``user_annotation`` range named as PyTorch's pipelining names it
  (``PP:1F3``; an overlapped pair ``PP:(0F7;7B3)OVERLAP_F_B``) on the main thread, holding one
  ``cudaLaunchKernel`` (``cuda_runtime``, with ``args.correlation``) per kernel, and the
  ``ac2g`` flow events joining each launch to its kernel;
* the kernels (category ``kernel``, ``args.device`` = the rank, ``args.stream`` 7) that cover the
  action's simulated span, split into ``kernel_splits`` pieces, and a ``gpu_user_annotation``
  range for the action on the GPU track (as recent PyTorch writes);
* per wait of the rank for an input (every idle gap that ends at one of its actions, the fill
  included), an NCCL receive kernel on stream 20 spanning the gap; the drain after the rank's last
  action is left empty (nothing is being received there).

It is a synthetic trace: what it shows follows from how it is built (the CPU ranges last only their
launches, ``launch_us`` per kernel; the NCCL kernels sit exactly over the waits). It shows how to
read a GPU trace and why the CPU ranges mislead, not what a particular GPU does.

Reading the folder back with :func:`~bubblekit.analysis.traces.read_trace` gives the
simulation's bubble (``clock == "gpu"``), whatever the CPU lead (``tests/test_gpu_traces.py``
checks it with random leads, kernel splits and NCCL waits).
"""

from __future__ import annotations

import gzip
import json
import math
import random
from pathlib import Path
from typing import Any

from bubblekit._validate import check_int, check_number
from bubblekit.actions import Action, Pair
from bubblekit.timeline import Timeline

__all__ = ["write_kineto_gpu", "action_name"]

COMPUTE_STREAM = 7
NCCL_STREAM = 20
_KERNEL_NAMES = {
    "F": "void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_relu_bf16_128x128_32x4_nn_align8>(Params)",
    "B": "void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_bf16_128x64_64x3_tn_align8>(Params)",
    "I": "void cutlass::Kernel<cutlass_80_tensorop_s16816dgrad_bf16_128x64_64x3_nt_align8>(Params)",
    "W": "void cutlass::Kernel<cutlass_80_tensorop_s16816wgrad_bf16_128x128_32x4_tn_align8>(Params)",
    "F&B": "void cutlass::Kernel<cutlass_80_tensorop_s16816gemm_bf16_256x128_32x3_nn_align8>(Params)",
}
_NCCL_NAME = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"


def action_name(label: Action | Pair | str) -> str:
    """The ``record_function`` name PyTorch's pipelining gives an action: ``PP:1F3``,
    ``PP:(0F7;7B3)OVERLAP_F_B`` for an overlapped pair (``_get_profiler_function_name``)."""
    if isinstance(label, Pair):
        return f"PP:({label.forward};{label.backward})OVERLAP_F_B"
    if isinstance(label, Action):
        return f"PP:{label}"
    return str(label)


def write_kineto_gpu(
    timeline: Timeline,
    folder: str | Path,
    *,
    us_per_unit: float | None = None,
    cpu_lead_us: float = 0.0,
    kernel_splits: int = 3,
    nccl_waits: bool = True,
    gpu_annotations: bool = True,
    launch_us: float = 10.0,
    seed: int = 0,
    gzipped: bool = False,
    force: bool = False,
) -> list[Path]:
    """Write ``timeline`` as one Kineto GPU trace per rank in ``folder``; returns the files.

    Args:
        timeline: a simulated (or measured) step; every span's label is an action.
        folder: where ``rank0.json``, ``rank1.json``, ... go (made if missing).
        us_per_unit: microseconds per time unit of the timeline (default 1000: one slot or one
            ms shows as 1 ms, as :meth:`Timeline.to_chrome_trace` does; 1 for a timeline in us).
        cpu_lead_us: how far ahead of the GPU the CPU launches, at most (us, >= 0): each
            action's CPU range starts a random 0..``cpu_lead_us`` before its kernels (and never
            before the previous range ends).
        kernel_splits: kernels per action (1..64), at random cut points.
        nccl_waits: write an NCCL receive kernel spinning through each wait for an input.
        launch_us: CPU time of one kernel launch (us, > 0; a ``cudaLaunchKernel`` takes a few us):
            an action's CPU range lasts its launches, or less where the GPU is about to start it.
        gpu_annotations: write a ``gpu_user_annotation`` range per action.
        seed: the random cut points and leads (the same seed, the same files).
        gzipped: write ``rank{r}.json.gz``.
        force: overwrite files that exist (without it an existing file is refused: it may be yours).

    Raises:
        TypeError, ValueError: a bad argument, named with its value.
        FileExistsError: a file to write exists and ``force`` is not set.
    """
    if not isinstance(timeline, Timeline):
        raise TypeError(f"timeline must be a bubblekit Timeline (bk.simulate(...) gives one), got {type(timeline).__name__}")
    k = float(check_number("us_per_unit", 1000.0 if us_per_unit is None else us_per_unit, minimum=0.0,
                           allow_equal=False))
    lead = float(check_number("cpu_lead_us", cpu_lead_us, minimum=0.0))
    splits = check_int("kernel_splits", kernel_splits, minimum=1, maximum=64)
    launch = float(check_number("launch_us", launch_us, minimum=0.0, allow_equal=False))
    for name, flag in (("nccl_waits", nccl_waits), ("gpu_annotations", gpu_annotations), ("gzipped", gzipped),
                       ("force", force)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    seed = check_int("seed", seed, minimum=0)
    if not isinstance(folder, (str, Path)):
        raise TypeError(f"folder must be a path, got {type(folder).__name__}")
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise ValueError(f"folder={str(out)!r} is a file, not a folder")
    suffix = ".json.gz" if gzipped else ".json"
    paths = [out / f"rank{r}{suffix}" for r in range(timeline.p)]
    existing = [str(p) for p in paths if p.exists()]
    if existing and not force:
        raise FileExistsError(f"{existing[0]} exists (it may be yours): choose another folder, or force=True to replace it")
    rows = []
    for r in range(timeline.p):
        starts, ends, labels = timeline.arrays(r)
        for lb in labels:
            if not isinstance(lb, (Action, Pair)):
                raise ValueError(f"rank {r} has a span labelled {lb!r}: every span must be an action to be written "
                                 f"as a pipeline trace")
        rows.append((starts, ends, labels))
    t0 = timeline.t0
    t1 = timeline.t1
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for r, (starts, ends, labels) in enumerate(rows):
        doc = _rank_document(r, timeline.p, [((s - t0) * k, (e - t0) * k, lb) for s, e, lb in zip(starts, ends, labels)],
                             (t1 - t0) * k, lead, splits, nccl_waits, gpu_annotations, rng, launch)
        text = json.dumps(doc)
        tmp = paths[r].with_name(paths[r].name + ".tmp")
        if gzipped:
            with gzip.open(tmp, "wt", encoding="utf-8") as fh:
                fh.write(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        tmp.replace(paths[r])
        written.append(paths[r])
    return written


def _cuts(start: float, end: float, splits: int, rng: random.Random) -> list[tuple[float, float]]:
    if end <= start or splits == 1:
        return [(start, end)]
    points = sorted(rng.uniform(start, end) for _ in range(splits - 1))
    if end - start >= 2 * splits:  # whole microseconds, as Kineto writes them
        points = sorted({float(round(x)) for x in points} - {start, end})
    edges = [start, *points, end]
    return [(a, b) for a, b in zip(edges, edges[1:])]


def _rank_document(rank: int, world: int, spans: list[tuple[float, float, Any]], step_us: float, lead: float,
                   splits: int, nccl: bool, annotations: bool, rng: random.Random,
                   launch_us: float) -> dict[str, Any]:
    cpu_pid, main_tid, gpu_pid = 1000 + rank, 1000 + rank, rank
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": cpu_pid, "tid": 0, "args": {"name": f"python rank {rank}"}},
        {"name": "thread_name", "ph": "M", "pid": cpu_pid, "tid": main_tid, "args": {"name": "thread 0 (python)"}},
        {"name": "process_name", "ph": "M", "pid": gpu_pid, "tid": 0, "args": {"name": f"GPU {rank}"}},
        {"name": "thread_name", "ph": "M", "pid": gpu_pid, "tid": COMPUTE_STREAM, "args": {"name": f"stream {COMPUTE_STREAM}"}},
    ]
    corr = rank * 10_000_000 + 1
    cpu_free = -lead - 1.0
    kernels: list[dict[str, Any]] = []
    for s, e, label in sorted(spans, key=lambda x: (x[0], x[1])):
        pieces = _cuts(s, e, splits, rng)
        # the CPU range ends before its first kernel starts, and after the previous range
        need = min(launch_us * len(pieces), max(s - cpu_free, 0.0))
        cpu_start = max(cpu_free, s - rng.uniform(0.0, lead) - need)
        cpu_end = cpu_start + need
        events.append({"name": action_name(label), "ph": "X", "cat": "user_annotation", "pid": cpu_pid,
                       "tid": main_tid, "ts": cpu_start, "dur": cpu_end - cpu_start,
                       "args": {"External id": corr}})
        for j, (ks, ke) in enumerate(pieces):
            launch = cpu_start + need * j / len(pieces)
            events.append({"name": "cudaLaunchKernel", "ph": "X", "cat": "cuda_runtime", "pid": cpu_pid,
                           "tid": main_tid, "ts": launch, "dur": launch_us * 0.5, "args": {"correlation": corr}})
            events.append({"name": "ac2g", "ph": "s", "cat": "ac2g", "id": corr, "pid": cpu_pid, "tid": main_tid,
                           "ts": launch})
            kind = label.kind if isinstance(label, Action) else "F&B"
            kernels.append({"name": _KERNEL_NAMES.get(kind, _KERNEL_NAMES["F"]), "ph": "X", "cat": "kernel",
                            "pid": gpu_pid, "tid": COMPUTE_STREAM, "ts": ks, "dur": ke - ks,
                            "args": {"device": rank, "stream": COMPUTE_STREAM, "correlation": corr,
                                     "External id": corr}})
            kernels.append({"name": "ac2g", "ph": "f", "bp": "e", "cat": "ac2g", "id": corr, "pid": gpu_pid,
                            "tid": COMPUTE_STREAM, "ts": ks})
            corr += 1
        if annotations:
            kernels.append({"name": action_name(label), "ph": "X", "cat": "gpu_user_annotation", "pid": gpu_pid,
                            "tid": COMPUTE_STREAM, "ts": s, "dur": e - s, "args": {"device": rank}})
        cpu_free = cpu_end
    if nccl:
        events.append({"name": "thread_name", "ph": "M", "pid": gpu_pid, "tid": NCCL_STREAM,
                       "args": {"name": f"stream {NCCL_STREAM}"}})
        busy = sorted((s, e) for s, e, _ in spans)
        edge = 0.0
        for s, e in busy:  # the gaps that end at an action: waits for its input (not the drain)
            if s > edge + 1e-9:
                launch = max(min(edge, cpu_free) - lead, -lead - 1.0)
                events.append({"name": "cudaLaunchKernel", "ph": "X", "cat": "cuda_runtime",
                               "pid": cpu_pid, "tid": main_tid + 1, "ts": launch, "dur": launch_us * 0.5,
                               "args": {"correlation": corr}})
                kernels.append({"name": _NCCL_NAME, "ph": "X", "cat": "kernel", "pid": gpu_pid, "tid": NCCL_STREAM,
                                "ts": edge, "dur": s - edge,
                                "args": {"device": rank, "stream": NCCL_STREAM, "correlation": corr}})
                corr += 1
            edge = max(edge, e)
    first_cpu = min((ev["ts"] for ev in events if ev.get("ph") == "X"), default=0.0)
    events.insert(4, {"name": "ProfilerStep#1", "ph": "X", "cat": "user_annotation", "pid": cpu_pid, "tid": main_tid,
                      "ts": first_cpu - 1.0, "dur": step_us - first_cpu + 2.0 + lead})
    events.extend(kernels)
    if not all(math.isfinite(ev.get("ts", 0.0)) for ev in events):
        raise ValueError("the timeline has times that are not finite numbers")
    return {"schemaVersion": 1, "deviceProperties": [{"id": rank, "name": "simulated GPU"}],
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world},
            "traceEvents": events, "displayTimeUnit": "ms"}
