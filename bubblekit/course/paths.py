"""The course's learning paths and how long each lesson says it takes (lesson 00, README).

Three paths:

* **full self-study**: every lesson, core path then deep dives, with the exercises; its time
  is the sum of the times the lessons state in their headers
  (``**Time:** about N min for the core path (+ about M min of optional deep dives)``), read
  from the notebooks by :func:`lesson_times`, so it follows the lessons when they change;
* **workshop** (:data:`WORKSHOP`, 3 hours): core paths of the lessons that build the idea, in
  order, with a break; the cells tagged ``workshop`` (with Jupyter slide metadata) make the
  deck (``jupyter nbconvert --to slides``);
* **interview sprint** (:data:`SPRINT`, about 2 h 40 min): the core paths of formula, schedules,
  beyond 1F1B and misconceptions (their headers' times), then nine of the bank's questions that need
  only those lessons (:data:`SPRINT_QUESTIONS`, listed in the bank's introduction), each with the
  minutes a candidate can keep. Most other questions need only those lessons too; 10.31, 10.32,
  10.45 and 10.46 also need lesson 05 (recomputation, balancing; the last two its deep dives on Megatron's
  microbatch groups and layout strings), 10.25 lesson 08 (GPUs = TP x PP x DP) and 10.35-10.39
  lesson 06 (reading a profile).

Everything it shows is in the current language (:func:`bubblekit.set_language`): headers,
captions, notes and the parts of a step come from the message catalogue; a lesson's title is
its English header's (without a Chinese gloss in brackets) or, in Chinese, its Chinese twin's
(``notebooks/zh/``, ``solutions/zh/``). Times are always the English headers' (the source of truth).

Pure core: reads the notebooks as JSON, imports no matplotlib, widgets or torch.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from bubblekit.i18n import get_language, register, tr
from bubblekit.text import Table

__all__ = ["Step", "WORKSHOP", "SPRINT", "SPRINT_QUESTIONS", "COURSE_ROOT", "header_time", "lesson_times", "LearningPaths",
           "learning_paths", "track_text"]

#: The course folder (lessons in ``notebooks/``, the interview bank in ``solutions/``) when
#: bubblekit runs from a checkout of the course (``pip install -e .``).
COURSE_ROOT = Path(__file__).resolve().parents[2]


class Step(NamedTuple):
    """One step of a path: a lesson (``"03"``), or ``"break"``; ``part`` says what of it; ``minutes``."""

    lesson: str
    part: str
    minutes: int


#: The 3-hour workshop: core paths (the cells tagged ``workshop``), with a break.
WORKSHOP: tuple[Step, ...] = (
    Step("00", "core path", 10),
    Step("01", "core path", 25),
    Step("02", "core path", 25),
    Step("03", "core path", 35),
    Step("break", "", 10),
    Step("04", "core path", 30),
    Step("05", "core path", 25),
    Step("07", "core path: the memory/bubble frontier only", 10),
    Step("09", "the misconceptions quiz", 10),
)

#: The interview sprint's questions: nine of the bank's questions that need only the sprint's lessons (03, 04, 07,
#: 09), each with the minutes a candidate needs (a multiple choice 3, a calculation 3-4, a derivation 5-6, a
#: whiteboard schedule 8). Most other questions need only those lessons too; 10.31, 10.32, 10.45 and 10.46 also
#: need lesson 05 (recomputation, balancing; the last two its Megatron deep dives), 10.25 lesson 08
#: (GPUs = TP x PP x DP) and 10.35-10.39 lesson 06 (reading a profile).
SPRINT_QUESTIONS: tuple[tuple[str, int], ...] = (
    ("10.1", 3), ("10.3", 3), ("10.11", 6), ("10.12", 5), ("10.17", 5), ("10.18", 3), ("10.20", 4), ("10.33", 3),
    ("10.40", 8),
)

#: The interview sprint: the core paths of the lessons interviews ask about (the minutes their headers state),
#: then nine of the bank's questions that need only those lessons (:data:`SPRINT_QUESTIONS`).
SPRINT: tuple[Step, ...] = (
    Step("03", "core path", 35),
    Step("04", "core path", 30),
    Step("07", "core path", 30),
    Step("09", "core path", 25),
    Step("10", "the sprint's questions, listed in the bank's introduction", sum(m for _, m in SPRINT_QUESTIONS)),
)

register({
    "paths.col.lesson": {"en": "lesson", "zh": "课"},
    "paths.col.title": {"en": "title", "zh": "标题"},
    "paths.col.core": {"en": "core path (min)", "zh": "核心内容（分钟）"},
    "paths.col.deep": {"en": "deep dives (min)", "zh": "选读深入（分钟）"},
    "paths.col.both": {"en": "lesson (min)", "zh": "整课（分钟）"},
    "paths.col.step": {"en": "step", "zh": "环节"},
    "paths.col.what": {"en": "what", "zh": "内容"},
    "paths.col.minutes": {"en": "minutes", "zh": "分钟"},
    "paths.full": {"en": "Full self-study: every lesson, core path then deep dives, then its exercises",
                   "zh": "完整自学：每课先学核心内容，再读选读的深入内容，然后做练习"},
    "paths.workshop": {"en": "Workshop (3 hours): core paths, cells tagged 'workshop'",
                       "zh": "工作坊（3 小时）：各课的核心内容，即标记了 workshop 标签的单元格"},
    "paths.sprint": {"en": "Interview sprint", "zh": "面试冲刺"},
    "paths.full_note": {"en": "total: {hours} of stated time, plus the exercises",
                        "zh": "合计：各课标注的时间共 {hours}，练习时间另计"},
    "paths.unstated": {"en": " (lessons {lessons} state no time yet and are not counted)",
                       "zh": "（第 {lessons} 课还没有标注时间，未计入）"},
    "paths.total": {"en": "total: {hours}", "zh": "合计：{hours}"},
    "paths.minutes": {"en": "{minutes} min", "zh": "{minutes} 分钟"},
    "paths.hours": {"en": "{minutes} min = {h} h {m:02d} min", "zh": "{minutes} 分钟 = {h} 小时 {m:02d} 分钟"},
    "paths.break": {"en": "break", "zh": "休息"},
    "paths.part.core": {"en": "core path", "zh": "核心内容"},
    "paths.part.frontier": {"en": "core path: the memory/bubble frontier only", "zh": "核心内容：只讲显存与气泡的权衡"},
    "paths.part.quiz": {"en": "the misconceptions quiz", "zh": "常见误区小测验"},
    "paths.part.sprint_bank": {"en": "the sprint's questions, listed in the bank's introduction",
                               "zh": "冲刺用的题目（题库开头列出）"},
    "paths.sprint_note": {"en": "total: {hours}; the sprint picks nine of the bank's questions, and most others need "
                                "the same lessons (10.31, 10.32, 10.45, 10.46 also need lesson 05; 10.25 lesson 08; "
                                "10.35–10.39 lesson 06)",
                          "zh": "合计：{hours}；冲刺只选了题库中的九道题，其余题目大多也只用到这几课（10.31、10.32、"
                                "10.45、10.46 还要学第 05 课，10.25 还要学第 08 课，10.35–10.39 还要学第 06 课）"},
})

#: A step's ``part`` (English, as :data:`WORKSHOP` and :data:`SPRINT` write it) -> its catalogue key: exactly the
#: parts those steps use (``tests/test_grading_fair.py`` keeps it so).
_PART_KEYS = {
    "core path": "paths.part.core",
    "core path: the memory/bubble frontier only": "paths.part.frontier",
    "the misconceptions quiz": "paths.part.quiz",
    "the sprint's questions, listed in the bank's introduction": "paths.part.sprint_bank",
}


def _part(part: str) -> str:
    """A step's ``part`` in the current language (an unknown part as written)."""
    key = _PART_KEYS.get(part)
    return tr(key) if key else part


