"""English left in the Chinese edition, counted per file; a file's count may only go down (issue 24).

``scripts/zh_lint.py english`` prints, per Chinese file, the English words a learner reads:
markdown, code comments, string literals shown to the learner, text outputs (table headers and
values, printed lines, titles) and, as ``bubblekit:zh``, the zh strings of bubblekit's catalogue.
Not counted (``zh_lint.english_words``): code (backtick spans, fenced blocks, identifiers, key
literals), URLs and link targets, LaTeX except ``\\text{...}``, HTML tags and styles, quoted
titles with no Chinese (citations), a glossary's 英文 column, acronyms of up to four capitals,
and the allow-list ``zh_lint.ALLOWED`` (schedule names, proper nouns, tools, units, Python names,
and the words Chinese ML writing keeps in English: rank, chunk, batch, token, kernel, trace ...).

Each file's count may not exceed its ceiling in ``tests/data/zh_english_ceilings.json``; when
you remove English, lower the ceiling to the new count (``python scripts/zh_lint.py english
--json``). The counts before issue 24's fixes and after them are in
``docs/reviews/zh_english_count.md`` (761 words before, on the edition as it was; the same
counter).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from _scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
CEILINGS = ROOT / "tests" / "data" / "zh_english_ceilings.json"


def _load_lint() -> ModuleType:
    return load_script("zh_lint_under_test", ROOT / "scripts" / "zh_lint.py")


lint = _load_lint()


def _words(body: str, kind: str = "markdown") -> list[str]:
    return lint.english_words(lint.Text("notebooks/zh/x.ipynb", "cell", kind, body))


@pytest.fixture(scope="module")
def counts() -> dict[str, int]:
    return {f: sum(c.values()) for f, c in lint.english_counts().items()}


def test_no_file_has_more_english_than_its_ceiling(counts: dict[str, int]) -> None:
    ceilings = json.loads(CEILINGS.read_text(encoding="utf-8"))
    over = {f: (n, ceilings.get(f)) for f, n in counts.items() if f not in ceilings or n > ceilings[f]}
    assert not over, ("English words above the file's ceiling (count, ceiling) — write it in Chinese, "
                      "or, for a new file, add its ceiling to tests/data/zh_english_ceilings.json:\n"
                      + "\n".join(f"{f}: {n} > {c}" for f, (n, c) in over.items()))


def test_every_ceiling_names_a_chinese_file(counts: dict[str, int]) -> None:
    ceilings = json.loads(CEILINGS.read_text(encoding="utf-8"))
    assert set(ceilings) == set(counts), f"stale or missing ceilings: {set(ceilings) ^ set(counts)}"
    assert all(isinstance(n, int) and n >= 0 for n in ceilings.values())


def test_the_counter_counts_what_a_learner_reads() -> None:
    # a comment and a printed sentence in English count, word by word
    assert _words("the first car needs 3 minutes", "comment") == ["the", "first", "car", "needs", "minutes"]
    assert _words('f"{name} (simulated)"', "string") == ["simulated"]
    assert _words('"计算：simulated 1f1b p=12"', "string") == ["simulated"]
    # English inside Chinese prose, a table header, a LaTeX label
    assert _words("这是**穿越**（crossing）。") == ["crossing"]
    assert _words("name  单步耗时（时间槽）", "output") == ["name"]
    assert _words(r"$$T = \underbrace{m\,t_f}_{\text{work}}$$") == ["work"]
    assert _words("<table><tr><th>best</th></tr></table>", "output") == ["best"]


def test_the_counter_leaves_code_names_and_citations_alone() -> None:
    assert _words("用 `bk.simulate(s, costs)` 模拟，见 <https://arxiv.org/abs/2401.10241>") == []
    assert _words("[第 04 课](04_schedules_compared.ipynb)，GPipe、1F1B、ZB-V、DualPipeV 和 PyTorch") == []
    assert _words("Narayanan 等，“Efficient Large-Scale Language Model Training”，SC21") == []
    assert _words('"makespan"', "string") == []  # a column key
    assert _words('f"{bubble_ratio:.1%}"', "string") == []
    assert _words("单步耗时 {makespan} 个时间槽", "message") == []
    assert _words("| 英文 | 中文 |\n|---|---|\n| warm-up | 预热 |") == []
    assert _words("每个 rank 一个 chunk；全局 batch、all-reduce、kernel、ms、GiB") == []
