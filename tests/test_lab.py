"""The lab: real ``torch.distributed.pipelining`` runs on CPU (gloo), 2 ranks, tiny models.

Tests marked ``torch`` start real processes and are skipped when torch is missing; the
others check configuration, names and record handling without torch. Bubble ratios of
real runs are printed (``-s``), never asserted against a number: they depend on the machine.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit import lab
from bubblekit.analysis.traces import read_csv, read_trace
from bubblekit.lab import _launch, _progress
from bubblekit.lab._config import OPTION_NAMES, cpu_count, field_of
from bubblekit.lab.cli import build_parser, config_from_args, main

torch_only = pytest.mark.skipif(not lab.torch_available(), reason="torch is not installed (bubblekit[lab])")

TINY = {"hidden": 32, "seq": 16, "batch": 2, "layers": 1, "timeout_s": 150.0}


# ------------------------------------------------------------------ no torch needed
def test_config_validation() -> None:
    assert lab.LabConfig(schedule="zbv").schedule == "ZBVZeroBubble"
    assert lab.LabConfig(schedule="schedule1f1b").v == 1
    assert lab.LabConfig(schedule="Interleaved1F1B").v == 2
    with pytest.raises(ValueError, match="unknown schedule 'nope'"):
        lab.LabConfig(schedule="nope")
    with pytest.raises(ValueError, match="v=3 is not allowed for DualPipeV"):
        lab.LabConfig(schedule="DualPipeV", v=3)
    with pytest.raises(ValueError, match="v=2 is not allowed for 1F1B"):
        lab.LabConfig(schedule="1F1B", v=2)
    with pytest.raises(ValueError, match="needs v >= 2"):
        lab.LabConfig(schedule="LoopedBFS", v=1)
    with pytest.raises(ValueError, match="ranks must be >= 2"):
        lab.LabConfig(ranks=1)
    with pytest.raises(TypeError, match="microbatches must be a whole number"):
        lab.LabConfig(microbatches=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backend must be"):
        lab.LabConfig(backend="mpi")
    assert lab.LabConfig(schedule="DualPipeV", ranks=3, microbatches=6).placement() == (0, 1, 2, 2, 1, 0)
    assert lab.LabConfig(schedule="LoopedBFS", ranks=2).placement() == (0, 1, 0, 1)


def test_schedule_names_map_to_bubblekit() -> None:
    assert len(lab.TORCH_SCHEDULES) == 7
    for info in lab.TORCH_SCHEDULES.values():
        name = lab.bubblekit_name(info)
        if name is not None:
            assert bk.REGISTRY[name].torch_class == info.torch_class
    assert lab.bubblekit_name(lab.TORCH_SCHEDULES["1F1B"]) == "1f1b"
    assert lab.bubblekit_name(lab.TORCH_SCHEDULES["Interleaved1F1B"], 3) == "interleaved"
    assert lab.bubblekit_name(lab.TORCH_SCHEDULES["InterleavedZeroBubble"], 2) is None  # zb-h1 has one chunk


def test_names_resolve_through_the_registry() -> None:
    """Every registered schedule with a torch_class, by any name the registry accepts, runs that class."""
    from bubblekit.schedules import REGISTRY, spec

    seen = set()
    for entry in REGISTRY.values():
        if entry.torch_class is None:
            with pytest.raises(ValueError, match=f"bubblekit's schedule {entry.name!r} has no torch"):
                lab.resolve_schedule(entry.name)
            continue
        info = lab.resolve_schedule(entry.name)
        assert info.torch_class == entry.torch_class
        seen.add(info.short)
    assert seen  # the registry names at least one PyTorch class
    # the registry's own aliases work here too, with no table of the lab's
    for alias in ("naive", "zb_h1", "ZB-V", "interleaved-1f1b"):
        assert lab.resolve_schedule(alias).torch_class == spec(alias).torch_class
    # PyTorch's names (lab and class names) in any case
    assert lab.resolve_schedule("schedule_1f1b").short == "1F1B"
    assert lab.resolve_schedule("dualpipev").short == "DualPipeV"
    with pytest.raises(ValueError, match="unknown schedule 'nope': choose one of GPipe"):
        lab.resolve_schedule("nope")
    with pytest.raises(TypeError, match="schedule must be a string"):
        lab.resolve_schedule(3)  # type: ignore[arg-type]


# ------------------------------------------------------------ bad inputs, checked up front
@pytest.mark.parametrize("kwargs,field,exc,match", [
    ({"timeout_s": math.inf}, "timeout_s", ValueError, "timeout_s must be a finite number of seconds > 0.*inf"),
    ({"timeout_s": math.nan}, "timeout_s", ValueError, "timeout_s must be a finite number of seconds > 0.*nan"),
    ({"timeout_s": -1.0}, "timeout_s", ValueError, "timeout_s must be a finite.*-1.0"),
    ({"timeout_s": "60"}, "timeout_s", TypeError, "timeout_s must be a number of seconds"),
    ({"schedule": "DualPipeV", "microbatches": 2}, "microbatches", ValueError,
     "DualPipeV cannot run with ranks=2, microbatches=2.*m >= 2p = 4"),
    ({"schedule": "Interleaved1F1B", "microbatches": 5}, "microbatches", ValueError,
     "Interleaved1F1B cannot run with ranks=2, microbatches=5"),
    ({"schedule": "dualpipe", "microbatches": 8}, "schedule", ValueError,
     "the lab cannot run 'dualpipe' through PyTorch's _PipelineScheduleRuntime: it runs 2 pipelines"),
    ({"schedule": "v-min", "v": 3}, "v", ValueError, "v=3 is not allowed for 'v-min'"),
    ({"schedule": "zb-h2", "microbatches": 0}, "microbatches", ValueError, "microbatches must be >= 1"),
    ({"schedule": "x", "orders": "0F0,0Q0\r\n"}, "schedule", ValueError, "the schedule 'x' cannot be read.*0Q0"),
    ({"schedule": "x", "orders": b"0F0"}, "schedule", TypeError, "orders must be PyTorch's schedule CSV text"),
    ({"schedule": "x", "ranks": 3, "microbatches": 1, "orders": "0F0,0B0\r\n1F0,1B0\r\n"}, "ranks", ValueError,
     "has 2 rank\\(s\\) but ranks=3"),
    ({"v": 3}, "v", ValueError, "v=3 is not allowed for 1F1B"),
    ({"threads": 0}, "threads", ValueError, "threads must be >= 1"),
    ({"seed": -1}, "seed", ValueError, "seed must be >= 0"),
    ({"trace_dir": ""}, "trace_dir", TypeError, "trace_dir must be a folder path"),
    ({"extra": {"stall_action": "oops"}}, "extra", ValueError, "stall_action"),
])
def test_bad_configuration_is_named(kwargs: dict, field: str, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match) as info:
        lab.LabConfig(**kwargs)
    assert field_of(info.value) == field


@pytest.mark.parametrize("argv,option", [
    (["--timeout", "inf"], "--timeout inf:"),
    (["--timeout", "nan"], "--timeout nan:"),
    (["--timeout", "-3"], "--timeout -3.0:"),
    (["--schedule", "DualPipeV", "--microbatches", "2"], "--microbatches 2:"),
    (["--schedule", "Interleaved1F1B", "--microbatches", "5"], "--microbatches 5:"),
    (["--schedule", "Nope"], "--schedule Nope: unknown schedule"),
    (["--chunks", "3"], "--chunks 3: v=3 is not allowed"),
])
def test_command_line_names_the_option(capsys: pytest.CaptureFixture[str], argv: list[str], option: str) -> None:
    assert main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option}") and err.count("\n") == 1, err


def test_command_line_checks_outputs_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("mine")
    cases = [
        (["--record", str(tmp_path / "missing" / "r.json")], "--record", "does not exist"),
        (["--csv", str(tmp_path)], "--csv", "it is a folder"),
        (["--record", str(a_file / "r.json")], "--record", "does not exist"),
    ]
    for argv, option, why in cases:
        t = time.monotonic()
        assert main(["run", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {option} ") and why in err and "no run is lost" in err, err
        assert time.monotonic() - t < 30  # refused before any worker started (a run takes far longer)
    assert a_file.read_text() == "mine"  # the probe never truncates
    assert main(["run", "--trace-dir", str(a_file)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --trace-dir {a_file}: ") and "it is a file" in err
    assert not list(tmp_path.glob("missing"))


def test_write_probes(tmp_path: Path) -> None:
    assert _launch.file_problem(tmp_path / "new.json") is None
    assert not (tmp_path / "new.json").exists()  # the probe removes what it created
    kept = tmp_path / "kept.json"
    kept.write_text("data")
    assert _launch.file_problem(kept) is None and kept.read_text() == "data"
    assert "folder" in (_launch.file_problem(tmp_path) or "")
    assert _launch.folder_problem(tmp_path / "a" / "b") is None and (tmp_path / "a" / "b").is_dir()
    assert list((tmp_path / "a" / "b").iterdir()) == []
    assert "is a file" in (_launch.folder_problem(kept) or "")
    if os.geteuid() != 0:  # the superuser may write anywhere; the probe is real, so it would say so
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            assert _launch.file_problem(ro / "x.json") is not None
        finally:
            ro.chmod(0o700)


def test_oversubscription_warning_without_measuring() -> None:
    cores = cpu_count()
    cfg = lab.LabConfig(ranks=cores + 2, microbatches=cores + 2)
    (text,) = _launch.preflight(cfg, measure=False)
    assert f"{cores + 2} ranks x 1 thread on {cores} CPU core" in text and "oversubscribed" in text
    assert _launch.preflight(lab.LabConfig(ranks=2, threads=1), measure=False) == [] or cores < 2
    threads = lab.LabConfig(ranks=2, threads=cores)  # 2 x cores threads
    assert "oversubscribed 2.0x" in _launch.preflight(threads, measure=False)[0]


def test_option_names_cover_the_parser() -> None:
    ap = build_parser()
    run = ap._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    options = {o for a in run._actions for o in a.option_strings}
    assert set(OPTION_NAMES.values()) <= options


# ------------------------------------------------------------------------- progress board
def test_progress_board_and_the_stuck_rank(tmp_path: Path) -> None:
    board = _progress.ProgressBoard(tmp_path / "p.bin", 3, create=True)
    try:
        t0 = time.perf_counter_ns()
        assert [p.phase for p in board.read()] == [_progress.STARTING] * 3
        culprit, text = _progress.describe_stall(board.read(), t0, [True] * 3)
        assert culprit is None and "rank 0 was still starting" in text
        board.write(0, _progress.STEPPING, 0, 3, 3, 0, "F", 2)  # waiting after 0F2
        board.write(1, _progress.STEPPING, 0, 2, 1, 1, "F", 1)  # inside 1F1
        board.write(2, _progress.STEPPING, 0, 1, 1, 2, "F", 0)  # waiting after 2F0
        got = board.read()
        assert got[1].action == "1F1" and got[1].inside_action and not got[0].inside_action
        culprit, text = _progress.describe_stall(got, time.perf_counter_ns(), [True] * 3)
        assert culprit == 1 and "rank 1 was inside its action 1F1 (step 0)" in text
        assert "rank 0 had finished 0F2" in text and "waiting" in text
        # every rank waiting: the one whose last progress is the oldest stopped first
        board.write(1, _progress.STEPPING, 0, 2, 2, 1, "F", 1)
        board.write(0, _progress.STEPPING, 0, 3, 3, 0, "F", 2)
        board.write(2, _progress.STEPPING, 0, 1, 1, 2, "F", 0)
        culprit, _ = _progress.describe_stall(board.read(), time.perf_counter_ns(), [True] * 3)
        assert culprit == 1
        # a rank that had exited is not blamed
        culprit, text = _progress.describe_stall(board.read(), time.perf_counter_ns(), [True, False, True])
        assert culprit == 0 and "rank 1 had exited" in text
    finally:
        board.close()


def test_cli_parser_has_no_option_torchrun_would_take() -> None:
    ap = build_parser()
    ns = ap.parse_args(["run", "--schedule", "GPipe", "--ranks", "2", "--microbatches", "8", "--chunks", "1"])
    cfg = config_from_args(ns)
    assert (cfg.schedule, cfg.ranks, cfg.microbatches, cfg.v) == ("GPipe", 2, 8, 1)
    options = {o for a in ap._subparsers._group_actions[0].choices["run"]._actions  # type: ignore[union-attr]
               for o in a.option_strings}
    assert "--m" not in options and "--microbatches" in options
    assert not any(len(o) == 2 and o != "-h" for o in options)  # no single-letter options


def test_record_round_trip_without_torch(tmp_path: Path) -> None:
    """A record made from a simulation reads back as the same timelines (the record format)."""
    cfg = lab.LabConfig(schedule="1F1B", ranks=2, microbatches=4, steps=2, warmup=1)
    sim = bk.simulate(bk.schedule("1f1b", 2, 4), bk.Costs(f=3.0, b=6.0, comm=0.5, unit="ms"))
    events = []
    for step in range(3):
        for sp in sim.spans():
            base = 10**9 * (step + 1)
            events.append([sp.rank, step, sp.action.stage, sp.action.kind, sp.action.microbatch,
                           base + int(float(sp.start) * 1e6), base + int(float(sp.end) * 1e6)])
    record = {"format": "bubblekit-lab-record/1", "config": cfg.to_dict(), "events": events,
              "torch_static_orders": {"0": [str(a) for a in sim.schedule.orders[0]], "1": []}}
    res = lab.LabResult.from_record(record)
    assert len(res.steps) == 2 and res.schedule is not None
    for tl in res.steps:
        assert tl.bubble_ratio == pytest.approx(sim.bubble_ratio)
    chk = res.order_check()
    assert chk["bubblekit_matches"] and chk["steps_agree"] and chk["torch_static_matches"] is False
    cmp_ = res.compare()
    assert cmp_.calibrated == pytest.approx(cmp_.measured)
    res.save(tmp_path / "r.json")
    again = lab.LabResult.load(tmp_path / "r.json")
    assert again.bubble_ratios == res.bubble_ratios
    csv_steps = read_csv(res.to_csv(tmp_path / "r.csv"), step=1)
    assert csv_steps.bubble_ratio == pytest.approx(res.steps[1].bubble_ratio)
    assert "measured bubble_ratio per step" in res.summary()
    with pytest.raises(ValueError, match="not a bubblekit lab record"):
        lab.LabResult.from_record({"format": "other"})


def test_median_step_and_median_ratio_agree_for_an_even_count() -> None:
    """With two steps the printed median is the median step's own ratio (the lower one), as in compare()."""
    cfg = lab.LabConfig(schedule="1F1B", ranks=2, microbatches=4, steps=2, warmup=1)
    sims = [bk.simulate(bk.schedule("1f1b", 2, 4), bk.Costs(f=3.0, b=6.0, comm=c, unit="ms")) for c in (0.5, 0.5, 2.0)]
    events = []
    for step, sim in enumerate(sims):
        base = 10**9 * (step + 1)
        for sp in sim.spans():
            events.append([sp.rank, step, sp.action.stage, sp.action.kind, sp.action.microbatch,
                           base + int(float(sp.start) * 1e6), base + int(float(sp.end) * 1e6)])
    res = lab.LabResult.from_record({"format": "bubblekit-lab-record/1", "config": cfg.to_dict(), "events": events})
    ratios = res.bubble_ratios
    assert len(ratios) == 2 and ratios[0] != ratios[1]
    assert res.median_bubble_ratio == res.median_step.bubble_ratio == min(ratios)
    assert res.compare().measured == pytest.approx(res.median_bubble_ratio)
    assert f"median step {res.median_bubble_ratio:.4f}" in res.summary()


