"""Peak memory and time of reading a large (~200 MB) Kineto-style trace with bubblekit.analysis.traces.

Generates a synthetic trace in a temporary folder (one file per rank, streamed to disk:
``ProfilerStep#N`` ranges, ``PP:0F3`` ranges each holding many nested ``aten::`` operator
events with Kineto-like arguments), then reads it in a fresh child process and reports:

* peak resident set size of the child (``ru_maxrss``) and its baseline after imports;
* peak Python allocation during the read (``tracemalloc``, in a second child: tracing
  allocations costs memory itself, so it is not on while RSS is measured);
* the file size and the read time.

Optionally (``--json-load``) the same for ``json.load`` of one file, for scale.

    .venv/bin/python benchmarks/bench_trace_memory.py            # 2 ranks, 200 MB in total
    .venv/bin/python benchmarks/bench_trace_memory.py --size-mb 200 --ranks 1

Prints figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time, tracemalloc
mode, target, trace_alloc = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if mode == "bubblekit":
    from bubblekit.analysis.traces import read_trace_steps
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if trace_alloc:
    tracemalloc.start()
t = time.perf_counter()
cpu0 = time.process_time()
if mode == "bubblekit":
    steps = read_trace_steps(target)
    info = {"steps": len(steps), "bubble_ratio_last": steps[-1].bubble_ratio, "notes": steps[-1].notes}
else:
    with open(target) as fh:
        doc = json.load(fh)
    info = {"events": len(doc["traceEvents"])}
secs = time.perf_counter() - t
cpu = time.process_time()
cur, peak = tracemalloc.get_traced_memory() if trace_alloc else (0, 0)
info.update(seconds=secs, cpu_seconds=cpu - cpu0, tracemalloc_peak_mb=peak / 2**20,
            rss_baseline_mb=base / 1024, rss_peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(info))
"""

OPS = ("aten::linear", "aten::addmm", "aten::layer_norm", "aten::native_layer_norm", "aten::gelu", "aten::view",
       "aten::t", "aten::empty", "aten::add", "aten::scaled_dot_product_attention", "aten::mm", "aten::sum")


def write_rank(path: Path, rank: int, p: int, m: int, steps: int, ops_per_action: int, seed: int) -> None:
    """Stream one rank's synthetic Kineto trace to ``path`` (ts and dur in microseconds).

    Action times come from bubblekit's simulation of 1F1B (F = 0.9 ms, B = 1.8 ms, 0.06 ms
    per hop), so the trace respects the pipeline's dependencies.
    """
    import bubblekit as bk

    rnd = random.Random(seed + rank)
    sim = bk.simulate(bk.schedule("1f1b", p, m), bk.Costs(f=0.9, b=1.8, comm=0.06, unit="ms"))
    spans = list(sim.spans(rank))
    pid = tid = 1000 + rank
    ext = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"schemaVersion": 1, "deviceProperties": [], ')
        fh.write(f'"distributedInfo": {{"backend": "gloo", "rank": {rank}, "world_size": {p}}}, ')
        fh.write('"traceEvents": [\n')
        first = True

        def emit(ev: dict[str, object]) -> None:
            nonlocal first
            fh.write(("" if first else ",\n") + json.dumps(ev))
            first = False

        emit({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}})
        step_us = float(sim.makespan) * 1000 + 5000.0
        for step in range(steps):
            t0 = 5_000_000.0 + step * step_us
            for sp in spans:
                ts, dur = t0 + float(sp.start) * 1000, float(sp.duration) * 1000
                emit({"ph": "X", "cat": "user_annotation", "name": f"PP:{sp.label}", "pid": pid, "tid": tid,
                      "ts": round(ts, 3), "dur": round(dur, 3), "args": {"External id": ext, "Record function id": 0}})
                gap = dur / ops_per_action
                for k in range(ops_per_action):
                    ext += 1
                    emit({"ph": "X", "cat": "cpu_op", "name": OPS[rnd.randrange(len(OPS))], "pid": pid, "tid": tid,
                          "ts": round(ts + k * gap, 3), "dur": round(gap * 0.8 if k < ops_per_action - 1 else gap, 3),
                          "args": {"External id": ext, "Sequence number": ext, "Fwd thread id": 0,
                                   "Record function id": 0, "Ev Idx": ext}})
            emit({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": pid, "tid": tid,
                  "ts": round(t0 - 10, 3), "dur": round(step_us - 4000, 3), "args": {}})
        fh.write('\n], "traceName": "synthetic", "displayTimeUnit": "ms"}\n')


