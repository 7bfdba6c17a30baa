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
from bubblekit.i18n import register, tr
from bubblekit.schedules import Schedule
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table, plural

__all__ = ["factory_line", "forward_only", "dilution_table"]

register({
    "factory.minutes": {"en": "min", "zh": "分钟"},
    "factory.cars": {"en": "cars", "zh": "汽车数"},
    "factory.makespan.factory": {"en": "makespan ({unit})", "zh": "总耗时（{unit}）"},
    "factory.makespan.pipeline": {"en": "makespan ({unit})", "zh": "单步耗时（{unit}）"},
    "factory.idle.factory": {"en": "idle per station ({unit})", "zh": "每个工位的空闲（{unit}）"},
    "factory.idle.pipeline": {"en": "idle per rank ({unit})", "zh": "每个 rank 的空闲（{unit}）"},
    "factory.forward_only": {"en": "forward only", "zh": "仅前向"},
    "factory.idle_share": {"en": "idle share", "zh": "空闲占比"},
    "factory.note.factory": {"en": "{p} stations, forward only; idle share = idle station-minutes / all station-minutes",
                             "zh": "{p} 个工位，只有前向；空闲占比 = 空闲的工位·分钟 / 全部工位·分钟"},
    "factory.note.pipeline": {"en": "{p} ranks, forward only; bubble_ratio = idle / (p × makespan)",
                              "zh": "{p} 个 rank，只有前向；bubble_ratio（气泡比例）= 空闲 / (p × 单步耗时)"},
})


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
    return simulate(_line(p, m, tr("factory.forward_only")), Costs(f=f, name=f"F = {f}"), validate=False)


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
    unit = tr("factory.minutes") if factory else plural("slot")
    kind = "factory" if factory else "pipeline"
    headers = {"m": tr("factory.cars") if factory else "m", "makespan": tr(f"factory.makespan.{kind}", unit=unit),
               "idle": tr(f"factory.idle.{kind}", unit=unit)}
    if factory:  # a pipeline's share keeps the standard header (bubble_ratio; 气泡比例 in Chinese)
        headers["bubble_ratio"] = tr("factory.idle_share")
    note = tr(f"factory.note.{kind}", p=p)
    return Table(rows, headers=headers, formats={"bubble_ratio": "percent"}, note=note)
