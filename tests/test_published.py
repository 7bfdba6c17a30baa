"""Published numbers (bubblekit.course.published): sources present, and bubblekit reproduces what it claims to."""

from __future__ import annotations

import math

import pytest

import bubblekit as bk
from bubblekit.course import published as P
from bubblekit.course.checks import check, lesson10
from bubblekit.i18n import translate, using_language

#: Table 5 prints four decimals: a faithful reproduction differs by at most half a unit in the last place.
HALF_ULP = 0.00005 + 1e-12


def test_every_source_is_complete() -> None:
    for key, src in P.SOURCES.items():
        assert src.key == key
        assert src.title and src.authors and src.venue and src.url.startswith("https://")
        assert 2019 <= src.year <= 2026
        assert str(src.year) in src.cite("Table 1")


def test_table9_and_table5_cover_the_same_settings() -> None:
    assert {(r.model, r.m) for r in P.ZB_PROFILED} == set(P.ZB_TABLE5)
    for row in P.ZB_PROFILED:
        assert row.tw < row.tf and row.tw < row.tb  # the paper's observation T_W < T_F, T_B
        assert len(P.ZB_TABLE5[(row.model, row.m)]) == len(P.ZB_TABLE5_COLUMNS)


def test_table5_reproduced_to_the_printed_digits() -> None:
    rows = P.zb_table5_comparison()
    assert len(rows) == 3 * len(P.ZB_PROFILED)
    for r in rows:
        assert abs(r.difference) <= HALF_ULP, r


def test_table5_metric_matters_only_for_zb_h2() -> None:
    """1F1B and ZB-H1 start and end every step on rank 0, so both measures agree; ZB-H2 does not."""
    rows = P.zb_table5_comparison()
    for r in rows:
        if r.schedule in ("1F1B", "ZB-H1"):
            assert r.bubble_ratio == pytest.approx(r.computed, abs=1e-12)
        else:
            assert r.bubble_ratio >= r.computed - 1e-12
    assert any(r.bubble_ratio - r.computed > 0.01 for r in rows if r.schedule == "ZB-H2")


def test_table5_rejects_unknown_columns() -> None:
    with pytest.raises(ValueError, match="ZB-2p"):
        P.zb_table5_comparison(("ZB-2p",))


