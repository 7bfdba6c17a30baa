"""The checks' learner-facing text in English and Chinese, through :mod:`bubblekit.i18n`.

Two ways in, one catalogue:

* **Static text tied to an exercise** (a hint tier, a recognised mistake's message): written
  where the exercise is registered, with its Chinese beside it::

      @exercise("03.7", hint=(msg("Follow the last microbatch ...", "跟着最后一个微批走 ..."),),
                mistakes=(Mistake(lambda e: ..., msg("that is one rank's idle time ...", "这是一个 rank 的空闲时间 ...")),))

  :func:`msg` registers the pair in the catalogue (key ``checks.msg.<hash of the English>``,
  unless given one) and returns a :class:`Msg`: a ``str`` whose value is the English text, so
  the registry, the tests and English output see exactly the text they always saw. The check
  shows it in the current language with :func:`shown`.
* **Text with numbers in it** (feedback a ``compare`` builds from the learner's answer): a
  ``register({...})`` table with readable keys (``checks.l04.memory``) next to the function
  that uses it, fetched with :func:`bubblekit.i18n.tr` when the answer is checked.

Both languages of a message use the same ``{fields}`` and format specs, so numbers print
identically (``tests/test_i18n.py``). The language is read when a check runs, never at import.
"""

from __future__ import annotations

import hashlib

from bubblekit.i18n import get_language, message_fields, register, translate

__all__ = ["Msg", "msg", "shown"]


class Msg(str):
    """A learner-facing text in both languages: the English string, carrying its catalogue ``key``.

    It is a ``str`` (its English text, literal braces already unescaped), so it can stand wherever
    the checks took English text before; :func:`shown` and :meth:`say` give it in the current language.
    """

    key: str

    def __new__(cls, en: str, zh: str, key: str | None = None) -> Msg:
        if not isinstance(en, str) or not isinstance(zh, str) or not en.strip() or not zh.strip():
            raise TypeError(f"msg needs an English and a Chinese text (non-empty strings), got {en!r}, {zh!r}")
        key = key or "checks.msg." + hashlib.sha1(en.encode("utf-8")).hexdigest()[:12]
        register({key: {"en": en, "zh": zh}})
        self = super().__new__(cls, en if message_fields(en) else en.format())
        self.key = key
        return self

    def say(self, language: str | None = None, /, **fields: object) -> str:
        """The text in ``language`` (the current one when ``None``), filled with ``fields``."""
        return translate(self.key, language or get_language(), **fields)

    def __reduce__(self) -> tuple[object, ...]:  # copies and pickles keep the key
        return (_rebuild, (self.key, str(self)))


def _rebuild(key: str, english: str) -> Msg:
    self = str.__new__(Msg, english)
    self.key = key
    return self


def msg(en: str, zh: str, *, key: str | None = None) -> Msg:
    """Register ``en`` / ``zh`` in the catalogue and return them as one :class:`Msg` (its value: ``en``)."""
    return Msg(en, zh, key)


def shown(text: str, language: str | None = None) -> str:
    """``text`` as the learner sees it in ``language`` (the current one when ``None``).

    A :class:`Msg` is fetched from the catalogue; any other string (an exercise registered by a
    test, or text already in the current language) is returned as it is.
    """
    if isinstance(text, Msg):
        return text.say(language)
    return str(text)
