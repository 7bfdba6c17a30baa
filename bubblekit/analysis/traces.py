"""Read profiler traces of pipeline runs into bubblekit timelines (core: no torch needed).

The engineering practice this module automates: *profile every rank, find the idle gaps,
add them up, divide by ranks x time*. Supported inputs:

* **Chrome / Kineto trace JSON** as written by ``torch.profiler`` (``export_chrome_trace``,
  ``.json`` or ``.json.gz``): one file per rank, a folder of them, or one file holding
  several ranks (threads or processes named ``rank N``, as :meth:`Timeline.to_chrome_trace`
  writes). Files are read by a streaming scanner: one event at a time, never the whole
  file in memory (``benchmarks/bench_trace_memory.py`` measures it).
* **CSV** with the header ``rank,stage,kind,microbatch,start,end`` (and optionally
  ``step``): one row per action, times in ``time_unit`` (ms by default). ``kind`` is
  F, B, I or W. Lines starting with ``#`` are comments. :func:`write_csv` writes it.

Event names mapped to pipeline actions (``pattern="auto"`` takes the first family that
every rank has):

=========  ========================  ============================================================
family     example name              meaning
=========  ========================  ============================================================
compute    ``compute:1F3``           bubblekit lab: the stage's own compute, nothing else
pp         ``PP:1F3``                PyTorch's multi-stage schedules (includes the receive wait)
gpipe      ``Forward 3``             PyTorch's ``ScheduleGPipe`` (includes the receive wait;
                                     the stage is the rank)
action     ``1F3``                   bubblekit's own Chrome export
=========  ========================  ============================================================

``Schedule1F1B`` (torch 2.13) emits no ranges at all: profile it through
:mod:`bubblekit.lab` or wrap the stage methods yourself and pass ``pattern=``.

Ranges that include the receive wait would hide the bubble inside "busy" time. With
``trim=True`` (the default for those families) each range is cut down to the operator
events nested in it: from the first non-communication operator's start to the last
one's end. A trace recorded without operator events keeps its ranges, with a note.

Times: the returned timelines are in **ms**, with 0 at the earliest action of the step
across ranks. Clocks: ranks on different hosts may have different clocks. Each pipeline
dependency (``1F0`` cannot start before ``0F0`` ends) bounds the offset between two ranks;
``align="auto"`` keeps the clocks when they satisfy every dependency and otherwise shifts
each rank to the middle of its allowed window (latency assumed the same both ways),
raising :class:`TraceError` when no shift satisfies them all.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, Union

from bubblekit.actions import Action, inputs, parse_action
from bubblekit.timeline import Timeline

__all__ = [
    "TraceError",
    "MeasuredTimeline",
    "read_trace",
    "read_trace_steps",
    "read_csv",
    "write_csv",
    "iter_trace_events",
    "GapReport",
    "explain_gaps",
    "bubble_report",
    "FAMILIES",
    "SAMPLE_DIR",
    "sample_names",
    "sample_trace",
    "sample_record",
    "sample_info",
]

PathLike = Union[str, Path]
Pattern = Union[str, "re.Pattern[str]", Callable[[str], Union[Action, None]]]


class TraceError(ValueError):
    """A trace that cannot be read as a pipeline trace; the message names the file and the problem."""


# ----------------------------------------------------------------------------- families
@dataclass(frozen=True)
class _Family:
    name: str
    regex: re.Pattern[str]
    includes_wait: bool
    example: str


FAMILIES: dict[str, _Family] = {
    f.name: f
    for f in (
        _Family("compute", re.compile(r"^compute:(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), False, "compute:1F3"),
        _Family("pp", re.compile(r"^PP:(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), True, "PP:1F3"),
        _Family("gpipe", re.compile(r"^(?P<kind>Forward|Backward) (?P<mb>\d+)$"), True, "Forward 3"),
        _Family("action", re.compile(r"^(?P<stage>\d+)(?P<kind>[FBIW])(?P<mb>\d+)$"), False, "1F3"),
    )
}
_OVERLAP_RE = re.compile(r"^PP:\((?P<subs>[^)]*)\)OVERLAP_F_B$")
_STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")
_RANK_NAME_RE = re.compile(r"\brank[\s_:#-]*(\d+)\b", re.IGNORECASE)
_COMM_RE = re.compile(
    r"recv|send|wait|barrier|gloo|nccl|c10d|record_param_comms|broadcast|all_?reduce|all_gather|reduce_scatter",
    re.IGNORECASE,
)
_MAYBE_ACTION = re.compile(r"compute:|PP:|Forward |Backward |\d")  # cheap pre-check before the family regexes
_MAX_SHOWN = 4


# ----------------------------------------------------------------------- JSON streaming
_WS = re.compile(r"[ \t\r\n]*")


class _JsonStream:
    """Incremental reader of one JSON document: a window of text, values decoded one by one.

    Only the current window (``chunk`` characters, grown only while one value is longer)
    and the decoded value are in memory.
    """

    def __init__(self, fh: IO[str], path: str, chunk: int = 1 << 20) -> None:
        self.fh = fh
        self.path = path
        self.chunk = chunk
        self.buf = ""
        self.pos = 0
        self.consumed = 0  # characters dropped from the front of buf
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self.eof:
            return False
        data = self.fh.read(self.chunk)
        if not data:
            self.eof = True
            return False
        if self.pos:
            self.consumed += self.pos
            self.buf = self.buf[self.pos:] + data
            self.pos = 0
        else:
            self.buf += data
        return True

    def where(self) -> str:
        return f"character {self.consumed + self.pos}"

    def peek(self) -> str | None:
        """Next non-blank character (not consumed), or ``None`` at the end of the file."""
        while True:
            buf = self.buf
            pos = self.pos
            if pos < len(buf) and buf[pos] not in " \t\r\n":
                return buf[pos]
            pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._fill():
                return None

    def take(self, ch: str) -> None:
        got = self.peek()
        if got != ch:
            if got is None:
                self.fail(f"expected {ch!r}", truncated=True)
            self.fail(f"expected {ch!r} but found {got!r}")
        self.pos += 1

    def value(self) -> Any:
        """Decode the next JSON value (reading more of the file while the value is incomplete)."""
        if self.peek() is None:
            self.fail("a value was expected", truncated=True)
        while True:
            try:
                obj, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                incomplete = exc.pos >= len(self.buf) - 1 or exc.msg.startswith("Unterminated")
                if incomplete and self._fill():
                    continue
                if incomplete:
                    self.fail("the file ends in the middle of an event", truncated=True)
                self.fail(f"invalid JSON ({exc.msg})", at=self.consumed + exc.pos)
            if end >= len(self.buf) and self._fill():
                continue  # a number may continue in the next chunk
            self.pos = end
            return obj

    def fail(self, problem: str, at: int | None = None, truncated: bool = False) -> None:
        """Raise :class:`TraceError` naming the file, the problem and where."""
        where = f"character {at}" if at is not None else self.where()
        if truncated:
            raise TraceError(f"{self.path}: truncated trace: {problem} (at {where}, the end of the file)")
        raise TraceError(f"{self.path}: {problem} at {where}")


def _open_text(path: Path) -> IO[str]:
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def iter_trace_events(
    path: PathLike, header: dict[str, Any] | None = None, *, chunk_chars: int = 1 << 20
) -> Iterator[dict[str, Any]]:
    """Yield the events of a Chrome / Kineto trace one at a time, streaming from disk.

    Accepts the JSON Object Format (``{"traceEvents": [...], ...}``) and the JSON Array
    Format (``[...]``, whose closing bracket Chrome allows to be missing), plain or gzipped.
    Top-level keys other than ``traceEvents`` are stored in ``header`` when given (after the
    iterator is exhausted for keys that follow the events). ``chunk_chars`` is how much text
    is read at a time (memory use is about that plus one event).

    Raises :class:`TraceError` naming the file for anything that is not such a trace.
    """
    p = Path(path)
    name = str(p)
    try:
        fh = _open_text(p)
    except OSError as exc:
        raise TraceError(f"{name}: cannot open the trace ({exc.strerror or exc})") from None
    with fh:
        js = _JsonStream(fh, name, chunk=max(1, int(chunk_chars)))
        try:
            first = js.peek()
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise TraceError(f"{name}: cannot read the trace ({exc})") from None
        if first is None:
            raise TraceError(f"{name}: the trace file is empty")
        if first == "[":
            js.take("[")
            yield from _iter_array(js, name, allow_open=True)
            return
        if first != "{":
            raise TraceError(
                f"{name}: not a JSON trace: it starts with {js.buf[js.pos:js.pos + 20]!r}; expected a Chrome / "
                f"Kineto trace (a JSON object with 'traceEvents', or a JSON array of events)"
            )
        js.take("{")
        seen_events = False
        while True:
            ch = js.peek()
            if ch == "}":
                js.pos += 1
                break
            if ch is not None and ch != '"':
                js.fail(f"expected a key but found {ch!r}")
            if ch is None:
                js.fail("the top-level object is not closed", truncated=True)
            key = js.value()
            if not isinstance(key, str):
                js.fail("expected a key")
            js.take(":")
            if key == "traceEvents":
                if js.peek() != "[":
                    js.fail("'traceEvents' must be an array")
                js.take("[")
                seen_events = True
                yield from _iter_array(js, name, allow_open=False)
            else:
                val = js.value()
                if header is not None:
                    header[key] = val
            ch = js.peek()
            if ch == ",":
                js.pos += 1
            elif ch != "}":
                js.fail("expected ',' or '}' after a top-level value")
        if not seen_events:
            raise TraceError(f"{name}: the JSON object has no 'traceEvents' array: not a Chrome / Kineto trace")


def _iter_array(js: _JsonStream, name: str, *, allow_open: bool) -> Iterator[dict[str, Any]]:
    while True:
        ch = js.peek()
        if ch == "]":
            js.pos += 1
            return
        if ch is None:
            if allow_open:
                return
            js.fail("the 'traceEvents' array is not closed", truncated=True)
        ev = js.value()
        if isinstance(ev, dict):
            yield ev
        ch = js.peek()
        if ch == ",":
            js.pos += 1
        elif ch == "]":
            continue
        elif ch is None and allow_open:
            return
        else:
            js.fail("expected ',' or ']' between events")


# ---------------------------------------------------------------------- scanning files
class _Raw(NamedTuple):
    """One candidate action span in trace microseconds (or CSV time unit)."""

    family: str
    stage: int | None
    kind: str
    mb: int
    start: float
    end: float
    thread: tuple[Any, Any]
    step: int | None


@dataclass
class _FileScan:
    path: str
    header: dict[str, Any] = field(default_factory=dict)
    spans: list[_Raw] = field(default_factory=list)
    overlaps: list[tuple[str, float, float, tuple[Any, Any]]] = field(default_factory=list)
    ops: dict[tuple[Any, Any], tuple[array, array]] = field(default_factory=dict)
    thread_rank: dict[tuple[Any, Any], int] = field(default_factory=dict)
    process_rank: dict[Any, int] = field(default_factory=dict)
    steps: dict[tuple[Any, Any], list[tuple[float, float, int]]] = field(default_factory=dict)
    n_events: int = 0
    units_per_ms: float = 1000.0


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
    if kind not in ("F", "B", "I", "W") or mb is None:
        return None
    st = gd.get("stage")
    return (int(st) if st is not None else None), kind, int(mb)


def _classify(name: str, user: Pattern | None) -> tuple[str, int | None, str, int] | None:
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


def _is_comm(name: str) -> bool:
    return _COMM_RE.search(name) is not None


def _scan_json(path: Path, user: Pattern | None, keep_ops: bool) -> _FileScan:
    scan = _FileScan(str(path))
    stacks: dict[tuple[Any, Any], list[tuple[str, float, str]]] = defaultdict(list)
    ops_lists: dict[tuple[Any, Any], tuple[array, array]] = {}

    def emit(name: str, cat: str, ts: float, end: float, thread: tuple[Any, Any]) -> None:
        got = _classify(name, user)
        if got is not None:
            fam, stage, kind, mb = got
            scan.spans.append(_Raw(fam, stage, kind, mb, ts, end, thread, None))
            return
        sm = _STEP_RE.match(name)
        if sm:
            scan.steps.setdefault(thread, []).append((ts, end, int(sm.group(1))))
            return
        if name.startswith("PP:("):
            om = _OVERLAP_RE.match(name)
            if om:
                scan.overlaps.append((om.group("subs"), ts, end, thread))
            return
        if keep_ops and cat != "user_annotation" and not name.startswith(("PP:", "ProfilerStep")) and not _is_comm(name):
            arrs = ops_lists.get(thread)
            if arrs is None:
                arrs = ops_lists[thread] = (array("d"), array("d"))
            arrs[0].append(ts)
            arrs[1].append(end)

    for ev in iter_trace_events(path, scan.header):
        scan.n_events += 1
        ph = ev.get("ph")
        thread = (ev.get("pid"), ev.get("tid"))
        if ph == "X":
            try:
                ts = float(ev["ts"])
                dur = float(ev.get("dur", 0.0))
            except (KeyError, TypeError, ValueError):
                continue
            emit(str(ev.get("name", "")), str(ev.get("cat", "")), ts, ts + dur, thread)
        elif ph == "B":
            try:
                stacks[thread].append((str(ev.get("name", "")), float(ev["ts"]), str(ev.get("cat", ""))))
            except (KeyError, TypeError, ValueError):
                continue
        elif ph == "E":
            st = stacks.get(thread)
            if st:
                nm, ts, cat = st.pop()
                try:
                    emit(nm, cat, ts, float(ev["ts"]), thread)
                except (KeyError, TypeError, ValueError):
                    continue
        elif ph == "M":
            args = ev.get("args") or {}
            label = str(args.get("name", "")) if isinstance(args, dict) else ""
            rm = _RANK_NAME_RE.search(label)
            if rm and ev.get("name") == "thread_name":
                scan.thread_rank[thread] = int(rm.group(1))
            elif rm and ev.get("name") == "process_name":
                scan.process_rank[ev.get("pid")] = int(rm.group(1))
    for thread, (s, e) in ops_lists.items():
        if all(s[k] <= s[k + 1] for k in range(len(s) - 1)):
            scan.ops[thread] = (s, e)  # Kineto writes events in time order: no copy needed
            continue
        order = sorted(range(len(s)), key=s.__getitem__)
        scan.ops[thread] = (array("d", (s[i] for i in order)), array("d", (e[i] for i in order)))
        del order
    return scan


_CSV_COLUMNS = ("rank", "stage", "kind", "microbatch", "start", "end")
_TIME_UNITS_PER_MS = {"ms": 1.0, "us": 1000.0, "ns": 1e6, "s": 1e-3}


def _scan_csv(path: Path, time_unit: str) -> _FileScan:
    if time_unit not in _TIME_UNITS_PER_MS:
        raise ValueError(f"time_unit must be one of {sorted(_TIME_UNITS_PER_MS)}, got {time_unit!r}")
    scan = _FileScan(str(path), units_per_ms=_TIME_UNITS_PER_MS[time_unit])
    try:
        fh = _open_text(path)
    except OSError as exc:
        raise TraceError(f"{path}: cannot open the CSV ({exc.strerror or exc})") from None
    with fh:
        rows = (line for line in fh if line.strip() and not line.lstrip().startswith("#"))
        reader = csv.DictReader(rows)
        if reader.fieldnames is None:
            raise TraceError(f"{path}: the CSV is empty: expected a header {','.join(_CSV_COLUMNS)}")
        fields = [f.strip().lower() for f in reader.fieldnames]
        missing = [c for c in _CSV_COLUMNS if c not in fields]
        if missing:
            raise TraceError(
                f"{path}: the CSV header {reader.fieldnames} lacks column(s) {missing}; expected "
                f"{','.join(_CSV_COLUMNS)} (and optionally step)"
            )
        reader.fieldnames = fields
        for n, row in enumerate(reader, start=2):
            try:
                rank, stage, mb = int(row["rank"]), int(row["stage"]), int(row["microbatch"])
                kind = str(row["kind"]).strip().upper()
                start, end = float(row["start"]), float(row["end"])
                step = int(row["step"]) if row.get("step") not in (None, "") else None
            except (TypeError, ValueError) as exc:
                raise TraceError(f"{path}: row {n} cannot be read ({exc}): {dict(row)}") from None
            if kind not in ("F", "B", "I", "W"):
                raise TraceError(f"{path}: row {n} has kind {kind!r}; allowed kinds are F, B, I, W")
            if end < start or min(rank, stage, mb) < 0:
                raise TraceError(f"{path}: row {n} is impossible (end before start or a negative index): {dict(row)}")
            scan.spans.append(_Raw("csv", stage, kind, mb, start, end, ("rank", rank), step))
            scan.thread_rank[("rank", rank)] = rank
            scan.n_events += 1
    return scan


# ------------------------------------------------------------------------- the result
class MeasuredTimeline(Timeline):
    """A :class:`Timeline` read from a measured trace (times in ms, 0 = step start).

    Extra attributes:
        files: per rank, the file it came from.
        family: which event names were mapped (``compute``, ``pp``, ``gpipe``, ``action``,
            ``csv``, ``user``, ``lab``).
        step, n_steps: this step's index among the complete steps found, and how many.
        offsets_ms: per rank, the clock shift applied (0 when clocks agreed).
        includes_wait: True when the spans still contain receive waits (not trimmed).
        notes: human-readable remarks on what the reader did.
        origin: the step's start on the original clock (trace units converted to ms).
    """

    def __init__(
        self,
        starts: list[list[float]],
        ends: list[list[float]],
        labels: list[list[Action | str]],
        *,
        files: Sequence[str],
        family: str,
        step: int,
        n_steps: int,
        offsets_ms: Sequence[float],
        includes_wait: bool,
        notes: Sequence[str],
        origin: float = 0.0,
        source: str = "",
    ) -> None:
        super().__init__(starts, ends, labels, unit="ms", may_overlap=True, source=source or "measured trace")
        self.files = tuple(files)
        self.family = family
        self.step = step
        self.n_steps = n_steps
        self.offsets_ms = tuple(offsets_ms)
        self.includes_wait = includes_wait
        self.notes = list(notes)
        self.origin = origin

    @property
    def orders(self) -> tuple[tuple[Action, ...], ...]:
        """Per rank, the actions in the order they started (string-labelled spans skipped)."""
        out = []
        for r in range(self.p):
            pairs = sorted(zip(self._starts[r], self._labels[r]), key=lambda x: x[0])
            out.append(tuple(lb for _, lb in pairs if isinstance(lb, Action)))
        return tuple(out)

    @property
    def placement(self) -> tuple[int, ...]:
        """``placement[s]`` = the rank that ran stage ``s`` (from the data)."""
        where: dict[int, int] = {}
        for r, order in enumerate(self.orders):
            for a in order:
                where.setdefault(a.stage, r)
        n = max(where) + 1 if where else self.p
        return tuple(where.get(s, s % self.p) for s in range(n))

    @property
    def m(self) -> int:
        """Microbatches seen (largest microbatch index + 1)."""
        return 1 + max((a.microbatch for o in self.orders for a in o), default=-1)

    def to_schedule(self, name: str = "measured") -> Any:
        """The executed per-rank orders as a :class:`bubblekit.Schedule` (for simulation)."""
        from bubblekit.schedules.base import Schedule

        return Schedule(name, self.p, self.m, self.placement, self.orders, source=self.source)

    def __repr__(self) -> str:
        return (
            f"<MeasuredTimeline ranks={self.p} spans={self.n_spans} step={self.step}/{self.n_steps} "
            f"makespan={float(self.makespan):.3f} ms bubble_ratio={self.bubble_ratio:.4f} ({self.family})>"
        )


# --------------------------------------------------------------------------- reading
def _resolve_files(source: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.is_dir():
            files = sorted(
                f for f in p.iterdir()
                if f.is_file() and (f.name.endswith((".json", ".json.gz", ".csv", ".csv.gz")))
            )
            if not files:
                raise TraceError(f"{p}: the folder holds no trace files (*.json, *.json.gz, *.csv)")
            return files
        if not p.exists():
            raise TraceError(f"{p}: no such trace file or folder")
        return [p]
    if isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        files = [Path(s) for s in source]
        if not files:
            raise TraceError("no trace files were given (an empty list)")
        for f in files:
            if not f.is_file():
                raise TraceError(f"{f}: no such trace file")
        return files
    raise TypeError(f"source must be a path, a folder or a list of paths, got {type(source).__name__}")


def _is_csv(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".csv.gz"))


def _file_rank(scan: _FileScan, path: Path) -> int | None:
    info = scan.header.get("distributedInfo")
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        return int(info["rank"])
    m = _RANK_NAME_RE.search(path.name) or re.search(r"(?:^|[._-])r(\d+)(?:[._-]|$)", path.name)
    return int(m.group(1)) if m else None


def _world_size(scan: _FileScan) -> int | None:
    info = scan.header.get("distributedInfo")
    if isinstance(info, dict) and isinstance(info.get("world_size"), int):
        return int(info["world_size"])
    return None


class _RankData(NamedTuple):
    rank: int
    file: str
    spans: list[_Raw]
    scan: _FileScan


def _split_ranks(scans: list[tuple[Path, _FileScan]]) -> list[_RankData]:
    """Assign every span to a rank; check for duplicates and missing ranks."""
    out: dict[int, _RankData] = {}
    world: dict[int, str] = {}
    positional: list[tuple[Path, _FileScan]] = []
    for path, scan in scans:
        ws = _world_size(scan)
        if ws is not None:
            world[ws] = str(path)
        multi = {**{t: r for t, r in scan.thread_rank.items()}}
        if not multi and scan.process_rank:
            multi = {(pid, tid): scan.process_rank[pid] for (pid, tid) in {s.thread for s in scan.spans}
                     if pid in scan.process_rank}
        if multi:
            by_rank: dict[int, list[_Raw]] = defaultdict(list)
            unassigned = 0
            for s in scan.spans:
                r = multi.get(s.thread)
                if r is None:
                    unassigned += 1
                else:
                    by_rank[r].append(s)
            for r, spans in by_rank.items():
                if r in out:
                    raise TraceError(f"rank {r} appears twice: in {out[r].file} and in {path}")
                out[r] = _RankData(r, str(path), spans, scan)
            continue
        r = _file_rank(scan, path)
        if r is None:
            positional.append((path, scan))
            continue
        if r in out:
            raise TraceError(f"rank {r} appears twice: in {out[r].file} and in {path}")
        out[r] = _RankData(r, str(path), scan.spans, scan)
    if positional:
        if out:
            names = ", ".join(str(p) for p, _ in positional)
            raise TraceError(
                f"cannot tell the rank of {names}: no 'distributedInfo' in the trace and no 'rank<N>' in "
                f"the file name, while other files name theirs; rename them rank<N>.json"
            )
        for i, (path, scan) in enumerate(positional):
            out[i] = _RankData(i, str(path), scan.spans, scan)
    if not out:
        raise TraceError("no ranks found in the trace files")
    ranks = sorted(out)
    expected = max([max(ranks) + 1, *world])
    missing = [r for r in range(expected) if r not in out]
    if missing:
        src = f" (world_size {max(world)} in {world[max(world)]})" if world and max(world) >= expected else ""
        raise TraceError(
            f"missing ranks {missing}: found traces of ranks {ranks}{src}; every rank's trace is needed to "
            f"measure the bubble ({', '.join(out[r].file for r in ranks[:_MAX_SHOWN])})"
        )
    return [out[r] for r in range(expected)]


def _choose_family(data: list[_RankData], pattern: Pattern | None) -> str:
    if pattern is not None and pattern != "auto":
        fam_names = {s.family for d in data for s in d.spans}
        if not fam_names:
            shown = ", ".join(d.file for d in data[:_MAX_SHOWN])
            raise TraceError(f"no event in {shown} matches the pattern {pattern!r}")
        return next(iter(fam_names))
    present = [{s.family for s in d.spans} for d in data]
    if all(not p for p in present):
        shown = ", ".join(sorted({d.file for d in data})[:_MAX_SHOWN])
        examples = ", ".join(repr(f.example) for f in FAMILIES.values())
        raise TraceError(
            f"no pipeline events in {shown}: expected event names like {examples} "
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


def _trim(span: _Raw, ops: tuple[array, array] | None) -> tuple[float, float] | None:
    """Start of the first and end of the last operator nested in ``span`` (same thread)."""
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


_PRE_TRIMMED = -(1 << 40)  # marks split overlap spans, already trimmed (their step is assigned later)


def _split_overlaps(data: list[_RankData], trim: bool) -> tuple[list[_RankData], int]:
    """Turn each ``PP:(0F3;3B1)OVERLAP_F_B`` range into one 'pp' span per sub-action.

    The range (trimmed to its operators when ``trim``) is divided evenly in sub-action order:
    the trace does not say where one sub-action ends.
    """
    n = 0
    out = []
    for d in data:
        extra: list[_Raw] = []
        for subs, start, end, thread in d.scan.overlaps:
            acts = []
            for tok in subs.split(";"):
                m = FAMILIES["action"].regex.match(tok.strip())
                if m:
                    acts.append(Action(int(m.group("stage")), m.group("kind"), int(m.group("mb"))))
            if not acts:
                continue
            if trim:
                t = _trim(_Raw("pp", None, "F", 0, start, end, thread, None), d.scan.ops.get(thread))
                if t is not None:
                    start, end = t
            width = (end - start) / len(acts)
            for k, a in enumerate(acts):
                extra.append(_Raw("pp", a.stage, a.kind, a.microbatch, start + k * width, start + (k + 1) * width,
                                  thread, _PRE_TRIMMED))
            n += 1
        out.append(d._replace(spans=d.spans + extra) if extra else d)
    return out, n


class _Occ(NamedTuple):
    step: int
    action: Action
    start: float
    end: float


def _assign_steps(d: _RankData, family: str, use_markers: bool) -> list[_Occ]:
    """Give every span of one rank a step index (ProfilerStep ranges, CSV column, or repeats)."""
    spans = sorted((s for s in d.spans if s.family == family), key=lambda s: (s.start, s.end))
    markers = sorted(m for ms in d.scan.steps.values() for m in ms) if use_markers else []
    counts: dict[Action, int] = defaultdict(int)
    out: list[_Occ] = []
    for s in spans:
        stage = s.stage if s.stage is not None else d.rank
        a = Action(stage, s.kind, s.mb)
        if s.step is not None and s.step != _PRE_TRIMMED:
            step = s.step
        elif markers:
            mid = (s.start + s.end) / 2  # the step whose range holds the span's middle
            i = bisect_right(markers, (mid, float("inf"), 1 << 62)) - 1
            while i >= 0 and markers[i][1] < mid:
                i -= 1
            step = markers[i][2] if i >= 0 and markers[i][0] <= mid <= markers[i][1] else -1
            if step < 0:
                continue
        else:
            step = counts[a]
            counts[a] += 1
        out.append(_Occ(step, a, s.start, s.end))
    return out


def _dep_edges(
    occ: dict[int, dict[tuple[int, Action], _Occ]], placement: dict[int, int]
) -> Iterator[tuple[int, _Occ, int, _Occ]]:
    """Cross-rank dependencies as (producer rank, producer, consumer rank, consumer)."""
    last_stage = max(placement) if placement else 0
    for rc, table in occ.items():
        for (step, a), c in table.items():
            if a.kind == "F" and a.stage > 0:
                deps = [Action(a.stage - 1, "F", a.microbatch)]
            elif a.kind in ("B", "I") and a.stage < last_stage:
                deps = [Action(a.stage + 1, "B", a.microbatch), Action(a.stage + 1, "I", a.microbatch)]
            else:
                continue
            for dep in deps:
                rp = placement.get(dep.stage)
                if rp is None or rp == rc:
                    continue
                p_occ = occ.get(rp, {}).get((step, dep))
                if p_occ is not None:
                    yield rp, p_occ, rc, c


def _align(
    occ: dict[int, dict[tuple[int, Action], _Occ]],
    placement: dict[int, int],
    n_ranks: int,
    files: Sequence[str],
    mode: str,
    wait_inclusive: bool,
    tol: float,
    scale: float,
) -> tuple[list[float], list[str]]:
    """Clock offsets per rank (to add, in trace units) from the pipeline's dependencies.

    ``scale`` is trace units per ms, for messages. See the module doc for the method.
    """
    # bound[(a, b)] = (lo, hi) on o_b - o_a
    lo: dict[tuple[int, int], float] = {}
    worst: dict[tuple[int, int], tuple[float, str]] = {}
    for rp, prod, rc, cons in _dep_edges(occ, placement):
        c_time = cons.end if wait_inclusive else cons.start
        need = prod.end - c_time  # o_c - o_p >= need
        key = (rp, rc)
        if need > lo.get(key, float("-inf")):
            lo[key] = need
            worst[key] = (need, f"{cons.action} (rank {rc}) needing {prod.action} (rank {rp}), step {cons.step},")
    violated = [(k, v) for k, v in lo.items() if v > tol]
    notes: list[str] = []
    if mode == "none":
        if violated:
            (a, b), v = max(violated, key=lambda kv: kv[1])
            notes.append(
                f"clocks not aligned (align='none'): rank {b} starts {worst[(a, b)][1]} {v:.3f} ms before its "
                f"input is ready, so the clocks of {files[a]} and {files[b]} differ"
            )
        return [0.0] * n_ranks, notes
    if mode == "auto" and not violated:
        return [0.0] * n_ranks, notes
    # Offsets: breadth-first from rank 0, midpoint of each pair's window.
    offsets: list[float | None] = [None] * n_ranks
    offsets[0] = 0.0
    frontier = [0]
    while frontier:
        a = frontier.pop(0)
        for b in range(n_ranks):
            if offsets[b] is not None:
                continue
            l_ab = lo.get((a, b))           # o_b - o_a >= l_ab
            l_ba = lo.get((b, a))           # o_a - o_b >= l_ba  ->  o_b - o_a <= -l_ba
            if l_ab is None and l_ba is None:
                continue
            if l_ab is not None and l_ba is not None:
                hi = -l_ba
                if l_ab > hi + tol:
                    raise TraceError(
                        f"cannot reconcile the clocks of {files[a]} (rank {a}) and {files[b]} (rank {b}): "
                        f"{worst[(a, b)][1]} needs rank {b}'s clock shifted by >= {l_ab / scale:.3f} ms, but "
                        f"{worst[(b, a)][1]} needs <= {hi / scale:.3f} ms. The trace is inconsistent (ranks from "
                        f"different runs or steps?), or the event names do not match the work done"
                    )
                d = 0.0 if (mode == "auto" and l_ab <= 0 <= hi) else (l_ab + hi) / 2
            elif l_ab is not None:
                d = max(0.0, l_ab) if mode == "auto" else l_ab
            else:
                assert l_ba is not None
                d = min(0.0, -l_ba) if mode == "auto" else -l_ba
            offsets[b] = float(offsets[a]) + d  # type: ignore[arg-type]
            frontier.append(b)
    unknown = [r for r, o in enumerate(offsets) if o is None]
    if unknown:
        raise TraceError(
            f"cannot align the clocks of ranks {unknown} ({', '.join(files[r] for r in unknown)}): no pipeline "
            f"dependency links them to rank 0"
        )
    final = [float(o) for o in offsets]  # type: ignore[arg-type]
    for (a, b), need in lo.items():
        if final[b] - final[a] < need - tol:
            raise TraceError(
                f"cannot reconcile the clocks of {files[a]} (rank {a}) and {files[b]} (rank {b}): no shift "
                f"satisfies every dependency ({worst[(a, b)][1]})"
            )
    for r, o in enumerate(final):
        if abs(o) > tol:
            notes.append(f"rank {r}'s clock ({files[r]}) shifted by {o / scale:+.3f} ms to satisfy the pipeline's dependencies")
    return final, notes


def _common_name(files: Sequence[Path]) -> str:
    """``1f1b-p2-m4`` for ``1f1b-p2-m4-rank0.json.gz`` and ``...-rank1...``; a folder's name otherwise."""
    if len(files) == 1:
        return files[0].name
    prefix = os.path.commonprefix([f.name for f in files])
    prefix = re.sub(r"[-_.]*(rank|r)?[-_.]*$", "", prefix, flags=re.IGNORECASE)
    return prefix or files[0].parent.name


