"""Step 3, from candidate spans to the actions of each training step.

In order (each a function below):

1. :func:`choose_family`: which event names are the pipeline's actions;
2. :func:`prepare_spans`: trim ranges that include the receive wait down to their operator
   events (an overlapped pair, ``OVERLAP_F_B``, is one action: :class:`~bubblekit.actions.Pair`);
3. :func:`assign_steps`: give every action a step (``ProfilerStep#N`` ranges, the CSV's
   ``step`` column, or repeats), dropping exact copies of an event with a note;
4. :func:`check_numbering`: stages and microbatches are numbered 0..n-1 without gaps;
5. :func:`place_stages`: which rank runs each stage (a stage lives on one rank);
6. :func:`complete_steps`: keep the steps that hold every action of the pipeline.

Times stay in the file's unit (us for JSON).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable
from operator import itemgetter
from typing import NamedTuple

from bubblekit.actions import Action, Pair, parts

from .parse import FAMILIES
from .ranks import RankData
from .records import MAX_SHOWN, Pattern, RawSpan, TraceError, first_missing, shown

__all__ = ["Occ", "choose_family", "prepare_spans", "assign_steps", "check_numbering", "place_stages",
           "complete_steps", "by_step", "check_step_times"]

_NOTE_LIMIT = 20  # events listed by name in one note
_START_END = itemgetter(4, 5)  # a RawSpan's (start, end)


class Occ(NamedTuple):
    """One occurrence of an action: its step, times (file units) and where it is in the file."""

    step: int
    action: Action
    start: float
    end: float
    where: str


def first_occurrences(per_rank: list[list[Occ]]) -> dict[Action, tuple[int, Occ]]:
    """Every distinct action of the trace with its first occurrence ``(rank, occ)``, in trace order.

    The checks below look at the few distinct actions instead of every occurrence, so that
    reading a long trace stays linear and fast.
    """
    first: dict[Action, tuple[int, Occ]] = {}
    for r, occs in enumerate(per_rank):
        for o in occs:
            if o.action not in first:
                first[o.action] = (r, o)
    return first


# ----------------------------------------------------------------------- 1. family
def choose_family(data: list[RankData], forced: str | None, user: Pattern | None) -> str:
    """The family of event names to read: ``forced``, the user's pattern, or the first every rank has."""
    if forced is not None:
        if not any(s.family == forced for d in data for s in d.spans):
            raise TraceError(
                f"no '{forced}' events (names like {FAMILIES[forced].example!r}) in "
                f"{', '.join(d.file for d in data[:MAX_SHOWN])}"
            )
        return forced
    if user is not None:
        if not any(d.spans for d in data):
            shown_files = ", ".join(d.file for d in data[:MAX_SHOWN])
            raise TraceError(f"no event in {shown_files} matches the pattern {user!r}")
        return "user"
    present = [{s.family for s in d.spans} for d in data]
    if all(not p for p in present):
        shown_files = ", ".join(sorted({d.file for d in data})[:MAX_SHOWN])
        examples = ", ".join(repr(f.example) for f in FAMILIES.values())
        raise TraceError(
            f"no pipeline events in {shown_files}: expected event names like {examples} "
            f"(PyTorch's Schedule1F1B records none: use bubblekit.lab, or pass pattern= for your own names)"
        )
    for fam in (*FAMILIES, "csv"):
        if all(fam in p for p in present):
            return fam
    lacking = [d for d, p in zip(data, present) if not p]
    if lacking:
        d = lacking[0]
        raise TraceError(f"{d.file}: rank {d.rank} has no pipeline events (other ranks do)")
    raise TraceError(
        "the ranks' traces use different event names: "
        + "; ".join(f"{d.file}: {sorted(p)}" for d, p in zip(data, present))
    )


# ------------------------------------------------------------------ 2. trim ranges
def trim(span: RawSpan, ops: tuple[array, array] | None) -> tuple[float, float] | None:
    """Start of the first and end of the last operator nested in ``span`` (same thread), or ``None``."""
    if ops is None:
        return None
    starts, ends = ops
    lo = bisect_left(starts, span.start)
    hi = bisect_right(starts, span.end)
    if lo >= hi:
        return None
    first = starts[lo]
    last = max(min(e, span.end) for e in ends[lo:hi])
    if last <= first:
        return None
    return first, last


