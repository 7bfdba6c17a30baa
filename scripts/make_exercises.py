#!/usr/bin/env python3
"""Generate the course's exercise notebooks ``exercises/*.ipynb`` from ``solutions/*.ipynb``.

The course has two editions (see :data:`EDITIONS`): English, ``solutions/*.ipynb`` into
``exercises/``, and Chinese, ``solutions/zh/*.ipynb`` into ``exercises/zh/`` (each folder with
its own manifest). Both follow the same rules; the Chinese edition's inserted text (stubs,
banner) is Chinese (:data:`TEXTS`).

Rules of the transformation:

* In code cells, each region between a ``### BEGIN SOLUTION`` line and a
  ``### END SOLUTION`` line (markers included) becomes, for each name the region assigns
  that code outside the regions reads later (the answer checked below it, a value a later
  cell uses)::

      answer = ...  # YOUR CODE HERE

  (``# YOUR CODE HERE`` alone when it assigns none of them; Chinese edition: ``# 在这里写你的代码``).
  So an unanswered exercise raises nothing: ``check`` answers "no answer yet" for ``...`` and
  Run All goes on to the end. A name that code outside the regions bound before (a template
  the learner fills in, such as ``text = "rank 0: ..."``) is not stubbed. A region indented
  inside a block (a function body) becomes ``# YOUR CODE HERE`` + ``raise NotImplementedError()``
  at its indentation (it runs only when the function is called; ``check`` reads that as "no
  answer yet"), and only such a cell gets the tag ``raises-exception``. The nbgrader version
  (``scripts/make_nbgrader.py``) keeps nbgrader's own stub, :data:`CODE_STUB`.
* In markdown cells the region becomes ``_Your answer here._`` (``_在这里写下你的答案。_``),
  and a link to ``../exercises/NAME.ipynb`` becomes ``../workspace/NAME.exercises.ipynb`` (the learner's
  copy); in the Chinese edition ``../../exercises/zh/NAME.ipynb`` becomes
  ``../../workspace/zh/NAME.exercises.ipynb``.
  Other relative links (``../notebooks/NN.ipynb``, ``../../notebooks/zh/NN.ipynb``) are kept:
  ``exercises/zh/`` and ``workspace/zh/`` sit as deep as ``solutions/zh/``, so they resolve there too.
* Cells tagged ``solution`` are dropped.
* Outputs, execution counts, execution timing metadata and saved widget state are cleared;
  the kernelspec is ipykernel's own (``Python 3 (ipykernel)``), so that JupyterLab does not
  mark the notebook changed (and autosave it) the moment its kernel starts.
* A nested, unmatched or unterminated marker (or a marker in a raw cell) is an error that
  names the notebook and the cell.
* A banner cell at the top tells the learner how to work in the notebook.
* A solution notebook's title (its first line, ``# NN · Topic: solutions``; Chinese edition
  ``# NN · 主题：参考答案``) becomes the exercise's (``: exercises``, ``：练习``); a title with another
  ending is kept.

Rules of writing (a learner's work is never lost):

* ``exercises/.manifest.json`` records the SHA-256 of every notebook the generator wrote.
  It rewrites or removes a file only while the file still has that hash (nobody changed it).
* A changed file is never overwritten: when its solution has a new version the generator
  says so and exits 1; ``--keep-changed`` first renames the changed file to
  ``NAME.mine.ipynb`` (never over an existing file), then writes the new version.
* A file the generator did not write (``my_scratch.ipynb``, ``...-Copy1.ipynb``) is never
  deleted or overwritten.
* ``--solutions`` must be a folder of solution notebooks (with solution regions) and
  ``--exercises`` the course's ``exercises/`` (``exercises/zh/``), a new or empty folder, or one the
  generator made; anything else (a typo, ``notebooks/``, ``solutions/``, ``workspace/``) is an error
  naming the argument, and nothing is written.

Learners work in ``workspace/``, not here (see ``bubblekit workspace``).

Usage::

    python scripts/make_exercises.py            # bring exercises/ and exercises/zh/ up to date (safe any time)
    python scripts/make_exercises.py --check    # exit 1 if the course's exercises are stale or leak a solution
    python scripts/make_exercises.py --lang zh  # only one edition

The Chinese edition is made while ``solutions/zh/`` exists.

``--check`` checks the course's copies: a file with uncommitted local changes (a learner's
edits) is left out and its committed version is checked instead; CI, on a clean checkout,
checks every file. The output is deterministic: ``nbformat.writes`` (indent 1, sorted keys)
plus a final newline.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import os
import re
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from bubblekit.course.workspace import MANIFEST, WORKSPACE_DIR, committed_text, git_tracked, workspace_name

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_BEGIN_RE = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
_END_RE = re.compile(r"^\s*### END SOLUTION\s*$")
#: nbgrader's stub (``scripts/make_nbgrader.py``'s ClearSolutions config), and the exercises' stub for a region
#: indented inside a function body.
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
#: The exercises' stub for one name a top-level region assigns (``{name}``; ``{comment}``: the edition's code comment).
ANSWER_STUB = "{name} = ...  {comment}"
MARKDOWN_STUB = "_Your answer here._"
#: The text the generator inserts, per edition: the code stub's comment, the markdown stub, the banner
#: (``{name}`` is the solution notebook's name).
TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "code_stub": CODE_STUB[0],
        "markdown_stub": MARKDOWN_STUB,
        "solution_title": ": solutions",
        "exercise_title": ": exercises",
        "solution_lead": "Worked solutions to the exercises for [lesson ",
        "exercise_lead": "Exercises for [lesson ",
        "banner": (
            "> **Exercises: this notebook is yours to edit.** Write your answer where a cell says "
            "`# YOUR CODE HERE` (replace the `...`) and run the cell: its `check(...)` says **correct**, or "
            "**not yet** with a hint. An exercise you have not answered yet says *no answer yet*, so Run All "
            "always runs to the end.\n"
            "> *The worked solutions are in [`solutions/{name}`](../solutions/{name}).*"
        ),
    },
    "zh": {
        "code_stub": "# 在这里写你的代码",
        "markdown_stub": "_在这里写下你的答案。_",
        "solution_title": "：参考答案",
        "exercise_title": "：练习",
        "solution_lead": "练习的参考答案",
        "exercise_lead": "的练习",
        "banner": (
            "> **练习：这个 notebook 归你，可以随意修改。** 在写着 `# 在这里写你的代码` 的地方写下答案（替换 `...`），"
            "再运行这个单元格：它的 `check(...)` 会显示**正确**，或者显示**还不对**并给出提示。还没作答的练习会显示"
            "*还没有作答*，所以“全部运行”总能一直运行到最后。\n"
            "> *参考答案在 [`solutions/zh/{name}`](../../solutions/zh/{name})。*"
        ),
    },
}
#: The solutions' first sentence under the title, per edition (made the exercise's by :func:`exercise_title`).
_SOLUTION_LEAD_RE = {
    "en": re.compile(r"^()" + re.escape(TEXTS["en"]["solution_lead"]), re.MULTILINE),
    "zh": re.compile(r"^(这是\[第 \d+ 课\]\([^)\s]*\))" + re.escape(TEXTS["zh"]["solution_lead"]), re.MULTILINE),
}
SOLUTION_TAG = "solution"
STUB_TAG = "raises-exception"
BANNER_ID = "exercise-banner"
MINE_SUFFIX = ".mine"


@dataclass(frozen=True)
class Edition:
    """One edition of the course: its language and folders (relative to the course root)."""

    language: str
    solutions: str
    exercises: str
    #: A markdown link from a solution to an exercise starts with this (relative to the solutions folder) ...
    exercise_link: str
    #: ... and is rewritten to start with this (the learner's copy in the workspace).
    workspace_link: str


#: The course's editions, in the order the generator makes them.
EDITIONS: dict[str, Edition] = {
    "en": Edition("en", "solutions", "exercises", "../exercises/", f"../{WORKSPACE_DIR}/"),
    "zh": Edition("zh", "solutions/zh", "exercises/zh", "../../exercises/zh/", f"../../{WORKSPACE_DIR}/zh/"),
}
_EXERCISE_LINK_RE = {
    lang: re.compile(r"\]\(" + re.escape(e.exercise_link) + r"([^)\s/]+\.ipynb)((?:#[^)]*)?)\)")
    for lang, e in EDITIONS.items()
}
#: Folders of the course the generator never writes into.
_NOT_EXERCISES = ("notebooks", "solutions", "apps", WORKSPACE_DIR, "bubblekit", "tests", "scripts", "docs",
                  "benchmarks", ".ci", ".git", ".venv")
FIX = "python scripts/make_exercises.py"
#: The kernelspec the python3 kernel of ipykernel reports; JupyterLab writes it into a notebook
#: whose stored kernelspec differs, which makes an untouched notebook "changed".
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}

__all__ = [
    "TEXTS", "CODE_STUB", "ANSWER_STUB", "split_regions", "answer_stubs", "Edition", "EDITIONS", "MarkerError", "UsageError", "strip_source", "normalise", "cell_where", "solution_region", "clear_cell",
    "make_exercise", "exercise_title", "solution_files", "generate", "render", "digest",
    "read_manifest", "course_copy", "course_copies", "CheckReport", "check", "WriteReport", "write", "main",
]


class MarkerError(ValueError):
    """A nested, unmatched or unterminated solution marker; the message names notebook and cell."""


def _texts(language: str) -> dict[str, str]:
    if language not in TEXTS:
        raise ValueError(f"language={language!r} is not a course language; choose one of {', '.join(map(repr, TEXTS))}")
    return TEXTS[language]


def strip_source(source: str, *, kind: str, where: str, language: str = "en",
                 answer_names: list[list[str]] | None = None) -> tuple[str, bool]:
    """Replace solution regions in one cell's ``source``; return ``(new_source, had_region)``.

    Args:
        source: the cell text.
        kind: ``"code"`` (stub lines at the marker's indentation) or ``"markdown"``.
        where: ``"<notebook> cell <n>"`` for error messages.
        language: the edition (``"en"`` or ``"zh"``): the language of the stub text.
        answer_names: for a code cell, the names to stub as ``name = ...`` for each region in
            order (:func:`answer_stubs`); ``None``: the raise stub (:data:`CODE_STUB`) for every
            region. A region indented inside a block always gets the raise stub.
    """
    texts = _texts(language)
    code_stub = (texts["code_stub"], CODE_STUB[1])
    out: list[str] = []
    inside = False
    found = False
    begin_line = 0
    region = 0
    for number, line in enumerate(source.split("\n"), start=1):
        begin = _BEGIN_RE.match(line)
        if begin is not None:
            if inside:
                raise MarkerError(f"{where}: nested '{BEGIN}' at line {number} (the region opened at line {begin_line} is not closed)")
            inside, found, begin_line = True, True, number
            indent = begin.group(1)
            if kind == "code" and answer_names is not None and not indent:
                names = answer_names[region] if region < len(answer_names) else []
                out.extend([ANSWER_STUB.format(name=n, comment=texts["code_stub"]) for n in names]
                           or [texts["code_stub"]])
            elif kind == "code":
                out.extend(indent + stub for stub in code_stub)
            else:
                out.append(indent + texts["markdown_stub"])
            region += 1
            continue
        if _END_RE.match(line):
            if not inside:
                raise MarkerError(f"{where}: '{END}' at line {number} without a '{BEGIN}' before it")
            inside = False
            continue
        if BEGIN in line or END in line:
            raise MarkerError(f"{where}: line {number} has a solution marker that is not alone on its line: {line.strip()!r}")
        if not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{where}: '{BEGIN}' at line {begin_line} is never closed by '{END}'")
    return "\n".join(out), found


def split_regions(source: str) -> tuple[str, list[tuple[int, str]]]:
    """A code cell with each solution region replaced by one placeholder line, and the regions.

    Returns ``(code, regions)``: ``code`` is the cell with each region (markers included)
    replaced by ``pass`` at the marker's indentation, so the code around the regions parses
    as it stands; ``regions`` lists each region's placeholder line (1-based) and its body,
    dedented. Markers are assumed valid (:func:`strip_source` checks them).
    """
    out: list[str] = []
    regions: list[tuple[int, str]] = []
    body: list[str] | None = None
    indent = ""
    for line in source.split("\n"):
        begin = _BEGIN_RE.match(line)
        if begin is not None:
            body, indent = [], begin.group(1)
            out.append(indent + "pass")
            continue
        if body is not None and _END_RE.match(line):
            regions.append((len(out), textwrap.dedent("\n".join(body))))
            body = None
            continue
        (body if body is not None else out).append(line)
    return "\n".join(out), regions


def _parse(code: str) -> ast.Module | None:
    """``code`` parsed, with IPython's ``%magic`` and ``!shell`` lines blanked; None when it is not Python."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in code.split("\n")]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _bound(tree: ast.AST | None) -> list[tuple[int, str]]:
    """``(line, name)`` of each name a piece of code binds (assignments, loops, with, imports, def, class).

    The variables of a comprehension or generator expression (``for name in ...`` inside
    ``(...)``, ``[...]``, ``{...}``) live in its own scope and are not counted: they do not leak
    into the cell (a ``:=`` inside one does, and is counted).
    """
    found: list[tuple[int, str]] = []
    for node in _walk_scope(tree) if tree is not None else ():
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.id))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.lineno, node.name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend((node.lineno, (a.asname or a.name).split(".")[0]) for a in node.names)
    return sorted(found)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _walk_scope(tree: ast.AST) -> Iterator[ast.AST]:
    """Like :func:`ast.walk`, but inside a comprehension only its ``:=`` targets (which bind outside it)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, _COMPREHENSIONS):
            yield from (n.target for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
            continue
        yield node
        todo.extend(reversed(list(ast.iter_child_nodes(node))))


def _read(tree: ast.AST | None) -> list[tuple[int, str]]:
    """``(line, name)`` of each name a piece of code reads."""
    if tree is None:
        return []
    return [(n.lineno, n.id) for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _loads(tree: ast.AST | None) -> set[str]:
    """The names a piece of code reads."""
    return {name for _, name in _read(tree)}


def answer_stubs(nb: Any) -> dict[int, list[list[str]]]:
    """For each code cell with regions (by cell index): the names each top-level region stubs as ``name = ...``.

    A region's answer names are the names it binds that code outside the regions reads later
    (after it in its cell, or in a later cell), less the names that code outside the regions
    bound before it (a template the learner edits, a value a lesson cell made), in the order
    the region binds them. A region that does not parse gives no names (the comment alone).
    """
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and SOLUTION_TAG not in _tags(c)]
    split = {i: split_regions(c.source) for i, c in cells}
    trees = {i: _parse(split[i][0]) for i, _ in cells}
    read_after: dict[int, set[str]] = {}  # names read outside the regions by the cells after cell i
    later: set[str] = set()
    for i, _ in reversed(cells):
        read_after[i] = set(later)
        later |= _loads(trees[i])
    stubs: dict[int, list[list[str]]] = {}
    bound_before: set[str] = set()  # names bound outside the regions by the cells before cell i
    for i, _ in cells:
        _code, regions = split[i]
        reads, binds = _read(trees[i]), _bound(trees[i])
        names_per_region: list[list[str]] = []
        for line, body in regions:
            region_tree = _parse(body)
            if region_tree is None:
                names_per_region.append([])
                continue
            wanted = read_after[i] | {name for at, name in reads if at > line}
            before = bound_before | {name for at, name in binds if at < line}
            order = list(dict.fromkeys(name for _, name in _bound(region_tree)))
            names_per_region.append([n for n in order if n in wanted and n not in before])
        bound_before |= {name for _, name in binds}
        if regions:
            stubs[i] = names_per_region
    return stubs


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def normalise(nb: Any) -> Any:
    """A copy of ``nb`` as nbformat 4.5 with a deterministic id on every cell (``cell-<index>`` where missing)."""
    nb = copy.deepcopy(nb)
    nb.nbformat, nb.nbformat_minor = 4, max(5, int(nb.get("nbformat_minor", 5)))
    for index, cell in enumerate(nb.cells):
        if not cell.get("id"):  # deterministic ids for old notebooks (nbformat would invent random ones)
            cell["id"] = f"cell-{index}"
    return nb


def cell_where(name: str, index: int, cell: Any) -> str:
    """``"<notebook> cell <n> (id <id>)"``: where a cell is, for error messages."""
    return f"{name} cell {index}" + (f" (id {cell['id']})" if cell.get("id") else "")


def solution_region(cell: Any, where: str, language: str = "en") -> tuple[str, bool]:
    """The cell's source with its solution regions replaced by stubs, and whether it had one.

    The one parser of the markers (:func:`strip_source`) for code and markdown cells; a raw
    cell keeps its source and may not hold a marker. Also used by ``scripts/make_nbgrader.py``.

    Raises:
        MarkerError: a nested, unmatched or unterminated marker, or a marker in a raw cell.
    """
    if cell.cell_type == "raw":
        if BEGIN in cell.source or END in cell.source:
            raise MarkerError(f"{where}: solution markers are not allowed in a raw cell (only code and markdown)")
        return cell.source, False
    return strip_source(cell.source, kind=cell.cell_type, where=where, language=language)


def clear_cell(cell: Any) -> None:
    """Drop a cell's run state in place: outputs, execution count, timing and view metadata."""
    metadata = cell.setdefault("metadata", {})
    for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
        metadata.pop(key, None)
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None


