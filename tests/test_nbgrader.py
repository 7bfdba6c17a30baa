"""The course's nbgrader assignments (scripts/make_nbgrader.py, classroom/nbgrader/) and ``require``.

* ``require`` grades like ``check`` and fails an autograded test cell with the hint;
* the builder turns a solution notebook into an nbgrader instructor version (solution, written
  answer, test and read-only cells, with valid nbgrader metadata), reusing make_exercises.py's
  parser, and never overwrites an instructor's edit;
* end to end, in a temporary course folder: two lessons' assignments are generated, one correct
  and one wrong student notebook are submitted, autograded (full marks against fewer) and get
  feedback HTML with the check's hint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from bubblekit.course import checks
from bubblekit.course.checks import _registry

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_nbgrader.py"
CONFIG = ROOT / "classroom" / "nbgrader" / "nbgrader_config.py"


def _load() -> ModuleType:
    return load_script("make_nbgrader", SCRIPT)


mn = _load()
mx = mn.mx


def notebook(*cells: Any) -> Any:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    return nb


def meta(cell: Any) -> dict[str, Any]:
    return dict(cell.metadata["nbgrader"])


# ----------------------------------------------------------------------------- require


@pytest.fixture()
def fresh_session() -> Any:
    checks.reset_progress()
    yield
    checks.reset_progress()


def test_require_passes_silently_on_a_right_answer(fresh_session: None) -> None:
    checks.load_lessons()
    expected = _registry.REGISTRY["03.3"].expected()
    assert checks.require("03.3", expected) is None
    assert checks.require("03.3", lambda: expected) is None


def test_require_fails_with_the_checks_line_and_first_hint(fresh_session: None) -> None:
    checks.load_lessons()
    ex = _registry.REGISTRY["03.3"]
    expected = ex.expected()
    for _ in range(3):  # never a later tier: require is not an attempt
        with pytest.raises(AssertionError) as err:
            checks.require("03.3", expected + 7)
        text = str(err.value)
        assert text.startswith("03.3 not yet") and ex.hints[0] in text
        assert str(expected) not in text
    assert "03.3" in checks.progress("03").todo, "require must not count as an attempt"


def test_require_reads_an_undefined_name_or_a_stub_as_no_answer_yet(fresh_session: None) -> None:
    def stub() -> Any:
        raise NotImplementedError()

    for answer in (lambda: never_defined_name, stub, None):  # noqa: F821 - the point of the test
        with pytest.raises(AssertionError, match=r"^03\.3 no answer yet .*hint: "):
            checks.require("03.3", answer)


def test_require_fails_a_close_answer_and_an_unknown_id(fresh_session: None) -> None:
    checks.load_lessons()
    close = None
    for ex in _registry.REGISTRY.values():  # an exercise whose answer, given to 2 digits, is "close"
        if ex.compare is not None or ex.exact:
            continue
        value = ex.expected()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value != int(value):
            rounded = float(f"{float(value):.2g}")
            if _registry._assess(ex, rounded)[1] is not None and _registry._assess(ex, rounded)[1].status == "close":
                close = (ex.id, rounded)
                break
    assert close is not None, "no exercise to try a close answer on"
    with pytest.raises(AssertionError, match=rf"^{close[0]} close"):
        checks.require(*close)
    with pytest.raises(ValueError, match="unknown exercise id"):
        checks.require("99.9", 1)
    with pytest.raises(TypeError):
        checks.require(3, 1)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the builder


SETUP = "%matplotlib inline\nfrom bubblekit.course.checks import check"
SOLVED = "### BEGIN SOLUTION\nm_min = 285\n### END SOLUTION\ncheck(\"03.3\", m_min)"


def test_cells_become_solution_test_written_and_read_only_cells() -> None:
    nb = notebook(
        new_markdown_cell("# 03 · The bubble formula: exercises"),
        new_code_cell(SETUP),
        new_markdown_cell("## Exercise 03.3: how many microbatches?"),
        new_code_cell(SOLVED),
        new_markdown_cell("### BEGIN SOLUTION\nBecause.\n### END SOLUTION"),
        new_code_cell("### BEGIN SOLUTION\nprint('only in the solutions')\n### END SOLUTION", metadata={"tags": ["solution"]}),
    )
    out, graded = mn.make_assignment(nb, "03_x.ipynb", {"03.3"})
    kinds = [(c.cell_type, meta(c)["grade_id"], meta(c)["solution"], meta(c)["grade"], meta(c)["locked"]) for c in out.cells]
    assert kinds == [
        ("markdown", "assignment_banner", False, False, True),
        ("markdown", "cell_c0", False, False, True),
        ("code", "cell_c1", False, False, True),
        ("markdown", "cell_c2", False, False, True),
        ("code", "answer_03_3", True, False, False),
        ("code", "test_03_3", False, True, True),
        ("markdown", "explain_03_3", True, True, False),
    ]
    test = out.cells[5]
    assert test.source.splitlines()[-1] == 'require("03.3", lambda: m_min)'
    assert meta(test)["points"] == mn.AUTO_POINTS
    assert [(g.grade_id, g.kind) for g in graded] == [("test_03_3", "auto"), ("explain_03_3", "written")]
    assert out.cells[4].source == SOLVED, "nbgrader strips the region itself: the source keeps the solution"
    assert out.metadata["kernelspec"] == mx.KERNELSPEC
    from nbgrader.nbgraderformat import MetadataValidator

    MetadataValidator().validate_nb(out)  # nbgrader's own rules (grade ids, points, written answers)


@pytest.mark.parametrize(("language", "title", "student"), [
    ("en", "# 05 · Shrinking bubbles: solutions", "# 05 · Shrinking bubbles: exercises"),
    ("zh", "# 05 · 缩小气泡：参考答案", "# 05 · 缩小气泡：练习"),
])
def test_the_solutions_title_becomes_the_exercises(language: str, title: str, student: str) -> None:
    nb = notebook(new_markdown_cell(title + "\n\nIntro."), new_code_cell(SETUP))
    out, _ = mn.make_assignment(nb, "05_x.ipynb", set(), language=language)
    assert out.cells[1].source == student + "\n\nIntro."
    assert student.split(" · ")[1].removesuffix(": exercises").removesuffix("：练习") in out.cells[0].source


def test_check_calls_are_found_in_order_with_their_answer_expression() -> None:
    src = '%matplotlib inline\nr = bk.check("02.2", wait)\ncheck("02.1", (fill,\n drain))\nchecks.check("02.3", answer=x)'
    assert mn.check_calls(src, "nb cell 1") == [("02.2", "wait"), ("02.1", "(fill,\n drain)"), ("02.3", "x")]


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([new_code_cell("### BEGIN SOLUTION\nx = 1\ncheck('03.3', x)")], "never closed"),
        ([new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\ncheck('77.7', x)")], "no exercise has that id"),
        ([new_code_cell("check('03.3', 1)"), new_code_cell("check('03.3', 2)")], "checked twice"),
        ([new_code_cell("x = (")], "not valid Python"),
    ],
)
def test_bad_notebooks_are_errors_naming_the_cell(cells: list[Any], message: str) -> None:
    with pytest.raises(mx.MarkerError, match=message) as err:
        mn.make_assignment(notebook(*cells), "bad.ipynb", {"03.3"})
    assert "bad.ipynb cell" in str(err.value)


def test_every_course_solution_builds_with_registered_ids() -> None:
    known = set(checks.ids())
    for path in mn.select(ROOT / "solutions", []):
        out, graded = mn.make_assignment(nbformat.read(path, as_version=4), path.name, known)
        assert any(g.kind == "auto" for g in graded), f"{path.name}: no autograded exercise"
        from nbgrader.nbgraderformat import MetadataValidator

        MetadataValidator().validate_nb(out)


def test_config_matches_the_exercise_stubs_and_hides_the_generators_files() -> None:
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader(CONFIG.name, str(CONFIG.parent)).load_config()
    assert config.CourseDirectory.root == str(CONFIG.parent)
    assert config.ClearSolutions.code_stub == {"python": "\n".join(mx.CODE_STUB)}
    assert config.ClearSolutions.text_stub == mx.MARKDOWN_STUB
    for hidden in (mx.MANIFEST, "x.mine.ipynb", "x.mine-2.ipynb"):
        import fnmatch

        assert any(fnmatch.fnmatch(hidden, pattern) for pattern in config.CourseDirectory.ignore), hidden


def _run_script(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the builder in this process: (exit status, stdout, stderr)."""
    code = mn.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_instructors_edit_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = tmp_path / "course"
    code, _, err = _run_script(capsys, "--course", str(course), "03")
    assert code == 0, err
    assert (course / "nbgrader_config.py").read_text() == CONFIG.read_text()
    folder = course / "source" / "03_the_bubble_formula"
    nb_path = folder / "03_the_bubble_formula.ipynb"
    edited = nb_path.read_text().replace('"points": 1', '"points": 3', 1)
    nb_path.write_text(edited)
    (course / "nbgrader_config.py").write_text("# mine\n")
    manifest = json.loads((folder / mx.MANIFEST).read_text())["files"]
    manifest["03_the_bubble_formula.ipynb"] = "0" * 64  # as if the course's version had moved on
    (folder / mx.MANIFEST).write_text(json.dumps({"files": manifest}))
    code, _, err = _run_script(capsys, "--course", str(course), "03")
    assert code == 1 and "NOT overwritten" in err
    assert nb_path.read_text() == edited
    assert (course / "nbgrader_config.py").read_text() == "# mine\n"
    code, _, err = _run_script(capsys, "--course", str(course), "03", "--keep-changed")
    assert code == 0, err
    assert (folder / "03_the_bubble_formula.mine.ipynb").read_text() == edited
    assert nb_path.read_text() != edited


