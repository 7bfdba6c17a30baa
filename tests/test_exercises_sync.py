"""exercises/ is generated from solutions/ by scripts/make_exercises.py, and stays in sync;
so is the Chinese edition's exercises/zh/, from solutions/zh/.

Also tests the generator on small synthetic notebooks (the transformation, and the rules that
keep a learner's work: no overwrite of a changed file, no deletion of a file it did not
write, validated arguments, ``--check`` that never advises a command that loses work), and
runs each of the course's exercise notebooks up to its first stub: the only error allowed
is the stub's NotImplementedError.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_exercises.py"


def _load() -> ModuleType:
    return load_script("make_exercises", SCRIPT)


mx = _load()
#: The course's exercises (names the manifest lists, with their shipped text): a learner's
#: edits or scratch notebooks in exercises/ are not the course's and are not tested here.
COURSE = mx.course_copies(ROOT / "exercises")
EXERCISES = sorted(COURSE)
#: The Chinese edition's exercises (exercises/zh/, generated from solutions/zh/), likewise.
COURSE_ZH = mx.course_copies(ROOT / "exercises" / "zh") if (ROOT / "exercises" / "zh").is_dir() else {}
#: Every course exercise as (edition, name).
ALL_EXERCISES = [("en", n) for n in EXERCISES] + [("zh", n) for n in sorted(COURSE_ZH)]
EDITION_COURSE = {"en": COURSE, "zh": COURSE_ZH}
#: Phrases of commands that would lose a learner's work; no message of the generator may advise them.
DESTRUCTIVE = ("git checkout", "git reset", "git clean", "git stash", "git restore", "rm ", "--force", "del ")


def notebook(*cells: Any) -> Any:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    return nb


# ----------------------------------------------------------------------------- the repository


def test_exercises_folder_is_in_sync_with_solutions() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_manifest_lists_every_solution() -> None:
    solutions = sorted(p.name for p in mx.solution_files(ROOT / "solutions")[0])
    assert EXERCISES == solutions
    zh = ROOT / "solutions" / "zh"
    solutions_zh = sorted(p.name for p in mx.solution_files(zh)[0]) if zh.is_dir() else []
    assert sorted(COURSE_ZH) == solutions_zh


def test_no_exercise_leaks_a_solution() -> None:
    for name, text in {**COURSE, **{f"zh/{n}": t for n, t in COURSE_ZH.items()}}.items():
        assert mx.BEGIN not in text and mx.END not in text, name
        nb = nbformat.reads(text, as_version=4)
        assert not any("solution" in c.get("metadata", {}).get("tags", []) for c in nb.cells), name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), name


def test_banner_matches_the_workspace_design() -> None:
    """Issue 11 item 5: no "do not edit", and no "cell below it" where the check is in the same cell.

    Issue 23 item 6: words a learner needs only (no emoji, no `exercises/` or generator details), and a
    link to the worked solutions.
    """
    for name, text in COURSE.items():
        banner = nbformat.reads(text, as_version=4).cells[0]
        assert banner["id"] == mx.BANNER_ID, name
        assert "not this file" not in banner.source and "below it" not in banner.source, name
        assert f"(../solutions/{name})" in banner.source and "make_exercises" not in banner.source, name
    for name, text in COURSE_ZH.items():
        banner = nbformat.reads(text, as_version=4).cells[0]
        assert banner["id"] == mx.BANNER_ID and banner.source == mx.TEXTS["zh"]["banner"].format(name=name), name
        assert f"(../../solutions/zh/{name})" in banner.source and "make_exercises" not in banner.source, name


def _relative_links(text: str) -> list[str]:
    nb = nbformat.reads(text, as_version=4)
    links = [m for c in nb.cells if c.cell_type == "markdown" for m in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", c.source)]
    return [link for link in links if "://" not in link and not link.startswith("mailto:")]


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_exercise_links_resolve_from_the_workspace(edition: str) -> None:
    """The workspace copy (workspace/NAME, workspace/zh/NAME) links to lessons, solutions and other exercises
    that exist; a link into the workspace opens the learner's copy of a course exercise."""
    workspace = ROOT / mx.WORKSPACE_DIR / ("zh" if edition == "zh" else "")
    exercises = ROOT / mx.EDITIONS[edition].exercises
    problems = []
    for name, text in EDITION_COURSE[edition].items():
        for link in _relative_links(text):
            target = Path(os.path.normpath(workspace / link))
            if target.parent == workspace:  # the learner's copy NAME.exercises.ipynb of exercise NAME.ipynb
                target = exercises / target.name.replace(".exercises.ipynb", ".ipynb")
            # a Chinese lesson not translated yet: its English exists (tests/test_zh_parity.py's PENDING)
            untranslated = edition == "zh" and target.parent.name == "zh" and (target.parent.parent / target.name).exists()
            if not target.exists() and not untranslated:
                problems.append(f"{edition} {name}: {link} -> {target.relative_to(ROOT)} does not exist")
            if edition == "zh" and target.suffix == ".ipynb":
                assert target.parent.name == "zh", f"{name}: {link} leaves the Chinese edition"
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- the generator


