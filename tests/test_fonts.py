"""Figures render Chinese: a CJK font is chosen when the language is Chinese.

The rendering tests turn matplotlib's missing-glyph warning ("Glyph ... missing from font(s)")
into an error, draw a figure with Chinese in every kind of text (title, axis labels, tick
labels, legend, a table, an annotation) and save it as PNG and SVG. They need a CJK font on
the machine, found the way the course finds one (:func:`bubblekit.presentation.fonts.find_cjk_font`);
CI installs Debian's fonts-noto-cjk in .ci/run. Without one they skip, except under ``CI=true``,
where they fail; the test of the warning still runs. The browser's font (fontconfig) is checked
by :func:`bubblekit.presentation.fonts.browser_cjk_fonts`, tested with a fontconfig that has none.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import warnings
from collections.abc import Iterator

import matplotlib
import pytest
from matplotlib import font_manager
from matplotlib.figure import Figure

from bubblekit import i18n
from bubblekit.presentation import fonts

MISSING_GLYPH = r"(?s).*Glyph .* missing from font"
ZH_TEXT = {
    "title": "1F1B 的气泡比例（p = 4）",
    "xlabel": "时间槽 → 单步耗时 102.6 ms",
    "ylabel": "rank / 流水级",
    "legend": ("前向 F", "反向 B"),
    "table": [["调度", "气泡比例"], ["GPipe", "27.3%"], ["交错式 1F1B（VPP）", "15.8%"]],
    "note": "排空：rank 0 空闲 −3 个时间槽，降为原来的 1/16",
}


@pytest.fixture(autouse=True)
def clean_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)
    monkeypatch.delenv(fonts.FONT_ENV_VAR, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    monkeypatch.setattr(fonts, "_added", None)
    monkeypatch.setattr(fonts, "_warned", False)
    with matplotlib.rc_context({"font.family": ["sans-serif"]}):
        yield
    i18n._chosen = None


def has_cjk_font() -> bool:
    """Whether the course finds a CJK font, by its own discovery (:func:`fonts.find_cjk_font`: the
    environment variable, matplotlib's font list, then font files installed after matplotlib built
    its cache), not by matplotlib's cached list alone (which predates a font installed later)."""
    try:
        return fonts.find_cjk_font() is not None
    except ValueError:  # BUBBLEKIT_CJK_FONT names nothing usable
        return False


HAS_CJK = has_cjk_font()
NO_CJK = "no CJK font installed (Debian/Ubuntu: apt-get install fonts-noto-cjk)"


@pytest.fixture()
def cjk_font() -> None:
    """Skip without a CJK font; under CI (``CI=true``, where .ci/run installs fonts-noto-cjk) fail instead."""
    if not HAS_CJK:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"{NO_CJK}: CI must have one, so these tests may not skip")
        pytest.skip(NO_CJK)


needs_cjk = pytest.mark.usefixtures("cjk_font")


def chinese_figure() -> Figure:
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.plot([0, 1, 2], [0.27, 0.2, 0.16], label=ZH_TEXT["legend"][0])
    ax.plot([0, 1, 2], [0.3, 0.25, 0.2], label=ZH_TEXT["legend"][1])
    ax.set(title=ZH_TEXT["title"], xlabel=ZH_TEXT["xlabel"], ylabel=ZH_TEXT["ylabel"])
    ax.set_xticks([0, 1, 2], ["预热", "稳态", "排空"])
    ax.legend()
    ax.table(cellText=ZH_TEXT["table"], loc="top", cellLoc="center", bbox=(0.0, 1.15, 1.0, 0.3))
    ax.annotate(ZH_TEXT["note"], (1, 0.2), xytext=(0, 0.1))
    fig.suptitle("零气泡调度与显存")
    return fig


