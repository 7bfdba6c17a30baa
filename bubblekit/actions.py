"""Pipeline actions in PyTorch's notation: ``{stage}{kind}{microbatch}``, e.g. ``0F3``.

Kinds:

* ``F`` forward;
* ``B`` full backward (input and weight gradients together);
* ``I`` input-gradient backward only (PyTorch's ``I``; the zero-bubble paper calls it ``B``);
* ``W`` weight-gradient backward only.

A *stage* is a slice of the model (0 is the first layers); with ``v`` chunks per rank
there are ``p * v`` stages and a placement maps each stage to a rank.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["Action", "KINDS", "parse_action", "inputs"]

#: The four compute kinds, in PyTorch's notation.
KINDS: tuple[str, ...] = ("F", "B", "I", "W")

_ACTION_RE = re.compile(r"^\s*(\d+)\s*([FBIW])\s*(\d+)\s*$")


class Action(NamedTuple):
    """One unit of work: ``kind`` of ``microbatch`` through ``stage``.

    ``str(Action(0, "F", 3)) == "0F3"``, PyTorch's ``_Action`` text form.
    """

    stage: int
    kind: str
    microbatch: int

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.microbatch}"

    def __repr__(self) -> str:
        return f"Action({self})"


def parse_action(text: str) -> Action:
    """Parse ``"0F3"`` (stage 0, forward, microbatch 3) into an :class:`Action`.

    Raises ``ValueError`` naming the text when it is not ``<stage><F|B|I|W><microbatch>``.
    """
    if not isinstance(text, str):
        raise TypeError(f"action must be a string like '0F3', got {text!r}")
    match = _ACTION_RE.match(text)
    if match is None:
        raise ValueError(
            f"cannot read action {text!r}: expected <stage><kind><microbatch> with kind one "
            f"of F, B, I, W, e.g. '0F3' (stage 0, forward, microbatch 3)"
        )
    return Action(int(match.group(1)), match.group(2), int(match.group(3)))


def inputs(action: Action, n_stages: int, exists: Callable[[Action], bool] | None = None) -> list[Action]:
    """The actions whose results ``action`` waits for: **the pipeline's dependency rule**.

    For stage ``s`` (of ``n_stages``) and microbatch ``i``:

    * ``sFi`` needs ``(s-1)Fi``, the activation from the previous stage (nothing for ``s = 0``);
    * ``sBi`` and ``sIi`` need ``sFi`` (this stage's own forward) and the gradient from the
      next stage, made by ``(s+1)Bi`` or ``(s+1)Ii`` (nothing more for the last stage);
    * ``sWi`` needs ``sIi`` (the weight gradient uses what the input-gradient pass left).

    ``exists(a)`` says whether an action is in the schedule; it picks ``(s+1)Ii`` over
    ``(s+1)Bi`` when the next stage splits its backward. Without it, ``B`` is assumed.
    The simulator, the trace reader's clock alignment, plotting and calibration all use
    this one rule (lessons 02 and 04 explain it).
    """
    s, k, mb = action
    if k == "F":
        return [Action(s - 1, "F", mb)] if s > 0 else []
    if k == "W":
        return [Action(s, "I", mb)]
    needed = [Action(s, "F", mb)]
    if s < n_stages - 1:
        next_b, next_i = Action(s + 1, "B", mb), Action(s + 1, "I", mb)
        split_next = exists is not None and exists(next_i) and not exists(next_b)
        needed.append(next_i if split_next else next_b)
    return needed