# ------------------------------------------- any schedule, through PyTorch's _PipelineScheduleRuntime
#: A learner's schedule: split backward, W passes late on rank 1 (no registered schedule has this order).
LEARNERS = "rank 0: 0F0 0F1 0I0 0I1 0W0 0W1\nrank 1: 1F0 1I0 1F1 1I1 1W1 1W0"


def test_registered_schedules_without_a_class_run_from_their_csv() -> None:
    """Every registered schedule reaches the lab: by its PyTorch class, or by the runtime from its CSV."""
    for name in bk.names():
        entry = bk.spec(name)
        m = 8
        try:
            cfg = lab.LabConfig(schedule=name, ranks=2, microbatches=m)
        except ValueError as exc:
            assert bk.schedule(name, 2, m).pipes > 1, (name, exc)  # only DualPipe's two pipes are refused
            assert f"the lab cannot run {name!r}" in str(exc) and "2 pipelines" in str(exc)
            continue
        if entry.torch_class is not None:
            assert cfg.info.torch_class == entry.torch_class and cfg.orders is None
            continue
        sched = bk.schedule(name, 2, m)
        assert cfg.info is lab.RUNTIME and cfg.schedule == name
        assert cfg.orders == sched.to_torch_csv()
        assert cfg.placement() == sched.placement and cfg.n_stages == sched.n_stages and cfg.v == sched.v
        assert lab.LabConfig(**cfg.to_dict()) == cfg  # what the worker reads back


