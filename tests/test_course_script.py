"""course.sh and .ci/run: the two entry points a newcomer and CI use (no set-up is run here).

``course.sh lab`` itself runs here with a stand-in environment (its ``python`` is this one, its
``jupyter`` a small script that writes the runtime file a server writes, and records what it
was given): the address line, where Jupyter's state goes, the font check of ``--lang zh``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
    assert '--ServerApp.root_dir="$ROOT"' in text and 'default_url="/lab/tree/$start?reset"' in text
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
                          (["setup", "--port=1"], "unknown setup option '--port=1'; choose from --lang en|zh --torch --classroom --slides")):
        run = subprocess.run(["bash", str(ROOT / "course.sh"), *args], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "BUBBLEKIT_VENV": "/nonexistent/venv"})
        assert run.returncode == 1 and message in run.stderr, (args, run.stderr)
    text = (ROOT / "course.sh").read_text(encoding="utf-8")
    assert 'dir="$VENV/share/jupyter/lab/settings/overrides.d"' in text  # JupyterLab's language: inside .venv
    assert '-e ".[zh]"' in text and "notebooks/zh/00_start_here.ipynb" in text
    assert "unset BUBBLEKIT_LANG" in text  # tests check each notebook in its own language


# ------------------------------------------------------------------ course.sh lab with a stand-in jupyter


def _stamp(venv: Path, extra: str, course: Path) -> None:
    """The stamp course.sh writes once ``extra`` is installed (so it installs nothing)."""
    import hashlib

    key = hashlib.sha256((course / "pyproject.toml").read_bytes() + extra.encode() + sys.version.encode()).hexdigest()
    (venv / ".bubblekit-setup.d").mkdir(parents=True, exist_ok=True)
    (venv / ".bubblekit-setup.d" / extra).write_text(key + "\n")


def _mini_course(tmp: Path) -> tuple[Path, Path, Path]:
    """A course folder (course.sh, pyproject.toml, one lesson and one exercise) and a stand-in venv whose
    ``jupyter lab`` writes its runtime file (port 9137, token SECRET), records its environment, and stays 3 s."""
    course = tmp / "course"
    for sub in ("notebooks", "notebooks/zh", "exercises", "exercises/zh", "solutions"):
        (course / sub).mkdir(parents=True)
    shutil.copy(ROOT / "course.sh", course / "course.sh")
    shutil.copy(ROOT / "pyproject.toml", course / "pyproject.toml")
    nb = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    for rel in ("notebooks/00_start_here.ipynb", "notebooks/zh/00_start_here.ipynb", "exercises/01_a.ipynb",
                "exercises/zh/01_a.ipynb"):
        (course / rel).write_text(nb)
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    record = tmp / "jupyter-env.json"
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "bin" / "jupyter").write_text(
        "#!/bin/sh\n"
        '[ "$1" = lab ] || exit 0\n'
        f'"{sys.executable}" -c "import json, os; json.dump(dict(os.environ), open(\'{record}\', \'w\'))"\n'
        'printf \'{"port": 9137, "token": "SECRET", "hostname": "localhost", "base_url": "/", "secure": false}\' '
        '> "$JUPYTER_RUNTIME_DIR/jpserver-$$.json"\n'
        "sleep 3\n"
    )
    for exe in ("python", "jupyter"):
        (venv / "bin" / exe).chmod(0o755)
    _stamp(venv, "course", course)
    return course, venv, record


def _lab_env(venv: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JUPYTER_RUNTIME_DIR", "JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR", "BUBBLEKIT_CHECK_WORKTREE")}
    env.update(BUBBLEKIT_VENV=str(venv), PYTHONPATH=str(ROOT), **extra)
    return env


def test_lab_prints_the_address_with_the_users_token(tmp_path: Path) -> None:
    """``course.sh lab --no-browser --port=P --IdentityProvider.token=T`` prints one line with
    http://127.0.0.1:P/...token=T, though Jupyter itself (log level WARN) prints none for a chosen token."""
    course, venv, record = _mini_course(tmp_path)
    run = subprocess.run(["bash", "course.sh", "lab", "--no-browser", "--port=9137", "--IdentityProvider.token=SECRET"],
                         cwd=course, env=_lab_env(venv), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [ln for ln in run.stdout.splitlines() if "http://127.0.0.1:9137/" in ln]
    assert len(lines) == 1 and "token=SECRET" in lines[0], run.stdout
    assert "/lab/tree/notebooks/00_start_here.ipynb?reset&token=SECRET" in lines[0]


def test_lab_keeps_jupyters_state_inside_the_venv(tmp_path: Path) -> None:
    """JupyterLab's workspaces (open tabs), the runtime files and IPython's profile go into .venv (or, for
    the runtime files of a venv whose path is too long for a kernel's socket, into /tmp)."""
    course, venv, record = _mini_course(tmp_path)
    run = subprocess.run(["bash", "course.sh", "lab", "--no-browser"], cwd=course, env=_lab_env(venv),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    env = json.loads(record.read_text())
    for name in ("JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR"):
        assert Path(env[name]).resolve().is_relative_to(venv.resolve()), (name, env[name])
    runtime = Path(env["JUPYTER_RUNTIME_DIR"])
    assert runtime.resolve().is_relative_to(venv.resolve()) or runtime.name == f"bubblekit-{os.getuid()}", runtime
    assert len(str(runtime)) <= 50
    settings = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "bubblekit-course.json"
    notification = json.loads(settings.read_text())["@jupyterlab/apputils-extension:notification"]
    assert notification == {"fetchNews": "false", "checkForUpdates": False}  # no news toast
    server = json.loads((venv / "etc" / "jupyter" / "jupyter_config.json").read_text())["ServerApp"]
    ws = server["tornado_settings"]
    assert ws["ws_ping_timeout"] <= ws["ws_ping_interval"]  # no websocket_ping_timeout warning
    assert (course / "workspace" / "01_a.exercises.ipynb").is_file()


def _empty_fontconfig(tmp: Path) -> Path:
    """A fontconfig configuration with one empty font folder: no font at all, so none for Chinese."""
    (tmp / "fonts").mkdir()
    conf = tmp / "fonts.conf"
    conf.write_text('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
                    f"<fontconfig><dir>{tmp / 'fonts'}</dir><cachedir>{tmp / 'fc-cache'}</cachedir></fontconfig>\n")
    return conf


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="fontconfig (fc-list) not installed")
def test_lab_in_chinese_warns_when_the_browser_has_no_font_for_chinese(tmp_path: Path) -> None:
    """With a fontconfig that has no CJK font, ``course.sh lab --lang zh`` says how to get one; English does not."""
    course, venv, _ = _mini_course(tmp_path)
    _stamp(venv, "zh", course)
    env = _lab_env(venv, FONTCONFIG_FILE=str(_empty_fontconfig(tmp_path)))
    run = subprocess.run(["bash", "course.sh", "lab", "--lang", "zh", "--no-browser"], cwd=course, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "fc-list :lang=zh" in run.stderr and "apt-get install fonts-noto-cjk" in run.stderr, run.stderr
    assert "macOS" in run.stderr and "Windows" in run.stderr
    english = subprocess.run(["bash", "course.sh", "lab", "--no-browser"], cwd=course, env=env,
                             capture_output=True, text=True, timeout=120)
    assert english.returncode == 0 and "fonts-noto-cjk" not in english.stderr, english.stderr


def test_setup_torch_is_pinned_and_lab_installs_no_test_tools() -> None:
    """``lab`` installs the course extra only; ``setup --torch`` the pinned torch (never a bare or newer one)."""
    text = (ROOT / "course.sh").read_text(encoding="utf-8")
    assert 'LAB_EXTRAS="course"' in text and 'setup "$LAB_EXTRAS"' in text
    assert 'setup "$TEST_EXTRAS,lab"' in text  # test installs everything it checks, torch too
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    run = subprocess.run(["bash", "-c", f'source <(sed -n "/^torch_pin()/,/^}}/p" {ROOT / "course.sh"}); torch_pin'],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.stdout.strip() == "torch==2.13.0" and '"torch==2.13.0"' in pyproject
    course_extra = pyproject.split("course = [", 1)[1].split("]", 1)[0]
    for heavy in ("torch", "playwright", "pytest", "voila", "nbgrader", "mypy"):
        assert heavy not in course_extra


@pytest.mark.parametrize("local_cpu_build", [True, False])
def test_setup_torch_takes_the_cpu_build_without_cuda(tmp_path: Path, local_cpu_build: bool) -> None:
    """``setup --torch`` on Linux without nvidia-smi: the pinned torch, from a CPU build pip already finds
    (a local wheel folder) or else with PyTorch's CPU index as an extra index; never a bare ``torch``."""
    if sys.platform != "linux":
        pytest.skip("the CPU index is chosen on Linux only")
    course, venv, _ = _mini_course(tmp_path)
    pip_log = tmp_path / "pip.txt"
    found = "Would install torch-2.13.0+cpu" if local_cpu_build else ""
    (venv / "bin" / "python").write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
        '  case "$*" in *--dry-run*) echo "' + found + '"; exit 0 ;; esac\n'
        f'  echo "$@" >> "{pip_log}"; exit 0\n'
        "fi\n"
        f'exec "{sys.executable}" "$@"\n')
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has CUDA (nvidia-smi): PyPI's build is the one to take")
    env = _lab_env(venv)
    run = subprocess.run(["bash", "course.sh", "setup", "--torch"], cwd=course, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    torch_lines = [ln for ln in pip_log.read_text().splitlines() if "torch" in ln]
    assert len(torch_lines) == 1 and "torch==2.13.0" in torch_lines[0].split(), torch_lines
    if local_cpu_build:
        assert "--extra-index-url" not in torch_lines[0]
    else:
        assert "--extra-index-url https://download.pytorch.org/whl/cpu" in torch_lines[0]
        assert "CPU-only build" in run.stdout


def test_lab_speaks_the_learners_language(tmp_path: Path) -> None:
    """``course.sh lab --lang zh`` says where it opens and where the exercises are in Chinese; without it, in English."""
    course, venv, _ = _mini_course(tmp_path)
    _stamp(venv, "zh", course)
    env = _lab_env(venv)
    zh = subprocess.run(["bash", "course.sh", "lab", "--lang", "zh", "--no-browser"], cwd=course, env=env,
                        capture_output=True, text=True, timeout=120)
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert "在这个目录打开 JupyterLab，从 notebooks/zh/00_start_here.ipynb 开始；你的练习在 workspace/zh/" in zh.stdout
    en = subprocess.run(["bash", "course.sh", "lab", "--no-browser"], cwd=course, env=env,
                        capture_output=True, text=True, timeout=120)
    assert en.returncode == 0, en.stdout + en.stderr
    assert "opening JupyterLab on this folder at notebooks/00_start_here.ipynb" in en.stdout
    assert "在这个目录" not in en.stdout
