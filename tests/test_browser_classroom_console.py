"""Real-browser test: classroom mode's pages log no errors in the browser's console (issue 23).

Voila serves every classroom page (``apps/``, and the Chinese ``apps/zh/``) with the command and
environment ``python -m bubblekit classroom --pages`` runs (:func:`bubblekit.presentation.classroom.
voila_command`, :func:`~bubblekit.presentation.classroom.voila_env`); Debian's Chromium opens each
page (and the list of pages at ``/``), waits for its widget, and every console message and uncaught page error is collected. Then:

* no console error and no page error. Before the fix the pages logged Notebook 7's JupyterLab
  plug-in failing to load (``RUNTIME-012 ... @jupyterlab/docregistry``; classroom mode now keeps
  JupyterLab-only extensions out, :data:`~bubblekit.presentation.classroom.VOILA_EXTENSION_DENYLIST`)
  and, on leaving a page, ``403 (Forbidden)`` for Voila's kernel shutdown (no ``_xsrf`` cookie,
  voila-dashboards/voila#1458; the bubblekit template sets one); the list of pages at ``/`` logged
  the widget manager failing without a kernel (three errors) and two 404s (Voila's JupyterLab-based
  list; classroom mode now serves its plain one, ``classic_tree``, with no favicon request);
* leaving a page shuts its kernel down (the shutdown request now passes), and the server's log has
  no 403 and no websocket ping-timeout warning;
* the only warnings are the listed, explained ones (:data:`EXPLAINED_WARNINGS`): ipywidgets' widget
  manager for JupyterLab (jupyterlab_widgets 3.0.x, built against JupyterLab 4.6) asks for newer
  ``@jupyterlab/*`` modules than Voila 0.5.13, the newest Voila, ships (JupyterLab 4.2's); the
  shared singleton falls back to Voila's and the widgets work (the other browser tests move their
  sliders). Any other warning fails the test, so a new one is looked at.

Marker ``browser``; skipped with a loud reason without Chromium, playwright or Voila.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from pathlib import Path

import pytest

from bubblekit.presentation import classroom

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_browser import (  # noqa: E402 - the shared Chromium + server helpers
    ARTIFACTS,
    RENDER_S,
    Server,
    _env,
    _free_port,
    _require_browser,
    _wait_port,
    chromium_page,
)

pytestmark = pytest.mark.browser

#: The widget each page shows once its kernel has run it.
READY = {
    "explorer.ipynb": ".bk-pipeline-explorer img.bk-figure",
    "builder.ipynb": ".bk-schedule-builder",
    "frontier.ipynb": ".bk-frontier-explorer img.bk-figure",
}
#: Console warnings that are explained (see the module docstring) and allowed: a shared
#: ``@jupyterlab/*`` module of an older version than an extension was built for.
EXPLAINED_WARNINGS = re.compile(
    r"^(Unsatisfied version [\d.]+ from _JUPYTERLAB\.CORE_OUTPUT of shared singleton module @jupyterlab/[a-z-]+"
    r" \(required \^[\d.]+\)"
    r"|No satisfying version \(\^[\d.]+\) of shared module @jupyterlab/[a-z-]+ found in shared scope default\."
    r"\nAvailable versions: [\d.]+ from _JUPYTERLAB\.CORE_OUTPUT)$")


def test_the_explained_warnings_are_narrow() -> None:
    """The allowance matches the version warnings only, not an error or another module's warning."""
    assert EXPLAINED_WARNINGS.match("Unsatisfied version 4.2.5 from _JUPYTERLAB.CORE_OUTPUT of shared singleton "
                                    "module @jupyterlab/rendermime (required ^4.6.2)")
    assert EXPLAINED_WARNINGS.match("No satisfying version (^4.6.2) of shared module @jupyterlab/outputarea found "
                                    "in shared scope default.\nAvailable versions: 4.2.5 from _JUPYTERLAB.CORE_OUTPUT")
    for other in ("Failed to create module: package: @jupyter-notebook/lab-extension; module: ./extension",
                  "Unsatisfied version 1.0 from x of shared singleton module @jupyter-widgets/base (required ^2.0)",
                  "[ Federation Runtime ] Version 4.2.5 from _JUPYTERLAB.CORE_OUTPUT of shared singleton module "
                  "@jupyterlab/notebook does not satisfy the requirement of undefined which needs ^4.6.0-beta.0)"):
        assert not EXPLAINED_WARNINGS.match(other), other


