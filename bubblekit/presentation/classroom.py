"""Classroom mode: serve the live explorer as a web app with Voila (no code shown), sized for a room.

Run, from the repository root (or anywhere bubblekit is installed with the ``course`` extra)::

    python -m bubblekit classroom                     # http://127.0.0.1:8866/, this machine only
    python -m bubblekit classroom --share             # students on the local network, 30 by default
    python -m bubblekit classroom --share --students 45 --port 9000
    python -m bubblekit classroom --notebook apps/    # every notebook of a folder, one page each
    python -m bubblekit classroom --print-command     # show the voila command line and exit
    python -m bubblekit classroom -- --theme=dark     # Voila's own options go after --

It runs ``voila apps/explorer.ipynb --no-browser --strip_sources=True ...`` with the current
Python: the page shows the notebook's text and widgets (the pipeline explorer and the
schedule builder) but none of its code, and tracebacks are not sent to the browser.

Room defaults (measured with Voila 0.5.13 on a 2-core, 24 GB machine; see
``benchmarks/bench_classroom.py``). With Voila's own defaults every visitor waits while a
new kernel runs the notebook (~1.4 s of CPU each, so 30 students arriving together wait
~31 s), a slow kernel makes Voila drop a widget after 4 s of silence while the page still
says HTTP 200, and every visit leaves a ~110 MB kernel that is never freed. Classroom mode
therefore runs Voila with:

* a **preheated kernel pool** of ``--students`` kernels per page (Voila's
  ``--preheat_kernel=True --pool_size=N``): the notebook has already run when a student
  arrives, so a page comes back in a fraction of a second; Voila refills the pool behind
  them;
* **idle culling** (``--MappingKernelManager.cull_idle_timeout``, ``cull_interval``): the
  kernel of a page that was closed is shut down ``--cull-after`` seconds later (a page left
  open keeps its kernel: ``cull_connected`` stays off; the pool's kernels are never culled);
* a **30 s output wait** (``--VoilaExecutor.iopub_timeout=30``) instead of 4 s, so a busy
  machine sends complete pages late rather than incomplete pages on time.

The server says when the room is ready (every pool kernel has run the notebook), which
addresses to open, and how much memory the room takes (measured) and will take with every
student connected. It listens on 127.0.0.1 unless ``--share`` (or ``--ip``) asks for the
network, with a warning. Ctrl+C, ``SIGTERM`` or ``SIGHUP`` stop Voila and every kernel it
started and remove its temporary folder, then print one line.

From Python: :func:`serve`; :func:`visit` and :func:`visit_room` load pages the way a
browser does and check them (used by ``tests/test_classroom.py`` and the benchmark).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import math
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "serve", "voila_command", "room_options", "default_notebook", "write_notebook", "notebook_cells",
    "notebook_text", "main", "DEFAULT_PORT", "DEFAULT_CULL_AFTER_S", "DEFAULT_IOPUB_TIMEOUT_S", "SHARED_STUDENTS",
    "ClassroomStopped", "Visit", "visit", "visit_room", "page_report", "pages", "network_addresses",
    "server_kernels", "process_memory", "RoomSummary", "summarize_visits", "kernel_exists", "stop_server",
    "wait_listening", "available_memory", "read_until",
]

#: Voila's usual port.
DEFAULT_PORT = 8866
#: Seconds a kernel with no page connected may stay idle before it is shut down.
DEFAULT_CULL_AFTER_S = 300
#: Seconds Voila waits for a cell's output before giving up on it (Voila's own default is 4).
DEFAULT_IOPUB_TIMEOUT_S = 30
#: Students a shared server (``--share``) is sized for when ``--students`` is not given.
SHARED_STUDENTS = 30
#: The most students one server may be sized for (each pool kernel holds ~110 MB).
MAX_STUDENTS = 500

_INTRO = """# Pipeline bubbles: live explorer

Each bar is one action of one microbatch on one rank (device); the gaps are **bubbles**, time a
device waits. Move the sliders: the picture, the memory curves and the numbers follow.

