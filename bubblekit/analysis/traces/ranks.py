"""Step 2, parsing (files and ranks): which files to read, and which rank each span belongs to.

A trace is one file per rank (Kineto's ``distributedInfo`` or ``rank<N>`` in the file name says
which), one file holding several ranks (threads or processes named ``rank N``, as
:meth:`~bubblekit.Timeline.to_chrome_trace` writes), a CSV with a ``rank`` column, or a folder
of such files (unnamed files are taken in name order). Every rank from 0 to the largest one
named must be there: rank numbers are checked against the number of ranks found before
anything is built from them, so ``rank 99999999`` is an error, not a hang.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from .csvfile import scan_csv
from .parse import RANK_NAME_RE, scan_json
from .records import MAX_SHOWN, FileScan, PathLike, Pattern, RawSpan, Thread, TraceError, first_missing, shown

__all__ = ["RankData", "resolve_files", "scan_files", "split_ranks"]

_SUFFIXES = (".json", ".json.gz", ".csv", ".csv.gz", ".sqlite", ".sqlite3")


class RankData(NamedTuple):
    """One rank's candidate actions and the scan of the file they came from."""

    rank: int
    file: str
    spans: list[RawSpan]
    scan: FileScan


def resolve_files(source: PathLike | Sequence[PathLike]) -> list[Path]:
    """The files to read: ``source`` itself, a folder's trace files in name order, or a list."""
    if isinstance(source, (str, Path)):
        p = Path(source)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and f.name.lower().endswith(_SUFFIXES))
            if not files:
                raise TraceError(f"{p}: the folder holds no trace files (*.json, *.json.gz, *.csv, *.csv.gz, *.sqlite, *.sqlite3)")
            return files
        if not p.exists():
            raise TraceError(f"{p}: no such trace file or folder")
        return [p]
    if isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        if not all(isinstance(s, (str, Path)) for s in source):
            raise TypeError(f"source must be a path, a folder or a list of paths, got a list holding {source!r}")
        files = [Path(s) for s in source]
        if not files:
            raise TraceError("no trace files were given (an empty list)")
        for f in files:
            if not f.exists():
                raise TraceError(f"{f}: no such trace file")
            if f.is_dir():
                raise TraceError(f"{f}: is a folder; give the folder itself as source (not in a list), or its files")
        return files
    raise TypeError(f"source must be a path, a folder or a list of paths, got {type(source).__name__}")


def is_csv(path: Path) -> bool:
    """CSV by its name (``.csv`` or ``.csv.gz``); everything else is read as JSON."""
    return path.name.lower().endswith((".csv", ".csv.gz"))


def scan_files(files: list[Path], user: Pattern | None, keep_ops: bool, time_unit: str) -> list[tuple[Path, FileScan]]:
    """Scan every file (JSON streamed, CSV row by row)."""
    from .nsys import is_nsys_sqlite, scan_nsys

    return [(f, scan_csv(f, time_unit) if is_csv(f) else scan_nsys(f, user) if is_nsys_sqlite(f)
             else scan_json(f, user, keep_ops)) for f in files]