def read_trace_steps(
    source: PathLike | Sequence[PathLike],
    *,
    pattern: Pattern | None = "auto",
    align: str = "auto",
    trim: bool | None = None,
    time_unit: str = "ms",
    tolerance_ms: float = 0.005,
) -> list[MeasuredTimeline]:
    """Read every complete step of a trace; see :func:`read_trace` for the arguments."""
    if align not in ("auto", "none", "causal"):
        raise ValueError(f"align must be 'auto', 'none' or 'causal', got {align!r}")
    if trim not in (None, True, False):
        raise TypeError(f"trim must be None (automatic), True or False, got {trim!r}")
    forced = pattern if isinstance(pattern, str) and pattern in FAMILIES else None
    user = None if pattern in (None, "auto") or forced is not None else pattern
    if user is not None and not (isinstance(user, (str, re.Pattern)) or callable(user)):
        raise TypeError(f"pattern must be 'auto', a regular expression or a callable, got {pattern!r}")
    if isinstance(user, str):
        try:
            rx = re.compile(user)
        except re.error as exc:
            raise ValueError(f"pattern {user!r} is not a valid regular expression: {exc}") from None
        if "kind" not in rx.groupindex or not ({"mb", "microbatch"} & set(rx.groupindex)):
            raise ValueError(
                f"pattern {user!r} needs named groups 'kind' (F/B/I/W or forward/backward) and 'mb' "
                f"(microbatch), and optionally 'stage', e.g. r'^(?P<kind>fwd|bwd)(?P<stage>\\d+)_(?P<mb>\\d+)$'"
            )
        user = rx
    files = _resolve_files(source)
    scans: list[tuple[Path, _FileScan]] = []
    for f in files:
        if _is_csv(f):
            scans.append((f, _scan_csv(f, time_unit)))
        else:
            scans.append((f, _scan_json(f, user, keep_ops=trim is not False)))
    data = _split_ranks(scans)
    family = forced or _choose_family(data, user)
    if forced is not None and not any(s.family == forced for d in data for s in d.spans):
        raise TraceError(
            f"no '{forced}' events (names like {FAMILIES[forced].example!r}) in "
            f"{', '.join(d.file for d in data[:_MAX_SHOWN])}"
        )
    fam = FAMILIES.get(family)
    wait_inclusive = bool(fam and fam.includes_wait) or (family == "user" and trim is True)
    notes: list[str] = []
    if family == "pp":
        data, n_split = _split_overlaps(data, trim is not False)
        if n_split:
            notes.append(f"{n_split} OVERLAP_F_B ranges split evenly between their sub-actions (durations approximate)")
    do_trim = wait_inclusive and trim is not False
    if do_trim:
        untrimmed = empty = 0
        for i, d in enumerate(data):
            new: list[_Raw] = []
            for s in d.spans:
                if s.family == family and s.step != _PRE_TRIMMED:
                    ops = d.scan.ops.get(s.thread)
                    t = _trim(s, ops)
                    if t is not None:
                        s = s._replace(start=t[0], end=t[1])
                    elif ops is not None and len(ops[0]):
                        empty += 1
                        s = s._replace(start=s.end)
                    else:
                        untrimmed += 1
                new.append(s)
            data[i] = d._replace(spans=new)
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
    elif wait_inclusive:
        notes.append(f"'{family}' ranges include the receive wait: the bubble is underestimated (trim=False)")
    use_markers = family not in ("csv",) and all(d.scan.steps for d in data)
    per_rank = [_assign_steps(d, family, use_markers) for d in data]
    for d, occs in zip(data, per_rank):
        if not occs:
            raise TraceError(f"{d.file}: rank {d.rank} has no '{family}' events inside any profiler step")
    scale = data[0].scan.units_per_ms
    # placement from the data
    placement: dict[int, int] = {}
    for d, occs in zip(data, per_rank):
        for o in occs:
            prev = placement.setdefault(o.action.stage, d.rank)
            if prev != d.rank:
                raise TraceError(
                    f"stage {o.action.stage} runs on rank {prev} ({data[prev].file}) and on rank {d.rank} "
                    f"({d.file}): a stage lives on one rank; are two files from the same rank?"
                )
    occ: dict[int, dict[tuple[int, Action], _Occ]] = {}
    for d, occs in zip(data, per_rank):
        table: dict[tuple[int, Action], _Occ] = {}
        for o in occs:
            table.setdefault((o.step, o.action), o)
        occ[d.rank] = table
    offsets, align_notes = _align(occ, placement, len(data), [d.file for d in data], align, wait_inclusive,
                                  tolerance_ms * scale, scale)
    notes.extend(align_notes)
    # steps: complete ones only
    steps = sorted({o.step for occs in per_rank for o in occs})
    sets = {st: [frozenset(o.action for o in occs if o.step == st) for occs in per_rank] for st in steps}
    reference = max(sets.values(), key=lambda per: sum(len(x) for x in per))
    complete = [st for st in steps if sets[st] == reference]
    dropped = [st for st in steps if st not in complete]
    if dropped:
        notes.append(f"incomplete steps {dropped} skipped (profiling started or stopped inside them)")
    if not complete:  # pragma: no cover - reference itself is complete
        raise TraceError("no complete step in the trace")
    out: list[MeasuredTimeline] = []
    for k, st in enumerate(complete):
        rows: list[list[tuple[float, float, Action]]] = []
        for r, occs in enumerate(per_rank):
            rows.append(sorted((o.start + offsets[r], o.end + offsets[r], o.action) for o in occs if o.step == st))
        origin = min(row[0][0] for row in rows if row)
        starts = [[(s - origin) / scale for s, _, _ in row] for row in rows]
        ends = [[(e - origin) / scale for _, e, _ in row] for row in rows]
        labels: list[list[Action | str]] = [[a for _, _, a in row] for row in rows]
        src = _common_name(files)
        out.append(MeasuredTimeline(
            starts, ends, labels, files=[d.file for d in data], family=family, step=k, n_steps=len(complete),
            offsets_ms=[o / scale for o in offsets], includes_wait=wait_inclusive, notes=notes,
            origin=origin / scale, source=f"measured: {src} step {k}",
        ))
    return out


