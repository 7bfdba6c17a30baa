"""The :class:`Schedule` type: per rank, an ordered list of actions, plus a placement.

A schedule says *what each rank does, in which order*; it says nothing about time.
Time comes from :func:`bubblekit.simulate` under a :class:`bubblekit.Costs` model.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain, repeat
from operator import itemgetter
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from bubblekit._gc import gc_paused
from bubblekit._validate import check_int, check_sequence
from bubblekit.actions import COMM_KINDS, KINDS, PAIR, Action, Pair, parse_action, parts
from bubblekit.i18n import register, tr
from bubblekit.schedules._flat import ComputeRows

if TYPE_CHECKING:
    from bubblekit.schedules.comms import Layout

__all__ = ["Schedule", "looped_placement", "v_placement", "ScheduleError", "MAX_ACTIONS", "check_size"]

#: The largest schedule bubblekit builds or reads unless asked (``max_actions=None``).
#: Building, simulating and measuring costs about 2 µs and 250 bytes per action
#: (``benchmarks/bench_core.py``), so this many take a few seconds and about half a gigabyte.
MAX_ACTIONS = 2_000_000

#: The schedule reader's messages a learner meets most (a whiteboard answer that cannot be read, an action missing),
#: in both languages; the English text is the reader's own.
register({
    "schedules.read.line": {"en": "line {lineno}: {error}", "zh": "第 {lineno} 行：{error}"},
    "schedules.read.action": {
        "en": "cannot read action {text!r}: expected <stage><kind><microbatch> with kind one of F, B, I, W, e.g. "
              "'0F3' (stage 0, forward, microbatch 3), or an overlapped pair, a forward and a backward joined by '&' "
              "and run as one unit, e.g. '0F1&0B0'",
        "zh": "无法识别动作 {text!r}。每个动作要写成 <流水级><类型><微批>，类型是 F、B、I、W 之一，例如“0F3”"
              "（流水级 0、前向、微批 3）；也可以写 F&B 对，即用 & 把一个前向和一个反向连起来，当作一个动作执行，"
              "例如“0F1&0B0”"},
    "schedules.illegal": {"en": "illegal schedule:\n  {problems}", "zh": "调度不合法：\n  {problems}"},
    "schedules.illegal_more": {"en": "\n  ... and {n} more", "zh": "\n  ……还有 {n} 处"},
    "schedules.missing": {"en": "{action} is missing (rank {rank})", "zh": "rank {rank} 缺少 {action}"},
    "schedules.missing_b": {"en": "{b} (or {i} and {w}) is missing (rank {rank})",
                            "zh": "rank {rank} 缺少 {b}（或拆开的 {i} 和 {w}）"},
    "schedules.repeated": {"en": "{a} appears {count} times{held}", "zh": "{a} 出现了 {count} 次{held}"},
    "schedules.repeated_in_pair": {"en": " (once inside the pair {pair})", "zh": "（其中一次在 F&B 对 {pair} 里）"},
    "schedules.bad_microbatch": {"en": "rank {rank} has {a}, but microbatches are {first}..{last}{extra}",
                                 "zh": "rank {rank} 上有 {a}，但微批编号只能是 {first} 到 {last}{extra}"},
    "schedules.bad_microbatch_pipe": {"en": " (stage {stage} is in pipeline {pipe})",
                                      "zh": "（流水级 {stage} 属于第 {pipe} 条流水线）"},
    "schedules.bad_stage": {"en": "rank {rank} has {a}, but stages are 0..{last}",
                            "zh": "rank {rank} 上有 {a}，但流水级编号只能是 0 到 {last}"},
    "schedules.wrong_rank": {"en": "rank {rank} has {a}, but stage {stage} is on rank {owner}",
                             "zh": "rank {rank} 上有 {a}，但流水级 {stage} 在 rank {owner} 上"},
    "schedules.wrong_rank_part": {"en": ": both parts of an overlapped pair run on the rank of its line",
                                  "zh": "：F&B 对的两个部分都在它所在那一行的 rank 上执行"},
    "schedules.pair_split": {
        "en": "rank {rank} has the pair {a}, but its part {part} is a stage of rank {owner}: both parts of an "
              "overlapped pair run on the same rank",
        "zh": "rank {rank} 上有 F&B 对 {a}，但其中的 {part} 属于 rank {owner} 的流水级：F&B 对的两个部分必须在同一个 rank 上"},
    "schedules.b_and_iw": {"en": "stage {stage} microbatch {mb} has both B and I/W: use one or the other",
                           "zh": "流水级 {stage} 的微批 {mb} 既有 B 又有 I/W：二者只能选一种"},
    "schedules.stage_two_ranks": {
        "en": "stage {stage} has actions on rank {first} and rank {second}{inside}: a stage lives on one rank",
        "zh": "流水级 {stage} 的动作既出现在 rank {first} 上，又出现在 rank {second} 上{inside}：一个流水级只能放在一个 rank 上"},
    "schedules.stage_two_ranks_pair": {"en": " (the pair {pair}: both parts of a pair run on one rank)",
                                       "zh": "（F&B 对 {pair} 的两个部分必须在同一个 rank 上）"},
    "schedules.stages_empty": {"en": "stages {gaps} have no actions on any rank",
                               "zh": "流水级 {gaps} 在哪个 rank 上都没有动作"},
    "schedules.ranks_missing": {"en": "ranks {missing} have no line (ranks are numbered from 0){more}",
                                "zh": "rank {missing} 没有对应的行（rank 从 0 开始编号）{more}"},
    "schedules.ranks_missing_more": {"en": " (the text names rank {top} but has only {lines} line(s))",
                                     "zh": "（文本里出现了 rank {top}，却只有 {lines} 行）"},
    "schedules.ranks_empty": {
        "en": "rank(s) {empty} have no actions yet: every rank needs the actions of at least one stage",
        "zh": "rank {empty} 还没有动作：每个 rank 至少要放一个流水级的动作"},
    "schedules.rank_twice": {"en": "rank {rank} is given twice", "zh": "rank {rank} 写了两次"},
    "schedules.no_ranks": {"en": "the schedule text has no ranks", "zh": "调度文本里一个 rank 也没有"},
})

#: The message for an action of kind ``F&B`` that is not a :class:`~bubblekit.actions.Pair`.
_NOT_A_PAIR = ("rank {rank} has {a}, an action of kind F&B without its two parts: build an overlapped pair as "
               "Pair(forward, backward) or parse_action('0F7&7B3')")

#: Simulation cost per action, for the estimates in size errors.
_SECONDS_PER_ACTION, _BYTES_PER_ACTION = 2e-6, 250


class ScheduleError(ValueError):
    """A schedule that is malformed: a missing, duplicate or misplaced action."""


def check_size(what: str, n_actions: int, max_actions: int | None, *, instead: str = "",
               at_once: bool = True, cost: str = "") -> None:
    """Refuse, before building anything, a job of more than ``max_actions`` actions.

    ``what`` names the call and its arguments (``"bk.schedule('1f1b', p=4, m=1000000000)"``);
    ``instead`` suggests what to do; ``at_once`` says the actions are held in memory
    together (one schedule) rather than one configuration after another (a plan); ``cost``
    replaces the simulator's time and memory estimate. ``max_actions=None`` lifts the limit.
    """
    if max_actions is None:
        return
    max_actions = check_int("max_actions", max_actions)
    if n_actions <= max_actions:
        return
    if not cost:
        cost = (f"simulating takes about {_SECONDS_PER_ACTION * 1e6:g} µs and {_BYTES_PER_ACTION} bytes per action: here "
                f"~{n_actions * _SECONDS_PER_ACTION:,.0f} s")
        if at_once:
            cost += f" and ~{n_actions * _BYTES_PER_ACTION / 1e9:,.1f} GB"
    raise ValueError(
        f"{what} would have {n_actions:,} actions, more than max_actions={max_actions:,} ({cost}). "
        f"Use fewer ranks, microbatches "
        f"or chunks{'; ' + instead if instead else ''}; or pass max_actions=None to run it anyway"
    )


def looped_placement(p: int, v: int) -> tuple[int, ...]:
    """Stage ``s`` on rank ``s mod p`` (Megatron interleaved, looped BFS)."""
    return tuple(s % p for s in range(p * v))


def v_placement(p: int) -> tuple[int, ...]:
    """V shape with two chunks per rank: stages go down ranks 0..p-1, then back up.

    Stage ``s < p`` is on rank ``s``; stage ``s >= p`` is on rank ``2p - 1 - s``. Used by
    ZB-V, V-Half, V-Min and DualPipeV, so rank 0 holds the first and the last stage; and by
    DualPipe with two pipelines (stages ``p..2p-1`` are then the second direction's stages
    ``0..p-1``, entering at rank ``p - 1``).
    """
    return tuple(s if s < p else 2 * p - 1 - s for s in range(2 * p))


class _Lowered(NamedTuple):
    """How :meth:`Schedule.lower_comms` made a lowered schedule: from ``base`` (validated), with the
    ``layout`` of its orders (:class:`bubblekit.schedules.comms.Layout`; ``None``: not computed)."""

    base: Schedule
    layout: Layout | None


@dataclass(frozen=True)
class Schedule:
    """Per-rank action orders of one training step.

    Attributes:
        name: registry name (``"1f1b"``) or ``"custom"``.
        p: number of ranks (devices).
        m: number of microbatches in the step.
        placement: ``placement[s]`` is the rank holding stage ``s``; ``len(placement)``
            is the number of stages (``p * v``).
        orders: ``orders[r]`` is rank ``r``'s actions in execution order (an overlapped
            pair, :class:`~bubblekit.actions.Pair`, is one action).
        source: where the schedule comes from (paper, repository).
        pipes: independent pipelines over the stages (default 1). DualPipe runs 2, one per
            direction: with ``L = n_stages // pipes``, stages ``k L .. (k+1) L - 1`` form
            pipeline ``k``, which carries microbatches ``k m/pipes .. (k+1) m/pipes - 1``
            (:meth:`microbatches_of`); the dependency rule stops at each pipeline's ends.

    Used in lessons 01, 02, 03, 04, 05, 07 and 10.
    """

    name: str
    p: int
    m: int
    placement: tuple[int, ...]
    orders: tuple[tuple[Action, ...], ...]
    source: str = ""
    notes: dict[str, str] = field(default_factory=dict, compare=False)
    pipes: int = 1

    def __post_init__(self) -> None:
        """Check the shape when built (C-level passes, no loop per action): the types, ``p``, ``m``, the placement.

        ``p``, ``m`` and ``pipes`` are ints >= 1, ``placement`` one rank number in ``0..p-1`` per stage
        (a list or numpy array is kept as a tuple), ``orders`` one sequence of :class:`Action` per rank.
        Whether every action is there exactly once is :meth:`validate`'s job (the simulator calls it).
        """
        self._check_fields()
        set_ = object.__setattr__
        orders = self.orders
        if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence):
            raise TypeError(f"orders must be one sequence of actions per rank, got {orders!r}")
        if type(orders) is not tuple or set(map(type, orders)) - {tuple}:
            for r, order in enumerate(orders):
                if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
                    raise TypeError(f"orders[{r}] must be a sequence of Actions, got {order!r}")
            orders = tuple(map(tuple, orders))
            set_(self, "orders", orders)
        if len(orders) != self.p:
            raise ValueError(f"orders has {len(orders)} rank order(s) but p={self.p}: give one per rank")
        for r, order in enumerate(orders):
            if set(map(type, order)) - _ACTION_TYPES:
                bad_a = next(a for a in order if type(a) not in _ACTION_TYPES)
                if isinstance(bad_a, Action):  # a subclass: check its fields the slow way
                    continue
                raise TypeError(
                    f"orders[{r}] holds {bad_a!r} of type {type(bad_a).__name__}: actions must be Action objects "
                    f"(parse_action('0F3') reads text; Schedule.from_text reads a whole schedule)"
                )

    def _check_fields(self) -> None:
        """:meth:`__post_init__`'s checks of every field but ``orders`` (a schedule with lazy orders has them too)."""
        set_ = object.__setattr__
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {self.name!r} of type {type(self.name).__name__}")
        if not isinstance(self.source, str):
            raise TypeError(f"source must be a string, got {self.source!r} of type {type(self.source).__name__}")
        if type(self.p) is not int:
            set_(self, "p", check_int("p", self.p))
        if type(self.m) is not int:
            set_(self, "m", check_int("m", self.m))
        if type(self.pipes) is not int:
            set_(self, "pipes", check_int("pipes", self.pipes))
        check_int("p", self.p)
        check_int("m", self.m)
        check_int("pipes", self.pipes)
        if type(self.placement) is not tuple or set(map(type, self.placement)) - {int}:
            set_(self, "placement", _check_placement(self.placement))
        if not self.placement:
            raise ValueError("placement must give a rank for at least one stage, got ()")
        if min(self.placement) < 0 or max(self.placement) >= self.p:
            bad = next(r for r in self.placement if not 0 <= r < self.p)
            raise ValueError(f"placement puts stage {self.placement.index(bad)} on rank {bad}, outside 0..{self.p - 1} "
                             f"(p={self.p})")
        if len(self.placement) < self.p:
            raise ScheduleError(f"placement has {len(self.placement)} stage(s) for p={self.p} ranks: every rank needs "
                             f"at least one stage")

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
    def chunks_per_microbatch(self) -> int:
        """Chunks one microbatch passes through on each rank: ``v / pipes``.

        A scalar cost in :class:`~bubblekit.Costs` (one rank's share of the model) is divided
        by this per chunk action: ``v`` for interleaved and V shapes, but 1 for DualPipe,
        whose two chunks per rank are two copies of one stage each, one per direction.
        """
        return max(1, self.v // self.pipes)

    def microbatches_of(self, stage: int) -> range:
        """The microbatches that pass through ``stage``: all of them, or its pipeline's share."""
        if self.pipes == 1:
            return range(self.m)
        share = self.m // self.pipes
        k = stage // (self.n_stages // self.pipes)
        return range(k * share, (k + 1) * share)

    @cached_property
    def has_pairs(self) -> bool:
        """True when some rank runs an overlapped pair (kind ``F&B``)."""
        kind = itemgetter(1)
        return any(PAIR in map(kind, order) for order in self.orders)

    @property
    def split_backward(self) -> bool:
        """True when backward is split into ``I`` and ``W`` actions."""
        codes = codes_of(self)
        if codes is not None:
            return codes.has_split()
        return any(a.kind in ("I", "W") for order in self.orders for a in order)

    @property
    def n_actions(self) -> int:
        """Total number of actions over all ranks."""
        return sum(map(len, orders_view(self)))

    @property
    def hops_per_step(self) -> int:
        """Cross-rank messages in one step: activations forward plus gradients backward.

        Every stage boundary whose two stages sit on different ranks carries one activation
        per microbatch forward and one gradient backward: ``2 * m * crossings``. With the
        looped placement of interleaved 1F1B that is ``2 * m * (p * v - 1)`` for ``p >= 2``;
        with ``v = 1``, ``2 * m * (p - 1)``. A V shape turns on its last rank without a message:
        ``2 * m * 2(p - 1)``. With several pipelines (DualPipe) each pipeline's boundaries
        carry its own microbatches: ``2 * (m / 2) * (p - 1)`` per direction, ``2 m (p - 1)``
        in all, the same as 1F1B.

        Used in lessons 05, 06, 07, 09 and 10.
        """
        pl = self.placement
        length = len(pl) // self.pipes
        crossings = sum(1 for s in range(len(pl) - 1) if pl[s] != pl[s + 1] and (s + 1) % length)
        return 2 * (self.m // self.pipes) * crossings

    def split_pairs(self) -> Schedule:
        """The same schedule with each overlapped pair run as its forward, then its backward.

        That is what PyTorch's default runtime executes for an ``OVERLAP_F_B`` action when no
        overlap function is registered (the lab's runs), and what bubblekit simulated before
        pairs were units. Returns ``self`` when there is no pair. Used in lesson 07.
        """
        if not self.has_pairs:
            return self
        orders = tuple(tuple(x for a in order for x in parts(a)) for order in self.orders)
        return Schedule(self.name, self.p, self.m, self.placement, orders, source=self.source + " (pairs split)",
                        notes=dict(self.notes), pipes=self.pipes)

    # ------------------------------------------------------ communication as actions
    @cached_property
    def has_comms(self) -> bool:
        """True when the schedule is *lowered*: its messages are ``SEND_*`` / ``RECV_*`` actions."""
        kind = itemgetter(1)
        comm = set(COMM_KINDS)
        return any(not comm.isdisjoint(map(kind, order)) for order in self.orders)

    def compute_only(self) -> Schedule:
        """The schedule without its communication actions (``self`` when it has none). Used in lesson 07."""
        if not self.has_comms:
            return self
        lowered = self.__dict__.get("_lowered_from")
        codes = codes_of(lowered.base) if lowered is not None else None
        if codes is not None:  # the compute schedule's codes (and its actions, once made)
            return _lazy_schedule(self.name, self.p, self.m, self.placement, codes,
                                  source=self.source, notes=dict(self.notes), pipes=self.pipes, has_pairs=False,
                                  has_comms=False)
        orders = lowered.base.orders if lowered is not None else \
            tuple(tuple(a for a in order if a[1] not in COMM_KINDS) for order in self.orders)
        return Schedule(self.name, self.p, self.m, self.placement, orders, source=self.source, notes=dict(self.notes),
                        pipes=self.pipes)

    def lower_comms(self, recv: str = "asap", *, max_actions: int | None = MAX_ACTIONS) -> Schedule:
        """The schedule with its messages as actions: PyTorch's ``compute_comms`` view, ``SEND`` / ``RECV`` per hop.

        After each compute whose result another rank needs comes its send (``0SEND_F3``: stage 0
        sends microbatch 3's activation; ``2SEND_B3``: stage 2 sends its input gradient), and the
        receiving rank posts the receive (``1RECV_F3``, ``1RECV_B3``: the stage named is the
        receiving one), exactly as PyTorch's lowering pass ``_add_send_recv`` places them. Two
        stages on one rank exchange nothing (PyTorch's "V-schedule special case").
        ``recv`` says where each receive is posted (:data:`bubblekit.schedules.comms.RECV_PLACEMENTS`):

        * ``"asap"``: where ``_add_send_recv`` puts it (PyTorch's default);
        * ``"deferred"``: just before the compute that uses it (``defer_pp_recv=True``, PyTorch's
          ``_defer_recv_ops``);
        * ``"early"``: at the start of the rank's order (every message crosses as soon as it is
          sent: the same timeline as the schedule that is not lowered).

        Simulated by the message rule (:func:`bubblekit.actions.carried`): a message crosses when
        its send and its receive are both posted, so a receive posted late makes its rank wait.
        ``to_torch_csv(comms=True)`` writes the result; ``from_torch_csv(..., comms=True)`` reads it
        back. Raises :class:`ScheduleError` for two pipelines (PyTorch's lowering is one chain of
        stages), a rank with no action, or an illegal schedule; ``TypeError`` / ``ValueError`` for
        a ``recv`` that is not one of those three; ``ValueError`` when the lowered schedule would
        hold more than ``max_actions`` actions (two more per message; ``None`` lifts the limit).
        The result is legal by construction (this schedule validated, then PyTorch's lowering), so its
        :meth:`validate` and :meth:`check_ranges` return at once and its :meth:`compute_only` is this
        schedule's orders; a copy made with ``Schedule(...)`` or ``dataclasses.replace`` is checked anew.
        Used in lesson 07.
        """
        from bubblekit.schedules import comms as lowering

        if not isinstance(recv, str):
            raise TypeError(f"recv must be a string, one of {sorted(lowering.RECV_PLACEMENTS)} (where each receive is "
                            f"posted), got {recv!r} of type {type(recv).__name__}")
        if recv not in lowering.RECV_PLACEMENTS:
            raise ValueError(f"recv must be one of {sorted(lowering.RECV_PLACEMENTS)} (where each receive is posted), "
                             f"got {recv!r}")
        base = self.compute_only()
        check_size(f"{self.name!r}.lower_comms(recv={recv!r})", base.n_actions + 2 * base.hops_per_step, max_actions)
        if base.pipes > 1:
            raise ScheduleError(f"cannot lower {self.name!r}: {base.torch_problem()}")
        base.validate()
        base._refuse_idle_ranks()
        source = f"{self.source} (lowered: sends and receives, receives {recv})".strip()
        notes = {**self.notes, "recv": recv}
        bulk = lowering.flat_lowering() if recv == "asap" and not base.has_pairs else None
        if bulk is not None:  # the orders as integers (numpy), their actions made when asked for
            try:
                with gc_paused():
                    codes = codes_of(base)  # the compute entries decode from its codes (its actions, once made)
                    flat = bulk.lower_flat(orders_view(base) if codes is None else codes, base.placement, base.m)
            except ValueError as exc:
                raise ScheduleError(f"{self.name!r}: {exc}") from None
            return _lazy_schedule(self.name, self.p, self.m, self.placement, flat, source=source, notes=notes,
                                  pipes=self.pipes, has_pairs=False, has_comms=flat.n_comms > 0,
                                  _lowered_from=_Lowered(base, flat.layout))
        try:
            rows, layout = lowering.lower_with_layout(base.orders, base.placement, base.m)
        except ValueError as exc:
            raise ScheduleError(f"{self.name!r}: {exc}") from None
        if recv == "deferred":
            rows, layout = lowering.defer_recv_rows(rows, base.placement), None
        elif recv == "early":
            rows, layout = lowering.early_recv_rows(rows), None
        low = Schedule(self.name, self.p, self.m, self.placement, tuple(map(tuple, rows)), source=source, notes=notes,
                       pipes=self.pipes)
        # legal by construction (a validated compute schedule, PyTorch's lowering): validate() and
        # check_ranges() need not look again, compute_only() is the compute schedule's orders
        low.__dict__["_lowered_from"] = _Lowered(base, layout)
        return low

    if not TYPE_CHECKING:
        def __getattr__(self, name: str) -> object:
            """``orders`` of a schedule with lazy orders (:func:`_lazy_schedule`: :meth:`lower_comms` and the
            builders of GPipe, 1F1B, interleaved 1F1B, looped BFS and ZB-V): its actions, made on first use from its integers."""
            if name == "orders":
                flat = self.__dict__.get("_lazy_orders")
                if flat is not None:
                    with gc_paused():  # they live as long as the schedule
                        rows = flat.rows()
                        orders = rows if type(rows) is tuple else tuple(map(tuple, rows))
                    self.__dict__["orders"] = orders
                    return orders
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _refuse_idle_ranks(self) -> None:
        """PyTorch's lowering (``lower_comms``, ``to_torch_csv(comms=True)``) needs an action on every rank."""
        empty = [r for r, order in enumerate(orders_view(self)) if not order]
        if empty:
            raise ScheduleError(f"cannot lower {self.name!r}: rank(s) {empty} have no action (PyTorch's lowering "
                                f"needs every rank to compute)")

    def _check_comms(self) -> None:
        """A lowered schedule's messages: one send and one receive per hop between ranks, none elsewhere."""
        place, n = self.placement, self.n_stages
        length = n // self.pipes
        comm = frozenset(COMM_KINDS)
        wanted: list[tuple[int, int, str, range]] = []  # (rank, stage, kind, microbatches): one each
        for s in range(n):
            mbs = self.microbatches_of(s)
            if (s + 1) % length and place[s + 1] != place[s]:
                wanted += [(place[s], s, "SEND_F", mbs), (place[s + 1], s + 1, "RECV_F", mbs)]
            if s % length and place[s - 1] != place[s]:
                wanted += [(place[s], s, "SEND_B", mbs), (place[s - 1], s - 1, "RECV_B", mbs)]
        groups: list[dict[int, dict[str, list[int]]]] = [{} for _ in self.orders]  # the fast check, no new tuples
        for r, order in enumerate(self.orders):
            g = groups[r]
            for a in order:
                if a[1] in comm:
                    g.setdefault(a[0], {}).setdefault(a[1], []).append(a[2])
        fine = sum(len(by) for g in groups for by in g.values()) == len(wanted)
        for r, s, k, mbs in wanted if fine else ():
            got = groups[r].get(s, {}).get(k)
            if got is None or len(got) != len(mbs) or sorted(got) != list(mbs):
                fine = False
                break
        if fine:
            return
        want: Counter[tuple[int, Action]] = Counter()
        for s in range(n):
            for i in self.microbatches_of(s):
                if (s + 1) % length and place[s + 1] != place[s]:
                    want[place[s], Action(s, "SEND_F", i)] += 1
                    want[place[s + 1], Action(s + 1, "RECV_F", i)] += 1
                if s % length and place[s - 1] != place[s]:
                    want[place[s], Action(s, "SEND_B", i)] += 1
                    want[place[s - 1], Action(s - 1, "RECV_B", i)] += 1
        have: Counter[tuple[int, Action]] = Counter(
            (r, a) for r, order in enumerate(self.orders) for a in order if a[1] in COMM_KINDS)
        problems = [f"{a} is missing (rank {r})" for (r, a), k in sorted(want.items()) if have[r, a] < k]
        problems += [f"{a} on rank {r} carries no message between ranks (stage {a.stage}'s neighbour is on the same rank "
                     f"or outside the pipeline)" for (r, a) in sorted(have) if (r, a) not in want]
        problems += [f"{a} appears {k} times (rank {r})" for (r, a), k in sorted(have.items())
                     if (r, a) in want and k > want[r, a]]
        if problems:
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise ScheduleError("illegal lowered schedule (its sends and receives):\n  " + "\n  ".join(problems[:20])
                                + more)

    def stages_of(self, rank: int) -> tuple[int, ...]:
        """Stages held by ``rank``, in model order. Used in lessons 07 and 10."""
        return tuple(s for s, r in enumerate(self.placement) if r == rank)

    # ---------------------------------------------------------------- checks
    def validate(self) -> None:
        """Raise :class:`ScheduleError` unless every action appears exactly once on its rank.

        Expected actions: for each stage and microbatch, ``F`` and either ``B`` or both
        ``I`` and ``W``; the ``F`` and ``B`` may be parts of overlapped pairs (``0F7&7B3``),
        whose two parts must both sit on the rank that runs the pair. With ``pipes``
        pipelines each stage expects only its pipeline's microbatches. A lowered schedule
        (:meth:`lower_comms`) must also hold one send and one receive for each message between
        ranks, and none elsewhere. Dependencies that can never be met (a send before its compute,
        a receive after the compute that uses it) are found by the simulator, which names the
        blocked ranks.
        """
        if "_lowered_from" in self.__dict__:  # lowered by lower_comms from a validated schedule: legal
            return
        view = orders_view(self)
        if len(view) != self.p:
            raise ScheduleError(f"schedule has {len(view)} rank orders but p={self.p}")
        for stage, rank in enumerate(self.placement):
            if not 0 <= rank < self.p:
                raise ScheduleError(f"placement puts stage {stage} on rank {rank}, outside 0..{self.p - 1}")
        self._check_pipes()
        codes = codes_of(self)
        if self.pipes == 1 and codes is not None and codes.legal(self.placement):
            return  # the exact check on the integers; anything else (or no numpy): the actions, for the message
        if self.pipes == 1 and not self.has_pairs and self._looks_legal():
            self.__dict__["has_comms"] = False  # _looks_legal refuses any kind but F, B, I, W: known for free
            return
        if self.has_comms:  # a lowered schedule: its compute as any schedule, then its messages
            self.compute_only().validate()
            self.check_ranges()
            self._check_comms()
            return
        if self.has_pairs or self.pipes > 1:
            self._explain_problems()  # the exact check (pairs and pipelines are rare and small)
            return
        if not self._looks_legal():
            pairs = self.n_stages * self.m
            if pairs > MAX_ACTIONS and 2 * pairs > self.n_actions:  # too many to list one by one
                raise ScheduleError(
                    f"illegal schedule: {self.n_stages} stages x m={self.m} microbatches need at least "
                    f"{2 * pairs:,} actions but the orders hold {self.n_actions:,}: is m right?"
                )
            self._explain_problems()

    def _check_pipes(self) -> None:
        """``pipes`` must divide both the stages and the microbatches."""
        if type(self.pipes) is not int or self.pipes < 1:
            raise ScheduleError(f"pipes must be an int >= 1 (independent pipelines), got {self.pipes!r}")
        if self.pipes > 1 and (self.n_stages % self.pipes or self.m % self.pipes):
            raise ScheduleError(
                f"pipes={self.pipes} must divide the {self.n_stages} stages and the m={self.m} microbatches "
                f"(each pipeline has n_stages/pipes stages and carries m/pipes microbatches)"
            )

    def check_ranges(self) -> None:
        """Raise :class:`ScheduleError` unless every action's stage, rank and microbatch exist.

        The part of :meth:`validate` that even a partial schedule (``simulate(...,
        validate=False)``, e.g. a forward-only factory line) must pass: each action's
        stage is in ``0..n_stages-1`` and held by the rank that runs it, and its
        microbatch is in ``0..m-1``; both parts of a pair count. Missing or repeated
        actions are allowed.
        """
        if "_lowered_from" in self.__dict__:  # lowered by lower_comms from a validated schedule: legal
            return
        if len(orders_view(self)) != self.p:
            raise ScheduleError(f"schedule has {len(orders_view(self))} rank orders but p={self.p}")
        self._check_pipes()
        codes = codes_of(self)
        if codes is not None and codes.in_place(self.placement):
            return  # the check on the integers; anything else: the actions, for the message
        get_stage, get_kind, get_mb = itemgetter(0), itemgetter(1), itemgetter(2)
        for rank, order in enumerate(self.orders):
            if not order:
                continue
            if self.has_pairs:
                self._check_pair_ranks(rank, order)
            unknown = set(map(get_kind, order)) - set(KINDS)
            if unknown:
                raise ScheduleError(f"rank {rank} has actions of unknown kind {sorted(unknown)}: kinds are {', '.join(KINDS)}")
            stages, mbs = set(map(get_stage, order)), set(map(get_mb, order))
            bad_stage = [s for s in stages if not (type(s) is int and 0 <= s < self.n_stages and self.placement[s] == rank)]
            bad_mb = [i for i in mbs if not (type(i) is int and 0 <= i < self.m)]
            if bad_stage or bad_mb:
                a = next(a for a in order if a.stage in bad_stage or a.microbatch in bad_mb)
                if type(a.stage) is not int or type(a.microbatch) is not int:
                    raise ScheduleError(f"rank {rank} has {a!r}: an action's stage and microbatch are ints "
                                        f"(got {type(a.stage).__name__} and {type(a.microbatch).__name__})")
                if a.stage in bad_stage and 0 <= a.stage < self.n_stages:
                    raise ScheduleError(tr("schedules.wrong_rank", rank=rank, a=a, stage=a.stage,
                                           owner=self.placement[a.stage]))
                if a.stage in bad_stage:
                    raise ScheduleError(tr("schedules.bad_stage", rank=rank, a=a, last=self.n_stages - 1))
                raise ScheduleError(tr("schedules.bad_microbatch", rank=rank, a=a, first=0, last=self.m - 1, extra=""))

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

    def _check_pair_ranks(self, rank: int, order: Sequence[Action]) -> None:
        """Both parts of every pair on ``rank``'s line must be stages of ``rank`` (and exist)."""
        for a in order:
            if type(a) is not Pair:
                if a.kind == PAIR:
                    raise ScheduleError(_NOT_A_PAIR.format(rank=rank, a=repr(a)))
                continue
            for part in parts(a):
                if not (type(part.stage) is int and 0 <= part.stage < self.n_stages):
                    raise ScheduleError(tr("schedules.bad_stage", rank=rank, a=a, last=self.n_stages - 1))
                if self.placement[part.stage] != rank:
                    raise ScheduleError(tr("schedules.pair_split", rank=rank, a=a, part=part,
                                           owner=self.placement[part.stage]))
                if not (type(part.microbatch) is int and 0 <= part.microbatch < self.m):
                    raise ScheduleError(tr("schedules.bad_microbatch", rank=rank, a=a, first=0, last=self.m - 1,
                                           extra=""))

    def _explain_problems(self) -> None:
        """The exact, slow check: raise :class:`ScheduleError` listing every problem found.

        Pairs are checked part by part (each part is counted once, and where a part is
        repeated the message names the pair holding it); with ``pipes`` pipelines each
        stage's microbatches are its pipeline's.
        """
        problems: list[str] = []
        counts: Counter[Action] = Counter()
        inside: dict[Action, Action] = {}
        for rank, order in enumerate(self.orders):
            for unit in order:
                if unit.kind == PAIR and type(unit) is not Pair:
                    problems.append(_NOT_A_PAIR.format(rank=rank, a=repr(unit)))
                    continue
                for a in parts(unit):
                    where = a if a is unit else f"{unit} (its part {a})"
                    if a is not unit:
                        inside[a] = unit
                    if type(a.stage) is not int or type(a.microbatch) is not int or a.kind not in KINDS:
                        problems.append(f"rank {rank} has {a!r}: an action is (stage: int, kind: one of "
                                        f"{', '.join(KINDS)}, microbatch: int)")
                        continue
                    if not 0 <= a.stage < self.n_stages:
                        problems.append(tr("schedules.bad_stage", rank=rank, a=where, last=self.n_stages - 1))
                    elif self.placement[a.stage] != rank:
                        problems.append(
                            tr("schedules.wrong_rank", rank=rank, a=where, stage=a.stage, owner=self.placement[a.stage])
                            + (tr("schedules.wrong_rank_part") if a is not unit else "")
                        )
                    elif a.microbatch not in self.microbatches_of(a.stage):
                        mbs = self.microbatches_of(a.stage)
                        extra = tr("schedules.bad_microbatch_pipe", stage=a.stage,
                                   pipe=a.stage // (self.n_stages // self.pipes)) if self.pipes > 1 else ""
                        problems.append(tr("schedules.bad_microbatch", rank=rank, a=where, first=mbs.start,
                                           last=mbs.stop - 1, extra=extra))
                    counts[a] += 1
        for a, c in counts.items():
            if c > 1:
                held = tr("schedules.repeated_in_pair", pair=inside[a]) if a in inside else ""
                problems.append(tr("schedules.repeated", a=a, count=c, held=held))
        for s in range(self.n_stages):
            for mb in self.microbatches_of(s):
                if counts[Action(s, "F", mb)] == 0:
                    problems.append(tr("schedules.missing", action=Action(s, "F", mb), rank=self.placement[s]))
                has_b = counts[Action(s, "B", mb)] > 0
                has_i = counts[Action(s, "I", mb)] > 0
                has_w = counts[Action(s, "W", mb)] > 0
                if has_b and (has_i or has_w):
                    problems.append(tr("schedules.b_and_iw", stage=s, mb=mb))
                elif not has_b and not (has_i and has_w):
                    missing = "B (or I and W)" if not (has_i or has_w) else ("W" if has_i else "I")
                    problems.append(
                        tr("schedules.missing", action=f"{s}{missing.split()[0]}{mb}", rank=self.placement[s])
                        if missing in ("I", "W")
                        else tr("schedules.missing_b", b=Action(s, "B", mb), i=f"{s}I{mb}", w=f"{s}W{mb}",
                                rank=self.placement[s])
                    )
        if problems:
            shown = problems[:12]
            more = tr("schedules.illegal_more", n=len(problems) - 12) if len(problems) > 12 else ""
            raise ScheduleError(tr("schedules.illegal", problems="\n  ".join(shown)) + more)

    # ------------------------------------------------------------------ text
    def to_text(self) -> str:
        """One line per rank: ``rank 0: 0F0 0F1 0B0 ...``; :meth:`from_text` reads it back.

        Used in lessons 00, 01, 04, 05 and 07.
        """
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
        max_actions: int | None = MAX_ACTIONS,
        pipes: int = 1,
    ) -> Schedule:
        """Build a schedule from text, one rank per line (``rank 0: 0F0 0F1 0B0 0B1``).

        The ``rank N:`` prefix is optional (lines are then ranks 0, 1, ...); ``#`` starts a
        comment; actions may be separated by spaces or commas. An overlapped pair is
        written ``0F7&7B3`` (or PyTorch's ``(0F7;7B3)OVERLAP_F_B``). The placement is
        inferred from which rank holds each stage unless given (a sequence of rank numbers,
        one per stage); ``m`` is inferred as the largest microbatch + 1 unless given;
        ``pipes`` says how many independent pipelines share the stages (2 for DualPipe,
        see :class:`Schedule`). A step of more than ``max_actions`` actions (``2 x stages x
        m`` at least) is refused before anything is built; pass ``None`` to lift the limit.

        Used in lessons 01, 02, 03, 04, 05, 07 and 10.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        if m is not None:
            m = check_int("m", m)
        if placement is not None:
            placement = _check_placement(placement)
        rows = _read_rows(text)
        p = max(rows) + 1
        if p != len(rows):
            missing = [r for r in range(min(p, len(rows) + 10)) if r not in rows]
            more = tr("schedules.ranks_missing_more", top=max(rows), lines=len(rows)) if p > len(rows) + 10 else ""
            raise ScheduleError(tr("schedules.ranks_missing", missing=missing, more=more))
        orders = tuple(tuple(rows[r]) for r in range(p))
        if placement is None:
            empty = [r for r in range(p) if not orders[r]]
            if empty:
                raise ScheduleError(tr("schedules.ranks_empty", empty=empty))
            placement = _infer_placement(orders, p)
        if m is None:
            m = max((x.microbatch for order in orders for a in order for x in parts(a)), default=-1) + 1
        check_size(f"Schedule.from_text(..., m={m}) over {len(placement)} stage(s)", 2 * len(placement) * m,
                   max_actions, instead="check m and the microbatch numbers in the text")
        pipes = check_int("pipes", pipes)
        sched = cls(name=name, p=p, m=m, placement=tuple(placement), orders=orders, source="hand-written",
                    pipes=pipes)
        if validate:
            sched.validate()
        return sched

    # --------------------------------------------------------------- PyTorch
    def to_torch_orders(self) -> dict[int, list[str]]:
        """Per-rank action strings in PyTorch's ``_Action`` text form (``"0F3"``).

        ``I`` and ``W`` match PyTorch's ``BACKWARD_INPUT`` and ``BACKWARD_WEIGHT``; ``B`` is
        its ``FULL_BACKWARD``; an overlapped pair is its ``OVERLAP_F_B``,
        ``(0F7;7B3)OVERLAP_F_B``. Compare with ``str(a)`` for ``a`` in a PyTorch schedule's
        ``pipeline_order[rank]`` (``None`` entries are idle steps and are dropped).
        """
        return {r: [a.torch_text() if type(a) is Pair else str(a) for a in order]  # type: ignore[attr-defined]
                for r, order in enumerate(self.orders)}

    @classmethod
    def from_torch_orders(
        cls, orders: dict[int, Sequence[object | None]], *, m: int, name: str = "torch"
    ) -> Schedule:
        """Build a schedule from a PyTorch ``pipeline_order`` (``None`` idle slots dropped)."""
        if not isinstance(orders, Mapping):
            raise TypeError(f"orders must be a dict rank -> list of actions (PyTorch's pipeline_order), got {orders!r}")
        for r, order in orders.items():
            if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
                raise TypeError(f"orders[{r!r}] must be a list of actions (or None for idle steps), got {order!r}")
        text = "\n".join(
            f"rank {r}: " + " ".join(str(a) for a in orders[r] if a is not None) for r in sorted(orders)
        )
        return cls.from_text(text, m=m, name=name)

    def torch_problem(self) -> str | None:
        """Why PyTorch's schedule files and runtime cannot express this schedule, or ``None`` when they can.

        Two pipelines (DualPipe's ``pipes=2``) cannot be written: PyTorch's stages are one chain
        in which every stage carries every microbatch. Overlapped pairs can
        (``OVERLAP_F_B``); PyTorch's runtime runs their two parts one after the other.
        """
        from bubblekit.schedules.torch_csv import torch_problem

        return torch_problem(self.pipes)

    def to_torch_csv(self, path: str | PathLike[str] | None = None, *, comms: bool = False,
                     force: bool = False) -> str:
        """The schedule as PyTorch's CSV file, byte for byte what ``torch.distributed.pipelining`` writes.

        ``comms=False``: the compute-only file, what ``_dump_csv`` writes for this order and
        ``_load_csv`` reads (one row per rank, one action per cell: ``0F3``, ``1I0``, ``1W0``,
        ``(0F7;7B3)OVERLAP_F_B``). ``comms=True``: the file ``_PipelineScheduleRuntime._dump_csv``
        writes after lowering it (``format="compute_comms"``): PyTorch's ``UNSHARD`` / ``RESHARD``,
        ``REDUCE_GRAD`` and ``SEND_*`` / ``RECV_*`` actions added by its own rules
        (:mod:`bubblekit.schedules.torch_csv`). Written with the standard library: no torch needed.

        Returns the text (``\r\n`` line ends, as Python's ``csv`` writes). With ``path`` it is also
        written there: a new file, or an existing one only with ``force=True`` (a file you own is
        never overwritten by surprise). Raises :class:`ScheduleError` for a schedule PyTorch cannot
        express (:meth:`torch_problem`) or an illegal one, ``FileExistsError`` / ``ValueError`` for
        the path. Used in lesson 06's lab (``bk.lab.run`` hands this file to PyTorch).

        A lowered schedule (:meth:`lower_comms`) is written with its own sends and receives where
        it posts them: ``comms=True`` gives its compute and ``SEND_*`` / ``RECV_*`` cells as they
        stand (no ``UNSHARD`` / ``RESHARD`` / ``REDUCE_GRAD``, which the runtime needs only for FSDP
        and data-parallel stages), a file ``_PipelineScheduleRuntime._load_csv(path,
        format="compute_comms")`` runs as written; ``comms=False`` its compute only.
        """
        from bubblekit._validate import check_bool
        from bubblekit.schedules import torch_csv

        comms = check_bool("comms", comms)
        force = check_bool("force", force)
        out = _output_file(path, force) if path is not None else None
        problem = self.torch_problem()
        if problem is not None:
            raise ScheduleError(f"PyTorch cannot express the schedule {self.name!r}: {problem}")
        self.validate()
        if self.has_comms:
            rows = torch_csv.compute_rows(self.orders if comms else self.compute_only().orders)
        elif comms:
            self._refuse_idle_ranks()
            try:
                rows = torch_csv.lower(self.orders, self.placement, self.m)
            except ValueError as exc:
                raise ScheduleError(f"{self.name!r}: {exc}") from None
        else:
            rows = torch_csv.compute_rows(self.orders)
        text = torch_csv.write_rows(rows)
        if out is not None:
            try:
                with open(out, "w" if force else "x", newline="", encoding="utf-8") as fh:
                    fh.write(text)
            except FileExistsError:
                raise FileExistsError(f"path {str(out)!r} exists and is kept: pass force=True to overwrite it, "
                                      f"or choose a new file name") from None
            except OSError as exc:
                raise ValueError(f"path {str(out)!r} cannot be written: {exc.strerror or exc}") from None
        return text

    @classmethod
    def from_torch_csv(
        cls,
        path: str | PathLike[str] | None = None,
        *,
        text: str | None = None,
        m: int | None = None,
        p: int | None = None,
        name: str = "torch",
        validate: bool = True,
        max_actions: int | None = MAX_ACTIONS,
        comms: bool = False,
    ) -> Schedule:
        """Read a PyTorch schedule file (``path``) or its text (``text=``): the reverse of :meth:`to_torch_csv`.

        Reads what ``_dump_csv`` writes, both kinds: compute only, and with communication (its
        ``SEND_*`` / ``RECV_*`` / ``UNSHARD`` / ``RESHARD`` / ``REDUCE_GRAD`` cells are dropped: the
        compute actions are the schedule). With ``comms=True`` the ``SEND_*`` / ``RECV_*`` cells are
        kept where they stand: the result is a lowered schedule (:meth:`lower_comms`), simulated
        with each receive posted where the file posts it. Row ``r`` is rank ``r``; empty cells are idle slots
        and dropped; ``(0F7;7B3)OVERLAP_F_B`` is an overlapped :class:`~bubblekit.actions.Pair`.
        The placement is where each stage's actions are (as PyTorch's ``_load_csv`` infers it);
        ``m`` is the largest microbatch + 1 unless given; ``p``, when given, is the number of
        rows (ranks) the file must have.

        Raises ``ValueError`` (a :class:`ScheduleError` for the schedule itself) naming the row
        and cell of a bad action, a file that is missing, not UTF-8 text, not CSV or empty, a row
        count other than ``p``, or a file of more than ``max_actions`` cells.
        """
        from bubblekit._validate import check_bool
        from bubblekit.schedules import torch_csv

        comms = check_bool("comms", comms)
        keep = {"SEND_F", "RECV_F", "SEND_B", "RECV_B"} if comms else set()
        if (path is None) == (text is None):
            raise TypeError("give exactly one of path (a PyTorch schedule file) or text= (its contents)")
        if m is not None:
            m = check_int("m", m)
        if p is not None:
            p = check_int("p", p)
        limit = None if max_actions is None else check_int("max_actions", max_actions)
        if text is None:
            where, text = _read_text_file(path, limit)
        else:
            if not isinstance(text, str):
                raise TypeError(f"text must be a string (the file's contents), got {type(text).__name__}")
            where = "the text"
        if limit is not None and len(text) > 64 * limit:
            raise ValueError(f"{where} has {len(text):,} characters, more than a schedule of max_actions={limit:,} "
                             f"actions takes; pass max_actions=None to read it anyway")
        rows = torch_csv.read_rows(text.lstrip("\ufeff"), where=where)
        while rows and not rows[-1]:
            rows.pop()  # a blank last line
        if not rows:
            raise ScheduleError(f"{where} has no rows: a PyTorch schedule file has one row per rank")
        if p is not None and len(rows) != p:
            raise ScheduleError(f"{where} has {len(rows)} row(s) but p={p}: a PyTorch schedule file has one row "
                                f"per rank")
        lines = []
        for r, row in enumerate(rows):
            tokens = []
            for a in row:
                if a is None or (a.ctype in torch_csv.COMM_TYPES and a.ctype not in keep):
                    continue
                if a.subs is not None:
                    tokens.append("&".join(str(s) for s in a.subs))
                else:
                    tokens.append(str(a))
            lines.append(f"rank {r}: " + " ".join(tokens))
        try:
            sched = cls.from_text("\n".join(lines), m=m, name=name, validate=validate, max_actions=max_actions)
            return replace(sched, source=f"PyTorch schedule file ({where})")
        except ScheduleError as exc:
            at = re.match(r"line ([0-9]+): |第 ([0-9]+) 行：", str(exc))
            if at is None:
                raise
            r = int(at.group(1) or at.group(2))
            raise ScheduleError(f"{where}, row {r} (rank {r - 1}): {str(exc)[at.end():]}") from None


def _output_file(path: object, force: bool, example: str = "schedule.csv") -> Path:
    """A file path to write: its folder exists, it is not a folder, and it exists only with ``force``
    (``example`` is the file name the error for a folder suggests)."""
    if not isinstance(path, (str, PathLike)) or not str(path):
        raise TypeError(f"path must be a file name (str or Path), got {path!r}")
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"path {str(out)!r} is a folder: give a file name such as {example}")
    if not out.parent.is_dir():
        raise ValueError(f"path {str(out)!r}: its folder {str(out.parent)!r} does not exist")
    if (out.exists() or out.is_symlink()) and not force:
        raise FileExistsError(f"path {str(out)!r} exists and is kept: pass force=True to overwrite it, or choose a "
                              f"new file name")
    return out


def _read_text_file(path: object, limit: int | None) -> tuple[str, str]:
    """``(where, text)`` of a UTF-8 file, or a ``ValueError`` saying why it cannot be read."""
    if not isinstance(path, (str, PathLike)) or not str(path):
        raise TypeError(f"path must be a file name (str or Path), got {path!r}")
    where = f"file {str(path)!r}"
    src = Path(path)
    try:
        size = src.stat().st_size
        if src.is_dir():
            raise ValueError(f"{where} is a folder, not a PyTorch schedule file")
        if limit is not None and size > 64 * limit:
            raise ValueError(f"{where} has {size:,} bytes, more than a schedule of max_actions={limit:,} actions "
                             f"takes; pass max_actions=None to read it anyway")
        data = src.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{where} does not exist") from None
    except OSError as exc:
        raise ValueError(f"{where} cannot be read: {exc.strerror or exc}") from None
    try:
        return where, data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{where} is not UTF-8 text: a PyTorch schedule file is CSV text (0F0,0F1,...)") from None


def _fails(token: str) -> bool:
    try:
        parse_action(token)
    except ValueError:
        return True
    return False


def _read_rows(text: str) -> dict[int, list[Action]]:
    """``rank -> actions`` from schedule text (see :meth:`Schedule.from_text`)."""
    rows: dict[int, list[Action]] = {}
    next_rank = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head = re.match(r"^(?:rank\s*)?([0-9]+)\s*:\s*(.*)$", line, flags=re.IGNORECASE)
        if head:
            rank, body = int(head.group(1)), head.group(2)
        else:
            rank, body = next_rank, line
        if rank in rows:
            raise ScheduleError(tr("schedules.read.line", lineno=lineno, error=tr("schedules.rank_twice", rank=rank)))
        body = re.sub(r"\s*([&;])\s*", r"\1", body)  # '0F7 & 7B3' and '(0F7; 7B3)' are one token each
        body = re.sub(r"\(\s+|\s+\)", lambda mt: mt.group(0).strip(), body)
        tokens = [tok for tok in re.split(r"[\s,]+", body) if tok]
        try:
            rows[rank] = [parse_action(tok) for tok in tokens]
        except ValueError as exc:
            error = str(exc)
            bad = next((tok for tok in tokens if _fails(tok)), None)
            if bad is not None and "&" not in bad and ";" not in bad:  # the reader's usual message, in both languages
                error = tr("schedules.read.action", text=bad)
            raise ScheduleError(tr("schedules.read.line", lineno=lineno, error=error)) from None
        next_rank = rank + 1
    if not rows:
        raise ScheduleError(tr("schedules.no_ranks"))
    return rows


def _infer_placement(orders: tuple[tuple[Action, ...], ...], p: int) -> tuple[int, ...]:
    """Each stage on the rank whose line holds its actions (one rank per stage, no gaps)."""
    where: dict[int, int] = {}
    in_pair: dict[int, Action] = {}  # a stage first seen inside a pair: that pair
    for r, order in enumerate(orders):
        for unit in order:
            for a in parts(unit):
                if a is not unit:
                    in_pair.setdefault(a.stage, unit)
                if where.setdefault(a.stage, r) != r:
                    pair = unit if a is not unit else in_pair.get(a.stage)
                    inside = tr("schedules.stage_two_ranks_pair", pair=pair) if pair is not None else ""
                    raise ScheduleError(tr("schedules.stage_two_ranks", stage=a.stage, first=where[a.stage], second=r,
                                           inside=inside))
    n_stages = max(where) + 1 if where else p
    if n_stages > len(where):
        gaps = [s for s in range(min(n_stages, len(where) + 10)) if s not in where]
        raise ScheduleError(tr("schedules.stages_empty", gaps=gaps))
    return tuple(where[s] for s in range(n_stages))


def _check_placement(placement: object) -> tuple[int, ...]:
    """A placement: a sequence of rank numbers (ints >= 0), one per stage."""
    if getattr(placement, "ndim", 0) >= 1:  # a numpy array of rank numbers
        placement = check_sequence("placement", placement, empty=True)
    if isinstance(placement, (str, bytes)) or not isinstance(placement, Sequence):
        raise TypeError(f"placement must be a sequence of rank numbers (ints), one per stage, got {placement!r}")
    return tuple(check_int(f"placement[{s}]", r, minimum=0) for s, r in enumerate(placement))


_ACTION_TYPES = frozenset((Action, Pair))


def actions(stage: int, kind: str, microbatches: Iterable[int]) -> list[Action]:
    """``[Action(stage, kind, i) for i in microbatches]``, built in bulk (generators call it for speed)."""
    return list(map(tuple.__new__, repeat(Action), zip(repeat(stage), repeat(kind), microbatches)))


def flatten(orders: Iterable[Iterable[Action]]) -> list[Action]:
    """All actions of all ranks in one list (rank-major)."""
    return [a for order in orders for a in order]


def orders_view(schedule: Schedule) -> Sequence[Sequence[Action]]:
    """``schedule.orders``, or, for a schedule with lazy orders whose actions nobody asked for yet, a view of
    its integers that makes only the actions read: :class:`bubblekit.schedules._flat.FlatRows` for one
    :meth:`Schedule.lower_comms` made, :class:`bubblekit.schedules._flat.ComputeRows` for a compute schedule
    :func:`from_codes` made (GPipe, 1F1B, interleaved 1F1B, looped BFS, ZB-V: its ``arrays()`` are its actions as integers)."""
    d = schedule.__dict__
    flat = d.get("_lazy_orders")
    return schedule.orders if flat is None or "orders" in d else flat


def codes_of(schedule: Schedule) -> ComputeRows | None:
    """The integer codes of a compute schedule :func:`from_codes` made (kept after its actions are made), else ``None``."""
    view = schedule.__dict__.get("_lazy_orders")
    return view if type(view) is ComputeRows else None


def _lazy_schedule(name: str, p: int, m: int, placement: tuple[int, ...], view: Sequence[Sequence[Action]], *,
                   source: str = "", notes: dict[str, str] | None = None, pipes: int = 1,
                   **known: object) -> Schedule:
    """A :class:`Schedule` whose ``orders`` are made from ``view`` (``rows()``: :class:`~bubblekit.schedules._flat.FlatRows`
    or :class:`~bubblekit.schedules._flat.ComputeRows`) when first read; ``known``: what is known for free
    (``has_pairs``, ``has_comms``, ``_lowered_from``). The fields are checked as ``__init__`` checks them."""
    s = object.__new__(Schedule)
    s.__dict__.update(name=name, p=p, m=m, placement=placement, source=source, notes={} if notes is None else notes,
                      pipes=pipes, _lazy_orders=view, **known)
    s._check_fields()
    if len(view) != s.p:
        raise ValueError(f"orders has {len(view)} rank order(s) but p={s.p}: give one per rank")
    return s


def from_codes(name: str, p: int, m: int, placement: tuple[int, ...], codes: Sequence[Sequence[int]], *,
               source: str = "") -> Schedule:
    """A compute schedule from its orders as integer codes: ``codes[r]`` is rank ``r``'s order, each action
    ``(kind * n_stages + stage) * m + microbatch`` with ``kind`` its index in ``"FBIW"``
    (:func:`bubblekit.schedules._flat.compute_codes` gives a run of them). Its actions are made only when
    ``orders`` is read; validation, lowering and simulation read the integers."""
    view = ComputeRows(codes, len(placement), m)
    return _lazy_schedule(name, p, m, placement, view, source=source, has_pairs=False, has_comms=False)
