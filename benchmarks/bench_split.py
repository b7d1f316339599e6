"""Benchmark: ``traceconv split --by step`` of a large trace, then the pieces converted to
``.pftrace`` with ``batch`` (local pool or a 2-worker dask ``LocalCluster``).

Each step runs in a fresh Python process (imports included); peak RSS is the process's own
``VmHWM`` (for batch, the parent's and the largest worker's, as batch reports it).

    python benchmarks/bench_split.py TRACE.json                 # split TRACE by step
    python benchmarks/bench_split.py --big                      # the 1 M-event CPU trace ×10
    python benchmarks/bench_split.py TRACE.json --batch dask    # ... then batch on 2 workers

``--big`` writes the ×10 trace (10 M events, 2.7 GB, uncompressed) with
``bench_convert.multiply`` into a temporary folder (``--keep PATH`` writes it there and
reuses it on the next run).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_convert import CORPUS, measure, multiply  # noqa: E402

SPLIT = """
from traceconv.splitting import split
manifest = split({path!r}, {out!r}, by="step")
extra = dict(pieces=len(manifest["pieces"]), events=manifest["events"],
             cuts=manifest["cuts"]["slices"], flows=manifest["cuts"]["flows"],
             carried=manifest["cuts"]["memory_blocks_carried"])
"""

BATCH = """
import glob, os
from traceconv.batch import plan, run_batch
from traceconv.batch.jobs import convert_one
pieces = sorted(p for p in glob.glob(os.path.join({out!r}, "*.json"))
                if not p.endswith("manifest.json"))
results = list(run_batch(convert_one, plan(pieces, {out!r}, "perfetto"), {engine!r}, jobs=2))
extra = dict(files=len(results), failed=sum(r.status != "ok" for r in results),
             worker_rss_mb=max(r.peak_rss_mb for r in results))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="Chrome/Kineto trace (.json or .json.gz)")
    parser.add_argument("--big", action="store_true", help="the 1 M-event CPU trace ×10")
    parser.add_argument("--keep", metavar="PATH", help="where --big writes (and reuses) it")
    parser.add_argument("--batch", choices=["local", "dask"], help="then convert the pieces")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.trace) if args.trace else None
        if args.big:
            path = Path(args.keep) if args.keep else Path(tmp) / "big.json"
            if not path.exists():
                print(f"writing {CORPUS.name} ×10 to {path} ...", file=sys.stderr)
                multiply(CORPUS, path, 10)
        if path is None:
            parser.error("give a trace or --big")
        out = str(Path(tmp) / "pieces")
        print(f"{path.name}: {path.stat().st_size / 1e6:,.0f} MB")
        print(f"{'step':28} {'wall s':>7} {'cpu s':>7} {'peak RSS MB':>12}  details")
        row("split --by step", measure(SPLIT.format(path=str(path), out=out)))
        if args.batch:
            row(f"batch --engine {args.batch} -j 2",
                measure(BATCH.format(out=out, engine=args.batch)))


def row(name: str, r: dict) -> None:
    details = {k: v for k, v in r.items() if k not in ("wall", "cpu", "rss_mb")}
    print(f"{name:28} {r['wall']:7.1f} {r['cpu']:7.1f} {r['rss_mb']:12,.0f}  "
          f"{json.dumps(details)}", flush=True)

if __name__ == "__main__":
    main()
