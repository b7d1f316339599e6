"""Chrome / Kineto JSON → model, on real traces: every event is in the model or counted."""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.formats.chrome.stream import read_document
from traceconv.model import ProcessKind, TrackKind

DATA = Path(__file__).parent / "data"
SAMPLES = Path(__file__).parent.parent / "samples"


def raw_events(path: Path) -> list[dict]:
    data = path.read_bytes()
    data = gzip.decompress(data) if path.suffix == ".gz" else data
    doc = orjson.loads(data)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def phases(path: Path) -> Counter:
    return Counter(e.get("ph") for e in raw_events(path) if isinstance(e, dict))


CHROME_PATTERNS = ("torch/*.pt.trace.json*", "torch/hta_*.json.gz", "torch/kineto*.json*",
                   "megengine/*chrome_timeline.json", "paddle/*.paddle_trace.json*",
                   "paddle/*.timeline.json*")
ALL_CHROME = sorted({*(p for pattern in CHROME_PATTERNS for p in DATA.glob(pattern)),
                     *SAMPLES.glob("torch/*.pt.trace.json")})


@pytest.mark.slow
@pytest.mark.parametrize("path", ALL_CHROME, ids=lambda p: p.name)
def test_every_event_is_modelled_or_counted(path: Path):
    """X/B-E/i/C/s-f/M events of the file all land somewhere; the rest are diagnostics."""
    trace = traceconv.load(path)
    ph = phases(path)
    memory_x = sum(1 for e in raw_events(path) if e.get("ph") == "X" and e.get("name") == "[memory]")
    diag = trace.diagnostics
    dropped = sum(d.count for d in diag if d.kind == "dropped" and not d.code.startswith(
        ("chrome.flow", "chrome.end_without")))
    assert len(trace.slices) == ph["X"] - memory_x + ph["B"] - diag.count("chrome.end_without_begin") - dropped
    assert len(trace.instants) == ph["i"] + ph["I"] + ph["R"] + memory_x + ph["n"]
    flow_points = ph["s"] + ph["t"] + ph["f"]
    bound = flow_points - diag.count("chrome.flow_unbound") - diag.count("chrome.flow_dangling")
    correlation = diag.count("kineto.flows_from_correlation")
    assert len(trace.flows) - correlation <= bound
    assert trace.counts()["span_ns"] > 0


def test_kineto_cnn_trace(samples: Path):
    path = samples / "torch" / "cnn_step5.pt.trace.json"
    trace = traceconv.load(path)
    assert trace.metadata.attributes["flavour"] == "kineto"
    assert trace.metadata.framework == "PyTorch"
    assert trace.metadata.clock == "unix epoch"
    assert trace.metadata.clock_base_ns == 1790857026000000000
    counts = trace.counts()
    assert (counts["slices"], counts["instants"], counts["flows"]) == (2725, 570, 48)
    # ts are µs relative to baseTimeNanoseconds: the first ProfilerStep, exactly to the ns
    raw = next(e for e in raw_events(path) if e.get("name", "").startswith("ProfilerStep#"))
    step = next(trace.iter_slices(name=raw["name"]))
    assert step.start == 1790857026000000000 + round(raw["ts"] * 1000)
    assert step.dur == round(raw["dur"] * 1000)
    # all 48 flows are fwdbwd: forward op → backward op
    assert {f.category for f in trace.iter_flows()} == {"fwdbwd"}
    host = [p for p in trace.processes if p.kind is ProcessKind.HOST]
    assert host[0].name.startswith("python (pid ")