def track_text(steps: tuple[Step, ...]) -> str:
    """A track on one line, as the README writes it: ``00 core path (10 min) → 01 core path (25 min) → …``."""
    return " → ".join(f"{s.lesson} {s.part} ({s.minutes} min)".replace("  ", " ") for s in steps)


_TIME = re.compile(r"\*\*Time:\*\*([^\n]*)")
_MINUTES = re.compile(r"(\d+)\s*min")
_TITLE = re.compile(r"^#\s*(\d\d[a-z]?)\s*·\s*(.+?)\s*$", re.MULTILINE)
#: The title suffixes of a solutions notebook (``scripts/make_exercises.py`` turns them into the exercises'), dropped
#: from a title shown in the learning paths.
_SOLUTION_SUFFIXES = (": solutions", "：参考答案")
#: A Chinese gloss in brackets after an English title: ``Schedules compared (调度策略对比)``.
_GLOSS = re.compile(r"\s*[(（][^()（）]*[\u3400-\u9fff][^()（）]*[)）]")


def _title(path: Path) -> str | None:
    """The title of the notebook at ``path`` (its header ``# NN · title``), or ``None``.

    An English title loses a Chinese gloss in brackets; a Chinese one (a ``zh/`` twin) is kept whole.
    """
    found = _TITLE.search(_first_cell(path)) if path.is_file() else None
    if found is None:
        return None
    title = found.group(2)
    # the interview bank is a solutions notebook: "10 · The interview bank: solutions"
    for suffix in _SOLUTION_SUFFIXES:
        if title.endswith(suffix) and len(title) > len(suffix):
            title = title[: -len(suffix)].rstrip()
    return title if path.parent.name == "zh" else (_GLOSS.sub("", title).strip() or title)


