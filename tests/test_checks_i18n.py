"""The exercise self-checks in both languages (issue 16).

Every text a check can show (each exercise's hint tiers, its hints by kind of mistake, its
recognised mistakes, what its answer is a fraction of, and every message the check modules
register) has a Chinese version with the same format fields; a check run in Chinese prints
Chinese for a right, a close and a wrong answer; English output is what it always was.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator

import pytest

import bubblekit as bk
import bubblekit.course.checks as checks_pkg
from bubblekit import i18n
from bubblekit.course.checks import check, progress, require, reset_progress
from bubblekit.course.checks._registry import KIND_HINTS, REGISTRY, load_lessons
from bubblekit.course.checks._text import Msg, msg, shown

_CJK = re.compile(r"[\u3400-\u9fff]")
_ENGLISH_WORDS = re.compile(r"\b(not yet|hint|correct|close|too high|too low|no answer yet)\b")


@pytest.fixture(autouse=True)
def fresh_language_and_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No language chosen, no BUBBLEKIT_LANG, no attempts: before and after each test."""
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    reset_progress()
    yield
    i18n._chosen = None
    reset_progress()


def _check_modules() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(checks_pkg.__path__):
        name = f"{checks_pkg.__name__}.{info.name}"
        importlib.import_module(name)
        names.append(name)
    return names


def _texts_of_every_exercise() -> Iterator[tuple[str, str, str]]:
    """``(exercise id, where, text)`` for every learner-facing text an exercise can show."""
    load_lessons()
    for id, ex in sorted(REGISTRY.items()):
        for n, tier in enumerate(ex.hints, 1):
            yield id, f"hint {n}", tier
        for kind, tiers in ex.kind_hints:
            for n, tier in enumerate(tiers, 1):
                yield id, f"kind_hints[{kind!r}] {n}", tier
        for n, mistake in enumerate(ex.mistakes, 1):
            yield id, f"mistake {n}", mistake.message
        if ex.fraction_of is not None:
            yield id, "fraction_of", ex.fraction_of
    for kind, tiers in KIND_HINTS.items():
        for n, tier in enumerate(tiers, 1):
            yield "KIND_HINTS", f"{kind} {n}", tier


def test_every_hint_mistake_and_fraction_of_every_exercise_has_chinese() -> None:
    load_lessons()
    catalogue = i18n.all_messages()
    problems, seen = [], 0
    for id, where, text in _texts_of_every_exercise():
        seen += 1
        if not isinstance(text, Msg):
            problems.append(f"{id} {where}: English only (write it as msg(english, chinese)): {text!r}")
            continue
        texts = catalogue.get(text.key, {})
        zh = texts.get("zh", "")
        if not _CJK.search(zh):
            problems.append(f"{id} {where}: no Chinese text: {zh!r}")
        if i18n.message_fields(texts.get("en", "")) != i18n.message_fields(zh):
            problems.append(f"{id} {where}: the two languages use different fields")
        if i18n.message_fields(texts.get("en", "")):
            problems.append(f"{id} {where}: a hint or mistake is shown as it is, so it takes no fields")
        if shown(text, "en") != str(text):
            problems.append(f"{id} {where}: the English in the catalogue differs from the text the registry holds")
    assert seen > 300, f"only {seen} texts found: is every lesson module loaded?"
    assert not problems, "exercise texts without Chinese:\n" + "\n".join(problems)


def test_every_message_the_check_modules_register_has_chinese_with_the_same_fields() -> None:
    modules = _check_modules()
    assert f"{checks_pkg.__name__}.lesson10" in modules
    messages = {k: v for k, v in i18n.all_messages().items() if k.startswith("checks.")}
    assert len(messages) > 300
    problems = []
    for key, texts in sorted(messages.items()):
        en, zh = texts.get("en", ""), texts.get("zh", "")
        if not _CJK.search(zh):
            problems.append(f"{key}: no Chinese: {zh!r}")
        elif i18n.message_fields(en) != i18n.message_fields(zh):
            problems.append(f"{key}: fields differ: {i18n.message_fields(en)} vs {i18n.message_fields(zh)}")
    assert not problems, "\n".join(problems)


