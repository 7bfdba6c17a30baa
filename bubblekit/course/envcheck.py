"""Environment check for lesson 00: which versions are installed, and is anything missing?

Versions come from installed package metadata (:mod:`importlib.metadata`), so this module
imports no matplotlib, widgets or torch itself (it is part of the pure core)::

    from bubblekit.course.envcheck import environment_report
    report = environment_report()
    report          # a table in a notebook; report.ok is True when every required package is there

Required packages are those of the JupyterLab edition (sympy, bubblekit's one dependency, and
the ``plots`` extra: matplotlib, ipywidgets, numpy); ``torch`` (the ``lab`` extra, for lesson 06's
real run) and JupyterLab are optional.

Where matplotlib or numpy cannot be found (:func:`svg_edition`: the no-install edition, JupyterLite
on Pyodide in the browser, or any Python without them), bubblekit draws its pictures as SVG
(``bk.plotting`` is :mod:`bubblekit.presentation.svg_plotting`), so the two are not needed there:
their rows say so (``○``, "not needed in the no-install edition"), torch and JupyterLab are the
JupyterLab edition's, and the verdict is "environment ready for the no-install edition". In the
browser (``sys.platform == "emscripten"``) the platform line says that Python runs in the page.

Marks are the exercise checks' (:mod:`bubblekit.course.checks._display`): ``✓`` present,
``○`` optional and not installed, ``✗`` missing or too old; text symbols in fonts that carry
them, never emoji (which show as empty boxes without an emoji font), beside a word that says
the same; a terminal that cannot show them gets ``[ok]``, ``[ ]``, ``[x]``.

Its words (headers, ``ok`` / ``not installed`` / ``missing`` / ``too old``, what each package is
for, the verdict) are in the current language (:func:`bubblekit.set_language`), from the
message catalogue; package names and versions are not translated.
"""

from __future__ import annotations

import html
import importlib.util
import platform
import re
import sys
import unicodedata
from dataclasses import dataclass
from importlib import metadata

from bubblekit.course.checks._display import mark_html, plain
from bubblekit.i18n import get_language, register, tr

__all__ = ["EnvRow", "EnvReport", "environment_report", "svg_edition", "REQUIRED", "OPTIONAL", "SVG_NOT_NEEDED"]

#: Packages the lessons need, with the minimum version pyproject.toml asks for.
REQUIRED: dict[str, str] = {"numpy": "1.24", "matplotlib": "3.7", "ipywidgets": "8.0", "sympy": "1.12"}
#: Packages some lessons use when present: the reason is shown when missing.
OPTIONAL: dict[str, str] = {
    "jupyterlab": "to open the course (bash course.sh lab)",
    "torch": "lesson 06's real pipeline run (bash course.sh setup --torch)",
}
#: Required packages that the no-install edition does without: its pictures are SVG (:func:`svg_edition`).
SVG_NOT_NEEDED: tuple[str, ...] = ("numpy", "matplotlib")
#: ``EnvRow.needed`` of such a package there, and the start of an optional one's (the JupyterLab edition's).
_NOT_NEEDED = "not needed in the no-install edition"
_JUPYTERLAB_EDITION = "the JupyterLab edition: "
#: Oldest Python the course supports.
MIN_PYTHON = (3, 10)

#: Between two problems in the verdict, per language (punctuation only: not a catalogue message).
_SEPARATOR = {"en": "; ", "zh": "；"}

