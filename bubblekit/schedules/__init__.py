"""Schedule generators and the registry behind :func:`bubblekit.schedule`.

Add a schedule by writing a generator ``fn(p, m[, v]) -> Schedule`` and registering it
with :func:`register` (see CONTRIBUTING.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from bubblekit._validate import check_int
from bubblekit.schedules.base import Schedule, ScheduleError, looped_placement, v_placement
from bubblekit.schedules.classic import gpipe, interleaved_1f1b, looped_bfs, one_f_one_b

__all__ = [
    "Schedule", "ScheduleError", "ScheduleSpec", "schedule", "spec", "register", "REGISTRY",
    "names", "looped_placement", "v_placement",
]


@dataclass(frozen=True)
class ScheduleSpec:
    """A registry entry.

    Attributes:
        name: registry key.
        build: the generator; called ``build(p, m)`` or ``build(p, m, v)``.
        chunks: ``"one"`` (v must be 1), ``"many"`` (v >= 2, default 2) or ``"two"``
            (exactly two chunks per rank, V shape).
        split_backward: True when the schedule uses ``I`` and ``W`` actions.
        summary: one line for menus and errors.
        paper: source paper.
        torch_class: the ``torch.distributed.pipelining`` class producing the same order, if any.
    """

    name: str
    build: Callable[..., Schedule]
    chunks: str
    split_backward: bool
    summary: str
    paper: str
    torch_class: str | None = None


REGISTRY: dict[str, ScheduleSpec] = {}


def register(spec: ScheduleSpec) -> None:
    """Add a schedule to the registry (names are lower case; re-registering replaces)."""
    REGISTRY[spec.name] = spec


def names() -> list[str]:
    """Registered schedule names, in registry order."""
    return list(REGISTRY)


_ALIASES = {"naive": "gpipe", "afab": "gpipe", "pipedream-flush": "1f1b", "interleaved-1f1b": "interleaved",
            "zbv": "zbv", "zb-v": "zbv", "dualpipe-v": "dualpipev", "zbh1": "zb-h1", "zbh2": "zb-h2",
            "bfs": "looped-bfs", "loopedbfs": "looped-bfs"}


def spec(name: str) -> ScheduleSpec:
    """The registry entry for ``name``, aliases and spelling variants resolved.

    ``"Naive"``, ``"zb_h1"`` and ``"ZB-V"`` all work. Raises ``TypeError`` for a non-string
    and ``ValueError`` listing the known schedules (and the close ones) for an unknown name.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a schedule name (str), got {name!r}")
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    key = _ALIASES.get(key, key)
    if key not in REGISTRY:
        close = difflib.get_close_matches(key, names() + list(_ALIASES), n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(_ALIASES.get(c, c)) for c in close)}?" if close else ""
        raise ValueError(f"unknown schedule name {name!r}; known schedules: {', '.join(names())}.{hint}")
    return REGISTRY[key]


def schedule(name: str, p: int, m: int, v: int | None = None) -> Schedule:
    """Build the registered schedule ``name`` for ``p`` ranks and ``m`` microbatches.

    Args:
        name: one of :func:`names` (``"gpipe"``, ``"1f1b"``, ``"interleaved"``, ...); a few
            aliases are accepted (``"naive"`` for GPipe, the source article's word).
        p: ranks (pipeline devices), int >= 1.
        m: microbatches per step, int >= 1.
        v: chunks per rank: must be 1 (or omitted) for single-chunk schedules; >= 2 for
            ``interleaved`` and ``looped-bfs`` (default 2); 2 for V-shape schedules.

    Raises ``ValueError`` with the close names for an unknown ``name``, and a
    ``TypeError``/``ValueError`` naming the parameter for a bad ``p``, ``m`` or ``v``.
    """
    entry = spec(name)
    p = check_int("p", p)
    m = check_int("m", m)
    if entry.chunks == "one":
        if v is not None:
            v = check_int("v", v)
            if v != 1:
                raise ValueError(
                    f"v={v} is not allowed for {entry.name!r}: it has one chunk per rank (v=1). "
                    f"Use 'interleaved' or 'looped-bfs' for v >= 2."
                )
        return entry.build(p, m)
    if entry.chunks == "two":
        if v is not None:
            v = check_int("v", v)
            if v != 2:
                raise ValueError(f"v={v} is not allowed for {entry.name!r}: its V shape has exactly v=2 chunks per rank")
        return entry.build(p, m)
    v = 2 if v is None else check_int("v", v)
    if v < 2:
        raise ValueError(f"v={v} is not allowed for {entry.name!r}: it needs v >= 2 chunks per rank (v=1 is '1f1b')")
    return entry.build(p, m, v)


register(ScheduleSpec(
    "gpipe", gpipe, "one", False,
    "all forwards, then all backwards (the article's 'naive' schedule)",
    "Huang et al., GPipe, NeurIPS 2019", "ScheduleGPipe",
))
register(ScheduleSpec(
    "1f1b", one_f_one_b, "one", False,
    "one forward, one backward: same bubble as GPipe, at most p microbatches in memory",
    "Narayanan et al., PipeDream-Flush (ICML 2021)", "Schedule1F1B",
))
register(ScheduleSpec(
    "interleaved", interleaved_1f1b, "many", False,
    "1F1B over v chunks per rank (virtual stages): bubble (p-1)/(m*v+p-1)",
    "Narayanan et al., Megatron-LM (SC 2021)", "ScheduleInterleaved1F1B",
))
register(ScheduleSpec(
    "looped-bfs", looped_bfs, "many", False,
    "breadth-first over v chunks per rank: all microbatches through a chunk, then the next",
    "Lamy-Poirier, Breadth-First Pipeline Parallelism (MLSys 2023)", "ScheduleLoopedBFS",
))

# ---------------------------------------------------------------- zero bubble (split backward)
from bubblekit.schedules.zero_bubble import dualpipev, zb_h1, zb_h2, zbv  # noqa: E402

register(ScheduleSpec(
    "zb-h1", zb_h1, "one", True,
    "1F1B with backward split into I and W, W delayed to fill bubbles: bubble (p-1)(F+I-W), 1F1B's memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), ZB-H1", "ScheduleInterleavedZeroBubble",
))
register(ScheduleSpec(
    "zb-h2", zb_h2, "one", True,
    "more warm-up forwards, late W passes: no idle inside each rank's span at F=I=W, 2p-1 in memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), ZB-H2", None,
))
register(ScheduleSpec(
    "zbv", zbv, "two", True,
    "zero bubble over two chunks per rank in a V shape, 1F1B's memory",
    "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024 / arXiv 2401.10241), ZB-V", "ScheduleZBVZeroBubble",
))
register(ScheduleSpec(
    "dualpipev", dualpipev, "two", True,
    "DeepSeek's cut-in-half DualPipe: V shape, overlapped F+B pairs (run back to back here), m >= 2p",
    "DeepSeek-AI, DeepSeek-V3 Technical Report (2024), DualPipeV", "ScheduleDualPipeV",
))
