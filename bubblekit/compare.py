"""Side-by-side numbers for several schedules, as a :class:`~bubblekit.text.Table`.

The lessons compare schedules constantly (GPipe against 1F1B, 1F1B against interleaved, the
zero-bubble family against all of them). :func:`compare` simulates each one under the same
costs and returns a table that renders itself (HTML in JupyterLab, text elsewhere), so a
lesson cell is one call instead of a loop of f-strings; the raw numbers stay available for
asserts (``t.row(schedule="1F1B")["bubble_ratio"]``).

The other tables here answer the lessons' other side-by-side questions: :func:`per_rank` (one
number per rank: peak memory, idle time, gaps), :func:`sweep` (one number as a parameter
varies: the latency per hop, m), :func:`comm_models` (no latency, overlapped latency,
blocking sends) and :func:`facts` (what the registry knows: m rules, closed forms, PyTorch's
class).

Used in lessons 00, 02, 04, 05 and 07.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from bubblekit._validate import Number, check_int, check_number
from bubblekit.costs import Costs
from bubblekit.i18n import register, tr
from bubblekit.schedules import Schedule, display_name, legal_ms, schedule, spec
from bubblekit.simulator import SimResult, simulate
from bubblekit.text import Table, format_number, plural

__all__ = ["compare", "per_rank", "sweep", "comm_models", "facts", "COMPARE_NOTE", "PER_RANK", "SWEEP"]

#: The conventions line under every comparison table (English; the table shows ``tr("compare.note")``).
COMPARE_NOTE = (
    "bubble_ratio = idle / (p × makespan), the fraction of the step; "
    "bubble_overhead = idle / busy (Megatron's measure, (p − 1)/m for ideal 1F1B); peak in microbatch activations"
)

register({
    # the tables' headers, titles and notes (column keys stay English in both languages)
    "compare.note": {"en": COMPARE_NOTE,
                     "zh": "气泡比例（bubble_ratio）= 空闲 / (p × 单步耗时)，即整步里空闲所占的比例；"
                           "气泡开销（bubble_overhead，Megatron 口径）= 空闲 / 忙碌，理想 1F1B 下等于 (p − 1)/m；峰值的单位是一个微批的激活"},
    "compare.schedule": {"en": "schedule", "zh": "调度"},
    "compare.makespan": {"en": "makespan ({unit})", "zh": "单步耗时（{unit}）"},
    "compare.peak": {"en": "peak activations", "zh": "激活峰值"},
    "compare.peak_long": {"en": "peak activations (microbatch activations)", "zh": "激活峰值（单位：一个微批的激活）"},
    "compare.formula": {"en": "closed form", "zh": "公式值"},
    "compare.hops": {"en": "messages per step", "zh": "每步消息数"},
    "compare.per_rank.idle": {"en": "idle time ({unit})", "zh": "空闲时间（{unit}）"},
    "compare.per_rank.utilization": {"en": "busy / makespan", "zh": "忙碌 / 单步耗时"},
    "compare.per_rank.gaps": {"en": "idle intervals", "zh": "空闲区间数"},
    "compare.per_rank.largest_gap": {"en": "longest idle interval ({unit})", "zh": "最长空闲区间（{unit}）"},
    "compare.per_rank.title": {"en": "{what}, per rank", "zh": "各 rank 的{what}"},
    "compare.sweep.best": {"en": "best", "zh": "最优"},
    "compare.sweep.comm": {"en": "comm ({unit} per hop)", "zh": "每跳通信延迟（{unit}）"},
    "compare.sweep.title": {"en": "{what}, by {over}", "zh": "{what}，按{over}列出"},
    "compare.sweep.title_m": {"en": "{what}, by m", "zh": "{what}，按 m 列出"},
    "compare.sweep.bubble_ratio": {"en": "bubble_ratio", "zh": "气泡比例（bubble_ratio）"},
    "compare.sweep.bubble_overhead": {"en": "bubble_overhead", "zh": "气泡开销（bubble_overhead）"},
    "compare.comm.none": {"en": "no latency", "zh": "无延迟"},
    "compare.comm.overlapped": {"en": "overlapped latency", "zh": "可重叠延迟"},
    "compare.comm.blocking": {"en": "blocking sends", "zh": "阻塞式发送"},
    "compare.comm.title": {"en": "makespan ({unit}); one cross-rank send takes {c}",
                           "zh": "单步耗时（{unit}）；一次跨 rank 发送耗时 {c}"},
    "compare.facts.chunks": {"en": "chunks", "zh": "chunk 数"},
    "compare.facts.m_rule": {"en": "m accepted", "zh": "可用的 m"},
    "compare.facts.refused": {"en": "refused m ≤ {up_to} (p = {p})", "zh": "不接受的 m ≤ {up_to}（p = {p}）"},
    "compare.facts.torch": {"en": "PyTorch class", "zh": "PyTorch 类"},
    "compare.facts.none": {"en": "none", "zh": "无"},
    "compare.facts.title": {"en": "the schedules' rules and closed forms (bubblekit's registry)",
                            "zh": "各调度的规则与闭式解（bubblekit 的注册表）"},
})


def _result(item: str | Schedule | SimResult, p: int | None, m: int | None, v: int | None,
            costs: Costs | None) -> SimResult:
    if v is not None:
        check_int("v", v)
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
    hops: bool = False,
    labels: Sequence[str] | None = None,
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
        hops: add ``hops``, the cross-rank messages per step (:attr:`Schedule.hops_per_step`).
        labels: names for the ``schedule`` column, one per schedule (default: the display
            names), e.g. to tell apart one schedule under two cost models.

    Returns a :class:`~bubblekit.text.Table` with one row per schedule: ``schedule`` (display
    name), ``v``, ``makespan`` (in the costs' unit), ``bubble_ratio``, ``bubble_overhead``,
    ``peak`` (the largest per-rank peak of activations, in microbatch activations) and, with
    ``closed_form``, ``formula`` (the closed form's value, or None where none holds; always
    None for a hand-built schedule whose name is not registered), and with ``hops``, ``hops``.
    """
    if isinstance(schedules, (str, Schedule, SimResult)) or not isinstance(schedules, Sequence):
        raise TypeError(f"schedules must be a list of names, Schedules or SimResults, got {schedules!r}")
    if not schedules:
        raise ValueError("schedules must name at least one schedule, got an empty list")
    if labels is not None and (isinstance(labels, str) or len(labels) != len(schedules)):
        raise ValueError(f"labels must give one name per schedule ({len(schedules)}), got {labels!r}")
    rows: list[dict[str, Any]] = []
    unit = "slot"
    for k, item in enumerate(schedules):
        r = _result(item, p, m, v, costs)
        unit = r.unit
        row: dict[str, Any] = {
            "schedule": display_name(r.schedule.name) if labels is None else str(labels[k]),
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
        if hops:
            row["hops"] = r.schedule.hops_per_step
        rows.append(row)
    columns = ["schedule", "v", "makespan", "bubble_ratio", "bubble_overhead", "peak"]
    if closed_form:
        columns.append("formula")
    if hops:
        columns.append("hops")
    return Table(
        rows, columns,
        formats={k: f for k, f in (("makespan", "decimal"), ("bubble_ratio", "percent"),
                                    ("bubble_overhead", "percent"), ("formula", "percent")) if k in columns},
        headers={"schedule": tr("compare.schedule"), "makespan": tr("compare.makespan", unit=plural(unit)), "peak": tr("compare.peak"),
                 "formula": tr("compare.formula"), "hops": tr("compare.hops")},
        note=tr("compare.note"),
    )


def _label(r: SimResult) -> str:
    """A column label for one simulated schedule: its display name, plus ``v=...`` when it has chunks."""
    name = display_name(r.schedule.name)
    try:
        chunked = spec(r.schedule.name).chunks == "many"
    except ValueError:
        chunked = r.schedule.v > 1
    return f"{name} v={r.schedule.v}" if chunked else name


def _gaps(r: SimResult, q: int) -> list[Any]:
    return list(r.idle_intervals(q))


#: Metrics of :func:`per_rank`: name -> (per-rank values of a SimResult, cell format, catalogue key of its words).
PER_RANK: dict[str, tuple[Callable[[SimResult], Sequence[Any]], str, str]] = {
    "peak": (lambda r: r.peak_activations, "auto", "compare.peak_long"),
    "idle": (lambda r: r.idle, "decimal", "compare.per_rank.idle"),
    "utilization": (lambda r: r.utilization_per_rank, "percent", "compare.per_rank.utilization"),
    "gaps": (lambda r: [len(_gaps(r, q)) for q in range(r.p)], "auto", "compare.per_rank.gaps"),
    "largest_gap": (lambda r: [max((g.duration for g in _gaps(r, q)), default=0) for q in range(r.p)],
                    "decimal", "compare.per_rank.largest_gap"),
}


def per_rank(
    schedules: Sequence[str | Schedule | SimResult],
    p: int | None = None,
    m: int | None = None,
    *,
    v: int | None = None,
    costs: Costs | None = None,
    metric: str = "peak",
) -> Table:
    """One number per rank for several schedules: a row per schedule, a column per rank.

    Args:
        schedules, p, m, v, costs: as in :func:`compare` (names, built schedules or results).
        metric: one of :data:`PER_RANK`: ``"peak"`` (peak activations, in microbatch
            activations), ``"idle"`` (idle time, in the costs' unit), ``"utilization"``
            (busy / makespan), ``"gaps"`` (how many idle intervals) or ``"largest_gap"``
            (the longest idle interval, in the costs' unit).

    Every schedule must have the same ``p``. The raw values stay in the table
    (``t.row(schedule="1F1B")["rank 0"]``); ``t.title`` names the metric and its unit.

    Used in lessons 04 and 05.
    """
    if metric not in PER_RANK:
        raise ValueError(f"metric must be one of {sorted(PER_RANK)}, got {metric!r}")
    if isinstance(schedules, (str, Schedule, SimResult)) or not isinstance(schedules, Sequence):
        raise TypeError(f"schedules must be a list of names, Schedules or SimResults, got {schedules!r}")
    if not schedules:
        raise ValueError("schedules must name at least one schedule, got an empty list")
    results = [_result(item, p, m, v, costs) for item in schedules]
    if not results:
        raise ValueError("schedules is empty: give at least one schedule")
    ps = sorted({r.p for r in results})
    if len(ps) != 1:
        raise ValueError(f"per_rank compares schedules with the same number of ranks, got p in {ps}")
    values, fmt, words = PER_RANK[metric]
    ranks = [f"rank {q}" for q in range(ps[0])]
    rows = [{"schedule": _label(r), **dict(zip(ranks, values(r)))} for r in results]
    return Table(rows, ["schedule", *ranks], formats=dict.fromkeys(ranks, fmt), headers={"schedule": tr("compare.schedule")},
                 title=tr("compare.per_rank.title", what=tr(words, unit=plural(results[0].unit))))


#: Metrics of :func:`sweep`: name -> (value of a SimResult, cell format).
SWEEP: dict[str, tuple[Callable[[SimResult], Any], str]] = {
    "makespan": (lambda r: r.makespan, "decimal"),
    "bubble_ratio": (lambda r: r.bubble_ratio, "percent"),
    "bubble_overhead": (lambda r: r.bubble_overhead, "percent"),
    "peak": (lambda r: r.max_peak_activations, "auto"),
}


def sweep(
    schedules: Sequence[str | Schedule],
    p: int | None = None,
    m: int | None = None,
    *,
    over: str,
    values: Sequence[Any] | Mapping[str, Any],
    v: int | None = None,
    costs: Costs | None = None,
    metric: str = "makespan",
    best: bool = False,
    case: str = "case",
) -> Table:
    """One metric for several schedules as one parameter varies: a row per value, a column per schedule.

    Args:
        schedules: registry names or built :class:`Schedule`s (a built schedule has its own
            ``p``, ``m`` and ``v``, so it can only be swept over ``"comm"``).
        p, m, v: ranks, microbatches and chunks for the names (``m`` is not used with ``over="m"``).
        over: ``"comm"`` (the latency per hop, in the costs' unit: ``costs.with_(comm=value)``)
            or ``"m"`` (microbatches per step).
        values: the values to try, in order; or a mapping ``{name: value}`` to label each row
            (the names fill a first column headed ``case``).
        costs: the cost model (default ``Costs()``: F = 1, B = 2 slots).
        metric: one of :data:`SWEEP`: ``"makespan"`` (in the costs' unit),
            ``"bubble_ratio"``, ``"bubble_overhead"`` or ``"peak"`` (the largest per-rank
            peak, in microbatch activations).
        best: add a column ``best`` naming the schedule with the smallest value in each row
            (the first on a tie).

    Used in lessons 04 and 05.
    """
    if over not in ("comm", "m"):
        raise ValueError(f"over must be 'comm' or 'm', got {over!r}")
    if metric not in SWEEP:
        raise ValueError(f"metric must be one of {sorted(SWEEP)}, got {metric!r}")
    if isinstance(schedules, (str, Schedule)) or not schedules:
        raise TypeError(f"schedules must be a non-empty list of names or Schedules, got {schedules!r}")
    if over == "m" and not all(isinstance(s, str) for s in schedules):
        raise TypeError("over='m' needs schedule names: a built Schedule has a fixed m")
    base = Costs() if costs is None else costs
    if not isinstance(base, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(base).__name__}")
    labelled = isinstance(values, Mapping)
    if not labelled and (isinstance(values, (str, bytes)) or not isinstance(values, Iterable)):
        raise TypeError(f"values must be a list of {over} values or a dict {{label: value}}, got {values!r}")
    cases: list[tuple[str | None, Any]] = (
        [(str(k), x) for k, x in values.items()] if isinstance(values, Mapping) else [(None, x) for x in values]
    )
    if not cases:
        raise ValueError("values is empty: give at least one value")
    value_of, fmt = SWEEP[metric]
    rows: list[dict[str, Any]] = []
    names: list[str] = []
    for name, x in cases:
        if over == "comm":
            cc = base.with_(comm=check_number("values (comm)", x))
            results = [_result(s, p, m, v, cc) for s in schedules]
        else:
            mm = check_int("values (m)", x)
            results = [_result(s, p, mm, v, base) for s in schedules]
        names = [_label(r) for r in results]
        if len(set(names)) != len(names):
            raise ValueError(f"two schedules have the same label {names}: give different schedules")
        row: dict[str, Any] = {"case": name} if labelled else {}
        row[over] = x
        row.update({n: value_of(r) for n, r in zip(names, results)})
        if best:
            row["best"] = min(names, key=lambda n: row[n])
        rows.append(row)
    columns = (["case"] if labelled else []) + [over, *names] + (["best"] if best else [])
    unit = plural(base.unit)
    head = {"case": case, "comm": tr("compare.sweep.comm", unit=unit), "m": "m", "best": tr("compare.sweep.best")}
    what = {"makespan": tr("compare.makespan", unit=unit), "bubble_ratio": tr("compare.sweep.bubble_ratio"),
            "bubble_overhead": tr("compare.sweep.bubble_overhead"), "peak": tr("compare.peak_long")}[metric]
    return Table(rows, columns, formats={over: "exact", **dict.fromkeys(names, fmt)},
                 headers={k: h for k, h in head.items() if k in columns}, title=tr("compare.sweep.title_m", what=what) if over == "m"
                 else tr("compare.sweep.title", what=what, over=head[over]))


def blocking_costs(sched: Schedule, costs: Costs, comm: Number) -> Costs:
    """Per-stage costs for *blocking* sends: the sender stays busy ``comm`` after each cross-rank send.

    Every stage whose next stage sits on another rank gets ``comm`` added to its forward;
    every stage whose previous stage sits on another rank gets it added to its backward
    (and input gradient). The receiver gets the data the moment the send ends, so the
    returned costs have no latency of their own. Compare with ``costs.with_(comm=comm)``,
    bubblekit's overlapped model (the latency delays the receiver, both ranks stay free).

    Used in lesson 05.
    """
    if not isinstance(sched, Schedule):
        raise TypeError(f"sched must be a bubblekit Schedule, got {type(sched).__name__}")
    if not isinstance(costs, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(costs).__name__}")
    c = check_number("comm", comm)
    n, pl = sched.n_stages, sched.placement
    length = n // sched.pipes  # a pipeline's stages; no send across a pipeline's ends (DualPipe's two directions)
    rc = costs.resolve(n, sched.chunks_per_microbatch)  # the per-stage times the simulator uses for this schedule
    to_next = [(s + 1) % length != 0 and pl[s] != pl[s + 1] for s in range(n)]
    to_prev = [s % length != 0 and pl[s] != pl[s - 1] for s in range(n)]

    def plus(xs: Sequence[Number], where: Sequence[bool]) -> tuple[Number, ...]:
        return tuple(x + c if w else x for x, w in zip(xs, where))

    # An overlapped pair keeps its rule: "max" stays "max"; a pair time (a number) becomes the
    # overlap fraction it stands for, so that with comm = 0 the pair takes exactly that time.
    rule, x = rc.pair
    pair: dict[str, Any] = {}
    if rule == "max":
        pair["fb"] = "max"
    elif rule == "overlap":
        pair["overlap"] = x
    elif rule == "time":
        f0, b0 = rc.f[0], rc.b[0]
        gain = f0 + b0 - x
        pair["overlap"] = Fraction(gain) / Fraction(min(f0, b0)) if all(
            isinstance(y, (int, Fraction)) for y in (f0, b0, x)) else gain / min(f0, b0)
    return Costs(f=plus(rc.f, to_next), b=plus(rc.b, to_prev), i=plus(rc.i, to_prev), w=tuple(rc.w),
                 comm=0, activation=tuple(rc.activation), w_held=rc.w_held, unit=costs.unit,
                 name=f"blocking sends of {c} {plural(costs.unit)}", **pair)


def comm_models(
    schedules: Sequence[str | Schedule],
    p: int | None = None,
    m: int | None = None,
    *,
    comm: Number,
    v: int | None = None,
    costs: Costs | None = None,
) -> Table:
    """Makespans without latency, with bubblekit's overlapped latency, and with blocking sends.

    Args:
        schedules, p, m, v: as in :func:`compare` (names or built schedules).
        comm: the time one cross-rank send takes, in the costs' unit.
        costs: the cost model (its own ``comm`` is ignored; default ``Costs()``).

    Columns: ``no_comm`` (``comm = 0``), ``overlapped`` (``costs.with_(comm=comm)``: the
    receiver waits, both ranks may compute meanwhile) and ``blocking`` (:func:`blocking_costs`:
    the sender is busy for ``comm`` after every cross-rank send).

    With ``comm = 0`` the three columns are equal for every schedule (overlapped pairs keep
    their ``fb`` / ``overlap`` rule; a DualPipe chunk costs a rank's whole share, as in
    :func:`simulate`).

    Used in lesson 05.
    """
    if isinstance(schedules, (str, Schedule)) or not schedules:
        raise TypeError(f"schedules must be a non-empty list of names or Schedules, got {schedules!r}")
    base = Costs() if costs is None else costs
    if not isinstance(base, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(base).__name__}")
    c = check_number("comm", comm)
    rows = []
    for item in schedules:
        r0 = _result(item, p, m, v, base.with_(comm=0))
        sched = r0.schedule
        rows.append({
            "schedule": _label(r0),
            "no_comm": r0.makespan,
            "overlapped": simulate(sched, base.with_(comm=c)).makespan,
            "blocking": simulate(sched, blocking_costs(sched, base, c)).makespan,
        })
    unit = plural(base.unit)
    return Table(rows, formats={k: "decimal" for k in ("no_comm", "overlapped", "blocking")},
                 headers={"schedule": tr("compare.schedule"), "no_comm": tr("compare.comm.none"), "overlapped": tr("compare.comm.overlapped"),
                          "blocking": tr("compare.comm.blocking")},
                 title=tr("compare.comm.title", unit=unit, c=format_number(c)))


def facts(names: Sequence[str], p: int = 4, *, up_to: int = 16) -> Table:
    """What the registry knows about each schedule, as a table.

    Columns: ``schedule``, ``chunks`` (the v rule), ``m_rule`` (which m bubblekit accepts, in
    words), ``refused`` (the m in ``1 .. up_to`` refused for ``p`` ranks), ``bubble`` (the
    closed-form bubble_ratio, equal stages, no latency; empty where none is known), ``peak``
    (the largest per-rank peak, in microbatch activations) and ``torch`` (the
    ``torch.distributed.pipelining`` class).

    Used in lesson 04.
    """
    if isinstance(names, str) or not names:
        raise TypeError(f"names must be a non-empty list of schedule names, got {names!r}")
    p = check_int("p", p)
    up_to = check_int("up_to", up_to)
    rows = []
    for name in names:
        e = spec(name)
        ok = set(legal_ms(e.name, p, None, up_to=up_to))
        refused = [mm for mm in range(1, up_to + 1) if mm not in ok]
        chunks = {"one": "v = 1", "many": "v ≥ 2", "two": "v = 2 (V)"}.get(e.chunks, e.chunks)
        rows.append({"schedule": e.display_name, "chunks": chunks, "m_rule": e.m_rule_text,
                     "refused": ", ".join(map(str, refused)) or tr("compare.facts.none"),
                     "bubble": e.bubble_text or None, "peak": e.peak_words or None, "torch": e.torch_class})
    return Table(rows, headers={"schedule": tr("compare.schedule"), "chunks": tr("compare.facts.chunks"),
                                "m_rule": tr("compare.facts.m_rule"), "refused": tr("compare.facts.refused", up_to=up_to, p=p),
                                "bubble": "bubble_ratio", "peak": tr("compare.peak"), "torch": tr("compare.facts.torch")},
                 title=tr("compare.facts.title"))


# ``bk.compare`` is the function above; its relatives are reachable through it, so that a lesson
# imports only ``bubblekit as bk`` and writes ``bk.compare.sweep(...)``, ``bk.compare.per_rank(...)``,
# ``bk.compare.comm_models(...)`` and ``bk.compare.facts(...)`` (lessons 04 and 05).
compare.per_rank = per_rank  # type: ignore[attr-defined]
compare.sweep = sweep  # type: ignore[attr-defined]
compare.comm_models = comm_models  # type: ignore[attr-defined]
compare.facts = facts  # type: ignore[attr-defined]