def _trim_ranges(data: list[RankData], family: str) -> tuple[list[RankData], int, int]:
    """Cut the family's ranges to their operators: (data, ranges without operators, empty ranges)."""
    untrimmed = empty = 0
    out = []
    for d in data:
        new: list[RawSpan] = []
        for s in d.spans:
            if s.family == family and not s.pretrimmed:
                ops = d.scan.ops.get(s.thread)
                t = trim(s, ops)
                if t is not None:
                    s = s._replace(start=t[0], end=t[1])
                elif ops is not None and len(ops[0]):
                    empty += 1
                    s = s._replace(start=s.end)
                else:
                    untrimmed += 1
            new.append(s)
        out.append(d._replace(spans=new))
    return out, untrimmed, empty


def prepare_spans(data: list[RankData], family: str, trim_mode: bool | None) -> tuple[list[RankData], bool, list[str]]:
    """Trim wait-inclusive ranges: (data, spans still include waits, notes).

    ``trim_mode`` is :func:`~bubblekit.analysis.traces.read_trace`'s ``trim``: ``None`` trims
    the families whose ranges include the receive wait (``pp``, ``gpipe``), ``True`` also a
    user pattern's ranges, ``False`` nothing.
    """
    fam = FAMILIES.get(family)
    wait_inclusive = bool(fam and fam.includes_wait) or (family == "user" and trim_mode is True)
    notes: list[str] = []
    if not (wait_inclusive and trim_mode is not False):
        if wait_inclusive:
            notes.append(f"'{family}' ranges include the receive wait: the bubble is underestimated (trim=False)")
        return data, wait_inclusive, notes
    data, untrimmed, empty = _trim_ranges(data, family)
    if untrimmed:
        notes.append(
            f"{untrimmed} '{family}' ranges come from threads without operator events; they keep their full "
            f"length, which includes the receive wait (the bubble is underestimated)"
        )
    else:
        wait_inclusive = False
        notes.append(f"'{family}' ranges trimmed to their operator events (receive waits removed)")
    if empty:
        notes.append(f"{empty} '{family}' ranges hold no operator at all (nothing to compute, e.g. the input "
                     f"gradient of stage 0): kept as zero-length spans at their end")
    return data, wait_inclusive, notes


# --------------------------------------------------------------------- 3. steps
def _drop_exact_copies(d: RankData, spans: list[RawSpan]) -> tuple[list[RawSpan], list[str]]:
    """Remove events that repeat another one exactly (same action, times and step), with a note.

    ``spans`` are sorted by (start, end), so a copy is in the run of spans with its times:
    only that run is remembered.
    """
    run_times: tuple[float, float] | None = None
    run: dict[tuple[int | None, str, int, int | None, Action | None], RawSpan] = {}
    kept: list[RawSpan] = []
    copies: list[str] = []
    for s in spans:
        times = (s.start, s.end)
        if times != run_times:
            run_times, run = times, {}
        key = (s.stage, s.kind, s.mb, s.step, s.backward)
        orig = run.get(key)
        if orig is None:
            run[key] = s
            kept.append(s)
        else:
            copies.append(f"{_action(s, d.rank)} ({s.where}, a copy of {orig.where})")
    notes = []
    if copies:
        notes.append(f"{d.file}: rank {d.rank}: {len(copies)} exact copies of events ignored (same action and "
                     f"times): {shown(copies, _NOTE_LIMIT)}")
    return kept, notes


def _action(s: RawSpan, rank: int) -> Action:
    """The span's action (its stage is the rank when the name has none; a pair when it has a backward)."""
    a = Action(s.stage if s.stage is not None else rank, "F" if s.backward is not None else s.kind, s.mb)
    return Pair(a, s.backward) if s.backward is not None else a


