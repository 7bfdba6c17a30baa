"""The Chinese edition mirrors the English one (issue 16).

For every English course notebook in notebooks/, solutions/ and apps/ (as the course ships
it), either its Chinese twin ``FOLDER/zh/NAME.ipynb`` is complete, or the notebook is named in
``PENDING`` (not translated yet). A twin, pending or not:

* has the English notebook's cells, in the same order, with the same ids and types;
* has the same program in its code cells: equal Python token streams once string literals and
  comments are set aside (``sync_zh.code_tokens``; each edition writes its titles, headers,
  printed sentences and comments in its own language), the first code cell starting with the
  language line ``bk.set_language("zh")`` (scripts/sync_zh.py's ``LANGUAGE_LINE``) where the
  English one starts with ``import bubblekit as bk``; raw cells equal character for character;
  the same cell tags and the same collapsed (check) cells;
* English code cells hold no Chinese characters; in a complete twin, no comment and no
  sentence-like string literal of a code cell is English only.

A complete twin (not pending) also has:

* every markdown cell in Chinese (CJK share, see ``sync_zh.cjk_share``), none marked
  untranslated and none stale (the English text it was translated from is the current one);
* a lesson's template in Chinese: ``# NN · 标题`` with **目标：**, **前置知识：**, **时间：**
  (in 分钟); ``## 小结`` with as many takeaways as the English recap; ``## 深入 · ...`` where
  the English has ``## Deep dive · ...``, with 选读 on the next line; a footer with **练习：**
  or **下一课：**;
* links that point to the Chinese twins of what the English links point to (lessons,
  ``workspace/zh/`` exercises, ``solutions/zh/``), each existing or pending.

A pending notebook whose twin is complete fails too: remove it from ``PENDING``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest
from _scripts import load_script

from bubblekit.course.workspace import WORKSPACE_DIR, course_notebooks

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "solutions", "apps")
ZH = "zh"


def _load_sync() -> ModuleType:
    return load_script("sync_zh_under_test", ROOT / "scripts" / "sync_zh.py")


sync_zh = _load_sync()
SHIPPED = {nb.path.relative_to(ROOT).as_posix(): nb.text for nb in course_notebooks(ROOT, FOLDERS)}
ENGLISH = sorted(p for p in SHIPPED if Path(p).parent.name != ZH)
TWINS = sorted(p for p in SHIPPED if Path(p).parent.name == ZH)

#: English notebooks whose Chinese twin is not done yet:
#: each is removed as its translation lands.
PENDING: set[str] = set()  # empty: the whole course is translated; a new English notebook waits here

#: The lesson template's markers, English -> Chinese.
HEADER_MARKERS = {"**Goal:**": "**目标：**", "**You need:**": "**前置知识：**", "**Time:**": "**时间：**"}
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def english_of(twin: str) -> str:
    path = Path(twin)
    return (path.parent.parent / path.name).as_posix()


def twin_of(english: str) -> str:
    path = Path(english)
    return (path.parent / ZH / path.name).as_posix()


def cells(rel: str) -> list[Any]:
    return list(nbformat.reads(SHIPPED[rel], as_version=4).cells)


def text(cell: Any) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def done(twin: str) -> bool:
    return english_of(twin) not in PENDING


COMPLETE = [t for t in TWINS if done(t)]
LESSON_TWINS = [t for t in COMPLETE if t.startswith("notebooks/") and re.match(r"\d\d[a-z]?_", Path(t).name)]


# ----------------------------------------------------------------------------- every twin


def test_pending_names_english_notebooks() -> None:
    assert PENDING <= set(ENGLISH), f"PENDING names notebooks the course does not ship: {sorted(PENDING - set(ENGLISH))}"


def test_every_english_notebook_is_translated_or_pending() -> None:
    missing = [e for e in ENGLISH if e not in PENDING and twin_of(e) not in SHIPPED]
    assert not missing, f"no Chinese twin (run python scripts/sync_zh.py NOTEBOOK, then translate): {missing}"


def test_every_twin_has_an_english_notebook() -> None:
    orphans = [t for t in TWINS if english_of(t) not in SHIPPED]
    assert not orphans, f"Chinese notebooks without an English twin: {orphans}"


def test_the_chinese_edition_is_checked_by_nbval() -> None:
    """``course.sh test notebooks`` gets its list from this command: the twins are on it."""
    run = subprocess.run([sys.executable, "-m", "bubblekit.course.workspace", "--root", str(ROOT), "--course-notebooks"],
                         capture_output=True, text=True, check=True)
    listed = {Path(line).resolve().relative_to(ROOT).as_posix() for line in run.stdout.split()
              if Path(line).resolve().is_relative_to(ROOT)}
    assert COMPLETE and set(COMPLETE) <= listed, f"not on nbval's list: {sorted(set(COMPLETE) - listed)}"


@pytest.mark.parametrize("twin", TWINS)
def test_same_cells_in_the_same_order(twin: str) -> None:
    zh = [(c.get("id"), c.cell_type) for c in cells(twin)]
    en = [(c.get("id"), c.cell_type) for c in cells(english_of(twin))]
    assert zh == en, f"{twin}: cells differ from {english_of(twin)} (run python scripts/sync_zh.py {english_of(twin)})"


@pytest.mark.parametrize("twin", TWINS)
def test_code_is_the_same_program_apart_from_strings_and_comments(twin: str) -> None:
    zh, en = cells(twin), cells(english_of(twin))
    first = next((i for i, c in enumerate(en) if c.cell_type == "code"), None)
    assert first is not None, f"{english_of(twin)} has no code cell"
    problems = []
    for index, (a, b) in enumerate(zip(zh, en)):
        if b.cell_type == "markdown":
            continue
        if b.cell_type == "raw":
            if text(a) != text(b):
                problems.append(f"cell {index} ({b.get('id')}): the raw cell differs from the English")
            continue
        why = sync_zh.code_difference(text(b), text(a), first=index == first)
        if why:
            problems.append(f"cell {index} ({b.get('id')}): {why}")
        if a.metadata.get("tags", []) != b.metadata.get("tags", []):
            problems.append(f"cell {index} ({b.get('id')}): tags differ")
        if _hidden(a) != _hidden(b):
            problems.append(f"cell {index} ({b.get('id')}): collapsed in one edition only")
    assert not problems, f"{twin} (python scripts/sync_zh.py --check {english_of(twin)}):\n" + "\n".join(problems)
    assert sum(sync_zh.LANGUAGE_LINE in text(c) for c in zh) == 1, f"{twin}: the language line must appear once"
    imports = sum(len(re.findall(r"(?m)^\s*import bubblekit as bk\b", text(c))) for c in zh if c.cell_type == "code")
    assert imports == 1, f"{twin}: bubblekit is imported {imports} times (the language line imports it)"


def _hidden(cell: Any) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden", False))


def _literals_and_comments(source: str) -> list[tuple[str, str]]:
    """(kind, text) of each comment and string literal of a code cell ("comment" / "string")."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    out = []
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append(("comment", tok.string.lstrip("#").strip()))
        elif tok.type == tokenize.STRING:
            out.append(("string", tok.string))
    return out


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
#: Comments that are tool directives, the same in both editions.
_DIRECTIVE = re.compile(r"^(noqa|type:|pragma|fmt:|isort:|ruff:|mypy:|BEGIN SOLUTION|END SOLUTION)")
#: Three or more English words in a row: a phrase written for a reader.
_ENGLISH_PHRASE = re.compile(r"\b[A-Za-z]{2,}[,;:]?\s+[A-Za-z]{2,}[,;:]?\s+[A-Za-z]{2,}\b")


