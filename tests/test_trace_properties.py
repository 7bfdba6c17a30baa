"""Property tests: a corrupted trace gives a TraceError or the true bubble, never a wrong one without a note.

Besides values that are not times (below), plausible damage that breaks a law of pipelines (a
duration rounded to 0, an action moved before its own rank's input ends, two threads named after
one rank): refused or noted, never merged or measured silently (``test_plausible_damage_is_refused_or_noted``).

A simulated step is written out (``Timeline.to_chrome_trace`` and ``write_csv``), then damaged
at random: values set to NaN, infinities, text, null, empty lists; fields deleted; negative
durations; events or rows duplicated, dropped and shuffled; a byte-order mark in front. The
reader must then either raise :class:`TraceError` naming the file, or return a timeline that
is the true one (same actions, times and bubble) or whose notes name every damaged event.
Exact copies of actions must be named in the notes even though the result is right.

What the reader cannot know, and these tests therefore do not do: a damaged value that is
itself a plausible time (a start moved by 3 ms is a measurement, not a corruption), and
dropping *every* event of the last microbatch or the last stage (what is left is a smaller,
consistent pipeline). At most 3 events are dropped, fewer than any microbatch or stage holds
(p, m >= 2: each has at least 4 actions).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.actions import parse_action
from bubblekit.analysis.traces import MeasuredTimeline, TraceError, read_trace, write_csv

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

BAD_VALUES: list[Any] = [float("nan"), float("inf"), float("-inf"), "abc", "", None, [], {}]
CHROME_FIELDS = ("ts", "dur", "name", "ph", "pid", "tid", "args")
BAD_CELLS = ("nan", "inf", "-inf", "abc", "")
CONFIGS = [("1f1b", 2, 4, None), ("1f1b", 3, 2, None), ("gpipe", 2, 3, None), ("interleaved", 2, 4, 2),
           ("zb-h1", 2, 4, None), ("zbv", 2, 4, None), ("dualpipev", 2, 4, None)]


def _row_name(row: str) -> str:
    """The action a CSV row names (an overlapped pair's row: stage and microbatch cells 'f&b')."""
    _, stage, kind, mb = row.split(",")[:4]
    if kind == "F&B":
        (fs, bs), (fm, bm) = stage.split("&"), mb.split("&")
        return f"{fs}F{fm}&{bs}B{bm}"
    return str(bk.Action(int(stage), kind, int(mb)))


def simulated(config: tuple[str, int, int, int | None], comm: float) -> bk.SimResult:
    name, p, m, v = config
    return bk.simulate(bk.schedule(name, p, m, v), bk.Costs(f=1.0, b=2.0, i=1.0, w=1.0, comm=comm, unit="ms"))


def matches_truth(got: MeasuredTimeline, truth: bk.Timeline, tol: float) -> bool:
    """Same actions per rank with the same times (within ``tol`` ms), and the same bubble."""
    if got.p != truth.p:
        return False
    for r in range(truth.p):
        a, b = list(got.spans(r)), list(truth.spans(r))
        if [x.label for x in a] != [x.label for x in b]:
            return False
        if any(abs(float(x.start) - float(y.start)) > tol or abs(float(x.end) - float(y.end)) > tol
               for x, y in zip(a, b)):
            return False
    return math.isclose(got.bubble_ratio, truth.bubble_ratio, abs_tol=1e-6)


def is_action(name: Any) -> bool:
    try:
        parse_action(name)
    except (TypeError, ValueError):
        return False
    return True


# ------------------------------------------------------------------ damage plans
damage_step = st.one_of(
    st.tuples(st.just("value"), st.integers(0, 10**6), st.sampled_from(CHROME_FIELDS), st.sampled_from(BAD_VALUES)),
    st.tuples(st.just("negative dur"), st.integers(0, 10**6)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.sampled_from(CHROME_FIELDS)),
    st.tuples(st.just("duplicate"), st.integers(0, 10**6)),
    st.tuples(st.just("drop"), st.integers(0, 10**6)),
)


def limit_drops(plan: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    out, drops = [], 0
    for step in plan:
        if step[0] == "drop":
            drops += 1
            if drops > 3:
                continue
        out.append(step)
    return out


class Damaged:
    """A list of events (or rows) with a record of which originals were damaged and where they end up."""

    def __init__(self, items: list[Any]) -> None:
        self.items: list[tuple[int, Any]] = list(enumerate(items))
        self.damaged: set[int] = set()  # original indices
        self.copied: set[int] = set()

    def pick(self, k: int) -> int:
        return k % len(self.items)

    def final_positions(self, tag: int) -> list[int]:
        return [i for i, (t, _) in enumerate(self.items) if t == tag]


def damage_chrome(events: list[dict[str, Any]], plan: list[tuple[Any, ...]], shuffle: int | None) -> Damaged:
    d = Damaged([dict(e) for e in events])
    for step in limit_drops(plan):
        if not d.items:
            break
        k = d.pick(step[1])
        tag, ev = d.items[k]
        if step[0] == "value":
            ev = dict(ev, **{step[2]: step[3]})
            d.damaged.add(tag)
        elif step[0] == "negative dur":
            if not isinstance(ev.get("dur"), (int, float)) or not ev["dur"] > 0:
                continue
            ev = dict(ev, dur=-ev["dur"])
            d.damaged.add(tag)
        elif step[0] == "delete":
            if step[2] not in ev:
                continue
            ev = {key: v for key, v in ev.items() if key != step[2]}
            d.damaged.add(tag)
        elif step[0] == "duplicate":
            d.items.append((tag, dict(ev)))
            d.copied.add(tag)
            continue
        else:  # drop
            del d.items[k]
            d.damaged.add(tag)
            continue
        d.items[k] = (tag, ev)
    if shuffle is not None:
        random.Random(shuffle).shuffle(d.items)
    return d


def check_outcome(path: Path, truth: bk.Timeline, damage: Damaged, names: dict[int, str], tol: float,
                  where: Callable[[int], str]) -> None:
    """The property itself; ``names[tag]`` is the original item's action (or '' for other items),
    ``where(i)`` how the reader names the item at position ``i`` of the damaged file."""
    try:
        got = read_trace(path)
    except TraceError as exc:
        event("TraceError")
        assert path.name in str(exc), f"the error does not name the file: {exc}"
        return
    notes = " | ".join(got.notes)

    def mentioned(tag: int) -> bool:
        if names.get(tag) and names[tag] in notes:
            return True
        return any(f"{where(i)} " in notes or f"{where(i)})" in notes or f"{where(i)}," in notes
                   for i in damage.final_positions(tag))

    if matches_truth(got, truth, tol):
        event("the true timeline" + (" with notes" if got.notes else ""))
        copied_actions = [t for t in damage.copied if names.get(t) and t not in damage.damaged]
        for tag in copied_actions:
            assert mentioned(tag), f"copy of {names[tag]} not noted: {got.notes}"
        return
    event("a different timeline, with notes")
    for tag in damage.damaged | damage.copied:
        assert mentioned(tag), (
            f"bubble {got.bubble_ratio} differs from the true {truth.bubble_ratio} but the notes do not name "
            f"damaged item {tag} ({names.get(tag) or 'not an action'}): {got.notes}"
        )


# ------------------------------------------------------------------- Chrome JSON
@settings(max_examples=250)
@given(
    config=st.sampled_from(CONFIGS),
    comm=st.sampled_from([0.0, 0.25]),
    plan=st.lists(damage_step, min_size=0, max_size=5),
    shuffle=st.one_of(st.none(), st.integers(0, 2**32)),
    bom=st.booleans(),
    array_format=st.booleans(),
)
def test_corrupted_chrome_trace_never_gives_a_silent_wrong_bubble(
    tmp_path_factory: pytest.TempPathFactory, config: tuple[str, int, int, int | None], comm: float,
    plan: list[tuple[Any, ...]], shuffle: int | None, bom: bool, array_format: bool,
) -> None:
    truth = simulated(config, comm)
    events = truth.to_chrome_trace()["traceEvents"]
    names = {i: str(e.get("name")) if is_action(e.get("name")) else "" for i, e in enumerate(events)}
    damage = damage_chrome(events, plan, shuffle)
    body: Any = [e for _, e in damage.items]
    doc = body if array_format else {"traceEvents": body, "displayTimeUnit": "ms"}
    path = tmp_path_factory.mktemp("chrome") / "corrupted.json"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + json.dumps(doc).encode())
    check_outcome(path, truth, damage, names, 1e-6, (lambda i: f"event {i}") if array_format
                  else (lambda i: f"traceEvents[{i}]"))


@pytest.mark.parametrize("config", CONFIGS)
def test_the_harness_can_tell_right_from_wrong(tmp_path: Path, config: tuple[str, int, int, int | None]) -> None:
    """Undamaged exports read back as the truth without notes; another step does not match it."""
    truth = simulated(config, 0.25)
    got = read_trace(write_csv(truth, tmp_path / "t.csv"))
    assert matches_truth(got, truth, 1e-5) and not got.notes
    truth.to_chrome_trace(tmp_path / "t.json")
    got = read_trace(tmp_path / "t.json")
    assert matches_truth(got, truth, 1e-6) and not got.notes
    assert not matches_truth(got, simulated(config, 0.5), 1e-6)


# --------------------------------------------------------------------------- CSV
csv_step = st.one_of(
    st.tuples(st.just("cell"), st.integers(0, 10**6), st.integers(0, 6), st.sampled_from(BAD_CELLS)),
    st.tuples(st.just("negative duration"), st.integers(0, 10**6)),
    st.tuples(st.just("cut"), st.integers(0, 10**6)),
    st.tuples(st.just("duplicate"), st.integers(0, 10**6)),
    st.tuples(st.just("drop"), st.integers(0, 10**6)),
)


def damage_csv(rows: list[str], plan: list[tuple[Any, ...]], shuffle: int | None) -> Damaged:
    d = Damaged(rows)
    for step in limit_drops(plan):
        if not d.items:
            break
        k = d.pick(step[1])
        tag, row = d.items[k]
        cells = row.split(",")
        if step[0] == "cell":
            if step[2] >= len(cells):  # a cut row
                continue
            cells[step[2]] = step[3]
        elif step[0] == "negative duration":
            try:
                if not float(cells[5]) > float(cells[4]):
                    continue
            except (IndexError, ValueError):  # already damaged
                continue
            cells[4], cells[5] = cells[5], cells[4]
        elif step[0] == "cut":
            cells = cells[:-1]
        elif step[0] == "duplicate":
            d.items.append((tag, row))
            d.copied.add(tag)
            continue
        else:
            del d.items[k]
            d.damaged.add(tag)
            continue
        d.items[k] = (tag, ",".join(cells))
        d.damaged.add(tag)
    if shuffle is not None:
        random.Random(shuffle).shuffle(d.items)
    return d


@settings(max_examples=250)
@given(
    config=st.sampled_from(CONFIGS),
    comm=st.sampled_from([0.0, 0.25]),
    n_steps=st.sampled_from([1, 2]),
    plan=st.lists(csv_step, min_size=0, max_size=5),
    shuffle=st.one_of(st.none(), st.integers(0, 2**32)),
    bom=st.booleans(),
    crlf=st.booleans(),
)
def test_corrupted_csv_never_gives_a_silent_wrong_bubble(
    tmp_path_factory: pytest.TempPathFactory, config: tuple[str, int, int, int | None], comm: float, n_steps: int,
    plan: list[tuple[Any, ...]], shuffle: int | None, bom: bool, crlf: bool,
) -> None:
    truth = simulated(config, comm)
    folder = tmp_path_factory.mktemp("csv")
    lines = write_csv([truth] * n_steps, folder / "good.csv").read_text().splitlines()
    head, rows = lines[:2], lines[2:]
    names = {i: _row_name(r) for i, r in enumerate(rows)}
    damage = damage_csv(rows, plan, shuffle)
    text = ("\r\n" if crlf else "\n").join(head + [r for _, r in damage.items]) + "\n"
    path = folder / "corrupted.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    # a row's file line is its position + 3 (the comment and the header come first)
    check_outcome(path, truth, damage, names, 1e-5, lambda i: f"line {i + 3}")


# ------------------------------------------------- plausible damage (issue 20): names and times
plausible_step = st.one_of(
    st.tuples(st.just("zero"), st.integers(0, 10**6)),  # an action's duration rounded away
    st.tuples(st.just("early"), st.integers(0, 10**6)),  # an action moved before its own rank's input ends
    st.tuples(st.just("rename"), st.integers(0, 10**6), st.integers(1, 10**6)),  # a thread renamed 'rank j'
)


@settings(max_examples=120)
@given(config=st.sampled_from(CONFIGS), comm=st.sampled_from([0.0, 0.25]),
       plan=st.lists(plausible_step, min_size=1, max_size=3))
def test_plausible_damage_is_refused_or_noted(
    tmp_path_factory: pytest.TempPathFactory, config: tuple[str, int, int, int | None], comm: float,
    plan: list[tuple[Any, ...]],
) -> None:
    """Damage whose values are each plausible (a zero duration, a start time, a rank's name) but which
    breaks a law of pipelines (an action ends after it starts; it starts after its own rank's inputs
    end; one thread is one rank): a TraceError naming the file, the true timeline, or notes that name
    a damaged event. Two ranks under one name are always refused (they used to merge silently)."""
    truth = simulated(config, comm)
    events = [dict(e) for e in truth.to_chrome_trace()["traceEvents"]]
    xs = [i for i, e in enumerate(events) if e.get("ph") == "X"]
    by_name = {events[i]["name"]: i for i in xs}
    placement = {s: r for s, r in enumerate(truth.schedule.placement)}
    n_stages = len(placement)
    damaged: set[int] = set()
    for step in plan:
        if step[0] == "zero":
            i = xs[step[1] % len(xs)]
            if events[i]["dur"] > 0:
                events[i]["dur"] = 0
                damaged.add(i)
        elif step[0] == "early":
            i = xs[step[1] % len(xs)]
            a = parse_action(events[i]["name"])
            own = [d for d in bk.actions.inputs(a, n_stages, lambda x: str(x) in by_name)
                   if placement[d.stage] == placement[a.stage] and str(d) in by_name]
            if own and events[by_name[str(own[0])]]["dur"] > 0:
                events[i]["ts"] = events[by_name[str(own[0])]]["ts"]
                damaged.add(i)
        else:
            metas = [e for e in events if e.get("name") == "thread_name"]
            src = metas[step[1] % len(metas)]
            other = (src["tid"] + step[2] % (len(metas) - 1) + 1) % len(metas)
            src["args"] = {"name": f"rank {other}"}
    names = [e["args"]["name"] for e in events if e.get("name") == "thread_name"]
    renamed = len(set(names)) < len(names)  # two threads under one rank's name (a swap of names is a relabelling)
    path = tmp_path_factory.mktemp("plausible") / "damaged.json"
    path.write_text(json.dumps({"traceEvents": events}))
    try:
        got = read_trace(path)
    except TraceError as exc:
        event("TraceError")
        assert path.name in str(exc), f"the error does not name the file: {exc}"
        return
    assert not renamed, "two threads named after one rank were merged into one rank"
    if not damaged:  # names swapped, times intact: the ranks' labels changed, the bubble cannot
        event("ranks relabelled")
        assert got.bubble_ratio == pytest.approx(truth.bubble_ratio, abs=1e-9)
        return
    if matches_truth(got, truth, 1e-6):
        event("the true timeline")
        return
    event("a different timeline, with notes")
    notes = " | ".join(got.notes)
    assert any(f"traceEvents[{i}]" in notes for i in damaged), (
        f"bubble {got.bubble_ratio} differs from the true {truth.bubble_ratio} but no note names a damaged event "
        f"({sorted(damaged)}): {got.notes}")
