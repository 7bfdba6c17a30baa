#!/usr/bin/env python3
"""Keep the Chinese notebooks in step with their English twins (a contributor's tool).

    python scripts/sync_zh.py --check                        # report; exit 1 if a twin is out of step
    python scripts/sync_zh.py                                # update every zh twin from its English notebook
    python scripts/sync_zh.py notebooks/08_case_studies.ipynb   # one notebook (makes its twin if missing)
    python scripts/sync_zh.py --accept notebooks/zh/08_case_studies.ipynb   # record finished translations

Layout: the Chinese twin of ``notebooks/NAME.ipynb`` is ``notebooks/zh/NAME.ipynb``; likewise
``solutions/zh/`` and ``apps/zh/`` (``exercises/zh/`` is generated from ``solutions/zh/`` by
``scripts/make_exercises.py``). A twin has the English notebook's cells, in the same order and
with the same cell ids:

* **code cells** are the same program as the English ones, written in Chinese: their Python
  token streams are equal once string literals and comments are set aside (:func:`code_tokens`),
  so each edition writes its own titles, table headers, printed sentences and comments as
  literals in its own language. The first code cell starts with :data:`LANGUAGE_LINE`
  (``bk.set_language("zh")``) where the English one starts with ``import bubblekit as bk``, so
  that bubblekit's checks, labels, tables and figures come out in Chinese. Raw cells are equal
  character for character;
* **markdown cells** are translations. Each records, in ``metadata["translation"]``, the hash
  of the English text it was translated from (``source_sha``).

What a sync does, for each twin (the English notebook is the source of truth for the code
and for which cells exist):

* copies every code cell whose program changed (its token stream differs from the twin's:
  the English code is copied, with the language line in the first cell, and its outputs are
  cleared: translate its comments and strings, then re-execute the twin); a twin cell that
  differs only in its strings and comments is kept as it is;
* inserts each new markdown cell with its English text, marked ``"status": "untranslated"``;
* removes the cells the English notebook no longer has;
* **flags** a translation whose English text changed since (its ``source_sha`` differs): the
  Chinese text is never overwritten, the cell is listed as stale until a translator updates
  it and runs ``--accept``. An untranslated cell (still the English text) simply follows the
  new English text.

``--accept ZH_NOTEBOOK`` (after a sync) records the translations done: an untranslated cell
whose text is now Chinese, and a stale cell whose Chinese text changed since it was flagged,
get the current English hash. ``--cells ID,ID`` accepts exactly those cells (for a stale
cell whose translation still fits an English change, e.g. a fixed typo).

A learner's files are safe: with no notebook named, a twin that differs from its committed
version (a lesson run and saved) is skipped with a note; name it to sync it. Nothing is
written unless something changed, and a file is replaced only after the new version is built.
``--check`` writes nothing.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import os
import re
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from bubblekit.course.workspace import committed_text

ROOT = Path(__file__).resolve().parent.parent

#: Folders whose notebooks have Chinese twins in a ``zh/`` subfolder (exercises/zh/ is generated).
FOLDERS = ("notebooks", "solutions", "apps")
ZH = "zh"
#: The one line a Chinese notebook's code has that its English twin lacks: the first line of
#: its first code cell.
LANGUAGE_LINE = 'import bubblekit as bk; bk.set_language("zh")  # 中文版'
#: Cell metadata key of a translation's record.
META = "translation"
UNTRANSLATED = "untranslated"
#: A markdown cell counts as Chinese when CJK characters are at least this share of its words
#: (CJK characters + English words, code, formulas and links left out).
MIN_CJK_SHARE = 0.5

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z]{2,}")
_NOT_PROSE = [
    re.compile(r"```.*?```", re.S),        # code blocks
    re.compile(r"`[^`\n]*`"),              # inline code
    re.compile(r"\$\$.*?\$\$", re.S),      # display math
    re.compile(r"\$[^$\n]*\$"),            # inline math
    re.compile(r"\]\([^)]*\)"),            # link targets
    re.compile(r"<[^>\n]*>"),              # HTML tags
    re.compile(r"https?://\S+"),
]


def cjk_share(text: str) -> float | None:
    """CJK characters / (CJK characters + English words) in ``text``'s prose, or None when the
    prose has fewer than 3 of either (a formula, a rule line, a link list: language-neutral).

    Code spans, formulas, link targets and HTML tags are left out; names like ``GPipe``,
    ``bubble_ratio`` or ``1F1B`` in prose count as English words, so a Chinese paragraph
    full of them still passes :data:`MIN_CJK_SHARE`.
    """
    for pattern in _NOT_PROSE:
        text = pattern.sub(" ", text)
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(text))
    if cjk + words < 3:
        return None
    return cjk / (cjk + words)


def is_chinese(text: str) -> bool:
    """True when ``text`` reads as Chinese (:func:`cjk_share` ≥ :data:`MIN_CJK_SHARE`) or is language-neutral."""
    share = cjk_share(text)
    return share is None or share >= MIN_CJK_SHARE


def source_of(cell: Any) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def digest(text: str) -> str:
    """The hash a translation records of its English text (first 16 hex digits of SHA-256)."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:16]


