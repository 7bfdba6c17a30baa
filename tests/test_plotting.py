"""Tests of bubblekit.presentation.plotting: the artists drawn, not the pixels.

Every expected number comes from bubblekit's timeline (starts, durations, idle time,
peaks, simulated bubble ratios), never from a typed figure.
"""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.path import Path as MplPath  # noqa: E402

import bubblekit as bk  # noqa: E402
from bubblekit.actions import Pair  # noqa: E402
from bubblekit.presentation import plotting as bp  # noqa: E402

P, M = 4, 8


@pytest.fixture(scope="module")
def r1f1b() -> bk.SimResult:
    return bk.simulate(bk.schedule("1f1b", P, M), bk.Costs(f=1, b=2))


def _coll(ax, gid):
    found = [c for c in ax.collections if c.get_gid() == gid]
    assert len(found) == 1, f"expected one collection {gid!r}, found {len(found)}"
    return found[0]


def _boxes(coll) -> np.ndarray:
    """(n, 4) array of xmin, xmax, ymin, ymax for each rectangle of a collection.

    A path is one rectangle, or a compound path of several (each starting with MOVETO).
    """
    out = []
    for path in coll.get_paths():
        v, codes = path.vertices, path.codes
        starts = [0] if codes is None else list(np.flatnonzero(codes == MplPath.MOVETO))
        for a, b in zip(starts, [*starts[1:], len(v)]):
            w = v[a:b]
            out.append((w[:, 0].min(), w[:, 0].max(), w[:, 1].min(), w[:, 1].max()))
    return np.array(out).reshape(-1, 4)


def _sorted_rows(a: np.ndarray) -> np.ndarray:
    return a[np.lexsort(a.T[::-1])]


