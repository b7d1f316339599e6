"""Step ownership as a property: on any layout of steps, launches and lagging kernels, each
kernel is in the cut of exactly the step whose host range holds its launch, and every
other kernel is counted apart.

The expected step of each kernel is worked out here from the generated numbers (which
step's [start, end) holds the launch start), not by the code under test.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.analysis.activity import Timeline
from traceconv.analysis.steps import select_steps
from traceconv.model import ProcessKind, Trace

# steps: (gap before, length) in ns; launches: (start, lag of the kernel after the launch)
STEPS = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 200)), min_size=1, max_size=5)
LAUNCHES = st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 600)), max_size=30)


def _trace(steps: list[tuple[int, int]], launches: list[tuple[int, int]]):
    t = Trace()
    host = t.add_track("main", process=t.add_process("python"))
    stream = t.add_track("stream 7", process=t.add_process("GPU 0", kind=ProcessKind.DEVICE))
    ranges, at = [], 0
    for number, (gap, length) in enumerate(steps, start=1):
        at += gap
        t.add_slice(host, at, length, f"ProfilerStep#{number}", "user_annotation")
        ranges.append((at, at + length))
        at += length
    for i, (start, lag) in enumerate(launches):
        launch = t.add_slice(host, start, 3, "cudaLaunchKernel", "cuda_runtime")
        t.add_flow(launch, t.add_slice(stream, start + 3 + lag, 5, f"k{i}", "kernel"))
    return t.freeze(), ranges


@pytest.mark.slow
@settings(max_examples=60)
@given(STEPS, LAUNCHES)
def test_each_kernel_in_the_step_of_its_launch(steps, launches):
    trace, ranges = _trace(steps, launches)
    owner = {f"k{i}": next((n for n, (lo, hi) in enumerate(ranges, start=1) if lo <= s < hi),
                           None) for i, (s, _) in enumerate(launches)}
    for number in range(1, len(ranges) + 1):
        cut = select_steps(trace, str(number))
        tl = Timeline(cut)
        kept = sorted(tl.names(tl.device_work()))
        assert kept == sorted(k for k, n in owner.items() if n == number)
        assert (cut.diagnostics.count("steps.device.unowned")
                == sum(n is None for n in owner.values()))
        assert len(kept) + cut.diagnostics.count("steps.device.other_steps") + (
            cut.diagnostics.count("steps.device.unowned")) == len(launches)
