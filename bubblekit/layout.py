"""Megatron-Core's pipeline layouts: which layers (embedding, transformer, MTP, loss) each stage holds.

Megatron places a model on the pipeline in two ways, both ported here:

* a **layout string**, ``--pipeline-model-parallel-layout`` (Megatron-Core's
  ``PipelineParallelLayerLayout``): ``"Et*3|t*4|t*4|t*3L"`` is four stages, the first holding the
  embedding and three transformer layers, the last three transformer layers and the loss.
  ``E`` embedding, ``t`` transformer layer, ``m`` multi-token-prediction layer, ``L`` loss; ``|``
  separates stages; ``x*n`` and ``(...)*n`` repeat; commas are cosmetic. With ``v`` chunks per
  rank the string lists ``p * v`` stages in layer order, stage ``s`` on rank ``s mod p``;
* an **even split** (:func:`megatron_split`): ``num_layers`` over ``p * v`` stages, with
  ``account_for_embedding_in_pipeline_split`` / ``account_for_loss_in_pipeline_split`` (the
  embedding or the loss counts as one layer of the first or last stage) or
  ``num_layers_in_first_pipeline_stage`` / ``..._last_...`` (uneven first and last stages;
  ``TransformerConfig`` fields, set on the command line by ``--decoder-first-pipeline-num-layers`` /
  ``--decoder-last-pipeline-num-layers``, ``megatron/training/arguments.py`` and
  ``megatron/training/argument_utils.py``).

A :class:`PipelineLayout` turns per-layer times into per-stage :class:`~bubblekit.costs.Costs`
(:meth:`PipelineLayout.costs`), which every schedule of the course simulates. Pure Python. Used in
lesson 05 (the deep dive on Megatron's layout string: the embedding and the loss on stages, an uneven
first and last stage) and its exercise 05.8, and in the interview bank's 10.46; lesson 02 (section 4, load
imbalance) names Megatron's layout option and its ``Et*3|…`` form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bubblekit._validate import Number, check_int, check_number
from bubblekit.costs import Costs

__all__ = ["PipelineLayout", "parse_layout", "megatron_split", "LAYER_KINDS", "MAX_LAYOUT_LAYERS"]

#: The layer characters of a layout string, as Megatron-Core reads them.
LAYER_KINDS = {"E": "embedding", "t": "transformer layer", "m": "MTP layer", "L": "loss"}

#: The most layers (characters, after unrolling) a layout may hold: checked before anything is built.
MAX_LAYOUT_LAYERS = 100_000

_GROUP = re.compile(r"\(([^()]+)\)\*(\d+)")
_SINGLE = re.compile(r"(.)\*(\d+)")


@dataclass(frozen=True)
class PipelineLayout:
    """Which layers each stage holds: ``stages[s]`` is a string of layer characters (``"Ettt"``).

    Attributes:
        stages: one string per stage, in layer order (``p * v`` of them; stage ``s`` on rank ``s mod p``).
        p: ranks.
        v: chunks (stages) per rank.
        text: the layout string it was read from (or made as).
    """

    stages: tuple[str, ...]
    p: int
    v: int
    text: str

    def count(self, kind: str) -> tuple[int, ...]:
        """How many layers of ``kind`` (``"t"``, ``"E"``, ``"m"``, ``"L"``) each stage holds."""
        if kind not in LAYER_KINDS:
            raise ValueError(f"kind must be one of {sorted(LAYER_KINDS)}, got {kind!r}")
        return tuple(stage.count(kind) for stage in self.stages)

    @property
    def transformer_layers(self) -> int:
        """Transformer layers in the whole model (``t``)."""
        return sum(self.count("t"))

    def costs(self, layer_f: Number, layer_b: Number | None = None, *, embedding: tuple[Number, Number] = (0, 0),
              loss: tuple[Number, Number] = (0, 0), mtp: tuple[Number, Number] | None = None,
              comm: Number = 0, unit: str = "slot") -> Costs:
        """Per-stage costs: each stage's forward and backward are the sums over its layers.

        Args:
            layer_f, layer_b: one transformer layer's forward and backward time (``layer_b``
                defaults to ``2 * layer_f``), in ``unit``.
            embedding, loss: ``(forward, backward)`` of the embedding and of the loss layer
                (output projection + cross-entropy), default ``(0, 0)``.
            mtp: ``(forward, backward)`` of one MTP layer (default: a transformer layer's).
            comm: latency per hop between ranks.

        Activations are per stage, in microbatch activations: a stage's transformer and MTP
        layers times ``p / transformer_layers`` (an even split gives every rank 1). A stage
        that would do no work is refused (bubblekit's costs need a positive forward).
        """
        f = check_number("layer_f", layer_f, minimum=0, allow_equal=False)
        b = 2 * f if layer_b is None else check_number("layer_b", layer_b, minimum=0, allow_equal=False)
        e_f, e_b = _pair("embedding", embedding)
        l_f, l_b = _pair("loss", loss)
        m_f, m_b = (f, b) if mtp is None else _pair("mtp", mtp)
        per = {"t": (f, b), "E": (e_f, e_b), "L": (l_f, l_b), "m": (m_f, m_b)}
        forwards = [sum(per[c][0] for c in stage) for stage in self.stages]
        backwards = [sum(per[c][1] for c in stage) for stage in self.stages]
        empty = [s for s, x in enumerate(forwards) if x <= 0]
        if empty:
            raise ValueError(f"stage {empty[0]} ({self.stages[empty[0]]!r}) does no work with these costs: every stage "
                             "needs a positive forward (give the embedding or loss a time, or move a layer there)")
        layers = max(1, self.transformer_layers + sum(self.count("m")))
        activation = [(stage.count("t") + stage.count("m")) * self.p / layers for stage in self.stages]
        return Costs(f=forwards, b=backwards, activation=activation, comm=comm, unit=unit,
                     name=f"layout {self.text}")


def _pair(name: str, value: object) -> tuple[Number, Number]:
    if not isinstance(value, tuple) or len(value) != 2:
        raise TypeError(f"{name} must be a (forward, backward) pair of times, got {value!r}")
    return (check_number(f"{name}[0]", value[0], minimum=0), check_number(f"{name}[1]", value[1], minimum=0))


def _unroll(text: str) -> str:
    """Megatron's unrolling of ``(...)*n`` then ``x*n``, refusing more than :data:`MAX_LAYOUT_LAYERS` layers first."""
    for pattern in (_GROUP, _SINGLE):
        size = len(text)
        for match in pattern.finditer(text):
            size += len(match.group(1)) * int(match.group(2)) - len(match.group(0))
        if size > MAX_LAYOUT_LAYERS:
            raise ValueError(f"layout unrolls to {size:,} characters, more than MAX_LAYOUT_LAYERS = "
                             f"{MAX_LAYOUT_LAYERS:,}: write fewer layers")
        text = pattern.sub(lambda x: x.group(1) * int(x.group(2)), text)
    return text


def parse_layout(text: str, p: int) -> PipelineLayout:
    """Read a Megatron layout string for ``p`` ranks (``"Et*3|t*4|t*4|t*3L"``, ``"E|(tt|)*4L"``).

    Megatron-Core's rules (``PipelineParallelLayerLayout``): the number of stages is a multiple
    of ``p`` (``v`` = stages / p); the embedding comes first and the loss last, each exactly once;
    MTP layers come after every transformer layer. Raises ``TypeError``/``ValueError`` naming
    the rule and the offending character or stage.
    """
    if not isinstance(text, str):
        raise TypeError(f"layout must be a str like 'Et*3|t*4|t*4|t*3L', got {text!r}")
    p = check_int("p", p)
    if re.search(r"\([^)]*\(", text):
        raise ValueError(f"layout {text!r}: parentheses cannot nest (Megatron-Core unrolls one level)")
    huge = re.search(r"\*(\d{7,})", text)
    if huge:
        raise ValueError(f"layout {text!r}: the repeat count {huge.group(1)[:12]}... is too large "
                         f"(at most {MAX_LAYOUT_LAYERS:,} layers in all)")
    flat = _unroll(text.replace(",", "").replace(" ", ""))
    stages = tuple(flat.split("|"))
    for k, stage in enumerate(stages):
        bad = [c for c in stage if c not in LAYER_KINDS]
        if bad:
            raise ValueError(f"layout {text!r}: stage {k} has the character {bad[0]!r}; known layer characters: "
                             + ", ".join(f"{c} ({w})" for c, w in LAYER_KINDS.items()))
    if len(stages) % p:
        raise ValueError(f"layout {text!r} has {len(stages)} stages, not a multiple of p = {p} "
                         "(Megatron-Core: the stages are p × v, v chunks per rank)")
    layers = "".join(stages)
    if layers.count("E") != 1 or not layers.startswith("E"):
        raise ValueError(f"layout {text!r}: the embedding 'E' must come first, exactly once")
    if layers.count("L") != 1 or not layers.endswith("L"):
        raise ValueError(f"layout {text!r}: the loss 'L' must come last, exactly once")
    if "m" in layers and "t" in layers[layers.index("m"):]:
        raise ValueError(f"layout {text!r}: MTP layers 'm' must come after every transformer layer 't'")
    return PipelineLayout(stages, p, len(stages) // p, text)


def megatron_split(num_layers: int, p: int, v: int = 1, *, account_for_embedding: bool = False,
                   account_for_loss: bool = False, first: int | None = None,
                   last: int | None = None) -> PipelineLayout:
    """Megatron-Core's split of ``num_layers`` transformer layers over ``p`` ranks and ``v`` chunks each.

    Port of ``get_num_layers_to_build`` (``megatron/core/transformer/transformer_block.py``):

    * by default every stage holds ``num_layers / (p v)`` layers; the embedding rides on the
      first stage and the loss on the last, uncounted;
    * ``account_for_embedding`` (``--account-for-embedding-in-pipeline-split``) and
      ``account_for_loss`` count the embedding / the loss as one layer of the split, so the
      first / last stage builds one transformer layer fewer;
    * ``first`` / ``last`` (command line ``--decoder-first-pipeline-num-layers`` /
      ``--decoder-last-pipeline-num-layers``, ``megatron/training/arguments.py``; the
      ``TransformerConfig`` fields ``num_layers_in_first_pipeline_stage`` /
      ``num_layers_in_last_pipeline_stage``) give the first and last rank that many layers
      (split over its ``v`` chunks) and the rest evenly; they cannot be combined with ``account_for_*`` (Megatron refuses it too).
    """
    num_layers = check_int("num_layers", num_layers)
    p, v = check_int("p", p), check_int("v", v)
    for name, flag in (("account_for_embedding", account_for_embedding), ("account_for_loss", account_for_loss)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, got {flag!r}")
    if num_layers * 1 > MAX_LAYOUT_LAYERS or p * v > MAX_LAYOUT_LAYERS:
        raise ValueError(f"num_layers={num_layers}, p × v = {p * v}: more than MAX_LAYOUT_LAYERS = {MAX_LAYOUT_LAYERS:,}")
    if (first is not None or last is not None) and (account_for_embedding or account_for_loss):
        raise ValueError("first/last cannot be combined with account_for_embedding/account_for_loss "
                         "(Megatron-Core refuses uneven first/last stages with a standalone embedding or loss stage)")
    per_rank = [0] * p
    if first is not None or last is not None:
        rest, ranks_left = num_layers, p
        for name, value in (("first", first), ("last", last)):
            if value is not None:
                rest -= check_int(name, value, minimum=0)
                ranks_left -= 1
        if rest < 0:
            raise ValueError(f"first + last = {num_layers - rest} layers, more than num_layers = {num_layers}")
        if ranks_left > 0 and rest % ranks_left:
            raise ValueError(f"the {rest} layers left for the {ranks_left} middle ranks do not divide evenly "
                             "(Megatron-Core: 'the left over layers must be divisible by left over stages')")
        middle = rest // ranks_left if ranks_left > 0 else 0
        per_rank = [middle] * p
        if first is not None:
            per_rank[0] = first
        if last is not None:
            per_rank[-1] = last
    else:
        counted = num_layers + int(account_for_embedding) + int(account_for_loss)
        if counted % p:
            raise ValueError(f"{counted} layers (num_layers = {num_layers}"
                             + (" + embedding" if account_for_embedding else "") + (" + loss" if account_for_loss else "")
                             + f") do not divide over p = {p} ranks")
        per_rank = [counted // p] * p
    for rank, layers in enumerate(per_rank):
        if layers % v:
            raise ValueError(f"rank {rank} holds {layers} layers, not divisible by v = {v} chunks (Megatron-Core's rule)")
    stages: list[str] = []
    for chunk in range(v):
        for rank in range(p):
            n = per_rank[rank] // v
            first_stage, last_stage = chunk == 0 and rank == 0, chunk == v - 1 and rank == p - 1
            n -= int(account_for_embedding and first_stage) + int(account_for_loss and last_stage)
            if n < 0:
                raise ValueError(f"stage {chunk * p + rank} has no room for a transformer layer once the "
                                 f"{'embedding' if first_stage else 'loss'} is counted: use more layers or fewer stages")
            stages.append(("E" if first_stage else "") + "t" * n + ("L" if last_stage else ""))
    if sum(s.count("t") for s in stages) != num_layers:  # pragma: no cover - the rules above keep it
        raise AssertionError("layer count lost in the split")
    return PipelineLayout(tuple(stages), p, v, "|".join(stages))
