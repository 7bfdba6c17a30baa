"""The learner's workspace, and which notebooks are the course's (layer 4: course tooling).

The course keeps a learner's work apart from the files it ships:

* ``exercises/`` holds the course's **pristine** exercise notebooks, generated from
  ``solutions/`` by ``scripts/make_exercises.py`` and checked by CI;
* ``workspace/`` (git-ignored) holds the **learner's** copies, named
  ``NN_topic.exercises.ipynb`` (:func:`workspace_name`) so that JupyterLab's tab of an exercise
  is told apart from its lesson's ``NN_topic.ipynb``. :func:`sync_workspace` copies each
  exercise that is not there yet and never overwrites, renames or deletes anything, so a
  course update (``git pull``) followed by ``bash course.sh lab`` or ``bubblekit workspace``
  adds new exercises and leaves the learner's files byte for byte as they were. A copy made
  under the old name (``workspace/NN_topic.ipynb``, before the course named copies
  ``.exercises.ipynb``) stays the learner's copy: no second one is made beside it, and the
  summary says which name it has.

The lessons' "Exercises:" links point into ``workspace/`` (``../workspace/NN_topic.exercises.ipynb``;
the Chinese lessons ``../../workspace/zh/NN_topic.exercises.ipynb``).

:func:`course_notebooks` answers "which notebooks does the course ship, with which content":
in a git checkout, the tracked notebooks with their committed content (a lesson the
learner ran and saved is checked as shipped, a scratch notebook is not checked at all);
without git, every notebook in the course folders. ``bash course.sh test``, the unit tests
and ``scripts/execute_notebooks.py`` use it.

Used by ``bash course.sh lab`` / ``setup`` / ``test`` and ``bubblekit workspace`` (the
lessons' Exercises links open the workspace copies), and by ``scripts/make_exercises.py`` and
``scripts/execute_notebooks.py``. Imports only the standard library and :mod:`bubblekit.i18n`
(standard library only too); its summary line is in the edition's language.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bubblekit.i18n import register, translate

__all__ = [
    "WORKSPACE_DIR",
    "EXERCISES_DIR",
    "MANIFEST",
    "COURSE_FOLDERS",
    "COPY_SUFFIX",
    "WorkspaceReport",
    "CourseNotebook",
    "find_root",
    "workspace_name",
    "exercise_name",
    "sync_workspace",
    "git_toplevel",
    "committed_text",
    "git_tracked",
    "course_notebooks",
    "main",
]

#: The learner's folder (git-ignored), relative to the course root.
WORKSPACE_DIR = "workspace"
#: The course's generated exercise notebooks, relative to the course root.
EXERCISES_DIR = "exercises"
#: The generator's record of the exercise notebooks it wrote (in ``exercises/``).
MANIFEST = ".manifest.json"
#: The end of a learner's copy's name: ``exercises/01_a.ipynb`` is copied to ``workspace/01_a.exercises.ipynb``.
COPY_SUFFIX = ".exercises.ipynb"
#: Folders whose notebooks the course ships.
COURSE_FOLDERS = ("notebooks", "solutions", "exercises", "apps")
#: Set to 1 to treat every notebook in the course folders, as it is on disk, as the course's
#: (for contributors checking uncommitted changes with ``bash course.sh test``).
WORKTREE_ENV = "BUBBLEKIT_CHECK_WORKTREE"


register({
    "workspace.none": {"en": "{where}: no exercise notebooks to copy (this edition has none yet)",
                       "zh": "{where}：没有要复制的练习 notebook（这个版本还没有练习）"},
    "workspace.all_there": {"en": "{where}: all {n} exercise notebooks already there (left as they are)",
                            "zh": "{where}：{n} 个练习 notebook 都已经在这里（保持原样，未改动）"},
    "workspace.copied": {"en": "{where}: {n} new exercise notebook(s) copied from {source} ({names}){kept}",
                         "zh": "{where}：从 {source} 复制了 {n} 个新的练习 notebook（{names}）{kept}"},
    "workspace.kept": {"en": "; {n} of yours kept as they are", "zh": "；你已有的 {n} 个保持原样"},
    "workspace.legacy": {
        "en": ("{where}: your copy {old} keeps its name (the lessons' links now open {new}; "
               "rename yours to {new} to open it from them)"),
        "zh": "{where}：你的副本 {old} 保留原名（课程里的链接现在打开 {new}；想从链接打开它，请把它改名为 {new}）",
    },
})


@dataclass(frozen=True)
class WorkspaceReport:
    """What :func:`sync_workspace` did: paths it ``created``, and learner files it ``kept`` untouched.

    ``language``: the edition (``"en"``/``"zh"``); :meth:`summary` speaks its language.
    """

    workspace: Path
    created: tuple[Path, ...]
    kept: tuple[Path, ...]
    language: str = "en"
    #: learner copies under the old name (``NN_topic.ipynb``), in use instead of ``NN_topic.exercises.ipynb``
    legacy: tuple[Path, ...] = ()

    def summary(self) -> str:
        """One line for the terminal in the edition's language, e.g. ``workspace/: 2 new exercise notebook(s) copied ...``."""
        where = _display(self.workspace)
        lang = self.language
        if not self.created and not self.kept:
            return translate("workspace.none", lang, where=where)
        if not self.created:
            return translate("workspace.all_there", lang, where=where, n=len(self.kept))
        names = ", ".join(p.name for p in self.created[:3]) + (" ..." if len(self.created) > 3 else "")
        kept = translate("workspace.kept", lang, n=len(self.kept)) if self.kept else ""
        source = EXERCISES_DIR + "/" + ("" if lang == "en" else f"{lang}/")
        return translate("workspace.copied", lang, where=where, n=len(self.created), source=source, names=names,
                         kept=kept)

    def legacy_notes(self) -> list[str]:
        """One line per copy kept under its old name: which name the learner's copy has, and the new one."""
        where = _display(self.workspace)
        return [translate("workspace.legacy", self.language, where=where, old=p.name, new=workspace_name(p.name))
                for p in self.legacy]


