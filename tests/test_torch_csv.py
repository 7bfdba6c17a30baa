"""PyTorch's schedule files: ``Schedule.to_torch_csv`` / ``from_torch_csv`` against torch's own ``_dump_csv`` / ``_load_csv``.

bubblekit writes the files with the standard library (the core imports no torch); where torch
is installed, every registered schedule PyTorch can express is written by bubblekit, loaded by
PyTorch's ``_PipelineScheduleRuntime._load_csv`` (which validates it and lowers it with
communication), dumped again by PyTorch in both formats, and compared byte for byte. Without
torch those tests skip, except under ``CI=true`` (CI installs torch), where they fail.
The hostile-input tests need no torch.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.schedules import ScheduleError

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if not HAVE_TORCH and os.environ.get("CI") == "true":  # pragma: no cover - CI installs torch
    raise RuntimeError("CI=true but torch is not installed: the torch round-trip tests would be skipped")
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed (bubblekit[lab])")


def _settings() -> list[tuple[str, int, int, int | None]]:
    """Every registered schedule at a few (p, m, v) it accepts."""
    out = []
    for name in bk.names():
        entry = bk.spec(name)
        for p in (2, 3, 4):
            for m in (1, 3, 4, 8, 9):
                for v in ((None,) if entry.chunks != "many" else (2, 3)):
                    if entry.allows(p, m, v):
                        out.append((name, p, m, v))
    return out


SETTINGS = _settings()
EXPRESSIBLE = [s for s in SETTINGS if bk.schedule(*s).pipes == 1]


class FakeStage:
    """What ``PipelineScheduleMulti.__init__`` reads of its first stage, nothing more."""

    def __init__(self, num_stages: int, group_size: int) -> None:
        self.stage_index = 0
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = 0
        self.submod = None
        self.is_first, self.is_last = True, num_stages == 1


def _torch_runtime(n_stages: int, p: int, m: int) -> Any:
    from torch.distributed.pipelining import schedules as S

    return S._PipelineScheduleRuntime([FakeStage(n_stages, p)], m)


def _read(path: Path) -> str:
    with open(path, newline="", encoding="utf-8") as fh:
        return fh.read()


def test_the_registry_has_schedules_pytorch_cannot_express() -> None:
    """The grid covers every registered schedule; only the two-pipe ones fall out (DualPipe)."""
    assert {s[0] for s in SETTINGS} == set(bk.names())
    outside = {s[0] for s in SETTINGS} - {s[0] for s in EXPRESSIBLE}
    assert outside == {"dualpipe"}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("setting", EXPRESSIBLE, ids=lambda s: "-".join(map(str, s)))
def test_round_trip_equals_pytorchs_dump_and_load(setting: tuple[str, int, int, int | None], tmp_path: Path) -> None:
    name, p, m, v = setting
    sched = bk.schedule(name, p, m, v)
    ours = tmp_path / "bubblekit.csv"
    assert sched.to_torch_csv(ours) == _read(ours)
    runtime = _torch_runtime(sched.n_stages, p, m)
    runtime._load_csv(str(ours))  # PyTorch validates it, infers the placement, lowers it with comms
    assert [runtime.stage_index_to_group_rank[s] for s in range(sched.n_stages)] == list(sched.placement)
    assert {r: [str(a) for a in row] for r, row in runtime.pipeline_order.items()} == sched.to_torch_orders()
    compute, comms = tmp_path / "torch.csv", tmp_path / "torch-comms.csv"
    runtime._dump_csv(str(compute), format="compute_only")
    runtime._dump_csv(str(comms), format="compute_comms")
    assert _read(compute) == sched.to_torch_csv()
    assert _read(comms) == sched.to_torch_csv(comms=True)
    for path in (compute, comms):  # and back: PyTorch's files read as the same schedule
        back = bk.Schedule.from_torch_csv(path, m=m)
        assert (back.orders, back.placement, back.m) == (sched.orders, sched.placement, sched.m)


@needs_torch
@pytest.mark.torch
def test_pytorchs_own_schedule_files_read_back(tmp_path: Path) -> None:
    """Files of PyTorch's own classes, idle slots (empty cells) and all, read as bubblekit's schedule."""
    from torch.distributed.pipelining import schedules as S

    cases = [("interleaved", S.ScheduleInterleaved1F1B, 2, 4, 2), ("looped-bfs", S.ScheduleLoopedBFS, 2, 4, 2),
             ("zbv", S.ScheduleZBVZeroBubble, 2, 4, 2), ("dualpipev", S.ScheduleDualPipeV, 2, 8, 2)]
    idle = 0
    for name, cls, p, m, v in cases:
        n = p * v
        stages = [FakeStage(n, p)]
        if name in ("zbv", "dualpipev"):
            stages.append(FakeStage(n, p))
            stages[1].stage_index = n - 1
        else:
            for k in range(1, v):
                stages.append(FakeStage(n, p))
                stages[k].stage_index = k * p
        theirs = cls(stages, m)
        for fmt in ("compute_only", "compute_comms"):
            path = tmp_path / f"{name}-{fmt}.csv"
            theirs._dump_csv(str(path), format=fmt)
            idle += ",," in _read(path)
            back = bk.Schedule.from_torch_csv(path, m=m)
            assert back.orders == bk.schedule(name, p, m, v if name in ("interleaved", "looped-bfs") else None).orders
    assert idle  # some of PyTorch's files have idle slots (empty cells)


def test_files_need_no_torch_and_name_their_format() -> None:
    sched = bk.schedule("zb-h1", 2, 2)
    assert sched.to_torch_csv() == "0F0,0F1,0I0,0W0,0I1,0W1\r\n1F0,1I0,1F1,1I1,1W0,1W1\r\n"
    comms = sched.to_torch_csv(comms=True).splitlines()
    assert comms[0].startswith("0UNSHARD,0F0,0SEND_F0,") and comms[0].endswith("0REDUCE_GRAD,0RESHARD")
    assert comms[1].startswith("1UNSHARD,1RECV_F0,1F0,1RECV_F1,1I0,1SEND_B0,")  # rank 0 sent F1 first
    pairs = bk.schedule("dualpipev", 2, 4)
    assert "(0F3;3B1)OVERLAP_F_B" in pairs.to_torch_csv()
    assert bk.Schedule.from_torch_csv(text=pairs.to_torch_csv(comms=True)).orders == pairs.orders


# ---------------------------------------------------------------------- hostile input
def test_two_pipes_are_refused_naming_the_schedule() -> None:
    sched = bk.schedule("dualpipe", 2, 4)
    assert "2 pipelines" in (sched.torch_problem() or "")
    with pytest.raises(ScheduleError, match="PyTorch cannot express the schedule 'dualpipe': it runs 2 pipelines"):
        sched.to_torch_csv()
    assert bk.schedule("1f1b", 2, 4).torch_problem() is None


def test_an_existing_file_is_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "mine.csv"
    out.write_text("my notes\n", encoding="utf-8")
    sched = bk.schedule("1f1b", 2, 3)
    with pytest.raises(FileExistsError, match="exists and is kept: pass force=True"):
        sched.to_torch_csv(out)
    assert out.read_text(encoding="utf-8") == "my notes\n"
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "nowhere.csv")
    with pytest.raises(FileExistsError):
        sched.to_torch_csv(link)
    assert not (tmp_path / "nowhere.csv").exists()
    assert sched.to_torch_csv(out, force=True) == _read(out)
    with pytest.raises(ValueError, match="is a folder"):
        sched.to_torch_csv(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        sched.to_torch_csv(tmp_path / "no" / "such.csv")
    with pytest.raises(TypeError, match="path must be a file name"):
        sched.to_torch_csv(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="comms must be True or False"):
        sched.to_torch_csv(comms="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="force must be True or False"):
        sched.to_torch_csv(out, force=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("text,match", [
    ("0F0,0X1\r\n", r"row 1 \(rank 0\), cell 2: cannot read '0X1'"),
    ("0F0,0F\r\n", "a compute action names its microbatch"),
    ("0F0junk\r\n", "cannot read '0F0junk'"),
    ("0F0 0F1\r\n", "cannot read '0F0 0F1'"),
    ("0F0;0B0\r\n", "cannot read '0F0;0B0'"),
    ("(0F1;1B0)OVERLAP\r\n", "a bracketed cell is an overlapped pair"),
    ("(0F1;1B0;1F0)OVERLAP_F_B\r\n", "an overlapped pair holds two compute actions"),
    ("(0F1;0UNSHARD)OVERLAP_F_B\r\n", "an overlapped pair holds two compute actions"),
    ("0F0,0B0\r\n(1F1;1F0)OVERLAP_F_B\r\n", r"row 2 \(rank 1\): cannot read action '1F1&1F0'"),
    ("٣F0\r\n", "cannot read"),
    ("", "has no rows"),
    ("\r\n\r\n", "has no rows"),
    ("0F0,0B0\r\n\r\n1F0,1B0\r\n", "every rank needs the actions of at least one stage"),  # an empty row in the middle
    ('"0F0\r\n', "not a readable CSV file"),
    ("0F0,0F0,0B0,0B0\r\n", "appears 2 times"),
    ("a\x00b\r\n", "NUL"),
])
def test_bad_files_name_the_problem(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bk.Schedule.from_torch_csv(text=text)


def test_wrong_row_count_and_bad_arguments(tmp_path: Path) -> None:
    text = bk.schedule("1f1b", 2, 4).to_torch_csv()
    assert bk.Schedule.from_torch_csv(text=text, p=2).p == 2
    with pytest.raises(ScheduleError, match="has 2 row\\(s\\) but p=3"):
        bk.Schedule.from_torch_csv(text=text, p=3)
    with pytest.raises(ValueError, match="microbatches are 0..2"):
        bk.Schedule.from_torch_csv(text=text, m=3)
    with pytest.raises(TypeError, match="exactly one of path"):
        bk.Schedule.from_torch_csv()
    with pytest.raises(TypeError, match="exactly one of path"):
        bk.Schedule.from_torch_csv(tmp_path / "x.csv", text=text)
    with pytest.raises(TypeError, match="text must be a string"):
        bk.Schedule.from_torch_csv(text=b"0F0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not exist"):
        bk.Schedule.from_torch_csv(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="is a folder"):
        bk.Schedule.from_torch_csv(tmp_path)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00F")
    with pytest.raises(ValueError, match="not UTF-8 text"):
        bk.Schedule.from_torch_csv(binary)
    big = tmp_path / "big.csv"
    big.write_text("0F0," * 5000, encoding="utf-8")
    with pytest.raises(ValueError, match="more than a schedule of max_actions=100"):
        bk.Schedule.from_torch_csv(big, max_actions=100)
    with pytest.raises(ValueError, match="max_actions=100"):
        bk.Schedule.from_torch_csv(text="0F0," * 5000, max_actions=100)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert bk.Schedule.from_torch_csv(bom).orders == bk.schedule("1f1b", 2, 4).orders
    with pytest.raises(TypeError, match="m must be"):
        bk.Schedule.from_torch_csv(text=text, m=2.5)  # type: ignore[arg-type]
