"""Chinese output labels that come from bubblekit code, with the English output unchanged.

Lesson 06's and 07's readers met English in Chinese output: the lab summary's
``layers/stage``/``threads/rank``, the benchmark's run names (``Interleaved1F1B m=4 #1``),
half-width brackets in headers, and the planner's text table out of line under Chinese headers.
"""

from __future__ import annotations

import pytest

import bubblekit as bk
from bubblekit import lab
from bubblekit.analysis import calibrate, planner
from bubblekit.text import Table


@pytest.fixture(autouse=True)
def _english_afterwards():
    yield
    bk.set_language("en")


def test_run_label_translates_only_the_interleaved_schedule_name() -> None:
    bk.set_language("en")
    assert calibrate._run_label("Interleaved1F1B m=4 #1") == "Interleaved1F1B m=4 #1"
    assert calibrate._run_label("GPipe m=8 #2") == "GPipe m=8 #2"
    bk.set_language("zh")
    assert calibrate._run_label("Interleaved1F1B m=4 #1") == "交错式 1F1B m=4 #1"
    assert calibrate._run_label("1F1B m=8 #3") == "1F1B m=8 #3"
    assert calibrate._run_label("1f1b-p2-m4") == "1f1b-p2-m4"


def test_benchmark_tables_keep_english_and_speak_chinese() -> None:
    bench = calibrate.load_benchmark()
    bk.set_language("en")
    en_runs = bench.runs_table().column("run")
    assert any(r.startswith("Interleaved1F1B ") for r in en_runs)
    assert bench.summary("real").column("statistic")[0].endswith(" (default)")
    bk.set_language("zh")
    zh_runs = bench.runs_table().column("run")
    assert not any("Interleaved1F1B" in r for r in zh_runs)
    assert [r.replace("交错式 1F1B", "Interleaved1F1B") for r in zh_runs] == en_runs
    assert not any("Interleaved1F1B" in r for r in bench.predictions_table().column("from"))
    assert bench.summary("real").column("statistic")[0] == "逐类型模型（默认）"


def test_lab_summary_config_line() -> None:
    cfg = lab.LabConfig(schedule="1F1B", ranks=2, microbatches=8, hidden=256, seq=128, layers=2)
    fields = dict(schedule=cfg.schedule, torch_class=cfg.info.torch_class, ranks=cfg.ranks,
                  microbatches=cfg.microbatches, v=cfg.v, hidden=cfg.hidden, seq=cfg.seq, batch=cfg.batch,
                  layers=cfg.layers, backend=cfg.backend, threads=cfg.threads)
    bk.set_language("en")
    c = cfg
    assert bk.i18n.tr("lab.config", **fields) == (
        f"{c.schedule} ({c.info.torch_class}) p={c.ranks} m={c.microbatches} v={c.v} "
        f"hidden={c.hidden} seq={c.seq} batch={c.batch} layers/stage={c.layers} backend={c.backend} "
        f"threads/rank={c.threads}")
    bk.set_language("zh")
    zh = bk.i18n.tr("lab.config", **fields)
    assert "layers/stage" not in zh and "threads/rank" not in zh and f"每级 {c.layers} 层" in zh


def _plan() -> planner.PlanTable:
    model = bk.memory.Model(layers=32, hidden=4096, heads=32, seq=4096)
    return planner.plan(8, costs=bk.h200_costs(layers_per_rank=4), schedules=("interleaved", "dualpipe", "dualpipev"),
                        vs=(2,), ms=(32,), model=model, gpu_memory=40 * bk.memory.GB)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_planner_text_columns_line_up(lang: str) -> None:
    bk.set_language(lang)
    head, _, *rows = _plan().to_text(show_infeasible=True).splitlines()
    cut = [Table._width(line.rsplit("  ", 1)[0]) for line in [head, *rows]]
    assert len(set(cut)) == 1, (head, rows)
    if lang == "en":   # the English header as it always was
        assert head == (f"{'#':>2}  {'configuration':<32} {'step ms':>10} {'per mb':>8} {'bubble':>7} "
                        f"{'total GB':>8} {'hops':>5}  fits")
    else:
        assert "单步耗时（ms）" in head and "ms/步" not in head


def test_chinese_headers_use_full_width_brackets() -> None:
    from bubblekit.i18n import tr
    bk.set_language("zh")
    for key in ("traces.gpu.col.span_us", "traces.gpu.col.idle_us", "traces.gpu.col.idle_ms",
                "traces.gpu.col.nothing_ms", "calibrate.overview.action"):
        text = tr(key)
        assert " (" not in text and "（" in text and "us）" not in text, text
