"""Stage balancing: split a model's layers into contiguous pipeline stages so that the
slowest stage is as fast as possible.

A pipeline step runs at the pace of its slowest stage: in the steady state of 1F1B every
stage does one forward and one backward per microbatch, so the stage with the largest
``F + B`` sets the rhythm and every other stage waits for it (that waiting is bubble too).
Giving every rank the same *number* of layers is not enough when layers differ: the
measured H200 attention and MLP blocks differ by up to 2x (``bubblekit/data/README.md``).

This module solves the *linear partition* problem exactly: given per-layer costs
``c_0 .. c_{n-1}`` (any time unit, e.g. ms) and ``k`` stages, choose boundaries
``0 = b_0 < b_1 < ... < b_k = n`` minimising ``max_j sum(c[b_j:b_{j+1}])`` (the
*bottleneck*). Two exact methods:

* ``"dp"``: dynamic programming over (stages, prefix), ``O(k n^2)``;
* ``"search"``: Nicol's probe search (Pinar & Aykanat, "Fast optimal load balancing
  algorithms for 1D partitioning", JPDC 2004): for each stage in turn, a binary search
  for the shortest first stage whose cost, as a cap, lets a greedy packing place the
  rest, ``O(k^2 log^2 n)`` and no list of candidate sums.

Among the partitions with the optimal bottleneck, both return the one with the smallest
sum of squared stage costs (the most even one), and the earliest boundaries on a tie, so
the two methods agree boundary for boundary. That last step costs ``k n L`` (``L``: the
most layers a stage can hold under the bottleneck); above :data:`EVEN_LIMIT` it is
skipped and the earliest boundaries under the bottleneck are returned instead (still
optimal, maybe less even), so 20,000 layers split in well under a second.

Conventions: a stage holds at least one layer; stage ``j`` holds layers
``boundaries[j] .. boundaries[j+1] - 1`` (zero-based, end exclusive); for interleaved
schedules split into ``p * v`` stages. :meth:`Partition.to_costs` turns a partition into a
per-stage :class:`bubblekit.Costs` ready for :func:`bubblekit.simulate`.

Pure core: no matplotlib, widgets or torch.
"""

from __future__ import annotations

import bisect
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bubblekit._validate import Number, check_int, check_number, check_sequence
from bubblekit.costs import MAX_COST, Costs, load_h200_layer_costs
from bubblekit.i18n import register, tr
from bubblekit.text import Table

__all__ = [
    "Layer",
    "Partition",
    "partition",
    "even_partition",
    "measured_layers",
    "pieces_table",
    "bottleneck",
]


#: ``method="auto"`` uses the DP while ``k * n^2`` stays below this, else the search.
_DP_LIMIT = 2_000_000
#: ``method="dp"`` refuses inputs with ``k * n^2`` above this (it would take minutes).
DP_MAX = 100_000_000
#: The most-even tie-break (``k n L`` steps) runs up to this size; above it the earliest
#: boundaries under the optimal bottleneck are returned.
EVEN_LIMIT = 20_000_000


register({
    # Partition.describe and the measured pieces table (lesson 05); column keys stay English
    "balance.stage": {"en": "stage {j}: {cost}  [{layers}]", "zh": "流水级 {j}：{cost}  [{layers}]"},
    "balance.pieces": {"en": "{first} .. {last} ({n} pieces)", "zh": "{first} .. {last}（共 {n} 块）"},
    "balance.summary": {"en": "bottleneck {bottleneck}, imbalance {imbalance:.3f} (max / mean)",
                        "zh": "瓶颈 {bottleneck}，不均衡度 {imbalance:.3f}（最大 / 平均）"},
    "balance.costs_name": {"en": "{method} partition, {p} stages", "zh": "{method} 划分，{p} 个流水级"},
    "balance.hidden": {"en": "hidden", "zh": "隐藏维度"},
    "balance.seq": {"en": "seq", "zh": "序列长度"},
    "balance.attn_F": {"en": "attention F ms", "zh": "注意力前向 ms"},
    "balance.attn_B": {"en": "attention B ms", "zh": "注意力反向 ms"},
    "balance.mlp_F": {"en": "MLP F ms", "zh": "MLP 前向 ms"},
    "balance.mlp_B": {"en": "MLP B ms", "zh": "MLP 反向 ms"},
    "balance.ratio_F": {"en": "MLP ÷ attention (F)", "zh": "MLP ÷ 注意力（前向）"},
    "balance.ratio_FB": {"en": "MLP ÷ attention (F+B)", "zh": "MLP ÷ 注意力（前向 + 反向）"},
    "balance.pieces_title": {"en": "measured on one NVIDIA H200, bf16, micro-batch 1 (bubblekit/data)",
                             "zh": "在一张 NVIDIA H200 上实测，bf16，微批大小 1（bubblekit/data）"},
})


