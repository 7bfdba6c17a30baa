"""Environment check for lesson 00: which versions are installed, and is anything missing?

Versions come from installed package metadata (:mod:`importlib.metadata`), so this module
imports no matplotlib, widgets or torch itself (it is part of the pure core)::

    from bubblekit.course.envcheck import environment_report
    report = environment_report()
    report          # a table in a notebook; report.ok is True when every required package is there

Required packages are bubblekit's own dependencies (matplotlib, sympy, ipywidgets, numpy);
``torch`` (the ``lab`` extra, for lesson 06's real run) and JupyterLab are optional.

Marks are the exercise checks' (:mod:`bubblekit.course.checks._display`): ``✓`` present,
``○`` optional and not installed, ``✗`` missing or too old; text symbols in fonts that carry
them, never emoji (which show as empty boxes without an emoji font), beside a word that says
the same; a terminal that cannot show them gets ``[ok]``, ``[ ]``, ``[x]``.
"""

from __future__ import annotations

import html
import platform
import re
import sys
from dataclasses import dataclass
from importlib import metadata

from bubblekit.course.checks._display import mark_html, plain

__all__ = ["EnvRow", "EnvReport", "environment_report", "REQUIRED", "OPTIONAL"]

#: Packages the lessons need, with the minimum version pyproject.toml asks for.
REQUIRED: dict[str, str] = {"numpy": "1.24", "matplotlib": "3.7", "ipywidgets": "8.0", "sympy": "1.12"}
#: Packages some lessons use when present: the reason is shown when missing.
OPTIONAL: dict[str, str] = {
    "jupyterlab": "to open the course (bash course.sh lab)",
    "torch": "lesson 06's real pipeline run (pip install -e '.[lab]')",
}
#: Oldest Python the course supports.
MIN_PYTHON = (3, 10)


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
        """What the mark means, in words: ``ok``, ``not installed`` or ``missing`` / ``too old``."""
        if self.ok:
            return "ok" if self.version else "not installed"
        return "missing" if self.version is None else "too old"


@dataclass(frozen=True)
class EnvReport:
    """The environment check: rows per package, ``ok`` when nothing required is missing."""

    rows: tuple[EnvRow, ...]
    platform: str

    @property
    def ok(self) -> bool:
        """True when Python and every required package are present and new enough."""
        return all(row.ok for row in self.rows)

    @property
    def problems(self) -> list[str]:
        """One sentence per missing or too-old required package (empty when ``ok``)."""
        return [
            f"{row.name}: {'missing' if row.version is None else row.version + ' is too old'}, need {row.needed}"
            for row in self.rows
            if not row.ok
        ]

    def versions(self) -> dict[str, str | None]:
        """Package name -> installed version (``None`` when missing)."""
        return {row.name: row.version for row in self.rows}

    def __repr__(self) -> str:
        width = max(len(row.name) for row in self.rows)
        lines = [f"platform: {self.platform}"]
        for row in self.rows:
            lines.append(plain(row.status, f"{row.name:<{width}}  {row.version or 'not installed':<14}  {row.needed}"))
        lines.append("environment ready" if self.ok else "NOT ready: " + "; ".join(self.problems))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{mark_html(row.status)} {html.escape(row.word)}</td>"
            f"<td><code>{html.escape(row.name)}</code></td><td>{html.escape(row.version or 'not installed')}</td>"
            f"<td>{html.escape(row.needed)}</td></tr>"
            for row in self.rows
        )
        verdict = "environment ready" if self.ok else "NOT ready: " + "; ".join(self.problems)
        return (
            f"<table><thead><tr><th></th><th>package</th><th>installed</th><th>needed</th></tr></thead>"
            f"<tbody>{body}</tbody></table><p>{html.escape(self.platform)} — <b>{html.escape(verdict)}</b></p>"
        )


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


def environment_report() -> EnvReport:
    """Check Python, bubblekit, the required packages and the optional ones; return an :class:`EnvReport`."""
    from bubblekit import __version__

    py = platform.python_version()
    rows = [EnvRow("python", py, ">= " + ".".join(map(str, MIN_PYTHON)), sys.version_info[:2] >= MIN_PYTHON)]
    rows.append(EnvRow("bubblekit", __version__, "this course", True))
    for name, minimum in REQUIRED.items():
        version = _installed(name)
        ok = version is not None and _version_tuple(version) >= _version_tuple(minimum)
        rows.append(EnvRow(name, version, f">= {minimum}", ok))
    for name, why in OPTIONAL.items():
        rows.append(EnvRow(name, _installed(name), f"optional: {why}", True))
    return EnvReport(tuple(rows), f"{platform.system()} {platform.machine()}, Python {py}")
