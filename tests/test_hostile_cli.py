"""Hostile inputs to the command lines (issue 20): a user's file is never overwritten without ``--force``,
an output that cannot be written is one line naming the option, never a traceback.

Covers ``bubblekit plot``, ``bubblekit classroom --notebook``, ``bubblekit workspace
--export-changed``, ``bubblekit lab run`` (``--record``, ``--csv``, ``--trace-dir``), the lab
worker's configuration file, and the scripts ``make_exercises.py``, ``make_slides.py`` and
``record_traces.py``. Each refusal is checked for its exit status, the option and file it names,
what it allows, and the user's file byte for byte.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from _scripts import load_script

from bubblekit import cli

ROOT = Path(__file__).resolve().parent.parent
MINE = b"my own file, not to be lost\n"
CAN_PROC = Path("/proc/self").exists()


def run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    return code, out.getvalue(), err.getvalue()


def script(name: str) -> ModuleType:
    """The script ``scripts/NAME.py`` as a module (the one other tests load, when they have)."""
    if name in sys.modules:
        return sys.modules[name]
    return load_script(name, ROOT / "scripts" / f"{name}.py")


def one_error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert "Traceback" not in err and lines, err
    return lines[-1]


# ------------------------------------------------------------------ bubblekit plot
@pytest.mark.parametrize("name", ["mine.svg", "mine.png", "MINE.PDF"])
def test_plot_keeps_an_existing_file_byte_for_byte(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(MINE)
    code, out, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", str(path)])
    assert code == 2 and path.read_bytes() == MINE and not out
    line = one_error_line(err)
    assert line.startswith("bubblekit plot: error: argument -o/--output: ") and name in line
    assert "already exists and is kept" in line and "--force" in line


def test_plot_force_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "old.svg"
    path.write_bytes(MINE)
    code, out, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", str(path), "--force"])
    assert code == 0, err
    assert path.read_bytes().lstrip().startswith((b"<?xml", b"<svg")) and f"wrote {path}" in out


def test_plot_keeps_the_file_a_symlink_points_to(tmp_path: Path) -> None:
    real = tmp_path / "real.svg"
    real.write_bytes(MINE)
    link = tmp_path / "link.svg"
    link.symlink_to(real)
    dangling = tmp_path / "dangling.svg"
    dangling.symlink_to(tmp_path / "nowhere" / "x.svg")
    for target in (link, dangling):
        code, _, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", str(target)])
        assert code == 2 and "already exists" in one_error_line(err)
    assert real.read_bytes() == MINE and not (tmp_path / "nowhere").exists()


def test_plot_writes_a_new_file_exclusively(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that appears between the check and the write is not overwritten either."""
    path = tmp_path / "race.svg"
    real_check = cli._output_path

    def check_then_create(text: str, parser: object, *, force: bool = False) -> Path:
        out = real_check(text, parser, force=force)  # type: ignore[arg-type]
        path.write_bytes(MINE)  # someone saves a file under that name meanwhile
        return out

    monkeypatch.setattr(cli, "_output_path", check_then_create)
    code, _, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", str(path)])
    assert code == 2 and "already exists and is kept" in one_error_line(err) and path.read_bytes() == MINE


@pytest.mark.skipif(not CAN_PROC, reason="needs /proc")
@pytest.mark.parametrize("target", ["/proc/x.svg", "/proc/self/x.png"])
def test_plot_to_an_unwritable_place_is_one_line(target: str) -> None:
    code, _, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", target])
    line = one_error_line(err)
    assert code == 2 and line.startswith("bubblekit plot: error: argument -o/--output: cannot write")
    assert target in line and "folder you can write to" in line


def test_plot_into_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("the superuser writes into read-only folders")
        code, _, err = run(cli.main, ["plot", "-p", "2", "-m", "2", "-o", str(folder / "x.svg")])
        assert code == 2 and "cannot write" in one_error_line(err) and not (folder / "x.svg").exists()
    finally:
        folder.chmod(0o755)


def test_plot_output_under_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "afile").write_bytes(MINE)
    code, _, err = run(cli.main, ["plot", "-o", str(tmp_path / "afile" / "x.svg")])
    assert code == 2 and "-o/--output" in one_error_line(err) and (tmp_path / "afile").read_bytes() == MINE


