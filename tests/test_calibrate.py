"""Calibration: a pickup delay on synthetic steps, and the ladder on the shipped samples (no torch needed).

A synthetic "measured" step is simulated with fixed per-rank orders and three gaps, as on
the lab's CPU runs: ``overhead`` before every action, ``latency`` per hop between ranks,
and a ``pickup`` more before an action whose input from another rank arrived while its
rank was busy (the receive is posted late and the transfer needs the busy sender).
:func:`bubblekit.analysis.calibrate.calibrate` must recover the three, and the calibrated
simulation (each stage charged its pickup share) must reproduce the step's bubble.

On the shipped recordings (real CPU runs, a few long stalls among sub-millisecond gaps) the
median statistic must make every row of the comparison ladder move toward the measurement,
where the mean overshoots. On steps whose stalls are most of the bubble (small models on a
busy machine: the lab runs of ``benchmarks/bench_calibration.py``) the median undercharges;
the default, ``"per-kind"``, charges each stall where it happened and must explain both
(lesson 06 shows the benchmark's table).
"""

from __future__ import annotations

import pytest

import bubblekit as bk
from bubblekit.analysis import traces
from bubblekit.analysis.calibrate import (
    BENCHMARK_FORMAT,
    DEFAULT_STATISTIC,
    LADDER,
    STATISTICS,
    BenchmarkCase,
    _compute_only,
    benchmark,
    benchmark_from_data,
    calibrate,
    calibrated_simulation,
    compare_measured,
    jitter_simulation,
    load_benchmark,
    predict,
    prediction_gaps,
    replay,
    step_record,
)
from bubblekit.simulator import Arrival, run_orders
from bubblekit.text import Table


def pickup_timeline(schedule: bk.Schedule, costs: bk.Costs, overhead: float, pickup: float) -> bk.Timeline:
    """A step where a message that arrived while its rank was busy costs ``pickup`` extra.

    The simulator's engine with a timing rule of its own: slots as in
    :func:`bubblekit.simulate` (start at the rank's previous end, or an input's end, plus
    ``costs.comm`` when it comes from another rank); each slot is ``overhead``, the pickup
    when due, then the action (the returned compute-only span).
    """
    rc = costs.resolve(schedule.n_stages, schedule.v)
    lat = float(rc.comm)

    def timing(rank: int, action: bk.Action, free: object, arrivals: list[Arrival]) -> tuple[float, float]:
        now = 0.0 if free is None else float(free)  # type: ignore[arg-type]
        remote = [float(a.end) + lat for a in arrivals if a.rank != rank]
        local = [float(a.end) for a in arrivals if a.rank == rank]
        slot = max([now, *local, *remote])
        due = bool(remote) and free is not None and max(remote) <= now
        d = float(rc.duration(action.stage, action.kind))
        end = slot + overhead + (pickup if due else 0.0) + d
        return end - d, end

    run = run_orders(schedule.orders, schedule.n_stages, timing, missing_inputs="given")
    return bk.Timeline(run.starts, run.ends, [list(o) for o in schedule.orders], unit="ms", source="synthetic pickup")


# Stage 1's forward is slower than stage 0's, and stage 0's backward slower than stage 1's,
# both by more than latency + overhead: in GPipe every forward after the first reaches
# stage 1 while it is busy, and every backward after the first reaches stage 0 while it is.
COSTS = bk.Costs(f=(1.0, 1.5), b=(3.0, 2.0), comm=0.3, unit="ms")
OVERHEAD, PICKUP = 0.2, 1.0


def nonzero(shares: dict[tuple[int, str], float]) -> dict[tuple[int, str], float]:
    return {key: x for key, x in shares.items() if abs(x) > 1e-12}


