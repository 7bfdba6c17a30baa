"""The schedule reader's and checker's refusals speak the lesson's language (issue 24).

A learner who writes a schedule by hand in a Chinese lesson (lesson 01's whiteboard, the
builder page) meets these messages: under ``bk.set_language("zh")`` they are Chinese, with
the action names, rank numbers and ranges as they are; in English they are unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

import bubblekit as bk
from bubblekit.i18n import using_language

#: (schedule text, keyword arguments of from_text, the English message's tell-tale, a Chinese one)
CASES = [
    ("rank 0: 0F0 0F0 0B0\nrank 1: 1F0 1B0", {}, "0F0 appears 2 times", "0F0 出现了 2 次"),
    ("rank 0: 0F0 0F2 0B0\nrank 1: 1F0 1B0", {"m": 2}, "Rank 0 has 0F2, but microbatches are 0..1",
     "rank 0 上有 0F2，但微批编号只能是 0 到 1"),
    ("rank 0: 0F0 0B0 0I0 0W0\nrank 1: 1F0 1B0", {}, "stage 0 microbatch 0 has both B and I/W",
     "流水级 0 的微批 0 既有 B 又有 I/W"),
    ("rank 0: 0F0 1F0\nrank 1: 1F0 1B0 0B0", {}, "stage 1 has actions on rank 0 and rank 1",
     "流水级 1 的动作既出现在 rank 0 上，又出现在 rank 1 上"),
    ("rank 0: 0F0 0B0\nrank 3: 1F0 1B0", {}, "ranks [1, 2] have no line", "rank [1, 2] 没有对应的行"),
    ("rank 0: 0F0 0B0\nrank 1: 1F0\nrank 1: 1B0", {}, "line 3: rank 1 is given twice", "第 3 行：rank 1 写了两次"),
    ("# only a comment", {}, "the schedule text has no ranks", "调度文本里一个 rank 也没有"),
    ("rank 0: 0F0 0B0\nrank 1:", {}, "rank(s) [1] have no actions yet", "rank [1] 还没有动作"),
    ("rank 0: 0F0 0F1 0B0", {}, "0B1 (or 0I1 and 0W1) is missing (rank 0)", "rank 0 缺少 0B1（或拆开的 0I1 和 0W1）"),
]

#: English words a Chinese message may keep: the action kinds' letters and "rank", the course's word for a device
ALLOWED = {"rank", "B", "I", "W", "F"}


@pytest.mark.parametrize(("text", "kwargs", "english", "chinese"), CASES)
def test_schedule_refusals_in_both_languages(text: str, kwargs: dict, english: str, chinese: str) -> None:
    with using_language("en"), pytest.raises(bk.ScheduleError) as en:
        bk.Schedule.from_text(text, **kwargs)
    assert english.lower() in str(en.value).lower()
    with using_language("zh"), pytest.raises(bk.ScheduleError) as zh:
        bk.Schedule.from_text(text, **kwargs)
    message = str(zh.value)
    assert chinese in message
    words = set(re.findall(r"[A-Za-z]{2,}", re.sub(r"\b[0-9]+[A-Z][0-9]+\b", "", message)))
    assert words <= ALLOWED, f"English left in a Chinese refusal: {sorted(words - ALLOWED)} in {message!r}"


def test_pipeline_and_pair_refusals_in_chinese() -> None:
    """The DualPipe-style cases: a microbatch outside a stage's pipeline, a pair split over two ranks."""
    dual = bk.schedule("dualpipe", 4, 8)  # two pipelines: stage 0 carries microbatches 0..3
    orders = list(dual.orders)
    orders[0] = tuple(bk.Action(0, "F", 7) if a == bk.Action(0, "F", 0) else a for a in orders[0])
    with using_language("zh"):
        with pytest.raises(bk.ScheduleError) as err:
            replace(dual, orders=tuple(orders)).validate()
        assert "rank 0 上有 0F7，但微批编号只能是 0 到 3（流水级 0 属于第 0 条流水线）" in str(err.value)
        assert "rank 0 缺少 0F0" in str(err.value)
        with pytest.raises(bk.ScheduleError) as err:
            bk.Schedule.from_text("rank 0: 0F0 0F0&1B0\nrank 1: 1F0 1B0 0B0")
        assert "F&B 对 0F0&1B0 的两个部分必须在同一个 rank 上" in str(err.value)
