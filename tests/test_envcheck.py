"""The lesson 00 environment check (:mod:`bubblekit.course.envcheck`)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata

import pytest

import bubblekit as bk
from bubblekit.course import envcheck
from bubblekit.course.checks._display import MARKS
from bubblekit.i18n import using_language


def test_report_lists_python_bubblekit_required_and_optional() -> None:
    report = envcheck.environment_report()
    names = [row.name for row in report.rows]
    assert names[:2] == ["python", "bubblekit"]
    assert set(envcheck.REQUIRED) | set(envcheck.OPTIONAL) <= set(names)
    assert report.versions()["bubblekit"] == bk.__version__
    assert report.versions()["numpy"] == metadata.version("numpy")
    assert report.ok and report.problems == []  # the test environment has every required package
    assert "environment ready" in repr(report) and "environment ready" in report._repr_html_()


def test_missing_or_old_required_package_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    real = envcheck._installed
    monkeypatch.setattr(envcheck, "_installed", lambda name: None if name == "sympy" else ("1.0" if name == "numpy" else real(name)))
    report = envcheck.environment_report()
    assert not report.ok
    assert report.problems == ["numpy: 1.0 is too old, need >= 1.24", "sympy: missing, need >= 1.12"]
    html = report._repr_html_()
    assert "NOT ready" in repr(report) and MARKS["wrong"] in html and "too old" in html and "missing" in html
    statuses = {row.name: row.status for row in report.rows}
    assert statuses["numpy"] == statuses["sympy"] == "wrong" and statuses["python"] == "correct"


def test_missing_optional_package_keeps_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    real = envcheck._installed
    monkeypatch.setattr(envcheck, "_installed", lambda name: None if name == "torch" else real(name))
    report = envcheck.environment_report()
    assert report.ok and report.versions()["torch"] is None
    assert "not installed" in repr(report)
    assert {row.name: row.status for row in report.rows}["torch"] == "missing"
    assert MARKS["missing"] in report._repr_html_()


def _emoji(text: str) -> list[str]:
    """Characters that need a colour-emoji font: pictographs, and the dingbats drawn as emoji (✅ ➖ ❌)."""
    return [ch for ch in text if ord(ch) >= 0x1F000 or ch in "\u2705\u2796\u274c\u274e\u2714\u2716"]


def test_marks_are_the_checks_text_symbols_never_emoji(monkeypatch: pytest.MonkeyPatch) -> None:
    real = envcheck._installed
    monkeypatch.setattr(envcheck, "_installed", lambda name: None if name in ("torch", "sympy") else real(name))
    report = envcheck.environment_report()
    html, text = report._repr_html_(), repr(report)
    assert not _emoji(html) and not _emoji(text)
    for status in ("correct", "missing", "wrong"):
        assert MARKS[status] in html and MARKS[status] in text
    assert "bubblekit-mark" in html  # drawn in a font stack that has the symbols, beside a word
    monkeypatch.setenv("BUBBLEKIT_ASCII", "1")
    ascii_text = repr(report)
    assert ascii_text.isascii() and "[ok] python" in ascii_text and "[x] sympy" in ascii_text


@pytest.mark.parametrize(("text", "parts"), [("2.13.0+cpu", (2, 13, 0)), ("8.1", (8, 1)), ("1.24rc1", (1, 24)), ("x", ())])
def test_version_tuple(text: str, parts: tuple[int, ...]) -> None:
    assert envcheck._version_tuple(text) == parts


def test_envcheck_and_checks_import_no_plotting_widgets_or_torch() -> None:
    code = ("import sys, bubblekit.course.envcheck as e, bubblekit.course.checks as c; e.environment_report(); c.ids(); "
            "print(sorted(m for m in ('matplotlib', 'ipywidgets', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_report_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chinese words (headers, marks' words, what each package is for, the verdict); names and versions as they are."""
    real = envcheck._installed
    monkeypatch.setattr(envcheck, "_installed", lambda name: None if name in ("torch", "sympy") else real(name))
    with using_language("zh"):
        report = envcheck.environment_report()
        text, html = repr(report), report._repr_html_()
        assert report.problems == ["sympy：缺失，需要 >= 1.12"]
    assert text.startswith("平台：") and "未安装" in text and "可选：第 06 课" in text and "环境未就绪：sympy" in text
    assert "<th>包</th>" in html and "未安装" in html and "本课程" in html
    shown = re.sub(r"<[^>]*>", " ", html)  # the page's text, not its markup (class names stay English)
    for english in ("not installed", "optional", "this course", "ready", "missing", "package", "platform"):
        assert english not in text and english not in shown, english
    lines = text.splitlines()[1:-1]  # the version column lines up although 未安装 is three wide characters
    starts = [line.index(">=") if ">=" in line else line.index("本") if "本" in line else line.index("可") for line in lines]
    widths = {sum(2 if ord(ch) > 0x2E80 else 1 for ch in line[:k]) for line, k in zip(lines, starts)}
    assert len(widths) == 1, text


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_no_install_edition_needs_no_matplotlib_numpy_or_torch(monkeypatch: pytest.MonkeyPatch,
                                                                    language: str) -> None:
    """In the browser (JupyterLite on Pyodide) numpy, matplotlib, torch and JupyterLab are missing, and that is
    expected: the report is ready, says why in the learner's language, and still requires ipywidgets and sympy."""
    real = envcheck._installed
    absent = ("numpy", "matplotlib", "torch", "jupyterlab")
    monkeypatch.setattr(envcheck, "_installed", lambda name: None if name in absent else real(name))
    monkeypatch.setattr(envcheck, "svg_edition", lambda: True)
    monkeypatch.setattr(envcheck, "_in_browser", lambda: True)
    words = {"en": ("not needed in the no-install edition", "JupyterLab edition", "Pyodide",
                    "environment ready for the no-install edition"),
             "zh": ("免安装版不需要", "JupyterLab 版", "Pyodide", "免安装版的环境已就绪")}[language]
    with using_language(language):
        report = envcheck.environment_report()
        text, html = repr(report), report._repr_html_()
        assert report.ok and report.problems == [] and report.svg and report.browser
        assert {row.name: row.status for row in report.rows if row.name in absent} == dict.fromkeys(absent, "missing")
        assert MARKS["wrong"] not in text
        for word in words:
            assert word in text and word in html, word
        assert text.splitlines()[0].endswith(words[2] + ("：Python 在这个浏览器页面里运行）" if language == "zh"
                                                         else ": Python runs in this browser page)"))
        # ipywidgets and sympy are still needed there (the explorers, the formulas)
        monkeypatch.setattr(envcheck, "_installed", lambda name: None if name in (*absent, "ipywidgets") else real(name))
        missing = envcheck.environment_report()
        assert not missing.ok and [p.split(":")[0].split("：")[0] for p in missing.problems] == ["ipywidgets"]


def test_svg_edition_is_where_matplotlib_or_numpy_cannot_be_found(monkeypatch: pytest.MonkeyPatch) -> None:
    assert envcheck.svg_edition() is False  # the test environment has both
    real = envcheck.importlib.util.find_spec
    monkeypatch.setattr(envcheck.importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a))
    assert envcheck.svg_edition() is True