@pytest.mark.parametrize("p,m", [(4, 8), (8, 32), (6, 24)])
def test_zb_readme_closed_forms(p: int, m: int) -> None:
    """The README's row since 2024-07-03: B = (p-1)/(m+p-1), ZB1P B/3 (approximately: its bubble time is a
    third of 1F1B's, over its own step it is (p-1)/(3m+p-1)), ZB2P/ZBV 0, V-Half about B/2, V-Min about 2B/3."""
    rows = {r.method: r.computed for r in P.zb_readme_comparison(p, m)}
    b = (p - 1) / (m + p - 1)
    assert rows["1F1B"]["bubble rate"] == pytest.approx(b) == rows["1F1B"]["bubble rate (README formula)"]
    assert rows["ZB1P"]["bubble rate"] == pytest.approx((p - 1) / (3 * m + p - 1))
    assert rows["ZB1P"]["bubble rate (README formula)"] == pytest.approx(b / 3)
    assert rows["ZB1P"]["bubble rate (README formula)"] < rows["ZB1P"]["bubble rate"]
    assert rows["ZB2P"]["bubble rate"] == pytest.approx(0.0, abs=1e-12)  # m >= 2p - 1 here
    assert rows["ZBV"]["bubble rate"] == pytest.approx(0.0, abs=1e-12)
    assert rows["V-Half"]["bubble rate"] <= b / 2 + 0.011 and rows["V-Min"]["bubble rate"] <= 2 * b / 3 + 0.017
    assert rows["ZB1P"]["activation memory"] == 1.0 and rows["ZBV"]["activation memory"] == 1.0
    assert rows["ZB2P"]["activation memory"] == pytest.approx((2 * p - 1) / p)
    assert rows["V-Half"]["activation memory"] == ((p + 2) // 2) / p
    assert rows["V-Min"]["activation memory"] == ((p + 4) // 3) / p
    for name in ("ZBV", "V-Half", "V-Min"):
        assert rows[name]["communication volume"] == 2.0
    assert rows["ZB2P"]["communication volume"] == 1.0


def test_zb_readme_wording_and_history() -> None:
    """The current wording, and the older Megatron-overhead wording with its dates."""
    entries = {method: pub["bubble rate"] for method, _, pub in P.ZB_README}
    assert entries["1F1B"] == "(p-1)/(m+p-1)=B" and entries["ZB1P"] == "B/3"
    assert [m for m, _, _ in P.ZB_README] == ["1F1B", "ZB1P", "ZB2P", "ZBV", "V-Half", "V-Min"]
    old = [h for h in P.ZB_README_HISTORY if h[2] == "(p-1)/m"]
    assert old == [("2023-11-20", "2024-07-03", "(p-1)/m", "(p-1)/3m")]
    assert P.ZB_README_HISTORY[-1][:3] == ("2024-07-03", "today", "(p-1)/(m+p-1)=B")


@pytest.mark.parametrize("costs", [bk.Costs(f=1, i=1, w=1), bk.Costs(f=2, i=2, w=1), bk.Costs(f=1, i=1, w=1, fb="max"),
                                   bk.Costs(f=3, i=3, w=2, overlap=0.5)])
def test_dualpipe_readme_rows(costs: bk.Costs) -> None:
    """On the README's basis (PP stages): every bubble equals its README expression when I = F and W <= F;
    DualPipe PP + 1 chunk activations and 2x parameters on PP devices, DualPipeV the same on PP/2."""
    pp, m = 8, 32
    rows = {r.method: r for r in P.dualpipe_readme_comparison(pp, m, costs)}
    assert list(rows) == ["1F1B", "ZB1P", "DualPipe", "DualPipeV"]
    for name, row in rows.items():
        c = row.computed
        assert c["bubble"] == pytest.approx(c["bubble (README formula, same costs)"]), name
    assert rows["1F1B"].computed["activation"] == rows["ZB1P"].computed["activation"] == pp
    for name in ("DualPipe", "DualPipeV"):
        assert rows[name].computed["activation"] == pp + 1 and rows[name].computed["parameter"] == 2
    assert rows["DualPipe"].computed["devices"] == pp and rows["DualPipeV"].computed["devices"] == pp / 2
    assert rows["DualPipeV"].published["devices"] == "PP/2" and rows["DualPipe"].published["parameter"] == "2x"


def test_dualpipe_readme_formula_fails_when_i_differs_from_f() -> None:
    rows = {r.method: r.computed for r in P.dualpipe_readme_comparison(8, 32, bk.Costs(f=2, i=3, w=1))}
    assert rows["DualPipe"]["bubble"] < rows["DualPipe"]["bubble (README formula, same costs)"]


def test_dualpipe_bubble_time() -> None:
    assert P.dualpipe_bubble_time(16, 1, 2, 1, fb=2) == 7.0
    assert P.dualpipe_bubble_time(8, 1, 2, 1) == 3 * (3 + 2 - 3)
    with pytest.raises(ValueError, match="even"):
        P.dualpipe_bubble_time(7, 1, 2, 1)
    with pytest.raises((TypeError, ValueError)):
        P.dualpipe_bubble_time(8, -1, 2, 1)
    with pytest.raises(ValueError, match="pp must be even"):
        P.dualpipe_readme_comparison(5, 16)


def test_megatron_table1_is_consistent() -> None:
    for row in P.MEGATRON_TABLE1:
        assert row.dp * row.tp * row.pp == row.gpus
        m = row.microbatches()
        assert m * row.dp == row.batch
        # aggregate petaFLOP/s = GPUs x teraFLOP/s per GPU, up to the table's rounding
        assert math.isclose(row.aggregate_pflops, row.gpus * row.tflops / 1000, rel_tol=0.01)
        if row.pp > 1:
            assert m % row.pp == 0  # Megatron's interleaving rule holds for every row
    one_t = P.MEGATRON_TABLE1[-1]
    days = P.megatron_training_days(one_t, P.MEGATRON_1T_TOKENS)
    assert round(days) == P.MEGATRON_1T_DAYS_PUBLISHED


def test_megatron_microbatch_rejects_bad_split() -> None:
    with pytest.raises(ValueError):
        P.MEGATRON_TABLE1[-1].microbatches(micro_batch=5)


@pytest.mark.parametrize("name", ["Megatron-LM 1T", "BLOOM-176B", "Llama 3 405B"])
def test_uniform_cases_match_the_closed_form(name: str) -> None:
    est = P.case_estimate(name)
    assert est.bubble_ratio == pytest.approx(P.closed_form_check(name), abs=1e-12)
    case = P.CASES[name]
    assert est.idle_gpu_hours == pytest.approx(est.bubble_ratio * case.gpu_hours)
    assert est.idle_usd == pytest.approx(est.idle_gpu_hours * P.DEFAULT_USD_PER_GPU_HOUR)


def test_case_facts_and_assumptions_are_stated() -> None:
    titles = [s.title for s in P.SOURCES.values()]
    for case in P.CASES.values():
        assert case.facts and case.assumptions
        assert all(any(t in fact for t in titles) for fact in case.facts)
        assert case.dp * case.pp <= case.gpus
        assert P.case_microbatches(case) >= 1


def test_bloom_numbers() -> None:
    est = P.case_estimate("BLOOM-176B")
    assert est.m == 2048 // (8 * 2)
    assert est.bubble_ratio == pytest.approx(bk.bubble_ratio(12, 128))


def test_deepseek_dualpipe_estimate() -> None:
    est = P.case_estimate("DeepSeek-V3")
    m = 15_360 // 128
    bubble = P.dualpipe_bubble_time(16, 1, 2, 1)
    assert est.m == m
    assert est.bubble_ratio == pytest.approx(bubble / (bubble + m * 3))
    # the closed form is the simulated DualPipe (pairs as units, F : B : W = 1 : 2 : 1, I = F)
    assert est.bubble_ratio == pytest.approx(bk.simulate(bk.schedule("dualpipe", 16, m), bk.Costs(f=1, b=2)).bubble_ratio)
    # the same configuration under 1F1B wastes more
    assert P.case_estimate("DeepSeek-V3", schedule_name="1f1b").bubble_ratio > est.bubble_ratio


def test_overrides_and_bad_input() -> None:
    base = P.case_estimate("Llama 3 405B")
    fewer_chunks = P.case_estimate("Llama 3 405B", v=2)
    assert fewer_chunks.bubble_ratio > base.bubble_ratio
    smaller = P.case_estimate("BLOOM-176B", micro_batch=1)
    assert smaller.m == 256 and smaller.bubble_ratio < P.case_estimate("BLOOM-176B").bubble_ratio
    assert P.case_estimate("BLOOM-176B", usd_per_gpu_hour=4).idle_usd == pytest.approx(
        2 * P.case_estimate("BLOOM-176B").idle_usd)
    with pytest.raises(ValueError, match="unknown case"):
        P.case_estimate("GPT-5")
    with pytest.raises((TypeError, ValueError)):
        P.case_estimate("BLOOM-176B", usd_per_gpu_hour=0)
    with pytest.raises(ValueError):
        P.case_estimate("BLOOM-176B", micro_batch=3)  # 2048 is not a multiple of 8*3


def test_stage_span_measures() -> None:
    r = bk.simulate(bk.schedule("1f1b", 4, 8), bk.Costs(f=1, b=2))
    assert P.stage_span_bubble_rate(r) == pytest.approx(r.bubble_ratio)
    assert P.stage_span_overhead(r) == pytest.approx(r.bubble_overhead)
    assert P.max_rank_bubble_time(r) == 3 * 3
    z = bk.simulate(bk.schedule("zb-h2", 4, 8), bk.Costs(f=1, i=1, w=1))
    assert P.stage_span_bubble_rate(z) == 0.0 and z.bubble_ratio > 0
    with pytest.raises(TypeError):
        P.stage_span_bubble_rate("not a timeline")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- graders of lessons 07-10


def test_whiteboard_grader_names_the_problem_not_the_answer() -> None:
    good = bk.schedule("zb-h1", 2, 3).to_text()
    assert check("07.4", good)
    slow = "rank 0: 0F0 0I0 0W0 0F1 0I1 0W1 0F2 0I2 0W2\nrank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2"
    res = check("07.4", slow)
    assert not res and "longer than the target" in res.detail and "rank" in res.detail
    greedy = "rank 0: 0F0 0F1 0F2 0I0 0W0 0I1 0W1 0I2 0W2\nrank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2"
    res = check("07.4", greedy)
    assert not res and "rank 0 holds 3" in res.detail
    stuck = "rank 0: 0I0 0F0 0F1 0W0 0F2 0I1 0W1 0I2 0W2\nrank 1: 1F0 1I0 1W0 1F1 1I1 1W1 1F2 1I2 1W2"
    res = check("07.4", stuck)
    assert not res and "deadlock" in res.detail and "rank 0" in res.detail
    assert not check("07.4", "rank 0: 0F0 0B0\nrank 1: 1F0 1B0")  # wrong m
    fused = bk.schedule("1f1b", 2, 3).to_text()
    assert "split" in check("07.4", fused).detail
    for result in (check("07.4", slow), check("07.4", greedy)):
        assert good not in str(result)


def test_whiteboard_bank_questions_accept_their_reference_schedules() -> None:
    assert check("10.40", bk.schedule("1f1b", 3, 3).to_text())
    assert check("10.41", bk.schedule("zb-h1", 2, 4).to_text())
    assert check("10.42", bk.schedule("zb-h2", 3, 5).to_text())
    assert not check("10.42", bk.schedule("zb-h1", 3, 5).to_text())  # legal, but idle inside ranks


def test_letter_questions() -> None:
    assert check("10.6", "bc") and check("10.6", "C B")
    res = check("10.6", "B")
    assert not res and "missing" in res.detail
    assert not check("10.3", "AB") and "one letter" in check("10.3", "AB").detail
    assert not check("10.1", 2)


def test_bank_metadata() -> None:
    groups = lesson10.by_category()
    assert sum(len(v) for v in groups.values()) == len(lesson10.BANK) >= 40
    assert all(groups[k] for k in lesson10.CATEGORIES)
    ids_ = [item.id for item in lesson10.BANK]
    assert ids_ == [f"10.{k}" for k in range(1, len(ids_) + 1)]
    from bubblekit.course.checks import _registry

    _registry.load_lessons()
    for item in lesson10.BANK:
        assert (item.id in _registry.REGISTRY) == item.checked, item.id
    for k in range(1, 6):
        tl = lesson10.profile(k)
        assert isinstance(tl, bk.Timeline) and not isinstance(tl, bk.SimResult)
    with pytest.raises(ValueError):
        lesson10.profile(6)


# ----------------------------------------------------------------------------- case-study tables (lesson 08)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bubblekit.text import Table  # noqa: E402


def test_case_layouts_multiply_to_the_gpu_count() -> None:
    t = P.case_layouts()
    assert isinstance(t, Table) and t.column("case") == list(P.CASES)
    for row in t:
        case = P.CASES[row["case"]]
        assert row["TP"] * row["CP"] * row["PP"] * row["DP"] == row["product"] == case.gpus
        assert row["PP"] == case.pp and row["DP"] == case.dp and row["v"] == case.v
        assert row["from"]
    assert t.row(case="DeepSeek-V3")["EP"] > 1 and t.row(case="BLOOM-176B")["EP"] == 1


def test_case_worksheet_shows_the_estimate_and_its_sources() -> None:
    for name in P.CASES:
        est = P.case_estimate(name)
        t = P.case_worksheet(name)
        assert P.case_worksheet(est).rows == t.rows
        values = {row["quantity"].split(" =")[0].split(":")[0]: row for row in t}
        assert values["bubble_ratio"]["value"] == f"{est.bubble_ratio:.2%}"
        assert values["bubble_overhead"]["value"] == f"{est.bubble_overhead:.2%}"
        assert values["m"]["value"] == str(est.m)
        assert values["idle cost"]["value"] == f"${est.idle_usd:,.0f}"
        assert values["GPUs"]["from"].split(",")[0] in {"Megatron-LM paper (SC21)", "BLOOM training README",
                                                         "Llama 3 paper", "DeepSeek-V3 report"}
        assert all(a in t.note for a in est.case.assumptions if not a.startswith("equal stages"))
    changed = P.case_worksheet("Llama 3 405B", v=4)
    assert changed.rows[6]["value"] == "interleaved 1F1B, v = 4"
    with pytest.raises(ValueError, match="unknown case"):
        P.case_worksheet("GPT-5")
    with pytest.raises(TypeError, match="case must be"):
        P.case_worksheet(42)  # type: ignore[arg-type]


def test_case_studies_table() -> None:
    t = P.case_studies()
    assert t.column("case") == list(P.CASES)
    for row in t:
        est = P.case_estimate(row["case"])
        assert row["bubble_ratio"] == est.bubble_ratio and row["bubble_overhead"] == est.bubble_overhead
        assert row["idle GPU-hours"] == pytest.approx(row["bubble_ratio"] * row["GPU-hours"])
        assert row["idle USD"] == pytest.approx(row["idle GPU-hours"] * P.DEFAULT_USD_PER_GPU_HOUR)
        assert 0 < row["bubble_ratio"] < row["bubble_overhead"]
    dearer = P.case_studies(usd_per_gpu_hour=3)
    assert dearer.column("idle USD") == pytest.approx([1.5 * x for x in t.column("idle USD")])
    assert "85,704" in t.to_text()  # whole numbers are rounded, not truncated (85,703.6 idle GPU-hours)


def test_case_options_estimates_refusals_and_bad_input() -> None:
    t = P.case_options([
        ("BLOOM-176B", "as run", {}),
        ("BLOOM-176B", "interleaved", {"schedule_name": "interleaved", "v": 2}),
        ("Megatron-LM 1T", "twice the batch", {"global_batch": 6144}),
    ])
    assert t.columns[-1] == "note"
    assert t[0]["bubble_ratio"] == P.case_estimate("BLOOM-176B").bubble_ratio
    assert t[1]["bubble_ratio"] is None and "ScheduleInterleaved1F1B" in t[1]["note"] and "120 or 130" in t[1]["note"]
    assert t[2]["m"] == 2 * P.case_estimate("Megatron-LM 1T").m
    assert "note" not in P.case_options([("BLOOM-176B", "as run", {})]).columns
    with pytest.raises(TypeError, match="options must be"):
        P.case_options("BLOOM-176B")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"options\[0\]"):
        P.case_options([("BLOOM-176B", "no dict")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="nor Case fields"):
        P.case_options([("BLOOM-176B", "typo", {"microbatch": 1})])


def test_a_refused_interleaving_reads_the_same_in_both_languages() -> None:
    """The refusal is raised in the current language; the table's note names PyTorch's rule in either one."""
    option = [("BLOOM-176B", "interleaved", {"schedule_name": "interleaved", "v": 2})]
    english = P.case_options(option)[0]["note"]
    assert english == ("not possible with PyTorch's ScheduleInterleaved1F1B: m=128 for p=12 (its max(1, m // p) "
                       "rounds must divide m; m = 120 or 130 would run)")
    with using_language("zh"):
        chinese = P.case_options(option)[0]["note"]
        other = P.case_options([("BLOOM-176B", "x", {"schedule_name": "no-such-schedule"})])[0]["note"]
    assert chinese == translate("published.options.refused_rounds", "zh", m=128, p=12, below=120, above=130)
    assert chinese.startswith("不可行。") and "m 不能用于" not in chinese
    assert other.startswith("不可行：") and "：" not in other[len("不可行："):]   # the reason's first clause only
    assert P.case_options(option)[0]["note"] == english


@settings(max_examples=20, deadline=None)
@given(mb=st.sampled_from([1, 2, 4, 8, 16]), v=st.sampled_from([1, 2, 4, 8]))
def test_case_options_match_the_closed_form(mb: int, v: int) -> None:
    """Llama 3's grid: every legal option equals the interleaved closed form (p-1)/(m v + p-1) when m >= p."""
    name = "interleaved" if v > 1 else "1f1b"
    row = P.case_options([("Llama 3 405B", "x", {"micro_batch": mb, "v": v, "schedule_name": name})])[0]
    m = 16 // mb
    assert row["m"] == m
    if m >= 16:
        assert row["bubble_ratio"] == pytest.approx(bk.bubble_ratio(16, m, v), abs=1e-12)
    else:
        assert row["bubble_ratio"] >= bk.bubble_ratio(16, m, v) - 1e-12


def test_megatron_table_implied_bubbles() -> None:
    t = P.megatron_table()
    assert len(t) == len(P.MEGATRON_TABLE1)
    for row, src in zip(t, P.MEGATRON_TABLE1):
        assert row["m"] == src.microbatches(1) and row["v max"] == src.max_chunks
        if src.pp == 1:
            assert row["1F1B"] == row["interleaved, v max"] == 0
        else:
            assert row["1F1B"] == pytest.approx(bk.bubble_ratio(src.pp, row["m"]), abs=1e-12)
            assert row["interleaved, v max"] <= row["1F1B"]
    assert t[-1]["interleaved, v max"] == pytest.approx(P.case_estimate("Megatron-LM 1T").bubble_ratio)
    with pytest.raises(TypeError):
        P.megatron_table(micro_batch=1.5)  # type: ignore[arg-type]
