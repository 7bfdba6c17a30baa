"""Command line: ``python -m bubblekit.lab run --schedule 1F1B --ranks 2 --microbatches 8``."""

from __future__ import annotations

import sys

from bubblekit.lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
