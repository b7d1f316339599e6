"""``split`` and ``overview`` read a chunk's times as numpy columns when a double holds
them all exactly, and event by event otherwise. The two ways must give the same pieces,
manifest and overview on any events: random traces mixing ints (some past 2^53), floats,
absent times, booleans, texts and object ids, step markers, launches, flows, ``B``/``E``
pairs and ``[memory]`` blocks are split and overviewed both ways (the column way turned
off by making :func:`~traceconv.splitting.events.exact_times` refuse every chunk), and the
files compared byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traceconv.splitting import events, split

pytestmark = pytest.mark.slow

# mostly plain numbers (some on window edges: steps start at 0 and 600, time windows every
# 300): a chunk holding one of the others is read event by event
TIMES = st.one_of(*[st.integers(0, 2_000)] * 3, st.integers(0, 20).map(lambda k: 100 * k),
                  st.floats(0, 2_000, allow_nan=False),
                  st.sampled_from([None, True, "12", 2**60, 2**53 + 1]))
DURATIONS = st.one_of(st.integers(0, 400), st.floats(0, 400, allow_nan=False),
                      st.sampled_from([None, False, -5, "3"]))
IDS = st.one_of(st.integers(1, 3), st.sampled_from(["7", {"local": 1}]))


@st.composite
def trace_events(draw: st.DrawFn) -> dict:
    kind = draw(st.sampled_from(["op", "step", "launch", "kernel", "memory", "B", "E", "s",
                                 "f", "i"]))
    e: dict = {"ts": draw(TIMES), "pid": draw(IDS), "tid": draw(IDS)}
    if kind in ("op", "step", "launch", "kernel"):
        e.update(ph="X", dur=draw(DURATIONS), cat="kernel" if kind == "kernel" else "cpu_op",
                 name={"step": f"ProfilerStep#{draw(st.integers(1, 4))}"}.get(kind, kind))
        if kind in ("launch", "kernel"):
            e["args"] = {"correlation": draw(st.integers(1, 6))}
    elif kind == "memory":
        e.update(ph="i", s="t", name="[memory]", args={
            "Addr": draw(st.integers(1, 4)), "Bytes": draw(st.sampled_from([64, -64, 0, 128])),
            "Device Type": 1, "Device Id": 0, "Total Allocated": draw(st.integers(0, 999))})
    elif kind in ("s", "f"):
        e.update(ph=kind, cat="ac2g", name="launch", id=draw(st.integers(1, 6)), bp="e")
    else:
        e.update(ph=kind, name=f"{kind}-event")
    return e


STEPS = [{"ph": "X", "name": f"ProfilerStep#{n}", "cat": "cpu_op", "ts": ts, "dur": 100,
          "pid": 1, "tid": 1} for n, ts in ((1, 0), (2, 600))]
TRACES = st.lists(trace_events(), min_size=1, max_size=60).map(lambda es: [*STEPS, *es])


def _outputs(path: Path, out: Path, by: str) -> dict[str, bytes]:
    split(str(path), str(out), by=by, overview=True)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # (the overview's and the sizes' floats go through events.exact_times too)
    monkeypatch.setattr(events, "exact_times", lambda values: None)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=TRACES, by=st.sampled_from(["step", "time=300us"]))
def test_columns_and_event_by_event_split_the_same(tmp_path_factory, trace, by) -> None:
    folder = tmp_path_factory.mktemp("columns")
    path = folder / "trace.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1,
                                                 "args": {"name": "python"}}, *trace]}))
    try:
        columns = _outputs(path, folder / "columns", by)
    except Exception as exc:   # (a trace with no step: both ways must refuse it alike)
        columns = {"error": str(exc).replace(str(folder / "columns"), "OUT").encode()}
    with pytest.MonkeyPatch.context() as patch:
        _one_at_a_time(patch)
        try:
            each = _outputs(path, folder / "each", by)
        except Exception as exc:
            each = {"error": str(exc).replace(str(folder / "each"), "OUT").encode()}
    assert columns == each


def test_the_column_way_is_taken_on_a_real_trace(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """(else the test above would compare the event-by-event way with itself)"""
    taken: list[bool] = []
    real = events.exact_times
    monkeypatch.setattr(events, "exact_times", lambda values: taken.append(
        real(values) is not None) or real(values))
    split(str(Path(__file__).resolve().parent.parent / "samples" / "torch"
              / "cnn_step5.pt.trace.json"), str(tmp_path / "out"), by="step")
    assert taken and all(taken)
