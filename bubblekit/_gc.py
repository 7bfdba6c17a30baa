"""Python's cyclic garbage collector paused around bulk work (private, standard library only)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a block runs (it is restored afterwards, also on an error).

    For code that builds many small objects that live until it returns and form no reference
    cycles (a trace's rows, a schedule's actions): the collector would walk them again and again
    (a third of the time of reading a 400,000-row CSV, ``benchmarks/bench_trace_csv.py``; about half
    of building a 131,072-action schedule, ``benchmarks/bench_core.py``). Memory is still freed as usual
    (reference counting); a collection pending at the end runs at the next allocation.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
