"""``python -m bubblekit demo | plot | schedules``: see :mod:`bubblekit.cli`."""

from __future__ import annotations

from bubblekit.cli import main

raise SystemExit(main())