@pytest.mark.parametrize("statistic", ["per-kind", "median"])
@pytest.mark.parametrize("m", [4, 8, 16, 32])
def test_gpipe_pickup_recovered_and_bubble_exact(m: int, statistic: str) -> None:
    """Both models of the pickup (the median pickup x the share of early messages; each stage's
    own extra gaps) charge GPipe's two receiving stages the same and reproduce the step."""
    s = bk.schedule("gpipe", 2, m)
    tl = pickup_timeline(s, COSTS, OVERHEAD, PICKUP)
    costs, rep = calibrate(tl, s, statistic=statistic)
    assert rep.overhead == pytest.approx(OVERHEAD)
    assert rep.latency == pytest.approx(0.3)
    assert rep.pickup == pytest.approx(PICKUP) and rep.pickup_samples == 2 * (m - 1)
    # the first forward on stage 1 and the first backward on stage 0 waited: 0 for them
    share = PICKUP * (m - 1) / m
    assert nonzero(rep.pickup_shares) == pytest.approx({(0, "B"): share, (1, "F"): share})
    # costs stay duration + overhead (transferable); the pickup is charged in the simulation
    assert costs.f == pytest.approx((1.2, 1.7)) and costs.b == pytest.approx((3.2, 2.2))
    assert costs.extra["pickup"] == pytest.approx(PICKUP)
    sim = calibrated_simulation(tl, s, costs, rep)
    # every charged stage runs back to back, so the per-stage mean adds up to the same total
    assert sim.makespan == pytest.approx(tl.makespan, abs=1e-9)
    assert sim.bubble_ratio == pytest.approx(tl.bubble_ratio, abs=1e-9)
    # the per-action rule reproduces the step exactly too
    assert replay(tl, s, overhead=rep.overhead, latency=rep.latency, pickup=rep.pickup).bubble_ratio == pytest.approx(
        tl.bubble_ratio, abs=1e-9)
    assert jitter_simulation(tl, s, draws=2).bubble_ratio == pytest.approx(tl.bubble_ratio, abs=1e-9)
    # without the pickup, the simulation undercharges GPipe's critical path: 2 (m - 1) pickups
    old = _compute_only(bk.simulate(s, costs), s.orders, rep.overhead, "no pickup")
    assert tl.makespan - old.makespan == pytest.approx(2 * (m - 1) * PICKUP)


@pytest.mark.parametrize("m", [4, 8, 16, 32])
@pytest.mark.parametrize("f, b", [((1.0, 1.5), (2.0, 3.5)), ((1.65, 1.17), (3.83, 3.43)), ((1.3, 1.18), (3.41, 2.69))])
def test_1f1b_pickup_within_tolerance(m: int, f: tuple[float, float], b: tuple[float, float]) -> None:
    """1F1B alternates F and B, so on nearly equal stages which messages arrive early varies
    along the step and the per-stage mean is an approximation: within 0.03 of the bubble
    ratio (the worst of 200 random 2-rank cases was 0.029, at m = 4; exact when one stage
    is clearly slower, the first cost set). GPipe cases came out exact."""
    s = bk.schedule("1f1b", 2, m)
    tl = pickup_timeline(s, bk.Costs(f=f, b=b, comm=0.3, unit="ms"), OVERHEAD, PICKUP)
    costs, rep = calibrate(tl, s, statistic="median")
    assert rep.overhead == pytest.approx(OVERHEAD)
    assert rep.pickup == pytest.approx(PICKUP)
    assert any(x > 0 for x in rep.pickup_shares.values())
    sim = calibrated_simulation(tl, s, costs, rep)
    assert sim.bubble_ratio == pytest.approx(tl.bubble_ratio, abs=0.03)
    if f == (1.0, 1.5):
        assert sim.bubble_ratio == pytest.approx(tl.bubble_ratio, abs=1e-9)
    old = _compute_only(bk.simulate(s, costs), s.orders, rep.overhead, "no pickup")
    if m >= 8:  # at m = 4 on near-equal stages the mean can overshoot by more than leaving it out
        assert abs(sim.bubble_ratio - tl.bubble_ratio) < abs(old.bubble_ratio - tl.bubble_ratio)


