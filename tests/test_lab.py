"""The lab: real ``torch.distributed.pipelining`` runs on CPU (gloo), 2 ranks, tiny models.

Tests marked ``torch`` start real processes and are skipped when torch is missing; the
others check configuration, names and record handling without torch. Bubble ratios of
real runs are printed (``-s``), never asserted against a number: they depend on the machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit import lab
from bubblekit.analysis.traces import read_csv, read_trace
from bubblekit.lab.cli import build_parser, config_from_args

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
            spec = bk.REGISTRY[name]
            assert spec.torch_class in (None, info.torch_class)
    assert lab.bubblekit_name(lab.TORCH_SCHEDULES["1F1B"]) == "1f1b"
    assert lab.bubblekit_name(lab.TORCH_SCHEDULES["Interleaved1F1B"], 3) == "interleaved"


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


# ------------------------------------------------------------------- real runs
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
    csv_path = tmp_path / "run.csv"
    out = subprocess.run(
        [sys.executable, "-m", "bubblekit.lab", "run", "--schedule", "GPipe", "--ranks", "2", "--microbatches", "2",
         "--steps", "1", "--warmup", "0", "--hidden", "32", "--seq", "16", "--csv", str(csv_path)],
        capture_output=True, text=True, timeout=200,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "measured bubble_ratio per step" in out.stdout and "calibrated" in out.stdout
    assert read_csv(csv_path).orders == bk.schedule("gpipe", 2, 2).orders
    bad = subprocess.run([sys.executable, "-m", "bubblekit.lab", "run", "--schedule", "Nope"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown schedule" in bad.stderr


@pytest.mark.torch
@torch_only
def test_failures_are_reported_and_workers_reaped() -> None:
    # Schedule1F1B refuses m < p: the rank's error reaches the caller
    with pytest.raises(lab.LabRunError, match="rank . exited with code"):
        lab.run("1F1B", ranks=2, microbatches=1, steps=1, warmup=0, **TINY)
    with pytest.raises(lab.LabRunError, match="passed its limit"):
        lab.run("GPipe", ranks=2, microbatches=2, steps=1, warmup=0, **{**TINY, "timeout_s": 0.3})
