"""Automatic schedule search: find per-rank orders of F, I and W under a memory cap.

The zero-bubble paper (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §3)
searches schedules instead of hand-writing them: given ``p`` ranks, ``m`` microbatches,
the costs of ``F``, ``I`` (their ``B``) and ``W``, the communication latency and an
activation-memory limit, find the orders with the shortest step. This module does the
same for one chunk per rank (``v = 1``, stage ``s`` on rank ``s``), two ways:

* :func:`greedy_schedule`: list scheduling. Time moves forward; whenever a rank is free it
  starts the most urgent *ready* action by a priority rule (input-gradient ``I`` first,
  then a forward ``F`` if memory allows, then a weight-gradient ``W``), and a W may fill
  a gap only when it fits (``w_fill="fit"``) or always (``"eager"``).
  :func:`search_schedule` runs a small grid of such rules (the paper's "grid search over
  binary hyperparameters") and keeps the best.
* :func:`exhaustive_schedule`: branch and bound over every order (F, I, W each in
  microbatch order on a rank), for tiny ``p`` and ``m``: the true optimum under the cap.

Conventions: times in the cost model's unit (slots or ms); memory in *microbatch
activations* (a forward holds ``activation`` until its ``I`` frees ``1 - w_held`` of it and
its ``W`` frees the rest, exactly as :func:`bubblekit.simulate` counts it). The memory cap
is per rank; the default is ``p`` (the peak of 1F1B on rank 0, the paper's ``p M_B``).
Every result is a :class:`~bubblekit.schedules.base.Schedule` whose simulation under the
same costs reproduces the searched times.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

from bubblekit._progress import Progress, reporter
from bubblekit._validate import Number, check_int, check_sequence
from bubblekit.actions import Action, Event, memory_delta, needs, produces
from bubblekit.costs import Costs, ResolvedCosts
from bubblekit.schedules.base import Schedule, check_size
from bubblekit.simulator import DeadlockError, SimResult, simulate

__all__ = [
    "greedy_schedule",
    "exhaustive_schedule",
    "search_schedule",
    "SearchError",
    "POLICIES",
    "one_f_one_b_cap",
    "improve_schedule",
    "MAX_SEARCH_ACTIONS",
    "MAX_SEARCH_SECONDS",
]


#: Rules tried by :func:`search_schedule`: (first kind, second kind, W fill rule, F lead rule).
POLICIES: tuple[tuple[str, str, str, str], ...] = tuple(
    (a, b, fill, lead)
    for lead in ("1f1b", "cap")
    for (a, b) in (("I", "F"), ("F", "I"))
    for fill in ("fit", "eager")
)

#: Largest schedule (``3 p m`` actions) the greedy search takes on unless given
#: ``max_actions=None``. The time grows faster than the actions (each rule costs about
#: ``50 + 4 p`` µs per action, and the search tries 8 to ``3p`` rules), so a second limit,
#: :data:`MAX_SEARCH_SECONDS`, bounds the estimated time too (``benchmarks/bench_search.py``).
MAX_SEARCH_ACTIONS = 20_000

#: The longest :func:`search_schedule` / :func:`greedy_schedule` run accepted unless given
#: ``max_actions=None``: the estimate (:func:`_search_seconds`, a conservative one fitted to a
#: busy 2-core machine) must be at most this many seconds. ``benchmarks/bench_search.py`` runs
#: the largest accepted cases and prints their wall-clock and CPU times.
MAX_SEARCH_SECONDS = 5.0

#: The cost model of one greedy rule, seconds per action: ``_PER_ACTION + _PER_ACTION_RANK * p``.
_PER_ACTION, _PER_ACTION_RANK = 50e-6, 4e-6

#: Largest number of search nodes :func:`exhaustive_schedule` explores by default: a node takes
#: about 60 µs on a busy 2-core machine, so this is about 3 s, within :data:`MAX_SEARCH_SECONDS`
#: with the greedy rules that start the search.
DEFAULT_NODE_LIMIT = 50_000


class SearchError(ValueError):
    """No schedule satisfies the request (e.g. a memory cap below one microbatch)."""


def one_f_one_b_cap(p: int) -> int:
    """The 1F1B memory budget: ``p`` microbatch activations (rank 0's peak under 1F1B)."""
    return check_int("p", p)


# ----------------------------------------------------------------------------- helpers


@dataclass
class _Problem:
    p: int
    m: int
    f: tuple[Number, ...]
    i: tuple[Number, ...]
    w: tuple[Number, ...]
    act: tuple[float, ...]
    w_held: float
    comm: Number
    cap: tuple[float, ...]
    scale: int


def _problem(
    p: int, m: int, costs: Costs | None, mem_cap: float | Sequence[float] | None,
    max_actions: int | None = MAX_SEARCH_ACTIONS, what: str = "search",
) -> _Problem:
    p = check_int("p", p)
    m = check_int("m", m)
    check_size(f"{what}(p={p}, m={m})", 3 * p * m, max_actions,
               instead="search a smaller case and compare it with zb-h1 / zb-h2 at the size you need",
               cost=f"each greedy rule takes about 50 + 4 p µs per action, and the search tries 8 to 3p rules: "
                    f"here ~{_search_seconds(p, m, 3 * p):,.0f} s")
    if costs is None:
        costs = Costs(f=1, i=1, w=1)
    elif not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    if any(costs.transfer_times) or any(costs.dp_reduce if isinstance(costs.dp_reduce, tuple) else (costs.dp_reduce,)):
        raise ValueError(
            f"{what}() models a latency per hop only, not links with a bandwidth or a dp_reduce (got "
            f"bandwidth={costs.bandwidth!r}, dp_reduce={costs.dp_reduce!r}): {what} with "
            f"costs.with_(bandwidth=None, dp_reduce=0), then bk.simulate its schedule with your costs"
        )
    resolved: ResolvedCosts = costs.resolve(p, 1)
    rc, scale = resolved.scaled_to_integers()
    cap: tuple[float, ...]
    if mem_cap is None:
        cap = (float(one_f_one_b_cap(p)),) * p
    elif isinstance(mem_cap, (list, tuple)) or getattr(mem_cap, "ndim", 0) >= 1:
        mem_cap = check_sequence("mem_cap", mem_cap)
        if len(mem_cap) != p:
            raise ValueError(f"mem_cap has {len(mem_cap)} per-rank values but p={p}; give one per rank or one number")
        cap = tuple(_check_cap(f"mem_cap[{r}]", c) for r, c in enumerate(mem_cap))
    else:
        cap = (_check_cap("mem_cap", mem_cap),) * p
    act = tuple(float(a) for a in rc.activation)
    for r in range(p):
        if act[r] > cap[r] + 1e-12:
            raise SearchError(
                f"mem_cap={cap[r]:g} on rank {r} is below one microbatch's activations ({act[r]:g}): "
                "no schedule can run even one forward there; raise mem_cap"
            )
    return _Problem(p, m, rc.f, rc.i, rc.w, act, float(rc.w_held), rc.comm, cap, scale)


def _search_seconds(p: int, m: int, n_rules: int) -> float:
    """About how long ``n_rules`` greedy rules take on ``3 p m`` actions (``50 + 4 p`` µs per action each)."""
    return n_rules * 3 * p * m * (_PER_ACTION + _PER_ACTION_RANK * p)


def _check_time(what: str, p: int, m: int, n_rules: int, max_actions: int | None) -> None:
    """Refuse, before searching, a run estimated at more than :data:`MAX_SEARCH_SECONDS` (unless ``max_actions=None``)."""
    est = _search_seconds(p, m, n_rules)
    if max_actions is None or est <= MAX_SEARCH_SECONDS:
        return
    raise ValueError(
        f"{what}(p={p}, m={m}) would try {n_rules} greedy rule(s) on {3 * p * m:,} actions, about {est:,.0f} s "
        f"(each rule takes about 50 + 4 p µs per action), more than MAX_SEARCH_SECONDS={MAX_SEARCH_SECONDS:g} s. "
        f"Use fewer ranks or microbatches (or a mem_cap closer to p: each extra unit of cap above p adds warm-up "
        f"rules), or pass max_actions=None to run it anyway"
    )


def _check_cap(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of microbatch activations, got {value!r}")
    x = float(value)
    if math.isnan(x) or not x > 0:
        raise ValueError(f"{name} must be > 0 microbatch activations, got {value!r}")
    if math.isinf(x):
        raise ValueError(f"{name} must be a finite number of microbatch activations (use None for 1F1B's p), got {value!r}")
    return x


def _to_schedule(prob: _Problem, orders: list[list[Action]], name: str, notes: dict[str, str]) -> Schedule:
    sched = Schedule(
        name=name, p=prob.p, m=prob.m, placement=tuple(range(prob.p)),
        orders=tuple(tuple(o) for o in orders),
        source="bubblekit.analysis.search (automatic schedule search, after Qi et al. 2024 §3)",
        notes=notes,
    )
    sched.validate()
    return sched


def _real(prob: _Problem, t: Number) -> Number:
    if prob.scale == 1:
        return t
    q = Fraction(t) / prob.scale
    return q.numerator if q.denominator == 1 else q


# ----------------------------------------------------------------------------- greedy


def greedy_schedule(
    p: int,
    m: int,
    costs: Costs | None = None,
    *,
    mem_cap: float | Sequence[float] | None = None,
    priority: tuple[str, str] = ("I", "F"),
    w_fill: str = "fit",
    lead: str | int = "cap",
) -> Schedule:
    """List-schedule F, I, W on ``p`` ranks under a per-rank memory cap.

    Args:
        p: ranks (= stages, one chunk per rank), int >= 1.
        m: microbatches, int >= 1.
        costs: a :class:`~bubblekit.Costs` (default ``F = I = W = 1`` slot, no latency);
            its ``i`` and ``w`` are the split backward.
        mem_cap: activations each rank may hold, in microbatch activations (one number or
            one per rank); default ``p``, the peak of 1F1B.
        priority: order in which a free rank prefers ready ``I`` and ``F`` (``("I", "F")``
            is 1F1B-like, ``("F", "I")`` fills the warm-up with forwards like ZB-H2).
        w_fill: ``"fit"`` runs a pending W in a gap only when no I or F can start
            before the W would end; ``"eager"`` runs one whenever nothing else is ready;
            ``"first"`` also runs a pending W before a ready F (ZB-H2's steady ``I, W, F``).
        lead: how many forwards rank ``r`` may run ahead of its input-gradients:
            ``"1f1b"`` allows ``p - r`` (1F1B's warm-up, so I starts as early as in 1F1B and
            W is what waits, as in ZB-H1), an int ``k`` allows ``k`` on rank 0 falling
            linearly to 1 on rank ``p - 1`` (``k = p`` is 1F1B's ``p - r``; ``k = 2p - 1``
            is ZB-H2's ``2p - 1 - 2r``), ``"cap"`` lets only the memory cap limit it.

    Returns a :class:`Schedule` named ``"greedy"``; its notes record the rule used. A W is
    also run when the cap blocks a forward (to free memory). F, I and W each go in
    microbatch order on every rank.
    """
    prob = _problem(p, m, costs, mem_cap)
    _check_time("greedy_schedule", prob.p, prob.m, 1, MAX_SEARCH_ACTIONS)
    if not (isinstance(priority, tuple) and sorted(priority) == ["F", "I"]):
        raise ValueError(f"priority must be ('I', 'F') or ('F', 'I'), got {priority!r}")
    if w_fill not in ("fit", "eager", "first"):
        raise ValueError(f"w_fill must be 'fit', 'eager' or 'first', got {w_fill!r}")
    if not (lead in ("cap", "1f1b") or (isinstance(lead, int) and not isinstance(lead, bool) and lead >= 1)):
        raise ValueError(f"lead must be 'cap', '1f1b' or an int >= 1, got {lead!r}")
    orders, _ = _greedy(prob, priority, w_fill, lead)
    rule = f"greedy priority={''.join(priority)} w_fill={w_fill} lead={lead}"
    return _to_schedule(prob, orders, "greedy", {"method": rule})


def _lead(k: int, r: int, p: int) -> int:
    """Forwards rank ``r`` may run ahead of its I passes: ``k`` on rank 0 falling linearly to 1 on rank p-1."""
    if p == 1:
        return k
    return max(1, k - (r * (k - 1)) // (p - 1))


class _Rules(NamedTuple):
    """The rules applied to one action: its inputs (event, latency), the events it makes,
    its duration, and the activations it allocates at its start and frees at its end."""

    inputs: tuple[tuple[Event, Number], ...]
    makes: tuple[Event, ...]
    duration: Number
    alloc: float
    free: float


class _Partial:
    """A partial one-chunk schedule (stage ``r`` on rank ``r``) being built action by action.

    Per rank: how many ``F``, ``I`` and ``W`` have run (each kind goes in microbatch
    order), the activations held and when the rank is free; over all ranks, when each
    event was made. Times follow the simulator's rules (:func:`bubblekit.actions.needs`,
    latency between ranks) and memory its rule (:func:`bubblekit.actions.memory_delta`),
    so a searched order simulates to the searched times.
    """

    def __init__(self, prob: _Problem) -> None:
        self.prob = prob
        p = prob.p
        self.count = {"F": [0] * p, "I": [0] * p, "W": [0] * p}
        self.held = [0.0] * p
        self.clock: list[Number] = [0] * p
        self.done: dict[Event, Number] = {}
        self.orders: list[list[Action]] = [[] for _ in range(p)]
        # the rules for each action, worked out once (the search asks about the same ones often)
        self._actions = {k: [[Action(r, k, j) for j in range(prob.m)] + [None] for r in range(p)] for k in "FIW"}
        self._rules: dict[Action, _Rules] = {}

    def rules(self, action: Action) -> _Rules:
        """What the simulator's rules say about ``action`` (inputs with latency, events, cost, memory)."""
        got = self._rules.get(action)
        if got is None:
            prob, r = self.prob, action.stage
            inputs = tuple((e, prob.comm if e.stage != r else 0) for e in needs(action, prob.p))
            duration = {"F": prob.f, "I": prob.i, "W": prob.w}[action.kind][r]
            alloc, free = memory_delta(action, prob.act, prob.w_held)
            got = self._rules[action] = _Rules(inputs, produces(action), duration, float(alloc), float(free))
        return got

    def next(self, r: int, kind: str) -> Action | None:
        """Rank ``r``'s next action of ``kind``, or ``None`` when all ``m`` have run."""
        return self._actions[kind][r][self.count[kind][r]]

    def ready(self, action: Action | None) -> Number | float:
        """When every input of ``action`` is there (+ latency from another rank); inf if one is missing."""
        if action is None:
            return math.inf
        t: Number = 0
        for e, latency in self.rules(action).inputs:
            d = self.done.get(e)
            if d is None:
                return math.inf
            t = max(t, d + latency)
        return t

    def fits(self, action: Action | None) -> bool:
        """Whether rank ``action.stage`` stays under its cap when ``action`` starts."""
        if action is None:
            return False
        r = action.stage
        return self.held[r] + self.rules(action).alloc <= self.prob.cap[r] + 1e-9

    def run(self, action: Action, start: Number) -> tuple[Number, float]:
        """Run ``action`` from ``start``; return what :meth:`undo` needs (clock and memory before)."""
        r, rules = action.stage, self.rules(action)
        saved = (self.clock[r], self.held[r])
        end = start + rules.duration
        for e in rules.makes:
            self.done[e] = end
        self.held[r] += rules.alloc
        self.held[r] -= rules.free
        self.count[action.kind][r] += 1
        self.clock[r] = end
        self.orders[r].append(action)
        return saved

    def undo(self, action: Action, saved: tuple[Number, float]) -> None:
        """Take back the last :meth:`run` of ``action``."""
        r = action.stage
        self.orders[r].pop()
        self.count[action.kind][r] -= 1
        for e in self.rules(action).makes:
            del self.done[e]
        self.clock[r], self.held[r] = saved


class _ListScheduler:
    """:func:`greedy_schedule`'s list scheduling, one decision at a time.

    Time moves forward: the free rank whose next decision comes first picks the most urgent
    ready action (:meth:`choose`), or waits, until every rank has run its ``3m`` actions.
    """

    def __init__(self, prob: _Problem, priority: tuple[str, str], w_fill: str, lead: str | int) -> None:
        self.prob, self.priority, self.w_fill, self.lead = prob, priority, w_fill, lead
        self.state = _Partial(prob)

    def f_allowed(self, r: int) -> bool:
        """Rank ``r`` may start its next forward: within its lead over the I passes, and its cap."""
        st, p = self.state, self.prob.p
        ahead = st.count["F"][r] - st.count["I"][r]
        if self.lead == "1f1b" and ahead >= p - r:
            return False
        if isinstance(self.lead, int) and ahead >= _lead(self.lead, r, p):
            return False
        return st.fits(st.next(r, "F"))

    def next_input(self, r: int) -> Number | float:
        """When rank ``r``'s next I or (allowed) F could start by its inputs; inf if never yet."""
        st = self.state
        f_at = st.ready(st.next(r, "F")) if self.f_allowed(r) else math.inf
        return min(f_at, st.ready(st.next(r, "I")))

    def next_decision(self) -> tuple[Number, int] | None:
        """``(time, rank)`` of the free rank whose next decision comes first; ``None`` when none can act."""
        st = self.state
        best: tuple[Number, int] | None = None
        for r in range(self.prob.p):
            if len(st.orders[r]) == 3 * self.prob.m:
                continue
            w_ready = st.count["W"][r] < st.count["I"][r]
            when = st.clock[r] if w_ready else max(st.clock[r], self.next_input(r))
            if when != math.inf and (best is None or when < best[0]):
                best = (when, r)
        return best

    def choose(self, t: Number, r: int) -> str | None:
        """The kind rank ``r`` runs at ``t``, or ``None`` to wait for its next input instead.

        A ready ``I`` or ``F`` by the priority; ``w_fill="first"`` puts a pending ``W`` before
        a forward; else a pending ``W`` fills the gap when it fits before the next input (or
        always with ``"eager"``), or must run to free memory for a blocked forward.
        """
        st = self.state
        ready = {"I": st.ready(st.next(r, "I")) <= t, "F": self.f_allowed(r) and st.ready(st.next(r, "F")) <= t}
        kind = next((k for k in self.priority if ready[k]), None)
        w_pending = st.count["W"][r] < st.count["I"][r]
        if kind == "F" and self.w_fill == "first" and w_pending and not ready["I"]:
            return "W"  # a pending W goes before the next forward (ZB-H2's steady I, W, F)
        if kind is not None:
            return kind
        assert w_pending
        nxt = self.next_input(r)
        fits = nxt >= t + self.prob.w[r]
        blocked_by_memory = not self.f_allowed(r) and st.count["F"][r] < self.prob.m
        if self.w_fill in ("eager", "first") or fits or blocked_by_memory or nxt == math.inf:
            return "W"
        return None

    def run(self) -> tuple[list[list[Action]], Number]:
        """Schedule every action; return the orders and the makespan (ticks)."""
        st = self.state
        while (decision := self.next_decision()) is not None:
            t, r = decision
            kind = self.choose(t, r)
            if kind is None:  # wait for the next I or F instead of delaying it with a W
                st.clock[r] = self.next_input(r)  # type: ignore[assignment]
                continue
            st.run(st.next(r, kind), t)  # type: ignore[arg-type]
        if any(len(o) != 3 * self.prob.m for o in st.orders):
            raise SearchError(
                "greedy search got stuck: the memory cap leaves no rank able to progress "
                f"(cap per rank {self.prob.cap}); raise mem_cap"
            )
        return st.orders, max(st.clock)


def _greedy(
    prob: _Problem, priority: tuple[str, str], w_fill: str, lead: str | int = "cap"
) -> tuple[list[list[Action]], Number]:
    """One greedy rule's orders and makespan (see :class:`_ListScheduler`)."""
    return _ListScheduler(prob, priority, w_fill, lead).run()


# ----------------------------------------------------------------------------- exhaustive


def exhaustive_schedule(
    p: int,
    m: int,
    costs: Costs | None = None,
    *,
    mem_cap: float | Sequence[float] | None = None,
    node_limit: int = DEFAULT_NODE_LIMIT,
) -> Schedule:
    """The shortest schedule under the cap, by branch and bound over all orders.

    Every order in which F, I and W each run in microbatch order on a rank is considered
    (its semi-active timing: each action as early as its rank and inputs allow). The
    search adds actions in order of (start time, rank), which visits each set of orders
    exactly once, and prunes by a lower bound (each rank's remaining work). Start from
    the best greedy schedule as the incumbent.

    Args:
        p, m, costs, mem_cap: as for :func:`greedy_schedule`.
        node_limit: give up after this many search nodes (int >= 1; about 60 µs each, so the
            default :data:`DEFAULT_NODE_LIMIT` is about 3 s).

    Returns a :class:`Schedule` named ``"exhaustive"``; ``notes["optimal"]`` is ``"yes"``
    when the search finished (the result is optimal), ``"no"`` when it hit ``node_limit``
    (the result is the best found, never worse than greedy).
    """
    prob = _problem(p, m, costs, mem_cap)
    node_limit = check_int("node_limit", node_limit)
    _check_time("exhaustive_schedule", prob.p, prob.m, len(POLICIES), MAX_SEARCH_ACTIONS)
    best_orders: list[list[Action]] | None = None
    best_span: Number | float = math.inf
    for a, b, fill, lead in POLICIES:
        try:
            orders, span = _greedy(prob, (a, b), fill, lead)
        except SearchError:
            continue
        if span < best_span:
            best_orders, best_span = orders, span
    finished, orders_x, span_x, nodes = _branch_and_bound(prob, best_span, node_limit)
    if orders_x is not None and span_x < best_span:
        best_orders, best_span = orders_x, span_x
    if best_orders is None:
        raise SearchError(f"no schedule fits the memory cap {prob.cap} (p={p}, m={m})")
    notes = {
        "method": "exhaustive branch and bound",
        "optimal": "yes" if finished else "no",
        "nodes": str(nodes),
    }
    return _to_schedule(prob, best_orders, "exhaustive", notes)


def _branch_and_bound(
    prob: _Problem, incumbent: Number | float, node_limit: int
) -> tuple[bool, list[list[Action]] | None, Number | float, int]:
    p, m = prob.p, prob.m
    st = _Partial(prob)
    remaining: list[Number] = [m * (prob.f[r] + prob.i[r] + prob.w[r]) for r in range(p)]
    best: dict[str, object] = {"span": incumbent, "orders": None}
    nodes = 0
    aborted = False
    n_total = 3 * m * p

    def choices(r: int) -> list[tuple[Number, str]]:
        """Rank ``r``'s next F (if it fits), I and W with the time each could start."""
        out: list[tuple[Number, str]] = []
        for kind in ("F", "I", "W"):
            a = st.next(r, kind)
            if kind == "F" and not st.fits(a):
                continue
            ready = st.ready(a)
            if ready != math.inf:
                out.append((max(st.clock[r], ready), kind))
        return out

    def dfs(last: tuple[Number, int], done: int) -> None:
        nonlocal nodes, aborted
        if aborted:
            return
        nodes += 1
        if nodes > node_limit:
            aborted = True
            return
        if done == n_total:
            span = max(st.clock)
            if span < best["span"]:  # type: ignore[operator]
                best["span"] = span
                best["orders"] = [list(o) for o in st.orders]
            return
        t_last = last[0]
        bound = max(max(st.clock[r], t_last) + remaining[r] if remaining[r] else st.clock[r] for r in range(p))
        if bound >= best["span"]:  # type: ignore[operator]
            return
        cands: list[tuple[Number, int, str]] = []
        for r in range(p):
            for start, kind in choices(r):
                if (start, r) > last:
                    cands.append((start, r, kind))
        cands.sort(key=lambda c: (c[0], c[1], "IFW".index(c[2])))
        for start, r, kind in cands:
            a = st.next(r, kind)
            assert a is not None
            saved = st.run(a, start)
            dur = st.rules(a).duration
            remaining[r] -= dur
            dfs((start, r), done + 1)
            remaining[r] += dur
            st.undo(a, saved)
            if aborted:
                return

    dfs((-1, -1), 0)
    return (not aborted, best["orders"], best["span"], nodes)  # type: ignore[return-value]


# ----------------------------------------------------------------------------- search


def search_schedule(
    p: int,
    m: int,
    costs: Costs | None = None,
    *,
    mem_cap: float | Sequence[float] | None = None,
    method: str = "auto",
    node_limit: int = DEFAULT_NODE_LIMIT,
    objective: str = "makespan",
    seeds: bool = True,
    improve: bool | None = None,
    max_actions: int | None = MAX_SEARCH_ACTIONS,
    progress: Progress = None,
) -> Schedule:
    """Find a short schedule of F, I and W under a memory cap.

    Args:
        p: ranks (one chunk each), int >= 1.
        m: microbatches, int >= 1.
        costs: the cost model (default ``F = I = W = 1`` slot).
        mem_cap: activations per rank, in microbatch activations (default ``p``: 1F1B's budget).
        method: ``"greedy"`` (best of the :data:`POLICIES` grid, plus warm-up leads
            ``k = p+1 .. min(cap, 2p-1)``), ``"exhaustive"``
            (branch and bound, tiny cases), or ``"auto"`` (exhaustive when
            ``p * m <= 12`` and the objective is the makespan, else greedy).
        node_limit: node budget of the exhaustive search.
        objective: ``"makespan"`` (the step from the first start to the last end over all
            ranks) or ``"stage_span"`` (the longest time one rank spends from its own first
            action to its own last: the zero-bubble paper's cost, which ignores the start-up
            and flush corners that the next step fills when the optimizer synchronization
            is bypassed).
        seeds: also consider the handcrafted ``zb-h1`` and ``zb-h2`` orders when they fit
            the cap (the paper likewise starts its ILP from a heuristic solution), so the
            result is never worse than a handcrafted schedule that fits.
        improve: polish the best candidate by hill climbing on swaps of two neighbouring
            actions of one rank (:func:`improve_schedule`); default on when ``p * m <= 64``.
        max_actions: refuse problems of more than this many actions (``3 p m``; default
            :data:`MAX_SEARCH_ACTIONS`) or estimated to take more than :data:`MAX_SEARCH_SECONDS`
            (five seconds, estimated conservatively; ``benchmarks/bench_search.py`` measures it);
            ``None`` lifts both limits.
        progress: ``None`` reports progress on standard error when the search is estimated
            to take more than a few seconds; ``True``/``False`` always/never; or a function
            of one line of text.

    Returns the best :class:`Schedule` found (name ``"searched"``); ``notes`` say which
    method and rule produced it. Ties are broken by the lower peak memory, then by the
    order in which candidates are tried, so the result is deterministic.

    Used in lesson 07.
    """
    if method not in ("auto", "greedy", "exhaustive"):
        raise ValueError(f"method must be 'auto', 'greedy' or 'exhaustive', got {method!r}")
    if objective not in ("makespan", "stage_span"):
        raise ValueError(f"objective must be 'makespan' or 'stage_span', got {objective!r}")
    if objective == "stage_span" and method == "exhaustive":
        raise ValueError("the exhaustive search minimises the makespan; use method='greedy' or 'auto' "
                         "with objective='stage_span'")
    prob = _problem(p, m, costs, mem_cap, max_actions, "search_schedule")
    use_exhaustive = method == "exhaustive" or (
        method == "auto" and objective == "makespan" and prob.p * prob.m <= 12
    )
    if use_exhaustive:
        found = exhaustive_schedule(p, m, costs, mem_cap=mem_cap, node_limit=node_limit)
        return _renamed(found, "searched")
    candidates: list[tuple[str, list[list[Action]]]] = []
    rules: list[tuple[str, str, str, str | int]] = list(POLICIES)
    top = int(min(max(prob.cap), 2 * prob.p - 1))
    rules += [("I", "F", fill, k) for k in range(prob.p + 1, top + 1) for fill in ("fit", "eager", "first")]
    _check_time("search_schedule", prob.p, prob.m, len(rules), max_actions)
    step = reporter(progress, "search_schedule: greedy rules", len(rules), _search_seconds(prob.p, prob.m, len(rules)))
    for k, (a, b, fill, lead) in enumerate(rules, 1):
        try:
            orders, _ = _greedy(prob, (a, b), fill, lead)
        except SearchError:
            continue
        finally:
            step(k)
        candidates.append((f"greedy priority={a}{b} w_fill={fill} lead={lead}", orders))
    if seeds:
        from bubblekit.schedules import schedule as build

        for name in ("zb-h1", "zb-h2"):
            orders = [list(o) for o in build(name, prob.p, prob.m).orders]
            if all(pk <= c + 1e-9 for pk, c in zip(_peaks(prob, orders), prob.cap)):
                candidates.append((f"seed {name}", orders))
    if not candidates:
        raise SearchError(f"no greedy rule fits the memory cap {prob.cap} (p={p}, m={m})")
    best: tuple[Number, float, int] | None = None
    best_orders: list[list[Action]] = []
    best_rule = ""
    for k, (rule, orders) in enumerate(candidates):
        key = (_objective(prob, orders, objective), _peak(prob, orders), k)
        if best is None or key < best:
            best, best_orders, best_rule = key, orders, rule
    if improve is None:
        improve = prob.p * prob.m <= 64
    if improve:
        polished, gained = _hill_climb(prob, best_orders, objective)
        if gained:
            best_orders, best_rule = polished, best_rule + " + swaps"
    return _to_schedule(prob, best_orders, "searched", {"method": best_rule, "objective": objective})


def improve_schedule(
    sched: Schedule,
    costs: Costs | None = None,
    *,
    mem_cap: float | Sequence[float] | None = None,
    objective: str = "makespan",
    max_passes: int = 20,
) -> Schedule:
    """Hill climbing: swap two neighbouring actions of one rank while that helps.

    A swap is kept when the schedule stays legal (no deadlock, within ``mem_cap``) and
    the objective (``"makespan"`` or ``"stage_span"``) strictly drops. Passes over all
    neighbouring pairs repeat until none helps or ``max_passes`` (int >= 1) is reached.
    Works on one-chunk schedules (stage ``r`` on rank ``r``).
    """
    if not isinstance(sched, Schedule):
        raise TypeError(f"sched must be a bubblekit Schedule, got {type(sched).__name__}")
    if sched.placement != tuple(range(sched.p)):
        raise ValueError("improve_schedule works on one chunk per rank (stage r on rank r)")
    if objective not in ("makespan", "stage_span"):
        raise ValueError(f"objective must be 'makespan' or 'stage_span', got {objective!r}")
    max_passes = check_int("max_passes", max_passes)
    prob = _problem(sched.p, sched.m, costs, mem_cap)
    orders, _ = _hill_climb(prob, [list(o) for o in sched.orders], objective, max_passes)
    return _to_schedule(prob, orders, "improved", {"method": f"hill climbing from {sched.name}"})


def _objective(prob: _Problem, orders: list[list[Action]], objective: str) -> Number:
    res = _simulate_orders(prob, orders)
    if objective == "makespan":
        return res.makespan
    return max(end - start for start, end in res.stage_spans)


def _simulate_orders(prob: _Problem, orders: list[list[Action]]) -> SimResult:
    sched = Schedule("tmp", prob.p, prob.m, tuple(range(prob.p)), tuple(tuple(o) for o in orders))
    return simulate(sched, _costs_of(prob), validate=False)


def _hill_climb(
    prob: _Problem, orders: list[list[Action]], objective: str, max_passes: int = 20
) -> tuple[list[list[Action]], bool]:
    current = [list(o) for o in orders]
    value = _objective(prob, current, objective)
    gained = False
    for _ in range(max_passes):
        moved = False
        for r in range(prob.p):
            for k in range(len(current[r]) - 1):
                a, b = current[r][k], current[r][k + 1]
                if a.microbatch == b.microbatch or a.kind == b.kind:
                    continue  # same microbatch: dependent; same kind: FIFO order kept
                current[r][k], current[r][k + 1] = b, a
                ok = _fits(prob, current[r], r)
                if ok:
                    try:
                        new = _objective(prob, current, objective)
                    except DeadlockError:
                        ok = False
                if ok and new < value:
                    value, moved, gained = new, True, True
                else:
                    current[r][k], current[r][k + 1] = a, b
        if not moved:
            break
    return current, gained


def _fits(prob: _Problem, order: list[Action], r: int) -> bool:
    """Whether rank ``r``'s order stays under its cap."""
    return _rank_peak(prob, order) <= prob.cap[r] + 1e-9


def _rank_peak(prob: _Problem, order: Sequence[Action]) -> float:
    """Largest activations one rank holds along its order (the memory rule, microbatch activations)."""
    held, top = 0.0, 0.0
    for a in order:
        alloc, free = memory_delta(a, prob.act, prob.w_held)
        held += alloc
        top = max(top, held)
        held -= free
    return top


def _renamed(s: Schedule, name: str) -> Schedule:
    return Schedule(name, s.p, s.m, s.placement, s.orders, s.source, dict(s.notes))


def _costs_of(prob: _Problem) -> Costs:
    """The problem's (integer-scaled) per-stage costs as a Costs (for re-simulation)."""
    return Costs(f=list(prob.f), i=list(prob.i), w=list(prob.w), comm=prob.comm,
                 activation=list(prob.act), w_held=prob.w_held)


def _peaks(prob: _Problem, orders: list[list[Action]]) -> list[float]:
    """Per-rank largest count of held activations along the orders (microbatch activations)."""
    return [_rank_peak(prob, order) for order in orders]


def _peak(prob: _Problem, orders: list[list[Action]]) -> float:
    """Largest per-rank peak of held activations (microbatch activations)."""
    return max(_peaks(prob, orders))
