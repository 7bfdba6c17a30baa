#!/usr/bin/env python3
"""Export a reveal.js slide deck per workshop-track lesson with ``jupyter nbconvert --to slides``.

The workshop track (3 hours; docs/instructor_guide.md) is lessons 00, 01, 02, 03, 04, 05, 07
and 09. Their cells carry Jupyter's slide metadata (``metadata.slideshow.slide_type``:
``slide`` for the header and each new idea, ``subslide``/``fragment``/``-`` within one,
``skip`` for set-up cells and deep dives, ``notes`` for speaker notes), which both this export
and JupyterLab's RISE (``bash course.sh setup --slides``) read.

The decks go to ``build/slides/`` (a build output, ignored by git): ``NN_topic.slides.html``
per lesson and an ``index.html`` listing them in workshop order. Pictures are embedded, so a
deck is one file. By default a deck loads reveal.js, require.js and MathJax from their public
CDNs (nbconvert's defaults) and needs the network; ``--offline`` puts a copy of reveal.js
(``REVEAL_JS``), require.js and jQuery beside the decks, fetched once with
``npm pack`` (Node.js's npm, from the npm registry), so that the folder works from a USB stick
with no network at all; formulas then show as their TeX source (MathJax is not copied).

Usage::

    python scripts/make_slides.py               # every workshop-track lesson -> build/slides/
    python scripts/make_slides.py 03 04         # some lessons (any lesson works, marked or not)
    python scripts/make_slides.py --offline     # ... with reveal.js beside the decks, for a room without network
    python scripts/make_slides.py --out DIR     # another folder
    python scripts/make_slides.py --lang zh     # the Chinese decks, from notebooks/zh/ -> build/slides/zh/

Languages: ``--lang zh`` exports the Chinese lessons (``notebooks/zh/``, the twins of
``notebooks/``: the same cells and slide marks, Chinese titles, text and speaker notes) into
``build/slides/zh/`` (:data:`OUT_ZH`), with a Chinese ``index.html``, the decks marked
``<html lang="zh">`` (so that a browser draws them with a Chinese font) and the script's own
messages in Chinese (the option names stay as they are). ``--lang en`` (the default) is the English course.

Open ``build/slides/index.html`` in a browser; arrow keys move, ``s`` opens the speaker view
(notes), ``f`` full screen, ``Esc`` the overview.
"""

from __future__ import annotations

import argparse
import html
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the course's bubblekit, run from anywhere
from bubblekit.i18n import LANGUAGES, register, translate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "slides"
#: Where ``--lang zh`` puts the Chinese decks by default.
OUT_ZH = OUT / "zh"
#: The lessons of each language.
NOTEBOOKS: dict[str, Path] = {"en": ROOT / "notebooks", "zh": ROOT / "notebooks" / "zh"}
#: The workshop track: (lesson, minutes of the core path in the 3-hour workshop); a 10-minute break follows 03.
WORKSHOP_TRACK: tuple[tuple[str, int], ...] = (
    ("00", 10), ("01", 25), ("02", 25), ("03", 35), ("04", 30), ("05", 25), ("07", 10), ("09", 10),
)
BREAK_AFTER = "03"
BREAK_MINUTES = 10
#: The reveal.js release nbconvert's slides template is written for (its default address names it).
REVEAL_JS = "4.0.2"
REQUIRE_JS = "2.3.6"
JQUERY = "2.2.4"  # the template's scrolling helper uses jQuery 2
ASSETS = "reveal.js"  # the folder beside the decks that holds the offline copy

__all__ = ["WORKSHOP_TRACK", "NOTEBOOKS", "OUT_ZH", "default_out", "lesson_path", "fetch_assets", "export", "main"]