@pytest.mark.parametrize("course", ["solutions", "notebooks", ".", "exercises/sub"])
def test_course_folder_may_not_be_one_of_the_courses_own(course: str, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, _, err = _run_script(capsys, "--course", course, "03")
    assert code == 2 and "argument --course" in err


def test_unknown_lesson_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run_script(capsys, "--list", "42")
    assert code == 2 and "'42'" in err and "03" in err


# ----------------------------------------------------------------------------- end to end


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # nbgrader runs alembic
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run


def _autograded_only() -> list[Path]:
    """Two lessons whose points are all autograded (written answers need a teacher)."""
    known = set(checks.ids())
    chosen = []
    for path in mn.select(ROOT / "solutions", []):
        _, graded = mn.make_assignment(nbformat.read(path, as_version=4), path.name, known)
        if graded and all(g.kind == "auto" for g in graded):
            chosen.append(path)
    assert len(chosen) >= 2, "fewer than two lessons have only autograded exercises"
    return chosen[:2]


def _answer_name(source: str) -> str | None:
    calls = mn.check_calls(source, "")
    return calls[0][1] if calls and calls[0][1].isidentifier() else None


@pytest.mark.slow
def test_release_autograde_and_feedback_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = tmp_path / "course"
    lessons = _autograded_only()
    code, _, err = _run_script(capsys, "--course", str(course), *[p.stem for p in lessons])
    assert code == 0, err
    names: list[str] = []
    for lesson in lessons:
        name = lesson.stem
        _nbgrader(course, "generate_assignment", name)
        released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        assert not (course / "release" / name / mx.MANIFEST).exists()
        source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
        solutions = {c.id: c.source for c in source.cells if c.metadata["nbgrader"]["solution"]}
        stubbed = [c for c in released.cells if c.id in solutions and c.cell_type == "code"]
        # the students see nbgrader's stub where the course's exercises/ notebook has its own (name = ...)
        exercise = nbformat.reads(mx.course_copies(ROOT / "exercises")[lesson.name], as_version=4)
        assert all("\n".join(mx.CODE_STUB) in c.source for c in stubbed)
        assert [c.id for c in stubbed] == [c.id for c in exercise.cells
                                           if c.cell_type == "code" and mx.CODE_STUB[0] in c.source]
        assert all(mx.BEGIN not in c.source for c in released.cells)

        alice = nbformat.from_dict(released)
        for cell in alice.cells:
            if cell.id in solutions:
                cell.source = solutions[cell.id]
        # bob leaves the first exercise as it is and answers another one wrongly
        bob = nbformat.from_dict(released)
        missing = stubbed[0].id
        wrong = next((c.id for c in stubbed[1:] if _answer_name(solutions[c.id])), None)
        assert wrong is not None, f"{name}: no exercise after the first answers with a plain name to make wrong"
        for cell in bob.cells:
            if cell.id in solutions and cell.id != missing:
                cell.source = solutions[cell.id]
            if cell.id == wrong:
                cell.source = cell.source.replace(mx.END, f"{_answer_name(solutions[wrong])} = 'not the answer'\n{mx.END}")
        for student, nb in (("alice", alice), ("bob", bob)):
            folder = course / "submitted" / student / name
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
        names.append(name)

    _nbgrader(course, "autograde", "*")
    _nbgrader(course, "generate_feedback", "*")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name in names:
            full = gradebook.find_assignment(name).max_score
            alice = gradebook.find_submission(name, "alice")
            bob = gradebook.find_submission(name, "bob")
            assert full > 0 and alice.max_score == full
            assert alice.score == full, f"{name}: the solutions get {alice.score} of {full}"
            assert bob.score == full - 2 * mn.AUTO_POINTS, f"{name}: bob gets {bob.score} of {full}"
    for name in names:
        for student in ("alice", "bob"):
            html = course / "feedback" / student / name / f"{name}.html"
            assert html.is_file() and html.stat().st_size > 1000, html
        text = (course / "feedback" / "bob" / name / f"{name}.html").read_text(encoding="utf-8")
        assert "no answer yet" in text and "not yet" in text and "hint" in text