def exercise_title(source: str, language: str = "en") -> str:
    """A markdown cell's ``source`` with a solution title on its first line made the exercise's title.

    ``# 04 · Schedules compared: solutions`` becomes ``# 04 · Schedules compared: exercises``
    (Chinese edition: ``：参考答案`` becomes ``：练习``), and the first sentence under it says so too:
    ``Worked solutions to the exercises for [lesson 04](...)`` becomes ``Exercises for [lesson 04](...)``
    (``这是[第 04 课](...)练习的参考答案`` becomes ``这是[第 04 课](...)的练习``); any other source is
    returned unchanged.
    """
    texts = _texts(language)
    first, sep, rest = source.partition("\n")
    if first.startswith("# ") and first.rstrip().endswith(texts["solution_title"]):
        first = first.rstrip().removesuffix(texts["solution_title"]) + texts["exercise_title"]
        rest = _SOLUTION_LEAD_RE[language].sub(lambda m: m[1] + texts["exercise_lead"], rest, count=1)
    return first + sep + rest


def make_exercise(nb: Any, name: str, language: str = "en") -> Any:
    """Return the exercise version of solution notebook ``nb`` (``name`` is used in errors and the banner);
    ``language`` is the edition (``"en"``, or ``"zh"`` for ``solutions/zh/``): its stubs, banner and links."""
    texts = _texts(language)
    edition = EDITIONS[language]
    nb = normalise(nb)
    for index, cell in enumerate(nb.cells):  # the markers first: a bad one is an error before any parsing
        if SOLUTION_TAG not in _tags(cell):
            solution_region(cell, cell_where(name, index, cell), language)
    stubs = answer_stubs(nb)
    cells = []
    for index, cell in enumerate(nb.cells):
        if SOLUTION_TAG in _tags(cell):
            continue
        if cell.cell_type == "raw":
            cells.append(cell)
            continue
        source, found = strip_source(cell.source, kind=cell.cell_type, where=cell_where(name, index, cell),
                                     language=language, answer_names=stubs.get(index, []))
        if cell.cell_type == "markdown":
            if not cells:  # the notebook's first cell: its title
                source = exercise_title(source, language)
            source = _EXERCISE_LINK_RE[language].sub(
                lambda m: f"]({edition.workspace_link}{workspace_name(m[1])}{m[2]})", source)
        cell.source = source
        clear_cell(cell)
        if cell.cell_type == "code":
            if found and CODE_STUB[1] in source:  # only a stub indented in a block can raise
                tags = _tags(cell)
                if STUB_TAG not in tags:
                    cell.metadata["tags"] = tags + [STUB_TAG]
        elif "attachments" in cell and found:
            cell.pop("attachments")
        cells.append(cell)
    banner = nbformat.v4.new_markdown_cell(texts["banner"].format(name=name))
    banner["id"] = BANNER_ID
    nb.cells = [banner] + cells
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("toc-autonumbering", None)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    return nb