@dataclass(frozen=True)
class CourseNotebook:
    """A notebook the course ships.

    Attributes:
        path: where it is in the checkout.
        text: its shipped content (the committed version when the file has local changes).
        changed: True when the file on disk differs from ``text`` (a lesson the learner ran
            and saved, or an uncommitted edit); the file on disk is then not the course's.
    """

    path: Path
    text: str
    changed: bool


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) + "/"
    except ValueError:
        return str(path) + "/"


def _is_root(folder: Path) -> bool:
    return (folder / EXERCISES_DIR).is_dir() and (folder / "solutions").is_dir()


def find_root(start: Path | str | None = None) -> Path:
    """The course folder: ``start`` (default the current folder) or the nearest folder above it
    holding ``exercises/`` and ``solutions/``; else the checkout bubblekit was installed from.

    Raises:
        ValueError: when no course folder is found (the message says to pass ``--root``).
    """
    here = Path.cwd() if start is None else Path(start)
    here = here.resolve()
    for folder in (here, *here.parents):
        if _is_root(folder):
            return folder
    if start is None:  # an editable install (pip install -e .): bubblekit/ sits in the checkout
        package_checkout = Path(__file__).resolve().parents[2]
        if _is_root(package_checkout):
            return package_checkout
    raise ValueError(
        f"no course folder (one holding exercises/ and solutions/) at or above {str(here)!r}; "
        "run this inside the course folder or pass --root PATH"
    )


def workspace_name(exercise: str) -> str:
    """The name of the learner's copy of exercise notebook ``exercise``: ``"01_a.ipynb"`` ->
    ``"01_a.exercises.ipynb"`` (a name that is already a copy's is returned as it is).

    Raises:
        ValueError: ``exercise`` is not a ``.ipynb`` file name (a path, or another suffix).
    """
    if not isinstance(exercise, str) or not exercise.endswith(".ipynb") or "/" in exercise or "\\" in exercise \
            or exercise == ".ipynb":
        raise ValueError(f"exercise={exercise!r} is not a notebook file name; give one like '01_a.ipynb'")
    if exercise.endswith(COPY_SUFFIX):
        return exercise
    return exercise[: -len(".ipynb")] + COPY_SUFFIX


def exercise_name(copy: str) -> str:
    """The exercise notebook a workspace file is a copy of: ``"01_a.exercises.ipynb"`` ->
    ``"01_a.ipynb"``; an old-style copy's name (``"01_a.ipynb"``) is returned as it is.

    Raises:
        ValueError: ``copy`` is not a ``.ipynb`` file name.
    """
    if not isinstance(copy, str) or not copy.endswith(".ipynb") or "/" in copy or "\\" in copy or copy == ".ipynb":
        raise ValueError(f"copy={copy!r} is not a notebook file name; give one like '01_a.exercises.ipynb'")
    if copy.endswith(COPY_SUFFIX) and copy != COPY_SUFFIX:
        return copy[: -len(COPY_SUFFIX)] + ".ipynb"
    return copy


