"""Reading and grading a learner's answer: the rules of the grading policy.

The policy itself is written once, in the docstring of :mod:`bubblekit.course.checks`;
this module implements it. :func:`read_number` reads whatever a learner may type as a
number (``0.273``, ``"27.3%"``, ``np.float32(0.273)``, ``Decimal("0.2730")``,
``sympy.Rational(3, 11)``, ``10**400``) together with the significant digits they wrote;
:func:`grade` compares an answer with an expected value and returns a :class:`Verdict`
(``right``, ``close`` or ``wrong``, with a message that never contains the expected value).

Pure: imports the standard library only (numpy and sympy objects are recognised by duck
typing), so the checks stay part of the core.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Literal

from bubblekit.course.checks._text import msg, shown
from bubblekit.course.checks._units import Unit, unit_key, unit_named
from bubblekit.i18n import register, tr

__all__ = [
    "MIN_DIGITS",
    "AnyOf",
    "Graded",
    "Reading",
    "Verdict",
    "grade",
    "read_number",
    "read_expression",
    "norm_text",
]

#: Fewest significant digits a rounded answer must give to count as right (grading policy).
MIN_DIGITS = 3

#: Significant decimal digits a float type carries (numpy's ``finfo(dtype).precision``).
_FLOAT64_DIGITS = 15

Grade = Literal["right", "close", "wrong"]

#: Every verdict's words, in both languages (:mod:`bubblekit.i18n`); fetched when an answer is graded.
register({
    "checks.too_high": {"en": "too high", "zh": "偏大"},
    "checks.too_low": {"en": "too low", "zh": "偏小"},
    "checks.percent_note_of": {"en": "your percentage was read as a fraction of {of}",
                               "zh": "已把你填的百分数换算成占{of}的比例"},
    "checks.truth_value": {"en": "expected a number, got a truth value (True/False)",
                           "zh": "这里要一个数字，收到的是布尔值（True/False）"},
    "checks.not_a_number": {"en": "expected a number, got {type}", "zh": "这里要一个数字，收到的是 {type}"},
    "checks.not_real": {"en": "expected a real number, got {type}", "zh": "这里要一个实数，收到的是 {type}"},
    "checks.divides_by_zero": {"en": "your answer divides by zero", "zh": "你的答案除以了零"},
    "checks.text_not_number": {"en": "expected a number, got the text {text!r}, which is not one",
                               "zh": "这里要一个数字，收到的文本 {text!r} 不是数字"},
    "checks.sympy_complex": {"en": "expected a real number, got a complex or undefined sympy value",
                             "zh": "这里要一个实数，收到的是复数或无定义的 sympy 值"},
    "checks.sympy_symbols": {"en": "expected a number, got a sympy expression with symbols ({type})",
                             "zh": "这里要一个数字，收到的是含符号的 sympy 表达式（{type}）"},
    "checks.nan": {"en": "your answer is NaN (not a number)", "zh": "你的答案是 NaN（不是数字）"},
    "checks.wrong_truth": {"en": "not the right truth value", "zh": "真假判断不对"},
    "checks.want_bool": {"en": "expected True or False, got {type}", "zh": "这里要 True 或 False，收到的是 {type}"},
    "checks.want_one_number": {"en": "expected one number, got a {type}", "zh": "这里要一个数字，收到的是 {type}"},
    "checks.want_text": {"en": "expected text (a str), got {type}", "zh": "这里要文本（str），收到的是 {type}"},
    "checks.wrong_text": {"en": "not the expected text", "zh": "文本不对"},
    "checks.wrong_object": {"en": "not the expected {type}", "zh": "这个 {type} 不对"},
    "checks.each_right": {"en": "each of these is right; naming one is enough",
                          "zh": "这几个都对；说出其中一个就够了"},
    "checks.not_any": {"en": "not one of the right answers", "zh": "不是正确答案之一"},
    "checks.sympy_unreadable": {"en": "could not read your answer as a sympy expression (got {type})",
                                "zh": "无法把你的答案读成 sympy 表达式（收到的是 {type}）"},
    "checks.expression_text": {
        "en": "could not read the text {text!r} as an expression: write it as in Python, with * (or a space) between "
              "factors, / for a division and ** for a power",
        "zh": "无法把文本 {text!r} 读成表达式：请按 Python 的写法书写，因子之间用 *（或空格），除法用 /，乘方用 **"},
    "checks.unit_other": {"en": "that is in {got}; this question asks for the number in {want}",
                          "zh": "你写的单位是“{got}”，这道题要的是以“{want}”为单位的数字"},
    "checks.unit_none": {"en": "this number has no unit here: give it alone, without {got}",
                         "zh": "这个数没有单位：只写数字，不要带“{got}”"},
    "checks.unit_unknown": {"en": "expected a number in {want}, got the text {text!r}: write the number alone (or "
                                  "followed by {want})",
                            "zh": "这里要一个以“{want}”为单位的数字，收到的文本 {text!r} 读不出来：只写数字（或在数字"
                                  "后面写“{want}”）"},
    "checks.unit_words": {"en": "expected a number, got the text {text!r}: write the number alone, without words",
                          "zh": "这里要一个数字，收到的文本 {text!r} 带了文字：只写数字，不要带文字"},
    "checks.sympy_extra_symbols": {
        "en": "not equal to the expected expression; it uses symbol(s) {names} that the answer does not need",
        "zh": "与期望的表达式不相等；它用了答案不需要的符号 {names}"},
    "checks.sympy_unknown_symbols": {
        "en": "unknown symbol(s) {names}: write the answer with the question's symbols ({symbols}), and a product "
              "with * or a space (m*v or m v)",
        "zh": "未知符号 {names}：请用题目里的符号（{symbols}）写答案，相乘的两个符号之间用 * 或空格（m*v 或 m v）"},
    "checks.fused_backward_read": {"en": "t_b read as t_i + t_w, the fused backward",
                                   "zh": "t_b 按 t_i + t_w 理解，即不拆分的整个反向"},
    "checks.sympy_differs": {
        "en": "not equal to the expected expression (try a few numbers against the simulator)",
        "zh": "与期望的表达式不相等（代入几组数字，和模拟器的结果对一对）"},
    "checks.want_dict": {"en": "expected a dict, got {type}", "zh": "这里要一个 dict，收到的是 {type}"},
    "checks.wrong_keys": {"en": "the keys are not right ({missing} missing, {extra} unexpected)",
                          "zh": "键不对（缺 {missing} 个，多 {extra} 个）"},
    "checks.wrong_value_for": {"en": "the value for key {key!r} is not right ({detail})",
                               "zh": "键 {key!r} 的值不对（{detail}）"},
    "checks.close_value_for": {"en": "the value for key {key!r}: {detail}", "zh": "键 {key!r} 的值：{detail}"},
    "checks.want_set": {"en": "expected a set, got {type}", "zh": "这里要一个集合，收到的是 {type}"},
    "checks.unhashable": {"en": "the elements of your answer cannot be put in a set",
                          "zh": "你的答案里的元素无法放进集合"},
    "checks.wrong_set": {"en": "{missing} element(s) missing, {extra} that should not be there",
                         "zh": "缺 {missing} 个元素，多了 {extra} 个不该有的"},
    "checks.want_sequence": {"en": "expected a sequence (list or tuple), got {type}",
                             "zh": "这里要一个序列（list 或 tuple），收到的是 {type}"},
    "checks.wrong_length": {"en": "expected {want} items, got {got}", "zh": "这里要 {want} 项，收到了 {got} 项"},
    "checks.wrong_item": {"en": "item {i} is not right ({detail})", "zh": "第 {i} 项不对（{detail}）"},
    "checks.close_item": {"en": "item {i}: {detail}", "zh": "第 {i} 项：{detail}"},
    "checks.wrong_entry": {"en": "item {i}, entry {j} is not right ({detail})",
                           "zh": "第 {i} 项的第 {j} 个数不对（{detail}）"},
    "checks.close_entry": {"en": "item {i}, entry {j}: {detail}", "zh": "第 {i} 项的第 {j} 个数：{detail}"},
    "checks.wrong_key_entry": {"en": "the value for key {key!r}, entry {j} is not right ({detail})",
                               "zh": "键 {key!r} 的值的第 {j} 个数不对（{detail}）"},
    "checks.close_key_entry": {"en": "the value for key {key!r}, entry {j}: {detail}",
                               "zh": "键 {key!r} 的值的第 {j} 个数：{detail}"},
    "checks.comma_note": {"en": "your comma was read as a decimal point",
                          "zh": "你写的逗号已当作小数点"},
    "checks.decimal_comma": {
        "en": "that looks like a decimal comma: a comma before three digits is read as a thousands separator; "
              "write the decimal point as '.'",
        "zh": "这看起来是把逗号当成了小数点：逗号后面跟三位数字时会被当作千位分隔符；小数点请写成 '.'"},
    "checks.rounding_note": {
        "en": "right to 3 significant digits; your last digit differs by rounding",
        "zh": "前 3 位有效数字正确；最后一位的差别来自舍入"},
})

#: What a percentage's note and a fraction's check name as "the whole" (``fraction_of``), in both languages.
THE_STEP = msg("the step", "整步", key="checks.of.step")

CLOSE_DIGITS = msg("give at least {digits} significant digits", "请至少给出 {digits} 位有效数字",
                   key="checks.close_digits")
CLOSE_EXACT = msg("this exercise asks for the exact value: use fractions.Fraction (or an int)",
                  "这道题要精确值：请用 fractions.Fraction（或 int）", key="checks.close_exact")
PERCENT_BARE = msg(
    "that looks like a percentage: this exercise wants a fraction of 1, so divide by 100 "
    "(or write it as text with its % sign, like '12.5%')",
    "这看起来是百分数，而这道题要的是 0 到 1 之间的比例：请除以 100（或者写成带 % 号的字符串，比如 '12.5%'）",
    key="checks.percent_bare")
PERCENT_NOT_ASKED = msg("this exercise does not ask for a percentage: give a plain number (without the % sign)",
                        "这道题不要百分数：请给出普通数字（不带 % 号）", key="checks.percent_not_asked")
PERCENT_NOTE = msg("your percentage was read as a fraction", "已把你填的百分数换算成比例", key="checks.percent_note")


@dataclass(frozen=True)
class Verdict:
    """The outcome of comparing one answer with one expected value.

    Attributes:
        status: ``"right"``, ``"close"`` (the right value, not precise or not exact enough)
            or ``"wrong"``.
        detail: what is not right yet, in words; never the expected value.
        note: a remark on a right answer (how it was read), or ``""``.
        shape: True when the answer is not even of the expected type or length ("expected a
            number, got ..."): :class:`AnyOf` then reports that rather than "not one of the right answers".
        reason: for an answer nested in sequences or dicts, what is wrong with the innermost
            item, without its place (``detail`` names the place once, 1-based, never nested).
        where: that place: the 1-based item numbers (or dict keys) from the outside in.
        form: True when the answer is not read in the asked form (text that is no number or expression, a number
            in another unit): the learner is told why and the answer is not counted as a try.
    """

    status: Grade
    detail: str = ""
    note: str = ""
    shape: bool = False
    reason: str = ""
    where: tuple[Any, ...] = ()
    form: bool = False

    @property
    def ok(self) -> bool:
        """True when the answer is right."""
        return self.status == "right"


RIGHT = Verdict("right")


class AnyOf(tuple):  # type: ignore[type-arg]
    """An expected value with several right answers: any one of them is right.

    ``AnyOf(["zbv", "dualpipev"])``: "zbv" and "dualpipev" are each right, and so is a
    collection naming all of them. Its repr never reaches a learner (results do not
    store the expected value).
    """

    def __new__(cls, options: Any) -> AnyOf:
        items = tuple(options)
        if not items:
            raise ValueError("AnyOf needs at least one right answer, got none")
        return super().__new__(cls, items)


class Graded(tuple):  # type: ignore[type-arg]
    """What a custom ``compare`` returns: the pair ``(ok, message)``, plus the kind of mistake.

    It unpacks and compares as the 2-tuple ``(ok, message)``; ``kind`` (``"deadlock"``,
    ``"memory"``, ``"slow"``, ... or ``""``) selects the hint
    (:data:`bubblekit.course.checks._registry.KIND_HINTS`).
    """

    kind: str

    def __new__(cls, ok: bool, message: str = "", kind: str = "") -> Graded:
        self = super().__new__(cls, (bool(ok), str(message)))
        self.kind = str(kind)
        return self


# ----------------------------------------------------------------------------- reading numbers


@dataclass(frozen=True)
class Reading:
    """A number as the learner wrote it.

    Attributes:
        value: the value (a ``Fraction``; ``float`` only for NaN and infinities). A
            percentage (``"27.3%"``) is already divided by 100.
        written: the digits as written (a ``Decimal``, before dividing a percentage by 100),
            or ``None`` for exact values (int, Fraction, sympy Rational, ``"3/11"``) and
            for values with no decimal form (``sympy.pi``): those count as fully precise.
        cap: the most significant digits the number's type can carry (float32: 6), or None.
        exact: True for int, Fraction, sympy Integer/Rational and ``"a/b"`` text.
        percent: True when written with a % sign.
        comma: True when text like ``"0,273"`` was read with its comma as a decimal point.
        unit: the words written after the number (or the sign before it: ``"$"``), as written; ``""`` when none.
    """

    value: Fraction | float
    written: Decimal | None = None
    cap: int | None = None
    exact: bool = False
    percent: bool = False
    comma: bool = False
    unit: str = ""

    @property
    def finite(self) -> bool:
        """False for NaN and infinities."""
        return isinstance(self.value, Fraction)

    def digits(self) -> tuple[int, int] | None:
        """``(fewest, most)`` significant digits written, or None when fully precise.

        Trailing zeros are ambiguous (``5800``, ``0.2730``): *most* counts them, *fewest*
        does not. Both are capped at what the type can carry.
        """
        if self.written is None or self.written == 0:
            return None
        digits = "".join(map(str, self.written.as_tuple().digits)).lstrip("0")
        most = len(digits)
        fewest = max(1, len(digits.rstrip("0")))
        if self.cap is not None:
            most, fewest = min(most, self.cap), min(fewest, self.cap)
        return fewest, most

    def half_unit(self, digits: int) -> Fraction:
        """Half a unit in the last place when ``digits`` significant digits are kept (value scale)."""
        assert self.written is not None
        exponent = self.written.adjusted() - digits + 1
        unit = Fraction(10) ** exponent
        return unit / (200 if self.percent else 2)


_PERCENT_SIGNS = ("%", "\uff05")  # '%' and the full-width '％' of Chinese input methods
_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")
#: A decimal comma (``"0,273"``, ``"1,5"``): digits, one comma, digits, and not a thousands form.
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")
_RATIO = re.compile(r"^([+-]?\d+)\s*/\s*([+-]?\d+)$")
#: A number followed by words (``"14 ms"``, ``"135个"``) or preceded by a currency sign (``"$176,947"``).
_NUMBER_AND_UNIT = re.compile(
    r"^(?P<pre>us\$|[$¥])?\s*"
    r"(?P<num>[+-]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?:\s*/\s*[+-]?\d+)?\s*%?)"
    r"\s*(?P<unit>[^\d\s].*?)?\s*$", re.IGNORECASE)


#: What a learner writes around a number and is no part of it: a leading ``name =`` (``"m = 135"``, ``"T=14"``),
#: ``≈``, ``~``, ``约`` or ``大约`` (``"≈0.0986"``, ``"约5843元"``), and a closing full stop (``.``, ``。``).
_NUMBER_FRAME = re.compile(r"^(?:[A-Za-z_][\w^*{}]*\s*=(?!=)\s*)?(?:≈|~|大约|约)?\s*|\s*[.。]\s*$")


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or type(x).__name__ in ("bool_", "bool")


def _is_sympy(x: Any) -> bool:
    return type(x).__module__.startswith("sympy")


def _from_decimal(d: Decimal, *, cap: int | None = None, percent: bool = False) -> Reading:
    if d.is_nan():
        return Reading(math.nan, cap=cap, percent=percent)
    if d.is_infinite():
        return Reading(math.inf if d > 0 else -math.inf, cap=cap, percent=percent)
    value = Fraction(d) / (100 if percent else 1)
    return Reading(value, d, cap, exact=False, percent=percent)


def _from_float(x: float, cap: int | None = _FLOAT64_DIGITS) -> Reading:
    if math.isnan(x) or math.isinf(x):
        return Reading(x)
    return _from_decimal(Decimal(repr(x)), cap=cap)


def read_number(x: Any) -> Reading | str:
    """Read ``x`` as a number; return a :class:`Reading`, or a sentence saying why not.

    Accepted: int, float, Fraction, Decimal, numpy scalars and 0-d arrays, sympy numbers,
    and text holding a number: ``"0.273"``, ``"27.3%"``, ``"5,843"``, ``"1e-3"``, ``"3/11"``.
    ``True``/``False`` are not numbers here.
    """
    if _is_bool(x):
        return tr("checks.truth_value")
    if type(x).__module__ == "numpy":
        dtype = getattr(x, "dtype", None)
        if getattr(x, "ndim", 0) == 0 and hasattr(x, "item"):
            kind = getattr(dtype, "kind", "")
            if kind == "b":
                return tr("checks.truth_value")
            if kind in "iu":
                return read_number(int(x.item()))
            if kind == "f":
                import numpy as np

                cap = int(np.finfo(dtype).precision)
                text = str(x)
                try:
                    return _from_decimal(Decimal(text), cap=cap)
                except InvalidOperation:
                    return _from_float(float(x), cap)
        return tr("checks.not_a_number", type=type(x).__name__)
    if isinstance(x, str):
        return _read_text(x)
    if isinstance(x, Decimal):
        return _from_decimal(x)
    if isinstance(x, numbers.Integral):
        n = int(x)
        # A single-digit whole number is read like its float (2 as 2.0, two digits), so that an int
        # and the same float get one verdict; larger ones keep both readings of trailing zeros (5800).
        return Reading(Fraction(n), Decimal(f"{n}.0") if abs(n) < 10 else Decimal(n), exact=True)
    if isinstance(x, numbers.Rational):
        return Reading(Fraction(int(x.numerator), int(x.denominator)), exact=True)
    if isinstance(x, float):
        return _from_float(x)
    if _is_sympy(x):
        return _read_sympy(x)
    if isinstance(x, numbers.Real):
        return _from_float(float(x))
    if isinstance(x, numbers.Number):
        return tr("checks.not_real", type=type(x).__name__)
    return tr("checks.not_a_number", type=type(x).__name__)


def _number_part(text: str) -> tuple[str, str]:
    """``text`` split into the number and the unit written with it: ``"14 ms"`` -> ``("14", "ms")``, ``"$5"`` ->
    ``("5", "$")``; full-width forms read as ASCII (``"７／１１"`` is ``"7/11"``) and a typographic minus as ``-``."""
    t = unicodedata.normalize("NFKC", text).strip().replace("\u2212", "-")
    t = _NUMBER_FRAME.sub("", t).strip()
    split = _NUMBER_AND_UNIT.match(t)
    if split is None:
        return t, ""
    unit = (split.group("unit") or "").strip() or (split.group("pre") or "")
    return (split.group("num").strip(), unit) if unit_key(unit) else (split.group("num").strip(), "")


#: A Chinese magnitude after a number: ``"17.7万"`` is 177 000 and ``"1.2亿"`` 120 000 000 (digits kept).
_CJK_MAGNITUDE = re.compile(r"^(?P<pre>(?:≈|~|大约|约)?\s*)(?P<num>[+-]?\d+(?:\.\d+)?)\s*(?P<mag>万|亿)(?P<rest>.*)$")


def _read_text(text: str) -> Reading | str:
    magnitude = _CJK_MAGNITUDE.match(unicodedata.normalize("NFKC", text).strip())
    if magnitude:
        scaled = Decimal(magnitude.group("num")).scaleb(4 if magnitude.group("mag") == "万" else 8)
        text = f"{magnitude.group('pre')}{scaled}{magnitude.group('rest')}"
    t, unit = _number_part(text)
    if unit:
        reading = _read_text(t)
        return replace(reading, unit=unit) if isinstance(reading, Reading) else tr("checks.text_not_number", text=text)
    percent = t.endswith(_PERCENT_SIGNS)
    if percent:
        t = t[:-1].strip()
    t = t.replace("_", "") if re.fullmatch(r"[+-]?\d[\d_]*(\.\d*)?", t) else t
    comma = False
    if _THOUSANDS.match(t):
        t = t.replace(",", "")
    elif _DECIMAL_COMMA.match(t):  # "0,273", "1,5": a decimal comma, as many countries write it
        t, comma = t.replace(",", "."), True
    ratio = _RATIO.match(t)
    if ratio and not percent:
        num, den = int(ratio.group(1)), int(ratio.group(2))
        if den == 0:
            return tr("checks.divides_by_zero")
        return Reading(Fraction(num, den), exact=True)
    try:
        d = Decimal(t)
    except (InvalidOperation, ValueError):
        return tr("checks.text_not_number", text=text)
    if not percent and re.fullmatch(r"[+-]?\d", t):  # "2" is read like 2 and 2.0 (two digits), as read_number does
        d = Decimal(f"{t}.0")
    reading = _from_decimal(d, percent=percent)
    return replace(reading, comma=True) if comma else reading


def _decimal_comma_reading(answer: Any) -> Reading | None:
    """``"5,843"`` read with its comma as a decimal point (5.843), or None when the text has no such comma."""
    if not isinstance(answer, str):
        return None
    t, _ = _number_part(answer)
    percent = t.endswith(_PERCENT_SIGNS)
    t = t[:-1].strip() if percent else t
    if t.count(",") != 1 or "." in t or not _THOUSANDS.match(t):
        return None
    return _from_decimal(Decimal(t.replace(",", ".")), percent=percent)


def _read_sympy(x: Any) -> Reading | str:
    if getattr(x, "is_Integer", False):
        return read_number(int(x))
    if getattr(x, "is_Rational", False):
        return Reading(Fraction(int(x.p), int(x.q)), exact=True)
    if getattr(x, "is_Float", False):
        prec = int(getattr(x, "_prec", 53))
        if prec >= 53:
            return _from_float(float(x))
        dps = max(1, int(prec * math.log10(2)))
        try:
            return _from_decimal(Decimal(str(x)), cap=dps)
        except InvalidOperation:
            return _from_float(float(x))
    if getattr(x, "is_number", False):
        if not getattr(x, "is_real", False):
            return tr("checks.sympy_complex")
        value = float(x)
        if math.isnan(value) or math.isinf(value):
            return Reading(value)
        return Reading(Fraction(value))  # pi, sqrt(2): no decimal form, fully precise
    return tr("checks.sympy_symbols", type=type(x).__name__)


# ----------------------------------------------------------------------------- numbers


def _as_fraction(x: Any) -> Fraction | None:
    """The exact value of an expected number, or None when it is not one."""
    reading = read_number(x)
    if isinstance(reading, str) or not reading.finite:
        return None
    assert isinstance(reading.value, Fraction)
    return reading.value


def _direction(a: Fraction | float, e: Fraction) -> str:
    return tr("checks.too_high") if a > e else tr("checks.too_low")


def _close(a: Fraction, e: Fraction, rel_tol: float, abs_tol: float) -> bool:
    """``math.isclose`` in exact arithmetic (no overflow for 10**400)."""
    if a == e:
        return True
    bound = max(Fraction(rel_tol) * max(abs(a), abs(e)), Fraction(abs_tol))
    return abs(a - e) <= bound


def _rounds_to(reading: Reading, e: Fraction, digits: int) -> bool:
    """True when ``e`` rounded to ``digits`` significant digits is what the learner wrote."""
    assert isinstance(reading.value, Fraction)
    slack = Fraction(1, 10**9)  # an exact tie rounds either way; the expected float may sit a hair off
    return abs(reading.value - e) <= reading.half_unit(digits) * (1 + slack)


def _match(reading: Reading, e: Fraction, rel_tol: float, abs_tol: float, close_from: int = 1) -> str:
    """``right`` within the tolerance or rounded right to >= MIN_DIGITS digits; ``rounded``; ``close``; or ``wrong``.

    ``rounded``: more than MIN_DIGITS digits whose first MIN_DIGITS agree with ``e`` and whose
    last one is off by at most one unit, a rounding difference (5844 for 5843.48): right, with a note.
    ``close``: fewer than MIN_DIGITS significant digits (at least ``close_from`` of them) that
    round right, but differ from the value rounded to MIN_DIGITS (0.27 for 3/11 = 0.2727...).
    """
    assert isinstance(reading.value, Fraction)
    if _close(reading.value, e, rel_tol, abs_tol):
        return "right"
    digits = reading.digits()
    if digits is None:
        return "wrong"
    fewest, most = digits
    # Right when it is e rounded to the digits given, at least MIN_DIGITS of them: a float
    # cannot keep trailing zeros (0.190 arrives as 0.19), so 0.19 is right for 0.18987.
    if _rounds_to(reading, e, max(MIN_DIGITS, fewest)):
        return "right"
    if fewest > MIN_DIGITS and _rounding_difference(reading, e, fewest):
        return "rounded"
    if close_from <= fewest < MIN_DIGITS and _rounds_to(reading, e, min(most, MIN_DIGITS - 1)):
        return "close"
    return "wrong"


def _rounding_difference(reading: Reading, e: Fraction, digits: int) -> bool:
    """True when the answer and ``e`` agree to MIN_DIGITS significant digits and differ by at most one
    unit in the answer's last place (``digits`` significant digits): a rounding difference."""
    assert isinstance(reading.value, Fraction) and reading.written is not None
    if e == 0 or (reading.value > 0) != (e > 0):
        return False
    unit = 2 * reading.half_unit(digits)
    if abs(reading.value - e) > unit * (1 + Fraction(1, 10**9)):
        return False
    return _sig_round(reading.value, MIN_DIGITS) == _sig_round(e, MIN_DIGITS)


def _sig_round(x: Fraction, digits: int) -> Decimal:
    """``x`` rounded half-even to ``digits`` significant digits (exact arithmetic)."""
    d = Decimal(x.numerator) / Decimal(x.denominator)
    return Decimal(f"{d:.{digits - 1}e}")


def _as_percentage(reading: Reading) -> Reading:
    """The same digits read as a percentage (``27.3`` as ``27.3 %``)."""
    assert isinstance(reading.value, Fraction)
    return Reading(reading.value / 100, reading.written, reading.cap, reading.exact, percent=True)


def grade_number(
    answer: Any,
    expected: Any,
    *,
    rel_tol: float = 1e-9,
    abs_tol: float = 0.0,
    exact: bool = False,
    fraction_of: str | None = None,
    close_from: int = 1,
    unit: Unit | None = None,
) -> Verdict:
    """Grade a number by the policy (significant digits, percentages, exactness, counts, units).

    ``close_from``: the fewest significant digits a "close" answer may have (2 when matching a
    recognised mistake: one digit is too few to tell which mistake it was). ``unit``: the unit the
    question asks the number in (a number written with it is read; another unit is named).
    """
    reading = read_number(answer)
    if isinstance(reading, str):
        return Verdict("wrong", reading, shape=reading != tr("checks.divides_by_zero"),
                       form=isinstance(answer, str) and reading != tr("checks.divides_by_zero"))
    if reading.unit:
        problem = _unit_problem(answer, reading.unit, unit)
        if problem:
            return Verdict("wrong", problem, shape=True, form=True)
    e = _as_fraction(expected)
    if e is None:
        raise TypeError(f"expected value must be a finite real number, got {type(expected).__name__}")
    if not reading.finite:
        if isinstance(reading.value, float) and math.isnan(reading.value):
            return Verdict("wrong", tr("checks.nan"))
        return Verdict("wrong", _direction(reading.value, e))
    assert isinstance(reading.value, Fraction)
    a = reading.value
    if reading.percent and fraction_of is None:
        return Verdict("wrong", shown(PERCENT_NOT_ASKED), form=True)  # a form problem: said, not counted
    note = ""
    if reading.percent:
        note = tr("checks.percent_note_of", of=shown(fraction_of)) if fraction_of else shown(PERCENT_NOTE)
    if reading.comma:
        note = f"{note}; {tr('checks.comma_note')}" if note else tr("checks.comma_note")

    if exact:
        if reading.exact:
            return RIGHT if a == e else Verdict("wrong", _direction(a, e))
        if _match(reading, e, 1e-9, 0.0) != "wrong":
            return Verdict("close", shown(CLOSE_EXACT))
        return Verdict("wrong", _percent_or_direction(reading, e, rel_tol, abs_tol, fraction_of))

    if e.denominator == 1:  # a whole number (a count, a makespan in whole slots): exact
        if _close(a, e, rel_tol, abs_tol):
            return Verdict("right", note=note)
        return Verdict("wrong", _comma_or(answer, e, rel_tol, abs_tol, _direction(a, e)))

    status = _match(reading, e, rel_tol, abs_tol, close_from)
    if status == "right":
        return Verdict("right", note=note)
    if status == "rounded":
        return Verdict("right", note=f"{note}; {tr('checks.rounding_note')}" if note else tr("checks.rounding_note"))
    if status == "close":
        return Verdict("close", CLOSE_DIGITS.say(digits=MIN_DIGITS))
    return Verdict("wrong", _comma_or(answer, e, rel_tol, abs_tol,
                                      _percent_or_direction(reading, e, rel_tol, abs_tol, fraction_of)))


def _unit_problem(answer: Any, written: str, asked: Unit | None) -> str:
    """What is wrong with the unit ``written`` after a number where the question asks for ``asked`` (None: no
    unit), or ``""`` when it is the asked unit."""
    if asked is not None and asked.accepts(written):
        return ""
    known = unit_named(written)
    if known is not None and asked is not None:
        return tr("checks.unit_other", got=shown(known.name), want=shown(asked.name))
    if known is not None:
        return tr("checks.unit_none", got=shown(known.name))
    if asked is not None:
        return tr("checks.unit_unknown", want=shown(asked.name), text=answer)
    return tr("checks.unit_words", text=answer)


def _comma_or(answer: Any, e: Fraction, rel_tol: float, abs_tol: float, detail: str) -> str:
    """"looks like a decimal comma" when text like ``"5,843"`` is right with its comma read as a point."""
    other = _decimal_comma_reading(answer)
    if other is not None and _match(other, e, rel_tol, abs_tol) in ("right", "rounded", "close"):
        return tr("checks.decimal_comma")
    return detail


def _percent_or_direction(reading: Reading, e: Fraction, rel_tol: float, abs_tol: float,
                          fraction_of: str | None) -> str:
    """"looks like a percentage" when the bare number is 100 times the expected fraction."""
    assert isinstance(reading.value, Fraction)
    if not reading.percent and e != 0 and (fraction_of is not None or abs(e) <= 1):
        if _match(_as_percentage(reading), e, rel_tol, abs_tol) != "wrong":
            return shown(PERCENT_BARE)
    return _direction(reading.value, e)


# ----------------------------------------------------------------------------- everything else


def norm_text(text: str) -> str:
    """Text as compared: case, whitespace, hyphens and underscores ignored (``"ZB-H1"`` = ``"zb h1"``)."""
    return "".join(ch for ch in text.casefold() if not ch.isspace() and ch not in "-_")


def _is_number(x: Any) -> bool:
    if _is_bool(x):
        return False
    if isinstance(x, numbers.Number):
        return isinstance(x, numbers.Real)
    return bool(getattr(x, "is_number", False)) and bool(getattr(x, "is_real", False))  # sympy numbers


#: A rank named in words around its number: ``"rank 2"``, ``"Rank2"``, ``"r 2"``, ``"第 2 个 rank"``.
_RANK_WORDS = re.compile(r"\s*(?:rank|r)(?:-|\s*[_#:=：＃＝]\s*|\s*)(-?\d+(?:\.\d*)?)\s*。?\s*"
                         r"|\s*第?\s*(\d+(?:\.\d*)?)\s*[个号]?\s*rank\s*。?\s*"
                         r"|\s*第\s*(\d+(?:\.\d*)?)\s*[个号]\s*。?\s*", re.IGNORECASE)
# "rank 2", "rank-2" (a hyphen glued to the word), "r2", "rank #2", "rank：2", "第 2 个 rank", "第 2 号 rank", "2 号 rank",
# "第 2 号", "rank 2。"; a sign after
# a space stays a sign ("rank -1" is rank -1, which does not exist)


def as_rank(answer: Any) -> int | None:
    """``answer`` read as a rank (a whole number: ``2``, ``"2"``, ``2.0``, ``np.int64(2)``, ``"rank 2"``, ``"r2"``,
    ``"第 2 个 rank"``), or None when it is not one (``2.5``, ``"two"``, ``True``, NaN). Lessons 06 (06.3) and 10
    (10.35, 10.38) grade ranks with it."""
    if _is_bool(answer):
        return None
    if isinstance(answer, numbers.Integral):
        return int(answer)
    text = str(answer).strip().removesuffix("。")   # "2。": the Chinese full stop after a bare number
    words = _RANK_WORDS.fullmatch(text) if isinstance(answer, str) else None
    if words:
        text = words.group(1) or words.group(2) or words.group(3)
    try:
        x = float(text.strip())
    except ValueError:
        return None
    return int(x) if math.isfinite(x) and x.is_integer() else None


def _is_sympy_expr(x: Any) -> bool:
    return hasattr(x, "free_symbols") and hasattr(x, "subs") and not _is_number(x)


def _tolist(x: Any) -> Any:
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)) and not _is_number(x) and not _is_bool(x):
        return x.tolist()
    return x