def english_only(kind: str, value: str) -> bool:
    """True for a comment, or a string literal that reads as a phrase, with no Chinese in it."""
    if _CJK.search(value) or (kind == "comment" and _DIRECTIVE.match(value)):
        return False
    if kind == "string":
        body = re.sub(r"\{[^{}]*\}", " ", value)  # an f-string's fields are code, not words
        return bool(_ENGLISH_PHRASE.search(body))
    return len(re.findall(r"[A-Za-z]{3,}", value)) >= 2  # a formula such as (mv+p-1)(f+b)/v is neither


@pytest.mark.parametrize("english", ENGLISH)
def test_english_code_has_no_chinese(english: str) -> None:
    found = [f"cell {c.get('id')}: {v!r}" for c in cells(english) if c.cell_type == "code"
             for _, v in _literals_and_comments(text(c)) if _CJK.search(v)]
    assert not found, f"{english}: Chinese in the English edition's code (write it in the twin):\n" + "\n".join(found)


@pytest.mark.parametrize("twin", COMPLETE)
def test_chinese_code_speaks_chinese(twin: str) -> None:
    found = [f"cell {c.get('id')}: {kind} {v!r}" for c in cells(twin) if c.cell_type == "code"
             for kind, v in _literals_and_comments(text(c)) if english_only(kind, v)]
    assert not found, f"{twin}: English comments or sentences in the Chinese edition's code:\n" + "\n".join(found)