@pytest.mark.parametrize("language", ["en", "zh"])
def test_classroom_pages_log_no_console_errors(language: str, tmp_path: Path) -> None:
    _require_browser()
    if importlib.util.find_spec("voila") is None:
        pytest.skip("!!! CLASSROOM CONSOLE TEST SKIPPED: Voila is not installed (bash course.sh setup --classroom). !!!")
    folder = classroom.default_pages(tmp_path, language=language)
    port = _free_port()
    cmd = classroom.voila_command(folder, port)
    server = Server("voila --pages", cmd, tmp_path, classroom.voila_env(False, _env(tmp_path)), tmp_path / "voila.log")
    messages: list[tuple[str, str, str]] = []  # (page, type, text)
    failed: list[str] = []  # responses with an HTTP error status
    kernels: dict[str, str] = {}
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_port(server, port)
        with chromium_page() as page:
            current = [""]
            page.on("console", lambda m: messages.append((current[0], m.type, m.text)))
            page.on("pageerror", lambda e: messages.append((current[0], "pageerror", str(e))))
            # which address a "Failed to load resource" message was about (the console does not say)
            page.on("response", lambda r: r.status >= 400 and failed.append(f"{current[0]}: {r.status} {r.url}"))
            current[0] = "/ (the list of pages)"
            page.goto(f"{base}/", timeout=RENDER_S)
            for name in READY:
                page.get_by_text(name, exact=True).first.wait_for(timeout=RENDER_S)
            for name, ready in READY.items():
                current[0] = name
                page.goto(f"{base}/voila/render/{name}", timeout=RENDER_S)
                try:
                    page.wait_for_selector(ready, timeout=RENDER_S)
                except Exception:
                    page.screenshot(path=str(tmp_path / f"{name}-failure.png"), full_page=True)
                    raise
                page.wait_for_timeout(2000)  # late messages (widget views, websocket)
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / f"classroom-{language}-{name}.png"))
                kernel = classroom.page_report(page.content())["kernel_id"]
                assert kernel, f"{name}: the page names no kernel"
                kernels[name] = kernel
            current[0] = "(leaving)"
            page.goto("about:blank")  # the last page's beforeunload: its kernel shutdown request
            page.wait_for_timeout(2000)
        still = [name for name, kernel in kernels.items() if _kernel_alive(base, kernel)]
    finally:
        server.stop()
    log = server.log_tail(400_000)
    errors = [m for m in messages if m[1] in ("error", "pageerror")]
    assert not errors, ("console errors:\n" + "\n".join(f"{p}: {t}: {x[:400]}" for p, t, x in errors)
                        + "\nfailed requests:\n" + "\n".join(failed))
    assert not failed, failed
    unexplained = [m for m in messages if m[1] == "warning" and not EXPLAINED_WARNINGS.match(m[2])]
    assert not unexplained, "unexplained console warnings:\n" + "\n".join(f"{p}: {x[:400]}" for p, _, x in unexplained)
    assert not still, f"leaving a page did not shut its kernel down: {still}\n{log[-3000:]}"
    assert " 403 " not in log and "_xsrf" not in log, log[-3000:]
    assert "websocket_ping_timeout" not in log, log[-3000:]


def _kernel_alive(base: str, kernel: str) -> bool:
    """Whether Voila still has ``kernel`` (its shutdown takes a moment after the page is left)."""
    deadline = time.monotonic() + 20
    while classroom.kernel_exists(base, kernel):
        if time.monotonic() > deadline:
            return True
        time.sleep(0.5)
    return False
