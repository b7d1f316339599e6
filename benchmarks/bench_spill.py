"""Benchmark: ``traceconv IN -o OUT.pftrace`` with the args' texts in memory and on disk
(``--no-spill-args`` / ``--spill-args``): peak RSS, CPU and wall, and whether the two
outputs are the same bytes.

Each conversion runs the command line in a fresh Python process (``bench_convert.measure``:
its own ``VmHWM``, imports included), the in-memory one first.

    python benchmarks/bench_spill.py TRACE.json               # any Chrome/Kineto trace
    python benchmarks/bench_spill.py --big 10 --keep /tmp/bench   # the 1 M-event CPU trace ×10

``--big N`` writes the 1 M-event CPU trace of ``../shared`` N times over, each copy after the
previous in time (``bench_convert.multiply``: 10 M events, 2.7 GB of JSON for N = 10) into
``--keep DIR`` (reused when it is there) or a temporary folder; the outputs go beside it.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_convert import COMMAND, CORPUS, compile_bytecode, measure, multiply  # noqa: E402

MODES = ("--no-spill-args", "--spill-args")


def convert(path: Path, out: Path, mode: str) -> dict:
    """One conversion in a fresh process: wall, cpu (s) and rss_mb (its peak)."""
    return measure(COMMAND.format(args=[str(path), "-o", str(out), mode]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", help="Chrome/Kineto trace (.json or .json.gz)")
    parser.add_argument("--big", type=int, metavar="N", help="the 1 M-event CPU trace ×N")
    parser.add_argument("--keep", metavar="DIR", help="where --big writes (and reuses) it")
    args = parser.parse_args()
    if (args.trace is None) == (args.big is None):
        parser.error("give a trace or --big N")
    compile_bytecode()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench_spill_"))
    folder.mkdir(parents=True, exist_ok=True)
    path = Path(args.trace) if args.trace else folder / f"cpu_x{args.big}.json"
    if not path.exists():
        multiply(CORPUS, path, args.big)
    outs = [folder / f"out{mode.replace('-', '_')}.pftrace" for mode in MODES]
    print(f"{path.name}: {path.stat().st_size / 1e9:.2f} GB of JSON")
    print(f"{'mode':18} {'peak RSS MB':>12} {'CPU s':>8} {'wall s':>8}")
    for mode, out in zip(MODES, outs, strict=True):
        r = convert(path, out, mode)
        print(f"{mode:18} {r['rss_mb']:12.0f} {r['cpu']:8.1f} {r['wall']:8.1f}", flush=True)
    print("same .pftrace bytes:", filecmp.cmp(*outs, shallow=False))
    for out in outs:
        out.unlink()


if __name__ == "__main__":
    main()