def test_the_language_rules_tell_chinese_from_english_literals() -> None:
    assert english_only("comment", "fill grows down, drain up")
    assert not english_only("comment", "填充向下增长，排空向上")
    assert not english_only("comment", "noqa: E501") and not english_only("comment", "BEGIN SOLUTION")
    assert not english_only("comment", "(mv+p-1)(f+b)/v") and english_only("comment", "1F1B now slower")
    assert english_only("string", '"Car factory: rank 0 welding"')
    assert not english_only("string", '"b=2f"') and not english_only("string", '"1f1b"')
    assert not english_only("string", 'f"{name}: {value:.3f}"')
    assert not english_only("string", '"汽车工厂：rank 0 焊接"')


def test_token_parity_sets_strings_and_comments_aside() -> None:
    en = 'import bubblekit as bk\nt = bk.Table(["rank", "idle"], title="Idle time")  # per rank\nt'
    zh = sync_zh.LANGUAGE_LINE + '\nt = bk.Table(["rank", "空闲"], title="空闲时间")  # 每个 rank\nt'
    assert sync_zh.code_difference(en, zh, first=True) is None
    assert "has 'u'" in (sync_zh.code_difference("t = 1", "u = 1") or "")
    assert "goes on" in (sync_zh.code_difference("t = 1", "t = 1\nt") or "")
    assert "must start with" in (sync_zh.code_difference(en, en, first=True) or "")
    assert sync_zh.code_difference("%matplotlib inline\nx = 1", "%matplotlib inline\nx = 1  # 注释") is None
    assert sync_zh.code_difference("s = 'unterminated", "s = 'unterminated") is None  # compared as text


# ----------------------------------------------------------------------------- complete twins


@pytest.mark.parametrize("twin", COMPLETE)
def test_markdown_is_chinese_and_current(twin: str) -> None:
    en = {c.id: text(c) for c in cells(english_of(twin))}
    problems = []
    for cell in cells(twin):
        if cell.cell_type != "markdown":
            continue
        state = sync_zh.status(cell, en[cell.id])
        if state != "ok":
            problems.append(f"{cell.id}: {state}")
        elif not sync_zh.is_chinese(text(cell)):
            problems.append(f"{cell.id}: not Chinese (CJK share {sync_zh.cjk_share(text(cell)):.0%})")
    assert not problems, f"{twin} (python scripts/sync_zh.py, translate, then --accept):\n" + "\n".join(problems)


def test_pending_notebooks_are_not_done_already() -> None:
    """A pending notebook whose twin is complete: remove it from PENDING (the test is then strict)."""
    finished = []
    for english in sorted(PENDING):
        twin = twin_of(english)
        if twin not in SHIPPED:
            continue
        en = {c.id: text(c) for c in cells(english)}
        md = [c for c in cells(twin) if c.cell_type == "markdown"]
        if md and all(sync_zh.status(c, en.get(c.id, "")) == "ok" and sync_zh.is_chinese(text(c)) for c in md):
            finished.append(english)
    assert not finished, f"translated: remove from PENDING in tests/test_zh_parity.py: {finished}"