def render(nb: Any) -> str:
    """Serialise a notebook deterministically (nbformat's indent 1, sorted keys, final newline)."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"




def solution_files(solutions: Path) -> tuple[list[Path], list[Path]]:
    """The course's solution notebooks in ``solutions``, and the ones left out.

    In a git checkout only tracked notebooks are the course's (a learner's ``my_try.ipynb``
    beside them is left out: ``git add`` a new solution first); without git, all of them.
    """
    paths = sorted(solutions.glob("*.ipynb"))
    tracked = git_tracked(solutions)
    if tracked is None:
        return paths, []
    return [p for p in paths if p.name in tracked], [p for p in paths if p.name not in tracked]


def generate(solutions: Path, language: str = "en") -> dict[str, str]:
    """Exercise file name -> rendered text, for every course solution notebook (see :func:`solution_files`),
    in the edition ``language``."""
    result: dict[str, str] = {}
    for path in solution_files(solutions)[0]:
        nb = nbformat.read(path, as_version=4)
        result[path.name] = render(make_exercise(nb, path.name, language))
    return result


def digest(text: str) -> str:
    """SHA-256 (hex) of a notebook's text, with Windows line ends counted as ``\\n``."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------ the manifest


def read_manifest(exercises: Path) -> dict[str, str] | None:
    """``{file name: sha256}`` of what the generator wrote into ``exercises``; None when it has no manifest.

    Raises:
        UsageError: the manifest exists but is not the generator's format.
    """
    path = exercises / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"]
        if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise TypeError("'files' must map names to hashes")
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{_show(path)} is not a manifest written by this script ({exc}); move it away") from None
    return dict(files)


