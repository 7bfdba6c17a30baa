"""``bubblekit trace PATH``: where a real profile's GPU time went, and its pipeline bubble.

    bubblekit trace run/                       # a folder of per-rank traces (.json, .json.gz, .csv, .sqlite)
    bubblekit trace rank0.json rank1.json --json
    bubblekit trace run/ --plot run.png        # the measured timeline (refuses an existing file without --force)

For a Kineto trace of a GPU run it prints HTA's temporal breakdown per rank
(:func:`~bubblekit.analysis.traces.gpu_breakdown`) and flags the ranks whose kernel time share
is under 80% (the source article's rule: check whether they wait for their neighbours). When
the trace holds pipeline actions (``PP:1F3``, ``compute:1F3``, ...) it also measures the
pipeline's bubble on the GPU's clock, splits the idle time (NCCL waits, copies, an empty GPU)
and explains the largest gaps. A CPU-only trace (a gloo run) gets the pipeline part only.

Errors (not a trace, no ranks, a bad option) are one line naming the file or the option, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from bubblekit.i18n import register, tr

from .records import TraceError

__all__ = ["main", "build_parser", "SHARE_RULE"]

#: The source article's rule of thumb: below this kernel time share, look at what the rank waits for.
SHARE_RULE = 0.8
_FORMATS = (".png", ".svg", ".pdf")

register({
    "traces.cli.low_share": {"en": "rank {rank}: kernel time share {share:.1%} < {rule:.0%}: check whether it waits "
                                   "for its neighbours",
                             "zh": "rank {rank}：kernel 时间占比 {share:.1%} < {rule:.0%}，检查它是否在等相邻的卡"},
    "traces.cli.spin": {"en": "rank {rank}: kernel time share {share:.1%}, but compute kernels only {compute:.1%}: "
                              "communication kernels fill the rest (an NCCL receive spins while it waits)",
                        "zh": "rank {rank}：kernel 时间占比 {share:.1%}，计算 kernel 却只占 {compute:.1%}，"
                              "其余是通信 kernel（NCCL 接收在等待时空转）"},
    "traces.cli.no_gpu": {"en": "no GPU kernels in the trace (a CPU run): no GPU breakdown",
                          "zh": "trace 里没有 GPU kernel（CPU 上的运行），没有 GPU 时间分解"},
    "traces.cli.no_pipeline": {"en": "no pipeline bubble measured: {why}",
                               "zh": "没有测量流水线气泡：{why}"},
    "traces.cli.wrote": {"en": "wrote {path}", "zh": "已写入 {path}"},
})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bubblekit trace", description="Where a profile's GPU time went, and its pipeline bubble.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="trace files, or one folder of them: PyTorch Profiler (Kineto) JSON (.json, .json.gz), "
                             "bubblekit's CSV of actions (.csv, .csv.gz) or an Nsight Systems SQLite export "
                             "(.sqlite, from 'nsys export --type sqlite')")
    parser.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")
    parser.add_argument("--plot", metavar="FILE", help="draw the measured timeline to FILE (.png, .svg or .pdf)")
    parser.add_argument("--force", action="store_true", help="let --plot replace an existing FILE")
    parser.add_argument("--step", type=int, default=-1, help="which complete training step (default -1: the last)")
    parser.add_argument("--clock", choices=("auto", "gpu", "cpu"), default="auto",
                        help="time actions by their GPU kernels (auto: when the trace has some) or by their CPU ranges")
    parser.add_argument("--gaps", type=int, default=5, help="how many of the largest gaps to explain (default 5)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of the report")
    return parser


def _source(paths: list[str]) -> str | list[str]:
    return paths[0] if len(paths) == 1 else paths


def _plot_target(parser: argparse.ArgumentParser, text: str, force: bool) -> Path:
    out = Path(text)
    if out.suffix.lower() not in _FORMATS:
        parser.error(f"argument --plot: {text!r} must end in one of {', '.join(_FORMATS)}")
    if out.is_dir():
        parser.error(f"argument --plot: {text!r} is a folder")
    if out.exists() and not force:
        parser.error(f"argument --plot: {text!r} exists (it may be yours); choose another name, or add --force")
    if not out.parent.exists():
        parser.error(f"argument --plot: folder {str(out.parent)!r} does not exist")
    return out


def analyse(source: Any, *, step: int = -1, clock: str = "auto", gaps: int = 5) -> dict[str, Any]:
    """Everything ``bubblekit trace`` reports, as plain data (``--json`` prints it)."""
    from .gaps import explain_gaps
    from .gpu import gpu_breakdown, idle_split
    from .read import read_trace

    out: dict[str, Any] = {"gpu": None, "pipeline": None, "notes": []}
    try:
        table = gpu_breakdown(source)
        out["gpu"] = [dict(r) for r in table]
        out["notes"].extend(table.notes)  # type: ignore[attr-defined]
    except TraceError as exc:
        if "no GPU events" not in str(exc):
            raise
    try:
        m = read_trace(source, step=step, clock=clock)
    except TraceError as exc:
        out["pipeline_missing"] = str(exc)
        return out
    pipe: dict[str, Any] = {
        "clock": m.clock, "ranks": m.p, "makespan_ms": float(m.makespan), "bubble_ratio": m.bubble_ratio,
        "bubble_overhead": m.bubble_overhead, "idle_ms": [float(x) for x in m.idle],
        "gaps": [{"rank": g.rank, "start_ms": float(g.start), "end_ms": float(g.end), "reason": g.reason,
                  "waiting_for": g.waiting_for, "from_rank": g.from_rank, "text": g.describe("ms")}
                 for g in explain_gaps(m, gaps)],
    }
    if m.clock == "gpu":
        pipe["idle_split"] = [dict(r) for r in idle_split(m)]
    out["pipeline"] = pipe
    out["notes"].extend(m.notes)
    out["_timeline"] = m
    return out


def _print_text(result: dict[str, Any]) -> None:
    from bubblekit.text import Table

    from .gaps import bubble_report

    if result["gpu"] is not None:
        rows = result["gpu"]
        print(Table(rows, ["rank", "span_us", "idle_us", "compute_us", "non_compute_us", "kernel_share"],
                    title=tr("traces.gpu.title"), note=tr("traces.gpu.note"),
                    formats={"kernel_share": "percent"}).to_text())
        for r in rows:
            share = r["kernel_share"]
            compute = r["compute_us"] / r["span_us"] if r["span_us"] else 0.0
            if share < SHARE_RULE:
                print(tr("traces.cli.low_share", rank=r["rank"], share=share, rule=SHARE_RULE))
            elif compute < SHARE_RULE:
                print(tr("traces.cli.spin", rank=r["rank"], share=share, compute=compute))
        print()
    else:
        print(tr("traces.cli.no_gpu"))
    pipe = result["pipeline"]
    if pipe is None:
        why = result.get("pipeline_missing", "")
        print(tr("traces.cli.no_pipeline", why=" ".join(why.split())[:400]))
        return
    m = result["_timeline"]
    print(bubble_report(m, n_gaps=len(pipe["gaps"])))
    if "idle_split" in pipe:
        print()
        print(Table(pipe["idle_split"], ["rank", "idle_ms", "communication_ms", "memory_ms", "nothing_ms"],
                 title=tr("traces.gpu.idle_title"), note=tr("traces.gpu.idle_note")).to_text())


def _plot(result: dict[str, Any], source: Any, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from bubblekit.presentation import gpu_plot, plotting

    plotting.use_course_style()
    if result["pipeline"] is not None:
        fig = plotting.plot_pipeline(result["_timeline"])
    else:
        from .gpu import gpu_activity

        fig = gpu_plot.plot_gpu_activity(gpu_activity(source))
    tmp = out.with_name(out.name + ".tmp" + out.suffix)
    fig.savefig(tmp, bbox_inches="tight")
    tmp.replace(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``bubblekit trace``; returns the exit status (2 for a bad option or an unreadable trace)."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.gaps < 0 or ns.gaps > 1000:
        parser.error(f"argument --gaps: must be 0..1000, got {ns.gaps}")
    if ns.lang:
        from bubblekit.i18n import set_language

        set_language(ns.lang)
    out = _plot_target(parser, ns.plot, ns.force) if ns.plot else None
    source = _source(ns.paths)
    try:
        result = analyse(source, step=ns.step, clock=ns.clock, gaps=ns.gaps)
    except (TraceError, ValueError, TypeError) as exc:
        print(f"bubblekit trace: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if ns.json:
        data = {k: v for k, v in result.items() if not k.startswith("_")}
        print(json.dumps(data, indent=2, default=str))
    else:
        _print_text(result)
    if out is not None:
        try:
            _plot(result, source, out)
        except OSError as exc:
            print(f"bubblekit trace: error: cannot write --plot {str(out)!r} ({exc.strerror or exc})", file=sys.stderr)
            return 2
        if not ns.json:
            print(tr("traces.cli.wrote", path=out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