register({
    "envcheck.platform": {"en": "platform: {platform}", "zh": "平台：{platform}"},
    "envcheck.ok": {"en": "ok", "zh": "正常"},
    "envcheck.not_installed": {"en": "not installed", "zh": "未安装"},
    "envcheck.missing": {"en": "missing", "zh": "缺失"},
    "envcheck.too_old": {"en": "too old", "zh": "版本过旧"},
    "envcheck.ready": {"en": "environment ready", "zh": "环境就绪"},
    "envcheck.not_ready": {"en": "NOT ready: {problems}", "zh": "环境未就绪：{problems}"},
    "envcheck.problem_missing": {"en": "{name}: missing, need {needed}", "zh": "{name}：缺失，需要 {needed}"},
    "envcheck.problem_old": {"en": "{name}: {version} is too old, need {needed}",
                             "zh": "{name}：{version} 版本过旧，需要 {needed}"},
    "envcheck.this_course": {"en": "this course", "zh": "本课程自带"},
    "envcheck.optional": {"en": "optional: {why}", "zh": "可选：{why}"},
    "envcheck.why.jupyterlab": {"en": "to open the course (bash course.sh lab)",
                                "zh": "打开课程时需要（bash course.sh lab）"},
    "envcheck.why.torch": {"en": "lesson 06's real pipeline run (bash course.sh setup --torch)",
                           "zh": "第 06 课实际运行流水线时需要（bash course.sh setup --torch）"},
    "envcheck.platform_browser": {"en": "platform: {platform} (Pyodide: Python runs in this browser page)",
                                  "zh": "平台：{platform}（Pyodide：Python 在这个浏览器页面里运行）"},
    "envcheck.not_needed": {"en": "not needed in the no-install edition: its pictures are SVG",
                            "zh": "免安装版不需要：它的图都是 SVG"},
    "envcheck.edition.jupyterlab": {"en": "the JupyterLab edition's (bash course.sh lab); not needed here",
                                    "zh": "JupyterLab 版才需要（bash course.sh lab）；这里不需要"},
    "envcheck.edition.torch": {"en": "lesson 06's real pipeline run, in the JupyterLab edition only "
                                     "(bash course.sh setup --torch)",
                               "zh": "第 06 课实际运行流水线时需要，只在 JupyterLab 版中（bash course.sh setup --torch）"},
    "envcheck.ready_svg": {
        "en": ("environment ready for the no-install edition: the pictures are SVG, without matplotlib and numpy; "
               "lesson 06 (torch) and the pictures only matplotlib draws are in the JupyterLab edition "
               "(bash course.sh setup)"),
        "zh": ("免安装版的环境已就绪：图以 SVG 绘制，不需要 matplotlib 和 numpy；第 06 课（torch）和只有 matplotlib "
               "能画的图在 JupyterLab 版中（bash course.sh setup）"),
    },
    "envcheck.col.package": {"en": "package", "zh": "包"},
    "envcheck.col.installed": {"en": "installed", "zh": "已安装"},
    "envcheck.col.needed": {"en": "needed", "zh": "要求"},
})


@dataclass(frozen=True)
class EnvRow:
    """One line of the report.

    Attributes:
        name: package (or ``"python"``).
        version: installed version, or ``None`` when missing.
        needed: what the course needs (``">= 3.7"``, ``"optional: ..."``).
        ok: False only for a missing or too old required package.
    """

    name: str
    version: str | None
    needed: str
    ok: bool

    @property
    def status(self) -> str:
        """The mark's status: ``"correct"`` (installed and good), ``"missing"`` (optional, not
        installed) or ``"wrong"`` (required and missing or too old)."""
        if not self.ok:
            return "wrong"
        return "correct" if self.version else "missing"

    @property
    def word(self) -> str:
        """What the mark means, in words (current language): ``ok``, ``not installed`` or ``missing`` / ``too old``."""
        if self.ok:
            return tr("envcheck.ok") if self.version else tr("envcheck.not_installed")
        return tr("envcheck.missing") if self.version is None else tr("envcheck.too_old")

    @property
    def needed_text(self) -> str:
        """:attr:`needed` in the current language (``"optional: ..."``, ``"this course"``; versions as they are)."""
        if self.needed == "this course":
            return tr("envcheck.this_course")
        if self.needed == _NOT_NEEDED:
            return tr("envcheck.not_needed")
        if self.needed.startswith(_JUPYTERLAB_EDITION) and self.name in OPTIONAL:
            return tr(f"envcheck.edition.{self.name}")
        if self.needed.startswith("optional: ") and self.name in OPTIONAL:
            return tr("envcheck.optional", why=tr(f"envcheck.why.{self.name}"))
        return self.needed


