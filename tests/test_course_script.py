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
    assert '--ServerApp.root_dir="$ROOT"' in text and 'default_url="/lab/tree/$start"' in text
    assert "start=notebooks/00_start_here.ipynb" in text
    assert "--course-notebooks" in text  # nbval gets the course's notebooks, not every *.ipynb
    assert "find " not in text  # no folder-wide notebook search that would pick up a learner's files


def test_makefile_targets_lose_nothing() -> None:
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    for phrase in ("rm ", "git clean", "git checkout", "git reset", "--keep-changed", "--include-changed"):
        assert phrase not in make, phrase


def test_lang_option_is_documented_and_checked() -> None:
    """``--lang zh``: documented, validated before any set-up, and writing only inside the venv
    (the behaviour is tested in test_learner_workflow.test_course_sh_lab_in_chinese_and_back)."""
    help_text = subprocess.run(["bash", str(ROOT / "course.sh"), "help"], capture_output=True, text=True).stdout
    assert "bash course.sh lab --lang zh" in help_text
    for args, message in ((["lab", "--lang", "fr"], "unknown language 'fr' for --lang; choose en or zh"),
                          (["setup", "--lang"], "--lang needs a value: en or zh"),
                          (["setup", "--port=1"], "unknown setup option '--port=1'; choose from --lang en|zh --slides")):
        run = subprocess.run(["bash", str(ROOT / "course.sh"), *args], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "BUBBLEKIT_VENV": "/nonexistent/venv"})
        assert run.returncode == 1 and message in run.stderr, (args, run.stderr)
    text = (ROOT / "course.sh").read_text(encoding="utf-8")
    assert 'dir="$VENV/share/jupyter/lab/settings/overrides.d"' in text  # JupyterLab's language: inside .venv
    assert '-e ".[zh]"' in text and "notebooks/zh/00_start_here.ipynb" in text
    assert "unset BUBBLEKIT_LANG" in text  # tests check each notebook in its own language
