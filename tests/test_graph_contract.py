"""The op-graph attribute contract (traceconv.model.graph): int-ns spans on the trace clock,
the same times as the slices that executed the op, whichever reader made the graph."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import traceconv
from traceconv.model.graph import OP, OpSpan, op_spans

DATA = Path(__file__).parent / "data"
READERS = [DATA / "megengine" / "convnet_lar_embed_profile.json.gz",
           DATA / "migraphx" / "rocm7.2_perf_test_two_runs.txt"]


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.name)
def test_spans_are_int_ns_and_match_the_op_slices(path: Path):
    trace = traceconv.load(path)
    checked = 0
    for _, data in trace.graph.nodes(data=True):
        if data.get("kind") != OP:
            continue
        for place in ("device", "host"):
            for span in op_spans(data, place).values():
                assert isinstance(span, OpSpan)
                assert all(isinstance(v, int) for v in (span.start_ns, span.end_ns))
                assert span.kernel_ns is None or span.start_ns <= span.kernel_ns <= span.end_ns
                # the op's own slices hold the same interval on the same clock
                own = {(trace.slice(r).start, trace.slice(r).end) for r in data.get("slices", [])}
                assert (span.start_ns, span.end_ns) in own
                checked += 1
    assert checked >= 10
    assert not any("device_times" in d or "host_times" in d
                   for _, d in trace.graph.nodes(data=True))


def test_megengine_spans_are_the_source_seconds():
    """Independent of the reader: the device seconds of opr 134 in the raw JSON, as ns."""
    path = READERS[0]
    raw = json.loads(gzip.decompress(path.read_bytes()))
    trace = traceconv.load(path)
    offsets = trace.metadata.attributes["megengine.device_offset_ns"]
    for opr_id, places in list(raw["profiler"]["device"].items())[:20]:
        spans = op_spans(trace.graph.nodes[f"op/{opr_id}"], "device")
        for place, t in places.items():
            shift = offsets.get(place, 0)
            assert spans[place].start_ns == round(t["start"] * 1e9) + shift
            assert spans[place].dur_ns == round(t["end"] * 1e9) - round(t["start"] * 1e9)