def test_code_region_becomes_indented_stub_and_tagged() -> None:
    src = "def f(p, m):\n    ### BEGIN SOLUTION\n    return (p - 1) / (m + p - 1)\n    ### END SOLUTION\n\ncheck('03.1', f)"
    nb = notebook(new_code_cell(src))
    out = mx.make_exercise(nb, "t.ipynb")
    cell = out.cells[1]
    assert cell.source == "def f(p, m):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\ncheck('03.1', f)"
    assert "raises-exception" in cell.metadata["tags"]
    assert out.cells[0]["id"] == mx.BANNER_ID and "(../solutions/t.ipynb)" in out.cells[0].source


def test_two_regions_in_one_cell_and_untouched_cells() -> None:
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nx = a\nif x:\n  ### BEGIN SOLUTION\n  b = 2\n  ### END SOLUTION\nprint(b)"
    plain = new_code_cell("import bubblekit as bk")
    out = mx.make_exercise(notebook(plain, new_code_cell(src)), "t.ipynb")
    assert out.cells[1].source == "import bubblekit as bk"
    assert "tags" not in out.cells[1].metadata
    assert out.cells[2].source == (
        "a = ...  # YOUR CODE HERE\nx = a\nif x:\n  # YOUR CODE HERE\n  raise NotImplementedError()\nprint(b)"
    )


def test_a_comprehension_variable_is_not_a_stub() -> None:
    """Sixth review C1: 04.1's `for name in (...)` inside a generator stubbed `name = ...` (04.4's answer)."""
    first = "### BEGIN SOLUTION\npeaks = tuple(f(name) for name in ('a', 'b'))\n### END SOLUTION\ncheck('1', peaks)"
    walrus = "### BEGIN SOLUTION\nys = [last := y for y in (1, 2)]\n### END SOLUTION\ncheck('2', (ys, last))"
    later = "### BEGIN SOLUTION\nname = 'x'\n### END SOLUTION\ncheck('3', name)"
    out = mx.make_exercise(notebook(new_code_cell(first), new_code_cell(walrus), new_code_cell(later)), "t.ipynb")
    assert out.cells[1].source == "peaks = ...  # YOUR CODE HERE\ncheck('1', peaks)"
    assert out.cells[2].source == "last = ...  # YOUR CODE HERE\nys = ...  # YOUR CODE HERE\ncheck('2', (ys, last))"
    assert out.cells[3].source == "name = ...  # YOUR CODE HERE\ncheck('3', name)"


def test_markdown_region_becomes_your_answer_here() -> None:
    md = new_markdown_cell("**Why?**\n\n### BEGIN SOLUTION\nBecause rank 0 waits.\n### END SOLUTION\n")
    out = mx.make_exercise(notebook(md), "t.ipynb")
    assert out.cells[1].source == "**Why?**\n\n" + mx.MARKDOWN_STUB + "\n"
    assert "tags" not in out.cells[1].metadata


