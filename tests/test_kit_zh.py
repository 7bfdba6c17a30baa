"""The classroom kit in Chinese (issue 24): ``--lang zh`` for the slides, the nbgrader assignments and the server.

* ``scripts/make_slides.py --lang zh`` exports the Chinese lessons (``notebooks/zh/``) into
  ``build/slides/zh/``: decks marked ``<html lang="zh">`` with the lesson's Chinese title, a
  Chinese index, the same slide marks as the English twins; its refusals are Chinese and name
  ``--out``/``--force``; an existing deck is kept without ``--force``.
* ``scripts/make_nbgrader.py --lang zh`` builds the Chinese assignments (``solutions/zh/``) into
  ``classroom/nbgrader/zh/`` (its own configuration: course id and Chinese stubs): the same graded
  cells and points as the English ones, a Chinese banner and test cells; a course folder of the
  other language is refused; end to end (marker ``slow``) the feedback is Chinese.
* ``bubblekit classroom --lang zh`` says everything in Chinese: its refusals, the ready lines.
* Every message of the three commands keeps the option names of its English text, and a bad
  ``--lang`` names the option, the value and the choices.
"""

from __future__ import annotations

import fnmatch
import os
import re
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script

from bubblekit.course import checks
from bubblekit.i18n import all_messages, message_fields
from bubblekit.presentation import classroom

ROOT = Path(__file__).resolve().parent.parent
_HAN = re.compile(r"[\u4e00-\u9fff]")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _load(name: str, path: Path) -> ModuleType:
    return load_script(name, path)


ms = _load("make_slides", ROOT / "scripts" / "make_slides.py")
mn = _load("make_nbgrader", ROOT / "scripts" / "make_nbgrader.py")
mx = mn.mx


# ----------------------------------------------------------------------------- every message


def _kit_messages() -> dict[str, dict[str, str]]:
    return {k: v for k, v in all_messages().items()
            if k.startswith(("make_slides.", "make_nbgrader.", "classroom.say."))}


def test_every_kit_message_is_chinese_and_keeps_the_option_names() -> None:
    messages = _kit_messages()
    assert len(messages) > 50, sorted(messages)
    for key, texts in messages.items():
        en, zh = texts["en"], texts["zh"]
        assert _HAN.search(zh), f"{key}: no Chinese in {zh!r}"
        assert set(_OPTION.findall(en)) <= set(_OPTION.findall(zh)), (key, _OPTION.findall(en), zh)
        assert message_fields(en) == message_fields(zh), key


def test_the_option_check_can_fail() -> None:
    """The check above finds an option the Chinese text dropped."""
    assert set(_OPTION.findall("use --force or --out DIR")) - set(_OPTION.findall("请用 --out 换一个目录")) == {"--force"}