def render(fig: Figure) -> None:
    """Draw as PNG and SVG with a missing glyph turned into an error."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MISSING_GLYPH)
        for fmt in ("png", "svg"):
            fig.savefig(io.BytesIO(), format=fmt)


@needs_cjk
def test_chinese_figure_renders_every_glyph_when_the_language_is_chinese() -> None:
    i18n.set_language("zh")
    family = fonts.use_language_font()
    assert family in fonts.CJK_FAMILIES
    assert matplotlib.rcParams["font.family"][0] == family and "sans-serif" in matplotlib.rcParams["font.family"]
    render(chinese_figure())


@needs_cjk
def test_without_the_cjk_font_the_same_figure_fails() -> None:
    """The check above can fail: DejaVu Sans alone has no Chinese glyphs."""
    matplotlib.rcParams["font.family"] = ["DejaVu Sans"]
    with pytest.raises(UserWarning, match="missing from font"):
        render(chinese_figure())


@needs_cjk
def test_the_font_follows_set_language_and_leaves_for_english() -> None:
    i18n.set_language("zh")  # the module listens: no explicit call
    first = matplotlib.rcParams["font.family"][0]
    assert first in fonts.CJK_FAMILIES
    i18n.set_language("en")
    assert matplotlib.rcParams["font.family"] == ["sans-serif"]
    with i18n.using_language("zh"):
        assert matplotlib.rcParams["font.family"][0] == first
    assert matplotlib.rcParams["font.family"] == ["sans-serif"]


@needs_cjk
def test_a_cjk_family_already_first_is_kept_for_english() -> None:
    """plotting.use_course_style may put one first itself: English leaves it there."""
    cjk = fonts.find_cjk_font()
    assert cjk is not None
    matplotlib.rcParams["font.family"] = [cjk, "DejaVu Sans"]
    assert fonts.use_language_font("zh") == cjk
    fonts.use_language_font("en")
    assert matplotlib.rcParams["font.family"] == [cjk, "DejaVu Sans"]


@needs_cjk
def test_a_font_installed_after_the_cache_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """matplotlib's cached font list predates the font: the system folders are searched."""
    manager = font_manager.fontManager
    kept = [e for e in manager.ttflist if e.name not in fonts.CJK_FAMILIES and "CJK" not in e.name]
    monkeypatch.setattr(manager, "ttflist", kept)
    assert fonts._first_installed() is None
    assert fonts.find_cjk_font() in fonts.CJK_FAMILIES


@needs_cjk
def test_font_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in font_manager.fontManager.ttflist if e.name in fonts.CJK_FAMILIES)
    monkeypatch.setenv(fonts.FONT_ENV_VAR, entry.fname)
    assert fonts.find_cjk_font() in fonts.CJK_FAMILIES
    monkeypatch.setenv(fonts.FONT_ENV_VAR, entry.name)
    assert fonts.find_cjk_font() == entry.name
    monkeypatch.setenv(fonts.FONT_ENV_VAR, "/nowhere/NoSuchFont.otf")
    with pytest.raises(ValueError, match=r"BUBBLEKIT_CJK_FONT='/nowhere/NoSuchFont.otf' is neither"):
        fonts.find_cjk_font()