# The script's own words, in both languages (bubblekit's message catalogue: bubblekit.i18n).
register({
    "make_slides.no_lesson": {
        "en": "lesson {lesson!r}: no notebook {key}_*.ipynb in {folder}; lessons: {names}",
        "zh": "课程 {lesson!r}：{folder} 中没有 notebook {key}_*.ipynb；现有的课程：{names}"},
    "make_slides.no_npm": {
        "en": "--offline needs npm (Node.js) to fetch reveal.js once; install Node.js, or export without "
              "--offline (the decks then load reveal.js from the network)",
        "zh": "--offline 需要 npm（Node.js）来下载一次 reveal.js：请安装 Node.js，或者不加 --offline 导出"
              "（这样幻灯片会从网络加载 reveal.js）"},
    "make_slides.npm_failed": {
        "en": "npm pack {packages} failed (exit {code}): {output}",
        "zh": "npm pack {packages} 失败（退出码 {code}）：{output}"},
    "make_slides.nbconvert_failed": {
        "en": "jupyter nbconvert --to slides failed (exit {code}):\n{output}",
        "zh": "jupyter nbconvert --to slides 失败（退出码 {code}）：\n{output}"},
    "make_slides.no_deck": {
        "en": "nbconvert wrote no {missing} in {out}",
        "zh": "nbconvert 没有在 {out} 中写出 {missing}"},
    "make_slides.out_not_folder": {
        "en": "argument --out: {out!r} exists and is not a folder",
        "zh": "参数 --out：{out!r} 已存在，但不是目录"},
    "make_slides.out_cannot_make": {
        "en": "argument --out: cannot make the folder {out!r}: {why}",
        "zh": "参数 --out：无法创建目录 {out!r}：{why}"},
    "make_slides.out_would_overwrite": {
        "en": "argument --out: {out!r} already holds {files}{more}, which the export would overwrite; they are "
              "kept. Choose a new or empty folder, or pass --force",
        "zh": "参数 --out：{out!r} 中已有 {files}{more}，导出会覆盖它们；它们已原样保留。请换一个新的或空的目录，"
              "或者加上 --force"},
    "make_slides.and_more": {"en": " and more", "zh": " 等文件"},
    "make_slides.error": {"en": "error: {message}", "zh": "错误：{message}"},
    "make_slides.wrote": {"en": "wrote {deck}", "zh": "已写入 {deck}"},
    "make_slides.open": {"en": "open {index}", "zh": "在浏览器中打开 {index}"},
    "make_slides.open_online": {
        "en": "   (the decks load reveal.js from the network; --offline copies it beside them)",
        "zh": "   （这些幻灯片从网络加载 reveal.js；加上 --offline 会把它拷到幻灯片旁边）"},
    "make_slides.index_title": {"en": "Pipeline Bubbles: slides", "zh": "流水线气泡：幻灯片"},
    "make_slides.index_intro": {
        "en": "Made by <code>python scripts/make_slides.py</code>. Keys in a deck: arrows move, <b>s</b> speaker "
              "notes, <b>f</b> full screen, <b>Esc</b> overview.",
        "zh": "由 <code>python scripts/make_slides.py --lang zh</code> 生成。幻灯片中的按键：方向键翻页，<b>s</b> "
              "演讲者备注，<b>f</b> 全屏，<b>Esc</b> 概览。"},
    "make_slides.index_minutes": {"en": " ({minutes} min in the workshop)", "zh": "（工作坊中 {minutes} 分钟）"},
    "make_slides.index_break": {"en": "break ({minutes} min)", "zh": "休息（{minutes} 分钟）"},
    "make_slides.deck_title": {"en": "{title}: slides", "zh": "{title}：幻灯片"},
})


def _language(language: object) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {list(LANGUAGES)}, got {language!r}")
    return str(language)


def default_out(language: str = "en") -> Path:
    """Where the decks of ``language`` go unless ``--out`` says otherwise: ``build/slides/`` or ``build/slides/zh/``."""
    return OUT if _language(language) == "en" else OUT_ZH


class SlidesError(RuntimeError):
    """A lesson that does not exist, nbconvert failing, or the offline copy that cannot be fetched."""


def lesson_path(lesson: str, notebooks: Path | None = None, language: str = "en") -> Path:
    """The lesson notebook for ``"03"``, ``"3"`` or ``"03_the_bubble_formula"`` (companions ``03x_...`` are not matched by number).

    ``notebooks`` defaults to the lessons of ``language`` (:data:`NOTEBOOKS`: ``notebooks/`` or
    ``notebooks/zh/``); the error is in ``language``.

    Raises:
        SlidesError: no such lesson (the message lists the lessons).
    """
    language = _language(language)
    notebooks = NOTEBOOKS[language] if notebooks is None else notebooks
    key = lesson.strip().removesuffix(".ipynb")
    if key.isdigit():
        key = f"{int(key):02d}"
    found = sorted(p for p in notebooks.glob("*.ipynb") if p.stem == key or p.stem.split("_", 1)[0] == key)
    if not found:
        names = ", ".join(sorted(p.stem.split("_", 1)[0] for p in notebooks.glob("[0-9]*.ipynb")))
        raise SlidesError(translate("make_slides.no_lesson", language, lesson=lesson, key=key, folder=notebooks,
                                    names=names))
    return found[0]