@pytest.mark.parametrize("statistic", STATISTICS)
def test_no_pickup_gives_zero_and_the_old_simulation(statistic: str) -> None:
    s = bk.schedule("gpipe", 2, 8)
    tl = pickup_timeline(s, COSTS, OVERHEAD, 0.0)
    costs, rep = calibrate(tl, s, statistic=statistic)
    assert rep.pickup == pytest.approx(0.0, abs=1e-9)
    assert all(x == pytest.approx(0.0, abs=1e-9) for x in rep.pickup_shares.values())
    sim = calibrated_simulation(tl, s, costs, rep)
    old = _compute_only(bk.simulate(s, costs), s.orders, rep.overhead, "calibrated simulation")
    for r in range(s.p):
        assert list(sim.arrays(r)[0]) == pytest.approx(list(old.arrays(r)[0]), abs=1e-9)
        assert list(sim.arrays(r)[1]) == pytest.approx(list(old.arrays(r)[1]), abs=1e-9)
    assert sim.bubble_ratio == pytest.approx(tl.bubble_ratio, abs=1e-9)
    # and a plain simulated step (no overhead, no pickup) is its own calibrated simulation
    plain = bk.simulate(s, COSTS)
    c2, r2 = calibrate(plain, s, statistic=statistic)
    assert r2.pickup == 0.0 and not any(r2.pickup_shares.values())
    assert calibrated_simulation(plain, s, c2, r2).bubble_ratio == pytest.approx(plain.bubble_ratio, abs=1e-12)


def test_compare_measured_shows_the_pickup_step() -> None:
    s = bk.schedule("gpipe", 2, 8)
    tl = pickup_timeline(s, COSTS, OVERHEAD, PICKUP)
    own = compare_measured(tl, s)
    assert own.report.statistic == DEFAULT_STATISTIC == "per-kind"
    assert own.calibrated == pytest.approx(own.measured, abs=1e-9)
    assert "own extra gaps" in own.table() and "1F 0.875" in own.table()
    assert "extra gap charged per action" in own.report.describe()
    c = compare_measured(tl, s, statistic="median")
    d = c.as_dict()
    keys = [row.key for row in c.rows]
    assert keys.index("overhead") < keys.index("latency") < keys.index("calibrated") < keys.index("measured")
    assert d["durations"] <= d["overhead"] <= d["latency"] < d["calibrated"]
    assert d["calibrated"] == pytest.approx(d["measured"], abs=1e-9)
    assert "pickup" in c.table() and "1F 0.875" in c.table()
    assert "pickup charged per action" in c.report.describe()


# ------------------------------------------------------------------ the shipped recordings
def shipped_steps(name: str) -> list[bk.Timeline]:
    """The profiled step of a shipped sample, then every step of the lab's record of the same run."""
    return [traces.read_trace(traces.sample_trace(name)), *traces.read_trace_steps(traces.sample_record(name))]


def non_increasing(xs: list[float]) -> bool:
    return all(b <= a for a, b in zip(xs, xs[1:]))


@pytest.mark.parametrize("name", ["1f1b-p2-m4", "interleaved-p2-m4", "dualpipev-p2-m4"])
def test_ladder_moves_toward_the_measurement_on_shipped_samples(name: str) -> None:
    """Durations, + overhead, + latency, + pickup: each row is at least as close to the measurement."""
    kind = traces.sample_info(name)["bubblekit"]
    for step in shipped_steps(name):
        c = compare_measured(step, kind, statistic="median", draws=1)
        d = c.distances()
        assert non_increasing(d), (step.source, [round(x, 4) for x in d])
        assert d[-1] < d[0]


def test_gpipe_sample_is_straggler_bound() -> None:
    """The one exception: GPipe's recorded step is dominated by stragglers that overlapped on both
    ranks, so the simulation with mean durations alone already reaches the measurement and adding
    gaps can only move away from it (lesson 06's deep dive says so)."""
    step = shipped_steps("gpipe-p2-m4")[0]
    c = compare_measured(step, "gpipe", draws=1)
    assert abs(c.as_dict()["durations"] - c.measured) < 0.005
    slowest = max(c.report.durations.values(), key=lambda st: st.maximum / st.median)
    assert slowest.maximum > 5 * slowest.median  # a straggler: one action 5x its stage's median


