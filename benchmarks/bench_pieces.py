"""Benchmark: the distributed path against one process on one core, and the overview.

Each command runs as a fresh ``python -m traceconv`` process; wall time, and CPU time of
the process and everything it started and waited for (the dask scheduler and workers
included: ``RUSAGE_CHILDREN``), median of ``--runs`` runs:

* ``convert (taskset -c 0)``: ``traceconv TRACE -o whole.pftrace`` pinned to one core;
* ``split --then perfetto --engine dask -j 2``: split by step, pieces of the size ``--then``
  chooses, each converted on a 2-worker ``LocalCluster`` as soon as it is written (the
  overview is left out: it is measured on its own);
* the same with ``--target-size 0`` (one piece per step: the old behaviour), once;
* ``split --by step`` alone, and ``overview``: the overview's time against the split's.

``--bounds`` measures instead what any split-then-convert run must spend, each part in a
fresh process (CPU time): reading every event's routing fields and text once (the split's
cheapest read, nothing routed), the split's first pass, a scan of the raw bytes for the
step markers and metadata events (what a first pass that decodes nothing costs), and the
pieces of ``split --target-size`` converted one after the other in one long-lived process
(a worker without its start-up); each against the one-core conversion.

``--piece-by-piece`` measures a conversion piece by piece (``traceconv TRACE -o
out.pftrace --piece-by-piece``: wall, CPU and peak RSS of the process) against reading it
whole (``--whole``; left out with ``--no-whole`` for a trace that does not fit). That the
two outputs are the same trace is tested (``tests/test_streaming.py``), not timed here.

    python benchmarks/bench_pieces.py /tmp/bench/cpu500.json --runs 2
    python benchmarks/bench_pieces.py /tmp/bench/cpu10x.json --bounds --target-size 333MB
    python benchmarks/bench_pieces.py /tmp/bench/cpu30x.json --piece-by-piece --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str]) -> dict:
    """Wall and CPU seconds of one command (its descendants' CPU included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)}: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "out": done.stdout.strip().splitlines()[-1:]}


def median(command: list[str], runs: int, clean: Path | None = None) -> dict:
    results = []
    for _ in range(runs):
        if clean is not None:
            shutil.rmtree(clean, ignore_errors=True)
        results.append(timed(command))
    return {"wall": statistics.median(r["wall"] for r in results),
            "cpu": statistics.median(r["cpu"] for r in results),
            "runs": [round(r["wall"], 1) for r in results], "out": results[-1]["out"]}


# a command run in a process of its own, which prints the command's peak RSS (its
# children's maximum resident set, in KiB on Linux)
_PEAK = """import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)"""


def with_peak(command: list[str]) -> dict:
    """:func:`timed`, and the command's peak RSS in MB."""
    found = timed([sys.executable, "-c", _PEAK, *command])
    return {**found, "peak_mb": int(found["out"][-1]) * 1024 / 1e6}


def piece_by_piece(trace: str, runs: int, whole: bool) -> None:
    """The conversion piece by piece against the whole one: wall, CPU, peak RSS."""
    tc = [sys.executable, "-m", "traceconv"]
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(trace))) as tmp:
        modes = ["--piece-by-piece", *(["--whole"] if whole else [])]
        for mode in modes:
            found = [with_peak([*tc, trace, "-o", os.path.join(tmp, f"{mode[2:]}.pftrace"),
                                mode]) for _ in range(runs)]
            print(f"{mode:18} wall {statistics.median(r['wall'] for r in found):7.1f} s  "
                  f"cpu {statistics.median(r['cpu'] for r in found):7.1f} s  "
                  f"peak {max(r['peak_mb'] for r in found):7.0f} MB  "
                  f"out {os.path.getsize(os.path.join(tmp, f'{mode[2:]}.pftrace')) / 1e6:.0f} MB")


# Each part of --bounds, run as ``python -c`` with the trace (and a folder) as arguments.
_BARE_READ = """import sys
from traceconv.splitting import _read
_read(sys.argv[1], lambda chunk: None)"""
_FIRST_PASS = """import sys
from traceconv.splitting import survey_trace
from traceconv.splitting.sizes import ByteHistogram
survey_trace(sys.argv[1], ByteHistogram())"""
_MARKER_SCAN = """import mmap, re, sys
with open(sys.argv[1], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
    steps = sum(1 for _ in re.finditer(rb'"Profile(?:r)?Step#\\d+', m))
    meta = sum(1 for _ in re.finditer(rb'"ph"\\s*:\\s*"M"', m))
print(steps, "markers,", meta, "metadata events")"""
_PIECES = """import glob, os, sys
from traceconv.batch.jobs import convert_one, plan
pieces = sorted(glob.glob(os.path.join(sys.argv[2], "*.json")))
pieces = [p for p in pieces if not p.endswith("manifest.json")]
out = os.path.join(sys.argv[2], "converted")
os.makedirs(out)
for task in plan(pieces, out, "perfetto"):
    result = convert_one(task)
    if result.status != "ok":
        raise SystemExit(result.error)
print(len(pieces), "pieces")"""