def _marker_step(markers: list[tuple[float, float, int]], s: RawSpan) -> int | None:
    """The ``ProfilerStep#N`` whose range holds the span's middle, or ``None``."""
    mid = (s.start + s.end) / 2
    i = bisect_right(markers, (mid, float("inf"), 1 << 62)) - 1
    while i >= 0 and markers[i][1] < mid:
        i -= 1
    return markers[i][2] if i >= 0 and markers[i][0] <= mid <= markers[i][1] else None


def assign_steps(d: RankData, family: str, use_markers: bool) -> tuple[list[Occ], list[str]]:
    """Give every span of one rank a step: the CSV column, the ``ProfilerStep#N`` range, or repeats.

    Without steps in the file, the k-th occurrence of an action is in step k. An action twice in
    one step (other than an exact copy) is a :class:`TraceError`; spans outside every
    ``ProfilerStep`` range are left out with a note. Returns (occurrences in time order, notes).
    """
    spans = sorted((s for s in d.spans if s.family == family), key=_START_END)
    spans, notes = _drop_exact_copies(d, spans)
    markers = sorted(m for ms in d.scan.steps.values() for m in ms) if use_markers else []
    counts: dict[Action, int] = defaultdict(int)
    seen: dict[tuple[int, Action], Occ] = {}
    outside: list[str] = []
    out: list[Occ] = []
    actions: dict[tuple[int | None, str, int, Action | None], Action] = {}  # one Action object per distinct action
    for s in spans:
        key = (s.stage, s.kind, s.mb, s.backward)
        a = actions.get(key)  # type: ignore[assignment]
        if a is None:
            a = actions[key] = _action(s, d.rank)
        if s.step is not None:
            step = s.step
        elif markers:
            got = _marker_step(markers, s)
            if got is None:
                outside.append(f"{a} ({s.where})")
                continue
            step = got
        else:
            step = counts[a]
            counts[a] += 1
        prev = seen.get((step, a))
        if prev is not None:
            raise TraceError(
                f"{d.file}: rank {d.rank} runs {a} twice in step {step} ({prev.where} and {s.where}, at different "
                f"times); an action runs once per step: were two profiles merged, or an event duplicated and changed?"
            )
        seen[(step, a)] = occ = Occ(step, a, s.start, s.end, s.where)
        out.append(occ)
    if outside:
        notes.append(f"{d.file}: rank {d.rank}: {len(outside)} '{family}' event(s) outside every ProfilerStep range "
                     f"left out: {shown(outside, _NOTE_LIMIT)}")
    return out, notes


# ------------------------------------------------------------ 4. numbering, 5. placement
def check_numbering(data: list[RankData], per_rank: list[list[Occ]]) -> None:
    """Stages and microbatches must be numbered 0..n-1 without gaps (before anything is sized by them).

    An absurd number (``0F999999999``, stage ``99999999``) is refused here with the event that
    carries it, instead of building a pipeline of a billion microbatches.
    """
    fields: dict[str, Callable[[Action], int]] = {"stage": lambda a: a.stage, "microbatch": lambda a: a.microbatch}
    plurals = {"stage": "stages", "microbatch": "microbatches"}
    distinct = first_occurrences(per_rank)
    for label, get in fields.items():
        first: dict[int, tuple[int, Occ]] = {}
        for action, (r, o) in distinct.items():
            for part in parts(action):  # both parts of a pair
                first.setdefault(get(part), (r, o))
        if not first:
            continue
        top = max(first)
        if top + 1 == len(first):
            continue
        r, o = first[top]
        gaps = first_missing(first, top)
        raise TraceError(
            f"{label} numbers must run from 0 without gaps, but the trace has {len(first)} {plurals[label]} numbered up to "
            f"{top} ({o.action} on rank {r}, {data[r].file} {o.where}); no action has {label} "
            f"{', '.join(map(str, gaps))}{', ...' if top + 1 - len(first) > len(gaps) else ''}: a mistyped or "
            f"corrupted event name, or a whole {label} missing from the trace"
        )


