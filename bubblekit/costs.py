"""Cost models: how long each action takes, what a hop costs, how much memory it holds.

Units: times are in whatever unit you choose (abstract *slots* for the textbook pictures,
milliseconds for measured presets); ``Costs.unit`` names it. Memory is in *microbatch
activations*: 1.0 is what one microbatch leaves on a rank between its forward and its
backward when that rank holds its whole share of the model (``1/v`` per chunk).

Scalar costs describe **one rank's whole share of the model**; with ``v`` chunks per rank
each chunk action takes ``cost / v``, so schedules with different ``v`` do the same total
work and their makespans compare fairly. A sequence gives **one value per stage** (length
``p * v``) and is taken literally: use it for unequal stages.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Union, cast

from bubblekit._validate import Number, check_int, check_keywords, check_number, check_sequence, check_str
from bubblekit.actions import COMM_KINDS, Action, Pair
from bubblekit.i18n import get_language, register, tr
from bubblekit.text import format_number

register({"costs.describe.slot": {"en": "slot", "zh": "时间槽"},
          "costs.describe.comm": {"en": "comm", "zh": "通信延迟"},
          "costs.describe.wire": {"en": "wire", "zh": "传输"},
          "costs.describe.dp_reduce": {"en": "dp_reduce", "zh": "梯度归约"},
          # the h200 preset's name, shown beside the explorers' cost sliders
          "costs.h200.name": {"en": "measured H200 (h={hidden}, seq={seq}, {n} layer(s)/rank)",
                              "zh": "H200 实测（h = {hidden}，seq = {seq}，每个 rank {n} 层）"}})

__all__ = ["Costs", "MAX_COST", "PRESETS", "preset", "h200_costs", "ResolvedCosts", "load_h200_layer_costs", "format_number"]

CostValue = Union[Number, Sequence[Number]]


#: The largest time (in its unit) or activation a cost may have. A simulation adds up to
#: millions of them; far larger floats (1e308) would overflow to inf and the bubble to nan.
MAX_COST = 1e15


def _check_one(name: str, value: Any, positive: bool) -> Number:
    x = check_number(name, value, minimum=0, allow_equal=not positive)
    if x > MAX_COST:
        raise ValueError(
            f"{name} must be at most {MAX_COST:g} (in its unit), got {value!r}: a simulation adds up many "
            "such numbers and larger ones overflow (makespan inf, bubble nan); use a larger unit"
        )
    return x


def _check_cost(name: str, value: Any, *, positive: bool) -> CostValue:
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) >= 1:  # a numpy array is a sequence too
        if isinstance(value, (list, tuple)) and not value:
            raise ValueError(f"{name} must be a number or a non-empty sequence of per-stage numbers, got []")
        return tuple(_check_one(f"{name}[{i}]", x, positive) for i, x in enumerate(check_sequence(name, value)))
    if isinstance(value, (str, bytes, Mapping, AbstractSet)):
        raise TypeError(f"{name} must be a number or a sequence of per-stage numbers, got {value!r} of type "
                        f"{type(value).__name__}")
    return _check_one(name, value, positive)


def _combine(x: CostValue, y: CostValue, op: Callable[[Number, Number], Number]) -> CostValue:
    """Apply ``op`` elementwise, broadcasting a scalar against a per-stage sequence."""
    if isinstance(x, Sequence) or isinstance(y, Sequence):
        xs = x if isinstance(x, Sequence) else None
        ys = y if isinstance(y, Sequence) else None
        if xs is not None and ys is not None and len(xs) != len(ys):
            raise ValueError(f"per-stage costs must have the same length, got {len(xs)} and {len(ys)}")
        n = len(xs) if xs is not None else len(ys)  # type: ignore[arg-type]
        return tuple(
            op(xs[k] if xs is not None else x, ys[k] if ys is not None else y)  # type: ignore[arg-type]
            for k in range(n)
        )
    return op(x, y)


def _exact(q: Number) -> Number:
    """Keep exact numbers exact, and whole Fractions as ints."""
    if isinstance(q, Fraction) and q.denominator == 1:
        return q.numerator
    return q


def _half(x: CostValue) -> CostValue:
    return _combine(x, 2, lambda a, b: _exact(Fraction(a) / b) if isinstance(a, (int, Fraction)) else a / b)


def _sub(x: CostValue, y: CostValue) -> CostValue:
    return _combine(x, y, lambda a, b: _exact(a - b))


def _add(x: CostValue, y: CostValue) -> CostValue:
    return _combine(x, y, lambda a, b: _exact(a + b))


@dataclass(frozen=True)
class Costs:
    """Per-action costs, communication latency and activation memory.

    Args:
        f: forward time (one rank's share, or a per-stage sequence).
        b: full-backward time; defaults to ``i + w`` when both are given, else ``2 * f``.
        i: input-gradient time (the zero-bubble paper's "B"); defaults to ``b / 2``.
        w: weight-gradient time; defaults to ``b / 2``.
        comm: latency of one hop between different ranks (activation forward, gradient
            backward); no latency between chunks on the same rank.
        activation: activations one microbatch holds, in microbatch activations
            (scalar: a rank's share, divided by ``v`` per chunk; or per stage).
        w_held: fraction of a microbatch's activations still held after ``I`` until ``W``
            frees them (the zero-bubble paper's M_W / M_B; about 0.94 for a transformer
            layer with flash attention by its Table 1, 1.0 by default: W frees all).
        unit: the time unit, for labels (``"slot"`` or ``"ms"``).
        name: a short description shown in plots and readouts.
        fb: time of an overlapped forward+backward pair (kind ``F&B``, DeepSeek's "F&B"),
            from the pair's forward time ``F`` (its stage's ``f``) and backward time ``B``:
            ``None`` or ``"sum"`` (default) ``F + B``, no overlap gain; ``"max"``
            ``max(F, B)``, perfect overlap; or a number, the pair's time for a rank's
            share like ``f`` (scalar ``f`` and ``b`` only), between ``max(f, b)`` and ``f + b``.
        overlap: instead of ``fb``, the fraction of the shorter part hidden under the longer
            one, 0..1: the pair takes ``F + B - overlap * min(F, B)`` (0 = ``"sum"``,
            1 = ``"max"``).
        activation_bytes: bytes of the activation one microbatch sends from a stage to the
            next on another rank (the hidden states at a stage boundary: micro-batch x
            sequence x hidden x bytes per element). Not divided by ``v``: a chunk boundary
            sends the same tensor. 0 by default (messages cost only ``comm``).
        gradient_bytes: bytes of the gradient sent back to the previous stage; defaults to
            ``activation_bytes`` (the gradient of a tensor has its shape).
        bandwidth: bytes per time unit one direction of a link carries, or ``None``
            (default): unlimited. With a bandwidth a hop takes ``comm + bytes / bandwidth``,
            and each direction of a link carries one message at a time, in the order they
            were sent (a message waits while an earlier one is on the wire).
        dp_reduce: time of the data-parallel gradient reduction of a rank's share of the
            model (divided by ``v`` per chunk, like ``f``; or one value per stage). Each
            stage's reduction starts when its last backward or weight-gradient action ends and
            runs beside the compute (its own stream: one reduction at a time per rank); the
            step ends when the last reduction does. 0 by default (no data parallelism).

    ``Costs(f=1, b=2)`` is the textbook model; ``Costs(f=1, i=1, w=1, comm=0.1)`` splits the
    backward and adds a latency per hop; ``Costs(f=1, i=1, w=1, fb="max")`` lets overlapped
    pairs hide their forward entirely.

    Used in lessons 01, 02, 03, 04, 05, 07, 08, 09 and 10.
    """

    f: CostValue = 1
    b: CostValue | None = None
    i: CostValue | None = None
    w: CostValue | None = None
    comm: Number = 0
    activation: CostValue = 1
    w_held: Number = 1
    unit: str = "slot"
    name: str = "custom"
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    fb: Number | str | None = None
    overlap: Number | None = None
    activation_bytes: Number = 0
    gradient_bytes: Number | None = None
    bandwidth: Number | None = None
    dp_reduce: CostValue = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        f = _check_cost("f", self.f, positive=True)
        b = None if self.b is None else _check_cost("b", self.b, positive=True)
        i = None if self.i is None else _check_cost("i", self.i, positive=False)
        w = None if self.w is None else _check_cost("w", self.w, positive=False)
        if (i is None) != (w is None):
            given = "i" if i is not None else "w"
            other = "w" if given == "i" else "i"
            if b is None:
                raise ValueError(
                    f"{given} was given without {other}: give both i and w (or b alone, split evenly)"
                )
        if b is None and i is not None and w is not None:
            b = _add(i, w)
            if any(x <= 0 for x in (b if isinstance(b, tuple) else (b,))):
                raise ValueError(
                    f"i + w must be > 0 (the full backward b = i + w takes time, as b > 0 does), got i={i!r}, w={w!r}"
                )
        if b is None:
            b = _combine(f, 2, lambda a, k: a * k)
        if i is None and w is None:
            i = w = _half(b)
        elif i is None:
            i = _sub(b, w)  # type: ignore[arg-type]
        elif w is None:
            w = _sub(b, i)
        set_(self, "f", f)
        set_(self, "b", b)
        set_(self, "i", i)
        set_(self, "w", w)
        set_(self, "comm", _check_one("comm", self.comm, positive=False))
        set_(self, "activation", _check_cost("activation", self.activation, positive=False))
        wh = check_number("w_held", self.w_held, minimum=0)
        if wh > 1:
            raise ValueError(f"w_held must be between 0 and 1 (a fraction of the activations), got {wh!r}")
        set_(self, "w_held", wh)
        for k in ("i", "w"):
            vals = getattr(self, k)
            vals_t = vals if isinstance(vals, tuple) else (vals,)
            if any(x < 0 for x in vals_t):
                raise ValueError(f"{k} came out negative ({vals!r}): with b given, {k} must not exceed b")
        set_(self, "unit", check_str("unit", self.unit))
        set_(self, "name", check_str("name", self.name, empty=True))
        if not isinstance(self.extra, Mapping):
            raise TypeError(f"extra must be a dict of notes, got {self.extra!r} of type {type(self.extra).__name__}")
        set_(self, "activation_bytes", _check_one("activation_bytes", self.activation_bytes, positive=False))
        if self.gradient_bytes is not None:
            set_(self, "gradient_bytes", _check_one("gradient_bytes", self.gradient_bytes, positive=False))
        if self.bandwidth is not None:
            set_(self, "bandwidth", _check_one("bandwidth", self.bandwidth, positive=True))
        set_(self, "dp_reduce", _check_cost("dp_reduce", self.dp_reduce, positive=False))
        if self.bandwidth is not None and max(self.transfer_times) > MAX_COST:
            raise ValueError(
                f"bytes / bandwidth must be at most {MAX_COST:g} (in its unit), got activation_bytes="
                f"{self.activation_bytes!r}, gradient_bytes={self.gradient_bytes!r}, bandwidth={self.bandwidth!r}: "
                f"give the bandwidth in bytes per time unit (a message of 32 MiB over 50 GB/s is 0.67 ms)"
            )
        lengths = {k: len(getattr(self, k)) for k in ("f", "b", "i", "w", "activation", "dp_reduce")
                   if isinstance(getattr(self, k), tuple)}
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"per-stage costs must all have one value per stage (the same length), got lengths "
                f"{', '.join(f'{k}: {n}' for k, n in lengths.items())}"
            )
        self._check_pair_cost()

    def _check_pair_cost(self) -> None:
        """Validate ``fb`` and ``overlap`` (see the class docstring); normalise ``"sum"`` to ``None``."""
        fb, overlap = self.fb, self.overlap
        if overlap is not None:
            if fb is not None:
                raise ValueError(f"give fb or overlap, not both (got fb={fb!r}, overlap={overlap!r})")
            x = check_number("overlap", overlap, minimum=0)
            if x > 1:
                raise ValueError(f"overlap must be a fraction between 0 (F + B) and 1 (max(F, B)), got {overlap!r}")
            object.__setattr__(self, "overlap", x)
            return
        if fb is None or fb == "sum":
            object.__setattr__(self, "fb", None)
            return
        if isinstance(fb, str):
            if fb != "max":
                raise ValueError(f"fb must be 'sum' (F + B), 'max' (max(F, B)), a number or None, got {fb!r}")
            return
        if isinstance(self.f, tuple) or isinstance(self.b, tuple):
            raise ValueError(
                f"fb={fb!r} as a number needs scalar f and b; with per-stage costs give fb='max', fb='sum' or "
                f"overlap=<fraction> (each pair's time then follows its two stages)"
            )
        t = _check_one("fb", fb, positive=True)
        f, b = cast(Number, self.f), cast(Number, self.b)
        lo, hi = max(f, b), cast(Number, _add(f, b))
        if not lo <= t <= hi:
            raise ValueError(
                f"fb={fb!r} is outside [max(f, b), f + b] = [{format_number(lo)}, {format_number(hi)}]: an "
                f"overlapped pair takes at least its longer part and at most both parts back to back"
            )
        object.__setattr__(self, "fb", t)

    def with_(self, **changes: Any) -> Costs:
        """A copy with some fields changed (``costs.with_(comm=0.2)``). Used in lesson 06.

        Raises ``TypeError`` naming an unknown field, and the constructor's errors for a bad value.
        """
        check_keywords("Costs.with_()", changes, [f.name for f in fields(self)])
        return replace(self, **changes)

    def describe(self, *, split: bool = True, name_pair: bool = False, fractions: bool = True) -> str:
        """One line naming the costs, in the current language. Used in lessons 01, 04 and 07, the figures' titles
        and the explorers.

        English: ``F=1 B=2 (I=1 W=1) comm=0 slot``; Chinese: ``F = 1，B = 2（I = 1，W = 1），通信延迟 = 0（单位：时间槽）``.
        A link bandwidth adds ``wire=`` (the transfer time of an activation, ``/`` a gradient's when they differ;
        Chinese 传输) and a data-parallel reduction ``dp_reduce=`` (Chinese 梯度归约).

        ``split=False`` leaves out the ``(I=... W=...)`` part (``F=1 B=2 comm=0 slot``): a figure of a
        schedule whose backwards are all fused ``B`` actions names no ``I`` or ``W`` it does not run.
        ``name_pair=True`` names the time of a fused F&B pair also when it is the default ``F&B=F+B``
        (lesson 07x compares both). ``fractions=False`` writes an exact fraction as a decimal
        (``comm=0.5``, not ``comm=1/2``): the explorers' readouts, beside sliders that show decimals.
        """
        for key, flag in (("split", split), ("name_pair", name_pair), ("fractions", fractions)):
            if not isinstance(flag, bool):
                raise TypeError(f"{key} must be True or False, got {flag!r} of type {type(flag).__name__}")
        zh = get_language() == "zh"
        eq = " = " if zh else "="

        def fmt(x: CostValue | None) -> str:
            if isinstance(x, tuple):
                return "[" + ", ".join(format_number(e, fractions=fractions) for e in x) + "]"
            return format_number(x, fractions=fractions)  # type: ignore[arg-type]

        parts = [f"F{eq}{fmt(self.f)}", f"B{eq}{fmt(self.b)}"]
        if split:
            parts[-1] += (f"（I = {fmt(self.i)}，W = {fmt(self.w)}）" if zh else f" (I={fmt(self.i)} W={fmt(self.w)})")
        if self.overlap is not None:
            parts.append(f"F&B = F + B − {fmt(self.overlap)}·min(F, B)" if zh else f"F&B=F+B-{fmt(self.overlap)}·min(F,B)")
        elif self.fb == "max":
            parts.append("F&B = max(F, B)" if zh else "F&B=max(F,B)")
        elif self.fb is not None:
            parts.append(f"F&B{eq}{fmt(self.fb)}")  # type: ignore[arg-type]
        elif name_pair:
            parts.append("F&B = F + B" if zh else "F&B=F+B")
        parts.append(f"{tr('costs.describe.comm')}{eq}{fmt(self.comm)}")
        if self.bandwidth is not None and (self.activation_bytes or self.gradient_bytes):
            act, grad = self.transfer_times
            wire = fmt(act) if act == grad else f"{fmt(act)}/{fmt(grad)}"
            parts.append(f"{tr('costs.describe.wire')}{eq}{wire}")
        if self.dp_reduce:
            parts.append(f"{tr('costs.describe.dp_reduce')}{eq}{fmt(self.dp_reduce)}")
        unit = tr('costs.describe.slot') if self.unit == 'slot' else self.unit
        if zh:
            # the I/W bracket hangs on B without a comma; every other field is separated by one
            return "，".join(parts) + f"（单位：{unit}）"
        return " ".join(parts) + f" {unit}"

    @property
    def transfer_times(self) -> tuple[Number, Number]:
        """Time on the wire of one activation and one gradient message, ``bytes / bandwidth``
        (in the time unit; 0 without a bandwidth). A hop takes ``comm`` more."""
        if self.bandwidth is None:
            return 0, 0
        grad = self.activation_bytes if self.gradient_bytes is None else self.gradient_bytes
        return _ratio(self.activation_bytes, self.bandwidth), _ratio(grad, self.bandwidth)

    def resolve(self, n_stages: int, v: int) -> ResolvedCosts:
        """Per-stage durations for a schedule of ``n_stages`` stages with ``v`` chunks per rank (ints >= 1)."""
        n_stages = check_int("n_stages", n_stages)
        v = check_int("v", v)
        def per_stage(name: str, x: CostValue) -> tuple[Number, ...]:
            if isinstance(x, tuple):
                if len(x) != n_stages:
                    raise ValueError(
                        f"{name} has {len(x)} per-stage values but the schedule has {n_stages} "
                        f"stages (p * v); give one value per stage or a single number"
                    )
                return x
            return (_div(x, v),) * n_stages  # type: ignore[arg-type]

        pair: tuple[str, Number]
        if self.overlap is not None:
            pair = ("overlap", self.overlap)
        elif self.fb == "max":
            pair = ("max", 0)
        elif self.fb is not None:
            pair = ("time", _div(self.fb, v))  # type: ignore[arg-type]
        else:
            pair = ("sum", 0)
        return ResolvedCosts(
            f=per_stage("f", self.f),
            b=per_stage("b", self.b),  # type: ignore[arg-type]
            i=per_stage("i", self.i),  # type: ignore[arg-type]
            w=per_stage("w", self.w),  # type: ignore[arg-type]
            activation=per_stage("activation", self.activation),
            comm=self.comm,
            w_held=self.w_held,
            pair=pair,
            transfer=self.transfer_times,
            dp_reduce=per_stage("dp_reduce", self.dp_reduce),
        )


def _ratio(x: Number, y: Number) -> Number:
    """``x / y``, exact (an int or a Fraction) when both are ints or Fractions."""
    if isinstance(x, (int, Fraction)) and isinstance(y, (int, Fraction)):
        return _exact(Fraction(x) / y)
    return x / y


def _div(x: Number, v: int) -> Number:
    if v == 1:
        return x
    if isinstance(x, (int, Fraction)):
        q = Fraction(x) / v
        return int(q) if q.denominator == 1 else q
    return x / v


@dataclass(frozen=True)
class ResolvedCosts:
    """Per-stage numbers ready for simulation (see :meth:`Costs.resolve`)."""

    f: tuple[Number, ...]
    b: tuple[Number, ...]
    i: tuple[Number, ...]
    w: tuple[Number, ...]
    activation: tuple[Number, ...]
    comm: Number
    w_held: Number
    #: how an overlapped pair's time follows from its parts: ``("sum", 0)``, ``("max", 0)``,
    #: ``("overlap", fraction)`` or ``("time", per-chunk time)`` (see :attr:`Costs.fb`).
    pair: tuple[str, Number] = ("sum", 0)
    #: time on the wire of one activation and one gradient message (``bytes / bandwidth``; 0, 0: unlimited)
    transfer: tuple[Number, Number] = (0, 0)
    #: per stage, the time of its data-parallel gradient reduction (empty: none)
    dp_reduce: tuple[Number, ...] = ()

    @property
    def has_links(self) -> bool:
        """True when messages take time on the wire, so links must be modelled one message at a time."""
        return any(self.transfer)

    def wire_time(self, what: str) -> Number:
        """Time on the wire of a message carrying event kind ``what`` (``"activation"`` or ``"gradient"``)."""
        return self.transfer[0] if what == "activation" else self.transfer[1]

    def duration(self, stage: int, kind: str) -> Number:
        """How long ``kind`` (``"F"``, ``"B"``, ``"I"``, ``"W"``) takes on ``stage``; a send or a
        receive (``SEND_F``, ``RECV_F``, ``SEND_B``, ``RECV_B``) takes 0: posting it is free, its
        message's time is the wire's and the latency's (:func:`bubblekit.actions.carried`)."""
        if kind in COMM_KINDS:
            return 0
        return {"F": self.f, "B": self.b, "I": self.i, "W": self.w}[kind][stage]

    def pair_duration(self, f_stage: int, b_stage: int) -> Number:
        """How long an overlapped pair takes: forward on ``f_stage``, full backward on ``b_stage``."""
        f, b = self.f[f_stage], self.b[b_stage]
        rule, x = self.pair
        if rule == "sum":
            return f + b
        if rule == "max":
            return max(f, b)
        if rule == "overlap":
            return _exact(f + b - x * min(f, b)) if isinstance(x, (int, Fraction)) else f + b - x * min(f, b)
        return x

    def time(self, action: Action) -> Number:
        """How long ``action`` takes (any kind, overlapped pairs included)."""
        if type(action) is Pair:
            return self.pair_duration(action.forward.stage, action.backward.stage)
        return self.duration(action.stage, action.kind)

    def scaled_to_integers(self) -> tuple[ResolvedCosts, int]:
        """If every time is an int or Fraction, scale all times to ints; return (costs, scale).

        Simulating in integers is exact and much faster than Fraction arithmetic; a time
        ``t`` in the result means ``t / scale`` in the original unit. Floats give scale 1
        and are left alone.
        """
        rule, x = self.pair
        times = (*self.f, *self.b, *self.i, *self.w, self.comm, *self.transfer, *self.dp_reduce, x)
        if not all(isinstance(t, (int, Fraction)) for t in times):
            return self, 1
        scale = 1
        for t in times[:-1]:
            if isinstance(t, Fraction):
                scale = scale * t.denominator // math.gcd(scale, t.denominator)
        if isinstance(x, Fraction):  # a pair's time or the overlap fraction's denominator
            scale *= x.denominator if rule == "overlap" else x.denominator // math.gcd(scale, x.denominator)
        if scale == 1 and all(isinstance(t, int) for t in times):
            return self, 1
        pair = (rule, x) if rule == "overlap" else (rule, int(Fraction(x) * scale))  # overlap: a fraction, not a time

        def sc(xs: tuple[Number, ...]) -> tuple[Number, ...]:
            return tuple(int(Fraction(x) * scale) for x in xs)

        return (
            ResolvedCosts(
                sc(self.f), sc(self.b), sc(self.i), sc(self.w), self.activation,
                int(Fraction(self.comm) * scale), self.w_held, pair,
                sc(self.transfer), sc(self.dp_reduce),  # type: ignore[arg-type]
            ),
            scale,
        )


# ---------------------------------------------------------------------------- presets
_DATA_CANDIDATES = (
    Path(__file__).resolve().parent / "data" / "h200_layer_costs.json",
)


def load_h200_layer_costs() -> dict[str, Any]:
    """The measured H200 layer costs shipped with bubblekit (copied from the course data).

    Source: one NVIDIA H200, PyTorch 2.11, CUDA 13, bf16, micro-batch 1; median of 20 runs
    (``bubblekit/data/README.md``).

    Used in lessons 05 and 09.
    """
    for path in _DATA_CANDIDATES:
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    raise FileNotFoundError("bubblekit/data/h200_layer_costs.json is missing from the installation")


def h200_costs(hidden: int = 4096, seq: int = 4096, layers_per_rank: float = 1, comm_ms: float = 0.0,
               link_gb_per_s: float | None = None, dp_reduce_ms: float = 0.0) -> Costs:
    """Costs in ms from the measured H200 layer table (F, I = input-grad B, W = weight-grad).

    Args:
        hidden: model width; one of the measured configurations.
        seq: sequence length; one of the measured configurations.
        layers_per_rank: transformer layers each rank holds (costs scale linearly).
        comm_ms: latency of one hop in ms (not measured here; 0 by default).
        link_gb_per_s: bandwidth of one direction of a link between ranks, in GB/s (1e9 bytes per
            second; e.g. about 450 for NVLink 4 per direction, 50 for a 400 Gb/s InfiniBand port);
            ``None`` (default): unlimited. The messages are the measured boundary tensor
            (``boundary_tensor_bytes``: micro-batch x sequence x hidden in bf16).
        dp_reduce_ms: time of the data-parallel gradient reduction of a rank's layers, in ms
            (not measured here; 0 by default: no data parallelism). ``extra["params"]`` holds
            the rank's parameter count, from which a reduction time can be estimated.

    Used in lessons 05, 07, 09 and 10.
    """
    hidden = check_int("hidden", hidden)
    seq = check_int("seq", seq)
    data = load_h200_layer_costs()
    configs = data["configs"]
    match = next((c for c in configs if c["hidden"] == hidden and c["seq"] == seq), None)
    if match is None:
        avail = sorted((c["hidden"], c["seq"]) for c in configs)
        raise ValueError(
            f"no measured H200 configuration with hidden={hidden}, seq={seq}; "
            f"available (hidden, seq): {avail}"
        )
    layer = match["layer"]
    n = check_number("layers_per_rank", layers_per_rank, minimum=1)
    act_bytes = layer["activation_bytes_per_microbatch"] * n
    link = None if link_gb_per_s is None else check_number("link_gb_per_s", link_gb_per_s, minimum=0,
                                                           allow_equal=False) * 1e6  # bytes per ms
    return Costs(
        f=layer["F_ms"] * n,
        i=layer["B_input_grad_ms"] * n,
        w=layer["W_est_ms"] * n,
        b=layer["full_backward_ms"] * n,
        comm=comm_ms,
        activation_bytes=layer["boundary_tensor_bytes"],
        bandwidth=link,
        dp_reduce=check_number("dp_reduce_ms", dp_reduce_ms, minimum=0),
        unit="ms",
        name=tr("costs.h200.name", hidden=hidden, seq=seq, n=n),
        extra={"activation_bytes_per_microbatch": act_bytes, "params": layer["params"] * n},
    )


PRESETS: dict[str, Costs] = {
    "uniform": Costs(f=1, b=1, name="uniform (F = B = 1)"),
    "b=2f": Costs(f=1, b=2, name="backward = 2 x forward"),
    "f=i=w": Costs(f=1, i=1, w=1, name="F = I = W = 1"),
}


def preset(name: str, **overrides: Any) -> Costs:
    """A named cost preset: ``uniform``, ``b=2f``, ``f=i=w`` or ``h200`` (measured, ms).

    Keyword overrides replace fields (``preset("b=2f", comm=0.1)``); for ``h200`` they are
    passed to :func:`h200_costs`.

    Used in lessons 01, 02, 03 and 04.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a preset name (str), one of {[*PRESETS, 'h200']}, got {name!r} of type "
                        f"{type(name).__name__}")
    if name == "h200":
        check_keywords("preset('h200')", overrides, ["hidden", "seq", "layers_per_rank", "comm_ms", "link_gb_per_s",
                                                      "dp_reduce_ms"])
        return h200_costs(**overrides)
    if overrides and name in PRESETS:
        check_keywords(f"preset({name!r})", overrides, [f.name for f in fields(Costs)])
    if name not in PRESETS:
        import difflib

        close = difflib.get_close_matches(name, [*PRESETS, "h200"], n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"unknown cost preset {name!r}: choose one of {[*PRESETS, 'h200']}{hint}")
    return PRESETS[name].with_(**overrides) if overrides else PRESETS[name]


def is_number(x: object) -> bool:
    """True for ints, floats and Fractions, False for bools."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)
