"""The course's two languages: English and Chinese (core: pure Python, standard library only).

Every learner-facing text bubblekit prints or draws (check results and hints, explorer labels
and readouts, figure text, table headers and notes, the environment report) lives in a
message catalogue, in both languages, and is fetched in the current language::

    import bubblekit as bk
    bk.set_language("zh")                 # the first line of every Chinese notebook
    bk.get_language()                     # 'zh'

    # in a bubblekit module: register once, at import time ...
    from bubblekit.i18n import register, tr
    register({
        "demo.idle": {"en": "rank {rank} idles {slots} slots",
                      "zh": "rank {rank} 空闲 {slots} 个时间槽"},
    })
    # ... and fetch where the text is shown
    tr("demo.idle", rank=0, slots=3)      # 'rank 0 空闲 3 个时间槽'

Rules:

* The language is ``"en"`` (the default) or ``"zh"``. ``set_language`` sets it for the whole
  process (a notebook's kernel); without it, the environment variable ``BUBBLEKIT_LANG``
  decides (``en``/``zh``; ``zh-CN``, ``zh_CN.UTF-8`` and the like are read as ``zh``).
* A message is a :meth:`str.format` template: ``{field}`` is filled by :func:`tr`'s keyword
  arguments; a literal brace is written ``{{`` / ``}}``. Both languages of a message use the
  same fields with the same format specs (``{ratio:.1%}`` in both), so a number prints the
  same way in either edition.
* A message whose Chinese is missing falls back to English at run time; the catalogue test
  (``tests/test_i18n.py``) fails on it, so none ships.
* Developer-facing text stays English and out of the catalogue: exception messages
  (``TypeError``/``ValueError`` naming a parameter), logs, the command-line tools' errors;
  but the classroom kit's commands (``bubblekit classroom``, ``scripts/make_slides.py``,
  ``scripts/make_nbgrader.py``) speak their ``--lang`` (keys ``classroom.say.*``,
  ``make_slides.*``, ``make_nbgrader.*``), keeping option and parameter names.

Used by every lesson's Chinese edition (``notebooks/zh/``), and by the presentation and course
layers for their learner-facing text.
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

__all__ = [
    "LANGUAGES",
    "DEFAULT_LANGUAGE",
    "ENV_VAR",
    "set_language",
    "get_language",
    "using_language",
    "register",
    "tr",
    "translate",
    "local_text",
    "all_messages",
    "message_fields",
    "on_language_change",
]

#: The course's languages: English and (simplified) Chinese.
LANGUAGES: tuple[str, ...] = ("en", "zh")
#: The language when nothing chose one.
DEFAULT_LANGUAGE = "en"
#: The environment variable read when :func:`set_language` was not called.
ENV_VAR = "BUBBLEKIT_LANG"

_chosen: str | None = None
_catalogue: dict[str, dict[str, str]] = {}
_listeners: list[Callable[[str], object]] = []


def _normalise(value: object, where: str) -> str:
    """``"zh"``, ``"zh-CN"``, ``"zh_CN.UTF-8"``, ``"ZH"`` -> ``"zh"``; likewise ``"en..."`` -> ``"en"``."""
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a string, one of {', '.join(map(repr, LANGUAGES))}; got {value!r}")
    base = value.strip().lower().replace("-", "_").split(".")[0].split("_")[0]
    if base not in LANGUAGES:
        raise ValueError(f"{where}={value!r} is not a course language; choose one of {', '.join(map(repr, LANGUAGES))}")
    return base


def set_language(language: str) -> None:
    """Show bubblekit's learner-facing text in ``language`` (``"en"`` or ``"zh"``) from now on.

    Sets the language for the whole process (a notebook's kernel), overriding ``BUBBLEKIT_LANG``.
    Each Chinese notebook's first code cell starts with ``bk.set_language("zh")``.

    Raises:
        TypeError, ValueError: ``language`` is not ``"en"``/``"zh"`` (``"zh-CN"`` and the like are accepted).
    """
    global _chosen
    language = _normalise(language, "language")
    before = get_language()
    _chosen = language
    _notify(before)


def _notify(before: str) -> None:
    """Tell the listeners when the current language is no longer ``before``."""
    now = get_language()
    if now != before:
        for listener in list(_listeners):
            listener(now)


def get_language() -> str:
    """The current language: the last :func:`set_language`, else ``BUBBLEKIT_LANG``, else ``"en"``.

    Raises:
        ValueError: ``BUBBLEKIT_LANG`` holds something other than a course language.
    """
    if _chosen is not None:
        return _chosen
    value = os.environ.get(ENV_VAR, "").strip()
    return _normalise(value, f"the environment variable {ENV_VAR}") if value else DEFAULT_LANGUAGE


@contextmanager
def using_language(language: str) -> Iterator[str]:
    """``with using_language("zh"): ...`` runs a block in ``language``, then restores the previous choice."""
    global _chosen
    before = _chosen
    set_language(language)
    try:
        yield get_language()
    finally:
        inside = get_language()
        _chosen = before
        _notify(inside)


def on_language_change(listener: Callable[[str], object]) -> None:
    """Call ``listener(language)`` whenever the language changes (the figures' font follows it).

    Registering the same function twice registers it once.
    """
    if not callable(listener):
        raise TypeError(f"listener must be callable, got {listener!r}")
    if listener not in _listeners:
        _listeners.append(listener)


def message_fields(template: str) -> list[tuple[str, str, str]]:
    """The ``(field, conversion, format_spec)`` of each ``{...}`` in ``template``, sorted.

    ``"{x:.1%} of {name!r}"`` -> ``[('name', 'r', ''), ('x', '', '.1%')]``. Both languages of a
    message must give the same list. Raises ``ValueError`` for an unbalanced brace.
    """
    found = []
    for _literal, field, spec, conversion in string.Formatter().parse(template):
        if field is not None:
            found.append((field, conversion or "", spec or ""))
    return sorted(found)


def register(messages: Mapping[str, Mapping[str, str]]) -> None:
    """Add learner-facing messages to the catalogue: ``{key: {"en": text, "zh": text}}``.

    Keys are dotted and start with the module's short name (``"checks.correct"``,
    ``"explorers.m"``). Registering a key again with the same texts is harmless (a module
    imported twice); with different texts it is an error, so two modules cannot claim one key.

    Raises:
        TypeError: a key or text is not a string, or a message is not a mapping.
        ValueError: an unknown language code, a message without English, a malformed template,
            or a key registered before with other texts.
    """
    if not isinstance(messages, Mapping):
        raise TypeError(f"messages must be a mapping of key -> {{language: text}}, got {type(messages).__name__}")
    staged: dict[str, dict[str, str]] = {}
    for key, texts in messages.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"a message key must be a non-empty string, got {key!r}")
        if not isinstance(texts, Mapping):
            raise TypeError(f"message {key!r} must map languages to texts, got {texts!r}")
        unknown = sorted(set(texts) - set(LANGUAGES))
        if unknown:
            raise ValueError(f"message {key!r} has unknown language(s) {unknown}; the languages are {list(LANGUAGES)}")
        if DEFAULT_LANGUAGE not in texts:
            raise ValueError(f"message {key!r} has no {DEFAULT_LANGUAGE!r} text (English is the fallback)")
        for language, text in texts.items():
            if not isinstance(text, str):
                raise TypeError(f"message {key!r} [{language}] must be a string, got {text!r}")
            message_fields(text)  # a malformed template fails here, at import time
        new = dict(texts)
        if key in _catalogue and _catalogue[key] != new:
            raise ValueError(f"message {key!r} is already registered with other texts")
        staged[key] = new
    _catalogue.update(staged)


def translate(key: str, language: str, /, **fields: object) -> str:
    """The message ``key`` in ``language`` (English if it has no text in that language), filled with ``fields``.

    Raises:
        KeyError: ``key`` is not registered.
        ValueError: ``language`` is not a course language, or ``fields`` lacks a field the text uses.
    """
    language = _normalise(language, "language")
    try:
        texts = _catalogue[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in the catalogue (register it with bubblekit.i18n.register)") from None
    template = texts.get(language, texts[DEFAULT_LANGUAGE])
    try:
        return template.format(**fields)
    except (KeyError, IndexError) as err:
        raise ValueError(f"message {key!r} needs the field {err.args[0]!r}; given {sorted(fields)}") from None


def tr(key: str, /, **fields: object) -> str:
    """The message ``key`` in the current language (:func:`get_language`), filled with ``fields``."""
    return translate(key, get_language(), **fields)


def local_text(*, en: str, zh: str) -> str:
    """A notebook's own words in the current language: ``bk.local_text(en="stage 2 slow", zh="流水级 2 较慢")``.

    For the few texts a lesson's code cell writes itself (a figure title, a row name, a printed
    sentence): both editions run the same cell and each shows its own language, so the code
    cells of a lesson and of its Chinese twin stay identical (the parity test). Text that
    bubblekit prints belongs in the catalogue instead (:func:`register`). A value the code
    uses afterwards as a key (a Table column it reads back) stays one plain string.

    Raises:
        TypeError: ``en`` or ``zh`` is not a string.
        ValueError: ``zh`` holds no Chinese character.
    """
    for name, value in (("en", en), ("zh", zh)):
        if not isinstance(value, str):
            raise TypeError(f"local_text's {name} must be a string, got {value!r}")
    if not any("\u4e00" <= ch <= "\u9fff" for ch in zh):
        raise ValueError(f"local_text's zh must be Chinese text, got {zh!r}")
    return zh if get_language() == "zh" else en


def all_messages() -> dict[str, dict[str, str]]:
    """Every registered message, ``{key: {language: text}}`` (a copy), for the catalogue test."""
    return {key: dict(texts) for key, texts in _catalogue.items()}