@dataclass(frozen=True)
class Layer:
    """One layer (or piece of a layer) with its per-microbatch costs.

    Attributes:
        name: a label such as ``"L3.attn"``.
        f: forward time of one microbatch (unit given by the caller, e.g. ms).
        b: full backward time (input and weight gradients) of one microbatch.
        i: input-gradient part of ``b`` (the zero-bubble paper's "B"), or ``None``.
        w: weight-gradient part of ``b``, or ``None``.
        activation_bytes: bytes held between this layer's forward and backward, per microbatch.

    The balancing weight is :attr:`weight` = ``f + b``: what the layer adds to its stage's
    work per microbatch in the steady state of 1F1B.
    """

    name: str
    f: Number
    b: Number
    i: Number | None = None
    w: Number | None = None
    activation_bytes: Number = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"Layer name must be a string, got {self.name!r}")
        for attr in ("f", "b"):
            object.__setattr__(self, attr, _bounded(f"Layer {self.name!r} {attr}", getattr(self, attr)))
        for attr in ("i", "w"):
            val = getattr(self, attr)
            if val is not None:
                object.__setattr__(self, attr, _bounded(f"Layer {self.name!r} {attr}", val))
        if (self.i is None) != (self.w is None):
            raise ValueError(f"Layer {self.name!r}: give both i and w, or neither (got i={self.i!r}, w={self.w!r})")
        object.__setattr__(
            self, "activation_bytes",
            check_number(f"Layer {self.name!r} activation_bytes", self.activation_bytes, minimum=0),
        )

    @property
    def weight(self) -> Number:
        """``f + b``: the layer's work per microbatch, in the caller's time unit."""
        return self.f + self.b


def _weights(layers: Sequence[Any]) -> tuple[tuple[Number, ...], tuple[Layer, ...] | None]:
    """Validate ``layers`` (numbers or :class:`Layer` objects) and return their weights."""
    if getattr(layers, "ndim", 0) >= 1:  # a numpy array of costs
        layers = check_sequence("layers", layers, empty=True)
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence):
        raise TypeError(
            f"layers must be a sequence of per-layer costs (numbers) or bubblekit.analysis.balance.Layer objects, "
            f"got {type(layers).__name__}"
        )
    if len(layers) == 0:
        raise ValueError("layers is empty: give at least one per-layer cost")
    if all(isinstance(x, Layer) for x in layers):
        objs = tuple(layers)
        return tuple(x.weight for x in objs), objs
    if any(isinstance(x, Layer) for x in layers):
        raise TypeError("layers mixes Layer objects and plain numbers: use one or the other")
    out: list[Number] = []
    for k, x in enumerate(layers):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(f"layers[{k}] must be a number (a layer's cost), got {x!r} of type {type(x).__name__}")
        out.append(_bounded(f"layers[{k}]", x))
    if any(isinstance(x, float) for x in out):  # one kind of arithmetic: Fractions mixed with floats round
        out = [float(x) for x in out]          # differently in the DP and the search (49/3 vs 16.333...)
    return tuple(out), None


def _bounded(name: str, x: Any) -> Number:
    """A layer cost: a finite number from 0 to :data:`~bubblekit.costs.MAX_COST` (larger sums overflow to inf)."""
    y = check_number(name, x, minimum=0)
    if y > MAX_COST:
        raise ValueError(f"{name} must be at most {MAX_COST:g} (in its unit), got {x!r}: sums of larger costs "
                         f"overflow; use a larger unit")
    return y


def _check_stages(p: Any, n: int) -> int:
    p = check_int("p", p)
    if p > n:
        raise ValueError(
            f"cannot split {n} layer(s) into p={p} stages: every stage needs at least one layer, "
            f"so p must be <= {n} (split the layers finer, e.g. attention and MLP separately, or use fewer stages)"
        )
    return p


def _prefix(weights: Sequence[Number]) -> list[Number]:
    pre: list[Number] = [0]
    for x in weights:
        pre.append(pre[-1] + x)
    return pre


