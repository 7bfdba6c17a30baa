"""Nsight Systems: the SQLite export of a report (``nsys export --type sqlite report.nsys-rep``).

The same GPU side as a Kineto trace, read from NVIDIA's documented tables (times in ns there,
us here):

* ``CUPTI_ACTIVITY_KIND_KERNEL`` (``start``, ``end``, ``deviceId``, ``streamId``,
  ``correlationId``, ``shortName`` / ``demangledName`` -> ``StringIds``), and
  ``CUPTI_ACTIVITY_KIND_MEMCPY`` / ``CUPTI_ACTIVITY_KIND_MEMSET``: GPU events;
* ``CUPTI_ACTIVITY_KIND_RUNTIME`` (``start``, ``globalTid``, ``correlationId``): CPU launches;
* ``NVTX_EVENTS`` (``start``, ``end``, ``text`` or ``textId`` -> ``StringIds``, ``globalTid``):
  ranges; those named like pipeline actions (``PP:1F3``, ``compute:1F3``, ...) are the pipeline's
  actions, timed on the GPU by the kernels launched inside them, as for a Kineto trace;
  ``ProfilerStep#N`` ranges mark steps.

A process is ``globalTid >> 24`` (Nsight's documented packing of the global thread id). One
file per rank: the rank comes from ``rank<N>`` in the file name, else the file's position.

Tested on SQLite files built to that schema (``tests/test_gpu_traces.py``); it has not yet
met a real export from a GPU run, so treat a surprising figure as a question, not an answer.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

from .gpu import GpuEvents
from .parse import STEP_RE, classify
from .records import FileScan, Pattern, RawSpan, TraceError

__all__ = ["is_nsys_sqlite", "scan_nsys", "NSYS_SUFFIXES"]

NSYS_SUFFIXES = (".sqlite", ".sqlite3")
_NS_PER_US = 1000.0


def is_nsys_sqlite(path: Path) -> bool:
    return path.name.lower().endswith(NSYS_SUFFIXES)


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _strings(db: sqlite3.Connection, tables: set[str]) -> dict[int, str]:
    if "StringIds" not in tables:
        return {}
    return {int(i): str(v) for i, v in db.execute("SELECT id, value FROM StringIds")}


def _us(ns: Any) -> float | None:
    if isinstance(ns, bool) or not isinstance(ns, (int, float)) or not math.isfinite(ns):
        return None
    return float(ns) / _NS_PER_US


def scan_nsys(path: Path, user: Pattern | None = None) -> FileScan:
    """Read one Nsight Systems SQLite export into a :class:`FileScan` (times in us, GPU side included).

    Raises:
        TraceError: not an SQLite file, or none of the tables this reader knows.
    """
    name = str(path)
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = _tables(db)
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"{name}: not an Nsight Systems SQLite export ({exc})") from None
    try:
        known = {"CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"}
        if not tables & known:
            raise TraceError(f"{name}: an SQLite file without Nsight Systems' tables ({', '.join(sorted(known))}): "
                             f"export a report with 'nsys export --type sqlite'")
        strings = _strings(db, tables)
        scan = FileScan(name)
        gpu = GpuEvents()
        _gpu_events(db, tables, strings, gpu)
        _launches(db, tables, gpu)
        _ranges(db, tables, strings, scan, user)
        gpu.finish()
        if len(gpu):
            scan.gpu = gpu
            for start, end, number in [s for ss in scan.steps.values() for s in ss]:
                gpu.note_step(start, end, number)
        scan.header["nsys"] = True
        return scan
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"{name}: cannot read the Nsight Systems export ({exc})") from None
    finally:
        db.close()


def _gpu_events(db: sqlite3.Connection, tables: set[str], strings: dict[int, str], gpu: GpuEvents) -> None:
    sources = (("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "gpu_memcpy"),
               ("CUPTI_ACTIVITY_KIND_MEMSET", "gpu_memset"))
    for table, cat in sources:
        if table not in tables:
            continue
        cols = _columns(db, table)
        name_col = next((c for c in ("demangledName", "shortName", "mangledName") if c in cols), None)
        pick = ["start", "end", "deviceId" if "deviceId" in cols else "NULL", "streamId" if "streamId" in cols else "NULL",
                "correlationId" if "correlationId" in cols else "NULL", name_col or "NULL"]
        for start, end, device, stream, corr, name_id in db.execute(f"SELECT {', '.join(pick)} FROM {table}"):
            s, e = _us(start), _us(end)
            label = strings.get(name_id, "") if isinstance(name_id, int) else str(name_id or "")
            if cat == "gpu_memcpy":
                label = label or "Memcpy"
            elif cat == "gpu_memset":
                label = label or "Memset"
            if s is None or e is None or e < s:
                gpu.ignored += 1
                continue
            gpu.take({"ph": "X", "name": label, "ts": s, "dur": e - s, "pid": device, "tid": stream,
                      "args": {"device": device, "stream": stream, "correlation": corr}}, cat)


def _launches(db: sqlite3.Connection, tables: set[str], gpu: GpuEvents) -> None:
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables:
        return
    for start, tid, corr in db.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        ts = _us(start)
        if ts is None or not isinstance(corr, int) or not isinstance(tid, int):
            continue
        gpu.take({"ph": "X", "ts": ts, "dur": 0, "pid": tid >> 24, "tid": tid, "args": {"correlation": corr}},
                 "cuda_runtime")


def _ranges(db: sqlite3.Connection, tables: set[str], strings: dict[int, str], scan: FileScan,
            user: Pattern | None) -> None:
    if "NVTX_EVENTS" not in tables:
        return
    cols = _columns(db, "NVTX_EVENTS")
    text = "text" if "text" in cols else "NULL"
    text_id = "textId" if "textId" in cols else "NULL"
    for k, (start, end, label, label_id, tid) in enumerate(db.execute(
            f"SELECT start, end, {text}, {text_id}, globalTid FROM NVTX_EVENTS ORDER BY start")):
        name = label if isinstance(label, str) else strings.get(label_id, "") if isinstance(label_id, int) else ""
        s, e = _us(start), _us(end)
        if not name or s is None or e is None or e < s or not isinstance(tid, int):
            continue
        thread = (tid >> 24, tid)
        where = f"NVTX_EVENTS row {k}"
        if name.startswith("ProfilerStep"):
            m = STEP_RE.match(name)
            if m:
                scan.steps.setdefault(thread, []).append((s, e, int(m.group(1))))
            continue
        got = classify(name, user)
        if got is not None:
            fam, stage, kind, mb = got
            scan.spans.append(RawSpan(fam, stage, kind, mb, s, e, thread, None, where))
