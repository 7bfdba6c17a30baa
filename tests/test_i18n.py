"""bubblekit.i18n: the language switch and the message catalogue.

The catalogue test imports every bubblekit module (so each registers its messages) and
asserts that every learner-facing message has an English and a Chinese text, that the
Chinese one is Chinese, and that both use the same ``{fields}`` with the same format specs.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bubblekit as bk
from bubblekit import i18n

#: Modules that need torch at import time (the lab's worker side) or run a program on import.
NOT_IMPORTED = ("bubblekit.lab._worker", "bubblekit.lab._launch", "bubblekit.lab._model")
_CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(autouse=True)
def english_afterwards(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with no language chosen and no BUBBLEKIT_LANG, and leaves it so."""
    monkeypatch.delenv(i18n.ENV_VAR, raising=False)
    monkeypatch.setattr(i18n, "_chosen", None)
    yield
    i18n._chosen = None


@pytest.fixture()
def scratch_catalogue(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, str]]:
    """An empty catalogue for the duration of a test (the real one is left as it is)."""
    catalogue: dict[str, dict[str, str]] = {}
    monkeypatch.setattr(i18n, "_catalogue", catalogue)
    return catalogue


def import_every_module() -> list[str]:
    names = []
    for module in pkgutil.walk_packages(bk.__path__, "bubblekit."):
        if module.name.endswith("__main__") or module.name in NOT_IMPORTED:
            continue
        importlib.import_module(module.name)
        names.append(module.name)
    return names


# ----------------------------------------------------------------------------- the switch


def test_default_is_english_and_set_language_switches() -> None:
    assert bk.get_language() == "en"
    bk.set_language("zh")
    assert bk.get_language() == "zh" and i18n.get_language() == "zh"
    bk.set_language("en")
    assert bk.get_language() == "en"


@pytest.mark.parametrize("spelling", ["zh", "ZH", "zh-CN", "zh_CN", "zh_CN.UTF-8", " zh "])
def test_chinese_spellings(spelling: str) -> None:
    bk.set_language(spelling)
    assert bk.get_language() == "zh"


def test_environment_variable_and_its_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(i18n.ENV_VAR, "zh_CN.UTF-8")
    assert bk.get_language() == "zh"
    bk.set_language("en")  # an explicit choice wins over the environment
    assert bk.get_language() == "en"
    i18n._chosen = None
    monkeypatch.setenv(i18n.ENV_VAR, "fr")
    with pytest.raises(ValueError, match=r"BUBBLEKIT_LANG.*'fr'.*'en', 'zh'"):
        bk.get_language()


@pytest.mark.parametrize("bad", ["fr", "", "chinese"])
def test_set_language_rejects_other_languages(bad: str) -> None:
    with pytest.raises(ValueError, match=r"language=.*choose one of 'en', 'zh'"):
        bk.set_language(bad)
    with pytest.raises(TypeError, match="language must be a string"):
        bk.set_language(1)  # type: ignore[arg-type]
    assert bk.get_language() == "en"


def test_using_language_restores_and_listeners_follow() -> None:
    seen: list[str] = []
    i18n.on_language_change(seen.append)
    i18n.on_language_change(seen.append)  # once only
    try:
        with i18n.using_language("zh") as inside:
            assert inside == "zh" and bk.get_language() == "zh"
        assert bk.get_language() == "en"
        bk.set_language("en")  # no change: no call
        assert seen == ["zh", "en"]
    finally:
        i18n._listeners.remove(seen.append)


# ----------------------------------------------------------------------------- messages


