"""bubblekit's orders against PyTorch's own schedules (``torch.distributed.pipelining``, 2.13).

No process group is needed: the schedules are built with light fake stage objects that
expose what the constructors read (``stage_index``, ``num_stages``, ``group_size``,
``group_rank``, ``submod``). For the multi-stage schedules the compute order is PyTorch's
``pipeline_order`` (idle ``None`` slots dropped, each ``OVERLAP_F_B`` with its two
sub-actions are kept as one pair, ``(0F7;7B3)OVERLAP_F_B``, non-compute actions such as
``REDUCE_GRAD`` dropped). For the single-stage
``ScheduleGPipe`` and ``Schedule1F1B`` the runtime order is recorded by running their
``_step_microbatches`` loop against a stage that logs each ``forward_one_chunk`` and
``backward_one_chunk`` call (communication ops are empty lists).

Documented differences (each asserted below, so a change in PyTorch shows up):

* ``Schedule1F1B.pipeline_order`` (the static IR) is wrong on the last rank: its forward
  counter starts at 0 and is incremented before use, so it lists ``F1 .. Fm`` (``Fm`` out
  of range, ``F0`` missing). The runtime order (``_step_microbatches``) is right and equals
  bubblekit's ``1f1b``.
* ``Schedule1F1B`` refuses ``m < p``; bubblekit's ``1f1b`` accepts it (warm-up ``min(p-r, m)``).
* ``ScheduleInterleavedZeroBubble`` refuses ``m % max(1, m // p) != 0`` even with one stage
  per rank, where the rule changes nothing; bubblekit's ``zb-h1`` accepts every ``m``.
* none for ``ScheduleDualPipeV``: its ``OVERLAP_F_B`` actions (forward of one chunk + full
  backward of the other) are bubblekit's overlapped pairs, at the same places (DeepSeek's
  order, including the unit on the last rank that is not overlapped).
"""

from __future__ import annotations

from typing import Any

import pytest

import bubblekit as bk

S = pytest.importorskip("torch.distributed.pipelining.schedules")

pytestmark = pytest.mark.torch

_COMPUTE = {"FORWARD", "FULL_BACKWARD", "BACKWARD_INPUT", "BACKWARD_WEIGHT"}


class FakeStage:
    """What the schedule constructors and the single-stage step loops touch, nothing more."""

    def __init__(self, stage_index: int, num_stages: int, group_size: int, group_rank: int) -> None:
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = group_rank
        self.submod = None
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.log: list[str] = []

    def get_fwd_recv_ops(self, mb: int) -> list[Any]:
        return []

    get_fwd_send_ops = get_bwd_recv_ops = get_bwd_send_ops = get_fwd_recv_ops

    def forward_one_chunk(self, mb: int, *args: Any, **kwargs: Any) -> None:
        self.log.append(f"{self.stage_index}F{mb}")

    def backward_one_chunk(self, mb: int, loss: Any = None, last_backward: bool = False) -> None:
        self.log.append(f"{self.stage_index}B{mb}")

    def perform_reduce_grad(self, *args: Any) -> None:
        pass


def compute_orders(pipeline_order: dict[int, list[Any]]) -> dict[int, list[str]]:
    """PyTorch ``pipeline_order`` -> per-rank compute action strings (``"0F3"``)."""
    out: dict[int, list[str]] = {}
    for rank, actions in pipeline_order.items():
        row: list[str] = []
        for a in actions:
            if a is None:
                continue
            if a.sub_actions is not None:  # OVERLAP_F_B: one pair, PyTorch's text
                row.append(str(a))
            elif a.computation_type.name in _COMPUTE:
                row.append(str(a))
        out[rank] = row
    return out


def torch_multi(cls: Any, p: int, m: int, v: int, *, v_shape: bool = False) -> dict[int, list[str]]:
    n = p * v
    if v_shape:
        stages = [FakeStage(0, n, p, 0), FakeStage(n - 1, n, p, 0)]
    else:
        stages = [FakeStage(k * p, n, p, 0) for k in range(v)]
    return compute_orders(cls(stages, m).pipeline_order)


def torch_single_runtime(cls: Any, p: int, m: int) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """(runtime order recorded from ``_step_microbatches``, static ``pipeline_order``)."""
    runtime: dict[int, list[str]] = {}
    sched: Any = None
    for r in range(p):
        stage = FakeStage(r, p, p, r)
        sched = cls(stage, m)
        sched._check_inputs = lambda a, k, t, lo: ([()] * m, [{}] * m)
        sched._initialize_stage = lambda *a, **k: None
        sched._step_microbatches()
        runtime[r] = stage.log
    return runtime, compute_orders(sched.pipeline_order)


def _bk(name: str, p: int, m: int, v: int | None = None) -> dict[int, list[str]]:
    return bk.schedule(name, p, m, v).to_torch_orders()


