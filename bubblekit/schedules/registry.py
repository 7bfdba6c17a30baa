"""The schedule registry: the one source of schedule facts, and name resolution.

Each :class:`ScheduleSpec` says everything bubblekit knows about one schedule: its
generator, display name and aliases, how many chunks per rank it takes, which ``m`` it
accepts (and the rule in words), its closed-form bubble and peak memory where they exist,
its source and its ``torch.distributed.pipelining`` class. Every part of bubblekit resolves
names with :func:`spec` and checks ``(p, m, v)`` with :meth:`ScheduleSpec.check`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from bubblekit._gc import gc_paused
from bubblekit._validate import MAX_RANGE, Number, check_int
from bubblekit.i18n import get_language, tr
from bubblekit.i18n import register as register_messages
from bubblekit.schedules.base import MAX_ACTIONS, Schedule, check_size

__all__ = [
    "ScheduleSpec", "REGISTRY", "register", "names", "spec", "schedule", "display_name", "legal_ms",
]

#: ``chunks`` -> the words used in messages and menus.
_CHUNK_WORDS = {"one": "v=1", "many": "v>=2", "two": "v=2 (V)"}


#: The registry's facts in words, as learners read them (the facts table, the explorers): the prose
#: ones have a Chinese text; a formula (``"m >= 2p"``, ``"min(p, m)"``) reads the same in both.
_WORDS = {
    "schedules.m_rule.any": {"en": "any m >= 1", "zh": "任意 m ≥ 1"},
    "schedules.m_rule.interleaved": {"en": "m < 2p, or m a multiple of m // p (PyTorch's rounds must divide m)",
                                     "zh": "m < 2p，或 m 能被轮数 ⌊m/p⌋ 整除（PyTorch 的要求）"},
    "schedules.m_rule.dualpipe": {"en": "p even, m even and m >= 2p", "zh": "p 为偶数，m 为偶数且 m ≥ 2p"},
    "schedules.peak.dualpipev": {"en": "p + 1/2 (2p+1 chunk activations: the README's PP+1)",
                                 "zh": "p + 1/2（2p+1 个 chunk 的激活，即 README 中的 PP+1）"},
    "schedules.peak.dualpipe": {"en": "p + 1 (the README's PP+1 stage activations)",
                                "zh": "p + 1（README 中 PP+1 个流水级的激活）"},
    # display names that are words, not proper names (GPipe, ZB-V, looped BFS stay as they are)
    "schedules.display.interleaved": {"en": "interleaved 1F1B", "zh": "交错式 1F1B"},
    "schedules.unknown": {"en": "unknown schedule name {name}; known schedules: {known}.{hint}",
                          "zh": "没有名为 {name} 的调度；已有的调度：{known}。{hint}"},
    "schedules.unknown.hint": {"en": " Did you mean {close}?", "zh": "是不是想写 {close}？"},
}
register_messages(_WORDS)
_WORD_KEYS = {texts["en"]: key for key, texts in _WORDS.items()}


def _shown(text: str) -> str:
    """``text`` in the current language when the catalogue has it, else as written."""
    return tr(_WORD_KEYS[text]) if text in _WORD_KEYS else text

@dataclass(frozen=True)
class ScheduleSpec:
    """A registry entry: the facts of one schedule.

    Attributes:
        name: registry key (lower case, e.g. ``"1f1b"``).
        build: the generator; called ``build(p, m)`` or ``build(p, m, v)``.
        chunks: ``"one"`` (v must be 1), ``"many"`` (v >= 2, default 2) or ``"two"``
            (exactly two chunks per rank, V shape).
        split_backward: True when the schedule uses ``I`` and ``W`` actions.
        summary: one line for menus and errors.
        paper: source paper.
        torch_class: the ``torch.distributed.pipelining`` class producing the same order, if any.
        display: the name as the course writes it (``"1F1B"``); default ``name``.
        aliases: other accepted names (``"naive"`` for GPipe); case, ``_`` and spaces are ignored.
        m_rule: which ``m`` it accepts, in words (``"any m >= 1"``, ``"m >= 2p"``).
        m_problem: ``m_problem(p, m)`` is the error message when ``m`` is refused for ``p``
            ranks (naming ``m``, ``p`` and the rule), ``None`` when it is allowed; no function
            accepts every ``m >= 1``.
        bubble: ``bubble(p, m, v)``: the closed-form ``bubble_ratio`` (equal stages, no
            latency, any F/B ratio) as a Fraction, or ``None`` where no closed form holds.
        bubble_text: that formula in words.
        peak: ``peak(p, m, v)``: the largest per-rank peak of activations, in microbatch
            activations (equal stages, ``W`` frees everything), or ``None``.
        peak_text: that formula in words.
    """

    name: str
    build: Callable[..., Schedule]
    chunks: str
    split_backward: bool
    summary: str
    paper: str
    torch_class: str | None = None
    display: str = ""
    aliases: tuple[str, ...] = ()
    m_rule: str = "any m >= 1"
    m_problem: Callable[[int, int], str | None] | None = None
    bubble: Callable[[int, int, int], Fraction | None] | None = None
    bubble_text: str = ""
    peak: Callable[[int, int, int], Number] | None = None
    peak_text: str = ""

    @property
    def m_rule_text(self) -> str:
        """:attr:`m_rule` in the current language (``"any m >= 1"``; Chinese ``"任意 m ≥ 1"``). Used in lesson 04."""
        return _shown(self.m_rule)

    @property
    def peak_words(self) -> str:
        """:attr:`peak_text` in the current language (a formula reads the same in both). Used in lesson 04."""
        return _shown(self.peak_text)

    @property
    def display_name(self) -> str:
        """The name as the course writes it, in the current language (``"interleaved 1F1B"``; Chinese
        ``"交错式 1F1B"``). Every spelling, in either language, is accepted by :func:`spec`."""
        return _shown(self.display or self.name)

    def resolve_v(self, v: int | None = None) -> int:
        """Chunks per rank for ``v`` (``None``: the default), or a ``ValueError`` stating the rule."""
        if self.chunks == "one":
            if v is not None and check_int("v", v) != 1:
                raise ValueError(
                    f"v={v} is not allowed for {self.name!r}: it has one chunk per rank (v=1). "
                    f"Use 'interleaved' or 'looped-bfs' for v >= 2."
                )
            return 1
        if self.chunks == "two":
            if v is not None and check_int("v", v) != 2:
                raise ValueError(f"v={v} is not allowed for {self.name!r}: its V shape has exactly v=2 chunks per rank")
            return 2
        vv = 2 if v is None else check_int("v", v)
        if vv < 2:
            one = ("with v=1 it runs every forward first, like 'gpipe'" if self.name == "looped-bfs"
                   else "v=1 is '1f1b'")
            raise ValueError(f"v={vv} is not allowed for {self.name!r}: it needs v >= 2 chunks per rank ({one})")
        return vv

    def check(self, p: int, m: int, v: int | None = None, *, m_rule: bool = True) -> int:
        """Check ``p``, ``m`` and ``v`` against this schedule's rules; return the resolved ``v``.

        ``m_rule=False`` checks the types and ranges only (a knob with its own rule for ``m``,
        such as Megatron's microbatch group size, replaces the schedule's). Raises
        ``TypeError`` / ``ValueError`` naming the parameter, its value and the rule.
        """
        p = check_int("p", p)
        m = check_int("m", m)
        vv = self.resolve_v(v)
        problem = self.m_problem(p, m) if self.m_problem is not None and m_rule else None
        if problem is not None:
            raise ValueError(problem)
        return vv

    def allows(self, p: int, m: int, v: int | None = None) -> bool:
        """True when :meth:`check` accepts ``(p, m, v)``."""
        try:
            self.check(p, m, v)
        except (TypeError, ValueError):
            return False
        return True

    def n_actions(self, p: int, m: int, v: int | None = None) -> int:
        """How many actions the schedule has: ``2 p v m`` (F, B), up to ``3 p v m`` with I and W.

        ``p`` and ``m`` are ints >= 1 (``TypeError`` / ``ValueError`` otherwise); a count, so an
        ``m`` the schedule refuses is still counted (:meth:`check` says whether it can be built).
        """
        return (3 if self.split_backward else 2) * check_int("p", p) * self.resolve_v(v) * check_int("m", m)

    def closed_form(self, p: int, m: int, v: int | None = None) -> tuple[Fraction, str] | None:
        """``(bubble_ratio, formula text)`` where a closed form holds, else ``None``.

        Refuses (``TypeError`` / ``ValueError``, as :meth:`check` and the simulator do) a ``p``,
        ``m`` or ``v`` the schedule cannot be built with: a closed form is only quoted for a
        schedule that exists.
        """
        vv = self.check(p, m, v)
        if self.bubble is None:
            return None
        value = self.bubble(p, m, vv)
        return None if value is None else (value, self.bubble_text)


REGISTRY: dict[str, ScheduleSpec] = {}


def register(entry: ScheduleSpec) -> None:
    """Add a schedule to the registry (names are lower case; re-registering replaces)."""
    if not isinstance(entry, ScheduleSpec):
        raise TypeError(f"register takes a ScheduleSpec, got {type(entry).__name__}")
    REGISTRY[entry.name] = entry


def names() -> list[str]:
    """Registered schedule names, in registry order."""
    return list(REGISTRY)


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def _aliases() -> dict[str, str]:
    """Every accepted spelling -> registry name: names, display names, aliases."""
    out: dict[str, str] = {}
    for entry in REGISTRY.values():
        shown = _WORDS.get(_WORD_KEYS.get(entry.display or "", ""), {})
        for alias in (entry.name, entry.display or entry.name, *shown.values(), *entry.aliases):
            out.setdefault(_key(alias), entry.name)
    return out


def spec(name: str) -> ScheduleSpec:
    """The registry entry for ``name``, aliases and spelling variants resolved.

    ``"Naive"``, ``"zb_h1"``, ``"ZB-V"`` and ``"interleaved 1F1B"`` all work. Raises
    ``TypeError`` for a non-string and ``ValueError`` listing the known schedules (and the
    close ones) for an unknown name.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a schedule name (str), got {name!r}")
    table = _aliases()
    key = table.get(_key(name))
    if key is None:
        close = difflib.get_close_matches(_key(name), list(table), n=3, cutoff=0.5)
        sep = "、" if get_language() == "zh" else ", "
        hint = tr("schedules.unknown.hint", close=sep.join(repr(table[c]) for c in dict.fromkeys(close))) if close else ""
        raise ValueError(tr("schedules.unknown", name=repr(name), known=sep.join(names()), hint=hint))
    return REGISTRY[key]


