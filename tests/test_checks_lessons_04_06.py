"""The custom compare functions of lessons 04-06: schedules written as text, checked by the simulator."""

from __future__ import annotations

from pathlib import Path

import bubblekit as bk
from bubblekit.analysis import traces
from bubblekit.course.checks import check, lesson04, lesson05, lesson06
from bubblekit.i18n import using_language


def test_04_5_broken_text_names_the_blocked_rank() -> None:
    res = check("04.5", lesson04.BROKEN_1F1B)
    assert not res
    assert "deadlock" in res.detail and "rank 1 is blocked" in res.detail


def test_04_5_accepts_a_repair_and_rejects_gpipe_and_slow_orders() -> None:
    assert check("04.5", bk.schedule("1f1b", 2, 4).to_text())
    gpipe = check("04.5", bk.schedule("gpipe", 2, 4).to_text())
    assert not gpipe and "holds 4 microbatch activations" in gpipe.detail
    serial = "rank 0: 0F0 0B0 0F1 0B1 0F2 0B2 0F3 0B3\nrank 1: 1F0 1B0 1F1 1B1 1F2 1B2 1F3 1B3"
    slow = check("04.5", serial)
    assert not slow and "1F1B finishes sooner" in slow.detail
    wrong_shape = check("04.5", bk.schedule("1f1b", 3, 4).to_text())
    assert not wrong_shape and "p=2" in wrong_shape.detail
    assert not check("04.5", 42)
    assert not check("04.5", "rank 0: 0F0 0X0")


def test_04_4_mystery_is_a_registered_schedule() -> None:
    assert lesson04.mystery().schedule.name in bk.names()


def test_04_3_and_04_6_name_the_lessons_own_case() -> None:
    from fractions import Fraction

    lat = bk.Costs(f=1, b=2, comm=Fraction(1, 2))
    gap = {pm: bk.simulate(bk.schedule("1f1b", *pm), lat).makespan - bk.simulate(bk.schedule("gpipe", *pm), lat).makespan
           for pm in ((8, 16), (6, 12), (4, 8))}
    assert check("04.3", gap[8, 16]) and len({gap[8, 16], gap[6, 12], gap[4, 8]}) == 3
    lesson_case = check("04.3", gap[4, 8])
    assert not lesson_case and "p = 4, m = 8" in lesson_case.detail
    exercise_03_4 = check("04.3", gap[6, 12])  # sixth review C3: 03.4's configuration, already simulated there
    assert not exercise_03_4 and "03.4" in exercise_03_4.detail
    refused = {m for m in range(1, 25) if m not in bk.legal_ms("interleaved", 6, 2, up_to=24)}
    assert check("04.6", refused) and check("04.6", sorted(refused))
    p4 = check("04.6", {m for m in range(1, 17) if m not in bk.legal_ms("interleaved", 4, 2, up_to=16)})
    assert not p4 and "p = 4" in p4.detail


def test_05_7_recomputation_lengthens_the_step() -> None:
    from bubblekit.analysis import planner

    plain, recomputed = planner.h200_recompute_costs(4096, 4096)
    a, b = (bk.simulate(bk.schedule("1f1b", 8, 32), c).makespan for c in (plain, recomputed))
    assert check("05.7", b / a - 1) and check("05.7", f"{(b / a - 1) * 100:.1f}%")
    ratio = check("05.7", b / a)
    assert not ratio and "ratio" in ratio.detail
    rec = next(c for c in planner.load_h200_recompute_costs()["configs"] if c["hidden"] == 4096)
    per_backward = check("05.7", (rec["full"]["bwd_ms"] - rec["none"]["bwd_ms"]) / rec["none"]["F_ms"])
    assert not per_backward and "whole step" in per_backward.detail


def test_05_4_latency_hiding_schedule() -> None:
    one_f_one_b = bk.schedule("1f1b", 3, 6).to_text()
    res = check("05.4", one_f_one_b)
    assert not res and "2(p - 1) hops" in res.detail and "still on the critical path" not in res.detail
    gpipe = check("05.4", bk.schedule("gpipe", 3, 6).to_text())
    assert not gpipe and "at most 4" in gpipe.detail
    extra = (
        "rank 0: 0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0B3 0B4 0B5\n"
        "rank 1: 1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1B4 1B5\n"
        "rank 2: 2F0 2B0 2F1 2B1 2F2 2B2 2F3 2B3 2F4 2B4 2F5 2B5\n"
    )
    assert check("05.4", extra)
    r = bk.simulate(bk.Schedule.from_text(extra), bk.Costs(f=1, b=2, comm=lesson05.HIDE_COMM))
    assert r.makespan == lesson05.hide_floor()


def test_05_hypothetical_head_is_labelled() -> None:
    layers = lesson05.head_model()
    assert "hypothetical" in layers[-1].name
    assert len(layers) == 13


