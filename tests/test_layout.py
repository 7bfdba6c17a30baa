"""Megatron-Core's pipeline layouts (issue 26): the layout string and the even/uneven split.

Examples are Megatron-Core's own: ``"Ettt|(tt|)*29,m|L"`` is the docstring example of
``PipelineParallelLayerLayout.parse_str_to_list`` (megatron/core/transformer/pipeline_parallel_layer_layout.py);
the split rules are ``get_num_layers_to_build`` (megatron/core/transformer/transformer_block.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit.layout import MAX_LAYOUT_LAYERS, megatron_split, parse_layout


def test_megatrons_docstring_example() -> None:
    layout = parse_layout("Ettt|(tt|)*29,m|L", 32)
    assert layout.stages == ("Ettt",) + ("tt",) * 29 + ("m", "L")
    assert layout.v == 1 and layout.transformer_layers == 3 + 58


def test_chunks_are_stages_over_p() -> None:
    layout = parse_layout("E|t*2|t*2|t*2|t*2|t*2|t*2|L", 4)
    assert layout.v == 2 and len(layout.stages) == 8


def test_costs_sum_the_layers_of_each_stage() -> None:
    layout = parse_layout("Et*3|t*4|t*4|t*3L", 4)
    costs = layout.costs(1, 2, embedding=(0.5, 1), loss=(1, 2))
    assert costs.f == (3.5, 4, 4, 4) and costs.b == (7, 8, 8, 8)
    assert sum(costs.activation) == pytest.approx(4)  # an even split gives every rank 1
    uneven = bk.simulate(bk.schedule("1f1b", 4, 8), costs)
    even = bk.simulate(bk.schedule("1f1b", 4, 8), parse_layout("Et*4|t*4|t*4|t*4L", 4).costs(1, 2))
    assert uneven.makespan < even.makespan  # the lighter end stages are not the critical ones (14 layers, not 16)


def test_even_split_reproduces_the_closed_form() -> None:
    for p, v, layers in ((2, 2, 8), (4, 2, 16), (4, 3, 24)):
        costs = megatron_split(layers, p, v).costs(1)
        result = bk.simulate(bk.schedule("interleaved", p, 2 * p, v), costs)
        assert result.bubble_ratio == pytest.approx(float(bk.bubble_ratio(p, 2 * p, v)))


def test_account_for_embedding_and_loss() -> None:
    assert megatron_split(14, 4, account_for_embedding=True, account_for_loss=True).stages == (
        "Ettt", "tttt", "tttt", "tttL")
    assert megatron_split(16, 4).stages == ("Etttt", "tttt", "tttt", "ttttL")
    with pytest.raises(ValueError, match="do not divide over p = 4"):
        megatron_split(16, 4, account_for_embedding=True)


def test_uneven_first_and_last_stages() -> None:
    assert megatron_split(14, 4, first=2, last=4).stages == ("Ett", "tttt", "tttt", "ttttL")
    with pytest.raises(ValueError, match="left over layers must be divisible"):
        megatron_split(15, 4, first=2, last=4)
    with pytest.raises(ValueError, match="cannot be combined"):
        megatron_split(14, 4, first=2, account_for_loss=True)


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 6), v=st.integers(1, 3), per=st.integers(1, 4))
def test_split_then_text_round_trips(p: int, v: int, per: int) -> None:
    layout = megatron_split(p * v * per, p, v)
    again = parse_layout(layout.text, p)
    assert again.stages == layout.stages and again.v == v
    assert layout.transformer_layers == p * v * per


@pytest.mark.parametrize("text, p, words", [
    ("Ex|L", 2, "character 'x'"), ("E|t|L", 2, "not a multiple of p = 2"), ("tE|L", 2, "'E' must come first"),
    ("E|tL|t", 3, "'L' must come last"), ("Emt|L", 2, "after every transformer layer"),
    ("E(t(t))*2|L", 1, "cannot nest"), ("Et*99999999|L", 1, "too large"), ("Et*99999|t*9999|L", 3, "MAX_LAYOUT_LAYERS"),
    ("", 1, "'E' must come first"), ("EL|EL", 2, "exactly once"),
])
def test_bad_layouts_name_the_rule(text: str, p: int, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace("*", r"\*")):
        parse_layout(text, p)


@pytest.mark.parametrize("bad", [None, 5, b"E|L", ["E", "L"]])
def test_layout_must_be_text(bad: object) -> None:
    with pytest.raises(TypeError, match="layout must be a str"):
        parse_layout(bad, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs, words", [
    ({"num_layers": 0, "p": 1}, "num_layers"), ({"num_layers": 8, "p": 0}, "p"), ({"num_layers": 8, "p": 2, "v": 3}, "v = 3"),
    ({"num_layers": 8, "p": 2, "account_for_embedding": "yes"}, "True or False"),
    ({"num_layers": 10 ** 9, "p": 2}, "MAX_LAYOUT_LAYERS"), ({"num_layers": 4, "p": 2, "first": 5}, "more than num_layers"),
])
def test_bad_split_arguments(kwargs: dict, words: str) -> None:
    with pytest.raises((TypeError, ValueError), match=words):
        megatron_split(**kwargs)


def test_a_stage_without_work_is_refused() -> None:
    layout = parse_layout("E|t*4|t*4|L", 4)
    with pytest.raises(ValueError, match="stage 0 .* does no work"):
        layout.costs(1)
    costs = layout.costs(1, embedding=(0.5, 0.5), loss=(1, 1))
    assert costs.f[0] == 0.5 and costs.f[3] == 1


def test_costs_arguments_are_checked() -> None:
    layout = parse_layout("Et*2|t*2L", 2)
    with pytest.raises(TypeError, match="embedding must be a"):
        layout.costs(1, embedding=0.5)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="layer_f"):
        layout.costs(-1)
    with pytest.raises(ValueError, match="kind must be one of"):
        layout.count("x")
    assert MAX_LAYOUT_LAYERS >= 10_000
    assert bk.layout.parse_layout is parse_layout