def _info_number(scan: FileScan, path: Path, key: str, minimum: int) -> int | None:
    """``distributedInfo[key]`` as an int >= ``minimum``; ``None`` when absent; TraceError when it is something else."""
    info = scan.header.get("distributedInfo")
    if info is None:
        return None
    if not isinstance(info, dict):
        raise TraceError(f"{path}: 'distributedInfo' is {info!r}; Kineto writes an object such as "
                         f"{{\"rank\": 0, \"world_size\": 2}}")
    if info.get(key) is None:
        return None
    value = info[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TraceError(f"{path}: distributedInfo.{key} is {value!r}; it must be a whole number >= {minimum} "
                         f"(a corrupted or hand-edited trace?)")
    return value


def _file_rank(scan: FileScan, path: Path) -> int | None:
    rank = _info_number(scan, path, "rank", 0)
    if rank is not None:
        return rank
    m = RANK_NAME_RE.search(path.name) or re.search(r"(?:^|[._-])r(\d+)(?:[._-]|$)", path.name)
    return int(m.group(1)) if m else None


def _world_size(scan: FileScan, path: Path) -> int | None:
    return _info_number(scan, path, "world_size", 1)


def _thread_ranks(scan: FileScan) -> dict[Thread, int]:
    """Threads named ``rank N`` (or in a process named so): thread -> rank."""
    named = dict(scan.thread_rank)
    for thread in {s.thread for s in scan.spans}:
        if thread not in named and thread[0] in scan.process_rank:
            named[thread] = scan.process_rank[thread[0]]
    return named


def _multi_rank_file(path: Path, scan: FileScan, named: dict[Thread, int]) -> dict[int, list[RawSpan]]:
    """Spans per rank of a file whose threads or processes name their ranks.

    Spans on unnamed threads belong to the file's own rank when it has one; otherwise the
    reader cannot tell whose they are and says so. Two threads named after the same rank
    (or two processes), both with pipeline events, are refused: they are most likely two
    ranks whose names were mistyped or copied, and merging them would give a wrong bubble.
    The threads of one process named ``rank N`` are that rank's threads.
    """
    by_rank: dict[int, list[RawSpan]] = {r: [] for r in set(named.values())}
    own = _file_rank(scan, path)
    by_thread: dict[Thread, list[RawSpan]] = defaultdict(list)
    for s in scan.spans:
        by_thread[s.thread].append(s)
    orphans: dict[Thread, list[RawSpan]] = {}
    sources: dict[int, dict[tuple[str, object], RawSpan]] = defaultdict(dict)
    for thread, spans in by_thread.items():
        r = named.get(thread, own)
        if r is None:
            orphans[thread] = spans
            continue
        by_rank.setdefault(r, []).extend(spans)
        if thread not in named:
            continue  # an unnamed thread of the file's own rank
        if scan.process_rank.get(thread[0]) == r:
            source: tuple[str, object] = ("process", thread[0])  # the threads of a process named 'rank r'
        else:
            source = ("thread", thread)
        sources[r].setdefault(source, spans[0])
    if orphans:
        thread, spans = next(iter(orphans.items()))
        raise TraceError(
            f"{path}: {sum(len(v) for v in orphans.values())} pipeline event(s) on threads that no 'thread_name' or "
            f"'process_name' metadata names 'rank N', e.g. thread (pid, tid) = {thread} ({spans[0].where}); other "
            f"threads of the file are named after their ranks (was a metadata event lost or changed?)"
        )
    for r, found in sorted(sources.items()):
        if len(found) > 1:
            listed = [f"{kind} {what} ({span.where})" for (kind, what), span in found.items()]
            raise TraceError(
                f"{path}: {len(found)} threads or processes are named 'rank {r}' and all hold pipeline events: "
                f"{shown(listed)}; a rank's actions come from one thread (pid, tid) or one process. Two ranks "
                f"with the same name would be merged into one and give a wrong bubble: name each rank's thread "
                f"'rank N' with its own N, or give one file per rank"
            )
    return by_rank


def _check_one_thread(path: Path, scan: FileScan) -> None:
    """A file whose rank is only a guess (its place in a folder) must hold one rank: one thread of actions.

    Actions on several threads with no ``rank N`` name anywhere are most likely several ranks
    whose names were lost; taking them as one rank would give a wrong bubble.
    """
    threads: dict[Thread, RawSpan] = {}
    for s in scan.spans:
        threads.setdefault(s.thread, s)
    if len(threads) > 1:
        listed = [f"{t} ({s.where})" for t, s in threads.items()]
        raise TraceError(
            f"{path}: pipeline events on {len(threads)} threads (pid, tid) = {shown(listed)}, but no thread or "
            f"process is named 'rank N', the trace has no 'distributedInfo' and the file name no 'rank<N>': "
            f"cannot tell which rank each thread is. Name the threads 'rank N' (thread_name metadata), or give "
            f"one file per rank"
        )


def split_ranks(scans: list[tuple[Path, FileScan]]) -> list[RankData]:
    """Assign every span to a rank; check for duplicate, missing and absurdly numbered ranks."""
    out: dict[int, RankData] = {}
    world: dict[int, str] = {}
    positional: list[tuple[Path, FileScan]] = []

    def add(r: int, path: Path, spans: list[RawSpan], scan: FileScan) -> None:
        if r in out:
            raise TraceError(f"rank {r} appears twice: in {out[r].file} and in {path}")
        out[r] = RankData(r, str(path), spans, scan)

    for path, scan in scans:
        ws = _world_size(scan, path)
        if ws is not None:
            world[ws] = str(path)
        named = _thread_ranks(scan)
        if named:
            for r, spans in sorted(_multi_rank_file(path, scan, named).items()):
                add(r, path, spans, scan)
            continue
        own = _file_rank(scan, path)
        if own is None:
            positional.append((path, scan))
        else:
            add(own, path, scan.spans, scan)
    if positional:
        if out:
            names = ", ".join(str(p) for p, _ in positional)
            raise TraceError(
                f"cannot tell the rank of {names}: no 'distributedInfo' in the trace and no 'rank<N>' in "
                f"the file name, while other files name theirs; rename them rank<N>.json"
            )
        for i, (path, scan) in enumerate(positional):
            _check_one_thread(path, scan)
            out[i] = RankData(i, str(path), scan.spans, scan)
    if not out:
        raise TraceError("no ranks found in the trace files")
    _check_rank_numbers(out, world)
    return [out[r] for r in range(len(out))]


def _check_rank_numbers(out: dict[int, RankData], world: dict[int, str]) -> None:
    """Ranks must be 0..p-1, all present (p from the largest rank or a ``world_size``).

    Only the first few missing ranks are listed, so an absurd number costs nothing.
    """
    ranks = sorted(out)
    small = [ws for ws in world if ws <= ranks[-1]]
    if small:
        biggest = out[ranks[-1]]
        raise TraceError(
            f"{world[min(small)]}: distributedInfo.world_size is {min(small)}, but the trace has rank {ranks[-1]} "
            f"({biggest.file}); ranks are numbered 0..world_size-1: files from different runs?"
        )
    expected = max([ranks[-1] + 1, *world])
    if expected == len(ranks):
        return
    missing = first_missing(out, expected)
    n_missing = expected - len(ranks)
    src = f" (world_size {max(world)} in {world[max(world)]})" if world and max(world) >= ranks[-1] + 1 else ""
    biggest = out[ranks[-1]]
    first = f"; rank {ranks[-1]} first appears in {biggest.file} {biggest.spans[0].where}" if biggest.spans else ""
    shown_missing = ", ".join(map(str, missing)) + (", ..." if n_missing > len(missing) else "")
    raise TraceError(
        f"missing ranks [{shown_missing}] ({n_missing} in all): found traces of ranks {shown(ranks)}{src}{first}; "
        f"ranks are numbered 0..p-1 and every rank's trace is needed to measure the bubble "
        f"({', '.join(sorted({out[r].file for r in ranks})[:MAX_SHOWN])})"
    )