def _greedy_end(pre: Sequence[Number], start: int, cap: Number) -> int:
    """The furthest ``end`` with ``pre[end] - pre[start] <= cap`` (layers ``start .. end-1`` fit)."""
    base = pre[start]
    return bisect.bisect_right(pre, cap, lo=start, key=lambda x: x - base) - 1


def _fits(pre: Sequence[Number], start: int, cap: Number, stages: int) -> bool:
    """Whether layers ``start ..`` fit in at most ``stages`` stages of cost <= ``cap`` (greedy packing)."""
    n = len(pre) - 1
    for _ in range(stages):
        end = _greedy_end(pre, start, cap)
        if end == start:
            return False  # one layer alone is over the cap
        if end == n:
            return True
        start = end
    return False


def _bottleneck_dp(pre: Sequence[Number], k: int) -> Number:
    """Optimal bottleneck by dynamic programming: ``best[j]`` = min max over prefixes of length j."""
    n = len(pre) - 1
    inf = float("inf")
    # one stage: the prefix sum itself
    best: list[Any] = [pre[j] if j >= 1 else inf for j in range(n + 1)]
    for stages in range(2, k + 1):
        new: list[Any] = [inf] * (n + 1)
        for j in range(stages, n - (k - stages) + 1):
            pj = pre[j]
            val: Any = inf
            for i in range(stages - 1, j):
                left = best[i]
                seg = pj - pre[i]
                cand = left if left > seg else seg
                if cand < val:
                    val = cand
            new[j] = val
        best = new
    return best[n]  # type: ignore[no-any-return]


def _bottleneck_search(pre: Sequence[Number], k: int) -> Number:
    """Optimal bottleneck by Nicol's probe search (exact, the same arithmetic as the DP).

    For the first stage from layer ``start`` with ``left`` stages to fill, find the shortest
    first stage ``[start, j)`` whose cost, used as a cap, lets the rest fit: its cost is an
    upper bound. Either the optimum equals it, or an optimal split ends the first stage one
    layer earlier (its cost is then below the optimum), so go on from there with one stage
    fewer. The optimum is the smallest bound met on the way.
    """
    n = len(pre) - 1
    best: Number | None = None
    start = 0
    for left in range(k, 1, -1):
        lo, hi = start + 1, n  # smallest j in [lo, hi] with the rest fitting under pre[j] - pre[start]
        while lo < hi:
            mid = (lo + hi) // 2
            if _fits(pre, start, pre[mid] - pre[start], left):
                hi = mid
            else:
                lo = mid + 1
        bound = pre[lo] - pre[start]
        best = bound if best is None or bound < best else best
        if lo == start + 1:  # a single layer already bounds it: nothing smaller exists
            return best
        start = lo - 1
    last = pre[n] - pre[start]
    return last if best is None or last < best else best


def _earliest(pre: Sequence[Number], k: int, cap: Number) -> tuple[int, ...]:
    """Boundaries with every stage <= ``cap``: each stage as long as it can be while leaving a
    layer for each later stage."""
    n = len(pre) - 1
    bounds = [0]
    for s in range(k - 1):
        end = min(_greedy_end(pre, bounds[-1], cap), n - (k - 1 - s))
        bounds.append(max(end, bounds[-1] + 1))
    bounds.append(n)
    return tuple(bounds)


def _most_even(pre: Sequence[Number], k: int, cap: Number) -> tuple[int, ...]:
    """Boundaries with every stage <= ``cap`` minimising the sum of squared stage costs."""
    n = len(pre) - 1
    inf = float("inf")
    # cost[s][j]: min sum of squares splitting the first j layers into s stages, all <= cap
    cost: list[list[Any]] = [[inf] * (n + 1) for _ in range(k + 1)]
    arg: list[list[int]] = [[-1] * (n + 1) for _ in range(k + 1)]
    cost[0][0] = 0
    for s in range(1, k + 1):
        for j in range(s, n - (k - s) + 1):
            pj = pre[j]
            best, where = inf, -1
            for i in range(j - 1, s - 2, -1):  # latest start first; stop once the stage exceeds cap
                seg = pj - pre[i]
                if seg > cap:
                    break
                prev = cost[s - 1][i]
                if prev == inf:
                    continue
                c = prev + seg * seg
                if c <= best:  # '<=' while i decreases: the earliest boundary wins a tie
                    best, where = c, i
            cost[s][j] = best
            arg[s][j] = where
    if arg[k][n] < 0:  # pragma: no cover - cap is feasible by construction
        raise RuntimeError("internal error: no partition under the optimal bottleneck")
    bounds = [n]
    j = n
    for s in range(k, 0, -1):
        j = arg[s][j]
        bounds.append(j)
    return tuple(reversed(bounds))


