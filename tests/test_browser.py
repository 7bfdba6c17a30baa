"""Real-browser tests: the explorer in JupyterLab and in Voila (classroom mode), in Chromium.

Runs with the normal test suite (marker ``browser``; deselect with ``-m "not browser"``).
Each test starts a server on 127.0.0.1 at a free port with the current Python, opens the
explorer notebook in Debian's Chromium through the Python ``playwright`` package (never
``playwright install``: the browser is ``/usr/bin/chromium``), moves the ``m`` slider with
the keyboard and checks that the readout and the picture change, and that the new readout
is the number :func:`bubblekit.simulate` gives. Classroom mode's pages (the builder and the
memory/bubble frontier) and its presenter layout (large letters, ``--presenter``) are opened
too, and no request of the browser may leave 127.0.0.1 (a classroom may have no internet).
Screenshots go to ``test-artifacts/``.

Without Chromium or playwright the tests are skipped with a loud reason; ``.ci/run``
installs both. Every wait is bounded, and the servers are stopped by fixture finalizers
(their kernels with them).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import bubblekit as bk
from bubblekit.presentation import classroom, explorers

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("BUBBLEKIT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SERVER_START_S = 90      # a server must answer within this
RENDER_S = 120_000       # ms: notebook executed and widget shown (kernel start + first draw, busy machine)
CHANGE_S = 60_000        # ms: a slider move reaches the kernel, is redrawn and comes back
VIEWPORT = {"width": 1440, "height": 1000}


def _require_browser() -> None:
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"the Chromium browser at {CHROMIUM} (Debian package 'chromium')")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the Python package 'playwright' (pip install -e '.[test]')")
    if missing:
        pytest.skip(
            "!!! BROWSER TESTS SKIPPED: missing " + " and ".join(missing)
            + ". `.ci/run` installs them (apt-get install chromium; never `playwright install`). !!!"
        )


def lab_command(root: Path, port: int, token: str, *extra: str) -> list[str]:
    """The JupyterLab command of the browser tests: 127.0.0.1, a token, no news or update checks, ``extra`` options."""
    cmd = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", *extra,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


@contextmanager
def chromium_page(*, args: Sequence[str] = (), **context: Any) -> Iterator[Any]:
    """A page of headless Chromium (the course's flags plus ``args``; 1440 x 1000 unless ``viewport`` is given;
    ``context`` goes to ``new_context``, e.g. ``locale="zh-CN"``), closed with its browser afterwards."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=[*CHROMIUM_ARGS, *args], headless=True,
                                     timeout=60_000)
    except Exception:
        pw.stop()
        raise
    pg_context = browser.new_context(**{"viewport": VIEWPORT, "device_scale_factor": 1, **context})
    pg = pg_context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        pg_context.close()
        browser.close()
        pw.stop()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A server subprocess in its own session, its output in a log file; stopped for sure."""

    def __init__(self, name: str, cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
        self.name, self.cmd, self.log = name, cmd, log
        self._log_file = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=self._log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-n:]
        except OSError:
            return ""

    def wait_http(self, url: str, timeout: float = SERVER_START_S) -> None:
        """Poll ``url`` until it answers 200; fail with the server's log if it dies or times out."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.5)
        pytest.fail(f"{self.name} did not answer {url} within {timeout:.0f} s ({last}):\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM (the server shuts its kernels down), then SIGKILL the whole session if needed."""
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


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        MPLBACKEND="Agg",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
        JUPYTER_DATA_DIR=str(tmp / "data"),
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "lab-workspaces"),
    )
    # JupyterLab in English whatever the environment's override says (`course.sh lab --lang zh` leaves one
    # in .venv): a user setting wins over it. tests/test_browser_zh.py sets Chinese its own way.
    user = tmp / "lab-settings" / "@jupyterlab" / "translation-extension"
    user.mkdir(parents=True, exist_ok=True)
    (user / "plugin.jupyterlab-settings").write_text('{"locale": "en"}', encoding="utf-8")
    # The kernel must be this Python's, wherever the tests run from.
    env["JUPYTER_PATH"] = os.pathsep.join(
        [str(Path(sys.prefix) / "share" / "jupyter"), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    )
    return env


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_browser()
    d = tmp_path_factory.mktemp("explorer-app")
    for page in (ROOT / "apps").glob("*.ipynb"):
        shutil.copy(page, d / page.name)
    ARTIFACTS.mkdir(exist_ok=True)
    return d


@pytest.fixture(scope="module")
def browser(workdir: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=60_000)
    except Exception:
        pw.stop()
        raise
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)  # a fresh profile per test
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    requests: list[str] = []
    pg.on("request", lambda req: requests.append(req.url))
    try:
        yield pg
    finally:
        context.close()
    outside = sorted({u for u in requests if urllib.parse.urlparse(u).scheme in ("http", "https", "ws", "wss")
                      and urllib.parse.urlparse(u).hostname not in ("127.0.0.1", "localhost")})
    assert not outside, f"the page asked for something outside 127.0.0.1 (no internet in a classroom): {outside[:10]}"


