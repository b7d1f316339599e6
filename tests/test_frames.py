"""Trace.to_pandas()/to_arrow(): HTA-shaped frames, checked against the raw JSON events."""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import traceconv

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

HERE = Path(__file__).parent
MULTI_STREAM = HERE / "data" / "torch" / "hta_event_sync_multi_stream.json.gz"
CNN = HERE.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    """The complete (X) events of the HTA multi-stream trace, read with json alone."""
    with gzip.open(MULTI_STREAM) as stream:
        events = json.load(stream)["traceEvents"]
    return [e for e in events if e.get("ph") == "X"]


@pytest.fixture(scope="module")
def frame():
    return traceconv.load(MULTI_STREAM).to_pandas()


def test_one_row_per_slice_with_names_and_times_resolved(raw, frame):
    assert len(frame) == len(raw) == 57
    assert frame["ts"].dtype == np.int64 and frame["dur"].dtype == np.int64
    got = Counter(zip(frame["name"], frame["cat"], frame["dur"], strict=True))
    want = Counter((e["name"], e["cat"], round(e["dur"] * 1000)) for e in raw)
    assert got == want
    # one clock: the gaps between events are the source's, to the ns
    first = min(e["ts"] for e in raw)
    assert sorted((frame["ts"] - frame["ts"].min()).tolist()) == sorted(
        round((e["ts"] - first) * 1000) for e in raw)


def test_hta_columns_stream_correlation_external_id(raw, frame):
    first, lo = min(e["ts"] for e in raw), frame["ts"].min()

    def expected(e: dict) -> tuple:
        args = e.get("args", {})
        device = e["pid"] == 0   # Kineto writes device work under pid = device index
        pid, tid = (x if isinstance(x, int) else -1 for x in (e["pid"], e["tid"]))
        return (e["name"], round((e["ts"] - first) * 1000), pid, tid,
                e["tid"] if device else -1, args.get("correlation", -1),
                args.get("External id", -1))

    got = Counter(zip(frame["name"], frame["ts"] - lo, frame["pid"], frame["tid"],
                      frame["stream"], frame["correlation"], frame["external_id"], strict=True))
    assert got == Counter(expected(e) for e in raw)
    assert frame.groupby("stream").size().to_dict() == {-1: 50, 20: 2, 24: 3, 28: 2}


def brute_force_depth(events: list[dict], e: dict) -> int:
    """How many other events on the same thread are open when ``e`` starts (those that
    start first, or at the same time and last longer)."""
    def order(x):
        return (x["ts"], -x["dur"])
    return sum(1 for o in events if o is not e and (o["pid"], o["tid"]) == (e["pid"], e["tid"])
               and order(o) < order(e) and o["ts"] + o["dur"] > e["ts"])


def test_depth_matches_a_brute_force_count(raw, frame):
    want = Counter((e["name"], round(e["dur"] * 1000), brute_force_depth(raw, e)) for e in raw)
    got = Counter(zip(frame["name"], frame["dur"], frame["depth"], strict=True))
    assert got == want
    assert frame["depth"].max() == 2


def test_filters_equal_pandas_masks_on_the_whole_frame(frame):
    trace = traceconv.load(MULTI_STREAM)
    lo = int(frame["ts"].min())
    start, end = lo + 2_000_000, lo + 6_000_000
    window = trace.to_pandas(start=start, end=end)
    overlaps = frame[(frame["ts"] < end) & (frame["ts"] + frame["dur"] > start)]
    assert window["row"].tolist() == overlaps["row"].tolist() and 0 < len(window) < len(frame)
    kernels = trace.to_pandas(category=["kernel", "gpu_memset"])
    assert kernels["row"].tolist() == frame[frame["cat"].isin(["kernel", "gpu_memset"])][
        "row"].tolist()
    assert len(kernels) == 6
    stream = frame[frame["stream"] == 24]
    by_id = trace.to_pandas(track=int(stream["track"].iloc[0]))
    by_name = trace.to_pandas(track=str(stream["track_name"].iloc[0]))
    assert by_id["row"].tolist() == by_name["row"].tolist() == stream["row"].tolist()
    assert trace.to_pandas(name="no such op").empty


def test_iter_slices_by_name_finds_the_same_rows():
    trace = traceconv.load(CNN)
    every = [s.index for s in trace.iter_slices() if s.name == "aten::conv2d"]
    assert [s.index for s in trace.iter_slices(name="aten::conv2d")] == every
    assert len(every) == 6   # 2 conv layers x the 3 recorded steps
    track = trace.slice(every[0]).track
    assert [s.index for s in trace.iter_slices(track=track, name="aten::conv2d")] == [
        i for i in every if trace.slice(i).track == track]


def test_arrow_holds_the_same_table(frame):
    table = traceconv.load(MULTI_STREAM).to_arrow()
    assert table.schema.field("name").type == pa.dictionary(pa.int32(), pa.string())
    assert table.to_pandas().astype({"name": str, "cat": str, "track_name": str,
                                     "process": str}).equals(
        frame.astype({"name": str, "cat": str, "track_name": str, "process": str}))


def test_args_as_columns_on_request(raw):
    trace = traceconv.load(MULTI_STREAM)
    assert not any(c.startswith("args.") for c in trace.to_pandas().columns)
    some = trace.to_pandas(args=["Ev Idx"])
    assert [c for c in some.columns if c.startswith("args.")] == ["args.Ev Idx"]
    every = trace.to_pandas(args=True)
    keys = {k for e in raw for k in e.get("args", {})}
    assert {c.removeprefix("args.") for c in every.columns if c.startswith("args.")} == keys


def test_memory_instants_counters_flows_frames():
    trace = traceconv.load(CNN)
    memory = trace.to_pandas("memory")
    assert len(memory) == 291 and str(memory["alloc_ns"].dtype) == "Int64"
    # live bytes from the frame alone: +size at alloc, -size at free; its peak is the
    # "Total Allocated" maximum that PyTorch's own [memory] events report
    changes = pd.concat([
        pd.DataFrame({"t": memory["alloc_ns"], "d": memory["size"]}).dropna(),
        pd.DataFrame({"t": memory["free_ns"], "d": -memory["size"]}).dropna()])
    live = changes.sort_values(["t", "d"]).groupby("t", sort=True)["d"].sum().cumsum()
    known_before = memory.loc[memory["alloc_ns"].isna(), "size"].sum()
    assert live.max() + known_before == 2_625_264
    flows = trace.to_pandas("flows")
    assert len(flows) == 48 and (flows["source_ts"] <= flows["target_ts"]).all()
    assert len(trace.to_pandas("instants")) == 570
    counters = trace.to_pandas("counters")
    assert len(counters) == len(trace.counters) and counters["value"].dtype == np.float64


def test_a_missing_pandas_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    trace = traceconv.load(MULTI_STREAM)
    with pytest.raises(ImportError, match=r"pip install 'traceconv\[pandas\]'"):
        trace.to_pandas()
