"""Every course notebook is well-formed and self-contained.

For each notebook the course ships in notebooks/, solutions/, exercises/ and apps/ (in a git
checkout the tracked ones, as committed: a learner's scratch notebooks and saved runs are
not the course's, see bubblekit.course.workspace.course_notebooks):

* it is valid nbformat 4 and its kernel is ``python3`` (the kernel inside .venv);
* it imports bubblekit;
* every module a code cell imports is the standard library, bubblekit, or a package
  declared in pyproject.toml (dependencies or any extra); ``PROVIDED_BY`` maps import names
  that come with a declared package (``IPython`` with ipykernel/ipywidgets, ...);
* notebooks/ and solutions/ are committed executed: every non-empty code cell has an
  execution count, counts increase, and no cell stores an error (unless tagged
  ``raises-exception``).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import nbformat
import pytest

from bubblekit.course.workspace import COPY_SUFFIX, WORKSPACE_DIR, course_notebooks, exercise_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
#: The course's folders; each includes its Chinese edition in ``zh/`` (notebooks/zh, solutions/zh,
#: exercises/zh, apps/zh): course_notebooks lists the notebooks of subfolders too.
FOLDERS = ("notebooks", "solutions", "exercises", "apps")
EXECUTED_FOLDERS = ("notebooks", "solutions")
ZH = "zh"
SHIPPED = {nb.path: nb.text for nb in course_notebooks(ROOT, FOLDERS)}
NOTEBOOKS = sorted(SHIPPED)


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook as the course ships it."""
    return nbformat.reads(SHIPPED[path], as_version=4)

#: Import name -> the declared pyproject package that provides it.
PROVIDED_BY: dict[str, str] = {
    "IPython": "ipykernel",
    "ipykernel": "ipykernel",
    "mpl_toolkits": "matplotlib",
    "PIL": "matplotlib",
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "sympy": "sympy",
    "mpmath": "sympy",
    "ipywidgets": "ipywidgets",
    "torch": "torch",
    "nbformat": "nbformat",
    "hypothesis": "hypothesis",
    "pytest": "pytest",
    "playwright": "playwright",
    "voila": "voila",
}


def declared_packages() -> set[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return {re.split(r"[\s<>=!~;\[]", r.strip(), maxsplit=1)[0].lower().replace("_", "-") for r in reqs}


def code_of(cell_source: str) -> str:
    """A cell's Python, with IPython magics and shell escapes blanked out."""
    if cell_source.lstrip().startswith("%%"):
        return ""
    lines = []
    for line in cell_source.splitlines():
        stripped = line.lstrip()
        lines.append("" if stripped.startswith(("%", "!")) or stripped.endswith("?") else line)
    return "\n".join(lines)


def imported_modules(nb: nbformat.NotebookNode, name: str) -> set[str]:
    found: set[str] = set()
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(code_of(cell.source))
        except SyntaxError as err:
            pytest.fail(f"{name} cell {index}: not valid Python ({err.msg}, line {err.lineno})")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[rel(p) for p in NOTEBOOKS])
def test_valid_and_python3_kernel(path: Path) -> None:
    nb = read(path)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{rel(path)}: kernelspec name must be 'python3'"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[rel(p) for p in NOTEBOOKS])
def test_imports_bubblekit_and_only_declared_packages(path: Path) -> None:
    nb = read(path)
    modules = imported_modules(nb, rel(path))
    assert "bubblekit" in modules, f"{rel(path)} does not import bubblekit"
    declared = declared_packages()
    stdlib = set(sys.stdlib_module_names)
    for module in sorted(modules - stdlib - {"bubblekit", "__future__"}):
        package = PROVIDED_BY.get(module)
        assert package is not None and package in declared, (
            f"{rel(path)} imports {module!r}, which is neither stdlib, bubblekit nor declared in pyproject.toml "
            f"(declare it, or map it in tests/test_notebook_hygiene.py PROVIDED_BY)"
        )


EXECUTED = [p for p in NOTEBOOKS if p.relative_to(ROOT).parts[0] in EXECUTED_FOLDERS]


@pytest.mark.parametrize("path", EXECUTED, ids=[rel(p) for p in EXECUTED])
def test_committed_executed_without_errors(path: Path) -> None:
    nb = read(path)
    last = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        count = cell.get("execution_count")
        assert count is not None, f"{rel(path)} cell {index} is not executed (run the notebook and commit its outputs)"
        assert count > last, f"{rel(path)} cell {index}: execution count {count} after {last} (run it top to bottom)"
        last = count
        if "raises-exception" not in cell.metadata.get("tags", []):
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            assert not errors, f"{rel(path)} cell {index} stores an error: {errors[0].get('ename')}"
        # a figure drawn with a font that lacks its characters shows empty boxes (a Chinese
        # title in DejaVu Sans): matplotlib warns, and the warning would be stored here
        warned = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                  and "missing from font" in "".join(o.get("text", ""))]
        assert not warned, f"{rel(path)} cell {index} drew characters its font lacks (empty boxes): {warned[0]['text'][:200]}"


def test_provided_by_only_names_declared_packages() -> None:
    declared = declared_packages()
    for module, package in PROVIDED_BY.items():
        assert package in declared, f"PROVIDED_BY maps {module!r} to {package!r}, which pyproject.toml does not declare"


_LINK = re.compile(r"\]\(([^)\s#]+\.(?:ipynb|md|png|py))(?:#[^)]*)?\)")


def _links(text: str) -> list[str]:
    return [t for t in _LINK.findall(text) if "://" not in t]


def _target(base: Path, link: str) -> Path:
    """Where a link leads; a link into the learner's workspace/ resolves to the exercise it is copied from."""
    target = (base / link).resolve()
    workspace = (ROOT / WORKSPACE_DIR).resolve()
    # the copy of exercises/NN_topic.ipynb is workspace/NN_topic.exercises.ipynb (bubblekit workspace)
    copy = target.name.endswith(COPY_SUFFIX)
    if target.parent == workspace and copy:
        return ROOT / "exercises" / exercise_name(target.name)
    if target.parent == workspace / ZH and copy:
        return ROOT / "exercises" / ZH / exercise_name(target.name)
    return target


def test_relative_links_resolve() -> None:
    """Links like ``[01](01_what_is_a_bubble.ipynb)`` in notebooks' markdown and README point to files.

    (Links in the Chinese edition, which may point to a Chinese twin still being translated, are
    checked by tests/test_zh_parity.py.)"""
    broken: list[str] = []
    for path in NOTEBOOKS:
        if path.parent.name == ZH:
            continue
        nb = read(path)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                broken += [f"{rel(path)} -> {t}" for t in _links(cell.source) if not _target(path.parent, t).exists()]
    for doc in ("README.md", "README.zh-CN.md", "CONTRIBUTING.md", "docs/instructor_guide.md",
                "docs/instructor_guide.zh-CN.md", "benchmarks/README.md"):
        if (ROOT / doc).exists():
            text = (ROOT / doc).read_text(encoding="utf-8")
            base = (ROOT / doc).parent
            broken += [f"{doc} -> {t}" for t in _links(text) if not _target(base, t).exists()]
    assert not broken, "broken links:\n" + "\n".join(broken)
