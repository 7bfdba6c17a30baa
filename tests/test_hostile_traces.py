"""Hostile inputs to the trace reader (issue 20): no silent wrong bubble, no hang, no raw traceback.

Each case asserts the right value, or a :class:`TraceError` / ``TypeError`` whose message names
the file or the argument and what is allowed. The families: two ranks under one name, rank
numbers that are not ranks, steps with no time, actions that ran before their own inputs,
overlapping actions of one rank, numpy arguments, streams that can be read only once
(named pipes), CSV cells that only look like numbers, and the CSV fast path against the
careful one.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bubblekit as bk
from bubblekit.analysis.traces import TraceError, read_trace, read_trace_steps, write_csv

ROOT = Path(__file__).resolve().parent.parent
HEADER = "rank,stage,kind,microbatch,start,end\n"


def truth(name: str = "1f1b", p: int = 2, m: int = 4) -> bk.SimResult:
    return bk.simulate(bk.schedule(name, p, m), bk.Costs(f=1.0, b=2.0, i=1.0, w=1.0, unit="ms"))


def chrome(tl: bk.Timeline) -> dict[str, Any]:
    return tl.to_chrome_trace()


def write(tmp: Path, doc: Any, name: str = "t.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def per_rank_files(tmp: Path, tl: bk.Timeline, info: list[dict[str, Any]]) -> list[Path]:
    """One Kineto-like file per rank (no thread names), each with its own ``distributedInfo``."""
    doc = chrome(tl)
    out = []
    for r, di in enumerate(info):
        evs = [dict(e, tid=0) for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("tid") == r]
        out.append(write(tmp, {"traceEvents": evs, "distributedInfo": di}, f"trace{r}.json"))
    return out


# ------------------------------------------------------------------ two ranks, one name
def test_two_threads_named_rank_0_are_refused_not_merged(tmp_path: Path) -> None:
    doc = chrome(truth())
    for e in doc["traceEvents"]:
        if e.get("name") == "thread_name":
            e["args"]["name"] = "rank 0"
    path = write(tmp_path, doc)
    with pytest.raises(TraceError, match=r"t\.json: 2 threads or processes are named 'rank 0'.*thread \(0, 0\).*"
                                         r"thread \(0, 1\).*give one file per rank"):
        read_trace(path)


def test_two_processes_named_rank_1_are_refused(tmp_path: Path) -> None:
    tl = truth(p=3, m=3)
    evs = [dict(e, pid=e["tid"]) for e in chrome(tl)["traceEvents"] if e.get("ph") == "X"]
    names = {0: "rank 0", 1: "rank 1", 2: "rank 1"}
    evs += [{"ph": "M", "name": "process_name", "pid": k, "args": {"name": v}} for k, v in names.items()]
    with pytest.raises(TraceError, match=r"named 'rank 1'.*process 1 .*process 2 "):
        read_trace(write(tmp_path, evs))


def test_the_threads_of_one_process_named_rank_n_are_that_rank(tmp_path: Path) -> None:
    """Forward and backward on different threads of one process (autograd's thread): one rank, accepted."""
    tl = truth()
    evs: list[dict[str, Any]] = []
    for e in chrome(tl)["traceEvents"]:
        if e.get("ph") != "X":
            continue
        r = e["tid"]
        evs.append(dict(e, pid=r, tid=100 + (e["cat"] == "B")))
    evs += [{"ph": "M", "name": "process_name", "pid": r, "args": {"name": f"rank {r}"}} for r in range(2)]
    got = read_trace(write(tmp_path, evs))
    assert got.p == 2 and got.bubble_ratio == pytest.approx(tl.bubble_ratio) and not got.notes


# ----------------------------------------------------------- ranks that are not ranks
@pytest.mark.parametrize("rank", [-1, 1.5, "0", True, [0]])
def test_a_distributed_rank_that_is_not_a_rank_is_refused(tmp_path: Path, rank: Any) -> None:
    files = per_rank_files(tmp_path, truth(), [{"rank": 0}, {"rank": rank}])
    with pytest.raises(TraceError, match=r"trace1\.json: distributedInfo\.rank is .*whole number >= 0"):
        read_trace(files)


@pytest.mark.parametrize("world", [0, -2, "2"])
def test_a_world_size_that_is_not_a_size_is_refused(tmp_path: Path, world: Any) -> None:
    files = per_rank_files(tmp_path, truth(), [{"rank": 0, "world_size": world}, {"rank": 1}])
    with pytest.raises(TraceError, match=r"trace0\.json: distributedInfo\.world_size is .*whole number >= 1"):
        read_trace(files)


def test_a_world_size_below_a_rank_is_refused(tmp_path: Path) -> None:
    files = per_rank_files(tmp_path, truth(), [{"rank": 0, "world_size": 1}, {"rank": 1, "world_size": 1}])
    with pytest.raises(TraceError, match=r"world_size is 1, but the trace has rank 1"):
        read_trace(files)


def test_distributed_info_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    files = per_rank_files(tmp_path, truth(), [{"rank": 0}, {"rank": 1}])
    doc = json.loads(files[1].read_text())
    doc["distributedInfo"] = [1]
    files[1].write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=r"trace1\.json: 'distributedInfo' is \[1\]"):
        read_trace(files)


