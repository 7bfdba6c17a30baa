"""One pipeline rank: build its stages, run the schedule, time every action (imports torch).

Run by :func:`bubblekit.lab.run` (one process per rank, ``RANK`` / ``WORLD_SIZE`` /
``MASTER_ADDR`` / ``MASTER_PORT`` in the environment) or directly under ``torchrun``.

Timing: each stage's ``forward_one_chunk``, ``backward_one_chunk`` and
``backward_weight_one_chunk`` is wrapped; the wrapper reads ``time.perf_counter_ns()``
before and after the call, so an interval is the stage's own compute, without the
receive wait that PyTorch's ``PP:0F3`` profiler ranges include. With ``nccl`` the wrapper
synchronises the GPU before each reading. The readings are taken inside a profiler range
``compute:0F3``, so a trace of the run gives the same timeline (the range is longer by the
profiler's own enter / exit cost, tens of microseconds). With ``manual_gc`` (default)
Python's garbage collector runs between steps only, so its pauses do not land inside
actions (Megatron-LM's ``--manual-gc`` does the same).

Record (returned by rank 0): ``events`` rows ``[rank, step, stage, kind, microbatch,
start_ns, end_ns]`` with per-rank clock offsets already subtracted; the loss of the last
stage runs between its F and the next action and is not part of F. ``peak_rss_bytes``:
each rank's peak resident memory (bytes).

Progress: when started by :func:`bubblekit.lab.run`, each rank writes its phase, step and
current action into the launcher's progress board (:mod:`bubblekit.lab._progress`) so that
a run that passes its time limit names the rank that stopped progressing.
"""

from __future__ import annotations

import gc
import os
import resource
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

from bubblekit.lab._config import LabConfig
from bubblekit.lab._launch import in_torchrun
from bubblekit.lab._model import make_stage_module
from bubblekit.lab._progress import DONE, JOINED, STEPPING, ProgressBoard

__all__ = ["worker_main", "in_torchrun", "flatten_torch_order"]

Row = list[Any]


def flatten_torch_order(order: list[Any]) -> list[str]:
    """PyTorch ``pipeline_order[rank]`` as action strings: compute actions only.

    ``None`` idle slots are dropped; an ``OVERLAP_F_B`` action becomes its sub-actions in
    order; communication and ``REDUCE_GRAD`` actions are dropped.
    """
    out: list[str] = []
    for a in order:
        if a is None:
            continue
        subs = getattr(a, "sub_actions", None)
        if subs:
            out.extend(flatten_torch_order(list(subs)))
            continue
        kind = getattr(a.computation_type, "value", str(a.computation_type))
        if kind in ("F", "B", "I", "W") and a.microbatch_index is not None:
            out.append(f"{a.stage_index}{kind}{a.microbatch_index}")
    return out


