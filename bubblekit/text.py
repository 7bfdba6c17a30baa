"""Numbers and units as the course writes them: the one place for printed numbers.

Used by :meth:`bubblekit.Costs.describe`, the pictures (:mod:`bubblekit.presentation.plotting`),
the explorers' readouts and the command line.
"""

from __future__ import annotations

import html
import numbers
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, Union

from bubblekit._validate import Number, check_int, check_number, check_str
from bubblekit.i18n import get_language, register, tr

__all__ = ["format_number", "format_bytes", "format_value", "plural", "counted", "time_label", "Table", "FORMATS", "STANDARD_HEADERS"]

#: Whole floats below this print as integers (``12.0`` -> ``12``); larger ones keep their exponent.
_WHOLE_BELOW = 1e12


def format_number(x: Number, digits: int = 4, *, fractions: bool = True) -> str:
    """A number for a label or a readout.

    Whole numbers print as integers (``2``, ``Fraction(4, 2)`` -> ``2``, ``12.0`` -> ``12``);
    a Fraction prints exactly (``3/2``), or as a decimal with ``fractions=False``; any
    other number gets ``digits`` significant digits (``2.734`` for 2.734175...; ``digits`` an
    int >= 1). NaN and infinities print as ``nan`` and ``inf``; a non-number is a ``TypeError``.
    """
    if type(digits) is not int or digits < 1:
        digits = check_int("digits", digits, minimum=1)
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"x must be a number, got {x!r} of type {type(x).__name__}")
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return str(x.numerator)
        if fractions:
            return str(x)
        x = float(x)
    if isinstance(x, numbers.Integral):
        return str(int(x))
    xf = float(x)
    if xf.is_integer() and abs(xf) < _WHOLE_BELOW:
        return str(int(xf))
    return f"{xf:.{digits}g}"


register({
    "text.slots": {"en": "slots", "zh": "时间槽"},
    "text.minutes": {"en": "min", "zh": "分钟"},
    # slots counted ("33 slots" / "33 个时间槽"): in a sentence and on an explorer card alike
    "text.slots.counted": {"en": "slots", "zh": "个时间槽"},
    "text.time_axis": {"en": "time ({unit})", "zh": "时间（{unit}）"},
    "text.yes": {"en": "yes", "zh": "是"},
    "text.no": {"en": "no", "zh": "否"},
    # the default headers of the course's standard columns (a table's keys stay these names in both languages)
    "text.header.bubble_ratio": {"en": "bubble_ratio", "zh": "气泡比例"},
    "text.header.bubble_overhead": {"en": "bubble_overhead", "zh": "气泡开销"},
})

#: Columns whose header, unless a table names one, is the catalogue's word for them (Chinese 气泡比例 for
#: ``bubble_ratio``): the two bubble measures are named the same way in every table of an edition.
STANDARD_HEADERS: tuple[str, ...] = ("bubble_ratio", "bubble_overhead")


def joined(items: Iterable[str]) -> str:
    """Items of a printed list in the current language: ``"0B 5.239, 0F 6.412"``; Chinese ``"0B 5.239、0F 6.412"``."""
    return ("、" if get_language() == "zh" else ", ").join(items)


def format_bytes(n: float) -> str:
    """A memory size in decimal units: ``2.6 GB`` from 1 GB (10**9 bytes) up, else ``350 MB`` (``n`` >= 0 bytes)."""
    n = float(check_number("n", n, minimum=0))
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def plural(unit: str) -> str:
    """A time unit after a number other than one: ``"slot"`` -> ``"slots"`` (Chinese: ``"时间槽"``); ``"min"``
    (lesson 01's factory) is ``"分钟"`` in Chinese; ``"ms"`` stays."""
    check_str("unit", unit)
    return tr("text.slots") if unit == "slot" else tr("text.minutes") if unit == "min" else unit


