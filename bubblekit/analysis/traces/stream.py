"""Step 1, streaming JSON: read a Chrome / Kineto trace one event at a time.

A ``torch.profiler`` trace of a long run is hundreds of MB; ``json.load`` would hold all of it
(several times its size) in memory. :func:`iter_trace_events` keeps only a window of text
(``chunk_chars``, 1 Mi characters by default) and the event being decoded
(``benchmarks/bench_trace_memory.py`` measures it). Plain and gzipped files, with or without a
UTF-8 byte-order mark (as Windows tools write), are accepted. Times are not interpreted here.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from bubblekit._validate import check_int

from .records import PathLike, TraceError

__all__ = ["iter_trace_events", "TraceEntries", "open_text", "READ_ERRORS"]

_WS = re.compile(r"[ \t\r\n]*")
#: What reading a damaged file raises: a truncated or corrupted ``.gz`` (EOFError, zlib.error), a disk error.
READ_ERRORS = (OSError, EOFError, UnicodeDecodeError, zlib.error)


class JsonStream:
    """Incremental reader of one JSON document: a window of text, values decoded one by one.

    Only the current window (``chunk`` characters, grown only while one value is longer)
    and the decoded value are in memory. Every problem raises :class:`TraceError` naming the
    file and the character where it is.
    """

    def __init__(self, fh: IO[str], path: str, chunk: int = 1 << 20) -> None:
        self.fh = fh
        self.path = path
        self.chunk = chunk
        self.buf = ""
        self.pos = 0
        self.consumed = 0  # characters dropped from the front of buf
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self.eof:
            return False
        try:
            data = self.fh.read(self.chunk)
        except READ_ERRORS as exc:
            done = self.consumed + len(self.buf)
            after = f" after {done} characters" if done else ""
            raise TraceError(f"{self.path}: cannot read the trace{after} ({exc}): a damaged or truncated file?") from None
        if not data:
            self.eof = True
            return False
        if self.pos:
            self.consumed += self.pos
            self.buf = self.buf[self.pos:] + data
            self.pos = 0
        else:
            self.buf += data
        return True

    def where(self) -> str:
        """The current position, for messages."""
        return f"character {self.consumed + self.pos}"

    def peek(self) -> str | None:
        """Next non-blank character (not consumed), or ``None`` at the end of the file."""
        while True:
            buf = self.buf
            pos = self.pos
            if pos < len(buf) and buf[pos] not in " \t\r\n":
                return buf[pos]
            pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
            self.pos = pos
            if pos < len(buf):
                return buf[pos]
            if not self._fill():
                return None

    def take(self, ch: str) -> None:
        """Consume ``ch`` (the next non-blank character) or raise."""
        got = self.peek()
        if got != ch:
            if got is None:
                self.fail(f"expected {ch!r}", truncated=True)
            self.fail(f"expected {ch!r} but found {got!r}")
        self.pos += 1

    def value(self) -> Any:
        """Decode the next JSON value (reading more of the file while the value is incomplete).

        Nesting is bounded by Python's JSON decoder (about ``sys.getrecursionlimit()`` levels);
        deeper input, such as a file of 200,000 ``[``, raises :class:`TraceError`.
        """
        if self.peek() is None:
            self.fail("a value was expected", truncated=True)
        while True:
            try:
                obj, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                incomplete = exc.pos >= len(self.buf) - 1 or exc.msg.startswith("Unterminated")
                if incomplete and self._fill():
                    continue
                if incomplete:
                    self.fail("the file ends in the middle of an event", truncated=True)
                self.fail(f"invalid JSON ({exc.msg})", at=self.consumed + exc.pos)
            except RecursionError:
                self.fail(f"JSON nested deeper than about {sys.getrecursionlimit()} levels of '[' or '{{' (a trace "
                          f"event is a flat object; is this a trace?)")
            if end >= len(self.buf) and self._fill():
                continue  # a number may continue in the next chunk
            self.pos = end
            return obj

    def fail(self, problem: str, at: int | None = None, truncated: bool = False) -> None:
        """Raise :class:`TraceError` naming the file, the problem and where."""
        where = f"character {at}" if at is not None else self.where()
        if truncated:
            raise TraceError(f"{self.path}: truncated trace: {problem} (at {where}, the end of the file)")
        raise TraceError(f"{self.path}: {problem} at {where}")


class _Rejoined(io.RawIOBase):
    """A binary stream whose first bytes were already read: ``head``, then the rest of ``fh``.

    Lets :func:`open_text` sniff the gzip magic of a file it can open only once (a named pipe,
    ``<(zcat trace.json.gz)``, a socket): the stream is read once, front to back.
    """

    def __init__(self, head: bytes, fh: IO[bytes]) -> None:
        self.head = head
        self.fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        return self.fh.readinto(buffer)  # type: ignore[attr-defined,no-any-return]

    def close(self) -> None:
        if not self.closed:
            self.fh.close()
        super().close()


class _GzipReader(gzip.GzipFile):
    """A gzip reader that closes the stream it reads (``GzipFile`` leaves a given ``fileobj`` open)."""

    def close(self) -> None:
        inner = self.fileobj
        try:
            super().close()
        finally:
            if inner is not None:
                inner.close()  # type: ignore[union-attr]


def open_text(path: Path) -> IO[str]:
    """Open a plain or gzipped text file as UTF-8, dropping a leading byte-order mark.

    The file is opened once and read once, front to back (its first two bytes say whether it
    is gzipped), so a named pipe or ``/dev/stdin`` works like a file.
    """
    fh = open(path, "rb")  # noqa: SIM115 - closed by the returned wrapper
    try:
        head = b""
        while len(head) < 2:
            more = fh.read(2 - len(head))
            if not more:
                break
            head += more
        binary: IO[bytes] = io.BufferedReader(_Rejoined(head, fh))
    except BaseException:
        fh.close()
        raise
    if head == b"\x1f\x8b":
        binary = _GzipReader(fileobj=binary, mode="rb")  # type: ignore[assignment]
    return io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace")


class TraceEntries:
    """The entries of a trace's event array, streamed: iterate for ``(index, entry)`` pairs.

    ``index`` is the entry's position (from 0) in ``traceEvents`` (or in the top-level array of
    the JSON Array Format); :meth:`where` names it for messages (``traceEvents[17]``). Entries
    that are not JSON objects are yielded too, so that a reader can report them. See
    :func:`iter_trace_events` for the formats.
    """

    def __init__(self, path: PathLike, header: dict[str, Any] | None = None, *, chunk_chars: int = 1 << 20) -> None:
        self.path = Path(path)
        self.header = header
        self.chunk_chars = check_int("chunk_chars", chunk_chars, minimum=1)
        self.array_name = "traceEvents"

    def where(self, index: int) -> str:
        """``traceEvents[17]`` (object format) or ``event 17`` (array format)."""
        return f"{self.array_name}[{index}]" if self.array_name else f"event {index}"

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        name = str(self.path)
        try:
            fh = open_text(self.path)
        except OSError as exc:
            raise TraceError(f"{name}: cannot open the trace ({exc.strerror or exc})") from None
        with fh:
            js = JsonStream(fh, name, chunk=self.chunk_chars)
            first = js.peek()
            if first is None:
                raise TraceError(f"{name}: the trace file is empty")
            if first == "[":
                self.array_name = ""
                js.take("[")
                yield from _array_entries(js, allow_open=True)
                return
            if first != "{":
                raise TraceError(
                    f"{name}: not a JSON trace: it starts with {js.buf[js.pos:js.pos + 20]!r}; expected a Chrome / "
                    f"Kineto trace (a JSON object with 'traceEvents', or a JSON array of events)"
                )
            yield from _object_entries(js, self.header)


def _object_entries(js: JsonStream, header: dict[str, Any] | None) -> Iterator[tuple[int, Any]]:
    """The JSON Object Format: top-level keys go to ``header``, ``traceEvents`` is streamed."""
    js.take("{")
    seen_events = False
    while True:
        ch = js.peek()
        if ch == "}":
            js.pos += 1
            break
        if ch is None:
            js.fail("the top-level object is not closed", truncated=True)
        if ch != '"':
            js.fail(f"expected a key but found {ch!r}")
        key = js.value()
        js.take(":")
        if key == "traceEvents":
            if js.peek() != "[":
                js.fail("'traceEvents' must be an array")
            js.take("[")
            seen_events = True
            yield from _array_entries(js, allow_open=False)
        else:
            val = js.value()
            if header is not None:
                header[key] = val
        ch = js.peek()
        if ch == ",":
            js.pos += 1
        elif ch != "}":
            js.fail("expected ',' or '}' after a top-level value")
    if not seen_events:
        raise TraceError(f"{js.path}: the JSON object has no 'traceEvents' array: not a Chrome / Kineto trace")


def _array_entries(js: JsonStream, *, allow_open: bool) -> Iterator[tuple[int, Any]]:
    """The entries of an array whose ``[`` was consumed (Chrome allows the ``]`` to be missing)."""
    index = 0
    while True:
        ch = js.peek()
        if ch == "]":
            js.pos += 1
            return
        if ch is None:
            if allow_open:
                return
            js.fail("the 'traceEvents' array is not closed", truncated=True)
        yield index, js.value()
        index += 1
        ch = js.peek()
        if ch == ",":
            js.pos += 1
        elif ch == "]":
            continue
        elif ch is None and allow_open:
            return
        else:
            js.fail("expected ',' or ']' between events")


def iter_trace_events(
    path: PathLike, header: dict[str, Any] | None = None, *, chunk_chars: int = 1 << 20
) -> Iterator[dict[str, Any]]:
    """Yield the events of a Chrome / Kineto trace one at a time, streaming from disk.

    Accepts the JSON Object Format (``{"traceEvents": [...], ...}``) and the JSON Array
    Format (``[...]``, whose closing bracket Chrome allows to be missing), plain or gzipped,
    with or without a UTF-8 byte-order mark. Top-level keys other than ``traceEvents`` are
    stored in ``header`` when given (after the iterator is exhausted for keys that follow the
    events). Entries that are not JSON objects are skipped. ``chunk_chars`` is how much text is
    read at a time (memory use is about that plus one event). Event times (``ts``, ``dur``) are
    left as the file has them: microseconds in Chrome / Kineto traces.

    Raises :class:`TraceError` naming the file for anything that is not such a trace.
    Used in lesson 06 (counting a recorded trace's events and reading its header).
    """
    if header is not None and not isinstance(header, dict):
        raise TypeError(f"header must be a dict to fill with the trace's top-level keys, or None; got {header!r}")
    for _, entry in TraceEntries(path, header, chunk_chars=chunk_chars):
        if isinstance(entry, dict):
            yield entry