Grader = Callable[..., Verdict]


def grade(
    answer: Any,
    expected: Any,
    *,
    rel_tol: float = 1e-9,
    abs_tol: float = 0.0,
    exact: bool = False,
    fraction_of: str | None = None,
    close_from: int = 1,
    unit: Unit | tuple[Unit | None, ...] | None = None,
) -> Verdict:
    """Compare ``answer`` with ``expected`` by the grading policy; return a :class:`Verdict`.

    ``unit``: the unit the question asks for (:mod:`bubblekit.course.checks._units`), for every number of the
    answer, or a tuple with one unit (or None) per item of a sequence.

    Numbers by :func:`grade_number`; ``AnyOf``: any option; bools exactly; text ignoring
    case, spaces, ``-`` and ``_``; sympy expressions by ``simplify(answer - expected)``
    (symbols matched by name, ``bubblekit.symbolic``'s ``comm``, ``target`` and ``b_star`` too;
    a one-element list such as ``sp.solve``'s is its element); dicts by key; sets as sets (a list or tuple is fine);
    lists, tuples, ranges and arrays element by element (a list for a tuple is fine);
    anything else with ``==``. ``detail`` never contains the expected value.
    """
    kw: dict[str, Any] = dict(rel_tol=rel_tol, abs_tol=abs_tol, exact=exact, fraction_of=fraction_of,
                              close_from=close_from, unit=unit)
    answer, expected = _tolist(answer), _tolist(expected)

    if isinstance(expected, AnyOf):
        return _grade_any(answer, expected, kw)

    if _is_bool(expected):
        if _is_bool(answer):
            return RIGHT if bool(answer) == bool(expected) else Verdict("wrong", tr("checks.wrong_truth"))
        return Verdict("wrong", tr("checks.want_bool", type=type(answer).__name__), shape=True)

    if _is_number(expected):
        if isinstance(answer, (list, tuple, set, frozenset, dict)):
            return Verdict("wrong", tr("checks.want_one_number", type=type(answer).__name__), shape=True)
        return grade_number(answer, expected, **{**kw, "unit": unit if isinstance(unit, Unit) else None})

    if isinstance(expected, str):
        if not isinstance(answer, str):
            return Verdict("wrong", tr("checks.want_text", type=type(answer).__name__), shape=True)
        return RIGHT if norm_text(answer) == norm_text(expected) else Verdict("wrong", tr("checks.wrong_text"))

    if _is_sympy_expr(expected):
        return _grade_sympy(answer, expected)

    if isinstance(expected, Mapping):
        return _grade_mapping(answer, expected, kw)

    if isinstance(expected, Set):
        return _grade_set(answer, expected, kw)

    if isinstance(expected, (list, tuple, range)):
        return _grade_sequence(answer, expected, kw)

    try:
        ok = bool(answer == expected)
    except Exception:
        ok = False
    return RIGHT if ok else Verdict("wrong", tr("checks.wrong_object", type=type(expected).__name__))


