#!/usr/bin/env python3
"""Generate the student notebooks ``exercises/*.ipynb`` from ``solutions/*.ipynb``.

Rules:

* In code cells, each region between a ``### BEGIN SOLUTION`` line and a
  ``### END SOLUTION`` line (markers included) becomes, at the marker's indentation::

      # YOUR CODE HERE
      raise NotImplementedError()

  and the cell gets the tag ``raises-exception`` (nbval then expects the error).
* In markdown cells the region becomes ``_Your answer here._``.
* Cells tagged ``solution`` are dropped.
* Outputs, execution counts, execution timing metadata and saved widget state are cleared.
* A nested, unmatched or unterminated marker (or a marker in a raw cell) is an error that
  names the notebook and the cell.
* A banner cell at the top says the notebook is generated.

Usage::

    python scripts/make_exercises.py            # (re)write exercises/
    python scripts/make_exercises.py --check    # exit 1 if exercises/ is stale or leaks a solution

The output is deterministic: ``nbformat.writes`` (indent 1, sorted keys) plus a final newline.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_BEGIN_RE = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
_END_RE = re.compile(r"^\s*### END SOLUTION\s*$")
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
MARKDOWN_STUB = "_Your answer here._"
SOLUTION_TAG = "solution"
STUB_TAG = "raises-exception"
BANNER_ID = "exercise-banner"

__all__ = ["MarkerError", "strip_source", "make_exercise", "generate", "render", "check", "main"]


class MarkerError(ValueError):
    """A nested, unmatched or unterminated solution marker; the message names notebook and cell."""


def strip_source(source: str, *, kind: str, where: str) -> tuple[str, bool]:
    """Replace solution regions in one cell's ``source``; return ``(new_source, had_region)``.

    Args:
        source: the cell text.
        kind: ``"code"`` (stub lines at the marker's indentation) or ``"markdown"``.
        where: ``"<notebook> cell <n>"`` for error messages.
    """
    out: list[str] = []
    inside = False
    found = False
    begin_line = 0
    for number, line in enumerate(source.split("\n"), start=1):
        begin = _BEGIN_RE.match(line)
        if begin is not None:
            if inside:
                raise MarkerError(f"{where}: nested '{BEGIN}' at line {number} (the region opened at line {begin_line} is not closed)")
            inside, found, begin_line = True, True, number
            indent = begin.group(1)
            if kind == "code":
                out.extend(indent + stub for stub in CODE_STUB)
            else:
                out.append(indent + MARKDOWN_STUB)
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


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def make_exercise(nb: Any, name: str) -> Any:
    """Return the exercise version of solution notebook ``nb`` (``name`` is used in errors and the banner)."""
    nb = copy.deepcopy(nb)
    nb.nbformat, nb.nbformat_minor = 4, max(5, int(nb.get("nbformat_minor", 5)))
    for index, cell in enumerate(nb.cells):
        if not cell.get("id"):  # deterministic ids for old notebooks (nbformat would invent random ones)
            cell["id"] = f"cell-{index}"
    cells = []
    for index, cell in enumerate(nb.cells):
        where = f"{name} cell {index}" + (f" (id {cell['id']})" if cell.get("id") else "")
        if SOLUTION_TAG in _tags(cell):
            continue
        if cell.cell_type == "raw":
            if BEGIN in cell.source or END in cell.source:
                raise MarkerError(f"{where}: solution markers are not allowed in a raw cell (only code and markdown)")
            cells.append(cell)
            continue
        source, found = strip_source(cell.source, kind=cell.cell_type, where=where)
        cell.source = source
        metadata = cell.setdefault("metadata", {})
        for key in ("execution", "collapsed", "scrolled", "ExecuteTime"):
            metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            if found:
                tags = _tags(cell)
                if STUB_TAG not in tags:
                    metadata["tags"] = tags + [STUB_TAG]
        elif "attachments" in cell and found:
            cell.pop("attachments")
        cells.append(cell)
    banner = nbformat.v4.new_markdown_cell(
        f"> **Exercise notebook.** Replace each `# YOUR CODE HERE` / `raise NotImplementedError()` with your code, "
        f"then run the `check(...)` cell below it.\n"
        f"> *Generated from `solutions/{name}` by `scripts/make_exercises.py`: edit the solution, not this file.*"
    )
    banner["id"] = BANNER_ID
    nb.cells = [banner] + cells
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("toc-autonumbering", None)
    return nb


def render(nb: Any) -> str:
    """Serialise a notebook deterministically (nbformat's indent 1, sorted keys, final newline)."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def generate(solutions: Path) -> dict[str, str]:
    """Exercise file name -> rendered text, for every ``solutions/*.ipynb``."""
    result: dict[str, str] = {}
    for path in sorted(solutions.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        result[path.name] = render(make_exercise(nb, path.name))
    return result


def check(solutions: Path, exercises: Path) -> list[str]:
    """Problems that make ``exercises/`` differ from what ``solutions/`` generates (empty if in sync)."""
    wanted = generate(solutions)
    have = {p.name: p for p in sorted(exercises.glob("*.ipynb"))} if exercises.is_dir() else {}
    problems: list[str] = []
    for name in sorted(set(wanted) | set(have)):
        if name not in have:
            problems.append(f"exercises/{name}: missing (run python scripts/make_exercises.py)")
            continue
        text = have[name].read_text(encoding="utf-8")
        if BEGIN in text or END in text:
            problems.append(f"exercises/{name}: contains a solution marker (leaks a solution)")
        if name not in wanted:
            problems.append(f"exercises/{name}: extra file, no solutions/{name}")
        elif text != wanted[name]:
            problems.append(f"exercises/{name}: differs from what solutions/{name} generates")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if exercises/ is out of date")
    parser.add_argument("--solutions", type=Path, default=ROOT / "solutions", help="source folder (default solutions/)")
    parser.add_argument("--exercises", type=Path, default=ROOT / "exercises", help="output folder (default exercises/)")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check(args.solutions, args.exercises)
            if problems:
                print("exercises/ is out of date:", *problems, sep="\n  ", file=sys.stderr)
                print("fix: python scripts/make_exercises.py", file=sys.stderr)
                return 1
            print(f"exercises/ in sync with solutions/ ({len(generate(args.solutions))} notebooks)")
            return 0
        wanted = generate(args.solutions)
    except MarkerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.exercises.mkdir(parents=True, exist_ok=True)
    for path in sorted(args.exercises.glob("*.ipynb")):
        if path.name not in wanted:
            path.unlink()
            print(f"removed {path}")
    for name, text in wanted.items():
        target = args.exercises / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
