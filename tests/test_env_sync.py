"""environment.yml (conda-forge) mirrors pyproject.toml's dependencies and "plots"/"course"/"classroom"/"nbgrader"/"test" extras.

Rules:

* every package of ``[project] dependencies`` and of the ``plots``, ``course``, ``classroom``, ``nbgrader``
  and ``test`` extras is
  a conda dependency of environment.yml with the same version specifier, and vice versa;
* the ``lab`` extra (torch), the optional ``slides`` extra (jupyterlab-rise) and ``lite`` (JupyterLite) are pip-only
  and must not be conda dependencies;
* environment.yml uses the conda-forge channel, ``python>=3.10`` (pyproject's
  ``requires-python``) and installs the package itself with ``pip: [-e .]``.

``NAME_MAP`` lists names that differ between PyPI and conda-forge (none today).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent

#: PyPI name -> conda-forge name, where they differ.
NAME_MAP: dict[str, str] = {}
#: Extras mirrored in environment.yml (the "lab" extra is pip-only: torch; "slides" is optional: RISE).
#: course.sh installs them apart (lab: course; setup --classroom, --nbgrader; test: all), conda all at once.
MIRRORED_EXTRAS = ("plots", "course", "classroom", "nbgrader", "test")
PIP_ONLY_EXTRAS = ("lab", "slides", "zh", "lite")  # torch; RISE; JupyterLab's zh-CN language pack (course.sh lab --lang zh); JupyterLite (course.sh lite)

_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str) -> tuple[str, str]:
    """``"numpy>=1.24; python_version<'3.11'"`` -> ``("numpy", ">=1.24")`` (markers dropped)."""
    match = _REQ.match(text)
    assert match, f"cannot read requirement {text!r}"
    return _norm(match.group(1)), match.group(3).replace(" ", "")


def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def environment() -> tuple[list[str], dict[str, str], list[str]]:
    """(channels, conda dependency name -> specifier, pip lines) read from environment.yml.

    A small reader for the file's plain structure (no YAML library needed).
    """
    channels: list[str] = []
    conda: dict[str, str] = {}
    pip: list[str] = []
    section = ""
    for raw in (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            continue
        item = line.strip()
        assert item.startswith("- "), f"environment.yml: unexpected line {raw!r}"
        value = item[2:].strip()
        if section == "channels":
            channels.append(value)
        elif section == "dependencies":
            if value == "pip:":
                section = "pip"
                continue
            name, spec = parse_requirement(value)
            assert name not in conda, f"environment.yml lists {name} twice"
            conda[name] = spec
        elif section == "pip":
            if raw.startswith("  - ") and not raw.startswith("      "):  # back at dependency level
                name, spec = parse_requirement(value)
                conda[name] = spec
                section = "dependencies"
            else:
                pip.append(value)
    return channels, conda, pip


def expected_conda() -> dict[str, str]:
    project = pyproject()["project"]
    reqs = list(project["dependencies"])
    for extra in MIRRORED_EXTRAS:
        reqs += project["optional-dependencies"][extra]
    wanted: dict[str, str] = {}
    for req in reqs:
        name, spec = parse_requirement(req)
        wanted[NAME_MAP.get(name, name)] = spec
    return wanted


def test_channel_python_and_pip_step() -> None:
    channels, conda, pip = environment()
    assert channels == ["conda-forge"]
    assert conda.get("python") == pyproject()["project"]["requires-python"].replace(" ", "")
    assert "pip" in conda
    assert pip == ["-e ."]


def test_every_pyproject_package_is_in_environment_yml() -> None:
    _, conda, _ = environment()
    for name, spec in expected_conda().items():
        assert name in conda, f"{name} is in pyproject.toml but not in environment.yml"
        assert conda[name] == spec, f"{name}: pyproject.toml says {spec!r}, environment.yml says {conda[name]!r}"


def test_every_environment_package_is_in_pyproject() -> None:
    _, conda, _ = environment()
    wanted = expected_conda()
    for name in conda:
        if name in ("python", "pip"):
            continue
        assert name in wanted, f"{name} is in environment.yml but not in pyproject.toml's dependencies/course/test"


def test_pip_only_extras_stay_out_of_conda() -> None:
    _, conda, _ = environment()
    extras = pyproject()["project"]["optional-dependencies"]
    assert set(extras) == set(MIRRORED_EXTRAS) | set(PIP_ONLY_EXTRAS), "a new extra: decide whether environment.yml mirrors it"
    for extra in PIP_ONLY_EXTRAS:
        for req in extras[extra]:
            name, _ = parse_requirement(req)
            assert NAME_MAP.get(name, name) not in conda, f"{name} (extra {extra!r}) is pip-only"


def test_reader_sees_every_line() -> None:
    """The small reader must not skip entries: count list items by hand."""
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    items = [ln for ln in text.splitlines() if ln.lstrip().startswith("- ") and not ln.lstrip().startswith("#")]
    channels, conda, pip = environment()
    assert len(items) == len(channels) + len(conda) + len(pip) + 1  # + the "- pip:" line