def _grade_any(answer: Any, options: AnyOf, kw: dict[str, Any]) -> Verdict:
    first: Verdict | None = None
    for option in options:
        verdict = grade(answer, option, **kw)
        if verdict.status != "wrong":
            return verdict
        first = first or verdict
    if isinstance(answer, (list, tuple, set, frozenset)) and len(answer) == len(options):
        remaining = list(options)
        for item in answer:
            hit = next((o for o in remaining if grade(item, o, **kw).ok), None)
            if hit is None:
                break
            remaining.remove(hit)
        else:
            return Verdict("right", note=tr("checks.each_right"))
    if first is not None and first.shape:
        return first
    return Verdict("wrong", tr("checks.not_any"))


def _course_symbol_names() -> set[str]:
    """Every name a course symbol is printed or written with: ``bubblekit.symbolic``'s symbols (``p``, ``m``, ``v``,
    ``t_f``, ``c``, ``b^*``, ...) and their Python names (``comm``, ``target``, ``b_star``)."""
    import sympy

    from bubblekit import symbolic

    names: set[str] = set()
    for name, value in vars(symbolic).items():
        if isinstance(value, sympy.Symbol):
            names.update((name, value.name))
    return names


def _symbol_aliases() -> dict[str, str]:
    """``bubblekit.symbolic``'s Python names whose symbols print otherwise, to the printed name: ``{"comm": "c",
    "target": "b^*", "b_star": "b^*"}``. A question that says "use ``comm``" gets answers written with ``comm``
    (text or ``sp.Symbol("comm")``); :func:`_grade_sympy` reads them as the symbol the name stands for."""
    import sympy

    from bubblekit import symbolic

    return {name: value.name for name, value in vars(symbolic).items()
            if isinstance(value, sympy.Symbol) and name != value.name}