#: Extract only plain files (Python's "data" filter where this Python has it).
_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def _safe_members(archive: tarfile.TarFile, keep: tuple[str, ...]) -> list[tarfile.TarInfo]:
    members = []
    for member in archive.getmembers():
        name = member.name
        if not (member.isfile() or member.isdir()) or name.startswith("/") or ".." in Path(name).parts:
            continue
        if name.endswith(".map"):
            continue  # source maps: for debugging reveal.js itself
        if any(name == k or name.startswith(k + "/") for k in keep):
            members.append(member)
    return members


def fetch_assets(out: Path, *, npm: str = "npm", language: str = "en") -> Path:
    """Put reveal.js ``REVEAL_JS``, require.js and jQuery into ``out/reveal.js/`` (once) and return that folder.

    Uses ``npm pack`` (the npm registry); an existing complete copy is kept. Errors are in ``language``.

    Raises:
        SlidesError: npm is missing or fails (the message says what to do).
    """
    target = out / ASSETS
    wanted = (target / "dist" / "reveal.js", target / "plugin" / "notes" / "notes.js", target / "require.js",
              target / "jquery.min.js")
    if all(p.is_file() for p in wanted):
        return target
    if shutil.which(npm) is None:
        raise SlidesError(translate("make_slides.no_npm", _language(language)))
    with tempfile.TemporaryDirectory() as tmp:
        packages = [f"reveal.js@{REVEAL_JS}", f"requirejs@{REQUIRE_JS}", f"jquery@{JQUERY}"]
        run = subprocess.run([npm, "pack", *packages, "--silent"], cwd=tmp, capture_output=True, text=True, timeout=300)
        tarballs = {p.name.rsplit("-", 1)[0]: p for p in Path(tmp).glob("*.tgz")}
        if run.returncode != 0 or set(tarballs) != {"reveal.js", "requirejs", "jquery"}:
            raise SlidesError(translate("make_slides.npm_failed", language, packages=" ".join(packages),
                                        code=run.returncode, output=(run.stderr or run.stdout).strip()[-500:]))
        unpacked = Path(tmp) / "unpacked"
        with tarfile.open(tarballs["reveal.js"]) as archive:
            archive.extractall(unpacked / "reveal", members=_safe_members(
                archive, ("package/dist", "package/plugin/notes", "package/LICENSE")), **_FILTER)
        with tarfile.open(tarballs["requirejs"]) as archive:
            archive.extractall(unpacked / "require", members=_safe_members(archive, ("package/require.js",)), **_FILTER)
        with tarfile.open(tarballs["jquery"]) as archive:
            archive.extractall(unpacked / "jquery", members=_safe_members(archive, ("package/dist/jquery.min.js",)),
                               **_FILTER)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(unpacked / "reveal" / "package", target)
        shutil.copyfile(unpacked / "require" / "package" / "require.js", target / "require.js")
        shutil.copyfile(unpacked / "jquery" / "package" / "dist" / "jquery.min.js", target / "jquery.min.js")
    return target


