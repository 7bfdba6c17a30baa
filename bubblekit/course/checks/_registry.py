"""The exercise registry behind :func:`bubblekit.course.checks.check`, with session progress.

Lesson authors register one function per exercise in ``bubblekit/course/checks/lessonNN.py``::

    import bubblekit as bk
    from bubblekit.course.checks._grading import THE_STEP
    from bubblekit.course.checks._registry import Mistake, exercise
    from bubblekit.course.checks._text import msg

    @exercise("03.7", hint=(msg("Count the idle slots of rank 0 first.",            # the first "not yet"
                                "先数 rank 0 的空闲时间槽。"),
                            msg("Rank 0 idles p - 1 slots each way: add the ranks.",  # a repeated one
                                "rank 0 每个方向空闲 p - 1 个时间槽：再把所有 rank 加起来。")),
              fraction_of=THE_STEP,
              mistakes=(Mistake(lambda e: bk.bubble_overhead(8, 16),
                                msg("that is Megatron's overhead ...", "这是 Megatron 口径的气泡开销……")),))
    def _():
        return bk.bubble_ratio(8, 16)     # computed by bubblekit, never a typed literal

Every learner-facing text is written in English and Chinese (:mod:`bubblekit.course.checks._text`):
hints, mistakes and ``fraction_of`` as :func:`~bubblekit.course.checks._text.msg`, feedback
built from an answer through :func:`bubblekit.i18n.tr`. A check shows them in the language
current when it runs (``bk.set_language``); a plain ``str`` is shown as it is (English only,
which ``tests/test_checks_i18n.py`` refuses for the course's exercises).

The function takes no arguments and returns the *expected* value; it is only called when a
learner checks an answer, so importing the lesson modules is cheap.

Answers are graded by the policy in :mod:`bubblekit.course.checks` (implemented in
:mod:`bubblekit.course.checks._grading`), or by the exercise's own
``compare(answer, expected) -> (ok, message)``; returning a :class:`~bubblekit.course.checks._grading.Graded`
(the same pair, plus a ``kind`` of mistake from :data:`KIND_HINTS`) makes the hint fit the mistake.

No text produced here (messages, reprs, HTML, exceptions) contains the expected value,
and :class:`CheckResult` does not store it.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import html
import importlib
import inspect
import itertools
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from bubblekit.course.checks import _display
from bubblekit.course.checks._grading import AnyOf, Graded, Verdict, as_rank, grade
from bubblekit.course.checks._text import Msg, msg, shown
from bubblekit.course.checks._units import Unit
from bubblekit.i18n import get_language, register, tr, translate

__all__ = [
    "Exercise",
    "Mistake",
    "CheckResult",
    "Progress",
    "REGISTRY",
    "KIND_HINTS",
    "FORMAT",
    "WORDS_ONLY",
    "AnyOf",
    "Graded",
    "compare_choice",
    "exercise",
    "check",
    "require",
    "ids",
    "unregister",
    "compare_values",
    "progress",
    "reset_progress",
]

#: The ``kind`` a custom compare gives an answer it cannot read in the asked form (``"B and C"`` for letters):
#: the learner sees why, and the answer is not counted as a try (no hint tier is used up, progress is unchanged).
FORMAT = "format"

#: Questions answered in words (no check) -> where their worked answer is, as words that end "compare your answer
#: with ..." (a :func:`~bubblekit.course.checks._text.msg`: "its worked answer in solutions/...ipynb"): ``check`` on
#: such an id says so instead of suggesting other ids. Filled by the lesson modules (``lesson10``: the bank).
WORDS_ONLY: dict[str, Any] = {}

#: Exercise ids: two-digit lesson, a dot, the exercise number, an optional letter (``"03.2"``, ``"07.4b"``).
ID_PATTERN = re.compile(r"^\d{2}\.\d+[a-z]?$")

Compare = Callable[[Any, Any], Any]
Status = Literal["correct", "close", "wrong", "missing"]

#: Hints for kinds of mistake that custom compares report (schedules written as text), used
#: unless the exercise gives its own for that kind. Each is a tuple of tiers (nudge first).
KIND_HINTS: dict[str, tuple[str, ...]] = {
    "unreadable": (
        msg("Write one line per rank, like 'rank 0: 0F0 0F1 0B0 0B1', each action as {{stage}}{{kind}}{{microbatch}}.",
            "每个 rank 写一行，比如 'rank 0: 0F0 0F1 0B0 0B1'，每个动作写成 {{stage}}{{kind}}{{microbatch}}。"),
    ),
    "shape": (msg("Match the question's setting: p ranks with one stage each (one 'rank r:' line per rank), and m "
                  "microbatches.",
                  "和题目的设定保持一致：p 个 rank，每个 rank 一个流水级（每个 rank 一行 'rank r:'），m 个微批。"),),
    "split": (msg("This question splits the backward: write each B as an I then a W (`0I0 0W0`), then place the W "
                  "passes.",
                  "这道题拆开反向：每个 B 写成先 I 后 W（`0I0 0W0`），再安排 W 的位置。"),),
    "fused": (msg("This question keeps the backward whole: write one B for each I and W pair (`0B0`).",
                  "这道题的反向不拆：每对 I 和 W 合起来写成一个 B（`0B0`）。"),),
    "incomplete": (
        msg("Every rank runs each of its actions exactly once: a forward and a backward (or I and W) "
            "for every microbatch of each stage it holds.",
            "每个动作在它的 rank 上恰好运行一次：rank 持有的每个流水级，对每个微批都要有一次前向和一次反向"
            "（或 I 和 W）。"),
    ),
    "deadlock": (
        msg("Read the message: it names the blocked rank and the action it waits for. That action comes "
            "later on another rank's list; move one of the two.",
            "先读报错信息：它指出了卡住的 rank 和它在等的动作。那个动作排在另一个 rank 列表的后面；"
            "把两者之一挪个位置。"),
        msg("Walk through the schedule one slot at a time: which rank can run its next action? "
            "The first time none can, the waits you see form the cycle to break.",
            "按时间槽逐格推演调度：哪个 rank 能运行它的下一个动作？第一次出现谁都不能运行时，"
            "眼前这些等待就构成了要打破的环。"),
    ),
    "memory": (
        msg("Your schedule finishes, so it is not a deadlock: one rank keeps too many microbatches' "
            "activations alive at once. Run a backward there before its next forward.",
            "你的调度能跑完，所以不是死锁，而是某个 rank 同时保留了太多微批的激活。"
            "让它在下一个前向之前先跑一个反向。"),
        msg("A rank frees a microbatch's activations when it runs that microbatch's backward (its W, when "
            "the backward is split): count how many forwards it starts before the first one.",
            "rank 跑完某个微批的反向（反向拆分时是它的 W）才释放该微批的激活；"
            "数一数它在第一个反向之前启动了多少个前向。"),
    ),
    "slow": (
        msg("It is legal; now find the rank that waits longest (result.largest_gaps()) and give it "
            "work to do during that wait.",
            "调度合法；接下来找出等待最久的 rank（result.largest_gaps()），让它在这段等待里有活可干。"),
        msg("Draw your schedule (plot_pipeline) next to the fastest one you know and compare where the idle boxes sit.",
            "把你的调度（plot_pipeline）和你知道的最快调度并排画出来，比较空闲方块的位置。"),
    ),
}

#: The words of a check's line and of progress(), in both languages (fetched when shown).
register({
    "checks.line.correct": {"en": "{id} correct", "zh": "{id} 正确"},
    "checks.line.correct_note": {"en": "{id} correct ({note})", "zh": "{id} 正确（{note}）"},
    "checks.line.close": {"en": "{id} close \u2014 {detail}", "zh": "{id} 接近：{detail}"},
    "checks.line.wrong": {"en": "{id} not yet \u2014 {detail}; {label}: {hint}",
                          "zh": "{id} 还不对：{detail}。{label}：{hint}"},
    "checks.line.wrong_bare": {"en": "{id} not yet \u2014 {label}: {hint}", "zh": "{id} 还不对。{label}：{hint}"},
    "checks.line.unread": {"en": "{id} not yet \u2014 {detail} (not counted as a try)",
                           "zh": "{id} 还不对：{detail}（不计入作答次数）"},
    "checks.line.missing": {"en": "{id} no answer yet \u2014 {detail}; {label}: {hint}",
                            "zh": "{id} 还没有作答：{detail}。{label}：{hint}"},
    "checks.line.missing_bare": {"en": "{id} no answer yet \u2014 {label}: {hint}",
                                 "zh": "{id} 还没有作答。{label}：{hint}"},
    "checks.hint": {"en": "hint", "zh": "提示"},
    "checks.hint_tier": {"en": "hint {tier}", "zh": "提示 {tier}"},
    "checks.same_answer": {"en": "the same answer as last time", "zh": "和上次的答案一样"},
    "checks.same_answer_detail": {"en": "the same answer as last time: {detail}", "zh": "和上次的答案一样：{detail}"},
    "checks.close_colon": {"en": "close: {detail}", "zh": "接近：{detail}"},
    "checks.progress.lesson": {"en": "lesson {lesson}: {done} of {total} exercises done this session",
                               "zh": "第 {lesson} 课：本次会话完成了 {done}/{total} 道练习"},
    "checks.progress.all": {"en": "all lessons: {done} of {total} exercises done this session",
                            "zh": "全部课程：本次会话完成了 {done}/{total} 道练习"},
    "checks.progress.try": {"en": "{id} ({tries} try)", "zh": "{id}（试了 {tries} 次）"},
    "checks.progress.tries": {"en": "{id} ({tries} tries)", "zh": "{id}（试了 {tries} 次）"},
})


@dataclass(frozen=True)
class Mistake:
    """A recognisable wrong answer and what to say about it.

    Attributes:
        value: ``value(expected)`` computes the answer this mistake produces (with bubblekit,
            like the expected value), e.g. Megatron's overhead where the fraction of the step
            is asked.
        message: what the mistake is, in words; never the expected value.
        kind: optional key into the exercise's ``kind_hints`` for the hint to show with it.
    """

    value: Callable[[Any], Any]
    message: str
    kind: str = ""


@dataclass(frozen=True)
class Exercise:
    """One registered exercise.

    Attributes:
        id: ``"NN.k"`` (lesson ``NN``, exercise ``k``).
        expected: zero-argument function computing the expected value with bubblekit.
        hints: tiers of hints: the first "not yet" shows the first (a nudge), each further
            wrong answer the next, more specific one; never the answer.
        rel_tol: relative tolerance for numbers given at full precision (default ``1e-9``);
            rounded answers are graded by their significant digits.
        abs_tol: absolute tolerance for numbers (default ``0``).
        compare: optional ``compare(answer, expected)`` returning ``(ok, message)``,
            ``(ok, message, kind)`` or a bool; ``message`` must not contain the expected value.
        exact: True only where the exercise text asks for the exact value (a Fraction).
        fraction_of: what the answer is a fraction of (``"the step"``), where it is one: then a
            percentage written with its sign (``"27.3%"``) is accepted.
        mistakes: recognisable wrong answers, each with its message.
        kind_hints: hint tiers by kind of mistake (see :data:`KIND_HINTS`), as ``(kind, tiers)`` pairs.
        unit: the unit the question asks the number in (:mod:`bubblekit.course.checks._units`), or one per item
            of a tuple answer; a number written with it is read, another unit is named.
    """

    id: str
    expected: Callable[[], Any]
    hints: tuple[str, ...]
    rel_tol: float = 1e-9
    abs_tol: float = 0.0
    compare: Compare | None = None
    exact: bool = False
    fraction_of: str | None = None
    mistakes: tuple[Mistake, ...] = ()
    kind_hints: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unit: Unit | tuple[Unit | None, ...] | None = None

    @property
    def hint(self) -> str:
        """The first hint (the nudge)."""
        return self.hints[0]

    @property
    def lesson(self) -> str:
        """The two-digit lesson number (``"03"``)."""
        return self.id[:2]

    def hints_for(self, kind: str = "") -> tuple[str, ...]:
        """The hint tiers for a kind of mistake: the exercise's own, :data:`KIND_HINTS`, or the general ones."""
        own = dict(self.kind_hints)
        if kind and kind in own:
            return own[kind]
        if kind and kind in KIND_HINTS:
            return KIND_HINTS[kind]
        return self.hints

    @property
    def origin(self) -> str:
        """``module:line`` of the registered function (for duplicate-id errors)."""
        code = getattr(self.expected, "__code__", None)
        line = code.co_firstlineno if code is not None else "?"
        return f"{getattr(self.expected, '__module__', '?')}:{line}"


