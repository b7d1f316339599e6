"""Round trips are idempotent (issue 15): Chrome -> traceconv -> Chrome -> traceconv, three
times, holds the same counts, names and device placement as the first reading.

The reference is the first reading of the producer's own file; each later pass reads the
Chrome JSON that traceconv wrote.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.chrome import write

DATA = Path(__file__).parent / "data"


def shape(trace):
    """What a round trip must keep: counts, process names, and where each category runs."""
    s, strings = trace.slices, trace.strings.strings
    placement = Counter((trace.processes[trace.tracks[t].process].kind.name, strings[c])
                        for t, c in zip(s.track, s.category, strict=True))
    return trace.counts(), sorted(p.name for p in trace.processes), placement


def passes(path: Path, tmp_path: Path, count: int = 3) -> list:
    trace = traceconv.load(path)
    shapes = []
    for i in range(count):
        buffer = io.BytesIO()
        write(trace, buffer)
        out = tmp_path / f"pass{i}.json"
        out.write_bytes(buffer.getvalue())
        trace = traceconv.load(out)
        shapes.append(shape(trace))
    return shapes


def test_paddle_counter_samples_are_not_derived_again(tmp_path: Path):
    source = DATA / "paddle" / "small_2.6.2.paddle_trace.json.gz"
    first = traceconv.load(source).counts()
    shapes = passes(source, tmp_path)
    # 928 [memory] records, each with the allocated and the reserved total (independent count
    # of the file's instants x 2)
    assert first["counter_samples"] == 2 * first["instants"] == 1856
    assert [s[0]["counter_samples"] for s in shapes] == [1856, 1856, 1856]
    assert shapes[0] == shapes[1] == shapes[2]


def test_kineto_process_names_gain_no_pid_suffix(tmp_path: Path):
    shapes = passes(DATA / "torch" / "rank-0.pt.trace.json", tmp_path)
    names = shapes[0][1]
    assert "python (pid 17691)" in names and not any(n.count("(pid") > 1 for n in names)
    assert shapes[0] == shapes[1] == shapes[2]


def test_paddle_timeline_memcpy_stays_on_the_device(tmp_path: Path):
    source = DATA / "paddle" / "timeline" / "legacy_gpu_synthetic.timeline.json"
    original = shape(traceconv.load(source))
    assert original[2][("DEVICE", "memcpy")] == 4
    shapes = passes(source, tmp_path)
    assert all(s[2] == original[2] for s in shapes)
    assert shapes[0] == shapes[1] == shapes[2]
    assert traceconv.load(tmp_path / "pass2.json").metadata.framework == "PaddlePaddle"


@pytest.mark.parametrize("name", ["torch/kineto_after_fix_trace.json",
                                  "megengine/infer_traced_chrome_timeline.json"])
def test_other_producers_are_stable(name: str, tmp_path: Path):
    shapes = passes(DATA / name, tmp_path)
    assert shapes[0] == shapes[1] == shapes[2]