# ------------------------------------------------------------------ steps with no time
def test_all_zero_durations_are_refused_not_a_bubble_of_one(tmp_path: Path) -> None:
    doc = chrome(truth())
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            e["dur"] = 0
    with pytest.raises(TraceError, match=r"t\.json: every action of complete step 0 lasts 0 \(16 actions"):
        read_trace(write(tmp_path, doc))
    for e in doc["traceEvents"]:  # all at one instant: a zero-length step, not a division by zero
        if e.get("ph") == "X":
            e["ts"] = 0
    with pytest.raises(TraceError, match="lasts 0"):
        read_trace(write(tmp_path, doc))


def test_a_csv_whose_times_are_all_zero_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "zeros.csv"
    path.write_text(HEADER + "0,0,F,0,0,0\n1,1,F,0,0,0\n1,1,B,0,0,0\n0,0,B,0,0,0\n")
    with pytest.raises(TraceError, match=r"zeros\.csv: every action of complete step 0 lasts 0 \(4 actions"):
        read_trace(path)


def test_one_zero_length_action_is_noted_by_name(tmp_path: Path) -> None:
    tl = truth()
    doc = chrome(tl)
    i = next(k for k, e in enumerate(doc["traceEvents"]) if e.get("name") == "1F2")
    doc["traceEvents"][i]["dur"] = 0
    got = read_trace(write(tmp_path, doc))
    assert got.bubble_ratio > tl.bubble_ratio  # the lost time counts as idle ...
    assert any("1 action(s) last 0 ms" in n and f"1F2 (rank 1, traceEvents[{i}])" in n for n in got.notes)  # ... said


# ------------------------------------------------------- inputs of one rank, out of order
def test_a_w_before_its_i_on_one_rank_is_refused_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "wi.csv"
    path.write_text(HEADER + "0,0,F,0,0,1\n1,1,F,0,1,2\n1,1,I,0,2,3\n1,1,W,0,3,4\n0,0,W,0,4,5\n0,0,I,0,5,6\n")
    with pytest.raises(TraceError, match=r"wi\.csv: rank 0 starts 0W0 \(line 6\) 2\.000 ms before its input 0I0 "
                                         r"\(line 7\) on the same rank ends"):
        read_trace(path)


def test_a_w_before_its_i_in_a_chrome_trace_is_refused(tmp_path: Path) -> None:
    doc = chrome(truth("zb-h1", 2, 4))
    ev = {e["name"]: e for e in doc["traceEvents"] if e.get("ph") == "X"}
    ev["1W0"]["ts"], ev["1I0"]["ts"] = ev["1I0"]["ts"], ev["1W0"]["ts"] + ev["1W0"]["dur"] - ev["1I0"]["dur"]
    with pytest.raises(TraceError, match=r"rank 1 starts 1W0 \(traceEvents\[\d+\]\) .* before its input 1I0"):
        read_trace(write(tmp_path, doc))


def test_a_backward_before_its_forward_on_stage_0_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bf.csv"
    path.write_text(HEADER + "0,0,B,0,0,1\n1,1,F,0,1,2\n1,1,B,0,2,4\n0,0,F,0,4,6\n")
    with pytest.raises(TraceError, match=r"rank 0 starts 0B0 \(line 2\) .* before its input 0F0 \(line 5\)"):
        read_trace(path)


def test_overlapping_actions_of_one_rank_are_noted(tmp_path: Path) -> None:
    tl = truth()
    doc = chrome(tl)
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e["tid"] == 0]
    xs[1]["ts"] = xs[0]["ts"] + xs[0]["dur"] / 2  # 0F1 starts inside 0F0 (both forwards: no input broken)
    got = read_trace(write(tmp_path, doc))
    assert any("pair(s) of actions of one rank overlap" in n and "0F0 and 0F1 (rank 0" in n for n in got.notes)


# ------------------------------------------------------------------- numpy arguments
def test_numpy_ints_pick_the_same_step(tmp_path: Path) -> None:
    path = write_csv([truth(), truth("gpipe")], tmp_path / "two.csv")
    assert read_trace(path, step=np.int64(0)).bubble_ratio == read_trace(path, step=0).bubble_ratio
    assert read_trace(path, step=np.int32(-1)).bubble_ratio == read_trace(path, step=1).bubble_ratio
    with pytest.raises(TypeError, match=r"step must be an int .*got np\.float64\(0\.0\) of type float64"):
        read_trace(path, step=np.float64(0))
    with pytest.raises(ValueError, match=r"step=2 is out of range: the trace has 2 complete step"):
        read_trace(path, step=np.int64(2))


