"""Per-rank progress shared between the lab's workers and their launcher (no torch import).

The launcher creates a small file of ``ranks`` fixed-size slots and passes its path to the
workers (environment variable ``BUBBLEKIT_LAB_PROGRESS``). Each worker maps the file and
writes its own slot: its phase, its step, how many compute actions it has started and
finished, the action it is on, and the time of that update (``time.perf_counter_ns``, the
machine-wide monotonic clock on Linux). A write is a memory store into the shared mapping,
no system call, so timing an action is not disturbed. When a run passes its time limit
the launcher reads the slots and names the rank that stopped progressing first
(:func:`describe_stall`).
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ENV_VAR", "RankProgress", "ProgressBoard", "describe_stall", "STARTING", "JOINED", "STEPPING", "DONE"]

#: Environment variable holding the progress file's path for a worker.
ENV_VAR = "BUBBLEKIT_LAB_PROGRESS"

#: Phases a worker goes through (a slot of zeros is :data:`STARTING`).
STARTING, JOINED, STEPPING, DONE = 0, 1, 2, 3
_PHASES = {STARTING: "starting (importing torch, joining the process group)", JOINED: "joined the process group",
           STEPPING: "running steps", DONE: "done"}

_SLOT = struct.Struct("<8q")  # phase, step, started, finished, stage, kind (ord), microbatch, t_ns


@dataclass(frozen=True)
class RankProgress:
    """One rank's slot, as read by the launcher.

    Attributes:
        rank: the rank.
        phase: :data:`STARTING`, :data:`JOINED`, :data:`STEPPING` or :data:`DONE`.
        step: the step it is in (warm-up steps included, from 0; -1 before the first).
        started, finished: compute actions started and finished so far (all steps).
        action: the last action started (``"1F0"``), ``""`` before the first.
        t_ns: ``time.perf_counter_ns()`` of its last update (0 = never written).
    """

    rank: int
    phase: int
    step: int
    started: int
    finished: int
    action: str
    t_ns: int

    @property
    def inside_action(self) -> bool:
        """True when the rank started an action and has not finished it."""
        return self.started > self.finished


class ProgressBoard:
    """The shared progress file: created by the launcher, written by each worker in its own slot."""

    def __init__(self, path: str | Path, ranks: int, *, create: bool = False) -> None:
        self.path = Path(path)
        self.ranks = ranks
        if create:
            self.path.write_bytes(b"\0" * (_SLOT.size * ranks))
        self._fh = open(self.path, "r+b")  # noqa: SIM115 - kept open for the mapping's lifetime
        self._map = mmap.mmap(self._fh.fileno(), _SLOT.size * ranks)

    @classmethod
    def from_env(cls, ranks: int) -> ProgressBoard | None:
        """The board named by :data:`ENV_VAR`, or ``None`` (e.g. under ``torchrun``)."""
        path = os.environ.get(ENV_VAR)
        if not path or not Path(path).is_file():
            return None
        return cls(path, ranks)

    def write(self, rank: int, phase: int, step: int, started: int, finished: int,
              stage: int = -1, kind: str = "", microbatch: int = -1) -> None:
        """Write ``rank``'s slot with the current time."""
        _SLOT.pack_into(self._map, rank * _SLOT.size, phase, step, started, finished, stage,
                        ord(kind) if kind else 0, microbatch, time.perf_counter_ns())

    def read(self) -> list[RankProgress]:
        """Every rank's slot."""
        out = []
        for r in range(self.ranks):
            phase, step, started, finished, stage, kind, mb, t_ns = _SLOT.unpack_from(self._map, r * _SLOT.size)
            action = f"{stage}{chr(kind)}{mb}" if kind else ""
            out.append(RankProgress(r, phase, step if t_ns else -1, started, finished, action, t_ns))
        return out

    def close(self) -> None:
        """Unmap and close the file."""
        try:
            self._map.close()
        finally:
            self._fh.close()


def _where(p: RankProgress) -> str:
    if p.phase == STARTING:
        return "was still starting (importing torch, joining the process group)"
    if p.phase == DONE:
        return "had finished"
    if p.started == 0:
        return f"had joined but started no action (step {p.step})"
    if p.inside_action:
        return f"was inside its action {p.action} (step {p.step})"
    return (f"had finished {p.action} (step {p.step}, {p.finished} actions done) and was waiting, "
            f"most likely to receive from a neighbour")


def describe_stall(progress: list[RankProgress], now_ns: int, alive: list[bool]) -> tuple[int | None, str]:
    """Which rank stopped progressing, and a sentence about every rank.

    Args:
        progress: the slots (:meth:`ProgressBoard.read`).
        now_ns: ``time.perf_counter_ns()`` at the limit.
        alive: per rank, whether its process was still running.

    Returns:
        ``(rank, text)``. ``rank`` is, among the ranks still running: one that never joined
        the process group while others did; else the one stuck inside an action the
        longest (a rank that waits for a message is waiting on another rank; a rank inside
        an action is not); else, when every rank is waiting, the one whose last update is
        the oldest (it stopped first). ``None`` when no rank had joined the process group
        (they were all still starting). ``text`` says where each rank was.
    """
    running = [p for p in progress if alive[p.rank] and p.phase != DONE]
    joined = [p for p in running if p.phase != STARTING]
    culprit: int | None = None
    if joined:
        never = [p for p in running if p.phase == STARTING]
        inside = [p for p in joined if p.inside_action]
        if never:
            culprit = never[0].rank
        elif inside:
            culprit = min(inside, key=lambda p: p.t_ns).rank
        else:
            culprit = min(joined, key=lambda p: p.t_ns).rank
    parts = []
    for p in progress:
        if not alive[p.rank]:
            parts.append(f"rank {p.rank} had exited")
            continue
        since = f" (last progress {(now_ns - p.t_ns) / 1e9:.1f} s before the limit)" if p.t_ns else ""
        parts.append(f"rank {p.rank} {_where(p)}{since}")
    return culprit, "; ".join(parts)


def phase_name(phase: int) -> str:
    """Words for a phase number."""
    return _PHASES.get(phase, f"phase {phase}")
