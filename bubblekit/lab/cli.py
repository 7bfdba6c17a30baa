"""``python -m bubblekit.lab``: run a real pipeline and print its measured bubble.

Commands:

* ``run``: run a schedule and print per-step bubble ratios, the comparison with the
  formula and the calibrated simulation, and the order check. Under ``torchrun`` the same
  command runs as one rank of the launcher's processes (rank 0 prints).
* ``schedules``: list the schedule names.
* ``worker``: internal, one rank started by ``run``.

Options avoid the name ``--m`` (torchrun would take it) and single letters in general, and
must be spelled out (no abbreviations). Every option is checked before any worker starts;
an error names the option, the value and what is allowed (exit code 2). Ctrl-C, ``SIGTERM``
and ``SIGHUP`` end every worker, remove the temporary files and print one line (exit code
128 + the signal number).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bubblekit.lab._config import OPTION_NAMES, TORCH_SCHEDULES, LabConfig, bubblekit_name, field_of

if TYPE_CHECKING:
    from bubblekit.lab._launch import LabInterrupted

__all__ = ["main", "build_parser", "config_from_args", "option_error", "output_problems"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests)."""
    ap = argparse.ArgumentParser(prog="python -m bubblekit.lab", allow_abbrev=False,
                                 description="Run torch.distributed.pipelining and measure its bubbles.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a schedule and report measured vs formula vs simulation", allow_abbrev=False)
    d = LabConfig()
    r.add_argument("--schedule", default=d.schedule,
                   help=f"one of {', '.join(TORCH_SCHEDULES)} (bubblekit names accepted); default {d.schedule}")
    r.add_argument("--schedule-file", default=None,
                   help="run this PyTorch schedule file instead (compute-only CSV, e.g. written by "
                        "Schedule.to_torch_csv) through PyTorch's _PipelineScheduleRuntime; ranks and microbatches "
                        "are the file's")
    r.add_argument("--ranks", type=int, default=None,
                   help=f"pipeline ranks (processes); default {d.ranks}, or WORLD_SIZE under torchrun")
    r.add_argument("--microbatches", type=int, default=None, help=f"microbatches per step; default {d.microbatches}")
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
    r.add_argument("--timeout", type=float, default=d.timeout_s,
                   help=f"seconds before the run is killed (finite, > 0; default {d.timeout_s:g})")
    r.add_argument("--record", default=None, help="save the run's record (JSON) here (a new file unless --force)")
    r.add_argument("--csv", default=None, help="save the measured steps as CSV here (a new file unless --force)")
    r.add_argument("--force", action="store_true",
                   help="overwrite an existing --record / --csv file and the rank<N>.json traces in --trace-dir")
    sub.add_parser("schedules", help="list the schedules")
    w = sub.add_parser("worker", help=argparse.SUPPRESS)
    w.add_argument("--config-file", required=True)
    w.add_argument("--record", default=None)
    return ap


def config_from_args(ns: argparse.Namespace) -> LabConfig:
    """A :class:`LabConfig` from parsed ``run`` options (ranks default to WORLD_SIZE under torchrun)."""
    from bubblekit.lab._launch import in_torchrun

    ranks = ns.ranks
    options: dict[str, Any] = dict(
        v=ns.chunks, hidden=ns.hidden, seq=ns.seq, batch=ns.batch, layers=ns.layers, steps=ns.steps,
        warmup=ns.warmup, backend=ns.backend, threads=ns.threads, seed=ns.seed, trace_dir=ns.trace_dir,
        profile_steps=ns.profile_steps, timeout_s=ns.timeout,
    )
    schedule_file = getattr(ns, "schedule_file", None)
    if schedule_file is not None:
        from bubblekit.lab._config import _tagged
        from bubblekit.schedules.base import Schedule

        if ranks is None and in_torchrun():
            ranks = int(os.environ["WORLD_SIZE"])
        try:
            sched = Schedule.from_torch_csv(schedule_file, name=Path(schedule_file).stem or "custom")
        except ValueError as exc:
            raise _tagged(exc, "schedule_file") from None
        options.pop("v")
        if ns.chunks is not None and ns.chunks != sched.v:
            raise _tagged(ValueError(f"the file's schedule has v={sched.v} stages per rank"), "v")
        try:
            return LabConfig.for_schedule(sched, ranks=ranks, microbatches=ns.microbatches, **options)
        except (TypeError, ValueError) as exc:
            if field_of(exc) == "schedule":
                _tagged(exc, "schedule_file")
            raise
    if ranks is None:
        ranks = int(os.environ["WORLD_SIZE"]) if in_torchrun() else LabConfig().ranks
    microbatches = LabConfig().microbatches if ns.microbatches is None else ns.microbatches
    return LabConfig(schedule=ns.schedule, ranks=ranks, microbatches=microbatches, **options)