def test_a_learners_schedule_is_checked_before_any_worker() -> None:
    mine = bk.Schedule.from_text(LEARNERS, name="mine")
    cfg = lab.LabConfig.for_schedule(mine, steps=1)
    assert (cfg.schedule, cfg.ranks, cfg.microbatches, cfg.placement()) == ("mine", 2, 2, (0, 1))
    assert cfg.runtime_schedule.orders == mine.orders
    stuck = bk.Schedule.from_text("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1B1 1F0 1B0", name="stuck")
    with pytest.raises(ValueError, match="the lab cannot run 'stuck'.*cannot place the sends and receives") as info:
        lab.LabConfig.for_schedule(stuck)
    assert field_of(info.value) == "schedule"
    with pytest.raises(ValueError, match="cannot run 'dualpipe'.*2 pipelines"):
        lab.LabConfig.for_schedule(bk.schedule("dualpipe", 2, 4))
    with pytest.raises(ValueError, match="it has 1 rank; a pipeline run needs ranks >= 2"):
        lab.LabConfig.for_schedule(bk.Schedule.from_text("rank 0: 0F0 1F0 1B0 0B0"))
    with pytest.raises(ValueError, match="ranks=3 but the schedule 'mine' has ranks=2") as info:
        lab.LabConfig.for_schedule(mine, ranks=3)
    assert field_of(info.value) == "ranks"
    with pytest.raises(TypeError, match="schedule must be a schedule name \\(str\\) or a bubblekit Schedule"):
        lab.LabConfig.for_schedule("1f1b")
    with pytest.raises(TypeError, match="orders is given by the Schedule itself"):
        lab.LabConfig.for_schedule(mine, orders="0F0")


