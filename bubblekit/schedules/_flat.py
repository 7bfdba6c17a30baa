"""PyTorch's lowering of a compute schedule on flat integer arrays (private; behind :meth:`Schedule.lower_comms`).

:func:`bubblekit.schedules.comms.lower_actions` is the walk of ``_add_send_recv`` cell by cell;
this module gives the same orders (``tests/test_comms.py`` pins them) without a Python object per
action until someone asks for the actions:

* **the walk as a recurrence**: the walk takes one cell per rank per round, ranks in order, and
  a cell when its input is taken (a forward: the previous stage's forward of its microbatch; a
  backward: the next stage's). So the round of a cell is ``max(round of the rank's previous cell
  + 1, round of its input + (1 if the input's rank comes after this one, else 0))``: each rank
  runs its compute actions until an input is not yet placed (the fillers of PyTorch's first two
  passes, FSDP's and ``REDUCE_GRAD``'s cells, only move a rank's cells one round on each);
* **the places from the rounds, in bulk** (numpy): a compute action, its send right after it,
  and the receive its send appends to the peer rank all happen at ``(round, rank)``; sorting
  each rank's items by that gives its lowered order, its :class:`~bubblekit.schedules.comms.Layout`
  and its orders as integers (:class:`FlatRows`), decoded into actions only on demand.

The compute schedules :func:`bubblekit.schedule` builds for GPipe, 1F1B, interleaved 1F1B, looped
BFS and ZB-V keep their orders as integers too (:class:`ComputeRows`, plain lists: no numpy needed to build them); their
checks, their lowering and the simulator's memory read the integers (numpy), and a lowered
schedule's compute entries decode from them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from itertools import chain, islice, repeat
from operator import itemgetter
from types import ModuleType
from typing import TYPE_CHECKING, Any, overload

from bubblekit.actions import Action

if TYPE_CHECKING:
    import numpy as np

    from bubblekit.schedules.comms import Layout

#: the communication kinds, by their code in :class:`FlatRows`
COMM_CODES: tuple[str, ...] = ("SEND_F", "RECV_F", "SEND_B", "RECV_B")
#: the compute kinds, by their code in :class:`ComputeRows`
COMPUTE_CODES: tuple[str, ...] = ("F", "B", "I", "W")
#: a compute kind's index in :data:`COMPUTE_CODES`
KIND_CODES: dict[str, int] = {"F": 0, "B": 1, "I": 2, "W": 3}
_STAGE, _KIND_TEXT, _MB = itemgetter(0), itemgetter(1), itemgetter(2)
_new = tuple.__new__


#: the fewest actions for which :class:`ComputeRows` checks and sums with numpy: a smaller schedule makes its
#: actions (numpy's import and fixed cost per call would outweigh them, and the core imports nothing heavy)
BULK_MIN_ACTIONS = 20_000


def _numpy(n_actions: int) -> ModuleType | None:
    """numpy for work on ``n_actions`` actions in bulk, or ``None`` below :data:`BULK_MIN_ACTIONS` or where numpy
    is missing (the browser edition): the callers then make the actions and check them one by one."""
    if n_actions < BULK_MIN_ACTIONS:
        return None
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def compute_codes(n_stages: int, m: int, stage: int, kind: str) -> range:
    """The codes of ``kind`` of microbatches ``0 .. m-1`` through ``stage`` in a :class:`ComputeRows`, in order
    (a ``range``: slice it for some of them)."""
    first = (KIND_CODES[kind] * n_stages + stage) * m
    return range(first, first + m)


class _CodedRow(Sequence[Action]):
    """A row of integer codes read as actions, one at a time (each subclass says how a code decodes: ``_one``)."""

    __slots__ = ()
    _codes: Any

    def __len__(self) -> int:
        return len(self._codes)

    def _one(self, c: int) -> Action:  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> Action: ...

    @overload
    def __getitem__(self, i: slice) -> list[Action]: ...

    def __getitem__(self, i: int | slice) -> Action | list[Action]:
        if isinstance(i, slice):
            return list(map(self._one, _ints(self._codes[i])))
        return self._one(int(self._codes[i]))

    def __iter__(self) -> Iterator[Action]:
        return map(self._one, _ints(self._codes))

    # equal to the tuple of the same actions, as the row of a schedule built from actions is
    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, _CodedRow)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))


def _ints(codes: Any) -> Sequence[int]:
    """Python ints of a list or a numpy array of codes."""
    return codes.tolist() if hasattr(codes, "tolist") else codes


class ComputeRow(_CodedRow):
    """One rank's compute order, read from its integer codes (an action is built when asked for)."""

    __slots__ = ("_codes", "_n", "_m")

    def __init__(self, codes: Sequence[int], n: int, m: int) -> None:
        self._codes, self._n, self._m = codes, n, m

    def _one(self, c: int) -> Action:
        rest, mb = divmod(c, self._m)
        kind, stage = divmod(rest, self._n)
        return _new(Action, (stage, COMPUTE_CODES[kind], mb))

    def __repr__(self) -> str:
        return f"ComputeRow({' '.join(map(str, self))})"


