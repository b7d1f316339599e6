"""Benchmark: command-line start-up against importing click and rich (the yardstick).

    python benchmarks/bench_startup.py            # 20 runs each, alternating
    python benchmarks/bench_startup.py 50

Prints the median wall time of ``traceconv --version`` and of ``python -c "import click,
rich"``, and their ratio (target: at most 2). Runs alternate so that a drift of the
machine's speed hits both sides alike.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time


def timed(command: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main(runs: int = 20) -> None:
    script = shutil.which("traceconv")
    version = [script, "--version"] if script else [sys.executable, "-m", "traceconv",
                                                      "--version"]
    yardstick = [sys.executable, "-c", "import click, rich"]
    timed(version), timed(yardstick)   # warm the file cache
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(timed(version))
        theirs.append(timed(yardstick))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"traceconv --version        {a * 1000:7.1f} ms (median of {runs})")
    print(f"python -c 'import click, rich' {b * 1000:7.1f} ms")
    print(f"ratio                      {a / b:7.2f} (target <= 2)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