def place_stages(data: list[RankData], per_rank: list[list[Occ]]) -> dict[int, int]:
    """``placement[stage] = rank`` from the data; a stage seen on two ranks is a :class:`TraceError`."""
    placement: dict[int, int] = {}
    for d, occs in zip(data, per_rank):
        for action, (_, o) in first_occurrences([occs]).items():
            for part in parts(action):
                prev = placement.setdefault(part.stage, d.rank)
                if prev != d.rank:
                    raise TraceError(
                        f"stage {part.stage} runs on rank {prev} ({data[prev].file}) and on rank {d.rank} "
                        f"({d.file}, {o.where}): a stage lives on one rank; are two files from the same rank?"
                    )
    return placement


# ------------------------------------------------------------------- 6. completeness
def _needed_kinds(per_rank: list[list[Occ]]) -> dict[tuple[int, int], frozenset[str]]:
    """For every (stage, microbatch) the kinds each step must hold, from all steps together.

    Stages and microbatches run from 0 to the largest seen (:func:`check_numbering` made sure
    that is not absurd). Each needs an F when the trace has forwards, and a backward when it
    has backwards: I and W where that (stage, microbatch) shows a split backward anywhere in
    the trace (a W needs its I, an I its W), or where the whole trace splits them; B otherwise.
    The parts of an overlapped pair count as the F and the B they are.
    """
    union: dict[tuple[int, int], set[str]] = defaultdict(set)
    for action in first_occurrences(per_rank):
        for part in parts(action):
            union[(part.stage, part.microbatch)].add(part.kind)
    kinds: set[str] = set().union(*union.values())
    stages = 1 + max(s for s, _ in union)
    mbs = 1 + max(mb for _, mb in union)
    need: dict[tuple[int, int], frozenset[str]] = {}
    for s in range(stages):
        for mb in range(mbs):
            have = union.get((s, mb), set())
            want = {"F"} & kinds
            if have & {"I", "W"} or (kinds & {"I", "W"} and not have & {"B"} and "B" not in kinds):
                want |= {"I", "W"}  # a split backward: a W needs its I, an I its W
            elif kinds & {"B", "I", "W"}:
                want.add("B")
            need[(s, mb)] = frozenset(want)
    return need


def complete_steps(data: list[RankData], per_rank: list[list[Occ]]) -> tuple[list[int], list[str]]:
    """The steps that hold every action of the pipeline, and a note on the others.

    A step lacks an action when profiling started or stopped inside it, or when an event was
    lost: such steps are skipped with a note naming what they lack. No complete step at all
    is a :class:`TraceError` naming the missing actions and their ranks.
    """
    need = _needed_kinds(per_rank)
    n_needed = sum(len(k) for k in need.values())
    weight = {action: sum(part.kind in need.get((part.stage, part.microbatch), ()) for part in parts(action))
              for action in first_occurrences(per_rank)}  # the needed actions each occurrence stands for
    counts: dict[int, int] = defaultdict(int)
    for occs in per_rank:
        for o in occs:
            w = weight[o.action]
            if w:
                counts[o.step] += w
    steps = sorted(counts)
    complete = [st for st in steps if counts[st] == n_needed]
    incomplete = [st for st in steps if counts[st] != n_needed]
    lacks = [_lacking(st, per_rank, need) for st in incomplete[:MAX_SHOWN]]
    if not complete:
        files = ", ".join(sorted({d.file for d in data})[:MAX_SHOWN])
        n_stages, n_mbs = 1 + max(s for s, _ in need), 1 + max(mb for _, mb in need)
        raise TraceError(
            f"no complete step in {files}: {'; '.join(lacks)}. Every step must hold F and B (or I and W) of every "
            f"stage and microbatch ({n_stages} stages x {n_mbs} microbatches): was an event lost, renamed or "
            f"corrupted?"
        )
    notes = []
    if incomplete:
        notes.append(f"incomplete steps [{shown(incomplete, 10)}] skipped (profiling started or stopped inside them, "
                     f"or events are missing): {'; '.join(lacks)}")
    return complete, notes