class ComputeRows(Sequence[ComputeRow]):
    """Compute orders as integers: rank ``r``'s order is ``codes[r]`` (a list of ints), each entry
    ``(kind * n_stages + stage) * m + microbatch`` (``kind``: its index in :data:`COMPUTE_CODES`).

    What :func:`bubblekit.schedule` builds for GPipe, 1F1B, interleaved 1F1B, looped BFS and ZB-V: no
    Python object per action until someone reads ``Schedule.orders`` (:meth:`rows`, made once and kept) or one action of a row.
    """

    def __init__(self, codes: Sequence[Sequence[int]], n: int, m: int) -> None:
        self.codes, self.n, self.m = codes, n, m
        self._views = [ComputeRow(c, n, m) for c in codes]
        self._flat: np.ndarray | None = None
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rows: tuple[tuple[Action, ...], ...] | None = None

    def __reduce__(self) -> tuple[type[ComputeRows], tuple[Sequence[Sequence[int]], int, int]]:
        return ComputeRows, (self.codes, self.n, self.m)  # the codes only: what is cached is made again

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, r: int) -> ComputeRow: ...

    @overload
    def __getitem__(self, r: slice) -> list[ComputeRow]: ...

    def __getitem__(self, r: int | slice) -> ComputeRow | list[ComputeRow]:
        return self._views[r]

    def lengths(self) -> list[int]:
        return [len(c) for c in self.codes]

    @property
    def n_actions(self) -> int:
        return sum(map(len, self.codes))

    def flat_codes(self) -> np.ndarray:
        """Every code, rank-major, as one int64 array (numpy needed)."""
        if self._flat is None:
            import numpy as np

            flat = np.fromiter(chain.from_iterable(self.codes), dtype=np.int64, count=self.n_actions)
            flat.flags.writeable = False  # shared by every reader
            self._flat = flat
        return self._flat

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(stage, kind, microbatch)`` of every action, rank-major, as int64 arrays (``kind``: its index in
        :data:`COMPUTE_CODES`; numpy needed; :meth:`lengths` splits them by rank)."""
        if self._arrays is None:
            import numpy as np

            rest, mb = np.divmod(self.flat_codes(), self.m)
            kind, stage = np.divmod(rest, self.n)
            for a in (stage, kind, mb):
                a.flags.writeable = False  # shared by every reader
            self._arrays = (stage, kind, mb)
        return self._arrays

    def rows(self) -> tuple[tuple[Action, ...], ...]:
        """The orders as actions (made once and kept: every schedule over this view shares them)."""
        if self._rows is None:
            top = 4 * self.n * self.m
            bulk = self._arrays is not None or _numpy(self.n_actions) is not None
            if bulk:
                low, high = (int(x.min()), int(x.max())) if len(x := self.flat_codes()) else (0, 0)
            else:
                low, high = min(map(min, filter(None, self.codes)), default=0), max(map(max, filter(None, self.codes)),
                                                                                  default=0)
            if low < 0 or high >= top:
                raise ValueError(f"code {low if low < 0 else high} is no action of {self.n} stage(s) and m={self.m}: "
                                 f"a code is (kind * n_stages + stage) * m + microbatch, in 0..{top - 1}")
            if not bulk:
                self._rows = tuple(tuple(v) for v in self._views)
            else:
                stage, kind, mb = self.arrays()
                every = map(_new, repeat(Action), zip(stage.tolist(), map(COMPUTE_CODES.__getitem__, kind.tolist()),
                                                      mb.tolist()))
                self._rows = tuple(tuple(islice(every, k)) for k in self.lengths())
        return self._rows

    def has_split(self) -> bool:
        """True when some action is an ``I`` or a ``W``."""
        first_i = 2 * self.n * self.m
        return any(max(c, default=-1) >= first_i for c in self.codes)

    def in_place(self, placement: Sequence[int]) -> bool | None:
        """True when every code is an action of a stage in ``placement`` held by the rank that runs it
        (:meth:`bubblekit.Schedule.check_ranges`' verdict); ``None`` without numpy."""
        np = _numpy(self.n_actions)
        if np is None:
            return None
        n, m = self.n, self.m
        codes = self.flat_codes()
        if len(placement) != n or len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= 4 * n * m):
            return False
        ranks = np.repeat(np.arange(len(self.codes), dtype=np.int64), self.lengths())
        return bool((np.asarray(placement, dtype=np.int64)[self.arrays()[0]] == ranks).all())

    def legal(self, placement: Sequence[int]) -> bool | None:
        """True when the orders are a legal schedule of one pipeline (:meth:`bubblekit.Schedule.validate`'s
        verdict, exactly): each action in place (:meth:`in_place`) and once, each stage and microbatch with
        its ``F`` and either its ``B`` or both its ``I`` and ``W``. ``None`` without numpy."""
        in_place = self.in_place(placement)
        if not in_place:
            return in_place
        import numpy as np

        f, b, i, w = np.bincount(self.flat_codes(), minlength=4 * self.n * self.m).reshape(4, -1)
        return bool((f == 1).all() and (b + i == 1).all() and (i == w).all())

    def running_peaks(self, net: Sequence[float]) -> tuple[float, ...] | None:
        """Per rank, the largest running sum of ``net[kind * n_stages + stage]`` over its order, from 0 (the
        sums in order, as ``max(accumulate(..., initial=0.0))`` makes them); ``None`` without numpy."""
        np = _numpy(self.n_actions)
        if np is None:
            return None
        table = np.asarray(net, dtype=np.float64)
        deltas = table[self.flat_codes() // self.m]
        out, at = [], 0
        for k in self.lengths():
            sums = np.cumsum(deltas[at:at + k])
            at += k
            out.append(max(0.0, float(sums.max())) if k else 0.0)
        return tuple(out)


class FlatRow(_CodedRow):
    """One rank's lowered order, read from its integer codes (an action is built when asked for)."""

    __slots__ = ("_codes", "_base", "_n", "_m")

    def __init__(self, codes: np.ndarray, base: Sequence[Action], n: int, m: int) -> None:
        self._codes, self._base, self._n, self._m = codes, base, n, m

    def _one(self, c: int) -> Action:
        if c < 0:
            return self._base[-c - 1]
        rest, mb = divmod(c, self._m)
        kind, stage = divmod(rest, self._n)
        return _new(Action, (stage, COMM_CODES[kind], mb))


class FlatRows(Sequence[FlatRow]):
    """Lowered orders as integers: rank ``r``'s order is ``codes[r]``, each entry ``-1 - c`` for the
    compute schedule's ``c``-th action of that rank, or ``(kind * n_stages + stage) * m + microbatch``
    for a send or a receive (``kind``: its index in :data:`COMM_CODES`); with their ``layout``."""

    def __init__(self, base: Sequence[Sequence[Action]], codes: list[np.ndarray], n: int, m: int,
                 layout: Layout) -> None:
        self.base, self.codes, self.n, self.m, self.layout = base, codes, n, m, layout
        self.n_comms = int(sum(int((c >= 0).sum()) for c in codes))
        self._views = [FlatRow(c, b, n, m) for c, b in zip(codes, base)]

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, r: int) -> FlatRow: ...

    @overload
    def __getitem__(self, r: slice) -> list[FlatRow]: ...

    def __getitem__(self, r: int | slice) -> FlatRow | list[FlatRow]:
        if isinstance(r, slice):
            return self._views[r]
        return self._views[r]

    def lengths(self) -> list[int]:
        return [len(c) for c in self.codes]

    def rows(self) -> list[list[Action]]:
        """The orders as actions (the compute schedule's own objects, new ones for the sends and receives)."""
        import numpy as np

        n, m = self.n, self.m
        out: list[list[Action]] = []
        bases = self.base.rows() if isinstance(self.base, ComputeRows) else self.base  # the compute schedule's own
        for codes, base, pos in zip(self.codes, bases, self.layout.pos):
            row: list[Action] = [None] * len(codes)  # type: ignore[list-item]
            deque(map(row.__setitem__, pos, base), maxlen=0)
            at = np.flatnonzero(codes >= 0)
            c = codes[at]
            rest, mb = np.divmod(c, m)
            kind, stage = np.divmod(rest, n)
            acts = map(_new, repeat(Action), zip(stage.tolist(), map(COMM_CODES.__getitem__, kind.tolist()),
                                                 mb.tolist()))
            deque(map(row.__setitem__, at.tolist(), acts), maxlen=0)
            out.append(row)
        return out


