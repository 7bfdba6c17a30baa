"""A Chinese (CJK) font for figures when the course speaks Chinese (presentation layer).

matplotlib's default font, DejaVu Sans, has no Chinese glyphs: a Chinese title would be
drawn as empty boxes ("tofu"). :func:`use_language_font` puts an installed CJK font first in
``rcParams["font.family"]`` when the language is ``"zh"`` (and takes it out again for
``"en"``); matplotlib falls back glyph by glyph to the families after it, so Latin text,
digits and symbols still render. Importing this module makes the font follow
:func:`bubblekit.set_language` from then on.

Where the font comes from, in this order:

1. ``BUBBLEKIT_CJK_FONT``: a font file (``.otf``, ``.ttf``, ``.ttc``) or an installed family name;
2. the first installed family of :data:`CJK_FAMILIES` (Debian/Ubuntu ``fonts-noto-cjk`` gives
   "Noto Sans CJK SC"; macOS has "PingFang SC", Windows "Microsoft YaHei");
3. a CJK font file installed after matplotlib built its font cache: the system's font
   folders are searched and such files registered for this process (what rebuilding the
   cache would do, without writing to matplotlib's cache folder).

When none is found, a warning (in the current language, and in English after a Chinese one: a
machine without the font may draw the Chinese warning itself as boxes) says how to install one;
figures still render, with boxes for the Chinese characters.

The browser needs a CJK font of its own for the Chinese lessons, menus and tables: on Linux it
takes fonts from fontconfig, so :func:`browser_cjk_fonts` asks ``fc-list :lang=zh``, and
``python -m bubblekit.presentation.fonts --check-browser`` (run by ``bash course.sh lab --lang
zh``) warns with the install line when there is none (macOS and Windows ship one).

The course does not depend on a font package from PyPI: the one that bundles CJK fonts for
matplotlib (``mplfonts``) is 85 MB, ships a font whose licence is not open, and its set-up
rewrites matplotlib's own files; a system font (or ``BUBBLEKIT_CJK_FONT``) is lighter and
is found here without any set-up.

Used by every Chinese lesson (through :mod:`bubblekit.presentation.plotting`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from matplotlib import font_manager, rcParams

from bubblekit import i18n

__all__ = ["CJK_FAMILIES", "FONT_ENV_VAR", "find_cjk_font", "use_language_font", "browser_cjk_fonts",
           "browser_font_warning", "main"]

#: CJK families, best first: simplified-Chinese faces before the Japanese/Traditional ones.
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC", "Source Han Sans SC", "Noto Sans SC", "Source Han Sans CN", "Sarasa Gothic SC",
    "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB",
    "Heiti SC", "SimHei", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR", "Noto Serif CJK SC",
    "Droid Sans Fallback",
)
#: Environment variable naming a font file or family to use for Chinese text.
FONT_ENV_VAR = "BUBBLEKIT_CJK_FONT"
#: Pieces of file names of CJK fonts, to find ones matplotlib's cache does not know yet.
_FILE_HINTS = ("cjk", "sourcehan", "source-han", "wqy", "wenquanyi", "msyh", "pingfang", "simhei",
               "notosanssc", "sarasa", "hiragino", "heiti", "droidsansfallback")

#: The family this module put into rcParams["font.family"] (taken out again for English).
_added: str | None = None
_warned = False

i18n.register({
    "fonts.missing": {
        "en": ("No Chinese (CJK) font found for matplotlib: Chinese text in figures will show as empty boxes. "
               "Install one, then restart the kernel: Debian/Ubuntu `sudo apt-get install fonts-noto-cjk`, "
               "Fedora `sudo dnf install google-noto-sans-cjk-fonts` (macOS and Windows have one already); "
               "or set {env} to a font file (.otf, .ttf or .ttc) or an installed family name."),
        "zh": ("matplotlib 找不到中文（CJK）字体，图中的中文会显示成方框。请安装一个字体后重启内核："
               "Debian/Ubuntu 运行 `sudo apt-get install fonts-noto-cjk`，"
               "Fedora 运行 `sudo dnf install google-noto-sans-cjk-fonts`（macOS 和 Windows 自带中文字体）；"
               "也可以把环境变量 {env} 设为一个字体文件（.otf、.ttf 或 .ttc）或已安装的字体名。"),
    },
    "fonts.browser_missing": {
        "en": ("No font for Chinese that the browser can use (fontconfig: `fc-list :lang=zh` lists none): "
               "every Chinese character would show as an empty box. Install one, then reload the page: "
               "Debian/Ubuntu `sudo apt-get install fonts-noto-cjk`, Fedora `sudo dnf install "
               "google-noto-sans-cjk-fonts` (macOS and Windows ship one)."),
        "zh": ("浏览器找不到可用的中文字体（fontconfig 的 `fc-list :lang=zh` 什么也没列出），每个中文字符都会显示成方框。"
               "请安装一个字体，然后刷新页面：Debian/Ubuntu 运行 `sudo apt-get install fonts-noto-cjk`，"
               "Fedora 运行 `sudo dnf install google-noto-sans-cjk-fonts`（macOS 和 Windows 自带中文字体）。"),
    },
})


def _installed() -> set[str]:
    return {entry.name for entry in font_manager.fontManager.ttflist}


def _first_installed() -> str | None:
    installed = _installed()
    return next((name for name in CJK_FAMILIES if name in installed), None)


def _register(path: Path) -> list[str]:
    """Add a font file to matplotlib's font list (this process only); the family names it brought."""
    before = _installed()
    try:
        font_manager.fontManager.addfont(str(path))
    except (OSError, RuntimeError, ValueError):  # unreadable or not a font: skip it
        return []
    return sorted(_installed() - before)