#: Every registered exercise by id. Lesson modules fill it; tests may add and remove entries.
REGISTRY: dict[str, Exercise] = {}


def _tiers(id: str, name: str, hint: str | Sequence[str]) -> tuple[str, ...]:
    tiers = (hint,) if isinstance(hint, str) else tuple(hint)
    if not tiers or not all(isinstance(t, str) and t.strip() for t in tiers):
        raise ValueError(f"exercise {id}: {name} must be a non-empty string or a sequence of them, got {hint!r}")
    return tuple(t if isinstance(t, Msg) else t.strip() for t in tiers)


def exercise(
    id: str,
    *,
    hint: str | Sequence[str],
    rel_tol: float = 1e-9,
    abs_tol: float = 0,
    compare: Compare | None = None,
    exact: bool = False,
    fraction_of: str | None = None,
    mistakes: Sequence[Mistake] = (),
    kind_hints: Mapping[str, str | Sequence[str]] | None = None,
    unit: Unit | tuple[Unit | None, ...] | None = None,
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register the decorated zero-argument function as the expected value of exercise ``id``.

    Args:
        id: ``"NN.k"``: two-digit lesson number, dot, exercise number, optional letter.
        hint: a nudge shown with a "not yet", or a sequence of tiers (nudge first, then more
            specific ones for repeated wrong answers), each written as ``msg(english, chinese)``.
            Never the answer itself.
        rel_tol: relative tolerance for numeric answers given at full precision, >= 0.
        abs_tol: absolute tolerance for numeric answers, >= 0 (in the answer's unit).
        compare: optional ``compare(answer, expected) -> (ok, message[, kind])`` for answers the
            default rules do not cover (schedules, free text, sets of actions, ...).
        exact: the exercise text asks for the exact value (then a float is only "close").
        fraction_of: what the answer is a fraction of (``THE_STEP``, or a ``msg``), if it is one;
            a percentage with its sign is then accepted, with a note naming it.
        mistakes: :class:`Mistake` s to recognise, each with its message.
        kind_hints: hint tiers by kind of mistake (overrides :data:`KIND_HINTS`).
        unit: the unit the question asks the answer in (``MS``, ``SLOTS``, ... from
            :mod:`bubblekit.course.checks._units`), or a tuple of them (None for an item without one) for a tuple
            answer: ``"14 ms"`` is then read as 14, and ``"14 s"`` is told its unit is not the asked one.

    Returns the function unchanged. Registering an id twice from a different place raises
    ``ValueError``; re-registering from the same module and line (a module reload) replaces.
    """
    if not isinstance(id, str) or not ID_PATTERN.match(id):
        raise ValueError(f"exercise id must look like 'NN.k' (e.g. '03.2' or '07.4b'), got {id!r}")
    tiers = _tiers(id, "hint", hint)
    for name, tol in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (0 <= float(tol) < math.inf):
            raise ValueError(f"exercise {id}: {name} must be a finite number >= 0, got {tol!r}")
    if compare is not None and not callable(compare):
        raise TypeError(f"exercise {id}: compare must be a callable (answer, expected) -> (ok, message), got {compare!r}")
    if fraction_of is not None and (not isinstance(fraction_of, str) or not fraction_of.strip()):
        raise ValueError(f"exercise {id}: fraction_of must be a non-empty string like 'the step', got {fraction_of!r}")
    if not all(isinstance(m, Mistake) for m in mistakes):
        raise TypeError(f"exercise {id}: mistakes must be Mistake objects, got {list(mistakes)!r}")
    kinds = tuple((str(k), _tiers(id, f"kind_hints[{k!r}]", v)) for k, v in (kind_hints or {}).items())
    if unit is not None and not isinstance(unit, Unit) and not (
            isinstance(unit, tuple) and all(u is None or isinstance(u, Unit) for u in unit)):
        raise TypeError(f"exercise {id}: unit must be a Unit or a tuple of Units (or None), got {unit!r}")

    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        if not callable(fn):
            raise TypeError(f"exercise {id}: @exercise must decorate a function, got {fn!r}")
        entry = Exercise(id, fn, tiers, float(rel_tol), float(abs_tol), compare, bool(exact), fraction_of,
                         tuple(mistakes), kinds, unit)
        old = REGISTRY.get(id)
        if old is not None and old.origin != entry.origin:
            raise ValueError(f"exercise id {id!r} registered twice: at {old.origin} and at {entry.origin}")
        REGISTRY[id] = entry
        return fn

    return register


def unregister(id: str) -> None:
    """Remove exercise ``id`` from the registry and the session (for tests); unknown ids are ignored."""
    REGISTRY.pop(id, None)
    _SESSION.pop(id, None)


_loaded = False


def load_lessons() -> None:
    """Import every ``bubblekit/course/checks/lesson*.py`` module once (they register exercises)."""
    global _loaded
    if _loaded:
        return
    import pkgutil

    package = importlib.import_module(__package__ or "bubblekit.course.checks")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("lesson"):
            importlib.import_module(f"{__package__}.{info.name}")
    _loaded = True


def ids(lesson: str | int | None = None) -> list[str]:
    """Registered exercise ids, sorted (lesson modules are imported first); only lesson ``NN`` if given."""
    load_lessons()
    out = sorted(REGISTRY, key=_id_key)
    if lesson is not None:
        nn = _lesson_key(lesson)
        out = [i for i in out if i.startswith(nn + ".")]
    return out


def _id_key(id: str) -> tuple[int, int, str]:
    match = re.match(r"^(\d+)\.(\d+)(.*)$", id)
    if match is None:
        return (10**9, 0, id)
    return (int(match.group(1)), int(match.group(2)), match.group(3))


def _lesson_key(lesson: str | int) -> str:
    """``3``, ``"3"``, ``"03"``, ``"03.2"``, ``"03_the_bubble_formula.ipynb"`` -> ``"03"``."""
    if isinstance(lesson, bool) or not isinstance(lesson, (int, str)):
        raise TypeError(f"lesson must be a lesson number like '03' or 3, got {lesson!r} of type {type(lesson).__name__}")
    text = str(lesson).strip().rsplit("/", 1)[-1]
    match = re.match(r"^(\d{1,2})(?:$|[._ ])", text)
    if match is None:
        raise ValueError(f"lesson must be a lesson number like '03' or 3 (or a notebook name '03_...'), got {lesson!r}")
    return f"{int(match.group(1)):02d}"


# ----------------------------------------------------------------------------- session


@dataclass
class _Record:
    """What this session did with one exercise."""

    tries: int = 0          # answers checked (not counting "no answer yet")
    wrong: int = 0          # of which "not yet"
    solved: bool = False    # right at least once
    last_wrong: str = ""    # a fingerprint of the last wrong answer


#: Exercise id -> this session's record (the Python process: a notebook kernel).
_SESSION: dict[str, _Record] = {}


def reset_progress(lesson: str | int | None = None) -> None:
    """Forget this session's attempts (of one lesson, or all): hints start again from the first."""
    if lesson is None:
        _SESSION.clear()
        return
    nn = _lesson_key(lesson)
    for id in [i for i in _SESSION if i.startswith(nn + ".")]:
        del _SESSION[id]


def _fingerprint(answer: Any) -> str:
    try:
        text = repr(answer)
    except Exception:
        text = f"<{type(answer).__name__}>"
    return hashlib.sha1(f"{type(answer).__name__}:{text}".encode("utf-8", "replace")).hexdigest()


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`: truthy when the answer is right.

    Attributes:
        id: the exercise id.
        status: ``"correct"``, ``"close"`` (the right value, but give more digits / the exact
            value), ``"wrong"`` or ``"missing"`` (no answer yet).
        detail: what is not right yet, in words (empty when correct); never the expected value.
        hint: the hint for this attempt (empty when correct or close).
        note: a remark on a correct answer (how it was read), else empty.
        tier: which hint tier ``hint`` is (1 = the first nudge; 0 when there is no hint).
        language: the language it was checked in (``bk.set_language``); its words are shown in it.

    Displays as ``✓ 03.2 correct`` or ``✗ 03.2 not yet — too high; hint: ...``: in a
    notebook as styled HTML, in a terminal as text (ASCII marks where the symbols cannot be shown).
    """

    id: str
    status: Status
    detail: str = ""
    hint: str = ""
    note: str = ""
    tier: int = 0
    language: str = field(default_factory=get_language, compare=False)

    def __bool__(self) -> bool:
        return self.status == "correct"

    @property
    def correct(self) -> bool:
        """True when the answer is right."""
        return self.status == "correct"

    @property
    def text(self) -> str:
        """The line without its mark: id, verdict, and what is wrong and the hint."""
        def say(key: str, **fields: object) -> str:
            return translate(key, self.language, **fields)

        if self.status == "correct":
            return say("checks.line.correct_note", id=self.id, note=self.note) if self.note else say(
                "checks.line.correct", id=self.id)
        if self.status == "close":
            return say("checks.line.close", id=self.id, detail=self.detail)
        if self.status == "wrong" and not self.hint and self.detail:  # an answer not read in the asked form
            return say("checks.line.unread", id=self.id, detail=self.detail)
        label = say("checks.hint") if self.tier <= 1 else say("checks.hint_tier", tier=self.tier)
        line = "checks.line.missing" if self.status == "missing" else "checks.line.wrong"
        if not self.detail:
            return say(line + "_bare", id=self.id, label=label, hint=self.hint)
        return say(line, id=self.id, detail=self.detail, label=label, hint=self.hint)

    @property
    def mark(self) -> str:
        """The status mark (a text symbol, never an emoji)."""
        return _display.MARKS[self.status]

    @property
    def message(self) -> str:
        """One line: mark, id, verdict, and (unless correct) what is wrong and the hint."""
        return f"{self.mark} {self.text}"

    def __repr__(self) -> str:
        return _display.plain(self.status, self.text)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        body = html.escape(self.text)
        body = body.replace(html.escape(self.id), f"<b>{html.escape(self.id)}</b>", 1)
        return _display.box_html(self.status, body)


# ----------------------------------------------------------------------------- check


def check(id: str, answer: Any) -> CheckResult:
    """Check ``answer`` for exercise ``id`` and return a :class:`CheckResult` (truthy when right).

    Grading follows the policy in :mod:`bubblekit.course.checks`. The result displays itself in
    a notebook (``✓``/``✗`` with a hint); ``print(result)`` shows the same line. ``None``,
    ``...``, ``NotImplemented`` or an answer function that still raises ``NotImplementedError``
    give "no answer yet". A zero-argument function is called and its return value checked,
    unless the exercise has its own ``compare``. The first "not yet" gives the first hint, each
    further one a more specific hint; :func:`progress` shows what this session has done.

    Raises ``ValueError`` (listing close ids) for an unknown ``id``. Used in lessons 00-03 ("check
    yourself") and in every notebook of ``exercises/`` and ``solutions/``.
    """
    ex = _lookup(id)
    record = _SESSION.setdefault(ex.id, _Record())
    answer, verdict, kind = _assess(ex, answer)
    if verdict is None:
        return _missing(ex, record)
    if kind == FORMAT and verdict.status == "wrong":  # not read in the asked form: say why, count no try
        return CheckResult(ex.id, "wrong", verdict.detail)

    record.tries += 1
    if verdict.status == "right":
        record.solved = True
        return CheckResult(ex.id, "correct", note=verdict.note)
    if verdict.status == "close":
        return CheckResult(ex.id, "close", verdict.detail)
    fingerprint = _fingerprint(answer)
    detail = verdict.detail
    if fingerprint == record.last_wrong:
        detail = tr("checks.same_answer_detail", detail=detail) if detail else tr("checks.same_answer")
    record.wrong += 1
    record.last_wrong = fingerprint
    tiers = ex.hints_for(kind)
    tier = min(record.wrong, len(tiers))
    return CheckResult(ex.id, "wrong", detail, shown(tiers[tier - 1]), tier=tier)


def _lookup(id: Any) -> Exercise:
    """The registered exercise ``id`` (loading the lesson modules first).

    Raises:
        TypeError: ``id`` is not a string.
        ValueError: no exercise has that id (the message lists close ids).
    """
    if not isinstance(id, str):
        raise TypeError(f"id must be an exercise id string like '03.2', got {id!r} of type {type(id).__name__}")
    load_lessons()
    key = id.strip()
    if key not in REGISTRY:
        raise ValueError(_unknown_id_message(id))
    return REGISTRY[key]


def _assess(ex: Exercise, answer: Any) -> tuple[Any, Verdict | None, str]:
    """Grade ``answer`` by the policy: ``(answer as graded, verdict, kind of mistake)``.

    The verdict is ``None`` for "no answer yet" (``None``, ``...``, ``NotImplemented``, blank text or
    a schedule template with only its ``rank r:`` headers, or an answer function that raises
    ``NotImplementedError``). Touches no session record.
    """
    try:
        if ex.compare is None and _is_answer_function(answer):
            answer = answer()
        if _unanswered(answer):
            return answer, None, ""
        verdict, kind = _grade(ex, answer, _expected(ex))
    except NotImplementedError:
        return answer, None, ""
    return answer, verdict, kind


#: A schedule template with nothing written in it yet: blank lines and ``rank r:`` headers only.
_EMPTY_TEMPLATE = re.compile(r"\s*(rank\s*\d+\s*:\s*)*")


def _unanswered(answer: Any) -> bool:
    """True for "no answer yet": ``None``, ``...``, ``NotImplemented``, blank text or an empty schedule
    template (``"rank 0:\\nrank 1:"``), or a tuple, list or dict of nothing but those (``(fill, drain)``
    while both are still the exercise's ``...``)."""
    if answer is None or answer is Ellipsis or answer is NotImplemented:
        return True
    if isinstance(answer, str):
        return _EMPTY_TEMPLATE.fullmatch(answer) is not None
    if isinstance(answer, (tuple, list)) and answer:
        return all(_unanswered(x) for x in answer)
    if isinstance(answer, dict) and answer:
        return all(_unanswered(x) for x in answer.values())
    return False


def require(id: str, answer: Any) -> None:
    """Like :func:`check`, but raise ``AssertionError`` unless ``answer`` is right: for autograded tests.

    The test cells of the course's nbgrader assignments (``scripts/make_nbgrader.py``) call
    ``require("03.2", lambda: U_v)`` after each exercise: the same grading policy as
    :func:`check`, and on anything but a right answer an ``AssertionError`` whose message is
    the line :func:`check` shows (``03.2 not yet — too high; hint: ...``), with the first hint
    tier (the nudge), never the expected value. nbgrader then gives the cell no points and shows
    the message in the student's feedback.

    Args:
        id: the exercise id (``"03.2"``).
        answer: the answer, or a zero-argument function that returns it. The function is
            called here (even for exercises with their own ``compare``); if it raises
            ``NameError`` (the learner never defined the name) or ``NotImplementedError`` (the
            exercise's stub), the answer is "no answer yet".

    Returns ``None`` when the answer is right, so that a test cell shows nothing (nbgrader
    would read a displayed value as partial credit). It does not count as an attempt: hint
    tiers and :func:`progress` are left as they were.

    Raises:
        AssertionError: the answer is not right (wrong, close, or no answer yet).
        TypeError, ValueError: ``id`` is not a known exercise id (as :func:`check`).
    """
    __tracebackhide__ = True  # IPython and pytest show the message, not this function's frame
    ex = _lookup(id)
    if _is_answer_function(answer) and _takes_no_arguments(answer):
        try:
            answer = answer()
        except (NameError, NotImplementedError):
            answer = None
    _, verdict, kind = _assess(ex, answer)
    if verdict is None:
        result = CheckResult(ex.id, "missing", "", shown(ex.hints[0]), tier=1)
    elif verdict.status == "right":
        return None
    elif verdict.status == "close":
        result = CheckResult(ex.id, "close", verdict.detail)
    else:
        result = CheckResult(ex.id, "wrong", verdict.detail, shown(ex.hints_for(kind)[0]), tier=1)
    raise AssertionError(result.text)


def _takes_no_arguments(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _missing(ex: Exercise, record: _Record) -> CheckResult:
    tier = max(1, min(record.wrong, len(ex.hints)))
    return CheckResult(ex.id, "missing", "", shown(ex.hints[tier - 1]), tier=tier)


def _expected(ex: Exercise) -> Any:
    try:
        return ex.expected()
    except Exception as err:  # an authoring bug: say where, never show the value
        raise RuntimeError(
            f"exercise {ex.id}: computing its expected value failed ({type(err).__name__}); "
            f"this is a bug in {ex.origin}, not in your answer"
        ) from None


def _grade(ex: Exercise, answer: Any, expected: Any) -> tuple[Verdict, str]:
    """The verdict and the kind of mistake (``""`` when not recognised)."""
    if ex.compare is not None:
        ok, detail, kind = _normalise_verdict(ex.compare(answer, expected), ex.id)
        if ok:  # a right answer may carry a note (02.6: "that is GPipe's order")
            return (Verdict("right", note=detail) if detail else Verdict("right")), kind
        return Verdict("wrong", detail), kind
    verdict = grade(answer, expected, rel_tol=ex.rel_tol, abs_tol=ex.abs_tol, exact=ex.exact,
                    fraction_of=ex.fraction_of, unit=ex.unit)
    if verdict.status != "wrong":
        return verdict, ""
    if verdict.form:  # not read in the asked form (words, another unit): said, not counted as a try
        return verdict, FORMAT
    for mistake in ex.mistakes:
        try:
            # close_from=2: one significant digit is too few to tell which mistake was made (policy)
            seen = grade(answer, mistake.value(expected), rel_tol=ex.rel_tol, abs_tol=ex.abs_tol,
                         fraction_of=ex.fraction_of, close_from=2, unit=ex.unit)
        except Exception as err:
            raise RuntimeError(f"exercise {ex.id}: a mistake's value failed ({type(err).__name__}); "
                               f"this is a bug in {ex.origin}, not in your answer") from None
        if seen.status != "wrong" or _reciprocal_matches(answer, mistake.value(expected), ex):
            return Verdict("wrong", shown(mistake.message)), mistake.kind
    return verdict, ""


_ONE_OVER = re.compile(r"^\s*1\s*/\s*(\S.*?)\s*$")


def _reciprocal_matches(answer: Any, value: Any, ex: Exercise) -> bool:
    """Text ``"1/X"`` matches a mistake whose value is ``1/x`` when ``X`` matches ``x`` by the rounding rule: the
    learner wrote ``X``'s digits (``"1/16"`` for a key of 16.018 is the upside-down ratio, as ``"0.0624"`` is)."""
    found = _ONE_OVER.match(answer) if isinstance(answer, str) else None
    denominator = found.group(1) if found else None
    if isinstance(answer, Fraction) and answer.numerator == 1 and answer.denominator > 1:  # Fraction(1, 16): the same
        denominator = str(answer.denominator)
    elif isinstance(answer, float) and 0 < answer < 1 and (1 / answer).is_integer():      # 0.0625 = 1/16 too
        denominator = str(int(1 / answer))
    if denominator is None or value == 0:
        return False
    try:
        seen = grade(denominator, 1 / value, rel_tol=ex.rel_tol, abs_tol=ex.abs_tol, close_from=2)
    except (ArithmeticError, TypeError, ValueError):
        return False
    return seen.status != "wrong"


def _is_answer_function(answer: Any) -> bool:
    """Plain functions and lambdas count as answer functions, classes and objects do not."""
    return inspect.isfunction(answer) or inspect.ismethod(answer) or isinstance(answer, functools.partial)


def _normalise_verdict(verdict: Any, id: str) -> tuple[bool, str, str]:
    if isinstance(verdict, tuple) and len(verdict) in (2, 3):
        kind = str(verdict[2]) if len(verdict) == 3 and verdict[2] else str(getattr(verdict, "kind", ""))
        return bool(verdict[0]), str(verdict[1]), kind
    if isinstance(verdict, bool):
        return verdict, "", ""
    raise TypeError(f"exercise {id}: compare must return (ok, message), (ok, message, kind) or a bool, "
                    f"got {type(verdict).__name__}")


register({
    "checks.words_only": {
        "en": "{id} is answered in words and has no check: compare your answer with {where}",
        "zh": "{id} 是用文字作答的题，没有自动检查：请把你的答案和{where}对照"},
})


def _unknown_id_message(id: str) -> str:
    if id.strip() in WORDS_ONLY:
        return tr("checks.words_only", id=id.strip(), where=shown(WORDS_ONLY[id.strip()]))
    known = ids()
    close = difflib.get_close_matches(id.strip(), known, n=5, cutoff=0.5)
    lesson = id.strip()[:2]
    same_lesson = [k for k in known if k.startswith(lesson + ".")]
    listed = close or same_lesson
    text = f"unknown exercise id {id!r}"
    if listed:
        text += f"; close ids: {', '.join(listed)}"
    elif known:
        text += f"; known ids: {', '.join(known[:30])}{' ...' if len(known) > 30 else ''}"
    else:
        text += "; no exercises are registered"
    return text


def compare_values(answer: Any, expected: Any, *, rel_tol: float = 1e-9, abs_tol: float = 0.0,
                   exact: bool = False, fraction_of: str | None = None,
                   unit: Unit | tuple[Unit | None, ...] | None = None) -> tuple[bool, str]:
    """Compare ``answer`` with ``expected`` by the grading policy; return ``(ok, message)``.

    ``message`` says what is wrong (type, length, which item, too high/low, close) and never
    contains the expected value. For custom ``compare`` functions that grade a part by the policy.
    """
    verdict = grade(answer, expected, rel_tol=rel_tol, abs_tol=abs_tol, exact=exact, fraction_of=fraction_of,
                    unit=unit)
    if verdict.status == "close":
        return False, tr("checks.close_colon", detail=verdict.detail)
    return verdict.ok, verdict.detail


register({
    "checks.choice_outside": {"en": "that is not one of the choices here: {choices}",
                              "zh": "不在可选的范围内：{choices}"},
})


def compare_choice(answer: Any, expected: Any, choices: Sequence[Any], other: Msg, *, rank: bool = False) -> Graded:
    """Grade a pick among a few ``choices`` (a rank, a v): right or not, never "too high / too low".

    With a handful of options a direction gives the answer away in two guesses (lesson 06's
    06.3 grades its rank the same way). An answer that is another of the ``choices`` gets
    ``other`` (shown in the current language), one outside them is told the choices, one
    that is not a number gets the policy's message and, when it is text, kind ``FORMAT`` (not counted as a try).
    ``rank=True``: the choices are ranks, read by :func:`as_rank` (``"rank 1"``, ``"r1"``), as lessons 06 and 10 read
    theirs. Returns ``Graded(ok, message, kind)``. Used by 01.2 (its rank item), 02.5 and 05.3.
    """
    if rank and as_rank(answer) is not None:
        answer = as_rank(answer)
    verdict = grade(answer, expected)
    if verdict.ok:
        return Graded(True, "", "")
    if verdict.shape:
        return Graded(False, verdict.detail, FORMAT if verdict.form else "")
    if any(grade(answer, c).ok for c in choices):
        return Graded(False, shown(other), "")
    return Graded(False, tr("checks.choice_outside", choices=", ".join(map(str, choices))), "")


# ----------------------------------------------------------------------------- progress


@dataclass(frozen=True)
class Progress:
    """Which exercises this session has done: from :func:`progress`.

    Attributes:
        lesson: the two-digit lesson (``"03"``), or ``None`` for every lesson.
        rows: ``(id, state, tries)`` per exercise, state ``"done"``, ``"tried"`` or ``"todo"``.
        language: the language it was made in; its words are shown in it.
    """

    lesson: str | None
    rows: tuple[tuple[str, str, int], ...] = field(default_factory=tuple)
    language: str = field(default_factory=get_language, compare=False)

    @property
    def done(self) -> list[str]:
        """Ids answered right at least once this session."""
        return [i for i, s, _ in self.rows if s == "done"]

    @property
    def tried(self) -> list[str]:
        """Ids checked but not right yet."""
        return [i for i, s, _ in self.rows if s == "tried"]

    @property
    def todo(self) -> list[str]:
        """Ids not checked yet this session."""
        return [i for i, s, _ in self.rows if s == "todo"]

    _STATUS = {"done": "correct", "tried": "wrong", "todo": "missing"}

    def _title(self) -> str:
        counts = {"done": len(self.done), "total": len(self.rows)}
        if self.lesson is None:
            return translate("checks.progress.all", self.language, **counts)
        return translate("checks.progress.lesson", self.language, lesson=self.lesson, **counts)

    def _label(self, id: str, state: str, tries: int) -> str:
        if state == "tried":
            return translate("checks.progress.try" if tries == 1 else "checks.progress.tries", self.language,
                             id=id, tries=tries)
        return id

    def __repr__(self) -> str:
        ascii_only = _display.use_ascii()
        items = [_display.plain(self._STATUS[s], self._label(i, s, t), ascii_only=ascii_only) for i, s, t in self.rows]
        lines = [self._title()]
        for _, group in itertools.groupby(zip(self.rows, items), key=lambda pair: pair[0][0][:2]):
            lines.append("   ".join(item for _, item in group))
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        cells = []
        for id, state, tries in self.rows:
            status = self._STATUS[state]
            cells.append(
                f'<span class="bubblekit-progress-item bubblekit-progress-{state}" '
                f'style="display:inline-block;margin:0 12px 2px 0">{_display.mark_html(status)} '
                f"{html.escape(self._label(id, state, tries))}</span>"
            )
        return (f'<div class="bubblekit-progress"><div><b>{html.escape(self._title())}</b></div>'
                f"<div>{''.join(cells)}</div></div>")


def progress(lesson: str | int | None = None) -> Progress:
    """Which exercises of ``lesson`` (``"03"``, ``3`` or a notebook name; all when None) are done this session.

    Done = answered right at least once since the kernel started (or :func:`reset_progress`);
    tried = checked, not right yet; todo = not checked. Used in every lesson's exercises
    (``bk.checks.progress("03")``) and summarised in lesson 00.
    """
    wanted = ids(lesson)
    if lesson is not None and not wanted:
        raise ValueError(f"lesson {_lesson_key(lesson)} has no exercises; lessons with exercises: "
                         f"{', '.join(sorted({i[:2] for i in ids()}))}")
    rows = []
    for id in wanted:
        record = _SESSION.get(id)
        if record is None or record.tries == 0:
            rows.append((id, "todo", 0))
        else:
            rows.append((id, "done" if record.solved else "tried", record.tries))
    return Progress(_lesson_key(lesson) if lesson is not None else None, tuple(rows))