#: Signs a learner copies from the course's formulas, as Python writes them (before reading an expression's text).
_EXPRESSION_SIGNS = str.maketrans({"\u2212": "-", "\u2013": "-", "\u00b7": "*", "\u22c5": "*", "\u00d7": "*",
                                   "\u2217": "*", "\u00f7": "/", "\u00b2": "**2", "\u00b3": "**3"})
#: The article's b* (the target bubble fraction) as the course writes it in text: ``b^*``, ``b^{*}``, or ``b*`` where
#: no factor follows (``(1-b*)/b*``); read as ``b_star``.
_B_STAR = re.compile(r"(?<![A-Za-z0-9_])b\s*\^\s*\{?\s*\*\s*\}?|(?<![A-Za-z0-9_])b\*(?=\s*(?:$|[)\]/+\-,=]))")


#: A name given to the formula before it (``"b = ..."``, ``"U_v = ..."``, ``"m = ..."``): the formula is what follows.
_NAMED = re.compile(r"^\s*[A-Za-z_][\w^*{}]*\s*=(?!=)")
#: What a learner writes after a formula and is no part of it: a closing full stop (``.``, ``。``) or the name it
#: stands for (``"(p-1)/(m+p-1) = b"``).
_TRAILING = re.compile(r"(?:\s*(?<![=<>!])=(?!=)\s*[A-Za-z_][\w^*{}]*)?\s*[.。]?\s*$")
#: The only names the expression reader does not read as symbols: the functions the course's formulas use. Every
#: other name (``I``, ``E``, ``S``, ``N``, ``O``, ``Q`` included) is a symbol, so that a learner's letters are named
#: back to them rather than read as sympy's constants.
_FUNCTIONS = ("ceiling", "floor", "Min", "Max", "sqrt", "Abs", "Rational")


