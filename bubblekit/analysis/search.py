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
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from bubblekit._validate import check_int
from bubblekit.actions import Action
from bubblekit.costs import Costs, ResolvedCosts
from bubblekit.schedules.base import Schedule
from bubblekit.simulator import DeadlockError, SimResult, simulate

__all__ = [
    "greedy_schedule",
    "exhaustive_schedule",
    "search_schedule",
    "SearchError",
    "POLICIES",
    "one_f_one_b_cap",
    "improve_schedule",
]

Number = Union[int, float, Fraction]

#: Rules tried by :func:`search_schedule`: (first kind, second kind, W fill rule, F lead rule).
POLICIES: tuple[tuple[str, str, str, str], ...] = tuple(
    (a, b, fill, lead)
    for lead in ("1f1b", "cap")
    for (a, b) in (("I", "F"), ("F", "I"))
    for fill in ("fit", "eager")
)

#: Largest number of search nodes :func:`exhaustive_schedule` explores by default.
DEFAULT_NODE_LIMIT = 200_000


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


def _problem(p: int, m: int, costs: Costs | None, mem_cap: float | Sequence[float] | None) -> _Problem:
    p = check_int("p", p)
    m = check_int("m", m)
    if costs is None:
        costs = Costs(f=1, i=1, w=1)
    elif not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    resolved: ResolvedCosts = costs.resolve(p, 1)
    rc, scale = resolved.scaled_to_integers()
    cap: tuple[float, ...]
    if mem_cap is None:
        cap = (float(one_f_one_b_cap(p)),) * p
    elif isinstance(mem_cap, (list, tuple)):
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


