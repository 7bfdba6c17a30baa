"""Pipeline actions in PyTorch's notation, and **the two rules** every engine follows.

An action is ``{stage}{kind}{microbatch}``, e.g. ``0F3``. Kinds:

* ``F`` forward;
* ``B`` full backward (input and weight gradients together);
* ``I`` input-gradient backward only (PyTorch's ``I``; the zero-bubble paper calls it ``B``);
* ``W`` weight-gradient backward only;
* ``F&B`` an **overlapped pair** (:class:`Pair`): one forward and one full backward of two
  different (stage, microbatch)s on the same rank, run as ONE unit, as DeepSeek's DualPipe
  runs them (PyTorch's ``OVERLAP_F_B``). Written ``0F7&7B3``; PyTorch's text
  ``(0F7;7B3)OVERLAP_F_B`` reads the same.

A *stage* is a slice of the model (0 is the first layers); with ``v`` chunks per rank
there are ``p * v`` stages and a placement maps each stage to a rank. A schedule may run
``pipes`` independent pipelines over its stages (DualPipe runs two, in opposite
directions): stage ``s`` is then stage ``s mod (n_stages / pipes)`` of pipeline
``s // (n_stages / pipes)``, and the dependency rule stops at each pipeline's ends.

The rules, stated once and used by the simulators, plotting, search, calibration and the
trace reader (lessons 02, 04 and 07 explain them):

* **the dependency rule** -- :func:`needs` (the events an action waits for) and
  :func:`produces` (the events it makes when it ends). :func:`inputs` says the same in
  actions: which actions' results an action waits for. A pair needs what both of its parts
  need before it starts, and makes what both make when it ends.
* **the memory rule** -- :func:`memory_delta`: the activations an action allocates when
  it starts and frees when it ends (a pair: its forward part allocates at the start, its
  backward part frees at the end).

Adding a kind of action means changing :data:`KINDS`, these functions and the cost of the
kind in :class:`bubblekit.Costs`; the engines read nothing else (see CONTRIBUTING.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from bubblekit._validate import Number, check_int, check_number

__all__ = [
    "Action", "Pair", "Event", "KINDS", "SINGLE_KINDS", "PAIR", "EVENTS", "parse_action", "parts",
    "needs", "produces", "producers", "inputs", "memory_delta",
]

#: The kind of an overlapped forward+backward pair (:class:`Pair`).
PAIR = "F&B"

#: The four single compute kinds, in PyTorch's notation.
SINGLE_KINDS: tuple[str, ...] = ("F", "B", "I", "W")

#: Every kind: the four single ones and the overlapped pair ``F&B``.
KINDS: tuple[str, ...] = (*SINGLE_KINDS, PAIR)

#: What an action can make for another one to wait on (see :class:`Event`).
EVENTS: tuple[str, ...] = ("activation", "gradient", "i-done")

#: ASCII digits only: Python's ``\d`` also matches other scripts' digits (Arabic-Indic ``٣``, full-width
#: ``３``), which a schedule text should not contain; they are refused, not read.
_ACTION_RE = re.compile(r"^\s*([0-9]+)\s*([FBIW])\s*([0-9]+)\s*$")
#: ``0F7&7B3`` (bubblekit, DeepSeek's F&B) or ``(0F7;7B3)OVERLAP_F_B`` / ``(0F7;7B3)`` (PyTorch).
_PAIR_RE = re.compile(r"^\s*(?:(?P<a>[^&()]+)&(?P<b>[^&()]+)|\((?P<c>[^;()]+);(?P<d>[^;()]+)\)(?:OVERLAP_F_B)?)\s*$")


class Action(NamedTuple):
    """One unit of work: ``kind`` of ``microbatch`` through ``stage``.

    ``str(Action(0, "F", 3)) == "0F3"``, PyTorch's ``_Action`` text form. An overlapped
    pair is a :class:`Pair` (an ``Action`` of kind ``"F&B"``).

    Used in lessons 05 and 07.
    """

    stage: int
    kind: str
    microbatch: int

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.microbatch}"

    def __repr__(self) -> str:
        return f"Action({self})"


class Pair(Action):
    """An overlapped pair: a forward and a full backward run as ONE unit (kind ``"F&B"``).

    DeepSeek's DualPipe overlaps the forward of one chunk with the backward of another on
    the same rank (``F&B`` in its README; PyTorch's ``OVERLAP_F_B``). As a unit the pair

    * starts only when the inputs of **both** parts are there (the forward's activation and
      the backward's gradient: :func:`needs`);
    * makes the outputs of both parts when it **ends** (:func:`produces`);
    * allocates its forward's activations when it starts and frees its backward's when it
      ends (:func:`memory_delta`);
    * lasts ``Costs.fb`` (``F + B`` by default: no overlap gain; ``"max"``: perfect overlap).

    ``Pair(Action(0, "F", 7), Action(7, "B", 3))`` is written ``0F7&7B3``. As an
    :class:`Action` its ``stage`` and ``microbatch`` are its forward part's (so its rank,
    colour and chunk in pictures are the forward's) and its ``kind`` is ``"F&B"``; its parts
    are :attr:`forward` and :attr:`backward`.

    Raises ``ValueError`` unless ``forward`` is an ``F`` and ``backward`` a full ``B`` of
    another stage or microbatch (the backward of the pair's own forward could never start:
    it needs the activation the pair makes only when it ends).

    Used in lesson 07.
    """

    forward: Action
    backward: Action

    def __new__(cls, forward: Action, backward: Action) -> Pair:  # noqa: D102
        _check_parts(forward, backward)
        self = tuple.__new__(cls, (forward.stage, PAIR, forward.microbatch))
        object.__setattr__(self, "forward", forward)
        object.__setattr__(self, "backward", backward)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Pair is immutable (cannot set {name!r})")

    def __getnewargs__(self) -> tuple[Action, Action]:  # type: ignore[override]
        return (self.forward, self.backward)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Pair, (self.forward, self.backward))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Pair):
            return self.forward == other.forward and self.backward == other.backward
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((PAIR, self.forward, self.backward))

    def _replace(self, **kwargs: Any) -> Pair:  # type: ignore[override]
        raise TypeError("a Pair has no fields to replace: build Pair(forward, backward) anew")

    def __str__(self) -> str:
        return f"{self.forward}&{self.backward}"

    def __repr__(self) -> str:
        return f"Pair({self})"

    def torch_text(self) -> str:
        """PyTorch's text form, ``(0F7;7B3)OVERLAP_F_B`` (``str(a)`` of its ``_Action``)."""
        return f"({self.forward};{self.backward})OVERLAP_F_B"


def _check_parts(forward: Any, backward: Any) -> None:
    """Why ``(forward, backward)`` is not an overlapped pair, as a ``TypeError``/``ValueError``."""
    for name, part in (("forward", forward), ("backward", backward)):
        if not isinstance(part, Action) or isinstance(part, Pair):
            raise TypeError(f"a pair's {name} part must be a single Action (like Action(0, 'F', 7)), got {part!r}")
    if forward.kind == backward.kind:
        raise ValueError(
            f"cannot pair {forward} with {backward}: both are {forward.kind}; an overlapped pair is one forward "
            f"(F) and one full backward (B), e.g. 0F7&7B3"
        )
    if forward.kind != "F" or backward.kind != "B":
        raise ValueError(
            f"cannot pair {forward} with {backward}: an overlapped pair is a forward F then a full backward B "
            f"(DeepSeek's F&B, PyTorch's OVERLAP_F_B), e.g. 0F7&7B3; got {forward.kind} and {backward.kind}"
        )
    if (forward.stage, forward.microbatch) == (backward.stage, backward.microbatch):
        raise ValueError(
            f"cannot pair {forward} with {backward}: the same stage and microbatch twice; the backward needs the "
            f"activation its forward makes, which a pair makes only when it ends (it could never start)"
        )


def parse_action(text: str) -> Action:
    """Parse ``"0F3"`` (stage 0, forward, microbatch 3) into an :class:`Action`.

    An overlapped pair reads as a :class:`Pair`: ``"0F7&7B3"``, or PyTorch's
    ``"(0F7;7B3)OVERLAP_F_B"``. Raises ``ValueError`` naming the text when it is neither
    ``<stage><F|B|I|W><microbatch>`` nor a legal pair of two such actions.
    """
    if not isinstance(text, str):
        raise TypeError(f"action must be a string like '0F3', got {text!r}")
    match = _ACTION_RE.match(text)
    if match is not None:
        return Action(int(match.group(1)), match.group(2), int(match.group(3)))
    pair = _PAIR_RE.match(text)
    if pair is not None:
        first, second = (pair.group("a"), pair.group("b")) if pair.group("a") else (pair.group("c"), pair.group("d"))
        try:
            one, two = parse_action(first), parse_action(second)
        except ValueError:
            raise ValueError(
                f"cannot read action {text!r}: a pair is two actions joined by '&', e.g. '0F7&7B3' "
                f"(or PyTorch's '(0F7;7B3)OVERLAP_F_B')"
            ) from None
        if one.kind == "B" and two.kind == "F":  # written backward first: the same pair
            one, two = two, one
        try:
            return Pair(one, two)
        except ValueError as exc:
            raise ValueError(f"cannot read action {text!r}: {exc}") from None
    raise ValueError(
        f"cannot read action {text!r}: expected <stage><kind><microbatch> with kind one "
        f"of F, B, I, W, e.g. '0F3' (stage 0, forward, microbatch 3), or an overlapped pair '0F7&7B3'"
    )


def parts(action: Action) -> tuple[Action, ...]:
    """The single actions ``action`` stands for: ``(action,)``, or a pair's ``(forward, backward)``."""
    if type(action) is Pair:
        return (action.forward, action.backward)
    return (action,)


# --------------------------------------------------------------- the dependency rule
def needs(action: Action, n_stages: int, pipes: int = 1) -> tuple[Event, ...]:
    """The events ``action`` waits for before it can start: **the dependency rule**.

    For stage ``s`` (of ``n_stages``) and microbatch ``i``:

    * ``sFi`` needs the activation of stage ``s-1`` (the previous stage's output);
    * ``sBi`` and ``sIi`` need the activation of stage ``s`` (this stage's own forward)
      and the gradient of stage ``s+1`` (from the next stage's ``B`` or ``I``);
    * ``sWi`` needs ``i-done`` of stage ``s`` (the weight gradient uses what ``I`` left);
    * a pair ``F&B`` needs what its forward needs, then what its backward needs.

    Events of the stage before a pipeline's first stage (the input data) and after its
    last stage (the loss gradient) are always there, so they are left out: ``0Fi`` and the
    last stage's backward need nothing from another stage. With ``pipes`` pipelines the
    stages ``0, L, 2L, ...`` are first and ``L-1, 2L-1, ...`` last (``L = n_stages // pipes``).
    """
    if type(n_stages) is not int or type(pipes) is not int or n_stages < 1 or not 1 <= pipes <= n_stages \
            or n_stages % pipes or not isinstance(action, Action):
        n_stages, pipes = _check_layout(action, n_stages, pipes)
    if type(action) is Pair:
        return needs(action.forward, n_stages, pipes) + needs(action.backward, n_stages, pipes)
    s, kind, i = action
    if type(s) is not int or not 0 <= s < n_stages:
        raise ValueError(f"{action!r} has stage {s!r}, outside the {n_stages} stages 0..{n_stages - 1}")
    if kind == "F":
        wanted: tuple[Event, ...] = (Event("activation", s - 1, i),)
    elif kind in ("B", "I"):
        wanted = (Event("activation", s, i), Event("gradient", s + 1, i))
    elif kind == "W":
        wanted = (Event("i-done", s, i),)
    else:
        raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")
    length = n_stages // pipes if pipes > 1 else n_stages
    if 0 < s % length < length - 1:
        return wanted
    lo = s - s % length  # this pipeline's stages are lo .. lo + length - 1
    return tuple(e for e in wanted if lo <= e.stage < lo + length)  # the first or the last stage


def _check_layout(action: Any, n_stages: Any, pipes: Any) -> tuple[int, int]:
    """The slow path of :func:`needs`' argument check: a clear error, or plain ints."""
    if not isinstance(action, Action):
        raise TypeError(f"action must be an Action (e.g. Action(1, 'B', 0) or parse_action('1B0')), got {action!r}")
    n = check_int("n_stages", n_stages)
    k = check_int("pipes", pipes)
    if k > n or n % k:
        raise ValueError(f"pipes={k} must divide n_stages={n} (each pipeline has n_stages / pipes stages)")
    return n, k


def produces(action: Action) -> tuple[Event, ...]:
    """The events ``action`` makes when it ends (the other half of the dependency rule).

    ``sFi`` makes stage ``s``'s activation; ``sBi`` its input gradient; ``sIi`` its input
    gradient and ``i-done``; ``sWi`` nothing another action waits for; a pair what both of
    its parts make, all at its end.
    """
    if type(action) is Pair:
        return produces(action.forward) + produces(action.backward)
    if not isinstance(action, Action):
        raise TypeError(f"action must be an Action (e.g. Action(0, 'F', 3) or parse_action('0F3')), got {action!r}")
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
    """The single actions that could make ``event``, most usual first (found from :func:`produces`).

    ``Event("gradient", 2, 0)`` is made by ``2B0`` or, when stage 2 splits its backward,
    by ``2I0``. (Inside a schedule the ``2B0`` may be the backward part of a pair.)
    """
    if not isinstance(event, Event):
        raise TypeError(f"event must be an Event (e.g. Event('gradient', 2, 0)), got {event!r}")
    s, i = event.stage, event.microbatch
    return tuple(a for a in (Action(s, k, i) for k in SINGLE_KINDS) if event in produces(a))


def inputs(action: Action, n_stages: int, exists: Callable[[Action], bool] | None = None,
           pipes: int = 1) -> list[Action]:
    """The actions whose results ``action`` waits for: :func:`needs`, said in actions.

    ``[(s-1)Fi]`` for ``sFi``; ``[sFi, (s+1)Bi]`` for ``sBi`` and ``sIi``; ``[sIi]`` for
    ``sWi``; a pair's list is its forward's then its backward's. ``exists(a)`` says whether
    a single action is in the schedule: it picks ``(s+1)Ii`` over ``(s+1)Bi`` when the next
    stage splits its backward. Without it the most usual producer (``B``) is assumed. The
    actions named are single ones (a pair's part stands for its pair). Used by plotting's
    arrows, calibration and the trace reader's clock alignment.
    """
    out = []
    for event in needs(action, n_stages, pipes):
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
      zero-bubble paper's M_W / M_B);
    * a pair ``F&B`` allocates its forward's activations when it starts and frees its
      backward's when it ends (so at its peak a rank holds both: DualPipe's ``PP + 1``).

    A rank holds the sum of what its started actions allocated minus what its finished
    ones freed (lessons 04 and 07 plot it).
    """
    if type(action) is Pair:
        return memory_delta(action.forward, activation, w_held)[0], memory_delta(action.backward, activation, w_held)[1]
    if not isinstance(action, Action):
        raise TypeError(f"action must be an Action (e.g. Action(0, 'F', 3)), got {action!r}")
    s, kind, _ = action
    if isinstance(activation, Sequence):
        if type(s) is not int or not 0 <= s < len(activation):
            raise ValueError(f"{action} is on stage {s!r} but activation gives {len(activation)} per-stage values "
                             f"(stages 0..{len(activation) - 1})")
        x = activation[s]
    else:
        x = activation
    if type(x) not in (int, float) or x < 0 or x != x:
        x = check_number("activation", x, minimum=0)
    if type(w_held) not in (int, float) or not 0 <= w_held <= 1:
        w_held = check_number("w_held", w_held, minimum=0)
        if w_held > 1:
            raise ValueError(f"w_held must be between 0 and 1 (a fraction of the activations), got {w_held!r}")
    if kind == "F":
        return x, 0
    if kind == "B":
        return 0, x
    if kind == "I":
        return 0, x * (1 - w_held)
    if kind == "W":
        return 0, x * w_held
    raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")


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