GRID_P = range(1, 7)


def test_registry_names_the_torch_classes() -> None:
    for name in ("gpipe", "1f1b", "interleaved", "looped-bfs", "zb-h1", "zbv", "dualpipev"):
        assert hasattr(S, bk.REGISTRY[name].torch_class)


def test_gpipe_runtime_and_static_orders() -> None:
    for p in GRID_P:
        for m in range(1, 13):
            runtime, static = torch_single_runtime(S.ScheduleGPipe, p, m)
            assert runtime == static == _bk("gpipe", p, m), (p, m)


def test_1f1b_runtime_order_and_static_last_rank_bug() -> None:
    for p in GRID_P:
        for m in range(p, p + 10):
            runtime, static = torch_single_runtime(S.Schedule1F1B, p, m)
            ours = _bk("1f1b", p, m)
            assert runtime == ours, (p, m)
            assert all(static[r] == ours[r] for r in range(p - 1))
            last = p - 1
            assert static[last] != ours[last]
            assert f"{last}F{m}" in static[last] and f"{last}F0" not in static[last]


def test_1f1b_torch_refuses_m_below_p() -> None:
    for p in range(2, 6):
        for m in range(1, p):
            with pytest.raises(ValueError):
                S.Schedule1F1B(FakeStage(0, p, p, 0), m)
            assert len(_bk("1f1b", p, m)) == p


@pytest.mark.parametrize("v", [2, 3, 4])
def test_interleaved_orders(v: int) -> None:
    for p in GRID_P:
        for m in range(1, 20):
            try:
                theirs = torch_multi(S.ScheduleInterleaved1F1B, p, m, v)
            except ValueError:
                with pytest.raises(ValueError, match=f"m={m}"):
                    bk.schedule("interleaved", p, m, v)
                continue
            assert _bk("interleaved", p, m, v) == theirs, (p, m, v)


@pytest.mark.parametrize("v", [2, 3, 4])
def test_looped_bfs_orders(v: int) -> None:
    for p in GRID_P:
        for m in range(1, 14):
            assert _bk("looped-bfs", p, m, v) == torch_multi(S.ScheduleLoopedBFS, p, m, v), (p, m, v)


def test_zb_h1_is_interleaved_zero_bubble_with_one_stage() -> None:
    compared = refused = 0
    for p in GRID_P:
        for m in range(1, 20):
            try:
                theirs = torch_multi(S.ScheduleInterleavedZeroBubble, p, m, 1)
            except ValueError:  # m % max(1, m // p) != 0: PyTorch's rule for several stages
                assert m % max(1, m // p) != 0
                assert len(_bk("zb-h1", p, m)) == p
                refused += 1
                continue
            assert _bk("zb-h1", p, m) == theirs, (p, m)
            compared += 1
    assert compared > 50 and refused > 10


def test_zbv_orders() -> None:
    for p in GRID_P:
        for m in range(1, 20):
            assert _bk("zbv", p, m) == torch_multi(S.ScheduleZBVZeroBubble, p, m, 2, v_shape=True), (p, m)


def test_dualpipev_orders_pairs_included() -> None:
    """bubblekit's pairs are PyTorch's OVERLAP_F_B actions, at the same places (and read back)."""
    pairs = 0
    for p in GRID_P:
        for m in range(1, 20):
            if m < 2 * p:
                with pytest.raises(ValueError):
                    torch_multi(S.ScheduleDualPipeV, p, m, 2, v_shape=True)
                with pytest.raises(ValueError, match=f"m={m}"):
                    bk.schedule("dualpipev", p, m)
                continue
            theirs = torch_multi(S.ScheduleDualPipeV, p, m, 2, v_shape=True)
            assert _bk("dualpipev", p, m) == theirs, (p, m)
            pairs += sum(x.endswith("OVERLAP_F_B") for row in theirs.values() for x in row)
            text = "\n".join(" ".join(row) for _, row in sorted(theirs.items()))
            assert bk.Schedule.from_text(text, m=m).orders == bk.schedule("dualpipev", p, m).orders
    assert pairs > 100


def test_dualpipev_torch_pair_text() -> None:
    """PyTorch writes a pair as (0F7;7B3)OVERLAP_F_B, forward first; bubblekit reads and writes it."""
    stages = [FakeStage(0, 8, 4, 0), FakeStage(7, 8, 4, 0)]
    order = S.ScheduleDualPipeV(stages, 8).pipeline_order
    texts = [str(a) for row in order.values() for a in row if a is not None and a.sub_actions is not None]
    assert "(0F7;7B3)OVERLAP_F_B" in texts
    assert str(bk.parse_action("(0F7;7B3)OVERLAP_F_B")) == "0F7&7B3"
