"""Pipeline actions in PyTorch's notation, and **the two rules** every engine follows.

An action is ``{stage}{kind}{microbatch}``, e.g. ``0F3``. Kinds:

* ``F`` forward;
* ``B`` full backward (input and weight gradients together);
* ``I`` input-gradient backward only (PyTorch's ``I``; the zero-bubble paper calls it ``B``);
* ``W`` weight-gradient backward only.

A *stage* is a slice of the model (0 is the first layers); with ``v`` chunks per rank
there are ``p * v`` stages and a placement maps each stage to a rank.

The rules, stated once and used by the simulators, plotting, search, calibration and the
trace reader (lessons 02 and 04 explain them):

* **the dependency rule** -- :func:`needs` (the events an action waits for) and
  :func:`produces` (the events it makes when it ends). :func:`inputs` says the same in
  actions: which actions' results an action waits for.
* **the memory rule** -- :func:`memory_delta`: the activations an action allocates when
  it starts and frees when it ends.

Adding a kind of action means changing :data:`KINDS`, these functions and the cost of the
kind in :class:`bubblekit.Costs`; the engines read nothing else (see CONTRIBUTING.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from bubblekit._validate import Number

__all__ = [
    "Action", "Event", "KINDS", "EVENTS", "parse_action",
    "needs", "produces", "producers", "inputs", "memory_delta",
]

#: The four compute kinds, in PyTorch's notation.
KINDS: tuple[str, ...] = ("F", "B", "I", "W")

#: What an action can make for another one to wait on (see :class:`Event`).
EVENTS: tuple[str, ...] = ("activation", "gradient", "i-done")

_ACTION_RE = re.compile(r"^\s*(\d+)\s*([FBIW])\s*(\d+)\s*$")


class Action(NamedTuple):
    """One unit of work: ``kind`` of ``microbatch`` through ``stage``.

    ``str(Action(0, "F", 3)) == "0F3"``, PyTorch's ``_Action`` text form.

    Used in lessons 05 and 07.
    """

    stage: int
    kind: str
    microbatch: int

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.microbatch}"

    def __repr__(self) -> str:
        return f"Action({self})"


class Event(NamedTuple):
    """Something one action makes and another waits for, for one stage and microbatch.

    ``what`` is one of :data:`EVENTS`:

    * ``"activation"``: stage ``stage``'s output for ``microbatch`` (made by its ``F``);
    * ``"gradient"``: the gradient of stage ``stage``'s input, sent back to stage
      ``stage - 1`` (made by its ``B`` or its ``I``);
    * ``"i-done"``: stage ``stage`` has run the input-gradient pass ``I`` (its ``W``
      computes from what ``I`` left).
    """

    what: str
    stage: int
    microbatch: int


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


# --------------------------------------------------------------- the dependency rule
def needs(action: Action, n_stages: int) -> tuple[Event, ...]:
    """The events ``action`` waits for before it can start: **the dependency rule**.

    For stage ``s`` (of ``n_stages``) and microbatch ``i``:

    * ``sFi`` needs the activation of stage ``s-1`` (the previous stage's output);
    * ``sBi`` and ``sIi`` need the activation of stage ``s`` (this stage's own forward)
      and the gradient of stage ``s+1`` (from the next stage's ``B`` or ``I``);
    * ``sWi`` needs ``i-done`` of stage ``s`` (the weight gradient uses what ``I`` left).

    Events of stage ``-1`` (the input data) and of stage ``n_stages`` (the loss
    gradient) are always there, so they are left out: ``0Fi`` and the last stage's
    backward need nothing from another stage.
    """
    s, kind, i = action
    if kind == "F":
        wanted: tuple[Event, ...] = (Event("activation", s - 1, i),)
    elif kind in ("B", "I"):
        wanted = (Event("activation", s, i), Event("gradient", s + 1, i))
    elif kind == "W":
        wanted = (Event("i-done", s, i),)
    else:
        raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")
    if 0 < s < n_stages - 1:
        return wanted
    return tuple(e for e in wanted if 0 <= e.stage < n_stages)  # the first or the last stage


def produces(action: Action) -> tuple[Event, ...]:
    """The events ``action`` makes when it ends (the other half of the dependency rule).

    ``sFi`` makes stage ``s``'s activation; ``sBi`` its input gradient; ``sIi`` its input
    gradient and ``i-done``; ``sWi`` nothing another action waits for.
    """
    s, kind, i = action
    if kind == "F":
        return (Event("activation", s, i),)
    if kind == "B":
        return (Event("gradient", s, i),)
    if kind == "I":
        return (Event("gradient", s, i), Event("i-done", s, i))
    if kind == "W":
        return ()
    raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")


def producers(event: Event) -> tuple[Action, ...]:
    """The actions that could make ``event``, most usual first (found from :func:`produces`).

    ``Event("gradient", 2, 0)`` is made by ``2B0`` or, when stage 2 splits its backward,
    by ``2I0``.
    """
    s, i = event.stage, event.microbatch
    return tuple(a for a in (Action(s, k, i) for k in KINDS) if event in produces(a))


def inputs(action: Action, n_stages: int, exists: Callable[[Action], bool] | None = None) -> list[Action]:
    """The actions whose results ``action`` waits for: :func:`needs`, said in actions.

    ``[(s-1)Fi]`` for ``sFi``; ``[sFi, (s+1)Bi]`` for ``sBi`` and ``sIi``; ``[sIi]`` for
    ``sWi``. ``exists(a)`` says whether an action is in the schedule: it picks ``(s+1)Ii``
    over ``(s+1)Bi`` when the next stage splits its backward. Without it the most usual
    producer (``B``) is assumed. Used by plotting's arrows, calibration and the trace
    reader's clock alignment.
    """
    out = []
    for event in needs(action, n_stages):
        candidates = producers(event)
        found = candidates[0]
        if exists is not None:
            found = next((a for a in candidates if exists(a)), found)
        out.append(found)
    return out


# ------------------------------------------------------------------- the memory rule
def memory_delta(
    action: Action, activation: Number | Sequence[Number] = 1, w_held: Number = 1
) -> tuple[Number, Number]:
    """``(allocated, freed)``: activations ``action`` adds when it starts and frees when it ends.

    **The memory rule**, in microbatch activations (``activation`` is what one microbatch
    leaves on its stage: one number, or one per stage):

    * ``F`` allocates its stage's activations when it starts;
    * ``B`` frees them all when it ends;
    * ``I`` frees ``1 - w_held`` of them when it ends, ``W`` the remaining ``w_held``
      (``w_held`` is the share the weight gradient still needs, 1 by default: the
      zero-bubble paper's M_W / M_B).

    A rank holds the sum of what its started actions allocated minus what its finished
    ones freed (lesson 04 plots it).
    """
    s, kind, _ = action
    x = activation[s] if isinstance(activation, Sequence) else activation
    if kind == "F":
        return x, 0
    if kind == "B":
        return 0, x
    if kind == "I":
        return 0, x * (1 - w_held)
    if kind == "W":
        return 0, x * w_held
    raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")

