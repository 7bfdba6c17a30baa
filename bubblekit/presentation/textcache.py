"""An Agg canvas that draws each distinct text once and stamps its pixels afterwards.

Matplotlib lays out and rasterizes every string glyph by glyph on every draw; in the
explorers' figures (about 200 texts: box labels, tick labels, titles, legends) that was
80 % of a redraw (``benchmarks/bench_explorer.py --breakdown``). :class:`TextCacheCanvas`
renders a string once into a small scratch Agg buffer, keeps the pixels (its colour and
coverage) keyed by everything that decides them (the string, the font, its size, the
angle, the dpi, the colour, antialiasing, the hinting settings) and blends them in with
Agg's own image blending on later draws: the same picture, placed to the nearest pixel
(matplotlib >= 3.11 places glyphs to 1/64 pixel, so a letter may sit up to half a pixel
away). Mathtext, TeX, texts with their own alpha and anything else it cannot key safely
are drawn by matplotlib as before.

Used by :mod:`bubblekit.presentation.explorers` (every explorer's figure: lessons 01 to 05
and the classroom apps).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

__all__ = ["TextCacheCanvas", "CachedTextRenderer", "cache_info", "clear_cache", "MAX_ENTRIES", "MAX_BYTES"]

#: Most strings kept (least recently used dropped first).
MAX_ENTRIES = 4096
#: Most bytes of pixels kept (RGBA, 4 bytes a pixel).
MAX_BYTES = 32 * 2**20

# key -> (RGBA rows bottom-up, x offset, y offset from the top) or None for a string with no pixels
_CACHE: OrderedDict[tuple[Any, ...], tuple[np.ndarray, int, int] | None] = OrderedDict()
#: rcParams that change how a string is rasterized (read with ``.get``: some are gone in newer matplotlib)
_RC_KEYS = ("text.hinting", "text.hinting_factor", "text.kerning_factor", "text.antialiased")
_STATS = {"hits": 0, "misses": 0, "bypassed": 0, "bytes": 0}


def cache_info() -> dict[str, int]:
    """Counts since the last :func:`clear_cache`: ``hits``, ``misses``, ``bypassed`` (texts
    matplotlib drew itself), ``entries`` and ``bytes`` kept."""
    return {**_STATS, "entries": len(_CACHE)}


def clear_cache() -> None:
    """Forget every kept string and reset the counts."""
    _CACHE.clear()
    _METRICS.clear()
    for k in _STATS:
        _STATS[k] = 0


def _font_key(prop: Any) -> tuple[Any, ...]:
    return (tuple(prop.get_family()), prop.get_style(), prop.get_variant(), prop.get_weight(), prop.get_stretch(),
            float(prop.get_size_in_points()), prop.get_file(), prop.get_math_fontfamily())


def _text_key(mtext: Any) -> tuple[Any, ...]:
    """The text's shaping options (matplotlib >= 3.11: font features, language), hashable."""
    out: list[Any] = []
    for name in ("get_fontfeatures", "get_language"):
        get = getattr(mtext, name, None)
        value = get() if get is not None else None
        out.append(tuple(value) if isinstance(value, list) else value)
    return tuple(out)


_METRICS: dict[tuple[Any, ...], tuple[float | None, float | None, float | None]] = {}


def _font_height_metrics(prop: Any, dpi: float) -> tuple[float | None, float | None, float | None]:
    """Ascent, descent and line gap (pixels) of the font ``prop`` finds, from its OS/2 or hhea
    table, as :meth:`matplotlib.text.Text._get_layout` computes them; ``None``s when it has neither
    (matplotlib then measures the text)."""
    from matplotlib.font_manager import fontManager, get_font

    font: Any = get_font(fontManager._find_fonts_by_props(prop))
    for table_name, gap_key, ascent_key, descent_key in (
            ("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"), ("hhea", "lineGap", "ascent", "descent")):
        table = font.get_sfnt_table(table_name)
        if table is None:
            continue
        scale = 1 / font.get_sfnt_table("head")["unitsPerEm"] * float(prop.get_size_in_points()) * dpi / 72
        return table[ascent_key] * scale, -table[descent_key] * scale, table[gap_key] * scale
    return None, None, None


def _store(key: tuple[Any, ...], entry: tuple[np.ndarray, int, int] | None) -> None:
    _CACHE[key] = entry
    _STATS["bytes"] += entry[0].nbytes if entry is not None else 0
    while _CACHE and (len(_CACHE) > MAX_ENTRIES or _STATS["bytes"] > MAX_BYTES):
        _, old = _CACHE.popitem(last=False)
        _STATS["bytes"] -= old[0].nbytes if old is not None else 0


