"""The explorers' Agg canvas that rasterizes each distinct text once (bubblekit.presentation.textcache).

Its pictures must be matplotlib's own pictures (every letter within a pixel of where plain Agg
puts it), a second draw must come from the cache, what it cannot key safely must be drawn by
matplotlib, and the cache must stay bounded. The explorers' PNG writer must give the pixels back.
"""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

from bubblekit.presentation import explorers, textcache  # noqa: E402
from bubblekit.presentation.textcache import TextCacheCanvas  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_cache():
    textcache.clear_cache()
    yield
    textcache.clear_cache()


def _figure(canvas: type, texts: list[dict]) -> Figure:
    fig = Figure(figsize=(4.0, 3.0), dpi=80)
    canvas(fig)
    ax = fig.add_axes((0.15, 0.15, 0.8, 0.65))
    ax.set_title("title\nsecond line", loc="left")
    ax.set_xlabel("time (slots)")
    ax.set_ylabel("rank")  # rotated 90 degrees
    ax.set_xticks(range(0, 31, 5))
    for kw in texts:
        ax.text(**kw)
    ax.set_xlim(0, 30)
    return fig


TEXTS = [
    dict(x=3, y=0.5, s="F0", ha="center", va="center", fontsize=9, color="white", clip_on=True),
    dict(x=10, y=0.3, s="B12\ns5", ha="center", va="center", fontsize=8, color="black", clip_on=True),
    dict(x=20, y=0.7, s="rotated", rotation=30, fontsize=10, color="#0072B2"),
    dict(x=5, y=0.8, s="idle ÷ busy ×", fontsize=10),
]


def _pixels(fig: Figure) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)


def _within_a_pixel(a: np.ndarray, b: np.ndarray, tol: int = 160) -> float:
    """Share of pixels of ``a`` matched (to ``tol`` per channel: antialiased edges differ) by ``b``
    or ``b`` moved by one pixel."""
    best = np.full(a.shape[:2], 10**6)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            shifted = np.roll(np.roll(b, dy, axis=0), dx, axis=1)
            best = np.minimum(best, np.abs(a - shifted).max(axis=2))
    return float((best <= tol).mean())


def _ink(img: np.ndarray, bbox) -> tuple[float, float, float]:
    """Total darkness inside ``bbox`` (display pixels, y up) and its centre (x, y in pixels)."""
    h, w = img.shape[:2]
    x0, x1 = max(int(bbox.x0) - 2, 0), min(int(bbox.x1) + 3, w)
    y0, y1 = max(h - int(bbox.y1) - 3, 0), min(h - int(bbox.y0) + 2, h)
    ink = (765 - img[y0:y1, x0:x1].sum(axis=2)).astype(float)
    ys, xs = np.mgrid[y0:y1, x0:x1]
    total = ink.sum()
    return total, float((ink * xs).sum() / total), float((ink * ys).sum() / total)


def test_the_picture_is_matplotlibs_to_a_pixel():
    a, b = _figure(FigureCanvasAgg, TEXTS), _figure(TextCacheCanvas, TEXTS)
    plain, cached = _pixels(a), _pixels(b)
    assert plain.shape == cached.shape
    assert (np.abs(plain - cached).max(axis=2) > 40).mean() > 0.0005  # there is text to compare
    assert _within_a_pixel(plain, cached) > 0.9995 and _within_a_pixel(cached, plain) > 0.9995
    ax = a.axes[0]
    texts = [t for t in (*ax.texts, ax.title, ax._left_title, ax.xaxis.label, ax.yaxis.label,
                         *ax.get_xticklabels()) if t.get_text().strip() and t.get_color() != "white"]
    assert len(texts) >= 10
    renderer = a.canvas.get_renderer()
    for t in texts:  # each text: as dark, and where matplotlib puts it (to within a pixel)
        bbox = t.get_window_extent(renderer)
        (ink_a, xa, ya), (ink_b, xb, yb) = _ink(plain, bbox), _ink(cached, bbox)
        assert abs(ink_b - ink_a) <= 0.06 * ink_a, t.get_text()
        assert abs(xb - xa) <= 0.75 and abs(yb - ya) <= 0.75, (t.get_text(), xa, xb, ya, yb)


