"""The :class:`Schedule` type: per rank, an ordered list of actions, plus a placement.

A schedule says *what each rank does, in which order*; it says nothing about time.
Time comes from :func:`bubblekit.simulate` under a :class:`bubblekit.Costs` model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain, repeat
from operator import itemgetter

from bubblekit.actions import Action, parse_action

__all__ = ["Schedule", "looped_placement", "v_placement", "ScheduleError"]


class ScheduleError(ValueError):
    """A schedule that is malformed: a missing, duplicate or misplaced action."""


def looped_placement(p: int, v: int) -> tuple[int, ...]:
    """Stage ``s`` on rank ``s mod p`` (Megatron interleaved, looped BFS)."""
    return tuple(s % p for s in range(p * v))


def v_placement(p: int) -> tuple[int, ...]:
    """V shape with two chunks per rank: stages go down ranks 0..p-1, then back up.

    Stage ``s < p`` is on rank ``s``; stage ``s >= p`` is on rank ``2p - 1 - s``. Used by
    ZB-V and DualPipeV, so rank 0 holds the first and the last stage.
    """
    return tuple(s if s < p else 2 * p - 1 - s for s in range(2 * p))


@dataclass(frozen=True)
class Schedule:
    """Per-rank action orders of one training step.

    Attributes:
        name: registry name (``"1f1b"``) or ``"custom"``.
        p: number of ranks (devices).
        m: number of microbatches in the step.
        placement: ``placement[s]`` is the rank holding stage ``s``; ``len(placement)``
            is the number of stages (``p * v``).
        orders: ``orders[r]`` is rank ``r``'s actions in execution order.
        source: where the schedule comes from (paper, repository).
    """

    name: str
    p: int
    m: int
    placement: tuple[int, ...]
    orders: tuple[tuple[Action, ...], ...]
    source: str = ""
    notes: dict[str, str] = field(default_factory=dict, compare=False)

    # ----------------------------------------------------------------- shape
    @property
    def n_stages(self) -> int:
        """Number of model stages (``p * v``)."""
        return len(self.placement)

    @property
    def v(self) -> int:
        """Stages (chunks) per rank."""
        return self.n_stages // self.p

    @property
    def split_backward(self) -> bool:
        """True when backward is split into ``I`` and ``W`` actions."""
        return any(a.kind in ("I", "W") for order in self.orders for a in order)

    @property
    def n_actions(self) -> int:
        """Total number of actions over all ranks."""
        return sum(len(order) for order in self.orders)

    def stages_of(self, rank: int) -> tuple[int, ...]:
        """Stages held by ``rank``, in model order."""
        return tuple(s for s, r in enumerate(self.placement) if r == rank)

    # ---------------------------------------------------------------- checks
    def validate(self) -> None:
        """Raise :class:`ScheduleError` unless every action appears exactly once on its rank.

        Expected actions: for each stage and microbatch, ``F`` and either ``B`` or both
        ``I`` and ``W``. Dependencies that can never be met are found by the simulator,
        which names the blocked ranks.
        """
        if len(self.orders) != self.p:
            raise ScheduleError(f"schedule has {len(self.orders)} rank orders but p={self.p}")
        for stage, rank in enumerate(self.placement):
            if not 0 <= rank < self.p:
                raise ScheduleError(f"placement puts stage {stage} on rank {rank}, outside 0..{self.p - 1}")
        if not self._looks_legal():
            self._explain_problems()

    def check_ranges(self) -> None:
        """Raise :class:`ScheduleError` unless every action's stage, rank and microbatch exist.

        The part of :meth:`validate` that even a partial schedule (``simulate(...,
        validate=False)``, e.g. a forward-only factory line) must pass: each action's
        stage is in ``0..n_stages-1`` and held by the rank that runs it, and its
        microbatch is in ``0..m-1``. Missing or repeated actions are allowed.
        """
        if len(self.orders) != self.p:
            raise ScheduleError(f"schedule has {len(self.orders)} rank orders but p={self.p}")
        get_stage, get_mb = itemgetter(0), itemgetter(2)
        for rank, order in enumerate(self.orders):
            if not order:
                continue
            stages, mbs = set(map(get_stage, order)), set(map(get_mb, order))
            bad_stage = [s for s in stages if not (type(s) is int and 0 <= s < self.n_stages and self.placement[s] == rank)]
            bad_mb = [i for i in mbs if not (type(i) is int and 0 <= i < self.m)]
            if bad_stage or bad_mb:
                a = next(a for a in order if a.stage in bad_stage or a.microbatch in bad_mb)
                if a.stage in bad_stage and 0 <= a.stage < self.n_stages:
                    raise ScheduleError(f"rank {rank} has {a}, but stage {a.stage} is on rank {self.placement[a.stage]}")
                if a.stage in bad_stage:
                    raise ScheduleError(f"rank {rank} has {a}, but stages are 0..{self.n_stages - 1}")
                raise ScheduleError(f"rank {rank} has {a}, but microbatches are 0..{self.m - 1}")

    def _looks_legal(self) -> bool:
        """Fast check (C-level set and counter passes): True only if the schedule is legal.

        False means "maybe not": :meth:`_explain_problems` then does the slow, exact
        check and raises with the full list of problems.
        """
        n_stages, m = self.n_stages, self.m
        get_stage, get_kind, get_mb = itemgetter(0), itemgetter(1), itemgetter(2)
        total = 0
        for rank, order in enumerate(self.orders):
            if not order:
                continue
            total += len(order)
            stages = set(map(get_stage, order))
            if not all(type(s) is int and 0 <= s < n_stages and self.placement[s] == rank for s in stages):
                return False
            mbs = set(map(get_mb, order))
            if set(map(type, mbs)) != {int} or min(mbs) < 0 or max(mbs) >= m:
                return False
        everything = chain.from_iterable(self.orders)
        if len(set(everything)) != total:  # duplicates
            return False
        kinds = Counter(map(get_kind, chain.from_iterable(self.orders)))
        pairs = n_stages * m
        n_f, n_b, n_i, n_w = kinds.pop("F", 0), kinds.pop("B", 0), kinds.pop("I", 0), kinds.pop("W", 0)
        if kinds or n_f != pairs or n_b + n_i != pairs or n_i != n_w:
            return False
        if n_b == 0 or n_i == 0:
            return True  # all full backward, or all split: unique and in range means complete
        # mixed (DualPipeV): each (stage, microbatch) has B alone or both I and W
        by_kind: dict[str, set[tuple[int, int]]] = {"B": set(), "I": set(), "W": set()}
        for a in chain.from_iterable(self.orders):
            if a[1] != "F":
                by_kind[a[1]].add((a[0], a[2]))
        return by_kind["I"] == by_kind["W"] and not (by_kind["B"] & by_kind["I"])

    def _explain_problems(self) -> None:
        """The exact, slow check: raise :class:`ScheduleError` listing every problem found."""
        problems: list[str] = []
        counts: Counter[Action] = Counter()
        for rank, order in enumerate(self.orders):
            for a in order:
                if not 0 <= a.stage < self.n_stages:
                    problems.append(f"rank {rank} has {a}, but stages are 0..{self.n_stages - 1}")
                elif self.placement[a.stage] != rank:
                    problems.append(
                        f"rank {rank} has {a}, but stage {a.stage} is on rank {self.placement[a.stage]}"
                    )
                if not 0 <= a.microbatch < self.m:
                    problems.append(f"rank {rank} has {a}, but microbatches are 0..{self.m - 1}")
                counts[a] += 1
        for a, c in counts.items():
            if c > 1:
                problems.append(f"{a} appears {c} times")
        for s in range(self.n_stages):
            for mb in range(self.m):
                if counts[Action(s, "F", mb)] == 0:
                    problems.append(f"{Action(s, 'F', mb)} is missing (rank {self.placement[s]})")
                has_b = counts[Action(s, "B", mb)] > 0
                has_i = counts[Action(s, "I", mb)] > 0
                has_w = counts[Action(s, "W", mb)] > 0
                if has_b and (has_i or has_w):
                    problems.append(f"stage {s} microbatch {mb} has both B and I/W: use one or the other")
                elif not has_b and not (has_i and has_w):
                    missing = "B (or I and W)" if not (has_i or has_w) else ("W" if has_i else "I")
                    problems.append(
                        f"{s}{missing.split()[0]}{mb} is missing (rank {self.placement[s]})"
                        if missing in ("I", "W")
                        else f"{Action(s, 'B', mb)} (or {s}I{mb} and {s}W{mb}) is missing (rank {self.placement[s]})"
                    )
        if problems:
            shown = problems[:12]
            more = f"\n  ... and {len(problems) - 12} more" if len(problems) > 12 else ""
            raise ScheduleError("illegal schedule:\n  " + "\n  ".join(shown) + more)

    # ------------------------------------------------------------------ text
    def to_text(self) -> str:
        """One line per rank: ``rank 0: 0F0 0F1 0B0 ...``; :meth:`from_text` reads it back."""
        return "\n".join(
            f"rank {r}: " + " ".join(str(a) for a in order) for r, order in enumerate(self.orders)
        )

    def __str__(self) -> str:
        return f"{self.name} (p={self.p}, m={self.m}, v={self.v})\n{self.to_text()}"

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        m: int | None = None,
        placement: Sequence[int] | None = None,
        name: str = "custom",
        validate: bool = True,
    ) -> Schedule:
        """Build a schedule from text, one rank per line (``rank 0: 0F0 0F1 0B0 0B1``).

        The ``rank N:`` prefix is optional (lines are then ranks 0, 1, ...); ``#`` starts a
        comment; actions may be separated by spaces or commas. The placement is inferred
        from which rank holds each stage unless given; ``m`` is inferred as the largest
        microbatch + 1 unless given.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        rows: dict[int, list[Action]] = {}
        next_rank = 0
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            head = re.match(r"^(?:rank\s*)?(\d+)\s*:\s*(.*)$", line, flags=re.IGNORECASE)
            if head:
                rank, body = int(head.group(1)), head.group(2)
            else:
                rank, body = next_rank, line
            if rank in rows:
                raise ScheduleError(f"line {lineno}: rank {rank} is given twice")
            try:
                rows[rank] = [parse_action(tok) for tok in re.split(r"[\s,]+", body) if tok]
            except ValueError as exc:
                raise ScheduleError(f"line {lineno}: {exc}") from None
            next_rank = rank + 1
        if not rows:
            raise ScheduleError("the schedule text has no ranks")
        p = max(rows) + 1
        missing = [r for r in range(p) if r not in rows]
        if missing:
            raise ScheduleError(f"ranks {missing} have no line (ranks are numbered from 0)")
        orders = tuple(tuple(rows[r]) for r in range(p))
        if placement is None:
            where: dict[int, int] = {}
            for r, order in enumerate(orders):
                for a in order:
                    if where.setdefault(a.stage, r) != r:
                        raise ScheduleError(
                            f"stage {a.stage} has actions on rank {where[a.stage]} and rank {r}: "
                            "a stage lives on one rank"
                        )
            n_stages = max(where) + 1 if where else p
            gaps = [s for s in range(n_stages) if s not in where]
            if gaps:
                raise ScheduleError(f"stages {gaps} have no actions on any rank")
            placement = tuple(where[s] for s in range(n_stages))
        if m is None:
            m = max((a.microbatch for order in orders for a in order), default=-1) + 1
        sched = cls(name=name, p=p, m=m, placement=tuple(placement), orders=orders, source="hand-written")
        if validate:
            sched.validate()
        return sched

    # --------------------------------------------------------------- PyTorch
    def to_torch_orders(self) -> dict[int, list[str]]:
        """Per-rank action strings in PyTorch's ``_Action`` text form (``"0F3"``).

        ``I`` and ``W`` match PyTorch's ``BACKWARD_INPUT`` and ``BACKWARD_WEIGHT``; ``B`` is
        its ``FULL_BACKWARD``. Compare with ``str(a)`` for ``a`` in a PyTorch schedule's
        ``pipeline_order[rank]`` (``None`` entries are idle steps and are dropped).
        """
        return {r: [str(a) for a in order] for r, order in enumerate(self.orders)}

    @classmethod
    def from_torch_orders(
        cls, orders: dict[int, Sequence[object | None]], *, m: int, name: str = "torch"
    ) -> Schedule:
        """Build a schedule from a PyTorch ``pipeline_order`` (``None`` idle slots dropped)."""
        text = "\n".join(
            f"rank {r}: " + " ".join(str(a) for a in orders[r] if a is not None) for r in sorted(orders)
        )
        return cls.from_text(text, m=m, name=name)


_new_action = partial(tuple.__new__, Action)


def actions(stage: int, kind: str, microbatches: Iterable[int]) -> list[Action]:
    """``[Action(stage, kind, i) for i in microbatches]``, built in bulk (generators call it for speed)."""
    return list(map(_new_action, zip(repeat(stage), repeat(kind), microbatches)))


def flatten(orders: Iterable[Iterable[Action]]) -> list[Action]:
    """All actions of all ranks in one list (rank-major)."""
    return [a for order in orders for a in order]
