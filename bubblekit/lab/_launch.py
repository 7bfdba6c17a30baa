"""Start one process per rank, wait with a deadline, always reap them (no torch import here).

Workers are ``python -m bubblekit.lab worker`` processes, each in its own session so that
a stuck rank and anything it started can be killed by its process-group id. The parent
never leaves a worker behind: on success, failure, timeout or Ctrl-C every worker it
started is killed and waited for.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bubblekit.lab._config import LabConfig

__all__ = ["launch", "free_port", "LabRunError", "in_torchrun"]


class LabRunError(RuntimeError):
    """A lab run failed: a rank exited with an error or the run passed its time limit."""


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


def launch(cfg: LabConfig) -> dict[str, Any]:
    """Run ``cfg`` with ``cfg.ranks`` local worker processes; return rank 0's record.

    Raises:
        LabRunError: a rank failed (its last output lines are in the message) or the run
            took longer than ``cfg.timeout_s`` seconds.
    """
    with tempfile.TemporaryDirectory(prefix="bubblekit-lab-") as tmp:
        tmpdir = Path(tmp)
        cfg_path = tmpdir / "config.json"
        out_path = tmpdir / "record.json"
        cfg_path.write_text(json.dumps(cfg.to_dict()), encoding="utf-8")
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
                    running = [r for r, c in enumerate(codes) if c is None]
                    raise LabRunError(
                        f"lab run of {cfg.schedule} passed its limit of {cfg.timeout_s:g} s with ranks "
                        f"{running} still running (killed). Raise timeout_s for bigger models; rank "
                        f"{running[0]}'s last output:\n{_tail(logs[running[0]])}"
                    )
                time.sleep(0.05)
        finally:
            _kill(procs)
        if not out_path.exists():
            raise LabRunError(f"lab run of {cfg.schedule} finished but rank 0 wrote no record:\n{_tail(logs[0])}")
        return json.loads(out_path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
