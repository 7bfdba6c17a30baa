"""Classroom mode: serve the live explorer as a web app with Voila (no code shown).

Run, from the repository root (or anywhere bubblekit is installed with the ``course`` extra)::

    python -m bubblekit classroom                  # http://127.0.0.1:8866/ on this machine
    python -m bubblekit classroom --port 9000      # another port
    python -m bubblekit classroom --ip 0.0.0.0     # let students on the local network open it
    python -m bubblekit classroom --print-command  # show the voila command line and exit

It runs ``voila apps/explorer.ipynb --no-browser --strip_sources=True ...`` with the current
Python: the page shows the notebook's text and widgets (the pipeline explorer and the
schedule builder) but none of its code, and tracebacks are not sent to the browser. Each
visitor gets a fresh kernel; stop the server with Ctrl+C.

From Python: ``bubblekit.presentation.classroom.serve(port=8866)``. When ``apps/explorer.ipynb`` is not
next to the package (a non-editable install), an identical notebook is written to a
temporary folder first (:func:`write_notebook`).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["serve", "voila_command", "default_notebook", "write_notebook", "notebook_cells", "notebook_text", "main", "DEFAULT_PORT"]

#: Voila's usual port.
DEFAULT_PORT = 8866

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


def default_notebook() -> Path:
    """``apps/explorer.ipynb`` of the repository, or a fresh copy in a temporary folder."""
    repo_copy = Path(__file__).resolve().parents[2] / "apps" / "explorer.ipynb"
    if repo_copy.is_file():
        return repo_copy
    return write_notebook(Path(tempfile.mkdtemp(prefix="bubblekit-classroom-")) / "explorer.ipynb")


def voila_command(
    notebook: str | Path | None = None,
    port: int = DEFAULT_PORT,
    *,
    ip: str = "127.0.0.1",
    open_browser: bool = False,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The ``voila`` command line classroom mode runs (with the current Python).

    Args:
        notebook: the notebook to serve; default :func:`default_notebook`.
        port: TCP port, 1..65535; taken exactly (no silent fallback to another port).
        ip: interface to listen on; ``"0.0.0.0"`` lets other machines connect.
        open_browser: open a browser tab on this machine.
        extra_args: more Voila options, appended as given.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an int between 1 and 65535, got {port!r}")
    if not isinstance(ip, str) or not ip:
        raise ValueError(f"ip must be a host address such as '127.0.0.1' or '0.0.0.0', got {ip!r}")
    nb = Path(notebook) if notebook is not None else default_notebook()
    if not nb.is_file():
        raise FileNotFoundError(f"notebook {str(nb)!r} does not exist")
    return [
        sys.executable, "-m", "voila", str(nb),
        f"--port={port}", f"--Voila.ip={ip}", "--Voila.port_retries=0",
        "--strip_sources=True", "--show_tracebacks=False", "--theme=light",
        *([] if open_browser else ["--no-browser"]),
        *extra_args,
    ]


def serve(
    port: int = DEFAULT_PORT,
    notebook: str | Path | None = None,
    *,
    ip: str = "127.0.0.1",
    open_browser: bool = False,
    extra_args: Sequence[str] = (),
) -> int:
    """Serve the explorer notebook with Voila, code hidden, until Ctrl+C; return Voila's exit code.

    Open ``http://<ip>:<port>/`` in a browser (the URL is printed). See :func:`voila_command`
    for the arguments.
    """
    cmd = voila_command(notebook, port, ip=ip, open_browser=open_browser, extra_args=extra_args)
    host = "127.0.0.1" if ip in ("0.0.0.0", "::") else ip
    print(f"bubblekit classroom: serving {cmd[3]} at http://{host}:{port}/  (Ctrl+C stops)", flush=True)
    proc = subprocess.Popen(cmd)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            return proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m bubblekit classroom [--port N] [--ip ADDR] [--notebook PATH]``."""
    parser = argparse.ArgumentParser(
        prog="python -m bubblekit classroom",
        description="Serve the pipeline-bubble explorer as a web app (Voila, no code shown).",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument("--ip", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for the local network)")
    parser.add_argument("--notebook", default=None, help="notebook to serve (default apps/explorer.ipynb)")
    parser.add_argument("--open-browser", action="store_true", help="open a browser tab on this machine")
    parser.add_argument("--print-command", action="store_true", help="print the voila command and exit")
    args, extra = parser.parse_known_args(argv)
    try:
        cmd = voila_command(args.notebook, args.port, ip=args.ip, open_browser=args.open_browser, extra_args=extra)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    if args.print_command:
        print(shlex.join(cmd))
        return 0
    return serve(args.port, args.notebook, ip=args.ip, open_browser=args.open_browser, extra_args=extra)


if __name__ == "__main__":
    sys.exit(main())