class _Recorder:
    """Collects ``[step, stage, kind, microbatch, start_ns, end_ns]`` rows for this rank.

    With a progress ``board`` it also writes the rank's slot before and after each action;
    ``stall`` (an action such as ``"1F0"``) makes that action sleep for good (fault injection).
    """

    def __init__(self, sync: Callable[[], None] | None, board: ProgressBoard | None = None, rank: int = 0,
                 stall: str | None = None) -> None:
        self.rows: list[Row] = []
        self.step = -1
        self.sync = sync
        self.board = board
        self.rank = rank
        self.stall = stall
        self.started = 0
        self.finished = 0

    def progress(self, phase: int, stage: int = -1, kind: str = "", mb: int = -1) -> None:
        """Write this rank's progress slot (no-op without a board)."""
        if self.board is not None:
            self.board.write(self.rank, phase, self.step, self.started, self.finished, stage, kind, mb)

    def wrap(self, stage: Any) -> None:
        """Replace the stage's three compute methods by timed, annotated wrappers."""
        idx = stage.stage_index
        fwd, bwd, wgt = stage.forward_one_chunk, stage.backward_one_chunk, stage.backward_weight_one_chunk

        def timed(kind: str, mb: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            if self.sync is not None:
                self.sync()
            self.started += 1
            self.progress(STEPPING, idx, kind, mb)
            if self.stall == f"{idx}{kind}{mb}":
                while True:  # fault injection: this action never ends
                    time.sleep(3600)
            with record_function(f"compute:{idx}{kind}{mb}"):
                t0 = time.perf_counter_ns()
                out = fn(*args, **kwargs)
                if self.sync is not None:
                    self.sync()
                t1 = time.perf_counter_ns()
            self.rows.append([self.step, idx, kind, mb, t0, t1])
            self.finished += 1
            self.progress(STEPPING, idx, kind, mb)
            return out

        def forward_one_chunk(fwd_chunk_id: int, *args: Any, **kwargs: Any) -> Any:
            return timed("F", fwd_chunk_id, fwd, fwd_chunk_id, *args, **kwargs)

        def backward_one_chunk(bwd_chunk_id: int, loss: Any = None, full_backward: bool = True,
                               last_backward: bool = False) -> Any:
            kind = "B" if full_backward else "I"
            return timed(kind, bwd_chunk_id, bwd, bwd_chunk_id, loss=loss, full_backward=full_backward,
                         last_backward=last_backward)

        def backward_weight_one_chunk(bwd_chunk_id: int, last_backward: bool = False) -> Any:
            return timed("W", bwd_chunk_id, wgt, bwd_chunk_id, last_backward=last_backward)

        stage.forward_one_chunk = forward_one_chunk
        stage.backward_one_chunk = backward_one_chunk
        stage.backward_weight_one_chunk = backward_weight_one_chunk


def _clock_offsets(rank: int, world: int) -> tuple[list[int], str, list[str]]:
    """Per-rank clock offsets in ns (subtract from that rank's times) and how they were found.

    Processes on one host share ``perf_counter_ns`` (CLOCK_MONOTONIC), so offsets are 0.
    Across hosts each rank reads its clock right after a barrier, five times, and the median
    difference to rank 0 is its offset (accurate to the barrier's exit skew, tens of us).
    """
    host = socket.gethostname()
    hosts: list[Any] = [None] * world
    dist.all_gather_object(hosts, host)
    if len(set(hosts)) == 1:
        return [0] * world, "one host: shared monotonic clock", [str(h) for h in hosts]
    samples: list[list[int]] = []
    for _ in range(5):
        dist.barrier()
        t = time.perf_counter_ns()
        got: list[Any] = [None] * world
        dist.all_gather_object(got, t)
        samples.append([int(x) - int(got[0]) for x in got])
    offsets = [sorted(s[r] for s in samples)[len(samples) // 2] for r in range(world)]
    return offsets, "several hosts: barrier-aligned clocks", [str(h) for h in hosts]


def worker_main(cfg: LabConfig) -> dict[str, Any] | None:
    """Run ``cfg`` as this process's rank; return the whole run's record on rank 0, else ``None``."""
    from torch.distributed import pipelining

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    if world != cfg.ranks:
        raise ValueError(f"the launcher started {world} processes but ranks={cfg.ranks}; make them equal")
    torch.set_num_threads(int(cfg.threads or 1))
    if cfg.backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank))
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
        sync: Callable[[], None] | None = torch.cuda.synchronize
    else:
        device = torch.device("cpu")
        sync = None
    dist.init_process_group(cfg.backend, rank=rank, world_size=world,
                            timeout=timedelta(seconds=max(30.0, float(cfg.timeout_s))))
    board = ProgressBoard.from_env(world)
    recorder = _Recorder(sync, board, rank, cfg.extra.get("stall_action"))
    recorder.progress(JOINED)
    try:
        return _run(cfg, rank, world, device, recorder, pipelining)
    finally:
        recorder.progress(DONE)
        dist.destroy_process_group()
        if board is not None:
            board.close()


def _peak_rss_bytes() -> int:
    rss = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return rss if sys.platform == "darwin" else rss * 1024


def _run(cfg: LabConfig, rank: int, world: int, device: torch.device, recorder: _Recorder,
         pipelining: Any) -> dict[str, Any] | None:
    info = cfg.info
    placement = cfg.placement()
    n_stages = len(placement)
    mine = [s for s in range(n_stages) if placement[s] == rank]
    shape = (cfg.batch, cfg.seq, cfg.hidden)
    stages = []
    for s in mine:
        module: nn.Module = make_stage_module(s, cfg.hidden, cfg.layers).to(device)
        example_in = torch.zeros(shape, device=device, requires_grad=s > 0)
        example_out = torch.zeros(shape, device=device, requires_grad=True)
        stages.append(pipelining.PipelineStage(module, s, n_stages, device,
                                               input_args=example_in, output_args=example_out))
    for st in stages:
        recorder.wrap(st)
    loss_fn = nn.MSELoss()
    m = cfg.microbatches
    if info.placement == "csv":  # any schedule: PyTorch's runtime loads its compute-only CSV and adds the comms
        sched = pipelining.schedules._PipelineScheduleRuntime(stages, m, loss_fn=loss_fn)
        with tempfile.TemporaryDirectory(prefix="bubblekit-lab-csv-") as folder:
            path = os.path.join(folder, "schedule.csv")
            with open(path, "w", newline="", encoding="utf-8") as fh:
                fh.write(str(cfg.orders))
            sched._load_csv(path, format="compute_only")
    else:
        cls = getattr(pipelining, info.torch_class)
        sched = cls(stages[0] if info.placement == "single" else stages, m, loss_fn=loss_fn)
    gen = torch.Generator().manual_seed(cfg.seed)
    x = torch.randn((cfg.batch * m, cfg.seq, cfg.hidden), generator=gen).to(device)
    y = torch.randn((cfg.batch * m, cfg.seq, cfg.hidden), generator=gen).to(device)
    has_first = 0 in mine
    has_last = n_stages - 1 in mine
    offsets, clock_note, hosts = _clock_offsets(rank, world)
    total = cfg.warmup + cfg.steps
    first_profiled = total - cfg.profile_steps if cfg.trace_dir else total
    sync = recorder.sync
    prof = None
    losses_seen: list[float] = []
    if cfg.manual_gc:
        gc.disable()  # collect between steps only, like Megatron-LM's --manual-gc
    for step in range(total):
        for st in stages:
            st.submod.zero_grad(set_to_none=True)
        if cfg.manual_gc:
            gc.collect()
        if step == first_profiled:
            prof = profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if sync else []))
            prof.__enter__()
        dist.barrier()
        recorder.step = step
        recorder.progress(STEPPING)
        args = (x,) if has_first else ()
        kwargs: dict[str, Any] = {}
        losses: list[Any] = []
        if has_last:
            kwargs = {"target": y, "losses": losses}
        with record_function(f"ProfilerStep#{step}"):
            sched.step(*args, **kwargs)
        if losses:
            losses_seen.append(float(torch.stack([t.detach() for t in losses]).mean()))
    if cfg.manual_gc:
        gc.enable()
    if prof is not None:
        prof.__exit__(None, None, None)
        os.makedirs(str(cfg.trace_dir), exist_ok=True)
        prof.export_chrome_trace(os.path.join(str(cfg.trace_dir), f"rank{rank}.json"))
    dist.barrier()
    rows = [[rank, st, sg, k, mb, t0 - offsets[rank], t1 - offsets[rank]]
            for st, sg, k, mb, t0, t1 in recorder.rows]
    torch_order = {r: flatten_torch_order(list(sched.pipeline_order.get(r, [])))
                   for r in range(world)} if getattr(sched, "pipeline_order", None) else {}
    gathered: list[Any] = [None] * world if rank == 0 else []
    dist.gather_object({"rows": rows, "losses": losses_seen, "rank": rank, "peak_rss_bytes": _peak_rss_bytes()},
                       gathered if rank == 0 else None, dst=0)
    if rank != 0:
        return None
    events = [row for g in gathered for row in g["rows"]]
    loss_values: list[float] = next((g["losses"] for g in gathered if g["losses"]), [])
    return {
        "format": "bubblekit-lab-record/1",
        "config": cfg.to_dict(),
        "torch_version": torch.__version__,
        "hosts": hosts,
        "clock": clock_note,
        "placement": list(placement),
        "torch_static_orders": {str(r): o for r, o in torch_order.items()},
        "profiled_steps": list(range(first_profiled, total)),
        "losses": loss_values,
        "events": events,
        "peak_rss_bytes": [int(g["peak_rss_bytes"]) for g in sorted(gathered, key=lambda g: int(g["rank"]))],
    }
