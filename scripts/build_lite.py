#!/usr/bin/env python3
"""Build the course's no-install edition: a static JupyterLite site in ``_site/``.

    python scripts/build_lite.py                 # build _site/ (bash course.sh lite runs this)
    python scripts/build_lite.py --output DIR    # ... somewhere else
    python scripts/build_lite.py --offline       # use only what .lite-cache/ already holds

The site runs Python in the browser (Pyodide): nothing to install, any static web server can
serve it (``python -m http.server -d _site``). Everything in it comes from package registries
and from this repository:

* JupyterLite itself (``jupyterlite-core`` and ``jupyterlite-pyodide-kernel`` 0.8.x, the
  ``lite`` extra of pyproject.toml) and the ipywidgets lab extension (``jupyterlab-widgets``),
  all from the environment that runs this script;
* Pyodide's core files (the interpreter and its standard library) from the npm package
  ``pyodide``, at the version the Pyodide kernel expects (``npm pack``): no package wheels of
  Pyodide's own (numpy, matplotlib ... are not shipped);
* the pure-Python wheels the kernel and the lessons need (IPython and its dependencies, comm,
  micropip, sympy, mpmath, ipywidgets), pinned in ``WHEELS``, from PyPI (``pip download``);
* a wheel of bubblekit built from this repository (``pip wheel``).

Pyodide finds packages through its ``pyodide-lock.json``; the npm package's lock lists
Pyodide's own builds, whose hashes differ from PyPI's wheels, so the build writes a trimmed
lock that lists exactly the wheels it ships (``trim_lock``), and points the kernel at the local
Pyodide and that lock (``lite_config``) with the PyPI fallback off: the site fetches nothing
from another host.

The notebooks: lessons 00-05, exercises 01-05 and the three classroom pages (``APPS``:
``apps/explorer.ipynb``, the pipeline explorer and the schedule builder; ``apps/builder.ipynb``,
the schedule builder; ``apps/frontier.ipynb``, the memory/bubble frontier), English and Chinese,
keep the repository's layout (``notebooks/``, ``notebooks/zh/``, ``exercises/``,
``exercises/zh/``, ``apps/``, ``apps/zh/``, so their links between each other work). In the
browser the explorers draw SVG (``picture="svg"``: no matplotlib there). Each gets two cells at
the top (``prepare_notebook``): a note that the learner's work is kept in this browser's storage
and a cell that installs bubblekit (``%pip install bubblekit ipywidgets``: the bundled wheels).
Lesson 06 (torch, trace files) becomes a short page that sends the learner to JupyterLab
(``lesson06_page``).

Downloads are cached in ``.lite-cache/`` (gitignored), so a rebuild needs no network. At the
end the script prints the site's size and file count.
"""

from __future__ import annotations

import argparse
import copy
import email.parser
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the course's bubblekit, run from anywhere
from bubblekit.i18n import register, translate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".lite-cache"
SITE = ROOT / "_site"

#: the Pyodide version jupyterlite-pyodide-kernel 0.8.x is built for (its constants.PYODIDE_VERSION)
DEFAULT_PYODIDE_VERSION = "314.0.6"

#: the files of the npm package ``pyodide`` that the site needs: the loader, the interpreter, the
#: standard library (its pyodide-lock.json is read and replaced by a trimmed one)
PYODIDE_CORE = ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "package.json")

#: pure-Python wheels from PyPI: what the Pyodide kernel installs when it starts (micropip, comm,
#: IPython and jedi with their dependencies) and what the lessons import (sympy, ipywidgets).
#: Versions as in Pyodide's own lock where PyPI has them (mpmath: sympy 1.14 wants < 1.4).
WHEELS: dict[str, str] = {
    "micropip": "0.11.1",
    "comm": "0.2.3",
    "ipython": "9.12.0",
    "ipython-pygments-lexers": "1.1.1",
    "asttokens": "3.0.1",
    "decorator": "5.2.1",
    "executing": "2.2.1",
    "matplotlib-inline": "0.2.1",
    "prompt-toolkit": "3.0.52",
    "pure-eval": "0.2.3",
    "pygments": "2.20.0",
    "stack-data": "0.6.3",
    "traitlets": "5.14.3",
    "wcwidth": "0.6.0",
    "jedi": "0.19.2",
    "parso": "0.8.6",
    "sympy": "1.14.0",
    "mpmath": "1.3.0",
    "ipywidgets": "8.1.9",
}