* **bubble_ratio** = idle device-time / (p × makespan): the fraction of the step that is wasted
  (the source article's *b*; for GPipe and 1F1B with equal stages it is (p−1)/(m+p−1)).
* **bubble_overhead** = idle / busy device-time: Megatron-LM's (p−1)/m.
* Memory is counted in *microbatch activations*: what one microbatch leaves on a rank
  between its forward and its backward.

Try: raise **m** and watch the bubble shrink; switch **schedule** between GPipe and 1F1B and
watch the memory; pick **interleaved** and raise **v**; add **comm latency**; set a
**memory cap**; choose a second schedule in **compare with**."""

_EXPLORER = """# NBVAL_IGNORE_OUTPUT
from bubblekit.presentation.explorers import pipeline_explorer, schedule_builder

explorer = pipeline_explorer("1f1b", p=4, m=8, v=2, preset="b=2f")
explorer"""

_BUILDER_INTRO = """## Build your own schedule

Write, for each rank, the order in which it runs its actions (`0F3` = stage 0, forward,
microbatch 3; `B` = backward). The simulator says whether the orders are legal (and, if a
rank would wait forever, on what), draws them, and scores them against GPipe and 1F1B.
Start from a template with **load GPipe** / **load 1F1B**."""

_BUILDER = """# NBVAL_IGNORE_OUTPUT
builder = schedule_builder(p=3, m=6)
builder"""


def notebook_cells() -> list[tuple[str, str]]:
    """The explorer notebook's cells as ``(cell_type, source)`` pairs."""
    return [("markdown", _INTRO), ("code", _EXPLORER), ("markdown", _BUILDER_INTRO), ("code", _BUILDER)]


def notebook_text() -> str:
    """The explorer notebook (nbformat 4.5, kernel ``python3``, no outputs) as JSON text.

    Written the way Jupyter saves notebooks (``nbformat.writes``), with fixed cell ids, so
    regenerating ``apps/explorer.ipynb`` gives the same bytes.
    """
    import nbformat

    cells = [
        (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(src, id=f"explorer-{k}")
        for k, (kind, src) in enumerate(notebook_cells())
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    return nbformat.writes(nb) + "\n"


def write_notebook(path: str | Path) -> Path:
    """Write the explorer notebook to ``path`` (what ``apps/explorer.ipynb`` holds) and return it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(notebook_text(), encoding="utf-8")
    return out


def default_notebook(folder: str | Path | None = None) -> Path:
    """``apps/explorer.ipynb`` of the repository, or a fresh copy written to ``folder``.

    Without ``folder`` the copy goes to a new temporary folder (left for the caller to
    remove); :func:`serve` passes its own temporary folder, which it removes on exit.
    """
    repo_copy = Path(__file__).resolve().parents[2] / "apps" / "explorer.ipynb"
    if repo_copy.is_file():
        return repo_copy
    where = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="bubblekit-classroom-"))
    return write_notebook(where / "explorer.ipynb")


# ------------------------------------------------------------------------------ settings
def _check_int(name: str, value: Any, minimum: int, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number between {minimum} and {maximum}, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, got {value!r}")
    return value


def _is_loopback(ip: str) -> bool:
    return ip in ("localhost", "::1") or ip.startswith("127.")


def pages(notebook: str | Path) -> list[Path]:
    """The notebooks a server of ``notebook`` serves: the file itself, or every ``.ipynb`` under a folder.

    Hidden folders and ``.ipynb_checkpoints`` are skipped (as Voila's pool does). Paths of
    a folder's notebooks are relative to it.
    """
    nb = Path(notebook)
    if nb.is_file():
        return [nb]
    return sorted(p.relative_to(nb) for p in nb.rglob("*.ipynb")
                  if not any(part.startswith(".") for part in p.relative_to(nb).parts))


def room_options(students: int = 1, *, cull_after_s: int = DEFAULT_CULL_AFTER_S,
                 iopub_timeout_s: int = DEFAULT_IOPUB_TIMEOUT_S) -> list[str]:
    """Voila options for a room of ``students`` (option names checked against Voila 0.5's traitlets).

    * ``--preheat_kernel=True --pool_size=N``: N kernels per page start and run the notebook
      before anyone arrives (VoilaConfiguration.preheat_kernel, .default_pool_size);
    * ``--MappingKernelManager.cull_idle_timeout=S`` and ``.cull_interval``: a kernel no page
      is connected to is shut down after S seconds idle (``cull_connected`` stays False);
      ``--VoilaConfiguration.multi_kernel_manager_class`` = :class:`RoomKernelManager`, so a
      kernel just taken from the pool has S seconds for its page to connect;
    * ``--VoilaExecutor.iopub_timeout=T``: seconds Voila waits for a cell's output.

    Args:
        students: kernels kept ready per page, 1..500.
        cull_after_s: seconds, >= 1.
        iopub_timeout_s: seconds, >= 1.
    """
    students = _check_int("students", students, 1, MAX_STUDENTS)
    cull_after_s = _check_int("cull_after_s", cull_after_s, 1, 7 * 24 * 3600)
    iopub_timeout_s = _check_int("iopub_timeout_s", iopub_timeout_s, 1, 3600)
    interval = max(1, min(60, cull_after_s // 5))
    return [
        "--preheat_kernel=True", f"--pool_size={students}",
        f"--VoilaConfiguration.multi_kernel_manager_class={__name__}.RoomKernelManager",
        f"--MappingKernelManager.cull_idle_timeout={cull_after_s}",
        f"--MappingKernelManager.cull_interval={interval}",
        "--MappingKernelManager.cull_connected=False",
        f"--VoilaExecutor.iopub_timeout={iopub_timeout_s}",
    ]


def voila_command(
    notebook: str | Path | None = None,
    port: int = DEFAULT_PORT,
    *,
    ip: str = "127.0.0.1",
    open_browser: bool = False,
    students: int = 1,
    cull_after_s: int = DEFAULT_CULL_AFTER_S,
    iopub_timeout_s: int = DEFAULT_IOPUB_TIMEOUT_S,
    connection_dir: str | Path | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The ``voila`` command line classroom mode runs (with the current Python).

    Args:
        notebook: the notebook to serve, or a folder of notebooks (one page each, listed at
            ``/``); default :func:`default_notebook`.
        port: TCP port, 1..65535; taken exactly (no silent fallback to another port).
        ip: interface to listen on; ``"0.0.0.0"`` lets other machines connect.
        open_browser: open a browser tab on this machine.
        students, cull_after_s, iopub_timeout_s: the room's size and timeouts (:func:`room_options`).
        connection_dir: folder for Voila's kernel connection files (default: the system's
            temporary folder).
        extra_args: more Voila options, appended as given.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int between 1 and 65535, got {port!r}")
    if not isinstance(ip, str) or not ip:
        raise ValueError(f"ip must be a host address such as '127.0.0.1' or '0.0.0.0', got {ip!r}")
    nb = Path(notebook) if notebook is not None else default_notebook()
    if not nb.exists():
        raise FileNotFoundError(f"notebook {str(nb)!r} does not exist")
    if nb.is_dir() and not pages(nb):
        raise FileNotFoundError(f"folder {str(nb)!r} holds no notebook (.ipynb) to serve")
    room = room_options(students, cull_after_s=cull_after_s, iopub_timeout_s=iopub_timeout_s)
    return [
        sys.executable, "-m", "voila", str(nb),
        f"--port={port}", f"--Voila.ip={ip}", "--Voila.port_retries=0",
        "--strip_sources=True", "--show_tracebacks=False", "--theme=light",
        *([] if open_browser else ["--no-browser"]),
        *room,
        *([f"--Voila.connection_dir_root={connection_dir}"] if connection_dir is not None else []),
        *extra_args,
    ]


# ------------------------------------------------------------------ Voila's kernel manager
def _room_kernel_manager_class() -> type:
    """Build :class:`RoomKernelManager` (imports jupyter_server, so only inside the Voila process)."""
    from datetime import datetime, timezone

    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

    class RoomKernelManager(AsyncMappingKernelManager):  # type: ignore[misc]
        """Jupyter's kernel manager with one change to idle culling, for preheated pools.

        A pool kernel ran the notebook long before a student arrives, so its last activity is
        old; once Voila hands it to a page, the culler could shut it down in the second
        before the student's browser connects, and the page's widgets would be dead. Here a
        kernel's idle time counts at the earliest from the first culling round that sees it
        outside the pool (Voila never culls pool kernels), so a page always has
        ``cull_idle_timeout`` seconds to connect.
        """

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._bk_first_seen: dict[str, datetime] = {}

        async def cull_kernel_if_idle(self, kernel_id: str) -> Any:
            kernel = self._kernels.get(kernel_id)
            if kernel is not None:
                now = datetime.now(timezone.utc)
                first = self._bk_first_seen.setdefault(kernel_id, now)
                last = getattr(kernel, "last_activity", None)
                if last is None or last < first:
                    kernel.last_activity = first
            for gone in [k for k in self._bk_first_seen if k not in self._kernels]:
                del self._bk_first_seen[gone]
            return await super().cull_kernel_if_idle(kernel_id)

        async def _finish_kernel_start(self, kernel_id: str) -> None:
            await super()._finish_kernel_start(kernel_id)
            self.add_restart_callback(kernel_id, lambda: self._bk_drop_from_pool(kernel_id, "restarted"), "restart")

        def _handle_kernel_died(self, kernel_id: str) -> None:
            super()._handle_kernel_died(kernel_id)
            self._bk_drop_from_pool(kernel_id, "died")

        def _bk_drop_from_pool(self, kernel_id: str, what: str) -> None:
            """A pool kernel died or was restarted by Jupyter: drop it from Voila's pool and start another.

            A restarted kernel has lost the notebook the pool ran in it, and a dead one answers
            nothing, so Voila would hand a page with dead widgets to the next student. Uses
            Voila 0.5's pool (``_pools``, ``fill_if_needed``) when present; does nothing with
            a Voila that has none. A restarted kernel left out of the pool is culled when idle.
            """
            pools = getattr(self, "_pools", None)
            fill = getattr(self, "fill_if_needed", None)
            if not isinstance(pools, dict):
                return
            for name, pool in pools.items():
                for task in list(pool):
                    try:
                        if not (task.done() and task.exception() is None):
                            continue
                        if task.result().get("kernel_id") != kernel_id:
                            continue
                    except Exception:  # noqa: BLE001 - a cancelled or odd entry is not ours to judge
                        continue
                    pool.remove(task)
                    self.log.warning("bubblekit: pool kernel %s of %s %s; starting another", kernel_id, name, what)
                    if callable(fill):
                        fill(notebook_name=name)

    RoomKernelManager.__module__ = __name__
    RoomKernelManager.__qualname__ = "RoomKernelManager"
    return RoomKernelManager


def __getattr__(name: str) -> Any:
    """``RoomKernelManager`` is built on first use (Voila imports it by name; bubblekit alone needs no jupyter_server)."""
    if name == "RoomKernelManager":
        cls = _room_kernel_manager_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- processes
@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    state: str
    cpu_ticks: int
    cmdline: str


def _read_procs() -> dict[int, _Proc]:
    """Every process this user can see (Linux ``/proc``; empty elsewhere). Zombies are left out."""
    out: dict[int, _Proc] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return out
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        if len(rest) < 13 or rest[0] in ("Z", "X"):
            continue
        out[int(entry.name)] = _Proc(int(entry.name), int(rest[1]), rest[0], int(rest[11]) + int(rest[12]), cmd)
    return out


def _descendants(root: int, procs: dict[int, _Proc]) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def server_kernels(marker: str, procs: dict[int, Any] | None = None) -> list[int]:
    """Process ids of the kernels of one classroom server: their command line names its folder ``marker``.

    Voila writes the kernels' connection files under ``--Voila.connection_dir_root``, a folder
    the server makes for itself, and each kernel's command line holds that path; so the
    kernels are found even after Voila is gone (an orphan is adopted by another process).
    """
    table = _read_procs() if procs is None else procs
    return sorted(p.pid for p in table.values() if marker in p.cmdline and "ipykernel" in p.cmdline)


def process_memory(pid: int) -> int | None:
    """Memory of process ``pid`` in bytes: its proportional set size (shared pages split between
    the processes that share them, so a sum over processes is the real total), or its resident
    size where PSS is not available; ``None`` when unknown."""
    base = Path("/proc") / str(pid)
    for name, key in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            for line in (base / name).read_text().splitlines():
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return None


def available_memory() -> int | None:
    """Memory the system can give without swapping (Linux ``MemAvailable``), bytes; ``None`` when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _signal_ok(fn: Any, *args: Any) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        fn(*args)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child (Voila) gets SIGTERM when this process dies, even by SIGKILL."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def stop_server(proc: subprocess.Popen[bytes], marker: str, grace_s: float = 5.0) -> int:
    """Stop Voila and every kernel of this server; return how many kernels there were.

    Voila gets ``SIGTERM`` (it shuts its kernels down) and so does every kernel's process
    group at once, so the room empties in about a second whatever its size; Voila gets one
    more second after its kernels are gone, and whatever is left after ``grace_s`` seconds
    gets ``SIGKILL`` (the server's temporary folder is removed by :func:`serve`).
    """
    kernels = set(server_kernels(marker))
    if proc.poll() is None:
        _signal_ok(os.killpg, proc.pid, signal.SIGTERM)
    for k in kernels:
        _signal_ok(os.killpg, k, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    kernels_gone_at: float | None = None
    while time.monotonic() < deadline:
        left = set(server_kernels(marker))
        kernels |= left
        if proc.poll() is not None and not left:
            break
        if not left:
            kernels_gone_at = kernels_gone_at or time.monotonic()
            if time.monotonic() - kernels_gone_at > 1.0:
                break  # the kernels are gone; Voila's own tidying up is not worth waiting for
        time.sleep(0.1)
    if proc.poll() is None:
        _signal_ok(os.killpg, proc.pid, signal.SIGKILL)
    for k in server_kernels(marker):
        kernels.add(k)
        _signal_ok(os.killpg, k, signal.SIGKILL)
        _signal_ok(os.kill, k, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    return len(kernels)


# ------------------------------------------------------------------------------- signals
class ClassroomStopped(KeyboardInterrupt):
    """The server was asked to stop (Ctrl+C, ``SIGTERM``, ``SIGHUP``). Attribute ``signum``: the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def signame(self) -> str:
        """``"SIGTERM"``, ``"SIGHUP"`` or ``"SIGINT"``."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[dict[str, Any]]:
    """``SIGINT``/``SIGTERM``/``SIGHUP`` raise :class:`ClassroomStopped` once (main thread only).

    Yields a dict whose ``"shield"`` key, while true, defers the signal (``"pending"``) so
    that the clean-up is never cut short.
    """
    state: dict[str, Any] = {"raised": False, "shield": False, "pending": None}
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def handler(signum: int, frame: Any) -> None:
        if state["raised"]:
            return
        if state["shield"]:
            state["pending"] = state["pending"] or signum
            return
        state["raised"] = True
        raise ClassroomStopped(signum)

    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.getsignal(sig)
            signal.signal(sig, handler)
    try:
        yield state
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


# ------------------------------------------------------------------------------- network
def network_addresses() -> list[str]:
    """This machine's IPv4 addresses other machines can use (loopback excluded), best first.

    The first is the address of the interface that holds the default route (found by
    "connecting" a UDP socket, which sends nothing); then the host name's addresses.
    """
    found: list[str] = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, no packet leaves for UDP connect
        found.append(s.getsockname()[0])
    with contextlib.suppress(OSError):
        found.extend(socket.gethostbyname_ex(socket.gethostname())[2])
    out: list[str] = []
    for a in found:
        if a and not a.startswith("127.") and a != "0.0.0.0" and a not in out:
            out.append(a)
    return out


def _port_problem(ip: str, port: int) -> str | None:
    """Why the server could not listen on ``ip:port`` now, or ``None``."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> bool:
    """Wait until something listens on 127.0.0.1:``port``; ``False`` if ``proc`` ended or the time ran out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False


def _tail(path: Path, n: int = 20) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
    except OSError:
        return ""


# -------------------------------------------------------------------------------- serving
@dataclass
class _Room:
    """What :func:`serve` knows about the running room."""

    students: int
    n_pages: int
    marker: str
    started: float = field(default_factory=time.monotonic)

    @property
    def pool(self) -> int:
        return self.students * self.n_pages


def _room_quiet(proc: subprocess.Popen[bytes], room: _Room, samples: list[int]) -> tuple[bool, int]:
    """Sample once: (nothing ran in Voila or its kernels for the last two seconds, kernels running)."""
    table = _read_procs()
    kernels = server_kernels(room.marker, table)
    pids = [proc.pid, *kernels]
    ticks = sum(table[p].cpu_ticks for p in pids if p in table)
    samples.append(ticks)
    del samples[:-5]
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    # at most ~3% of one core over the last 2 s (4 samples, 0.5 s apart): idle kernels and Voila
    quiet = len(samples) >= 5 and samples[-1] - samples[0] <= max(2, int(0.06 * hz))
    return quiet, len(kernels)


#: Seconds of quiet with fewer kernels than the pool after which the room is declared ready anyway.
_SHORT_POOL_WAIT_S = 20.0


def _page_urls(host: str, port: int, notebook: Path) -> list[str]:
    if notebook.is_file():
        return [f"http://{host}:{port}/"]
    return [f"http://{host}:{port}/voila/render/{p.as_posix()}" for p in pages(notebook)]


def _ready_lines(proc: subprocess.Popen[bytes], room: _Room, notebook: Path, ip: str, port: int,
                 cull_after_s: int) -> list[str]:
    kernels = server_kernels(room.marker)
    mem_k = [m for m in (process_memory(k) for k in kernels) if m is not None]
    mem_v = process_memory(proc.pid)
    secs = time.monotonic() - room.started
    who = f"{room.students} student{'s' if room.students > 1 else ''}"
    lines = [f"bubblekit classroom: room ready for {who} after {secs:.0f} s "
             f"({len(kernels)} kernel{'s' if len(kernels) != 1 else ''} preheated)."]
    if len(kernels) < room.pool:
        lines[0] += (f" Only {len(kernels)} of {room.pool} kernels started: Voila starts another for each student "
                     f"beyond them (see its log with --verbose).")
    local = _page_urls("127.0.0.1" if ip in ("0.0.0.0", "::") or _is_loopback(ip) else ip, port, notebook)
    lines.append("  open on this machine: " + "  ".join(local))
    if not _is_loopback(ip):
        addrs = network_addresses() if ip in ("0.0.0.0", "::") else [ip]
        if addrs:
            for a in addrs[:3]:
                lines.append("  students open:        " + "  ".join(_page_urls(a, port, notebook)))
        else:
            lines.append(f"  students open:        http://<this machine's address>:{port}/ (no network address found)")
    if mem_k and mem_v is not None:
        per = sum(mem_k) / len(mem_k)
        now = mem_v + sum(mem_k)
        full = mem_v + per * (room.pool * 2)
        avail = available_memory()
        lines.append(f"  memory: {_size(now)} now (Voila {_size(mem_v)} + {len(mem_k)} kernels of ~{_size(per)}); "
                     f"~{_size(full)} with every student connected and the pool refilled behind them"
                     + (f" ({_size(avail)} available)" if avail is not None else ""))
        if avail is not None and full - now > avail:
            lines.append(f"  WARNING: that is more than this machine has available: use fewer --students "
                         f"(each needs ~{_size(2 * per)})")
    lines.append(f"  a closed page's kernel is freed after {cull_after_s} s idle (--cull-after); "
                 f"Ctrl+C stops the server and every kernel.")
    return lines


def serve(
    port: int = DEFAULT_PORT,
    notebook: str | Path | None = None,
    *,
    ip: str = "127.0.0.1",
    students: int | None = None,
    cull_after_s: int = DEFAULT_CULL_AFTER_S,
    iopub_timeout_s: int = DEFAULT_IOPUB_TIMEOUT_S,
    open_browser: bool = False,
    verbose: bool = False,
    extra_args: Sequence[str] = (),
) -> int:
    """Serve the explorer notebook (or a folder of notebooks) with Voila, code hidden, sized for a room.

    Prints when the room is ready, the addresses and the memory, and serves until Ctrl+C,
    ``SIGTERM`` or ``SIGHUP``; then stops Voila and every kernel, removes the server's
    temporary folder and prints one line. Used by ``python -m bubblekit classroom``.

    Args:
        port: TCP port (checked free before starting).
        notebook: a notebook or a folder of notebooks; default :func:`default_notebook`.
        ip: interface to listen on; anything but loopback opens the server to the network
            (a warning says so).
        students: kernels kept ready per page; default 1 on loopback, :data:`SHARED_STUDENTS`
            when shared.
        cull_after_s, iopub_timeout_s: see :func:`room_options`.
        open_browser: open a tab on this machine.
        verbose: show Voila's own log (otherwise it goes to a file shown only if Voila fails).
        extra_args: more Voila options.

    Returns:
        ``128 + N`` when stopped by signal N (130 for Ctrl+C, as shells report it); Voila's
        exit code when it ended by itself; 2 when the port cannot be used.
    """
    shared = not _is_loopback(ip)
    n_students = students if students is not None else (SHARED_STUDENTS if shared else 1)
    problem = _port_problem(ip, port)
    if problem:
        print(f"bubblekit classroom: cannot listen on {ip}:{port}: {problem} (another server on that port? "
              f"stop it or choose --port)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="bubblekit-classroom-"))
    try:
        nb = Path(notebook) if notebook is not None else default_notebook(tmp)
        cmd = voila_command(nb, port, ip=ip, open_browser=open_browser, students=n_students,
                            cull_after_s=cull_after_s, iopub_timeout_s=iopub_timeout_s, connection_dir=tmp,
                            extra_args=extra_args)
        room = _Room(n_students, len(pages(nb)) if nb.is_dir() else 1, str(tmp))
        return _serve(cmd, nb, room, ip, port, cull_after_s, verbose, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _serve(cmd: list[str], nb: Path, room: _Room, ip: str, port: int, cull_after_s: int, verbose: bool,
           tmp: Path) -> int:
    log_path = tmp / "voila.log"
    kernels_ended = 0
    with _stop_on_signals() as state:
        proc: subprocess.Popen[bytes] | None = None
        try:
            if not _is_loopback(ip):
                print(f"WARNING: the classroom server is open to the network: anyone who can reach this machine on "
                      f"port {port} can open the explorer and start kernels on it (no password). Use it only on a "
                      f"trusted classroom network; Ctrl+C stops it.", flush=True)
            print(f"bubblekit classroom: starting Voila for {nb} on {ip}:{port}, preheating {room.pool} "
                  f"kernel{'s' if room.pool != 1 else ''} ({room.students} per page x {room.n_pages} "
                  f"page{'s' if room.n_pages != 1 else ''})...", flush=True)
            state["shield"] = True
            with open(log_path, "wb") as log:
                out = None if verbose else log
                # the parent-death signal needs code between fork and exec: only safe without other threads
                tie = sys.platform.startswith("linux") and threading.active_count() == 1
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT if out else None,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=_die_with_parent if tie else None)
            state["shield"] = False
            if state["pending"] is not None:
                state["raised"] = True
                raise ClassroomStopped(state["pending"])
            if not wait_listening(port, proc):
                code = proc.poll()
                print(f"bubblekit classroom: Voila did not start (exit code {code}). Its last output:\n"
                      f"{_tail(log_path)}", file=sys.stderr)
                return 1 if code in (None, 0) else int(code)
            samples: list[int] = []
            last_note = time.monotonic()
            ready = False
            quiet_since: float | None = None
            while proc.poll() is None:
                if not ready:
                    quiet, running = _room_quiet(proc, room, samples)
                    quiet_since = (quiet_since or time.monotonic()) if quiet else None
                    # full pool and quiet; or quiet for a while with kernels missing (one failed to start)
                    short = quiet_since is not None and time.monotonic() - quiet_since > _SHORT_POOL_WAIT_S
                    ready = quiet and (running >= room.pool or short)
                    if ready:
                        print("\n".join(_ready_lines(proc, room, nb, ip, port, cull_after_s)), flush=True)
                    elif time.monotonic() - last_note > 15:
                        print(f"bubblekit classroom: preheating, {running} of {room.pool} kernels started "
                              f"({time.monotonic() - room.started:.0f} s)", flush=True)
                        last_note = time.monotonic()
                time.sleep(0.5)
            print(f"bubblekit classroom: Voila exited with code {proc.returncode}. Its last output:\n"
                  f"{_tail(log_path)}", file=sys.stderr)
            return int(proc.returncode or 0)
        except ClassroomStopped as exc:
            state["shield"] = True
            if proc is not None:
                kernels_ended = stop_server(proc, room.marker)
                proc = None
            print(f"bubblekit classroom: stopped by {exc.signame}; Voila and its {kernels_ended} "
                  f"kernel{'s' if kernels_ended != 1 else ''} ended, temporary files removed", file=sys.stderr,
                  flush=True)
            return 128 + exc.signum
        finally:
            state["shield"] = True
            if proc is not None:
                stop_server(proc, room.marker)


def read_until(stream: Any, needle: str, timeout_s: float) -> str:
    """Read a server's output (a binary pipe: ``Popen(..., stdout=PIPE)`` without ``text``) until ``needle``.

    For scripts that drive ``python -m bubblekit classroom`` (the tests, the benchmark):
    waits at most ``timeout_s`` seconds, so a server that never prints the line cannot hang
    them. Returns everything read (decoded); raises ``TimeoutError`` or ``EOFError`` with it.
    """
    import select

    fd = stream.fileno()
    buf = b""
    deadline = time.monotonic() + timeout_s
    while needle.encode() not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no {needle!r} within {timeout_s:.0f} s; read:\n{buf.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError(f"output ended before {needle!r}; read:\n{buf.decode(errors='replace')}")
            buf += chunk
    return buf.decode(errors="replace")


# ------------------------------------------------------------------------ visiting pages
_OUTPUT_RE = re.compile(r'<script type="application/vnd\.voila\.cell-output\+json">\s*(.*?)\s*</script>', re.S)
_CELL_RE = re.compile(r'<div id="cell-id=([^"]+)" class="jp-Cell jp-CodeCell')


def page_report(html: str, code_cells: int | None = None) -> dict[str, Any]:
    """What a Voila page holds: code cells, their outputs, widget views, errors; and whether it is complete.

    Args:
        html: the page as served.
        code_cells: how many code cells the notebook has (default: as many as the page lists).

    Returns:
        ``{"complete", "code_cells", "cells_with_output", "widgets", "model_ids", "errors", "kernel_id"}``.
        A page is complete when every code cell shows an output, no output is an error and
        every widget view names its model. A cell whose output Voila gave up waiting for
        (``iopub_timeout``) shows nothing, so the page is incomplete.
    """
    starts = [(m.start(), m.group(1)) for m in _CELL_RE.finditer(html)]
    with_output = 0
    model_ids: list[str] = []
    errors = 0
    for k, (pos, _cell) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(html)
        outs = []
        for m in _OUTPUT_RE.finditer(html, pos, end):
            try:
                outs.append(json.loads(m.group(1)))
            except json.JSONDecodeError:
                errors += 1
        if outs:
            with_output += 1
        for o in outs:
            if o.get("output_type") == "error":
                errors += 1
            view = o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view is not None:
                if view.get("model_id"):
                    model_ids.append(str(view["model_id"]))
                else:
                    errors += 1
    expected = len(starts) if code_cells is None else code_cells
    kernel = re.search(r'"kernelId": "([0-9a-f-]+)"', html)
    return {"complete": expected > 0 and with_output >= expected and errors == 0, "code_cells": len(starts),
            "cells_with_output": with_output, "widgets": len(model_ids), "model_ids": model_ids, "errors": errors,
            "kernel_id": kernel.group(1) if kernel else None}


@dataclass
class Visit:
    """One simulated student: the page load and, optionally, the widgets' kernel connection.

    Attributes:
        wait_s: seconds from the request to the whole page (what a student waits).
        status: HTTP status (0 when the request failed).
        report: :func:`page_report` of the page.
        widgets_alive: every widget view's model exists in the page's kernel (asked over the
            kernel's websocket, as the browser does); ``None`` when not checked.
        error: what went wrong, if anything.
    """

    wait_s: float
    status: int
    report: dict[str, Any]
    widgets_alive: bool | None = None
    error: str = ""
    _ws: Any = field(default=None, repr=False)

    @property
    def complete(self) -> bool:
        """Page complete and, when checked, its widgets alive in the kernel."""
        return self.status == 200 and bool(self.report.get("complete")) and self.widgets_alive is not False

    @property
    def kernel_id(self) -> str | None:
        """The page's kernel."""
        return self.report.get("kernel_id")

    def leave(self) -> None:
        """Close the page: drop the kernel connection (as closing a tab does)."""
        if self._ws is not None:
            with contextlib.suppress(Exception):
                self._ws.close()  # the ExitStack holding the websocket
            self._ws = None


def _comm_ids(ws: Any, timeout_s: float) -> set[str]:
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "", "session": uuid.uuid4().hex, "msg_type": "comm_info_request",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "content": {"target_name": "jupyter.widget"}, "channel": "shell",
        "buffers": [],
    }))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg.get("msg_type") == "comm_info_reply" and msg.get("parent_header", {}).get("msg_id") == msg_id:
            return set(msg.get("content", {}).get("comms", {}))
    raise TimeoutError("no comm_info_reply")


def visit(url: str, *, code_cells: int | None = None, connect: bool = True, timeout_s: float = 120.0) -> Visit:
    """Load ``url`` as a student's browser would; check the page; optionally stay connected.

    With ``connect`` the page's kernel websocket is opened (``/api/kernels/<id>/channels``)
    and asked which widget models it holds (``comm_info_request``); the connection stays
    open until :meth:`Visit.leave`, so the kernel counts as in use, as with an open tab.
    """
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            status = int(resp.status)
            html = resp.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError) as exc:
        return Visit(time.monotonic() - t0, getattr(exc, "code", 0) or 0, {}, error=str(exc))
    wait = time.monotonic() - t0
    report = page_report(html, code_cells)
    v = Visit(wait, status, report)
    if connect and report["kernel_id"]:
        from websockets.sync.client import connect as ws_connect

        base = url.split("://", 1)[1].split("/", 1)[0]
        stack = contextlib.ExitStack()
        v._ws = stack
        try:
            ws = stack.enter_context(ws_connect(
                f"ws://{base}/api/kernels/{report['kernel_id']}/channels?session_id={uuid.uuid4().hex}",
                open_timeout=timeout_s, max_size=None))
            comms = _comm_ids(ws, timeout_s)
            v.widgets_alive = all(m in comms for m in report["model_ids"])
        except Exception as exc:  # noqa: BLE001 - any failure is the visit's result
            v.widgets_alive = False
            v.error = f"kernel connection: {exc}"
    return v


def visit_room(url: str, visitors: int, *, code_cells: int | None = None, connect: bool = True,
               timeout_s: float = 180.0) -> list[Visit]:
    """``visitors`` students opening ``url`` at the same moment (one thread each); the visits, in order.

    Every visit stays connected (see :func:`visit`); call :meth:`Visit.leave` on each to close them.
    """
    results: list[Visit | None] = [None] * visitors
    barrier = threading.Barrier(visitors)

    def one(k: int) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(timeout=30)
        results[k] = visit(url, code_cells=code_cells, connect=connect, timeout_s=timeout_s)

    threads = [threading.Thread(target=one, args=(k,), daemon=True) for k in range(visitors)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout_s + 60)
    return [r if r is not None else Visit(math.inf, 0, {}, error="no answer") for r in results]


@dataclass(frozen=True)
class RoomSummary:
    """Figures of a room's visits: waits in seconds, pages that were not complete."""

    visitors: int
    median_wait_s: float
    max_wait_s: float
    incomplete: int

    def line(self) -> str:
        """One line for a report."""
        return (f"{self.visitors} visitors: wait median {self.median_wait_s:.2f} s, max {self.max_wait_s:.2f} s; "
                f"incomplete pages {self.incomplete}")


def summarize_visits(visits: Sequence[Visit]) -> RoomSummary:
    """Median and largest wait and the number of incomplete pages."""
    waits = [v.wait_s for v in visits]
    return RoomSummary(len(visits), statistics.median(waits), max(waits), sum(not v.complete for v in visits))


def kernel_exists(base_url: str, kernel_id: str, timeout_s: float = 10.0) -> bool:
    """Whether the server still has kernel ``kernel_id`` (``GET /api/kernels/<id>``)."""
    try:
        with urllib.request.urlopen(f"{base_url.rstrip('/')}/api/kernels/{kernel_id}", timeout=timeout_s) as resp:
            return int(resp.status) == 200
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return False
        raise


# ---------------------------------------------------------------------------- command line
_VOILA_HELP = "Voila's own options go after --, e.g. 'python -m bubblekit classroom -- --theme=dark'"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bubblekit classroom", allow_abbrev=False,
        description="Serve the pipeline-bubble explorer as a web app for a room (Voila, no code shown), with a "
                    "preheated kernel pool sized by --students, idle culling and a 30 s output wait.",
        epilog=_VOILA_HELP,
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument("--share", action="store_true",
                        help="open the server to the local network (listen on 0.0.0.0) and print the address "
                             "students open")
    parser.add_argument("--ip", default=None,
                        help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 = --share)")
    parser.add_argument("--students", type=int, default=None,
                        help=f"kernels kept ready per page (default 1, or {SHARED_STUDENTS} with --share)")
    parser.add_argument("--cull-after", type=int, default=DEFAULT_CULL_AFTER_S, metavar="SECONDS",
                        help=f"free a closed page's kernel after this many idle seconds (default {DEFAULT_CULL_AFTER_S})")
    parser.add_argument("--iopub-timeout", type=int, default=DEFAULT_IOPUB_TIMEOUT_S, metavar="SECONDS",
                        help=f"seconds Voila waits for a cell's output (default {DEFAULT_IOPUB_TIMEOUT_S}; Voila's is 4)")
    parser.add_argument("--notebook", default=None,
                        help="notebook to serve, or a folder of notebooks (one page each); default apps/explorer.ipynb")
    parser.add_argument("--open-browser", action="store_true", help="open a browser tab on this machine")
    parser.add_argument("--verbose", action="store_true", help="show Voila's own log")
    parser.add_argument("--print-command", action="store_true", help="print the voila command and exit")
    return parser


def _option_names(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--")]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m bubblekit classroom [--share] [--students N] [--port N] ... [-- VOILA OPTIONS]``.

    Options must be spelled out: an unknown or abbreviated option (``--prot 9000``) is an
    error naming it and the closest option, never silently ignored.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args_list:
        cut = args_list.index("--")
        args_list, extra = args_list[:cut], args_list[cut + 1:]
    parser = _parser()
    args, unknown = parser.parse_known_args(args_list)
    if unknown:
        bad = unknown[0]
        close = difflib.get_close_matches(bad.split("=", 1)[0], _option_names(parser), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        parser.error(f"unknown option {bad!r}{hint}. {_VOILA_HELP}.")
    if args.share and args.ip not in (None, "0.0.0.0"):
        parser.error(f"--share listens on every address (0.0.0.0); it cannot be combined with --ip {args.ip}")
    ip = "0.0.0.0" if args.share else (args.ip or "127.0.0.1")
    shared = not _is_loopback(ip)
    students = args.students if args.students is not None else (SHARED_STUDENTS if shared else 1)
    for option, value, low, high in (("--students", students, 1, MAX_STUDENTS),
                                     ("--cull-after", args.cull_after, 1, 7 * 24 * 3600),
                                     ("--iopub-timeout", args.iopub_timeout, 1, 3600)):
        if not low <= value <= high:
            parser.error(f"{option} {value}: must be between {low} and {high}")
    try:
        cmd = voila_command(args.notebook, args.port, ip=ip, open_browser=args.open_browser, students=students,
                            cull_after_s=args.cull_after, iopub_timeout_s=args.iopub_timeout, extra_args=extra)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    if args.print_command:
        print(shlex.join(cmd))
        return 0
    return serve(args.port, args.notebook, ip=ip, students=students, cull_after_s=args.cull_after,
                 iopub_timeout_s=args.iopub_timeout, open_browser=args.open_browser, verbose=args.verbose,
                 extra_args=extra)


if __name__ == "__main__":
    sys.exit(main())
