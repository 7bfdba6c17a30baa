"""Bare Python environments for the tests of the browser edition (issue 27): no numpy, no matplotlib.

:func:`bare_environment` builds a virtual environment that truly lacks the plotting stack
(``python -m venv --without-pip`` and a path file naming only a shelf of links: bubblekit, sympy,
mpmath and the pure-Python packages asked for, taken from this interpreter's installation, with
their ``.dist-info`` metadata, as Pyodide installs a wheel), so a fresh interpreter there sees what
JupyterLite on Pyodide has: no network, nothing installed.
:func:`run_bare` runs code there, isolated from the user's site and ``PYTHONPATH``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import textwrap
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What every bare environment sees besides bubblekit.
CORE = ("sympy", "mpmath")


def locate(name: str) -> Path | None:
    """The folder of package ``name`` (or the file of a one-file module) in this interpreter, or None."""
    found = importlib.util.find_spec(name)
    if found is None or found.origin in (None, "built-in", "frozen"):
        return None
    origin = Path(found.origin)
    return origin.parent if found.submodule_search_locations else origin


def dist_info(name: str) -> Path | None:
    """The ``.dist-info`` folder of the distribution that provides top-level package ``name`` here, or None."""
    for dist_name in importlib.metadata.packages_distributions().get(name, []):
        dist = importlib.metadata.distribution(dist_name)
        for file in dist.files or ():
            if file.name == "METADATA" and file.parent.name.endswith(".dist-info"):
                return Path(str(dist.locate_file(file))).parent
    return None


def bare_environment(base: Path, packages: tuple[str, ...] = ()) -> Path:
    """A venv under ``base`` whose python sees bubblekit, sympy, mpmath and ``packages``, and nothing else.

    Raises ``LookupError`` naming a package of ``packages`` this interpreter does not have.
    """
    env = base / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    python = env / "bin" / "python"
    if not python.exists():  # Windows layout
        python = env / "Scripts" / "python.exe"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    shelf = base / "packages"
    shelf.mkdir()
    (shelf / "bubblekit").symlink_to(ROOT / "bubblekit", target_is_directory=True)
    for name in (*CORE, *packages):
        source = locate(name)
        if source is None:
            raise LookupError(f"{name} is not installed here, so the bare environment cannot have it")
        (shelf / source.name).symlink_to(source, target_is_directory=source.is_dir())
        info = dist_info(name)  # importlib.metadata.version(...) works there, as for a wheel Pyodide installed
        if info is not None and not (shelf / info.name).exists():
            (shelf / info.name).symlink_to(info, target_is_directory=True)
    Path(site, "bubblekit_pure.pth").write_text(str(shelf) + "\n", encoding="utf-8")
    return python


def run_bare(python: Path, code: str, timeout: float = 300, env: dict[str, str] | None = None) -> dict:
    """Run ``code`` in the bare environment (isolated from the user's site and PYTHONPATH); it prints JSON last.

    ``VIRTUAL_ENV`` is left out of its environment: an IPython shell started there would otherwise add that
    virtual environment's site-packages (the course's .venv, with matplotlib) to ``sys.path``.
    """
    env = {key: value for key, value in (os.environ if env is None else env).items() if key != "VIRTUAL_ENV"}
    done = subprocess.run([str(python), "-I", "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=python.parent, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