def display_name(name: str) -> str:
    """A schedule's name as the course writes it (``"1f1b"`` -> ``"1F1B"``); unknown names unchanged."""
    try:
        return spec(name).display_name
    except (TypeError, ValueError):
        return str(name)


def legal_ms(name: str, p: int, v: int | None = None, *, up_to: int = 64) -> list[int]:
    """The microbatch counts ``1 .. up_to`` that schedule ``name`` accepts for ``p`` ranks.

    For sliders and menus: ``legal_ms("interleaved", 4)`` is ``[1, ..., 8, 10, 12, 15, 16, ...]``.
    ``up_to`` is an int from 1 to :data:`~bubblekit._validate.MAX_RANGE` (100,000: well under a second).
    """
    entry = spec(name)
    p = check_int("p", p)
    up_to = check_int("up_to", up_to, maximum=MAX_RANGE)
    entry.resolve_v(v)
    return [m for m in range(1, up_to + 1) if entry.m_problem is None or entry.m_problem(p, m) is None]


def schedule(name: str, p: int, m: int, v: int | None = None, *, microbatch_group_size: int | None = None,
             max_actions: int | None = MAX_ACTIONS) -> Schedule:
    """Build the registered schedule ``name`` for ``p`` ranks and ``m`` microbatches.

    Args:
        name: one of :func:`names` (``"gpipe"``, ``"1f1b"``, ``"interleaved"``, ...); aliases
            and display names are accepted (``"naive"`` for GPipe, the source article's word).
        p: ranks (pipeline devices), int >= 1.
        m: microbatches per step, int >= 1 (some schedules accept fewer: see
            ``spec(name).m_rule`` and :func:`legal_ms`).
        v: chunks per rank: must be 1 (or omitted) for single-chunk schedules; >= 2 for
            ``interleaved`` and ``looped-bfs`` (default 2); 2 for V-shape schedules.
        microbatch_group_size: ``interleaved`` only: Megatron-Core's
            ``microbatch_group_size_per_vp_stage``, the microbatches a rank runs through one
            chunk before the next (``p`` = depth-first, Megatron's default and today's order
            when ``p`` divides ``m``; ``m`` = breadth-first). ``None`` (default) is PyTorch's order.
        max_actions: refuse to build more actions than this (default
            :data:`~bubblekit.schedules.base.MAX_ACTIONS`, a few seconds and a few hundred
            MB to simulate); ``None`` builds any size.

    Raises ``ValueError`` with the close names for an unknown ``name``, and a
    ``TypeError``/``ValueError`` naming the parameter and the rule for a bad ``p``, ``m``
    or ``v``, or a schedule larger than ``max_actions``.

    Used in every lesson.
    """
    entry = spec(name)
    if microbatch_group_size is not None and entry.name != "interleaved":
        raise ValueError(f"microbatch_group_size={microbatch_group_size!r} is a knob of the 'interleaved' schedule "
                         f"(Megatron-Core's microbatch_group_size_per_vp_stage), not of {entry.name!r}: leave it out")
    vv = entry.check(p, m, v, m_rule=microbatch_group_size is None)  # Megatron's group rule replaces PyTorch's
    check_size(f"bk.schedule({entry.name!r}, p={p}, m={m}{f', v={vv}' if vv > 1 else ''})",
               entry.n_actions(p, m, vv), max_actions, instead="bk.bubble_ratio(p, m, v) needs no simulation")
    with gc_paused():  # its actions live as long as the schedule: no collector passes over them while built
        if microbatch_group_size is not None:
            return entry.build(p, m, vv, microbatch_group_size=microbatch_group_size)
        return entry.build(p, m) if entry.chunks != "many" else entry.build(p, m, vv)


def describe_chunks(entry: ScheduleSpec) -> str:
    """``"v=1"``, ``"v>=2"`` or ``"v=2 (V)"``: the chunk rule in words."""
    return _CHUNK_WORDS.get(entry.chunks, entry.chunks)
