"""DualPipe and DualPipeV with overlapped F&B pairs as units: orders, the README's bubble, memory, messages.

* Orders: equal, action for action and pair for pair, to the orders recorded from DeepSeek's
  ``dualpipe.py`` / ``dualpipev.py`` (``tests/data/dualpipe_orders.json``, provenance in
  ``tests/data/README.md``); PyTorch 2.13's ``ScheduleDualPipeV`` is compared in
  ``tests/test_torch_orders.py``.
* The DualPipe README's bubble ``(PP/2 - 1)(F&B + B - 3W)`` (B = full backward, F&B = an
  overlapped pair) is the largest idle time of a rank over the step (makespan minus the rank's
  busy time), exactly, for PP in {4, 8, 16}, several m, every F&B from max(F, B) to F + B,
  **when I = F (so B = F + W) and W <= F**; outside that (I != F) it is not exact, and with the
  pairs split into F then B it is not reached either.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction as Fr
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit.actions import Action, Pair, parts
from bubblekit.schedules.dualpipe import dualpipe_rank_order

DATA = json.loads((Path(__file__).parent / "data" / "dualpipe_orders.json").read_text(encoding="utf-8"))


def readme_bubble(pp: int, f: Fr, b: Fr, w: Fr, fb: Fr) -> Fr:
    """The README's ``(PP/2 - 1)(F&B + B - 3W)`` (chunk times)."""
    return (Fr(pp, 2) - 1) * (fb + b - 3 * w)


def run(name: str, ranks: int, m: int, f: Fr, i: Fr, w: Fr, fb: Fr | str | None = None,
        split_pairs: bool = False) -> bk.SimResult:
    """Simulate with per-chunk times f, i, w (B = i + w) and the pair time fb (a chunk time, or "max")."""
    s = bk.schedule(name, ranks, m)
    if split_pairs:
        s = bk.Schedule(s.name, s.p, s.m, s.placement, tuple(tuple(x for a in o for x in parts(a)) for o in s.orders),
                        pipes=s.pipes)
    c = s.chunks_per_microbatch  # a scalar cost is a rank's share: c chunks per microbatch
    extra: dict[str, object] = {}
    if fb == "max":
        extra["fb"] = "max"
    elif fb is not None:
        extra["fb"] = fb * c
    return bk.simulate(s, bk.Costs(f=f * c, i=i * c, w=w * c, **extra))  # type: ignore[arg-type]


def readme_pp(name: str, ranks: int) -> int:
    """The README's PP: stages of one pipeline (DualPipe: = ranks; DualPipeV: 2 x ranks)."""
    return ranks if name == "dualpipe" else 2 * ranks


# ------------------------------------------------------------------------------- orders
@pytest.mark.parametrize("key", sorted(DATA["cases"]))
def test_orders_equal_deepseeks(key: str) -> None:
    case = DATA["cases"][key]
    s = bk.schedule(case["schedule"], case["p"], case["m"])
    assert [" ".join(map(str, o)) for o in s.orders] == case["orders"]
    assert s.has_pairs and any(type(a) is Pair for o in s.orders for a in o)


