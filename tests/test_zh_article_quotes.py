"""The Chinese edition quotes the (Chinese) source article verbatim (issue 24).

The source article is Chinese, so a passage the Chinese edition puts in quotation marks as the
article's words must be the article's words, not a back-translation from the English edition.
``bubblekit/data/article_quotes.json`` stores the excerpts the edition quotes, verbatim, with
where they stand in the article and the SHA-256 of the article file.

What counts as "presented as the article's words" is ``scripts/zh_lint.py``'s
``article_quotes_in`` (read its docstring): a passage between “…” or 「…」 with a Chinese character
in it, not a screen label (“最低”一列), whose paragraph names the article (原文, 文章, 作者 …)
before the closing mark, or which shares a run of six or more Chinese characters with a stored
excerpt (a near-quote, named or not). Every such passage must be a substring of a stored excerpt,
whitespace, ``*`` and quotation marks aside.

The article itself is not in the repository. To check the store against it, point the
environment variable ``BUBBLEKIT_ARTICLE`` at the article's text file; the last test then checks
its SHA-256 and that every excerpt is in it at its recorded offset (skipped otherwise).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from types import ModuleType

import pytest
from _scripts import load_script

ROOT = Path(__file__).resolve().parent.parent


def _load_lint() -> ModuleType:
    return load_script("zh_lint_under_test", ROOT / "scripts" / "zh_lint.py")


lint = _load_lint()
STORE = lint.load_quotes()
EXCERPTS = [lint.normalise(e["text"]) for e in STORE["excerpts"]]
#: The article's section headings (its text has no others).
SECTIONS = {"可视化演示", "气泡是什么", "气泡成因分析", "气泡比例计算", "调度策略对比", "气泡优化方法",
            "工程实践要点", "AI 应用场景", "Python 演示", "常见误区", "面试题"}


def _text(body: str) -> object:
    return lint.Text("notebooks/zh/test.ipynb", "cell", "markdown", body)


def _flagged(body: str) -> list[str]:
    """The passages of ``body`` presented as the article's words that the store does not hold."""
    quotes = lint.article_quotes_in(_text(body), EXCERPTS)
    return [q.text for q in lint.unstored_quotes(quotes, STORE)]


@pytest.fixture(scope="module")
def edition() -> list[object]:
    return list(lint.chinese_texts())


def test_every_passage_quoted_as_the_article_is_the_article(edition: list[object]) -> None:
    quotes = lint.article_quotes(edition, EXCERPTS)
    assert len(quotes) >= 20, "the detector finds the edition's quotes of the article (it found too few)"
    missing = lint.unstored_quotes(quotes, STORE)
    assert not missing, (
        "passages presented as the article's words that are not in bubblekit/data/article_quotes.json "
        "(quote the article's exact words, or a shorter exact span; never paraphrase inside quotation marks):\n"
        + "\n".join(f"{q.file} {q.where}: “{q.text}”" for q in missing))


