"""Pipeline actions in PyTorch's notation, and **the two rules** every engine follows.

An action is ``{stage}{kind}{microbatch}``, e.g. ``0F3``. Kinds:

* ``F`` forward;
* ``B`` full backward (input and weight gradients together);
* ``I`` input-gradient backward only (PyTorch's ``I``; the zero-bubble paper calls it ``B``);
* ``W`` weight-gradient backward only;
* ``F&B`` an **overlapped pair** (:class:`Pair`): one forward and one full backward of two
  different (stage, microbatch)s on the same rank, run as ONE unit, as DeepSeek's DualPipe
  runs them (PyTorch's ``OVERLAP_F_B``). Written ``0F7&7B3``; PyTorch's text
  ``(0F7;7B3)OVERLAP_F_B`` reads the same;
* ``SEND_F``, ``RECV_F``, ``SEND_B``, ``RECV_B`` **communication actions** (:data:`COMM_KINDS`),
  PyTorch's names, in a schedule *lowered* to carry its messages as actions
  (:meth:`bubblekit.Schedule.lower_comms`): ``0SEND_F3`` posts stage 0's activation of
  microbatch 3 to the next stage's rank, ``1RECV_F3`` posts the receive of it there (the stage
  of a ``RECV`` is the receiving stage, as in PyTorch's ``_add_send_recv``).

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
* **the message rule** (lowered schedules only) -- a message crosses when both its send and
  its receive are posted (:func:`carried`, :func:`message_events`): the action that uses it
  waits for the later of the two, then the message's time on the wire and the hop latency.
  Posting costs the rank nothing: ``SEND`` and ``RECV`` take no time and never make their
  rank wait (PyTorch's ``isend``/``irecv``), except that a ``SEND`` comes after the compute it
  sends.

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
    "COMM_KINDS", "MESSAGE_EVENTS", "is_comm", "carried", "message_events",
]

#: The kind of an overlapped forward+backward pair (:class:`Pair`).
PAIR = "F&B"

#: The four single compute kinds, in PyTorch's notation.
SINGLE_KINDS: tuple[str, ...] = ("F", "B", "I", "W")

#: The communication kinds of a lowered schedule, PyTorch's ``_ComputationType`` names: the
#: send and the receive of an activation (``_F``) and of a gradient (``_B``).
COMM_KINDS: tuple[str, ...] = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")

#: Every kind: the four single compute ones, the overlapped pair ``F&B`` and the four communication ones.
KINDS: tuple[str, ...] = (*SINGLE_KINDS, PAIR, *COMM_KINDS)

#: The events a posted send or receive makes (lowered schedules): ``sent-activation`` of stage
#: ``s`` (made by ``sSEND_Fi``), ``recv-activation`` of stage ``s`` (the receive of stage
#: ``s-1``'s activation, posted by ``sRECV_Fi``), and the same for gradients.
MESSAGE_EVENTS: tuple[str, ...] = ("sent-activation", "recv-activation", "sent-gradient", "recv-gradient")

#: What an action can make for another one to wait on (see :class:`Event`).
EVENTS: tuple[str, ...] = ("activation", "gradient", "i-done", *MESSAGE_EVENTS)

#: ASCII digits only: Python's ``\d`` also matches other scripts' digits (Arabic-Indic ``٣``, full-width
#: ``３``), which a schedule text should not contain; they are refused, not read.
_ACTION_RE = re.compile(r"^\s*([0-9]+)\s*(SEND_F|RECV_F|SEND_B|RECV_B|[FBIW])\s*([0-9]+)\s*$")
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
            f"(F) and one full backward (B), e.g. 0F1&0B0"
        )
    if forward.kind != "F" or backward.kind != "B":
        raise ValueError(
            f"cannot pair {forward} with {backward}: an overlapped pair is a forward F then a full backward B "
            f"(DeepSeek's F&B, PyTorch's OVERLAP_F_B), e.g. 0F1&0B0; got {forward.kind} and {backward.kind}"
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
    ``<stage><F|B|I|W><microbatch>`` nor a legal pair of two such actions. A communication
    action reads too: ``"1RECV_F3"`` (PyTorch's text, :data:`COMM_KINDS`).
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
                f"cannot read action {text!r}: a pair is two actions joined by '&', e.g. '0F1&0B0' "
                f"(or PyTorch's '(0F1;0B0)OVERLAP_F_B')"
            ) from None
        if one.kind == "B" and two.kind == "F":  # written backward first: the same pair
            one, two = two, one
        try:
            return Pair(one, two)
        except ValueError as exc:
            raise ValueError(f"cannot read action {text!r}: {exc}") from None
    raise ValueError(
        f"cannot read action {text!r}: expected <stage><kind><microbatch> with kind one "
        f"of F, B, I, W, e.g. '0F3' (stage 0, forward, microbatch 3), or an overlapped pair, a forward and a "
        f"backward joined by '&' and run as one unit, e.g. '0F1&0B0' "
        f"(a lowered schedule also has SEND_F, RECV_F, SEND_B, RECV_B, e.g. '1RECV_F3')"
    )


def parts(action: Action) -> tuple[Action, ...]:
    """The single actions ``action`` stands for: ``(action,)``, or a pair's ``(forward, backward)``."""
    if type(action) is Pair:
        return (action.forward, action.backward)
    return (action,)