def test_05_hypothetical_head_name_follows_the_language() -> None:
    with using_language("en"):
        english = lesson05.head_model()
    with using_language("zh"):
        chinese = lesson05.head_model()
    assert english[-1].name == "head (hypothetical)"   # the English edition's output is unchanged
    assert chinese[-1].name == "输出头（假想）"
    assert [(a.f, a.b) for a in english] == [(c.f, c.b) for c in chinese]
    assert [a.name for a in english[:-1]] == [c.name for c in chinese[:-1]]


def test_06_example_step_is_deterministic_and_readable(tmp_path: Path) -> None:
    a = traces.read_csv(lesson06.write_example_csv(tmp_path / "a.csv"))
    b = traces.read_csv(lesson06.write_example_csv(tmp_path / "b.csv"))
    assert a.p == lesson06.P and a.m == lesson06.M
    assert a.bubble_ratio == b.bubble_ratio
    assert a.orders == lesson06.example_step().orders


def test_06_5_orders_compare() -> None:
    step = lesson06.example_step()
    text = "\n".join(f"rank {r}: " + " ".join(map(str, o)) for r, o in enumerate(step.orders))
    assert check("06.5", text)
    gpipe = check("06.5", bk.schedule("gpipe", 3, 4).to_text())
    assert not gpipe and "differs from the profile" in gpipe.detail
    dead = "rank 0: 0B0 0F0 0F1 0F2 0F3 0B1 0B2 0B3\n" + "\n".join(text.splitlines()[1:])
    res = check("06.5", dead)
    assert not res and "deadlock" in res.detail


def test_06_4_is_the_first_calibrated_m_under_20_percent() -> None:
    costs, _ = bk.calibrate.calibrate(lesson06.example_step())
    sweep = bk.calibrate.predict(costs, "1f1b", lesson06.P, [2, 4, 8, 16, 32, 64, 128, 256])
    first = next(r["m"] for r in sweep if r["bubble_ratio"] <= 0.2)
    assert check("06.4", first)
    assert first > bk.min_micro_batch(lesson06.P, 0.2)  # the formula's m is too small: the exercise's point
    formula = check("06.4", bk.min_micro_batch(lesson06.P, 0.2))
    assert not formula and "formula's m" in formula.detail


def test_06_7_names_one_row_of_the_ladder() -> None:
    steps = lesson06._ladder_steps()
    best = max(steps, key=lambda k: steps[k])
    names = {"calibrated": "pickup"}
    assert check("06.7", names.get(best, best))
    assert check("06.7", names.get(best, best).upper())
    assert check("06.7", "+ " + best)
    others = [k for k in steps if k != best]
    for k in others:
        res = check("06.7", names.get(k, k))
        assert not res and best not in res.detail
    assert "names no effect of the ladder" in check("06.7", "the network").detail
    assert not check("06.7", 3)


def test_06_7_accepts_the_rows_displayed_names() -> None:
    """The row as the ladder prints it ('measured durations (mean per stage)') or as the lesson's bullet names it."""
    steps = lesson06._ladder_steps()
    best = max(steps, key=lambda k: steps[k])
    shown = {"durations": ["measured durations", "measured durations (mean per stage)"],
             "overhead": ["+ overhead 0.080 ms/action"], "latency": ["+ latency"],
             "calibrated": ["pickups", "pickups and stalls", "each stage's own extra gaps (pickups, stalls): calibrated"]}
    for key, names in shown.items():
        for name in names:
            res = check("06.7", name)
            assert bool(res) == (key == best), name
            assert "names no effect of the ladder" not in res.detail, name
    both = check("06.7", "overhead and latency")
    assert not both and "more than one row" in both.detail


def test_06_7_unreadable_answer_gets_its_own_hint() -> None:
    """An answer that names no row gets 06.7's hint about the effect a row adds, not 06.5's 'rank 0: ...' one."""
    for answer in ("formula", 3, "the network"):
        res = check("06.7", answer)
        assert not res
        assert "rank 0:" not in res.hint and "the effect the row adds" in res.hint, answer


def test_06_3_names_no_direction_for_a_rank() -> None:
    """Fourth review: with three ranks, 'too high' for 2 would give 06.3's answer away."""
    import bubblekit as bk
    from bubblekit.course.checks import lesson06

    right = lesson06._waits_for()
    assert right is not None and bk.check("06.3", right)
    for wrong in {0, 1, 2} - {right}:
        result = bk.check("06.3", wrong)
        assert not result and "too high" not in result.detail and "too low" not in result.detail
    assert "0 to 2" in bk.check("06.3", 7).detail
    assert "rank 0: 0F0" not in bk.check("06.3", "x").detail  # not 06.5's schedule hint