def option_error(exc: BaseException, ns: argparse.Namespace) -> str:
    """``error: --timeout inf: <message>``: the message of a configuration error with its option and value."""
    name = field_of(exc)
    option = OPTION_NAMES.get(name or "")
    if option is None:
        return f"error: {exc}"
    value = getattr(ns, option.lstrip("-").replace("-", "_"), None)
    shown = "(default)" if value is None else str(value)
    return f"error: {option} {shown}: {exc}"


def output_problems(ns: argparse.Namespace) -> list[str]:
    """Messages for ``--record`` / ``--csv`` paths that cannot be written (checked before the run).

    An existing file is kept, and so are the ``rank<N>.json`` traces already in ``--trace-dir``:
    without ``--force`` they are refused here, before the run, naming the file.
    """
    from bubblekit.lab._launch import file_problem

    force = bool(getattr(ns, "force", False))
    out = []
    for option, path in (("--record", ns.record), ("--csv", ns.csv)):
        if path:
            if not force and Path(path).is_file():
                out.append(f"error: {option} {path}: the file already exists and is kept. Choose a new file name, "
                           f"or pass --force to overwrite it (checked before the run, so no run is lost).")
                continue
            problem = file_problem(path)
            if problem:
                out.append(f"error: {option} {path}: cannot write there: {problem}. Choose a writable path "
                           f"(checked before the run, so no run is lost).")
    trace_dir = getattr(ns, "trace_dir", None)
    if trace_dir and not force and Path(trace_dir).is_dir():
        old = sorted(f.name for f in Path(trace_dir).glob("rank*.json") if f.is_file())
        if old:
            shown = ", ".join(old[:4]) + (f" and {len(old) - 4} more" if len(old) > 4 else "")
            out.append(f"error: --trace-dir {trace_dir}: it already holds traces ({shown}) that the run would "
                       f"overwrite; they are kept. Choose a new or empty folder, or pass --force.")
    return out