@pytest.fixture(scope="module")
def lab(workdir: Path) -> Iterator[str]:
    """JupyterLab on 127.0.0.1 with a token; yields the notebook's URL."""
    port, token = _free_port(), secrets.token_hex(16)
    server = Server("jupyter lab", lab_command(workdir, port, token), workdir, _env(workdir), workdir / "lab.log")
    try:
        server.wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        yield f"http://127.0.0.1:{port}/lab/tree/explorer.ipynb?token={token}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def voila(workdir: Path) -> Iterator[str]:
    """Classroom mode (the exact command and environment ``python -m bubblekit classroom`` runs); yields its URL."""
    port = _free_port()
    cmd = classroom.voila_command(workdir / "explorer.ipynb", port)
    server = Server("voila", cmd, workdir, classroom.voila_env(False, _env(workdir)), workdir / "voila.log")
    try:
        _wait_port(server, port)  # GET / would execute the notebook once more: only wait for the socket
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def presenter(workdir: Path) -> Iterator[str]:
    """``bubblekit classroom --presenter --notebook <every page>``'s Voila; yields its URL (the list of pages)."""
    port = _free_port()
    cmd = classroom.voila_command(workdir, port, presenter=True)
    server = Server("voila --presenter", cmd, workdir, classroom.voila_env(True, _env(workdir)),
                    workdir / "voila-presenter.log")
    try:
        _wait_port(server, port)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


