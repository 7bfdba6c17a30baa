"""A room of students opening classroom mode at once: waits, broken pages, memory (Linux).

Starts ``python -m bubblekit classroom --students N`` on 127.0.0.1 (culling shortened with
``--cull-after`` so the run ends in minutes), then N simulated students open the page at
the same moment the way a browser does (the page, then its kernel's websocket and the
widget models in it; :func:`bubblekit.presentation.classroom.visit_room`), stay, and leave.
Prints:

* time until the server said the room was ready, and the memory of the idle room;
* the students' waits (median, max) and the pages that were not complete (a code cell
  without its output, an error, or a widget whose model is not in the kernel);
* memory with everyone connected and the pool refilled, then after the visitors left and
  their kernels were culled, and how long the culling took;
* the time to stop the server (SIGTERM) and whether anything was left.

With ``--compare-voila-defaults`` the same visits first go to plain Voila with its own
defaults (no pool, 4 s output wait, no culling) for comparison. Memory is the proportional
set size (shared pages split between processes) summed over Voila and its kernels.

    .venv/bin/python benchmarks/bench_classroom.py                       # 30 students
    .venv/bin/python benchmarks/bench_classroom.py --students 30 --visitors 60 --compare-voila-defaults

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bubblekit.lab import free_port  # noqa: E402
from bubblekit.presentation import classroom  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parent.parent / "apps" / "explorer.ipynb"


def _procs_with(marker: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmd and "bench_classroom" not in cmd and state not in ("Z", "X"):
            out.append(int(entry.name))
    return out


def room_memory(marker: str) -> tuple[float, int]:
    """(GB, kernels) of Voila and its kernels: processes whose command line names ``marker``."""
    pids = _procs_with(marker)
    total = sum(classroom.process_memory(p) or 0 for p in pids)
    return total / 1e9, len(classroom.server_kernels(marker))


def _visits(url: str, n: int, code_cells: int, pool: int = 0) -> list[classroom.Visit]:
    visits = classroom.visit_room(url, n, code_cells=code_cells, timeout_s=300)
    s = classroom.summarize_visits(visits)
    errors = sorted({v.error for v in visits if v.error})
    print(f"  {s.line()}" + (f"; errors: {errors[:3]}" if errors else ""), flush=True)
    if 0 < pool < n:  # more visitors than preheated kernels: the fastest `pool` had one, the others waited for new ones
        by_wait = sorted(visits, key=lambda v: v.wait_s)
        for label, group in ((f"the {pool} fastest (preheated kernels)", by_wait[:pool]),
                             (f"the other {n - pool} (new kernels)", by_wait[pool:])):
            print(f"    {label}: {classroom.summarize_visits(group).line()}", flush=True)
    return visits


def _wait_quiet(marker: str, timeout: float) -> float:
    """Wait until Voila and its kernels used no CPU for 2 s (the pool refilled); return the seconds waited."""
    t0 = time.monotonic()
    last = None
    quiet_since = None
    while time.monotonic() - t0 < timeout:
        ticks = 0
        for p in _procs_with(marker):
            try:
                f = (Path("/proc") / str(p) / "stat").read_text().rsplit(")", 1)[1].split()
                ticks += int(f[11]) + int(f[12])
            except (OSError, IndexError, ValueError):
                pass
        if last is not None and ticks - last <= 2:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= 2:
                break
        else:
            quiet_since = None
        last = ticks
        time.sleep(0.5)
    return time.monotonic() - t0


def bench_voila_defaults(visitors: int, code_cells: int, settle_s: float) -> None:
    tmp = tempfile.mkdtemp(prefix="bench-voila-")
    port = free_port()
    cmd = [sys.executable, "-m", "voila", str(NOTEBOOK), f"--port={port}", "--Voila.ip=127.0.0.1",
           "--Voila.port_retries=0", "--no-browser", "--strip_sources=True", "--theme=light",
           f"--Voila.connection_dir_root={tmp}"]
    print(f"plain Voila, its defaults (no pool, iopub_timeout 4 s, no culling), {visitors} visitors at once:")
    log = open(Path(tmp) / "voila.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not classroom.wait_listening(port, proc):
            print("  Voila did not start")
            return
        gb, n = room_memory(tmp)
        print(f"  idle: {gb:.2f} GB, {n} kernels", flush=True)
        visits = _visits(f"http://127.0.0.1:{port}/", visitors, code_cells)
        gb, n = room_memory(tmp)
        print(f"  everyone connected: {gb:.2f} GB, {n} kernels", flush=True)
        for v in visits:
            v.leave()
        time.sleep(settle_s)
        gb, n = room_memory(tmp)
        print(f"  {settle_s:.0f} s after everyone left: {gb:.2f} GB, {n} kernels (never freed)", flush=True)
    finally:
        classroom.stop_server(proc, tmp)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def bench_classroom(students: int, visitors: int, cull_after: int, code_cells: int) -> None:
    tmp = tempfile.mkdtemp(prefix="bench-classroom-")
    port = free_port()
    env = {**os.environ, "TMPDIR": tmp, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "bubblekit", "classroom", "--students", str(students), "--port", str(port),
           "--cull-after", str(cull_after)]
    print(f"classroom mode: --students {students} --cull-after {cull_after}, {visitors} visitors at once:")
    t0 = time.monotonic()
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        try:
            said = classroom.read_until(server.stdout, "Ctrl+C stops the server", 1200)
        except (TimeoutError, EOFError) as exc:
            print(f"  the room never got ready: {exc}")
            return
        ready = time.monotonic() - t0
        extra = [ln for ln in said.splitlines() if ln.startswith("  ")]
        gb, n = room_memory(tmp)
        print(f"  ready after {ready:.1f} s; idle room: {gb:.2f} GB, {n} kernels", flush=True)
        print("  server said: " + " | ".join(x.strip() for x in extra if "memory" in x), flush=True)
        url = f"http://127.0.0.1:{port}/"
        visits = _visits(url, visitors, code_cells, pool=students)
        gb, n = room_memory(tmp)
        print(f"  right after the visits: {gb:.2f} GB, {n} kernels", flush=True)
        waited = _wait_quiet(tmp, 600)
        gb, n = room_memory(tmp)
        print(f"  everyone connected, pool refilled ({waited:.0f} s later): {gb:.2f} GB, {n} kernels", flush=True)
        for v in visits:
            v.leave()
        ids = [v.kernel_id for v in visits if v.kernel_id]
        base = f"http://127.0.0.1:{port}"
        t1 = time.monotonic()
        while any(classroom.kernel_exists(base, k) for k in ids) and time.monotonic() - t1 < cull_after + 600:
            time.sleep(1)
        culled = time.monotonic() - t1
        time.sleep(2)
        gb, n = room_memory(tmp)
        print(f"  after everyone left: visitors' kernels culled in {culled:.0f} s; {gb:.2f} GB, {n} kernels "
              f"(the pool)", flush=True)
    finally:
        t2 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        _, err_bytes = server.communicate(timeout=60)
        err = err_bytes.decode(errors="replace")
        left = _procs_with(tmp)
        print(f"  SIGTERM: stopped in {time.monotonic() - t2:.1f} s, {len(left)} processes left; "
              f"server said: {err.strip().splitlines()[-1] if err.strip() else '(nothing)'}")
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--students", type=int, default=30, help="room size (--students of the server)")
    ap.add_argument("--visitors", type=int, default=None, help="students arriving at once (default: --students)")
    ap.add_argument("--cull-after", type=int, default=60,
                    help="seconds (the server's default is 300; shorter here so the run ends sooner)")
    ap.add_argument("--compare-voila-defaults", action="store_true", help="first run plain Voila with its defaults")
    args = ap.parse_args()
    if not Path("/proc/self/stat").exists():
        sys.exit("bench_classroom.py reads /proc: Linux only")
    visitors = args.visitors or args.students
    code_cells = sum(kind == "code" for kind, _ in classroom.notebook_cells())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = classroom.available_memory()
    print(f"bench_classroom: {cores} CPU cores, {mem / 1e9 if mem else float('nan'):.1f} GB available, "
          f"notebook {NOTEBOOK.name} ({code_cells} widget cells)")
    if args.compare_voila_defaults:
        bench_voila_defaults(visitors, code_cells, settle_s=args.cull_after + 10)
    bench_classroom(args.students, visitors, args.cull_after, code_cells)


if __name__ == "__main__":
    main()