def bounds(trace: str, target: str, runs: int) -> None:
    """The floor of a split-then-convert run, part by part (see the module docstring)."""
    py = [sys.executable, "-c"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        pieces = out / "pieces"
        rows = {
            "convert (taskset -c 0)": median(["taskset", "-c", "0", sys.executable, "-m",
                                              "traceconv", trace, "-o",
                                              str(out / "whole.pftrace")], runs),
            "split (both passes)": median([sys.executable, "-m", "traceconv", "split", trace,
                                           "--by", "step", "-o", str(pieces), "--no-overview",
                                           "--target-size", target], runs),
        }
        rows |= {
            "its first pass": median([*py, _FIRST_PASS, trace], runs),
            "every event read once": median([*py, _BARE_READ, trace], runs),
            "marker scan of the bytes": median([*py, _MARKER_SCAN, trace], runs),
            "its pieces, one process": median([*py, _PIECES, trace, str(pieces)], 1,
                                              pieces / "converted"),
        }
    _table(rows)
    base = rows["convert (taskset -c 0)"]["cpu"]
    pieces_cpu = rows["its pieces, one process"]["cpu"]
    two_pass = rows["split (both passes)"]["cpu"] + pieces_cpu
    one_read = rows["every event read once"]["cpu"] + pieces_cpu
    print(f"floor, this split then its pieces: {two_pass / base:.2f}x CPU; "
          f"one read of the events then the pieces: {one_read / base:.2f}x "
          "(before any cluster's own cost)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--bar-only", action="store_true",
                        help="only the two commands the issue's bar compares (a 10 M-event "
                             "trace: the others take as long again)")
    parser.add_argument("--bounds", action="store_true",
                        help="what any split-then-convert run must spend, part by part")
    parser.add_argument("--target-size", default="333MB",
                        help="with --bounds: the pieces' size (333MB: what --then picks for "
                             "2 workers on the 10 M-event trace)")
    parser.add_argument("--piece-by-piece", action="store_true",
                        help="a conversion piece by piece against the whole one")
    parser.add_argument("--no-whole", action="store_true",
                        help="with --piece-by-piece: leave out the whole conversion")
    args = parser.parse_args()
    if args.piece_by_piece:
        piece_by_piece(args.trace, args.runs, not args.no_whole)
        return
    if args.bounds:
        bounds(args.trace, args.target_size, args.runs)
        return
    tc = [sys.executable, "-m", "traceconv"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        rows = {
            "convert (taskset -c 0)": median(["taskset", "-c", "0", *tc, args.trace, "-o",
                                              str(out / "whole.pftrace")], args.runs),
            "split --then perfetto, dask -j 2": median(
                [*tc, "split", args.trace, "--by", "step", "-o", str(out / "d"), "--then",
                 "perfetto", "--engine", "dask", "-j", "2", "--no-overview"], args.runs,
                out / "d"),
        }
        if args.bar_only:
            _table(rows)
            return
        rows |= {
            "... --target-size 0 (per step)": median(
                [*tc, "split", args.trace, "--by", "step", "-o", str(out / "s"), "--then",
                 "perfetto", "--engine", "dask", "-j", "2", "--no-overview",
                 "--target-size", "0"], 1, out / "s"),
            "split --by step": median([*tc, "split", args.trace, "--by", "step", "-o",
                                       str(out / "p"), "--no-overview"], args.runs, out / "p"),
            "overview": median([*tc, "overview", args.trace, "-o", str(out / "ov.pftrace")],
                               args.runs),
        }
        size = (out / "ov.pftrace").stat().st_size
    _table(rows)
    print(f"overview: {size / 1e6:.1f} MB, "
          f"{rows['overview']['wall'] / rows['split --by step']['wall']:.2f}x split's wall time")


def _table(rows: dict[str, dict]) -> None:
    base = rows["convert (taskset -c 0)"]
    print(f"{'command':36} {'wall s':>7} {'cpu s':>7} {'wall x':>7} {'cpu x':>6}  runs")
    for name, r in rows.items():
        print(f"{name:36} {r['wall']:7.1f} {r['cpu']:7.1f} {r['wall'] / base['wall']:7.2f} "
              f"{r['cpu'] / base['cpu']:6.2f}  {r['runs']} {json.dumps(r['out'])}")


if __name__ == "__main__":
    main()