#: The edition's text before issue 24: back-translations put in quotation marks as the article's words.
OLD_MISQUOTES = {
    "04 d2cd8021": "原文把“气泡被切碎”算作 1F1B 的优点，认为这些碎片“可以通过计算与通信的重叠来隐藏”。",
    "05 8e1b79d1": "> **关于原文。** 原文的例子“m 从 4 增加到 32，气泡从 42.9% 降到 8.6%”对应的是 p = 4。"
                   "原文警告 m 太大会“撑爆显存”，这对 GPipe 成立。",
    "05 1463c599": "原文同时警告：“每个微批都要保存激活值，m 太大会撑爆显存”。下面取 p = 4：",
    "05 eb59ebab": "原文的说法是：“v 越大效果越好，但…通信次数增加”。",
    "05 eedb01e9": "原文说：“在计算的*同时*把梯度发给前一个流水级，让传输藏在计算后面”。",
    "05 30bdcac8": "原文说：“层数相同的 p 张 GPU，计算量并不相同：Attention 层和 MLP 层的耗时差异很大”。",
    "06 f2e9507f": "**80% 规则。**“如果一张 GPU 的 kernel 时间不到单步耗时的 80%，就看看它是不是在等相邻的卡。”"
                   "这里两个 rank 都不到 80%。",
    "06 788b1b7c": "原文的第二步：“固定模型和 GPU 数，m 从 2 开始逐次翻倍，记录吞吐；吞吐先随 m 上升，然后趋平，甚至下降。”",
    "06 c0930d4d": "> **关于原文：** 原文说气泡在“火焰图里表现为一段空白”。但火焰图的横轴不是时间。",
    "01 l01-21": "> **关于原文。** 这里集中列出对它的更正：\n> * 气泡并不表现为“火焰图中的一段空白”：火焰图的横轴不是时间；",
    "ex 05.1": "原文说“m 从 4 增加到 32，气泡从 42.9% 降到 8.6%”（如课上所示，这对应 p = 4）。",
    "ex 06.2": "按原文的规则（“kernel 时间低于 80% 就要查一查”），哪些 rank 会被标出来？",
}


@pytest.mark.parametrize("where", sorted(OLD_MISQUOTES))
def test_the_old_misquotes_would_have_failed(where: str) -> None:
    assert _flagged(OLD_MISQUOTES[where]), f"{where}: the detector misses a back-translated quote"


def test_the_article_named_or_a_near_quote_makes_a_quote() -> None:
    # named: the paragraph names the article before the quote closes
    assert _flagged("作者写道：“流水线永远不会空转”。") == ["流水线永远不会空转"]
    # a quote whose paragraph does not name the article, sharing six Chinese characters with it
    assert _flagged("有人说“每个微批都要存激活值，所以 m 必须很小”。")
    # quotes that are not the article's: a screen label, a sentence that names nothing and copies nothing
    assert _flagged("原文的第三步给出了阈值（见“最低”一列）。") == []
    assert _flagged("常见的误解是“1F1B 的气泡比 GPipe 小”。") == []
    # the article's exact words pass, whitespace, emphasis and inner quotation marks aside
    assert _flagged("原文说“m 从 4 涨到 32，气泡比例会从 42.9% 一路降到 8.6%”。") == []
    assert _flagged("原文说“气泡在火焰图里通常表现为‘一段空白’”。") == []
    assert _flagged("原文说：“p 个 GPU 拿到的层数相同，*不代表*计算量相同。”") == []


def test_the_store_names_its_source() -> None:
    article = STORE["article"]
    assert re.fullmatch(r"[0-9a-f]{64}", article["sha256"])
    assert article["title"] == "流水线并行气泡分析与优化"
    assert article["env_var"] == "BUBBLEKIT_ARTICLE"
    ids = [e["id"] for e in STORE["excerpts"]]
    assert len(ids) == len(set(ids))
    offsets = [e["offset"] for e in STORE["excerpts"]]
    assert offsets == sorted(offsets), "excerpts are stored in the article's order"
    for e in STORE["excerpts"]:
        assert e["section"] in SECTIONS, e
        assert e["text"] == e["text"].strip() and lint._CJK.search(e["text"]), e
        assert isinstance(e["paragraph"], int) and e["paragraph"] >= 0, e


ARTICLE = os.environ.get("BUBBLEKIT_ARTICLE")


@pytest.mark.skipif(not ARTICLE, reason="set BUBBLEKIT_ARTICLE to the source article's text file to check the store")
def test_every_excerpt_is_in_the_article() -> None:
    path = Path(str(ARTICLE))
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == STORE["article"]["sha256"], f"{path} is not the article the store was made from"
    text = data.decode("utf-8")
    assert len(text) == STORE["article"]["characters"]
    assert text.split("\n", 1)[0].strip() == STORE["article"]["title"]
    for e in STORE["excerpts"]:
        assert text[e["offset"]:e["offset"] + len(e["text"])] == e["text"], f"{e['id']} is not at its offset"
