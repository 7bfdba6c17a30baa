"""One term per idea in the Chinese edition (issue 24).

The term table is ``bubblekit/data/zh_terms.json``: per concept the preferred Chinese word
(``zh``), the source article's own word where it has one (``article``), the non-preferred
variants (``avoid``, regular expressions) and the contexts that make a variant legitimate
(``allow``). The Chinese glossary (``notebooks/zh/00_start_here.ipynb``, cell ``l00-19``, with
its 原文用词 column) is checked against the table; the edition (Chinese markdown, code comments
and string literals, README.zh-CN.md, the instructor guide, bubblekit's zh catalogue strings:
``scripts/zh_lint.py``'s ``chinese_texts``, and every Chinese string literal in bubblekit's
source, ``bubblekit_chinese_literals``) may not use a listed variant, except inside a
passage quoted verbatim from the article or where an ``allow`` expression matches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

import pytest
from _scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "notebooks" / "zh" / "00_start_here.ipynb"
GLOSSARY_CELL = "l00-19"


def _load_lint() -> ModuleType:
    return load_script("zh_lint_under_test", ROOT / "scripts" / "zh_lint.py")


lint = _load_lint()
TERMS = lint.load_terms()


def _text(body: str, kind: str = "markdown") -> object:
    return lint.Text("notebooks/zh/test.ipynb", "cell", kind, body)


def test_the_table_is_well_formed() -> None:
    ids = [t["id"] for t in TERMS]
    assert len(ids) == len(set(ids))
    for t in TERMS:
        assert t["zh"].strip() and t["en"].strip(), t
        for pattern in t["avoid"] + t["allow"]:
            re.compile(pattern)
        # the preferred word is not one of its own variants
        assert not any(re.search(v, t["zh"]) for v in t["avoid"]), t


def _glossary_rows() -> dict[str, dict[str, str]]:
    cells = json.loads(GLOSSARY.read_text(encoding="utf-8"))["cells"]
    source = "".join(next(c["source"] for c in cells if c.get("id") == GLOSSARY_CELL))
    rows = [[x.strip() for x in line.strip().strip("|").split("|")]
            for line in source.splitlines() if line.startswith("|") and not line.startswith("|---")]
    header, body = rows[0], rows[1:]
    assert header[:3] == ["英文", "中文", "原文用词"], header
    return {row[0]: dict(zip(header, row, strict=True)) for row in body}


def test_the_glossary_is_the_term_table() -> None:
    rows = _glossary_rows()
    listed = [t for t in TERMS if t.get("glossary")]
    assert len(listed) >= 12
    for t in listed:
        row = rows.get(t["glossary"])
        assert row is not None, f"the glossary has no row {t['glossary']!r} (term {t['id']!r})"
        assert t["zh"] in row["中文"] + row["含义"], f"{t['id']}: the glossary row does not use {t['zh']!r}: {row}"
        assert row["原文用词"] == (t["article"] or "—"), f"{t['id']}: 原文用词 is {row['原文用词']!r}, the table says {t['article']!r}"
        for variant in t["avoid"]:
            assert not re.search(variant, row["中文"] + row["含义"]), f"{t['id']}: the glossary itself uses {variant!r}"


def test_the_edition_uses_one_term_per_idea() -> None:
    texts = list(lint.chinese_texts()) + list(lint.bubblekit_chinese_literals())
    found = lint.term_violations(texts, TERMS)
    assert not found, "non-preferred terms in the Chinese edition (bubblekit/data/zh_terms.json):\n" + "\n".join(found)


@pytest.mark.parametrize(("body", "kind"), [
    ("**填充**（预热）：工位加工第一辆车之前的空闲", "markdown"),  # the old lesson 01 gloss (预热 is warm-up)
    ("两者一步的总时长都是 (m + p − 1)(F + B)。", "markdown"),
    ("在仿真里怎么找到它？", "markdown"),
    ("用计算换显存：激活重计算", "message"),
    ("= 空闲 / (p × makespan)", "message"),
    ("# 每个操作的耗时", "comment"),
    ("'回放这一步里的慢动作'", "string"),
    ("落后者可能主导一整步", "markdown"),
    ("**拾取**（pickup）", "markdown"),
    ("DualPipe 由 F&B 块构成", "markdown"),  # the old lesson 00 glossary (the course says F&B 对)
])
def test_the_check_finds_a_variant(body: str, kind: str) -> None:
    assert lint.term_violations([_text(body, kind)], TERMS), f"a variant goes unnoticed in {body!r}"


@pytest.mark.parametrize(("body", "kind"), [
    ("单步耗时用 `r.makespan` 读出", "markdown"),  # code
    ("\"makespan\"", "string"),  # a column key
    ("单步耗时 {makespan} 个时间槽", "message"),  # a format field
    ("**单步耗时**（makespan）：一步的时长", "markdown"),  # the first-use gloss
    ("共享机器上的操作系统把某个 rank 调度走了", "markdown"),
    ("| 英文 | 中文 | 原文用词 |\n|---|---|---|\n| interleaved 1F1B | 交错式 1F1B | 交错调度 |", "markdown"),
])
def test_the_check_leaves_legitimate_uses_alone(body: str, kind: str) -> None:
    assert lint.term_violations([_text(body, kind)], TERMS) == []


def test_a_variant_inside_a_verbatim_article_quote_is_allowed() -> None:
    stage = [{"id": "stage", "zh": "流水级", "avoid": ["阶段"], "allow": []}]
    quoted = "原文说：“GPU 在反向传播时，可以同步把梯度发给上一个阶段，让通信藏在计算背后”。"
    assert lint.term_violations([_text(quoted)], stage) == []
    assert lint.term_violations([_text(quoted + "上一个阶段就是前一个流水级。")], stage)
