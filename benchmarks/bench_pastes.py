"""Benchmark: the text readers are linear in the size of the log they are given.

Builds a training log of SIZE MB for each reader (Paddle: reports between glog lines, some
hard-wrapped at 80 columns; MIGraphX: perf reports one after the other, wrapped likewise),
reads it with ``traceconv.load`` in a fresh process (its own peak RSS), and prints the
CPU seconds per MB at 10 MB and at 100 MB and their ratio (1.0 = linear; CPU time, the
steadier measure on a shared machine).

    python benchmarks/bench_pastes.py                # 10 MB and 100 MB
    python benchmarks/bench_pastes.py --sizes 2 20   # smaller, for a quick look
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.paste_variants import hard_wrap  # noqa: E402

PADDLE = ROOT / "samples" / "paddle" / "report_gpu_before.txt"
MIGRAPHX = ROOT / "tests" / "data" / "migraphx" / "synthetic_resnet_perf_dialect_7.2.txt.gz"

STEP = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import traceconv
t0, c0 = time.perf_counter(), time.process_time()
trace = traceconv.load({path!r}, format={format!r})
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"wall_s": wall, "cpu_s": cpu, "stat_rows": trace.counts()["stat_rows"],
                  "slices": trace.counts()["slices"],
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def build_log(unit: str, size_mb: int, path: Path) -> int:
    """Write ``unit`` (one report and its noise) again and again up to ``size_mb``; return
    how many copies were written."""
    target = size_mb << 20
    copies = 0
    with path.open("w") as out:
        while out.tell() < target:
            out.write(unit)
            copies += 1
    return copies


def units() -> dict[str, str]:
    paddle = PADDLE.read_text()
    noise = "".join(f"I1122 09:32:54.{i:06d} 13408 executor.cc:187] step {i} loss 0.5\n"
                    for i in range(200))
    migraphx = gzip.decompress(MIGRAPHX.read_bytes()).decode()
    return {"paddle_report": noise + paddle + noise + hard_wrap(80)(paddle) + "\n",
            "migraphx": migraphx + "\n" + hard_wrap(80)(migraphx) + "\n"}


def run(path: Path, format: str) -> dict:
    code = STEP.format(root=str(ROOT), path=str(path), format=format)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=(10, 100), metavar=("SMALL", "BIG"))
    args = parser.parse_args()
    small, big = args.sizes
    with tempfile.TemporaryDirectory() as tmp:
        for format, unit in units().items():
            results = {}
            for size in (small, big):
                path = Path(tmp) / f"{format}_{size}MB.log"
                copies = build_log(unit, size, path)
                result = run(path, format)
                result["mb"] = path.stat().st_size / (1 << 20)
                result["copies"] = copies
                results[size] = result
                path.unlink()
                print(f"{format:14} {result['mb']:7.1f} MB  {result['wall_s']:7.2f} s  "
                      f"{result['cpu_s']:7.2f} CPU-s  "
                      f"{result['cpu_s'] / result['mb'] * 1000:6.1f} CPU-ms/MB  "
                      f"peak RSS {result['rss_mb']:7.0f} MB  stat rows {result['stat_rows']:,}"
                      f"  slices {result['slices']:,}")
            per_mb = [results[s]["cpu_s"] / results[s]["mb"] for s in (small, big)]
            print(f"{format:14} CPU time per MB at {big} MB / at {small} MB: "
                  f"{per_mb[1] / per_mb[0]:.2f} (1.0 = linear)")


if __name__ == "__main__":
    main()
