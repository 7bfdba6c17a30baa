"""The course as a newcomer opens it: ``bash course.sh lab`` in Chromium (issue "first hour").

Starts the course exactly as the README says, ``bash course.sh lab`` with a port, a token and
``--no-browser`` (``BUBBLEKIT_VENV`` points at this checkout's ready ``.venv``, so nothing is
installed), in a fresh copy of the course's files (as a clone has them: no ``workspace/``
yet). Then, in Debian's Chromium driven by the Python ``playwright`` package (never
``playwright install``):

* the server's root (``/``) opens lesson 00, and the file browser shows the whole course:
  ``notebooks/``, ``workspace/`` (made by ``course.sh lab``), ``exercises/``, ``solutions/``, ``apps/``;
* lesson 00's interview-bank link opens the learner's copy in ``workspace/`` and its
  solutions link the worked solution, with no "file not found" dialog;
* lesson 01, never run, shows its animation (the notebook is trusted at set-up), and its
  "Exercises:" link opens ``workspace/01_what_is_a_bubble.ipynb``, which its kernel's start
  does not mark as changed;
* the terminal output holds neither "Kernel is running over TCP without encryption" nor
  "is not trusted".

Screenshots of each step go to ``test-artifacts/course-*.png``. Marker ``browser``; skipped
with a loud reason without Chromium or playwright.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("BUBBLEKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SERVER_START_S = 180     # course.sh lab: set-up check, workspace, trust, then the server
OPEN_MS = 120_000        # a notebook opens and renders (busy machine)
VIEWPORT = {"width": 1440, "height": 1000}


def _require_browser() -> None:
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"the Chromium browser at {CHROMIUM} (Debian package 'chromium')")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the Python package 'playwright' (pip install -e '.[test]')")
    if shutil.which("git") is None:
        missing.append("git")
    if missing:
        pytest.skip(
            "!!! BROWSER TESTS SKIPPED: missing " + " and ".join(missing)
            + ". `.ci/run` installs them (apt-get install chromium; never `playwright install`). !!!"
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _course_copy(dest: Path) -> Path:
    """This checkout's course files (tracked and new, not ignored) in a fresh git repository."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "c", "GIT_AUTHOR_EMAIL": "c@example.org",
           "GIT_COMMITTER_NAME": "c", "GIT_COMMITTER_EMAIL": "c@example.org"}
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "course"]):
        subprocess.run(["git", *args], cwd=dest, env=env, capture_output=True, check=True)
    return dest


