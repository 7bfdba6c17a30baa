"""Record the sample traces shipped in ``bubblekit/data/traces/`` (needs torch).

For each sample this runs :func:`bubblekit.lab.run` (CPU, gloo, 2 ranks) with the
profiler on for the last measured step, then writes into ``bubblekit/data/traces/``:

* ``<name>-rank<R>.json.gz``: rank R's ``torch.profiler`` Chrome trace, gzipped and slimmed
  (flow events ``ph: s/f`` and per-event ``args`` dropped; every other event kept with its
  original name, category, ``ts``, ``dur``, ``pid`` and ``tid``; top-level keys such as
  ``distributedInfo`` kept). ``--no-slim`` keeps the export byte for byte;
* ``<name>-record.csv``: the lab's own record of every measured step (bubblekit CSV, ms);
* ``manifest.json``: configuration, torch version, machine, files and the profiled step.

    .venv/bin/python scripts/record_traces.py            # all samples
    .venv/bin/python scripts/record_traces.py --only 1f1b-p2-m8

Timings depend on the machine and its load: re-recording changes the numbers, not the shape.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bubblekit import lab  # noqa: E402
from bubblekit.analysis.traces import SAMPLE_DIR  # noqa: E402

#: name -> lab options. A model big enough that an action takes tens of ms on one CPU core.
SAMPLES: dict[str, dict[str, object]] = {
    "1f1b-p2-m4": {"schedule": "1F1B", "microbatches": 4},
    "gpipe-p2-m4": {"schedule": "GPipe", "microbatches": 4},
    "interleaved-p2-m4": {"schedule": "Interleaved1F1B", "microbatches": 4, "v": 2},
    "dualpipev-p2-m4": {"schedule": "DualPipeV", "microbatches": 4},
}
COMMON: dict[str, object] = {"ranks": 2, "hidden": 256, "seq": 128, "batch": 2, "layers": 1, "steps": 5,
                             "warmup": 1, "profile_steps": 1, "timeout_s": 300.0}


def slim(doc: dict[str, Any]) -> dict[str, Any]:
    """Drop flow events and per-event args; keep every other event's timing and names."""
    events = []
    for ev in doc.get("traceEvents", []):
        if ev.get("ph") in ("s", "f"):
            continue
        if ev.get("ph") != "M":
            ev = {k: v for k, v in ev.items() if k != "args"}
        events.append(ev)
    out = {k: v for k, v in doc.items() if k not in ("traceEvents", "deviceProperties")}
    out["traceEvents"] = events
    out["slimmed_by"] = "scripts/record_traces.py: flow events and per-event args dropped"
    return out


def record(name: str, options: dict[str, object], out_dir: Path, slimmed: bool = True) -> dict[str, object]:
    """Run one sample and write its files; return its manifest entry."""
    with tempfile.TemporaryDirectory(prefix="bk-record-") as tmp:
        opts = {**COMMON, **options, "trace_dir": tmp}
        res = lab.run(**opts)  # type: ignore[arg-type]
        files = []
        for r in range(res.config.ranks):
            src = Path(tmp) / f"rank{r}.json"
            dst = out_dir / f"{name}-rank{r}.json.gz"
            if slimmed:
                doc = slim(json.loads(src.read_text(encoding="utf-8")))
                with gzip.open(dst, "wt", compresslevel=9, encoding="utf-8") as ft:
                    json.dump(doc, ft, separators=(",", ":"))
            else:
                with open(src, "rb") as fi, gzip.open(dst, "wb", compresslevel=9) as fo:
                    shutil.copyfileobj(fi, fo)
            files.append(dst.name)
    csv_name = f"{name}-record.csv"
    res.to_csv(out_dir / csv_name)
    cfg = res.config.to_dict()
    cfg.pop("trace_dir", None)
    chk = res.order_check()
    return {
        "config": cfg,
        "torch_version": res.record.get("torch_version"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, {platform.system()}",
        "trace_files": files,
        "record_csv": csv_name,
        "profiled_record_step": res.config.steps - 1,
        "bubblekit": lab.bubblekit_name(res.config.info, res.config.v),
        "slimmed": slimmed,
        "note": "the traces cover the last measured step; the CSV holds every measured step",
        "measured_bubble_ratios": [round(b, 6) for b in res.bubble_ratios],
        "executed_equals_bubblekit": chk["bubblekit_matches"],
    }


def _targets(out: Path, names: list[str]) -> list[Path]:
    """The files a recording of ``names`` writes in ``out`` (rank files: every one already there)."""
    files = [out / "manifest.json"]
    for name in names:
        files += sorted(out.glob(f"{name}-rank*.json.gz")) + [out / f"{name}-record.csv"]
    return files


def check_args(args: argparse.Namespace, ap: argparse.ArgumentParser) -> tuple[Path, list[str]]:
    """The output folder and the samples to record; ``ap.error`` (exit 2, one line) for a bad option.

    ``--only`` must name samples of :data:`SAMPLES`; ``--out`` must be a folder that can be
    made. A folder other than the shipped one (``bubblekit/data/traces``, which this script
    owns) that already holds files it would write is refused without ``--force``.
    """
    unknown = [n for n in (args.only or []) if n not in SAMPLES]
    if unknown:
        ap.error(f"argument --only: unknown sample(s) {', '.join(map(repr, unknown))}; samples: {', '.join(SAMPLES)}")
    names = [n for n in SAMPLES if not args.only or n in args.only]
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        ap.error(f"argument --out: {args.out!r} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        ap.error(f"argument --out: cannot make the folder {args.out!r}: {exc.strerror or exc}")
    if out.resolve() != SAMPLE_DIR.resolve() and not args.force:
        existing = [f.name for f in _targets(out, names) if f.exists()]
        if existing:
            ap.error(f"argument --out: {args.out!r} already holds {', '.join(existing[:4])}"
                     f"{' and more' if len(existing) > 4 else ''}, which recording would overwrite; they are kept. "
                     f"Choose a new or empty folder, or pass --force")
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            ap.error(f"argument --out: {str(manifest_path)!r} is not a readable manifest ({exc})")
        if not (isinstance(manifest, dict) and isinstance(manifest.get("samples"), dict)):
            ap.error(f"argument --out: {str(manifest_path)!r} is not this script's manifest (no 'samples' object)")
    return out, names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help=f"record only these samples ({', '.join(SAMPLES)})")
    ap.add_argument("--out", default=str(SAMPLE_DIR),
                    help="output folder (default: the shipped samples, bubblekit/data/traces)")
    ap.add_argument("--no-slim", action="store_true", help="keep the profiler export byte for byte")
    ap.add_argument("--force", action="store_true", help="overwrite files already in another --out folder")
    args = ap.parse_args()
    out, names = check_args(args, ap)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"samples": {}}
    for old in set(manifest["samples"]) - set(SAMPLES):
        manifest["samples"].pop(old)  # samples no longer recorded
    for name, options in SAMPLES.items():
        if name not in names:
            continue
        print(f"recording {name} ...", flush=True)
        manifest["samples"][name] = record(name, options, out, slimmed=not args.no_slim)
        entry = manifest["samples"][name]
        print(f"  bubble ratios {entry['measured_bubble_ratios']}, files {entry['trace_files']}")
    manifest["generator"] = "scripts/record_traces.py"
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    total = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    print(f"{out}: {total / 1024:.0f} KB in total")


if __name__ == "__main__":
    main()