def _from_environment(value: str) -> str:
    path = Path(value).expanduser()
    if path.is_file():
        _register(path)
        names = [e.name for e in font_manager.fontManager.ttflist if Path(e.fname).resolve() == path.resolve()]
        names = names or [font_manager.FontProperties(fname=str(path)).get_name()]
        preferred = [n for n in CJK_FAMILIES if n in names]
        return (preferred or names)[0]
    if value in _installed():
        return value
    raise ValueError(
        f"{FONT_ENV_VAR}={value!r} is neither a font file nor an installed font family; "
        "give the path of a .otf/.ttf/.ttc file or a family name matplotlib knows"
    )


def find_cjk_font() -> str | None:
    """The family name of a CJK font matplotlib can use, or None.

    Order: ``BUBBLEKIT_CJK_FONT``, then :data:`CJK_FAMILIES` among matplotlib's fonts, then
    CJK font files in the system's font folders that matplotlib's cache does not list yet
    (registered for this process).

    Raises:
        ValueError: ``BUBBLEKIT_CJK_FONT`` names neither a font file nor an installed family.
    """
    value = os.environ.get(FONT_ENV_VAR, "").strip()
    if value:
        return _from_environment(value)
    found = _first_installed()
    if found is not None:
        return found
    known = {Path(entry.fname).resolve() for entry in font_manager.fontManager.ttflist}
    for name in font_manager.findSystemFonts():
        path = Path(name)
        if path.resolve() not in known and any(hint in path.name.lower() for hint in _FILE_HINTS):
            _register(path)
    return _first_installed()


def _families() -> list[str]:
    family = rcParams["font.family"]
    return [family] if isinstance(family, str) else list(family)


def use_language_font(language: str | None = None) -> str | None:
    """Make figures able to show ``language`` (default: the current one); return the CJK family used.

    For ``"zh"``: puts a CJK font (:func:`find_cjk_font`) first in ``rcParams["font.family"]``
    and returns its name; if there is none, warns once (how to install one; in English too when the
    current language is not English) and returns None.
    For ``"en"``: takes out the family this function added, and returns None.

    Used by :func:`bubblekit.presentation.plotting.use_course_style` and whenever
    :func:`bubblekit.set_language` changes the language.
    """
    global _added, _warned
    language = i18n.get_language() if language is None else language
    if language not in i18n.LANGUAGES:
        raise ValueError(f"language={language!r} is not a course language; choose one of {list(i18n.LANGUAGES)}")
    family = [name for name in _families() if name != _added]
    _added = None
    cjk = None
    if language == "zh":
        cjk = find_cjk_font()
        if cjk is None:
            if not _warned:
                _warned = True
                message = i18n.tr("fonts.missing", env=FONT_ENV_VAR)
                if i18n.get_language() != "en":  # the machine that lacks the font may draw this text as boxes too
                    message += "\n" + i18n.translate("fonts.missing", "en", env=FONT_ENV_VAR)
                warnings.warn(message, UserWarning, stacklevel=2)
        elif family[:1] != [cjk]:
            _added = None if cjk in family else cjk
            family = [cjk, *(name for name in family if name != cjk)]
    rcParams["font.family"] = family
    return cjk


def browser_cjk_fonts() -> list[str] | None:
    """The font families fontconfig offers for Chinese (``fc-list :lang=zh family``), which the
    browser on Linux draws Chinese with; sorted, empty when there is none. None when fontconfig's
    ``fc-list`` is not installed (macOS and Windows: the browser uses the system's own fonts,
    which include Chinese ones) or does not answer. Honours ``FONTCONFIG_FILE``.
    """
    exe = shutil.which("fc-list")
    if exe is None:
        return None
    try:
        run = subprocess.run([exe, ":lang=zh", "family"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if run.returncode != 0:
        return None
    return sorted({name.strip() for line in run.stdout.splitlines() for name in line.split(",")[:1] if name.strip()})


def browser_font_warning(language: str | None = None) -> str | None:
    """The warning (in ``language``, default the current one) that the browser has no font for
    Chinese, with the install line; None when it has one or when fontconfig cannot tell."""
    found = browser_cjk_fonts()
    if found is None or found:
        return None
    return i18n.translate("fonts.browser_missing", language or i18n.get_language())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bubblekit.presentation.fonts --check-browser [--lang zh]``: print the warning of
    :func:`browser_font_warning` to stderr when the browser has no font for Chinese, or the fonts
    found (exit status 0 either way: a missing font is worth a warning, not a stop); ``--strict``:
    exit 1 when there is none."""
    parser = argparse.ArgumentParser(prog="python -m bubblekit.presentation.fonts",
                                     description="Check that the browser has a font for Chinese (fontconfig).")
    parser.add_argument("--check-browser", action="store_true", required=True,
                        help="check fontconfig's fonts for Chinese (fc-list :lang=zh)")
    parser.add_argument("--lang", choices=i18n.LANGUAGES, default=None, help="the language of the message")
    parser.add_argument("--strict", action="store_true", help="exit 1 when there is no font for Chinese")
    args = parser.parse_args(argv)
    message = browser_font_warning(args.lang)
    if message is not None:
        print(f"warning: {message}", file=sys.stderr)
        return 1 if args.strict else 0
    return 0


i18n.on_language_change(use_language_font)
if i18n.get_language() == "zh":
    use_language_font("zh")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