def counted(unit: str) -> str:
    """:func:`plural` for a count inside a sentence: Chinese puts 个 before 时间槽 (``"33 个时间槽"``)."""
    check_str("unit", unit)
    return tr("text.slots.counted") if unit == "slot" else plural(unit)


def time_label(unit: str) -> str:
    """Axis label for a time unit: ``"time (slots)"``, ``"time (ms)"``, ``"time (µs)"`` (in the current language)."""
    check_str("unit", unit)
    shown = {"slot": tr("text.slots"), "slots": tr("text.slots"), "min": tr("text.minutes"), "us": "µs"}.get(unit, unit)
    return tr("text.time_axis", unit=shown)


def _percent(digits: int) -> Callable[[Any], str]:
    def fmt(x: Any) -> str:
        return f"{float(x) * 100:.{digits}f}%"
    return fmt


#: Named cell formats for :class:`Table` (a column may also use any callable ``value -> str``).
FORMATS: dict[str, Callable[[Any], str]] = {
    "auto": lambda x: format_number(x) if isinstance(x, (int, float, Fraction)) and not isinstance(x, bool) else str(x),
    "exact": lambda x: format_number(x, fractions=True),
    "decimal": lambda x: format_number(x, fractions=False),
    "ratio": lambda x: f"{float(x):.4f}",
    "percent": _percent(1),
    "percent2": _percent(2),
    "int": lambda x: f"{round(x):,}",
    "float1": lambda x: f"{float(x):.1f}",
    "float2": lambda x: f"{float(x):.2f}",
    "text": str,
}

CellFormat = Union[str, Callable[[Any], str]]