# ------------------------------------------------------------------- read once: pipes
FEED = r"""
import gzip, json, os, sys, threading
sys.path.insert(0, sys.argv[1])
import bubblekit as bk
from bubblekit.analysis.traces import read_trace, write_csv
fifo, kind = sys.argv[2], sys.argv[3]
tl = bk.simulate(bk.schedule("1f1b", 2, 4))
if kind == "csv":
    data = open(write_csv(tl, fifo + ".src.csv"), "rb").read()
else:
    data = json.dumps(tl.to_chrome_trace()).encode()
    data = gzip.compress(data) if kind == "gz" else data
os.mkfifo(fifo)
def feed():
    with open(fifo, "wb") as fh:
        fh.write(data)
threading.Thread(target=feed, daemon=True).start()
got = read_trace([fifo] if kind == "gz" else fifo)
print(round(got.bubble_ratio, 9), round(tl.bubble_ratio, 9), len(got.notes))
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("kind,name", [("plain", "pipe.json"), ("gz", "pipe"), ("csv", "pipe.csv")])
def test_a_named_pipe_is_read_once(tmp_path: Path, kind: str, name: str) -> None:
    """``read_trace(<(zcat trace.json.gz))``: the gzip sniff must not open the stream twice (it blocked forever)."""
    out = subprocess.run([sys.executable, "-c", FEED, str(ROOT), str(tmp_path / name), kind],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got, want, notes = out.stdout.split()
    assert got == want and notes == "0"


def test_gzip_and_plain_files_read_alike(tmp_path: Path) -> None:
    doc = chrome(truth())
    plain = write(tmp_path, doc)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(doc).encode()))
    one_byte = tmp_path / "one.json"  # shorter than the gzip magic
    one_byte.write_text("[")
    assert read_trace(plain).bubble_ratio == read_trace(packed).bubble_ratio
    with pytest.raises(TraceError, match=r"no pipeline events in .*one\.json"):
        read_trace(one_byte)


def test_a_folder_in_a_list_of_files_is_named(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"is a folder; give the folder itself as source"):
        read_trace([tmp_path])


# ------------------------------------------------------------ CSV cells and the fast path
@pytest.mark.parametrize("cell", ["1_0", "\uff11", "\u0661", "0x1", "1e", "١٫٥"])
def test_csv_times_must_be_written_in_ascii_digits(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(HEADER + f"0,0,F,0,0,{cell}\n1,1,F,0,1,2\n1,1,B,0,2,4\n0,0,B,0,4,6\n", encoding="utf-8")
    with pytest.raises(TraceError, match=r"t\.csv: line 2, column 'end': .* is not a finite number of ms "
                                         r"\(write it with the digits 0-9"):
        read_trace(path)


def test_the_csv_fast_path_reads_what_the_careful_path_reads(tmp_path: Path) -> None:
    """Rows with spaces, lowercase kinds, CRLF, comments between rows and quotes take the careful path; same timeline."""
    tl = truth("zb-h1", 2, 4)
    plain = write_csv(tl, tmp_path / "plain.csv")
    lines = plain.read_text().splitlines()
    messy = [lines[0], lines[1]]
    for k, line in enumerate(lines[2:]):
        cells = line.split(",")
        if k % 4 == 0:
            cells = [f" {c} " for c in cells]
        elif k % 4 == 1:
            cells[2] = cells[2].lower()
        elif k % 4 == 2:
            cells[4] = f'"{cells[4]}"'
            messy.append("# a comment, with, commas, in, it, ok")
        messy.append(",".join(cells))
    path = tmp_path / "messy.csv"
    path.write_bytes(("\r\n".join(messy) + "\r\n").encode())
    a, b = read_trace(plain), read_trace(path)
    assert [list(a.spans(r)) for r in range(a.p)] == [list(b.spans(r)) for r in range(b.p)]
    assert not b.notes


def test_a_long_csv_reads_every_step(tmp_path: Path) -> None:
    """Many steps (the building of each step is one pass, not one pass per step): every one is read."""
    tl = truth()
    steps = [tl] * 300
    got = read_trace_steps(write_csv(steps, tmp_path / "long.csv"))
    assert len(got) == 300 and {round(s.bubble_ratio, 12) for s in got} == {round(tl.bubble_ratio, 12)}


# --------------------------------------------------------------------------- write_csv
@pytest.mark.parametrize("make,error,match", [
    (lambda tmp: tmp, ValueError, r"path '.*' is a folder; give a file name in it"),
    (lambda tmp: tmp / "missing" / "t.csv", ValueError, r"folder '.*missing' does not exist"),
    (lambda tmp: 5, TypeError, r"path must be a file path \(str or pathlib\.Path\), got 5 of type int"),
])
def test_write_csv_names_a_bad_path(tmp_path: Path, make: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        write_csv(truth(), make(tmp_path))


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_write_csv_names_a_file_the_system_refuses() -> None:
    with pytest.raises(OSError, match=r"cannot write the CSV '/proc/x\.csv'"):
        write_csv(truth(), "/proc/x.csv")
