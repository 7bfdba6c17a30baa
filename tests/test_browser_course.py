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
* lesson 01, never run, shows its animation (the notebook is trusted at set-up) as a person
  sees it: scrolled to, the picture has a layout box of nonzero size and a decoded frame, and
  the first press of ▶ plays it (the frame changes); its "Exercises:" link opens
  ``workspace/01_what_is_a_bubble.exercises.ipynb`` (the learner's copy, named apart from the
  lesson), which its kernel's start does not mark as changed;
* every lesson with an explorer, never run, shows the explorer's still picture (no
  ``VBox(...)`` text, no "Loading widget"), and lesson 01's animation player draws its icons
  without font-awesome;
* in the first lesson with an interleaved explorer, its cell run, the ``m`` slider moved
  right step by step never shows an error: each stop is an ``m`` interleaving accepts, and
  the readout is the simulator's bubble for it;
* the terminal output holds the address with the token (one line), and neither "Kernel is running
  over TCP without encryption", "is not trusted" nor the websocket_ping_timeout warning; no news
  toast appears (the course's settings switch it off);
* no request the browser made left 127.0.0.1 (the course works offline).

Screenshots of each step go to ``test-artifacts/course-*.png``. Marker ``browser``; skipped
with a loud reason without Chromium or playwright.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.course import workspace as ws

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import CHROMIUM, Server, chromium_page  # noqa: E402 - the shared Chromium and server helpers

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)
ARTIFACTS = ROOT / "test-artifacts"
SERVER_START_S = 180     # course.sh lab: set-up check, workspace, trust, then the server
OPEN_MS = 120_000        # a notebook opens and renders (busy machine)


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