@pytest.mark.parametrize(("language", "solution", "exercise"), [
    ("en", "# 04 · Schedules compared: solutions\n\nExercises for lesson 04.", "# 04 · Schedules compared: exercises\n\nExercises for lesson 04."),
    ("zh", "# 04 · 调度对比：参考答案\n\n第 04 课的练习。", "# 04 · 调度对比：练习\n\n第 04 课的练习。"),
    ("en", "# 10 · The interview bank\n\nForty-six questions.", "# 10 · The interview bank\n\nForty-six questions."),
    ("en", "# 04 · Schedules compared: solutions\n\nWorked solutions to the exercises for [lesson 04](x.ipynb). Run it.",
     "# 04 · Schedules compared: exercises\n\nExercises for [lesson 04](x.ipynb). Run it."),
    ("zh", "# 04 · 调度对比：参考答案\n\n这是[第 04 课](x.ipynb)练习的参考答案。每道题……",
     "# 04 · 调度对比：练习\n\n这是[第 04 课](x.ipynb)的练习。每道题……"),
])
def test_a_solution_title_becomes_the_exercise_title(language: str, solution: str, exercise: str) -> None:
    """The solution notebook is titled as the solutions; its exercise copy as the exercises (only the first cell)."""
    later = new_markdown_cell(solution)
    out = mx.make_exercise(notebook(new_markdown_cell(solution), later), "t.ipynb", language)
    assert out.cells[1].source == exercise
    assert out.cells[2].source == solution


def test_solution_cells_dropped_outputs_and_counts_cleared() -> None:
    keep = new_code_cell("print(1)", execution_count=3, outputs=[new_output("stream", name="stdout", text="1\n")])
    keep.metadata["execution"] = {"iopub.execute_input": "2024-01-01T00:00:00"}
    secret = new_code_cell("answer = 42")
    secret.metadata["tags"] = ["solution"]
    secret_md = new_markdown_cell("The answer is 42.")
    secret_md.metadata["tags"] = ["solution", "other"]
    nb = notebook(keep, secret, secret_md)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    out = mx.make_exercise(nb, "t.ipynb")
    assert [c.source for c in out.cells[1:]] == ["print(1)"]
    assert out.cells[1].outputs == [] and out.cells[1].execution_count is None
    assert "execution" not in out.cells[1].metadata and "widgets" not in out.metadata
    assert "42" not in mx.render(out)
    # the input notebook is not modified
    assert nb.cells[0].outputs and len(nb.cells) == 3


def test_kernelspec_is_ipykernels_own() -> None:
    """With another display name JupyterLab marks the notebook changed when its kernel starts (then autosaves)."""
    nb = notebook(new_code_cell("x = 1"))
    assert nb.metadata["kernelspec"]["display_name"] == "Python 3"
    assert mx.make_exercise(nb, "t.ipynb").metadata["kernelspec"] == mx.KERNELSPEC
    for name, text in COURSE.items():
        assert nbformat.reads(text, as_version=4).metadata["kernelspec"] == mx.KERNELSPEC, name


def test_markdown_links_to_exercises_open_the_workspace_copy() -> None:
    md = new_markdown_cell("See [the bank](../exercises/10_bank.ipynb#q1) and [02](../notebooks/02_x.ipynb).")
    out = mx.make_exercise(notebook(md), "t.ipynb")
    assert out.cells[1].source == "See [the bank](../workspace/10_bank.exercises.ipynb#q1) and [02](../notebooks/02_x.ipynb)."


def test_chinese_edition_stubs_banner_and_links() -> None:
    """solutions/zh/ -> exercises/zh/: Chinese stubs and banner; links open workspace/zh/ and the zh lessons."""
    code = new_code_cell("def f(p, m):\n    ### BEGIN SOLUTION\n    return (p - 1) / (m + p - 1)\n    ### END SOLUTION")
    md = new_markdown_cell("**为什么？**\n\n### BEGIN SOLUTION\n因为 rank 0 在等。\n### END SOLUTION\n\n"
                           "见[题库](../../exercises/zh/10_bank.ipynb#q1)、[02](../../notebooks/zh/02_x.ipynb)、"
                           "[英文](../exercises/10_bank.ipynb)。")
    out = mx.make_exercise(notebook(code, md), "t.ipynb", "zh")
    assert out.cells[1].source == "def f(p, m):\n    # 在这里写你的代码\n    raise NotImplementedError()"
    assert "raises-exception" in out.cells[1].metadata["tags"]
    assert out.cells[2].source == (
        "**为什么？**\n\n_在这里写下你的答案。_\n\n见[题库](../../workspace/zh/10_bank.exercises.ipynb#q1)、"
        "[02](../../notebooks/zh/02_x.ipynb)、[英文](../exercises/10_bank.ipynb)。"
    )
    banner = out.cells[0]
    assert banner["id"] == mx.BANNER_ID and "(../../solutions/zh/t.ipynb)" in banner.source
    assert "YOUR CODE" not in mx.render(out) and "Your answer" not in mx.render(out)
    with pytest.raises(ValueError, match="language='fr'"):
        mx.make_exercise(notebook(code), "t.ipynb", "fr")


