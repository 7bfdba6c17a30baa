"""A learner's work is never lost (issue "nothing lost"): the acceptance test and its parts.

The acceptance test builds a temporary copy of the course as a git repository (the
"upstream", made from this checkout's files, committed), clones it as a learner would, and
in the clone: makes the workspace, edits an exercise in ``workspace/`` and one in
``exercises/`` (the old habit), adds scratch notebooks and ``...-Copy1.ipynb`` files in
several folders, "runs and saves" a lesson; then runs every documented command
(``bash course.sh test exercises``, the generator with and without ``--check``, notebook
re-execution, ``bubblekit workspace``) and updates the course by ``git pull`` from the
upstream after a new commit there. Afterwards every learner file is byte-identical and no
command's output advises a command that would lose it.

Every command runs with ``BUBBLEKIT_VENV`` pointing at this checkout's ``.venv`` (nothing is
installed). The slow parts (nbval, kernel runs) are replaced by their decision logic: which
notebooks ``course.sh test notebooks`` and ``scripts/execute_notebooks.py`` would take.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from bubblekit.course import workspace as ws

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
#: Phrases of commands that would lose a learner's work: no output may advise them.
DESTRUCTIVE = ("git checkout", "git reset", "git clean", "git stash", "git restore", "rm -", "rm workspace",
               "--force", "--include-changed")
GIT_ENV = {"GIT_AUTHOR_NAME": "course", "GIT_AUTHOR_EMAIL": "course@example.org",
           "GIT_COMMITTER_NAME": "course", "GIT_COMMITTER_EMAIL": "course@example.org",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, capture_output=True, text=True,
                         env={**os.environ, **GIT_ENV})
    if check and run.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{run.stdout}{run.stderr}")
    return run


def make_course_copy(dest: Path) -> Path:
    """A git repository holding this checkout's course files (tracked and new, not ignored), committed."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout.split("\0")
    dest.mkdir(parents=True)
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "the course")
    return dest


def env_for_course() -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "BUBBLEKIT_VENV": str(VENV), "BUBBLEKIT_NO_INSTALL": "1", "MPLBACKEND": "Agg",
           "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("BUBBLEKIT_CHECK_WORKTREE", None)
    return env


class Course:
    """The learner's clone, and every command's output (for the advice check)."""

    def __init__(self, upstream: Path, learner: Path) -> None:
        self.upstream, self.dir = upstream, learner
        self.outputs: list[str] = []

    def run(self, *cmd: str, ok: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        run = subprocess.run(list(cmd), cwd=cwd or self.dir, capture_output=True, text=True, env=env_for_course(),
                             timeout=600)
        self.outputs.append(f"$ {' '.join(cmd)}\n{run.stdout}{run.stderr}")
        if ok and run.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        return run


@pytest.fixture()
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Course]:
    # a learner's machine: not the contributor's switch that counts every file as the course's (the
    # commands run here in-process read it too, not only the subprocesses of env_for_course)
    monkeypatch.delenv("BUBBLEKIT_CHECK_WORKTREE", raising=False)
    upstream = make_course_copy(tmp_path / "upstream")
    git(tmp_path, "clone", "-q", str(upstream), "learner")
    yield Course(upstream, tmp_path / "learner")


def notebook(*sources: str, outputs: str | None = None) -> str:
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
        if outputs is not None:
            cell.execution_count = i + 1
            cell.outputs = [new_output("stream", name="stdout", text=outputs)]
    return nbformat.writes(nb)