def test_kineto_memory_pairs(samples: Path):
    """[memory] events pair by address into blocks; the live-bytes counter follows them."""
    path = samples / "torch" / "cnn_step5.pt.trace.json"
    events = [e for e in raw_events(path) if e.get("name") == "[memory]"]
    allocs = sum(1 for e in events if e["args"]["Bytes"] > 0)
    live: set[int] = set()
    frees_before = 0
    for e in sorted(events, key=lambda e: e["ts"]):
        if e["args"]["Bytes"] > 0:
            live.add(e["args"]["Addr"])
        elif e["args"]["Addr"] in live:
            live.discard(e["args"]["Addr"])
        else:
            frees_before += 1
    trace = traceconv.load(path)
    assert len(trace.memory) == allocs + frees_before
    assert sum(1 for b in trace.memory if b.free_ns is None) == len(live)
    assert all(b.device == "CPU" for b in trace.memory)
    # every allocation happens inside an op: the innermost slice around it owns the block
    owned = [b for b in trace.memory if b.alloc_ns is not None]
    assert all(b.owner_name for b in owned)
    assert sum(b.owner_name == "aten::empty" for b in owned) == 87
    counters = {t.name: t for t in trace.tracks if t.kind is TrackKind.COUNTER}
    assert set(counters) == {"CPU live bytes", "CPU allocated (allocator)"}
    assert {t.unit for t in counters.values()} == {"bytes"}
    # (the allocator's own totals, as each event states them: CPU's reserved is 0, no cache)
    allocator = counters["CPU allocated (allocator)"].id
    stated = [c.value for c in trace.iter_counter_samples() if c.track == allocator]
    assert stated == [e["args"]["Total Allocated"]
                      for e in sorted(events, key=lambda e: e["ts"])]


def test_kineto_gpu_trace_flows_and_device_namespacing(data: Path):
    trace = traceconv.load(data / "torch" / "hta_event_sync.json.gz")
    devices = [p for p in trace.processes if p.kind is ProcessKind.DEVICE]
    assert [p.name for p in devices] == ["GPU 0"]
    streams = sorted(t.name for t in trace.tracks if t.process == devices[0].id)
    assert streams == ["Device 0", "stream 7"]
    flows = [(trace.slice(f.source).name, trace.slice(f.target).name) for f in trace.iter_flows()]
    # 7 s/f pairs + 2 host→device sync chains (f on host, f on device) + 1 by correlation id
    assert len(flows) == 10
    assert ("cudaLaunchKernel", flows[0][1]) == flows[0] and "Kernel" not in flows[0][1]
    assert trace.diagnostics.count("chrome.flow_dangling") == 3


@pytest.mark.slow
def test_kineto_2021_legacy_names(data: Path):
    trace = traceconv.load(data / "torch" / "kineto2021_resnet50.pt.trace.json.gz")
    cats = Counter(s.category for s in trace.iter_slices())
    assert cats["cpu_op"] == 23646 and cats["cuda_runtime"] == 11923 and cats["kernel"] == 8772
    assert "Operator" not in cats
    # 9096 legacy "async"/"launch" flows, all bound (string tids "25738" = int 25738)
    assert len(trace.flows) == 9096 and trace.diagnostics.count("chrome.flow_unbound") == 0
    assert {f.category for f in trace.iter_flows()} == {"ac2g"}
    threads = [t for t in trace.tracks if t.kind is TrackKind.THREAD]
    assert sorted(t.name for t in threads) == ["PyTorch Profiler", "thread 25738 (python)",
                                                "thread 25772 (python)"]
    assert trace.metadata.source_version.endswith("(2021 legacy names)")


def test_distributed_rank_and_merge(data: Path):
    ranks = [traceconv.load(data / "torch" / f"rank-{r}.pt.trace.json") for r in range(4)]
    assert [t.metadata.rank for t in ranks] == [0, 1, 2, 3]
    assert ranks[0].metadata.attributes["distributedInfo"]["world_size"] == 4
    from traceconv.analysis.merge import merge
    merged = merge(ranks)
    assert merged.counts()["slices"] == sum(len(t.slices) for t in ranks)
    assert {p.name.split(":")[0] for p in merged.processes} == {f"rank {r}" for r in range(4)}


def test_python_exporter_memory_as_x(data: Path):
    trace = traceconv.load(data / "torch" / "transformer_train.pyexport.pt.trace.json.gz")
    assert trace.diagnostics.count("chrome.memory_event_as_slice") == 1835
    assert not any(s.name == "[memory]" for s in trace.iter_slices())


def test_megengine_chrome_timeline(data: Path):
    trace = traceconv.load(data / "megengine" / "infer_traced_chrome_timeline.json")
    ph = phases(data / "megengine" / "infer_traced_chrome_timeline.json")
    assert len(trace.counters) == ph["C"]
    # unsorted B/E pairs all match; plus the X events
    assert ph["B"] == ph["E"] == 174
    assert len(trace.slices) == ph["B"] + ph["X"]
    assert trace.diagnostics.count("chrome.end_without_begin") == 0