def _localised_title(path: Path) -> str | None:
    """``path``'s title in the current language: in Chinese its ``zh/`` twin's, when the twin has one."""
    if get_language() == "zh":
        twin = _title(path.parent / "zh" / path.name)
        if twin is not None:
            return twin
    return _title(path)


def header_time(header: str) -> tuple[int | None, int | None]:
    """``(core, deep dives)`` minutes from a lesson header's ``**Time:**`` line, ``None`` where absent.

    The first ``N min`` on the line is the core path; an ``N min`` inside ``(+ ...)`` is the
    optional deep dives. ``header``: the text of the lesson's first cell.
    """
    if not isinstance(header, str):
        raise TypeError(f"header must be the text of a lesson's first cell, got {type(header).__name__}")
    line = _TIME.search(header)
    if line is None:
        return None, None
    text = line.group(1)
    core_text, _, extra_text = text.partition("(+")
    core = _MINUTES.search(core_text)
    extra = _MINUTES.search(extra_text)
    return (int(core.group(1)) if core else None, int(extra.group(1)) if extra else None)


def _first_cell(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    if not cells:
        return ""
    source = cells[0].get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _folder(folder: str | Path | None, name: str) -> Path:
    path = COURSE_ROOT / name if folder is None else Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"folder {str(path)!r} does not exist: pass the course's {name}/ folder")
    return path


