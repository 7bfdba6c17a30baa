"""``python -m bubblekit demo | plot | schedules``: see :mod:`bubblekit.cli`."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
