"""Run All never stops early in an exercise notebook (issue "the first hour", exercise item).

Each exercise notebook, as ``scripts/make_exercises.py`` makes it from the course's solutions
(both editions), is executed top to bottom **unanswered**:

* no cell raises (an unanswered exercise is ``answer = ...  # YOUR CODE HERE``, and
  ``check`` answers "no answer yet" for ``...``);
* every unanswered check says "no answer yet" (the ``○`` mark), never "not yet";
* every cell that draws a figure in the solution and does not depend on an answer (it holds
  no stub and reads no stubbed name) draws it in the exercise too.

And the stub itself: what the generator writes for a region, both editions.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    return load_script("make_exercises_run_all", ROOT / "scripts" / "make_exercises.py")


mx = _load()
SOLUTIONS = {lang: sorted((ROOT / e.solutions).glob("*.ipynb")) for lang, e in mx.EDITIONS.items()}
CASES = [(lang, path.name) for lang, paths in SOLUTIONS.items() for path in paths
         if "### BEGIN SOLUTION" in path.read_text(encoding="utf-8")]
_FIGURES = ("image/png", "image/svg+xml")


def notebook(*sources: str) -> Any:
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"
    return nb


# ----------------------------------------------------------------------------- the stub


def test_an_answer_region_becomes_name_equals_ellipsis() -> None:
    nb = notebook("### BEGIN SOLUTION\nr = 3\nanswer = r * 2\n### END SOLUTION\ncheck('03.1', answer)")
    out = mx.make_exercise(nb, "t.ipynb")
    assert out.cells[1].source == "answer = ...  # YOUR CODE HERE\ncheck('03.1', answer)"
    assert "tags" not in out.cells[1].metadata  # nothing raises: no raises-exception tag
    zh = mx.make_exercise(nb, "t.ipynb", "zh")
    assert zh.cells[1].source == "answer = ...  # 在这里写你的代码\ncheck('03.1', answer)"


def test_names_read_by_later_cells_are_stubbed_and_scratch_names_are_not() -> None:
    nb = notebook("### BEGIN SOLUTION\ntmp = 1\nx, y = tmp, 2\n### END SOLUTION", "print(y)",
                  "### BEGIN SOLUTION\nprint('just a look')\n### END SOLUTION")
    out = mx.make_exercise(nb, "t.ipynb")
    assert out.cells[1].source == "y = ...  # YOUR CODE HERE"
    assert out.cells[3].source == "# YOUR CODE HERE"


def test_a_template_written_outside_the_region_is_kept() -> None:
    nb = notebook("text = '''\nrank 0:\n'''\n### BEGIN SOLUTION\ntext = 'rank 0: 0F0 0B0'\n### END SOLUTION\ncheck('01.5', text)")
    out = mx.make_exercise(nb, "t.ipynb")
    assert out.cells[1].source == "text = '''\nrank 0:\n'''\n# YOUR CODE HERE\ncheck('01.5', text)"


def test_a_region_inside_a_function_keeps_the_raise() -> None:
    nb = notebook("def f(p, m):\n    ### BEGIN SOLUTION\n    return p\n    ### END SOLUTION\n\ncheck('03.1', f)")
    out = mx.make_exercise(nb, "t.ipynb")
    assert out.cells[1].source == "def f(p, m):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n\ncheck('03.1', f)"
    assert "raises-exception" in out.cells[1].metadata["tags"]


def test_the_banner_is_for_a_learner() -> None:
    """Plain words (no emoji a font may lack), no contributor details (the generator, exercises/)."""
    for lang in mx.EDITIONS:
        banner = mx.make_exercise(notebook("x = 1"), "07_x.ipynb", lang).cells[0].source
        assert "\u2705" not in banner and "make_exercises" not in banner and "exercises/" not in banner, banner
        assert "solutions/" in banner and "07_x.ipynb" in banner


def test_an_empty_template_is_no_answer_yet() -> None:
    from bubblekit.course.checks import check

    assert check("03.5", "\nrank 0:\nrank 1:\nrank 2:\n").status == "missing"
    assert check("10.1", ...).status == "missing"


# ----------------------------------------------------------------------------- Run All, unanswered


def _has_figure(cell: Any) -> bool:
    return any(o.get("output_type") in ("display_data", "execute_result") and any(k in o.get("data", {}) for k in _FIGURES)
               for o in cell.get("outputs", []))


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "name"), CASES)
def test_run_all_unanswered_runs_to_the_end_and_draws_every_figure(lang: str, name: str) -> None:
    from nbclient import NotebookClient

    solution_path = ROOT / mx.EDITIONS[lang].solutions / name
    solution = mx.normalise(nbformat.read(solution_path, as_version=4))
    exercise = mx.make_exercise(solution, name, lang)
    stubs = mx.answer_stubs(solution)
    stubbed = {n for per_cell in stubs.values() for names in per_cell for n in names}
    folder = ROOT / mx.EDITIONS[lang].exercises
    client = NotebookClient(exercise, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder if folder.is_dir() else ROOT)}})
    client.execute()
    by_id = {c.get("id"): c for c in solution.cells}
    errors, missing_figures, graded = [], [], []
    for cell in exercise.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            if out.output_type == "error":
                errors.append(f"cell {cell.get('id')}: {out.ename}: {out.evalue}")
            text = "".join(str(v) for v in out.get("data", {}).values()) + str(out.get("text", ""))
            if " not yet \u2014" in text or " \u8fd8\u4e0d\u5bf9 \u2014" in text:
                graded.append(f"cell {cell.get('id')}")
        original = by_id.get(cell.get("id"))
        tree = mx._parse(cell.source)
        depends = "YOUR CODE" in cell.source or "\u5728\u8fd9\u91cc\u5199" in cell.source or bool(mx._loads(tree) & stubbed)
        if original is not None and _has_figure(original) and not depends and not _has_figure(cell):
            missing_figures.append(f"cell {cell.get('id')}")
    assert not errors, f"{lang} {name}: Run All stops early:\n" + "\n".join(errors)
    assert not graded, f"{lang} {name}: an unanswered exercise is graded 'not yet' instead of 'no answer yet': {graded}"
    assert not missing_figures, f"{lang} {name}: figures not drawn although they need no answer: {missing_figures}"
