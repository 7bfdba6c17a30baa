"""GPU traces (issue 25): kernel-level reading, HTA's breakdown, the GPU's bubble, Nsight SQLite, the command."""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.analysis.traces.gpu import COMMUNICATION, COMPUTE, MEMORY, kernel_kind, merge_intervals, union_length

ROOT = Path(__file__).resolve().parent.parent
HTA = json.loads((ROOT / "tests" / "data" / "hta_temporal_breakdown.json").read_text(encoding="utf-8"))


def simulated(name: str = "1f1b", p: int = 4, m: int = 8, **costs: Any) -> bk.Timeline:
    return bk.simulate(bk.schedule(name, p, m), bk.Costs(**(costs or {"f": 1, "b": 2, "comm": 0.25})))


# ----------------------------------------------------------------------------- HTA's breakdown

def test_breakdown_agrees_with_hta_on_a_real_job_within_0_2_points() -> None:
    ours = bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR)
    theirs = {row["rank"]: row for row in HTA["traces"]["bubblekit/data/traces/hta"]}
    assert [r["rank"] for r in ours] == sorted(theirs)
    for row in ours:
        ref = theirs[row["rank"]]
        assert row["span_us"] == pytest.approx(ref["kernel_time(us)"])
        for ours_key, ref_key in (("idle_us", "idle_time_pctg"), ("compute_us", "compute_time_pctg"),
                                  ("non_compute_us", "non_compute_time_pctg")):
            assert abs(100 * row[ours_key] / row["span_us"] - ref[ref_key]) <= 0.2, (row["rank"], ours_key)


def test_breakdown_rows_have_exactly_the_documented_keys_and_add_up() -> None:
    table = bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR)
    for row in table:
        assert set(row) == {"rank", "span_us", "idle_us", "compute_us", "non_compute_us", "kernel_share"}
        assert row["idle_us"] + row["compute_us"] + row["non_compute_us"] == pytest.approx(row["span_us"])
        assert row["kernel_share"] == pytest.approx(1 - row["idle_us"] / row["span_us"])
    assert any("left out" in n for n in table.notes)  # HTA's last-step rule is said, not hidden


def test_a_subset_of_ranks_is_fine_and_every_event_counts_without_hta_rules() -> None:
    one = bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR / "sampled_rank-1.json.gz")
    assert [r["rank"] for r in one] == [1]
    everything = bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR, hta_rules=False)
    assert all(a["span_us"] > b["span_us"] for a, b in zip(everything, bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR)))


def test_kernel_kinds_follow_hta_names() -> None:
    assert kernel_kind("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)") == COMMUNICATION
    assert kernel_kind("ncclKernel_AllReduce_RING_LL_Sum_float") == COMMUNICATION
    assert kernel_kind("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy") == MEMORY
    assert kernel_kind("Memset (Device)") == MEMORY
    assert kernel_kind("void cutlass::Kernel<cutlass_80_tensorop_s16816gemm>(Params)") == COMPUTE
    assert kernel_kind("Stream Wait Event") is None


def test_intervals() -> None:
    assert merge_intervals([(3, 4), (0, 1), (0.5, 2), (2, 2.5)]) == [(0, 2.5), (3, 4)]
    assert union_length([(0, 1), (0.5, 2)]) == 2


# ----------------------------------------------------------------------------- the GPU's bubble

@pytest.mark.parametrize("name,costs", [("gpipe", {"f": 1, "b": 2, "comm": 0.25}), ("1f1b", {"f": 1, "b": 2, "comm": 0.25}),
                                        ("interleaved", {"f": 1, "b": 2}), ("zb-h1", {"f": 1, "i": 1, "w": 1}),
                                        ("zbv", {"f": 1, "i": 1, "w": 1}), ("dualpipev", {"f": 1, "i": 1, "w": 1})])