def lesson_times(folder: str | Path | None = None) -> Table:
    """Per lesson notebook (``NN_*.ipynb``, companions ``NNx_*`` too): title and stated minutes.

    Columns ``lesson``, ``title``, ``core`` and ``deep`` (minutes, ``None`` where the header
    states none), read from each header's ``**Time:**`` line (:func:`header_time`). The
    title is in the current language (in Chinese, the ``zh/`` twin's); headers too.
    ``folder``: the lessons' folder (default the course's ``notebooks/``). Used in lesson 00.
    """
    rows = []
    for path in sorted(_folder(folder, "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        core, deep = header_time(_first_cell(path))
        rows.append({"lesson": path.name[:path.name.index("_")], "title": _localised_title(path) or path.stem,
                     "core": core, "deep": deep})
    return Table(rows, ["lesson", "title", "core", "deep"], headers=_headers("lesson", "title", "core", "deep"))


def _headers(*columns: str) -> dict[str, str]:
    """Column key -> header in the current language (the keys stay English)."""
    return {c: tr(f"paths.col.{c}") for c in columns}


class LearningPaths:
    """The three paths as tables (``full``, ``workshop``, ``sprint``) and their totals in minutes.

    ``full_minutes`` sums the stated times; ``unstated`` lists lessons whose header states
    no time (their minutes are missing from the sum). Renders itself: HTML in JupyterLab,
    text elsewhere.
    """

    def __init__(self, times: Table, titles: dict[str, str]) -> None:
        rows = list(times)
        self.unstated: list[str] = [r["lesson"] for r in rows if r["core"] is None]
        self.full_minutes: int = sum((r["core"] or 0) + (r["deep"] or 0) for r in rows)
        self.workshop_minutes: int = sum(s.minutes for s in WORKSHOP)
        self.sprint_minutes: int = sum(s.minutes for s in SPRINT)
        note = tr("paths.full_note", hours=_hours(self.full_minutes))
        if self.unstated:
            note += tr("paths.unstated", lessons=", ".join(self.unstated))
        columns = ("lesson", "title", "core", "deep", "both")
        self.full = Table(
            [{**r, "both": None if r["core"] is None else r["core"] + (r["deep"] or 0)} for r in rows],
            list(columns), headers=_headers(*columns), title=tr("paths.full"), note=note)
        self.workshop = self._track(WORKSHOP, titles, tr("paths.workshop"), self.workshop_minutes)
        self.sprint = self._track(SPRINT, titles, tr("paths.sprint"), self.sprint_minutes,
                                  note=tr("paths.sprint_note", hours=_hours(self.sprint_minutes)))

    @staticmethod
    def _track(steps: tuple[Step, ...], titles: dict[str, str], title: str, total: int, note: str = "") -> Table:
        rows = [{"step": tr("paths.break") if s.lesson == "break"
                 else f"{s.lesson} · {titles.get(s.lesson, '')}".rstrip(" ·"),
                 "what": _part(s.part), "minutes": s.minutes} for s in steps]
        return Table(rows, ["step", "what", "minutes"], headers=_headers("step", "what", "minutes"), title=title,
                     note=note or tr("paths.total", hours=_hours(total)))

    def tables(self) -> tuple[Table, Table, Table]:
        """``(full, workshop, sprint)``."""
        return self.full, self.workshop, self.sprint

    def __repr__(self) -> str:
        return "\n\n".join(t.to_text() for t in self.tables())

    def _repr_html_(self) -> str:
        return "".join(f"<div style=\"margin-bottom:1em\">{t._repr_html_()}</div>" for t in self.tables())


def _hours(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    return tr("paths.minutes", minutes=minutes) if not h else tr("paths.hours", minutes=minutes, h=h, m=m)


def learning_paths(folder: str | Path | None = None, bank: str | Path | None = None) -> LearningPaths:
    """The three learning paths, with the lessons' stated times (see :class:`LearningPaths`).

    ``folder``: the lessons (default the course's ``notebooks/``); ``bank``: the interview
    bank notebook (default ``solutions/10_interview_bank.ipynb`` of the course), for its title.
    Everything is in the current language: in Chinese the titles are the ``zh/`` twins'
    (``notebooks/zh/``, ``solutions/zh/``). Used in lesson 00 (both editions).
    """
    times = lesson_times(folder)
    titles: dict[str, Any] = {r["lesson"]: r["title"] for r in times}
    bank_path = COURSE_ROOT / "solutions" / "10_interview_bank.ipynb" if bank is None else Path(bank)
    found = _TITLE.search(_first_cell(bank_path)) if bank_path.is_file() else None
    title = _localised_title(bank_path) if found else None
    if found and title:
        titles[found.group(1)] = title
    return LearningPaths(times, titles)
