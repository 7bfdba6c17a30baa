"""What the machine can give (standard library only): used by the lab's pre-flight and the classroom server."""

from __future__ import annotations

from pathlib import Path

__all__ = ["available_memory"]


def available_memory() -> int | None:
    """Memory the system can give without swapping (Linux ``MemAvailable``), in bytes; ``None`` when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