def bottleneck(layers: Sequence[Any], p: int, *, method: str = "auto") -> Number:
    """The smallest possible slowest-stage cost when splitting ``layers`` into ``p`` contiguous stages.

    Args:
        layers: per-layer costs (numbers, any time unit) or :class:`Layer` objects (weight ``f + b``).
        p: number of stages (``p * v`` for interleaved schedules), ``1 <= p <= len(layers)``.
        method: ``"dp"``, ``"search"`` or ``"auto"`` (DP for small inputs, search otherwise).
    """
    weights, _ = _weights(layers)
    k = _check_stages(p, len(weights))
    pre = _prefix(weights)
    return _solve(pre, k, _check_method(method, k, len(weights)))


def _check_method(method: Any, k: int, n: int) -> str:
    if method not in ("auto", "dp", "search"):
        raise ValueError(f"method must be 'auto', 'dp' or 'search', got {method!r}")
    if method == "auto":
        return "dp" if k * n * n <= _DP_LIMIT else "search"
    if method == "dp" and k * n * n > DP_MAX:
        raise ValueError(
            f"method='dp' would take k n^2 = {k * n * n:,} steps for {n} layers and p={k}, more than {DP_MAX:,} "
            "(minutes): use method='search' or 'auto' (the same answer, much faster)"
        )
    return str(method)


def _solve(pre: Sequence[Number], k: int, method: str) -> Number:
    return _bottleneck_dp(pre, k) if method == "dp" else _bottleneck_search(pre, k)


@dataclass(frozen=True)
class Partition:
    """Contiguous stages over a list of layers.

    Attributes:
        boundaries: ``p + 1`` layer indices ``0 = b_0 < ... < b_p = n``; stage ``j`` holds
            layers ``b_j .. b_{j+1} - 1``.
        stage_costs: per stage, the sum of its layers' weights (``f + b`` for :class:`Layer`).
        weights: the per-layer weights used.
        layers: the :class:`Layer` objects when given (needed by :meth:`to_costs`), else ``None``.
        method: how the boundaries were chosen (``"dp"``, ``"search"``, ``"even"``, ``"given"``).
    """

    boundaries: tuple[int, ...]
    stage_costs: tuple[Number, ...]
    weights: tuple[Number, ...]
    layers: tuple[Layer, ...] | None = field(default=None, repr=False)
    method: str = "given"

    @property
    def p(self) -> int:
        """Number of stages."""
        return len(self.boundaries) - 1

    @property
    def sizes(self) -> tuple[int, ...]:
        """Layers per stage."""
        b = self.boundaries
        return tuple(b[j + 1] - b[j] for j in range(self.p))

    @property
    def stages(self) -> tuple[range, ...]:
        """Per stage, the range of layer indices it holds."""
        b = self.boundaries
        return tuple(range(b[j], b[j + 1]) for j in range(self.p))

    @property
    def bottleneck(self) -> Number:
        """The slowest stage's cost: what sets the pipeline's pace."""
        return max(self.stage_costs)

    @property
    def imbalance(self) -> float:
        """Slowest stage over the mean stage (1.0 is perfect balance)."""
        total = sum(self.stage_costs)
        return float(self.bottleneck * self.p / total) if total else 1.0

    def stage_names(self) -> list[list[str]]:
        """Per stage, the names of its layers (``"#k"`` for plain numeric costs)."""
        names = [x.name for x in self.layers] if self.layers is not None else [f"#{k}" for k in range(len(self.weights))]
        return [names[r.start:r.stop] for r in self.stages]

    def describe(self, digits: int = 2) -> str:
        """A short table: one line per stage with its layers and cost."""
        lines = []
        for j, (names, c) in enumerate(zip(self.stage_names(), self.stage_costs)):
            shown = (" ".join(names) if len(names) <= 6
                     else tr("balance.pieces", first=names[0], last=names[-1], n=len(names)))
            lines.append(tr("balance.stage", j=j, cost=f"{float(c):.{digits}f}", layers=shown))
        lines.append(tr("balance.summary", bottleneck=f"{float(self.bottleneck):.{digits}f}", imbalance=self.imbalance))
        return "\n".join(lines)

    def to_costs(self, *, comm: Number = 0, unit: str = "ms", name: str | None = None) -> Costs:
        """Per-stage :class:`bubblekit.Costs` (``f``, ``b``, and ``i``/``w`` when every layer has them).

        Activation memory per stage is in *microbatch activations* where 1.0 is the mean
        stage's bytes (``extra["activation_bytes_per_microbatch"]`` holds that mean, and
        ``extra["stage_activation_bytes"]`` the per-stage bytes). Needs :class:`Layer` objects.

        Args:
            comm: latency of one hop between ranks, in ``unit``.
            unit: the time unit of the layer costs (``"ms"`` for the measured presets).
            name: label for plots; default says how the partition was chosen.

        Used in lesson 05.
        """
        if self.layers is None:
            raise ValueError(
                "to_costs needs Layer objects (with f and b); this partition was built from plain numbers. "
                "Build it from bubblekit.analysis.balance.Layer objects, or use Costs(f=[...], b=[...]) yourself."
            )
        groups = [self.layers[r.start:r.stop] for r in self.stages]
        f = [sum(x.f for x in g) for g in groups]
        b = [sum(x.b for x in g) for g in groups]
        kw: dict[str, Any] = {}
        if all(x.i is not None for x in self.layers):
            kw["i"] = [sum(x.i for x in g) for g in groups]  # type: ignore[misc]
            kw["w"] = [sum(x.w for x in g) for g in groups]  # type: ignore[misc]
        act_bytes = [sum(x.activation_bytes for x in g) for g in groups]
        mean_bytes = sum(act_bytes) / len(act_bytes)
        activation: Any = [float(a / mean_bytes) for a in act_bytes] if mean_bytes else 1
        label = name if name is not None else tr("balance.costs_name", method=self.method, p=self.p)
        return Costs(
            f=f, b=b, comm=comm, activation=activation, unit=unit, name=label,
            extra={"activation_bytes_per_microbatch": mean_bytes, "stage_activation_bytes": tuple(act_bytes)},
            **kw,
        )