def _write_manifest(exercises: Path, files: dict[str, str]) -> None:
    data = {
        "about": (
            "Written by scripts/make_exercises.py: each exercise notebook it generated and the SHA-256 of "
            "what it wrote. It rewrites or removes only these files, and only while they are unchanged."
        ),
        "files": dict(sorted(files.items())),
    }
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path = exercises / MANIFEST
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    tmp = exercises / (MANIFEST + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# ------------------------------------------------------------------------------ the arguments


class UsageError(ValueError):
    """A bad ``--solutions`` / ``--exercises`` argument (the message names it); nothing was written."""


def _show(path: Path) -> str:
    """``path`` relative to the current folder when inside it (for messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _has_markers(folder: Path) -> bool:
    return any(BEGIN in p.read_text(encoding="utf-8", errors="replace") for p in folder.glob("*.ipynb"))


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both resolved)."""
    return path == folder or path.is_relative_to(folder)


def _check_can_make(exercises: Path, ex: Path) -> None:
    """``UsageError`` naming ``--exercises`` unless the folder ``ex`` (not there yet) can be made.

    Tried for real, without leaving anything behind: a temporary folder is made and removed in
    the nearest folder that exists (permissions, read-only disks and ``/proc`` are all caught,
    also for the superuser).
    """
    parent = ex.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"argument --exercises: cannot make {str(exercises)!r}: {str(parent)!r} is not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".make-exercises-probe-", dir=parent))
    except OSError as exc:
        raise UsageError(f"argument --exercises: cannot make the folder {str(exercises)!r} in {str(parent)!r} "
                         f"({exc.strerror or exc}); choose a folder you can write to") from None


def validate(solutions: Path, exercises: Path, *, writing: bool, root: Path | None = None) -> None:
    """Check the two folder arguments before anything is read or written (``root``: the course, default :data:`ROOT`).

    Raises:
        UsageError: naming ``--solutions`` or ``--exercises``, the value and what is allowed.
    """
    sol, ex, root = solutions.resolve(), exercises.resolve(), (ROOT if root is None else root).resolve()
    if not sol.exists():
        raise UsageError(f"argument --solutions: folder {str(solutions)!r} does not exist "
                         f"(the course's solution notebooks are in {_show(root / 'solutions')})")
    if not sol.is_dir():
        raise UsageError(f"argument --solutions: {str(solutions)!r} is not a folder")
    if sol == root or any(_inside(sol, root / name) for name in (*_NOT_EXERCISES, "exercises") if name != "solutions"):
        raise UsageError(f"argument --solutions: {str(solutions)!r} is not a solutions folder "
                         f"(the course's solution notebooks are in {_show(root / 'solutions')})")
    if not any(sol.glob("*.ipynb")):
        raise UsageError(f"argument --solutions: folder {str(solutions)!r} has no notebooks")
    if not _has_markers(sol):
        raise UsageError(f"argument --solutions: no notebook in {str(solutions)!r} has a '{BEGIN}' region, "
                         "so it is not a folder of solutions")
    if ex == sol:
        raise UsageError(f"argument --exercises: {str(exercises)!r} is the --solutions folder")
    if ex == root or ex in root.parents or any(_inside(ex, root / name) for name in _NOT_EXERCISES):
        raise UsageError(f"argument --exercises: {str(exercises)!r} is not an exercises folder: the generator "
                         f"writes only into {_show(root / 'exercises')}, a new or empty folder, or one it made before")
    if ex.exists() and not ex.is_dir():
        raise UsageError(f"argument --exercises: {str(exercises)!r} exists and is not a folder")
    if writing and not ex.exists():
        _check_can_make(exercises, ex)
    editions = {root / e.exercises for e in EDITIONS.values()}
    if writing and ex.is_dir() and ex not in editions and not (ex / MANIFEST).exists() and any(ex.iterdir()):
        raise UsageError(f"argument --exercises: folder {str(exercises)!r} is not empty and was not made by this "
                         f"script (it has no {MANIFEST}); choose a new or empty folder")
    read_manifest(ex) if ex.is_dir() else None  # a foreign manifest is an error too


# ------------------------------------------------------------------------------ --check


@dataclass
class CheckReport:
    """What ``--check`` found: ``problems`` fail it (CI); ``notes`` are for information only."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fixable: bool = False  # running the generator fixes every problem


def course_copy(path: Path, recorded: str | None) -> tuple[str | None, bool]:
    """The course's version of exercise ``path``, and whether the file on disk has local changes.

    ``recorded`` is the hash the manifest holds for it. The course's version is the file when
    it still has that hash; else, in a git checkout where the file has uncommitted changes (a
    learner's edits), its committed version (``True``: the file on disk is the learner's);
    else ``(None, False)``: the file was changed after it was generated and that change is
    all there is (committed, or no git).
    """
    text = path.read_text(encoding="utf-8")
    if recorded is not None and digest(text) == recorded:
        return text, False
    committed = committed_text(path)
    if committed is not None and committed.replace("\r\n", "\n") != text.replace("\r\n", "\n"):
        return committed, True
    return None, False


def course_copies(exercises: Path) -> dict[str, str]:
    """``{name: the course's text}`` of every exercise the manifest lists (see :func:`course_copy`);
    a file changed by hand with no committed version to fall back on is left out."""
    manifest = read_manifest(exercises) or {}
    result: dict[str, str] = {}
    for name, recorded in sorted(manifest.items()):
        if (exercises / name).is_file():
            text, _ = course_copy(exercises / name, recorded)
            if text is not None:
                result[name] = text
    return result


def check(solutions: Path, exercises: Path, language: str = "en") -> CheckReport:
    """Compare the course's exercise notebooks (see :func:`course_copy`) with what ``solutions`` generates.

    Problems (they fail CI): a stale or missing exercise, a leaked solution marker, a file
    changed after it was generated (with no committed version to check instead), a committed
    notebook the generator did not write, a missing or stale manifest. Notes: a learner's
    local changes (left out), files the generator did not write and git does not track.
    ``language`` is the edition (see :func:`make_exercise`).
    """
    wanted = generate(solutions, language)
    report = CheckReport()
    report.notes += [f"{_show(p)}: not in git (yours?): not a course solution, left out"
                     for p in solution_files(solutions)[1]]
    manifest = read_manifest(exercises) if exercises.is_dir() else None
    ex = _show(exercises)
    if manifest is None:
        report.problems.append(f"{ex}/{MANIFEST}: missing (it records what the generator wrote)")
        manifest = {}
    have = {p.name: p for p in sorted(exercises.glob("*.ipynb"))} if exercises.is_dir() else {}
    fixable = True
    for name in sorted(set(wanted) | set(manifest) | set(have)):
        where = f"{ex}/{name}"
        path = exercises / name
        if name not in wanted and name not in manifest:
            if committed_text(path) is not None:
                report.problems.append(f"{where}: committed, but not generated from any notebook in {_show(solutions)}")
                fixable = False
            else:
                report.notes.append(f"{where}: not the course's (not written by the generator); left alone")
            continue
        if name not in have:
            report.problems.append(f"{where}: missing" if name in wanted else f"{ex}/{MANIFEST}: lists {name}, which is gone")
            continue
        course, local = course_copy(path, manifest.get(name))
        if course is None:
            report.problems.append(
                f"{where}: changed after the generator wrote it (edited by hand?); exercises are generated: "
                f"put the change into {_show(solutions)}/{name}, then run `{FIX} --keep-changed` "
                f"(it keeps the edited file as {name[:-6]}{MINE_SUFFIX}.ipynb)"
            )
            fixable = False
            continue
        if local:
            report.notes.append(f"{where}: has local changes (yours?): left as it is; its committed version is checked")
        if BEGIN in course or END in course:
            report.problems.append(f"{where}: contains a solution marker (leaks a solution)")
        if name not in wanted:
            report.problems.append(f"{where}: its solution {_show(solutions)}/{name} is gone")
        elif course != wanted[name]:
            report.problems.append(f"{where}: differs from what {_show(solutions)}/{name} generates")
        elif manifest.get(name) != digest(wanted[name]):
            report.problems.append(f"{ex}/{MANIFEST}: out of date for {name}")
    report.fixable = fixable and bool(report.problems)
    return report


# ------------------------------------------------------------------------------ writing


@dataclass
class WriteReport:
    """What :func:`write` did, file names relative to the exercises folder."""

    wrote: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)   # (changed file, its new name)
    refused: list[str] = field(default_factory=list)               # changed, and a new version is waiting
    kept: list[str] = field(default_factory=list)                  # changed, nothing new to write
    unknown: list[str] = field(default_factory=list)               # not written by the generator


def _free_name(folder: Path, name: str) -> Path:
    stem = name[: -len(".ipynb")] if name.endswith(".ipynb") else name
    for i in range(1, 10_000):
        candidate = folder / f"{stem}{MINE_SUFFIX}{'' if i == 1 else f'-{i}'}.ipynb"
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise UsageError(f"too many {stem}{MINE_SUFFIX}-N.ipynb files in {_show(folder)}")


def _move_aside(path: Path) -> Path:
    """Rename ``path`` to a free ``NAME.mine[-N].ipynb`` beside it, never over an existing file."""
    target = _free_name(path.parent, path.name)
    try:
        os.link(path, target)  # fails if target exists
    except OSError:
        with open(path, "rb") as src, open(target, "xb") as dst:
            dst.write(src.read())
    os.unlink(path)
    return target


def _write_new(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8", newline="") as f:
        f.write(text)


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp-make-exercises")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def write(wanted: dict[str, str], exercises: Path, *, keep_changed: bool = False) -> WriteReport:
    """Bring ``exercises`` up to ``wanted`` without losing anyone's work (see the module's rules)."""
    exercises.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(exercises) or {}
    new_manifest: dict[str, str] = {}
    report = WriteReport()
    for name, text in wanted.items():
        path = exercises / name
        if not path.exists() and not path.is_symlink():
            _write_new(path, text)
            report.wrote.append(name)
            new_manifest[name] = digest(text)
            continue
        current = path.read_text(encoding="utf-8")
        if current == text:  # already what we would write (also adopts identical files)
            new_manifest[name] = digest(text)
            continue
        if manifest.get(name) == digest(current):  # ours, unchanged: safe to replace
            _replace(path, text)
            report.wrote.append(name)
            new_manifest[name] = digest(text)
            continue
        # changed by someone (or not ours at all)
        if name in manifest and manifest[name] == digest(text):
            report.kept.append(name)  # the course's version did not move: nothing to write
            new_manifest[name] = manifest[name]
            continue
        if keep_changed:
            moved = _move_aside(path)
            report.renamed.append((name, moved.name))
            _write_new(path, text)
            report.wrote.append(name)
            new_manifest[name] = digest(text)
            continue
        report.refused.append(name)
        if name in manifest:
            new_manifest[name] = manifest[name]
    for name in sorted(set(manifest) - set(wanted)):
        path = exercises / name
        if path.is_file() and digest(path.read_text(encoding="utf-8")) == manifest[name]:
            path.unlink()
            report.removed.append(name)
        elif path.exists():
            report.kept.append(name)  # the learner changed it: theirs now, kept
    listed = set(new_manifest) | set(manifest) | set(report.refused)
    report.unknown = sorted(p.name for p in exercises.glob("*.ipynb") if p.name not in listed)
    _write_manifest(exercises, new_manifest)
    return report


# ------------------------------------------------------------------------------ command line


def _jobs(args: argparse.Namespace) -> list[tuple[Path, Path, str]]:
    """The ``(solutions, exercises, language)`` folders to work on.

    With ``--solutions``/``--exercises``: that one pair (the language is ``--lang``, else
    ``zh`` for a ``solutions/zh``-like folder named ``zh``, else English). Otherwise each edition
    of :data:`EDITIONS` (only ``--lang``'s when given), the Chinese one while ``solutions/zh/`` exists.
    """
    if args.solutions is not None or args.exercises is not None:
        lang = args.lang or ("zh" if args.solutions is not None and args.solutions.resolve().name == "zh" else "en")
        edition = EDITIONS[lang]
        return [(args.solutions if args.solutions is not None else ROOT / edition.solutions,
                 args.exercises if args.exercises is not None else ROOT / edition.exercises, lang)]
    jobs = []
    for lang, edition in EDITIONS.items():
        if args.lang not in (None, lang):
            continue
        if lang != "en" and args.lang is None and not (ROOT / edition.solutions).is_dir():
            continue  # the course has no such edition yet
        jobs.append((ROOT / edition.solutions, ROOT / edition.exercises, lang))
    return jobs


def main(argv: list[str] | None = None) -> int:
    """Run the generator; exit status 0 (done / in sync), 1 (stale, or a changed file kept), 2 (bad input)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the course's exercises are stale or leak a solution")
    parser.add_argument("--lang", choices=tuple(EDITIONS), default=None,
                        help="only this edition (default: each: solutions/ into exercises/, "
                             "solutions/zh/ into exercises/zh/); with --solutions, the language of the stubs")
    parser.add_argument("--solutions", type=Path, default=None,
                        help="source folder (default solutions/, and solutions/zh/ for the Chinese edition)")
    parser.add_argument("--exercises", type=Path, default=None,
                        help="output folder (default exercises/, and exercises/zh/ for the Chinese edition)")
    parser.add_argument("--keep-changed", action="store_true",
                        help="rename each changed exercise that has a new version to NAME.mine.ipynb, then write it")
    args = parser.parse_args(argv)
    try:
        jobs = _jobs(args)
        for solutions, exercises, _ in jobs:  # every argument first: nothing is written when one is bad
            validate(solutions, exercises, writing=not args.check)
        status = 0
        if args.check:
            for solutions, exercises, lang in jobs:
                status = max(status, _report_check(check(solutions, exercises, lang), solutions, exercises))
            return status
        wanted = [generate(solutions, lang) for solutions, _, lang in jobs]  # every marker error before writing
        for (solutions, exercises, _), texts in zip(jobs, wanted):
            for path in solution_files(solutions)[1]:
                print(f"note: {_show(path)} is not in git: not a course solution, left out "
                      "(git add it if it is a new one)")
            status = max(status, _report_write(write(texts, exercises, keep_changed=args.keep_changed), exercises))
        return status
    except (MarkerError, UsageError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a disk that fills or a folder that goes away while writing
        print(f"error: cannot write the exercises: {err.strerror or err} ({err.filename or 'a file'})", file=sys.stderr)
        return 2


def _report_check(report: CheckReport, solutions: Path, exercises: Path) -> int:
    for note in report.notes:
        print(f"note: {note}")
    if report.problems:
        print(f"the course's exercises in {_show(exercises)}/ are out of date:", *report.problems, sep="\n  ",
              file=sys.stderr)
        if report.fixable:
            print(f"fix: {FIX}   (safe: it rewrites only files it wrote that nobody changed, never deletes "
                  "or overwrites anyone's work)", file=sys.stderr)
        return 1
    print(f"the course's exercises in {_show(exercises)}/ are in sync with {_show(solutions)}/")
    return 0


def _report_write(report: WriteReport, exercises: Path) -> int:
    ex = _show(exercises)
    for old, new in report.renamed:
        print(f"kept your changed {ex}/{old} as {ex}/{new}")
    for name in report.wrote:
        print(f"wrote {ex}/{name}")
    for name in report.removed:
        print(f"removed {ex}/{name} (its solution is gone; the generator wrote it and nobody changed it)")
    for name in report.kept:
        print(f"kept {ex}/{name}: it has changes made after it was generated (yours?)")
    if report.unknown:
        print(f"left alone (not written by the generator): {', '.join(f'{ex}/{n}' for n in report.unknown)}")
    if report.refused:
        print("NOT overwritten, because they differ from what the generator wrote there (your changes?), while "
              "their solution has a new version:", *[f"{ex}/{n}" for n in report.refused], sep="\n  ", file=sys.stderr)
        print(f"To keep your version and get the new one: {FIX} --keep-changed   (renames yours to "
              f"NAME{MINE_SUFFIX}.ipynb first). Your own exercise work belongs in {WORKSPACE_DIR}/ "
              "(see `bubblekit workspace`).", file=sys.stderr)
        return 1
    if not (report.wrote or report.removed or report.renamed):
        print(f"{ex}/ is up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
