"""A small transformer-like model cut into pipeline stages (imports torch).

Each stage is ``layers`` pre-norm blocks: single-head self-attention (``scaled_dot_product_attention``)
followed by a two-layer MLP (``hidden -> 4 hidden -> hidden``), each with a residual. Inputs
and outputs are float tensors of shape ``(microbatch, seq, hidden)``, so every stage has
the same input and output shape and the loss is a mean squared error against a random
target. Sizes: ``hidden`` features, ``seq`` tokens, ``layers`` blocks per stage.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["Block", "make_stage_module", "flops_per_block"]


class Block(nn.Module):
    """Pre-norm attention + MLP block on ``(batch, seq, hidden)`` float tensors."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, 4 * hidden)
        self.down = nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def make_stage_module(stage: int, hidden: int, layers: int) -> nn.Module:
    """The module of pipeline ``stage``: ``layers`` blocks, seeded by the stage index.

    Seeding by stage makes every run build the same weights whatever the rank layout.
    """
    torch.manual_seed(1000 + stage)
    return nn.Sequential(*[Block(hidden) for _ in range(layers)])


def flops_per_block(batch: int, seq: int, hidden: int) -> int:
    """Approximate forward FLOPs of one :class:`Block` on ``batch x seq`` tokens (2 per multiply-add)."""
    tokens = batch * seq
    dense = 2 * tokens * hidden * (3 * hidden + hidden + 8 * hidden)
    attention = 2 * 2 * batch * seq * seq * hidden
    return dense + attention
