"""The Chinese edition's tables and cost lines speak Chinese (issue 24).

A table's column keys stay the same in both languages (``t.row(...)["bubble_ratio"]`` works in either edition), but
what the learner reads, the headers, the notes and :meth:`Costs.describe`, is the language's own.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.compare import per_rank, sweep
from bubblekit.i18n import using_language

#: an English identifier as a header: snake_case, or a bare English word of three letters or more
_ENGLISHY = re.compile(r"[a-z]+_[a-z_]+|^[A-Za-z]{3,}$")


def _tables() -> dict[str, bk.Table]:
    """The course's comparison tables, built in the current language."""
    from bubblekit.analysis import planner

    model = bk.memory.Model(layers=8, hidden=1024, heads=8, seq=1024)
    return {
        "compare": bk.compare(["1f1b", "zb-h1", "interleaved"], 4, 8, v=2, hops=True),
        "per_rank": per_rank(["1f1b", "zb-h1"], 4, 8),
        "sweep": sweep(["1f1b", "zb-h1"], 4, over="m", values=[4, 8], metric="bubble_ratio"),
        "planner": planner.plan(4, ms=[8], schedules=["1f1b", "zb-h1"], memory_budget=8).table(),
        "frontier": bk.memory.frontier(model, 4, 8),
        "timelines": bk.timeline.compare_timelines({"a": bk.simulate(bk.schedule("gpipe", 4, 8)),
                                                    "b": bk.simulate(bk.schedule("1f1b", 4, 8))}),
        "zb_table5": bk.published.zb_table5_table(),
        "lesson_table": bk.Table([{"调度": "1F1B", "bubble_ratio": 0.27, "bubble_overhead": 0.375}]),
    }


def test_chinese_headers_name_no_identifier() -> None:
    with using_language("zh"):
        for name, table in _tables().items():
            for key in table.columns:
                header = table.headers[key]
                assert not _ENGLISHY.search(header) or header in ("v", "#", "p", "m", "bubblekit"), (name, key, header)


def test_the_column_keys_stay_in_both_languages() -> None:
    with using_language("zh"):
        t = bk.compare(["1f1b"], 4, 8)
        assert t.headers["bubble_ratio"] == "气泡比例" and t.headers["bubble_overhead"] == "气泡开销"
        assert t.row(schedule="1F1B")["bubble_ratio"] == bk.simulate(bk.schedule("1f1b", 4, 8)).bubble_ratio
        assert "气泡比例（bubble_ratio）" in t.note
    with using_language("en"):
        t = bk.compare(["1f1b"], 4, 8)
        assert t.headers["bubble_ratio"] == "bubble_ratio"
        assert bk.Table([{"bubble_ratio": 0.5}]).headers == {"bubble_ratio": "bubble_ratio"}
    with using_language("zh"):
        named = bk.Table([{"bubble_ratio": 0.5}], headers={"bubble_ratio": "整步气泡"})
        assert named.headers["bubble_ratio"] == "整步气泡" and named.column("bubble_ratio") == [0.5]


def test_describe_in_each_language() -> None:
    costs = bk.Costs(f=1, i=1, w=1, comm=Fraction(1, 2))
    with using_language("en"):
        assert costs.describe() == "F=1 B=2 (I=1 W=1) comm=1/2 slot"
        assert costs.describe(split=False, name_pair=True) == "F=1 B=2 F&B=F+B comm=1/2 slot"
        assert bk.Costs(fb="max").describe() == "F=1 B=2 (I=1 W=1) F&B=max(F,B) comm=0 slot"
    with using_language("zh"):
        assert costs.describe() == "F = 1，B = 2（I = 1，W = 1），通信延迟 = 1/2（单位：时间槽）"
        assert bk.h200_costs().describe(split=False) == "F = 2.734，B = 6.594，通信延迟 = 0（单位：ms）"
        wired = bk.Costs(comm=1, activation_bytes=100, gradient_bytes=100, bandwidth=50, dp_reduce=3)
        text = wired.describe()
        assert "传输 = 2" in text and "梯度归约 = 3" in text and not re.search(r"[a-z]{3,}", text), text


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_describe_refuses_a_non_bool_flag(bad: object) -> None:
    with pytest.raises(TypeError, match="name_pair must be True or False"):
        bk.Costs().describe(name_pair=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="split must be True or False"):
        bk.Costs().describe(split=bad)  # type: ignore[arg-type]
