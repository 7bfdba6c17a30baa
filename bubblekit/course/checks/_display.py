"""How a check looks: marks that render everywhere, and their plain-text fallback.

No emoji: emoji need a colour-emoji font, which a default Linux desktop (and Debian's
JupyterLab set-up) does not have, so they showed as empty boxes. The marks are text
symbols that common fonts carry (DejaVu Sans, Segoe UI Symbol, Apple Symbols, Noto Sans
Symbols); in HTML they are drawn with that font stack, in colour, next to a word that says
the same thing (so the meaning never depends on the glyph). A terminal whose encoding cannot
show them gets ASCII marks; ``BUBBLEKIT_ASCII=1`` forces those.
"""

from __future__ import annotations

import html
import os
import sys
from typing import Literal

__all__ = ["MARKS", "ASCII_MARKS", "COLOURS", "MARK_FONTS", "use_ascii", "plain", "mark_html", "box_html"]

Status = Literal["correct", "close", "wrong", "missing"]

#: The mark of each status: U+2713 CHECK MARK, U+2248 ALMOST EQUAL TO, U+2717 BALLOT X, U+25CB WHITE CIRCLE.
MARKS: dict[str, str] = {"correct": "\u2713", "close": "\u2248", "wrong": "\u2717", "missing": "\u25cb"}
#: The same marks in ASCII, for terminals that cannot show the symbols.
ASCII_MARKS: dict[str, str] = {"correct": "[ok]", "close": "[~]", "wrong": "[x]", "missing": "[ ]"}
#: Okabe-Ito colours (readable for colour-blind learners, on light and dark themes).
COLOURS: dict[str, str] = {"correct": "#009E73", "close": "#E69F00", "wrong": "#D55E00", "missing": "#0072B2"}
#: Fonts that carry every mark, first the one Debian and most Linux desktops install.
MARK_FONTS = "'DejaVu Sans', 'Segoe UI Symbol', 'Apple Symbols', 'Noto Sans Symbols 2', 'Noto Sans Symbols', 'Arial Unicode MS', sans-serif"

_PROBE = "".join(MARKS.values()) + "\u2014\u00d7\u2212"


def use_ascii(stream: object | None = None) -> bool:
    """True when plain text should use ASCII marks: ``BUBBLEKIT_ASCII=1``, or a stream that cannot encode them."""
    if os.environ.get("BUBBLEKIT_ASCII", "").strip() not in ("", "0"):
        return True
    encoding = getattr(stream if stream is not None else sys.stdout, "encoding", None) or "utf-8"
    try:
        _PROBE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def plain(status: str, text: str, *, ascii_only: bool | None = None) -> str:
    """``"<mark> <text>"`` for a terminal: symbols, or ASCII where they cannot be shown."""
    if ascii_only is None:
        ascii_only = use_ascii()
    if not ascii_only:
        return f"{MARKS[status]} {text}"
    text = text.replace("\u2014", "-").replace("\u2212", "-").replace("\u00d7", "x")
    line = f"{ASCII_MARKS[status]} {text}"
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        return line.encode(encoding, "replace").decode(encoding)
    except LookupError:
        return line.encode("ascii", "replace").decode("ascii")


def mark_html(status: str) -> str:
    """The mark as a styled ``<span>`` (class ``bubblekit-mark``), in a font that has it."""
    return (f'<span class="bubblekit-mark bubblekit-mark-{status}" '
            f'style="font-family:{html.escape(MARK_FONTS, quote=True)};font-weight:bold;'
            f'color:{COLOURS[status]}">{MARKS[status]}</span>')


def box_html(status: str, body_html: str, css_class: str = "bubblekit-check") -> str:
    """A bordered line in the status colour: the mark, then ``body_html`` (already escaped)."""
    return (f'<div class="{css_class} {css_class}-{status}" '
            f'style="border-left:4px solid {COLOURS[status]};padding:2px 8px;margin:1px 0">'
            f"{mark_html(status)} {body_html}</div>")
