"""Side-by-side numbers for several schedules, as a :class:`~bubblekit.text.Table`.

The lessons compare schedules constantly (GPipe against 1F1B, 1F1B against interleaved, the
zero-bubble family against all of them). :func:`compare` simulates each one under the same
costs and returns a table that renders itself (HTML in JupyterLab, text elsewhere), so a
lesson cell is one call instead of a loop of f-strings; the raw numbers stay available for
asserts (``t.row(schedule="1F1B")["bubble_ratio"]``).

Used in lessons 00, 02, 04, 05 and 07.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bubblekit.costs import Costs
from bubblekit.schedules import Schedule, schedule, spec
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table, plural

__all__ = ["compare", "COMPARE_NOTE"]

#: The conventions line under every comparison table.
COMPARE_NOTE = (
    "bubble_ratio = idle / (p × makespan), the fraction of the step; "
    "bubble_overhead = idle / busy (Megatron's (p-1)/m); peak in microbatch activations"
)


def _result(item: str | Schedule | SimResult, p: int | None, m: int | None, v: int | None,
            costs: Costs | None) -> SimResult:
    if isinstance(item, SimResult):
        return item
    if isinstance(item, Schedule):
        return simulate(item, costs)
    if p is None or m is None:
        raise ValueError(f"p and m are needed to build schedule {item!r} (got p={p!r}, m={m!r})")
    s = spec(item)
    chunks = v if s.chunks == "many" else None
    return simulate(schedule(item, p, m, chunks), costs)


def compare(
    schedules: Sequence[str | Schedule | SimResult],
    p: int | None = None,
    m: int | None = None,
    *,
    v: int | None = None,
    costs: Costs | None = None,
    closed_form: bool = True,
) -> Table:
    """Simulate each schedule under the same ``costs`` and tabulate the results.

    Args:
        schedules: registry names (``"gpipe"``, ``"1f1b"``, ...), built :class:`Schedule`s or
            finished :class:`SimResult`s (then ``p``, ``m``, ``v`` and ``costs`` are not used for it).
        p, m: ranks and microbatches, for names.
        v: chunks per rank for the schedules that take several (interleaved, looped BFS); the
            others ignore it.
        costs: the cost model (default ``Costs()``: F = 1, B = 2 slots).
        closed_form: add the registry's closed-form bubble_ratio where one holds.

    Returns a :class:`~bubblekit.text.Table` with one row per schedule: ``schedule`` (display
    name), ``v``, ``makespan`` (in the costs' unit), ``bubble_ratio``, ``bubble_overhead``,
    ``peak`` (the largest per-rank peak of activations, in microbatch activations) and, with
    ``closed_form``, ``formula`` (the closed form's value, or None where none holds).
    """
    if isinstance(schedules, (str, Schedule, SimResult)):
        raise TypeError(f"schedules must be a list of names, Schedules or SimResults, got {schedules!r}")
    rows: list[dict[str, Any]] = []
    unit = "slot"
    for item in schedules:
        r = _result(item, p, m, v, costs)
        unit = r.unit
        row: dict[str, Any] = {
            "schedule": spec(r.schedule.name).display_name if r.schedule.name != "custom" else "custom",
            "v": r.schedule.v,
            "makespan": r.makespan,
            "bubble_ratio": r.bubble_ratio,
            "bubble_overhead": r.bubble_overhead,
            "peak": r.max_peak_activations,
        }
        if closed_form:
            form = None
            try:
                form = spec(r.schedule.name).closed_form(r.schedule.p, r.schedule.m, r.schedule.v)
            except ValueError:
                form = None
            row["formula"] = None if form is None else float(form[0])
        rows.append(row)
    columns = ["schedule", "v", "makespan", "bubble_ratio", "bubble_overhead", "peak"]
    if closed_form:
        columns.append("formula")
    return Table(
        rows, columns,
        formats={"makespan": "decimal", "bubble_ratio": "percent", "bubble_overhead": "percent", "formula": "percent"},
        headers={"makespan": f"makespan ({plural(unit)})", "peak": "peak activations",
                 "formula": "closed form"},
        note=COMPARE_NOTE,
    )
