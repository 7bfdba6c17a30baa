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

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "slides"
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

__all__ = ["WORKSHOP_TRACK", "lesson_path", "fetch_assets", "export", "main"]


class SlidesError(RuntimeError):
    """A lesson that does not exist, nbconvert failing, or the offline copy that cannot be fetched."""


def lesson_path(lesson: str, notebooks: Path = ROOT / "notebooks") -> Path:
    """The lesson notebook for ``"03"``, ``"3"`` or ``"03_the_bubble_formula"`` (companions ``03x_...`` are not matched by number).

    Raises:
        SlidesError: no such lesson (the message lists the lessons).
    """
    key = lesson.strip().removesuffix(".ipynb")
    if key.isdigit():
        key = f"{int(key):02d}"
    found = sorted(p for p in notebooks.glob("*.ipynb") if p.stem == key or p.stem.split("_", 1)[0] == key)
    if not found:
        names = ", ".join(sorted(p.stem.split("_", 1)[0] for p in notebooks.glob("[0-9]*.ipynb")))
        raise SlidesError(f"lesson {lesson!r}: no notebook {key}_*.ipynb in {notebooks}; lessons: {names}")
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


def fetch_assets(out: Path, *, npm: str = "npm") -> Path:
    """Put reveal.js ``REVEAL_JS``, require.js and jQuery into ``out/reveal.js/`` (once) and return that folder.

    Uses ``npm pack`` (the npm registry); an existing complete copy is kept.

    Raises:
        SlidesError: npm is missing or fails (the message says what to do).
    """
    target = out / ASSETS
    wanted = (target / "dist" / "reveal.js", target / "plugin" / "notes" / "notes.js", target / "require.js",
              target / "jquery.min.js")
    if all(p.is_file() for p in wanted):
        return target
    if shutil.which(npm) is None:
        raise SlidesError("--offline needs npm (Node.js) to fetch reveal.js once; install Node.js, or export without "
                          "--offline (the decks then load reveal.js from the network)")
    with tempfile.TemporaryDirectory() as tmp:
        packages = [f"reveal.js@{REVEAL_JS}", f"requirejs@{REQUIRE_JS}", f"jquery@{JQUERY}"]
        run = subprocess.run([npm, "pack", *packages, "--silent"], cwd=tmp, capture_output=True, text=True, timeout=300)
        tarballs = {p.name.rsplit("-", 1)[0]: p for p in Path(tmp).glob("*.tgz")}
        if run.returncode != 0 or set(tarballs) != {"reveal.js", "requirejs", "jquery"}:
            raise SlidesError(f"npm pack {' '.join(packages)} failed (exit {run.returncode}): "
                              f"{(run.stderr or run.stdout).strip()[-500:]}")
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


def export(lessons: list[Path], out: Path, *, offline: bool = False) -> list[Path]:
    """Export each lesson to ``out/<lesson>.slides.html`` with ``jupyter nbconvert --to slides``; return the decks.

    Raises:
        SlidesError: nbconvert failed (its message is included), or ``offline`` and the copy cannot be fetched.
    """
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "nbconvert", "--to", "slides", "--embed-images", "--output-dir", str(out),
           "--log-level=WARN"]
    if offline:
        fetch_assets(out)
        cmd += [f"--SlidesExporter.reveal_url_prefix={ASSETS}", f"--SlidesExporter.require_js_url={ASSETS}/require.js",
                f"--SlidesExporter.jquery_url={ASSETS}/jquery.min.js"]
    run = subprocess.run([*cmd, *map(str, lessons)], capture_output=True, text=True, timeout=900)
    if run.returncode != 0:
        raise SlidesError(f"jupyter nbconvert --to slides failed (exit {run.returncode}):\n{run.stderr.strip()[-2000:]}")
    decks = [out / f"{path.stem}.slides.html" for path in lessons]
    missing = [d.name for d in decks if not d.is_file()]
    if missing:
        raise SlidesError(f"nbconvert wrote no {', '.join(missing)} in {out}")
    _write_index(out, decks)
    return decks


def _write_index(out: Path, decks: list[Path]) -> None:
    minutes = dict(WORKSHOP_TRACK)
    rows = []
    for deck in sorted(out.glob("*.slides.html")):
        number = deck.name.split("_", 1)[0]
        time = f" ({minutes[number]} min in the workshop)" if number in minutes else ""
        rows.append(f'<li><a href="{html.escape(deck.name)}">{html.escape(deck.name.removesuffix(".slides.html"))}</a>'
                    f"{html.escape(time)}</li>")
        if number == BREAK_AFTER:
            rows.append(f"<li><i>break ({BREAK_MINUTES} min)</i></li>")
    (out / "index.html").write_text(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Pipeline Bubbles: slides</title></head>\n"
        "<body style=\"font-family: sans-serif; font-size: 1.4em; margin: 2em\">\n<h1>Pipeline Bubbles: slides</h1>\n"
        "<p>Made by <code>python scripts/make_slides.py</code>. Keys in a deck: arrows move, <b>s</b> speaker notes, "
        "<b>f</b> full screen, <b>Esc</b> overview.</p>\n<ol>\n" + "\n".join(rows) + "\n</ol>\n</body></html>\n",
        encoding="utf-8")


def check_out(out: Path, lessons: list[Path], *, force: bool = False) -> None:
    """Refuse an ``--out`` that is not a folder, cannot be made, or (a folder other than build/slides) holds
    decks or an ``index.html`` that the export would overwrite, unless ``force``.

    Raises:
        SlidesError: naming ``--out``, the path and what is allowed.
    """
    if out.exists() and not out.is_dir():
        raise SlidesError(f"argument --out: {str(out)!r} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SlidesError(f"argument --out: cannot make the folder {str(out)!r}: {exc.strerror or exc}") from None
    if force or out.resolve() == OUT.resolve():
        return
    existing = [f.name for f in [*(out / f"{p.stem}.slides.html" for p in lessons), out / "index.html"] if f.exists()]
    if existing:
        raise SlidesError(f"argument --out: {str(out)!r} already holds {', '.join(existing[:4])}"
                          f"{' and more' if len(existing) > 4 else ''}, which the export would overwrite; they are "
                          f"kept. Choose a new or empty folder, or pass --force")


def main(argv: list[str] | None = None) -> int:
    """Export the decks; exit status 0 (done) or 2 (bad lesson, nbconvert or npm failed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("lessons", nargs="*", help="lessons (03 or 03_the_bubble_formula); default: the workshop track")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (default build/slides)")
    parser.add_argument("--offline", action="store_true",
                        help=f"copy reveal.js {REVEAL_JS} beside the decks (npm pack, once) so that they need no network")
    parser.add_argument("--force", action="store_true",
                        help="overwrite decks and index.html already in an --out folder other than build/slides")
    args = parser.parse_args(argv)
    try:
        paths = [lesson_path(lesson) for lesson in (args.lessons or [n for n, _ in WORKSHOP_TRACK])]
        check_out(args.out, paths, force=args.force)
        decks = export(paths, args.out, offline=args.offline)
    except SlidesError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for deck in decks:
        print(f"wrote {deck}")
    print(f"open {args.out / 'index.html'}" + ("" if args.offline else
          "   (the decks load reveal.js from the network; --offline copies it beside them)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