def expression_text(text: str) -> str:
    """A formula as a learner types or pastes it, in Python's notation: the minus sign ``−``, the products ``·`` and
    ``×``, full-width forms (``（p－1）／…``) and superscript powers as ASCII, ``b^*`` (or ``b*``) as ``b_star``, and
    a leading ``name =`` dropped."""
    t = text.translate(_EXPRESSION_SIGNS)
    t = _NAMED.sub("", unicodedata.normalize("NFKC", t))
    t = _TRAILING.sub("", t.replace("\u3002", "."))
    return _B_STAR.sub("b_star", t).strip()


def split_products(expr: Any, letters: Any) -> Any:
    """``expr`` with each symbol whose name is exactly a run of the one-letter names ``letters`` (and is not one
    of them) read as their product: ``mv`` -> ``m*v`` where ``m`` and ``v`` are the question's symbols. The course
    prints ``(p − 1)/(mv + p − 1)``; names are otherwise never split (``t_f``, ``comm`` stay names)."""
    import sympy

    one = {str(x) for x in letters if len(str(x)) == 1}
    subs = {}
    for s in getattr(expr, "free_symbols", ()):
        if s.name not in one and len(s.name) > 1 and all(ch in one for ch in s.name):
            subs[s] = sympy.Mul(*(sympy.Symbol(ch) for ch in s.name))
    return expr.xreplace(subs) if subs else expr