def read_trace(
    source: PathLike | Sequence[PathLike],
    *,
    step: int = -1,
    pattern: Pattern | None = "auto",
    align: str = "auto",
    trim: bool | None = None,
    time_unit: str = "ms",
    tolerance_ms: float = 0.005,
) -> MeasuredTimeline:
    """Read a pipeline trace into a :class:`MeasuredTimeline` (ms; every metric and plot works on it).

    Args:
        source: a trace file (Chrome / Kineto JSON, ``.json.gz``, or CSV), a folder of them
            (one per rank), or a list of files. A file's rank comes from its
            ``distributedInfo`` (Kineto), thread or process names ``rank N``, or ``rank<N>``
            in its name; a folder of unnamed files is taken in name order.
        step: which complete training step (``-1``: the last one); steps are found from
            ``ProfilerStep#N`` ranges, a CSV ``step`` column, or repeated actions.
        pattern: ``"auto"`` (the families in the module doc), a regular expression with named
            groups ``kind`` and ``mb`` (and optionally ``stage``; without it the stage is the
            rank), or a callable ``name -> Action | None``.
        align: ``"auto"`` (shift clocks only when they violate a dependency), ``"none"``
            (never; a note reports violations) or ``"causal"`` (always the midpoint shift).
        trim: cut ranges that include the receive wait down to their operator events
            (default: yes for ``pp`` and ``gpipe``).
        time_unit: the unit of CSV times (``ms``, ``us``, ``ns`` or ``s``); JSON is always us.
        tolerance_ms: clock differences below this are profiler jitter, not clock offsets.

    Raises:
        TraceError: not JSON, truncated, empty, no pipeline events, missing or duplicate
            ranks, clocks that cannot be reconciled: the message names the file and problem.
    """
    steps = read_trace_steps(source, pattern=pattern, align=align, trim=trim, time_unit=time_unit,
                             tolerance_ms=tolerance_ms)
    if not isinstance(step, int) or isinstance(step, bool):
        raise TypeError(f"step must be an int (0 is the first complete step, -1 the last), got {step!r}")
    if not -len(steps) <= step < len(steps):
        raise ValueError(f"step={step} is out of range: the trace has {len(steps)} complete step(s)")
    return steps[step]