def test_msg_is_its_english_text_and_keeps_its_key() -> None:
    text = msg("count the {{idle}} boxes", "数一数{{idle}}方块")
    assert text == "count the {idle} boxes" and isinstance(text, str)
    assert shown(text, "zh") == "数一数{idle}方块" and shown("plain text", "zh") == "plain text"
    import copy
    import pickle

    for again in (copy.copy(text), copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert isinstance(again, Msg) and again.key == text.key and again == text
    with pytest.raises(TypeError, match="English and a Chinese text"):
        msg("only English", "")
    with pytest.raises(ValueError, match="already registered with other texts"):
        msg("count the {{idle}} boxes", "别的中文")


# ----------------------------------------------------------------------------- a check run in Chinese


def _answers_00_1() -> tuple[float, float, float]:
    """(right, close: two significant digits, wrong) for exercise 00.1, computed by bubblekit."""
    right = bk.simulate(bk.schedule("1f1b", p=4, m=8)).bubble_ratio
    return right, round(right, 2), right + 0.2


def _lines(result: object) -> list[str]:
    """The result as a terminal and as a notebook show it (the HTML without its tags)."""
    html = re.sub(r"<[^>]+>", "", result._repr_html_())  # type: ignore[attr-defined]
    return [repr(result), str(result), html]


def test_a_chinese_check_prints_chinese_for_right_close_and_wrong() -> None:
    right, close, wrong = _answers_00_1()
    bk.set_language("zh")  # after import: the language is read when the check runs
    ok, near, bad = check("00.1", right), check("00.1", close), check("00.1", wrong)
    again = check("00.1", wrong)
    missing = check("00.1", None)
    assert ok and ok.status == "correct" and near.status == "close" and bad.status == "wrong"
    for result in (ok, near, bad, again, missing):
        for line in _lines(result):
            assert _CJK.search(line), line
            assert not _ENGLISH_WORDS.search(line), line
    assert repr(ok).endswith("00.1 正确")
    assert "00.1 接近：请至少给出 3 位有效数字" in repr(near)  # the number as in English
    assert "偏大" in bad.detail and bad.hint.startswith("用 bk.simulate") and "提示：" in repr(bad)
    assert "和上次的答案一样" in again.detail and "提示 2：" in repr(again)
    assert "还没有作答" in repr(missing)
    percent = check("00.1", f"{right:.2%}")
    assert percent and "已把你填的百分数换算成占整步的比例" in repr(percent)
    with pytest.raises(AssertionError, match=r"^00\.1 还不对：偏大。提示：用 bk\.simulate"):
        require("00.1", wrong)


def test_a_chinese_schedule_check_and_progress() -> None:
    bk.set_language("zh")
    dead = check("01.5", "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1B1 1F0 1B0")
    assert dead.status == "wrong" and dead.detail.startswith("死锁：") and _CJK.search(dead.hint)
    bad = check("01.5", 42)
    assert "请把调度写成文本" in bad.detail and "收到的是 int" in bad.detail
    report = progress("01")
    assert repr(report).startswith("第 01 课：本次会话完成了 0/") and "01.5（试了 2 次）" in repr(report)
    assert "第 01 课" in report._repr_html_()


def test_english_is_unchanged_and_a_result_keeps_the_language_it_was_checked_in() -> None:
    right, close, wrong = _answers_00_1()
    bad = check("00.1", wrong)
    assert repr(bad) == (
        "\u2717 00.1 not yet \u2014 too high; hint: Simulate bk.schedule('1f1b', p=4, m=8) with bk.simulate and "
        "read .bubble_ratio (a fraction of device-time between 0 and 1)."
    )
    assert repr(check("00.1", close)) == "\u2248 00.1 close \u2014 give at least 3 significant digits"
    bk.set_language("zh")
    assert repr(bad).startswith("\u2717 00.1 not yet")  # shown in the language it was checked in
    assert repr(check("00.1", right)) == "\u2713 00.1 正确"
    bk.set_language("en")
    assert repr(check("00.1", right)) == "\u2713 00.1 correct"
    assert repr(progress("00")).startswith("lesson 00: 1 of 1 exercises done this session")