@pytest.mark.parametrize("twin", LESSON_TWINS)
def test_lesson_template_in_chinese(twin: str) -> None:
    zh, en = cells(twin), cells(english_of(twin))
    head = text(zh[0])
    assert re.match(r"# \d\d[a-z]? · \S", head), "the header starts with '# NN · 标题'"
    for marker in HEADER_MARKERS.values():
        assert marker in head, f"the header has no {marker} line"
    assert re.search(r"\*\*时间：\*\*[^\n]*\d+\s*分钟", head), "the 时间 line states 分钟"
    recap = [i for i, c in enumerate(en) if c.cell_type == "markdown" and text(c).lstrip().startswith("## Recap")]
    assert len(recap) == 1
    bullets = [len([ln for ln in text(c[recap[0]]).splitlines() if re.match(r"\s*([-*]|\d+\.)\s", ln)]) for c in (zh, en)]
    assert text(zh[recap[0]]).lstrip().startswith("## 小结") and bullets[0] == bullets[1], \
        f"the recap is '## 小结' with the English recap's {bullets[1]} takeaways (has {bullets[0]})"
    for a, b in zip(zh, en):
        for _ in re.findall(r"(?m)^## Deep dive · .*$", text(b)):
            heading = re.search(r"(?m)^## 深入 · \S.*$", text(a))
            assert heading, f"cell {b.id}: the deep dive's heading is '## 深入 · 标题'"
            rest = text(a)[heading.end():].strip().splitlines()
            assert rest and "选读" in rest[0], f"cell {b.id}: the line after the heading says 选读"
    assert re.search(r"\*\*(练习|下一课)：\*\*", text(zh[-1])), "the footer points onward (**练习：** / **下一课：**)"


def _links(cell: Any) -> list[str]:
    return [t for t in _LINK.findall(text(cell)) if "://" not in t and not t.startswith("mailto:")]


def _resolve(base: Path, link: str) -> Path:
    return (base / link).resolve()


def _as_shipped(target: Path) -> Path:
    """A workspace/ link opens the learner's copy of an exercise: the course's copy is in exercises/."""
    workspace = (ROOT / WORKSPACE_DIR).resolve()
    if target.parent == workspace or target.parent == workspace / ZH:
        rel = target.relative_to(workspace)
        if rel.name.endswith(".exercises.ipynb"):  # the learner's copy is named NN_topic.exercises.ipynb
            rel = rel.with_name(rel.name[: -len(".exercises.ipynb")] + ".ipynb")
        return ROOT / "exercises" / rel
    return target


def _pending(target: Path) -> bool:
    """A missing Chinese twin whose English notebook is pending (an exercise: its solution's)."""
    rel = target.relative_to(ROOT) if target.is_relative_to(ROOT) else None
    if rel is None or rel.parent.name != ZH:
        return False
    english = rel.parent.parent / rel.name
    if english.parts[0] == "exercises":
        english = Path("solutions") / rel.name
    return english.as_posix() in PENDING