@pytest.mark.parametrize("main", [ms.main, mn.main, classroom.main], ids=["slides", "nbgrader", "classroom"])
def test_a_bad_lang_names_the_option_the_value_and_the_choices(main: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--lang", "fr"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --lang" in err and "'fr'" in err and "'en'" in err and "'zh'" in err, err


# ----------------------------------------------------------------------------- slides


ZH_TRACK = [ms.lesson_path(n, language="zh") for n, _ in ms.WORKSHOP_TRACK]


def _marks(path: Path) -> list[tuple[str, Any]]:
    nb = nbformat.read(path, as_version=4)
    return [(c["id"], c.metadata.get("slideshow", {}).get("slide_type")) for c in nb.cells]


@pytest.mark.parametrize("path", ZH_TRACK, ids=lambda p: p.name)
def test_chinese_lessons_carry_the_english_twins_slide_marks(path: Path) -> None:
    assert path.parent == ROOT / "notebooks" / "zh"
    assert _marks(path) == _marks(ROOT / "notebooks" / path.name)


def test_chinese_lesson_paths_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert ms.lesson_path("3", language="zh") == ROOT / "notebooks" / "zh" / "03_the_bubble_formula.ipynb"
    assert ms.default_out("zh") == ROOT / "build" / "slides" / "zh" and ms.default_out() == ROOT / "build" / "slides"
    with pytest.raises(ms.SlidesError, match="课程 '42'：.*现有的课程：00, 01"):
        ms.lesson_path("42", language="zh")
    assert ms.main(["--lang", "zh", "42"]) == 2
    assert "错误：课程 '42'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="language must be one of"):
        ms.default_out("fr")


def test_chinese_out_refusals_name_the_option_and_keep_the_files(tmp_path: Path) -> None:
    lesson = [ms.lesson_path("03", language="zh")]
    (tmp_path / "03_the_bubble_formula.slides.html").write_text("my deck")
    with pytest.raises(ms.SlidesError, match=r"参数 --out：.*已有 03_the_bubble_formula\.slides\.html.*--force"):
        ms.check_out(tmp_path, lesson, language="zh")
    assert (tmp_path / "03_the_bubble_formula.slides.html").read_text() == "my deck"
    ms.check_out(tmp_path, lesson, force=True, language="zh")  # --force: allowed
    (tmp_path / "file").write_text("x")
    with pytest.raises(ms.SlidesError, match="参数 --out：.*已存在，但不是目录"):
        ms.check_out(tmp_path / "file", lesson, language="zh")


def test_chinese_index_page(tmp_path: Path) -> None:
    for name in ("03_b.slides.html", "01_a.slides.html"):
        (tmp_path / name).write_text("deck")
    ms._write_index(tmp_path, [], "zh")
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert '<html lang="zh">' in index and "<title>流水线气泡：幻灯片</title>" in index
    assert "（工作坊中 25 分钟）" in index and index.index("01_a") < index.index("03_b") < index.index("休息（10 分钟）")
    assert "min in the workshop" not in index and "break" not in index


def test_a_chinese_deck_is_chinese_and_holds_its_slides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slides = _load("test_slides_for_zh", ROOT / "tests" / "test_slides.py")  # the deck check
    lesson = ms.lesson_path("00", language="zh")
    out = tmp_path / "decks"
    assert ms.main(["--lang", "zh", "00", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"已写入 {out / lesson.stem}.slides.html" in said and "在浏览器中打开" in said and "--offline" in said
    deck = (out / f"{lesson.stem}.slides.html").read_text(encoding="utf-8")
    assert '<html lang="zh">' in deck
    title = nbformat.read(lesson, as_version=4).cells[0].source.splitlines()[0].lstrip("# ")
    assert f"<title>{title}：幻灯片</title>" in deck and _HAN.search(title)
    slides.check_deck(nbformat.read(lesson, as_version=4), deck)
    # an existing deck outside build/slides/zh is kept without --force, and the refusal is Chinese
    assert ms.main(["--lang", "zh", "00", "--out", str(out)]) == 2
    assert "参数 --out" in capsys.readouterr().err and (out / f"{lesson.stem}.slides.html").read_text() == deck


# ----------------------------------------------------------------------------- nbgrader

CONFIG_ZH = ROOT / "classroom" / "nbgrader" / "zh" / "nbgrader_config.py"


def _graded(path: Path, language: str) -> tuple[Any, list[Any]]:
    return mn.make_assignment(nbformat.read(path, as_version=4), path.name, set(checks.ids()), language)


@pytest.mark.parametrize("path", mn.select(mn.SOLUTIONS["zh"], []), ids=lambda p: p.name)
def test_chinese_assignments_grade_like_the_english_ones(path: Path) -> None:
    from nbgrader.nbgraderformat import MetadataValidator

    zh, graded = _graded(path, "zh")
    _, graded_en = _graded(ROOT / "solutions" / path.name, "en")
    assert graded == graded_en  # the same exercises, grade ids and points
    MetadataValidator().validate_nb(zh)
    banner = zh.cells[0].source
    assert banner.startswith("> **作业：") and "# 在这里写你的代码" in banner and "：练习" not in banner
    first_code = next(c for c in zh.cells if c.cell_type == "code")
    assert first_code.source.startswith('import bubblekit as bk; bk.set_language("zh")')  # so the feedback is Chinese
    tests = [c.source for c in zh.cells if c.metadata["nbgrader"]["grade_id"].startswith("test_")]
    assert tests and all(t.startswith("# 练习 ") and "自动评分测试（1 分）" in t for t in tests)


def test_chinese_config_differs_only_in_course_id_and_stubs() -> None:
    from traitlets.config.loader import PyFileConfigLoader

    zh = PyFileConfigLoader(CONFIG_ZH.name, str(CONFIG_ZH.parent)).load_config()
    en_path = ROOT / "classroom" / "nbgrader" / "nbgrader_config.py"
    en = PyFileConfigLoader(en_path.name, str(en_path.parent)).load_config()
    assert zh.CourseDirectory.root == str(CONFIG_ZH.parent)
    assert zh.CourseDirectory.course_id == "pipeline-bubbles-zh" != en.CourseDirectory.course_id
    assert zh.ClearSolutions.code_stub == {"python": mx.TEXTS["zh"]["code_stub"] + "\n" + mx.CODE_STUB[1]}
    assert zh.ClearSolutions.text_stub == mx.TEXTS["zh"]["markdown_stub"]
    assert zh.CourseDirectory.ignore == en.CourseDirectory.ignore and zh.Execute.timeout == en.Execute.timeout
    for hidden in (mx.MANIFEST, "x.mine.ipynb"):
        assert any(fnmatch.fnmatch(hidden, p) for p in zh.CourseDirectory.ignore)
    ignored = (CONFIG_ZH.parent / ".gitignore").read_text(encoding="utf-8")
    assert "/source/" in ignored and "/gradebook.db" in ignored


def test_the_chinese_config_decides_after_the_english_one_course_sh_loads_first(tmp_path: Path) -> None:
    """course.sh setup makes nbgrader load classroom/nbgrader's config everywhere; run in classroom/nbgrader/zh,
    the Chinese config comes after it and decides the folder, the course id and the stubs."""
    import subprocess

    (tmp_path / "nbgrader_config.py").write_text(  # what course.sh writes into .venv/etc/jupyter
        f"load_subconfig('nbgrader_config.py', {str(ROOT / 'classroom' / 'nbgrader')!r})  # noqa: F821\n")
    code = ("from nbgrader.apps.nbgraderapp import NbGraderApp\n"
            "app = NbGraderApp(); app.initialize([]); c = app.config\n"
            "print(c.CourseDirectory.root, c.CourseDirectory.course_id, repr(c.ClearSolutions.code_stub['python']))")
    said = {}
    for folder in (CONFIG_ZH.parent, tmp_path):
        run = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "JUPYTER_CONFIG_PATH": str(tmp_path)})
        assert run.returncode == 0, run.stderr
        said[folder] = run.stdout.strip().splitlines()[-1]
    assert said[CONFIG_ZH.parent] == f"{CONFIG_ZH.parent} pipeline-bubbles-zh '# 在这里写你的代码\\nraise NotImplementedError()'"
    assert said[tmp_path].startswith(f"{ROOT / 'classroom' / 'nbgrader'} pipeline-bubbles '# YOUR CODE HERE")  # the control


def test_chinese_build_writes_the_chinese_course(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course = tmp_path / "zh-course"
    assert mn.main(["--lang", "zh", "--course", str(course), "03"]) == 0
    out = capsys.readouterr().out
    assert "已写入" in out and "下一步：cd" in out and "instructor_guide.zh-CN.md" in out
    assert (course / "nbgrader_config.py").read_bytes() == CONFIG_ZH.read_bytes()
    nb = nbformat.read(course / "source" / "03_the_bubble_formula" / "03_the_bubble_formula.ipynb", as_version=4)
    assert nb.cells[0].source.startswith("> **作业：03 · ")
    assert mn.main(["--lang", "zh", "--course", str(course), "03"]) == 0
    assert "已是最新" in capsys.readouterr().out
    # an English build into the Chinese course (same assignment names) is refused, naming --lang
    assert mn.main(["--course", str(course), "03"]) == 2
    err = capsys.readouterr().err
    assert "argument --lang" in err and "Chinese course" in err and "classroom/nbgrader" in err
    assert nb == nbformat.read(course / "source" / "03_the_bubble_formula" / "03_the_bubble_formula.ipynb", as_version=4)


def test_chinese_refusals_name_the_option(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert mn.main(["--lang", "zh", "--course", str(ROOT / "classroom" / "nbgrader"), "03"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("错误：参数 --lang：") and "英文课程" in err and "classroom/nbgrader/zh" in err
    monkeypatch.chdir(ROOT)
    assert mn.main(["--lang", "zh", "--course", "solutions/zh", "03"]) == 2
    assert "参数 --course：'solutions/zh' 是课程自身的目录" in capsys.readouterr().err
    assert mn.main(["--lang", "zh", "--list", "42"]) == 2
    assert "课程 '42' 没有答案 notebook" in capsys.readouterr().err
    assert mn.main(["--lang", "zh", "--list", "04"]) == 0
    assert "04_schedules_compared：共 7 分：6 道自动评分的练习（6 分），另有 1 道人工评分的文字作答（1 分）" in capsys.readouterr().out


def test_an_edited_chinese_assignment_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    course = tmp_path / "zh"
    assert mn.main(["--lang", "zh", "--course", str(course), "03"]) == 0
    folder = course / "source" / "03_the_bubble_formula"
    path = folder / "03_the_bubble_formula.ipynb"
    edited = path.read_text(encoding="utf-8").replace('"points": 1', '"points": 3', 1)
    path.write_text(edited, encoding="utf-8")
    manifest = json.loads((folder / mx.MANIFEST).read_text())
    manifest["files"]["03_the_bubble_formula.ipynb"] = "0" * 64  # as if the solution had moved on
    (folder / mx.MANIFEST).write_text(json.dumps(manifest))
    capsys.readouterr()
    assert mn.main(["--lang", "zh", "--course", str(course), "03"]) == 1
    err = capsys.readouterr().err
    assert "没有覆盖" in err and "--lang zh --keep-changed" in err and path.read_text(encoding="utf-8") == edited


# ----------------------------------------------------------------------------- the classroom server


def _cli_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        classroom.main(argv)
    assert info.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [
    (["--prot", "9000"], "未知选项 '--prot'（你是想用 --port 吗？）。Voilà 自己的选项写在 -- 之后"),
    (["--students", "0"], "--students 0：必须在 1 到 500 之间"),
    (["--cull-after", "-5"], "--cull-after -5：必须在 1 到"),
    (["--port", "70000"], "--port 70000：必须在 1 到 65535 之间"),
    (["--share", "--ip", "10.0.0.1"], "--share 会在所有地址（0.0.0.0）上监听，不能和 --ip 10.0.0.1 一起用"),
    (["--pages", "--notebook", "x.ipynb"], "--pages 提供的是课堂自带的页面，不能和 --notebook 一起用"),
])
def test_chinese_room_refusals(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    err = _cli_error(capsys, ["--lang", "zh", *argv])
    assert "python -m bubblekit classroom：错误：" in err and needle in err, err
    assert "usage:" in err  # argparse's usage line, as for any other error


def test_chinese_room_says_it_is_ready_in_chinese() -> None:
    class Proc:
        pid = os.getpid()

    room = classroom._Room(students=30, n_pages=3, marker=f"no-such-marker-{os.getpid()}")
    lines = classroom._ready_lines(Proc(), room, ROOT / "apps" / "zh", "0.0.0.0", 8866, 300, "zh")  # type: ignore[arg-type]
    text = "\n".join(lines)
    assert lines[0].startswith("bubblekit classroom：教室已就绪，可供 30 名学生使用") and "只启动了 90 个 kernel 中的 0 个" in text
    assert "--verbose" in text and "--cull-after" in text and "按 Ctrl+C 停止服务器和所有 kernel" in text
    assert "  在本机打开：http://127.0.0.1:8866/voila/render/explorer.ipynb" in text.replace(
        "builder.ipynb  http://127.0.0.1:8866/voila/render/", "") and "学生打开" in text
    assert "room ready" not in text and "students open" not in text
    english = "\n".join(classroom._ready_lines(Proc(), room, ROOT / "apps", "127.0.0.1", 8866, 300))
    assert "room ready for 30 students" in english and "Ctrl+C stops the server" in english


def test_chinese_port_in_use_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert classroom.serve(port, language="zh") == 2
    err = capsys.readouterr().err
    assert f"无法在 127.0.0.1:{port} 上监听" in err and "--port" in err


# ----------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_chinese_assignment_release_autograde_and_chinese_feedback(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """generate_assignment -> a student's submission (one exercise left, one wrong) -> autograde -> feedback in Chinese."""
    nbt = _load("test_nbgrader_for_zh", ROOT / "tests" / "test_nbgrader.py")  # its nbgrader runner and helpers
    course = tmp_path / "course"
    lesson = next(p for p in mn.select(mn.SOLUTIONS["zh"], [])
                  if all(g.kind == "auto" for g in _graded(p, "zh")[1]))
    name = lesson.stem
    assert mn.main(["--lang", "zh", "--course", str(course), name]) == 0
    nbt._nbgrader(course, "generate_assignment", name)
    released = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
    solutions = {c.id: c.source for c in source.cells if c.metadata["nbgrader"]["solution"]}
    stubbed = [c for c in released.cells if c.id in solutions and c.cell_type == "code"]
    stub = mx.TEXTS["zh"]["code_stub"] + "\n" + mx.CODE_STUB[1]
    assert stubbed and all(stub in c.source for c in stubbed), [c.source for c in stubbed]
    missing = stubbed[0].id
    wrong = next(c.id for c in stubbed[1:] if nbt._answer_name(solutions[c.id]))
    student = nbformat.from_dict(released)
    for cell in student.cells:
        if cell.id in solutions and cell.id != missing:
            cell.source = solutions[cell.id]
        if cell.id == wrong:
            cell.source = cell.source.replace(mx.END, f"{nbt._answer_name(solutions[wrong])} = '不是答案'\n{mx.END}")
    folder = course / "submitted" / "xiaoming" / name
    folder.mkdir(parents=True)
    nbformat.write(student, folder / f"{name}.ipynb")
    nbt._nbgrader(course, "autograde", name)
    nbt._nbgrader(course, "generate_feedback", name)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        full = gradebook.find_assignment(name).max_score
        assert gradebook.find_submission(name, "xiaoming").score == full - 2 * mn.AUTO_POINTS
    text = (course / "feedback" / "xiaoming" / name / f"{name}.html").read_text(encoding="utf-8")
    assert "还没有作答" in text and "还不对" in text and "提示" in text, "the feedback is not Chinese"
    assert "no answer yet" not in text and "not yet" not in text
