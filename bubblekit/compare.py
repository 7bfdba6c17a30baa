"""Side-by-side numbers for several schedules, as a :class:`~bubblekit.text.Table`.

The lessons compare schedules constantly (GPipe against 1F1B, 1F1B against interleaved, the
zero-bubble family against all of them). :func:`compare` simulates each one under the same
costs and returns a table that renders itself (HTML in JupyterLab, text elsewhere), so a
lesson cell is one call instead of a loop of f-strings; the raw numbers stay available for
asserts (``t.row(schedule="1F1B")["bubble_ratio"]``).

:func:`compare_timelines` does the same for timelines you already have and name yourself
(two cost models of one schedule, a forward-only run, a measured trace), with the idle time
per rank and the number of idle gaps.

Used in lessons 00, 02, 04, 05 and 07.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bubblekit.costs import Costs
from bubblekit.schedules import Schedule, schedule, spec
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table, format_number, plural
from bubblekit.timeline import Timeline

__all__ = ["compare", "compare_timelines", "COMPARE_NOTE"]

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
        formats={"makespan": "decimal", "bubble_ratio": "percent", "bubble_overhead": "percent",
                 **({"formula": "percent"} if closed_form else {})},
        headers={"makespan": f"makespan ({plural(unit)})", "peak": "peak activations",
                 **({"formula": "closed form"} if closed_form else {})},
        note=COMPARE_NOTE,
    )


def _numbers(values: Sequence[Any]) -> str:
    """A tuple of numbers as the course prints them: ``(24, 9, 1.5)``, not ``(24.0, 9.0, 1.5)``."""
    return "(" + ", ".join(format_number(x, fractions=False) for x in values) + ")"


def compare_timelines(named: Mapping[str, Timeline]) -> Table:
    """Tabulate timelines side by side under names you choose: ``{"GPipe": r1, "1F1B": r2}``.

    Returns a :class:`~bubblekit.text.Table` with one row per timeline: ``name``,
    ``makespan``, ``idle per rank`` (a tuple), ``gaps per rank`` (how many separate idle
    stretches each rank has), ``bubble_ratio`` and ``bubble_overhead``. Times are in the
    timelines' unit, which must be the same for all. Used in lesson 02.
    """
    if not isinstance(named, Mapping) or not named:
        raise TypeError(f"named must be a non-empty dict of name -> Timeline, got {named!r}")
    units = set()
    rows: list[dict[str, Any]] = []
    for name, tl in named.items():
        if not isinstance(tl, Timeline):
            raise TypeError(f"named[{name!r}] must be a Timeline (e.g. bk.simulate(...)), got {type(tl).__name__}")
        units.add(tl.unit)
        rows.append({
            "name": str(name),
            "makespan": tl.makespan,
            "idle": tl.idle,
            "gaps": tuple(len(tl.idle_intervals(r)) for r in range(tl.p)),
            "bubble_ratio": tl.bubble_ratio,
            "bubble_overhead": tl.bubble_overhead,
        })
    if len(units) != 1:
        raise ValueError(f"named's timelines must share one time unit, got {sorted(units)}")
    unit = plural(units.pop())
    return Table(
        rows,
        formats={"makespan": "decimal", "idle": _numbers, "gaps": _numbers, "bubble_ratio": "percent",
                 "bubble_overhead": "percent"},
        headers={"makespan": f"makespan ({unit})", "idle": f"idle per rank ({unit})", "gaps": "gaps per rank"},
        note=COMPARE_NOTE.split("; peak")[0],
    )