class CachedTextRenderer(RendererAgg):
    """:class:`~matplotlib.backends.backend_agg.RendererAgg` whose plain texts come from the cache.

    It also remembers each font's line metrics (ascent, descent, line gap in pixels), which
    matplotlib >= 3.11 otherwise looks up in the font file for every text it lays out (half
    of the text layout's time); older matplotlib does not ask for them.
    """

    def _get_font_height_metrics(self, prop: Any) -> tuple[float | None, float | None, float | None]:
        # matplotlib's own computation (Text._get_layout's), once per font, size and dpi
        key = (_font_key(prop), float(self.dpi))
        got = _METRICS.get(key)
        if got is None:
            got = _METRICS[key] = _font_height_metrics(prop, float(self.dpi))
        return got

    def draw_text(self, gc: Any, x: float, y: float, s: str, prop: Any, angle: float,
                  ismath: Any = False, mtext: Any = None) -> None:
        # x, y: the text's baseline start in pixels from the top left (y downwards), as matplotlib passes it
        if ismath or gc.get_forced_alpha() or not (math.isfinite(x) and math.isfinite(y)):
            _STATS["bypassed"] += 1
            super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
            return
        rc: Any = matplotlib.rcParams
        key = (s, _font_key(prop), round(float(angle), 6), float(self.dpi), tuple(gc.get_rgb()),
               bool(gc.get_antialiased()), tuple(rc.get(name) for name in _RC_KEYS), _text_key(mtext))
        if key in _CACHE:
            _STATS["hits"] += 1
            _CACHE.move_to_end(key)
            entry = _CACHE[key]
        else:
            _STATS["misses"] += 1
            entry = self._rasterize(gc, s, prop, angle, mtext)
            _store(key, entry)
        if entry is None:
            return
        img, dx, dy = entry
        top = int(round(y)) + dy
        self._renderer.draw_image(gc, int(round(x)) + dx, int(self.height) - (top + img.shape[0]), img)

    def _rasterize(self, gc: Any, s: str, prop: Any, angle: float, mtext: Any) -> tuple[np.ndarray, int, int] | None:
        """Draw ``s`` with matplotlib into a scratch buffer just big enough; its pixels and their
        offset from the baseline start, or ``None`` when it has none (an empty or blank string)."""
        w, h, d = self.get_text_width_height_descent(s, prop, False)
        pad = int(math.ceil(float(prop.get_size_in_points()) * self.dpi / 72.0)) + 2
        th = math.radians(angle)
        co, si = math.cos(th), math.sin(th)
        corners = [(lx * co - ly * si, -(lx * si + ly * co)) for lx, ly in ((0, -d), (w, -d), (w, h - d), (0, h - d))]
        ox = pad - math.floor(min(c[0] for c in corners))
        oy = pad - math.floor(min(c[1] for c in corners))
        width = ox + math.ceil(max(c[0] for c in corners)) + pad
        height = oy + math.ceil(max(c[1] for c in corners)) + pad
        scratch = RendererAgg(width, height, self.dpi)
        g = scratch.new_gc()
        g.copy_properties(gc)
        g.set_clip_rectangle(None)
        g.set_clip_path(None)
        RendererAgg.draw_text(scratch, g, ox, oy, s, prop, angle, False, mtext)
        g.restore()
        buf = np.asarray(scratch.buffer_rgba())
        rows = np.flatnonzero(buf[..., 3].any(axis=1))
        cols = np.flatnonzero(buf[..., 3].any(axis=0))
        if not len(rows):
            return None
        y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
        return np.ascontiguousarray(buf[y0:y1, x0:x1][::-1]), x0 - ox, y0 - oy


class TextCacheCanvas(FigureCanvasAgg):
    """:class:`~matplotlib.backends.backend_agg.FigureCanvasAgg` drawing with :class:`CachedTextRenderer`.

    ``TextCacheCanvas(fig)`` attaches it to ``fig``; ``fig.savefig(..., format="png")`` and
    ``fig.canvas.draw()`` then use it.
    """

    def get_renderer(self) -> CachedTextRenderer:
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key or not isinstance(getattr(self, "renderer", None), CachedTextRenderer):
            self.renderer = CachedTextRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer  # type: ignore[return-value]