def _save_record(record: dict[str, Any], path: str | None) -> str:
    """Write the raw record to ``path`` (``None``: a temporary file); if that fails, to a temporary file. Returns where."""
    text = json.dumps(record)
    if path is not None:
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            return path
        except OSError as exc:
            problem = f"could not write the record to {path} ({exc.strerror or exc})"
    fd, fallback = tempfile.mkstemp(prefix="bubblekit-lab-record-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    if path is not None:
        print(f"warning: {problem}; saved it to {fallback}", file=sys.stderr)
    return fallback


def _finish(record: dict[str, Any], ns: argparse.Namespace) -> int:
    """Save the record first (nothing measured is lost), then print the summary and write the CSV.

    Should anything after the run fail (the CSV's path, reading the record), the record is
    kept in a temporary file and its path printed. Returns the exit code.
    """
    from bubblekit.lab import LabResult

    saved = _save_record(record, ns.record) if ns.record else None
    try:
        res = LabResult.from_record(record)
    except (KeyError, TypeError, ValueError) as exc:
        where = saved or _save_record(record, None)
        print(f"error: the run finished but its record could not be read ({exc}); it is saved in {where}",
              file=sys.stderr)
        return 1
    print(res.summary())
    if saved:
        print(f"record written to {saved}")
    if ns.csv:
        try:
            res.to_csv(ns.csv)
            print(f"CSV written to {ns.csv}")
        except (OSError, ValueError) as exc:  # ValueError: write_csv's folder is gone
            where = saved or _save_record(record, None)
            print(f"warning: could not write the CSV to {ns.csv} ({getattr(exc, 'strerror', None) or exc}); the run's record is in "
                  f"{where}: LabResult.load({where!r}).to_csv(path) writes the CSV later", file=sys.stderr)
    if ns.trace_dir:
        print(f"profiler traces in {ns.trace_dir} (read them with bubblekit.analysis.traces.read_trace)")
    return 0


def _stopped_line(exc: LabInterrupted) -> str:
    return f"bubblekit lab: stopped by {exc.signame}; every worker ended and its temporary files removed"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (2: bad options, 1: the run failed, 128 + N: stopped by signal N)."""
    ns = build_parser().parse_args(argv)
    if ns.command == "schedules":
        for info in TORCH_SCHEDULES.values():
            bk = bubblekit_name(info) or "(no bubblekit counterpart registered)"
            bk += f" (v={info.default_v})"
            print(f"{info.short:<22} {info.torch_class:<32} bubblekit: {bk}")
        _print_runtime_schedules()
        return 0
    if ns.command == "worker":
        return _worker(ns)
    from bubblekit.lab._launch import LabInterrupted, stop_on_signals

    with stop_on_signals() as guard:
        try:
            return _run(ns, guard)
        except LabInterrupted as exc:
            print(_stopped_line(exc), file=sys.stderr, flush=True)
            return 128 + exc.signum


def _print_runtime_schedules() -> None:
    """The registered schedules with no PyTorch class: run from their CSV, or refused (and why)."""
    from bubblekit.lab._config import runtime_problem
    from bubblekit.schedules import REGISTRY, legal_ms, schedule

    runs, refused = [], []
    for entry in REGISTRY.values():
        if entry.torch_class is not None:
            continue
        m = next(iter(legal_ms(entry.name, 2, up_to=64)), None)
        problem = runtime_problem(schedule(entry.name, 2, m)) if m is not None else "no m works for 2 ranks"
        if problem is None:
            runs.append(entry.name)
        else:
            refused.append(f"{entry.name}: {problem.split(';')[0]}")
    print(f"{'(bubblekit name)':<22} {'_PipelineScheduleRuntime':<32} from bubblekit's CSV: {', '.join(runs)}")
    for line in refused:
        print(f"{'':<22} {'refused':<32} {line}")


def _worker(ns: argparse.Namespace) -> int:
    from bubblekit.lab._launch import PARENT_ENV, watch_parent

    parent = os.environ.get(PARENT_ENV)
    if parent:
        watch_parent(int(parent))
    from bubblekit.lab._config import ConfigFileError, load_config

    try:
        cfg = load_config(ns.config_file)
    except ConfigFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from bubblekit.lab._worker import worker_main

    record = worker_main(cfg)
    if record is not None and ns.record:
        with open(ns.record, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
    return 0


def _run(ns: argparse.Namespace, guard: Any) -> int:
    from bubblekit.lab import LabRunError
    from bubblekit.lab._launch import in_torchrun, launch, preflight

    try:
        cfg = config_from_args(ns)
    except (TypeError, ValueError) as exc:
        print(option_error(exc, ns), file=sys.stderr)
        return 2
    torchrun = in_torchrun()
    if not torchrun or os.environ.get("RANK") == "0":
        problems = output_problems(ns)
        if problems:
            print("\n".join(problems), file=sys.stderr)
            return 2
    if torchrun:
        from bubblekit.lab._worker import worker_main

        record = worker_main(cfg)
        if record is not None:
            with guard.shield():
                return _finish(record, ns)
        return 0
    try:
        for text in preflight(cfg):
            print(f"warning: {text}", file=sys.stderr, flush=True)
    except ValueError as exc:
        print(option_error(exc, ns), file=sys.stderr)
        return 2
    try:
        record = launch(cfg, checked=True)
    except LabRunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with guard.shield():
        return _finish(record, ns)