def test_a_gpu_pipeline_trace_is_measured_on_the_gpu(tmp_path: Path, name: str, costs: dict[str, float]) -> None:
    sim = simulated(name, **costs)
    bk.traces.write_kineto_gpu(sim, tmp_path, cpu_lead_us=4000, kernel_splits=3, seed=1)
    measured = bk.traces.read_trace(tmp_path)
    assert measured.clock == "gpu"
    assert measured.bubble_ratio == pytest.approx(sim.bubble_ratio, abs=1e-9)
    assert float(measured.makespan) == pytest.approx(float(sim.makespan), abs=1e-6)


def test_the_cpu_ranges_disagree_with_the_gpu(tmp_path: Path) -> None:
    """The CPU ranges end at launch: read on the CPU's clock, the same run looks almost all bubble."""
    sim = simulated()
    bk.traces.write_kineto_gpu(sim, tmp_path, cpu_lead_us=3000, seed=2)
    gpu = bk.traces.read_trace(tmp_path)
    cpu = bk.traces.read_trace(tmp_path, clock="cpu", align="none")  # its clocks cannot even be reconciled
    assert cpu.clock == "cpu" and cpu.bubble_ratio > gpu.bubble_ratio + 0.3


def test_lesson_06_cpu_clock_example_breaks_a_dependency(tmp_path: Path) -> None:
    """Twelfth review, W2 (lesson 06, gpu-05): in the lesson's trace, on the CPU's clock, rank 2's ``2F3`` starts before
    rank 1's ``1F3`` (its input) has even begun, while rank 1's ``1F3`` starts after rank 0's ``0F3`` ends."""
    sim = bk.simulate(bk.schedule("1f1b", p=4, m=8), bk.Costs(f=1, b=2, comm=0.25, unit="ms"))
    bk.traces.write_kineto_gpu(sim, tmp_path, cpu_lead_us=3000, kernel_splits=4)
    on_cpu = {str(s.action): s for s in bk.traces.read_trace(tmp_path, clock="cpu", align="none").spans()}
    assert on_cpu["2F3"].start < on_cpu["1F3"].start
    assert on_cpu["0F3"].end < on_cpu["1F3"].start
    with pytest.raises(ValueError):
        bk.traces.read_trace(tmp_path, clock="cpu", align="auto")


def test_nccl_kernels_spinning_through_the_bubble_are_idle_for_the_pipeline(tmp_path: Path) -> None:
    sim = simulated()
    bk.traces.write_kineto_gpu(sim, tmp_path, nccl_waits=True, seed=3)
    measured = bk.traces.read_trace(tmp_path)
    assert measured.bubble_ratio == pytest.approx(sim.bubble_ratio)
    rows = list(bk.traces.gpu_breakdown(tmp_path))
    for r, row in enumerate(rows):
        drain = float(sim.idle_parts(r)[2])
        assert row["span_us"] == pytest.approx((float(sim.makespan) - drain) * 1000)  # HTA's span ends at the last kernel
        assert row["kernel_share"] == pytest.approx(1.0)  # inside it some kernel always runs
        assert row["compute_us"] == pytest.approx(float(sim.busy[r]) * 1000, rel=1e-6)  # compute is the work
    assert min(row["kernel_share"] for row in rows) > 0.8  # the 80% rule is passed ...
    assert max(1 - b / float(sim.makespan) for b in sim.busy) > 0.3  # ... while the pipeline idles a third
    split = bk.traces.idle_split(measured)
    for r, (row, idle) in enumerate(zip(split, sim.idle)):
        drain = float(sim.idle_parts(r)[2])
        assert row["idle_ms"] == pytest.approx(float(idle))
        assert row["communication_ms"] == pytest.approx(float(idle) - drain)  # waits for an input: NCCL spins
        assert row["nothing_ms"] == pytest.approx(drain, abs=1e-9)            # the drain: an empty GPU


