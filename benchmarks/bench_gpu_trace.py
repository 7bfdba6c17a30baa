"""GPU traces: bubblekit's breakdown beside Holistic Trace Analysis's, and reading a 200 MB GPU trace.

1. **Side by side with HTA** on real public Kineto GPU traces (the two ranks shipped in
   ``bubblekit/data/traces/hta``, and any folders given with ``--extra``): per rank, idle /
   compute / non-compute as a share of the span, from ``bk.traces.gpu_breakdown`` and from
   HTA's ``TraceAnalysis.get_temporal_breakdown``, and the largest difference in percentage
   points. HTA runs in ``--hta-python`` (a Python where ``pip install holistictraceanalysis``
   was done; HTA pulls pandas and plotly, so keep it out of the course's environment) or in this
   Python if it imports ``hta``; without HTA the figures kept in
   ``tests/data/hta_temporal_breakdown.json`` are used.
2. **Streaming memory**: a simulated pipeline step written as per-rank Kineto GPU traces of about
   ``--size-mb`` MB in all (kernels, launches, flows, NCCL waits), read in a fresh child process by
   ``gpu_breakdown`` and by ``read_trace``: peak RSS growth over the child's baseline and MB/s.

    .venv/bin/python benchmarks/bench_gpu_trace.py
    .venv/bin/python benchmarks/bench_gpu_trace.py --hta-python /tmp/hta-venv/bin/python --extra ~/hta/tests/data/trace_diff/test
    .venv/bin/python benchmarks/bench_gpu_trace.py --size-mb 200

Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bubblekit as bk  # noqa: E402

HTA_CHILD = r"""
import json, logging, sys, warnings
warnings.filterwarnings("ignore"); logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
df = TraceAnalysis(trace_dir=sys.argv[1]).get_temporal_breakdown(visualize=False)
print(json.dumps(df.to_dict(orient="records")))
"""

READ_CHILD = r"""
import json, sys, time
import bubblekit as bk
def hwm_kb():  # this process's peak RSS (VmHWM: per address space; ru_maxrss survives exec from a big parent)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0
mode, folder = sys.argv[1], sys.argv[2]
base = hwm_kb()
t = time.perf_counter()
if mode == "breakdown":
    out = [dict(r) for r in bk.traces.gpu_breakdown(folder)]
else:
    m = bk.traces.read_trace(folder)
    out = {"bubble_ratio": m.bubble_ratio, "clock": m.clock}
secs = time.perf_counter() - t
peak = hwm_kb()
print(json.dumps({"seconds": secs, "rss_baseline_mb": base / 1024, "rss_peak_mb": peak / 1024, "result": out}))
"""


def hta_rows(folder: Path, hta_python: str | None) -> tuple[list[dict], str]:
    python = hta_python or sys.executable
    run = subprocess.run([python, "-c", HTA_CHILD, str(folder)], capture_output=True, text=True, timeout=900)
    if run.returncode == 0 and run.stdout.strip():
        return json.loads(run.stdout.strip().splitlines()[-1]), f"HTA ({python})"
    kept = json.loads((ROOT / "tests" / "data" / "hta_temporal_breakdown.json").read_text())["traces"]
    key = folder.resolve().relative_to(ROOT).as_posix() if folder.resolve().is_relative_to(ROOT) else str(folder)
    if key in kept:
        return kept[key], "HTA's figures kept in tests/data (HTA not installed here)"
    raise SystemExit(f"HTA is not importable by {python} and no kept figures for {folder}: pass --hta-python")


def side_by_side(folders: list[Path], hta_python: str | None) -> None:
    print("== gpu_breakdown beside HTA's get_temporal_breakdown (share of the span, percentage points)")
    print(f"{'trace':<44} {'rank':>4}  {'idle ours/HTA':>15} {'compute ours/HTA':>18} {'non-compute ours/HTA':>22}  max diff")
    worst = 0.0
    for folder in folders:
        theirs, source = hta_rows(folder, hta_python)
        ours = {r["rank"]: r for r in bk.traces.gpu_breakdown(folder)}
        for ref in theirs:
            row = ours.get(int(ref["rank"]))
            if row is None:
                print(f"{folder.name:<44} {ref['rank']:>4}  (no such rank in bubblekit's reading)")
                continue
            cols = []
            diff = 0.0
            for key, hkey in (("idle_us", "idle_time_pctg"), ("compute_us", "compute_time_pctg"),
                              ("non_compute_us", "non_compute_time_pctg")):
                mine = 100 * row[key] / row["span_us"]
                diff = max(diff, abs(mine - ref[hkey]))
                cols.append(f"{mine:6.2f}/{ref[hkey]:6.2f}")
            worst = max(worst, diff)
            print(f"{str(folder)[-44:]:<44} {ref['rank']:>4}  {cols[0]:>15} {cols[1]:>18} {cols[2]:>22}  {diff:.2f}")
        print(f"   ({source})")
    print(f"largest difference: {worst:.2f} percentage points (the target: at most 0.2)\n")


def streaming(size_mb: float) -> None:
    print(f"== reading a ~{size_mb:.0f} MB GPU pipeline trace in a fresh process")
    m = max(8, int(512 * size_mb / 79))  # 79 MB at m = 512
    sim = bk.simulate(bk.schedule("1f1b", 2, m), bk.Costs(f=1, b=2, comm=0.05))
    with tempfile.TemporaryDirectory() as tmp:
        files = bk.traces.write_kineto_gpu(sim, tmp, cpu_lead_us=5000, kernel_splits=64, seed=0)
        total = sum(f.stat().st_size for f in files) / 2**20
        print(f"files: {len(files)} ranks, {total:.0f} MB in all (p=2, m={m}, 64 kernels per action); "
              f"simulated bubble_ratio {sim.bubble_ratio:.4f}")
        for mode in ("breakdown", "read_trace"):
            run = subprocess.run([sys.executable, "-c", READ_CHILD, mode, tmp], capture_output=True, text=True,
                                 timeout=1800, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
            if run.returncode != 0:
                print(f"{mode}: failed: {run.stderr[-500:]}")
                continue
            info = json.loads(run.stdout.strip().splitlines()[-1])
            growth = info["rss_peak_mb"] - info["rss_baseline_mb"]
            extra = "" if mode == "breakdown" else f", bubble_ratio {info['result']['bubble_ratio']:.4f} ({info['result']['clock']})"
            print(f"{mode:<10}: {info['seconds']:6.1f} s, {total / info['seconds']:5.1f} MB/s, peak RSS "
                  f"{info['rss_peak_mb']:.0f} MB (+{growth:.0f} MB over the {info['rss_baseline_mb']:.0f} MB baseline, "
                  f"{growth / total:.2f} x the file size){extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--hta-python", help="a Python that imports hta (holistictraceanalysis)")
    ap.add_argument("--extra", nargs="*", default=[], help="more folders of Kineto GPU traces to compare with HTA")
    ap.add_argument("--size-mb", type=float, default=200.0, help="size of the generated trace (0: skip)")
    args = ap.parse_args()
    side_by_side([bk.traces.HTA_SAMPLE_DIR, *[Path(e) for e in args.extra]], args.hta_python)
    if args.size_mb > 0:
        streaming(args.size_mb)


if __name__ == "__main__":
    main()
