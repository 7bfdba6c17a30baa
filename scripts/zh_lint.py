#!/usr/bin/env python3
"""Read the Chinese edition as a learner reads it, and lint it (a contributor's tool, issue 24).

    python scripts/zh_lint.py english            # English words per Chinese file (and the total)
    python scripts/zh_lint.py english --words    # ... and which words, file by file
    python scripts/zh_lint.py terms              # non-preferred term variants, where they are
    python scripts/zh_lint.py quotes             # passages presented as the article's words

The Chinese edition (:func:`chinese_texts`) is: the notebooks in ``notebooks/zh/``,
``solutions/zh/`` and ``apps/zh/`` (markdown cells; the comments and string literals of code
cells; the text outputs a learner sees: streams, ``text/plain`` and ``text/html`` results,
error lines), ``README.zh-CN.md``, ``docs/instructor_guide.zh-CN.md``, and the Chinese side of
bubblekit's message catalogue (every module imported, as ``tests/test_i18n.py`` does), shown
as the file ``bubblekit:zh``. ``exercises/zh/`` is generated from ``solutions/zh/`` and is not read.

Three checks read it, each with a test:

* **English words** (:func:`english_words`, ``tests/test_zh_english.py``): a word is a run of
  two or more Latin letters. Not counted: code (backtick spans, fenced blocks, identifiers with
  ``_``/digits/dots, string literals that are keys rather than text), URLs and link targets,
  LaTeX except the words of ``\\text{...}``, HTML tags, a quoted title with no Chinese in it
  (“...” or 《...》: a paper's title is cited as it is), and the words of :data:`ALLOWED`
  (schedule names, proper nouns, units, the words the glossary keeps in English). Each file's
  count may not go above its ceiling in ``tests/data/zh_english_ceilings.json``.
* **One term per idea** (``tests/test_zh_terms.py``): the variants listed in
  ``bubblekit/data/zh_terms.json`` do not appear, outside the allowed contexts listed there.
* **The article quoted verbatim** (:func:`article_quotes`, ``tests/test_zh_article_quotes.py``):
  every passage in quotation marks that the text presents as the source article's words is a
  substring of an excerpt stored in ``bubblekit/data/article_quotes.json``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import json
import pkgutil
import re
import sys
import tokenize
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_FOLDERS = ("notebooks/zh", "solutions/zh", "apps/zh")
MARKDOWN_FILES = ("README.zh-CN.md", "docs/instructor_guide.zh-CN.md")
CATALOGUE = "bubblekit:zh"
TERMS_FILE = ROOT / "bubblekit" / "data" / "zh_terms.json"
QUOTES_FILE = ROOT / "bubblekit" / "data" / "article_quotes.json"
CEILINGS_FILE = ROOT / "tests" / "data" / "zh_english_ceilings.json"

#: bubblekit modules not imported to collect the catalogue (need torch, or run on import).
_NOT_IMPORTED = ("bubblekit.lab._worker", "bubblekit.lab._launch", "bubblekit.lab._model")

#: scripts/ files whose messages join the catalogue when they are imported (issue 24's classroom kit; issue 27's no-install edition).
_CATALOGUE_SCRIPTS = ("make_slides", "make_nbgrader", "build_lite")

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Text:
    """One piece of the Chinese edition: ``file`` (repository path, or ``bubblekit:zh``),
    ``where`` (cell id, message key, or ``line N``), ``kind`` (``markdown``, ``comment``,
    ``string``, ``output``, ``message``) and the ``text`` itself."""

    file: str
    where: str
    kind: str
    text: str


# ----------------------------------------------------------------------------- reading


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def code_pieces(source: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, line) of each comment (``#`` stripped) and string literal (quotes kept) of ``source``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return
    fstring: list[str] = []
    for tok in tokens:
        name = tokenize.tok_name.get(tok.type, "")
        if tok.type == tokenize.COMMENT:
            yield "comment", tok.string.lstrip("#").strip(), tok.start[0]
        elif tok.type == tokenize.STRING:
            yield "string", tok.string, tok.start[0]
        elif name == "FSTRING_START":
            fstring = [tok.string]
        elif name == "FSTRING_MIDDLE":
            fstring.append(tok.string)
        elif name == "FSTRING_END":
            fstring.append(tok.string)
            yield "string", "".join(fstring), tok.start[0]
            fstring = []


_NOT_SHOWN = re.compile(r"<(style|script)\b.*?</\1>|data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", re.S | re.I)


def _outputs(cell: dict) -> Iterator[str]:
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            yield _source({"source": out.get("text", "")})
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if "text/html" in data:
                yield _NOT_SHOWN.sub(" ", _source({"source": data["text/html"]}))
            elif "text/markdown" in data:
                yield _source({"source": data["text/markdown"]})
            elif "text/plain" in data:
                yield _source({"source": data["text/plain"]})
        elif kind == "error":
            yield f"{out.get('ename', '')}: {out.get('evalue', '')}"


def notebook_texts(path: Path, rel: str) -> Iterator[Text]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb.get("cells", [])):
        cid = str(cell.get("id", i))
        src = _source(cell)
        if cell.get("cell_type") == "markdown":
            yield Text(rel, cid, "markdown", src)
        elif cell.get("cell_type") == "code":
            for kind, value, line in code_pieces(src):
                yield Text(rel, f"{cid}:{line}", kind, value)
            for value in _outputs(cell):
                yield Text(rel, cid, "output", value)


def catalogue_texts() -> Iterator[Text]:
    """The Chinese side of every catalogue message (all bubblekit modules imported)."""
    import bubblekit
    from bubblekit import i18n

    for module in pkgutil.walk_packages(bubblekit.__path__, "bubblekit."):
        if module.name.endswith("__main__") or module.name in _NOT_IMPORTED:
            continue
        importlib.import_module(module.name)
    # the course's scripts that register messages of their own (the Chinese classroom kit): load them too, so
    # that the count is the same alone and inside a test session that has imported them already
    for script in _CATALOGUE_SCRIPTS:
        name = f"_bubblekit_catalogue_{script}"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{script}.py")
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
    for key, texts in sorted(i18n.all_messages().items()):
        if "zh" in texts:
            yield Text(CATALOGUE, key, "message", texts["zh"])


def bubblekit_chinese_literals(root: Path = ROOT) -> Iterator[Text]:
    """Every string literal with Chinese in it in bubblekit's source, outside the catalogue too
    (the interview bank's titles, the words a check accepts), as ``kind="string"`` texts of the
    module's path: the term check reads them; the English count does not (it counts the catalogue)."""
    for path in sorted((root / "bubblekit").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for kind, value, line in code_pieces(path.read_text(encoding="utf-8")):
            if kind == "string" and _CJK.search(value) and not value.lstrip("rRbBuUfF").startswith(('"""', "'''")):
                yield Text(rel, f"line {line}", "string", value)  # docstrings (English) left out


def chinese_files(root: Path = ROOT) -> list[str]:
    """The Chinese edition's files (repository paths), in a stable order."""
    files = [p.relative_to(root).as_posix() for folder in NOTEBOOK_FOLDERS
             for p in sorted((root / folder).glob("*.ipynb"))]
    return files + [f for f in MARKDOWN_FILES if (root / f).exists()]


def chinese_texts(root: Path = ROOT, catalogue: bool = True) -> Iterator[Text]:
    """Every piece of the Chinese edition (see the module docstring)."""
    for rel in chinese_files(root):
        path = root / rel
        if rel.endswith(".ipynb"):
            yield from notebook_texts(path, rel)
        else:
            yield Text(rel, "file", "markdown", path.read_text(encoding="utf-8"))
    if catalogue:
        yield from catalogue_texts()


# ----------------------------------------------------------------------------- English words

#: Words left in English on purpose (compared case-sensitively, then lower-cased for the
#: all-lower entries): schedule names and parts of them, proper nouns (people, companies,
#: products, papers' short names), tools and commands, units, Python names, the words the course
#: keeps in English (CONTRIBUTING.md, "Terminology and writing rules": rank, chunk, trace/profile,
#: TP/PP/DP; comm, the latency per hop, is a parameter the lessons use like p and m) and those Chinese ML writing keeps in English (batch, token, kernel, stream, attention,
#: embedding, transformer; max / min / mean / sum in formulas; the collectives below).
ALLOWED = frozenset("""
GPipe DualPipe DualPipeV ZB Half Min Flush PipeDream BFS looped Looped VPP OVERLAP
PyTorch Megatron LM NVIDIA DeepSeek DeepSpeed Llama BLOOM GPT Nsight Systems HTA Holistic Trace Analysis
Kineto Chrome Perfetto Jupyter JupyterLab JupyterLite Pyodide Voil Voilà nbgrader nbval nbconvert sympy SymPy NumPy numpy
matplotlib ipywidgets Python pip bash conda GitHub Zhihu arXiv Hugging Face Meta Google Microsoft
Narayanan Huang Qi Shoeybi Rajbhandari Smith Harlap Dubey Liu al et Sea AI Lab sail sg MoE
GPU GPUs CPU CPUs H100 H200 A100 NVLink InfiniBand IB Ethernet CUDA NCCL RDMA PCIe HBM TFLOPS FLOPs FLOP
TP PP DP EP SP CP ZeRO MLP FFN LayerNorm Attention QKV GeLU bf16 fp16 fp32
ms us GB GiB MB MiB TB KB GPU·h kWh min s
rank ranks chunk chunks trace traces profile profiles profiler Profiler kernel kernels notebook notebooks
torch distributed pipelining Schedule1F1B ScheduleGPipe ScheduleInterleaved1F1B ScheduleLoopedBFS
ScheduleInterleavedZeroBubble ScheduleZBVZeroBubble ScheduleDualPipeV PipelineScheduleMulti
bubblekit Pipeline Bubbles OK vs README SOLUTION BEGIN END True False None NaN Inf
git pytest ruff mypy Linux macOS Windows Debian Ubuntu Fedora Ctrl Alt Shift Enter JupyterHub MathJax TeX
npm SQLite Chromium playwright fontconfig IPython PyPI Adam NeurIPS gloo slurm Stanford BigScience
Korthikanti Rasley Ruwase He Lamy Poirier DAPPLE Fan Transformer Wi Fi formgrader Formgrader Zero Bubble
comm batch token tokens stream streams attention embedding transformer max min mean sum
int float str dict list tuple lambda try except sorted Fraction ValueError TypeError DeadlockError
dX dY dW pT mv pv Fm dp sp fb zbv gpipe dualpipe dualpipev bfs bk
""".split())
_ALLOWED_LOWER = frozenset(w.lower() for w in ALLOWED if w.islower())
#: Hyphenated names kept whole: the collectives.
_ALLOWED_COMPOUNDS = re.compile(r"(?i)\ball-(?:reduce|to-all|gather)\b|\breduce-scatter\b")

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_BACKTICK = re.compile(r"``.+?``|`[^`\n]+`")
_URL = re.compile(r"https?://\S+|www\.\S+")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_HTML_ENTITY = re.compile(r"&[a-z]+;|&#\d+;")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_TEXT_IN_MATH = re.compile(r"\\(?:text|mathrm|textrm|operatorname)\{([^{}]*)\}")
_QUOTED_TITLE = re.compile(r"“([^”]*)”|《([^》]*)》|\"([^\"\n]*)\"")
_FIELD = re.compile(r"\{[^{}]*\}")
_TOKEN = re.compile(r"[A-Za-z0-9_.\-/&'’·]+")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _math_words(match: re.Match[str]) -> str:
    return " " + " ".join(_TEXT_IN_MATH.findall(match.group(0))) + " "


def _untitled(match: re.Match[str]) -> str:
    inner = next(g for g in match.groups() if g is not None)
    return " " if not _CJK.search(inner) else match.group(0)


def _without_english_column(text: str) -> str:
    """A glossary table's first column headed 英文 (the English terms it translates) left out."""
    lines, dropping = [], False
    for line in text.split("\n"):
        cells = line.strip().split("|")
        if line.strip().startswith("|") and len(cells) > 2:
            if cells[1].strip() == "英文":
                dropping = True
            if dropping:
                line = "|" + "|".join(cells[2:])
        else:
            dropping = False
        lines.append(line)
    return "\n".join(lines)


def _words_in_prose(text: str) -> list[str]:
    text = _without_english_column(text)
    text = _FENCE.sub(" ", text)
    text = _BACKTICK.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _LINK_TARGET.sub("] ", text)
    text = _HTML_TAG.sub(" ", text)
    text = _HTML_ENTITY.sub(" ", text)
    text = _MATH.sub(_math_words, text)
    text = _QUOTED_TITLE.sub(_untitled, text)
    text = _ALLOWED_COMPOUNDS.sub(" ", text)
    words = []
    for token in _TOKEN.findall(text):
        token = token.strip(".-/&'’·")
        if not token or re.search(r"[\d_]", token) or re.search(r"\w\.\w", token):
            continue  # an identifier, a version, a module path, a number with a unit
        for part in re.split(r"[-/&'’·]", token):
            if not _WORD.fullmatch(part) or part in ALLOWED or part.lower() in _ALLOWED_LOWER:
                continue
            if part.isupper() and len(part) <= 4:
                continue  # an acronym (TP, PP, OOM, API): not a sentence in English
            words.append(part)
    return words


def _literal_body(literal: str) -> str | None:
    """The text of a string literal as the learner sees it, or None for a key, a name or a number."""
    m = re.match(r"(?is)^([rbuf]*)('''|\"\"\"|'|\")(.*)\2$", literal)
    if not m:
        return literal
    prefix, body = m.group(1).lower(), m.group(3)
    if "b" in prefix:
        return None
    if "f" in prefix:
        body = _FIELD.sub(" ", body)
    if _CJK.search(body):
        return body
    if not re.search(r"\s", m.group(3).strip()):
        return None  # "1f1b", "bubble_ratio", "makespan", "F=1": a key or a name, not a sentence
    return body


def english_words(text: Text) -> list[str]:
    """The English words a learner reads in ``text`` (see the module docstring for what is left out)."""
    if text.kind == "comment":
        if re.match(r"^(noqa|type:|pragma|fmt:|isort:|ruff:|mypy:|BEGIN SOLUTION|END SOLUTION)", text.text):
            return []
        return _words_in_prose(text.text)
    if text.kind == "string":
        body = _literal_body(text.text)
        return [] if body is None else _words_in_prose(body)
    if text.kind == "output":
        # an output shows code's own reprs too (Span(...), Action 0F3): keep only its prose words
        return _words_in_prose(re.sub(r"\b\w+\((?:[^()]|\([^()]*\))*\)", " ", text.text))
    if text.kind == "message":
        return _words_in_prose(_FIELD.sub(" ", text.text))
    return _words_in_prose(text.text)


def english_counts(texts: list[Text] | None = None) -> dict[str, Counter[str]]:
    """For each Chinese file, the English words (with how often each appears)."""
    texts = list(chinese_texts()) if texts is None else texts
    counts: dict[str, Counter[str]] = {}
    for t in texts:
        counts.setdefault(t.file, Counter()).update(english_words(t))
    return counts


# ----------------------------------------------------------------------------- terms


def load_terms(path: Path = TERMS_FILE) -> list[dict]:
    """The term table (``bubblekit/data/zh_terms.json``'s ``terms``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data["terms"])


_CODE_SPANS = [_FENCE, _BACKTICK, _URL, _LINK_TARGET, _HTML_TAG]


def _english_column_blanked(text: str) -> str:
    """:func:`_without_english_column`, keeping positions: the English cells become spaces."""
    lines, dropping = [], False
    for line in text.split("\n"):
        cells = line.strip().split("|")
        if line.strip().startswith("|") and len(cells) > 2:
            if cells[1].strip() == "英文":
                dropping = True
            if dropping:
                first = line.index("|", line.index("|") + 1)
                line = line[:line.index("|") + 1] + " " * (first - line.index("|") - 1) + line[first:]
        else:
            dropping = False
        lines.append(line)
    return "\n".join(lines)


def _masked(text: Text) -> str | None:
    """``text`` as prose, code spans, URLs, link targets, tags and format fields blanked out
    (same length, so positions stay); ``None`` for a string literal that is a key, not text."""
    body = text.text
    if text.kind == "string" and _literal_body(body) is None:
        return None
    body = _english_column_blanked(body)
    for pattern in _CODE_SPANS + ([_FIELD] if text.kind in ("message", "string") else []):
        body = pattern.sub(lambda m: " " * len(m.group(0)), body)
    return body


def term_violations(texts: list[Text], terms: list[dict]) -> list[str]:
    """``file where: 'variant' (use 'preferred') …context…`` for each non-preferred variant found.

    Read: markdown, code comments and string literals (a key such as ``"makespan"`` left out),
    catalogue messages; code spans, URLs and ``{fields}`` are blanked first. A variant is a
    regular expression; an occurrence is allowed when the text around it (30 characters either
    side) matches one of its entry's ``allow`` expressions, or when it lies inside a passage
    quoted as the article's words (:func:`article_quotes_in`: the article's words are kept).
    """
    found = []
    for t in texts:
        if t.kind == "output":
            continue  # outputs are made by code whose strings and messages are read themselves
        body = _masked(t)
        if body is None:
            continue
        quoted = [(q.start, q.end) for q in article_quotes_in(t)]
        for term in terms:
            for variant in term.get("avoid", []):
                for m in re.finditer(variant, body):
                    if any(s <= m.start() < e for s, e in quoted):
                        continue
                    around = t.text[max(0, m.start() - 30): m.end() + 30]
                    if any(re.search(a, around) for a in term.get("allow", [])):
                        continue
                    context = around.replace(chr(10), " ").strip()
                    found.append(f"{t.file} {t.where}: {m.group(0)!r} (use {term['zh']!r}) …{context}…")
    return found


# ----------------------------------------------------------------------------- article quotes

#: Words that name the source article as the speaker.
ARTICLE = r"(?:原文|原文章|这篇文章|那篇文章|源文章|文章|作者)"
_OPEN_CLOSE = {"“": "”", "「": "」"}


@dataclass(frozen=True)
class Quote:
    file: str
    where: str
    start: int
    end: int
    text: str


#: A new paragraph: a blank line (also inside a block quote).
_PARAGRAPH = re.compile(r"\n(?:\s*>)*\s*\n")
#: A quoted passage followed by one of these is a label on the screen (“最低”一列), not a quote.
_LABEL_AFTER = re.compile(r"^[”」](?:这一|那一|一|这)?(?:列|行|栏|按钮|滑块|选项|标签)")
#: A quoted passage sharing a run with this many Chinese characters with a stored excerpt is a
#: (mis)quote of the article even where its paragraph does not name the article.
NEAR_QUOTE_RUN = 6


def _shares_a_run(a: str, b: str, cjk: int) -> bool:
    """True when ``a`` and ``b`` share a substring with at least ``cjk`` Chinese characters."""
    for i in range(len(a)):
        j = i + 1
        while j <= len(a) and a[i:j] in b:
            j += 1
        if len(_CJK.findall(a[i:j - 1])) >= cjk:
            return True
    return False


def article_quotes_in(t: Text, excerpts: list[str] | None = None) -> list[Quote]:
    """The passages of ``t`` that it presents as the article's words.

    A passage is the text between Chinese quotation marks (“…” or 「…」) with a Chinese
    character in it, not followed by 一列/一行/按钮/滑块… (then it names a label the learner sees
    on the screen). It is presented as the article's words when

    (a) its paragraph (markdown split at blank lines; a comment, a string literal or a
        catalogue message is one paragraph) names the article
        (:data:`ARTICLE`: 原文, 文章, 作者 …) before the passage's closing mark, or
    (b) it shares a run holding :data:`NEAR_QUOTE_RUN` or more Chinese characters (whitespace,
        ``*`` and quotation marks aside) with one of ``excerpts`` (the stored article excerpts, normalised): a sentence
        that copies the article in part presents itself as the article's words, named or not.
    """
    out = []
    text = t.text
    bounds = [0] + [m.end() for m in _PARAGRAPH.finditer(text)] + [len(text) + 1]
    for m in re.finditer(r"[“「]", text):
        close = _OPEN_CLOSE[m.group(0)]
        end = text.find(close, m.end())
        if end < 0:
            continue
        inner = text[m.end():end]
        if not _CJK.search(inner) or _LABEL_AFTER.match(text[end:]):
            continue
        par_start = max(b for b in bounds if b <= m.start())
        named = re.search(ARTICLE, text[par_start:end])
        near = excerpts is not None and any(
            _shares_a_run(normalise(inner), e, NEAR_QUOTE_RUN) for e in excerpts)
        if named or near:
            out.append(Quote(t.file, t.where, m.end(), end, inner))
    return out


def article_quotes(texts: list[Text], excerpts: list[str] | None = None) -> list[Quote]:
    """:func:`article_quotes_in` over ``texts`` (outputs left out: the code that prints them is read)."""
    return [q for t in texts if t.kind != "output" for q in article_quotes_in(t, excerpts)]


def normalise(text: str) -> str:
    """``text`` without whitespace, markdown emphasis (``*``) and quotation marks, for substring
    comparison (a quote inside a quote is written ‘…’ where the article writes “…”)."""
    return re.sub(r"[\s*“”‘’「」『』]", "", text)


def load_quotes(path: Path = QUOTES_FILE) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def unstored_quotes(quotes: list[Quote], stored: dict) -> list[Quote]:
    """The quotes that are not a substring (whitespace aside) of any stored excerpt."""
    excerpts = [normalise(e["text"]) for e in stored["excerpts"]]
    return [q for q in quotes if not any(normalise(q.text) in e for e in excerpts)]


# ----------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    eng = sub.add_parser("english", help="English words per Chinese file")
    eng.add_argument("--words", action="store_true", help="list the words too")
    eng.add_argument("--json", action="store_true", help="print {file: count} as JSON")
    sub.add_parser("terms", help="non-preferred term variants")
    sub.add_parser("quotes", help="passages presented as the article's words, and whether each is stored")
    args = parser.parse_args(argv)
    texts = list(chinese_texts())
    if args.command == "english":
        counts = english_counts(texts)
        if args.json:
            print(json.dumps({f: sum(c.values()) for f, c in counts.items()}, ensure_ascii=False, indent=1))
            return 0
        for f, c in counts.items():
            print(f"{sum(c.values()):6d}  {f}")
            if args.words:
                print("        " + ", ".join(f"{w}×{n}" for w, n in c.most_common()))
        print(f"{sum(sum(c.values()) for c in counts.values()):6d}  total")
        return 0
    if args.command == "terms":
        found = term_violations(texts, load_terms())
        print("\n".join(found) or "no non-preferred term found")
        return 1 if found else 0
    quotes = article_quotes(texts)
    missing = set(unstored_quotes(quotes, load_quotes()))
    for q in quotes:
        print(f"{'MISSING' if q in missing else 'ok     '} {q.file} {q.where}: “{q.text}”")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
