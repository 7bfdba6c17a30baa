"""Stopping the lab launcher and the classroom server leaves nothing behind.

``SIGTERM`` (``kill``), ``SIGHUP`` (a closed terminal) and ``SIGINT`` (Ctrl+C) to
``python -m bubblekit.lab run`` and to ``python -m bubblekit classroom`` must, within a few
seconds, end every process they started (lab workers; Voila and its kernels), remove their
temporary folders, and print one line (no traceback). The launcher's ``SIGKILL`` cannot be
caught: then the workers notice that their parent is gone and end themselves.

Each test gives the command its own ``TMPDIR``; the processes a command started are found by
that folder in their command line (a worker's configuration file, a kernel's connection
file), so the check works even after they have been adopted by another process. Linux only
(``/proc``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bubblekit import lab
from bubblekit.lab import free_port
from bubblekit.presentation import classroom

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

STOP_WITHIN_S = 10.0    # "a few seconds": the commands stop in about one; this leaves room for a busy machine
START_WITHIN_S = 240.0  # workers importing torch / Voila preheating on a loaded 2-core machine


def _alive_with(marker: str) -> list[str]:
    """Command lines of live (non-zombie) processes that mention ``marker``, this test's process excluded."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if stat[stat.rfind(")") + 2:].split()[0] in ("Z", "X"):
            continue
        if marker in cmd:
            out.append(f"{entry.name}: {cmd.strip()[:200]}")
    return out


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"})
    return env


def _wait_for(what: str, cond: Callable[[], bool], proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if proc.poll() is not None:
            out, err = map(_text, proc.communicate())
            pytest.fail(f"the command ended (code {proc.returncode}) before {what}:\n{out[-2000:]}\n{err[-2000:]}")
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"no {what} within {timeout:.0f} s")


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def _stop_and_check(proc: subprocess.Popen, sig: signal.Signals, tmp: Path, expect: str) -> None:
    """Send ``sig``; the command must exit with 128 + sig within a few seconds, print one line, leave nothing."""
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = map(_text, proc.communicate(timeout=STOP_WITHIN_S))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = map(_text, proc.communicate())
        pytest.fail(f"still running {STOP_WITHIN_S:.0f} s after {sig.name}:\n{err[-2000:]}")
    took = time.monotonic() - t0
    print(f"{sig.name}: stopped in {took:.2f} s")
    assert proc.returncode == 128 + sig.value, (proc.returncode, err[-2000:])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert f"stopped by {sig.name}" in lines[0] and expect in lines[0]
    assert "Traceback" not in out + err
    deadline = time.monotonic() + 3.0  # the last kernels may still be on their way out
    while _alive_with(str(tmp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with(str(tmp)) == []
    assert sorted(p.name for p in tmp.iterdir()) == [], "temporary files left behind"


# ---------------------------------------------------------------------------------- lab
torch_only = pytest.mark.skipif(not lab.torch_available(), reason="torch is not installed (bubblekit[lab])")


def _start_lab(tmp: Path, via_bubblekit_cli: bool = False) -> subprocess.Popen[str]:
    head = ["-m", "bubblekit", "lab"] if via_bubblekit_cli else ["-m", "bubblekit.lab"]
    cmd = [sys.executable, *head, "run", "--schedule", "GPipe", "--microbatches", "2", "--steps", "100000",
           "--warmup", "0", "--hidden", "16", "--seq", "8", "--timeout", "600"]
    proc = subprocess.Popen(cmd, env=_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    # both workers running (their command lines name the run's folder under tmp)
    _wait_for("two lab workers", lambda: len(_alive_with(str(tmp))) >= 2, proc, START_WITHIN_S)
    return proc


@pytest.mark.torch
@torch_only
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_lab_launcher_stops_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    proc = _start_lab(tmp_path, via_bubblekit_cli=sig == signal.SIGHUP)
    time.sleep(1.0)  # let the workers get into the run
    _stop_and_check(proc, sig, tmp_path, "every worker ended")


@pytest.mark.torch
@torch_only
def test_lab_workers_end_when_the_launcher_is_killed(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the workers see their parent gone and end themselves."""
    proc = _start_lab(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + STOP_WITHIN_S
    while _alive_with(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with(str(tmp_path)) == []


# ---------------------------------------------------------------------------- classroom
def _voila_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("voila") is not None


voila_only = pytest.mark.skipif(not _voila_available(), reason="voila is not installed (course extra)")


@voila_only
@pytest.mark.parametrize("sig,when", [(signal.SIGTERM, "ready"), (signal.SIGHUP, "preheating"),
                                      (signal.SIGINT, "ready")], ids=lambda x: getattr(x, "name", x))
def test_classroom_server_stops_cleanly(tmp_path: Path, sig: signal.Signals, when: str) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "bubblekit", "classroom", "--students", "1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    try:
        classroom.read_until(proc.stdout, "room ready" if when == "ready" else "starting Voila", START_WITHIN_S)
    except (TimeoutError, EOFError) as exc:
        proc.kill()
        pytest.fail(str(exc))
    if when == "preheating":
        _wait_for("a kernel", lambda: any("ipykernel" in c for c in _alive_with(str(tmp_path))), proc,
                  START_WITHIN_S)
    else:
        assert any("ipykernel" in c for c in _alive_with(str(tmp_path)))
    _stop_and_check(proc, sig, tmp_path, "Voila and its")


@voila_only
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux's")
def test_classroom_kernels_end_when_the_server_is_killed(tmp_path: Path) -> None:
    """SIGKILL cannot be caught: Voila is told by the kernel (parent-death signal) and shuts its kernels down."""
    port = free_port()
    cmd = [sys.executable, "-m", "bubblekit", "classroom", "--students", "1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    _wait_for("a kernel", lambda: any("ipykernel" in c for c in _alive_with(str(tmp_path))), proc, START_WITHIN_S)
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 2 * STOP_WITHIN_S  # Voila's own graceful shutdown
    while _alive_with(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _alive_with(str(tmp_path)) == []