#: requirements that are not in the lock on purpose: the kernel's own wheels (served by piplite
#: from the kernel extension: ipykernel, pyodide-kernel, piplite, and a stub widgetsnbextension)
#: and ipywidgets' JavaScript carriers (the lab extension comes with the site; Python never
#: imports them)
NOT_LOCKED = frozenset({"ipykernel", "pyodide-kernel", "piplite", "widgetsnbextension", "jupyterlab-widgets"})

#: the lab extensions the site ships (from the environment's share/jupyter/labextensions)
LAB_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager")

#: the notebooks of the site, as paths inside the repository (and inside the site's files)
LESSONS = (
    "00_start_here.ipynb",
    "01_what_is_a_bubble.ipynb",
    "02_why_bubbles_appear.ipynb",
    "03_the_bubble_formula.ipynb",
    "04_schedules_compared.ipynb",
    "05_shrinking_bubbles.ipynb",
)
EXERCISES = LESSONS[1:]
#: the classroom pages (apps/ and apps/zh/): explorer, schedule builder, memory/bubble frontier
APPS = ("explorer.ipynb", "builder.ipynb", "frontier.ipynb")
LESSON_06 = "06_profiling_practice.ipynb"

#: the install cell's code: piplite's %pip finds bubblekit in the site's pyodide-lock.json
INSTALL = "%pip install bubblekit ipywidgets"  # ipywidgets: the explorers (bubblekit's core needs neither)

#: the Pyodide kernel's name in JupyterLite (the lessons name ipykernel's python3)
KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}
PYODIDE_KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"

# The learner-facing words the build adds to the notebooks, in both languages (bubblekit's
# message catalogue: bubblekit.i18n)
TEXT: dict[str, dict[str, str]] = {
    "build_lite.storage": {
        "en": (
            "> **No-install edition.** This notebook runs in your browser: Python (Pyodide) runs on this page "
            "and nothing is installed on your computer. **Your work is kept in this browser's storage** "
            "(for this site only): it is still here when you come back in the same browser, but not in "
            "another browser or another computer, and clearing the site's data deletes it. To keep a copy, "
            "download the notebook (File ▸ Download). Here bubblekit draws its pictures as SVG in the browser, "
            "and the explorers give each rank's peak memory as a readout instead of memory curves; the "
            "outputs saved below come from the full course in JupyterLab (`bash course.sh lab`)."
        ),
        "zh": (
            "> **免安装版。** 这个笔记本在你的浏览器里运行：Python（Pyodide）就在这个网页里执行，你的电脑上"
            "什么都不用装。**你的改动保存在这个浏览器的本地存储里**（只属于这个网站）：用同一个浏览器回来时"
            "改动还在，换一个浏览器或另一台电脑就看不到；清除这个网站的数据会把它们删掉。想留一份副本，"
            "请下载笔记本（“文件 ▸ 下载”）。在这里，bubblekit 在浏览器里把图画成 SVG，探索器不画显存曲线，"
            "改在读数里给出每个 rank 的显存峰值；下面保存的输出来自在 JupyterLab 里运行的完整课程"
            "（`bash course.sh lab`）。"
        ),
    },
    "build_lite.install": {  # the install cell's comment (INSTALL follows it)
        "en": "# No-install edition: install bubblekit into the browser's Python (its wheel comes with this site)",
        "zh": "# 免安装版：把 bubblekit 装进浏览器里的 Python（安装包随网站一起提供）",
    },
    "build_lite.lesson06": {
        "en": (
            "# 06 · Profiling practice\n\n"
            "This lesson needs **JupyterLab**, not the browser edition: it reads the profiler trace files "
            "of real pipeline runs that ship with the course and runs `torch.distributed.pipelining`, and "
            "neither torch nor those files run in the browser.\n\n"
            "Get the course and open the lesson in JupyterLab:\n\n"
            "```bash\n"
            "bash course.sh lab                 # set up once, then open JupyterLab\n"
            "bash course.sh setup --torch       # add torch for the lesson's real run\n"
            "```\n\n"
            "and open `notebooks/06_profiling_practice.ipynb`. Lessons 00-05, their exercises and the "
            "classroom pages (`apps/`: the explorer, the schedule builder, the memory/bubble frontier) work "
            "here in the browser."
        ),
        "zh": (
            "# 06 · 性能画像实战\n\n"
            "这一课需要 **JupyterLab**，浏览器版跑不了：它要读取课程自带的真实流水线运行的 trace 文件，"
            "还要运行 `torch.distributed.pipelining`，而 torch 和这些文件都不能在浏览器里运行。\n\n"
            "请下载课程，在 JupyterLab 里打开这一课：\n\n"
            "```bash\n"
            "bash course.sh lab --lang zh       # 第一次先完成配置，然后打开 JupyterLab\n"
            "bash course.sh setup --torch       # 再装上 torch，用于本课的真实运行\n"
            "```\n\n"
            "然后打开 `notebooks/zh/06_profiling_practice.ipynb`。第 00 到 05 课、它们的练习和课堂页面"
            "（`apps/zh/`：流水线探索器、调度构建器、显存–气泡前沿）都可以在浏览器里完成。"
        ),
    },
}