def simulated_bubble(args: argparse.Namespace) -> float:
    """The bubble_ratio of the simulated step the synthetic trace was written from."""
    import bubblekit as bk

    sim = bk.simulate(bk.schedule("1f1b", args.ranks, args.microbatches), bk.Costs(f=0.9, b=1.8, comm=0.06, unit="ms"))
    return sim.bubble_ratio


def run_child(mode: str, target: Path) -> dict[str, object]:
    """Read ``target`` twice in fresh processes: once for RSS and time, once under tracemalloc."""
    outs = []
    for flag in ("0", "1"):
        out = subprocess.run([sys.executable, "-c", CHILD, mode, str(target), flag], capture_output=True, text=True,
                             check=True, timeout=1800)
        outs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    res = dict(outs[0])
    res["tracemalloc_peak_mb"] = outs[1]["tracemalloc_peak_mb"]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=200.0, help="total trace size (all ranks)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--microbatches", type=int, default=8)
    ap.add_argument("--ops-per-action", type=int, default=200)
    ap.add_argument("--json-load", action="store_true", help="also measure json.load of rank 0's file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bk-trace-mem-") as tmp:
        folder = Path(tmp)
        # calibrate steps from a one-step sample
        sample = folder / "sample.json"
        write_rank(sample, 0, args.ranks, args.microbatches, 1, args.ops_per_action, 0)
        per_step = sample.stat().st_size
        sample.unlink()
        steps = max(1, int(args.size_mb * 2**20 / args.ranks / per_step))
        for r in range(args.ranks):
            write_rank(folder / f"rank{r}.json", r, args.ranks, args.microbatches, steps, args.ops_per_action, 0)
        total = sum(f.stat().st_size for f in folder.iterdir()) / 2**20
        biggest = max(f.stat().st_size for f in folder.iterdir()) / 2**20
        print(f"synthetic trace: {args.ranks} rank file(s), {total:.1f} MB in total (largest {biggest:.1f} MB), "
              f"{steps} steps of 1F1B p={args.ranks} m={args.microbatches}, {args.ops_per_action} operators per action")
        res = run_child("bubblekit", folder)
        print(f"bubblekit.analysis.traces.read_trace_steps: {res['seconds']:.1f} s wall ({res['cpu_seconds']:.1f} s CPU), {res['steps']} steps, "
              f"last step bubble_ratio {res['bubble_ratio_last']:.4f} (the simulated step's: {simulated_bubble(args):.4f}); "
              f"notes: {res['notes'] or 'none'}")
        print(f"  peak RSS {res['rss_peak_mb']:.1f} MB (baseline after imports {res['rss_baseline_mb']:.1f} MB, "
              f"so +{float(res['rss_peak_mb']) - float(res['rss_baseline_mb']):.1f} MB); "  # type: ignore[arg-type]
              f"tracemalloc peak {res['tracemalloc_peak_mb']:.1f} MB")
        print(f"  ratio peak-increase / trace size: "
              f"{(float(res['rss_peak_mb']) - float(res['rss_baseline_mb'])) / total:.3f}")  # type: ignore[arg-type]
        if args.json_load:
            res2 = run_child("json", folder / "rank0.json")
            print(f"json.load of rank0.json ({biggest:.1f} MB): {res2['seconds']:.1f} s wall ({res2['cpu_seconds']:.1f} s CPU), peak RSS "
                  f"{res2['rss_peak_mb']:.1f} MB, tracemalloc peak {res2['tracemalloc_peak_mb']:.1f} MB")


if __name__ == "__main__":
    main()
