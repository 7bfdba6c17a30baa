"""Step 4, clock alignment: per-rank clock offsets from the pipeline's dependencies.

Ranks on different hosts may have different clocks. Every dependency between two ranks
(``1F0`` cannot start before ``0F0`` ends; the rule is :func:`bubblekit.actions.inputs`) bounds
the offset between their clocks: ``offset[consumer] - offset[producer] >= producer end -
consumer start``. With ``align="auto"`` the clocks are kept when they satisfy every
dependency (within ``tolerance``, profiler jitter); otherwise each rank is shifted, breadth
first from rank 0, to the middle of its allowed window (latency assumed the same both
ways). ``"causal"`` always shifts to the middle; ``"none"`` never shifts and notes the worst
violation. When no shift satisfies every dependency, :class:`TraceError` says which two
dependencies contradict each other.

Offsets are in the file's unit (us for JSON); ``scale`` (units per ms) converts them for
messages.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from bubblekit.actions import Action, inputs

from .records import TraceError
from .steps import Occ

__all__ = ["ALIGN_MODES", "align_clocks"]

ALIGN_MODES = ("auto", "none", "causal")

#: ``occ[rank][(step, action)]``: one rank's occurrences by step and action.
OccTable = dict[int, dict[tuple[int, Action], Occ]]


def _step_inputs(occ: OccTable, placement: dict[int, int]) -> Iterator[tuple[int, Occ, int, Occ]]:
    """``(producer rank, producer, consumer rank, consumer)`` for every input of every action, step by step.

    The rule is :func:`bubblekit.actions.inputs`, asked once per action for the actions of
    the whole trace and again only for a step where that answer names an action the step
    lacks (a step that splits a backward differently), so reading stays linear in the trace.
    """
    n_stages = 1 + max(placement) if placement else 1
    anywhere: dict[int, set[Action]] = {r: {a for _, a in table} for r, table in occ.items()}

    def exists_anywhere(x: Action) -> bool:
        rank = placement.get(x.stage)
        return rank is not None and x in anywhere.get(rank, ())

    cached: dict[Action, list[tuple[Action, int | None, dict[tuple[int, Action], Occ]]]] = {}
    no_table: dict[tuple[int, Action], Occ] = {}
    for rc, table in occ.items():
        for (step, a), consumer in table.items():
            deps = cached.get(a)
            if deps is None:  # each input with its rank and that rank's table
                deps = cached[a] = [(dep, placement.get(dep.stage), occ.get(placement.get(dep.stage, -1), no_table))
                                    for dep in inputs(a, n_stages, exists_anywhere)]
            for k, (dep, rp, producers) in enumerate(deps):
                producer = producers.get((step, dep))
                if producer is None:  # this step may split the backward differently: ask the rule for it

                    def exists(x: Action, step: int = step) -> bool:
                        rank = placement.get(x.stage)
                        return rank is not None and (step, x) in occ.get(rank, {})

                    dep = inputs(a, n_stages, exists)[k]
                    rp = placement.get(dep.stage)
                    producer = None if rp is None else occ.get(rp, {}).get((step, dep))
                if producer is not None and rp is not None:
                    yield rp, producer, rc, consumer


def _local_order_error(files: Sequence[str], producer: Occ, rc: int, consumer: Occ, c_time: float, verb: str,
                       scale: float) -> TraceError:
    return TraceError(
        f"{files[rc]}: rank {rc} {verb} {consumer.action} ({consumer.where}) "
        f"{(producer.end - c_time) / scale:.3f} ms before its input {producer.action} "
        f"({producer.where}) on the same rank ends (step {consumer.step}); an action runs after the actions "
        f"it needs: are these events mislabelled or their times changed?"
    )


def _lower_bounds(occ: OccTable, placement: dict[int, int], wait_inclusive: bool, files: Sequence[str], tol: float,
                  scale: float) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], str]]:
    """``lo[(a, b)]``: the least ``offset[b] - offset[a]``, and the dependency that sets it (text).

    On the way, every input from the consumer's own rank is checked: an action must start after
    its inputs from its own rank end (a clock shift cannot mend that). ``0W3`` before ``0I3``,
    or ``0B0`` before ``0F0``, on one rank is a :class:`TraceError` naming both events: such a
    trace's event names do not match the work done (a swapped or mislabelled event). When the
    spans include their receive wait, only the consumer's end must follow its input's end.
    """
    lo: dict[tuple[int, int], float] = {}
    why: dict[tuple[int, int], str] = {}
    verb = "ends" if wait_inclusive else "starts"
    for rp, prod, rc, cons in _step_inputs(occ, placement):
        c_time = cons.end if wait_inclusive else cons.start
        need = prod.end - c_time
        if rp == rc:
            if need > tol:
                raise _local_order_error(files, prod, rc, cons, c_time, verb, scale)
            continue
        key = (rp, rc)
        if need > lo.get(key, float("-inf")):
            lo[key] = need
            why[key] = f"{cons.action} (rank {rc}) needing {prod.action} (rank {rp}), step {cons.step},"
    return lo, why


def _pair_shift(mode: str, l_ab: float | None, l_ba: float | None, tol: float) -> float:
    """The shift of ``b`` relative to ``a`` given the bounds both ways (see the module doc)."""
    if l_ab is not None and l_ba is not None:
        hi = -l_ba
        return 0.0 if (mode == "auto" and l_ab <= 0 <= hi) else (l_ab + hi) / 2
    if l_ab is not None:
        return max(0.0, l_ab) if mode == "auto" else l_ab
    assert l_ba is not None
    return min(0.0, -l_ba) if mode == "auto" else -l_ba


def _solve(lo: dict[tuple[int, int], float], why: dict[tuple[int, int], str], n_ranks: int, files: Sequence[str],
           mode: str, tol: float, scale: float) -> list[float]:
    """Offsets breadth first from rank 0, each rank at the middle of its window to its parent."""
    offsets: list[float | None] = [None] * n_ranks
    offsets[0] = 0.0
    frontier = [0]
    while frontier:
        a = frontier.pop(0)
        for b in range(n_ranks):
            if offsets[b] is not None:
                continue
            l_ab, l_ba = lo.get((a, b)), lo.get((b, a))
            if l_ab is None and l_ba is None:
                continue
            if l_ab is not None and l_ba is not None and l_ab > -l_ba + tol:
                raise TraceError(
                    f"cannot reconcile the clocks of {files[a]} (rank {a}) and {files[b]} (rank {b}): "
                    f"{why[(a, b)]} needs rank {b}'s clock shifted by >= {l_ab / scale:.3f} ms, but "
                    f"{why[(b, a)]} needs <= {-l_ba / scale:.3f} ms. The trace is inconsistent (ranks from "
                    f"different runs or steps?), or the event names do not match the work done"
                )
            offsets[b] = float(offsets[a]) + _pair_shift(mode, l_ab, l_ba, tol)  # type: ignore[arg-type]
            frontier.append(b)
    unknown = [r for r, o in enumerate(offsets) if o is None]
    if unknown:
        raise TraceError(
            f"cannot align the clocks of ranks {unknown} ({', '.join(files[r] for r in unknown)}): no pipeline "
            f"dependency links them to rank 0"
        )
    return [float(o) for o in offsets]  # type: ignore[arg-type]


def align_clocks(
    occ: OccTable,
    placement: dict[int, int],
    files: Sequence[str],
    mode: str,
    wait_inclusive: bool,
    tol: float,
    scale: float,
) -> tuple[list[float], list[str]]:
    """Clock offsets per rank (to add, in file units) and notes; see the module doc.

    ``files[r]`` is rank r's file (for messages), ``tol`` the tolerance in file units,
    ``wait_inclusive`` says whether spans include their receive wait (then a consumer's end,
    not its start, must follow its producer's end). An input from the consumer's own rank that ends after the consumer starts is a
    :class:`TraceError` (see :func:`_lower_bounds`), whatever ``mode``.
    """
    n_ranks = len(files)
    lo, why = _lower_bounds(occ, placement, wait_inclusive, files, tol, scale)
    violated = {k: v for k, v in lo.items() if v > tol}
    if mode == "none":
        notes = []
        if violated:
            (a, b), v = max(violated.items(), key=lambda kv: kv[1])
            notes.append(
                f"clocks not aligned (align='none'): rank {b} starts {why[(a, b)]} {v / scale:.3f} ms before its "
                f"input is ready, so the clocks of {files[a]} and {files[b]} differ"
            )
        return [0.0] * n_ranks, notes
    if mode == "auto" and not violated:
        return [0.0] * n_ranks, []
    final = _solve(lo, why, n_ranks, files, mode, tol, scale)
    for (a, b), need in lo.items():
        if final[b] - final[a] < need - tol:
            raise TraceError(
                f"cannot reconcile the clocks of {files[a]} (rank {a}) and {files[b]} (rank {b}): no shift "
                f"satisfies every dependency ({why[(a, b)]})"
            )
    notes = [f"rank {r}'s clock ({files[r]}) shifted by {o / scale:+.3f} ms to satisfy the pipeline's dependencies"
             for r, o in enumerate(final) if abs(o) > tol]
    return final, notes