def by_step(per_rank: list[list[Occ]], steps: list[int]) -> list[list[list[Occ]]]:
    """``out[k][r]``: rank r's occurrences in ``steps[k]``, in time order (one pass over the trace)."""
    index = {st: k for k, st in enumerate(steps)}
    out: list[list[list[Occ]]] = [[[] for _ in per_rank] for _ in steps]
    for r, occs in enumerate(per_rank):
        for o in occs:
            k = index.get(o.step)
            if k is not None:
                out[k][r].append(o)
    for rows in out:
        for row in rows:
            row.sort(key=lambda o: (o.start, o.end))
    return out


def check_step_times(data: list[RankData], steps: list[list[list[Occ]]], offsets: list[float],
                     wait_inclusive: bool, tol: float, scale: float) -> list[str]:
    """Refuse a step with no measured time; note actions that last 0 and actions of one rank that overlap.

    ``steps[k][r]`` are rank r's occurrences in the k-th complete step (:func:`by_step`),
    ``offsets`` the clock shifts and ``tol`` the jitter (file units). A step whose actions
    all last 0, or whose span is 0, has no bubble to measure: :class:`TraceError`. Some
    actions of 0 length (a profiler that rounds short events away) or two actions of one rank
    running at once (a rank computes one action at a time) give a bubble that differs from
    the run's: the notes name them (overlaps only of spans without receive waits: a range that
    includes its wait may begin inside the previous action).
    """
    zero: list[str] = []
    n_zero = 0
    overlaps: list[str] = []
    n_overlaps = 0
    for k, rows in enumerate(steps):
        starts = [o.start + offsets[r] for r, row in enumerate(rows) for o in row]
        ends = [o.end + offsets[r] for r, row in enumerate(rows) for o in row]
        busy = sum(e - s for s, e in zip(starts, ends))
        if not starts or busy <= 0 or max(ends) - min(starts) <= 0:
            files = ", ".join(sorted({d.file for d in data})[:MAX_SHOWN])
            raise TraceError(
                f"{files}: every action of complete step {k} lasts 0 "
                f"({len(starts)} actions, all with start = end): there is no time to measure a bubble in. Was "
                f"the trace written with times rounded away (durations below the profiler's resolution), or "
                f"are the times missing (a CSV of zeros)?"
            )
        for r, row in enumerate(rows):
            prev: Occ | None = None
            for o in row:
                if o.end <= o.start:
                    n_zero += 1
                    if len(zero) < _NOTE_LIMIT:
                        zero.append(f"{o.action} (rank {r}, {o.where})")
                if prev is not None and not wait_inclusive and o.start < prev.end - tol:
                    n_overlaps += 1
                    if len(overlaps) < _NOTE_LIMIT:
                        overlaps.append(f"{prev.action} and {o.action} (rank {r}, {prev.where} and {o.where}, "
                                        f"{(prev.end - o.start) / scale:.3f} ms)")
                if prev is None or o.end > prev.end:
                    prev = o
    notes = []
    if n_zero:
        more = f" and {n_zero - len(zero)} more" if n_zero > len(zero) else ""
        notes.append(f"{n_zero} action(s) last 0 ms, so they count as idle time: {', '.join(zero)}{more} (times "
                     f"rounded away, or ranges without operators)")
    if n_overlaps:
        more = f" and {n_overlaps - len(overlaps)} more" if n_overlaps > len(overlaps) else ""
        notes.append(f"{n_overlaps} pair(s) of actions of one rank overlap in time, which a rank computing one "
                     f"action at a time cannot do; the overlap counts as busy once: {', '.join(overlaps)}{more}")
    return notes


def _lacking(step: int, per_rank: list[list[Occ]], need: dict[tuple[int, int], frozenset[str]]) -> str:
    """``"step 3 lacks 1B2 (rank 1), ..."``."""
    have = {part for occs in per_rank for o in occs if o.step == step for part in parts(o.action)}
    rank_of = {part.stage: r for r, occs in enumerate(per_rank) for o in occs for part in parts(o.action)}
    missing = [Action(s, k, mb) for (s, mb), kinds in sorted(need.items()) for k in sorted(kinds)
               if Action(s, k, mb) not in have]
    listed = [f"{a} (rank {rank_of.get(a.stage, '?')})" for a in missing]
    return f"step {step} lacks {shown(listed, 8)}"
