"""exercises/ is generated from solutions/ by scripts/make_exercises.py, and stays in sync.

Also tests the generator on small synthetic notebooks, and runs each generated exercise
notebook up to its first stub: the only error allowed is the stub's NotImplementedError.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_exercises.py"
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_exercises", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_exercises"] = module
    spec.loader.exec_module(module)
    return module


mx = _load()


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


def test_no_exercise_leaks_a_solution() -> None:
    for path in EXERCISES:
        text = path.read_text(encoding="utf-8")
        assert mx.BEGIN not in text and mx.END not in text, path.name
        nb = nbformat.read(path, as_version=4)
        assert not any("solution" in c.get("metadata", {}).get("tags", []) for c in nb.cells), path.name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name


# ----------------------------------------------------------------------------- the generator


def test_code_region_becomes_indented_stub_and_tagged() -> None:
    src = "def f(p, m):\n    ### BEGIN SOLUTION\n    return (p - 1) / (m + p - 1)\n    ### END SOLUTION\n\ncheck('03.1', f)"
    nb = notebook(new_code_cell(src))
    out = mx.make_exercise(nb, "t.ipynb")
    cell = out.cells[1]
    assert cell.source == "def f(p, m):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\ncheck('03.1', f)"
    assert "raises-exception" in cell.metadata["tags"]
    assert out.cells[0]["id"] == mx.BANNER_ID and "Generated from `solutions/t.ipynb`" in out.cells[0].source


def test_two_regions_in_one_cell_and_untouched_cells() -> None:
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nx = 0\n  ### BEGIN SOLUTION\nb = 2\n  ### END SOLUTION"
    plain = new_code_cell("import bubblekit as bk")
    out = mx.make_exercise(notebook(plain, new_code_cell(src)), "t.ipynb")
    assert out.cells[1].source == "import bubblekit as bk"
    assert "tags" not in out.cells[1].metadata
    assert out.cells[2].source == (
        "# YOUR CODE HERE\nraise NotImplementedError()\nx = 0\n  # YOUR CODE HERE\n  raise NotImplementedError()"
    )


def test_markdown_region_becomes_your_answer_here() -> None:
    md = new_markdown_cell("**Why?**\n\n### BEGIN SOLUTION\nBecause rank 0 waits.\n### END SOLUTION\n")
    out = mx.make_exercise(notebook(md), "t.ipynb")
    assert out.cells[1].source == "**Why?**\n\n" + mx.MARKDOWN_STUB + "\n"
    assert "tags" not in out.cells[1].metadata


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


def test_check_mode_reports_stale_extra_missing_and_leaks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    nbformat.write(notebook(new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")), sol / "01_a.ipynb")
    nbformat.write(notebook(new_code_cell("y = 2")), sol / "02_b.ipynb")
    args = ["--solutions", str(sol), "--exercises", str(ex)]
    assert mx.main(["--check", *args]) == 1  # both missing
    assert "01_a.ipynb: missing" in capsys.readouterr().err
    assert mx.main(args) == 0
    assert mx.main(["--check", *args]) == 0
    (ex / "02_b.ipynb").write_text((ex / "02_b.ipynb").read_text().replace("y = 2", "y = 3"))
    (ex / "03_c.ipynb").write_text((ex / "01_a.ipynb").read_text())
    leak = (ex / "01_a.ipynb").read_text().replace("# YOUR CODE HERE", "### BEGIN SOLUTION")
    (ex / "01_a.ipynb").write_text(leak)
    assert mx.main(["--check", *args]) == 1
    err = capsys.readouterr().err
    assert "02_b.ipynb: differs" in err and "03_c.ipynb: extra" in err and "01_a.ipynb: contains a solution marker" in err
    assert mx.main(args) == 0 and not (ex / "03_c.ipynb").exists()
    assert mx.main(["--check", *args]) == 0


def test_marker_error_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sol = tmp_path / "solutions"
    sol.mkdir()
    nbformat.write(notebook(new_code_cell("ok"), new_code_cell("### BEGIN SOLUTION")), sol / "05_bad.ipynb")
    assert mx.main(["--check", "--solutions", str(sol), "--exercises", str(tmp_path / "ex")]) == 2
    assert "05_bad.ipynb cell 1" in capsys.readouterr().err


# ----------------------------------------------------------------------------- the exercises run


@pytest.mark.slow
@pytest.mark.parametrize("path", EXERCISES, ids=[p.name for p in EXERCISES])
def test_exercise_runs_up_to_its_first_stub(path: Path) -> None:
    """Cells before the first stub run cleanly; the stub itself may only raise NotImplementedError."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    stubs = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "raises-exception" in c.metadata.get("tags", [])]
    if not stubs:
        pytest.skip(f"{path.name} has no stub")
    nb.cells = nb.cells[: stubs[0] + 1]
    client = NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if i == stubs[0]:
            assert all(e.ename == "NotImplementedError" for e in errors), (path.name, i, [e.ename for e in errors])
        else:
            assert not errors, (path.name, i, errors[0].ename, errors[0].evalue)