@dataclass(frozen=True)
class EnvReport:
    """The environment check: rows per package, ``ok`` when nothing required is missing.

    ``svg`` is True in the no-install edition's environment (:func:`svg_edition`); ``browser``
    when Python runs in a browser page (Pyodide).
    """

    rows: tuple[EnvRow, ...]
    platform: str
    svg: bool = False
    browser: bool = False

    @property
    def ok(self) -> bool:
        """True when Python and every required package are present and new enough."""
        return all(row.ok for row in self.rows)

    @property
    def problems(self) -> list[str]:
        """One sentence per missing or too-old required package (empty when ``ok``), in the current language."""
        return [
            tr("envcheck.problem_missing", name=row.name, needed=row.needed_text) if row.version is None
            else tr("envcheck.problem_old", name=row.name, version=row.version, needed=row.needed_text)
            for row in self.rows
            if not row.ok
        ]

    def _verdict(self) -> str:
        if self.ok:
            return tr("envcheck.ready_svg") if self.svg else tr("envcheck.ready")
        return tr("envcheck.not_ready", problems=_SEPARATOR[get_language()].join(self.problems))

    def versions(self) -> dict[str, str | None]:
        """Package name -> installed version (``None`` when missing)."""
        return {row.name: row.version for row in self.rows}

    def __repr__(self) -> str:
        width = max(len(row.name) for row in self.rows)
        lines = [self._platform_line()]
        for row in self.rows:
            version = row.version or tr("envcheck.not_installed")
            lines.append(plain(row.status, f"{row.name:<{width}}  {_pad(version, 14)}  {row.needed_text}"))
        lines.append(self._verdict())
        return "\n".join(lines)

    def _platform_line(self) -> str:
        return tr("envcheck.platform_browser" if self.browser else "envcheck.platform", platform=self.platform)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{mark_html(row.status)} {html.escape(row.word)}</td>"
            f"<td><code>{html.escape(row.name)}</code></td>"
            f"<td>{html.escape(row.version or tr('envcheck.not_installed'))}</td>"
            f"<td>{html.escape(row.needed_text)}</td></tr>"
            for row in self.rows
        )
        head = "".join(f"<th>{html.escape(tr(f'envcheck.col.{c}'))}</th>" for c in ("package", "installed", "needed"))
        return (
            f"<table><thead><tr><th></th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table><p>{html.escape(self._platform_line() if self.browser else self.platform)} — "
            f"<b>{html.escape(self._verdict())}</b></p>"
        )


def _pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (a CJK character takes two)."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(0, width - shown)


def _version_tuple(text: str) -> tuple[int, ...]:
    """Leading numeric release parts: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``."""
    parts = []
    for piece in text.split("."):
        match = re.match(r"\d+", piece)
        if match is None:
            break
        parts.append(int(match.group()))
    return tuple(parts)


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _in_browser() -> bool:
    """True in a browser page: Pyodide, Python compiled to WebAssembly (JupyterLite's kernel)."""
    return sys.platform == "emscripten"


def svg_edition() -> bool:
    """True where matplotlib or numpy cannot be found (looked up, not imported): bubblekit then draws its
    pictures as SVG (``bk.plotting`` is :mod:`bubblekit.presentation.svg_plotting`), as in the no-install
    edition in the browser (JupyterLite on Pyodide), so neither is needed."""
    return any(importlib.util.find_spec(name) is None for name in SVG_NOT_NEEDED)


def environment_report() -> EnvReport:
    """Check Python, bubblekit, the required packages and the optional ones; return an :class:`EnvReport`.

    In the no-install edition's environment (:func:`svg_edition`) numpy and matplotlib are not needed
    and the optional packages are the JupyterLab edition's: the report says so, in the current language.
    """
    from bubblekit import __version__

    svg = svg_edition()
    py = platform.python_version()
    rows = [EnvRow("python", py, ">= " + ".".join(map(str, MIN_PYTHON)), sys.version_info[:2] >= MIN_PYTHON)]
    rows.append(EnvRow("bubblekit", __version__, "this course", True))
    for name, minimum in REQUIRED.items():
        version = _installed(name)
        if svg and name in SVG_NOT_NEEDED:
            rows.append(EnvRow(name, version, _NOT_NEEDED, True))
            continue
        ok = version is not None and _version_tuple(version) >= _version_tuple(minimum)
        rows.append(EnvRow(name, version, f">= {minimum}", ok))
    for name, why in OPTIONAL.items():
        rows.append(EnvRow(name, _installed(name), (_JUPYTERLAB_EDITION if svg else "optional: ") + why, True))
    return EnvReport(tuple(rows), f"{platform.system()} {platform.machine()}, Python {py}", svg=svg,
                     browser=_in_browser())