def test_paddle_profiler_json(data: Path):
    trace = traceconv.load(data / "paddle" / "static_2.6.2.paddle_trace.json.gz")
    assert trace.metadata.attributes["flavour"] == "paddle-profiler"
    assert trace.diagnostics.count("paddle.duration_suffix") == 1140
    assert trace.diagnostics.count("chrome.empty_event") == 1
    names = {t.name for t in trace.tracks}
    assert {"MainThread (Python)", "MainThread (C++)", "HostTasks_thread_1 (C++)"} <= names
    assert next(trace.iter_slices(name="ProfileStep#1")).dur == 15070005


def test_paddle_gpu_json_device_and_flows(data: Path):
    trace = traceconv.load(data / "paddle" / "new_gpu_synthetic.paddle_trace.json")
    kernel = next(s for s in trace.iter_slices() if s.category == "Kernel")
    assert trace.processes[trace.tracks[kernel.track].process].kind is ProcessKind.DEVICE
    assert len(trace.flows) == 2


def test_paddle_timeline_ns(data: Path):
    trace = traceconv.load(data / "paddle" / "dygraph_CPU_Default.timeline.json.gz")
    assert trace.metadata.attributes["flavour"] == "paddle-timeline"
    first = next(trace.iter_slices(name="sgd_ pybind_imperative_func"))
    assert (first.start, first.dur) == (1795339941560314671, 14262)


# -- malformed input ------------------------------------------------------------------

def load_bytes(tmp_path: Path, content: bytes, name: str = "t.json"):
    path = tmp_path / name
    path.write_bytes(content)
    return traceconv.load(path, format="chrome")