def _cells(orders: Sequence[Sequence[Action]], lens: list[int], ranks: np.ndarray, st: np.ndarray, kd: np.ndarray,
           n: int, m: int) -> np.ndarray:
    """Each action's cell in its rank's walk: its index plus the filler cells of PyTorch's first two passes before it.

    :func:`bubblekit.schedules.comms._few_stages` in bulk for the ranks of at most three stages (a stage's
    ``UNSHARD`` cells at the start, one eviction before the action after its last, a ``REDUCE_GRAD``
    after its ``m``-th ``B`` or ``W``); :func:`bubblekit.schedules.comms._fillers`, step by step, for any other.
    """
    import numpy as np

    from bubblekit.schedules import comms

    total = len(st)
    offs = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    before = np.zeros(total, dtype=np.int64)
    after = np.zeros(total, dtype=np.int64)
    group = ranks * n + st  # (rank, stage)
    groups, first_at = np.unique(group, return_index=True)
    per_rank = np.bincount(groups // n, minlength=len(lens))
    last_at = total - 1 - np.unique(group[::-1], return_index=True)[1]
    np.add.at(before, offs[:-1][per_rank > 0], per_rank[per_rank > 0])
    nxt = last_at + 1
    nxt = nxt[nxt < offs[1:][ranks[last_at]]]
    np.add.at(before, nxt, 1)
    bw = np.flatnonzero((kd == 1) | (kd == 3))
    if len(bw) >= m:
        g_bw = group[bw]
        by = np.argsort(g_bw, kind="stable")
        g_sorted = g_bw[by]
        first_of = np.searchsorted(g_sorted, g_sorted)  # where each one's group starts
        nth = np.arange(len(by)) - first_of
        np.add.at(after, bw[by[nth == m - 1]], 1)
    for r in np.flatnonzero(per_rank > 3).tolist():  # more stages than PyTorch keeps unsharded
        b_l, a_l, _ = comms._fillers(orders[r], m)
        before[offs[r]:offs[r + 1]] = b_l
        after[offs[r]:offs[r + 1]] = a_l
    moved = np.cumsum(before) + np.cumsum(after) - after  # filler cells before each action, from the first rank on
    earlier = np.concatenate([[0], np.cumsum(before + after)])[offs[:-1]]  # ... those of the ranks before
    return np.arange(total) - offs[ranks] + moved - earlier[ranks]


def lower_flat(orders: Sequence[Sequence[Action]], placement: Sequence[int], m: int) -> FlatRows:
    """PyTorch's lowering of compute orders of single actions (no pairs), as :class:`FlatRows`.

    Raises ``ValueError`` when no rank can go on (the message of
    :func:`bubblekit.schedules.comms.lower_actions`); ``KeyError`` for a kind that is not ``F``,
    ``B``, ``I`` or ``W``.
    """
    import numpy as np

    from bubblekit.schedules.comms import Layout

    n = len(placement)
    size = n * m
    p = len(orders)
    place = np.asarray(placement, dtype=np.int64)
    idx = np.arange(n)
    to_next = np.where(idx + 1 < n, place[np.minimum(idx + 1, n - 1)], -1)
    to_next[to_next == place] = -1
    to_prev = np.where(idx > 0, place[np.maximum(idx - 1, 0)], -1)
    to_prev[to_prev == place] = -1
    lens = [len(o) for o in orders]
    n_compute = sum(lens)
    ranks = np.repeat(np.arange(p, dtype=np.int64), lens)
    if isinstance(orders, ComputeRows) and orders.n == n and orders.m == m:  # the codes as they are
        st, kd, mb = orders.arrays()
    else:
        kind_of = np.full(128, -1, dtype=np.int64)  # a kind by its character code (F, B, I, W; -1: none of them)
        kind_of[[ord(k) for k in KIND_CODES]] = list(KIND_CODES.values())
        every = chain.from_iterable
        st = np.fromiter(map(_STAGE, every(orders)), dtype=np.int64, count=n_compute)
        kd = kind_of[np.fromiter(map(ord, map(_KIND_TEXT, every(orders))), dtype=np.int64, count=n_compute)]
        if (kd < 0).any():
            raise KeyError("a kind other than F, B, I, W")
        mb = np.fromiter(map(_MB, every(orders)), dtype=np.int64, count=n_compute)
    cell = _cells(orders, lens, ranks, st, kd, n, m)
    is_f, is_b = kd == 0, (kd == 1) | (kd == 2)
    key = st * m + mb
    own = np.where(is_f, key, np.where(is_b, key + size, -1))
    has_f, has_b = is_f & (st > 0), is_b & (st < n - 1)
    dep = np.where(has_f, key - m, np.where(has_b, key + m + size, -1))
    dep_stage = np.where(has_f, st - 1, np.where(has_b, st + 1, 0))
    delta = ((dep >= 0) & (place[dep_stage] > ranks)).astype(np.int64)
    rounds = _rounds_swept(lens, cell, own, dep, delta, size)
    if rounds is None:
        rounds = _rounds_walked(orders, lens, cell, own, dep, delta, size)
    g = rounds * p + ranks
    # the places: every item at (round, rank); a compute and its receives' posts at 2 g, its send at 2 g + 1
    here = np.concatenate([np.arange(k, dtype=np.int64) for k in lens])
    f_out = (kd == 0) & (to_next[st] >= 0)
    b_out = ((kd == 1) | (kd == 2)) & (to_prev[st] >= 0)
    sf, sb = st[f_out], st[b_out]
    mf, mbb = mb[f_out], mb[b_out]
    gf, gb = g[f_out], g[b_out]
    item_rank = np.concatenate([ranks, ranks[f_out], to_next[sf], ranks[b_out], to_prev[sb]])
    item_key = np.concatenate([2 * g, 2 * gf + 1, 2 * gf, 2 * gb + 1, 2 * gb])
    item_code = np.concatenate([-1 - here, sf * m + mf, (n + sf + 1) * m + mf, (2 * n + sb) * m + mbb,
                                (3 * n + sb - 1) * m + mbb])
    span = int(item_key.max()) + 1 if len(item_key) else 1
    by = np.argsort(item_rank * span + item_key, kind="stable")
    counts = np.bincount(item_rank, minlength=p)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    where = np.empty(len(by), dtype=np.int64)
    where[by] = np.arange(len(by))
    within = where - starts[item_rank]
    sorted_codes = item_code[by]
    codes = np.split(sorted_codes, np.cumsum(counts)[:-1])
    pos = [x.tolist() for x in np.split(within[:n_compute], np.cumsum(lens)[:-1])]
    # how many compute actions each rank runs before each place (a receive's post)
    compute_before = np.cumsum(sorted_codes < 0) - np.concatenate([[0], np.cumsum(lens)[:-1]])[item_rank[by]]
    n_f, n_b = len(sf), len(sb)
    o_sf, o_rf, o_sb, o_rb = n_compute, n_compute + n_f, n_compute + 2 * n_f, n_compute + 2 * n_f + n_b
    recv_k = np.full(2 * size, -1, dtype=np.int64)
    recv_pos = np.full(2 * size, -1, dtype=np.int64)
    send_pos = np.full(2 * size, -1, dtype=np.int64)
    rf_key, rb_key = (sf + 1) * m + mf, size + (sb - 1) * m + mbb
    recv_pos[rf_key] = within[o_rf:o_sb]
    recv_pos[rb_key] = within[o_rb:]
    recv_k[rf_key] = compute_before[where[o_rf:o_sb]]
    recv_k[rb_key] = compute_before[where[o_rb:]]
    send_pos[sf * m + mf] = within[o_sf:o_rf]
    send_pos[size + sb * m + mbb] = within[o_sb:o_rb]
    layout = Layout(pos, recv_k.tolist(), recv_pos.tolist(), send_pos.tolist())
    return FlatRows(orders, codes, n, m, layout)


def _rounds_swept(lens: list[int], cell: np.ndarray, own: np.ndarray, dep: np.ndarray, delta: np.ndarray,
                  size: int, max_sweeps: int = 12) -> np.ndarray | None:
    """The round of each compute action, by sweeps over the ranks (``None``: not settled after ``max_sweeps``).

    The rounds are the least solution of ``round = max(cell + delay, input's round + delta)`` with the
    delay never decreasing along a rank: start from no delay and recompute the ranks one after another
    (in order, then backwards), each from its inputs' latest rounds, until nothing moves. A deadlock has
    no solution (the rounds grow for ever): after ``max_sweeps`` the walk (:func:`_rounds_walked`) decides.
    """
    import numpy as np

    where_own = np.full(2 * size, -1, dtype=np.int64)
    made = np.flatnonzero(own >= 0)
    where_own[own[made]] = made
    dep_at = np.where(dep >= 0, where_own[np.maximum(dep, 0)], -1)
    if ((dep >= 0) & (dep_at < 0)).any():  # an input no rank computes: the walk names the stuck ranks
        return None
    offs = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offs[1:])
    rounds = cell.copy()
    parts = []
    for r in range(len(lens)):
        a, b = int(offs[r]), int(offs[r + 1])
        if a == b:
            continue
        has = np.flatnonzero(dep_at[a:b] >= 0)
        if not len(has):
            continue
        parts.append((a, b, has, dep_at[a:b][has], delta[a:b][has] - cell[a:b][has]))
    zero = np.zeros(int(max(lens, default=0)), dtype=np.int64)
    for sweep in range(max_sweeps):
        moved = False
        for a, b, has, src, shift in (parts if sweep % 2 == 0 else parts[::-1]):
            delay = zero[:b - a].copy()
            delay[has] = np.maximum(rounds[src] + shift, 0)
            np.maximum.accumulate(delay, out=delay)
            new = delay + cell[a:b]
            if not np.array_equal(new, rounds[a:b]):
                moved = True
                rounds[a:b] = new
        if not moved:
            return rounds
    return None