@pytest.mark.parametrize("language, phrase", [("en", "apt-get install fonts-noto-cjk"), ("zh", "找不到中文")])
def test_no_cjk_font_warns_once_with_install_help(monkeypatch: pytest.MonkeyPatch, language: str, phrase: str) -> None:
    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [e for e in manager.ttflist if "CJK" not in e.name
                                             and e.name not in fonts.CJK_FAMILIES])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    monkeypatch.setattr(i18n, "_listeners", [])  # only the explicit call below looks for a font
    with i18n.using_language(language):
        with pytest.warns(UserWarning, match=phrase) as record:
            assert fonts.use_language_font("zh") is None
        assert fonts.FONT_ENV_VAR in str(record[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fonts.use_language_font("zh")  # once per process


def test_bad_language() -> None:
    with pytest.raises(ValueError, match="language='fr'"):
        fonts.use_language_font("fr")


def test_cjk_families_prefer_simplified_chinese() -> None:
    assert fonts.CJK_FAMILIES[0] == "Noto Sans CJK SC"
    assert fonts.CJK_FAMILIES.index("Noto Sans CJK SC") < fonts.CJK_FAMILIES.index("Noto Sans CJK JP")


@needs_cjk
def test_every_course_figure_renders_in_chinese_without_the_style() -> None:
    """Every kind of figure bubblekit draws, in Chinese, with no course style set first: the font
    follows bk.set_language (plotting imports fonts), and the animation's fixed-width readout
    falls back to the CJK font. A missing glyph is an error."""
    import bubblekit as bk
    from bubblekit.presentation import explorers, plotting

    i18n.set_language("zh")
    interleaved = bk.simulate(bk.schedule("interleaved", 4, 8, 2), bk.preset("b=2f"))
    dualpipe = bk.simulate(bk.schedule("dualpipe", 4, 8), bk.Costs(f=1, i=1, w=1))
    figures = [
        plotting.plot_pipeline(interleaved, phases=True, critical_path=True),
        plotting.plot_pipeline(dualpipe),
        plotting.plot_memory([interleaved, dualpipe], cap=5),
        plotting.plot_sweep(["1f1b", "interleaved"], 4, [4, 8, 16], v=2),
    ]
    anim = plotting.animate_pipeline(interleaved)
    anim._init_draw()
    anim._draw_next_frame(3, blit=False)
    figures.append(anim._fig)
    for fig in figures:
        render(fig)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MISSING_GLYPH)
        ex = explorers.pipeline_explorer("1f1b", p=4, m=8, compare="gpipe")
        ex.controls["cap"].value = 2.0
        explorers.schedule_builder(p=2, m=4)
        explorers.frontier_explorer(p=4, m=8)


@needs_cjk
def test_the_animation_readout_draws_chinese() -> None:
    """Lesson 01's animation writes its readout in a fixed-width font; in Chinese the CJK font draws the rest."""
    import bubblekit as bk
    from bubblekit.presentation import plotting

    i18n.set_language("zh")
    anim = plotting.animate_pipeline(bk.simulate(bk.schedule("gpipe", 4, 4), bk.preset("b=2f")), frames=3)
    readout = next(t for t in anim._fig.texts if t.get_gid() == "readout")
    assert re.search(r"[\u4e00-\u9fff]", readout.get_text()), readout.get_text()
    render(anim._fig)
    with warnings.catch_warnings():  # every frame, as the lesson's HTML player gets them
        warnings.filterwarnings("error", message=MISSING_GLYPH)
        assert "<img" in anim.to_jshtml(fps=5, default_mode="once")


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig (fc-list) not installed")
def test_the_browser_check_warns_with_a_fontconfig_without_cjk(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """FONTCONFIG_FILE pointing at a configuration with an empty font folder: no font for Chinese,
    so the check (what ``course.sh lab --lang zh`` runs) prints the install line, in either language."""
    (tmp_path / "fonts").mkdir()
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
                    f"<fontconfig><dir>{tmp_path / 'fonts'}</dir><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>\n")
    monkeypatch.setenv("FONTCONFIG_FILE", str(conf))
    assert fonts.browser_cjk_fonts() == []
    for language, phrase in (("en", "fc-list :lang=zh"), ("zh", "浏览器找不到可用的中文字体")):
        assert fonts.main(["--check-browser", "--lang", language]) == 0
        err = capsys.readouterr().err
        assert phrase in err and "apt-get install fonts-noto-cjk" in err, err
    assert fonts.main(["--check-browser", "--strict"]) == 1


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig (fc-list) not installed")
def test_the_browser_check_is_quiet_with_a_cjk_font(cjk_font: None, capsys: pytest.CaptureFixture[str]) -> None:
    found = fonts.browser_cjk_fonts()
    if not found:
        pytest.skip("matplotlib finds a CJK font that fontconfig does not list (BUBBLEKIT_CJK_FONT)")
    assert fonts.browser_font_warning() is None
    assert fonts.main(["--check-browser", "--strict"]) == 0 and capsys.readouterr().err == ""


def test_the_browser_check_without_fontconfig(monkeypatch: pytest.MonkeyPatch) -> None:
    """No fc-list (macOS, Windows): the browser uses the system's fonts, which include Chinese ones: no warning."""
    monkeypatch.setattr(fonts.shutil, "which", lambda name: None)
    assert fonts.browser_cjk_fonts() is None and fonts.browser_font_warning() is None
