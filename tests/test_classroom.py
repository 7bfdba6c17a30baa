"""Classroom mode for a room: Voila's options, the command line, page checks, and a loopback load test.

The load test (marker ``slow``; it runs in ``bash course.sh test``) starts the real server
with the room defaults for 10 students (culling shortened to 3 s), opens 10 pages at the
same moment the way browsers do (page, then the kernel's websocket and its widget models),
and checks that every page is complete and every widget alive, then that the visitors'
kernels are shut down after they leave while the pool is kept. It prints the waits; it
asserts no time (the figures for 30 students are in ``benchmarks/bench_classroom.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html import unescape
from pathlib import Path

import pytest
from _scripts import load_script

from bubblekit.lab import free_port
from bubblekit.presentation import classroom

ROOT = Path(__file__).resolve().parent.parent
EXPLORER = ROOT / "apps" / "explorer.ipynb"


def _voila_available() -> bool:
    return importlib.util.find_spec("voila") is not None


voila_only = pytest.mark.skipif(not _voila_available(), reason="voila is not installed (course extra)")


# ------------------------------------------------------------------------ Voila's options
@voila_only
def test_room_options_are_real_voila_traitlets() -> None:
    """Every option classroom mode passes is a configurable trait of the installed Voila (no silent typo)."""
    from jupyter_server.services.kernels.kernelmanager import MappingKernelManager
    from voila.app import Voila
    from voila.configuration import VoilaConfiguration
    from voila.execute import VoilaExecutor

    classes = {"Voila": Voila, "VoilaConfiguration": VoilaConfiguration, "VoilaExecutor": VoilaExecutor,
               "MappingKernelManager": MappingKernelManager}
    cmd = classroom.voila_command(EXPLORER, 9123, students=7, cull_after_s=120, iopub_timeout_s=30,
                                  connection_dir="/tmp/x")
    options = [a for a in cmd[4:] if a.startswith("--")]
    assert options
    for opt in options:
        name, _, value = opt[2:].partition("=")
        if "." in name:
            cls_name, trait = name.split(".", 1)
            assert trait in classes[cls_name].class_traits(config=True), opt
        else:  # Voila's short aliases and flags
            assert name in Voila.aliases or name in Voila.flags, opt
    for want in ("--preheat_kernel=True", "--pool_size=7", "--MappingKernelManager.cull_idle_timeout=120",
                 "--VoilaExecutor.iopub_timeout=30", "--Voila.connection_dir_root=/tmp/x",
                 "--VoilaConfiguration.multi_kernel_manager_class=bubblekit.presentation.classroom.RoomKernelManager"):
        assert want in cmd
    # the aliases map to the traits the docs name
    assert Voila.aliases["pool_size"] == "VoilaConfiguration.default_pool_size"
    assert Voila.aliases["preheat_kernel"] == "VoilaConfiguration.preheat_kernel"


@voila_only
def test_room_kernel_manager_is_importable_by_name() -> None:
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
    from traitlets.utils.importstring import import_item

    cls = import_item("bubblekit.presentation.classroom.RoomKernelManager")
    assert issubclass(cls, AsyncMappingKernelManager) and cls.__name__ == "RoomKernelManager"


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"students": 0}, ValueError, "students must be between 1 and 500"),
    ({"students": 2.5}, TypeError, "students must be a whole number"),
    ({"cull_after_s": 0}, ValueError, "cull_after_s must be between"),
    ({"iopub_timeout_s": True}, TypeError, "iopub_timeout_s must be a whole number"),
])
def test_room_options_bad_values(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        classroom.room_options(**kwargs)


def test_folder_of_pages(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text(EXPLORER.read_text())
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "b.ipynb").write_text(EXPLORER.read_text())
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    assert classroom.pages(tmp_path) == [Path("a.ipynb"), Path("more/b.ipynb")]
    cmd = classroom.voila_command(tmp_path, 9124)
    assert cmd[3] == str(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no notebook"):
        classroom.voila_command(tmp_path / "empty", 9124)


# --------------------------------------------------------------------------- command line
def _cli_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        classroom.main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [
    (["--prot", "9000"], "unknown option '--prot' (did you mean --port?)"),
    (["--stud", "3"], "unknown option '--stud' (did you mean --students?)"),  # no abbreviations
    (["--port", "9000", "--theme=dark"], "Voila's own options go after --"),
    (["--share", "--ip", "10.0.0.1"], "--share listens on every address"),
    (["--students", "0"], "--students 0: must be between 1 and 500"),
    (["--cull-after", "-5"], "--cull-after -5: must be between"),
    (["--port", "70000"], "--port 70000: must be between 1 and 65535"),
    (["--notebook", "nope.ipynb"], "does not exist"),
])
def test_command_line_rejects_typos_and_bad_values(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                   needle: str) -> None:
    assert needle in _cli_error(capsys, argv)


def test_command_line_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert classroom.main(["--print-command"]) == 0
    local = capsys.readouterr().out
    assert "--Voila.ip=127.0.0.1" in local and "--pool_size=1" in local and "--preheat_kernel=True" in local
    assert f"--MappingKernelManager.cull_idle_timeout={classroom.DEFAULT_CULL_AFTER_S}" in local
    assert f"--VoilaExecutor.iopub_timeout={classroom.DEFAULT_IOPUB_TIMEOUT_S}" in local
    assert classroom.main(["--share", "--print-command"]) == 0
    shared = capsys.readouterr().out
    assert "--Voila.ip=0.0.0.0" in shared and f"--pool_size={classroom.SHARED_STUDENTS}" in shared
    assert classroom.main(["--share", "--students", "12", "--print-command", "--", "--theme=dark"]) == 0
    out = capsys.readouterr().out
    assert "--pool_size=12" in out and out.strip().endswith("--theme=dark")


def test_port_in_use_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert classroom.serve(port, EXPLORER) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err


def test_network_addresses_exclude_loopback() -> None:
    addrs = classroom.network_addresses()
    assert all(isinstance(a, str) and not a.startswith("127.") for a in addrs)


# ----------------------------------------------------------------------------- page check
def _page(outputs: list[list[str]]) -> str:
    cells = []
    for k, outs in enumerate(outputs):
        body = "".join(f'<script type="application/vnd.voila.cell-output+json">{o}</script>' for o in outs)
        cells.append(f'<div id="cell-id=c{k}" class="jp-Cell jp-CodeCell jp-Notebook-cell">{body}</div>')
    return '{"kernelId": "abc-123"}' + "".join(cells)


WIDGET = '{"data": {"application/vnd.jupyter.widget-view+json": {"model_id": "m%d"}}, "output_type": "display_data"}'


def test_page_report() -> None:
    full = classroom.page_report(_page([[WIDGET % 1], [WIDGET % 2]]))
    assert full["complete"] and full["widgets"] == 2 and full["model_ids"] == ["m1", "m2"]
    assert full["kernel_id"] == "abc-123"
    missing = classroom.page_report(_page([[WIDGET % 1], []]))  # Voila gave up on the second cell's output
    assert not missing["complete"] and missing["cells_with_output"] == 1
    assert not classroom.page_report(_page([[WIDGET % 1]]), code_cells=2)["complete"]
    error = classroom.page_report(_page([[WIDGET % 1], ['{"output_type": "error", "ename": "X"}']]))
    assert not error["complete"] and error["errors"] == 1
    assert not classroom.page_report("")["complete"]


# ------------------------------------------------------------------------------ load test
def _kernel_count(marker: str) -> int:
    return len(classroom.server_kernels(marker))


@pytest.mark.slow
@voila_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ten_students_load_the_room_at_once(tmp_path: Path) -> None:
    students, cull_after = 10, 3
    code_cells = sum(kind == "code" for kind, _ in classroom.notebook_cells())
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    server = subprocess.Popen(
        [sys.executable, "-m", "bubblekit", "classroom", "--students", str(students), "--port", str(port),
         "--cull-after", str(cull_after)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    marker = str(tmp_path)
    visits: list[classroom.Visit] = []
    try:
        said = classroom.read_until(server.stdout, "Ctrl+C stops the server", 300)
        print(said)
        lines = said.splitlines()
        assert any("memory:" in ln for ln in lines) and f"http://127.0.0.1:{port}/" in "".join(lines)
        assert _kernel_count(marker) == students

        url = f"http://127.0.0.1:{port}/"
        visits = classroom.visit_room(url, students, code_cells=code_cells)
        print(classroom.summarize_visits(visits).line())
        for v in visits:
            assert v.complete, (v.status, v.report, v.widgets_alive, v.error)
            assert v.report["widgets"] == code_cells  # each code cell of the explorer shows one widget
        ids = {v.kernel_id for v in visits}
        assert len(ids) == students and None not in ids  # one kernel per student
        base = f"http://127.0.0.1:{port}"
        time.sleep(cull_after + 2)  # open pages keep their kernels past the idle limit
        assert all(classroom.kernel_exists(base, k) for k in ids if k)

        for v in visits:
            v.leave()
        deadline = time.monotonic() + 120
        while any(classroom.kernel_exists(base, k) for k in ids if k):
            assert time.monotonic() < deadline, "the visitors' kernels were not freed after they left"
            time.sleep(0.5)
        # the pool (refilled after the visits) stays; the visitors' kernels are gone
        deadline = time.monotonic() + 180
        while _kernel_count(marker) != students:
            assert time.monotonic() < deadline, f"{_kernel_count(marker)} kernels, expected the pool of {students}"
            time.sleep(0.5)
    finally:
        for v in visits:
            v.leave()
        server.send_signal(signal.SIGTERM)
        _, err_bytes = server.communicate(timeout=60)
    err = err_bytes.decode(errors="replace")
    assert server.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err
    assert _kernel_count(marker) == 0 and list(tmp_path.iterdir()) == []


@pytest.mark.slow
@voila_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_pool_kernel_that_dies_is_replaced_not_handed_out(tmp_path: Path) -> None:
    """Jupyter restarts a killed kernel empty (the notebook it ran is gone): it must leave the pool.

    Without that, Voila would hand its page, whose widgets no longer exist in the kernel, to
    the next student.
    """
    students = 2
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    server = subprocess.Popen(
        [sys.executable, "-m", "bubblekit", "classroom", "--students", str(students), "--port", str(port),
         "--cull-after", "3"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    marker = str(tmp_path)
    visits: list[classroom.Visit] = []
    try:
        classroom.read_until(server.stdout, "Ctrl+C stops the server", 300)
        victim = classroom.server_kernels(marker)[0]
        os.kill(victim, signal.SIGKILL)
        (log,) = tmp_path.glob("bubblekit-classroom-*/voila.log")
        deadline = time.monotonic() + 60
        while "restarted; starting another" not in log.read_text(errors="replace"):
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        code_cells = sum(kind == "code" for kind, _ in classroom.notebook_cells())
        visits = [classroom.visit(f"http://127.0.0.1:{port}/", code_cells=code_cells) for _ in range(students)]
        for v in visits:
            assert v.complete and v.widgets_alive, (v.report, v.error)
    finally:
        for v in visits:
            v.leave()
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    assert classroom.server_kernels(marker) == []


# ------------------------------------------------------------------------ the Chinese pages
def _sync_zh():  # scripts/sync_zh.py, the tool that keeps every Chinese twin in step
    return load_script("sync_zh_for_classroom", ROOT / "scripts" / "sync_zh.py")


@pytest.mark.parametrize("name", list(classroom.PAGES))
def test_chinese_pages_are_twins_of_the_english_ones(name: str) -> None:
    """Same cells and code (the language line first), Chinese markdown recording its English text's hash."""
    import nbformat

    sync_zh = _sync_zh()
    assert classroom.LANGUAGE_LINE == sync_zh.LANGUAGE_LINE
    en = nbformat.reads(classroom.page_text(name), as_version=4)
    zh = nbformat.reads(classroom.page_text(name, "zh"), as_version=4)
    twin, report = sync_zh.sync(en, zh)
    assert report.in_step and twin.cells == zh.cells, report.lines()  # nothing for the sync tool to change
    for a, b in zip(zh.cells, en.cells):
        if b.cell_type == "markdown":
            assert sync_zh.is_chinese(a.source) and sync_zh.status(a, b.source) == "ok"
            assert re.findall(r"\*\*[a-z]\*\*|`[^`]+`", a.source) == re.findall(r"\*\*[a-z]\*\*|`[^`]+`", b.source)
    with pytest.raises(ValueError, match="language must be one of"):
        classroom.page_text(name, "fr")