def _rounds_walked(orders: Sequence[Sequence[Action]], lens: list[int], cell: np.ndarray, own: np.ndarray,
                   dep: np.ndarray, delta: np.ndarray, size: int) -> np.ndarray:
    """The round of each compute action, rank by rank as the walk goes: each rank runs until an input is
    not placed yet and goes on when it is. Raises ``ValueError`` (PyTorch's refusal) when no rank can go on."""
    import numpy as np

    from bubblekit.schedules.comms import _no_progress

    p = len(lens)
    offs = [0, *np.cumsum(lens).tolist()]
    cell_l, own_l, dep_l, delta_l = cell.tolist(), own.tolist(), dep.tolist(), delta.tolist()
    taken = [-1] * (2 * size)
    first_waiting = [-1] * (2 * size)
    next_waiting = [-1] * p
    rounds: list[list[int]] = [[] for _ in range(p)]
    stack = [r for r in range(p - 1, -1, -1) if lens[r]]
    push, pop = stack.append, stack.pop

    def rank_walk(r: int) -> Iterator[int]:
        out = rounds[r]
        add = out.append
        taken_, first, chain_ = taken, first_waiting, next_waiting
        a, b = offs[r], offs[r + 1]
        t = prev = -1
        for x, d, dl, k in zip(cell_l[a:b], dep_l[a:b], delta_l[a:b], own_l[a:b]):
            t += x - prev
            prev = x
            if d >= 0:
                at = taken_[d]
                while at < 0:
                    yield d
                    at = taken_[d]
                at += dl
                if at > t:
                    t = at
            add(t)
            if k >= 0:
                taken_[k] = t
                woken = first[k]
                if woken >= 0:
                    first[k] = -1
                    while woken >= 0:
                        push(woken)
                        woken = chain_[woken]

    procs = [rank_walk(r) for r in range(p)]
    while stack:
        r = pop()
        key = next(procs[r], None)
        if key is not None:
            next_waiting[r] = first_waiting[key]
            first_waiting[key] = r
    pending = [r for r in range(p) if len(rounds[r]) < lens[r]]
    if pending:
        raise _no_progress(orders, pending, [len(x) for x in rounds])
    return np.fromiter(chain.from_iterable(rounds), dtype=np.int64, count=len(cell))