def _spans_flat(tl: bk.Timeline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    starts, ends, ranks = [], [], []
    for r in range(tl.p):
        s, e, _ = tl.arrays(r)
        starts += s
        ends += e
        ranks += [r] * len(s)
    return np.array(starts), np.array(ends), np.array(ranks, dtype=float)


def _labels(fig):
    return [t for a in fig.axes for t in a.texts if t.get_gid() == "box-label"]


# --------------------------------------------------------------------- diagram
@pytest.mark.parametrize("name", bk.names())
def test_one_box_per_span_at_the_spans_times(name: str) -> None:
    spec = bk.REGISTRY[name]
    v = 2 if spec.chunks != "one" else None
    res = bk.simulate(bk.schedule(name, P, 2 * P, v), bk.Costs(f=1, b=2))
    fig = bp.plot_pipeline(res)
    ax = fig.axes[0]
    box = _boxes(_coll(ax, "actions"))
    starts, ends, ranks = _spans_flat(res)
    assert len(box) == res.n_spans
    np.testing.assert_allclose(box[:, 0], starts)
    np.testing.assert_allclose(box[:, 1] - box[:, 0], ends - starts)
    np.testing.assert_allclose((box[:, 2] + box[:, 3]) / 2, ranks)  # one row per rank
    np.testing.assert_allclose(box[:, 3] - box[:, 2], bp.BOX_HEIGHT)
    assert ax.yaxis_inverted(), "rank 0 must be on top"
    if res.schedule.v > 1:  # chunks 1.. are outlined, one outline per action of a rank's later stages
        outlined = sum(len(_boxes(c)) for c in ax.collections if str(c.get_gid()).startswith("chunk-outline"))
        chunk1 = sum(1 for r in range(res.p) for a in res.schedule.orders[r]
                     if a.stage != res.schedule.stages_of(r)[0])
        assert outlined == chunk1 > 0


def test_bubble_boxes_cover_exactly_the_idle_time(r1f1b: bk.SimResult) -> None:
    for res in (r1f1b, bk.simulate(bk.schedule("interleaved", P, M, 2), bk.Costs(f=1, b=2, comm=0.25))):
        fig = bp.plot_pipeline(res)
        ax = fig.axes[0]
        bub = _boxes(_coll(ax, "bubbles"))
        area = float(((bub[:, 1] - bub[:, 0]) * (bub[:, 3] - bub[:, 2])).sum())
        assert area == pytest.approx(float(res.total_idle) * bp.BOX_HEIGHT)
        assert len(bub) == len(res.idle_intervals())
        # no bubble box overlaps an action box of the same rank
        act = _boxes(_coll(ax, "actions"))
        for b in bub:
            same = act[np.isclose(act[:, 2], b[2])]
            overlap = np.minimum(same[:, 1], b[1]) - np.maximum(same[:, 0], b[0])
            assert (overlap <= 1e-9).all()


def test_no_bubble_boxes_when_switched_off(r1f1b: bk.SimResult) -> None:
    ax = bp.plot_pipeline(r1f1b, show_bubbles=False).axes[0]
    assert not [c for c in ax.collections if c.get_gid() == "bubbles"]


def test_labels_name_the_box_they_sit_in(r1f1b: bk.SimResult) -> None:
    fig = bp.plot_pipeline(r1f1b)
    labels = _labels(fig)
    assert len(labels) == r1f1b.n_spans  # every box of this small diagram is wide enough
    spans = list(r1f1b.spans())
    for t in labels:
        x, y = t.get_position()
        (sp,) = [s for s in spans if s.rank == y and float(s.start) < x < float(s.end)]
        assert t.get_text() in (f"{sp.action.kind}{sp.action.microbatch}", str(sp.action.microbatch))


def test_huge_diagrams_keep_every_box_as_compound_paths() -> None:
    m = 5 * (bp.COMPOUND_ABOVE // 100 + 1)  # a multiple of p: 2 * p * m * v > COMPOUND_ABOVE actions
    big = bk.simulate(bk.schedule("interleaved", 5, m, 2), bk.Costs(f=1, b=2, comm=0.1))
    assert big.n_spans > bp.COMPOUND_ABOVE
    for color_by in ("microbatch", "kind"):
        ax = bp.plot_pipeline(big, color_by=color_by).axes[0]
        coll = _coll(ax, "actions")
        assert len(coll.get_paths()) < big.n_spans  # grouped by colour
        box = _boxes(coll)
        starts, ends, ranks = _spans_flat(big)
        h = bp.BOX_HEIGHT / 2
        expect = np.column_stack([starts, ends, ranks - h, ranks + h])
        np.testing.assert_allclose(_sorted_rows(box), _sorted_rows(expect))
        assert len(coll.get_facecolors()) == len(coll.get_paths())


def test_labels_drop_out_for_huge_diagrams_and_on_request(r1f1b: bk.SimResult) -> None:
    big = bk.simulate(bk.schedule("1f1b", 50, bp.LABEL_LIMIT // 100 + 1))
    assert big.n_spans > bp.LABEL_LIMIT
    assert _labels(bp.plot_pipeline(big)) == []
    assert _labels(bp.plot_pipeline(r1f1b, labels=False)) == []
    # narrow boxes get the short label (microbatch only) or none, never an overflowing one
    many = bk.simulate(bk.schedule("1f1b", 4, 24))
    texts = [t.get_text() for t in _labels(bp.plot_pipeline(many, labels=True))]
    assert 0 < len(texts) < many.n_spans
    assert all(t.isdigit() for t in texts)


def test_comparison_shares_the_time_axis_and_names_both_measures(r1f1b: bk.SimResult) -> None:
    costs = bk.Costs(f=1, b=2)
    results = [bk.simulate(bk.schedule("gpipe", P, M), costs), r1f1b,
               bk.simulate(bk.schedule("interleaved", P, M, 2), costs)]
    fig = bp.plot_pipeline(results)
    assert len(fig.axes) == len(results)
    a0 = fig.axes[0]
    for ax, res in zip(fig.axes, results):
        assert a0.get_shared_x_axes().joined(a0, ax)
        assert ax.get_xlim() == a0.get_xlim()
        title = ax.get_title(loc="left")
        assert bk.display_name(res.schedule.name) in title
        assert f"bubble_ratio {res.bubble_ratio:.1%}" in title
        assert f"bubble_overhead {res.bubble_overhead:.1%}" in title
    lo, hi = a0.get_xlim()
    assert lo <= 0 and hi >= max(float(r.t1) for r in results)
    assert fig.axes[-1].get_xlabel() == "time (slots)"


def test_measured_timeline_with_text_labels() -> None:
    tl = bk.Timeline(
        [[0.0, 1.5], [0.7, 2.5]], [[1.2, 2.0], [1.9, 3.1]],
        [["forward mb0", "backward mb0"], ["forward mb0", "nccl send"]], unit="ms", source="trace.json",
    )
    fig = bp.plot_pipeline(tl, color_by="kind")
    ax = fig.axes[0]
    box = _boxes(_coll(ax, "actions"))
    starts, ends, _ = _spans_flat(tl)
    np.testing.assert_allclose(box[:, 0], starts)
    np.testing.assert_allclose(box[:, 1], ends)
    assert ax.get_xlabel() == "time (ms)"
    assert "trace.json" in ax.get_title(loc="left")
    assert bp.plot_pipeline(tl, unit_label="wall time (ms)").axes[0].get_xlabel() == "wall time (ms)"
    with pytest.raises(TypeError, match="critical_path"):
        bp.plot_pipeline(tl, critical_path=True)


def test_critical_path_outlines_the_simulators_chain(r1f1b: bk.SimResult) -> None:
    ax = bp.plot_pipeline(r1f1b, critical_path=True).axes[0]
    box = _boxes(_coll(ax, "critical-path"))
    assert len(box) == len(r1f1b.critical_path)
    by_key = {(s.rank, s.action): s for s in r1f1b.spans()}
    for b, (rank, act) in zip(box, r1f1b.critical_path):
        s = by_key[(rank, act)]
        assert (b[0], b[1]) == pytest.approx((float(s.start), float(s.end)))
        assert (b[2] + b[3]) / 2 == pytest.approx(rank)
    assert box[-1][1] == pytest.approx(float(r1f1b.makespan))


def test_comm_arrows_one_per_cross_rank_hop() -> None:
    res = bk.simulate(bk.schedule("1f1b", 3, 4), bk.Costs(f=1, b=2, comm=0.5))
    ax = bp.plot_pipeline(res, comm_arrows=True).axes[0]
    arrows = [t for t in ax.texts if t.get_gid() == "comm-arrow"]
    hops = 0
    for r in range(res.p):
        for a in res.schedule.orders[r]:
            hops += (a.kind == "F" and a.stage > 0) + (a.kind == "B" and a.stage < res.schedule.n_stages - 1)
    assert len(arrows) == hops
    big = bk.simulate(bk.schedule("1f1b", 8, bp.COMM_ARROW_LIMIT))
    with pytest.warns(UserWarning, match="COMM_ARROW_LIMIT"):
        ax = bp.plot_pipeline(big, comm_arrows=True, labels=False).axes[0]
    assert not [t for t in ax.texts if t.get_gid() == "comm-arrow"]


def test_phases_of_1f1b_are_fill_f_and_drain_b_per_stage(r1f1b: bk.SimResult) -> None:
    ph = r1f1b.phases()
    f, b = r1f1b.costs.f, r1f1b.costs.b
    assert ph["fill"] == (0, (P - 1) * f)
    assert ph["drain"] == (float(r1f1b.t1) - (P - 1) * b, float(r1f1b.t1))
    # fill + drain = the per-rank bubble (p-1)(F+B): the textbook picture
    fill = ph["fill"][1] - ph["fill"][0]
    drain = ph["drain"][1] - ph["drain"][0]
    assert (fill + drain) * P == pytest.approx(float(r1f1b.total_idle))
    ax = bp.plot_pipeline(r1f1b, phases=True).axes[0]
    names = {t.get_gid(): t.get_text() for t in ax.texts if str(t.get_gid()).startswith("phase-")}
    assert set(names) == {"phase-fill", "phase-steady", "phase-drain"}
    # the middle window is "steady" only if no rank idles in it (rank 0 of this 1F1B waits there)
    (s0, s1) = ph["steady"]
    idle_inside = any(min(float(g.end), s1) > max(float(g.start), s0) for g in r1f1b.idle_intervals())
    assert idle_inside and names["phase-steady"] == "between fill and drain"
    busy = bk.simulate(bk.schedule("zb-h2", 4, 8), bk.Costs(f=1, i=1, w=1))  # no idle between fill and drain
    (s0, s1) = busy.phases()["steady"]
    assert not any(min(float(g.end), s1) > max(float(g.start), s0) for g in busy.idle_intervals())
    ax = bp.plot_pipeline(busy, phases=True).axes[0]
    assert [t.get_text() for t in ax.texts if t.get_gid() == "phase-steady"] == ["steady"]
    assert all(ln.get_zorder() < 2 for ln in ax.lines if ln.get_gid() == "phase-line")  # behind the boxes


def test_figures_stay_out_of_pyplot(r1f1b: bk.SimResult) -> None:
    before = plt.get_fignums()
    bp.plot_pipeline(r1f1b)
    bp.plot_memory(r1f1b)
    assert plt.get_fignums() == before


def test_draws_into_a_given_axes(r1f1b: bk.SimResult) -> None:
    fig, (a1, a2) = plt.subplots(2, 1)
    try:
        assert bp.plot_pipeline(r1f1b, ax=a2, title="mine") is fig
        assert len(_boxes(_coll(a2, "actions"))) == r1f1b.n_spans
        assert a2.get_title(loc="left").startswith("mine\n")
        assert not a1.collections
    finally:
        plt.close(fig)


def test_bad_arguments_name_the_parameter(r1f1b: bk.SimResult) -> None:
    with pytest.raises(TypeError, match="result_or_results"):
        bp.plot_pipeline("1f1b")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="color_by"):
        bp.plot_pipeline(r1f1b, color_by="stage")
    with pytest.raises(TypeError, match="labels"):
        bp.plot_pipeline(r1f1b, labels="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="title"):
        bp.plot_pipeline([r1f1b, r1f1b], title=["only one"])


# ------------------------------------------------- readability of multi-chunk diagrams
# Interleaved, looped and V-shape diagrams (issue 14): every box says which microbatch and which
# stage it is, a rank's later chunks look nothing like idle time, and a strip beside the rank
# names shows which stages sit on which rank.
MULTI = [("interleaved", 4, 4, 2), ("looped-bfs", 4, 4, 2), ("zbv", 4, 4, None), ("dualpipev", 3, 6, None)]


def _multi(name: str, p: int, m: int, v: int | None) -> bk.SimResult:
    return bk.simulate(bk.schedule(name, p, m, v), bk.Costs(f=1, i=1, w=1))


def _span_of(res: bk.SimResult, rank: float, x: float):
    (sp,) = [s for s in res.spans(int(rank)) if float(s.start) < x < float(s.end)]
    return sp


@pytest.mark.parametrize("name,p,m,v", MULTI)
def test_multi_chunk_labels_name_microbatch_and_stage(name: str, p: int, m: int, v: int | None) -> None:
    res = _multi(name, p, m, v)
    fig, ax = plt.subplots(figsize=(12, 3))  # the explorer's 1200-px picture
    labels = _labels(bp.plot_pipeline(res, ax=ax))
    with_stage = 0
    for t in labels:
        x, y = t.get_position()
        a = _span_of(res, y, x).action
        first, *rest = t.get_text().split("\n")
        if isinstance(a, Pair):  # an overlapped pair names both microbatches, its forward's first
            f, b = a.forward.microbatch, a.backward.microbatch
            assert first in (f"F{f}&B{b}", f"{f}&{b}")
            stage = f"s{a.forward.stage}&s{a.backward.stage}"
        else:
            assert first in (f"{a.kind}{a.microbatch}", str(a.microbatch))
            stage = f"s{a.stage}"
        if rest:
            assert rest == [stage]
            with_stage += 1
    assert with_stage >= res.n_spans * 0.75, f"only {with_stage} of {res.n_spans} boxes name their stage"


@pytest.mark.parametrize("name,p,m,v", MULTI)
def test_chunk_style_is_distinct_from_idle(name: str, p: int, m: int, v: int | None) -> None:
    res = _multi(name, p, m, v)
    ax = bp.plot_pipeline(res).axes[0]
    bubbles = _coll(ax, "bubbles")
    outlines = [c for c in ax.collections if str(c.get_gid()).startswith("chunk-outline")]
    assert outlines
    assert bubbles.get_hatch() == "////" and max(bubbles.get_linewidths(), default=0) == 0  # idle: hatched, no edge
    for c in outlines:
        assert c.get_hatch() in (None, "")  # no hatch like the idle boxes'
        assert all(lw >= 1.2 for lw in c.get_linewidths())
        assert {matplotlib.colors.to_hex(e) for e in c.get_edgecolors()} == {bp.CHUNK_EDGE_COLOR.lower()}
        assert len(c.get_facecolors()) == 0 or all(f[3] == 0 for f in c.get_facecolors())  # see-through
    # every action of a rank's second (third, ...) stage is outlined, and nothing else
    outlined = np.vstack([_boxes(c) for c in outlines])
    later = [(float(sp.start), float(sp.end), sp.rank) for sp in res.spans()
             if sp.action.stage != res.schedule.stages_of(sp.rank)[0]]
    assert len(outlined) == len(later)
    centres = sorted(((b[0] + b[1]) / 2, (b[2] + b[3]) / 2) for b in outlined)
    np.testing.assert_allclose(centres, sorted(((a + b) / 2, r) for a, b, r in later))


@pytest.mark.parametrize("name,p,m,v", MULTI)
def test_placement_strip_shows_the_stages_of_each_rank(name: str, p: int, m: int, v: int | None) -> None:
    res = _multi(name, p, m, v)
    fig = bp.plot_pipeline(res)
    ax = fig.axes[0]
    cells = [t for t in ax.texts if t.get_gid() == "placement-cell"]
    shown = {(int(t.xy[1]), int(t.get_text().replace("\u2007", ""))) for t in cells}
    assert shown == {(r, s) for s, r in enumerate(res.schedule.placement)}
    assert len(cells) == res.schedule.n_stages
    for t in cells:
        r, stage = int(t.xy[1]), int(t.get_text().replace("\u2007", ""))
        chunk = res.schedule.stages_of(r).index(stage)
        edge = matplotlib.colors.to_hex(t.get_bbox_patch().get_edgecolor())
        assert (edge == bp.CHUNK_EDGE_COLOR.lower()) == (chunk > 0)  # styled like the chunk's boxes
    arrows = [t.get_text() for t in sorted((t for t in ax.texts if t.get_gid() == "placement-direction"),
                                            key=lambda t: t.get_position()[0])]
    v_shape = bk.REGISTRY[name].chunks == "two"
    assert arrows == (["↓", "↑"] if v_shape else ["↓"] * res.schedule.v)
    # drawn, the strip sits between the rank names and the diagram, overlapping neither
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in cells]
    names = [lb.get_window_extent(renderer) for lb in ax.get_yticklabels() if lb.get_text()]
    axes_left = ax.get_window_extent(renderer).x0
    assert all(b.x1 <= axes_left for b in boxes)
    assert not any(b.overlaps(n) for b in boxes for n in names)
    assert bp.placement_strip_width(res) > 0


def test_single_chunk_diagrams_have_no_strip_and_no_outlines(r1f1b: bk.SimResult) -> None:
    ax = bp.plot_pipeline(r1f1b).axes[0]
    assert not [t for t in ax.texts if str(t.get_gid()).startswith("placement")]
    assert not [c for c in ax.collections if str(c.get_gid()).startswith("chunk-outline")]
    assert bp.placement_strip_width(r1f1b) == 0
    assert all("\n" not in t.get_text() for t in _labels(ax.figure))


def test_sixteen_microbatches_get_sixteen_colours() -> None:
    res = bk.simulate(bk.schedule("1f1b", 4, 16))
    ax = bp.plot_pipeline(res).axes[0]
    faces = _coll(ax, "actions").get_facecolors()
    forward = {}
    for face, sp in zip(faces, res.spans()):  # boxes are drawn in spans() order
        if sp.action.kind == "F":
            forward.setdefault(sp.action.microbatch, set()).add(tuple(np.round(face, 6)))
    assert all(len(c) == 1 for c in forward.values())  # one colour per microbatch
    colours = [next(iter(c)) for _, c in sorted(forward.items())]
    assert len(set(colours)) == 16
    assert [matplotlib.colors.to_hex(c) for c in colours] == [bp.microbatch_color(k) for k in range(16)]
    assert bp.microbatch_color(0) != bp.microbatch_color(len(bp.PALETTE))  # the second round is darker


def test_label_widths_come_from_the_font() -> None:
    fig = matplotlib.figure.Figure(dpi=100)
    renderer = FigureCanvasAgg(fig).get_renderer()
    for text in ("F3", "B12", "W7", "s5"):
        t = fig.text(0, 0, text, fontsize=10)
        width = t.get_window_extent(renderer).width
        em = bp._text_em(text) * 10 * 100 / 72  # the estimate, in pixels at 10 pt and 100 dpi
        assert width - 1 <= em <= width * 1.1 + 1  # the drawn extent is rounded to whole pixels


def test_latency_draws_its_messages_by_default() -> None:
    lat = bk.simulate(bk.schedule("zb-h1", 3, 3), bk.Costs(f=1, i=1, w=1, comm=1))
    ax = bp.plot_pipeline(lat, color_by="kind").axes[0]
    assert len([t for t in ax.texts if t.get_gid() == "comm-arrow"]) == lat.schedule.hops_per_step
    no_lat = bk.simulate(bk.schedule("zb-h1", 3, 3), bk.Costs(f=1, i=1, w=1))
    assert not [t for t in bp.plot_pipeline(no_lat).axes[0].texts if t.get_gid() == "comm-arrow"]
    assert not [t for t in bp.plot_pipeline(lat, comm_arrows=False).axes[0].texts if t.get_gid() == "comm-arrow"]
    many = bk.simulate(bk.schedule("1f1b", 8, 16), bk.Costs(comm=0.1))
    assert many.schedule.hops_per_step > bp.COMM_ARROW_AUTO
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # too many for the default: none, and no warning
        ax = bp.plot_pipeline(many, labels=False).axes[0]
    assert not [t for t in ax.texts if t.get_gid() == "comm-arrow"]


# ---------------------------------------------------------------------- memory
def test_memory_lines_and_peaks(r1f1b: bk.SimResult) -> None:
    gp = bk.simulate(bk.schedule("gpipe", P, M), bk.Costs(f=1, b=2))
    cap = 3
    fig = bp.plot_memory([gp, r1f1b], cap=cap)
    assert len(fig.axes) == 2
    assert fig.axes[0].get_shared_y_axes().joined(fig.axes[0], fig.axes[1])
    for ax, res in zip(fig.axes, (gp, r1f1b)):
        (peaks,) = [ln for ln in ax.lines if ln.get_gid() == "peaks"]
        np.testing.assert_allclose(peaks.get_ydata(), res.peak_activations)
        for rank, (t, v) in enumerate(zip(peaks.get_xdata(), peaks.get_ydata())):
            assert (t, v) in [(float(a), b) for a, b in res.memory_curves[rank]]
        curves = [ln for ln in ax.lines if str(ln.get_gid()).startswith("memory-rank-")]
        assert len(curves) == res.p
        (cap_line,) = [ln for ln in ax.lines if ln.get_gid() == "cap"]
        assert set(cap_line.get_ydata()) == {cap}
        over = [r for r in range(res.p) if res.peak_activations[r] > cap]
        title = ax.get_title(loc="left")
        assert all(f"rank {r}" in title for r in over)
        assert "microbatch activations" in ax.get_ylabel()
        # each rank's peak is in the legend, not in a label beside the marker (they overlap when
        # ranks peak at the same moment, as 1F1B's four do)
        assert not [t for t in ax.texts if t.get_text().strip()]
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        for rank, peak in enumerate(res.peak_activations):
            assert f"rank {rank}: peak {peak:g}" in legend


def test_memory_rank_selection_and_errors(r1f1b: bk.SimResult) -> None:
    ax = bp.plot_memory(r1f1b, ranks=[0, 3]).axes[0]
    (peaks,) = [ln for ln in ax.lines if ln.get_gid() == "peaks"]
    np.testing.assert_allclose(peaks.get_ydata(), [r1f1b.peak_activations[0], r1f1b.peak_activations[3]])
    with pytest.raises(ValueError, match="ranks"):
        bp.plot_memory(r1f1b, ranks=[P])
    with pytest.raises(ValueError, match="cap"):
        bp.plot_memory(r1f1b, cap=-1)
    tl = bk.Timeline([[0]], [[1]], [["x"]])
    with pytest.raises(TypeError, match="simulated"):
        bp.plot_memory(tl)  # type: ignore[arg-type]


# ----------------------------------------------------------------------- sweep
def test_sweep_points_are_simulations_and_lines_are_formulas() -> None:
    ms = [1, 2, 4, 8, 9]  # interleaved refuses m=9 with p=4 (PyTorch's rule)
    costs = bk.Costs(f=1, b=2)
    fig = bp.plot_sweep(["gpipe", "1f1b", "interleaved"], P, ms, v=[2, 4], costs=costs)
    ax = fig.axes[0]
    lines = {ln.get_gid(): ln for ln in ax.lines}
    for name, v in (("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("interleaved", 4)):
        ln = lines[f"sim:{name}:v={v}"]
        for m, y in zip(ln.get_xdata(), ln.get_ydata()):
            sched = bk.schedule(name, P, int(m), None if v == 1 else v)
            assert y == bk.simulate(sched, costs).bubble_ratio
    assert list(lines["sim:gpipe:v=1"].get_xdata()) == ms
    assert 9 not in list(lines["sim:interleaved:v=2"].get_xdata())
    skipped = [t for t in fig.texts if t.get_gid() == "skipped"]
    assert skipped and "m=9" in skipped[0].get_text()
    for v in (1, 2, 4):
        ln = lines[f"formula:v={v}"]
        assert list(ln.get_ydata()) == [bk.bubble_ratio(P, int(m), v) for m in ln.get_xdata()]
    for v in (2, 4):  # interleaving's closed form is drawn only where it holds, from m = p on
        assert min(lines[f"formula:v={v}"].get_xdata()) >= P
    # the legend names schedules as the course writes them, outside the axes (it covers no point)
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert "GPipe (simulated)" in texts and "interleaved 1F1B, v=2 (simulated)" in texts
    assert legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).x0 > 1.0
    colours = {matplotlib.colors.to_hex(lines[f"sim:{n}:v=1"].get_color()) for n in ("gpipe", "1f1b")}
    assert len(colours) == 2
    # where the formula holds (m a multiple of p, full backward, uniform stages) points sit on it
    for name in ("gpipe", "1f1b"):
        ln = lines[f"sim:{name}:v=1"]
        np.testing.assert_allclose(ln.get_ydata(), [bk.bubble_ratio(P, int(m)) for m in ln.get_xdata()])


def test_sweep_bad_input() -> None:
    with pytest.raises(ValueError, match="unknown schedule"):
        bp.plot_sweep("1f2b", 4, [4])
    with pytest.raises(ValueError, match="ms"):
        bp.plot_sweep("1f1b", 4, [0, 4])
    with pytest.raises(ValueError, match="v"):
        bp.plot_sweep("interleaved", 4, [4], v=0)


# ------------------------------------------------------------------- animation
def test_bubble_so_far_runs_from_zero_to_the_bubble_ratio(r1f1b: bk.SimResult) -> None:
    assert r1f1b.bubble_so_far(0) == 0.0
    assert r1f1b.bubble_so_far(float(r1f1b.t1)) == pytest.approx(r1f1b.bubble_ratio)
    t = float(r1f1b.t1) / 3
    idle = sum(max(0.0, min(float(g.end), t) - float(g.start)) for g in r1f1b.idle_intervals())
    assert r1f1b.bubble_so_far(t) == pytest.approx(idle / (P * t))


def test_animation_frames_readout_and_html(r1f1b: bk.SimResult) -> None:
    frames = 5
    anim = bp.animate_pipeline(r1f1b, frames=frames)
    times = anim.frame_times
    assert 2 <= len(times) <= frames
    assert times[0] == float(r1f1b.t0) and times[-1] == float(r1f1b.t1)
    step = times[1] - times[0]
    mantissa = step / 10 ** np.floor(np.log10(step))
    assert any(np.isclose(mantissa, f) for f in (1, 2, 2.5, 5))  # round times: "t = 10", not "t = 8.25"
    np.testing.assert_allclose(np.diff(times[:-1]), step)
    assert (len(times) - 2) * step < float(r1f1b.makespan) <= (len(times) - 1) * step
    assert f"{r1f1b.bubble_ratio:6.1%}" in anim.readout(len(times) - 1)
    assert f"{0.0:6.1%}" in anim.readout(0)
    assert re.search(rf"t = +{bp.format_number(times[1] - times[0])} of", anim.readout(1))
    with pytest.raises(ValueError, match="frames"):
        bp.animate_pipeline(r1f1b, frames=1)
    anim._draw_was_started = True  # it was built only to be inspected
    html = bp.pipeline_animation_html(r1f1b, frames=3, dpi=30)
    assert "<script" in html
    assert len(re.findall(r"frames\[\d+\] = \"data:image/jpeg;base64", html)) == 3
    # the player works offline: no stylesheet from a CDN, its icons are inline SVG
    assert "font-awesome" not in html and "https://" not in html and 'class="fa ' not in html
    assert html.count("<svg") == 9


def test_animation_readout_is_readable_at_the_frames_dpi(r1f1b: bk.SimResult) -> None:
    for dpi in (64, 100):
        anim = bp.animate_pipeline(r1f1b, frames=30, dpi=dpi)
        (readout,) = [t for t in anim._fig.texts if t.get_gid() == "readout"]
        assert readout.get_fontsize() * dpi / 72 >= 15  # letters at least 15 px high in the frames
        assert readout.get_text() == anim.readout(0)
        assert "\n" not in readout.get_text()
        anim._draw_was_started = True


def test_animation_labels_are_readable_in_small_frames(r1f1b: bk.SimResult) -> None:
    """At lesson 01's 64 dpi the tick labels, titles and legend are at least 11.5 px high (they were 8-9 px);
    the diagram keeps its height (the figure grows by what the text grew)."""
    plain = bp.plot_pipeline(r1f1b)
    anim = bp.animate_pipeline(r1f1b, frames=3, dpi=64)
    anim._draw_was_started = True
    fig = anim._fig
    fig.canvas.draw()
    ax = fig.axes[0]
    px = [float(t.get_fontsize()) * 64 / 72 for t in (*ax.get_xticklabels(), *ax.get_yticklabels(), ax.title,
                                                       ax.xaxis.label, *ax.get_legend().get_texts()) if t.get_text()]
    assert px and min(px) >= 11.5, sorted(px)[:3]
    assert fig.get_size_inches()[1] > plain.get_size_inches()[1]
    with pytest.raises(ValueError, match="dpi must be a number"):
        bp.animate_pipeline(r1f1b, dpi=0)


def test_animation_player_shows_its_picture_before_any_script(r1f1b: bk.SimResult) -> None:
    """The <img> carries the first frame and its size in the markup (a layout box from the start, whatever
    JupyterLab's lazy rendering does), and the player starts once its elements are in the page."""
    html = bp.pipeline_animation_html(r1f1b, frames=3, dpi=64)
    tag = re.search(r"<img id=\"_anim_img[0-9a-f]+\"[^>]*>", html)
    assert tag, html[:500]
    first = re.search(r'frames\[0\] = "(data:image/jpeg;base64,[^"]*)"', html).group(1).replace("\\\n", "")
    assert f'src="{first}"' in tag.group(0)
    size = bp._frame_size(first)
    assert size and size[0] > 600 and f'width="{size[0]}" height="{size[1]}"' in tag.group(0)
    assert 'alt="t = ' in tag.group(0)
    assert "setTimeout(function() {\n        anim" not in html and ";(function start(tries)" in html
    assert html.count("new Animation(") == 1


def test_animation_running_highlight_matches_the_spans(r1f1b: bk.SimResult) -> None:
    anim = bp.animate_pipeline(r1f1b, frames=7)
    ax = anim._fig.axes[0]
    running = _coll(ax, "running")
    k = 3
    anim._func(k)
    t = anim.frame_times[k]
    expect = sum(1 for s in r1f1b.spans() if float(s.start) <= t < float(s.end))
    assert len(running.get_paths()) == expect
    anim._draw_was_started = True


def test_gif_is_written(tmp_path) -> None:
    from PIL import Image

    res = bk.simulate(bk.schedule("1f1b", 2, 2))
    path = bp.save_animation_gif(res, tmp_path / "pipe.gif", frames=3, dpi=30)
    with Image.open(path) as im:
        assert im.format == "GIF"
        assert im.n_frames == 3
    with pytest.raises(ValueError, match="gif"):
        bp.save_animation_gif(res, tmp_path / "pipe.png", frames=3)


# ----------------------------------------------------------------------- style
def test_course_style_puts_an_installed_cjk_font_first_and_renders_chinese() -> None:
    installed = {f.name for f in font_manager.fontManager.ttflist}
    with matplotlib.rc_context():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert bp.use_course_style() is None
            family = list(matplotlib.rcParams["font.family"])
            assert family[-1] == "DejaVu Sans"
            cjk = [n for n in ("Noto Sans CJK SC", "Noto Sans CJK JP") if n in installed]
            if cjk:
                assert family[0] == cjk[0]
                fig = matplotlib.figure.Figure()
                fig.text(0.1, 0.5, "气泡 bubble")
                fig.canvas.draw()  # a missing glyph would warn, and warnings are errors here
    assert all(c.startswith("#") and len(c) == 7 for c in bp.PALETTE)
    assert len(set(bp.PALETTE)) == len(bp.PALETTE)


def test_animation_player_labels_follow_the_language() -> None:
    """The player's repeat-mode labels (matplotlib's "Once / Loop / Reflect") in the notebook's language."""
    from bubblekit.i18n import using_language

    result = bk.simulate(bk.schedule("gpipe", 2, 2))
    with using_language("zh"):
        html = bp.pipeline_animation_html(result, frames=2)
    labels = re.findall(r">([^<]+)</label>", html)
    assert labels == ["播放一次", "循环", "往返"], labels
    with using_language("en"):
        assert re.findall(r">([^<]+)</label>", bp.pipeline_animation_html(result, frames=2)) == ["Once", "Loop", "Reflect"]