def twin_path(english: Path) -> Path:
    """``notebooks/NAME.ipynb`` -> ``notebooks/zh/NAME.ipynb``."""
    return english.parent / ZH / english.name


def english_path(zh: Path) -> Path:
    """``notebooks/zh/NAME.ipynb`` -> ``notebooks/NAME.ipynb``."""
    if zh.parent.name != ZH:
        raise ValueError(f"{zh} is not in a {ZH}/ folder")
    return zh.parent.parent / zh.name


def first_code_index(nb: Any) -> int | None:
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)


#: The line an English notebook's first code cell starts with, where the Chinese one has :data:`LANGUAGE_LINE`.
ENGLISH_FIRST_LINE = "import bubblekit as bk"
#: Token types set aside when two editions' code is compared: what each edition writes in its own language.
_LANGUAGE_TOKENS = {tokenize.STRING, tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING,
                    tokenize.ENDMARKER}
for _name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END"):  # Python >= 3.12 splits f-strings
    if hasattr(tokenize, _name):
        _LANGUAGE_TOKENS.add(getattr(tokenize, _name))


def _without_language_line(source: str) -> str:
    if source == LANGUAGE_LINE or source.startswith(LANGUAGE_LINE + "\n"):
        return ENGLISH_FIRST_LINE + source[len(LANGUAGE_LINE):]
    return source


def code_tokens(source: str) -> list[tuple[int, str]]:
    """The program of a code cell: its tokens as (line, text), strings and comments set aside.

    IPython's line magics (``%matplotlib inline``) are tokens like any other. A cell Python
    cannot tokenize (an unfinished string, say) is compared line by line as text instead.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [(n, line.strip()) for n, line in enumerate(source.splitlines(), 1) if line.strip()]
    out = []
    for tok in tokens:
        if tok.type in _LANGUAGE_TOKENS:
            continue
        text = {tokenize.INDENT: "<indent>", tokenize.DEDENT: "<dedent>"}.get(tok.type, tok.string)
        out.append((tok.start[0], text))
    return out


def code_difference(english: str, chinese: str, first: bool = False) -> str | None:
    """None when ``chinese`` is the program ``english`` is (strings and comments aside), else where not.

    ``first``: the cells are their notebooks' first code cells (the Chinese one starts with
    :data:`LANGUAGE_LINE`, the English one with :data:`ENGLISH_FIRST_LINE`).
    """
    if first:
        if not chinese.startswith(LANGUAGE_LINE):
            return f"the first code cell must start with {LANGUAGE_LINE!r}"
        if not (english == ENGLISH_FIRST_LINE or english.startswith(ENGLISH_FIRST_LINE + "\n")):
            return f"the English first code cell must start with {ENGLISH_FIRST_LINE!r}"
        chinese = _without_language_line(chinese)
    a, b = code_tokens(english), code_tokens(chinese)
    for (line_en, tok_en), (line_zh, tok_zh) in zip(a, b):
        if tok_en != tok_zh:
            return f"English line {line_en} has {tok_en!r} where the Chinese line {line_zh} has {tok_zh!r}"
    if len(a) != len(b):
        longer, name = (a, "English") if len(a) > len(b) else (b, "Chinese")
        line, tok = longer[min(len(a), len(b))]
        return f"the {name} code goes on at its line {line} with {tok!r}"
    return None


def expected_code(english_nb: Any, index: int) -> str:
    """The English cell ``index`` as a starting point for its Chinese twin (code and raw cells):
    the first code cell's ``import bubblekit as bk`` line becomes :data:`LANGUAGE_LINE`."""
    text = source_of(english_nb.cells[index])
    if index == first_code_index(english_nb):
        if text == ENGLISH_FIRST_LINE or text.startswith(ENGLISH_FIRST_LINE + "\n"):
            return LANGUAGE_LINE + text[len(ENGLISH_FIRST_LINE):]
        return LANGUAGE_LINE + "\n" + text
    return text


def twin_code_in_step(english_nb: Any, index: int, zh_source: str) -> bool:
    """True when a twin's cell ``index`` is the English cell's program (code cells) or text (raw cells)."""
    cell = english_nb.cells[index]
    if cell.cell_type != "code":
        return zh_source == source_of(cell)
    return code_difference(source_of(cell), zh_source, first=index == first_code_index(english_nb)) is None


