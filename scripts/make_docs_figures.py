#!/usr/bin/env python3
"""Draw the README's picture, ``docs/pipeline.png``, with bubblekit.

Three schedules of the same step (p = 4 ranks, m = 8 microbatches, backward = 2 x forward):
GPipe, 1F1B and interleaved 1F1B with v = 2 chunks per rank, on a shared time axis in slots.

    python scripts/make_docs_figures.py [--out docs/pipeline.png]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

import bubblekit as bk  # noqa: E402
from bubblekit.presentation.plotting import plot_pipeline, use_course_style  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "pipeline.png")
    args = parser.parse_args(argv)
    use_course_style()
    costs = bk.preset("b=2f")
    results = [
        bk.simulate(bk.schedule("gpipe", p=4, m=8), costs),
        bk.simulate(bk.schedule("1f1b", p=4, m=8), costs),
        bk.simulate(bk.schedule("interleaved", p=4, m=8, v=2), costs),
    ]
    fig = plot_pipeline(results, title="Same step, three schedules: the hatched bars are the bubbles")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90, bbox_inches="tight", metadata={"Software": None})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
