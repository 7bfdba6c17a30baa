"""course.sh and .ci/run: the two entry points a newcomer and CI use (no set-up is run here)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [ROOT / "course.sh", ROOT / ".ci" / "run"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bash_syntax(script: Path) -> None:
    run = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_shellcheck_clean() -> None:
    run = subprocess.run(["shellcheck", *map(str, SCRIPTS)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_help_and_unknown_command() -> None:
    ok = subprocess.run(["bash", str(ROOT / "course.sh"), "help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "bash course.sh lab" in ok.stdout and "bash course.sh test" in ok.stdout
    assert "--no-browser" in ok.stdout  # lab takes JupyterLab options
    bad = subprocess.run(["bash", str(ROOT / "course.sh"), "bogus"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown command 'bogus'" in bad.stderr


def test_readme_gives_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash course.sh lab" in readme and "bash course.sh test" in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in ci and "bash course.sh test" in ci


def test_lab_serves_the_course_root_and_test_checks_only_shipped_notebooks() -> None:
    """The lines that matter (the behaviour is tested in test_learner_workflow / test_browser_course)."""
    text = (ROOT / "course.sh").read_text(encoding="utf-8")
    assert '--ServerApp.root_dir="$ROOT"' in text and "default_url=/lab/tree/notebooks/00_start_here.ipynb" in text
    assert "--course-notebooks" in text  # nbval gets the course's notebooks, not every *.ipynb
    assert "find " not in text  # no folder-wide notebook search that would pick up a learner's files


def test_makefile_targets_lose_nothing() -> None:
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    for phrase in ("rm ", "git clean", "git checkout", "git reset", "--keep-changed", "--include-changed"):
        assert phrase not in make, phrase