def test_without_nccl_kernels_the_idle_time_is_an_empty_gpu(tmp_path: Path) -> None:
    sim = simulated()
    bk.traces.write_kineto_gpu(sim, tmp_path, nccl_waits=False, seed=3)
    split = bk.traces.idle_split(bk.traces.read_trace(tmp_path))
    assert [row["nothing_ms"] for row in split] == pytest.approx([float(x) for x in sim.idle])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["1f1b", "gpipe", "interleaved", "zbv"]), lead=st.floats(0, 20000),
       splits=st.integers(1, 6), nccl=st.booleans(), annotations=st.booleans(), seed=st.integers(0, 10_000))
def test_reading_back_gives_the_simulation_whatever_the_cpu_does(tmp_path_factory: pytest.TempPathFactory, name: str,
                                                                  lead: float, splits: int, nccl: bool,
                                                                  annotations: bool, seed: int) -> None:
    costs = {"f": 1, "i": 1, "w": 1} if name == "zbv" else {"f": 1, "b": 2, "comm": 0.5}
    sim = simulated(name, p=2 if name == "zbv" else 3, m=4, **costs)
    folder = tmp_path_factory.mktemp("kineto")
    bk.traces.write_kineto_gpu(sim, folder, cpu_lead_us=lead, kernel_splits=splits, nccl_waits=nccl,
                               gpu_annotations=annotations, seed=seed)
    assert bk.traces.read_trace(folder).bubble_ratio == pytest.approx(sim.bubble_ratio, abs=1e-9)


def test_an_action_that_launched_no_kernel_is_refused(tmp_path: Path) -> None:
    sim = simulated(p=2, m=2)
    files = bk.traces.write_kineto_gpu(sim, tmp_path, gpu_annotations=False, nccl_waits=False)
    doc = json.loads(files[0].read_text())
    first = next(e for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"].startswith("PP:"))
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if not (e.get("cat") == "cuda_runtime" and first["ts"] <= e["ts"] < first["ts"] + first["dur"])]
    files[0].write_text(json.dumps(doc))
    with pytest.raises(bk.traces.TraceError, match="launched no compute kernel"):
        bk.traces.read_trace(tmp_path)


def test_half_gpu_half_cpu_is_refused(tmp_path: Path) -> None:
    sim = simulated(p=2, m=2)
    files = bk.traces.write_kineto_gpu(sim, tmp_path)
    doc = json.loads(files[1].read_text())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in ("kernel", "gpu_user_annotation")]
    files[1].write_text(json.dumps(doc))
    with pytest.raises(bk.traces.TraceError, match="half on the GPU"):
        bk.traces.read_trace(tmp_path)
    assert bk.traces.read_trace(tmp_path, clock="cpu", align="none").clock == "cpu"
    with pytest.raises(bk.traces.TraceError, match="clock='gpu'"):
        bk.traces.read_trace(tmp_path, clock="gpu")


def test_a_cpu_run_is_read_on_the_cpu_clock_as_before() -> None:
    assert bk.traces.read_trace(bk.traces.sample_trace("1f1b-p2-m4")).clock == "cpu"
    with pytest.raises(bk.traces.TraceError, match="no GPU events"):
        bk.traces.gpu_breakdown(bk.traces.sample_trace("1f1b-p2-m4"))


# ----------------------------------------------------------------------------- bad arguments