def read_csv(path: PathLike, *, step: int = -1, time_unit: str = "ms") -> MeasuredTimeline:
    """Read the documented CSV (``rank,stage,kind,microbatch,start,end[,step]``); see :func:`read_trace`."""
    return read_trace(path, step=step, time_unit=time_unit)


def write_csv(timelines: Timeline | Iterable[Timeline], path: PathLike) -> Path:
    """Write one or more timelines (steps) as the documented CSV, times in the timeline's unit.

    Only spans labelled with an :class:`~bubblekit.Action` are written. Returns the path.
    """
    tls = [timelines] if isinstance(timelines, Timeline) else list(timelines)
    if not tls:
        raise ValueError("timelines is empty: nothing to write")
    out = Path(path)
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        fh.write(f"# bubblekit pipeline timeline; times in {tls[0].unit}\n")
        w.writerow([*_CSV_COLUMNS, "step"])
        for k, tl in enumerate(tls):
            for sp in tl.spans():
                if sp.action is None:
                    continue
                w.writerow([sp.rank, sp.action.stage, sp.action.kind, sp.action.microbatch,
                            f"{float(sp.start):.6f}", f"{float(sp.end):.6f}", k])
    return out


# ------------------------------------------------------------------------ gap reports
class GapReport(NamedTuple):
    """One idle gap and what the rank was waiting for (times in the timeline's unit).

    ``reason`` is one of ``"fill"`` (before the rank's first action), ``"drain"`` (after
    its last), ``"waiting"`` (for data from ``from_rank``: ``waiting_for`` ended at
    ``ready``), ``"overhead"`` (every input had arrived ``slack`` before the gap ended:
    framework overhead, launch cost or a slow receive).
    """

    rank: int
    start: float
    end: float
    next_action: str | None
    waiting_for: str | None
    from_rank: int | None
    ready: float | None
    reason: str

    @property
    def duration(self) -> float:
        """``end - start``."""
        return self.end - self.start

    def describe(self, unit: str = "") -> str:
        """One sentence."""
        u = f" {unit}" if unit else ""
        head = f"rank {self.rank} idle {self.duration:.3f}{u} [{self.start:.3f}, {self.end:.3f}]"
        if self.reason == "drain":
            return f"{head}: drain, its last action is done and it waits for the step to end"
        if self.waiting_for is None:
            return f"{head}: before {self.next_action} ({self.reason})"
        where = f"rank {self.from_rank}" if self.from_rank is not None and self.from_rank != self.rank else "itself"
        if self.reason == "overhead":
            return (f"{head}: before {self.next_action}; its input {self.waiting_for} ({where}) was ready at "
                    f"{self.ready:.3f}, so the gap is overhead")
        lag = self.end - (self.ready if self.ready is not None else self.end)
        tail = f", then {lag:.3f}{u} more until it started (latency and overhead)" if lag > 0 else ""
        return (f"{head}: {self.reason}, {self.next_action} waits for {self.waiting_for} from {where}, "
                f"done at {self.ready:.3f}{tail}")


