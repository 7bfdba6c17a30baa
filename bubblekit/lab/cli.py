"""``python -m bubblekit.lab``: run a real pipeline and print its measured bubble.

Commands:

* ``run``: run a schedule and print per-step bubble ratios, the comparison with the
  formula and the calibrated simulation, and the order check. Under ``torchrun`` the same
  command runs as one rank of the launcher's processes (rank 0 prints).
* ``schedules``: list the schedule names.
* ``worker``: internal, one rank started by ``run``.

Options avoid the name ``--m`` (torchrun would take it) and single letters in general.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from bubblekit.lab._config import TORCH_SCHEDULES, LabConfig, bubblekit_name

__all__ = ["main", "build_parser", "config_from_args"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests)."""
    ap = argparse.ArgumentParser(prog="python -m bubblekit.lab",
                                 description="Run torch.distributed.pipelining and measure its bubbles.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a schedule and report measured vs formula vs simulation")
    d = LabConfig()
    r.add_argument("--schedule", default=d.schedule,
                   help=f"one of {', '.join(TORCH_SCHEDULES)} (bubblekit names accepted); default {d.schedule}")
    r.add_argument("--ranks", type=int, default=None,
                   help=f"pipeline ranks (processes); default {d.ranks}, or WORLD_SIZE under torchrun")
    r.add_argument("--microbatches", type=int, default=d.microbatches, help="microbatches per step")
    r.add_argument("--chunks", type=int, default=None, help="stages per rank (v); default per schedule")
    r.add_argument("--hidden", type=int, default=d.hidden, help="model width")
    r.add_argument("--seq", type=int, default=d.seq, help="tokens per sample")
    r.add_argument("--batch", type=int, default=d.batch, help="samples per microbatch")
    r.add_argument("--layers", type=int, default=d.layers, help="blocks per stage")
    r.add_argument("--steps", type=int, default=d.steps, help="measured steps")
    r.add_argument("--warmup", type=int, default=d.warmup, help="unmeasured steps first")
    r.add_argument("--backend", default=d.backend, choices=["gloo", "nccl"])
    r.add_argument("--threads", type=int, default=None, help="torch threads per rank (default cores / ranks)")
    r.add_argument("--seed", type=int, default=d.seed)
    r.add_argument("--trace-dir", default=None, help="write torch.profiler traces rank<N>.json here")
    r.add_argument("--profile-steps", type=int, default=d.profile_steps, help="steps covered by the traces")
    r.add_argument("--timeout", type=float, default=d.timeout_s, help="seconds before the run is killed")
    r.add_argument("--record", default=None, help="save the run's record (JSON) here")
    r.add_argument("--csv", default=None, help="save the measured steps as CSV here")
    sub.add_parser("schedules", help="list the schedules")
    w = sub.add_parser("worker", help=argparse.SUPPRESS)
    w.add_argument("--config-file", required=True)
    w.add_argument("--record", default=None)
    return ap


def config_from_args(ns: argparse.Namespace) -> LabConfig:
    """A :class:`LabConfig` from parsed ``run`` options (ranks default to WORLD_SIZE under torchrun)."""
    from bubblekit.lab._launch import in_torchrun

    ranks = ns.ranks
    if ranks is None:
        ranks = int(os.environ["WORLD_SIZE"]) if in_torchrun() else LabConfig().ranks
    return LabConfig(
        schedule=ns.schedule, ranks=ranks, microbatches=ns.microbatches, v=ns.chunks, hidden=ns.hidden,
        seq=ns.seq, batch=ns.batch, layers=ns.layers, steps=ns.steps, warmup=ns.warmup, backend=ns.backend,
        threads=ns.threads, seed=ns.seed, trace_dir=ns.trace_dir, profile_steps=ns.profile_steps,
        timeout_s=ns.timeout,
    )


def _finish(record: dict[str, Any], ns: argparse.Namespace) -> None:
    from bubblekit.lab import LabResult

    res = LabResult.from_record(record)
    print(res.summary())
    if ns.record:
        res.save(ns.record)
        print(f"record written to {ns.record}")
    if ns.csv:
        res.to_csv(ns.csv)
        print(f"CSV written to {ns.csv}")
    if ns.trace_dir:
        print(f"profiler traces in {ns.trace_dir} (read them with bubblekit.analysis.traces.read_trace)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    ns = build_parser().parse_args(argv)
    if ns.command == "schedules":
        for info in TORCH_SCHEDULES.values():
            bk = bubblekit_name(info) or "(no bubblekit counterpart registered)"
            bk += f" (v={info.default_v})"
            print(f"{info.short:<22} {info.torch_class:<32} bubblekit: {bk}")
        return 0
    if ns.command == "worker":
        from bubblekit.lab._worker import worker_main

        with open(ns.config_file, encoding="utf-8") as fh:
            cfg = LabConfig(**json.load(fh))
        record = worker_main(cfg)
        if record is not None and ns.record:
            with open(ns.record, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
        return 0
    try:
        cfg = config_from_args(ns)
    except (TypeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from bubblekit.lab._launch import in_torchrun

    if in_torchrun():
        from bubblekit.lab._worker import worker_main

        record = worker_main(cfg)
        if record is not None:
            _finish(record, ns)
        return 0
    from bubblekit.lab import LabRunError
    from bubblekit.lab._launch import launch

    try:
        record = launch(cfg)
    except LabRunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    _finish(record, ns)
    return 0