@pytest.mark.parametrize("twin", TWINS)
def test_links_point_to_the_chinese_twins(twin: str) -> None:
    zh_base, en_base = (ROOT / twin).parent, (ROOT / english_of(twin)).parent
    problems = []
    for a, b in zip(cells(twin), cells(english_of(twin))):
        if b.cell_type != "markdown" or (not done(twin) and sync_zh.status(a, text(b)) != "ok"):
            continue
        wanted = []
        for link in _links(b):
            target = _resolve(en_base, link)
            if target.suffix == ".ipynb":
                target = target.parent / ZH / target.name
            elif target.suffix == ".md" and (target.parent / f"{target.stem}.zh-CN.md").exists():
                target = target.parent / f"{target.stem}.zh-CN.md"  # README.zh-CN.md, docs/instructor_guide.zh-CN.md
            wanted.append(target)
        got = [_resolve(zh_base, link) for link in _links(a)]
        # a link to the learner's copy (workspace/) and one to the course's copy (exercises/) open the same exercise
        if [_as_shipped(t) for t in got] != [_as_shipped(t) for t in wanted]:
            problems.append(f"cell {a.id}: links {[str(p.relative_to(ROOT)) for p in got]}, "
                            f"expected the twins {[str(p.relative_to(ROOT)) for p in wanted]}")
        for target in got:
            shipped = _as_shipped(target)
            if not shipped.exists() and not _pending(shipped):
                problems.append(f"cell {a.id}: {target.relative_to(ROOT)} does not exist and is not pending")
    assert not problems, f"{twin}:\n" + "\n".join(problems)


# ----------------------------------------------------------------------------- the rule itself


def test_cjk_share_tells_chinese_from_english() -> None:
    assert sync_zh.is_chinese("1F1B 的气泡比例比 GPipe 小，因为 `bubble_ratio` 只计空闲时间。")
    assert not sync_zh.is_chinese("The bubble of 1F1B equals the bubble of GPipe, but the memory differs.")
    assert sync_zh.cjk_share("$$m = \\frac{B}{\\mathrm{DP}\\cdot b}$$") is None  # a formula is neutral
    assert sync_zh.cjk_share("---") is None


# ----------------------------------------------------------------------------- scripts/sync_zh.py


