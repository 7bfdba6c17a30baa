#!/usr/bin/env python3
"""Build the course's nbgrader assignments from ``solutions/*.ipynb``.

Each lesson with exercises becomes one nbgrader assignment: the instructor version
``<course>/source/<NN_topic>/<NN_topic>.ipynb`` (``<course>`` is ``classroom/nbgrader/`` unless
``--course`` says otherwise), which ``nbgrader generate_assignment`` turns into the students'
version. The rules of the transformation:

* The solution markers are the ones ``scripts/make_exercises.py`` reads (``### BEGIN SOLUTION`` /
  ``### END SOLUTION``), parsed by its :func:`solution_region` (one parser; the same errors for a
  nested, unmatched or unterminated marker). nbgrader replaces each region with the same stubs
  as ``exercises/`` (``nbgrader_config.py`` sets them).
* A code cell with a region is an nbgrader **solution** cell (``answer_NN_k``); a markdown
  cell with a region is a **manually graded answer** (``explain_NN_k``, ``WRITTEN_POINTS``),
  as nbgrader requires of written answers.
* After each code cell that calls ``check("NN.k", EXPR)`` comes a locked, autograded **test
  cell** (``test_NN_k``, ``AUTO_POINTS`` points) that runs ``require("NN.k", lambda: EXPR)``:
  the same check, raising ``AssertionError`` with its hint unless the answer is right
  (:func:`bubblekit.course.checks.require`). A learner who never defined the answer gets
  "no answer yet", not a ``NameError``.
* Every other cell is **read-only** (locked: nbgrader puts its text back when it grades).
  Cells tagged ``solution`` are dropped, outputs are cleared, and a banner cell explains the
  assignment.
* Exercise ids must be registered in ``bubblekit.course.checks`` (else it is an error naming
  the notebook and cell, as is an exercise checked twice).

Rules of writing (an instructor's edits are never lost; the same rules, and the same code,
as ``scripts/make_exercises.py``): each ``source/<assignment>/.manifest.json`` records the
SHA-256 of what was written there; a notebook someone changed (points, cells edited in the
formgrader) is never overwritten: the script says so and exits 1, and ``--keep-changed`` first
renames it ``NAME.mine.ipynb``; files it did not write are left alone. ``nbgrader_config.py``
ignores the manifest and ``*.mine.ipynb`` when it releases an assignment.

Usage::

    python scripts/make_nbgrader.py              # every assignment, into classroom/nbgrader/source/
    python scripts/make_nbgrader.py 03 04        # lessons 03 and 04 only
    python scripts/make_nbgrader.py --course ~/bubbles-grading   # another course folder
    python scripts/make_nbgrader.py --list       # the assignments, their exercises and points
    cd classroom/nbgrader && nbgrader generate_assignment 03_the_bubble_formula

A ``--course`` folder without ``nbgrader_config.py`` gets a copy of the course's
(``classroom/nbgrader/nbgrader_config.py``); an existing one is never replaced.

Languages: ``--lang zh`` builds the Chinese assignments from ``solutions/zh/`` (the twins of
``solutions/``: the same exercises and ids) into the Chinese course, ``classroom/nbgrader/zh/``
(:data:`COURSE_ZH`; its own ``nbgrader_config.py``: course id ``pipeline-bubbles-zh`` and the
Chinese exercises' stubs). The banner and the test cells are Chinese, and so is the feedback:
the assignment's first cell runs ``bk.set_language("zh")``, so a failed ``require`` says
``03.2 还不对……`` with its Chinese hint. The script's own messages follow ``--lang`` (the option
names stay as they are). A course folder whose ``nbgrader_config.py`` is the other language's
(as this script copied it) is refused: the two editions' assignments have the same names::

    python scripts/make_nbgrader.py --lang zh 03 04    # classroom/nbgrader/zh/source/...
    cd classroom/nbgrader/zh && nbgrader generate_assignment 03_the_bubble_formula
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_exercises as mx  # noqa: E402 - the sibling script: one parser of the markers, one writer

from bubblekit.i18n import LANGUAGES, register, translate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "classroom" / "nbgrader"
#: The Chinese course (``--lang zh``): its own folder, configuration and course id.
COURSE_ZH = COURSE / "zh"
CONFIG = "nbgrader_config.py"
#: Each language's default course folder (it holds the configuration copied into a new ``--course``)
#: and solutions.
COURSES: dict[str, Path] = {"en": COURSE, "zh": COURSE_ZH}
SOLUTIONS: dict[str, Path] = {"en": ROOT / "solutions", "zh": ROOT / "solutions" / "zh"}
#: Points of an autograded exercise (one ``check``) and of a written answer (graded by hand).
AUTO_POINTS = 1
WRITTEN_POINTS = 1
SCHEMA_VERSION = 3
#: Where a ``--course`` folder may not be: the course's own folders.
_FORBIDDEN = ("notebooks", "solutions", "exercises", "apps", "workspace", "bubblekit", "tests", "scripts",
              "docs", "benchmarks", ".git", ".venv")
_EXERCISE_ID = re.compile(r"\b(\d{2}\.\d+[a-z]?)\b")
_HEADING = re.compile(r"(?m)^#{1,6}\s.*$")

__all__ = ["Graded", "check_calls", "make_assignment", "assignment_name", "select", "build", "main", "COURSES",
           "SOLUTIONS"]

# What the assignments and the script say, in both languages (bubblekit's message catalogue: bubblekit.i18n).
register({
    "make_nbgrader.test_cell": {
        "en": "# Autograded test of exercise {id} ({points}): the same check as above. Leave this cell as it is.",
        "zh": "# 练习 {id} 的自动评分测试（{points}）：与上面相同的检查。请保持这个单元格原样。"},
    "make_nbgrader.banner": {
        "en": "> **Assignment: {title}.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` (and each "
              "_Your answer here._) with your answer and run the cell: the `check(...)` at its end says ✓ or gives a "
              "hint.\n> The locked cell after each exercise is its autograded test: the same check, worth its points; "
              "leave it as it is. Written answers are graded by hand. Before you submit, restart the kernel and run "
              "every cell (or press **Validate**).",
        "zh": "> **作业：{title}。** 把每一处 `# 在这里写你的代码` / `raise NotImplementedError()`（以及每一处 "
              "_在这里写下你的答案。_）换成你的答案，再运行这个单元格：末尾的 `check(...)` 会显示 ✓，或者给出提示。\n"
              "> 每道练习后面那个锁定的单元格是它的自动评分测试：检查和上面相同，按分值计分，请保持原样。文字作答由老师"
              "人工评分。提交之前，请重启 kernel 并运行所有单元格（或者点 **Validate**）。"},
    # a count of things is one field: "1 point", "3 points", "3 分" (_count)
    "make_nbgrader.points": {"en": "{n} points", "zh": "{n} 分"},
    "make_nbgrader.points.one": {"en": "{n} point", "zh": "{n} 分"},
    "make_nbgrader.auto": {"en": "{n} autograded exercises", "zh": "{n} 道自动评分的练习"},
    "make_nbgrader.auto.one": {"en": "{n} autograded exercise", "zh": "{n} 道自动评分的练习"},
    "make_nbgrader.written": {"en": "{n} written answers graded by hand", "zh": "{n} 道人工评分的文字作答"},
    "make_nbgrader.written.one": {"en": "{n} written answer graded by hand", "zh": "{n} 道人工评分的文字作答"},
    "make_nbgrader.list_line": {"en": "{assignment}: {total}: {auto} ({auto_points})",
                                "zh": "{assignment}：共 {total}：{auto}（{auto_points}）"},
    "make_nbgrader.list_written": {"en": " + {written} ({written_points})", "zh": "，另有 {written}（{written_points}）"},
    "make_nbgrader.no_lesson": {
        "en": "lesson {lesson!r} has no solution notebook; choose from {lessons} (or a name like {example})",
        "zh": "课程 {lesson!r} 没有答案 notebook；可选：{lessons}（或者像 {example} 这样的名字）"},
    "make_nbgrader.own_folder": {
        "en": "argument --course: {course!r} is the course's own folder; choose {default} (the default) or a "
              "folder of your own",
        "zh": "参数 --course：{course!r} 是课程自身的目录；请用 {default}（默认）或你自己的目录"},
    "make_nbgrader.not_folder": {
        "en": "argument --course: {course!r} exists and is not a folder",
        "zh": "参数 --course：{course!r} 已存在，但不是目录"},
    "make_nbgrader.other_language": {
        "en": "argument --lang: {course!r} is the {other} course (its nbgrader_config.py is the course's {other} "
              "one), and --lang {lang} builds the {this} assignments, which have the same names; build them into "
              "{default} (the default with --lang {lang}) or a new folder",
        "zh": "参数 --lang：{course!r} 是{other}课程（它的 nbgrader_config.py 是课程的{other}配置），而 --lang {lang} "
              "生成的是{this}作业，两者的作业同名；请把它们生成到 {default}（--lang {lang} 时的默认目录）或一个新目录"},
    "make_nbgrader.language_en": {"en": "English", "zh": "英文"},
    "make_nbgrader.language_zh": {"en": "Chinese", "zh": "中文"},
    "make_nbgrader.error": {"en": "error: {message}", "zh": "错误：{message}"},
    "make_nbgrader.renamed": {"en": "kept your edited {folder}/{old} as {folder}/{new}",
                              "zh": "你编辑过的 {folder}/{old} 已保留为 {folder}/{new}"},
    "make_nbgrader.wrote": {"en": "wrote {folder}/{name}", "zh": "已写入 {folder}/{name}"},
    "make_nbgrader.kept": {"en": "kept {folder}/{name}: it was edited after it was generated",
                           "zh": "保留了 {folder}/{name}：它在生成之后被编辑过"},
    "make_nbgrader.refused": {
        "en": "NOT overwritten: {folder}/{name} was edited after it was generated and its solution has a new version. "
              "To keep your version and get the new one: python scripts/make_nbgrader.py{lang_option} --keep-changed "
              "(renames yours to NAME{mine}.ipynb first).",
        "zh": "没有覆盖：{folder}/{name} 在生成之后被编辑过，而它的答案有了新版本。要保留你的版本并拿到新版本：python "
              "scripts/make_nbgrader.py{lang_option} --keep-changed（会先把你的文件改名为 NAME{mine}.ipynb）。"},
    "make_nbgrader.up_to_date": {"en": "{folder}/ is up to date", "zh": "{folder}/ 已是最新"},
    "make_nbgrader.next": {
        "en": "next: cd {course} && nbgrader generate_assignment ASSIGNMENT   (see docs/instructor_guide.md)",
        "zh": "下一步：cd {course} && nbgrader generate_assignment ASSIGNMENT   （见 docs/instructor_guide.zh-CN.md）"},
})


def _language(language: object) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {list(LANGUAGES)}, got {language!r}")
    return str(language)


def _count(what: str, n: int, language: str) -> str:
    """``n`` points, autograded exercises or written answers in ``language``."""
    return translate(f"make_nbgrader.{what}{'.one' if n == 1 else ''}", language, n=n)


def _points(count: int, language: str) -> str:
    return _count("points", count, language)


@dataclass(frozen=True)
class Graded:
    """One graded cell of an assignment: its grade id, kind (``"auto"`` or ``"written"``) and points."""

    grade_id: str
    kind: str
    points: int


def assignment_name(solution: Path) -> str:
    """The assignment (and notebook) name of a solution notebook: its file name without ``.ipynb``."""
    return solution.stem


def _slug(exercise_id: str) -> str:
    return exercise_id.replace(".", "_")


def check_calls(source: str, where: str) -> list[tuple[str, str]]:
    """``(exercise id, answer expression)`` of each ``check("NN.k", EXPR)`` call in a code cell, in order.

    ``check`` may be called as ``check``, ``bk.check`` or ``checks.check``; IPython syntax
    (``%matplotlib inline``) is allowed.

    Raises:
        mx.MarkerError: the cell is not valid Python, or a call has no answer argument.
    """
    from IPython.core.inputtransformer2 import TransformerManager

    code = TransformerManager().transform_cell(source)
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        raise mx.MarkerError(f"{where}: not valid Python ({err.msg}, line {err.lineno})") from None
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name != "check" or not node.args:
            continue
        first = node.args[0]
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        answer = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "answer"), None)
        if answer is None:
            raise mx.MarkerError(f"{where}: check({first.value!r}) has no answer argument")
        expr = ast.get_source_segment(code, answer)
        if expr is None:
            raise mx.MarkerError(f"{where}: cannot read the answer of check({first.value!r})")
        calls.append((node.lineno, node.col_offset, first.value, expr))
    return [(exercise_id, expr) for _, _, exercise_id, expr in sorted(calls)]


def _nbgrader(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
              points: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                            "schema_version": SCHEMA_VERSION, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def _test_cell(exercise_id: str, expr: str, language: str = "en") -> Any:
    thunk = f"lambda: {expr}" if "\n" not in expr else f"lambda: (\n    {expr}\n)"
    comment = translate("make_nbgrader.test_cell", language, id=exercise_id, points=_points(AUTO_POINTS, language))
    cell = nbformat.v4.new_code_cell(
        f"{comment}\n"
        "from bubblekit.course.checks import require\n"
        f'require("{exercise_id}", {thunk})'
    )
    cell["id"] = f"test-{_slug(exercise_id).replace('_', '-')}"
    cell.metadata["nbgrader"] = _nbgrader(f"test_{_slug(exercise_id)}", grade=True, locked=True, points=AUTO_POINTS)
    return cell


def _banner(title: str, language: str = "en") -> Any:
    cell = nbformat.v4.new_markdown_cell(translate("make_nbgrader.banner", language, title=title))
    cell["id"] = "assignment-banner"
    cell.metadata["nbgrader"] = _nbgrader("assignment_banner", locked=True)
    return cell


#: The endings of a solution notebook's title (``03 · The bubble formula: exercises``, ``04 · Schedules compared:
#: solutions``), left out of the banner.
_TITLE_SUFFIXES = {"en": (": exercises", ": solutions"), "zh": ("：练习", "：参考答案")}


def make_assignment(nb: Any, name: str, known_ids: set[str] | None = None,
                    language: str = "en") -> tuple[Any, list[Graded]]:
    """The nbgrader instructor version of solution notebook ``nb``, and its graded cells.

    Args:
        nb: the solution notebook (not changed).
        name: its file name, for messages and the banner.
        known_ids: the registered exercise ids; a ``check`` of another id is an error. ``None``
            skips the test (for synthetic notebooks).
        language: the notebook's language, ``"en"`` or ``"zh"`` (``solutions/zh/``): the
            language of the banner and of the test cells' comment.

    Raises:
        mx.MarkerError: bad solution markers, a cell that is not Python, an unknown exercise
            id, or an exercise checked twice (the message names the notebook and cell).
    """
    language = _language(language)
    nb = mx.normalise(nb)
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip() if nb.cells and nb.cells[0].source else name
    for suffix in _TITLE_SUFFIXES[language]:
        title = title.removesuffix(suffix)
    cells = [_banner(title, language)]
    graded: list[Graded] = []
    used: set[str] = set()
    current = ""  # the exercise id of the latest heading: names written answers and solution cells

    def unique(grade_id: str) -> str:
        base, n = grade_id, 1
        while grade_id in used:
            n += 1
            grade_id = f"{base}_{n}"
        used.add(grade_id)
        return grade_id

    for index, cell in enumerate(nb.cells):
        where = mx.cell_where(name, index, cell)
        if mx.SOLUTION_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        _, found = mx.solution_region(cell, where, language)  # validates the markers; nbgrader strips them
        if cell.cell_type == "raw":
            cells.append(cell)
            continue
        mx.clear_cell(cell)
        if cell.cell_type == "markdown" and index == 0:
            cell.source = mx.exercise_title(cell.source, language)  # "...: solutions" is the student's "...: exercises"
        if cell.cell_type == "markdown":
            heading = next((m.group(1) for h in _HEADING.findall(cell.source) if (m := _EXERCISE_ID.search(h))), "")
            current = heading or current
            if found:
                grade_id = unique(f"explain_{_slug(current)}" if current else f"explain_{cell['id']}")
                cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, solution=True, points=WRITTEN_POINTS)
                graded.append(Graded(grade_id, "written", WRITTEN_POINTS))
            else:
                cell.metadata["nbgrader"] = _nbgrader(unique(f"cell_{cell['id']}"), locked=True)
            cells.append(cell)
            continue
        calls = check_calls(cell.source, where)
        if found:
            first = calls[0][0] if calls else current
            grade_id = unique(f"answer_{_slug(first)}" if first else f"answer_{cell['id']}")
            cell.metadata["nbgrader"] = _nbgrader(grade_id, solution=True)
        else:
            cell.metadata["nbgrader"] = _nbgrader(unique(f"cell_{cell['id']}"), locked=True)
        cells.append(cell)
        for exercise_id, expr in calls:
            if known_ids is not None and exercise_id not in known_ids:
                raise mx.MarkerError(f"{where}: check({exercise_id!r}): no exercise has that id in bubblekit.course.checks")
            grade_id = f"test_{_slug(exercise_id)}"
            if grade_id in used:
                raise mx.MarkerError(f"{where}: exercise {exercise_id} is checked twice in {name}")
            used.add(grade_id)
            cells.append(_test_cell(exercise_id, expr, language))
            graded.append(Graded(grade_id, "auto", AUTO_POINTS))
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("toc-autonumbering", None)
    nb.metadata["kernelspec"] = dict(mx.KERNELSPEC)
    return nb, graded


def select(solutions: Path, lessons: list[str], language: str = "en") -> list[Path]:
    """The course's solution notebooks for ``lessons`` (``"03"``, ``"3"`` or a name; all when empty).

    Raises:
        mx.UsageError: a lesson that has no solution notebook (the message, in ``language``, lists those that do).
    """
    paths = mx.solution_files(solutions)[0]
    if not lessons:
        return paths
    chosen: list[Path] = []
    for lesson in lessons:
        key = lesson.strip().removesuffix(".ipynb")
        if key.isdigit():
            key = f"{int(key):02d}"
        match = [p for p in paths if p.stem == key or p.stem.split("_", 1)[0] == key]
        if not match:
            raise mx.UsageError(translate("make_nbgrader.no_lesson", _language(language), lesson=lesson,
                                          lessons=", ".join(p.stem.split("_", 1)[0] for p in paths),
                                          example=paths[0].stem))
        chosen += [p for p in match if p not in chosen]
    return chosen


def _check_course(course: Path, language: str = "en") -> None:
    """Refuse a ``--course`` that is one of the course's own folders, not a folder, or the other language's course.

    Raises:
        mx.UsageError: naming ``--course`` (or ``--lang``), the folder and what is allowed, in ``language``.
    """
    language = _language(language)
    resolved = course.resolve()
    root = ROOT.resolve()
    if resolved == root or resolved in root.parents or any(
            resolved == root / f or root / f in resolved.parents for f in _FORBIDDEN):
        raise mx.UsageError(translate("make_nbgrader.own_folder", language, course=str(course),
                                      default=mx._show(COURSES[language])))
    if course.exists() and not course.is_dir():
        raise mx.UsageError(translate("make_nbgrader.not_folder", language, course=str(course)))
    config = course / CONFIG
    for other, template in COURSES.items():
        if other == language or not config.is_file():
            continue
        try:
            theirs = config.read_bytes() == (template / CONFIG).read_bytes()
        except OSError:
            theirs = False
        if theirs:
            raise mx.UsageError(translate(
                "make_nbgrader.other_language", language, course=str(course), lang=language,
                other=translate(f"make_nbgrader.language_{other}", language),
                this=translate(f"make_nbgrader.language_{language}", language),
                default=mx._show(COURSES[language])))


def build(paths: list[Path], course: Path, *, keep_changed: bool = False,
          language: str = "en") -> tuple[dict[str, mx.WriteReport], dict[str, list[Graded]]]:
    """Write the assignments of ``paths`` (solutions in ``language``) into ``course/source/`` (never over an
    edited file); a course folder without ``nbgrader_config.py`` gets ``language``'s (:data:`COURSES`).

    Returns each assignment's :class:`make_exercises.WriteReport` and graded cells.
    """
    from bubblekit.course.checks import ids

    language = _language(language)
    known = set(ids())
    made = {}
    for path in paths:  # build everything before writing anything: a bad notebook writes nothing
        nb, graded = make_assignment(nbformat.read(path, as_version=4), path.name, known, language)
        made[assignment_name(path)] = (mx.render(nb), graded)
    course.mkdir(parents=True, exist_ok=True)
    if not (course / CONFIG).exists():
        shutil.copyfile(COURSES[language] / CONFIG, course / CONFIG)
    reports, points = {}, {}
    for assignment, (text, graded) in made.items():
        reports[assignment] = mx.write({f"{assignment}.ipynb": text}, course / "source" / assignment,
                                       keep_changed=keep_changed)
        points[assignment] = graded
    return reports, points


def main(argv: list[str] | None = None) -> int:
    """Run the builder; exit status 0 (done), 1 (an edited notebook was kept, not overwritten), 2 (bad input).

    Its messages are in ``--lang``'s language (the notebooks' markers errors stay English: they are the
    course author's).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("lessons", nargs="*", help="lessons to build (03, 3 or 03_the_bubble_formula); default: all")
    parser.add_argument("--course", type=Path, default=None,
                        help="nbgrader course folder (default classroom/nbgrader, or classroom/nbgrader/zh with --lang zh)")
    parser.add_argument("--solutions", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--keep-changed", action="store_true",
                        help="rename each edited notebook that has a new version to NAME.mine.ipynb, then write it")
    parser.add_argument("--list", action="store_true", help="print the assignments, exercises and points; write nothing")
    parser.add_argument("--lang", choices=LANGUAGES, default="en",
                        help="the assignments' language: en (solutions/) or zh (the Chinese solutions, solutions/zh/, "
                             "into classroom/nbgrader/zh); default en")
    args = parser.parse_args(argv)
    lang = args.lang
    course = args.course if args.course is not None else COURSES[lang]
    solutions = args.solutions if args.solutions is not None else SOLUTIONS[lang]
    try:
        _check_course(course, lang)
        paths = select(solutions, args.lessons, lang)
        if args.list:
            from bubblekit.course.checks import ids

            known = set(ids())
            for path in paths:
                _, graded = make_assignment(nbformat.read(path, as_version=4), path.name, known, lang)
                auto = [g for g in graded if g.kind == "auto"]
                written = [g for g in graded if g.kind == "written"]
                print(translate("make_nbgrader.list_line", lang, assignment=assignment_name(path),
                                total=_points(sum(g.points for g in graded), lang), auto=_count("auto", len(auto), lang),
                                auto_points=_points(sum(g.points for g in auto), lang))
                      + (translate("make_nbgrader.list_written", lang, written=_count("written", len(written), lang),
                                   written_points=_points(sum(g.points for g in written), lang)) if written else ""))
            return 0
        reports, _ = build(paths, course, keep_changed=args.keep_changed, language=lang)
    except (mx.MarkerError, mx.UsageError) as err:
        print(translate("make_nbgrader.error", lang, message=err), file=sys.stderr)
        return 2
    status = 0
    for assignment, report in reports.items():
        folder = f"{mx._show(course)}/source/{assignment}"
        for old, new in report.renamed:
            print(translate("make_nbgrader.renamed", lang, folder=folder, old=old, new=new))
        for name in report.wrote:
            print(translate("make_nbgrader.wrote", lang, folder=folder, name=name))
        for name in report.kept:
            print(translate("make_nbgrader.kept", lang, folder=folder, name=name))
        if report.refused:
            print(translate("make_nbgrader.refused", lang, folder=folder, name=report.refused[0],
                            lang_option="" if lang == "en" else f" --lang {lang}", mine=mx.MINE_SUFFIX),
                  file=sys.stderr)
            status = 1
        elif not (report.wrote or report.renamed):
            print(translate("make_nbgrader.up_to_date", lang, folder=folder))
    print(translate("make_nbgrader.next", lang, course=mx._show(course)))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
