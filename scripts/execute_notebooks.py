"""Execute course notebooks in place, the way they are committed.

    python scripts/execute_notebooks.py                     # every notebook in notebooks/ and solutions/
    python scripts/execute_notebooks.py notebooks/03_the_bubble_formula.ipynb

Each notebook runs top to bottom in its own folder with the ``python3`` kernel and the
Agg backend. Saved ipywidgets state (``metadata.widgets``) is dropped: it holds hundreds of
KB of model state with fresh ids on every run, which would make every re-run a large diff;
JupyterLab re-creates the widgets when the learner runs the cells. Run
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

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path, timeout: int = 600) -> float:
    """Execute ``path`` in place; return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="notebooks to run (default: notebooks/ and solutions/)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("solutions/*.ipynb")])
    os.environ.setdefault("MPLBACKEND", "Agg")
    failed = 0
    for path in paths:
        try:
            seconds = execute(path, args.timeout)
        except Exception as exc:  # report every notebook, then fail
            failed += 1
            print(f"FAILED {path}: {type(exc).__name__}: {str(exc).splitlines()[-1] if str(exc) else ''}")
        else:
            print(f"ok {path} ({seconds:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
