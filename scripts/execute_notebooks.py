"""Execute course notebooks in place, the way they are committed (a contributor's tool).

    python scripts/execute_notebooks.py                     # the course's lessons and solutions
    python scripts/execute_notebooks.py notebooks/03_the_bubble_formula.ipynb
    python scripts/execute_notebooks.py --list              # only say what would run

With no argument it runs the notebooks the course ships in ``notebooks/`` and ``solutions/``
(in a git checkout: the tracked ones, see :func:`bubblekit.course.workspace.course_notebooks`).
A learner's files are never touched: untracked notebooks (scratch notebooks,
``...-Copy1.ipynb``, the ``workspace/``) are not run, and a tracked notebook that differs
from its committed version (a lesson the learner ran and saved, or an edit in progress) is
skipped with a note; ``--include-changed`` runs those too (their code is kept, their outputs
are replaced). A notebook named on the command line is always run.

Each notebook runs top to bottom in its own folder with the ``python3`` kernel and the
Agg backend, and is written back only when the whole run succeeded (atomically), with that
kernel's kernelspec (``Python 3 (ipykernel)``: with another display name JupyterLab marks
the notebook changed as soon as its kernel starts, and autosaves it). Saved
ipywidgets state (``metadata.widgets``) is dropped: it holds hundreds of KB of model state
with fresh ids on every run, which would make every re-run a large diff; JupyterLab
re-creates the widgets when the learner runs the cells. Without that state a widget view in
a saved output could never render (JupyterLab would show "Loading widget..." or an error), so
an output that carries a picture beside its widget view (the course's explorers do: a
``text/html`` or ``image/png`` still picture) is saved as that picture alone. Run
``python scripts/make_exercises.py`` afterwards if a solution notebook changed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from bubblekit.course.workspace import course_notebooks

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "solutions")


def execute(path: Path, timeout: int = 600) -> float:
    """Execute ``path`` and write it back in place (only after a complete run); return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nb.metadata.pop("widgets", None)
    still_pictures(nb)
    nb.metadata["kernelspec"] = _kernelspec()
    tmp = path.with_name(f".{path.name}.executing")
    nbformat.write(nb, tmp)
    os.replace(tmp, path)
    return time.perf_counter() - start


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STILL = ("text/html", "image/png")


def still_pictures(nb: nbformat.NotebookNode) -> int:
    """Drop the widget view of every output that also holds a still picture (``text/html`` or
    ``image/png``): saved without widget state, the view cannot render, the picture can.
    Returns how many outputs changed."""
    changed = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data and any(k in data for k in STILL):
                del data[WIDGET_VIEW]
                changed += 1
    return changed


def _kernelspec() -> dict[str, str]:
    """The python3 kernel's kernelspec as JupyterLab will write it into the notebook."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        spec = KernelSpecManager().get_kernel_spec("python3")
        return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}
    except Exception:  # no kernelspec machinery: ipykernel's default
        return {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def default_targets(include_changed: bool = False) -> tuple[list[Path], list[Path]]:
    """The course's notebooks to run by default, and those skipped because they have local changes."""
    run: list[Path] = []
    skipped: list[Path] = []
    for nb in course_notebooks(ROOT, FOLDERS):
        if not nb.path.is_file():
            continue
        (skipped if nb.changed and not include_changed else run).append(nb.path)
    return run, skipped


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to run (default: the course's notebooks/ and solutions/)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    parser.add_argument("--include-changed", action="store_true",
                        help="with no notebook named: also run course notebooks that differ from their committed version")
    parser.add_argument("--list", action="store_true", help="print what would run and what is skipped; run nothing")
    args = parser.parse_args(argv)
    if args.timeout < 1:
        parser.error(f"argument --timeout: must be a whole number of seconds >= 1, got {args.timeout}")
    missing = [p for p in args.notebooks if not p.is_file() or p.suffix != ".ipynb"]
    if missing:
        parser.error(f"argument notebooks: not a notebook file: {', '.join(map(str, missing))}")
    if args.notebooks:
        paths, skipped = list(args.notebooks), []
    else:
        paths, skipped = default_targets(args.include_changed)
    for path in skipped:
        print(f"skipped {_rel(path)}: it differs from its committed version (a lesson you ran and saved, "
              "or an edit in progress), so it is left as it is")
    if args.list:
        for path in paths:
            print(f"would run {_rel(path)}")
        return 0
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = 0
    for path in paths:
        try:
            seconds = execute(path, args.timeout)
        except Exception as exc:  # report every notebook, then fail
            failed += 1
            print(f"FAILED {_rel(path)}: {type(exc).__name__}: {str(exc).splitlines()[-1] if str(exc) else ''}")
        else:
            print(f"ok {_rel(path)} ({seconds:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
