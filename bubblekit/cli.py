"""Command line: ``bubblekit demo | plot | schedules`` (also ``python -m bubblekit ...``).

* ``bubblekit demo`` prints the source article's Python demo (p = 8, m = 2 ... 32),
  computed by bubblekit and checked against the simulator (``--lang zh`` for the
  article's own Chinese lines).
* ``bubblekit plot --schedule 1f1b -p 4 -m 8 -o out.svg`` draws a pipeline diagram
  (``--schedule gpipe,1f1b`` stacks several on one time axis). An existing ``out.svg`` is
  kept (an error says so) unless ``--force`` is given. ``--lang zh`` (or ``BUBBLEKIT_LANG=zh``) draws the
  figure and prints the report and the ``-o`` errors in Chinese; option names stay as they are.
* ``bubblekit schedules`` lists the registered schedules.
* ``bubblekit trace PATH`` reads a profiler trace (a GPU run's Kineto traces or a CPU run's):
  HTA's per-rank GPU time breakdown, the pipeline's bubble and its largest gaps
  (:mod:`bubblekit.analysis.traces.cli`).
* ``bubblekit workspace`` makes the learner's ``workspace/`` from ``exercises/`` (copies only
  the notebooks it does not have; never overwrites), see :mod:`bubblekit.course.workspace`.

A bad option ends with a one-line message naming the option and exit status 2.
Matplotlib is imported only by ``plot``.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from bubblekit import __version__
from bubblekit.costs import PRESETS
from bubblekit.i18n import get_language, register, tr, translate, using_language
from bubblekit.schedules import REGISTRY
from bubblekit.text import counted

__all__ = ["main", "build_parser", "MAX_CLI_ACTIONS", "MAX_DPI"]

#: ``plot`` refuses configurations with more actions than this (simulation and drawing
#: stay within a few seconds).
MAX_CLI_ACTIONS = 400_000
_FORMATS = (".png", ".svg", ".pdf")

# ``bubblekit plot``'s report (``--lang zh``, or BUBBLEKIT_LANG=zh, prints it in Chinese; the figure follows too)
register({
    "cli.plot.result": {"en": "{name}: makespan {makespan} {unit}, bubble_ratio {ratio}, bubble_overhead {overhead}",
                        "zh": "{name}：单步耗时 {makespan} {unit}，气泡比例 {ratio}，气泡开销（Megatron 口径）{overhead}"},
    "cli.plot.wrote": {"en": "wrote {path}", "zh": "已写入 {path}"},
    "cli.error": {"en": "{prog}: error: {message} (see '{usage}')",
                  "zh": "{prog}：错误：{message}（用法见 '{usage}'）"},
    "cli.out.folder": {"en": "argument {option}: {text} is a folder; give a file name in it, e.g. {example}",
                       "zh": "参数 {option}：{text} 是一个文件夹，请给出其中的文件名，例如 {example}"},
    "cli.out.suffix": {"en": "argument {option}: file must end in {formats}, got {text}",
                       "zh": "参数 {option}：文件名必须以 {formats} 结尾，收到的是 {text}"},
    "cli.out.no_folder": {"en": "argument {option}: folder {folder} does not exist",
                          "zh": "参数 {option}：文件夹 {folder} 不存在"},
    "cli.out.not_folder": {"en": "argument {option}: {folder} is not a folder",
                           "zh": "参数 {option}：{folder} 不是文件夹"},
    "cli.out.exists": {"en": "argument {option}: {text} already exists and is kept; choose another file name, or "
                             "pass {force} to overwrite it",
                       "zh": "参数 {option}：{text} 已存在，保留原文件不动；请换一个文件名，或加 {force} 覆盖它"},
    "cli.out.cannot_write": {"en": "argument {option}: cannot write {path}: {why}; choose a file in a folder you "
                                   "can write to",
                             "zh": "参数 {option}：无法写入 {path}：{why}；请选一个有写权限的文件夹"},
})


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def _nonneg_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


#: ``--dpi`` at most: a 12-inch figure at 1200 dpi is already 14,400 pixels wide.
MAX_DPI = 1200


def _dpi(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_DPI:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_DPI} (a 12-inch figure at {MAX_DPI} dpi is "
                                         f"{12 * MAX_DPI} pixels wide), got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``bubblekit plot: error: argument -m: ...``."""

    def error(self, message: str) -> NoReturn:
        # argparse's own messages are English: their frame stays English too (no mixed line)
        language = "en" if message.isascii() else get_language()
        self.exit(2, translate("cli.error", language, prog=self.prog, message=message, usage=f"{self.prog} --help") + "\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``bubblekit`` argument parser (sub-commands demo, plot, schedules)."""
    parser = _Parser(
        prog="bubblekit",
        description="Pipeline bubbles: the article's demo, pipeline diagrams, the schedule registry.",
    )
    parser.add_argument("--version", action="version", version=f"bubblekit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,plot,schedules,workspace,classroom,lab,trace}")
    sub.required = True

    demo = sub.add_parser("demo", help="the source article's Python demo, reproduced and checked by simulation")
    demo.add_argument("--lang", choices=("en", "zh"), default="en",
                      help="en: English labels; zh: the article's own lines (default en)")
    demo.add_argument("--no-check", action="store_true", help="skip the simulator check and notes")

    plot = sub.add_parser("plot", help="draw a pipeline diagram of a registered schedule")
    plot.add_argument("--schedule", "-s", default="1f1b",
                      help="registered name (see `bubblekit schedules`), or several joined by commas "
                           "to compare them on one time axis (default 1f1b)")
    plot.add_argument("-p", type=_positive_int, default=4, help="ranks (pipeline stages), default 4")
    plot.add_argument("-m", type=_positive_int, default=8, help="microbatches per step, default 8")
    plot.add_argument("-v", type=_positive_int, default=None,
                      help="chunks per rank for interleaved / looped-bfs (default 2)")
    plot.add_argument("--preset", choices=sorted([*PRESETS, "h200"]), default="b=2f",
                      help="cost preset (default b=2f: F = 1, B = 2 slots)")
    plot.add_argument("--comm", type=_nonneg_float, default=None,
                      help="latency of one hop between ranks, in the preset's unit")
    plot.add_argument("--color-by", choices=("microbatch", "kind"), default="microbatch")
    plot.add_argument("--critical-path", action="store_true", help="outline the critical path")
    plot.add_argument("--phases", action="store_true", help="mark fill / steady / drain")
    plot.add_argument("--comm-arrows", action="store_true", help="arrows for cross-rank hops (small runs)")
    plot.add_argument("--no-labels", action="store_true", help="no text in the boxes")
    plot.add_argument("-o", "--output", required=True,
                      help="output file: .png, .svg or .pdf; an existing file is kept unless --force")
    plot.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    plot.add_argument("--dpi", type=_dpi, default=150, help=f"resolution for .png, 1..{MAX_DPI} (default 150)")
    plot.add_argument("--lang", choices=("en", "zh"), default=None,
                      help="language of the figure and the printed report (default: BUBBLEKIT_LANG, else en)")
    plot.set_defaults(plot_parser=plot)  # so that errors found later name `bubblekit plot`

    sub.add_parser("schedules", help="list the registered schedules with a summary")
    # listed for --help only: main() hands their arguments to their own parsers
    sub.add_parser("workspace", help="make your workspace/ from exercises/ (never overwrites; see 'bubblekit workspace --help')")
    sub.add_parser("classroom", help="serve the explorer as a web app for a room (see 'bubblekit classroom --help')")
    sub.add_parser("lab", help="run a real pipeline with torch.distributed.pipelining (see 'bubblekit lab --help')")
    sub.add_parser("trace", help="where a profile's GPU time went, and its pipeline bubble (see 'bubblekit trace --help')")
    return parser


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _option_for(message: str) -> str:
    """Which command-line option a bubblekit error message is about."""
    low = message.lower()
    if low.startswith("unknown schedule") or low.startswith("name"):
        return "--schedule"
    if low.startswith("v=") or low.startswith("v must") or low.startswith("v "):
        return "-v"
    if low.startswith("m=") or low.startswith("m must") or low.startswith("m "):
        return "-m"
    if low.startswith("p=") or low.startswith("p must") or low.startswith("p "):
        return "-p"
    if "comm" in low:
        return "--comm"
    return "--schedule"


def _cmd_demo(args: argparse.Namespace) -> int:
    from bubblekit.course.demo import demo_text

    sys.stdout.write(demo_text(args.lang, check=not args.no_check))
    return 0


def _cmd_schedules(_: argparse.Namespace) -> int:
    from bubblekit.schedules.registry import describe_chunks

    width = max(len(n) for n in REGISTRY)
    for spec in REGISTRY.values():
        split = ", split backward (I/W)" if spec.split_backward else ""
        torch = f"; torch: {spec.torch_class}" if spec.torch_class else ""
        print(f"{spec.name:<{width}}  [{describe_chunks(spec)}{split}]  {spec.summary}")
        print(f"{'':<{width}}  {spec.display_name}: {spec.m_rule}; peak {spec.peak_text or '-'} microbatch activations")
        print(f"{'':<{width}}  {spec.paper}{torch}")
    return 0


def _cmd_plot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``bubblekit plot``: in ``--lang`` when given (the figure and the report), else in the current language."""
    if args.lang is None:
        return _draw_plot(args, parser)
    with using_language(args.lang):
        return _draw_plot(args, parser)


def _draw_plot(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from bubblekit import costs as bk_costs
    from bubblekit.schedules import schedule, spec
    from bubblekit.simulator import simulate

    out = _output_path(args.output, parser, force=args.force)
    names = [n.strip() for n in args.schedule.split(",") if n.strip()]
    if not names:
        parser.error("argument --schedule: give a schedule name (see `bubblekit schedules`)")
    try:
        entries = [spec(n) for n in names]
    except ValueError as exc:
        parser.error(f"argument --schedule: {_one_line(exc)}")
    try:
        cost = bk_costs.preset(args.preset)
        if args.comm is not None:
            cost = cost.with_(comm=args.comm)
    except (TypeError, ValueError) as exc:
        parser.error(f"argument {'--comm' if args.comm is not None else '--preset'}: {_one_line(exc)}")
    # -v applies to the multi-chunk schedules of a comparison
    vs = [args.v if e.chunks == "many" or len(entries) == 1 else None for e in entries]
    estimate = 0
    for entry, v in zip(entries, vs):
        try:
            estimate += entry.n_actions(args.p, args.m, v)
        except ValueError:
            pass  # a bad -v: building the schedule below names it
    if estimate > MAX_CLI_ACTIONS:
        parser.error(
            f"argument -m: p={args.p}, m={args.m} gives about {estimate} actions, more than the command "
            f"line's limit of {MAX_CLI_ACTIONS}; use a smaller -p or -m"
        )
    scheds = []
    for entry, v in zip(entries, vs):
        try:
            scheds.append(schedule(entry.name, args.p, args.m, v))
        except (TypeError, ValueError) as exc:
            msg = _one_line(exc)
            parser.error(f"argument {_option_for(msg)}: {msg}")
    from bubblekit.presentation.plotting import plot_pipeline, use_course_style

    use_course_style()

    results = [simulate(s, cost) for s in scheds]
    fig = plot_pipeline(
        results if len(results) > 1 else results[0], color_by=args.color_by,
        critical_path=args.critical_path, phases=args.phases, comm_arrows=args.comm_arrows,
        labels=False if args.no_labels else None,
    )
    image = io.BytesIO()
    fig.savefig(image, format=out.suffix.lower()[1:], dpi=args.dpi)
    _write_output(out, image.getvalue(), force=args.force, parser=parser)
    for r in results:
        shown = r.schedule.name if get_language() == "en" else spec(r.schedule.name).display_name
        print(tr("cli.plot.result", name=shown,
                 makespan=f"{float(r.makespan):g}", unit=counted(r.unit), ratio=f"{r.bubble_ratio:.1%}",
                 overhead=f"{r.bubble_overhead:.1%}"))
    print(tr("cli.plot.wrote", path=out))
    return 0


def _output_path(text: str, parser: argparse.ArgumentParser, *, force: bool = False) -> Path:
    """``-o``: a new file (an existing one only with ``--force``) ending in .png, .svg or .pdf, in a folder that exists.

    Checked before anything is computed, so that a mistyped name costs nothing; the file is
    written only at the end, by :func:`_write_output`.
    """
    out = Path(text)
    if out.is_dir():
        parser.error(tr("cli.out.folder", option="-o/--output", text=repr(text), example=repr(str(out / "pipeline.svg"))))
    if out.suffix.lower() not in _FORMATS:
        parser.error(tr("cli.out.suffix", option="-o/--output", formats=", ".join(_FORMATS), text=repr(text)))
    if not out.parent.exists():
        parser.error(tr("cli.out.no_folder", option="-o/--output", folder=repr(str(out.parent))))
    if not out.parent.is_dir():
        parser.error(tr("cli.out.not_folder", option="-o/--output", folder=repr(str(out.parent))))
    if (out.exists() or out.is_symlink()) and not force:
        parser.error(tr("cli.out.exists", option="-o/--output", force="--force", text=repr(text)))
    return out


def _write_output(out: Path, data: bytes, *, force: bool, parser: argparse.ArgumentParser) -> None:
    """Write ``data`` to ``out``: a new file, or (``force``) over an existing one; errors name ``-o``.

    Without ``force`` the file is created exclusively (``open(..., "xb")``), so a file that
    appeared since the check is not overwritten either. A file that cannot be written (a
    read-only folder, ``/proc``) is a one-line error, never a traceback.
    """
    try:
        with open(out, "wb" if force else "xb") as fh:
            fh.write(data)
    except FileExistsError:
        parser.error(tr("cli.out.exists", option="-o/--output", force="--force", text=repr(str(out))))
    except OSError as exc:
        parser.error(tr("cli.out.cannot_write", option="-o/--output", path=repr(str(out)), why=exc.strerror or exc))


def _workspace_problem(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """Why ``bubblekit workspace`` options do not go together (``None`` when they do).

    ``--export-changed DIR`` only means something with ``--course-notebooks`` (it exports the
    shipped version of each changed course notebook while listing them); alone it would be
    silently ignored, so it is refused, naming both options.
    """
    ns, _ = parser.parse_known_args(argv)
    if getattr(ns, "export_changed", None) is not None and not getattr(ns, "course_notebooks", False):
        return (f"argument --export-changed: {str(ns.export_changed)!r} is used only with --course-notebooks (it "
                f"writes the shipped copy of each changed course notebook there while listing them); add "
                f"--course-notebooks, or leave --export-changed out to make your workspace")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (argparse exits with 2 on bad options).

    ``bubblekit classroom ...``, ``bubblekit lab ...`` and ``bubblekit workspace ...`` hand
    their arguments to the classroom server (:mod:`bubblekit.presentation.classroom`), the
    torch lab (:mod:`bubblekit.lab`) and the workspace maker (:mod:`bubblekit.course.workspace`),
    which have parsers of their own.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "classroom":
        from bubblekit.presentation import classroom

        return classroom.main(args_list[1:])
    if args_list and args_list[0] == "workspace":
        from bubblekit.course import workspace

        problem = _workspace_problem(workspace.build_parser("bubblekit workspace"), args_list[1:])
        if problem:
            print(f"bubblekit workspace: error: {problem} (see 'bubblekit workspace --help')", file=sys.stderr)
            return 2
        return workspace.main(args_list[1:])
    if args_list and args_list[0] == "lab":
        from bubblekit.lab import cli as lab_cli

        return lab_cli.main(args_list[1:])
    if args_list and args_list[0] == "trace":
        from bubblekit.analysis.traces import cli as trace_cli

        return trace_cli.main(args_list[1:])
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.command == "demo":
        return _cmd_demo(args)
    if args.command == "schedules":
        return _cmd_schedules(args)
    return _cmd_plot(args, args.plot_parser)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
