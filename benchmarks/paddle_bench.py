"""Benchmark: read and convert the large Paddle samples (old binary profile, its timeline.py
JSON, the new profiler's JSON and protobuf), each step in a fresh process for its own peak RSS.

    python benchmarks/paddle_bench.py            # the large samples in ../shared/samples/paddle
    python benchmarks/paddle_bench.py FILE...    # any Paddle outputs

Skips (exit 0) when the shared corpus is not beside the checkout and no file is given.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the checkout (or beside its parent, for a worktree under wt/)
CORPUS = next((c for c in (ROOT.parent / "shared" / "samples" / "paddle",
                           ROOT.parent.parent / "shared" / "samples" / "paddle") if c.is_dir()),
              ROOT.parent / "shared" / "samples" / "paddle")
LARGE = ("old_cpu_2.6.2_large/legacy_CPU_OpDetail_600steps.profile.gz",
         "old_cpu_2.6.2_large/legacy_CPU_OpDetail_600steps.timeline.json.gz",
         "new_cpu_2.6.2_large/large_time_*.paddle_trace.json.gz",
         "new_cpu_2.6.2_large/large_time_*.paddle_trace.pb")

# Prints {"wall": s, "rss_mb": MB, ...} as its last line.
STEP = """
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
import traceconv
t0 = time.perf_counter()
trace = traceconv.load({path!r})
read = time.perf_counter() - t0
out = dict(read_s=read, **{{k: v for k, v in trace.counts().items() if v}})
if {target!r}:
    t1 = time.perf_counter()
    traceconv.save(trace, {target!r})
    out.update(write_s=time.perf_counter() - t1, output_mb=os.path.getsize({target!r}) / 1e6)
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(path: Path, target: str) -> dict:
    code = STEP.format(root=str(ROOT), path=str(path), target=target)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    files = parser.parse_args().files
    if not files:
        if not CORPUS.is_dir():
            print(f"skipped: {CORPUS} not found and no file given")
            return 0
        files = [p for pattern in LARGE for p in sorted(CORPUS.glob(pattern))]
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            size = path.stat().st_size / 1e6
            read = run(path, "")
            perfetto = run(path, str(Path(tmp) / "out.pftrace"))
            chrome = run(path, str(Path(tmp) / "out.json"))
            print(f"{path.name} ({size:.1f} MB on disk)")
            print(f"  read      {read['read_s']:6.2f} s  peak RSS {read['rss_mb']:6.0f} MB  "
                  f"slices {read.get('slices', 0):,}  instants {read.get('instants', 0):,}  "
                  f"memory blocks {read.get('memory_blocks', 0):,}")
            for name, result in (("perfetto", perfetto), ("chrome", chrome)):
                print(f"  {name:<9} {result['write_s']:6.2f} s  peak RSS {result['rss_mb']:6.0f} MB"
                      f"  output {result['output_mb']:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