# --------------------------------------------------------------- the dependency rule
def needs(action: Action, n_stages: int, pipes: int = 1,
          placement: Sequence[int] | None = None) -> tuple[Event, ...]:
    """The events ``action`` waits for before it can start: **the dependency rule**.

    For stage ``s`` (of ``n_stages``) and microbatch ``i``:

    * ``sFi`` needs the activation of stage ``s-1`` (the previous stage's output);
    * ``sBi`` and ``sIi`` need the activation of stage ``s`` (this stage's own forward)
      and the gradient of stage ``s+1`` (from the next stage's ``B`` or ``I``);
    * ``sWi`` needs ``i-done`` of stage ``s`` (the weight gradient uses what ``I`` left);
    * a pair ``F&B`` needs what its forward needs, then what its backward needs;
    * ``sSEND_Fi`` needs stage ``s``'s activation (its own ``F``: a send comes after the compute
      it sends), ``sSEND_Bi`` stage ``s``'s gradient; a receive ``RECV_*`` needs nothing
      (posting it waits for nothing: PyTorch's ``irecv``).

    Events of the stage before a pipeline's first stage (the input data) and after its
    last stage (the loss gradient) are always there, so they are left out: ``0Fi`` and the
    last stage's backward need nothing from another stage. With ``pipes`` pipelines the
    stages ``0, L, 2L, ...`` are first and ``L-1, 2L-1, ...`` last (``L = n_stages // pipes``).

    ``placement`` (the rank of each stage) is given for a **lowered** schedule, whose messages
    are actions (:meth:`bubblekit.Schedule.lower_comms`): there an input from a stage on
    another rank is a message, so ``sFi`` needs ``recv-activation`` of ``s`` (its ``sRECV_Fi``
    posted) and ``sent-activation`` of ``s-1`` (the peer's ``SEND_F`` posted) instead of the
    activation itself, and a backward ``recv-gradient`` of ``s`` and ``sent-gradient`` of
    ``s+1`` (the message rule: :func:`carried`). Without ``placement`` the messages are implicit,
    as in every schedule that is not lowered.
    """
    if type(n_stages) is not int or type(pipes) is not int or n_stages < 1 or not 1 <= pipes <= n_stages \
            or n_stages % pipes or not isinstance(action, Action):
        n_stages, pipes = _check_layout(action, n_stages, pipes)
    if type(action) is Pair:
        return needs(action.forward, n_stages, pipes, placement) + needs(action.backward, n_stages, pipes, placement)
    s, kind, i = action
    if type(s) is not int or not 0 <= s < n_stages:
        raise ValueError(f"{action!r} has stage {s!r}, outside the {n_stages} stages 0..{n_stages - 1}")
    if kind == "F":
        wanted: tuple[Event, ...] = (Event("activation", s - 1, i),)
    elif kind in ("B", "I"):
        wanted = (Event("activation", s, i), Event("gradient", s + 1, i))
    elif kind == "W":
        wanted = (Event("i-done", s, i),)
    elif kind == "SEND_F":
        return (Event("activation", s, i),)
    elif kind == "SEND_B":
        return (Event("gradient", s, i),)
    elif kind in ("RECV_F", "RECV_B"):
        return ()
    else:
        raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")
    length = n_stages // pipes if pipes > 1 else n_stages
    if not 0 < s % length < length - 1:
        lo = s - s % length  # this pipeline's stages are lo .. lo + length - 1
        wanted = tuple(e for e in wanted if lo <= e.stage < lo + length)  # the first or the last stage
    if placement is None:
        return wanted
    if len(placement) != n_stages:
        raise ValueError(f"placement gives {len(placement)} ranks but n_stages={n_stages}: one rank per stage")
    return tuple(x for e in wanted for x in (message_events(e, s) if e.stage != s and placement[e.stage] != placement[s]
                                             else (e,)))


