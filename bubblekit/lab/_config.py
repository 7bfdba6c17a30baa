"""Lab configuration and the PyTorch <-> bubblekit schedule names (no torch import).

Kept free of torch so that the command-line parser, the result reader and the schedule
name table work on a machine without torch.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from bubblekit._validate import check_int

__all__ = ["LabConfig", "TORCH_SCHEDULES", "TorchScheduleInfo", "resolve_schedule", "bubblekit_name"]


@dataclass(frozen=True)
class TorchScheduleInfo:
    """One ``torch.distributed.pipelining`` schedule class and how the lab runs it.

    Attributes:
        short: the lab's name (``"1F1B"``), the class name without ``Schedule``.
        torch_class: the class name in ``torch.distributed.pipelining``.
        placement: ``"single"`` (one stage per rank), ``"loop"`` (stage s on rank s mod p)
            or ``"v"`` (V shape, two stages per rank).
        bubblekit: the bubblekit registry name with the same order (``None`` when bubblekit
            has no registered counterpart; the lab then compares with PyTorch's own order).
        default_v: stages per rank when not given.
        min_v: the fewest stages per rank the class accepts.
    """

    short: str
    torch_class: str
    placement: str
    bubblekit: str | None
    default_v: int
    min_v: int = 1


#: The seven schedules of ``torch.distributed.pipelining`` (torch 2.13), by lab name.
TORCH_SCHEDULES: dict[str, TorchScheduleInfo] = {
    info.short: info
    for info in (
        TorchScheduleInfo("GPipe", "ScheduleGPipe", "single", "gpipe", 1),
        TorchScheduleInfo("1F1B", "Schedule1F1B", "single", "1f1b", 1),
        TorchScheduleInfo("Interleaved1F1B", "ScheduleInterleaved1F1B", "loop", "interleaved", 2, 2),
        TorchScheduleInfo("LoopedBFS", "ScheduleLoopedBFS", "loop", "looped-bfs", 2, 2),
        TorchScheduleInfo("InterleavedZeroBubble", "ScheduleInterleavedZeroBubble", "loop", "zb-h1", 1, 1),
        TorchScheduleInfo("ZBVZeroBubble", "ScheduleZBVZeroBubble", "v", "zbv", 2, 2),
        TorchScheduleInfo("DualPipeV", "ScheduleDualPipeV", "v", "dualpipev", 2, 2),
    )
}


def bubblekit_name(info: TorchScheduleInfo, v: int | None = None) -> str | None:
    """The registered bubblekit schedule whose order matches ``info``'s class at ``v``, or ``None``.

    The registry's ``torch_class`` field wins (other helpers register new schedules with it);
    the static table above is the fallback. A one-chunk bubblekit schedule matches only
    ``v = 1`` (e.g. ``zb-h1`` is ``InterleavedZeroBubble`` with one stage per rank).
    """
    from bubblekit.schedules import REGISTRY

    vv = info.default_v if v is None else v

    def fits(chunks: str) -> bool:
        return {"one": vv == 1, "two": vv == 2}.get(chunks, vv >= 2)

    for spec in REGISTRY.values():
        if spec.torch_class == info.torch_class and fits(spec.chunks):
            return spec.name
    if info.bubblekit is not None and info.bubblekit in REGISTRY and fits(REGISTRY[info.bubblekit].chunks):
        return info.bubblekit
    return None


def resolve_schedule(name: str) -> TorchScheduleInfo:
    """Find a schedule by lab name (``"1F1B"``), class name or bubblekit name, any case.

    Raises ``ValueError`` listing the accepted names.
    """
    if not isinstance(name, str):
        raise TypeError(f"schedule must be a string such as '1F1B', got {name!r}")
    key = name.strip().lower().replace("_", "").replace("-", "")
    for info in TORCH_SCHEDULES.values():
        names = {info.short, info.torch_class, info.bubblekit or ""}
        if key in {n.lower().replace("_", "").replace("-", "") for n in names if n}:
            return info
    aliases = {"interleaved": "Interleaved1F1B", "zbv": "ZBVZeroBubble", "zbh1": "InterleavedZeroBubble",
               "zb1p": "InterleavedZeroBubble", "bfs": "LoopedBFS", "dualpipe": "DualPipeV"}
    if key in aliases:
        return TORCH_SCHEDULES[aliases[key]]
    raise ValueError(
        f"unknown schedule {name!r}: choose one of {', '.join(TORCH_SCHEDULES)} "
        f"(PyTorch class names and bubblekit names are accepted too)"
    )


def _default_threads(ranks: int) -> int:
    return max(1, (os.cpu_count() or 1) // max(1, ranks))


@dataclass(frozen=True)
class LabConfig:
    """Everything one lab run needs. Sizes are per microbatch and per stage.

    Attributes:
        schedule: lab name of the schedule (see :data:`TORCH_SCHEDULES`).
        ranks: pipeline ranks (processes).
        microbatches: microbatches per step.
        v: stages per rank (1 for GPipe / 1F1B, 2 for the V schedules, >= 2 for looped ones).
        hidden: model width (features).
        seq: tokens per sample.
        batch: samples per microbatch.
        layers: transformer-like blocks per stage.
        steps: measured training steps; warmup: unmeasured steps run first.
        backend: ``"gloo"`` (CPU) or ``"nccl"`` (one GPU per rank).
        threads: torch intra-op threads per rank (default: CPU cores / ranks).
        seed: input seed.
        trace_dir: when set, each rank writes a ``torch.profiler`` Chrome trace there
            (``rank{r}.json``) of the last ``profile_steps`` steps.
        profile_steps: steps covered by the profiler trace.
        timeout_s: wall-clock limit of the whole run, in seconds; workers are killed after it.
        manual_gc: run Python's garbage collector between steps only (not inside actions).
    """

    schedule: str = "1F1B"
    ranks: int = 2
    microbatches: int = 4
    v: int | None = None
    hidden: int = 64
    seq: int = 32
    batch: int = 2
    layers: int = 1
    steps: int = 3
    warmup: int = 1
    backend: str = "gloo"
    threads: int | None = None
    seed: int = 0
    trace_dir: str | None = None
    profile_steps: int = 1
    timeout_s: float = 120.0
    manual_gc: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        info = resolve_schedule(self.schedule)
        object.__setattr__(self, "schedule", info.short)
        for name in ("ranks", "microbatches", "hidden", "seq", "batch", "layers", "steps"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("warmup", self.warmup, minimum=0)
        check_int("profile_steps", self.profile_steps, minimum=1)
        if self.ranks < 2:
            raise ValueError(f"ranks must be >= 2 for a pipeline, got {self.ranks}")
        v = info.default_v if self.v is None else check_int("v", self.v, minimum=1)
        if info.placement == "single" and v != 1:
            raise ValueError(f"v={v} is not allowed for {info.short}: it has one stage per rank (v=1)")
        if info.placement == "v" and v != 2:
            raise ValueError(f"v={v} is not allowed for {info.short}: its V shape has exactly 2 stages per rank")
        if info.placement == "loop" and v < info.min_v:
            raise ValueError(f"v={v} is not allowed for {info.short}: it needs v >= {info.min_v} stages per rank")
        object.__setattr__(self, "v", v)
        if self.backend not in ("gloo", "nccl"):
            raise ValueError(f"backend must be 'gloo' (CPU) or 'nccl' (GPUs), got {self.backend!r}")
        if self.threads is None:
            object.__setattr__(self, "threads", _default_threads(self.ranks))
        else:
            check_int("threads", self.threads, minimum=1)
        if not (isinstance(self.timeout_s, (int, float)) and self.timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s!r}")

    @property
    def info(self) -> TorchScheduleInfo:
        """The schedule's :class:`TorchScheduleInfo`."""
        return TORCH_SCHEDULES[self.schedule]

    @property
    def n_stages(self) -> int:
        """Model stages: ``ranks * v``."""
        return self.ranks * int(self.v or 1)

    def placement(self) -> tuple[int, ...]:
        """``placement[s]`` = rank of stage ``s`` (PyTorch's loop or V mapping)."""
        p, n = self.ranks, self.n_stages
        kind = self.info.placement
        if kind == "v":
            return tuple(s if s < p else 2 * p - 1 - s for s in range(n))
        return tuple(s % p for s in range(n))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dictionary (for the worker and the saved record)."""
        return asdict(self)
