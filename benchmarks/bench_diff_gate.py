"""Benchmark: ``traceconv diff A/ B/ --fail-if total:+3%`` of two folders of 100 ``split``
pieces each (the 200-step CPU run of ``../shared``, steps 2-101 against 102-201), the way CI
would run the gate; issue 36 asks for at most 15 s on the 2-core machine.

The split runs once (not timed); the diff runs in a fresh process (imports included).

    python benchmarks/bench_diff_gate.py            # ../shared's 200-step CPU trace
    python benchmarks/bench_diff_gate.py TRACE      # any trace with 200 or more steps
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_convert import COMMAND, TORCH, measure  # noqa: E402

LARGE = TORCH / "large" / "large_cpu_200steps.pt.trace.json.gz"
# the command line as CI runs it (a gate that fires, exit 3, stops the benchmark)
DIFF = COMMAND.format(args=["diff", "{a}", "{b}", "--fail-if", "total:+3%", "--json"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=str(LARGE))
    args = parser.parse_args()
    from traceconv.splitting import split

    with tempfile.TemporaryDirectory() as tmp:
        manifest = split(args.trace, Path(tmp) / "pieces", by="step")
        steps = [p["file"] for p in manifest["pieces"] if p["label"].startswith("step")]
        if len(steps) < 200:
            raise SystemExit(f"{args.trace}: {len(steps)} steps; the benchmark needs 200")
        sides = []
        for name, chosen in (("a", steps[:100]), ("b", steps[100:200])):
            folder = Path(tmp) / name
            folder.mkdir()
            for piece in chosen:
                os.link(Path(tmp) / "pieces" / piece, folder / piece)
            sides.append(str(folder))
        result = measure(DIFF.format(a=sides[0], b=sides[1]))
    print(f"diff of two 100-piece folders: {result['wall']:.1f} s wall, "
          f"{result['cpu']:.1f} s CPU, {result['rss_mb']:.0f} MB peak")


if __name__ == "__main__":
    main()