def _make(boundaries: Sequence[int], weights: tuple[Number, ...], layers: tuple[Layer, ...] | None, method: str) -> Partition:
    pre = _prefix(weights)
    b = tuple(boundaries)
    costs = tuple(pre[b[j + 1]] - pre[b[j]] for j in range(len(b) - 1))
    return Partition(b, costs, weights, layers, method)


def partition(layers: Sequence[Any], p: int, *, method: str = "auto") -> Partition:
    """Split ``layers`` into ``p`` contiguous stages minimising the slowest stage (exact).

    Args:
        layers: per-layer costs (non-negative numbers in one time unit, e.g. ms per
            microbatch) or :class:`Layer` objects (balanced on ``f + b``).
        p: number of stages, ``1 <= p <= len(layers)``; use ``p * v`` for interleaved schedules.
        method: ``"dp"`` (dynamic programming), ``"search"`` (binary search over candidate
            bottlenecks) or ``"auto"``. Both are exact and return the same boundaries.

    Returns:
        A :class:`Partition`: boundaries, per-stage costs, and :meth:`Partition.to_costs`.

    Raises:
        TypeError: ``layers`` is not a sequence of numbers or Layers; ``p`` is not an int.
        ValueError: empty ``layers``, a negative cost, ``p < 1`` or ``p > len(layers)``,
            or an unknown ``method``.

    Example:
        >>> partition([1, 2, 3, 4], 2).boundaries
        (0, 3, 4)

    Used in lessons 05 and 10.
    """
    weights, objs = _weights(layers)
    k = _check_stages(p, len(weights))
    how = _check_method(method, k, len(weights))
    pre = _prefix(weights)
    cap = _solve(pre, k, how)
    longest = max(_greedy_end(pre, i, cap) - i for i in range(len(weights)))
    if k * len(weights) * longest <= EVEN_LIMIT:
        return _make(_most_even(pre, k, cap), weights, objs, how)
    return _make(_earliest(pre, k, cap), weights, objs, f"{how} (earliest boundaries: too large for the most even)")