@pytest.mark.parametrize(
    ("cell", "pattern"),
    [
        (new_code_cell("### BEGIN SOLUTION\n### BEGIN SOLUTION\nx\n### END SOLUTION"), r"t\.ipynb cell 0.*nested"),
        (new_code_cell("x = 1\n### BEGIN SOLUTION\nx = 2"), r"t\.ipynb cell 0.*line 2 is never closed"),
        (new_code_cell("x = 1\n### END SOLUTION"), r"t\.ipynb cell 0.*without"),
        (new_markdown_cell("### BEGIN SOLUTION\ntext"), r"t\.ipynb cell 0.*never closed"),
        (new_code_cell("x = 1  ### BEGIN SOLUTION\n### END SOLUTION"), r"t\.ipynb cell 0.*not alone"),
        (new_raw_cell("### BEGIN SOLUTION\n### END SOLUTION"), r"t\.ipynb cell 0.*raw"),
    ],
)
def test_bad_markers_are_errors_naming_notebook_and_cell(cell: Any, pattern: str) -> None:
    with pytest.raises(mx.MarkerError, match=pattern):
        mx.make_exercise(notebook(cell), "t.ipynb")


def test_output_is_deterministic_and_nbformat_style(tmp_path: Path) -> None:
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    cell = new_code_cell("### BEGIN SOLUTION\nx = '气泡'\n### END SOLUTION")
    old = notebook(new_code_cell("import bubblekit"), cell)
    old.nbformat_minor = 4
    for c in old.cells:
        del c["id"]
    nbformat.write(old, sol / "01_x.ipynb")
    first = mx.generate(sol)
    second = mx.generate(sol)
    assert first == second
    text = first["01_x.ipynb"]
    assert text.endswith("\n") and '\n "cells": [\n' in text  # indent 1, sorted keys
    assert '"id": "cell-0"' in text
    nbformat.validate(nbformat.reads(text, as_version=4))
    assert mx.main(["--solutions", str(sol), "--exercises", str(ex)]) == 0
    assert (ex / "01_x.ipynb").read_text(encoding="utf-8") == text