def _symbol_call_as_product(tokens: list, local_dict: dict, global_dict: dict) -> list:
    """A name before a parenthesis that is no function of the reader (``2c(p − 1)``, ``t_f (m+p-1)``, as the
    course prints them) read as a product: ``c*(p-1)``. ``min``, ``ceiling``, ``Min``, ... stay calls."""
    from tokenize import NAME, OP

    out: list = []
    for tok in tokens:
        if (tok[0] == OP and tok[1] == "(" and out and out[-1][0] == NAME
                and out[-1][1] not in global_dict and out[-1][1] not in local_dict):
            out.append((OP, "*"))
        out.append(tok)
    return out


def read_expression(answer: Any) -> tuple[Any, str]:
    """``answer`` as a sympy expression, or ``(None, why not)`` in the learner's language.

    Text is read by :func:`expression_text` and then as Python with implicit products (``(p-1)(1-b)``, ``2p``,
    ``m v``, ``2c(p − 1)``: a name before a parenthesis is a factor unless it is a function such as ``min``,
    ``max``, ``ceiling``; names are never split into letters: ``t_f``, ``target`` and ``comm`` stay names) and
    ``^`` as a power;
    anything else by ``sympy.sympify``. Used by every expression check (lessons 03 and 10)."""
    import sympy

    if isinstance(answer, bool) or answer is None:
        return None, tr("checks.sympy_unreadable", type=type(answer).__name__)
    try:
        if isinstance(answer, str):
            from sympy.parsing.sympy_parser import (
                convert_xor,
                implicit_multiplication,
                parse_expr,
                standard_transformations,
            )

            names = {name: getattr(sympy, name) for name in (*_FUNCTIONS, "Symbol", "Integer", "Float")}
            names.update(min=sympy.Min, max=sympy.Max)  # Python's spelling, as the course prints min(p − r, m)
            expr = parse_expr(expression_text(answer), global_dict=names,
                              transformations=(_symbol_call_as_product, *standard_transformations,
                                               implicit_multiplication, convert_xor))
        else:
            expr = sympy.sympify(answer)
    except Exception:
        if isinstance(answer, str):
            return None, tr("checks.expression_text", text=answer)
        return None, tr("checks.sympy_unreadable", type=type(answer).__name__)
    if not isinstance(expr, sympy.Basic):
        return None, tr("checks.sympy_unreadable", type=type(answer).__name__)
    return expr, ""


