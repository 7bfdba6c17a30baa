"""Tests of the command line (bubblekit.cli) and of the article's demo (bubblekit.course.demo).

The oracle for the demo is the source article's own code, copied below unchanged (its
section "Python 演示"): bubblekit must print the same numbers with the same format strings.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import bubblekit as bk
from bubblekit import cli
from bubblekit.course.demo import (
    ARTICLE_MS,
    ARTICLE_P,
    check_against_simulator,
    demo_table,
    demo_text,
)

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------- the article's code, verbatim
def article_bubble_ratio(p, m, v=1):
    """计算流水线并行气泡占比。    p: 流水级数; m: 微批数; v: 虚拟段数(1代表普通调度)    """
    if v <= 1:
        return (p - 1) / (m + p - 1)
    return (p - 1) / (p + m * v - 1)


def article_utilization(p, m):
    """由气泡占比推导 GPU 利用率。"""
    return 1 - article_bubble_ratio(p, m)


def article_min_micro_batch(p, target=0.2):
    """找到让气泡占比低于目标值的最小微批数。"""
    for m in range(1, 129):
        if article_bubble_ratio(p, m) <= target:
            return m
    return None


def article_main():
    p = 8
    print(f"流水级 p = {p}")
    print("微批 m   普通气泡   1F1B气泡   交错v=2气泡")
    for m in [2, 4, 8, 16, 32]:
        ordinary = article_bubble_ratio(p, m)
        inter = article_bubble_ratio(p, m, v=2)
        print(f"m={m:3d}   {ordinary:6.1%}    {ordinary:6.1%}      {inter:6.1%}")
    print(f"\nm=8 时 GPU 利用率约 {article_utilization(p, 8):.1%}")
    need = article_min_micro_batch(p, 0.2)
    print(f"要把气泡压到 20% 以下，至少需要 m = {need}")


def _article_output() -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        article_main()
    return buf.getvalue()


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------ demo
def test_demo_in_chinese_is_the_articles_output_character_for_character() -> None:
    assert demo_text("zh", check=False) == _article_output()
    assert demo_text("zh").startswith(_article_output())


def test_demo_in_english_prints_the_same_numbers() -> None:
    pct = re.compile(r"\d+\.\d%")
    article = _article_output()
    english = demo_text("en", check=False)
    assert pct.findall(english) == pct.findall(article)
    assert english.rstrip().endswith(f"m must be at least {article_min_micro_batch(8, 0.2)}")


def test_demo_check_speaks_the_language_asked_for() -> None:
    """The simulator check under the table: Chinese for "zh" (or the current language by default), lines <= 80 columns."""
    from bubblekit.i18n import using_language

    chinese = demo_text("zh")
    check = chinese[len(_article_output()):]
    assert "用模拟器逐格核对" in check and "m=2：公式  63.6%，模拟  76.5%" in check
    assert not re.search(r"\b(the|formula|simulated|checked|equal)\b", check), check
    for line in chinese.splitlines():
        assert sum(2 if ord(ch) > 0x2E80 else 1 for ch in line) <= 80, line
    with using_language("zh"):
        assert demo_text() == chinese
    with using_language("en"):
        assert demo_text() == demo_text("en")


def test_demo_table_equals_the_articles_functions() -> None:
    rows = demo_table()
    assert [r.m for r in rows] == [2, 4, 8, 16, 32]
    for r in rows:
        assert r.ordinary == pytest.approx(article_bubble_ratio(ARTICLE_P, r.m), rel=1e-15)
        assert r.one_f_one_b == r.ordinary
        assert r.interleaved == pytest.approx(article_bubble_ratio(ARTICLE_P, r.m, v=2), rel=1e-15)
    assert bk.utilization(8, 8) == pytest.approx(article_utilization(8, 8))
    assert bk.min_micro_batch(8, 0.2) == article_min_micro_batch(8, 0.2)


def test_every_row_is_checked_against_the_simulator() -> None:
    checks = check_against_simulator()
    assert {(c.m, c.schedule) for c in checks} == {
        (m, s) for m in ARTICLE_MS for s in ("gpipe", "1f1b", "interleaved")
    }
    for c in checks:
        assert c.simulated is not None
        sched = bk.schedule(c.schedule, ARTICLE_P, c.m, None if c.v == 1 else c.v)
        assert c.simulated == bk.simulate(sched, bk.preset("uniform")).bubble_ratio
        if c.schedule in ("gpipe", "1f1b") or c.m >= ARTICLE_P:
            assert c.equal, c  # the formula is exact here
            assert c.simulated == pytest.approx(c.formula, rel=1e-12)
        else:  # interleaved with m < p: the formula does not apply
            assert not c.equal and c.simulated > c.formula and "below p" in c.note
    text = demo_text("en")
    for c in checks:
        if not c.equal:
            assert f"m={c.m}: formula {c.formula:6.1%}, simulated {c.simulated:6.1%}" in text
            row = next(line for line in text.splitlines() if line.startswith(f"m={c.m:3d}"))
            assert row.endswith("*")


def test_demo_command_and_python_dash_m() -> None:
    code, out, err = _run(["demo"])
    assert code == 0 and out == demo_text("en") and not err
    code, out, _ = _run(["demo", "--lang", "zh", "--no-check"])
    assert code == 0 and out == _article_output()
    proc = subprocess.run(
        [sys.executable, "-m", "bubblekit", "demo", "--lang", "zh", "--no-check"],
        capture_output=True, text=True, encoding="utf-8", cwd=ROOT, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _article_output()


def test_demo_does_not_import_matplotlib() -> None:
    code = ("import sys, bubblekit.cli as c; c.main(['demo', '--no-check']); "
            "sys.exit(1 if 'matplotlib' in sys.modules else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, "the demo (core) must not import matplotlib"


# ------------------------------------------------------------------ schedules
def test_schedules_lists_the_registry() -> None:
    code, out, _ = _run(["schedules"])
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert listed == bk.names()
    for spec in bk.REGISTRY.values():
        assert spec.summary in out


# ----------------------------------------------------------------------- plot
def test_plot_writes_a_valid_svg(tmp_path) -> None:
    path = tmp_path / "pipe.svg"
    code, out, err = _run(["plot", "--schedule", "1f1b", "-p", "3", "-m", "4", "-o", str(path)])
    assert code == 0, err
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    r = bk.simulate(bk.schedule("1f1b", 3, 4), bk.preset("b=2f"))
    assert f"bubble_ratio {r.bubble_ratio:.1%}" in out and f"bubble_overhead {r.bubble_overhead:.1%}" in out


def test_plot_in_chinese_prints_its_report_in_chinese(tmp_path) -> None:
    path = tmp_path / "pipe.svg"
    code, out, err = _run(["plot", "--lang", "zh", "--schedule", "gpipe,1f1b", "-p", "4", "-m", "8", "-o", str(path)])
    assert code == 0, err
    assert out.splitlines() == ["GPipe：单步耗时 33 个时间槽，气泡比例 27.3%，气泡开销（Megatron 口径）37.5%",
                                "1F1B：单步耗时 33 个时间槽，气泡比例 27.3%，气泡开销（Megatron 口径）37.5%",
                                f"已写入 {path}"]
    assert bk.get_language() == "en"  # --lang is for that one command, not the process
    code, out, err = _run(["plot", "--lang", "zh", "-o", str(path)])  # the file is there now
    assert code == 2 and err.startswith("bubblekit plot：错误：参数 -o/--output：") and "--force" in err, err


def test_plot_writes_a_valid_png_with_every_option(tmp_path) -> None:
    from PIL import Image

    path = tmp_path / "pipe.png"
    code, out, err = _run([
        "plot", "--schedule", "gpipe,interleaved", "-p", "2", "-m", "4", "-v", "2", "--preset", "b=2f",
        "--comm", "0.1", "--color-by", "kind", "--critical-path", "--phases", "--comm-arrows",
        "-o", str(path), "--dpi", "40",
    ])
    assert code == 0, err
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as im:
        assert im.size[0] > 100 and im.size[1] > 100
    costs = bk.preset("b=2f").with_(comm=0.1)
    for name, v in (("gpipe", None), ("interleaved", 2)):
        r = bk.simulate(bk.schedule(name, 2, 4, v), costs)
        assert f"{name}: makespan {float(r.makespan):g}" in out


@pytest.mark.parametrize(
    "argv, option",
    [
        (["--schedule", "1f2b"], "--schedule"),
        (["-v", "3"], "-v"),
        (["--schedule", "interleaved", "-v", "1"], "-v"),
        (["-p", "0"], "-p"),
        (["-m", "two"], "-m"),
        (["--schedule", "interleaved", "-p", "4", "-m", "9"], "-m"),
        (["--schedule", "dualpipev", "-p", "4", "-m", "3"], "-m"),
        (["--preset", "fast"], "--preset"),
        (["--comm", "-1"], "--comm"),
        (["--color-by", "stage"], "--color-by"),
        (["-p", "100", "-m", "100000"], "-m"),
        (["-o", "out.jpg"], "-o/--output"),
    ],
)
def test_bad_plot_options_exit_2_with_one_line_naming_the_option(tmp_path, argv, option) -> None:
    if "-o" not in argv:
        argv = [*argv, "-o", str(tmp_path / "x.png")]
    code, out, err = _run(["plot", *argv])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bubblekit plot: error: ")
    assert f"argument {option}" in lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


def test_missing_command_and_unknown_command_exit_2() -> None:
    for argv in ([], ["bogus"], ["plot"]):
        code, _, err = _run(argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_entry_point_is_declared() -> None:
    tomllib = pytest.importorskip("tomllib")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["scripts"]["bubblekit"] == "bubblekit.cli:main"


def test_help_lists_every_command_in_its_usage_line() -> None:
    text = cli.build_parser().format_help()
    usage = text.split("\n\n")[0]
    for command in ("demo", "plot", "schedules", "workspace", "classroom", "lab", "trace"):
        assert command in usage, (command, usage)


def test_trace_help_names_every_format_it_reads() -> None:
    from bubblekit.analysis.traces import cli as trace_cli

    text = " ".join(trace_cli.build_parser().format_help().split())
    for fmt in (".json", ".json.gz", ".csv", ".csv.gz", ".sqlite", "Kineto", "Nsight"):
        assert fmt in text, fmt