def _two_solutions(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")), sol / "01_a.ipynb")
    nbformat.write(notebook(new_code_cell("y = 2")), sol / "02_b.ipynb")
    return sol, ex, ["--solutions", str(sol), "--exercises", str(ex)]


def _no_destructive_advice(text: str) -> None:
    for phrase in DESTRUCTIVE:
        assert phrase not in text, f"advises {phrase!r}:\n{text}"


def test_check_mode_reports_stale_extra_missing_and_leaks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(["--check", *args]) == 1  # both missing
    assert "01_a.ipynb: missing" in capsys.readouterr().err
    assert mx.main(args) == 0
    assert mx.main(["--check", *args]) == 0
    manifest = mx.read_manifest(ex)
    assert manifest is not None and sorted(manifest) == ["01_a.ipynb", "02_b.ipynb"]
    # the solution changes: the generated files are stale; the generator (safe) is the fix
    nbformat.write(notebook(new_code_cell("y = 3")), sol / "02_b.ipynb")
    assert mx.main(["--check", *args]) == 1
    err = capsys.readouterr().err
    assert "02_b.ipynb: differs" in err and "fix: python scripts/make_exercises.py" in err
    _no_destructive_advice(err)
    assert mx.main(args) == 0 and "y = 3" in (ex / "02_b.ipynb").read_text()
    # hand edits with no git to fall back on: a problem, and the advice keeps the edit
    leak = (ex / "01_a.ipynb").read_text().replace("# YOUR CODE HERE", "### BEGIN SOLUTION")
    (ex / "01_a.ipynb").write_text(leak)
    assert mx.main(["--check", *args]) == 1
    err = capsys.readouterr().err
    assert "01_a.ipynb: changed after the generator wrote it" in err and "--keep-changed" in err
    assert "fix:" not in err
    _no_destructive_advice(err)
    # a file the generator did not write: a note, never a failure, never touched
    (ex / "01_a.ipynb").write_text(leak.replace("### BEGIN SOLUTION", "# YOUR CODE HERE"))
    (ex / "my_scratch.ipynb").write_text("{}")
    assert mx.main(["--check", *args]) == 0
    assert "my_scratch.ipynb: not the course's" in capsys.readouterr().out
    assert mx.main(args) == 0 and (ex / "my_scratch.ipynb").read_text() == "{}"


def test_check_leak_in_the_generators_own_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(args) == 0
    path = ex / "01_a.ipynb"
    leak = path.read_text().replace("# YOUR CODE HERE", "### BEGIN SOLUTION")
    path.write_text(leak)
    manifest = mx.read_manifest(ex)
    assert manifest is not None
    manifest["01_a.ipynb"] = mx.digest(leak)  # as if the generator had written the leak
    mx._write_manifest(ex, manifest)
    assert mx.main(["--check", *args]) == 1
    assert "01_a.ipynb: contains a solution marker" in capsys.readouterr().err


# ----------------------------------------------------------------------------- a learner's work is kept


def test_generator_never_deletes_files_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(args) == 0
    mine = {"01_a-Copy1.ipynb": b'{"mine": 1}', "my_scratch.ipynb": b"notes \xe6\xb0\x94\xe6\xb3\xa1", "notes.txt": b"x"}
    for name, data in mine.items():
        (ex / name).write_bytes(data)
    (sol / "02_b.ipynb").unlink()  # a solution goes away: only the generator's unchanged file goes with it
    assert mx.main(args) == 0
    out = capsys.readouterr().out
    assert "removed" in out and "02_b.ipynb" in out and not (ex / "02_b.ipynb").exists()
    assert "left alone" in out and "my_scratch.ipynb" in out
    for name, data in mine.items():
        assert (ex / name).read_bytes() == data


def test_changed_exercise_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(args) == 0
    path = ex / "01_a.ipynb"
    edited = path.read_bytes().replace(b"# YOUR CODE HERE", b"x = 1  # my answer")
    path.write_bytes(edited)
    # nothing new in the course: the learner's file is kept, exit 0
    assert mx.main(args) == 0
    assert path.read_bytes() == edited and "kept" in capsys.readouterr().out
    # a new version of the solution: refused, exit 1, says which file and how to keep it
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 2\n### END SOLUTION\nprint(x)")), sol / "01_a.ipynb")
    assert mx.main(args) == 1
    err = capsys.readouterr().err
    assert "NOT overwritten" in err and "01_a.ipynb" in err and "--keep-changed" in err
    _no_destructive_advice(err)
    assert path.read_bytes() == edited
    assert mx.main(["--check", *args]) == 1  # without git the edit cannot be told from a stale file
    capsys.readouterr()
    # --keep-changed: the learner's version is renamed (bytes kept), the new version written
    assert mx.main([*args, "--keep-changed"]) == 0
    assert (ex / "01_a.mine.ipynb").read_bytes() == edited
    assert "print(x)" in path.read_text()
    assert mx.main(["--check", *args]) == 0
    # a second --keep-changed never overwrites the first .mine file
    path.write_bytes(edited)
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 3\n### END SOLUTION")), sol / "01_a.ipynb")
    assert mx.main([*args, "--keep-changed"]) == 0
    assert (ex / "01_a.mine.ipynb").read_bytes() == edited and (ex / "01_a.mine-2.ipynb").read_bytes() == edited


def test_changed_exercise_whose_solution_is_gone_is_kept(tmp_path: Path) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(args) == 0
    (ex / "02_b.ipynb").write_text("my version")
    (sol / "02_b.ipynb").unlink()
    assert mx.main(args) == 0
    assert (ex / "02_b.ipynb").read_text() == "my version"
    manifest = mx.read_manifest(ex)
    assert manifest is not None and "02_b.ipynb" not in manifest  # it is the learner's now


@pytest.mark.parametrize(
    ("flag", "value", "pattern"),
    [
        ("--solutions", "solution", r"argument --solutions: folder 'solution' does not exist"),
        ("--solutions", "notebooks", r"argument --solutions: .* is not a solutions folder"),
        ("--solutions", "exercises", r"argument --solutions: .* is not a solutions folder"),
        ("--exercises", "notebooks", r"argument --exercises: .* is not an exercises folder"),
        ("--exercises", "solutions", r"argument --exercises: .*(is the --solutions folder|not an exercises folder)"),
        ("--exercises", "workspace", r"argument --exercises: .* is not an exercises folder"),
        ("--exercises", ".", r"argument --exercises: .* is not an exercises folder"),
    ],
)
def test_bad_folder_arguments_are_errors_and_touch_nothing(
    flag: str, value: str, pattern: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    monkeypatch.chdir(ROOT)
    before = {p: p.stat().st_mtime_ns for f in ("exercises", "notebooks", "solutions") for p in (ROOT / f).glob("*")}
    assert mx.main([flag, value]) == 2
    assert re.search(pattern, capsys.readouterr().err)
    after = {p: p.stat().st_mtime_ns for f in ("exercises", "notebooks", "solutions") for p in (ROOT / f).glob("*")}
    assert after == before


def test_foreign_folders_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex, args = _two_solutions(tmp_path)
    other = tmp_path / "mine"
    other.mkdir()
    (other / "thesis.ipynb").write_text("{}")
    assert mx.main(["--solutions", str(sol), "--exercises", str(other)]) == 2
    assert "argument --exercises" in capsys.readouterr().err and (other / "thesis.ipynb").read_text() == "{}"
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    nbformat.write(notebook(new_code_cell("import bubblekit")), lessons / "01.ipynb")
    assert mx.main(["--solutions", str(lessons), "--exercises", str(ex)]) == 2
    assert "not a folder of solutions" in capsys.readouterr().err and not ex.exists()


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_check_in_git_ignores_a_learners_local_changes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CI checks the committed files; a learner's uncommitted edit is a note, and its committed version is checked."""
    sol, ex, args = _two_solutions(tmp_path)
    assert mx.main(args) == 0
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "course")
    path = ex / "01_a.ipynb"
    edited = path.read_bytes().replace(b"# YOUR CODE HERE", b"x = 1  # my answer ### BEGIN SOLUTION")
    path.write_bytes(edited)
    assert mx.main(["--check", *args]) == 0
    out = capsys.readouterr().out
    assert "01_a.ipynb: has local changes" in out
    _no_destructive_advice(out)
    assert path.read_bytes() == edited
    # the same edit committed (a hand edit in the course): CI fails
    _git(tmp_path, "commit", "-q", "-am", "hand edit")
    assert mx.main(["--check", *args]) == 1
    assert "changed after the generator wrote it" in capsys.readouterr().err


def test_marker_error_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol = tmp_path / "solutions"
    sol.mkdir()
    nbformat.write(notebook(new_code_cell("ok"), new_code_cell("### BEGIN SOLUTION")), sol / "05_bad.ipynb")
    assert mx.main(["--check", "--solutions", str(sol), "--exercises", str(tmp_path / "ex")]) == 2
    assert "05_bad.ipynb cell 1" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the exercises run


# Each exercise runs top to bottom unanswered (no stub raises): tests/test_exercises_run_all.py.


# ----------------------------------------------------------------------------- both editions


def _two_editions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A course in ``tmp_path`` with an English and a Chinese solution; the generator's ROOT is it."""
    root = tmp_path / "course"
    (root / "solutions" / "zh").mkdir(parents=True)
    link = "\n\n[上一课](../../notebooks/zh/01_a.ipynb) · [题库](../../exercises/zh/01_a.ipynb#q1)"
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
                            new_markdown_cell("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION")),
                   root / "solutions" / "01_a.ipynb")
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"),
                            new_markdown_cell("为什么？\n### BEGIN SOLUTION\n因为。\n### END SOLUTION" + link)),
                   root / "solutions" / "zh" / "01_a.ipynb")
    (root / "notebooks" / "zh").mkdir(parents=True)
    nbformat.write(notebook(new_markdown_cell("# 01")), root / "notebooks" / "zh" / "01_a.ipynb")
    monkeypatch.setattr(mx, "ROOT", root)
    return root