def _grade_sympy(answer: Any, expected: Any) -> Verdict:
    if isinstance(answer, (list, tuple)) and len(answer) == 1:
        answer = answer[0]  # what sp.solve returns for one root
    expr, why = read_expression(answer)
    if expr is None:
        return Verdict("wrong", why, shape=True, form=isinstance(answer, str))
    try:
        import sympy

        by_name = {s.name: s for s in expected.free_symbols}
        by_name.update({alias: by_name[name] for alias, name in _symbol_aliases().items()
                        if name in by_name and alias not in by_name})
        expr = split_products(expr, set(by_name) | _course_symbol_names())
        expr = expr.subs({s: by_name[s.name] for s in expr.free_symbols if s.name in by_name and s != by_name[s.name]})
        fused = None
        if "t_b" not in by_name and {"t_i", "t_w"} <= set(by_name):  # the course's t_b is t_i + t_w (the fused backward)
            fused = next((s for s in expr.free_symbols if s.name == "t_b"), None)
            if fused is not None:
                expr = expr.subs(fused, by_name["t_i"] + by_name["t_w"])
        diff = sympy.simplify(expr - expected)
    except Exception:
        return Verdict("wrong", tr("checks.sympy_unreadable", type=type(answer).__name__))
    if diff == 0:
        return Verdict("right", note=tr("checks.fused_backward_read")) if fused is not None else RIGHT
    unknown = sorted(s.name for s in getattr(expr, "free_symbols", ()) if s.name not in by_name)
    course = _course_symbol_names()
    foreign = [name for name in unknown if name not in course]
    if foreign:  # a name the course does not use (``P``, ``F``, ``I``): said, not counted as a try
        wanted = sorted({s.name for s in expected.free_symbols})
        return Verdict("wrong", tr("checks.sympy_unknown_symbols", names=foreign, symbols=", ".join(wanted)),
                       shape=True, form=True)
    if unknown:
        return Verdict("wrong", tr("checks.sympy_extra_symbols", names=unknown))
    return Verdict("wrong", tr("checks.sympy_differs"))