def explain_gaps(timeline: Timeline, n: int | None = 5, *, min_duration: float = 0.0) -> list[GapReport]:
    """The ``n`` longest idle gaps (all when ``None``), longest first, each with what its rank waited for.

    Works on any timeline whose spans are labelled with actions (measured or simulated).
    """
    if n is not None and (not isinstance(n, int) or n < 0):
        raise ValueError(f"n must be a whole number >= 0 or None, got {n!r}")
    where: dict[Action, tuple[int, float, float]] = {}
    firsts: dict[int, float] = {}
    for sp in timeline.spans():
        if sp.action is not None:
            where[sp.action] = (sp.rank, float(sp.start), float(sp.end))
        firsts[sp.rank] = min(firsts.get(sp.rank, float("inf")), float(sp.start))
    n_stages = 1 + max((a.stage for a in where), default=0)
    out: list[GapReport] = []
    gaps = sorted(timeline.idle_intervals(), key=lambda g: g.duration, reverse=True)
    for g in gaps:
        dur = float(g.duration)
        if dur <= min_duration:
            continue
        start, end = float(g.start), float(g.end)
        if g.before is None:
            out.append(GapReport(g.rank, start, end, None, None, None, None, "drain"))
        else:
            try:
                act = parse_action(g.before)
            except ValueError:
                out.append(GapReport(g.rank, start, end, g.before, None, None, None, "unknown"))
                continue
            deps = [d for d in inputs(act, n_stages, lambda a: a in where) if d in where]
            if deps:
                dep = max(deps, key=lambda d: where[d][2])
                dr, _, dend = where[dep]
                reason = "waiting" if dend > start + 1e-9 else "overhead"
                if reason == "waiting" and start <= firsts.get(g.rank, start) and end <= firsts[g.rank] + 1e-9:
                    reason = "fill"
                out.append(GapReport(g.rank, start, end, str(act), str(dep), dr, dend, reason))
            else:
                out.append(GapReport(g.rank, start, end, str(act), None, None, None,
                                     "fill" if end <= firsts.get(g.rank, end) + 1e-9 else "overhead"))
        if n is not None and len(out) >= n:
            break
    return out