def _wait_port(server: Server, port: int, timeout: float = SERVER_START_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            pytest.fail(f"{server.name} exited with {server.proc.returncode}:\n{server.log_tail()}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    pytest.fail(f"{server.name} did not listen on port {port} within {timeout:.0f} s:\n{server.log_tail()}")


# ------------------------------------------------------------------------------ helpers
def _explorer_state(page: Any) -> dict[str, str]:
    return page.evaluate(
        """() => {
            const box = document.querySelector('.bk-pipeline-explorer');
            const img = box.querySelector('img.bk-figure');
            const ro = box.querySelector('.bk-readout-bubble_ratio');
            const m = box.querySelector('.bk-control-m .widget-readout');
            return {src: img ? img.src : '', width: img ? String(img.naturalWidth) : '0',
                    ratio: ro ? ro.innerText : '', m: m ? (m.value || m.innerText) : ''};
        }"""
    )


def _move_m_slider_and_check(page: Any, name: str) -> None:
    """Focus the m slider, press ArrowRight, wait for the new readout and picture; check them."""
    page.wait_for_selector(".bk-pipeline-explorer .bk-readout-bubble_ratio .bk-value", timeout=RENDER_S)
    page.wait_for_function(
        "() => { const i = document.querySelector('.bk-pipeline-explorer img.bk-figure');"
        " return i && i.naturalWidth > 0; }",
        timeout=RENDER_S,
    )
    before = _explorer_state(page)
    m0 = int(before["m"])
    ref0 = bk.simulate(bk.schedule("1f1b", 4, m0), bk.preset("b=2f"))
    assert f"{ref0.bubble_ratio:.4f}" in before["ratio"], before
    page.screenshot(path=str(ARTIFACTS / f"{name}-before.png"), full_page=True)

    handle = page.locator(".bk-pipeline-explorer .bk-control-m .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press("ArrowRight")
    ref1 = bk.simulate(bk.schedule("1f1b", 4, m0 + 1), bk.preset("b=2f"))
    want = f"{ref1.bubble_ratio:.4f}"
    page.wait_for_function(
        "([want, src]) => { const b = document.querySelector('.bk-pipeline-explorer');"
        " const r = b.querySelector('.bk-readout-bubble_ratio');"
        " const i = b.querySelector('img.bk-figure');"
        " return r && r.innerText.includes(want) && i && i.src !== src && i.naturalWidth > 0; }",
        arg=[want, before["src"]],
        timeout=CHANGE_S,
    )
    after = _explorer_state(page)
    assert int(after["m"]) == m0 + 1, after
    assert after["ratio"] != before["ratio"] and want in after["ratio"]
    assert after["src"] != before["src"]
    page.locator(".bk-pipeline-explorer").first.screenshot(path=str(ARTIFACTS / f"{name}-explorer.png"))
    page.screenshot(path=str(ARTIFACTS / f"{name}-after.png"), full_page=True)


# -------------------------------------------------------------------------------- tests
def _dismiss_news_toast(page: Any) -> None:
    """JupyterLab asks once whether to fetch Jupyter news; answer No so it hides nothing."""
    no = page.locator(".jp-toast-button", has_text="No")
    if no.count():
        no.first.click()


def _run_all_cells(page: Any) -> None:
    """Run > Run All Cells through JupyterLab's own menu."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def _wait_for_explorer_in_lab(page: Any, timeout_s: float = RENDER_S / 1000) -> None:
    """Wait for the explorer's output; meanwhile accept a "Select Kernel" dialog (JupyterLab may ask
    while the session starts) and run all cells once more if none has started after a while."""
    deadline = time.monotonic() + timeout_s
    rerun_at = time.monotonic() + 30
    while time.monotonic() < deadline:
        if page.locator(".bk-pipeline-explorer").count():
            return
        dialog = page.locator(".jp-Dialog .jp-mod-accept")
        if dialog.count():
            dialog.first.click()
        started = page.evaluate(
            "() => [...document.querySelectorAll('.jp-InputPrompt')].some(p => /\\[(\\*|\\d+)\\]/.test(p.innerText))"
        )
        if not started and time.monotonic() > rerun_at:
            _run_all_cells(page)
            rerun_at = deadline
        page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "lab-failure.png"), full_page=True)
    pytest.fail(f"the explorer did not appear in JupyterLab within {timeout_s:.0f} s (see test-artifacts/lab-failure.png)")


def test_explorer_in_jupyterlab(lab: str, page: Any) -> None:
    page.goto(lab, timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=RENDER_S)
    _dismiss_news_toast(page)
    _run_all_cells(page)
    _wait_for_explorer_in_lab(page)
    _dismiss_news_toast(page)
    _move_m_slider_and_check(page, "lab")


def test_explorer_in_voila_classroom_mode(voila: str, page: Any) -> None:
    page.goto(voila, timeout=RENDER_S)
    _move_m_slider_and_check(page, "voila")
    text = page.inner_text("body")
    assert "pipeline_explorer(" not in text  # classroom mode shows no code
    assert "Traceback" not in text
    # the schedule builder below it: a template button, then the score
    builder = page.locator(".bk-schedule-builder").first
    builder.locator(".bk-control-load_1f1b").click()
    builder.locator(".bk-readout-score", has_text="matches 1F1B").wait_for(timeout=CHANGE_S)
    builder.screenshot(path=str(ARTIFACTS / "voila-builder.png"))


def _font_px(page: Any, selector: str) -> float:
    return float(page.evaluate(
        "sel => parseFloat(getComputedStyle(document.querySelector(sel)).fontSize)", selector))


def test_classroom_presenter_layout_and_pages(presenter: str, page: Any) -> None:
    """``--presenter``: large letters on every page, the explorers' larger pictures; the pages listed at /."""
    page.goto(presenter, timeout=RENDER_S)
    try:
        for name in classroom.PAGES:
            page.get_by_text(name, exact=True).first.wait_for(timeout=RENDER_S)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / "presenter-failure.png"), full_page=True)
        raise
    page.screenshot(path=str(ARTIFACTS / "presenter-pages.png"), full_page=True)
    base = presenter.rstrip("/")
    page.goto(f"{base}/voila/render/explorer.ipynb", timeout=RENDER_S)
    box = ".bk-pipeline-explorer.bk-presenter"
    page.wait_for_selector(f"{box} .bk-readout-bubble_ratio .bk-value", timeout=RENDER_S)
    page.wait_for_function(
        "() => { const i = document.querySelector('.bk-pipeline-explorer img.bk-figure');"
        " return i && i.naturalWidth > 0; }", timeout=RENDER_S)
    width = page.evaluate("() => document.querySelector('.bk-pipeline-explorer img.bk-figure').naturalWidth")
    assert width == round(12 * explorers.PRESENTER_DPI)  # the kernel drew the presenter layout
    assert _font_px(page, f"{box} .bk-card .bk-value") >= 30
    assert _font_px(page, f"{box} .widget-label") >= 20
    assert _font_px(page, ".jp-RenderedHTMLCommon p") >= 20  # the text around it, from the template
    page.screenshot(path=str(ARTIFACTS / "presenter-explorer.png"))
    page.goto(f"{base}/voila/render/frontier.ipynb", timeout=RENDER_S)
    page.wait_for_selector(".bk-frontier-explorer.bk-presenter .bk-readout-frontier b", timeout=RENDER_S)
    page.wait_for_function(
        "() => { const i = document.querySelector('.bk-frontier-explorer img.bk-figure');"
        " return i && i.naturalWidth > 0; }", timeout=RENDER_S)
    text = page.inner_text("body")
    assert "On the frontier" in text and "Traceback" not in text and "frontier_explorer(" not in text
    page.screenshot(path=str(ARTIFACTS / "presenter-frontier.png"), full_page=True)