def test_bad_events_are_counted_not_fatal(tmp_path: Path):
    events = [{"ph": "X", "name": "ok", "ts": 1, "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "no ts", "dur": 2, "pid": 1, "tid": 1},
              {"ph": "X", "name": "bad dur", "ts": 1, "dur": "x", "pid": 1, "tid": 1},
              17, {"ph": "Q", "ts": 3}, {"name": "no phase"}, {},
              {"ph": "E", "ts": 5, "pid": 1, "tid": 1},
              {"ph": "C", "name": "c", "ts": 1, "pid": 1, "args": {"v": "NaNx"}}]
    trace = load_bytes(tmp_path, orjson.dumps({"traceEvents": events}))
    diag = trace.diagnostics
    assert len(trace.slices) == 1
    assert diag.count("chrome.missing_timestamp") == 1
    assert diag.count("chrome.malformed_event") == 1
    assert diag["chrome.event_not_object"].example == "$.traceEvents[3]"
    assert diag.count("chrome.unsupported_phase.Q") == 1
    assert diag.count("chrome.missing_phase") == 1 and diag.count("chrome.empty_event") == 1
    assert diag.count("chrome.end_without_begin") == 1
    assert diag.count("chrome.counter_not_numeric") == 1


def test_truncated_array_form_is_read(tmp_path: Path):
    trace = load_bytes(tmp_path, b'[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1},\n')
    assert len(trace.slices) == 1 and "chrome.truncated_array" in trace.diagnostics


def test_invalid_json_names_file_and_line(tmp_path: Path):
    with pytest.raises(traceconv.InputError) as err:
        load_bytes(tmp_path, b'{"traceEvents": [\n{"ph": "X",\n "ts": }\n]}')
    assert str(err.value).startswith(f"{tmp_path / 't.json'}:3:")


# -- the chunked splitter ---------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3), max_leaves=8)
events_strategy = st.lists(st.dictionaries(st.sampled_from(["ph", "name", "args", "}, {"]),
                                           json_values, max_size=4), max_size=30)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(events=events_strategy, chunk=st.integers(4, 300), indent=st.booleans(),
       wrapped=st.booleans())
def test_chunked_reading_equals_whole_parse(events, chunk, indent, wrapped):
    doc = {"schemaVersion": 1, "traceEvents": events, "traceName": "x"} if wrapped else events
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
    read = read_document(io.BytesIO(text), chunk_size=chunk)
    assert [e for c in read.chunks for e in c] == events
    if wrapped:
        assert read.envelope == {"schemaVersion": 1, "traceName": "x"}


def test_kineto_quirks_hand_made(tmp_path: Path):
    """Quirks of files the corpus describes but does not hold (kineto.md §11): a uint64
    Comms Id, string vendor args, a GPU pid equal to a host pid, ts 0.0 M events,
    "GPU 0 Counters" counters, a [memory] instant without cat."""
    events = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "ts": 0.0,
         "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "ts": 0.0,
         "args": {"labels": "GPU 0"}},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 0, "tid": 0,
         "ts": 10.5, "dur": 20.25, "args": {"Comms Id": 10159970886766084423, "stream": "0x0"}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 0, "tid": 0,
         "ts": 12.0, "dur": 1.0, "args": {"correlation": 7, "size": "2560"}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 0, "ts": 15.0, "dur": 3.0,
         "args": {"correlation": 7}},
        {"ph": "C", "name": "sm_util", "pid": "GPU 0 Counters", "tid": 3, "ts": 15.0,
         "args": {"value": 42}},
        {"ph": "i", "s": "t", "name": "[memory]", "pid": 0, "tid": 0, "ts": 11.0,
         "args": {"Addr": 94000000000000, "Bytes": 512, "Device Type": 1, "Device Id": 0}},
    ]
    path = tmp_path / "quirks.json"
    path.write_bytes(orjson.dumps({"schemaVersion": 1, "deviceProperties": [],
                                   "traceEvents": events}))
    trace = traceconv.load(path)
    host = [p for p in trace.processes if p.kind is ProcessKind.HOST and p.pid == 0]
    device = [p for p in trace.processes if p.kind is ProcessKind.DEVICE]
    assert len(host) == 1 and [p.name for p in device] == ["GPU 0"]  # same pid 0, kept apart
    (flow,) = trace.iter_flows()  # launch → kernel by correlation id
    assert (trace.slice(flow.source).name, trace.slice(flow.target).name) == ("hipLaunchKernel", "k")
    assert trace.memory[0].device == "CUDA:0" and trace.memory[0].free_ns is None
    comms = next(trace.iter_slices(name="record_param_comms"))
    assert comms.args["Comms Id"] == 10159970886766084423 and comms.dur == 20250
    for suffix in (".json", ".pftrace"):
        out = tmp_path / f"out{suffix}"
        trace.save(out)
        assert out.stat().st_size > 0
    # a uint64 past int64: both formats write its digits as text, which Perfetto shows as
    # written (as a number, its JSON importer shows a wrong real)
    kept = {suffix: next(traceconv.load(tmp_path / f"out{suffix}").iter_slices(
        name="record_param_comms")).args["Comms Id"] for suffix in (".json", ".pftrace")}
    assert kept == {".json": "10159970886766084423", ".pftrace": "10159970886766084423"}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.booleans()), min_size=1,
               max_size=30))   # (no events at all: an error, tests/test_hostile.py)
def test_launches_join_their_kernels_by_correlation(tmp_path_factory, events):
    """A kernel is joined to the last launch (in file order) with its correlation id, unless
    an ac2g flow event links a launch to it already (one launch per device op): checked
    against that rule applied to the raw events (launches and kernels interleaved, ids
    repeated, some kernels already linked)."""
    trace_events, last_launch, linked = [], {}, set()
    for i, (is_launch, correlation, flowed) in enumerate(events):
        name = f"{'L' if is_launch else 'K'}{i}"
        trace_events.append({"ph": "X", "name": name, "ts": 10 * i, "dur": 5,
                             "cat": "cuda_runtime" if is_launch else "kernel",
                             "pid": 1 if is_launch else 0, "tid": 1 if is_launch else 7,
                             "args": {"correlation": correlation}})
        if is_launch:
            last_launch[correlation] = name
        elif flowed and correlation in last_launch:   # an ac2g pair from the latest launch
            source = int(last_launch[correlation][1:])
            trace_events += [{"ph": "s", "id": i, "cat": "ac2g", "name": "ac2g", "pid": 1,
                              "tid": 1, "ts": 10 * source + 1},
                             {"ph": "f", "id": i, "cat": "ac2g", "name": "ac2g", "pid": 0,
                              "tid": 7, "ts": 10 * i + 1, "bp": "e"}]
            linked.add(name)
    final_launch = {}
    for i, (is_launch, correlation, _) in enumerate(events):
        if is_launch:
            final_launch[correlation] = f"L{i}"
    expected = {(final_launch[c], f"K{i}") for i, (is_launch, c, _) in enumerate(events)
                if not is_launch and c in final_launch and f"K{i}" not in linked}
    path = tmp_path_factory.mktemp("join") / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": trace_events}))
    trace = traceconv.load(path, format="chrome")
    name = trace.slices.name
    joined = {(trace.strings.strings[name[f.source]], trace.strings.strings[name[f.target]])
              for f in trace.iter_flows() if f.name == "correlation"}
    assert joined == expected
    assert trace.diagnostics.count("kineto.flows_from_correlation") == len(expected)


