"""``python -m benchmarks.fuzz``: a fuzz campaign over every reader and writer.

    python -m benchmarks.fuzz --seconds 3600 --out fuzz-out      # the long run (random seed)
    python -m benchmarks.fuzz --per-target 200 --seed 0          # what the test suite runs

Prints one line per new crash class and the figures at the end; with ``--out``, minimised
reproducers (``*.input`` + ``*.txt`` with the traceback) and ``figures.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .campaign import run_campaign


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, help="run round-robin for this long")
    parser.add_argument("--per-target", type=int, help="inputs per target (deterministic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds an input may take before it counts as a hang")
    parser.add_argument("--memory", type=int, default=2048, help="MiB per worker (RLIMIT_AS)")
    parser.add_argument("--target", action="append", dest="targets",
                        help="a reader format or check:perfetto / check:chrome (repeatable)")
    parser.add_argument("--out", type=Path, help="folder for reproducers and figures.json")
    args = parser.parse_args()
    if args.seconds is None and args.per_target is None:
        parser.error("say --seconds or --per-target")
    figures = run_campaign(per_target=args.per_target, seconds=args.seconds, seed=args.seed,
                           timeout=args.timeout, memory_limit=args.memory << 20, out=args.out,
                           targets=args.targets, log=lambda line: print(line, flush=True))
    print(json.dumps(figures.as_dict()["inputs"], indent=1))
    for target, outcomes in sorted(figures.outcomes.items()):
        slow = figures.slowest.get(target, (0.0, 0))
        print(f"{target:24} {dict(outcomes)}  slowest {slow[0]:.2f} s ({slow[1]:,} bytes)")
    print(f"crash classes: {len(figures.crashes)}")
    sys.exit(1 if figures.crashes else 0)


if __name__ == "__main__":
    main()
