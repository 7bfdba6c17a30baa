"""Step 2, parsing: the events of one Chrome / Kineto file become candidate actions (raw spans).

Event names mapped to pipeline actions (``pattern="auto"`` later takes the first family that
every rank has); an overlapped forward+backward pair reads as one action of kind ``F&B``
(:class:`~bubblekit.actions.Pair`) in each family: ``compute:0F7&7B3``, PyTorch's
``PP:(0F7;7B3)OVERLAP_F_B`` (family ``pp``) and ``0F7&7B3`` (bubblekit's own export):

=========  ========================  ============================================================
family     example name              meaning
=========  ========================  ============================================================
compute    ``compute:1F3``           bubblekit lab: the stage's own compute, nothing else
pp         ``PP:1F3``                PyTorch's multi-stage schedules (includes the receive wait)
gpipe      ``Forward 3``             PyTorch's ``ScheduleGPipe`` (includes the receive wait;
                                     the stage is the rank)
action     ``1F3``                   bubblekit's own Chrome export
=========  ========================  ============================================================

Besides the actions, a scan keeps what the later steps need: ``ProfilerStep#N`` ranges (steps),
the operator events of every thread (to trim ranges that include the receive wait) and the
``rank N`` names of threads and processes.

Times stay in the file's microseconds. A pipeline event (an action or a step range) whose ``ts`` or ``dur`` is missing, not a number, NaN, infinite or negative raises
:class:`TraceError` naming the file, the event (``traceEvents[17]``), the field and the value:
the bubble cannot be measured without it. An operator event with such a time is ignored and
listed in the notes (it only moves a trimmed range's edges).
"""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bubblekit.actions import Action, Pair, parse_action

from .gpu import GpuEvents
from .records import FileScan, Pattern, RawSpan, Thread, TraceError
from .stream import TraceEntries

__all__ = ["FAMILIES", "Family", "resolve_pattern", "classify", "classify_pair", "scan_json"]


