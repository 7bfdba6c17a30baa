"""Per-rank memory in bytes: parameters, gradients, optimizer state and activations.

A schedule's activation peak (:attr:`bubblekit.SimResult.peak_activations`) says how many
microbatches' activations a rank holds at worst; this module turns it, with the model's size,
the stage layout and the precision, into **bytes per rank**, and says whether that fits a GPU
(:func:`fits`). Used in lesson 07 and by the planner (:func:`bubblekit.analysis.planner.plan`).

What a rank holds (bytes, GB = 10^9 bytes as ZeRO writes them, GiB = 2^30):

* **model state**, per parameter the rank holds (:data:`PRECISIONS`):

  - ``"bf16-grads"`` (the default, also ``"mixed"``): mixed-precision Adam, **16 bytes per
    parameter**: 2 (16-bit weights) + 2 (16-bit gradients) + 12 (fp32 master weights,
    momentum and variance). Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
    Trillion Parameter Models" (SC 2020, arXiv 1910.02054), §3.1: "(2 + 2 + K)Ψ ... K = 12 ...
    16Ψ bytes";
  - ``"fp32-grads"``: 16-bit weights with fp32 gradient accumulation, 18 bytes per parameter
    (2 + 4 + 12): Megatron-LM without its distributed optimizer
    (``megatron/training/theoretical_memory_usage.py``);
  - ``zero`` = 1, 2, 3 shards the optimizer state, then the gradients, then the weights over
    ``dp`` data-parallel replicas (ZeRO's P_os, P_os+g, P_os+g+p; Megatron's distributed
    optimizer is ``zero=1`` with ``"fp32-grads"``: 6 + 12/dp bytes).

  The parameters a rank holds follow from the layout: its stages' layers (a GPT layer has
  ``12h^2 + 13h`` parameters with ``ffn = 4h``: attention ``4h^2 + 4h``, MLP ``8h^2 + 5h``, two
  LayerNorms ``4h``), divided by the tensor-parallel degree ``tp``. DualPipe's ranks hold two
  stages that are copies (two copies of the model), so twice the parameters of 1F1B's.
* **activations**: the schedule's peak in microbatch activations times the bytes one
  microbatch leaves on one layer (:func:`activation_bytes_per_layer`: Korthikanti et al.'s
  formula, or the measured H200 table shipped in ``bubblekit/data``) times the layers of the
  stage. The peak comes from the simulator with the per-stage bytes as activation sizes, so
  uneven stages, V shapes and overlapped pairs count exactly.

Not counted (stated, not hidden): the embedding's and the loss's activations, communication
buffers, the CUDA context and allocator fragmentation (often a few GB in practice).

Pure core: no matplotlib, widgets or torch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bubblekit._validate import (
    Number,
    check_bool,
    check_choice,
    check_int,
    check_keywords,
    check_number,
    check_sequence,
    check_str,
)
from bubblekit.costs import Costs
from bubblekit.i18n import get_language, register, tr
from bubblekit.schedules import Schedule
from bubblekit.simulator import simulate
from bubblekit.text import Table

__all__ = [
    "GB", "GiB", "Precision", "PRECISIONS", "Model", "model_state_bytes", "activation_bytes_per_layer",
    "RankMemory", "MemoryReport", "memory_per_rank", "fits", "stage_layers",
]

register({
    # the per-rank breakdown (MemoryReport.table) and the frontier (lesson 07); column keys stay English
    "memory.rank.layers": {"en": "layers", "zh": "层数"},
    "memory.rank.weights": {"en": "weights ({unit})", "zh": "权重（{unit}）"},
    "memory.rank.grads": {"en": "grads ({unit})", "zh": "梯度（{unit}）"},
    "memory.rank.optimizer": {"en": "optimizer ({unit})", "zh": "优化器状态（{unit}）"},
    "memory.rank.activations": {"en": "activations ({unit})", "zh": "激活（{unit}）"},
    "memory.rank.total": {"en": "total ({unit})", "zh": "合计（{unit}）"},
    "memory.rank.peak": {"en": "peak (microbatches)", "zh": "峰值（微批数）"},
    "memory.fits": {"en": "; fits in {gpu:.4g} {unit} (largest: rank {rank}, {largest:.4g} {unit})",
                    "zh": "；放得进 {gpu:.4g} {unit} 显存（最大的是 rank {rank}，{largest:.4g} {unit}）"},
    "memory.does_not_fit": {"en": "; does NOT fit in {gpu:.4g} {unit} (largest: rank {rank}, {largest:.4g} {unit})",
                            "zh": "；放不进 {gpu:.4g} {unit} 显存（最大的是 rank {rank}，{largest:.4g} {unit}）"},
    "memory.title": {"en": "memory per rank, {schedule}{verdict}", "zh": "每个 rank 的显存，{schedule}{verdict}"},
    "memory.state_note": {"en": "state: {precision} ({bytes} B/parameter); {notes}",
                          "zh": "模型状态：{precision}（每个参数 {bytes} B）；{notes}"},
    "memory.note.activations": {"en": "activations: {mib:.4g} MiB per layer per microbatch ({source}{options})",
                                "zh": "激活：每层每个微批 {mib:.4g} MiB（{source}{options}）"},
    "memory.note.h200": {"en": "measured H200", "zh": "H200 实测"},
    "memory.note.korthikanti": {"en": "Korthikanti et al.", "zh": "Korthikanti 等人的公式"},
    "memory.note.not_counted": {"en": "not counted: embedding/loss activations, buffers, CUDA context",
                                "zh": "未计入：embedding/loss 的激活、缓冲区、CUDA 上下文"},
    "memory.note.copies": {"en": "{pipes} copies of the model (one per direction)",
                           "zh": "模型有 {pipes} 份副本（每个方向一份）"},
    "memory.note.zero": {"en": "ZeRO-{zero} over dp={dp}", "zh": "ZeRO-{zero} 切分到 dp={dp} 个副本上"},
    "memory.precision.bf16_grads": {
        "en": "mixed-precision Adam: 16-bit weights and gradients, fp32 master weights, momentum and variance",
        "zh": "混合精度 Adam：16 位权重和梯度，fp32 的主权重、动量和方差"},
    "memory.precision.fp32_grads": {
        "en": "16-bit weights, fp32 gradient accumulation, fp32 master weights, momentum and variance",
        "zh": "16 位权重，fp32 梯度累加，fp32 的主权重、动量和方差"},
    "memory.frontier.devices": {"en": "same {n} devices", "zh": "都用 {n} 个设备"},
    "memory.frontier.stages": {"en": "same PP = {n} model stages (the DualPipe README's basis)",
                               "zh": "都切成 PP = {n} 个模型流水级，即 DualPipe README 的口径"},
    "memory.frontier.note": {"en": "{what}, m = {m}, {costs}; memory in GB (10^9 B) per device, its largest rank; "
                                   "bubble_ratio = idle / (devices × makespan)",
                             "zh": "{what}，m = {m}，{costs}；显存是每个设备的用量（取最大的 rank），单位 GB（10^9 B）；"
                                   "气泡比例（bubble_ratio）= 空闲 / (设备数 × 单步耗时)"},
    "memory.frontier.left_out": {"en": "; left out: {names}", "zh": "；未列出：{names}"},
    "memory.frontier.title": {"en": "bubble vs memory per device ({what})", "zh": "气泡与单卡显存（{what}）"},
    "memory.frontier.schedule": {"en": "schedule", "zh": "调度"},
    "memory.frontier.devices_col": {"en": "devices", "zh": "设备数"},
    "memory.frontier.stages_col": {"en": "stages", "zh": "流水级数"},
    "memory.frontier.slot": {"en": "slot", "zh": "时间槽"},
    "memory.frontier.time": {"en": "time per microbatch ({unit})", "zh": "每微批耗时（{unit}）"},
    "memory.frontier.activations": {"en": "activations GB", "zh": "激活 GB"},
    "memory.frontier.state": {"en": "state GB", "zh": "模型状态 GB"},
    "memory.frontier.total": {"en": "total GB", "zh": "合计 GB"},
    "memory.frontier.messages": {"en": "messages", "zh": "消息数"},
    "memory.frontier.fits": {"en": "fits", "zh": "放得下"},
})

#: One gigabyte as ZeRO and GPU vendors write memory sizes (10^9 bytes), and one gibibyte (2^30).
GB = 10**9
GiB = 2**30


@dataclass(frozen=True)
class Precision:
    """Bytes per parameter of the model state: ``weights`` + ``grads`` + ``optimizer`` (whole bytes >= 0, total > 0).

    Checked when built: a negative or fractional byte count is refused.
    """

    name: str
    weights: int
    grads: int
    optimizer: int
    source: str

    def __post_init__(self) -> None:
        check_str("name", self.name)
        check_str("source", self.source, empty=True)
        for key in ("weights", "grads", "optimizer"):
            check_int(key, getattr(self, key), minimum=0)
        if self.weights + self.grads + self.optimizer == 0:
            raise ValueError("a Precision needs at least one byte per parameter (weights + grads + optimizer > 0)")

    @property
    def total(self) -> int:
        """Bytes per parameter without sharding (16 for mixed-precision Adam)."""
        return self.weights + self.grads + self.optimizer


#: Model-state precisions (see the module docstring); ``"mixed"`` is ``"bf16-grads"``.
PRECISIONS: dict[str, Precision] = {
    "bf16-grads": Precision(
        "mixed-precision Adam: 16-bit weights and gradients, fp32 master weights, momentum and variance",
        2, 2, 12, "Rajbhandari et al., ZeRO (SC 2020), §3.1: (2 + 2 + K) bytes per parameter, K = 12"),
    "fp32-grads": Precision(
        "16-bit weights, fp32 gradient accumulation, fp32 master weights, momentum and variance",
        2, 4, 12, "Megatron-LM, megatron/training/theoretical_memory_usage.py: 18 bytes per parameter"),
}
PRECISIONS["mixed"] = PRECISIONS["bf16-grads"]
#: The catalogue key of each built-in precision's name (a custom Precision shows its own name).
_PRECISION_KEYS = {PRECISIONS["bf16-grads"].name: "memory.precision.bf16_grads",
                   PRECISIONS["fp32-grads"].name: "memory.precision.fp32_grads"}


def _precision(precision: str | Precision) -> Precision:
    if isinstance(precision, Precision):
        return precision
    if not isinstance(precision, str):
        raise TypeError(f"precision must be one of {sorted(PRECISIONS)} or a Precision, got {precision!r} of type "
                        f"{type(precision).__name__}")
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)} or a Precision, got {precision!r}")
    return PRECISIONS[precision]


#: The options of :func:`memory_per_rank` beyond the schedule and the model (``fits``, ``frontier``
#: and the planner's ``memory_options`` take them by name).
MEMORY_OPTIONS: tuple[str, ...] = ("precision", "activations", "tp", "sequence_parallel", "recompute", "flash",
                                   "dropout", "dp", "zero", "w_held", "layout")


def check_options(model: Model, options: dict[str, Any], *, where: str = "memory_per_rank") -> dict[str, Any]:
    """Check :func:`memory_per_rank`'s options for ``model`` before any schedule is built; return them.

    Unknown names are a ``TypeError`` listing :data:`MEMORY_OPTIONS`; a bad value a ``TypeError`` /
    ``ValueError`` naming it (``precision``, ``tp`` that must divide the heads, ``dp``, ``zero``, ...).
    ``layout`` is checked against the schedule later (it depends on the stage count). Used by the
    planner (``memory_options``) and :func:`frontier`.
    """
    if not isinstance(options, dict):
        raise TypeError(f"{where}'s memory options must be a dict of {', '.join(MEMORY_OPTIONS)}, got {options!r}")
    check_keywords(where, options, MEMORY_OPTIONS)
    if "precision" in options:
        _precision(options["precision"])
    tp = check_int("tp", options.get("tp", 1), minimum=1)
    _check_tp(model, tp)
    for key in ("sequence_parallel", "flash", "dropout"):
        if key in options:
            check_bool(key, options[key])
    check_choice("activations", options.get("activations", "formula"), ("formula", "h200"))
    check_choice("recompute", options.get("recompute", "none"), ("none", "selective", "full"))
    check_int("dp", options.get("dp", 1), minimum=1)
    check_int("zero", options.get("zero", 0), minimum=0, maximum=3)
    wh = check_number("w_held", options.get("w_held", 1), minimum=0)
    if wh > 1:
        raise ValueError(f"w_held must be between 0 and 1 (a fraction of the activations), got {wh!r}")
    if options.get("layout") is not None:
        check_sequence("layout", options["layout"])
    return options


def _check_tp(model: Model, tp: int) -> None:
    """Tensor parallelism splits the attention heads and the widths: ``tp`` must divide them."""
    for what, size in (("heads", model.heads), ("hidden", model.hidden), ("ffn", model.ffn or 4 * model.hidden)):
        if size % tp:
            raise ValueError(f"tp={tp} must divide the model's {what} ({size}): tensor parallelism gives each GPU "
                             f"{what}/tp of them (a whole number)")


def model_state_bytes(params: Number, precision: str | Precision = "bf16-grads", *, dp: int = 1,
                      zero: int = 0) -> dict[str, float]:
    """Bytes of weights, gradients and optimizer state for ``params`` parameters on one device.

    ``zero`` = 0 keeps everything on every replica; 1 shards the optimizer state over ``dp``
    replicas, 2 also the gradients, 3 also the weights (ZeRO's P_os, P_os+g, P_os+g+p). ZeRO's
    Figure 1 (7.5B parameters, N_d = 64, K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per device.

    Used in lesson 07.
    """
    n = float(check_number("params", params, minimum=0))
    dp = check_int("dp", dp, minimum=1)
    zero = check_int("zero", zero, minimum=0, maximum=3)
    prec = _precision(precision)
    return {
        "weights": n * prec.weights / (dp if zero >= 3 else 1),
        "grads": n * prec.grads / (dp if zero >= 2 else 1),
        "optimizer": n * prec.optimizer / (dp if zero >= 1 else 1),
    }


@dataclass(frozen=True)
class Model:
    """A GPT-style transformer: the sizes the memory model needs.

    Attributes:
        layers: transformer layers in the whole model.
        hidden: model width ``h``.
        heads: attention heads ``a``.
        seq: sequence length ``s`` (tokens per sample).
        micro_batch: samples per microbatch ``b``.
        ffn: MLP width (default ``4 * hidden``).
        vocab: vocabulary size; when > 0 the input embedding sits on the first stage and an
            untied output layer on the last (``vocab * hidden`` parameters each). Default 0:
            transformer layers only.
        name: a label.

    Used in lesson 07.
    """

    layers: int
    hidden: int
    heads: int
    seq: int
    micro_batch: int = 1
    ffn: int | None = None
    vocab: int = 0
    name: str = "model"

    def __post_init__(self) -> None:
        for key in ("layers", "hidden", "heads", "seq", "micro_batch"):
            check_int(key, getattr(self, key), minimum=1)
        if self.ffn is not None:
            check_int("ffn", self.ffn, minimum=1)
        check_int("vocab", self.vocab, minimum=0)
        if self.hidden % self.heads:
            raise ValueError(f"heads={self.heads} must divide hidden={self.hidden} (each head has hidden/heads "
                             f"dimensions)")

    @property
    def params_per_layer(self) -> int:
        """``4h^2 + 4h`` (attention) + ``2 h ffn + ffn + h`` (MLP) + ``4h`` (two LayerNorms): ``12h^2 + 13h`` at ffn = 4h."""
        h = self.hidden
        ffn = self.ffn or 4 * h
        return 4 * h * h + 4 * h + 2 * h * ffn + ffn + h + 4 * h

    @property
    def params(self) -> int:
        """All parameters: the layers plus the embedding and the output layer (``vocab > 0``)."""
        return self.layers * self.params_per_layer + 2 * self.vocab * self.hidden


def activation_bytes_per_layer(
    model: Model,
    *,
    source: str = "formula",
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash: bool = True,
    dropout: bool = False,
) -> float:
    """Bytes one microbatch leaves on one transformer layer between its forward and its backward.

    ``source="formula"`` (default): Korthikanti et al., "Reducing Activation Recomputation in
    Large Transformer Models" (MLSys 2023, arXiv 2205.05198), Table 2, 16-bit activations::

        s b h (10 + 24/t) + 5 a s^2 b / t      tensor parallel (t = tp)
        s b h (34 / t) + 5 a s^2 b / t         tensor + sequence parallel
        2 s b h (/ t with sequence parallel)  full recomputation

    with two adjustments: ``flash=True`` drops the ``5 a s^2 b`` attention-score term (flash
    attention / SDPA recompute it, as selective recomputation does), and ``dropout=False`` drops
    the two dropout masks (``s b h`` each), leaving ``32 s b h`` at ``t = 1``. That is the course's
    H200 measurement (``bubblekit/data/h200_layer_costs.json``: 32.04 s b h) within 0.2 %.

    ``source="h200"``: the measured bytes of that table (its configurations only, ``tp = 1``, no
    recomputation), times the micro-batch size.

    Args:
        model: the sizes (``seq``, ``micro_batch``, ``hidden``, ``heads``).
        source: ``"formula"`` or ``"h200"``.
        tp: tensor-parallel degree ``t``.
        sequence_parallel: Megatron's sequence parallelism (splits the rest by ``t`` too).
        recompute: ``"none"``, ``"selective"`` (attention core recomputed: no score term) or
            ``"full"`` (only each layer's input kept).
        flash: flash attention (no stored score matrix).
        dropout: dropout on (its masks are stored).

    Used in lesson 07.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be a bubblekit.memory.Model, got {type(model).__name__}")
    tp = check_int("tp", tp, minimum=1)
    _check_tp(model, tp)
    sequence_parallel = check_bool("sequence_parallel", sequence_parallel)
    flash = check_bool("flash", flash)
    dropout = check_bool("dropout", dropout)
    if recompute not in ("none", "selective", "full"):
        raise ValueError(f"recompute must be 'none', 'selective' or 'full', got {recompute!r}")
    s, b, h, a = model.seq, model.micro_batch, model.hidden, model.heads
    if source == "h200":
        if tp != 1 or recompute != "none" or sequence_parallel:
            raise ValueError("source='h200' is the measured single-GPU layer (tp=1, no recomputation); "
                             "use source='formula' for tensor parallelism or recomputation")
        return float(_measured_layer_bytes(h, s)) * b
    if source != "formula":
        raise ValueError(f"source must be 'formula' (Korthikanti et al.) or 'h200' (measured), got {source!r}")
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh / (tp if sequence_parallel else 1)
    unsplit, split = (10.0 if dropout else 8.0), 24.0
    body = sbh * (unsplit + split) / tp if sequence_parallel else sbh * (unsplit + split / tp)
    scores = 0.0 if (flash or recompute == "selective") else (5.0 if dropout else 4.0) * a * s * s * b / tp
    return body + scores


def _measured_layer_bytes(hidden: int, seq: int) -> int:
    path = Path(__file__).resolve().parent / "data" / "h200_layer_costs.json"
    configs = json.loads(path.read_text(encoding="utf-8"))["configs"]
    for c in configs:
        if c["hidden"] == hidden and c["seq"] == seq:
            return int(c["layer"]["activation_bytes_per_microbatch"])
    avail = sorted((c["hidden"], c["seq"]) for c in configs)
    raise ValueError(f"no measured H200 layer with hidden={hidden}, seq={seq}; measured (hidden, seq): {avail}")


def stage_layers(schedule: Schedule, layers: int, layout: Sequence[int] | None = None) -> tuple[int, ...]:
    """Layers of each model stage: ``layout`` if given, else ``layers`` split evenly.

    A schedule with ``pipes`` pipelines (DualPipe) has ``n_stages / pipes`` model stages; every
    pipeline runs the same model stages (each a copy).
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    layers = check_int("layers", layers, minimum=1)
    n = schedule.n_stages // schedule.pipes
    if layout is not None:
        if isinstance(layout, (str, bytes)):
            raise TypeError(f"layout must be a sequence of layer counts, one per model stage, got {layout!r}")
        out = tuple(check_int(f"layout[{k}]", x, minimum=0) for k, x in enumerate(check_sequence("layout", layout)))
        if len(out) != n or sum(out) != layers:
            raise ValueError(f"layout must give {n} stages whose layers sum to {layers}, got {list(out)}")
        return out
    if layers % n:
        raise ValueError(f"{layers} layers do not split evenly into {n} stages; pass layout=[...] (one count per stage)")
    return (layers // n,) * n


@dataclass(frozen=True)
class RankMemory:
    """One rank's memory, bytes. ``peak_activations`` is the schedule's peak in microbatch activations."""

    rank: int
    layers: int
    params: float
    weights: float
    grads: float
    optimizer: float
    activations: float
    peak_activations: float

    @property
    def state(self) -> float:
        """Weights + gradients + optimizer state, bytes."""
        return self.weights + self.grads + self.optimizer

    @property
    def total(self) -> float:
        """Everything counted, bytes."""
        return self.state + self.activations


@dataclass(frozen=True)
class MemoryReport:
    """Per-rank memory of one schedule and model, and whether it fits ``gpu_memory``.

    ``fits`` is ``None`` when no GPU size was given. It renders as its :meth:`table`.
    """

    schedule: str
    ranks: tuple[RankMemory, ...]
    precision: Precision
    gpu_memory: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def max_total(self) -> float:
        """The largest rank total, bytes: what must fit."""
        return max(r.total for r in self.ranks)

    @property
    def worst_rank(self) -> int:
        """The rank with the largest total."""
        return max(self.ranks, key=lambda r: (r.total, -r.rank)).rank

    @property
    def fits(self) -> bool | None:
        """``max_total <= gpu_memory`` (``None`` without a GPU size)."""
        return None if self.gpu_memory is None else self.max_total <= self.gpu_memory

    def table(self, unit: str = "GB") -> Table:
        """A readable breakdown, one row per rank (``unit`` ``"GB"`` = 10^9 bytes or ``"GiB"``)."""
        if unit not in ("GB", "GiB"):
            raise ValueError(f"unit must be 'GB' or 'GiB', got {unit!r}")
        k = GB if unit == "GB" else GiB
        rows = [{"rank": r.rank, "layers": r.layers, "weights": r.weights / k, "grads": r.grads / k,
                 "optimizer": r.optimizer / k, "activations": r.activations / k,
                 "peak (microbatches)": r.peak_activations, "total": r.total / k} for r in self.ranks]
        verdict = ""
        if self.gpu_memory is not None:
            verdict = tr("memory.fits" if self.fits else "memory.does_not_fit", gpu=self.gpu_memory / k, unit=unit,
                         rank=self.worst_rank, largest=self.max_total / k)
        headers = {c: tr(f"memory.rank.{c}", unit=unit) for c in ("weights", "grads", "optimizer", "activations", "total")}
        headers.update({"layers": tr("memory.rank.layers"), "peak (microbatches)": tr("memory.rank.peak")})
        return Table(
            rows, formats={c: "float2" for c in ("weights", "grads", "optimizer", "activations", "total")},
            headers=headers,
            title=tr("memory.title", schedule=self.schedule, verdict=verdict),
            note=tr("memory.state_note", precision=tr(_PRECISION_KEYS[self.precision.name]) if self.precision.name in _PRECISION_KEYS
                    else self.precision.name, bytes=self.precision.total,
                    notes=("；" if get_language() == "zh" else "; ").join(self.notes)),
        )

    def __str__(self) -> str:
        return str(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()  # type: ignore[no-any-return]


def memory_per_rank(
    schedule: Schedule,
    model: Model,
    *,
    precision: str | Precision = "bf16-grads",
    activations: str = "formula",
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    flash: bool = True,
    dropout: bool = False,
    dp: int = 1,
    zero: int = 0,
    w_held: Number = 1,
    layout: Sequence[int] | None = None,
    gpu_memory: Number | None = None,
) -> MemoryReport:
    """Bytes per rank of ``schedule`` training ``model``: state, activations, total.

    Args:
        schedule: the pipeline schedule (its placement decides which stages each rank holds; its
            order decides the activation peak, computed by :func:`bubblekit.simulate`).
        model: sizes (:class:`Model`).
        precision: ``"bf16-grads"`` (16 B/parameter, default), ``"fp32-grads"`` (18) or a
            :class:`Precision`.
        activations: ``"formula"`` (Korthikanti, :func:`activation_bytes_per_layer`) or ``"h200"``.
        tp, sequence_parallel, recompute, flash, dropout: see :func:`activation_bytes_per_layer`
            (``tp`` also divides the parameters).
        dp, zero: data-parallel replicas and ZeRO stage (:func:`model_state_bytes`).
        w_held: share of a microbatch's activations held from ``I`` until ``W`` (1: all).
        layout: layers per model stage (default: an even split).
        gpu_memory: bytes available per GPU (e.g. ``80 * GB``), for the verdict.

    Used in lesson 07 and by the planner.
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a bubblekit Schedule, got {type(schedule).__name__}")
    if not isinstance(model, Model):
        raise TypeError(f"model must be a bubblekit.memory.Model, got {type(model).__name__}")
    check_options(model, {"precision": precision, "activations": activations, "tp": tp,
                          "sequence_parallel": sequence_parallel, "recompute": recompute, "flash": flash,
                          "dropout": dropout, "dp": dp, "zero": zero, "w_held": w_held, "layout": layout})
    prec = _precision(precision)
    tp = check_int("tp", tp, minimum=1)
    per_layer = activation_bytes_per_layer(model, source=activations, tp=tp, sequence_parallel=sequence_parallel,
                                           recompute=recompute, flash=flash, dropout=dropout)
    per_model_stage = stage_layers(schedule, model.layers, layout)
    n_model = len(per_model_stage)
    stage_of = [s % n_model for s in range(schedule.n_stages)]
    act = tuple(per_model_stage[k] * per_layer for k in stage_of)
    res = simulate(schedule, Costs(f=1, b=2, activation=act, w_held=w_held))  # the order decides the peak
    unit_res = simulate(schedule, Costs(f=1, b=2, w_held=w_held))
    embed = model.vocab * model.hidden
    ranks = []
    for r in range(schedule.p):
        stages = schedule.stages_of(r)
        layers = sum(per_model_stage[stage_of[s]] for s in stages)
        count = layers * model.params_per_layer
        count += sum(embed * ((stage_of[s] == 0) + (stage_of[s] == n_model - 1)) for s in stages)
        params = count / tp
        st = model_state_bytes(params, prec, dp=dp, zero=zero)
        ranks.append(RankMemory(r, layers, params, st["weights"], st["grads"], st["optimizer"],
                                float(res.peak_activations[r]), float(unit_res.peak_activations[r])))
    notes = [tr("memory.note.activations", mib=per_layer / 2**20,
                source=tr("memory.note.h200" if activations == "h200" else "memory.note.korthikanti"),
                options=f"{', tp=' + str(tp) if tp > 1 else ''}{', recompute=' + recompute if recompute != 'none' else ''}"),
             tr("memory.note.not_counted")]
    if schedule.pipes > 1:
        notes.append(tr("memory.note.copies", pipes=schedule.pipes))
    if dp > 1 and zero:
        notes.append(tr("memory.note.zero", zero=zero, dp=dp))
    gpu = None if gpu_memory is None else float(check_number("gpu_memory", gpu_memory, minimum=0, allow_equal=False))
    return MemoryReport(schedule.name, tuple(ranks), prec, gpu, tuple(notes))


def fits(schedule: Schedule, model: Model, gpu_memory: Number, **options: Any) -> MemoryReport:
    """Whether ``schedule`` training ``model`` fits ``gpu_memory`` bytes on every rank.

    Returns the :class:`MemoryReport` (``.fits``, ``.max_total``, ``.worst_rank``, and a
    readable per-rank breakdown when displayed); ``options`` are those of
    :func:`memory_per_rank`. Example: ``fits(bk.schedule("dualpipe", 8, 16), model, 80 * GB)``.

    Used in lesson 07.
    """
    check_keywords("fits", options, MEMORY_OPTIONS)
    return memory_per_rank(schedule, model, gpu_memory=gpu_memory, **options)


# ----------------------------------------------------------------------------- the frontier
#: The schedules of lesson 07's frontier, with their chunks per rank (``None``: the registry's).
FRONTIER_SCHEDULES: tuple[tuple[str, int | None], ...] = (
    ("1f1b", None), ("interleaved", 2), ("zb-h1", None), ("zb-h2", None), ("zbv", None),
    ("v-half", None), ("v-min", None), ("dualpipe", None), ("dualpipev", None),
)
_BASES = ("devices", "stages")


def frontier(
    model: Model,
    n: int,
    m: int,
    *,
    basis: str = "devices",
    costs: Costs | None = None,
    schedules: Sequence[tuple[str, int | None]] = FRONTIER_SCHEDULES,
    gpu_memory: Number | None = None,
    **options: Any,
) -> Table:
    """Bubble against memory per device for several schedules, on a stated like-for-like basis.

    Args:
        model: the model every schedule trains (:class:`Model`).
        n: with ``basis="devices"`` the number of devices every schedule runs on (the model is cut
            into as many stages as each schedule needs: ``n``, or ``2n`` for interleaving with
            v = 2 and the V shapes; DualPipe cuts it into ``n`` and keeps two copies); with
            ``basis="stages"`` the number of model stages PP every schedule runs (one-chunk
            schedules and DualPipe on PP devices, two-chunk ones on PP/2, ``v`` chunks on PP/v):
            the DualPipe README's basis. Every row then has the same ``stages``: a schedule that
            cannot cut PP stages into whole devices (a two-chunk one with PP odd) is refused
            with a ``ValueError``, never run on a different stage count.
        m: microbatches per step (the same for all).
        basis: ``"devices"`` or ``"stages"``.
        costs: the cost model: a rank's share of one microbatch when the model is cut into ``n``
            stages (``Costs`` scalars). Default: the measured H200 layer times ``layers / n`` when the
            model's (hidden, seq) was measured (``bubblekit.h200_costs``), else ``Costs()``. With
            ``basis="stages"`` a schedule on PP/2 devices gets twice the work per device.
        schedules: ``(name, v)`` pairs; default :data:`FRONTIER_SCHEDULES`.
        gpu_memory: bytes per GPU for the ``fits`` column (optional).
        options: memory options of :func:`memory_per_rank` (``precision``, ``tp``, ...).

    Returns a :class:`~bubblekit.text.Table`, one row per schedule: ``schedule``, ``devices``,
    ``stages`` (model stages, i.e. per copy), ``bubble_ratio`` (idle / (devices x makespan)),
    ``time_per_microbatch`` (makespan / m, the costs' unit), ``activations``, ``state`` and ``total``
    (GB per device, the largest rank), ``messages`` (cross-device messages per step), ``fits``.
    Schedules that cannot run this configuration are left out (a note says which).

    Used in lesson 07.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be a bubblekit.memory.Model, got {type(model).__name__}")
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=1)
    if basis not in _BASES:
        raise ValueError(f"basis must be one of {_BASES}, got {basis!r}")
    from bubblekit.costs import h200_costs
    from bubblekit.schedules import schedule, spec

    if costs is None:
        try:
            costs = h200_costs(model.hidden, model.seq, layers_per_rank=model.layers / n)
        except ValueError:
            costs = Costs()
    base = costs
    if not isinstance(base, Costs):
        raise TypeError(f"costs must be a bubblekit Costs, got {type(base).__name__}")
    rows: list[dict[str, Any]] = []
    left_out: list[str] = []
    check_options(model, options, where="frontier")
    if gpu_memory is not None:
        check_number("gpu_memory", gpu_memory, minimum=0, allow_equal=False)
    pairs = check_sequence("schedules", schedules)
    plan: list[tuple[Any, int | None, int]] = []
    for k, item in enumerate(pairs):
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"schedules[{k}] must be a (name, v) pair such as ('1f1b', None), got {item!r}")
        name, v = item
        entry = spec(name)
        chunks = entry.resolve_v(v if entry.chunks == "many" else None)  # a bad v is an error, not a left-out row
        per_device = 1 if entry.name == "dualpipe" else chunks  # model stages per device (DualPipe: two copies of one)
        if basis == "stages" and n % per_device:
            raise ValueError(
                f"basis='stages' with n={n} model stages cannot run {entry.display_name} (v={chunks}): it holds "
                f"{per_device} stages per device, so n must be a multiple of {per_device}; schedules of different "
                f"stage counts are not compared (choose n even, or basis='devices')"
            )
        plan.append((entry, v, n if basis == "devices" else n // per_device))
    for entry, v, devices in plan:
        name = entry.name
        try:
            sched = schedule(name, devices, m, v if entry.chunks == "many" else None)
            c = base if devices == n else _scaled(base, n // devices)  # n // devices: stages per device
            res = simulate(sched, c)
            rep = memory_per_rank(sched, model, gpu_memory=gpu_memory, **options)
        except ValueError as err:
            left_out.append(f"{entry.display_name} ({str(err).split(':')[0]})")
            continue
        worst = max(rep.ranks, key=lambda r: r.total)
        rows.append({
            "schedule": entry.display_name + (f" v={sched.v}" if entry.chunks == "many" else ""),
            "devices": devices, "stages": sched.n_stages // sched.pipes,
            "bubble_ratio": res.bubble_ratio, "time_per_microbatch": float(res.makespan) / m,
            "activations": worst.activations / GB, "state": worst.state / GB, "total": worst.total / GB,
            "messages": sched.hops_per_step, "fits": rep.fits,
        })
    what = tr("memory.frontier.devices" if basis == "devices" else "memory.frontier.stages", n=n)
    note = tr("memory.frontier.note", what=what, m=m, costs=base.describe())
    if left_out:
        note += tr("memory.frontier.left_out", names=", ".join(left_out))
    return Table(rows, ["schedule", "devices", "stages", "bubble_ratio", "time_per_microbatch", "activations",
                        "state", "total", "messages", "fits"],
                 formats={"bubble_ratio": "percent", "time_per_microbatch": "float2", "activations": "float1",
                          "state": "float1", "total": "float1"},
                 headers={"schedule": tr("memory.frontier.schedule"), "devices": tr("memory.frontier.devices_col"),
                          "stages": tr("memory.frontier.stages_col"),
                          "time_per_microbatch": tr("memory.frontier.time",
                                                          unit=tr("memory.frontier.slot") if base.unit == "slot" else base.unit),
                          "activations": tr("memory.frontier.activations"), "state": tr("memory.frontier.state"),
                          "total": tr("memory.frontier.total"), "messages": tr("memory.frontier.messages"),
                          "fits": tr("memory.frontier.fits")},
                 title=tr("memory.frontier.title", what=what), note=note)


def _scaled(costs: Costs, k: int) -> Costs:
    """The same costs with each rank's share ``k`` times larger (a schedule on ``1/k`` of the devices)."""
    def scale(x: Any) -> Any:
        return tuple(e * k for e in x) if isinstance(x, tuple) else x * k

    fb = costs.fb * k if isinstance(costs.fb, (int, float)) and not isinstance(costs.fb, bool) else costs.fb
    return costs.with_(f=scale(costs.f), b=scale(costs.b), i=scale(costs.i), w=scale(costs.w), fb=fb)
