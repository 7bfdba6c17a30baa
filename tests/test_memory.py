"""The per-rank memory model in bytes (bubblekit.memory) against published configurations.

* Model state: ZeRO's Figure 1 (Rajbhandari et al., SC 2020, arXiv 1910.02054): Ψ = 7.5B
  parameters, N_d = 64, mixed-precision Adam (K = 12): 120 GB, 31.4 GB, 16.6 GB and 1.9 GB per
  device for the baseline, P_os, P_os+g, P_os+g+p; and §3.1's GPT-2 1.5B: "at least 24 GB", "3 GB
  ... to hold the fp16 parameters alone". Reproduced within 5 % (exactly up to ZeRO's rounding).
* Activations: Korthikanti et al.'s per-layer formula (flash attention, no dropout: 32 s b h) against
  the course's own H200 measurement (bubblekit/data/h200_layer_costs.json), within 0.2 %.
* Per rank: the layout decides the parameters (DualPipe: two copies), the simulator the peak.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit import memory as mem
from bubblekit.analysis import planner

GB = mem.GB


def test_zero_figure_1_per_device_model_states() -> None:
    """ZeRO Figure 1: 7.5B parameters, DP = 64, K = 12 -> 120, 31.4, 16.6, 1.9 GB per device."""
    published = {0: 120, 1: 31.4, 2: 16.6, 3: 1.9}
    for stage, want in published.items():
        got = sum(mem.model_state_bytes(7.5e9, "mixed", dp=64, zero=stage).values()) / GB
        assert got == pytest.approx(want, rel=0.05), (stage, got)
        assert round(got, 1) == want or (stage == 3 and round(got, 2) == 1.88)  # ZeRO rounds 1.875 up to 1.9
    assert sum(mem.model_state_bytes(1.5e9).values()) / GB == 24  # GPT-2 1.5B: "at least 24 GB"
    assert mem.model_state_bytes(1.5e9)["weights"] / GB == 3     # "3 GB ... the fp16 parameters alone"
    assert mem.PRECISIONS["mixed"].total == 16 and mem.PRECISIONS["fp32-grads"].total == 18
    # Megatron's distributed optimizer: 6 + 12/d bytes per parameter with fp32 gradients
    assert sum(mem.model_state_bytes(1, "fp32-grads", dp=8, zero=1).values()) == 6 + 12 / 8


def test_korthikanti_formula_matches_the_h200_measurement() -> None:
    data = json.loads((Path(bk.__file__).parent / "data" / "h200_layer_costs.json").read_text())
    for c in data["configs"]:
        model = mem.Model(layers=1, hidden=c["hidden"], heads=c["heads"], seq=c["seq"])
        measured = c["layer"]["activation_bytes_per_microbatch"]
        assert mem.activation_bytes_per_layer(model) == pytest.approx(measured, rel=0.002)
        assert mem.activation_bytes_per_layer(model, source="h200") == measured
        assert model.params_per_layer == c["layer"]["params"]  # 12h^2 + 13h


def test_korthikanti_table_2_variants() -> None:
    m = mem.Model(layers=1, hidden=12288, heads=96, seq=2048)   # GPT-3 175B's layer, micro-batch 1
    sbh = 2048 * 12288
    scores = 5 * 96 * 2048 * 2048
    assert mem.activation_bytes_per_layer(m, flash=False, dropout=True) == sbh * 34 + scores
    assert mem.activation_bytes_per_layer(m, tp=8, flash=False, dropout=True) == sbh * (10 + 24 / 8) + scores / 8
    assert mem.activation_bytes_per_layer(m, tp=8, sequence_parallel=True, flash=False, dropout=True) == \
        (sbh * 34 + scores) / 8
    assert mem.activation_bytes_per_layer(m, tp=8, sequence_parallel=True, recompute="selective", dropout=True) == \
        sbh * 34 / 8
    assert mem.activation_bytes_per_layer(m, recompute="full") == 2 * sbh


def test_bytes_per_rank_follow_the_layout_and_the_peak() -> None:
    model = mem.Model(layers=32, hidden=4096, heads=32, seq=4096)
    per_layer = mem.activation_bytes_per_layer(model)
    one = mem.memory_per_rank(bk.schedule("1f1b", 8, 16), model)
    dual = mem.memory_per_rank(bk.schedule("dualpipe", 8, 16), model)
    half = mem.memory_per_rank(bk.schedule("dualpipev", 4, 16), model)
    # one microbatch activation = the layers one microbatch passes on a rank: 4 (one stage of 4 layers),
    # but 8 for DualPipeV (two stages per microbatch); DualPipe's two stages are two directions
    cases = ((one, [8 - r for r in range(8)], 4, 4), (dual, [9] * 8, 8, 4), (half, [4.5] * 4, 8, 8))
    for rep, peaks, layers, per_unit in cases:
        for r, rank in enumerate(rep.ranks):
            assert rank.layers == layers
            assert rank.params == layers * model.params_per_layer
            assert rank.state == 16 * rank.params
            assert rank.peak_activations == peaks[r]
            assert rank.activations == pytest.approx(rank.peak_activations * per_unit * per_layer)
    assert dual.ranks[0].params == 2 * one.ranks[0].params  # DualPipe: two copies of the model
    assert dual.max_total > one.max_total


def test_fits_and_its_breakdown() -> None:
    model = mem.Model(layers=32, hidden=4096, heads=32, seq=4096)
    s = bk.schedule("1f1b", 8, 16)
    need = mem.memory_per_rank(s, model).max_total
    assert mem.fits(s, model, need).fits is True
    no = mem.fits(s, model, need - 1)
    assert no.fits is False and no.worst_rank == 0
    table = no.table()
    assert len(table) == 8 and table.column("total")[0] == pytest.approx(need / GB)
    assert "does NOT fit" in str(no) and "16 B/parameter" in str(no)
    assert mem.memory_per_rank(s, model).fits is None


def test_uneven_layout_zero_sharding_and_tp() -> None:
    model = mem.Model(layers=10, hidden=1024, heads=8, seq=1024, vocab=50000)
    s = bk.schedule("1f1b", 4, 8)
    rep = mem.memory_per_rank(s, model, layout=[2, 3, 3, 2])
    assert [r.layers for r in rep.ranks] == [2, 3, 3, 2]
    embed = 50000 * 1024
    assert rep.ranks[0].params == 2 * model.params_per_layer + embed
    assert rep.ranks[3].params == 2 * model.params_per_layer + embed
    sharded = mem.memory_per_rank(s, model, layout=[2, 3, 3, 2], dp=4, zero=1, tp=2)
    assert sharded.ranks[1].optimizer == rep.ranks[1].optimizer / 8
    with pytest.raises(ValueError, match="do not split evenly into 4 stages"):
        mem.memory_per_rank(s, model)
    with pytest.raises(ValueError, match="layout must give 4 stages"):
        mem.memory_per_rank(s, model, layout=[5, 5])


@pytest.mark.parametrize("call,match", [
    (lambda: mem.Model(layers=0, hidden=8, heads=1, seq=8), "layers"),
    (lambda: mem.model_state_bytes(10, "fp8"), "precision must be one of"),
    (lambda: mem.model_state_bytes(10, zero=4), "zero"),
    (lambda: mem.activation_bytes_per_layer(mem.Model(1, 8, 1, 8), recompute="some"), "recompute"),
    (lambda: mem.activation_bytes_per_layer(mem.Model(1, 8, 1, 8), source="h200"), "no measured H200 layer"),
    (lambda: mem.memory_per_rank("1f1b", mem.Model(1, 8, 1, 8)), "schedule must be a bubblekit Schedule"),
    (lambda: mem.fits(bk.schedule("1f1b", 1, 2), mem.Model(1, 8, 1, 8), 0), "gpu_memory"),
])
def test_bad_input_is_named(call: object, match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        call()  # type: ignore[operator]


def test_planner_refuses_what_does_not_fit_the_gpu() -> None:
    model = mem.Model(layers=32, hidden=4096, heads=32, seq=4096)
    need = {name: mem.memory_per_rank(bk.schedule(name, 8, 16), model).max_total for name in ("1f1b", "dualpipe")}
    gpu = (need["1f1b"] + need["dualpipe"]) / 2  # 1F1B fits, DualPipe (two copies) does not
    t = planner.plan(8, schedules=("1f1b", "dualpipe"), ms=(16,), model=model, gpu_memory=gpu)
    by = {c.schedule: c for c in t}
    assert by["1f1b"].fits and by["1f1b"].total_bytes == pytest.approx(need["1f1b"])
    assert not by["dualpipe"].fits and by["dualpipe"].reason.startswith("memory: rank")
    assert "total GB" in t.to_text(show_infeasible=True)
    with pytest.raises(ValueError, match="gpu_memory needs model"):
        planner.plan(8, gpu_memory=gpu)


def test_frontier_table_and_picture() -> None:
    """lesson 07's frontier: one row per schedule on a stated basis, and one distinct point each."""
    model = mem.Model(layers=32, hidden=4096, heads=32, seq=4096)
    same_devices = mem.frontier(model, 4, 16, gpu_memory=80 * GB)
    rows = {r["schedule"]: r for r in same_devices}
    assert set(r["devices"] for r in same_devices) == {4}
    assert rows["DualPipe"]["state"] == pytest.approx(2 * rows["1F1B"]["state"])  # two copies
    assert rows["DualPipe"]["messages"] == rows["1F1B"]["messages"]
    assert rows["DualPipeV"]["messages"] == 2 * rows["1F1B"]["messages"]
    assert rows["V-Min"]["activations"] < rows["V-Half"]["activations"] < rows["1F1B"]["activations"]
    same_stages = {r["schedule"]: r for r in mem.frontier(model, 8, 16, basis="stages")}
    assert same_stages["DualPipeV"]["devices"] == 4 and same_stages["DualPipe"]["devices"] == 8
    assert same_stages["DualPipeV"]["messages"] < same_stages["1F1B"]["messages"]
    with pytest.raises(ValueError, match="basis must be one of"):
        mem.frontier(model, 4, 16, basis="memory")
    pytest.importorskip("matplotlib")
    from bubblekit import plotting

    fig = plotting.plot_frontier(same_devices, gpu_memory_gb=80)
    ax = fig.axes[0]
    points = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("frontier-")]
    assert len(points) == len(same_devices)
    assert len({ln.get_color() for ln in points}) == len(points) and len({ln.get_marker() for ln in points}) == len(points)