def test_dualpipe_is_dualpipev_folded() -> None:
    """DualPipe rank r runs DualPipeV's order for position min(r, PP-1-r) of PP/2 ranks with m/2
    microbatches: the same steps, its two chunks being its two directions ("cut in half")."""
    for pp, m in [(2, 4), (4, 8), (4, 14), (8, 16), (8, 30), (16, 32)]:
        d = bk.schedule("dualpipe", pp, m)
        v = bk.schedule("dualpipev", pp // 2, m // 2)
        for r in range(pp):
            h = min(r, pp - 1 - r)
            mine = (r, 0) if r < pp // 2 else (2 * pp - 1 - r, m // 2)
            other = (2 * pp - 1 - r, m // 2) if r < pp // 2 else (r, 0)
            assert d.orders[r] == dualpipe_rank_order(pp // 2, m // 2, h, mine, other)
            rename = {v.orders[h][0].stage: mine[0], pp - 1 - h: other[0]}  # V stage -> DualPipe stage
            shift = {mine[0]: mine[1], other[0]: other[1]}

            def moved(a: Action, rename: dict[int, int] = rename, shift: dict[int, int] = shift) -> Action:
                s = rename[a.stage]
                return Action(s, a.kind, a.microbatch + shift[s])

            folded = tuple(Pair(moved(a.forward), moved(a.backward)) if type(a) is Pair else moved(a)
                           for a in v.orders[h])
            assert d.orders[r] == folded, (pp, m, r)


def test_m_rules() -> None:
    for p in range(1, 9):
        assert bk.legal_ms("dualpipev", p, up_to=6 * p) == list(range(2 * p, 6 * p + 1))
        ms = bk.legal_ms("dualpipe", p, up_to=6 * p)
        assert ms == ([m for m in range(2 * p, 6 * p + 1, 2)] if p % 2 == 0 else [])
    with pytest.raises(ValueError, match=r"m=8 cannot run on p=3 ranks.*even number of ranks"):
        bk.schedule("dualpipe", 3, 8)
    with pytest.raises(ValueError, match=r"m=9 .*m even and m >= 2p = 8"):
        bk.schedule("dualpipe", 4, 9)
    with pytest.raises(ValueError, match=r"m=6 .*m >= 2p = 8"):
        bk.schedule("dualpipe", 4, 6)


def test_placement_and_pipes() -> None:
    d, v = bk.schedule("dualpipe", 4, 8), bk.schedule("dualpipev", 4, 8)
    assert d.placement == v.placement == (0, 1, 2, 3, 3, 2, 1, 0)
    assert (d.pipes, v.pipes) == (2, 1) and d.v == v.v == 2
    assert d.chunks_per_microbatch == 1 and v.chunks_per_microbatch == 2
    assert list(d.microbatches_of(0)) == [0, 1, 2, 3] and list(d.microbatches_of(4)) == [4, 5, 6, 7]
    assert d.stages_of(0) == (0, 7) and d.stages_of(3) == (3, 4)


# ----------------------------------------------------------------- the README's bubble
_FB_SHARE = (Fr(0), Fr(1, 2), Fr(1))  # F&B = max(F, B) + share * min(F, B): perfect overlap .. none


def _cost_grid() -> list[tuple[Fr, Fr, Fr, Fr]]:
    """(F, I, W, F&B) with I = F and W <= F, F&B from max(F, B) to F + B."""
    out = []
    for f, w in [(Fr(1), Fr(1)), (Fr(1), Fr(0)), (Fr(2), Fr(1)), (Fr(1), Fr(1, 2)), (Fr(3, 2), Fr(3, 2))]:
        b = f + w
        out += [(f, f, w, max(f, b) + share * min(f, b)) for share in _FB_SHARE]
    return out


@pytest.mark.parametrize("pp,ms", [(4, (8, 10, 12, 16)), (8, (16, 20, 32)), (16, (32, 40, 120))])
def test_readme_bubble_reproduced_exactly(pp: int, ms: tuple[int, ...]) -> None:
    """max over ranks of (makespan - busy) = (PP/2 - 1)(F&B + B - 3W), DualPipe on PP ranks and
    DualPipeV on PP/2 ranks, when I = F and W <= F."""
    for m, (f, i, w, fb) in itertools.product(ms, _cost_grid()):
        b = i + w
        want = readme_bubble(pp, f, b, w, fb)
        for name, ranks, mm in (("dualpipe", pp, m), ("dualpipev", pp // 2, m // 2)):
            r = run(name, ranks, mm, f, i, w, fb)
            assert max(r.idle) == want, (name, ranks, mm, f, i, w, fb, r.idle)


def test_readme_headline_pp16_m120() -> None:
    """PP = 16, m = 120, F = 1, B = 2, W = 1, F&B = F + B: a 374-slot step, 14 idle slots on every rank;
    with perfect overlap (F&B = max(F, B) = 2) the middle ranks idle 7 slots."""
    r = run("dualpipe", 16, 120, Fr(1), Fr(1), Fr(1))
    assert r.makespan == 374 and set(r.idle) == {14} == {readme_bubble(16, Fr(1), Fr(2), Fr(1), Fr(3))}
    v = run("dualpipev", 8, 60, Fr(1), Fr(1), Fr(1))
    assert v.makespan == 374 and set(v.idle) == {14}
    over = run("dualpipe", 16, 120, Fr(1), Fr(1), Fr(1), "max")
    assert max(over.idle) == 7 == readme_bubble(16, Fr(1), Fr(2), Fr(1), Fr(2)) and min(over.idle) == 1


def test_makespan_closed_form() -> None:
    """T = (n - PP - 1) F&B + (PP + 1)(F + B) + (PP/2 - 1)(F&B + B - 3W), n = chunk forwards per rank
    (DualPipe m, DualPipeV 2m), when I = F and W <= F."""
    for pp, m in [(4, 8), (4, 12), (8, 20), (16, 40)]:
        for f, i, w, fb in _cost_grid():
            b = i + w
            for name, ranks, mm, n in (("dualpipe", pp, m, m), ("dualpipev", pp // 2, m // 2, m)):
                t = run(name, ranks, mm, f, i, w, fb).makespan
                assert t == (n - pp - 1) * fb + (pp + 1) * (f + b) + readme_bubble(pp, f, b, w, fb), (name, pp, m)


def test_readme_bubble_stops_holding_when_i_differs_from_f() -> None:
    """With I != F (B = I + W) the formula is not the measured idle time: above it when I < F,
    below it when I > F (PP = 8, m = 20 for instance)."""
    checked = 0
    for pp, m in [(4, 8), (8, 20), (16, 32)]:
        for f, w in [(Fr(1), Fr(1, 2)), (Fr(2), Fr(1)), (Fr(1), Fr(0))]:
            for i in (f * Fr(3, 4), f * Fr(5, 4)):
                b = i + w
                for fb in (max(f, b), f + b):
                    got = max(run("dualpipe", pp, m, f, i, w, fb).idle)
                    want = readme_bubble(pp, f, b, w, fb)
                    assert got != want, (pp, m, f, i, w, fb)
                    assert (got > want) == (i < f), (pp, m, f, i, w, fb, got, want)
                    checked += 1
    assert checked == 36


def test_readme_bubble_needs_the_pair_as_a_unit() -> None:
    """Run each pair as its F then its B (two actions, the old model): less idle than the formula."""
    for pp, m in [(4, 8), (8, 20), (16, 120)]:
        got = max(run("dualpipe", pp, m, Fr(1), Fr(1), Fr(1), split_pairs=True).idle)
        assert got < readme_bubble(pp, Fr(1), Fr(2), Fr(1), Fr(3))
    assert max(run("dualpipe", 16, 120, Fr(1), Fr(1), Fr(1), split_pairs=True).idle) == 7


# ----------------------------------------------------------------- memory, parameters, messages
def test_peak_is_pp_plus_one_chunk_activations() -> None:
    """The README's activation column: PP + 1 chunk activations per device, both schedules."""
    for pp in (2, 4, 6, 8):
        for m in (2 * pp, 2 * pp + 2, 4 * pp):
            d = bk.simulate(bk.schedule("dualpipe", pp, m))
            assert set(d.peak_activations) == {pp + 1}  # one stage per microbatch per rank: 1 chunk = 1.0
            v = bk.simulate(bk.schedule("dualpipev", pp // 2, m))
            assert set(v.peak_activations) == {Fr(pp + 1, 2)}  # two chunks per microbatch per rank: 1 chunk = 0.5


def test_parameters_per_device() -> None:
    """Per device: DualPipe 2 stages of a PP-stage model (two copies overall); DualPipeV 2 stages of a
    PP-stage model on PP/2 devices (one copy); 1F1B on PP devices 1 stage."""
    pp = 8
    d, v, one = bk.schedule("dualpipe", pp, 16), bk.schedule("dualpipev", pp // 2, 16), bk.schedule("1f1b", pp, 16)
    stages_d = d.n_stages // d.pipes
    assert stages_d == pp and all(len(d.stages_of(r)) == 2 for r in range(pp))
    assert d.n_stages / stages_d == 2  # copies of the model
    assert v.n_stages == pp and v.pipes == 1 and all(len(v.stages_of(r)) == 2 for r in range(pp // 2))
    assert all(len(one.stages_of(r)) == 1 for r in range(pp))


def test_messages_per_step() -> None:
    """DualPipe sends 2m(PP-1), the same as 1F1B on PP devices; DualPipeV on R = PP/2 devices sends
    2m(2R-2): twice 1F1B on the same R devices, fewer than 1F1B with the same 2R stages."""
    for pp, m in [(4, 8), (8, 16), (16, 120)]:
        r = pp // 2
        assert bk.schedule("dualpipe", pp, m).hops_per_step == 2 * m * (pp - 1) == bk.schedule("1f1b", pp, m).hops_per_step
        v = bk.schedule("dualpipev", r, m).hops_per_step
        assert v == 2 * m * (2 * r - 2) == 2 * bk.schedule("1f1b", r, m).hops_per_step
        assert v < bk.schedule("1f1b", 2 * r, m).hops_per_step == 2 * m * (2 * r - 1)


# ---------------------------------------------------------------------- text and legality
def test_pairs_in_the_text_format() -> None:
    s = bk.schedule("dualpipev", 3, 6)
    back = bk.Schedule.from_text(s.to_text())
    assert back.orders == s.orders and back.placement == s.placement
    d = bk.schedule("dualpipe", 4, 8)
    back = bk.Schedule.from_text(d.to_text(), pipes=2)
    assert back.orders == d.orders and bk.simulate(back).makespan == bk.simulate(d).makespan
    torch_text = "\n".join(" ".join(x) for x in s.to_torch_orders().values())
    assert "OVERLAP_F_B" in torch_text and bk.Schedule.from_text(torch_text).orders == s.orders
    spaced = bk.Schedule.from_text("rank 0: 0F0 0F1 1F0 1B0 1F1 & 0B0  ( 1B1 ; 0F2 ) 0B1 1F2 1B2 0B2")
    assert Pair(Action(1, "F", 1), Action(0, "B", 0)) in spaced.orders[0]
    assert Pair(Action(0, "F", 2), Action(1, "B", 1)) in spaced.orders[0]  # written backward first: same pair


@pytest.mark.parametrize("text,match", [
    ("rank 0: 0F0 0F1&1F0 0B0\nrank 1: 1B0", r"cannot pair 0F1 with 1F0: both are F"),
    ("rank 0: 0F0 0B0&1B0", r"cannot pair 0B0 with 1B0: both are B"),
    ("rank 0: 0F0&0B0", r"the same stage and microbatch twice"),
    ("rank 0: 0F0 0F1&1I0", r"a forward F then a full backward B"),
    ("rank 0: 0F0 0F1&2B0 0B1\nrank 1: 1F0 1F1 1B0 1B1\nrank 2: 2F0 2B0 2F1 2B1", r"both parts of a pair run on one rank"),
])
def test_illegal_pairs_get_clear_errors(text: str, match: str) -> None:
    with pytest.raises(bk.ScheduleError, match=match):
        bk.Schedule.from_text(text)


def test_illegal_pairs_in_a_schedule() -> None:
    """A pair whose parts sit on another rank, a part also run alone, a wrong pipeline's microbatch."""
    v = bk.schedule("dualpipev", 2, 4)
    orders = [list(o) for o in v.orders]
    k = next(i for i, a in enumerate(orders[0]) if type(a) is Pair)
    pair = orders[0][k]
    orders[1].append(pair)  # the same pair on rank 1 too: its stages are rank 0's
    with pytest.raises(bk.ScheduleError, match=r"rank 1 has .*its part .* but stage \d+ is on rank 0.*same rank|both parts"):
        bk.Schedule("x", 2, 4, v.placement, tuple(map(tuple, orders))).validate()
    orders = [list(o) for o in v.orders]
    orders[0].insert(0, pair.forward)
    with pytest.raises(bk.ScheduleError, match=rf"{pair.forward} appears 2 times \(once inside the pair {pair}\)"):
        bk.Schedule("x", 2, 4, v.placement, tuple(map(tuple, orders))).validate()
    d = bk.schedule("dualpipe", 2, 4)
    wrong = tuple(tuple(Action(a.stage, a.kind, 3) if a == Action(0, "F", 0) else a for a in o) for o in d.orders)
    with pytest.raises(bk.ScheduleError, match=r"microbatches are 0\.\.1 \(stage 0 is in pipeline 0\)"):
        bk.Schedule("x", 2, 4, d.placement, wrong, pipes=2).validate()
    with pytest.raises(bk.ScheduleError, match="pipes=3 must divide"):
        bk.Schedule("x", 2, 4, d.placement, d.orders, pipes=3).validate()


def test_pair_memory_and_timing_rules() -> None:
    """A pair allocates its F's activation at its start and frees its B's at its end; it starts only
    when both inputs are there and makes both outputs at its end."""
    s = bk.Schedule.from_text("rank 0: 0F0 1F0 0F1 1B0 1F1&0B0 1B1 0B1")
    r = bk.simulate(s, bk.Costs(f=2, b=4, fb="max"))  # chunk F = 1, B = 2, pair = 2
    spans = {str(sp.action): (sp.start, sp.end) for sp in r.spans()}
    assert spans["1F1&0B0"] == (5, 7) and r.peak_activations == (1.5,)
    with pytest.raises(ValueError, match=r"fb=1 is outside \[max\(f, b\), f \+ b\] = \[4, 6\]"):
        bk.Costs(f=2, b=4, fb=1)


# --------------------------------------------------------------------------------- traces
def _dualpipev_run() -> bk.SimResult:
    return bk.simulate(bk.schedule("dualpipev", 3, 7), bk.Costs(f=2, i=2, w=1, fb="max"))


def test_traces_read_pairs_back_from_csv_and_chrome(tmp_path: Path) -> None:
    """bubblekit's CSV (a pair's row: 0,0&5,F&B,6&2,...) and Chrome export read back as the same step."""
    from bubblekit import traces

    r = _dualpipev_run()
    csv_path = traces.write_csv(r, tmp_path / "step.csv")
    assert any(",F&B," in line for line in csv_path.read_text().splitlines())
    for measured in (traces.read_csv(csv_path, time_unit="ms"),
                     traces.read_trace(r.to_chrome_trace(tmp_path / "step.json") and tmp_path / "step.json")):
        assert measured.bubble_ratio == pytest.approx(r.bubble_ratio)
        assert [tuple(map(str, o)) for o in measured.orders] == [tuple(map(str, o)) for o in r.schedule.orders]


def test_traces_read_pytorch_overlap_records(tmp_path: Path) -> None:
    """PyTorch names a pair's profiler range PP:(0F7;7B3)OVERLAP_F_B: it is read as one pair action."""
    from bubblekit import traces

    r = _dualpipev_run()
    events: list[dict[str, object]] = []
    for rank in range(r.p):
        events.append({"name": "thread_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}})
        for sp in r.spans(rank):
            a = sp.action
            name = f"PP:({a.forward};{a.backward})OVERLAP_F_B" if type(a) is Pair else f"PP:{a}"  # type: ignore[union-attr]
            events.append({"name": name, "ph": "X", "pid": rank, "tid": 0, "ts": float(sp.start) * 1000,
                           "dur": float(sp.end - sp.start) * 1000})
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"traceEvents": events}))
    measured = traces.read_trace(path, trim=False)
    assert measured.bubble_ratio == pytest.approx(r.bubble_ratio)
    pairs = [a for o in measured.orders for a in o if type(a) is Pair]
    assert len(pairs) == sum(type(a) is Pair for o in r.schedule.orders for a in o) > 0


def test_csv_rejects_a_malformed_pair_row(tmp_path: Path) -> None:
    from bubblekit import traces

    path = tmp_path / "bad.csv"
    path.write_text("rank,stage,kind,microbatch,start,end\n0,0&1,F&B,0,0,1\n")
    with pytest.raises(traces.TraceError, match=r"line 2, column 'microbatch': '0' is not two whole numbers"):
        traces.read_csv(path)
    path.write_text("rank,stage,kind,microbatch,start,end\n0,0&0,F&B,1&1,0,1\n")
    with pytest.raises(traces.TraceError, match="the same stage and microbatch twice"):
        traces.read_csv(path)


# ------------------------------------------------------------------------------ pictures
def test_a_pair_is_drawn_as_one_box_with_both_labels() -> None:
    """plot_pipeline: a pair is one box (its forward's colour) with its backward half below, labelled with both."""
    pytest.importorskip("matplotlib")
    from bubblekit import plotting

    r = bk.simulate(bk.schedule("dualpipe", 4, 8), bk.Costs(f=1, i=1, w=1))
    fig = plotting.plot_pipeline(r, color_by="kind")
    ax = fig.axes[0]
    n_pairs = sum(type(a) is Pair for o in r.schedule.orders for a in o)
    lower = [c for c in ax.collections if c.get_gid() == "pair-backward"]
    assert len(lower) == 1 and len(lower[0].get_paths()) == n_pairs
    labels = [t.get_text() for t in ax.texts if t.get_gid() == "box-label"]
    assert "F3&B5\ns0&s7" in labels  # rank 0's first pair 0F3&7B5: forward microbatch 3, backward 5
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("F&B overlapped pair" in t for t in legend)


def test_an_f_and_b_action_must_be_a_pair() -> None:
    s = bk.Schedule("x", 1, 1, (0,), ((Action(0, "F&B", 0),),))
    for check in (s.validate, s.check_ranges):
        with pytest.raises(bk.ScheduleError, match="kind F&B without its two parts"):
            check()