def test_register_and_translate(scratch_catalogue: dict[str, dict[str, str]]) -> None:
    i18n.register({"t.idle": {"en": "rank {rank} idles {share:.1%}", "zh": "rank {rank} 空闲 {share:.1%}"}})
    assert i18n.tr("t.idle", rank=0, share=0.25) == "rank 0 idles 25.0%"
    bk.set_language("zh")
    assert i18n.tr("t.idle", rank=0, share=0.25) == "rank 0 空闲 25.0%"
    assert i18n.translate("t.idle", "en", rank=1, share=0.5) == "rank 1 idles 50.0%"
    i18n.register({"t.idle": {"en": "rank {rank} idles {share:.1%}", "zh": "rank {rank} 空闲 {share:.1%}"}})  # again: fine
    i18n.register({"t.only_en": {"en": "English only"}})
    assert i18n.tr("t.only_en") == "English only"  # falls back (the catalogue test fails on it)
    assert i18n.all_messages()["t.idle"]["zh"] == "rank {rank} 空闲 {share:.1%}"


def test_register_and_translate_errors(scratch_catalogue: dict[str, dict[str, str]]) -> None:
    i18n.register({"t.a": {"en": "{x}", "zh": "{x}"}})
    with pytest.raises(ValueError, match="already registered with other texts"):
        i18n.register({"t.a": {"en": "{x}!", "zh": "{x}"}})
    with pytest.raises(ValueError, match="unknown language"):
        i18n.register({"t.b": {"en": "x", "fr": "x"}})
    with pytest.raises(ValueError, match="has no 'en' text"):
        i18n.register({"t.c": {"zh": "x"}})
    with pytest.raises(TypeError, match="must be a string"):
        i18n.register({"t.d": {"en": 3}})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        i18n.register({"t.e": {"en": "unbalanced {"}})
    with pytest.raises(KeyError, match="no message 't.missing'"):
        i18n.tr("t.missing")
    with pytest.raises(ValueError, match="needs the field 'x'"):
        i18n.tr("t.a")
    assert "t.b" not in i18n.all_messages()  # a failed registration adds nothing


def test_message_fields() -> None:
    assert i18n.message_fields("{x:.1%} of {name!r} {{literal}}") == [("name", "r", ""), ("x", "", ".1%")]


@given(st.sampled_from(["en", "zh", "zh-CN", "EN", "en_US.UTF-8"]))
def test_normalised_language_is_a_course_language(spelling: str) -> None:
    assert i18n._normalise(spelling, "language") in i18n.LANGUAGES


# ----------------------------------------------------------------------------- the catalogue test


def test_every_message_has_both_languages_with_the_same_fields() -> None:
    imported = import_every_module()
    assert "bubblekit.presentation.fonts" in imported
    messages = i18n.all_messages()
    assert messages, "no message is registered"
    problems = []
    for key, texts in sorted(messages.items()):
        if not key.split(".")[0]:
            problems.append(f"{key}: the key must start with its module's short name")
        missing = [lang for lang in i18n.LANGUAGES if not texts.get(lang, "").strip()]
        if missing:
            problems.append(f"{key}: no text in {missing}")
            continue
        if i18n.message_fields(texts["en"]) != i18n.message_fields(texts["zh"]):
            problems.append(f"{key}: fields differ: en {i18n.message_fields(texts['en'])} zh {i18n.message_fields(texts['zh'])}")
        if not _CJK.search(texts["zh"]):
            problems.append(f"{key}: the Chinese text has no Chinese: {texts['zh']!r}")
    assert not problems, "catalogue problems:\n" + "\n".join(problems)


def test_import_bubblekit_stays_light() -> None:
    """The language switch is core: it loads nothing heavy."""
    code = ("import sys, bubblekit as bk; bk.set_language('zh'); "
            "print(sorted(m for m in ('matplotlib', 'numpy', 'ipywidgets', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_local_text_follows_the_language() -> None:
    """A lesson's own words (bk.local_text): the current language's, and a clear error for bad input."""
    with i18n.using_language("en"):
        assert bk.local_text(en="slow stage", zh="慢的流水级") == "slow stage"
    with i18n.using_language("zh"):
        assert bk.local_text(en="slow stage", zh="慢的流水级") == "慢的流水级"
    with pytest.raises(ValueError, match="zh"):
        bk.local_text(en="slow stage", zh="slow stage")
    with pytest.raises(TypeError, match="en"):
        bk.local_text(en=3, zh="慢")  # type: ignore[arg-type]