register(TEXT)

#: the environment markers of Pyodide's interpreter (for the wheels' Requires-Dist)
PYODIDE_MARKERS = {
    "os_name": "posix",
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "platform_machine": "wasm32",
    "platform_release": "",
    "platform_version": "",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "implementation_version": "3.14.2",
    "python_version": "3.14",
    "python_full_version": "3.14.2",
    "extra": "",
}


def say(message: str) -> None:
    print(f"[lite] {message}", flush=True)


def normalize(name: str) -> str:
    """A project name as PEP 503 normalises it (``Prompt_Toolkit`` -> ``prompt-toolkit``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------------------- wheels


@dataclass(frozen=True)
class Wheel:
    """One wheel the site ships: what pyodide-lock.json says about it."""

    name: str
    version: str
    file_name: str
    sha256: str
    requires: tuple[str, ...] = ()  # Requires-Dist lines, markers included
    imports: tuple[str, ...] = ()  # top-level modules

    @property
    def key(self) -> str:
        return normalize(self.name)


def wheel_imports(names: Iterable[str]) -> tuple[str, ...]:
    """The top-level importable names of a wheel, from the paths inside it."""
    found: set[str] = set()
    for path in names:
        top, _, rest = path.partition("/")
        if top.endswith((".dist-info", ".data")) or not top:
            continue
        if rest:
            if top.isidentifier():
                found.add(top)
        elif top.endswith(".py") and top[:-3].isidentifier():
            found.add(top[:-3])
    return tuple(sorted(found))


def read_wheel(path: Path) -> Wheel:
    """Read a wheel's name, version, requirements and top-level modules, and hash the file."""
    with zipfile.ZipFile(path) as whl:
        names = whl.namelist()
        meta_name = next(n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(whl.read(meta_name).decode("utf-8"), headersonly=True)
        top_level = meta_name.replace("METADATA", "top_level.txt")
        if top_level in names:
            imports = tuple(sorted({line.strip().split("/")[0] for line in whl.read(top_level).decode().splitlines()
                                    if line.strip() and not line.strip().startswith("_")} or wheel_imports(names)))
        else:
            imports = wheel_imports(names)
    return Wheel(
        name=str(meta["Name"]),
        version=str(meta["Version"]),
        file_name=path.name,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        requires=tuple(str(r) for r in meta.get_all("Requires-Dist") or ()),
        imports=imports,
    )


def runtime_depends(requires: Iterable[str], markers: Mapping[str, str] = PYODIDE_MARKERS) -> list[str]:
    """The normalised names a wheel needs in Pyodide: markers evaluated, extras left out."""
    from packaging.requirements import Requirement

    out: list[str] = []
    for line in requires:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(dict(markers)):
            continue
        name = normalize(req.name)
        if name not in out:
            out.append(name)
    return out


# ---------------------------------------------------------------------------- the lock


def lock_entry(wheel: Wheel, depends: list[str]) -> dict[str, Any]:
    """One package of pyodide-lock.json, in the layout of Pyodide's own entries."""
    return {
        "name": wheel.name,
        "version": wheel.version,
        "file_name": wheel.file_name,
        "install_dir": "site",
        "sha256": wheel.sha256,
        "package_type": "package",
        "imports": list(wheel.imports),
        "depends": depends,
        "unvendored_tests": False,
    }


def trim_lock(upstream: Mapping[str, Any], wheels: Iterable[Wheel], *,
              not_locked: Iterable[str] = NOT_LOCKED, markers: Mapping[str, str] = PYODIDE_MARKERS) -> dict[str, Any]:
    """A pyodide-lock.json that lists exactly ``wheels``.

    The runtime's ``info`` (Python version, ABI, platform) is kept from Pyodide's own lock; its
    packages are all dropped (their files are not shipped, and their hashes are not those of
    PyPI's wheels). Each wheel's ``depends`` are its requirements in Pyodide (``runtime_depends``)
    less ``not_locked``; a requirement that is neither shipped nor in ``not_locked`` is an error,
    so the lock never names a package that the site does not have.
    """
    wheels = list(wheels)
    shipped = {w.key for w in wheels}
    skip = {normalize(n) for n in not_locked}
    packages: dict[str, Any] = {}
    missing: list[str] = []
    for wheel in sorted(wheels, key=lambda w: w.key):
        if wheel.key in packages:
            raise ValueError(f"two wheels of {wheel.key}")
        depends = []
        for dep in runtime_depends(wheel.requires, markers):
            if dep in shipped:
                depends.append(dep)
            elif dep not in skip:
                missing.append(f"{wheel.key} needs {dep}")
        packages[wheel.key] = lock_entry(wheel, depends)
    if missing:
        raise ValueError("the lock would name packages the site does not ship: " + "; ".join(missing))
    return {"info": dict(upstream.get("info", {})), "packages": packages}


# ---------------------------------------------------------------------------- notebooks


def _source(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def lite_cells(lang: str) -> list[dict[str, Any]]:
    """The two cells the build puts at the top of each notebook: the storage note and the install cell."""
    return [
        {"cell_type": "markdown", "id": "lite-storage", "metadata": {"tags": ["lite"]},
         "source": _source(translate("build_lite.storage", lang))},
        {"cell_type": "code", "id": "lite-install", "metadata": {"tags": ["lite"]}, "execution_count": None,
         "outputs": [], "source": _source(translate("build_lite.install", lang) + "\n" + INSTALL)},
    ]


def prepare_notebook(nb: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """The lite copy of a course notebook: the two lite cells first, the Pyodide kernel.

    The lesson's own cells, outputs included, are kept as they are; a notebook that already has
    the lite cells (a second run) gets them once.
    """
    if lang not in ("en", "zh"):
        raise ValueError(f"unknown language {lang!r}")
    out = copy.deepcopy(dict(nb))
    cells = [c for c in out.get("cells", []) if c.get("id") not in ("lite-storage", "lite-install")]
    out["cells"] = lite_cells(lang) + cells
    meta = out.setdefault("metadata", {})
    meta["kernelspec"] = dict(KERNELSPEC)
    meta.setdefault("language_info", {"name": "python"})
    out["nbformat"], out["nbformat_minor"] = 4, max(5, int(out.get("nbformat_minor", 5)))
    return out


def lesson06_page(lang: str) -> dict[str, Any]:
    """Lesson 06's page in the site: markdown only, it sends the learner to JupyterLab."""
    return {
        "cells": [{"cell_type": "markdown", "id": "lite-lesson06", "metadata": {}, "source": _source(translate("build_lite.lesson06", lang))}],
        "metadata": {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def site_notebooks(root: Path = ROOT) -> list[tuple[str, str, Path | None]]:
    """(path in the site, language, source notebook or None for lesson 06's page) of every notebook."""
    out: list[tuple[str, str, Path | None]] = []
    for lang, sub in (("en", ""), ("zh", "zh/")):
        out += [(f"notebooks/{sub}{n}", lang, root / "notebooks" / sub / n) for n in LESSONS]
        out.append((f"notebooks/{sub}{LESSON_06}", lang, None))
        out += [(f"exercises/{sub}{n}", lang, root / "exercises" / sub / n) for n in EXERCISES]
        out += [(f"apps/{sub}{n}", lang, root / "apps" / sub / n) for n in APPS]
    return out


def write_contents(dest: Path, root: Path = ROOT) -> int:
    """Write the site's notebooks under ``dest``; returns how many."""
    for rel, lang, src in site_notebooks(root):
        nb = lesson06_page(lang) if src is None else prepare_notebook(json.loads(src.read_text(encoding="utf-8")), lang)
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(site_notebooks(root))


# ---------------------------------------------------------------------------- configuration


def lite_config(lock_url: str = "./static/pyodide/pyodide-lock.json") -> dict[str, Any]:
    """jupyter-lite.json of the site: the local Pyodide and lock, and no PyPI fallback."""
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "Pipeline Bubbles",
            "litePluginSettings": {
                PYODIDE_KERNEL_PLUGIN: {
                    "pyodideUrl": "./static/pyodide/pyodide.mjs",
                    "disablePyPIFallback": True,
                    "loadPyodideOptions": {"lockFileURL": lock_url},
                },
            },
        },
    }


#: JupyterLab settings of the site: no news or update check (a classroom may be offline)
SETTINGS_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # every cell drawn when a lesson opens (lessons are a few dozen cells): the browser's find (Ctrl+F) sees the
    # whole lesson, and a widget output is live without scrolling to it first
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}


def build_config(output: Path, contents: Path, labextensions: Path) -> dict[str, Any]:
    """jupyter_lite_config.json: where the site goes, its contents, and only the extensions it ships."""
    return {
        "FederatedExtensionAddon": {"extra_labextensions_path": [str(labextensions)]},
        "LiteBuildConfig": {
            "output_dir": str(output),
            "contents": [str(contents)],
            "apps": ["lab", "notebooks", "tree"],
            "no_sourcemaps": True,
            # the environment may hold other lab extensions (nbgrader, Voila ...): the site takes
            # only LAB_EXTENSIONS, copied into the lite folder's labextensions/
            "ignore_sys_prefix": ["federated_extensions"],
        },
    }


# ---------------------------------------------------------------------------- fetching


@dataclass
class Fetcher:
    """Downloads into the cache; with ``offline``, only the cache is read."""

    cache: Path = CACHE
    offline: bool = False
    log: list[str] = field(default_factory=list)

    def run(self, args: list[str]) -> None:
        if self.offline:
            raise SystemExit(f"--offline, and not in {self.cache}: {' '.join(args)}")
        say(" ".join(args))
        subprocess.run(args, check=True)

    def pyodide(self, version: str) -> Path:
        """The npm package pyodide@VERSION, unpacked: its folder."""
        folder = self.cache / "npm" / f"pyodide-{version}"
        if (folder / "pyodide-lock.json").is_file():
            return folder
        tgz = self.cache / "npm" / f"pyodide-{version}.tgz"
        if not tgz.is_file():
            if shutil.which("npm") is None:
                raise SystemExit("npm is needed to fetch Pyodide's core files (Debian: apt-get install npm)")
            tgz.parent.mkdir(parents=True, exist_ok=True)
            self.run(["npm", "pack", f"pyodide@{version}", "--pack-destination", str(tgz.parent), "--silent"])
        tmp = Path(tempfile.mkdtemp(dir=tgz.parent))
        with tarfile.open(tgz) as tar:
            if hasattr(tarfile, "data_filter"):  # Python 3.10.12+: no paths outside tmp
                tar.extractall(tmp, filter="data")
            else:  # pragma: no cover
                tar.extractall(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        (tmp / "package").rename(folder)
        tmp.rmdir()
        return folder

    def wheels(self, pins: Mapping[str, str]) -> list[Path]:
        """The pinned pure-Python wheels, from PyPI (pip download) into the cache."""
        folder = self.cache / "wheels"
        folder.mkdir(parents=True, exist_ok=True)

        def find(name: str, version: str) -> Path | None:
            for path in folder.glob("*.whl"):
                dist, ver = path.name.split("-")[:2]
                if normalize(dist) == normalize(name) and ver == version:
                    return path
            return None

        todo = [f"{n}=={v}" for n, v in pins.items() if find(n, v) is None]
        if todo:
            self.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                      "--python-version", "3.14", "--implementation", "py", "--abi", "none", "--platform", "any",
                      "--dest", str(folder), *todo])
        out = []
        for name, version in pins.items():
            path = find(name, version)
            if path is None:
                raise SystemExit(f"no wheel of {name}=={version} in {folder}")
            out.append(path)
        return out


def _backend_here() -> bool:
    """Can this environment build the wheel itself (setuptools >= 70.1, or >= 68 with wheel)?"""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import Version

    try:
        tools = Version(version("setuptools"))
    except PackageNotFoundError:
        return False
    if tools >= Version("70.1"):
        return True
    try:
        version("wheel")
    except PackageNotFoundError:
        return False
    return tools >= Version("68")


def build_bubblekit_wheel(dest: Path, root: Path = ROOT) -> Path:
    """A wheel of bubblekit from this repository's pyproject.toml (pure Python).

    It is built from a fresh copy of the package's sources (pyproject.toml, README.md,
    bubblekit/), so nothing of an earlier build (setuptools' build/lib) can slip into it and
    nothing is written into the repository.
    """
    shutil.rmtree(dest, ignore_errors=True)
    src = dest / "src"
    shutil.copytree(root / "bubblekit", src / "bubblekit", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, src / name)
    args = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dest), str(src)]
    if _backend_here():
        args.insert(5, "--no-build-isolation")  # no isolated build: nothing downloaded
    say("building the bubblekit wheel")
    subprocess.run(args, check=True, cwd=src)
    shutil.rmtree(src)
    (wheel,) = dest.glob("bubblekit-*.whl")
    return wheel.rename(wheel.with_name(tagged_wheel_name(wheel.name, wheel.read_bytes())))