def _check_cap(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise TypeError(f"{name} must be a number of microbatch activations, got {value!r}")
    x = float(value)
    if math.isnan(x) or not x > 0:
        raise ValueError(f"{name} must be > 0 microbatch activations, got {value!r}")
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


def _greedy(
    prob: _Problem, priority: tuple[str, str], w_fill: str, lead: str | int = "cap"
) -> tuple[list[list[Action]], Number]:
    p, m = prob.p, prob.m
    comm = prob.comm
    INF = math.inf
    fdone: list[list[Number | None]] = [[None] * m for _ in range(p)]
    idone: list[list[Number | None]] = [[None] * m for _ in range(p)]
    nf, ni, nw = [0] * p, [0] * p, [0] * p
    held = [0.0] * p
    clock: list[Number] = [0] * p
    orders: list[list[Action]] = [[] for _ in range(p)]
    total = 3 * m

    def f_arrival(r: int) -> Number | float:
        j = nf[r]
        if j >= m:
            return INF
        if r == 0:
            return 0
        d = fdone[r - 1][j]
        return INF if d is None else d + comm

    def i_arrival(r: int) -> Number | float:
        j = ni[r]
        if j >= m or j >= nf[r]:
            return INF
        own = fdone[r][j]
        assert own is not None
        if r == p - 1:
            return own
        d = idone[r + 1][j]
        return INF if d is None else max(own, d + comm)

    def f_allowed(r: int) -> bool:
        if lead == "1f1b" and nf[r] - ni[r] >= p - r:
            return False
        if isinstance(lead, int) and nf[r] - ni[r] >= _lead(lead, r, p):
            return False
        return held[r] + prob.act[r] <= prob.cap[r] + 1e-9

    def run(r: int, kind: str, start: Number) -> None:
        if kind == "F":
            j = nf[r]
            end = start + prob.f[r]
            fdone[r][j] = end
            held[r] += prob.act[r]
            nf[r] += 1
        elif kind == "I":
            j = ni[r]
            end = start + prob.i[r]
            idone[r][j] = end
            held[r] -= prob.act[r] * (1.0 - prob.w_held)
            ni[r] += 1
        else:
            j = nw[r]
            end = start + prob.w[r]
            held[r] -= prob.act[r] * prob.w_held
            nw[r] += 1
        orders[r].append(Action(r, kind, j))
        clock[r] = end

    while True:
        # the free rank whose next decision comes first
        best: tuple[Number | float, int] | None = None
        for r in range(p):
            if len(orders[r]) == total:
                continue
            w_ready = nw[r] < ni[r]
            nxt = min(f_arrival(r) if f_allowed(r) else INF, i_arrival(r))
            when: Number | float = clock[r] if w_ready else max(clock[r], nxt)
            if when == INF:
                continue
            if best is None or when < best[0]:
                best = (when, r)
        if best is None:
            break
        t, r = best
        ready = {
            "I": i_arrival(r) <= t,
            "F": f_allowed(r) and f_arrival(r) <= t,
        }
        kind = next((k for k in priority if ready[k]), None)
        if kind == "F" and w_fill == "first" and nw[r] < ni[r] and not ready["I"]:
            kind = "W"  # a pending W goes before the next forward (ZB-H2's steady I, W, F)
        if kind is None:
            # nothing urgent is ready: a W may fill the gap (or must, to free memory)
            assert nw[r] < ni[r]
            nxt = min(f_arrival(r) if f_allowed(r) else INF, i_arrival(r))
            fits = nxt >= t + prob.w[r]
            blocked_by_memory = not f_allowed(r) and nf[r] < m
            if w_fill in ("eager", "first") or fits or blocked_by_memory or nxt == INF:
                kind = "W"
            else:
                # wait for the next I or F instead of delaying it with a W
                clock[r] = nxt  # type: ignore[assignment]
                continue
        run(r, kind, t)  # type: ignore[arg-type]
    if any(len(o) != total for o in orders):
        raise SearchError(
            "greedy search got stuck: the memory cap leaves no rank able to progress "
            f"(cap per rank {prob.cap}); raise mem_cap"
        )
    return orders, max(clock)


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
        node_limit: give up after this many search nodes (int >= 1).

    Returns a :class:`Schedule` named ``"exhaustive"``; ``notes["optimal"]`` is ``"yes"``
    when the search finished (the result is optimal), ``"no"`` when it hit ``node_limit``
    (the result is the best found, never worse than greedy).
    """
    prob = _problem(p, m, costs, mem_cap)
    node_limit = check_int("node_limit", node_limit)
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
    p, m, comm = prob.p, prob.m, prob.comm
    fdone: list[list[Number | None]] = [[None] * m for _ in range(p)]
    idone: list[list[Number | None]] = [[None] * m for _ in range(p)]
    nf, ni, nw = [0] * p, [0] * p, [0] * p
    held = [0.0] * p
    clock: list[Number] = [0] * p
    remaining: list[Number] = [m * (prob.f[r] + prob.i[r] + prob.w[r]) for r in range(p)]
    orders: list[list[Action]] = [[] for _ in range(p)]
    best: dict[str, object] = {"span": incumbent, "orders": None}
    nodes = 0
    aborted = False
    n_total = 3 * m * p

    def choices(r: int) -> list[tuple[Number, str]]:
        out: list[tuple[Number, str]] = []
        j = nf[r]
        if j < m and held[r] + prob.act[r] <= prob.cap[r] + 1e-9:
            if r == 0:
                out.append((clock[r], "F"))
            else:
                d = fdone[r - 1][j]
                if d is not None:
                    out.append((max(clock[r], d + comm), "F"))
        j = ni[r]
        if j < m and j < nf[r]:
            own = fdone[r][j]
            assert own is not None
            if r == p - 1:
                out.append((max(clock[r], own), "I"))
            else:
                d = idone[r + 1][j]
                if d is not None:
                    out.append((max(clock[r], own, d + comm), "I"))
        if nw[r] < ni[r]:
            j = nw[r]
            d = idone[r][j]
            assert d is not None
            out.append((max(clock[r], d), "W"))
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
            span = max(clock)
            if span < best["span"]:  # type: ignore[operator]
                best["span"] = span
                best["orders"] = [list(o) for o in orders]
            return
        t_last = last[0]
        bound = max(max(clock[r], t_last) + remaining[r] if remaining[r] else clock[r] for r in range(p))
        if bound >= best["span"]:  # type: ignore[operator]
            return
        cands: list[tuple[Number, int, str]] = []
        for r in range(p):
            for start, kind in choices(r):
                if (start, r) > last:
                    cands.append((start, r, kind))
        cands.sort(key=lambda c: (c[0], c[1], "IFW".index(c[2])))
        for start, r, kind in cands:
            # apply
            saved = (clock[r], held[r])
            if kind == "F":
                j = nf[r]
                dur = prob.f[r]
                fdone[r][j] = start + dur
                held[r] += prob.act[r]
                nf[r] += 1
            elif kind == "I":
                j = ni[r]
                dur = prob.i[r]
                idone[r][j] = start + dur
                held[r] -= prob.act[r] * (1.0 - prob.w_held)
                ni[r] += 1
            else:
                j = nw[r]
                dur = prob.w[r]
                held[r] -= prob.act[r] * prob.w_held
                nw[r] += 1
            clock[r] = start + dur
            remaining[r] -= dur
            orders[r].append(Action(r, kind, j))
            dfs((start, r), done + 1)
            # undo
            orders[r].pop()
            remaining[r] += dur
            clock[r], held[r] = saved
            if kind == "F":
                nf[r] -= 1
                fdone[r][nf[r]] = None
            elif kind == "I":
                ni[r] -= 1
                idone[r][ni[r]] = None
            else:
                nw[r] -= 1
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

    Returns the best :class:`Schedule` found (name ``"searched"``); ``notes`` say which
    method and rule produced it. Ties are broken by the lower peak memory, then by the
    order in which candidates are tried, so the result is deterministic.
    """
    if method not in ("auto", "greedy", "exhaustive"):
        raise ValueError(f"method must be 'auto', 'greedy' or 'exhaustive', got {method!r}")
    if objective not in ("makespan", "stage_span"):
        raise ValueError(f"objective must be 'makespan' or 'stage_span', got {objective!r}")
    if objective == "stage_span" and method == "exhaustive":
        raise ValueError("the exhaustive search minimises the makespan; use method='greedy' or 'auto' "
                         "with objective='stage_span'")
    prob = _problem(p, m, costs, mem_cap)
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
    for a, b, fill, lead in rules:
        try:
            orders, _ = _greedy(prob, (a, b), fill, lead)
        except SearchError:
            continue
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
    spans = []
    for r in range(prob.p):
        starts, ends, _ = res.arrays(r)
        spans.append(max(ends) - min(starts))
    return max(spans)


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
    held = 0.0
    for a in order:
        if a.kind == "F":
            held += prob.act[r]
            if held > prob.cap[r] + 1e-9:
                return False
        elif a.kind == "I":
            held -= prob.act[r] * (1.0 - prob.w_held)
        else:
            held -= prob.act[r] * prob.w_held
    return True


def _renamed(s: Schedule, name: str) -> Schedule:
    return Schedule(name, s.p, s.m, s.placement, s.orders, s.source, dict(s.notes))


def _costs_of(prob: _Problem) -> Costs:
    """The problem's (integer-scaled) per-stage costs as a Costs (for re-simulation)."""
    return Costs(f=list(prob.f), i=list(prob.i), w=list(prob.w), comm=prob.comm,
                 activation=list(prob.act), w_held=prob.w_held)


def _peaks(prob: _Problem, orders: list[list[Action]]) -> list[float]:
    """Per-rank largest count of held activations along the orders (microbatch activations)."""
    out = []
    for r, order in enumerate(orders):
        held, top = 0.0, 0.0
        for a in order:
            if a.kind == "F":
                held += prob.act[r]
                top = max(top, held)
            elif a.kind == "I":
                held -= prob.act[r] * (1.0 - prob.w_held)
            else:
                held -= prob.act[r] * prob.w_held
        out.append(top)
    return out


def _peak(prob: _Problem, orders: list[list[Action]]) -> float:
    """Largest per-rank peak of held activations (microbatch activations)."""
    return max(_peaks(prob, orders))
