"""A trace written window by window (``write(..., window_slices=N)``, what the Perfetto
writer does above :data:`~traceconv.formats.perfetto.writer.WINDOW_SLICES` slices) is the
trace written whole.

Expected values: the whole-trace writer's output, read back through the Perfetto reader
(every slice, instant, counter sample, flow and memory block, with the tracks they are on)
and loaded in the real trace_processor (its ``slice``, ``flow`` and ``counter`` tables).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.perfetto.writer import write

SAMPLES = Path(__file__).parent.parent / "samples"
REAL = ["torch/cnn_step5.pt.trace.json", "torch/resnet18_train_cuda.pt.trace.json.gz",
        "paddle/small_3.3.1.paddle_trace.pb", "perfetto/nowinandroid_cut.perfetto-trace",
        "megengine/convnet_lar_embed_profile.json"]


def written(trace: traceconv.Trace, **options) -> bytes:
    out = io.BytesIO()
    write(trace, out, **options)
    return out.getvalue()


def content(data: bytes, tmp_path: Path) -> tuple:
    """Everything a reader gets back, with tracks named by process and track name (their
    ids follow the order lanes were made in)."""
    path = tmp_path / "t.pftrace"
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert traceconv.validate(trace) == []
    def where(track: int) -> tuple[str, str]:
        return trace.processes[trace.tracks[track].process].name, trace.tracks[track].name
    def args(values) -> str:
        return repr(sorted((values or {}).items()))
    def at(row: int) -> tuple:
        s = trace.slice(row)
        return where(s.track), s.start, s.name
    return (sorted((where(s.track), s.start, s.dur, s.name, s.category, args(s.args))
                   for s in trace.iter_slices()),
            sorted((where(i.track), i.ts, i.name, args(i.args)) for i in trace.iter_instants()),
            sorted((where(c.track), c.ts, c.value) for c in trace.iter_counter_samples()),
            sorted((at(f.source), at(f.target), f.category, f.name) for f in trace.iter_flows()),
            sorted(map(repr, trace.memory)),
            sorted(t.name for t in trace.tracks))


@pytest.mark.parametrize("sample", REAL)
@pytest.mark.parametrize("window", [40, 333])
def test_window_by_window_is_the_whole_trace(sample: str, window: int, tmp_path: Path):
    trace = traceconv.load(SAMPLES / sample)
    whole = written(trace)
    windowed = written(trace, window_slices=window)
    if len(trace.slices) > window:   # (the windowed path ran: its sequences are cut elsewhere)
        assert whole != windowed
    assert content(windowed, tmp_path) == content(whole, tmp_path)


def test_the_writers_findings_are_the_same(tmp_path: Path):
    trace = traceconv.load(SAMPLES / "torch/cnn_step5.pt.trace.json")
    found = [{d.code: d.count for d in write(trace, io.BytesIO(), **options)}
             for options in ({}, {"window_slices": 100})]
    assert found[0] == found[1] and found[0]["nesting.overlap_moved"] > 0


QUERIES = ["select count(*), sum(dur), count(distinct track_id), max(depth) from slice",
           "select count(*) from flow",
           "select count(*), sum(value) from counter",
           "select s.ts, s.dur, s.name, s.depth, t.name track, th.tid from slice s "
           "join track t on s.track_id = t.id left join thread_track tt on tt.id = t.id "
           "left join thread th using (utid) order by s.ts, s.name, s.dur, s.depth, track"]


@pytest.mark.parametrize("sample", REAL[:2])
def test_trace_processor_sees_the_same_trace(sample: str, trace_processor):
    trace = traceconv.load(SAMPLES / sample)
    seen = []
    for options in ({}, {"window_slices": 50}):
        trace_processor.load(written(trace, **options))
        assert trace_processor.bad_stats() == []
        seen.append([list(map(repr, trace_processor.query(q))) for q in QUERIES])
    assert seen[0] == seen[1]