def export(lessons: list[Path], out: Path, *, offline: bool = False, language: str = "en") -> list[Path]:
    """Export each lesson to ``out/<lesson>.slides.html`` with ``jupyter nbconvert --to slides``; return the decks.

    ``language`` is the lessons' language: the decks' ``<html lang>``, the index page's words and
    the errors' (``"zh"``: each deck's browser tab also shows the lesson's own title).

    Raises:
        SlidesError: nbconvert failed (its message is included), or ``offline`` and the copy cannot be fetched.
    """
    language = _language(language)
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "nbconvert", "--to", "slides", "--embed-images", "--output-dir", str(out),
           "--log-level=WARN", f"--SlidesExporter.language_code={language}"]
    if offline:
        fetch_assets(out, language=language)
        cmd += [f"--SlidesExporter.reveal_url_prefix={ASSETS}", f"--SlidesExporter.require_js_url={ASSETS}/require.js",
                f"--SlidesExporter.jquery_url={ASSETS}/jquery.min.js"]
    run = subprocess.run([*cmd, *map(str, lessons)], capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise SlidesError(translate("make_slides.nbconvert_failed", language, code=run.returncode,
                                    output=run.stderr.strip()[-2000:]))
    decks = [out / f"{path.stem}.slides.html" for path in lessons]
    missing = [d.name for d in decks if not d.is_file()]
    if missing:
        raise SlidesError(translate("make_slides.no_deck", language, missing=", ".join(missing), out=out))
    if language != "en":
        for path, deck in zip(lessons, decks):
            _retitle(deck, path, language)
    _write_index(out, decks, language)
    return decks


def _lesson_title(path: Path) -> str:
    """The first line of the lesson's first cell without its ``#`` marks (``03 · 气泡公式``), or the file's stem."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source.strip().splitlines()[0] if nb.cells and nb.cells[0].source.strip() else ""
    return first.lstrip("#").strip() or path.stem


def _retitle(deck: Path, lesson: Path, language: str) -> None:
    """Put the lesson's own title into the deck's ``<title>`` (nbconvert writes ``NN_name slides``)."""
    text = deck.read_text(encoding="utf-8")
    old = f"<title>{html.escape(lesson.stem)} slides</title>"
    new = f"<title>{html.escape(translate('make_slides.deck_title', language, title=_lesson_title(lesson)))}</title>"
    if old in text:
        deck.write_text(text.replace(old, new, 1), encoding="utf-8")


def _write_index(out: Path, decks: list[Path], language: str = "en") -> None:
    language = _language(language)
    minutes = dict(WORKSHOP_TRACK)
    rows = []
    for deck in sorted(out.glob("*.slides.html")):
        number = deck.name.split("_", 1)[0]
        time = translate("make_slides.index_minutes", language, minutes=minutes[number]) if number in minutes else ""
        rows.append(f'<li><a href="{html.escape(deck.name)}">{html.escape(deck.name.removesuffix(".slides.html"))}</a>'
                    f"{html.escape(time)}</li>")
        if number == BREAK_AFTER:
            rows.append(f"<li><i>{html.escape(translate('make_slides.index_break', language, minutes=BREAK_MINUTES))}"
                        "</i></li>")
    title = html.escape(translate("make_slides.index_title", language))
    (out / "index.html").write_text(
        f"<!doctype html>\n<html lang=\"{language}\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n"
        f"<body style=\"font-family: sans-serif; font-size: 1.4em; margin: 2em\">\n<h1>{title}</h1>\n"
        f"<p>{translate('make_slides.index_intro', language)}</p>\n<ol>\n" + "\n".join(rows)
        + "\n</ol>\n</body></html>\n",
        encoding="utf-8")


def check_out(out: Path, lessons: list[Path], *, force: bool = False, language: str = "en") -> None:
    """Refuse an ``--out`` that is not a folder, cannot be made, or (a folder other than the language's
    :func:`default_out`, a build output) holds decks or an ``index.html`` that the export would overwrite,
    unless ``force``.

    Raises:
        SlidesError: naming ``--out``, the path and what is allowed (in ``language``).
    """
    language = _language(language)
    if out.exists() and not out.is_dir():
        raise SlidesError(translate("make_slides.out_not_folder", language, out=str(out)))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SlidesError(translate("make_slides.out_cannot_make", language, out=str(out),
                                    why=exc.strerror or exc)) from None
    if force or out.resolve() == default_out(language).resolve():
        return
    existing = [f.name for f in [*(out / f"{p.stem}.slides.html" for p in lessons), out / "index.html"] if f.exists()]
    if existing:
        raise SlidesError(translate("make_slides.out_would_overwrite", language, out=str(out),
                                    files=("、" if language == "zh" else ", ").join(existing[:4]),
                                    more=translate("make_slides.and_more", language) if len(existing) > 4 else ""))


def main(argv: list[str] | None = None) -> int:
    """Export the decks; exit status 0 (done) or 2 (bad lesson, nbconvert or npm failed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("lessons", nargs="*", help="lessons (03 or 03_the_bubble_formula); default: the workshop track")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default build/slides, or build/slides/zh with --lang zh)")
    parser.add_argument("--offline", action="store_true",
                        help=f"copy reveal.js {REVEAL_JS} beside the decks (npm pack, once) so that they need no network")
    parser.add_argument("--force", action="store_true",
                        help="overwrite decks and index.html already in an --out folder other than the default")
    parser.add_argument("--lang", choices=LANGUAGES, default="en",
                        help="the lessons' language: en (notebooks/) or zh (the Chinese lessons, notebooks/zh/, "
                             "into build/slides/zh/); default en")
    args = parser.parse_args(argv)
    lang = args.lang
    out = args.out if args.out is not None else default_out(lang)
    try:
        paths = [lesson_path(lesson, language=lang) for lesson in (args.lessons or [n for n, _ in WORKSHOP_TRACK])]
        check_out(out, paths, force=args.force, language=lang)
        decks = export(paths, out, offline=args.offline, language=lang)
    except SlidesError as err:
        print(translate("make_slides.error", lang, message=err), file=sys.stderr)
        return 2
    for deck in decks:
        print(translate("make_slides.wrote", lang, deck=deck))
    print(translate("make_slides.open", lang, index=out / "index.html")
          + ("" if args.offline else translate("make_slides.open_online", lang)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