def bubble_report(timeline: Timeline, n_gaps: int = 5) -> str:
    """A text report: bubble ratio (the article's b), per-rank idle time and the largest gaps explained."""
    u = timeline.unit
    lines = [
        f"{timeline.source or 'timeline'}: {timeline.p} ranks, makespan {float(timeline.makespan):.3f} {u}",
        f"bubble_ratio = idle / (ranks x makespan) = {float(timeline.total_idle):.3f} / "
        f"({timeline.p} x {float(timeline.makespan):.3f}) = {timeline.bubble_ratio:.4f}",
        f"bubble_overhead = idle / busy = {timeline.bubble_overhead:.4f}",
    ]
    for r in range(timeline.p):
        lines.append(
            f"  rank {r}: busy {float(timeline.busy[r]):.3f} {u}, idle {float(timeline.idle[r]):.3f} {u} "
            f"({1 - timeline.utilization_per_rank[r]:.1%} of the step)"
        )
    gaps = explain_gaps(timeline, n_gaps)
    if gaps:
        lines.append(f"largest gaps ({len(gaps)}):")
        lines.extend("  " + g.describe(u) for g in gaps)
    for note in getattr(timeline, "notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- shipped samples
#: Recorded traces shipped with bubblekit (made by ``scripts/record_traces.py``).
SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "traces"


def _manifest() -> dict[str, Any]:
    path = SAMPLE_DIR / "manifest.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: the shipped sample traces are not installed")
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def sample_names() -> list[str]:
    """Names of the shipped sample traces (e.g. ``"1f1b-p2-m8"``)."""
    return list(_manifest()["samples"])


def sample_info(name: str) -> dict[str, Any]:
    """The shipped sample's metadata: lab configuration, torch version, files, profiled step."""
    samples = _manifest()["samples"]
    if name not in samples:
        raise ValueError(f"unknown sample trace {name!r}; shipped: {', '.join(samples)}")
    return dict(samples[name])


def sample_trace(name: str) -> list[Path]:
    """The per-rank ``torch.profiler`` trace files of a shipped sample (pass them to :func:`read_trace`)."""
    return [SAMPLE_DIR / f for f in sample_info(name)["trace_files"]]


def sample_record(name: str) -> Path:
    """The lab's own record of the same run, as bubblekit CSV (ms; every measured step)."""
    return SAMPLE_DIR / str(sample_info(name)["record_csv"])