def test_runtime_record_round_trip_without_torch() -> None:
    """A record of a schedule run from its CSV compares with that schedule (pairs run split, as PyTorch runs them)."""
    cfg = lab.LabConfig.for_schedule(bk.schedule("dualpipev", 2, 4), steps=1, warmup=0)
    executed = bk.schedule("dualpipev", 2, 4).split_pairs()
    sim = bk.simulate(executed, bk.Costs(f=1.0, b=2.0, unit="ms"))
    events = [[sp.rank, 0, sp.action.stage, sp.action.kind, sp.action.microbatch, int(float(sp.start) * 1e6),
               int(float(sp.end) * 1e6)] for sp in sim.spans()]
    record = {"format": "bubblekit-lab-record/1", "config": cfg.to_dict(), "events": events}
    res = lab.LabResult.from_record(record)
    assert res.schedule is not None and res.config.info is lab.RUNTIME
    assert (res.schedule.orders, res.schedule.placement) == (executed.orders, executed.placement)
    assert res.order_check()["bubblekit_matches"] is True
    swapped = [e if e[2:5] not in ([0, "F", 0], [0, "F", 1]) else [*e[:4], 1 - e[4], *e[5:]] for e in events]
    res = lab.LabResult.from_record({**record, "events": swapped})
    assert res.order_check()["bubblekit_matches"] is False


