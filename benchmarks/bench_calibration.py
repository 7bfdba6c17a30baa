"""Which calibration statistic explains a real run: every statistic against the measured bubble (needs torch).

Runs real pipelines with ``bubblekit.lab`` (CPU, gloo, one process per rank; lesson 06's real-run
model, hidden=256, seq=128, layers=2, whose actions last tens of ms on a CPU core, unless
``--tiny`` (the lab's default model, actions of about a millisecond) or ``--hidden/--seq/--layers``
say otherwise): GPipe, 1F1B and interleaved
1F1B at p = 2, m = 4 and m = 8, ``--runs`` runs each (interleaved round by round, so that a
change in the machine's load hits every configuration alike). Each run's median step is
calibrated with every statistic of ``bubblekit.analysis.calibrate.STATISTICS``
(``calibrate(step, schedule, statistic=...)`` then ``calibrated_simulation``), and so is the
profiled step of every shipped sample (``bk.traces.sample_names()``). It prints:

* per step: the measured bubble ratio and, per statistic, calibrated - measured;
* per statistic: the steps within 0.05 of the measurement, the mean and the worst |gap|
  (over the lab runs, the samples, and all), and which statistic is best over all of them
  (calibrate's default should be that one);
* the prediction of another m: calibrate on run k at m = 4, simulate m = 8, compare with
  run k at m = 8;
* the machine's load average at the start and the end, and per run.

    .venv/bin/python benchmarks/bench_calibration.py            # 18 lab runs, 2-6 minutes (quiet: about 2)
    .venv/bin/python benchmarks/bench_calibration.py --quick    # 1 run per configuration, a minute or less
    .venv/bin/python benchmarks/bench_calibration.py --save-data bubblekit/data/calibration_benchmark.json --force
    .venv/bin/python benchmarks/bench_calibration.py --tiny --save-data bubblekit/data/calibration_benchmark_tiny.json --force
    .venv/bin/python benchmarks/bench_calibration.py --data bubblekit/data/calibration_benchmark.json   # no torch

``--save-data`` writes the runs' measured steps with where and when they ran: lesson 06
reads that file (``bk.calibrate.load_benchmark()``) and recomputes the table. ``--data``
recomputes the table from such a file without running anything. A file that exists is
refused without ``--force``. Prints figures; asserts nothing. The target (on a quiet
machine): the default within 0.05 of the measured bubble in at least 8 of every 9 lab runs,
and the prediction of another m within 0.05 in at least 2 of 3.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bubblekit.analysis import calibrate as cal  # noqa: E402
from bubblekit.lab._config import LabConfig  # noqa: E402  (no torch needed)

SCHEDULES = ("GPipe", "1F1B", "Interleaved1F1B")

#: The course's own schedules the lab runs through PyTorch's ``_PipelineScheduleRuntime`` (issue 26):
#: ``--schedules zb-h2 v-min`` benchmarks them the same way.
COURSE_SCHEDULES = ("zb-h2", "v-min", "v-half", "zb-h1", "zbv")

#: The model of lesson 06's real run (section 6): the benchmark's default.
LESSON_MODEL: dict[str, int] = {"hidden": 256, "seq": 128, "layers": 2}

#: The lab's own default model (``bubblekit.lab.LabConfig``'s defaults): ``--tiny``.
TINY_MODEL: dict[str, int] = {k: LabConfig.__dataclass_fields__[k].default for k in LESSON_MODEL}  # type: ignore[misc]


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # not on this platform
        return []


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _machine() -> str:
    return f"{platform.machine()}, {_cores()} CPU cores, {platform.system()}"


def _positive(text: str) -> int:
    """A whole number >= 1 on the command line: the one rule ``bubblekit plot`` uses."""
    from bubblekit.cli import _positive_int

    return _positive_int(text)


def run_lab(args: argparse.Namespace) -> dict[str, Any]:
    """Run the lab; return the benchmark data (the format of ``--save-data``)."""
    from bubblekit import lab

    if not lab.torch_available():
        raise SystemExit("bench_calibration: the lab runs need torch (bash course.sh setup --torch); "
                         "--data FILE recomputes a saved table without it")
    model = dict(TINY_MODEL if args.tiny else LESSON_MODEL)
    model.update({k: v for k, v in (("hidden", args.hidden), ("seq", args.seq), ("layers", args.layers))
                  if v is not None})
    meta: dict[str, Any] = {"when": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                            "machine": _machine(), "cores": _cores(), "load_start": _load(), "command": " ".join(sys.argv),
                            "model": model}
    runs: list[dict[str, Any]] = []
    print(f"lab runs: {', '.join(args.schedules)} at p=2, m in {args.ms}, {args.runs} run(s) each; "
          f"model {model}; load average at start {meta['load_start']}")
    for k in range(args.runs):
        for name in args.schedules:
            for m in args.ms:
                load = _load()
                t0 = time.perf_counter()
                try:
                    res = lab.run(name, ranks=2, microbatches=m, steps=args.steps, **model)
                except (lab.LabRunError, lab.LabInterrupted) as exc:
                    raise SystemExit(f"bench_calibration: the lab run {name} m={m} failed: {exc}") from None
                if res.schedule is None:
                    raise SystemExit(f"bench_calibration: bubblekit has no schedule for {name}")
                step = res.median_step
                runs.append({"name": f"{name} m={m} #{k + 1}", "lab_schedule": name, "bubblekit": res.schedule.name,
                             "p": res.config.ranks, "m": m, "v": res.config.v or 1, "run": k,
                             "bubble_ratios": [round(b, 6) for b in res.bubble_ratios], "load": load,
                             "wall_s": round(time.perf_counter() - t0, 1), "step": cal.step_record(step)})
                print(f"  {runs[-1]['name']:<24} measured {step.bubble_ratio:.3f} "
                      f"(steps {', '.join(f'{b:.3f}' for b in res.bubble_ratios)}), load {load}, "
                      f"{runs[-1]['wall_s']} s", flush=True)
    try:
        import torch

        meta["torch"] = str(torch.__version__)
    except ImportError:  # pragma: no cover - the lab ran, so torch is there
        pass
    meta["load_end"] = _load()
    lo, hi = min(args.ms), max(args.ms)
    index = {(r["lab_schedule"], r["m"], r["run"]): i for i, r in enumerate(runs)}
    pairs = [[index[(s, lo, k)], index[(s, hi, k)]] for s in args.schedules for k in range(args.runs)] if lo != hi else []
    return {"format": cal.BENCHMARK_FORMAT, "meta": meta, "runs": runs, "predictions": pairs}


def _refuse_existing(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise SystemExit(f"bench_calibration: {path} exists; pass --force to overwrite it")


def report(bench: cal.CalibrationBenchmark) -> None:
    print()
    print("calibrated - measured bubble_ratio, per step and statistic (a fraction of the step):")
    print(bench.runs_table().to_text())
    for which in ("real", "sample", "all"):
        if bench.scores(which):
            print()
            print(bench.summary(which).to_text())
    best = bench.best("all")
    print()
    print(f"best over all steps: {best}; calibrate's default: {cal.DEFAULT_STATISTIC}"
          + ("" if best == cal.DEFAULT_STATISTIC else "  <-- the default is not the best on this set"))
    if bench.scores("real"):
        print(f"best over the lab runs: {bench.best('real')}")
    if bench.predictions:
        print()
        print("prediction of another m, every statistic (within 0.05 / predictions): "
              + ", ".join(f"{s} {bench.prediction_hits(s)[0]}/{bench.prediction_hits(s)[1]}" for s in cal.STATISTICS))
        print(bench.predictions_table().to_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run per configuration (under a minute)")
    ap.add_argument("--runs", type=_positive, default=3, help="runs per configuration (default 3)")
    ap.add_argument("--ms", nargs="+", type=_positive, default=[4, 8],
                    help="microbatch counts (default 4 8; the smallest predicts the largest)")
    ap.add_argument("--schedules", nargs="+", choices=SCHEDULES + COURSE_SCHEDULES, default=list(SCHEDULES))
    ap.add_argument("--steps", type=_positive, default=3, help="measured steps per run (the median one is calibrated)")
    ap.add_argument("--tiny", action="store_true",
                    help=f"the lab's default model {TINY_MODEL} instead of lesson 06's {LESSON_MODEL}")
    ap.add_argument("--hidden", type=_positive, default=None, help="model width (default: lesson 06's, 256)")
    ap.add_argument("--seq", type=_positive, default=None, help="tokens per sample (default: lesson 06's, 128)")
    ap.add_argument("--layers", type=_positive, default=None, help="blocks per stage (default: lesson 06's, 2)")
    ap.add_argument("--no-samples", action="store_true", help="leave out the shipped recordings")
    ap.add_argument("--data", type=Path, default=None, help="recompute the table from a --save-data file (no runs)")
    ap.add_argument("--save-data", type=Path, default=None, help="write the runs (the file lesson 06 reads)")
    ap.add_argument("--force", action="store_true", help="overwrite the --save-data file")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs = 1
    if args.data is not None and args.save_data is not None:
        ap.error("--data reads a saved benchmark and --save-data writes one: give one of them")
    if args.save_data is not None:
        _refuse_existing(args.save_data, args.force)
    if args.data is not None:
        if not args.data.is_file():
            ap.error(f"--data: no such file {args.data}")
        bench = cal.load_benchmark(args.data, samples=not args.no_samples)
        print(f"recomputed from {args.data} (measured {bench.meta.get('when', '?')}, "
              f"command: {bench.meta.get('command', '?')})")
    else:
        data = run_lab(args)
        if args.save_data is not None:
            args.save_data.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {args.save_data}")
        bench = cal.benchmark_from_data(data, samples=not args.no_samples)
    m = bench.meta
    print(f"machine: {m.get('machine', '?')}; load average (1/5/15 min) at start {m.get('load_start')}, "
          f"at end {m.get('load_end')}; torch {m.get('torch', '?')}")
    report(bench)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