class Lab(Server):
    """``bash course.sh lab`` in its own session, its output in a log file; stopped for sure
    (test_browser's :class:`Server`, with the course's own command and a private Jupyter runtime)."""

    def __init__(self, course: Path, port: int, token: str, tmp: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.token = token
        self._runtime = Path(tempfile.mkdtemp(prefix="jr"))  # short: kernels' ipc sockets live here
        env = {
            **os.environ,
            "BUBBLEKIT_VENV": str(VENV),
            "BUBBLEKIT_NO_INSTALL": "1",  # a stale set-up fails instead of re-pointing .venv at the copy
            "JUPYTER_RUNTIME_DIR": str(self._runtime),
            "JUPYTER_CONFIG_DIR": str(tmp / "config"),
            "JUPYTERLAB_SETTINGS_DIR": str(tmp / "lab-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "lab-workspaces"),
        }
        env.pop("BUBBLEKIT_CHECK_WORKTREE", None)
        # the README's command; news and update checks are left to the course's own settings
        cmd = ["bash", "course.sh", "lab", f"--port={port}", f"--IdentityProvider.token={token}", "--no-browser",
               "--ServerApp.port_retries=0"]
        self.port = port
        super().__init__("course.sh lab", cmd, course, env, tmp / "course-lab.log")

    def output(self) -> str:
        """Everything ``course.sh lab`` printed so far."""
        return self.log_tail(n=10**9)

    def wait(self, timeout: float = SERVER_START_S) -> None:
        self.wait_http(f"{self.url}/api/status?token={self.token}", timeout)

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self._runtime, ignore_errors=True)


def _require_setup_done() -> None:
    """The environment must be set up for this checkout's pyproject.toml (``bash course.sh setup``).

    Otherwise ``course.sh lab`` in the test's copy would set it up again, from the copy:
    ``pip install -e`` of a temporary folder into this environment, which then loses bubblekit
    when the folder is removed. The key is course.sh's ``setup_key``.
    """
    import hashlib

    # the stamp of the lessons' extra (course.sh's setup_key), or a ready environment (BUBBLEKIT_NO_INSTALL:
    # course.sh then checks that JupyterLab and the lessons' packages import)
    stamp = VENV / ".bubblekit-setup.d" / "course"
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + b"course" + sys.version.encode()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == key:
        return
    import importlib.util

    missing = [m for m in ("jupyterlab", "ipywidgets", "matplotlib", "sympy") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.fail(f"{VENV} lacks {missing}: run `bash course.sh setup` first "
                    "(course.sh lab would otherwise install bubblekit from the test's temporary copy into it)")


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_browser()
    _require_setup_done()
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
    with chromium_page() as pg:
        pg.bk_requests = []  # every URL the browser asked for (checked by the last test)
        pg.on("request", lambda req: pg.bk_requests.append(req.url))
        yield pg


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
        ws.workspace_name(p.name) for p in (course / "exercises").glob("*.ipynb"))
    # only lesson 00 is open (no tabs of an earlier session), and no news toast asks anything
    tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab .lm-TabBar-tabLabel").all_inner_texts()
    assert [t for t in tabs if t.endswith(".ipynb")] == ["00_start_here.ipynb"], tabs
    assert not page.locator(".jp-toast", has_text="news").count()


def test_lesson_00_links_open_the_interview_bank_and_its_solutions(lab: Lab, page: Any) -> None:
    page.goto(f"{lab.url}/lab/tree/notebooks/00_start_here.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/00_start_here.ipynb", "Start here")
    _dismiss_toasts(page)
    _click_link(page, "10 · Interview bank")
    _wait_for_document(page, "workspace/10_interview_bank.exercises.ipynb", "this notebook is yours to edit")
    _shot(page, "00-interview-bank")
    page.goto(f"{lab.url}/lab/tree/notebooks/00_start_here.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/00_start_here.ipynb", "Start here")
    link = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown a[href*='solutions/10_interview_bank']")
    link.first.scroll_into_view_if_needed()
    link.first.click()
    _wait_for_document(page, "solutions/10_interview_bank.ipynb", "nterview")
    _shot(page, "00-solutions")


#: The lesson 01 player as a person sees it: its picture's layout box (nonzero), decoded frame, its place.
_PLAYER_STATE = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const img = panel && panel.querySelector('.jp-OutputArea-output img[id^="_anim_img"]');
    if (!img) return null;
    const r = img.getBoundingClientRect();
    const b = img.closest('.animation').querySelector('button').getBoundingClientRect();
    return {w: r.width, h: r.height, top: r.top, buttons: b.top, complete: img.complete,
            natural: img.naturalWidth, src: img.src.slice(-64), view: window.innerHeight};
}"""


def _scroll_to_player(page: Any) -> None:
    """Scroll the notebook as a person does (the mouse wheel over it) until the player's buttons are on
    screen; JupyterLab renders the cells it scrolls past on its own schedule (windowing)."""
    deadline = time.monotonic() + OPEN_MS / 1000
    page.mouse.move(VIEW_X, 500)
    while time.monotonic() < deadline:
        state = page.evaluate(_PLAYER_STATE)
        if state and 150 < state["buttons"] < state["view"] - 80:
            return
        down = state is None or state["buttons"] >= state["view"] - 80 or state["buttons"] == 0
        page.mouse.wheel(0, 350 if down else -350)
        page.wait_for_timeout(150)
    _shot(page, "01-no-player")
    pytest.fail(f"lesson 01's animation player never came into view: {page.evaluate(_PLAYER_STATE)}")


VIEW_X = 700  # a point over the notebook (1440 px wide window)


def test_lesson_01_shows_its_animation(lab: Lab, page: Any) -> None:
    """What a person waits for: scrolled to, the picture is there (a layout box of nonzero size, a decoded
    frame), it stays put, and the first press of ▶ plays it."""
    page.goto(f"{lab.url}/lab/tree/notebooks/01_what_is_a_bubble.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/01_what_is_a_bubble.ipynb", "Exercises:")
    _dismiss_toasts(page)
    page.wait_for_function(f"() => !!({_PLAYER_STATE})()", timeout=OPEN_MS)  # the output is in the page
    _scroll_to_player(page)
    try:  # the picture has its box and its frame (the notebook is trusted: the player's script ran)
        page.wait_for_function(f"() => {{ const s = ({_PLAYER_STATE})(); return s && s.w > 300 && s.h > 100"
                               " && s.complete && s.natural > 0; }", timeout=OPEN_MS)
    except Exception:
        _shot(page, "01-no-picture")
        raise AssertionError(f"lesson 01's animation shows no picture: {page.evaluate(_PLAYER_STATE)}") from None
    before = page.evaluate(_PLAYER_STATE)
    page.wait_for_timeout(500)
    still = page.evaluate(_PLAYER_STATE)
    assert abs(still["top"] - before["top"]) < 2, f"the page jumped: {before} -> {still}"
    # the player's buttons carry inline SVG icons (no font-awesome from a CDN)
    player = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output .animation").first
    assert player.locator("button svg").count() >= 7
    assert player.locator("i.fa").count() == 0
    _shot(page, "01-animation")
    player.locator("button[title='Play']").click()  # the first press plays: the frame changes
    page.wait_for_function(f"(src) => {{ const s = ({_PLAYER_STATE})(); return s && s.src !== src && s.h > 100; }}",
                           arg=still["src"], timeout=30_000)
    player.locator("button[title='Pause']").click()


def test_lesson_01_exercises_link_opens_the_workspace_copy(lab: Lab, page: Any) -> None:
    page.goto(f"{lab.url}/lab/tree/notebooks/01_what_is_a_bubble.ipynb?token={lab.token}", timeout=OPEN_MS)
    _wait_for_document(page, "notebooks/01_what_is_a_bubble.ipynb", "Exercises:")
    _dismiss_toasts(page)
    _click_link(page, "What a bubble is: exercises")
    _wait_for_document(page, "workspace/01_what_is_a_bubble.exercises.ipynb", "this notebook is yours to edit")
    # the tab tells the exercise from its lesson
    label = page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel").first.inner_text()
    assert label == "01_what_is_a_bubble.exercises.ipynb", label
    # once its kernel is up, the learner's untouched copy is not "changed" (nothing to autosave)
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=OPEN_MS)
    page.wait_for_timeout(1000)
    dirty = page.evaluate("() => !!document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty')")
    _shot(page, "01-exercises")
    assert not dirty, "opening workspace/01_what_is_a_bubble.exercises.ipynb marked it changed"


def _explorer_lessons(course: Path, must: str = "") -> list[str]:
    """Lessons (paths under the course) with a pipeline_explorer(...) cell whose source holds ``must``."""
    out = []
    for nb_path in sorted((course / "notebooks").glob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and "pipeline_explorer(" in src and must in src:
                out.append(f"notebooks/{nb_path.name}")
                break
    return out


def _open_lesson(lab: Lab, page: Any, path: str) -> Any:
    """Open ``path`` from the served root; return its explorer cell (scrolled into view)."""
    page.goto(f"{lab.url}/lab/tree/{path}?token={lab.token}", timeout=OPEN_MS)
    deadline = time.monotonic() + OPEN_MS / 1000
    while _current_path(page) != path:
        _no_error_dialog(page, f"opening {path}")
        if time.monotonic() > deadline:
            _shot(page, "timeout")
            pytest.fail(f"{path} did not open (active tab: {_current_path(page)!r})")
        page.wait_for_timeout(300)
    _dismiss_toasts(page)
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Cell").first.wait_for(state="attached", timeout=OPEN_MS)
    cell = panel.locator(".jp-CodeCell", has_text="pipeline_explorer(").first
    while not cell.count():  # a long notebook may render its cells as they scroll into view
        if time.monotonic() > deadline:
            _shot(page, "timeout")
            pytest.fail(f"{path}: no pipeline_explorer cell found")
        panel.locator(".jp-WindowedPanel-outer").first.evaluate("el => el.scrollBy(0, el.clientHeight * 0.8)")
        page.wait_for_timeout(300)
    cell.scroll_into_view_if_needed()
    return cell


def test_never_run_lessons_show_the_explorers_picture(lab: Lab, page: Any, course: Path) -> None:
    lessons = _explorer_lessons(course)
    assert lessons, "no lesson has a pipeline_explorer cell"
    for path in lessons:
        cell = _open_lesson(lab, page, path)
        still = cell.locator(".jp-OutputArea-output img.bk-figure-static")
        still.first.wait_for(timeout=OPEN_MS)
        cell.locator(".jp-OutputArea-output .bk-run").first.scroll_into_view_if_needed()
        page.wait_for_function("el => el.complete && el.naturalWidth > 600", arg=still.first.element_handle(),
                               timeout=OPEN_MS)
        out = cell.locator(".jp-OutputArea").first.inner_text()
        for bad in ("VBox(", "Loading widget", "Error displaying widget", "model not found"):
            assert bad not in out, f"{path}: the explorer's output shows {bad!r}: {out[:300]!r}"
        assert "run this cell" in out
        _shot(page, f"{Path(path).stem[:2]}-explorer-still")


def _explorer_readouts(page: Any) -> dict[str, str]:
    return page.evaluate(
        """() => {
            const box = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer');
            if (!box) return {};
            const val = k => { const r = box.querySelector(`.bk-control-${k} .widget-readout`);
                               return r ? (r.value || r.innerText || '').trim() : ''; };
            const sel = k => { const s = box.querySelector(`.bk-control-${k} select`); return s ? s.value : ''; };
            const img = box.querySelector('img.bk-figure');
            const ratio = box.querySelector('.bk-readout-bubble_ratio .bk-value');
            return {m: val('m'), p: val('p'), v: val('v'), schedule: sel('schedule'), preset: sel('preset'),
                    ratio: ratio ? ratio.innerText.trim() : '', src: img ? img.src : '',
                    visible: img ? String(getComputedStyle(img).visibility !== 'hidden' && img.naturalWidth > 0) : 'false',
                    errors: String(box.querySelectorAll('.bk-msg-error').length),
                    message: (box.querySelector('.bk-readout-message') || {innerText: ''}).innerText};
        }"""
    )


def test_interleaved_m_slider_never_shows_an_error(lab: Lab, page: Any, course: Path) -> None:
    lessons = _explorer_lessons(course, must="interleaved")
    assert lessons, "no lesson has an interleaved pipeline_explorer cell"
    path = lessons[0]
    cell = _open_lesson(lab, page, path)
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=OPEN_MS)
    # the lesson's first code cell imports bubblekit (`import bubblekit as bk`), as a learner runs it first
    first = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").first
    first.scroll_into_view_if_needed()
    first.locator(".jp-InputArea-editor").first.click()
    page.keyboard.press("Shift+Enter")
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=OPEN_MS)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputArea-editor").first.click()
    page.keyboard.press("Shift+Enter")  # then the explorer's cell: the live widget replaces the picture
    try:
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer .bk-readout-bubble_ratio .bk-value"
                     ).first.wait_for(timeout=OPEN_MS)
    except Exception:
        _shot(page, "explorer-did-not-run")
        raise
    state = _explorer_readouts(page)
    assert state["schedule"] == "interleaved" and state["errors"] == "0", state
    p, v, m = int(state["p"]), int(state["v"]), int(state["m"])
    allowed = bk.legal_ms("interleaved", p, v)
    costs = bk.preset(state["preset"])
    handle = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer .bk-control-m .noUi-handle").first
    stops = [m]
    for step in range(6):
        before = _explorer_readouts(page)
        handle.scroll_into_view_if_needed()
        handle.focus()
        page.keyboard.press("ArrowRight")
        want = next(x for x in allowed if x > stops[-1])
        ratio = f"{bk.simulate(bk.schedule('interleaved', p, want, v), costs).bubble_ratio:.4f}"
        deadline = time.monotonic() + OPEN_MS / 1000
        while True:  # until the kernel has answered: the allowed m, its bubble, a new picture
            now = _explorer_readouts(page)
            assert now.get("errors") == "0", f"step {step + 1} shows an error: {now.get('message')!r}"
            if now["m"] == str(want) and now["ratio"] == ratio and now["src"] != before["src"] \
                    and now["visible"] == "true":
                break
            assert time.monotonic() < deadline, f"step {step + 1}: wanted m = {want}, bubble {ratio}; got {now}"
            page.wait_for_timeout(200)
        stops.append(want)
        if want == stops[-2] + 1:
            continue
        assert "is not allowed" in now["message"]  # a refused m was skipped, and the note says why
        _shot_explorer(page, f"{Path(path).stem[:2]}-explorer-m{want}")
    assert any(b - a > 1 for a, b in zip(stops, stops[1:])), f"no refused m was stepped over: {stops}"
    _shot_explorer(page, f"{Path(path).stem[:2]}-explorer-live")


def _shot_explorer(page: Any, name: str) -> None:
    """The live explorer from its title down, as far as the window shows."""
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .bk-pipeline-explorer h2").first.evaluate(
        "el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    _shot(page, name)


def test_terminal_shows_no_noise(lab: Lab, page: Any) -> None:
    """After the notebooks above were opened (kernels started): no TCP or trust warnings."""
    out = lab.output()
    assert "without encryption" not in out, out[-3000:]
    assert "is not trusted" not in out, out[-3000:]
    assert "DeprecationWarning" not in out, out[-3000:]
    assert "websocket_ping_timeout" not in out, out[-3000:]
    assert "workspace/" in out  # course.sh says where the learner's exercises are
    # the address, with the token the learner chose, on one line (Jupyter prints none at log level WARN)
    lines = [ln for ln in out.splitlines() if f"http://127.0.0.1:{lab.port}/" in ln and f"token={lab.token}" in ln]
    assert len(lines) == 1, out[-3000:]


def test_no_request_leaves_the_machine(lab: Lab, page: Any) -> None:
    """Everything the browser loaded in the tests above came from the course's own server."""
    assert page.bk_requests, "no request was recorded"
    outside = sorted({u for u in page.bk_requests if urllib.parse.urlparse(u).scheme in ("http", "https", "ws", "wss")
                      and urllib.parse.urlparse(u).hostname not in ("127.0.0.1", "localhost")})
    assert not outside, f"requests left 127.0.0.1: {outside[:10]}"