@pytest.mark.parametrize("kwargs,error,words", [
    ({"us_per_unit": 0}, ValueError, "us_per_unit"), ({"us_per_unit": "x"}, TypeError, "us_per_unit"),
    ({"cpu_lead_us": -1}, ValueError, "cpu_lead_us"), ({"cpu_lead_us": float("nan")}, ValueError, "cpu_lead_us"),
    ({"kernel_splits": 0}, ValueError, "kernel_splits"), ({"kernel_splits": 65}, ValueError, "kernel_splits"),
    ({"kernel_splits": 2.0}, TypeError, "kernel_splits"), ({"nccl_waits": 1}, TypeError, "nccl_waits"),
    ({"seed": -1}, ValueError, "seed"), ({"launch_us": 0}, ValueError, "launch_us"),
])
def test_write_kineto_gpu_names_a_bad_argument(tmp_path: Path, kwargs: dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        bk.traces.write_kineto_gpu(simulated(p=2, m=2), tmp_path, **kwargs)
    assert not list(tmp_path.iterdir())


def test_write_kineto_gpu_never_replaces_your_file(tmp_path: Path) -> None:
    mine = tmp_path / "rank0.json"
    mine.write_text("my notes")
    with pytest.raises(FileExistsError, match="force=True"):
        bk.traces.write_kineto_gpu(simulated(p=2, m=2), tmp_path)
    assert mine.read_text() == "my notes" and not (tmp_path / "rank1.json").exists()
    bk.traces.write_kineto_gpu(simulated(p=2, m=2), tmp_path, force=True)
    assert mine.read_text() != "my notes"


def test_bad_arguments_to_the_readers(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="hta_rules"):
        bk.traces.gpu_breakdown(bk.traces.HTA_SAMPLE_DIR, hta_rules="yes")
    with pytest.raises(ValueError, match="clock"):
        bk.traces.read_trace(bk.traces.sample_trace("1f1b-p2-m4"), clock="wall")
    with pytest.raises(TypeError, match="timeline"):
        bk.traces.idle_split(simulated())
    with pytest.raises(TypeError, match="timeline"):
        bk.traces.write_kineto_gpu("not a timeline", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hta_rules"):
        bk.traces.gpu_activity(bk.traces.HTA_SAMPLE_DIR, hta_rules=3)  # type: ignore[arg-type]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e308, "dur": 1e308}]}))
    with pytest.raises(bk.traces.TraceError, match="without a usable ts/dur"):
        bk.traces.gpu_breakdown(bad)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(bk.traces.TraceError):
        bk.traces.gpu_breakdown(tmp_path / "x.json")


# ----------------------------------------------------------------------------- Nsight Systems

def nsys_from_kineto(kineto: Path, out: Path) -> None:
    """An Nsight Systems SQLite export built to NVIDIA's documented schema from one Kineto file (ns)."""
    doc = json.loads(kineto.read_text())
    db = sqlite3.connect(out)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
            contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
            shortName INTEGER, gridX INTEGER, blockX INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
            globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
            category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
            domainId INTEGER);
    """)
    ids: dict[str, int] = {}

    def sid(text: str) -> int:
        if text not in ids:
            ids[text] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    pid = 4242
    tid = (pid << 24) | 7
    for e in doc["traceEvents"]:
        if e.get("ph") != "X":
            continue
        s, t = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        if e.get("cat") == "kernel":
            a = e["args"]
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (s, t, a["device"], 1, a["stream"], a["correlation"], pid << 24, sid(e["name"]), sid("k"), 1, 1))
        elif e.get("cat") == "cuda_runtime":
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?)",
                       (s, t, 1, tid, e["args"]["correlation"], sid(e["name"]), 0))
        elif e.get("cat") == "user_annotation":
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (s, t, 59, None, None, None, e["name"], tid, tid, None, 0))
    db.commit()
    db.close()


def test_nsight_sqlite_gives_the_same_breakdown_and_bubble(tmp_path: Path) -> None:
    sim = simulated()
    kineto = tmp_path / "kineto"
    files = bk.traces.write_kineto_gpu(sim, kineto, cpu_lead_us=2000, seed=5)
    nsys = tmp_path / "nsys"
    nsys.mkdir()
    for f in files:
        nsys_from_kineto(f, nsys / (f.stem + ".sqlite"))
    assert bk.traces.read_trace(nsys).bubble_ratio == pytest.approx(sim.bubble_ratio, abs=1e-6)
    a, b = bk.traces.gpu_breakdown(kineto), bk.traces.gpu_breakdown(nsys)
    for x, y in zip(a, b):
        assert x["rank"] == y["rank"] and x["compute_us"] == pytest.approx(y["compute_us"], abs=1)


def test_an_sqlite_file_that_is_not_an_nsight_export(tmp_path: Path) -> None:
    bad = tmp_path / "rank0.sqlite"
    db = sqlite3.connect(bad)
    db.execute("CREATE TABLE t (x)")
    db.close()
    with pytest.raises(bk.traces.TraceError, match="Nsight"):
        bk.traces.read_trace(bad)
    (tmp_path / "junk.sqlite").write_bytes(b"not a database at all" * 10)
    with pytest.raises(bk.traces.TraceError, match="junk.sqlite"):
        bk.traces.gpu_breakdown(tmp_path / "junk.sqlite")


# ----------------------------------------------------------------------------- bubblekit trace

def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bubblekit", "trace", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_the_command_reports_breakdown_bubble_and_gaps(tmp_path: Path) -> None:
    sim = simulated()
    bk.traces.write_kineto_gpu(sim, tmp_path, cpu_lead_us=2000)
    run = cli(str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "HTA" in run.stdout and "bubble_ratio" in run.stdout and "largest gaps" in run.stdout
    assert f"{sim.bubble_ratio:.4f}" in run.stdout and "NCCL" in run.stdout
    data = json.loads(cli(str(tmp_path), "--json").stdout)
    assert data["pipeline"]["clock"] == "gpu" and data["pipeline"]["bubble_ratio"] == pytest.approx(sim.bubble_ratio)
    assert len(data["gpu"]) == 4 and data["pipeline"]["gaps"]


def test_the_command_on_a_real_job_flags_low_kernel_share() -> None:
    run = cli(str(bk.traces.HTA_SAMPLE_DIR))
    assert run.returncode == 0, run.stderr
    assert "< 80%" in run.stdout and "no pipeline bubble" in run.stdout


def test_the_command_plots_and_never_overwrites_your_file(tmp_path: Path) -> None:
    bk.traces.write_kineto_gpu(simulated(p=2, m=4), tmp_path / "t")
    out = tmp_path / "timeline.png"
    assert cli(str(tmp_path / "t"), "--plot", str(out)).returncode == 0 and out.stat().st_size > 1000
    mine = tmp_path / "mine.png"
    mine.write_bytes(b"my picture")
    run = cli(str(tmp_path / "t"), "--plot", str(mine))
    assert run.returncode == 2 and "--force" in run.stderr and mine.read_bytes() == b"my picture"
    assert cli(str(tmp_path / "t"), "--plot", str(mine), "--force").returncode == 0 and mine.read_bytes() != b"my picture"
    real = tmp_path / "real.svg"
    assert cli(str(bk.traces.HTA_SAMPLE_DIR), "--plot", str(real)).returncode == 0 and real.stat().st_size > 1000


def test_the_command_reads_nsight_sqlite_and_gzipped_csv(tmp_path: Path) -> None:
    sim = simulated()
    files = bk.traces.write_kineto_gpu(sim, tmp_path / "kineto", cpu_lead_us=2000, seed=5)
    nsys = tmp_path / "nsys"
    nsys.mkdir()
    for f in files:
        nsys_from_kineto(f, nsys / (f.stem + ".sqlite"))
    run = cli(str(nsys))
    assert run.returncode == 0 and "HTA" in run.stdout and f"{sim.bubble_ratio:.4f}" in run.stdout, run.stderr
    csv_gz = tmp_path / "t.csv.gz"
    with gzip.open(csv_gz, "wb") as out:
        out.write(bk.traces.write_csv(bk.traces.read_trace(tmp_path / "kineto"), tmp_path / "t.csv").read_bytes())
    run = cli(str(csv_gz))
    assert run.returncode == 0 and "no GPU kernels" in run.stdout and "bubble_ratio" in run.stdout, run.stderr


@pytest.mark.parametrize("args,words", [
    (["/no/such/trace"], "no such trace"), (["--plot", "x.txt", "."], "--plot"), (["--gaps", "-1", "."], "--gaps"),
    (["--clock", "wall", "."], "--clock"), ([], "PATH"),
])
def test_the_command_names_what_is_wrong(args: list[str], words: str) -> None:
    run = cli(*args)
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr
