"""Start one process per rank, wait with a deadline, always reap them (no torch import here).

Workers are ``python -m bubblekit.lab worker`` processes, each in its own session so that
a stuck rank and anything it started can be killed by its process-group id. The parent
never leaves a worker behind: on success, failure, timeout, Ctrl-C, ``SIGTERM`` or
``SIGHUP`` (a closed terminal) every worker it started is killed and waited for, and the
temporary folder (``bubblekit-lab-*``) is removed. Should the parent itself be killed
outright (``SIGKILL``), each worker notices that its parent is gone and ends itself
(:func:`watch_parent`).

Before any worker starts, :func:`preflight` checks what only this machine can tell (CUDA
for ``nccl``, a writable ``trace_dir``) and returns warnings (more ranks than CPU cores,
with the memory one rank takes, measured).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bubblekit._system import available_memory
from bubblekit.lab._config import LabConfig, _tagged, cpu_count
from bubblekit.lab._progress import ENV_VAR, ProgressBoard, describe_stall
from bubblekit.text import format_bytes

__all__ = [
    "launch", "free_port", "LabRunError", "LabInterrupted", "in_torchrun", "preflight", "stop_on_signals",
    "SignalGuard",
    "watch_parent", "file_problem", "folder_problem", "cuda_device_count", "measure_rank_memory", "PARENT_ENV",
]

#: Environment variable holding the launcher's process id for its workers.
PARENT_ENV = "BUBBLEKIT_LAB_PARENT"


class LabRunError(RuntimeError):
    """A lab run failed: a rank exited with an error or the run passed its time limit."""


class LabInterrupted(KeyboardInterrupt):
    """The launcher was asked to stop (Ctrl-C, ``SIGTERM``, ``SIGHUP``); its workers are already ended.

    A subclass of ``KeyboardInterrupt``, so code that handles Ctrl-C handles these too.

    Attributes:
        signum: the signal number.
    """

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


def _stop_signals() -> list[signal.Signals]:
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    return [getattr(signal, n) for n in names if hasattr(signal, n)]


class SignalGuard:
    """What :func:`stop_on_signals` yields: turns stop signals into :class:`LabInterrupted`, except inside :meth:`shield`."""

    def __init__(self) -> None:
        self.raised = False
        self.pending: int | None = None
        self._shielded = 0

    def handler(self, signum: int, frame: Any) -> None:
        """The signal handler: raise :class:`LabInterrupted` once; defer it inside :meth:`shield`; ignore repeats."""
        if self.raised:
            return
        if self._shielded:
            self.pending = self.pending or signum
            return
        self.raised = True
        raise LabInterrupted(signum)

    @contextlib.contextmanager
    def shield(self) -> Iterator[None]:
        """Run the block to its end (clean-up, saving a record); a stop signal meanwhile is raised after it."""
        self._shielded += 1
        try:
            yield
        finally:
            self._shielded -= 1
        if not self._shielded and self.pending is not None and not self.raised:
            self.raised = True
            raise LabInterrupted(self.pending)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[SignalGuard]:
    """While inside, ``SIGINT``/``SIGTERM``/``SIGHUP`` raise :class:`LabInterrupted` (once; later ones are ignored).

    Yields a :class:`SignalGuard` whose :meth:`~SignalGuard.shield` protects clean-up code
    from being cut short. Only the main thread can set signal handlers; elsewhere the
    guard never raises. The previous handlers are restored on exit.
    """
    guard = SignalGuard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    previous = {}
    for sig in _stop_signals():
        previous[sig] = signal.getsignal(sig)
        signal.signal(sig, guard.handler)
    try:
        yield guard
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def watch_parent(parent_pid: int, interval_s: float = 0.2) -> threading.Thread:
    """In a worker: a daemon thread that kills this worker's process group when ``parent_pid`` is gone.

    A process whose parent dies is adopted by another process, so its parent id changes;
    the thread checks every ``interval_s`` seconds and then ends the worker with
    ``SIGKILL`` (the worker leads its own session, so whatever it started goes too).
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        try:
            os.killpg(os.getpgid(0), signal.SIGKILL)
        finally:
            os._exit(1)

    t = threading.Thread(target=watch, name="bubblekit-lab-parent-watch", daemon=True)
    t.start()
    return t


def in_torchrun() -> bool:
    """True when this process was started by ``torchrun`` (or another launcher setting the rank variables)."""
    if "TORCHELASTIC_RUN_ID" in os.environ:
        return True
    return all(k in os.environ for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------ checks before the run
def file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written as a file, or ``None`` when it can.

    Tried for real (the file is opened for appending, nothing is truncated; a file created
    by the probe is removed again), so permissions, read-only disks and a path under a
    file are all caught, also for the superuser.
    """
    p = Path(path)
    if p.is_dir():
        return "it is a folder (give a file name)"
    if not p.parent.is_dir():
        return f"its folder {str(p.parent)!r} does not exist"
    existed = p.exists()
    try:
        with open(p, "ab"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    if not existed:
        with contextlib.suppress(OSError):
            p.unlink()
    return None


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why files cannot be written in folder ``path`` (created if missing), or ``None`` when they can."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        return "it is a file, not a folder"
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".bubblekit-write-test-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


_CUDA_PROBE = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"

_MEMORY_PROBE = """
import json, resource, sys
import torch
from torch.distributed import pipelining  # noqa: F401 (what a worker imports)
from bubblekit.lab._model import make_stage_module
c = json.loads(sys.argv[1])
torch.set_num_threads(1)
mods = [make_stage_module(s, c["hidden"], c["layers"]) for s in range(c["v"])]
x = torch.randn(c["batch"], c["seq"], c["hidden"])
for mod in mods:
    x = mod(x)
x.float().pow(2).mean().backward()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(rss if sys.platform == "darwin" else rss * 1024)
"""


def cuda_device_count(timeout_s: float = 120.0) -> int:
    """CUDA GPUs torch sees on this machine, asked in a separate process (the launcher imports no torch)."""
    out = subprocess.run([sys.executable, "-c", _CUDA_PROBE], capture_output=True, text=True, timeout=timeout_s,
                         stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise RuntimeError(f"could not ask torch for CUDA devices: {out.stderr.strip()[-500:]}")
    return int(out.stdout.strip().splitlines()[-1])


def measure_rank_memory(cfg: LabConfig, timeout_s: float = 120.0) -> int | None:
    """Peak memory (bytes, resident) of a process that does what one rank of ``cfg`` does first.

    It imports torch and its pipelining package, builds ``cfg.v`` stages of the model and
    runs one microbatch forward and backward through them: a lower bound for a rank (a
    real rank also holds in-flight activations and the process group's buffers). ``None``
    when the measurement fails.
    """
    spec = json.dumps({"hidden": cfg.hidden, "layers": cfg.layers, "v": int(cfg.v or 1), "batch": cfg.batch,
                       "seq": cfg.seq})
    try:
        out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, spec], capture_output=True, text=True,
                             timeout=timeout_s, stdin=subprocess.DEVNULL, env={**os.environ, "OMP_NUM_THREADS": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return int(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def preflight(cfg: LabConfig, *, measure: bool = True) -> list[str]:
    """Check what only this machine can tell before any worker starts; return warnings.

    Raises ``ValueError`` (with ``field_of(exc)`` set, see :mod:`bubblekit.lab._config`) for
    ``backend="nccl"`` without (enough) CUDA GPUs and for a ``trace_dir`` that cannot be
    written. Warns when a CPU run puts more threads on the cores than there are cores
    (``ranks x threads > cores``): the warning gives the oversubscription and the memory of
    one rank, measured with :func:`measure_rank_memory` (skipped with ``measure=False``).
    """
    warnings: list[str] = []
    if cfg.backend == "nccl":
        gpus = cuda_device_count()
        if gpus == 0:
            raise _tagged(ValueError("backend 'nccl' needs CUDA GPUs; this machine has none: use --backend gloo "
                                     "(backend='gloo' in Python)"), "backend")
        if gpus < cfg.ranks:
            raise _tagged(ValueError(f"backend 'nccl' needs one CUDA GPU per rank: ranks={cfg.ranks} but this machine "
                                     f"has {gpus}; use --ranks {gpus} or --backend gloo"), "ranks")
    if cfg.trace_dir is not None:
        problem = folder_problem(cfg.trace_dir)
        if problem:
            raise _tagged(ValueError(f"trace_dir {cfg.trace_dir!r} cannot be written: {problem}; choose a folder "
                                     f"you can write to (checked before the run, so no run is lost)"), "trace_dir")
    cores = cpu_count()
    threads = int(cfg.threads or 1)
    if cfg.backend == "gloo" and cfg.ranks * threads > cores:
        load = cfg.ranks * threads / cores
        text = (f"{cfg.ranks} ranks x {threads} thread{'s' if threads > 1 else ''} on {cores} CPU "
                f"core{'s' if cores > 1 else ''}: oversubscribed {load:.1f}x, so ranks take turns on the cores and the "
                f"measured bubbles include waiting for a core, not only the pipeline's own")
        per_rank = measure_rank_memory(cfg) if measure else None
        if per_rank is not None:
            total = per_rank * cfg.ranks
            text += (f"; each rank takes ~{format_bytes(per_rank)} (measured: torch and one rank's stages, one microbatch), "
                     f"~{format_bytes(total)} for {cfg.ranks} ranks")
            avail = available_memory()
            if avail is not None:
                text += f" ({format_bytes(avail)} available{': it may not fit' if total > avail else ''})"
        warnings.append(text)
    return warnings


# ----------------------------------------------------------------------------- the run
def _tail(path: Path, n: int = 25) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no output)"
    return "\n".join(lines[-n:]) or "(no output)"


def _kill(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            pass


def _warn(text: str) -> None:
    import warnings

    warnings.warn(text, RuntimeWarning, stacklevel=3)


def _timeout_message(cfg: LabConfig, board: ProgressBoard, procs: list[subprocess.Popen[bytes]],
                     logs: list[Path]) -> str:
    alive = [p.poll() is None for p in procs]
    culprit, where = describe_stall(board.read(), time.perf_counter_ns(), alive)
    head = f"lab run of {cfg.schedule} passed its limit of {cfg.timeout_s:g} s (workers killed). "
    hint = "Raise --timeout (timeout_s) if the model is just slow."
    if culprit is None:
        head += "No rank had joined the process group yet: they were still starting (importing torch). "
        culprit = 0
    else:
        head += f"Rank {culprit} stopped progressing. "
    out = head + f"Where each rank was: {where}. {hint}"
    tail = _tail(logs[culprit])
    if tail != "(no output)":
        out += f"\nRank {culprit}'s last output:\n{tail}"
    return out


def launch(cfg: LabConfig, *, warn: Callable[[str], None] | None = None, checked: bool = False) -> dict[str, Any]:
    """Run ``cfg`` with ``cfg.ranks`` local worker processes; return rank 0's record.

    Args:
        cfg: the run.
        warn: called with each :func:`preflight` warning (default: ``warnings.warn``).
        checked: ``True`` when the caller has already run :func:`preflight`.

    Raises:
        ValueError: :func:`preflight` refused the configuration (nothing was started).
        LabRunError: a rank failed (its last output lines are in the message) or the run
            took longer than ``cfg.timeout_s`` seconds (the rank that stopped progressing
            first is named).
        LabInterrupted: Ctrl-C, ``SIGTERM`` or ``SIGHUP`` arrived; every worker was ended
            and the temporary folder removed before this is raised.
    """
    with stop_on_signals() as guard:
        if not checked:
            for text in preflight(cfg):
                (warn or _warn)(text)
        tmp: str | None = None
        try:
            with guard.shield():
                tmp = tempfile.mkdtemp(prefix="bubblekit-lab-")
            return _launch_in(cfg, Path(tmp), guard)
        finally:
            with guard.shield():
                if tmp is not None:
                    shutil.rmtree(tmp, ignore_errors=True)


def _launch_in(cfg: LabConfig, tmpdir: Path, guard: SignalGuard) -> dict[str, Any]:
    cfg_path = tmpdir / "config.json"
    out_path = tmpdir / "record.json"
    cfg_path.write_text(json.dumps(cfg.to_dict()), encoding="utf-8")
    board = ProgressBoard(tmpdir / "progress.bin", cfg.ranks, create=True)
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    try:
        for r in range(cfg.ranks):
            env = dict(os.environ)
            env.update({
                "RANK": str(r), "WORLD_SIZE": str(cfg.ranks), "LOCAL_RANK": str(r),
                "LOCAL_WORLD_SIZE": str(cfg.ranks), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                "OMP_NUM_THREADS": str(cfg.threads), "PYTHONUNBUFFERED": "1",
                ENV_VAR: str(board.path), PARENT_ENV: str(os.getpid()),
            })
            env.pop("TORCHELASTIC_RUN_ID", None)
            log = tmpdir / f"rank{r}.log"
            logs.append(log)
            cmd = [sys.executable, "-m", "bubblekit.lab", "worker", "--config-file", str(cfg_path)]
            if r == 0:
                cmd += ["--record", str(out_path)]
            with open(log, "wb") as fh:
                procs.append(subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + float(cfg.timeout_s)
        while True:
            codes = [p.poll() for p in procs]
            failed = [r for r, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                r = failed[0]
                raise LabRunError(
                    f"lab run of {cfg.schedule} failed: rank {r} exited with code {codes[r]}. "
                    f"Its last output:\n{_tail(logs[r])}"
                )
            if all(c == 0 for c in codes):
                break
            if time.monotonic() > deadline:
                raise LabRunError(_timeout_message(cfg, board, procs, logs))
            time.sleep(0.05)
    finally:
        with guard.shield():
            _kill(procs)
            board.close()
    if not out_path.exists():
        raise LabRunError(f"lab run of {cfg.schedule} finished but rank 0 wrote no record:\n{_tail(logs[0])}")
    return json.loads(out_path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