def edit_exercise(path: Path, answer: str) -> None:
    """What a learner does: put an answer in place of the first stub, run it (an output), save."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and " = ...  # YOUR CODE HERE" in cell.source:
            name = cell.source.split(" = ...  # YOUR CODE HERE", 1)[0].split("\n")[-1]
            cell.source = cell.source.replace(f"{name} = ...  # YOUR CODE HERE", answer, 1)
            cell.execution_count = 1
            cell.outputs = [new_output("stream", name="stdout", text="✅ correct\n")]
            break
    nb.cells.append(new_markdown_cell("My notes: the bubble is the idle time. 气泡"))
    nbformat.write(nb, path)


def snapshot(root: Path, rels: list[str]) -> dict[str, bytes]:
    return {rel: (root / rel).read_bytes() for rel in rels}


# ----------------------------------------------------------------------------- the acceptance test


@needs_git
def test_learners_files_survive_every_documented_command_and_an_update(course: Course, tmp_path: Path) -> None:
    c = course
    # 1. set-up as the README says (nothing is installed: the venv is ready) makes the workspace
    c.run("bash", "course.sh", "setup")
    names = sorted(p.name for p in (c.dir / "exercises").glob("*.ipynb"))
    assert names and sorted(p.name for p in (c.dir / "workspace").glob("*.ipynb")) == [ws.workspace_name(n) for n in names]
    assert git(c.dir, "status", "--porcelain").stdout == ""  # workspace/ is git-ignored

    # 2. the learner works
    edit_exercise(c.dir / "workspace" / "03_the_bubble_formula.exercises.ipynb", "f = lambda p, m: (p - 1) / (m + p - 1)")
    edit_exercise(c.dir / "exercises" / "03_the_bubble_formula.ipynb", "answer = 0.2  # worked in exercises/")
    learner_files = {
        "workspace/03_the_bubble_formula-Copy1.ipynb": notebook("x = 1"),
        "workspace/my_scratch.ipynb": notebook("import pandas", outputs="scratch\n"),
        "exercises/03_the_bubble_formula-Copy1.ipynb": notebook("y = 2"),
        "exercises/my_scratch.ipynb": notebook("### BEGIN SOLUTION\nz = 3\n### END SOLUTION"),
        "notebooks/Untitled.ipynb": notebook("1 / 0", outputs="boom\n"),
        "notebooks/03_the_bubble_formula-Copy1.ipynb": notebook("import bubblekit"),
        "solutions/my_try.ipynb": notebook("print('mine')"),
    }
    for rel, text in learner_files.items():
        (c.dir / rel).write_text(text, encoding="utf-8")
    saved = c.dir / "notebooks" / "01_what_is_a_bubble.ipynb"  # a lesson run and saved: new outputs, an error
    nb = nbformat.read(saved, as_version=4)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    code[0].outputs = [new_output("error", ename="NameError", evalue="oops", traceback=[])]
    code[0].execution_count = 42
    nbformat.write(nb, saved)
    mine = sorted([*learner_files, "workspace/03_the_bubble_formula.exercises.ipynb", "exercises/03_the_bubble_formula.ipynb",
                   "notebooks/01_what_is_a_bubble.ipynb"])
    before = snapshot(c.dir, mine)

    # 3. every documented command: the course's checks pass, nothing of the learner's is touched
    out = c.run("bash", "course.sh", "test", "exercises")
    assert "exercises  ok" in out.stdout
    assert "has local changes" in out.stdout and "my_scratch.ipynb: not the course's" in out.stdout
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py", "--check")
    gen = c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py")
    assert "wrote" not in gen.stdout and "removed" not in gen.stdout
    listing = c.run(str(VENV / "bin" / "python"), "scripts/execute_notebooks.py", "--list").stdout
    assert "skipped notebooks/01_what_is_a_bubble.ipynb" in listing
    assert "would run notebooks/02_why_bubbles_appear.ipynb" in listing
    assert "Untitled" not in listing and "Copy1" not in listing and "my_try" not in listing
    # re-execution with no argument (its kernel runs replaced by a recorder): the course's notebooks only
    executed = _run_execute_notebooks(c.dir)
    assert "notebooks/02_why_bubbles_appear.ipynb" in executed and "solutions/03_the_bubble_formula.ipynb" in executed
    assert not set(executed) & set(mine)
    # what `course.sh test notebooks` hands to nbval: shipped notebooks only, a saved lesson as committed
    export = tmp_path / "shipped"
    shipped = c.run(str(VENV / "bin" / "python"), "-m", "bubblekit.course.workspace", "--course-notebooks",
                    "--export-changed", str(export)).stdout.split()
    assert str(export / "notebooks" / "01_what_is_a_bubble.ipynb") in shipped
    assert str(c.dir / "notebooks" / "01_what_is_a_bubble.ipynb") not in shipped
    assert (export / "notebooks" / "01_what_is_a_bubble.ipynb").read_text() == git(
        c.dir, "show", "HEAD:notebooks/01_what_is_a_bubble.ipynb").stdout
    assert not any("Untitled" in s or "Copy1" in s or "my_try" in s or "workspace" in s for s in shipped)
    # the unit tests that read course notebooks (hygiene, exercise sync) pass in the learner's folder
    c.run(str(VENV / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
          "tests/test_notebook_hygiene.py", "tests/test_exercises_sync.py")
    assert snapshot(c.dir, mine) == before

    # 4. the course is updated upstream: a solution changes, a new exercise appears
    up = c.upstream
    sol = nbformat.read(up / "solutions" / "05_shrinking_bubbles.ipynb", as_version=4)
    sol.cells.append(new_markdown_cell("An extra note from the course."))
    nbformat.write(sol, up / "solutions" / "05_shrinking_bubbles.ipynb")
    shutil.copy(up / "solutions" / "01_what_is_a_bubble.ipynb", up / "solutions" / "11_new_exercise.ipynb")
    git(up, "add", "solutions/11_new_exercise.ipynb")  # a new solution is the course's once git knows it
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py", cwd=up)
    git(up, "add", "-A")
    git(up, "commit", "-q", "-m", "course update")
    pull = git(c.dir, "pull", "-q", "--no-rebase")
    c.outputs.append(pull.stdout + pull.stderr)
    assert (c.dir / "exercises" / "11_new_exercise.ipynb").is_file()
    ws_out = c.run(str(VENV / "bin" / "bubblekit"), "workspace").stdout
    assert "1 new exercise notebook(s)" in ws_out and "11_new_exercise.exercises.ipynb" in ws_out
    assert (c.dir / "workspace" / "11_new_exercise.exercises.ipynb").is_file()
    c.run("bash", "course.sh", "test", "exercises")
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py")
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py", "--check")
    assert snapshot(c.dir, mine) == before

    # 5. an update that touches a file the learner changed: git refuses, the file is kept
    ex03 = up / "exercises" / "03_the_bubble_formula.ipynb"
    sol03 = nbformat.read(up / "solutions" / "03_the_bubble_formula.ipynb", as_version=4)
    sol03.cells.append(new_markdown_cell("Another note."))
    nbformat.write(sol03, up / "solutions" / "03_the_bubble_formula.ipynb")
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py", cwd=up)
    assert "Another note." in ex03.read_text()
    git(up, "commit", "-q", "-am", "second update")
    refused = git(c.dir, "pull", "-q", "--no-rebase", check=False)
    assert refused.returncode != 0
    # the generator, asked to regenerate locally, keeps the learner's version too
    c.run(str(VENV / "bin" / "python"), "scripts/make_exercises.py")
    assert snapshot(c.dir, mine) == before

    # 6. no command advised one that would lose work
    text = "\n".join(c.outputs)
    for phrase in DESTRUCTIVE:
        assert phrase not in text, f"an output advises {phrase!r}:\n{text}"


def _run_execute_notebooks(course: Path) -> list[str]:
    """Run ``scripts/execute_notebooks.py``'s main() of ``course`` with no argument; the paths it
    would execute (its ``execute`` replaced by a recorder: no kernels)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("execute_notebooks_under_test", course / "scripts" / "execute_notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ran: list[str] = []

    def record(path: Path, timeout: int = 600) -> float:
        ran.append(path.resolve().relative_to(course.resolve()).as_posix())
        return 0.0

    module.execute = record
    assert module.main([]) == 0
    return ran


# ----------------------------------------------------------------------------- course.sh lab (no browser)


def _fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A venv whose python is this one and whose jupyter only records its arguments."""
    fake = tmp_path / "venv"
    (fake / "bin").mkdir(parents=True)
    log = tmp_path / "jupyter-calls.jsonl"
    (fake / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (fake / "bin" / "jupyter").write_text(
        "#!/bin/sh\n"
        f'exec "{sys.executable}" -c "import json, sys; '
        f"open('{log}', 'a').write(json.dumps(sys.argv[1:]) + chr(10))\" \"$@\"\n"
    )
    for exe in ("python", "jupyter"):
        (fake / "bin" / exe).chmod(0o755)
    return fake, log


@needs_git
def test_course_sh_lab_serves_the_course_root_and_trusts_only_the_course(course: Course, tmp_path: Path) -> None:
    fake, log = _fake_venv(tmp_path)
    _stamp(course, fake, "course")  # the stamp course.sh writes after installing: skip the installation
    (course.dir / "notebooks" / "Untitled.ipynb").write_text(notebook("x = 1"))
    env = {**env_for_course(), "BUBBLEKIT_VENV": str(fake)}
    run = subprocess.run(["bash", "course.sh", "lab", "--port=8999", "--no-browser", "--IdentityProvider.token=t"],
                         cwd=course.dir, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    trust = next(c for c in calls if c[0] == "trust")
    lab = next(c for c in calls if c[0] == "lab")
    trusted = {Path(p).relative_to(course.dir).as_posix() for p in trust[1:]}
    assert "notebooks/01_what_is_a_bubble.ipynb" in trusted and "exercises/03_the_bubble_formula.ipynb" in trusted
    assert not any(p.startswith("workspace/") or "Untitled" in p for p in trusted)
    assert f"--ServerApp.root_dir={course.dir}" in lab
    assert "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb?reset" in lab  # lesson 00 alone, in the root
    assert lab[-3:] == ["--port=8999", "--no-browser", "--IdentityProvider.token=t"]  # the learner's options, last
    assert "--KernelManager.transport=ipc" in lab  # no "Kernel is running over TCP without encryption"
    config = json.loads((fake / "etc" / "jupyter" / "jupyter_config.json").read_text())
    assert config["NotebookNotary"]["db_file"].startswith(str(fake.resolve()))  # trust stays inside the venv
    assert (course.dir / "workspace" / "01_what_is_a_bubble.exercises.ipynb").is_file()
    assert "workspace/" in run.stdout


# ----------------------------------------------------------------------------- the workspace


def _mini_course(root: Path) -> Path:
    (root / "exercises").mkdir(parents=True)
    (root / "solutions").mkdir()
    for name in ("01_a.ipynb", "02_b.ipynb"):
        (root / "exercises" / name).write_text(notebook(f"# {name}"))
    (root / "exercises" / ".manifest.json").write_text('{"files": {"01_a.ipynb": "", "02_b.ipynb": "", "03_c.ipynb": ""}}')
    return root


def test_sync_workspace_copies_only_missing_files_and_never_overwrites(tmp_path: Path) -> None:
    root = _mini_course(tmp_path / "course")
    first = ws.sync_workspace(root)
    assert [p.name for p in first.created] == ["01_a.exercises.ipynb", "02_b.exercises.ipynb"] and not first.kept
    assert not (root / "workspace" / ".manifest.json").exists()
    mine = root / "workspace" / "01_a.exercises.ipynb"
    mine.write_bytes(b"my work \xe6\xb0\x94")
    (root / "exercises" / "01_a.ipynb").write_text(notebook("# a new version from the course"))
    (root / "exercises" / "03_c.ipynb").write_text(notebook("# new"))
    (root / "workspace" / "notes.ipynb").write_text("mine")
    (root / "exercises" / "my_scratch.ipynb").write_text("not the course's")  # not in the manifest: not copied
    second = ws.sync_workspace(root)
    assert [p.name for p in second.created] == ["03_c.exercises.ipynb"]
    assert mine.read_bytes() == b"my work \xe6\xb0\x94" and (root / "workspace" / "notes.ipynb").read_text() == "mine"
    assert not (root / "workspace" / "my_scratch.exercises.ipynb").exists()
    assert "1 new exercise notebook(s)" in second.summary()
    assert "already there" in ws.sync_workspace(root).summary()


def test_a_copy_under_the_old_name_stays_the_learners_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A learner who copied 01_a before copies were named .exercises.ipynb keeps that copy: it is
    neither renamed nor overwritten, no second copy is made beside it, and the command says so."""
    root = _mini_course(tmp_path / "course")
    (root / "workspace").mkdir()
    old = root / "workspace" / "01_a.ipynb"
    old.write_bytes(b"my old work")
    report = ws.sync_workspace(root)
    assert [p.name for p in report.created] == ["02_b.exercises.ipynb"]
    assert report.legacy == (old,) and old in report.kept and old.read_bytes() == b"my old work"
    assert not (root / "workspace" / "01_a.exercises.ipynb").exists()
    assert ws.main(["--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "your copy 01_a.ipynb keeps its name" in out and "01_a.exercises.ipynb" in out
    for phrase in DESTRUCTIVE:
        assert phrase not in out


def test_workspace_names() -> None:
    assert ws.workspace_name("01_a.ipynb") == "01_a.exercises.ipynb"
    assert ws.workspace_name("01_a.exercises.ipynb") == "01_a.exercises.ipynb"
    assert ws.exercise_name("01_a.exercises.ipynb") == "01_a.ipynb" and ws.exercise_name("01_a.ipynb") == "01_a.ipynb"
    for bad in ("01_a.py", "x/01_a.ipynb", ".ipynb", 3):
        with pytest.raises(ValueError, match="is not a notebook file name"):
            ws.workspace_name(bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="is not a notebook file name"):
            ws.exercise_name(bad)  # type: ignore[arg-type]


def test_sync_workspace_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"root=.*has no exercises/ folder"):
        ws.sync_workspace(tmp_path)
    root = _mini_course(tmp_path / "course")
    (root / "workspace").write_text("a file")
    with pytest.raises(ValueError, match=r"workspace=.*is not a folder"):
        ws.sync_workspace(root)


def test_bubblekit_workspace_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from bubblekit import cli

    root = _mini_course(tmp_path / "course")
    monkeypatch.chdir(root / "exercises")  # found from a folder inside the course
    assert cli.main(["workspace"]) == 0
    assert "2 new exercise notebook(s)" in capsys.readouterr().out
    assert cli.main(["workspace", "--quiet"]) == 0 and capsys.readouterr().out == ""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["workspace", "--root", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "bubblekit workspace: error:" in err and "--root" in err


@needs_git
def test_course_notebooks_are_the_tracked_ones_as_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ws.WORKTREE_ENV, raising=False)  # a learner's machine first (the switch is set below)
    root = _mini_course(tmp_path / "course")
    (root / "notebooks").mkdir()
    lesson = root / "notebooks" / "01_lesson.ipynb"
    lesson.write_text(notebook("import bubblekit"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "course")
    committed = lesson.read_text()
    lesson.write_text(notebook("import bubblekit", outputs="ran and saved\n"))
    (root / "notebooks" / "Untitled.ipynb").write_text(notebook("x"))
    found = {nb.path.relative_to(root).as_posix(): nb for nb in ws.course_notebooks(root)}
    assert sorted(found) == ["exercises/01_a.ipynb", "exercises/02_b.ipynb", "notebooks/01_lesson.ipynb"]
    assert found["notebooks/01_lesson.ipynb"].changed and found["notebooks/01_lesson.ipynb"].text == committed
    assert not found["exercises/01_a.ipynb"].changed
    monkeypatch.setenv(ws.WORKTREE_ENV, "1")  # contributors: everything as it is on disk
    on_disk = {nb.path.name: nb for nb in ws.course_notebooks(root)}
    assert "Untitled.ipynb" in on_disk and "ran and saved" in on_disk["01_lesson.ipynb"].text


def test_course_notebooks_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _mini_course(tmp_path / "course")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    names = [nb.path.name for nb in ws.course_notebooks(root)]
    assert names == ["01_a.ipynb", "02_b.ipynb"]


# ----------------------------------------------------------------------------- the lessons' links


def _markdown_links(path: Path) -> list[str]:
    import re

    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return re.findall(r"\]\(([^)\s#]+\.ipynb)", text)


def test_lessons_exercise_links_open_the_learners_copy() -> None:
    """Every lesson link to an exercise points into workspace/, at a notebook that exercises/ has."""
    seen = 0
    for lesson in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for link in _markdown_links(lesson):
            assert not link.startswith("../exercises/"), f"{lesson.name} links the pristine copy {link}"
            if link.startswith("../workspace/"):
                seen += 1
                name = Path(link).name  # the learner's copy: NN_topic.exercises.ipynb (what bubblekit workspace makes)
                assert name == ws.workspace_name(ws.exercise_name(name)), f"{lesson.name}: {link} is no copy's name"
                assert (ROOT / "exercises" / ws.exercise_name(name)).is_file(), f"{lesson.name}: {link}"
    assert seen >= 9
    start = _markdown_links(ROOT / "notebooks" / "00_start_here.ipynb")
    assert "../workspace/10_interview_bank.exercises.ipynb" in start and "../solutions/10_interview_bank.ipynb" in start


@needs_git
def test_a_command_from_another_copy_leaves_the_venvs_nbgrader_pointer_alone(course: Course, tmp_path: Path) -> None:
    """The tests run course.sh in temporary copies with the learner's venv (BUBBLEKIT_VENV): the venv's
    nbgrader pointer to the learner's own course must survive them; a pointer to a folder that is gone
    is replaced."""
    fake, _log = _fake_venv(tmp_path)
    _stamp(course, fake, "course")
    own = tmp_path / "learners-course" / "classroom" / "nbgrader"
    own.mkdir(parents=True)
    pointer = fake / "etc" / "jupyter" / "nbgrader_config.py"
    pointer.parent.mkdir(parents=True)
    mine = f"load_subconfig('nbgrader_config.py', {str(own)!r})  # noqa: F821\n"
    pointer.write_text(mine)
    env = {**env_for_course(), "BUBBLEKIT_VENV": str(fake)}
    lab = ["bash", "course.sh", "lab", "--port=8999", "--no-browser", "--IdentityProvider.token=t"]
    run = subprocess.run(lab, cwd=course.dir, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert pointer.read_text() == mine
    shutil.rmtree(own)   # the learner's course moved: the stale pointer is replaced by this copy's
    run = subprocess.run(lab, cwd=course.dir, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert str(course.dir / "classroom" / "nbgrader") in pointer.read_text()


# ----------------------------------------------------------------------------- course.sh lab --lang zh (no browser)


def _fake_venv_recording_pip(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Like _fake_venv, and its python records ``-m pip ...`` instead of installing anything."""
    fake, log = _fake_venv(tmp_path)
    pip_log = tmp_path / "pip-calls.txt"
    (fake / "bin" / "python").write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> "{pip_log}"; exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    return fake, log, pip_log


def _stamp(course: Course, fake: Path, extra: str) -> None:
    """The stamp ``course.sh`` writes once extra ``extra`` is installed (``.bubblekit-setup.d/EXTRA``)."""
    key = subprocess.run(
        [sys.executable, "-c",
         "import hashlib, sys; data = open('pyproject.toml', 'rb').read() + sys.argv[1].encode() + sys.version.encode();"
         " print(hashlib.sha256(data).hexdigest())", extra],
        cwd=course.dir, capture_output=True, text=True, check=True).stdout
    (fake / ".bubblekit-setup.d").mkdir(exist_ok=True)
    (fake / ".bubblekit-setup.d" / extra).write_text(key)


def _lab(course: Course, fake: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the fake venv's python records a pip call instead of installing: let course.sh install (no BUBBLEKIT_NO_INSTALL)
    env = {k: v for k, v in {**env_for_course(), "BUBBLEKIT_VENV": str(fake)}.items() if k != "BUBBLEKIT_NO_INSTALL"}
    return subprocess.run(["bash", "course.sh", "lab", *args], cwd=course.dir, env=env, capture_output=True,
                          text=True, timeout=300)


@needs_git
def test_course_sh_lab_in_chinese_and_back(course: Course, tmp_path: Path) -> None:
    fake, log, pip_log = _fake_venv_recording_pip(tmp_path)
    _stamp(course, fake, "course")
    override = fake / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "bubblekit-language.json"
    lesson00 = course.dir / "notebooks" / "zh" / "00_start_here.ipynb"
    # the Chinese edition's exercises, made by scripts/make_exercises.py (with a manifest); a stand-in
    # where the course has none
    if not (course.dir / "exercises" / "zh" / ".manifest.json").is_file():
        (course.dir / "exercises" / "zh").mkdir(exist_ok=True)
        (course.dir / "exercises" / "zh" / "08_case_studies.ipynb").write_text(notebook("# 练习"))
        (course.dir / "exercises" / "zh" / ".manifest.json").write_text('{"files": {"08_case_studies.ipynb": ""}}')

    # 1. --lang zh: the language pack is installed once (the [zh] extra), JupyterLab speaks Chinese
    run = _lab(course, fake, "--lang", "zh", "--port=8999", "--no-browser")
    assert run.returncode == 0, run.stdout + run.stderr
    assert pip_log.read_text().split() == ["-m", "pip", "install", "--quiet", "-e", ".[zh]"]
    assert json.loads(override.read_text()) == {"@jupyterlab/translation-extension:plugin": {"locale": "zh_CN"}}
    assert override.resolve().is_relative_to(fake.resolve())  # nothing written outside the venv
    lab = [c for c in (json.loads(line) for line in log.read_text().splitlines()) if c[0] == "lab"][-1]
    target = "--LabApp.default_url=/lab/tree/notebooks/zh/00_start_here.ipynb?reset" if lesson00.is_file() \
        else "--LabApp.default_url=/lab/tree/notebooks/zh?reset"  # lesson 00 not translated yet: the Chinese lessons
    assert target in lab and lab[-2:] == ["--port=8999", "--no-browser"] and "--lang" not in lab
    assert (course.dir / "workspace" / "zh" / "08_case_studies.exercises.ipynb").is_file()
    assert (course.dir / "workspace" / "01_what_is_a_bubble.exercises.ipynb").is_file()

    # 2. again, with lesson 00 translated and --lang=zh: no second installation, lesson 00 opens
    if not lesson00.is_file():
        lesson00.write_text(notebook("import bubblekit as bk"))
    mine = course.dir / "workspace" / "zh" / "08_case_studies.exercises.ipynb"
    mine.write_text("my work 气泡")
    run = _lab(course, fake, "--lang=zh")
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(pip_log.read_text().splitlines()) == 1
    lab = [c for c in (json.loads(line) for line in log.read_text().splitlines()) if c[0] == "lab"][-1]
    assert "--LabApp.default_url=/lab/tree/notebooks/zh/00_start_here.ipynb?reset" in lab
    assert mine.read_text() == "my work 气泡"  # the learner's Chinese exercise is kept

    # 3. back to English (the default): the override is gone, lesson 00 in English opens
    run = _lab(course, fake)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not override.exists()
    lab = [c for c in (json.loads(line) for line in log.read_text().splitlines()) if c[0] == "lab"][-1]
    assert "--LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb?reset" in lab

    # 4. a wrong language is refused before anything runs
    bad = _lab(course, fake, "--lang", "fr")
    assert bad.returncode == 1 and "unknown language 'fr' for --lang; choose en or zh" in bad.stderr
    assert _lab(course, fake, "--lang").returncode == 1


def test_sync_workspace_chinese_edition(tmp_path: Path) -> None:
    root = _mini_course(tmp_path / "course")
    report = ws.sync_workspace(root, language="zh")  # no exercises/zh/ yet: nothing, no error
    assert report.created == () and "还没有练习" in report.summary()  # the edition's language
    (root / "exercises" / "zh").mkdir()
    (root / "exercises" / "zh" / "01_a.ipynb").write_text(notebook("# 练习"))
    (root / "exercises" / "zh" / ".manifest.json").write_text('{"files": {"01_a.ipynb": ""}}')
    report = ws.sync_workspace(root, language="zh")
    assert [p.relative_to(root).as_posix() for p in report.created] == ["workspace/zh/01_a.exercises.ipynb"]
    assert "从 exercises/zh/ 复制了 1 个新的练习 notebook（01_a.exercises.ipynb）" in report.summary()
    assert "1 个练习 notebook 都已经在这里" in ws.sync_workspace(root, language="zh").summary()
    assert not (root / "workspace" / "01_a.exercises.ipynb").exists()  # the English workspace is separate
    with pytest.raises(ValueError, match="language='fr'"):
        ws.sync_workspace(root, language="fr")