def test_both_editions_each_with_its_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = _two_editions(tmp_path, monkeypatch)
    ex, zh = root / "exercises", root / "exercises" / "zh"
    assert mx.main(["--check"]) == 1  # both editions missing
    err = capsys.readouterr().err
    assert "exercises/01_a.ipynb: missing" in err.replace(str(root) + "/", "") and "zh/01_a.ipynb: missing" in err
    assert mx.main([]) == 0
    assert mx.read_manifest(ex) == {"01_a.ipynb": mx.digest((ex / "01_a.ipynb").read_text())}
    assert mx.read_manifest(zh) == {"01_a.ipynb": mx.digest((zh / "01_a.ipynb").read_text())}
    assert "# 在这里写你的代码" in (zh / "01_a.ipynb").read_text() and "# YOUR CODE HERE" in (ex / "01_a.ipynb").read_text()
    assert "../../workspace/zh/01_a.exercises.ipynb#q1" in (zh / "01_a.ipynb").read_text()
    out = capsys.readouterr().out
    assert "left alone" not in out  # the zh/ folder is not a stray file of the English edition
    assert mx.main(["--check"]) == 0 and mx.main([]) == 0
    assert "is up to date" in capsys.readouterr().out
    # only the Chinese edition is stale: --check says so; --lang en passes
    sol = nbformat.read(root / "solutions" / "zh" / "01_a.ipynb", as_version=4)
    sol.cells.append(new_markdown_cell("新的一段。"))
    nbformat.write(sol, root / "solutions" / "zh" / "01_a.ipynb")
    assert mx.main(["--check", "--lang", "en"]) == 0
    assert mx.main(["--check"]) == 1 and "zh/01_a.ipynb: differs" in capsys.readouterr().err
    # a learner's edit in exercises/zh/ is never overwritten; --keep-changed keeps it as .mine
    edited = (zh / "01_a.ipynb").read_bytes().replace("# 在这里写你的代码".encode(), b"x = 1  # mine")
    (zh / "01_a.ipynb").write_bytes(edited)
    (zh / "my_scratch.ipynb").write_text("{}")
    before = (ex / "01_a.ipynb").read_bytes()
    assert mx.main([]) == 1
    assert "NOT overwritten" in capsys.readouterr().err and (zh / "01_a.ipynb").read_bytes() == edited
    assert mx.main(["--keep-changed", "--lang", "zh"]) == 0
    assert (zh / "01_a.mine.ipynb").read_bytes() == edited and "新的一段" in (zh / "01_a.ipynb").read_text()
    assert (zh / "my_scratch.ipynb").read_text() == "{}" and (ex / "01_a.ipynb").read_bytes() == before
    assert mx.main(["--check"]) == 0