def _english_notebook() -> Any:
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(cells=[
        new_markdown_cell("# 99 · Test\n\nThe bubble is idle time.", id="head"),
        new_code_cell("import bubblekit as bk\nbk.bubble_ratio(4, 8)", id="code1"),
        new_markdown_cell("The ratio falls as m grows.", id="md2"),
        new_code_cell("bk.bubble_ratio(4, 16)", id="code2", metadata={"tags": ["workshop"]}),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    return nb


def _translate(nb: Any, texts: dict[str, str]) -> None:
    for cell in nb.cells:
        if cell.id in texts:
            cell.source = texts[cell.id]


ZH_TEXTS = {"head": "# 99 · 测试\n\n气泡就是空闲时间。", "md2": "m 越大，气泡比例越小。"}


def test_sync_makes_a_twin_to_translate_and_accept_records_it() -> None:
    en = _english_notebook()
    zh, report = sync_zh.sync(en, None)
    assert report.untranslated == ["head", "md2"] and report.code_updated == ["code1", "code2"]
    assert zh.cells[1].source == sync_zh.LANGUAGE_LINE + "\nbk.bubble_ratio(4, 8)"
    assert zh.cells[3].source == en.cells[3].source and zh.cells[3].metadata["tags"] == ["workshop"]
    assert zh.cells[0].source == en.cells[0].source  # the English text, to translate
    _translate(zh, {"head": ZH_TEXTS["head"]})
    zh, accepted, still = sync_zh.accept(en, zh)
    assert accepted == ["head"] and still == ["md2"]
    _translate(zh, ZH_TEXTS)
    zh, accepted, still = sync_zh.accept(en, zh)
    assert accepted == ["md2"] and not still
    again, report = sync_zh.sync(en, zh)
    assert report.in_step and again == zh


def test_sync_follows_english_edits_and_never_overwrites_a_translation() -> None:
    from nbformat.v4 import new_markdown_cell

    en = _english_notebook()
    zh, _ = sync_zh.sync(en, None)
    _translate(zh, ZH_TEXTS)
    zh, _, _ = sync_zh.accept(en, zh)
    zh.cells[3].outputs = ["kept while the code is unchanged"]
    en.cells[0].source = "# 99 · Test\n\nThe bubble is the idle time of a rank."   # a translated cell's English changes
    en.cells[1].source = "import bubblekit as bk\nbk.bubble_ratio(8, 8)"           # code changes
    en.cells.insert(2, new_markdown_cell("A new paragraph.", id="new"))              # a new cell
    del en.cells[3]                                                                # md2 is deleted
    synced, report = sync_zh.sync(en, zh)
    assert [c.id for c in synced.cells] == ["head", "code1", "new", "code2"]
    assert report.stale == ["head"] and report.untranslated == ["new"] and report.removed == ["md2"]
    assert report.code_updated == ["code1"] and synced.cells[1].outputs == [] and not report.in_step
    assert synced.cells[0].source == ZH_TEXTS["head"]                               # kept, flagged
    assert synced.cells[3].outputs == ["kept while the code is unchanged"]
    # accepting without touching the stale translation keeps it flagged ...
    synced, accepted, still = sync_zh.accept(en, synced)
    assert accepted == [] and still == ["head", "new"]
    # ... until it is updated, or accepted by name (the translation still fits)
    named, accepted, _ = sync_zh.accept(en, synced, {"head"})
    assert accepted == ["head"]
    _translate(synced, {"head": "# 99 · 测试\n\n气泡就是某个 rank 的空闲时间。", "new": "新的一段。"})
    synced, accepted, still = sync_zh.accept(en, synced)
    assert accepted == ["head", "new"] and not still
    assert sync_zh.sync(en, synced)[1].in_step


def test_sync_keeps_a_twin_whose_strings_and_comments_are_chinese() -> None:
    en = _english_notebook()
    en.cells[3].source = 'bk.bubble_ratio(4, 16)  # more microbatches\nprint("the ratio falls")'
    zh, _ = sync_zh.sync(en, None)
    zh.cells[3].source = 'bk.bubble_ratio(4, 16)  # 微批更多\nprint("气泡比例下降")'
    zh.cells[3].outputs = ["kept"]
    synced, report = sync_zh.sync(en, zh)
    assert "code2" not in report.code_updated and synced.cells[3].source == zh.cells[3].source
    assert synced.cells[3].outputs == ["kept"]
    en.cells[3].source = 'bk.bubble_ratio(4, 32)  # more microbatches\nprint("the ratio falls")'
    synced, report = sync_zh.sync(en, zh)
    assert report.code_updated == ["code2"] and synced.cells[3].source == en.cells[3].source


def test_an_untranslated_cell_follows_the_english() -> None:
    en = _english_notebook()
    zh, _ = sync_zh.sync(en, None)
    en.cells[2].source = "The ratio falls as m grows, towards zero."
    synced, report = sync_zh.sync(en, zh)
    assert synced.cells[2].source == en.cells[2].source and report.untranslated == ["head", "md2"]


def test_accept_rejects_what_is_not_a_translation() -> None:
    en = _english_notebook()
    zh, _ = sync_zh.sync(en, None)
    with pytest.raises(ValueError, match="md2 is not Chinese yet"):
        sync_zh.accept(en, zh, {"md2"})
    with pytest.raises(ValueError, match="code1 are not markdown cells"):
        sync_zh.accept(en, zh, {"code1"})


def test_sync_command_check_writes_nothing_and_fails_when_out_of_step(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    english = tmp_path / "notebooks" / "99_test.ipynb"
    english.parent.mkdir()
    nbformat.write(_english_notebook(), english)
    twin = english.parent / ZH / english.name
    assert sync_zh.main(["--check", str(english)]) == 1 and not twin.exists()
    assert sync_zh.main([str(english)]) == 0 and twin.is_file()
    assert "made" in capsys.readouterr().out
    assert sync_zh.main(["--check", str(english)]) == 1  # untranslated
    zh = nbformat.read(twin, as_version=4)
    _translate(zh, ZH_TEXTS)
    nbformat.write(zh, twin)
    assert sync_zh.main(["--accept", str(twin)]) == 0
    assert sync_zh.main(["--check", str(twin)]) == 0
    before = twin.read_bytes()
    assert sync_zh.main([str(english)]) == 0 and twin.read_bytes() == before  # nothing to change: not rewritten
    with pytest.raises(SystemExit):
        sync_zh.main(["--cells", "head"])