@dataclass(frozen=True)
class Family:
    """A family of event names that mark pipeline actions (see the module doc)."""

    name: str
    regex: re.Pattern[str]
    includes_wait: bool
    example: str


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("compute", re.compile(r"^compute:(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), False, "compute:1F3"),
        Family("pp", re.compile(r"^PP:(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), True, "PP:1F3"),
        Family("gpipe", re.compile(r"^(?P<kind>Forward|Backward) (?P<mb>\d+)$"), True, "Forward 3"),
        Family("action", re.compile(r"^(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), False, "1F3"),
    )
}
#: Overlapped pairs per family (the forward and backward parts' text in ``a`` and ``b``).
_PAIR_RES: dict[str, re.Pattern[str]] = {
    "compute": re.compile(r"^compute:(?P<a>\d+F\d+)&(?P<b>\d+B\d+)$"),
    "pp": re.compile(r"^PP:\((?P<a>\d+F\d+);(?P<b>\d+B\d+)\)OVERLAP_F_B$"),
    "action": re.compile(r"^(?P<a>\d+F\d+)&(?P<b>\d+B\d+)$"),
}
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
RANK_NAME_RE = re.compile(r"\brank[\s_:#-]*(\d+)\b", re.IGNORECASE)
_COMM_RE = re.compile(
    r"recv|send|wait|barrier|gloo|nccl|c10d|record_param_comms|broadcast|all_?reduce|all_gather|reduce_scatter",
    re.IGNORECASE,
)
_MAYBE_ACTION = re.compile(r"compute:|PP:|Forward |Backward |\d")  # cheap pre-check before the family regexes
_NOTE_LIMIT = 20  # events listed by name in one note


# ------------------------------------------------------------------- names -> actions
def resolve_pattern(pattern: Pattern | None) -> tuple[str | None, Pattern | None]:
    """Check ``pattern`` and split it into (a forced family name, a user matcher); both may be ``None``.

    A text pattern is compiled and must have the named groups ``kind`` and ``mb`` (or
    ``microbatch``). Raises ``TypeError`` / ``ValueError`` naming the pattern otherwise.
    """
    if isinstance(pattern, str) and pattern in FAMILIES:
        return pattern, None
    if pattern is None or pattern == "auto":
        return None, None
    if not (isinstance(pattern, (str, re.Pattern)) or callable(pattern)):
        raise TypeError(f"pattern must be 'auto', a family name ({', '.join(FAMILIES)}), a regular expression or a "
                        f"callable, got {pattern!r}")
    if isinstance(pattern, str):
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        if "kind" not in rx.groupindex or not ({"mb", "microbatch"} & set(rx.groupindex)):
            raise ValueError(
                f"pattern {pattern!r} needs named groups 'kind' (F/B/I/W or forward/backward) and 'mb' "
                f"(microbatch), and optionally 'stage', e.g. r'^(?P<kind>fwd|bwd)(?P<stage>\\d+)_(?P<mb>\\d+)$'"
            )
        return None, rx
    return None, pattern


def _match_user(pattern: Pattern, name: str) -> tuple[int | None, str, int] | None:
    if callable(pattern) and not isinstance(pattern, (str, re.Pattern)):
        a = pattern(name)
        if a is None:
            return None
        if not isinstance(a, Action):
            raise TypeError(f"pattern callable must return a bubblekit Action or None, got {a!r} for {name!r}")
        return a.stage, a.kind, a.microbatch
    rx = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    m = rx.search(name)
    if m is None:
        return None
    gd = m.groupdict()
    kind = (gd.get("kind") or "").strip()
    kind = {"forward": "F", "backward": "B", "fwd": "F", "bwd": "B"}.get(kind.lower(), kind.upper()[:1])
    mb = gd.get("mb", gd.get("microbatch"))
    if kind not in ("F", "B", "I", "W") or mb is None or not (mb.strip().isascii() and mb.strip().isdigit()):
        return None
    st = gd.get("stage")
    if st is not None and not (st.strip().isascii() and st.strip().isdigit()):
        return None
    return (int(st) if st is not None else None), kind, int(mb)


def classify(name: str, user: Pattern | None) -> tuple[str, int | None, str, int] | None:
    """``(family, stage or None, kind, microbatch)`` when ``name`` marks an action, else ``None``."""
    if user is not None:
        got = _match_user(user, name)
        return None if got is None else ("user", *got)
    if not _MAYBE_ACTION.match(name):
        return None
    for fam in FAMILIES.values():
        m = fam.regex.match(name)
        if m:
            gd = m.groupdict()
            kind = {"Forward": "F", "Backward": "B"}.get(gd["kind"], gd["kind"])
            st = gd.get("stage")
            return fam.name, (int(st) if st is not None else None), kind, int(gd["mb"])
    return None


def classify_pair(name: str) -> tuple[str, Pair] | None:
    """``(family, pair)`` when ``name`` marks an overlapped forward+backward pair, else ``None``.

    ``PP:(0F7;7B3)OVERLAP_F_B`` (PyTorch's ``ScheduleDualPipeV`` with a registered overlap
    function: one record for both parts) is family ``pp``; ``0F7&7B3`` is bubblekit's export.
    """
    if "&" not in name and "OVERLAP" not in name:
        return None
    for fam, rx in _PAIR_RES.items():
        m = rx.match(name)
        if m:
            try:
                return fam, Pair(parse_action(m.group("a")), parse_action(m.group("b")))
            except ValueError:
                return None
    return None


def thread_of(ev: dict[str, Any]) -> Thread:
    """The event's ``(pid, tid)``, made hashable (a corrupted id such as a list becomes its text)."""
    thread = (ev.get("pid"), ev.get("tid"))
    try:
        hash(thread)
    except TypeError:
        return (_hashable(thread[0]), _hashable(thread[1]))
    return thread


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


# ----------------------------------------------------------------------- event times
def _finite(value: Any) -> float | None:
    """``value`` as a finite float (numbers and numeric text), or ``None``."""
    if isinstance(value, bool):
        return None
    try:
        f = float(value) if isinstance(value, (int, float, str)) else None
    except (ValueError, OverflowError):
        return None
    return f if f is not None and math.isfinite(f) else None


def _time_problem(ev: dict[str, Any], key: str) -> str | None:
    """Why ``ev[key]`` is not a usable time (``None`` when it is)."""
    if key not in ev:
        return f"has no {key!r}"
    if _finite(ev[key]) is None:
        return f"has {key}={ev[key]!r} (not a finite number)"
    return None


_PLAIN_NUMBERS = (float, int)  # exact types: a bool is not a time


def _complete_times(ev: dict[str, Any]) -> tuple[float, float] | str:
    """Start and end (us) of an ``X`` event, or why they cannot be read."""
    ts: Any = ev.get("ts")
    dur: Any = ev.get("dur")
    if type(ts) in _PLAIN_NUMBERS and type(dur) in _PLAIN_NUMBERS:  # the usual case, checked quickly
        try:
            start = float(ts)
            end = start + float(dur)
        except OverflowError:
            pass
        else:
            if dur >= 0 and math.isfinite(end):  # NaN or an infinity anywhere makes end not finite
                return start, end
    problem = _time_problem(ev, "ts") or _time_problem(ev, "dur")
    if problem:
        return problem
    ts, dur = float(ev["ts"]), float(ev["dur"])
    if dur < 0:
        return f"has a negative dur={ev['dur']!r}"
    if not math.isfinite(ts + dur):
        return f"ends beyond any finite time (ts={ev['ts']!r} + dur={ev['dur']!r})"
    return ts, ts + dur


# ------------------------------------------------------------------------- the scan
_ACTION, _STEP, _PAIR, _OP, _OTHER = "action", "step", "pair", "op", "other"


class _Tally:
    """How many events had one problem, and the first few of them (memory stays bounded)."""

    def __init__(self) -> None:
        self.count = 0
        self.examples: list[str] = []

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.examples) < _NOTE_LIMIT:
            self.examples.append(text)

    def note(self, path: str, what: str) -> str | None:
        """``"path: N <what>: ex1, ex2 and K more"``, or ``None`` when nothing was tallied."""
        if not self.count:
            return None
        more = f" and {self.count - len(self.examples)} more" if self.count > len(self.examples) else ""
        return f"{path}: {self.count} {what}: {', '.join(self.examples)}{more}"


class _JsonScanner:
    """One pass over one file's events (see :func:`scan_json`)."""

    def __init__(self, path: Path, user: Pattern | None, keep_ops: bool) -> None:
        self.scan = FileScan(str(path))
        self.entries = TraceEntries(path, self.scan.header)
        self.user = user
        self.keep_ops = keep_ops
        self.stacks: dict[Thread, list[tuple[str, str, float | None, str]]] = defaultdict(list)
        self.ops_lists: dict[Thread, tuple[array, array]] = {}
        self.ignored_ops = _Tally()
        self.unmatched_ends = _Tally()
        self.not_objects = _Tally()
        self.gpu = GpuEvents()

    def run(self) -> FileScan:
        for index, ev in self.entries:
            if not isinstance(ev, dict):
                self.not_objects.add(f"{self.entries.where(index)} ({type(ev).__name__})")
                continue
            self.scan.n_events += 1
            cat = ev.get("cat")
            if isinstance(cat, str) and self.gpu.take(ev, cat):
                continue  # the GPU side: kernels, copies, launches, flows (see .gpu)
            ph = ev.get("ph")
            if ph == "X":
                self._complete(ev, index)
            elif ph == "B":
                self._begin(ev, index)
            elif ph == "E":
                self._end(ev, index)
            elif ph == "M":
                self._metadata(ev)
        self._finish()
        return self.scan

    # ---- one event
    def _role(self, name: str, cat: str) -> tuple[str, Any]:
        got = classify(name, self.user)
        if got is not None:
            return _ACTION, got
        if name.startswith("ProfilerStep#") and STEP_RE.match(name):
            return _STEP, None
        if self.user is None:
            pair = classify_pair(name)
            if pair is not None:
                return _PAIR, pair
        if self.keep_ops and cat != "user_annotation" and not name.startswith(("PP:", "ProfilerStep")) \
                and _COMM_RE.search(name) is None:
            return _OP, None
        return _OTHER, None

    def _bad_time(self, role: str, name: str, where: str, problem: str) -> None:
        if role == _OP:
            self.ignored_ops.add(f"{where} {name!r} {problem}")
        elif role != _OTHER:
            raise TraceError(
                f"{self.scan.path}: {where} {name!r} {problem}; a pipeline event's 'ts' and 'dur' must be finite "
                f"numbers of microseconds, dur >= 0 (the bubble cannot be measured without it)"
            )

    def _complete(self, ev: dict[str, Any], index: int) -> None:
        name, cat = str(ev.get("name", "")), str(ev.get("cat", ""))
        role, got = self._role(name, cat)
        if role == _OTHER:
            return
        times = _complete_times(ev)
        if isinstance(times, str):
            self._bad_time(role, name, self.entries.where(index), times)
            return
        self._keep(role, got, name, times[0], times[1], thread_of(ev), index)

    def _begin(self, ev: dict[str, Any], index: int) -> None:
        name, cat = str(ev.get("name", "")), str(ev.get("cat", ""))
        role, _ = self._role(name, cat)
        problem = _time_problem(ev, "ts")
        if problem:
            self._bad_time(role, name, self.entries.where(index), problem)
        ts = None if problem else float(ev["ts"])
        self.stacks[thread_of(ev)].append((name, cat, ts, self.entries.where(index)))

    def _end(self, ev: dict[str, Any], index: int) -> None:
        thread = thread_of(ev)
        stack = self.stacks.get(thread)
        if not stack:
            self.unmatched_ends.add(self.entries.where(index))
            return
        name, cat, start, where = stack.pop()
        if start is None:
            return  # its 'B' had no usable time: already reported
        role, got = self._role(name, cat)
        problem = _time_problem(ev, "ts")
        if problem is None and float(ev["ts"]) < start:
            problem = f"ends before it begins (ts={ev['ts']!r} < {start!r})"
        if problem:
            self._bad_time(role, name, f"{where} (ended by {self.entries.where(index)})", problem)
            return
        self._keep(role, got, name, start, float(ev["ts"]), thread, index, where)

    def _metadata(self, ev: dict[str, Any]) -> None:
        args = ev.get("args") or {}
        label = str(args.get("name", "")) if isinstance(args, dict) else ""
        rm = RANK_NAME_RE.search(label)
        if rm and ev.get("name") == "thread_name":
            self.scan.thread_rank[thread_of(ev)] = int(rm.group(1))
        elif rm and ev.get("name") == "process_name":
            self.scan.process_rank[thread_of(ev)[0]] = int(rm.group(1))

    def _keep(self, role: str, got: Any, name: str, start: float, end: float,
              thread: Thread, index: int, where: str | None = None) -> None:
        if role == _OP:  # most events: no message text is made for them
            arrs = self.ops_lists.get(thread)
            if arrs is None:
                arrs = self.ops_lists[thread] = (array("d"), array("d"))
            arrs[0].append(start)
            arrs[1].append(end)
            return
        where = where or self.entries.where(index)
        if role == _ACTION:
            assert got is not None
            fam, stage, kind, mb = got
            self.scan.spans.append(RawSpan(fam, stage, kind, mb, start, end, thread, None, where))
        elif role == _STEP:
            self.scan.steps.setdefault(thread, []).append((start, end, int(STEP_RE.match(name).group(1))))  # type: ignore[union-attr]
        elif role == _PAIR:
            fam, pair = got
            self.scan.spans.append(RawSpan(fam, pair.stage, pair.kind, pair.microbatch, start, end, thread, None, where,
                                           backward=pair.backward))

    # ---- after the last event
    def _finish(self) -> None:
        for stack in self.stacks.values():
            for name, cat, start, where in stack:
                role, _ = self._role(name, cat)
                if start is not None:
                    self._bad_time(role, name, where, "begins ('B') but no 'E' event ends it")
        path = self.scan.path
        self.gpu.finish()
        if len(self.gpu):
            self.scan.gpu = self.gpu
        for note in (
            self.ignored_ops.note(path, "operator event(s) with unusable times ignored (trimmed ranges may be shorter)"),
            self.unmatched_ends.note(path, "'E' event(s) without a 'B' ignored"),
            self.not_objects.note(path, "event(s) that are not JSON objects ignored"),
        ):
            if note:
                self.scan.notes.append(note)
        for thread, (s, e) in self.ops_lists.items():
            if all(s[k] <= s[k + 1] for k in range(len(s) - 1)):
                self.scan.ops[thread] = (s, e)  # Kineto writes events in time order: no copy needed
                continue
            order = sorted(range(len(s)), key=s.__getitem__)
            self.scan.ops[thread] = (array("d", (s[i] for i in order)), array("d", (e[i] for i in order)))
            del order


def scan_json(path: Path, user: Pattern | None, keep_ops: bool) -> FileScan:
    """Read one Chrome / Kineto file into a :class:`FileScan` (times in us), streaming it.

    ``user`` is a pattern from :func:`resolve_pattern` (``None``: the built-in families);
    ``keep_ops`` keeps operator events for trimming. Raises :class:`TraceError` for a pipeline
    event without a usable time (see the module doc).
    """
    return _JsonScanner(path, user, keep_ops).run()