def _grade_mapping(answer: Any, expected: Mapping[Any, Any], kw: dict[str, Any]) -> Verdict:
    if not isinstance(answer, Mapping):
        return Verdict("wrong", tr("checks.want_dict", type=type(answer).__name__), shape=True)

    def key(k: Any) -> Any:
        return norm_text(k) if isinstance(k, str) else k

    given = {key(k): v for k, v in answer.items()}
    wanted = {key(k): k for k in expected}
    if set(given) != set(wanted):
        missing = len(set(wanted) - set(given))
        extra = len(set(given) - set(wanted))
        return Verdict("wrong", tr("checks.wrong_keys", missing=missing, extra=extra))
    close: Verdict | None = None
    notes = []
    for k, original in wanted.items():
        verdict = grade(given[k], expected[original], **kw)
        if verdict.status in ("wrong", "close"):
            located = _located(verdict, original)
            if verdict.status == "wrong":
                return located
            close = close or located
        if verdict.note:
            notes.append(verdict.note)
    return close or Verdict("right", note=notes[0] if notes else "")


def _grade_set(answer: Any, expected: Set[Any], kw: dict[str, Any]) -> Verdict:
    if not isinstance(answer, (Set, list, tuple)):
        return Verdict("wrong", tr("checks.want_set", type=type(answer).__name__), shape=True)
    try:
        got = set(answer)
    except TypeError:
        return Verdict("wrong", tr("checks.unhashable"))
    want = set(expected)
    if got == want:
        return RIGHT
    if all(isinstance(x, str) for x in got | want):
        got_n, want_n = {norm_text(x) for x in got}, {norm_text(x) for x in want}
        if got_n == want_n:
            return RIGHT
        got, want = got_n, want_n
    missing, extra = len(want - got), len(got - want)
    return Verdict("wrong", tr("checks.wrong_set", missing=missing, extra=extra))


def _grade_sequence(answer: Any, expected: Sequence[Any] | range, kw: dict[str, Any]) -> Verdict:
    answer = _tolist(answer)
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (Sequence, range)):
        return Verdict("wrong", tr("checks.want_sequence", type=type(answer).__name__), shape=True)
    if len(answer) != len(expected):
        return Verdict("wrong", tr("checks.wrong_length", want=len(expected), got=len(answer)), shape=True)
    close: Verdict | None = None
    notes = []
    units = kw["unit"] if isinstance(kw["unit"], tuple) and len(kw["unit"]) == len(expected) else None
    for i, (a, e) in enumerate(zip(answer, expected), start=1):
        verdict = grade(a, e, **{**kw, "unit": units[i - 1]} if units is not None else kw)
        if verdict.status in ("wrong", "close"):
            located = _located(verdict, i)
            if verdict.status == "wrong":
                return located
            close = close or located
        if verdict.note:
            notes.append(verdict.note)
    return close or Verdict("right", note=notes[0] if notes else "")


def _located(inner: Verdict, place: Any) -> Verdict:
    """``inner`` (the verdict on one item or dict value) placed at ``place`` (a 1-based item number or a key).

    Feedback is never nested: the message names the whole place once ("item 2, entry 5 is not
    right (too high)"), not "item 2 is not right (item 5 is not right (...))".
    """
    where = (place, *inner.where)
    reason = inner.reason or inner.detail
    state = "wrong" if inner.status == "wrong" else "close"
    if len(where) == 1:
        key = "item" if isinstance(place, int) else "value_for"
        detail = tr(f"checks.{state}_{key}", **({"i": place} if key == "item" else {"key": place}), detail=reason)
    else:
        inner_place = ".".join(str(x) for x in where[1:])
        if isinstance(place, int):
            detail = tr(f"checks.{state}_entry", i=place, j=inner_place, detail=reason)
        else:
            detail = tr(f"checks.{state}_key_entry", key=place, j=inner_place, detail=reason)
    return Verdict(inner.status, detail, shape=inner.shape, reason=reason, where=where, form=inner.form)