def even_partition(layers: Sequence[Any], p: int, *, group: int = 1) -> Partition:
    """Split ``layers`` into ``p`` stages by *count* (what a naive split does), ignoring their costs.

    The first ``n mod p`` stages get one extra layer (``n = len(layers)``), like
    Megatron-LM's default of equal layers per stage.

    Args:
        group: count groups of this many consecutive items as one layer and never split a
            group: ``group=2`` splits :func:`measured_layers` pieces (attention, MLP) by
            whole-layer count, so the split by count and a balanced split of the same pieces
            share one cost model. ``len(layers)`` must be a multiple of ``group``.

    Used in lesson 05.
    """
    weights, objs = _weights(layers)
    g = check_int("group", group)
    if len(weights) % g:
        raise ValueError(f"group={g} does not divide the {len(weights)} layers: give a group size that divides it")
    n = len(weights) // g
    k = _check_stages(p, n)
    q, r = divmod(n, k)
    bounds = [0]
    for j in range(k):
        bounds.append(bounds[-1] + (q + (1 if j < r else 0)) * g)
    return _make(bounds, weights, objs, "even")


def measured_layers(
    n_layers: int, *, hidden: int = 4096, seq: int = 4096, pieces: bool = True
) -> list[Layer]:
    """Per-layer costs of an ``n_layers`` GPT model from the measured H200 table, in ms.

    Source: one NVIDIA H200, PyTorch 2.11, CUDA 13, bf16, micro-batch 1, median of 20 runs
    (``bubblekit/data/README.md``). Embedding and output head are not measured and not included.

    Args:
        n_layers: transformer layers, int >= 1.
        hidden, seq: one of the measured configurations (see :func:`bubblekit.h200_costs`).
        pieces: ``True`` lists attention and MLP blocks separately
            (``L0.attn, L0.mlp, L1.attn, ...``, ``2 * n_layers`` items) so a stage may end
            between them; ``False`` lists whole layers.

    Used in lesson 05.
    """
    n_layers = check_int("n_layers", n_layers)
    data = load_h200_layer_costs()
    match = next((c for c in data["configs"] if c["hidden"] == hidden and c["seq"] == seq), None)
    if match is None:
        avail = sorted((c["hidden"], c["seq"]) for c in data["configs"])
        raise ValueError(f"no measured H200 configuration with hidden={hidden}, seq={seq}; available (hidden, seq): {avail}")

    def make(name: str, rec: dict[str, Any]) -> Layer:
        return Layer(
            name, f=rec["F_ms"], b=rec["full_backward_ms"], i=rec["B_input_grad_ms"], w=rec["W_est_ms"],
            activation_bytes=rec["activation_bytes_per_microbatch"],
        )

    out: list[Layer] = []
    for k in range(n_layers):
        if pieces:
            out.append(make(f"L{k}.attn", match["attention"]))
            out.append(make(f"L{k}.mlp", match["mlp"]))
        else:
            out.append(make(f"L{k}", match["layer"]))
    return out


def pieces_table() -> Table:
    """Measured attention and MLP blocks side by side, one row per configuration (ms, one H200).

    Columns: ``hidden``, ``seq``; forward and full backward of the attention block
    (LayerNorm + QKV + attention + output projection) and of the MLP block (LayerNorm + fc1
    + GeLU + fc2), in ms per microbatch; ``mlp_vs_attn_F``: MLP forward / attention forward;
    ``mlp_vs_attn_FB``: the same for forward + backward, the weight a stage balances on.

    Used in lesson 05.
    """
    rows = []
    for c in load_h200_layer_costs()["configs"]:
        a, m = c["attention"], c["mlp"]
        rows.append({
            "hidden": c["hidden"], "seq": c["seq"],
            "attn_F": a["F_ms"], "attn_B": a["full_backward_ms"], "mlp_F": m["F_ms"], "mlp_B": m["full_backward_ms"],
            "mlp_vs_attn_F": m["F_ms"] / a["F_ms"],
            "mlp_vs_attn_FB": (m["F_ms"] + m["full_backward_ms"]) / (a["F_ms"] + a["full_backward_ms"]),
        })
    return Table(
        rows, formats=dict.fromkeys(("attn_F", "attn_B", "mlp_F", "mlp_B", "mlp_vs_attn_F", "mlp_vs_attn_FB"), "float2"),
        headers={"hidden": tr("balance.hidden"), "seq": tr("balance.seq"),
                 "attn_F": tr("balance.attn_F"), "attn_B": tr("balance.attn_B"), "mlp_F": tr("balance.mlp_F"),
                 "mlp_B": tr("balance.mlp_B"), "mlp_vs_attn_F": tr("balance.ratio_F"), "mlp_vs_attn_FB": tr("balance.ratio_FB")},
        title=tr("balance.pieces_title"),
    )