def test_a_second_draw_comes_from_the_cache_and_is_the_same():
    fig = _figure(TextCacheCanvas, TEXTS)
    first = _pixels(fig)
    info = textcache.cache_info()
    assert info["misses"] > 0 and info["entries"] > 0
    second = _pixels(fig)
    again = textcache.cache_info()
    assert again["misses"] == info["misses"]  # nothing rasterized twice
    assert again["hits"] >= info["misses"]
    assert np.array_equal(first, second)


def test_the_colour_is_part_of_the_key():
    fig = _figure(TextCacheCanvas, [dict(x=10, y=0.5, s="X", fontsize=30, color="red")])
    red = _pixels(fig)
    fig.axes[0].texts[0].set_color("blue")
    blue = _pixels(fig)
    assert ((red[..., 0] > 200) & (red[..., 2] < 60)).sum() > 50
    assert ((blue[..., 2] > 200) & (blue[..., 0] < 60)).sum() > 50
    assert ((blue[..., 0] > 200) & (blue[..., 2] < 60)).sum() == 0  # no red X left from the cache


@pytest.mark.parametrize("kw", [dict(s=r"$\alpha^2$"), dict(s="half", alpha=0.5)])
def test_mathtext_and_own_alpha_are_drawn_by_matplotlib(kw):
    texts = [dict(x=10, y=0.5, fontsize=20, color="black", **kw)]
    cached = _pixels(_figure(TextCacheCanvas, texts))
    assert textcache.cache_info()["bypassed"] >= 1
    plain = _pixels(_figure(FigureCanvasAgg, texts))
    assert _within_a_pixel(plain, cached) > 0.9995


def test_the_cache_stays_bounded(monkeypatch):
    monkeypatch.setattr(textcache, "MAX_ENTRIES", 10)
    fig = _figure(TextCacheCanvas, [dict(x=k % 30, y=(k % 7) / 7, s=f"t{k}", fontsize=8) for k in range(60)])
    _pixels(fig)
    info = textcache.cache_info()
    assert info["entries"] <= 10
    assert 0 < info["bytes"] <= textcache.MAX_BYTES
    monkeypatch.setattr(textcache, "MAX_BYTES", 1)
    _pixels(fig)
    assert textcache.cache_info()["entries"] <= 1


def test_font_metrics_are_matplotlibs():
    """The remembered line metrics lay every text out where plain Agg does (same extents)."""
    texts = TEXTS + [dict(x=1, y=0.1, s="gy\nÅ", fontsize=14)]
    a, b = _figure(FigureCanvasAgg, texts), _figure(TextCacheCanvas, texts)
    ra, rb = a.canvas.get_renderer(), b.canvas.get_renderer()
    assert isinstance(rb, textcache.CachedTextRenderer) and not isinstance(ra, textcache.CachedTextRenderer)
    for ta, tb in zip(a.axes[0].texts + [a.axes[0].title], b.axes[0].texts + [b.axes[0].title]):
        assert np.allclose(ta.get_window_extent(ra).bounds, tb.get_window_extent(rb).bounds)


def test_empty_and_blank_strings_draw_nothing():
    fig = _figure(TextCacheCanvas, [dict(x=10, y=0.5, s="   ", fontsize=12)])
    _pixels(fig)
    assert isinstance(fig.canvas.get_renderer(), RendererAgg)


@pytest.mark.parametrize("channels", [3, 4])
def test_the_png_writer_gives_the_pixels_back(channels):
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, size=(37, 53, channels), dtype=np.uint8)
    png = explorers._png(pixels, 1)
    back = np.asarray(Image.open(io.BytesIO(png)))
    assert back.shape == pixels.shape and np.array_equal(back, pixels)


def test_explorer_pictures_are_the_canvas_pixels_as_rgb():
    ex = explorers.pipeline_explorer("1f1b", p=2, m=4)
    assert isinstance(ex.figure.canvas, TextCacheCanvas)
    im = Image.open(io.BytesIO(bytes(ex.image.value)))
    assert im.mode == "RGB" and im.size == (round(12 * explorers.DPI), im.size[1])
    ex.figure.set_dpi(explorers.DPI)
    ex.figure.canvas.draw()
    assert np.array_equal(np.asarray(im), np.asarray(ex.figure.canvas.buffer_rgba())[..., :3])
