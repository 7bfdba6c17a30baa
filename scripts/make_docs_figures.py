#!/usr/bin/env python3
"""Draw the READMEs' picture, ``docs/pipeline.png`` (and the Chinese README's ``docs/pipeline.zh.png``), with bubblekit.

Three schedules of the same step (p = 4 ranks, m = 8 microbatches, backward = 2 x forward):
GPipe, 1F1B and interleaved 1F1B with v = 2 chunks per rank, on a shared time axis in slots.

    python scripts/make_docs_figures.py [--out docs/pipeline.png]
    python scripts/make_docs_figures.py --lang zh        # docs/pipeline.zh.png (needs a CJK font)
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
    parser.add_argument("--out", type=Path, default=None, help="default docs/pipeline.png (zh: docs/pipeline.zh.png)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="the figure's language")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = ROOT / "docs" / ("pipeline.zh.png" if args.lang == "zh" else "pipeline.png")
    bk.set_language(args.lang)
    use_course_style()
    costs = bk.preset("b=2f")
    results = [
        bk.simulate(bk.schedule("gpipe", p=4, m=8), costs),
        bk.simulate(bk.schedule("1f1b", p=4, m=8), costs),
        bk.simulate(bk.schedule("interleaved", p=4, m=8, v=2), costs),
    ]
    title = bk.local_text(en="Same step, three schedules: the hatched bars are the bubbles",
                          zh="同一步，三种调度：带斜线的方块就是气泡")
    fig = plot_pipeline(results, title=title)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90, bbox_inches="tight", metadata={"Software": None})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
