"""Benchmark: memory-flow SVG render time and size against the number of blocks.

    python benchmarks/memflow_bench.py                    # synthetic 1k ... 100k blocks
    python benchmarks/memflow_bench.py trace.json.gz ...  # the blocks of real traces

Synthetic blocks imitate a caching allocator: power-of-two sizes in a few segments, short
activations and long-lived weights. Times are the render only (the trace is loaded first).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import traceconv  # noqa: E402
from traceconv.formats.memflow_svg import MemflowOptions, svg_text  # noqa: E402
from traceconv.model import MemoryBlock, Trace  # noqa: E402


def synthetic(n: int, seed: int = 0) -> Trace:
    """``n`` blocks in 4 segments 1 GiB apart; 10 % weights alive throughout."""
    rng = np.random.default_rng(seed)
    trace = Trace()
    sizes = 2 ** rng.integers(6, 22, n)
    segment = rng.integers(0, 4, n) << 30
    offsets = rng.integers(0, 1 << 26, n) & ~0xFFF
    starts = np.sort(rng.integers(0, 10**9, n))
    lives = rng.exponential(2e6, n).astype(np.int64)
    weights = rng.random(n) < 0.1
    for i in range(n):
        trace.add_memory_block(MemoryBlock(
            int(segment[i] + offsets[i]), int(sizes[i]),
            None if weights[i] else int(starts[i]),
            None if weights[i] else int(starts[i] + lives[i]), device="cuda:0",
            category="weight" if weights[i] else "activation", name=f"t{i}"))
    return trace


def measure(label: str, trace: Trace) -> None:
    began = time.perf_counter()
    text = svg_text(trace, MemflowOptions())
    elapsed = time.perf_counter() - began
    alone, merged = text.count('class="b"'), text.count('class="m"')
    print(f"{label:>40}  {len(trace.memory):>8,} blocks  {elapsed:6.2f} s  "
          f"{len(text) / 1e6:6.2f} MB  {alone:>7,} rects  {merged:>6,} merged cells")


def main(paths: list[str]) -> None:
    if paths:
        for path in paths:
            measure(Path(path).name, traceconv.load(path))
        return
    for n in (1_000, 10_000, 28_000, 100_000):
        measure(f"synthetic {n:,}", synthetic(n))


if __name__ == "__main__":
    main(sys.argv[1:])