class Lab:
    """``bash course.sh lab`` in its own session, its output in a log file; stopped for sure."""

    def __init__(self, course: Path, port: int, token: str, tmp: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.token = token
        self.log = tmp / "course-lab.log"
        runtime = Path(tempfile.mkdtemp(prefix="jr"))  # short: kernels' ipc sockets live here
        env = {
            **os.environ,
            "BUBBLEKIT_VENV": str(VENV),
            "BUBBLEKIT_NO_INSTALL": "1",  # a stale set-up fails instead of re-pointing .venv at the copy
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp / "lab-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab-workspaces"),
        }
        env.pop("BUBBLEKIT_CHECK_WORKTREE", None)
        self._runtime = runtime
        self._log_file = open(self.log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            ["bash", "course.sh", "lab", f"--port={port}", f"--IdentityProvider.token={token}", "--no-browser",
             "--ServerApp.port_retries=0", "--LabApp.news_url=None",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=course, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def output(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def wait(self, timeout: float = SERVER_START_S) -> None:
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"course.sh lab exited with {self.proc.returncode}:\n{self.output()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.5)
        pytest.fail(f"course.sh lab did not answer within {timeout:.0f} s ({last}):\n{self.output()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        self._log_file.close()
        shutil.rmtree(self._runtime, ignore_errors=True)


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_browser()
    ARTIFACTS.mkdir(exist_ok=True)
    return _course_copy(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def lab(course: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    server = Lab(course, _free_port(), secrets.token_hex(16), tmp_path_factory.mktemp("lab"))
    try:
        server.wait()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000)
    except Exception:
        pw.stop()
        raise
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        context.close()
        browser.close()
        pw.stop()


# ------------------------------------------------------------------------------ helpers


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"course-{name}.png"), full_page=False)


def _dismiss_toasts(page: Any) -> None:
    no = page.locator(".jp-toast-button", has_text="No")
    if no.count():
        no.first.click()


def _no_error_dialog(page: Any, what: str) -> None:
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        text = dialog.first.inner_text()
        _shot(page, "error-dialog")
        pytest.fail(f"{what}: JupyterLab shows a dialog: {text!r}")


def _current_path(page: Any) -> str:
    """The path of the document in the active tab (from its tooltip 'Name: ...\\nPath: ...')."""
    title = page.evaluate(
        "() => { const t = document.querySelector('.jp-mod-current.lm-TabBar-tab, .lm-TabBar-tab.jp-mod-current');"
        " return t ? (t.getAttribute('title') || '') : ''; }"
    )
    for line in title.splitlines():
        if line.startswith("Path: "):
            return line[len("Path: "):].strip()
    return ""


def _wait_for_document(page: Any, path: str, text: str) -> None:
    """Wait until the active tab shows ``path`` and its notebook renders ``text``."""
    deadline = time.monotonic() + OPEN_MS / 1000
    while time.monotonic() < deadline:
        _no_error_dialog(page, f"opening {path}")
        if _current_path(page) == path:
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown", has_text=text).first.wait_for(
                timeout=OPEN_MS)
            return
        page.wait_for_timeout(300)
    _shot(page, "timeout")
    pytest.fail(f"{path} did not open (active tab: {_current_path(page)!r})")


def _click_link(page: Any, text: str) -> None:
    link = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown a", has_text=text).first
    link.scroll_into_view_if_needed()
    link.click()


# -------------------------------------------------------------------------------- tests


def test_root_opens_lesson_00_and_shows_the_whole_course(lab: Lab, page: Any, course: Path) -> None:
    page.goto(f"{lab.url}/?token={lab.token}", timeout=OPEN_MS)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=OPEN_MS)
    _dismiss_toasts(page)
    _wait_for_document(page, "notebooks/00_start_here.ipynb", "Start here")
    # the file browser: go to the root and list it
    page.locator(".jp-BreadCrumbs-home").first.click()
    for folder in ("notebooks", "workspace", "exercises", "solutions", "apps"):
        page.locator(".jp-DirListing-itemText", has_text=folder).first.wait_for(timeout=30_000)
    _shot(page, "00-root")
    assert sorted(p.name for p in (course / "workspace").glob("*.ipynb")) == sorted(
        p.name for p in (course / "exercises").glob("*.ipynb"))


def test_lesson_00_links_open_the_interview_bank_and_its_solutions(lab: Lab, page: Any) -> None:
    page.goto(f"{lab.url}/lab/tree/notebooks/00_start_here.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/00_start_here.ipynb", "Start here")
    _dismiss_toasts(page)
    _click_link(page, "10 · Interview bank")
    _wait_for_document(page, "workspace/10_interview_bank.ipynb", "Exercise notebook")
    _shot(page, "00-interview-bank")
    page.goto(f"{lab.url}/lab/tree/notebooks/00_start_here.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/00_start_here.ipynb", "Start here")
    link = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown a[href*='solutions/10_interview_bank']")
    link.first.scroll_into_view_if_needed()
    link.first.click()
    _wait_for_document(page, "solutions/10_interview_bank.ipynb", "nterview")
    _shot(page, "00-solutions")


def test_lesson_01_is_trusted_and_its_exercises_link_opens_the_workspace_copy(lab: Lab, page: Any) -> None:
    page.goto(f"{lab.url}/lab/tree/notebooks/01_what_is_a_bubble.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/01_what_is_a_bubble.ipynb", "Exercises:")
    _dismiss_toasts(page)
    # the animation's JavaScript ran without running the notebook: its frame is an image
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea-output img[id^=\"_anim_img\"]')]"
        ".some(i => i.naturalWidth > 0)",
        timeout=OPEN_MS,
    )
    anim = page.locator(".jp-OutputArea-output img[id^='_anim_img']").first
    anim.scroll_into_view_if_needed()
    _shot(page, "01-animation")
    _click_link(page, "What a bubble is: exercises")
    _wait_for_document(page, "workspace/01_what_is_a_bubble.ipynb", "Exercise notebook")
    # once its kernel is up, the learner's untouched copy is not "changed" (nothing to autosave)
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=OPEN_MS)
    page.wait_for_timeout(1000)
    dirty = page.evaluate("() => !!document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')")
    _shot(page, "01-exercises")
    assert not dirty, "opening workspace/01_what_is_a_bubble.ipynb marked it changed"


def test_terminal_shows_no_noise(lab: Lab, page: Any) -> None:
    """After the notebooks above were opened (kernels started): no TCP or trust warnings."""
    out = lab.output()
    assert "without encryption" not in out, out[-3000:]
    assert "is not trusted" not in out, out[-3000:]
    assert "DeprecationWarning" not in out, out[-3000:]
    assert "workspace/" in out  # course.sh says where the learner's exercises are