def status(cell: Any, english_text: str) -> str:
    """``"ok"``, ``"untranslated"`` or ``"stale"`` for a Chinese markdown cell."""
    record = cell.get("metadata", {}).get(META, {})
    if record.get("status") == UNTRANSLATED:
        return UNTRANSLATED
    if record.get("source_sha") != digest(english_text):
        return "stale"
    return "ok"


@dataclass
class Report:
    """What a sync changed (cell ids), and what is left for a translator."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    code_updated: list[str] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)

    @property
    def in_step(self) -> bool:
        return not (self.added or self.removed or self.code_updated or self.untranslated or self.stale)

    def lines(self) -> list[str]:
        out = []
        for name, ids in (("cells added (untranslated)", self.added), ("cells removed", self.removed),
                          ("code cells copied from the English (translate their comments and strings, then re-execute)", self.code_updated),
                          ("untranslated", self.untranslated), ("stale (the English changed)", self.stale),
                          ("accepted", self.accepted)):
            if ids:
                out.append(f"  {name}: {', '.join(ids)}")
        return out


def _metadata(english_cell: Any, zh_cell: Any | None) -> dict[str, Any]:
    """The English cell's metadata (tags, slides) with the Chinese cell's translation record."""
    meta = copy.deepcopy(dict(english_cell.get("metadata", {})))
    meta.pop("execution", None)
    meta.pop(META, None)
    if zh_cell is not None and META in zh_cell.get("metadata", {}):
        meta[META] = copy.deepcopy(zh_cell.metadata[META])
    return meta


def sync(english_nb: Any, zh_nb: Any | None) -> tuple[Any, Report]:
    """The Chinese twin brought in step with ``english_nb`` (``zh_nb`` is not changed), and a report.

    Raises:
        ValueError: a cell of either notebook has no id (nbformat 4.5 ids are the pairing).
    """
    report = Report()
    for name, nb in (("English", english_nb), ("Chinese", zh_nb)):
        if nb is not None and any(not c.get("id") for c in nb.cells):
            raise ValueError(f"the {name} notebook has cells without an id: upgrade it to nbformat 4.5 "
                             "(open and save it in JupyterLab, or nbformat.validator.normalize)")
    old = {c.id: c for c in zh_nb.cells} if zh_nb is not None else {}
    new = copy.deepcopy(english_nb)
    new.cells = []
    if zh_nb is not None:  # keep the twin's own notebook metadata (kernel, language_info)
        new.metadata = copy.deepcopy(zh_nb.metadata)
    for index, cell in enumerate(english_nb.cells):
        mine = old.get(cell.id)
        if mine is not None and mine.cell_type != cell.cell_type:
            mine = None
        if cell.cell_type == "markdown":
            text = source_of(cell)
            if mine is None:
                out = copy.deepcopy(cell)
                out.metadata = _metadata(cell, None)
                out.metadata[META] = {"source_sha": digest(text), "status": UNTRANSLATED}
                report.added.append(cell.id)
            else:
                out = copy.deepcopy(mine)
                out.metadata = _metadata(cell, mine)
                record = out.metadata.setdefault(META, {})
                state = status(out, text)
                if state == UNTRANSLATED and digest(source_of(mine)) == record.get("source_sha"):
                    out.source = text  # still the English it was made from: follow the English
                    record["source_sha"] = digest(text)
                elif state == "stale" and "flagged_sha" not in record:
                    record["flagged_sha"] = digest(source_of(mine))  # the Chinese text when first flagged
            state = status(out, text)
            if state == UNTRANSLATED:
                report.untranslated.append(cell.id)
            elif state == "stale":
                report.stale.append(cell.id)
        else:
            code = expected_code(english_nb, index)
            kept = mine is not None and twin_code_in_step(english_nb, index, source_of(mine))
            if kept:
                out = copy.deepcopy(mine)
            else:
                out = copy.deepcopy(cell)
                out.source = code
                if out.cell_type == "code":
                    out.outputs = []
                    out.execution_count = None
                report.code_updated.append(cell.id)
            meta = _metadata(cell, None)
            if kept and "execution" in out.metadata:  # the twin's own run timings, kept with its code
                meta["execution"] = out.metadata["execution"]
            out.metadata = meta
        new.cells.append(out)
    ids = {c.id for c in english_nb.cells}
    report.removed = [c.id for c in (zh_nb.cells if zh_nb is not None else []) if c.id not in ids]
    return new, report


def accept(english_nb: Any, zh_nb: Any, cells: set[str] | None = None) -> tuple[Any, list[str], list[str]]:
    """Record finished translations: (the twin with their records updated, ids accepted, ids still open).

    Without ``cells``: an untranslated cell whose text is Chinese and differs from the English,
    and a stale cell whose text changed since it was flagged. With ``cells``: exactly those
    (each must be a markdown cell whose text is Chinese).

    Raises:
        ValueError: a named cell is not a markdown cell of the twin, or its text is not Chinese.
    """
    english = {c.id: source_of(c) for c in english_nb.cells}
    nb = copy.deepcopy(zh_nb)
    markdown = {c.id: c for c in nb.cells if c.cell_type == "markdown"}
    unknown = sorted((cells or set()) - set(markdown))
    if unknown:
        raise ValueError(f"--cells: {', '.join(unknown)} are not markdown cells of the Chinese notebook")
    done: list[str] = []
    still: list[str] = []
    for cid, cell in markdown.items():
        text, record = source_of(cell), cell.metadata.setdefault(META, {})
        state = status(cell, english.get(cid, ""))
        if cells is not None:
            if cid not in cells:
                if state != "ok":
                    still.append(cid)
                continue
            if not is_chinese(text):
                raise ValueError(f"--cells: cell {cid} is not Chinese yet (CJK share {cjk_share(text):.0%})")
            ready = True
        elif state == UNTRANSLATED:
            ready = is_chinese(text) and text != english.get(cid)
        elif state == "stale":
            ready = "flagged_sha" in record and digest(text) != record["flagged_sha"] and is_chinese(text)
        else:
            continue
        if ready:
            cell.metadata[META] = {"source_sha": digest(english.get(cid, ""))}
            done.append(cid)
        else:
            still.append(cid)
    return nb, done, still


# ----------------------------------------------------------------------------------- files


def read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)


def write_if_changed(path: Path, nb: Any) -> bool:
    """Write ``nb`` to ``path`` (atomically) unless the file already holds exactly that."""
    text = nbformat.writes(nb) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.syncing")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True


def english_notebooks(root: Path = ROOT) -> list[Path]:
    return sorted(p for f in FOLDERS for p in (root / f).glob("*.ipynb") if p.is_file())


def _changed_locally(path: Path) -> bool:
    shipped = committed_text(path)
    return shipped is not None and shipped.replace("\r\n", "\n") != path.read_text(encoding="utf-8").replace("\r\n", "\n")


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _english_for(arg: Path) -> Path:
    english = english_path(arg) if arg.parent.name == ZH else arg
    if not english.is_file():
        raise ValueError(f"{arg}: no English notebook {english}")
    return english


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="English notebooks (or their zh twins) to sync; default: every one that has a twin")
    parser.add_argument("--check", action="store_true", help="report only, write nothing; exit 1 if out of step")
    parser.add_argument("--accept", type=Path, metavar="ZH_NOTEBOOK", default=None,
                        help="sync this Chinese notebook, then record its finished translations")
    parser.add_argument("--cells", default=None, help="with --accept: accept exactly these cell ids (comma-separated)")
    args = parser.parse_args(argv)
    if args.cells is not None and args.accept is None:
        parser.error("argument --cells: only with --accept")
    try:
        if args.accept is not None:
            return _accept(args.accept, None if args.cells is None else set(filter(None, args.cells.split(","))))
        if args.notebooks:
            targets = [_english_for(p) for p in args.notebooks]
        else:
            targets = [p for p in english_notebooks() if twin_path(p).is_file()]
    except ValueError as exc:
        parser.error(str(exc))
    out_of_step = 0
    for english in targets:
        zh = twin_path(english)
        if not args.notebooks and not args.check and zh.is_file() and _changed_locally(zh):
            print(f"skipped {_rel(zh)}: it differs from its committed version (a lesson you ran and saved, "
                  "or a translation in progress); name it to sync it")
            continue
        existed = zh.is_file()
        new, report = sync(read(english), read(zh) if existed else None)
        wrote = False if args.check else write_if_changed(zh, new)
        verb = ("made" if not existed else "updated") if wrote else "in step" if report.in_step else "out of step"
        print(f"{_rel(zh)}: {verb}")
        for line in report.lines():
            print(line)
        if args.check and not report.in_step:
            out_of_step += 1
    if args.check and out_of_step:
        print(f"{out_of_step} Chinese notebook(s) out of step: run python scripts/sync_zh.py, translate the "
              "flagged cells, then python scripts/sync_zh.py --accept NOTEBOOK")
        return 1
    return 0


def _accept(zh: Path, cells: set[str] | None) -> int:
    english = _english_for(zh)
    zh = twin_path(english)
    if not zh.is_file():
        raise ValueError(f"--accept: {zh} does not exist (run python scripts/sync_zh.py {_rel(english)} first)")
    synced, report = sync(read(english), read(zh))
    done_nb, done, still = accept(read(english), synced, cells)
    write_if_changed(zh, done_nb)
    print(f"{_rel(zh)}: accepted {len(done)} cell(s){': ' + ', '.join(done) if done else ''}")
    if still:
        print(f"  still to translate or update: {', '.join(still)}")
    if report.code_updated:
        print(f"  code cells updated: {', '.join(report.code_updated)} (re-execute the notebook)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