def test_mean_overshoots_on_the_1f1b_sample() -> None:
    """The old default: the mean gap, a few stalls spread over every action. The overhead row jumps
    past the measurement and every later row moves further away."""
    step = shipped_steps("1f1b-p2-m4")[0]
    old = compare_measured(step, "1f1b", statistic="mean", draws=1)
    new = compare_measured(step, "1f1b", statistic="median", draws=1)
    assert old.as_dict()["overhead"] > old.measured
    d = old.distances()
    assert d[1] < d[2] < d[3]
    assert not non_increasing(d)
    assert new.distances()[-1] < d[-1]
    rep = new.report
    assert rep.overhead == rep.overhead_median and rep.overhead_mean > 10 * rep.overhead_median
    stalls = rep.stalls()
    assert stalls and all(g > 10 * rep.overhead_median for g in stalls)
    assert len(stalls) < rep.overhead_samples / 2  # a few stalls, not the typical gap
    assert sum(stalls) > 0.9 * sum(rep.overhead_gaps)  # ...which hold nearly all the gap time


def test_report_and_comparison_tables() -> None:
    step = shipped_steps("1f1b-p2-m4")[0]
    c = compare_measured(step, "1f1b", draws=1)
    t = c.to_table(["formula", *LADDER, "measured"])
    assert isinstance(t, Table)
    assert t.column("bubble_ratio") == [c.formula, *(c.as_dict()[k] for k in LADDER), c.measured]
    assert t.column("vs measured")[-1] == 0
    assert t.column("makespan")[0] is None
    assert "<table" in c._repr_html_() and "calibrated" in repr(c)
    with pytest.raises(KeyError, match="no row 'nope'"):
        c.to_table(["nope"])
    rep = c.report
    g = rep.gap_table()
    assert g.column("samples") == [rep.overhead_samples, rep.latency_samples, rep.pickup_samples]
    assert g.column("used") == [rep.overhead, rep.latency, rep.pickup]
    # raw statistics, like with like: the overhead's are the report's; the others include the overhead
    assert g[0]["median"] == rep.overhead_median and g[0]["mean"] == pytest.approx(rep.overhead_mean)
    assert g[1]["median"] - rep.overhead_median == pytest.approx(rep.latency_median)
    assert g[1]["mean"] - rep.overhead_mean == pytest.approx(rep.latency_mean)
    assert "the same with the mean" in rep.describe()
    with pytest.raises(ValueError, match="factor"):
        c.report.stalls(0.5)


# ------------------------------------------------------------------ predict: the m sweep
def test_predict_matches_the_simulator_and_the_formula() -> None:
    ms = [2, 4, 8, 16]
    t = predict(bk.Costs(f=1, b=2), "1f1b", 4, ms)
    assert isinstance(t, Table) and t.column("m") == ms
    assert t.column("bubble_ratio") == pytest.approx([bk.bubble_ratio(4, m) for m in ms])
    assert t.column("formula") == pytest.approx(t.column("bubble_ratio"))  # equal stages: the formula holds
    for row in t:
        sim = bk.simulate(bk.schedule("1f1b", 4, row["m"]), bk.Costs(f=1, b=2))
        assert row["makespan"] == float(sim.makespan)
        assert row["per_microbatch"] == pytest.approx(row["makespan"] / row["m"])
        assert row["throughput"] == pytest.approx(1000 * row["m"] / row["makespan"])
    assert "microbatches / 1000 slot" in t.to_text()


def test_predict_with_calibrated_costs_rises_and_flattens() -> None:
    step = shipped_steps("1f1b-p2-m4")[0]
    costs, _ = calibrate(step)
    t = predict(costs, "1f1b", 2, [2, 4, 8, 16, 32, 64])
    rate = t.column("throughput")
    gains = [b - a for a, b in zip(rate, rate[1:])]
    assert all(g > 0 for g in gains) and gains == sorted(gains, reverse=True)
    work = [f + b for f, b in zip(costs.f, costs.b)]  # type: ignore[arg-type]
    floor = 1 - sum(work) / (len(work) * max(work))  # the idle share an imbalance forces
    assert floor < t.column("bubble_ratio")[-1] < floor + 0.02
    assert "microbatches / s" in t.to_text()