# ------------------------------------------------------------- classroom, workspace
@pytest.mark.parametrize("name,text,why", [
    ("README.md", "# not a notebook\n", "is not a Jupyter notebook: give a .ipynb file"),
    ("bad.ipynb", "not json", "cannot be read as a Jupyter notebook"),
    ("list.ipynb", "[1, 2]", "is JSON but not a Jupyter notebook (no 'cells' list)"),
])
def test_classroom_notebook_must_be_a_notebook(tmp_path: Path, name: str, text: str, why: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    code, out, err = run(cli.main, ["classroom", "--notebook", str(path), "--print-command"])
    line = one_error_line(err)
    assert code == 2 and not out and "error: notebook" in line and name in line and why in line


def test_classroom_notebook_accepts_a_notebook() -> None:
    code, out, err = run(cli.main, ["classroom", "--notebook", str(ROOT / "apps" / "explorer.ipynb"), "--print-command"])
    assert code == 0, err
    assert "explorer.ipynb" in out


def test_workspace_export_changed_alone_is_refused(tmp_path: Path) -> None:
    export = tmp_path / "exported"
    code, out, err = run(cli.main, ["workspace", "--root", str(ROOT), "--export-changed", str(export)])
    line = one_error_line(err)
    assert code == 2 and not out and not export.exists()
    assert line.startswith("bubblekit workspace: error: argument --export-changed: ") and "--course-notebooks" in line


# ------------------------------------------------------------------ the lab's outputs
def lab_main(argv: list[str]) -> int:
    from bubblekit.lab import cli as lab_cli

    return lab_cli.main(argv)


@pytest.mark.parametrize("option,name", [("--record", "run.json"), ("--csv", "run.csv")])
def test_lab_run_keeps_an_existing_output_file(tmp_path: Path, option: str, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(MINE)
    code, _, err = run(lab_main, ["run", "--schedule", "1F1B", "--ranks", "2", option, str(path)])
    line = one_error_line(err)
    assert code == 2 and path.read_bytes() == MINE
    assert line.startswith(f"error: {option} {path}: the file already exists and is kept") and "--force" in line


def test_lab_run_keeps_traces_in_the_trace_folder(tmp_path: Path) -> None:
    (tmp_path / "rank0.json").write_bytes(MINE)
    code, _, err = run(lab_main, ["run", "--schedule", "1F1B", "--ranks", "2", "--trace-dir", str(tmp_path)])
    line = one_error_line(err)
    assert code == 2 and (tmp_path / "rank0.json").read_bytes() == MINE
    assert f"--trace-dir {tmp_path}: it already holds traces (rank0.json)" in line and "--force" in line


def test_lab_run_force_passes_the_output_check(tmp_path: Path) -> None:
    from bubblekit.lab.cli import build_parser, output_problems

    (tmp_path / "rank0.json").write_bytes(MINE)
    (tmp_path / "r.json").write_bytes(MINE)
    ns = build_parser().parse_args(["run", "--record", str(tmp_path / "r.json"), "--trace-dir", str(tmp_path)])
    assert len(output_problems(ns)) == 2
    ns = build_parser().parse_args(["run", "--record", str(tmp_path / "r.json"), "--trace-dir", str(tmp_path),
                                    "--force"])
    assert output_problems(ns) == [] and (tmp_path / "r.json").read_bytes() == MINE  # the probe truncates nothing


@pytest.mark.parametrize("content,why", [
    (None, "cannot read it"),
    (b"not json", "not JSON (Expecting value at line 1, column 1)"),
    (b"\xff\xfe\x00binary", "cannot read it"),
    (b"[1, 2]", "holds a JSON list, expected an object"),
    (b'{"bogus": 1}', "unknown key(s) 'bogus'; the keys are backend, batch"),
    (b'{"ranks": -1}', "bad value (field 'ranks'): ranks must be >= 1, got -1"),
    (b'{"schedule": "nope"}', "bad value (field 'schedule')"),
])
def test_the_lab_worker_names_a_bad_config_file(tmp_path: Path, content: bytes | None, why: str) -> None:
    path = tmp_path / "worker.json"
    if content is not None:
        path.write_bytes(content)
    code, out, err = run(lab_main, ["worker", "--config-file", str(path)])
    line = one_error_line(err)
    assert code == 2 and not out
    assert line.startswith(f"error: lab worker config file {path}: ") and why in line


def test_the_lab_worker_config_file_round_trips(tmp_path: Path) -> None:
    from bubblekit.lab._config import LabConfig, load_config

    cfg = LabConfig(schedule="GPipe", ranks=3, microbatches=6, extra={"stall_action": "1F0"})
    path = tmp_path / "worker.json"
    path.write_text(json.dumps(cfg.to_dict()))
    assert load_config(path) == cfg


# ----------------------------------------------------------------------- the scripts
@pytest.mark.skipif(not CAN_PROC, reason="needs /proc")
def test_make_exercises_names_an_exercises_folder_it_cannot_make() -> None:
    mx = script("make_exercises")
    code, out, err = run(mx.main, ["--exercises", "/proc/x/exercises"])
    line = one_error_line(err)
    assert code == 2 and line.startswith("error: argument --exercises: cannot make the folder '/proc/x/exercises'")
    assert "choose a folder you can write to" in line


def test_make_exercises_names_an_exercises_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_bytes(MINE)
    mx = script("make_exercises")
    code, _, err = run(mx.main, ["--exercises", str(tmp_path / "afile" / "ex")])
    assert code == 2 and "argument --exercises: cannot make" in one_error_line(err) and "is not a folder" in err
    assert (tmp_path / "afile").read_bytes() == MINE


def test_make_slides_keeps_decks_in_a_folder_of_the_users(tmp_path: Path) -> None:
    ms = script("make_slides")
    (tmp_path / "index.html").write_bytes(MINE)
    code, out, err = run(ms.main, ["03", "--out", str(tmp_path)])
    line = one_error_line(err)
    assert code == 2 and not out and (tmp_path / "index.html").read_bytes() == MINE
    assert line.startswith(f"error: argument --out: {str(tmp_path)!r} already holds index.html") and "--force" in line
    (tmp_path / "afile").write_bytes(MINE)
    code, _, err = run(ms.main, ["03", "--out", str(tmp_path / "afile")])
    assert code == 2 and "exists and is not a folder" in one_error_line(err)


def record_traces(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "record_traces.py"), *argv], capture_output=True,
                          text=True, timeout=300, env=env)


def test_record_traces_checks_its_options_before_recording(tmp_path: Path) -> None:
    got = record_traces(["--out", str(tmp_path / "new"), "--only", "nope"])
    assert got.returncode == 2 and "argument --only: unknown sample(s) 'nope'; samples: 1f1b-p2-m4" in got.stderr
    (tmp_path / "manifest.json").write_bytes(MINE)
    got = record_traces(["--out", str(tmp_path), "--only", "1f1b-p2-m4"])
    line = one_error_line(got.stderr)
    assert got.returncode == 2 and (tmp_path / "manifest.json").read_bytes() == MINE
    assert "argument --out" in line and "already holds manifest.json" in line and "--force" in line
