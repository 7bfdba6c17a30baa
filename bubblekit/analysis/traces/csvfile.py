"""Step 2, parsing (CSV): bubblekit's own table of actions, read and written.

The format, one row per action::

    # comments start with '#'
    rank,stage,kind,microbatch,start,end,step
    0,0,F,0,0.000000,1.000000,0

``kind`` is F, B, I or W, or ``F&B`` for an overlapped forward+backward pair, whose ``stage``
and ``microbatch`` cells then hold both parts, forward first, joined by ``&`` (the pair
``0F7&7B3`` is the row ``0,0&7,F&B,7&3,...``); ``start`` and ``end`` are in the reader's
``time_unit`` (ms by default); ``step`` is optional (without it, an action's repeats are the
steps). A UTF-8 byte-order mark (as Excel writes) is accepted. Every unreadable cell raises
:class:`TraceError` naming the file, the line, the column and the value.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from bubblekit.actions import Action, Pair
from bubblekit.timeline import Timeline

from .records import FileScan, PathLike, RawSpan, TraceError
from .stream import READ_ERRORS, open_text

__all__ = ["CSV_COLUMNS", "TIME_UNITS_PER_MS", "scan_csv", "write_csv"]

CSV_COLUMNS = ("rank", "stage", "kind", "microbatch", "start", "end")
#: CSV time units and how many of them make one millisecond.
TIME_UNITS_PER_MS = {"ms": 1.0, "us": 1000.0, "ns": 1e6, "s": 1e-3}


def check_time_unit(time_unit: str) -> float:
    """Units per ms of ``time_unit``; ``ValueError`` naming it when it is not a known unit."""
    if not isinstance(time_unit, str) or time_unit not in TIME_UNITS_PER_MS:
        raise ValueError(f"time_unit must be one of {sorted(TIME_UNITS_PER_MS)}, got {time_unit!r}")
    return TIME_UNITS_PER_MS[time_unit]


def _numbered_rows(numbered: Iterator[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
    """``(line number from 1, cells)`` for each line of ``numbered`` that is neither blank nor a comment.

    Used for the header: the rows after it are split in :func:`_read_rows`' own loop (a line
    without quotes at its commas, a quoted one with :mod:`csv`), which is what keeps reading fast.
    """
    for number, line in numbered:
        text = line.strip()
        if text and not text.startswith("#"):
            yield number, (text.split(",") if '"' not in line else next(csv.reader([line])))


#: A time cell: an ASCII decimal number (``1.5``, ``-2``, ``3e-4``); no ``inf``, ``nan``, ``1_000`` or other digits.
_TIME_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class _Row:
    """One CSV row with the helpers that read its cells and name them in messages."""

    def __init__(self, path: Path, number: int, cells: dict[str, str], unit: str) -> None:
        self.path, self.number, self.cells, self.unit = path, number, cells, unit

    def fail(self, problem: str) -> TraceError:
        return TraceError(f"{self.path}: line {self.number}, {problem}")

    def index(self, column: str) -> int:
        raw = self.cells[column].strip()
        if not (raw.isascii() and raw.isdigit()):
            raise self.fail(f"column {column!r}: {raw!r} is not a whole number >= 0")
        return int(raw)

    def time(self, column: str) -> float:
        raw = self.cells[column].strip()
        value = float(raw) if _TIME_RE.fullmatch(raw) else math.nan
        if not math.isfinite(value):
            raise self.fail(f"column {column!r}: {raw!r} is not a finite number of {self.unit} (write it with the "
                            f"digits 0-9, e.g. 12.5 or 1.25e1)")
        return value


def scan_csv(path: Path, time_unit: str) -> FileScan:
    """Read one CSV file into a :class:`FileScan` (times in ``time_unit``; see the module doc)."""
    scan = FileScan(str(path), units_per_ms=check_time_unit(time_unit))
    try:
        fh = open_text(path)
    except OSError as exc:
        raise TraceError(f"{path}: cannot open the CSV ({exc.strerror or exc})") from None
    with fh:
        try:
            _read_rows(scan, path, fh, time_unit)
        except (*READ_ERRORS, csv.Error) as exc:
            raise TraceError(f"{path}: cannot read the CSV ({exc}): a damaged or truncated file?") from None
    return scan


def _read_rows(scan: FileScan, path: Path, lines: Iterable[str], time_unit: str) -> None:
    """The header, then one span per row, into ``scan``.

    Rows are read in one pass, in time linear in the file: a row of plain cells (whole
    numbers, F/B/I/W, decimal times) takes the fast path; any other row goes through
    :class:`_Row`, which accepts what is valid (``F&B`` pairs, spaces, lowercase kinds) and
    names the line, the column and the value of what is not.
    """
    numbered = enumerate(lines, start=1)
    first = next(_numbered_rows(numbered), None)
    if first is None:
        raise TraceError(f"{path}: the CSV is empty: expected a header {','.join(CSV_COLUMNS)}")
    fields = [f.strip().lower() for f in first[1]]
    missing = [c for c in CSV_COLUMNS if c not in fields]
    if missing:
        raise TraceError(
            f"{path}: the CSV header {first[1]} (line {first[0]}) lacks column(s) {missing}; expected "
            f"{','.join(CSV_COLUMNS)} (and optionally step)"
        )
    has_step = "step" in fields
    i_rank, i_stage, i_kind, i_mb, i_start, i_end = (fields.index(c) for c in CSV_COLUMNS)
    i_step = fields.index("step") if has_step else -1
    n_fields = len(fields)
    spans, thread_rank = scan.spans, scan.thread_rank
    kinds = {"F", "B", "I", "W"}
    n = 0
    for number, line in numbered:
        if '"' in line:
            text = line.strip()
            if not text or text[0] == "#":
                continue
            cells = next(csv.reader([line]))
        else:
            cells = line.split(",")
            if len(cells) < n_fields:
                text = line.strip()
                if not text or text[0] == "#":
                    continue  # a blank line or a comment
            elif cells[0][:1] == "#" or cells[0].lstrip()[:1] == "#":
                continue
            cells[-1] = cells[-1].rstrip("\r\n")
        if len(cells) < n_fields:
            raise TraceError(f"{path}: line {number} has {len(cells)} values but the header names "
                             f"{n_fields} columns ({','.join(fields)})")
        rank_s, stage_s, mb_s, kind = cells[i_rank], cells[i_stage], cells[i_mb], cells[i_kind]
        start_s, end_s = cells[i_start], cells[i_end]
        step_s = cells[i_step] if has_step else "0"
        times = start_s + end_s
        if (kind in kinds and rank_s.isdigit() and stage_s.isdigit() and mb_s.isdigit() and step_s.isdigit()
                and (rank_s + stage_s + mb_s + step_s + times).isascii() and "_" not in times):
            try:  # ASCII without '_': float() reads what _TIME_RE allows, and inf / nan (refused next)
                start, end = float(start_s), float(end_s)
            except ValueError:
                start, end = math.nan, math.nan
            if start <= end and end - start < math.inf:  # finite and in order; otherwise _Row says why
                rank = int(rank_s)
                thread = ("rank", rank)
                spans.append(RawSpan("csv", int(stage_s), kind, int(mb_s), start, end, thread,
                                     int(step_s) if has_step else None, f"line {number}"))
                thread_rank[thread] = rank
                n += 1
                continue
        row = _Row(path, number, dict(zip(fields, cells)), time_unit)
        spans.append(_row_span(row, has_step))
        thread_rank[spans[-1].thread] = row.index("rank")
        n += 1
    scan.n_events += n


def _pair_cells(row: _Row) -> Pair:
    """The overlapped pair of a ``F&B`` row: ``stage`` and ``microbatch`` cells ``"f&b"`` (forward first)."""
    cells = {}
    for column in ("stage", "microbatch"):
        raw = row.cells[column].strip().split("&")
        if len(raw) != 2 or not all(x.strip().isascii() and x.strip().isdigit() for x in raw):
            raise row.fail(f"column {column!r}: {row.cells[column].strip()!r} is not two whole numbers joined by '&' "
                           "(a F&B row gives the forward's and the backward's, e.g. 0&7)")
        cells[column] = (int(raw[0]), int(raw[1]))
    try:
        return Pair(Action(cells["stage"][0], "F", cells["microbatch"][0]),
                    Action(cells["stage"][1], "B", cells["microbatch"][1]))
    except ValueError as exc:
        raise row.fail(f"not an overlapped pair: {exc}") from None


def _row_span(row: _Row, has_step: bool) -> RawSpan:
    rank = row.index("rank")
    kind = row.cells["kind"].strip().upper()
    if kind == "F&B":
        pair = _pair_cells(row)
        stage, mb, backward = pair.stage, pair.microbatch, pair.backward
    else:
        if kind not in ("F", "B", "I", "W"):
            raise row.fail(f"column 'kind': {kind!r} is not one of F, B, I, W, F&B")
        stage, mb, backward = row.index("stage"), row.index("microbatch"), None
    start, end = row.time("start"), row.time("end")
    if end < start:
        raise row.fail(f"end {end!r} is before start {start!r} (a negative duration)")
    step = row.index("step") if has_step else None
    return RawSpan("csv", stage, "F&B" if backward is not None else kind, mb, start, end, ("rank", rank), step,
                   f"line {row.number}", backward=backward)


def write_csv(timelines: Timeline | Iterable[Timeline], path: PathLike) -> Path:
    """Write one or more timelines (steps) as the documented CSV, times in the timeline's unit.

    Only spans labelled with an :class:`~bubblekit.Action` are written; the ``step`` column
    numbers the timelines from 0; an existing file is replaced (the function does what it is
    told; the command lines are the ones that keep a user's file). Returns the path. ``path``
    must be a file in a folder that exists (``TypeError`` / ``ValueError`` naming it
    otherwise; ``OSError`` naming the file when the system refuses). Used in lesson 06 (the exercise's profiled
    step is written with it, then read back with :func:`~bubblekit.analysis.traces.read_csv`).
    """
    tls = [timelines] if isinstance(timelines, Timeline) else list(timelines)
    if not tls:
        raise ValueError("timelines is empty: nothing to write")
    bad = [t for t in tls if not isinstance(t, Timeline)]
    if bad:
        raise TypeError(f"timelines must be Timeline objects (or one Timeline), got {type(bad[0]).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or pathlib.Path), got {path!r} of type {type(path).__name__}")
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"path {str(out)!r} is a folder; give a file name in it, e.g. {str(out / 'trace.csv')!r}")
    if not out.parent.is_dir():
        raise ValueError(f"path {str(out)!r}: folder {str(out.parent)!r} does not exist")
    try:
        fh = open(out, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write the CSV {str(out)!r}: {exc.strerror or exc}") from None
    with fh:
        w = csv.writer(fh)
        fh.write(f"# bubblekit pipeline timeline; times in {tls[0].unit}\n")
        w.writerow([*CSV_COLUMNS, "step"])
        for k, tl in enumerate(tls):
            for sp in tl.spans():
                a = sp.action
                if a is None:
                    continue
                if type(a) is Pair:  # both parts in the stage and microbatch cells, forward first
                    stage, mb = f"{a.forward.stage}&{a.backward.stage}", f"{a.forward.microbatch}&{a.backward.microbatch}"
                else:
                    stage, mb = str(a.stage), str(a.microbatch)
                w.writerow([sp.rank, stage, a.kind, mb, f"{float(sp.start):.6f}", f"{float(sp.end):.6f}", k])
    return out