def test_predict_refuses_bad_input() -> None:
    costs = bk.Costs(f=1, b=2)
    with pytest.raises(TypeError, match="costs must be"):
        predict("fast", "1f1b", 2, [2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schedule must be"):
        predict(costs, bk.schedule("1f1b", 2, 2), 2, [2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ms must be"):
        predict(costs, "1f1b", 2, [])
    with pytest.raises(ValueError, match="ms must be"):
        predict(costs, "1f1b", 2, 8)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match=r"ms\[1\]"):
        predict(costs, "1f1b", 2, [2, 0])
    with pytest.raises(ValueError, match="nope"):
        predict(costs, "nope", 2, [2])


# ------------------------------------------------------------------ the statistics: stalls that are most of the bubble
def stall_timeline(schedule: bk.Schedule, costs: bk.Costs, overhead: float,
                   stalls: dict[bk.Action, float]) -> bk.Timeline:
    """A step with ``overhead`` before every action, ``costs.comm`` per hop, and a stall of
    ``stalls[action]`` ms more before the listed actions (the OS descheduling a rank)."""
    rc = costs.resolve(schedule.n_stages, schedule.v)
    lat = float(rc.comm)

    def timing(rank: int, action: bk.Action, free: object, arrivals: list[Arrival]) -> tuple[float, float]:
        now = 0.0 if free is None else float(free)  # type: ignore[arg-type]
        ready = [now, *(float(a.end) + (lat if a.rank != rank else 0.0) for a in arrivals)]
        d = float(rc.duration(action.stage, action.kind))
        end = max(ready) + overhead + stalls.get(action, 0.0) + d
        return end - d, end

    run = run_orders(schedule.orders, schedule.n_stages, timing, missing_inputs="given")
    return bk.Timeline(run.starts, run.ends, [list(o) for o in schedule.orders], unit="ms", source="synthetic stalls")


def gap(step: bk.Timeline, schedule: bk.Schedule, statistic: str) -> float:
    costs, rep = calibrate(step, schedule, statistic=statistic)
    return calibrated_simulation(step, schedule, costs, rep).bubble_ratio - step.bubble_ratio


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_median_misleads_where_stalls_are_most_of_the_bubble(kind: str) -> None:
    """A third of stage 1's forwards stall 6 ms (tiny 1 ms actions, as on the lab's CPU runs): the
    typical gap does not see them and the median lands far below the measurement; the mean spreads
    them over every action of both stages; per-kind charges them to stage 1's forwards, where they
    happened, and lands on the measurement."""
    s = bk.schedule(kind, 2, 12)
    stalls = {bk.Action(1, "F", mb): 6.0 for mb in range(1, 12, 3)}
    step = stall_timeline(s, bk.Costs(f=1.0, b=2.0, comm=0.3, unit="ms"), 0.2, stalls)
    g = {stat: gap(step, s, stat) for stat in STATISTICS}
    assert g["median"] < -0.2  # the stalls are most of this bubble
    assert abs(g["per-kind"]) < (1e-9 if kind == "gpipe" else 0.02)  # GPipe's stage 1 runs its forwards back to back
    assert abs(g["per-kind"]) < abs(g["mean"]) / 5 and abs(g["per-kind"]) < abs(g["trimmed"])
    rep = calibrate(step, s)[1]
    assert rep.overhead == pytest.approx(0.2) and rep.latency == pytest.approx(0.3)
    # the charge is the stall time where it happened: stage 1's forwards, 4 x 6 ms over 12 of them
    assert rep.pickup_shares[(1, "F")] == pytest.approx(4 * 6.0 / 12)
    assert all(x == pytest.approx(0.0, abs=1e-9) for key, x in rep.pickup_shares.items() if key != (1, "F"))


def test_per_kind_charges_each_rank_its_own_stall_time_once() -> None:
    """One long stall on rank 0: the charges of rank 0's actions add up to that stall; rank 1 is
    charged nothing (the mean would charge rank 1 a share of it too)."""
    s = bk.schedule("1f1b", 2, 8)
    step = stall_timeline(s, bk.Costs(f=1.0, b=2.0, comm=0.3, unit="ms"), 0.2, {bk.Action(0, "F", 5): 20.0})
    rep = calibrate(step, s)[1]
    counts = {key: sum(1 for o in s.orders for a in o if (a.stage, a.kind) == key) for key in rep.pickup_shares}
    rank0 = sum(x * counts[key] for key, x in rep.pickup_shares.items() if key[0] == 0)
    assert rank0 == pytest.approx(20.0)
    assert all(x == pytest.approx(0.0, abs=1e-9) for key, x in rep.pickup_shares.items() if key[0] == 1)
    assert calibrate(step, s, statistic="mean")[1].overhead > 1.0  # the mean spreads it over every action


def test_trimmed_mean_drops_the_tails() -> None:
    s = bk.schedule("1f1b", 2, 8)
    stalls = {bk.Action(0, "F", 5): 30.0}
    step = stall_timeline(s, bk.Costs(f=1.0, b=2.0, comm=0.3, unit="ms"), 0.2, stalls)
    rep = calibrate(step, s, statistic="trimmed")[1]
    assert rep.statistic == "trimmed" and rep.overhead == pytest.approx(0.2)
    assert rep.overhead_mean > 1.0  # the same gaps' mean holds the stall
    assert "trimmed mean" in rep.gap_table().to_text()


@pytest.mark.parametrize("bad", ["mode", "Median", "", None, 3])
def test_statistic_must_be_one_of_the_offered(bad: object) -> None:
    s = bk.schedule("gpipe", 2, 4)
    step = bk.simulate(s, COSTS)
    with pytest.raises(ValueError, match="statistic must be one of 'per-kind', 'median', 'mean', 'trimmed'"):
        calibrate(step, s, statistic=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the benchmark (the shipped lab runs)
def test_the_default_is_the_best_statistic_on_the_shipped_benchmark() -> None:
    """The benchmark data shipped with bubblekit (real lab runs of lesson 06's model and of the lab's tiny
    one, plus the recorded samples): the default statistic is the one best over all of them and over the
    lesson model's lab runs, and lands within 0.05 of the measured bubble on at least 8 of every 9 of them."""
    bench = load_benchmark()
    assert DEFAULT_STATISTIC in STATISTICS and bench.best("real") == DEFAULT_STATISTIC
    assert bk.calibrate.best_statistic([bench, load_benchmark(shipped="tiny")]) == DEFAULT_STATISTIC
    hits, n, _, _ = bench.scores("real")[DEFAULT_STATISTIC]
    assert n >= 9 and 9 * hits >= 8 * n
    med_hits, _, _, _ = bench.scores("real")["median"]
    assert med_hits <= hits
    assert {c.kind for c in bench.cases} == {"real", "sample"}
    assert len(bench.predictions) >= 3 and bench.meta["load_start"] and bench.meta["load_end"]
    text = bench.summary().to_text()
    assert "per-kind model (default)" in text and "load average" in text
    assert len(bench.runs_table().rows) == len(bench.cases)
    assert len(bench.predictions_table().rows) == len(bench.predictions)


def test_busy_reads_the_load_before_the_benchmark_started() -> None:
    """The benchmark's own rank processes load the machine while it runs: only the start says 'busy'."""
    s = bk.schedule("gpipe", 2, 4)
    case = BenchmarkCase("x", "real", s, bk.simulate(s, COSTS))
    quiet = benchmark([case], meta={"cores": 2, "load_start": [0.4, 0.5, 0.6], "load_end": [2.1, 1.2, 0.8]})
    busy = benchmark([case], meta={"cores": 2, "load_start": [1.5, 0.5, 0.6], "load_end": [0.2, 0.2, 0.2]})
    assert quiet.busy is False and busy.busy is True
    assert benchmark([case], meta={"load_start": [0.1]}).busy is None
    assert "(quiet)" in quiet.summary().to_text() and "busy with other jobs" in busy.summary().to_text()


def test_both_shipped_benchmarks_load_and_name_their_model() -> None:
    lesson, tiny = load_benchmark(), load_benchmark(shipped="tiny")
    assert lesson.meta["model"] == {"hidden": 256, "seq": 128, "layers": 2}
    assert tiny.meta["model"] == {"hidden": 64, "seq": 32, "layers": 1}
    assert "model hidden=256, seq=128, layers=2" in lesson.summary("real").to_text()
    for bad in ("big", 3, None):
        with pytest.raises(ValueError, match="shipped must be one of 'lesson', 'tiny'"):
            load_benchmark(shipped=bad)  # type: ignore[arg-type]
    # the tiny model's actions are about a millisecond, the lesson model's tens of ms
    assert tiny.action_ms() < 3 < 20 < lesson.action_ms()
    table = bk.calibrate.benchmark_overview({"lesson": lesson, "tiny": tiny})
    assert [r["benchmark"] for r in table.rows] == ["lesson", "tiny"]
    assert table.rows[0]["spread"] == lesson.run_spread() and 0 < lesson.run_spread() < tiny.run_spread()
    for bad_arg in ({}, [lesson], "x"):
        with pytest.raises(ValueError, match="benchmarks must be a non-empty mapping"):
            bk.calibrate.benchmark_overview(bad_arg)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"benchmarks\['a'\] must be a CalibrationBenchmark"):
        bk.calibrate.benchmark_overview({"a": 1})  # type: ignore[dict-item]


def test_best_statistic_pools_lab_runs_and_counts_samples_once() -> None:
    lesson, tiny = load_benchmark(), load_benchmark(shipped="tiny")
    assert bk.calibrate.best_statistic([lesson]) == lesson.best("all")
    assert bk.calibrate.best_statistic([lesson, lesson]) == lesson.best("all")   # the samples once, the runs twice
    for bad in ([], lesson, "x", None):
        with pytest.raises(ValueError, match="benchmarks must be a non-empty list"):
            bk.calibrate.best_statistic(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"benchmarks\[1\] must be a CalibrationBenchmark"):
        bk.calibrate.best_statistic([tiny, 3])  # type: ignore[list-item]


def test_run_spread_and_action_ms_without_repeats() -> None:
    s = bk.schedule("gpipe", 2, 4)
    bench = benchmark([BenchmarkCase("x #1", "real", s, bk.simulate(s, COSTS))])
    assert bench.run_spread() == 0.0 and bench.action_ms() == pytest.approx(1.75)   # durations 1, 1.5, 2, 3 ms, four each


def test_benchmark_refuses_bad_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s = bk.schedule("gpipe", 2, 4)
    case = BenchmarkCase("x", "real", s, bk.simulate(s, COSTS))
    with pytest.raises(ValueError, match="at least one"):
        benchmark([])
    with pytest.raises(TypeError, match=r"cases\[0\] must be a BenchmarkCase"):
        benchmark(["x"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="pair of indices"):
        benchmark([case], [(0, 1)])
    other = BenchmarkCase("y", "real", bk.schedule("interleaved", 2, 4, 2), bk.simulate(bk.schedule("interleaved", 2, 4, 2)))
    with pytest.raises(ValueError, match="stages"):
        benchmark([case, other], [(0, 1)])
    bench = benchmark([case], meta={"when": "now"})
    assert bench.best() in STATISTICS and bench.gaps[0]["median"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="which must be"):
        bench.summary("lab")
    with pytest.raises(ValueError, match="statistic must be one of"):
        bench.predictions_table("mode")
    with pytest.raises(ValueError, match="statistic must be one of"):
        bench.prediction_hits("mode")
    with pytest.raises(TypeError, match="source must be a BenchmarkCase"):
        prediction_gaps("x", case)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="step must be a bubblekit Timeline"):
        step_record("x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="malformed run"):
        benchmark_from_data({"format": BENCHMARK_FORMAT, "runs": [{"name": "x"}]})
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(ValueError, match="not a readable calibration benchmark"):
        load_benchmark(bad)
    with pytest.raises(FileNotFoundError, match="no calibration benchmark data"):
        load_benchmark(tmp_path / "missing.json")
