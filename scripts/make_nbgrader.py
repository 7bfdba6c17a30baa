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

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "classroom" / "nbgrader"
CONFIG = "nbgrader_config.py"
#: Points of an autograded exercise (one ``check``) and of a written answer (graded by hand).
AUTO_POINTS = 1
WRITTEN_POINTS = 1
SCHEMA_VERSION = 3
#: Where a ``--course`` folder may not be: the course's own folders.
_FORBIDDEN = ("notebooks", "solutions", "exercises", "apps", "workspace", "bubblekit", "tests", "scripts",
              "docs", "benchmarks", ".git", ".venv")
_EXERCISE_ID = re.compile(r"\b(\d{2}\.\d+[a-z]?)\b")
_HEADING = re.compile(r"(?m)^#{1,6}\s.*$")

__all__ = ["Graded", "check_calls", "make_assignment", "assignment_name", "select", "build", "main"]


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


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _nbgrader(grade_id: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
              points: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"grade": grade, "grade_id": grade_id, "locked": locked,
                            "schema_version": SCHEMA_VERSION, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def _test_cell(exercise_id: str, expr: str) -> Any:
    thunk = f"lambda: {expr}" if "\n" not in expr else f"lambda: (\n    {expr}\n)"
    points = _n(AUTO_POINTS, "point")
    cell = nbformat.v4.new_code_cell(
        f"# Autograded test of exercise {exercise_id} ({points}): the same check as above. Leave this cell as it is.\n"
        "from bubblekit.course.checks import require\n"
        f'require("{exercise_id}", {thunk})'
    )
    cell["id"] = f"test-{_slug(exercise_id).replace('_', '-')}"
    cell.metadata["nbgrader"] = _nbgrader(f"test_{_slug(exercise_id)}", grade=True, locked=True, points=AUTO_POINTS)
    return cell


def _banner(title: str) -> Any:
    cell = nbformat.v4.new_markdown_cell(
        f"> **Assignment: {title}.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` (and each "
        "_Your answer here._) with your answer and run the cell: the `check(...)` at its end says ✓ or gives a hint.\n"
        "> The locked cell after each exercise is its autograded test: the same check, worth its points; leave it "
        "as it is. Written answers are graded by hand. Before you submit, restart the kernel and run every cell "
        "(or press **Validate**)."
    )
    cell["id"] = "assignment-banner"
    cell.metadata["nbgrader"] = _nbgrader("assignment_banner", locked=True)
    return cell


def make_assignment(nb: Any, name: str, known_ids: set[str] | None = None) -> tuple[Any, list[Graded]]:
    """The nbgrader instructor version of solution notebook ``nb``, and its graded cells.

    Args:
        nb: the solution notebook (not changed).
        name: its file name, for messages and the banner.
        known_ids: the registered exercise ids; a ``check`` of another id is an error. ``None``
            skips the test (for synthetic notebooks).

    Raises:
        mx.MarkerError: bad solution markers, a cell that is not Python, an unknown exercise
            id, or an exercise checked twice (the message names the notebook and cell).
    """
    nb = mx.normalise(nb)
    title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip() if nb.cells and nb.cells[0].source else name
    cells = [_banner(title.removesuffix(": exercises"))]
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
        _, found = mx.solution_region(cell, where)  # validates the markers; nbgrader strips them
        if cell.cell_type == "raw":
            cells.append(cell)
            continue
        mx.clear_cell(cell)
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
            cells.append(_test_cell(exercise_id, expr))
            graded.append(Graded(grade_id, "auto", AUTO_POINTS))
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("toc-autonumbering", None)
    nb.metadata["kernelspec"] = dict(mx.KERNELSPEC)
    return nb, graded


def select(solutions: Path, lessons: list[str]) -> list[Path]:
    """The course's solution notebooks for ``lessons`` (``"03"``, ``"3"`` or a name; all when empty).

    Raises:
        mx.UsageError: a lesson that has no solution notebook (the message lists those that do).
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
            raise mx.UsageError(f"lesson {lesson!r} has no solution notebook; choose from "
                                f"{', '.join(p.stem.split('_', 1)[0] for p in paths)} (or a name like {paths[0].stem})")
        chosen += [p for p in match if p not in chosen]
    return chosen


def _check_course(course: Path) -> None:
    resolved = course.resolve()
    root = ROOT.resolve()
    if resolved == root or resolved in root.parents or any(
            resolved == root / f or root / f in resolved.parents for f in _FORBIDDEN):
        raise mx.UsageError(f"argument --course: {str(course)!r} is the course's own folder; choose "
                            f"{mx._show(COURSE)} (the default) or a folder of your own")
    if course.exists() and not course.is_dir():
        raise mx.UsageError(f"argument --course: {str(course)!r} exists and is not a folder")


def build(paths: list[Path], course: Path, *, keep_changed: bool = False) -> tuple[dict[str, mx.WriteReport], dict[str, list[Graded]]]:
    """Write the assignments of ``paths`` into ``course/source/`` (never over an edited file).

    Returns each assignment's :class:`make_exercises.WriteReport` and graded cells.
    """
    from bubblekit.course.checks import ids

    known = set(ids())
    made = {}
    for path in paths:  # build everything before writing anything: a bad notebook writes nothing
        nb, graded = make_assignment(nbformat.read(path, as_version=4), path.name, known)
        made[assignment_name(path)] = (mx.render(nb), graded)
    course.mkdir(parents=True, exist_ok=True)
    if not (course / CONFIG).exists():
        shutil.copyfile(COURSE / CONFIG, course / CONFIG)
    reports, points = {}, {}
    for assignment, (text, graded) in made.items():
        reports[assignment] = mx.write({f"{assignment}.ipynb": text}, course / "source" / assignment,
                                       keep_changed=keep_changed)
        points[assignment] = graded
    return reports, points


def main(argv: list[str] | None = None) -> int:
    """Run the builder; exit status 0 (done), 1 (an edited notebook was kept, not overwritten), 2 (bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("lessons", nargs="*", help="lessons to build (03, 3 or 03_the_bubble_formula); default: all")
    parser.add_argument("--course", type=Path, default=COURSE, help="nbgrader course folder (default classroom/nbgrader)")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions", help=argparse.SUPPRESS)
    parser.add_argument("--keep-changed", action="store_true",
                        help="rename each edited notebook that has a new version to NAME.mine.ipynb, then write it")
    parser.add_argument("--list", action="store_true", help="print the assignments, exercises and points; write nothing")
    args = parser.parse_args(argv)
    try:
        _check_course(args.course)
        paths = select(args.solutions, args.lessons)
        if args.list:
            from bubblekit.course.checks import ids

            known = set(ids())
            for path in paths:
                _, graded = make_assignment(nbformat.read(path, as_version=4), path.name, known)
                auto = [g for g in graded if g.kind == "auto"]
                written = [g for g in graded if g.kind == "written"]
                print(f"{assignment_name(path)}: {_n(sum(g.points for g in graded), 'point')}: "
                      f"{_n(len(auto), 'autograded exercise')} ({_n(sum(g.points for g in auto), 'point')})"
                      + (f" + {_n(len(written), 'written answer')} graded by hand "
                         f"({_n(sum(g.points for g in written), 'point')})" if written else ""))
            return 0
        reports, _ = build(paths, args.course, keep_changed=args.keep_changed)
    except (mx.MarkerError, mx.UsageError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    status = 0
    for assignment, report in reports.items():
        folder = f"{mx._show(args.course)}/source/{assignment}"
        for old, new in report.renamed:
            print(f"kept your edited {folder}/{old} as {folder}/{new}")
        for name in report.wrote:
            print(f"wrote {folder}/{name}")
        for name in report.kept:
            print(f"kept {folder}/{name}: it was edited after it was generated")
        if report.refused:
            print(f"NOT overwritten: {folder}/{report.refused[0]} was edited after it was generated and its solution "
                  f"has a new version. To keep your version and get the new one: python scripts/make_nbgrader.py "
                  f"--keep-changed (renames yours to NAME{mx.MINE_SUFFIX}.ipynb first).", file=sys.stderr)
            status = 1
        elif not (report.wrote or report.renamed):
            print(f"{folder}/ is up to date")
    print(f"next: cd {mx._show(args.course)} && nbgrader generate_assignment ASSIGNMENT   "
          "(see docs/instructor_guide.md)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