def test_a_flow_to_an_instant_inside_its_task_links_the_two(tmp_path: Path):
    """Chromium writes a flow from a task to an instant inside it (`Scheduler::RunTask` to
    its `Scheduler::FinishTask`): trace_processor binds the finish to the instant (a slice
    of no length there), so the model does too: one flow, task → instant (the real
    trace_processor on this file: that one flow)."""
    events = [
        {"ph": "X", "name": "Scheduler::RunTask", "cat": "toplevel", "pid": 1, "tid": 2,
         "ts": 100, "dur": 21},
        {"ph": "I", "name": "Scheduler::FinishTask", "cat": "toplevel", "pid": 1, "tid": 2,
         "ts": 120, "s": "t"},
        {"ph": "s", "name": "Task", "cat": "gpu", "id": 14, "pid": 1, "tid": 2, "ts": 101},
        {"ph": "f", "name": "Task", "cat": "gpu", "id": 14, "pid": 1, "tid": 2, "ts": 120,
         "bp": "e"},
    ]
    path = tmp_path / "chrome.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    [flow] = trace.iter_flows()
    source, target = trace.slice(flow.source), trace.slice(flow.target)
    assert (source.name, target.name, target.start, target.dur) == (
        "Scheduler::RunTask", "Scheduler::FinishTask", 120_000, 0)
    assert len(trace.instants) == 0 and len(trace.slices) == 2
    assert not trace.diagnostics.count("chrome.flow_within_one_slice")


@pytest.mark.parametrize("before", [70_000, 3_000_000])
def test_trace_events_after_a_long_top_level_key(tmp_path: Path, before: int):
    """viztracer writes ``file_info`` (the traced source files) among its top-level keys,
    and traceconv's Chrome writer keeps a producer's keys before ``traceEvents``: a key
    longer than the 64 KiB that formats are told apart by must not make the file unknown.
    The same events are read as from the file without it (counted with plain json)."""
    original = SAMPLES / "torch" / "cnn_step5.pt.trace.json"
    doc = json.loads(original.read_text())
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps({"file_info": {"files": {"x.py": ["#" * before]}}, **doc}))
    trace = traceconv.load(padded)
    assert trace.metadata.source_format == "chrome"
    assert trace.counts() == traceconv.load(original).counts()
    assert len(trace.slices) == sum(e.get("ph") == "X" for e in doc["traceEvents"])
    # and traceconv's own output of it reads back (the key is kept before the events)
    out = tmp_path / "out.json"
    traceconv.convert(padded, out, to="chrome")
    assert out.read_bytes().index(b'"traceEvents"') > before
    assert traceconv.load(out).counts()["slices"] == trace.counts()["slices"]


