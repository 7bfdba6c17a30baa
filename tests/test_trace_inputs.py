"""Bad trace inputs: each gives a TraceError (or TypeError / ValueError) naming the file, the event or
line, the field and the value, or a result whose notes say what the reader repaired; never a
silently wrong bubble, a hang or a raw traceback (issue 9's trace cases, and their neighbours).

The true answer always comes from bubblekit: a simulated step, exported with
``Timeline.to_chrome_trace`` or ``write_csv``, then damaged.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.analysis.traces import (
    TraceError,
    bubble_report,
    explain_gaps,
    iter_trace_events,
    read_csv,
    read_trace,
    read_trace_steps,
    write_csv,
)

sys.path.insert(0, str(Path(__file__).parent))
from test_traces import kineto_files, same_timeline  # noqa: E402


def step_1f1b(p: int = 2, m: int = 4) -> bk.SimResult:
    """1F1B with f = 1 ms, b = 2 ms: its bubble_ratio is (p - 1) / (m + p - 1)."""
    return bk.simulate(bk.schedule("1f1b", p, m), bk.Costs(f=1, b=2, unit="ms"))


def chrome_doc(tl: bk.Timeline) -> dict[str, Any]:
    return tl.to_chrome_trace()


def event_index(doc: dict[str, Any], name: str) -> int:
    return next(i for i, e in enumerate(doc["traceEvents"]) if e.get("name") == name)


def write_json(path: Path, doc: Any, prefix: str = "") -> Path:
    path.write_text(prefix + json.dumps(doc), encoding="utf-8")
    return path


def damaged(tmp_path: Path, target: str = "0F1", **fields: Any) -> tuple[Path, int]:
    """The 1F1B step's Chrome trace with event ``target``'s fields replaced (None deletes a field)."""
    doc = chrome_doc(step_1f1b())
    i = event_index(doc, target)
    for key, value in fields.items():
        if value is None:
            doc["traceEvents"][i].pop(key, None)
        else:
            doc["traceEvents"][i][key] = value
    return write_json(tmp_path / "damaged.json", doc), i


def csv_lines(tmp_path: Path, tl: bk.Timeline | None = None) -> list[str]:
    return write_csv(tl or step_1f1b(), tmp_path / "good.csv").read_text().splitlines()


def with_cell(lines: list[str], line: int, column: str, value: str) -> list[str]:
    """``lines`` with the cell of ``column`` on file line ``line`` (from 1) replaced."""
    header = lines[1].split(",")
    out = list(lines)
    cells = out[line - 1].split(",")
    cells[header.index(column)] = value
    out[line - 1] = ",".join(cells)
    return out


def write_lines(path: Path, lines: list[str], prefix: str = "") -> Path:
    path.write_text(prefix + "\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------- event times (JSON)
@pytest.mark.parametrize("fields,problem", [
    ({"ts": float("nan")}, "has ts=nan"),
    ({"ts": "abc"}, "has ts='abc'"),
    ({"ts": None}, "has no 'ts'"),
    ({"dur": -1000.0}, "has a negative dur=-1000.0"),
    ({"dur": float("inf")}, "has dur=inf"),
    ({"dur": None}, "has no 'dur'"),
    ({"dur": "1e400"}, "has dur='1e400'"),
    ({"ts": True}, "has ts=True"),
    ({"ts": 1e308, "dur": 1e308}, "ends beyond any finite time"),
])
def test_action_event_with_unusable_time_is_named(tmp_path: Path, fields: dict[str, Any], problem: str) -> None:
    path, i = damaged(tmp_path, **fields)
    with pytest.raises(TraceError) as err:
        read_trace(path)
    msg = str(err.value)
    assert "damaged.json" in msg and f"traceEvents[{i}] '0F1'" in msg and problem in msg
    assert "reconcile" not in msg  # dur=inf used to be reported as a clock problem


def test_numeric_text_times_still_read(tmp_path: Path) -> None:
    tl = step_1f1b()
    doc = chrome_doc(tl)
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            e["ts"], e["dur"] = str(e["ts"]), str(e["dur"])
    same_timeline(tl, read_trace(write_json(tmp_path / "t.json", doc)))


def test_begin_end_pairs_with_bad_times(tmp_path: Path) -> None:
    tl = step_1f1b()
    evs: list[dict[str, Any]] = []
    for r in range(tl.p):
        evs.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": r, "args": {"name": f"rank {r}"}})
        for sp in tl.spans(r):
            evs.append({"ph": "B", "name": sp.label, "pid": 1, "tid": r, "ts": float(sp.start) * 1000})
            evs.append({"ph": "E", "pid": 1, "tid": r, "ts": float(sp.end) * 1000})
    same_timeline(tl, read_trace(write_json(tmp_path / "ok.json", evs)))

    unclosed = [e for k, e in enumerate(evs) if k != 2]  # the first action's 'E' is gone
    with pytest.raises(TraceError, match=r"event 1 '0F0' begins \('B'\) but no 'E' event ends it"):
        read_trace(write_json(tmp_path / "unclosed.json", unclosed))

    backwards = copy.deepcopy(evs)
    backwards[2]["ts"] = backwards[1]["ts"] - 5
    with pytest.raises(TraceError, match=r"event 1 \(ended by event 2\) '0F0' ends before it begins"):
        read_trace(write_json(tmp_path / "backwards.json", backwards))

    nan_begin = copy.deepcopy(evs)
    nan_begin[1]["ts"] = float("nan")
    with pytest.raises(TraceError, match=r"event 1 '0F0' has ts=nan"):
        read_trace(write_json(tmp_path / "nan.json", nan_begin))

    extra_end = [*evs, {"ph": "E", "pid": 1, "tid": 0, "ts": 1e9}]
    got = read_trace(write_json(tmp_path / "extra.json", extra_end))
    same_timeline(tl, got)
    assert any(f"event {len(evs)}" in n and "without a 'B'" in n for n in got.notes)


def test_operator_with_bad_time_is_ignored_with_a_note(tmp_path: Path) -> None:
    tl = step_1f1b()
    files = kineto_files(tmp_path, tl, wait_us=200.0)
    doc = json.loads(files[0].read_text())
    i = next(k for k, e in enumerate(doc["traceEvents"]) if e["name"] == "aten::mm")
    doc["traceEvents"][i]["dur"] = float("nan")
    files[0].write_text(json.dumps(doc))
    got = read_trace(files)
    note = next(n for n in got.notes if "operator event(s) with unusable times ignored" in n)
    assert f"traceEvents[{i}] 'aten::mm' has dur=nan" in note and "trace_r0.json" in note


def test_entries_that_are_not_objects_are_noted(tmp_path: Path) -> None:
    tl = step_1f1b()
    doc = chrome_doc(tl)
    doc["traceEvents"].insert(2, None)
    doc["traceEvents"].insert(5, 42)
    got = read_trace(write_json(tmp_path / "t.json", doc))
    same_timeline(tl, got)
    assert any("traceEvents[2] (NoneType)" in n and "traceEvents[5] (int)" in n for n in got.notes)


# ---------------------------------------------------------------- missing actions
@pytest.mark.parametrize("how", ["renamed", "removed", "no ph"])
def test_a_missing_action_is_an_error_not_a_wrong_bubble(tmp_path: Path, how: str) -> None:
    doc = chrome_doc(step_1f1b())
    i = event_index(doc, "1B2")
    if how == "renamed":
        doc["traceEvents"][i]["name"] = "something else"
    elif how == "removed":
        del doc["traceEvents"][i]
    else:
        del doc["traceEvents"][i]["ph"]
    with pytest.raises(TraceError, match=r"no complete step.*step 0 lacks 1B2 \(rank 1\)"):
        read_trace(write_json(tmp_path / "t.json", doc))


def test_missing_weight_gradient_is_named(tmp_path: Path) -> None:
    tl = bk.simulate(bk.schedule("zb-h1", 2, 4), bk.Costs(f=1, b=2, i=1, w=1, unit="ms"))
    doc = chrome_doc(tl)
    del doc["traceEvents"][event_index(doc, "0W3")]
    with pytest.raises(TraceError, match=r"step 0 lacks 0W3 \(rank 0\)"):
        read_trace(write_json(tmp_path / "t.json", doc))


def test_incomplete_step_among_complete_ones_is_skipped_with_a_note(tmp_path: Path) -> None:
    tl = step_1f1b()
    two = write_csv([tl, tl], tmp_path / "two.csv").read_text().splitlines()
    gone = next(k for k, line in enumerate(two) if line.startswith("1,1,B,2,") and line.endswith(",1"))
    path = write_lines(tmp_path / "t.csv", two[:gone] + two[gone + 1:])
    got = read_trace(path)  # the last complete step: step 0
    assert got.bubble_ratio == pytest.approx(tl.bubble_ratio)
    assert any("incomplete steps [1] skipped" in n and "step 1 lacks 1B2 (rank 1)" in n for n in got.notes)


# -------------------------------------------------------------- absurd numbers
@pytest.mark.parametrize("name,what", [("0F999999999", "microbatch"), ("99999999F1", "stage")])
def test_absurd_stage_or_microbatch_numbers_are_refused(tmp_path: Path, name: str, what: str) -> None:
    path, i = damaged(tmp_path, name=name)
    with pytest.raises(TraceError) as err:
        read_trace(path)
    msg = str(err.value)
    assert f"{what} numbers must run from 0 without gaps" in msg
    assert name in msg and f"traceEvents[{i}]" in msg and "damaged.json" in msg


def test_gap_in_microbatch_numbers_is_named(tmp_path: Path) -> None:
    lines = csv_lines(tmp_path)
    keep = [ln for ln in lines if not re.match(r"^\d+,\d+,[FB],2,", ln)]  # microbatch 2 gone everywhere
    with pytest.raises(TraceError, match=r"no action has microbatch 2:"):
        read_trace(write_lines(tmp_path / "t.csv", keep))


def test_csv_rank_99999999_is_refused_at_once(tmp_path: Path) -> None:
    lines = with_cell(csv_lines(tmp_path), 4, "rank", "99999999")
    with pytest.raises(TraceError) as err:
        read_trace(write_lines(tmp_path / "t.csv", lines))
    msg = str(err.value)
    assert "missing ranks [2, 3, 4, 5, ...] (99999997 in all)" in msg
    assert "rank 99999999 first appears in" in msg and "t.csv line 4" in msg


def test_absurd_world_size_is_refused_at_once(tmp_path: Path) -> None:
    files = kineto_files(tmp_path, step_1f1b(), world=10**12)
    with pytest.raises(TraceError, match=r"missing ranks \[2, 3, 4, 5, \.\.\.\].*world_size 1000000000000"):
        read_trace(files)


def test_measured_schedule_can_be_simulated(tmp_path: Path) -> None:
    tl = step_1f1b()
    got = read_trace(write_json(tmp_path / "t.json", chrome_doc(tl)))
    again = bk.simulate(got.to_schedule(), bk.Costs(f=1, b=2, unit="ms"))
    assert again.bubble_ratio == pytest.approx(tl.bubble_ratio)


# --------------------------------------------------------------------- CSV cells
@pytest.mark.parametrize("column,value,problem", [
    ("start", "nan", "column 'start': 'nan' is not a finite number of ms"),
    ("end", "inf", "column 'end': 'inf' is not a finite number of ms"),
    ("start", "-inf", "column 'start': '-inf' is not a finite number of ms"),
    ("start", "", "column 'start': '' is not a finite number of ms"),
    ("rank", "-1", "column 'rank': '-1' is not a whole number >= 0"),
    ("microbatch", "1.5", "column 'microbatch': '1.5' is not a whole number >= 0"),
    ("stage", "²", "column 'stage': '²' is not a whole number >= 0"),
    ("step", "", "column 'step': '' is not a whole number >= 0"),
    ("kind", "X", "column 'kind': 'X' is not one of F, B, I, W"),
])
def test_csv_cell_problems_name_line_column_and_value(tmp_path: Path, column: str, value: str, problem: str) -> None:
    path = write_lines(tmp_path / "t.csv", with_cell(csv_lines(tmp_path), 4, column, value))
    with pytest.raises(TraceError, match=re.escape(f"t.csv: line 4, {problem}")):
        read_trace(path)


def test_csv_short_row_and_negative_duration(tmp_path: Path) -> None:
    lines = csv_lines(tmp_path)
    short = list(lines)
    short[3] = ",".join(short[3].split(",")[:5])
    with pytest.raises(TraceError, match=r"line 4 has 5 values but the header names 7 columns"):
        read_trace(write_lines(tmp_path / "short.csv", short))
    cells = lines[3].split(",")
    cells[4], cells[5] = cells[5], cells[4]
    swapped = [*lines[:3], ",".join(cells), *lines[4:]]
    with pytest.raises(TraceError, match=r"line 4, end 1\.0 is before start 2\.0 \(a negative duration\)"):
        read_trace(write_lines(tmp_path / "neg.csv", swapped))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("comment", [True, False])
def test_bom_prefixed_csv_reads(tmp_path: Path, newline: str, comment: bool) -> None:
    tl = step_1f1b()
    lines = csv_lines(tmp_path, tl)[0 if comment else 1:]
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbf" + newline.join(lines).encode() + newline.encode())
    same_timeline(tl, read_csv(path))


@pytest.mark.parametrize("gz", [False, True])
def test_bom_prefixed_json_reads(tmp_path: Path, gz: bool) -> None:
    tl = step_1f1b()
    data = b"\xef\xbb\xbf" + json.dumps(chrome_doc(tl)).encode()
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    same_timeline(tl, read_trace(path))


@pytest.mark.parametrize("kind", ["json", "csv"])
@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_damaged_gzip_is_a_trace_error(tmp_path: Path, kind: str, damage: str) -> None:
    tl = step_1f1b(4, 16)
    if kind == "json":
        data = json.dumps(chrome_doc(tl)).encode()
    else:
        data = write_csv(tl, tmp_path / "plain.csv").read_bytes()
    packed = bytearray(gzip.compress(data))
    if damage == "truncated":
        packed = packed[: len(packed) // 2]
    else:
        for k in range(len(packed) // 2, len(packed) // 2 + 8):
            packed[k] ^= 0xFF
    path = tmp_path / f"t.{kind}.gz"
    path.write_bytes(bytes(packed))
    # a flipped byte may be caught by the CRC at the end or first garble a row: a TraceError either way
    expected = "cannot read the (trace|CSV).*damaged or truncated" if damage == "truncated" else ""
    with pytest.raises(TraceError, match=rf"t\.{kind}\.gz: .*{expected}"):
        read_trace(path)


# -------------------------------------------------------------------- arguments
@pytest.mark.parametrize("value,error,text", [
    (float("nan"), ValueError, "tolerance_ms must be a finite number, got nan"),
    (float("inf"), ValueError, "tolerance_ms must be a finite number, got inf"),
    (-1.0, ValueError, "tolerance_ms must be >= 0.0, got -1.0"),
    ("x", TypeError, "tolerance_ms must be a number, got 'x'"),
    (None, TypeError, "tolerance_ms must be a number, got None"),
])
def test_bad_tolerance_is_named(tmp_path: Path, value: Any, error: type, text: str) -> None:
    path = write_csv(step_1f1b(), tmp_path / "t.csv")
    with pytest.raises(error, match=re.escape(text)):
        read_trace(path, tolerance_ms=value)


def test_arguments_are_checked_before_any_file_is_read(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"  # would be a TraceError if it were read first
    with pytest.raises(TypeError, match=r"step must be an int.*'last'"):
        read_trace(missing, step="last")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="align must be"):
        read_trace_steps(missing, align="maybe")
    with pytest.raises(TypeError, match="trim must be"):
        read_trace_steps(missing, trim="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"time_unit must be one of .* got 'minutes'"):
        read_trace_steps(missing, time_unit="minutes")
    with pytest.raises(TypeError, match="pattern must be"):
        read_trace_steps(missing, pattern=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="source must be"):
        read_trace_steps(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="header must be a dict"):
        list(iter_trace_events(missing, header=[]))  # type: ignore[arg-type]


def test_gap_report_arguments() -> None:
    tl = step_1f1b()
    with pytest.raises(ValueError, match="n must be >= 0, got -1"):
        explain_gaps(tl, n=-1)
    with pytest.raises(TypeError, match="n must be a whole number"):
        explain_gaps(tl, n="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="min_duration must be a number, got 'x'"):
        explain_gaps(tl, min_duration="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="timeline must be a bubblekit Timeline"):
        explain_gaps("trace.json")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="n_gaps must be a whole number"):
        bubble_report(tl, n_gaps=2.5)  # type: ignore[arg-type]
    assert explain_gaps(tl, n=0) == []
    assert "largest gaps" not in bubble_report(tl, n_gaps=0)


# ------------------------------------------------------------------ deep nesting
@pytest.mark.parametrize("text", [
    "[" * 200_000,
    '{"traceEvents": ' + "[" * 200_000,
    '{"deviceProperties": ' + "[" * 200_000 + "]" * 200_000 + ', "traceEvents": []}',
])
def test_deep_nesting_is_a_trace_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(text)
    with pytest.raises(TraceError, match=r"deep\.json: JSON nested deeper than about \d+ levels"):
        read_trace(path)


# ------------------------------------------------------------ copies and threads
def test_exact_copy_of_an_event_is_ignored_with_a_note(tmp_path: Path) -> None:
    tl = step_1f1b()
    doc = chrome_doc(tl)
    i = event_index(doc, "1F2")
    doc["traceEvents"].append(dict(doc["traceEvents"][i]))
    got = read_trace(write_json(tmp_path / "t.json", doc))
    same_timeline(tl, got)
    n = len(doc["traceEvents"]) - 1
    assert any(f"1F2 (traceEvents[{n}], a copy of traceEvents[{i}])" in note for note in got.notes)


def test_action_twice_in_one_step_is_an_error(tmp_path: Path) -> None:
    lines = csv_lines(tmp_path)
    row = lines[2].split(",")  # file line 3: 0F0
    row[4], row[5] = "50.0", "51.0"  # the same action, step 0, other times
    with pytest.raises(TraceError, match=rf"rank 0 runs 0F0 twice in step 0 \(line 3 and line {len(lines) + 1}, "):
        read_trace(write_lines(tmp_path / "t.csv", [*lines, ",".join(row)]))
    files = kineto_files(tmp_path, step_1f1b())
    doc = json.loads(files[1].read_text())
    j = next(k for k, e in enumerate(doc["traceEvents"]) if e["name"] == "PP:1F0")
    twin = dict(doc["traceEvents"][j], ts=doc["traceEvents"][j]["ts"] + 3.0)
    doc["traceEvents"].append(twin)
    files[1].write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=r"rank 1 runs 1F0 twice in step 3"):
        read_trace(files)


def test_events_on_a_thread_without_a_rank_name(tmp_path: Path) -> None:
    doc = chrome_doc(step_1f1b())
    names = [e for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    names[-1]["args"]["name"] = "worker"  # the last rank's name is lost: it must not vanish silently
    with pytest.raises(TraceError, match=r"pipeline event\(s\) on threads that no 'thread_name'.*\(0, 1\)"):
        read_trace(write_json(tmp_path / "t.json", doc))


def test_actions_outside_every_profiler_step_are_noted(tmp_path: Path) -> None:
    tl = step_1f1b()
    files = kineto_files(tmp_path, tl, steps=2)
    doc = json.loads(files[0].read_text())
    last = max(e["ts"] + e["dur"] for e in doc["traceEvents"] if e.get("ph") == "X")
    doc["traceEvents"].append({"ph": "X", "cat": "user_annotation", "name": "PP:0F0", "pid": 7, "tid": 7,
                               "ts": last + 1e6, "dur": 10.0})
    files[0].write_text(json.dumps(doc))
    got = read_trace(files)
    same_timeline(tl, got)
    n = len(doc["traceEvents"]) - 1
    assert any("outside every ProfilerStep range" in note and f"0F0 (traceEvents[{n}])" in note for note in got.notes)


def test_notes_reach_the_report(tmp_path: Path) -> None:
    doc = chrome_doc(step_1f1b())
    doc["traceEvents"].append(dict(doc["traceEvents"][event_index(doc, "0B3")]))
    got = read_trace(write_json(tmp_path / "t.json", doc))
    assert "note: " in bubble_report(got) and "0B3" in bubble_report(got)
    assert math.isclose(got.bubble_ratio, step_1f1b().bubble_ratio)
