"""Lab configuration and the PyTorch <-> bubblekit schedule names (no torch import).

Kept free of torch so that the command-line parser, the result reader and the schedule
name table work on a machine without torch. Schedule names resolve through bubblekit's
registry (:func:`bubblekit.schedules.spec`, :attr:`ScheduleSpec.torch_class`): the lab's own
table holds only what PyTorch's classes need (how stages are placed, how many per rank).
A registered schedule without a class, or a :class:`~bubblekit.Schedule` of one's own, is run
by PyTorch's ``_PipelineScheduleRuntime`` (:data:`RUNTIME`) from its compute-only CSV, kept in
:attr:`LabConfig.orders`.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bubblekit._validate import check_int

__all__ = ["LabConfig", "TORCH_SCHEDULES", "TorchScheduleInfo", "RUNTIME", "resolve_schedule", "bubblekit_name",
           "OPTION_NAMES", "field_of", "cpu_count", "ConfigFileError", "load_config", "runtime_problem"]

#: The command-line option of each :class:`LabConfig` field (``python -m bubblekit.lab run``).
OPTION_NAMES: dict[str, str] = {
    "schedule": "--schedule", "ranks": "--ranks", "microbatches": "--microbatches", "v": "--chunks",
    "hidden": "--hidden", "seq": "--seq", "batch": "--batch", "layers": "--layers", "steps": "--steps",
    "warmup": "--warmup", "backend": "--backend", "threads": "--threads", "seed": "--seed",
    "trace_dir": "--trace-dir", "profile_steps": "--profile-steps", "timeout_s": "--timeout",
    "schedule_file": "--schedule-file",
}


def field_of(exc: BaseException) -> str | None:
    """The :class:`LabConfig` field a validation error is about (``None`` when unknown).

    The command line uses it to name the option (:data:`OPTION_NAMES`) next to the message.
    """
    value = getattr(exc, "lab_field", None)
    return value if isinstance(value, str) else None


def _tagged(exc: Exception, name: str) -> Exception:
    exc.lab_field = name  # type: ignore[attr-defined]
    return exc


def cpu_count() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class TorchScheduleInfo:
    """One ``torch.distributed.pipelining`` schedule class and how the lab runs it.

    Only facts about PyTorch's class live here; which bubblekit schedule has the same order
    is the registry's ``torch_class`` field (:func:`bubblekit_name`).

    Attributes:
        short: the lab's name (``"1F1B"``), the class name without ``Schedule``.
        torch_class: the class name in ``torch.distributed.pipelining``.
        placement: ``"single"`` (one stage per rank), ``"loop"`` (stage s on rank s mod p)
            or ``"v"`` (V shape, two stages per rank).
        default_v: stages per rank when not given.
        min_v: the fewest stages per rank the class accepts.
    """

    short: str
    torch_class: str
    placement: str
    default_v: int
    min_v: int = 1


#: The seven schedules of ``torch.distributed.pipelining`` (torch 2.13), by lab name.
TORCH_SCHEDULES: dict[str, TorchScheduleInfo] = {
    info.short: info
    for info in (
        TorchScheduleInfo("GPipe", "ScheduleGPipe", "single", 1),
        TorchScheduleInfo("1F1B", "Schedule1F1B", "single", 1),
        TorchScheduleInfo("Interleaved1F1B", "ScheduleInterleaved1F1B", "loop", 2, 2),
        TorchScheduleInfo("LoopedBFS", "ScheduleLoopedBFS", "loop", 2, 2),
        TorchScheduleInfo("InterleavedZeroBubble", "ScheduleInterleavedZeroBubble", "loop", 1, 1),
        TorchScheduleInfo("ZBVZeroBubble", "ScheduleZBVZeroBubble", "v", 2, 2),
        TorchScheduleInfo("DualPipeV", "ScheduleDualPipeV", "v", 2, 2),
    )
}


#: How the lab runs any other schedule: PyTorch's ``_PipelineScheduleRuntime`` loads the schedule's
#: compute-only CSV (``_load_csv``, :meth:`bubblekit.Schedule.to_torch_csv`) and lowers it with its own
#: sends and receives; the stages sit where the file puts them.
RUNTIME = TorchScheduleInfo("Runtime", "_PipelineScheduleRuntime", "csv", 1)


def runtime_problem(sched: Any) -> str | None:
    """Why PyTorch's ``_PipelineScheduleRuntime`` cannot run the bubblekit :class:`~bubblekit.Schedule` ``sched``, or ``None``.

    Refused: two pipelines (DualPipe: PyTorch's stages are one chain, see
    :meth:`~bubblekit.Schedule.torch_problem`), an illegal schedule, fewer than 2 ranks, and an
    order that deadlocks (PyTorch's lowering could not place its sends and receives). Overlapped
    pairs run, as PyTorch runs every ``OVERLAP_F_B`` without an overlap function: forward part,
    then backward part (the executed order is :meth:`~bubblekit.Schedule.split_pairs`).
    """
    from bubblekit.schedules.base import ScheduleError

    problem = sched.torch_problem()
    if problem is not None:
        return problem
    if sched.p < 2:
        return f"it has {sched.p} rank; a pipeline run needs ranks >= 2"
    try:
        sched.to_torch_csv(comms=True)
    except ScheduleError as exc:
        return str(exc)
    return None


def _fits(chunks: str, v: int) -> bool:
    """Whether a registry entry with ``chunks`` (``"one"``, ``"two"``, ``"many"``) runs ``v`` chunks per rank."""
    return {"one": v == 1, "two": v == 2}.get(chunks, v >= 2)


def bubblekit_name(info: TorchScheduleInfo, v: int | None = None) -> str | None:
    """The registered bubblekit schedule whose order matches ``info``'s class at ``v``, or ``None``.

    Read from the registry (:attr:`bubblekit.schedules.ScheduleSpec.torch_class`), so a
    schedule registered with a ``torch_class`` is found here without a change to the lab. A
    one-chunk bubblekit schedule matches only ``v = 1`` (e.g. ``zb-h1`` is
    ``InterleavedZeroBubble`` with one stage per rank).
    """
    from bubblekit.schedules import REGISTRY

    vv = info.default_v if v is None else v
    for entry in REGISTRY.values():
        if entry.torch_class == info.torch_class and _fits(entry.chunks, vv):
            return entry.name
    return None


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "").replace("-", "").replace(" ", "")


def resolve_schedule(name: str) -> TorchScheduleInfo:
    """Find a schedule by lab name (``"1F1B"``), PyTorch class name or bubblekit name, any case.

    Lab and class names are PyTorch's; every other name goes through bubblekit's registry
    (:func:`bubblekit.schedules.spec`, aliases included: ``"interleaved"``, ``"zbv"``,
    ``"naive"``) and its ``torch_class``.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: an unknown name, or a bubblekit schedule PyTorch does not have; the
            message lists the accepted names.
    """
    if not isinstance(name, str):
        raise TypeError(f"schedule must be a string such as '1F1B', got {name!r}")
    key = _key(name)
    for info in TORCH_SCHEDULES.values():
        if key in (_key(info.short), _key(info.torch_class)):
            return info
    from bubblekit.schedules import spec

    choices = f"choose one of {', '.join(TORCH_SCHEDULES)} (PyTorch class names and bubblekit names are accepted too)"
    try:
        entry = spec(name)
    except ValueError as exc:
        raise ValueError(f"unknown schedule {name!r}: {choices}") from exc
    for info in TORCH_SCHEDULES.values():
        if entry.torch_class == info.torch_class:
            return info
    raise ValueError(f"bubblekit's schedule {entry.name!r} has no torch.distributed.pipelining class to run it: "
                     f"{choices}")


def _default_threads(ranks: int) -> int:
    return max(1, cpu_count() // max(1, ranks))


@dataclass(frozen=True)
class LabConfig:
    """Everything one lab run needs. Sizes are per microbatch and per stage.

    Attributes:
        schedule: lab name of the schedule (see :data:`TORCH_SCHEDULES`), or the registry name of
            a bubblekit schedule without a PyTorch class (``"zb-h2"``; run from its CSV), or, with
            ``orders``, any label.
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
        timeout_s: wall-clock limit of the whole run, in seconds (finite, > 0); workers are
            killed after it and the rank that stopped progressing first is named.
        manual_gc: run Python's garbage collector between steps only (not inside actions).
        extra: more options. ``extra["stall_action"] = "1F0"`` makes the rank that owns that
            action sleep inside it for good (fault injection: the tests use it to check that a
            stuck rank is named when the run times out).
        orders: the schedule to run as PyTorch's compute-only CSV text
            (:meth:`bubblekit.Schedule.to_torch_csv`); ``_PipelineScheduleRuntime`` loads it and the
            stages sit where it puts them. Set for a registered schedule without a PyTorch class
            (built from the registry) and by :meth:`for_schedule`; ``None`` runs PyTorch's class.

    Every field is checked on construction; a bad one raises a ``TypeError`` / ``ValueError``
    naming it (:func:`field_of` gives the field, :data:`OPTION_NAMES` its command-line option).
    The schedule's own rules are bubblekit's: the configuration builds bubblekit's schedule
    of the same name (e.g. DualPipeV needs microbatches >= 2 x ranks).
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
    orders: str | None = None

    def __post_init__(self) -> None:
        if self.orders is None:
            try:
                info = resolve_schedule(self.schedule)
            except (TypeError, ValueError) as exc:
                if not self._runs_in_runtime(exc):
                    raise _tagged(exc, "schedule") from None
                info = RUNTIME
            else:
                object.__setattr__(self, "schedule", info.short)
        else:
            info = RUNTIME
            self._read_orders()
        for name in ("ranks", "microbatches", "hidden", "seq", "batch", "layers", "steps", "warmup",
                     "profile_steps", "seed"):
            minimum = 0 if name in ("warmup", "seed") else 1
            try:
                check_int(name, getattr(self, name), minimum=minimum)
            except (TypeError, ValueError) as exc:
                raise _tagged(exc, name) from None
        if self.ranks < 2:
            raise _tagged(ValueError(f"ranks must be >= 2 for a pipeline, got {self.ranks}"), "ranks")
        try:
            v = info.default_v if self.v is None else check_int("v", self.v, minimum=1)
        except (TypeError, ValueError) as exc:
            raise _tagged(exc, "v") from None
        if info is RUNTIME:
            v = self._runtime_v(v)
        problem = ""
        if info.placement == "single" and v != 1:
            problem = "it has one stage per rank (v=1)"
        elif info.placement == "v" and v != 2:
            problem = "its V shape has exactly 2 stages per rank"
        elif info.placement == "loop" and v < info.min_v:
            problem = f"it needs v >= {info.min_v} stages per rank"
        if problem:
            raise _tagged(ValueError(f"v={v} is not allowed for {info.short}: {problem}"), "v")
        object.__setattr__(self, "v", v)
        if self.backend not in ("gloo", "nccl"):
            raise _tagged(ValueError(f"backend must be 'gloo' (CPU) or 'nccl' (GPUs), got {self.backend!r}"),
                          "backend")
        if self.threads is None:
            object.__setattr__(self, "threads", _default_threads(self.ranks))
        else:
            try:
                check_int("threads", self.threads, minimum=1)
            except (TypeError, ValueError) as exc:
                raise _tagged(exc, "threads") from None
        t = self.timeout_s
        if isinstance(t, bool) or not isinstance(t, numbers.Real):
            raise _tagged(TypeError(f"timeout_s must be a number of seconds, got {t!r} of type {type(t).__name__}"),
                          "timeout_s")
        if not (math.isfinite(float(t)) and float(t) > 0):
            raise _tagged(ValueError(f"timeout_s must be a finite number of seconds > 0 (the run is killed after "
                                     f"it), got {t!r}"), "timeout_s")
        if self.trace_dir is not None and not (isinstance(self.trace_dir, str) and self.trace_dir):
            raise _tagged(TypeError(f"trace_dir must be a folder path (str) or None, got {self.trace_dir!r}"),
                          "trace_dir")
        if not isinstance(self.extra, dict):
            raise _tagged(TypeError(f"extra must be a dict, got {self.extra!r}"), "extra")
        stall = self.extra.get("stall_action")
        if stall is not None:
            from bubblekit.actions import parse_action

            try:
                parse_action(stall)
            except (TypeError, ValueError) as exc:
                raise _tagged(ValueError(f"extra['stall_action'] must be an action such as '1F0', got {stall!r}"),
                              "extra") from exc
        self._check_bubblekit_rules(info, v)

    # ---------------------------------------------------- schedules run by _PipelineScheduleRuntime
    def _runs_in_runtime(self, exc: Exception) -> bool:
        """True when ``schedule`` names a registered bubblekit schedule with no PyTorch class (run from its CSV)."""
        from bubblekit.schedules import spec

        if not isinstance(exc, ValueError) or not isinstance(self.schedule, str):
            return False
        try:
            entry = spec(self.schedule)
        except ValueError:
            return False
        if entry.torch_class is not None:
            return False
        object.__setattr__(self, "schedule", entry.name)
        return True

    def _runtime_v(self, v_given: int) -> int:
        """For a schedule run from its CSV: build a registered one (its rules apply), read the file; the chunks per rank."""
        from bubblekit.schedules import schedule, spec

        if self.orders is None:  # a registered bubblekit schedule: build it, then its CSV
            entry = spec(self.schedule)
            try:
                for name in ("ranks", "microbatches"):
                    check_int(name, getattr(self, name))
            except (TypeError, ValueError) as exc:
                raise _tagged(exc, name) from None
            try:
                vv = entry.resolve_v(self.v)
            except (TypeError, ValueError) as exc:
                raise _tagged(exc, "v") from None
            try:
                sched = schedule(entry.name, self.ranks, self.microbatches, vv)
            except ValueError as exc:
                raise _tagged(ValueError(
                    f"{entry.name} cannot run with ranks={self.ranks}, microbatches={self.microbatches}: {exc} "
                    f"(checked before starting any worker)"), "microbatches") from None
            problem = runtime_problem(sched)
            if problem is not None:
                raise _tagged(ValueError(
                    f"the lab cannot run {entry.name!r} through PyTorch's _PipelineScheduleRuntime: {problem}"),
                    "schedule")
            object.__setattr__(self, "orders", sched.to_torch_csv())
            self._read_orders()
        sched = self.runtime_schedule
        counts = [len(sched.stages_of(r)) for r in range(sched.p)]
        v = max(counts)
        if self.v is not None and v_given != v:
            raise _tagged(ValueError(f"v={v_given} is not allowed for {self.schedule!r}: its schedule puts "
                                     f"{'/'.join(map(str, counts))} stages on its ranks"), "v")
        return v

    def _read_orders(self) -> None:
        """Read ``orders`` (PyTorch's compute-only CSV) as a bubblekit schedule; refuse what PyTorch cannot run."""
        from bubblekit.schedules.base import Schedule

        if not isinstance(self.orders, str):
            raise _tagged(TypeError(f"orders must be PyTorch's schedule CSV text (Schedule.to_torch_csv()), got "
                                    f"{type(self.orders).__name__}"), "schedule")
        if not isinstance(self.schedule, str) or not self.schedule.strip():
            raise _tagged(TypeError(f"schedule must name the schedule (a non-empty string), got {self.schedule!r}"),
                          "schedule")
        for name in ("ranks", "microbatches"):
            try:
                check_int(name, getattr(self, name))
            except (TypeError, ValueError) as exc:
                raise _tagged(exc, name) from None
        try:
            sched = Schedule.from_torch_csv(text=self.orders, m=self.microbatches, name=self.schedule)
        except ValueError as exc:
            raise _tagged(ValueError(f"the schedule {self.schedule!r} cannot be read: {exc}"), "schedule") from None
        if sched.p != self.ranks:
            raise _tagged(ValueError(f"the schedule {self.schedule!r} has {sched.p} rank(s) but ranks={self.ranks}: "
                                     f"give the schedule's own"), "ranks")
        problem = runtime_problem(sched)
        if problem is not None:
            raise _tagged(ValueError(f"the lab cannot run {self.schedule!r} through PyTorch's "
                                     f"_PipelineScheduleRuntime: {problem}"), "schedule")
        object.__setattr__(self, "_parsed", sched)

    @classmethod
    def for_schedule(cls, sched: Any, **options: Any) -> LabConfig:
        """The configuration that runs the bubblekit :class:`~bubblekit.Schedule` ``sched`` (a learner's too).

        Its ranks and microbatches are the schedule's (``ranks=`` / ``microbatches=`` in
        ``options`` must agree); PyTorch's ``_PipelineScheduleRuntime`` runs its compute-only CSV.
        Refuses, naming the schedule and why, what that runtime cannot run (:func:`runtime_problem`).
        """
        from bubblekit.schedules.base import Schedule

        if not isinstance(sched, Schedule):
            raise _tagged(TypeError(f"schedule must be a schedule name (str) or a bubblekit Schedule, got "
                                    f"{type(sched).__name__}"), "schedule")
        for name, own in (("ranks", sched.p), ("microbatches", sched.m)):
            given = options.pop(name, None)
            if given is not None and given != own:
                raise _tagged(ValueError(f"{name}={given!r} but the schedule {sched.name!r} has {name}={own}: leave "
                                         f"{name} out (a Schedule brings its own)"), name)
        for name in ("orders", "schedule"):
            if name in options:
                raise _tagged(TypeError(f"{name} is given by the Schedule itself"), name)
        problem = runtime_problem(sched)
        if problem is not None:
            raise _tagged(ValueError(f"the lab cannot run {sched.name!r} through PyTorch's _PipelineScheduleRuntime: "
                                     f"{problem}"), "schedule")
        return cls(schedule=sched.name, ranks=sched.p, microbatches=sched.m, orders=sched.to_torch_csv(), **options)

    @property
    def runtime_schedule(self) -> Any:
        """The bubblekit :class:`~bubblekit.Schedule` run through ``_PipelineScheduleRuntime`` (``None`` for PyTorch's classes)."""
        return getattr(self, "_parsed", None)

    def _check_bubblekit_rules(self, info: TorchScheduleInfo, v: int) -> None:
        """Build bubblekit's schedule of the same name: its rules (e.g. DualPipeV's m >= 2p) apply before any worker starts."""
        name = bubblekit_name(info, v) if info is not RUNTIME else None
        if name is None:
            return
        from bubblekit.schedules import schedule

        try:
            schedule(name, self.ranks, self.microbatches, v)
        except ValueError as exc:
            raise _tagged(ValueError(
                f"{info.short} cannot run with ranks={self.ranks}, microbatches={self.microbatches}, v={v}: "
                f"{exc} (bubblekit's {name!r}, checked before starting any worker)"), "microbatches") from None

    @property
    def info(self) -> TorchScheduleInfo:
        """The schedule's :class:`TorchScheduleInfo` (:data:`RUNTIME` for a schedule run from its CSV)."""
        return RUNTIME if self.orders is not None else TORCH_SCHEDULES[self.schedule]

    @property
    def n_stages(self) -> int:
        """Model stages: ``ranks * v`` (a schedule run from its CSV: its own count)."""
        if self.orders is not None:
            return int(self.runtime_schedule.n_stages)
        return self.ranks * int(self.v or 1)

    def placement(self) -> tuple[int, ...]:
        """``placement[s]`` = rank of stage ``s`` (PyTorch's loop or V mapping, or where the CSV puts it)."""
        if self.orders is not None:
            return tuple(self.runtime_schedule.placement)
        p, n = self.ranks, self.n_stages
        kind = self.info.placement
        if kind == "v":
            return tuple(s if s < p else 2 * p - 1 - s for s in range(n))
        return tuple(s % p for s in range(n))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dictionary (for the worker and the saved record)."""
        return asdict(self)


class ConfigFileError(ValueError):
    """A lab worker's configuration file that cannot be used; the message names the file and the problem."""


def load_config(path: str | os.PathLike[str]) -> LabConfig:
    """The :class:`LabConfig` in a worker's configuration file (JSON, :meth:`LabConfig.to_dict`'s keys).

    The launcher writes this file for each worker (``python -m bubblekit.lab worker
    --config-file FILE``). A file that is missing, unreadable, not UTF-8 JSON, not a JSON object,
    with a key :class:`LabConfig` does not have, or with a bad value raises
    :class:`ConfigFileError` naming the file and what is wrong (for a bad value, the field).
    """
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigFileError(f"lab worker config file {where}: cannot read it ({reason}); the launcher writes it "
                              f"(python -m bubblekit.lab run ...)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(f"lab worker config file {where}: not JSON ({exc.msg} at line {exc.lineno}, column "
                              f"{exc.colno}); expected an object such as {{\"schedule\": \"1F1B\", \"ranks\": 2}}") from None
    if not isinstance(data, dict):
        raise ConfigFileError(f"lab worker config file {where}: holds a JSON {type(data).__name__}, expected an object "
                              f"such as {{\"schedule\": \"1F1B\", \"ranks\": 2}}")
    known = set(LabConfig.__dataclass_fields__)
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ConfigFileError(f"lab worker config file {where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                              f"the keys are {', '.join(sorted(known))}")
    try:
        return LabConfig(**data)
    except (TypeError, ValueError) as exc:
        field_name = field_of(exc)
        about = f" (field {field_name!r})" if field_name else ""
        err = ConfigFileError(f"lab worker config file {where}: bad value{about}: {exc}")
        if field_name:
            _tagged(err, field_name)
        raise err from None