def test_a_flow_from_an_instant_starts_there(tmp_path: Path):
    """A flow whose start sits on a thread instant (no slice there: Chromium's
    ``PostTask``) starts on the instant, a slice of no length, as trace_processor has it
    (the real one on this file: PostTask → RunTask, and id 8's finish alone refused as
    ``flow_end_without_start``); the other instant stays an instant. A finish with no
    start is counted."""
    events = [
        {"ph": "i", "name": "PostTask", "pid": 1, "tid": 1, "ts": 5, "s": "t"},
        {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 6, "s": "t", "args": {"n": 1}},
        {"ph": "s", "id": 7, "cat": "toplevel.flow", "name": "f", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "X", "name": "RunTask", "pid": 1, "tid": 2, "ts": 10, "dur": 5},
        {"ph": "f", "id": 7, "cat": "toplevel.flow", "name": "f", "pid": 1, "tid": 2,
         "ts": 11, "bp": "e"},
        {"ph": "f", "id": 8, "cat": "toplevel.flow", "name": "f", "pid": 1, "tid": 2,
         "ts": 12, "bp": "e"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    [flow] = trace.iter_flows()
    assert (trace.slice(flow.source).name, trace.slice(flow.source).dur,
            trace.slice(flow.target).name) == ("PostTask", 0, "RunTask")
    assert [(i.name, i.args) for i in trace.iter_instants()] == [("mark", {"n": 1})]
    diags = trace.diagnostics
    assert diags.count("chrome.flow_unbound") == 0
    assert diags.count("chrome.flow_dangling") == 1      # id 8: a finish alone
    assert "id 8" in diags["chrome.flow_dangling"].example


JAX = DATA / "chrome" / "jax0.10.2_cpu_perfetto_trace.json.gz"


@pytest.mark.parametrize(("to", "code"), [("chrome", "chrome.id_replaced"),
                                          ("perfetto", "perfetto.tid_replaced")])
def test_thread_ids_past_32_bits_are_replaced_and_said(tmp_path: Path, to: str, code: str):
    """XLA's thread ids reach past 2^31, which viewers read as 32-bit numbers: both writers
    give such threads made-up ids and say so (2 threads of the JAX trace, counted with plain
    json), and the threads keep their names and slices."""
    with gzip.open(JAX) as f:
        events = json.load(f)["traceEvents"]
    wide = {e["tid"] for e in events if isinstance(e.get("tid"), int) and e["tid"] >= 1 << 31}
    assert len(wide) == 2
    out = tmp_path / ("out.json" if to == "chrome" else "out.pftrace")
    written = traceconv.save(traceconv.load(JAX), out)
    assert written.count(code) == len(wide)
    back = traceconv.load(out)
    # (the 3 partially overlapping 'train' steps sit on an overlap lane of their thread)
    assert Counter(back.tracks[s.track].name.split(" (overlap lane")[0]
                   for s in back.iter_slices()) == Counter(
        next(m["args"]["name"] for m in events if m.get("ph") == "M"
             and m["name"] == "thread_name" and m["tid"] == e["tid"] and m["pid"] == e["pid"])
        for e in events if e.get("ph") == "X")


def test_a_named_e_closes_the_latest_b_of_its_name_as_trace_processor_does(
        trace_processor, tmp_path):
    """Thread B/E pair as trace_processor's slice tracker pairs them: an E naming ``load``
    closes ``load`` below an open ``frame``, which the next event after ``load``'s end cuts
    there (counted ``chrome.thread_cut_short``); an E of no name closes the latest B. The
    slices' names, starts and lengths equal trace_processor's on the same file (traceconv
    ends the never-ended B at the last timestamp, where trace_processor leaves it open)."""
    b, e = {"ph": "B", "pid": 1, "tid": 1}, {"ph": "E", "pid": 1, "tid": 1}
    events = [{**b, "ts": 0, "name": "load"}, {**b, "ts": 1, "name": "frame"},
              {**e, "ts": 2, "name": "load"}, {**b, "ts": 3, "name": "idle"},
              {**b, "ts": 4, "name": "inner"}, {**e, "ts": 5}]
    path = tmp_path / "named_ends.json"
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    ours = sorted((s.name, s.start, s.dur) for s in trace.iter_slices())
    trace_processor.load(path.read_bytes())
    theirs = sorted((r.name, r.ts, r.dur) for r in trace_processor.query(
        "select name, ts, dur from slice"))
    assert [t for t in theirs if t[2] >= 0] == [o for o in ours if o[0] != "idle"]
    assert ours == [("frame", 1000, 1000), ("idle", 3000, 2000), ("inner", 4000, 1000),
                    ("load", 0, 2000)]
    assert trace.diagnostics.count("chrome.thread_cut_short") == 1
