"""bubblekit.text: number formatting and the self-rendering Table; bubblekit.compare."""

from __future__ import annotations

from fractions import Fraction

import pytest

import bubblekit as bk
from bubblekit.text import Table, format_value


def test_table_text_and_html_show_formatted_cells_and_keep_raw_values() -> None:
    t = Table(
        [{"schedule": "1f1b", "makespan": 33, "bubble_ratio": Fraction(3, 11)},
         {"schedule": "gpipe", "makespan": 33, "bubble_ratio": None}],
        formats={"bubble_ratio": "percent"}, headers={"makespan": "makespan (slots)"},
        title="p = 4, m = 8", note="bubble_ratio = idle / (p x makespan)",
    )
    text = str(t)
    assert text.splitlines()[0] == "p = 4, m = 8"
    assert "makespan (slots)" in text and "27.3%" in text and "—" in text
    assert text.splitlines()[-1] == "bubble_ratio = idle / (p x makespan)"
    html = t._repr_html_()
    assert "<table" in html and "27.3%" in html and "makespan (slots)" in html
    assert t.column("bubble_ratio") == [Fraction(3, 11), None]
    assert t.row(schedule="gpipe")["makespan"] == 33
    assert len(t) == 2 and [r["schedule"] for r in t] == ["1f1b", "gpipe"]


def test_table_numeric_columns_are_right_aligned_in_text() -> None:
    t = Table([("a", 1), ("bb", 100)], ["name", "n"])
    lines = str(t).splitlines()
    assert lines[2].endswith("  1") and lines[3].endswith("100")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"rows": [("a", 1)], "columns": ["x"]}, ["rows[0]", "1 columns"]),
        ({"rows": [{"x": 1, "y": 2}], "columns": ["x"]}, ["rows[0]", "'y'"]),
        ({"rows": [{"x": 1}], "formats": {"z": "percent"}}, ["formats", "'z'"]),
        ({"rows": [{"x": 1}], "formats": {"x": "percentage"}}, ["formats['x']", "percentage"]),
        ({"rows": [("a",)]}, ["columns must be given"]),
    ],
)
def test_table_bad_input_names_the_argument(kwargs: dict, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        Table(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_format_value() -> None:
    assert format_value(0.2727, "percent") == "27.3%"
    assert format_value(Fraction(57, 2), "decimal") == "28.5"
    assert format_value(True) == "yes" and format_value(None) == "—"
    with pytest.raises(ValueError, match="fmt"):
        format_value(1, "nope")


def test_compare_matches_the_simulator_and_the_closed_form() -> None:
    t = bk.compare(["gpipe", "1f1b", "interleaved"], 4, 8, v=2)
    assert [r["schedule"] for r in t] == ["GPipe", "1F1B", "interleaved 1F1B"]
    for name, row in zip(["gpipe", "1f1b", "interleaved"], t):
        r = bk.simulate(bk.schedule(name, 4, 8, 2 if name == "interleaved" else None))
        assert row["makespan"] == r.makespan and row["bubble_ratio"] == r.bubble_ratio
        assert row["peak"] == r.max_peak_activations
        form = bk.spec(name).closed_form(4, 8, r.schedule.v)
        assert form is not None and row["formula"] == pytest.approx(float(form[0]))
    assert t.row(schedule="GPipe")["peak"] > t.row(schedule="1F1B")["peak"]


def test_compare_takes_built_schedules_and_results_and_rejects_a_bare_name() -> None:
    s = bk.schedule("1f1b", 2, 4)
    t = bk.compare([s, bk.simulate(s, bk.Costs(f=1, b=1))])
    assert t.column("makespan") == [bk.simulate(s).makespan, bk.simulate(s, bk.Costs(f=1, b=1)).makespan]
    with pytest.raises(TypeError, match="schedules"):
        bk.compare("1f1b", 2, 4)
    with pytest.raises(ValueError, match="p and m"):
        bk.compare(["1f1b"])


def test_int_format_rounds_and_wide_characters_align() -> None:
    assert format_value(85_703.6, "int") == "85,704"
    t = Table([("气泡比例", 1), ("bubble", 22)], ["名称", "n"])
    lines = str(t).splitlines()
    # every line has the same display width: 中文 characters count as two columns
    assert len({Table._width(line) for line in lines[2:]}) == 1