def _exercise_files(exercises: Path) -> list[Path]:
    """The course's exercise notebooks: those the generator's manifest lists (a learner's
    scratch notebook in ``exercises/`` is not one); without a manifest, every notebook."""
    try:
        listed = json.loads((exercises / MANIFEST).read_text(encoding="utf-8"))["files"]
        names = set(listed) if isinstance(listed, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        names = None
    return sorted(
        p for p in exercises.glob("*.ipynb")
        if p.is_file() and not p.name.startswith(".") and (names is None or p.name in names)
    )


def sync_workspace(root: Path | str, workspace: Path | str | None = None, *, language: str = "en") -> WorkspaceReport:
    """Copy each course exercise (``exercises/*.ipynb`` listed in its manifest) that ``workspace/``
    does not have yet; never overwrite.

    Args:
        root: the course folder (holding ``exercises/``).
        workspace: the learner's folder (default ``root/workspace``, or ``root/workspace/zh`` for
            Chinese); created if missing.
        language: ``"en"``, or ``"zh"`` for the Chinese edition: ``exercises/zh/`` into
            ``workspace/zh/`` (nothing while the course has no ``exercises/zh/`` yet).

    The copy of ``exercises/NN_topic.ipynb`` is ``workspace/NN_topic.exercises.ipynb``
    (:func:`workspace_name`); when the learner has a copy under the old name
    ``workspace/NN_topic.ipynb``, that one is their copy (listed in ``kept`` and ``legacy``) and
    no new one is made. A file already in the workspace is the learner's and is never opened
    for writing or renamed, even when the course's exercise changed since (the new version stays
    in ``exercises/``).
    Files are created with exclusive creation, so not even a file appearing meanwhile is
    overwritten. Returns what was created and what was kept.

    Raises:
        ValueError: ``root`` has no ``exercises/`` folder, or ``workspace`` exists and is
            not a folder.
    """
    root = Path(root)
    if language not in ("en", "zh"):
        raise ValueError(f"language={language!r} is not a course language; choose 'en' or 'zh'")
    edition = () if language == "en" else (language,)
    if not (root / EXERCISES_DIR).is_dir():
        raise ValueError(f"root={str(root)!r} has no {EXERCISES_DIR}/ folder: pass the course folder")
    exercises = root.joinpath(EXERCISES_DIR, *edition)
    target = root.joinpath(WORKSPACE_DIR, *edition) if workspace is None else Path(workspace)
    if not exercises.is_dir():  # an edition the course does not ship yet
        return WorkspaceReport(target, (), (), language)
    if target.exists() and not target.is_dir():
        raise ValueError(f"workspace={str(target)!r} exists and is not a folder; move it away or pass another")
    target.mkdir(parents=True, exist_ok=True)
    created: list[Path] = []
    kept: list[Path] = []
    legacy: list[Path] = []
    for source in _exercise_files(exercises):
        dest = target / workspace_name(source.name)
        old = target / source.name
        if dest.exists() or dest.is_symlink():
            kept.append(dest)
            continue
        if old != dest and (old.exists() or old.is_symlink()):  # the learner's copy under its old name
            kept.append(old)
            legacy.append(old)
            continue
        try:
            with open(source, "rb") as src, open(dest, "xb") as out:
                shutil.copyfileobj(src, out)
        except FileExistsError:  # appeared meanwhile: it is the learner's
            kept.append(dest)
            continue
        created.append(dest)
    return WorkspaceReport(target, tuple(created), tuple(kept), language, tuple(legacy))


# ------------------------------------------------------------------------------------ git


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """Run ``git -C folder args``; None when git is missing or fails to start."""
    try:
        return subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, timeout=60, check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None


def git_toplevel(folder: Path | str) -> Path | None:
    """The top folder of the git checkout holding ``folder``, or None (no git, not a checkout)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    run = _git(folder, "rev-parse", "--show-toplevel")
    if run is None or run.returncode != 0:
        return None
    return Path(run.stdout.decode("utf-8", "surrogateescape").strip()).resolve()


def committed_text(path: Path | str) -> str | None:
    """The content of ``path`` in the last commit (``HEAD``), or None when it is not committed
    (no git, not a checkout, a new file). Newlines are as git stores them."""
    path = Path(path)
    top = git_toplevel(path.parent)
    if top is None:
        return None
    rel = path.resolve().relative_to(top).as_posix()
    run = _git(top, "show", f"HEAD:{rel}")
    if run is None or run.returncode != 0:
        return None
    return run.stdout.decode("utf-8", "replace")


def git_tracked(folder: Path | str) -> set[str] | None:
    """Names of the files git tracks directly in ``folder``; None when there is no git checkout
    (or ``BUBBLEKIT_CHECK_WORKTREE=1``: then every file counts as the course's)."""
    folder = Path(folder)
    if os.environ.get(WORKTREE_ENV, "") not in ("", "0") or git_toplevel(folder) is None:
        return None
    run = _git(folder, "ls-files", "-z", "--", ".")
    if run is None or run.returncode != 0:
        return None
    names = run.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {n for n in names if n and "/" not in n}


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def _same(a: str, b: str) -> bool:
    return a.replace("\r\n", "\n") == b.replace("\r\n", "\n")


def course_notebooks(root: Path | str, folders: Iterable[str] = COURSE_FOLDERS) -> list[CourseNotebook]:
    """The notebooks the course ships in ``folders`` of ``root``, sorted by path.

    In a git checkout whose top folder is ``root``: the tracked ``*.ipynb`` files (a learner's
    scratch notebooks, ``...-Copy1.ipynb`` files and the workspace are not tracked), each with
    its committed content; ``changed`` marks files whose disk content differs (a lesson the
    learner ran and saved). Without git, or with ``BUBBLEKIT_CHECK_WORKTREE=1``: every
    ``*.ipynb`` in ``folders`` as it is on disk (``.ipynb_checkpoints`` excluded).
    """
    root = Path(root).resolve()
    folders = list(folders)
    top = None if os.environ.get(WORKTREE_ENV, "") not in ("", "0") else git_toplevel(root)
    if top is None or top != root:
        found = [
            p for f in folders for p in sorted((root / f).rglob("*.ipynb"))
            if ".ipynb_checkpoints" not in p.parts and p.is_file()
        ]
        return [CourseNotebook(p, _read(p), False) for p in found]
    patterns = [f"{f}/*.ipynb" for f in folders]
    listed = _git(root, "ls-files", "-z", "--", *patterns)
    differ = _git(root, "diff", "--name-only", "--no-renames", "-z", "HEAD", "--", *patterns)
    if listed is None or listed.returncode != 0:
        raise RuntimeError(f"git ls-files failed in {root}: {listed.stderr.decode() if listed else 'git missing'}")
    # no commit yet (HEAD unknown): every tracked file counts as the course's, as it is
    ok = differ is not None and differ.returncode == 0
    changed = set(differ.stdout.decode("utf-8", "surrogateescape").split("\0")) if ok and differ else set()
    result: list[CourseNotebook] = []
    for rel in sorted(filter(None, listed.stdout.decode("utf-8", "surrogateescape").split("\0"))):
        path = root / rel
        if ".ipynb_checkpoints" in path.parts:
            continue
        on_disk = _read(path) if path.is_file() else None
        if rel not in changed and on_disk is not None:
            result.append(CourseNotebook(path, on_disk, False))
            continue
        shipped = committed_text(path)
        if shipped is None:  # added but not committed yet: the contributor's new notebook
            if on_disk is None:
                continue
            shipped = on_disk
        result.append(CourseNotebook(path, shipped, on_disk is None or not _same(on_disk, shipped)))
    return result


# ------------------------------------------------------------------------------- command line


def build_parser(prog: str = "bubblekit workspace") -> argparse.ArgumentParser:
    """The parser of ``bubblekit workspace``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Make your workspace: copy each exercise notebook exercises/NN_topic.ipynb to "
            "workspace/NN_topic.exercises.ipynb unless workspace/ already has a copy of it (under that "
            "name or the old one, NN_topic.ipynb). Never overwrites, renames or deletes a file: run it "
            "again after updating the course (git pull) to get new exercises."
        ),
    )
    parser.add_argument("--root", type=Path, default=None,
                        help="the course folder (default: the one holding the current folder)")
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing when nothing was copied")
    parser.add_argument("--lang", choices=("en", "zh"), default="en",
                        help="zh: the Chinese edition's exercises (exercises/zh/ into workspace/zh/); default en")
    parser.add_argument("--course-notebooks", action="store_true",
                        help="instead, list the notebooks the course ships (for course.sh), one per line")
    parser.add_argument("--export-changed", type=Path, metavar="DIR", default=None,
                        help="with --course-notebooks: write the shipped version of each notebook that has "
                             "local changes under DIR (same relative path) and list that copy instead")
    return parser


def _list_course_notebooks(root: Path, export: Path | None) -> int:
    for nb in course_notebooks(root, ("notebooks", "solutions", "apps")):
        rel = nb.path.relative_to(root)
        if nb.changed and export is not None:
            copy = export / rel
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(nb.text, encoding="utf-8")
            print(f"note: {rel} has local changes (a lesson you ran and saved?): checking the course's "
                  f"version of it; your file is not read", file=sys.stderr)
            print(copy)
        elif nb.changed:
            print(f"note: {rel} has local changes: not checked", file=sys.stderr)
        else:
            print(nb.path)
    return 0


def main(argv: Sequence[str] | None = None, prog: str = "bubblekit workspace") -> int:
    """``bubblekit workspace``: make or complete the learner's workspace; exit status 0, or 2 on a bad option."""
    args = build_parser(prog).parse_args(argv)
    try:
        root = find_root(args.root)
        if args.course_notebooks:
            return _list_course_notebooks(root, args.export_changed)
        report = sync_workspace(root, language=args.lang)
    except (ValueError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    if report.created or not args.quiet:
        print(report.summary())
        for line in report.legacy_notes():
            print(line)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(prog="python -m bubblekit.course.workspace"))