@pytest.mark.parametrize("name", list(classroom.PAGES))
def test_chinese_page_code_builds_chinese_explorers(name: str) -> None:
    from bubblekit.i18n import using_language

    ns: dict = {}
    with using_language("en"):  # the page itself switches to Chinese, as in Voila's kernel
        for kind, src in classroom.page_cells(name, "zh"):
            if kind == "code":
                exec(compile(src, name, "exec"), ns)
        widgets = [v for k, v in ns.items() if k in ("explorer", "builder", "frontier")]
        assert widgets and all(w.error is None for w in widgets)
        text = " ".join(w._repr_mimebundle_()["text/plain"] for w in widgets)
    assert re.search(r"[\u4e00-\u9fff]", text), text


def test_each_room_serves_one_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--lang zh serves apps/zh/; the English room serves only the English pages (not apps/zh/ below apps/)."""
    zh = classroom.default_pages(tmp_path, "zh")
    assert zh == ROOT / "apps" / "zh" and classroom.pages(zh) == sorted(Path(n) for n in classroom.PAGES)
    en = classroom.default_pages(tmp_path, "en")
    assert classroom.pages(en) == sorted(Path(n) for n in classroom.PAGES)
    for name in classroom.PAGES:
        assert (en / name).read_text(encoding="utf-8") == classroom.page_text(name)
    assert classroom.default_notebook(language="zh") == ROOT / "apps" / "zh" / "explorer.ipynb"
    assert classroom.main(["--lang", "zh", "--print-command"]) == 0
    assert f" {ROOT / 'apps' / 'zh' / 'explorer.ipynb'} " in capsys.readouterr().out
    assert "--lang zh 选择的是课堂自带的页面，不能和 --notebook 一起用" in _cli_error(
        capsys, ["--lang", "zh", "--notebook", str(EXPLORER)])
    assert "cannot be combined with --notebook" in _cli_error(capsys, ["--pages", "--notebook", str(EXPLORER)])
    assert "invalid choice: 'fr'" in _cli_error(capsys, ["--lang", "fr"])


@pytest.mark.slow
@voila_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_the_chinese_room_serves_chinese_pages(tmp_path: Path) -> None:
    """``bubblekit classroom --lang zh --pages``: every Chinese page complete (widgets alive), its text Chinese.

    (The widgets' Chinese labels: test_chinese_page_code_builds_chinese_explorers runs the same code.)"""
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg"}
    env.pop("BUBBLEKIT_LANG", None)  # the pages choose their language themselves
    server = subprocess.Popen(
        [sys.executable, "-m", "bubblekit", "classroom", "--lang", "zh", "--pages", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    visits: list[classroom.Visit] = []
    try:
        said = classroom.read_until(server.stdout, "按 Ctrl+C 停止服务器", 300)  # the room speaks Chinese
        assert "教室已就绪" in said and "--cull-after" in said and "room ready" not in said, said
        assert str(ROOT / "apps" / "zh") in said and _kernel_count(str(tmp_path)) == len(classroom.PAGES)
        for name in classroom.PAGES:
            url = f"http://127.0.0.1:{port}/voila/render/{name}"
            code_cells = sum(kind == "code" for kind, _ in classroom.page_cells(name, "zh"))
            with urllib.request.urlopen(url, timeout=120) as resp:
                html = unescape(resp.read().decode("utf-8"))
            title = classroom.page_cells(name, "zh")[0][1].splitlines()[0].lstrip("# ")
            assert title in html, (name, title)
            assert "bk.set_language" not in html  # no code shown
            visit = classroom.visit(url, code_cells=code_cells)
            visits.append(visit)
            assert visit.complete, (name, visit.report, visit.error)
    finally:
        for v in visits:
            v.leave()
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    assert classroom.server_kernels(str(tmp_path)) == []