def tagged_wheel_name(name: str, data: bytes) -> str:
    """The wheel's file name with a build tag from its content (``bubblekit-0.1.0-0<sha8>-py3-none-any.whl``).

    A browser that kept an earlier build of bubblekit in its HTTP cache would hand Pyodide a file
    whose sha256 is not the lock's; a new name for new content never meets a stale copy.
    """
    parts = name[: -len(".whl")].split("-")
    if len(parts) == 6:  # already has a build tag
        del parts[2]
    dist, version, *tags = parts
    return "-".join([dist, version, "0" + hashlib.sha256(data).hexdigest()[:8], *tags]) + ".whl"


# ---------------------------------------------------------------------------- the build


def kernel_pyodide_version() -> str:
    """The Pyodide version the installed jupyterlite-pyodide-kernel expects."""
    try:
        from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION
    except ImportError:
        return DEFAULT_PYODIDE_VERSION
    return str(PYODIDE_VERSION)


def check_lite_installed() -> None:
    missing = []
    for mod in ("jupyterlite_core", "jupyterlite_pyodide_kernel", "packaging"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: install the lite extra (bash course.sh lite does it; "
                         "or pip install -e \".[lite]\")")


def labextension_dirs() -> dict[str, Path]:
    """The lab extensions the site ships, from this environment's share/jupyter/labextensions."""
    found: dict[str, Path] = {}
    for base in (Path(sys.prefix), Path(sys.base_prefix)):
        for name in LAB_EXTENSIONS:
            path = base / "share" / "jupyter" / "labextensions" / name
            if name not in found and (path / "package.json").is_file():
                found[name] = path
    lacking = [n for n in LAB_EXTENSIONS if n not in found]
    if lacking:
        raise SystemExit(f"lab extensions not installed in {sys.prefix}: {', '.join(lacking)} (the lite extra has them)")
    return found


def check_widgets(wheels: Iterable[Wheel]) -> None:
    """ipywidgets (Python, in the browser) and jupyterlab-widgets (the lab extension, here) must agree."""
    from importlib.metadata import version as installed

    from packaging.requirements import Requirement

    version = installed("jupyterlab_widgets")
    for wheel in wheels:
        if wheel.key != "ipywidgets":
            continue
        for line in wheel.requires:
            req = Requirement(line)
            if normalize(req.name) == "jupyterlab-widgets" and not req.specifier.contains(version, prereleases=True):
                raise SystemExit(f"ipywidgets {wheel.version} wants jupyterlab_widgets{req.specifier}, "
                                 f"the lab extension is {version}: change WHEELS or the lite extra")


def stage_pyodide(npm_folder: Path, wheels: list[Path], dest: Path) -> dict[str, Any]:
    """Pyodide's core files, the wheels and the trimmed lock into ``dest``; returns the lock."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_CORE:
        shutil.copy2(npm_folder / name, dest / name)
    infos = []
    for path in wheels:
        shutil.copy2(path, dest / path.name)
        infos.append(read_wheel(path))
    upstream = json.loads((npm_folder / "pyodide-lock.json").read_text(encoding="utf-8"))
    lock = trim_lock(upstream, infos)
    (dest / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return lock


def site_size(folder: Path) -> tuple[int, int]:
    """(bytes, files) of a folder."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def check_output(output: Path, force: bool = False) -> None:
    """``output`` is replaced by the build: refuse a file, and a non-empty folder that is not an earlier
    site (no jupyter-lite.json) unless ``force`` -- a folder a learner named may hold their own files."""
    if output.exists() and not output.is_dir():
        raise SystemExit(f"--output {str(output)!r} is a file, not a folder: give a folder for the site, such as _site")
    if (output.is_dir() and any(output.iterdir()) and not (output / "jupyter-lite.json").is_file() and not force):
        raise SystemExit(f"--output {str(output)!r} is a folder with files that is not an earlier site (no "
                         f"jupyter-lite.json): the build replaces the whole folder, so it is kept; choose another "
                         f"folder or pass --force to replace it")


def build(output: Path = SITE, cache: Path = CACHE, offline: bool = False, force: bool = False) -> tuple[int, int]:
    """Build the site into ``output`` (replaced: see :func:`check_output`); returns its (bytes, files)."""
    check_output(output, force)
    check_lite_installed()
    extensions = labextension_dirs()
    fetch = Fetcher(cache=cache, offline=offline)
    version = kernel_pyodide_version()
    say(f"Pyodide {version} (npm), {len(WHEELS)} wheels (PyPI), bubblekit (this repository)")
    npm_folder = fetch.pyodide(version)
    wheels = fetch.wheels(WHEELS)
    wheels.append(build_bubblekit_wheel(cache / "bubblekit"))
    check_widgets([read_wheel(w) for w in wheels])

    stage = cache / "stage"  # the lite folder jupyter lite build reads
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    lock = stage_pyodide(npm_folder, wheels, stage / "static" / "pyodide")
    for name, path in extensions.items():
        shutil.copytree(path, stage / "labextensions" / name)
    count = write_contents(stage / "files")
    (stage / "jupyter-lite.json").write_text(json.dumps(lite_config(), indent=1) + "\n", encoding="utf-8")
    (stage / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES, indent=1) + "\n", encoding="utf-8")
    output = output.resolve()
    (stage / "jupyter_lite_config.json").write_text(
        json.dumps(build_config(output, stage / "files", stage / "labextensions"), indent=1) + "\n", encoding="utf-8")
    say(f"{count} notebooks, {len(lock['packages'])} packages in pyodide-lock.json")

    shutil.rmtree(output, ignore_errors=True)
    build_cache = cache / "jupyterlite"  # doit's state and the build's own cache
    shutil.rmtree(build_cache, ignore_errors=True)
    say("jupyter lite build")
    run = subprocess.run([sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(stage),
                          "--output-dir", str(output), f"--LiteBuildConfig.cache_dir={build_cache}"],
                         cwd=stage, capture_output=True, text=True)
    if run.returncode != 0:  # its task list only when it failed
        print(run.stdout[-6000:], run.stderr[-6000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"jupyter lite build failed (exit {run.returncode})")
    for stray in (output / ".jupyterlite.doit.db", stage / ".jupyterlite.doit.db"):
        stray.unlink(missing_ok=True)
    check_site(output)
    size, files = site_size(output)
    print(f"site: {output} — {size / 2**20:.1f} MiB in {files} files", flush=True)
    return size, files


def check_site(output: Path) -> None:
    """The built site points the kernel at its own Pyodide and lock, and has them."""
    config = json.loads((output / "jupyter-lite.json").read_text(encoding="utf-8"))
    settings = config["jupyter-config-data"]["litePluginSettings"][PYODIDE_KERNEL_PLUGIN]
    for key in ("pyodideUrl",):
        url = settings[key]
        if not url.startswith("./") or not (output / url).is_file():
            raise SystemExit(f"jupyter-lite.json: {key} {url} is not a file of the site")
    lock_url = settings["loadPyodideOptions"]["lockFileURL"]
    lock = json.loads((output / lock_url).read_text(encoding="utf-8"))
    folder = (output / lock_url).parent
    for pkg in lock["packages"].values():
        path = folder / pkg["file_name"]
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != pkg["sha256"]:
            raise SystemExit(f"pyodide-lock.json: {pkg['file_name']} missing or its sha256 differs")
    if "bubblekit" not in lock["packages"]:
        raise SystemExit("pyodide-lock.json has no bubblekit")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=SITE, help="the site's folder (default: _site)")
    parser.add_argument("--force", action="store_true",
                        help="replace --output even if it holds files that are not an earlier site")
    parser.add_argument("--cache", type=Path, default=CACHE, help="the download cache (default: .lite-cache)")
    parser.add_argument("--offline", action="store_true", help="download nothing: use only the cache")
    args = parser.parse_args(argv)
    build(args.output, args.cache.resolve(), args.offline, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