def message_events(event: Event, to_stage: int) -> tuple[Event, Event]:
    """The two events of the message that carries ``event`` to stage ``to_stage``: ``(receive posted, sent)``.

    An activation of stage ``s`` goes to ``s+1``: ``(recv-activation of s+1, sent-activation of s)``; a
    gradient of stage ``s`` goes to ``s-1``: ``(recv-gradient of s-1, sent-gradient of s)``. The
    receive comes first, so that a tie between them is the send's (the pipeline's chain, in
    critical paths). :func:`carried` is the reverse.
    """
    if not isinstance(event, Event) or event.what not in ("activation", "gradient"):
        raise ValueError(f"only an activation or a gradient travels as a message, got {event!r}")
    what = event.what
    return Event(f"recv-{what}", to_stage, event.microbatch), Event(f"sent-{what}", event.stage, event.microbatch)


def carried(event: Event) -> Event | None:
    """The activation or gradient a message event carries, or ``None`` for an event that is no message's.

    **The message rule** (lowered schedules): a message crosses its link when both its send and
    its receive are posted, the later of ``sent-*`` and ``recv-*``; then it spends its time on
    the wire (``Costs(bandwidth=...)``; each direction of a link one message at a time) and the
    hop latency (``Costs.comm``), and the compute that uses it may start. ``sent-activation``
    of ``s`` and ``recv-activation`` of ``s+1`` both carry stage ``s``'s activation;
    ``sent-gradient`` of ``s`` and ``recv-gradient`` of ``s-1`` stage ``s``'s gradient.
    """
    what = event.what
    if what == "sent-activation" or what == "sent-gradient":
        return Event(what[5:], event.stage, event.microbatch)
    if what == "recv-activation":
        return Event("activation", event.stage - 1, event.microbatch)
    if what == "recv-gradient":
        return Event("gradient", event.stage + 1, event.microbatch)
    return None


def is_comm(action: Action) -> bool:
    """True for a communication action (``SEND_F``, ``RECV_F``, ``SEND_B``, ``RECV_B``): it takes no time."""
    return action[1] in COMM_KINDS


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
    its parts make, all at its end; a send or a receive its posting (:data:`MESSAGE_EVENTS`).
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
    if kind in COMM_KINDS:  # a posted send or receive: SEND_F -> sent-activation, RECV_B -> recv-gradient, ...
        return (Event(("sent-" if kind[0] == "S" else "recv-") + ("activation" if kind[-1] == "F" else "gradient"),
                      s, i),)
    raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")


def producers(event: Event) -> tuple[Action, ...]:
    """The single actions that could make ``event``, most usual first (found from :func:`produces`).

    ``Event("gradient", 2, 0)`` is made by ``2B0`` or, when stage 2 splits its backward,
    by ``2I0``. (Inside a schedule the ``2B0`` may be the backward part of a pair.)
    """
    if not isinstance(event, Event):
        raise TypeError(f"event must be an Event (e.g. Event('gradient', 2, 0)), got {event!r}")
    s, i = event.stage, event.microbatch
    return tuple(a for a in (Action(s, k, i) for k in (*SINGLE_KINDS, *COMM_KINDS)) if event in produces(a))


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
      backward's when it ends (so at its peak a rank holds both: DualPipe's ``PP + 1``);
    * a send or a receive holds nothing (its buffer is the activation already counted).

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
    if kind in COMM_KINDS:
        return 0, 0
    raise ValueError(f"unknown action kind {kind!r} in {action}: kinds are {', '.join(KINDS)}")


class Event(NamedTuple):
    """Something one action makes and another waits for, for one stage and microbatch.

    ``what`` is one of :data:`EVENTS`:

    * ``"activation"``: stage ``stage``'s output for ``microbatch`` (made by its ``F``);
    * ``"gradient"``: the gradient of stage ``stage``'s input, sent back to stage
      ``stage - 1`` (made by its ``B`` or its ``I``);
    * ``"i-done"``: stage ``stage`` has run the input-gradient pass ``I`` (its ``W``
      computes from what ``I`` left);
    * ``"sent-activation"`` / ``"sent-gradient"``: stage ``stage`` has posted the send of its
      activation / input gradient (a lowered schedule's ``SEND_F`` / ``SEND_B``);
    * ``"recv-activation"`` / ``"recv-gradient"``: stage ``stage`` has posted the receive of
      the previous stage's activation / the next stage's gradient (``RECV_F`` / ``RECV_B``).
    """

    what: str
    stage: int
    microbatch: int