def test_chinese_exercises_into_the_chinese_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``bubblekit workspace --lang zh`` copies the generated exercises/zh/ into workspace/zh/, where links resolve."""
    from bubblekit.course import workspace as ws

    root = _two_editions(tmp_path, monkeypatch)
    assert mx.main([]) == 0
    (root / "exercises" / "zh" / "my_scratch.ipynb").write_text("{}")  # not the course's: not copied
    report = ws.sync_workspace(root, language="zh")
    assert [p.relative_to(root).as_posix() for p in report.created] == ["workspace/zh/01_a.exercises.ipynb"]
    copy = root / "workspace" / "zh" / "01_a.exercises.ipynb"
    assert copy.read_bytes() == (root / "exercises" / "zh" / "01_a.ipynb").read_bytes()
    for link in _relative_links(copy.read_text()):
        assert (copy.parent / link).resolve().exists(), link
    assert [p.name for p in ws.sync_workspace(root).created] == ["01_a.exercises.ipynb"]  # the English one, apart
    copy.write_text("my work 气泡")
    assert ws.sync_workspace(root, language="zh").created == () and copy.read_text() == "my work 气泡"


@pytest.mark.parametrize(("flag", "value"), [("--exercises", "workspace/zh"), ("--exercises", "solutions/zh"),
                                             ("--solutions", "exercises/zh"), ("--solutions", "workspace/zh")])
def test_folders_inside_the_course_folders_are_refused(flag: str, value: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = _two_editions(tmp_path, monkeypatch)
    assert mx.main([]) == 0
    (root / "workspace" / "zh").mkdir(parents=True)
    monkeypatch.chdir(root)
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    assert mx.main([flag, value]) == 2
    assert f"argument {flag}" in capsys.readouterr().err
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before