def test_command_line_schedule_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--schedule-file``: a PyTorch CSV (a learner's) is read and checked before any worker; errors name the option."""
    mine = tmp_path / "mine.csv"
    bk.Schedule.from_text(LEARNERS).to_torch_csv(mine)
    ns = build_parser().parse_args(["run", "--schedule-file", str(mine), "--steps", "1"])
    cfg = config_from_args(ns)
    assert (cfg.schedule, cfg.ranks, cfg.microbatches, cfg.info) == ("mine", 2, 2, lab.RUNTIME)
    stuck = tmp_path / "stuck.csv"
    stuck.write_text("0F0,0B0,0F1,0B1\r\n1F1,1B1,1F0,1B0\r\n", encoding="utf-8")
    for argv, start in [
        (["--schedule-file", str(tmp_path / "none.csv")], "--schedule-file"),
        (["--schedule-file", str(stuck)], f"--schedule-file {stuck}: the lab cannot run 'stuck'"),
        (["--schedule-file", str(mine), "--ranks", "3"], "--ranks 3: ranks=3 but the schedule 'mine' has ranks=2"),
        (["--schedule-file", str(mine), "--microbatches", "3"], "--microbatches 3: microbatches=3 but the schedule"),
        (["--schedule-file", str(mine), "--chunks", "2"], "--chunks 2: the file's schedule has v=1"),
    ]:
        assert main(["run", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {start}") and err.count("\n") == 1, err


def test_command_line_lists_what_the_runtime_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedules"]) == 0
    out = capsys.readouterr().out
    runtime = next(line for line in out.splitlines() if "_PipelineScheduleRuntime" in line)
    assert all(n in runtime for n in ("zb-h2", "v-half", "v-min")) and "dualpipe" not in runtime
    assert "dualpipe: it runs 2 pipelines" in out


# ------------------------------------------------------------------- real runs
@pytest.mark.torch
@torch_only
@pytest.mark.parametrize("name", ["zb-h2", "v-min", "v-half"])
def test_registered_schedules_run_through_pytorchs_runtime(name: str) -> None:
    """bubblekit's own orders, with no PyTorch class, run as PyTorch's runtime lowers their CSV (issue 26)."""
    res = lab.run(name, ranks=2, microbatches=8, steps=1, warmup=0, **TINY)
    print(f"{name}: measured bubble_ratio per step {[round(b, 3) for b in res.bubble_ratios]}")
    chk = res.order_check()
    assert res.config.info.torch_class == "_PipelineScheduleRuntime"
    assert chk["bubblekit_matches"] is True, chk["bubblekit_differences"]
    assert chk["torch_static_matches"] is True  # what PyTorch loaded is the file bubblekit wrote
    assert res.schedule is not None and res.schedule.orders == bk.schedule(name, 2, 8).orders


@pytest.mark.torch
@torch_only
def test_overlapped_pairs_run_through_the_runtime_as_two_parts() -> None:
    """A Schedule with pairs (DualPipeV's) runs through the runtime: each OVERLAP_F_B as forward, then backward."""
    sched = bk.schedule("dualpipev", 2, 8)
    res = lab.run(sched, steps=1, warmup=0, **TINY)
    chk = res.order_check()
    assert res.config.info is lab.RUNTIME and chk["bubblekit_matches"] is True, chk["bubblekit_differences"]
    assert [list(o) for o in res.executed_orders] == [list(o) for o in sched.split_pairs().orders]


@pytest.mark.torch
@torch_only
def test_a_learners_schedule_runs() -> None:
    mine = bk.Schedule.from_text(LEARNERS, name="mine")
    res = lab.run(mine, steps=1, warmup=0, **TINY)
    chk = res.order_check()
    assert chk["bubblekit_matches"] is True, chk["bubblekit_differences"]
    assert [list(o) for o in res.executed_orders] == [list(o) for o in mine.orders]


@pytest.mark.torch
@torch_only
@pytest.mark.parametrize("name", list(lab.TORCH_SCHEDULES))
def test_two_rank_run_executes_bubblekits_order(name: str) -> None:
    res = lab.run(name, ranks=2, microbatches=4, steps=2, warmup=0, **TINY)
    print(f"{name}: measured bubble_ratio per step {[round(b, 3) for b in res.bubble_ratios]}")
    chk = res.order_check()
    assert chk["steps_agree"]
    assert res.schedule is not None, f"bubblekit has no registered counterpart of {name}"
    assert chk["bubblekit_matches"], chk["bubblekit_differences"]
    if name == "1F1B":  # documented: the static IR is wrong on the last rank, the runtime is right
        assert chk["torch_static_matches"] is False
        assert all(d.startswith("rank 1:") for d in chk["torch_static_differences"])
    else:
        assert chk["torch_static_matches"], chk["torch_static_differences"]
    for tl in res.steps:
        assert tl.p == 2 and 0 <= tl.bubble_ratio < 1
        assert sum(len(o) for o in tl.orders) == res.schedule.n_actions


@pytest.mark.torch
@torch_only
def test_trace_reader_matches_the_labs_own_record(tmp_path: Path) -> None:
    from test_traces import assert_trace_matches_record

    res = lab.run("Interleaved1F1B", ranks=2, microbatches=4, steps=1, warmup=1, trace_dir=str(tmp_path), **TINY)
    files = sorted(tmp_path.glob("rank*.json"))
    assert len(files) == 2
    tl = read_trace(tmp_path)
    assert tl.family == "compute" and tl.offsets_ms == (0.0, 0.0)
    assert_trace_matches_record(tl, res.steps[-1])
    pp = read_trace(tmp_path, pattern="pp")  # PyTorch's own PP: ranges, receive waits trimmed
    assert pp.orders == tl.orders


@pytest.mark.torch
@torch_only
def test_command_line_run(tmp_path: Path) -> None:
    """A 3-rank run from the shell: CSV and record written; on fewer than 3 cores a warning comes first."""
    csv_path, record_path = tmp_path / "run.csv", tmp_path / "run.json"
    out = subprocess.run(
        [sys.executable, "-m", "bubblekit.lab", "run", "--schedule", "GPipe", "--ranks", "3", "--microbatches", "3",
         "--steps", "1", "--warmup", "0", "--hidden", "32", "--seq", "16", "--csv", str(csv_path),
         "--record", str(record_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "measured bubble_ratio per step" in out.stdout and "calibrated" in out.stdout
    assert "peak memory per rank (resident)" in out.stdout
    assert read_csv(csv_path).orders == bk.schedule("gpipe", 3, 3).orders
    assert lab.LabResult.load(record_path).config.ranks == 3
    if cpu_count() < 3:
        assert out.stderr.startswith("warning: 3 ranks x 1 thread on") and "each rank takes ~" in out.stderr
    else:
        assert "oversubscribed" not in out.stderr
    bad = subprocess.run([sys.executable, "-m", "bubblekit.lab", "run", "--schedule", "Nope"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown schedule" in bad.stderr


@pytest.mark.torch
@torch_only
def test_failures_are_reported_and_workers_reaped() -> None:
    # Schedule1F1B refuses m < p: the rank's error reaches the caller
    with pytest.raises(lab.LabRunError, match="rank . exited with code"):
        lab.run("1F1B", ranks=2, microbatches=1, steps=1, warmup=0, **TINY)
    with pytest.raises(lab.LabRunError, match="passed its limit of 0.3 s.*still starting"):
        lab.run("GPipe", ranks=2, microbatches=2, steps=1, warmup=0, **{**TINY, "timeout_s": 0.3})


@pytest.mark.torch
@torch_only
def test_a_timed_out_run_names_the_stuck_rank() -> None:
    """Rank 1 never finishes 1F1 (fault injection): the message names rank 1, not "ranks [0, 1]"."""
    with pytest.raises(lab.LabRunError) as info:
        lab.run("1F1B", ranks=2, microbatches=4, steps=1, warmup=0,
                **{**TINY, "timeout_s": 30.0, "extra": {"stall_action": "1F1"}})
    text = str(info.value)
    print(text)
    assert "Rank 1 stopped progressing" in text and "rank 1 was inside its action 1F1" in text
    assert "rank 0 had finished" in text and "[0, 1]" not in text


@pytest.mark.torch
@torch_only
def test_nccl_without_cuda_is_refused_before_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    if _launch.cuda_device_count() > 0:
        pytest.skip("this machine has CUDA GPUs")
    with pytest.raises(ValueError, match="'nccl' needs CUDA GPUs; this machine has none: use --backend gloo") as info:
        lab.run("GPipe", ranks=2, microbatches=2, backend="nccl", **TINY)
    assert field_of(info.value) == "backend"
    assert main(["run", "--backend", "nccl"]) == 2
    assert capsys.readouterr().err.startswith("error: --backend nccl: backend 'nccl' needs CUDA GPUs")


@pytest.mark.torch
@torch_only
def test_oversubscription_warning_measures_a_rank() -> None:
    cores = cpu_count()
    cfg = lab.LabConfig(ranks=cores + 1, microbatches=cores + 1, hidden=32, seq=16)
    (text,) = _launch.preflight(cfg)
    print(text)
    assert "oversubscribed" in text and "each rank takes ~" in text and f"for {cores + 1} ranks" in text
    per_rank = _launch.measure_rank_memory(cfg)
    assert per_rank is not None and per_rank > 10_000_000  # torch alone is tens of MB


def test_record_is_saved_even_when_its_path_breaks_after_the_run(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The record is written first; if its path fails at the end, it goes to a temporary file instead."""
    from bubblekit.lab import cli

    record_path = tmp_path / "gone" / "r.json"
    (tmp_path / "gone").mkdir()
    ns = build_parser().parse_args(["run", "--record", str(record_path)])
    (tmp_path / "gone").rmdir()  # the folder disappears while the run is going
    cfg = lab.LabConfig(schedule="GPipe", ranks=2, microbatches=2, steps=1, warmup=0)
    sim = bk.simulate(bk.schedule("gpipe", 2, 2), bk.Costs(f=1.0, b=2.0, unit="ms"))
    events = [[sp.rank, 0, sp.action.stage, sp.action.kind, sp.action.microbatch, int(float(sp.start) * 1e6),
               int(float(sp.end) * 1e6)] for sp in sim.spans()]
    record = {"format": "bubblekit-lab-record/1", "config": cfg.to_dict(), "events": events}
    assert cli._finish(record, ns) == 0
    err = capsys.readouterr().err
    assert "could not write the record" in err
    saved = Path(err.split("saved it to ")[1].strip())
    try:
        assert lab.LabResult.load(saved).bubble_ratios == lab.LabResult.from_record(record).bubble_ratios
    finally:
        saved.unlink()
    # no --record and the CSV's folder is gone: the record goes to a temporary file, named
    ns = build_parser().parse_args(["run", "--csv", str(tmp_path / "gone" / "r.csv")])
    assert cli._finish(record, ns) == 0
    err = capsys.readouterr().err
    assert "could not write the CSV" in err and ".to_csv(path)" in err
    saved = Path(err.split("the run's record is in ")[1].split(":")[0])
    try:
        assert lab.LabResult.load(saved).bubble_ratios == lab.LabResult.from_record(record).bubble_ratios
    finally:
        saved.unlink()
