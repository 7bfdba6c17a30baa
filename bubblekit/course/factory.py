"""The car factory of lessons 01 and 02: a pipeline that only runs forwards.

A factory line of ``stations`` in a row, each taking ``minutes`` per car, is a pipeline of
``p = stations`` ranks running ``m = cars`` microbatches forward only: station ``r`` works on
car ``i`` (action ``rFi``) after station ``r - 1`` has finished it. It has no backward pass,
so it is not a training step and is simulated with ``validate=False``. It isolates the first
cause of bubbles, the sequential dependency between stages: every station idles
``stations - 1`` times its per-car time, however many cars go through.

Pure core: no matplotlib, widgets or torch.
"""

from __future__ import annotations

from collections.abc import Sequence

from bubblekit._validate import Number, check_int, check_number
from bubblekit.costs import Costs
from bubblekit.schedules import Schedule
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table, plural

__all__ = ["factory_line", "forward_only", "dilution_table"]


def _line(p: int, m: int, name: str) -> Schedule:
    text = "\n".join(f"rank {r}: " + " ".join(f"{r}F{i}" for i in range(m)) for r in range(p))
    return Schedule.from_text(text, validate=False, name=name)


def factory_line(stations: int, cars: int, minutes: Number = 1) -> SimResult:
    """Simulate the car factory: ``stations`` in a row, ``cars`` through each, ``minutes`` per car.

    Each station is a rank holding one stage, each car a microbatch; times are in minutes
    (unit ``"min"``). Used in lesson 01 and its exercises.
    """
    stations = check_int("stations", stations)
    cars = check_int("cars", cars)
    minutes = check_number("minutes", minutes, minimum=0, allow_equal=False)
    return simulate(_line(stations, cars, "factory"), Costs(f=minutes, unit="min", name="factory"),
                    validate=False)


def forward_only(p: int, m: int, f: Number = 1) -> SimResult:
    """Simulate ``p`` ranks running the forwards of ``m`` microbatches and nothing else.

    The factory in the course's words: ``f`` slots per forward, no backward, no communication
    time, equal stages. Used in lesson 02 to isolate the sequential dependency.
    """
    p = check_int("p", p)
    m = check_int("m", m)
    f = check_number("f", f, minimum=0, allow_equal=False)
    return simulate(_line(p, m, "forward only"), Costs(f=f, name=f"F = {f}"), validate=False)


def dilution_table(p: int, ms: Sequence[int], *, factory: bool = False) -> Table:
    """Forward-only pipelines of ``p`` ranks for each ``m`` in ``ms``: idle stays, its share falls.

    Columns ``m``, ``makespan``, ``idle per rank`` (a tuple, one entry per rank) and
    ``bubble_ratio`` (idle / (p x makespan)). With ``factory=True`` the rows are
    :func:`factory_line` runs (1 minute per car) and the headers say cars, minutes and
    stations; otherwise :func:`forward_only` runs in slots. Used in lessons 01 and 02.
    """
    p = check_int("p", p)
    if isinstance(ms, (str, bytes)) or not isinstance(ms, Sequence) or not ms:
        raise TypeError(f"ms must be a non-empty list of microbatch counts, got {ms!r}")
    counts = [check_int(f"ms[{i}]", m) for i, m in enumerate(ms)]
    rows = []
    for m in counts:
        r = factory_line(p, m) if factory else forward_only(p, m)
        rows.append({"m": m, "makespan": r.makespan, "idle": r.idle, "bubble_ratio": r.bubble_ratio})
    unit = "min" if factory else plural("slot")
    who = "station" if factory else "rank"
    headers = {"m": "cars" if factory else "m", "makespan": f"makespan ({unit})",
               "idle": f"idle per {who} ({unit})",
               "bubble_ratio": "idle share" if factory else "bubble_ratio"}
    note = (f"{p} {who}s, forward only; "
            + ("idle share = idle station-minutes / all station-minutes" if factory
               else "bubble_ratio = idle / (p × makespan)"))
    return Table(rows, headers=headers, formats={"bubble_ratio": "percent"}, note=note)
