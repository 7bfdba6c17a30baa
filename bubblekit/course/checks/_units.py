"""The units a numeric answer may carry (``"14 ms"``, ``"27 slots"``, ``"135个"``, ``"5843.48元"``, ``"$176,947"``).

An exercise whose answer is a number in a unit registers it (``@exercise(..., unit=MS)``); the grading
policy (the docstring of :mod:`bubblekit.course.checks`) then reads a number written with that unit as the
number, names a unit that is another one (``"0.3 s"`` where ms are asked), and asks for the number alone
when the words after it are no unit it knows. Each unit lists the ways a learner writes it in either
language, compared after :func:`unit_key` (full-width forms, case, spaces, ``-``, ``_`` and ``·`` ignored).

Pure: the standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bubblekit.course.checks._text import Msg, msg

__all__ = [
    "Unit", "KNOWN_UNITS", "unit_key", "unit_named",
    "SLOTS", "MS", "MINUTES", "GPU_HOURS", "YUAN", "DOLLARS", "MICROBATCHES", "CARS", "MESSAGES",
    "ACTIVATIONS", "FORWARDS", "FACTOR",
]


def unit_key(text: str) -> str:
    """``text`` as units are compared: NFKC (full-width forms), case, spaces, ``-``, ``_``, ``·`` and a final full
    stop ignored (``"GPU-hours"`` = ``"gpu hours"``, ``"个 时间槽。"`` = ``"个时间槽"``)."""
    t = unicodedata.normalize("NFKC", text).casefold().strip().rstrip("。.")
    return re.sub(r"[\s\-_·\u00b7]", "", t)


@dataclass(frozen=True)
class Unit:
    """A unit an answer may be written in.

    Attributes:
        name: how messages name it, in both languages (``msg("ms", "毫秒")``).
        words: the ways a learner writes it after the number (compared by :func:`unit_key`).
        prefixes: signs written before the number (``"$"``, ``"¥"``).
        counts: a count of things, so the Chinese classifier ``个`` alone is read as this unit.
    """

    name: Msg
    words: tuple[str, ...]
    prefixes: tuple[str, ...] = ()
    counts: bool = False

    def accepts(self, word: str) -> bool:
        """True when ``word`` (a unit as written, or a prefix sign) is a way of writing this unit."""
        key = unit_key(word)
        return key in {unit_key(w) for w in self.words} or key in self.prefixes or (self.counts and key == "个")


SLOTS = Unit(msg("slots", "时间槽", key="checks.unit.slots"),
             ("slot", "slots", "时间槽", "个时间槽", "槽", "个槽"))
MS = Unit(msg("ms", "毫秒", key="checks.unit.ms"), ("ms", "msec", "millisecond", "milliseconds", "毫秒"))
MINUTES = Unit(msg("minutes", "分钟", key="checks.unit.minutes"),
               ("min", "mins", "minute", "minutes", "分钟", "分"))
GPU_HOURS = Unit(msg("GPU-hours", "GPU 小时", key="checks.unit.gpu_hours"),
                 ("GPU-hour", "GPU-hours", "GPU-h", "GPU h", "GPU小时", "GPU 小时", "卡时", "hour", "hours", "h",
                  "小时", "个小时"))
YUAN = Unit(msg("yuan", "元", key="checks.unit.yuan"),
            ("yuan", "元", "CNY", "RMB", "块", "块钱", "人民币", "元人民币", "yuan a day", "yuan per day", "yuan/day",
             "元/天", "元每天", "元一天", "元/日"), prefixes=("¥",))
DOLLARS = Unit(msg("dollars", "美元", key="checks.unit.dollars"),
               ("dollar", "dollars", "USD", "US$", "美元", "美金"), prefixes=("$", "us$"))
MICROBATCHES = Unit(msg("microbatches", "个微批", key="checks.unit.microbatches"),
                    ("microbatch", "microbatches", "micro-batch", "micro-batches", "micro batch", "micro batches",
                     "个微批", "微批", "个微批次", "微批次"), counts=True)
CARS = Unit(msg("cars", "辆车", key="checks.unit.cars"), ("car", "cars", "辆", "辆车", "辆汽车"), counts=True)
MESSAGES = Unit(msg("messages", "条消息", key="checks.unit.messages"),
                ("message", "messages", "msg", "msgs", "条消息", "条", "个消息", "消息", "次", "次通信", "hop", "hops",
                 "跳", "次发送"), counts=True)
ACTIVATIONS = Unit(msg("microbatch activations", "个微批的激活", key="checks.unit.activations"),
                   ("activation", "activations", "microbatch activation", "microbatch activations",
                    "microbatch", "microbatches", "个微批的激活", "个微批激活", "微批激活", "份激活", "个激活", "份",
                    "个微批", "微批"), counts=True)
FORWARDS = Unit(msg("F (one forward)", "F（一次前向）", key="checks.unit.forwards"),
                ("F", "forward", "forwards", "forward chunk", "forward chunks", "个F", "个前向", "前向", "次前向"))
FACTOR = Unit(msg("times (a factor)", "倍", key="checks.unit.factor"), ("x", "×", "times", "fold", "倍"))

#: Units no exercise asks for, known so that an answer written in one of them is told which unit it used.
_HOURS = Unit(msg("hours", "小时", key="checks.unit.hours"), ("hour", "hours", "h", "小时", "个小时"))
_SECONDS = Unit(msg("seconds", "秒", key="checks.unit.s"), ("s", "sec", "secs", "second", "seconds", "秒"))
_MICROSECONDS = Unit(msg("µs", "微秒", key="checks.unit.us"), ("us", "µs", "μs", "microsecond", "microseconds", "微秒"))
_GB = Unit(msg("bytes (GB, MB, ...)", "字节（GB、MB 等）", key="checks.unit.gb"), ("GB", "GiB", "G", "MB", "MiB", "KB", "KiB", "bytes", "字节"))
_STAGES = Unit(msg("stages", "个流水级", key="checks.unit.stages"), ("stage", "stages", "个流水级", "流水级", "级"))
_RANKS = Unit(msg("ranks", "个 rank", key="checks.unit.ranks"), ("rank", "ranks", "个rank"))
_GPUS = Unit(msg("GPUs", "张卡", key="checks.unit.gpus"), ("GPU", "GPUs", "device", "devices", "张卡", "卡", "张GPU",
                                                        "块GPU", "个GPU"))

#: Every unit the checks recognise, those exercises ask for first.
KNOWN_UNITS: tuple[Unit, ...] = (SLOTS, MS, MINUTES, _HOURS, GPU_HOURS, YUAN, DOLLARS, MICROBATCHES, CARS,
                                 MESSAGES, ACTIVATIONS, FORWARDS, FACTOR, _SECONDS, _MICROSECONDS, _GB, _STAGES,
                                 _RANKS, _GPUS)


def unit_named(word: str) -> Unit | None:
    """The known unit ``word`` writes (``"毫秒"`` -> :data:`MS`), or None; ``个`` alone names no unit."""
    return next((u for u in KNOWN_UNITS if u.accepts(word) and unit_key(word) != "个"), None)