def format_value(value: Any, fmt: CellFormat = "auto") -> str:
    """One table cell as text: ``None`` prints as an em dash, a bool as yes/no, else ``fmt``.

    ``fmt`` is a name from :data:`FORMATS` (``"percent"`` prints 0.2727 as ``27.3%``) or a
    callable.
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return tr("text.yes") if value else tr("text.no")
    if callable(fmt):
        return fmt(value)
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {sorted(FORMATS)} or a callable, got {fmt!r}")
    return FORMATS[fmt](value)


class Table:
    """A small table that renders itself: HTML in JupyterLab, aligned text elsewhere.

    Lessons show tables this way instead of formatting rows with f-strings in a cell. The raw
    values stay available for asserts and further computation::

        t = Table([{"schedule": "1f1b", "bubble_ratio": 0.2727}], formats={"bubble_ratio": "percent"})
        t.column("bubble_ratio")      # [0.2727]
        t                             # renders: schedule | bubble_ratio ... 27.3%

    Args:
        rows: one mapping per row (column name -> value), or sequences in ``columns`` order.
        columns: column names in display order; default: the keys of the first row.
        formats: per column, a name from :data:`FORMATS` or a callable (default ``"auto"``:
            whole numbers as integers, Fractions exactly, other numbers to 4 significant digits).
        headers: per column, the header to show (default the column name; for the standard columns
            :data:`STANDARD_HEADERS` the current language's word, 气泡比例 for ``bubble_ratio`` in Chinese);
            say units here, e.g. ``{"makespan": "makespan (slots)"}``.
        title: a caption above the table; ``note``: a line below it (conventions, units).
    """

    def __init__(
        self,
        rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]],
        columns: Sequence[str] | None = None,
        *,
        formats: Mapping[str, CellFormat] | None = None,
        headers: Mapping[str, str] | None = None,
        title: str = "",
        note: str = "",
    ) -> None:
        if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
            raise TypeError(f"rows must be a list of rows (dicts, or sequences in columns order), got {rows!r}")
        given: list[Any] = list(rows)
        if columns is None:
            if not given or not isinstance(given[0], Mapping):
                raise ValueError("columns must be given when rows are sequences (or there are no rows)")
            columns = list(given[0].keys())
        self.columns: list[str] = [str(c) for c in columns]
        self.rows: list[dict[str, Any]] = []
        for i, row in enumerate(given):
            if isinstance(row, Mapping):
                unknown = [k for k in row if k not in self.columns]
                if unknown:
                    raise ValueError(f"rows[{i}] has columns {unknown} that are not in columns={self.columns}")
                self.rows.append({c: row.get(c) for c in self.columns})
            else:
                values = list(row)
                if len(values) != len(self.columns):
                    raise ValueError(
                        f"rows[{i}] has {len(values)} values but there are {len(self.columns)} columns {self.columns}"
                    )
                self.rows.append(dict(zip(self.columns, values)))
        self.formats: dict[str, CellFormat] = dict(formats or {})
        for name, fmt in self.formats.items():
            if name not in self.columns:
                raise ValueError(f"formats names column {name!r}, which is not one of {self.columns}")
            if not callable(fmt) and fmt not in FORMATS:
                raise ValueError(f"formats[{name!r}] must be one of {sorted(FORMATS)} or a callable, got {fmt!r}")
        self.headers: dict[str, str] = {c: tr(f"text.header.{c}") if c in STANDARD_HEADERS else c for c in self.columns}
        self.headers.update(headers or {})
        self.title = title
        self.note = note

    # ---------------------------------------------------------------- data
    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.rows[index]

    def column(self, name: str) -> list[Any]:
        """The raw values of one column, top to bottom."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns are {self.columns}")
        return [row[name] for row in self.rows]

    def row(self, **match: Any) -> dict[str, Any]:
        """The one row whose columns equal ``match`` (e.g. ``t.row(schedule="1f1b")``)."""
        found = [r for r in self.rows if all(r.get(k) == v for k, v in match.items())]
        if len(found) != 1:
            raise KeyError(f"{len(found)} rows match {match}; expected exactly one")
        return found[0]

    def cells(self) -> list[list[str]]:
        """Every row as display text (the formats applied)."""
        return [[format_value(r[c], self.formats.get(c, "auto")) for c in self.columns] for r in self.rows]

    # ------------------------------------------------------------- display
    @staticmethod
    def _width(s: str) -> int:
        """Columns ``s`` takes in a terminal: East Asian wide characters (中文) take two."""
        return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)

    def _numeric(self, name: str) -> bool:
        values = [v for v in self.column(name) if v is not None]
        return bool(values) and all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in values)

    def to_text(self) -> str:
        """Aligned plain text: numeric columns right-aligned."""
        head = [self.headers[c] for c in self.columns]
        body = self.cells()
        widths = [max([self._width(h)] + [self._width(row[j]) for row in body]) for j, h in enumerate(head)]
        right = [self._numeric(c) for c in self.columns]

        def pad(v: str, w: int, to_right: bool) -> str:
            fill = " " * (w - self._width(v))
            return fill + v if to_right else v + fill

        def line(values: Sequence[str]) -> str:
            return "  ".join(pad(v, w, r) for v, w, r in zip(values, widths, right)).rstrip()

        out = [self.title] if self.title else []
        out += [line(head), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in body]
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        esc = html.escape
        right = [self._numeric(c) for c in self.columns]
        th = "".join(
            f'<th style="text-align:{"right" if r else "left"}">{esc(self.headers[c])}</th>'
            for c, r in zip(self.columns, right)
        )
        trs = "".join(
            "<tr>" + "".join(
                f'<td style="text-align:{"right" if r else "left"}">{esc(v)}</td>' for v, r in zip(row, right)
            ) + "</tr>"
            for row in self.cells()
        )
        caption = f"<caption style=\"caption-side:top;text-align:left;font-weight:bold\">{esc(self.title)}</caption>" if self.title else ""
        note = f'<div style="font-size:90%;color:#555">{esc(self.note)}</div>' if self.note else ""
        return f'<table class="bubblekit-table">{caption}<thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>{note}'
