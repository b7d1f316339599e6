"""XPlane (``*.xplane.pb``): every sample read, counted against a protobuf walk written here
(field numbers of ``xplane.proto``, no traceconv code) and against xprof's own trace viewer
conversion (``tests/data/xplane/xprof_trace_viewer.json``, made by xprof 2.24.2)."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import pytest

import traceconv
from traceconv.analysis.activity import Activity
from traceconv.model import ProcessKind
from traceconv.model.activity import primary
from traceconv.vocabularies.xplane import XPLANE_VOCABULARY

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "xplane"
# ../shared beside the checkout, or where TRACECONV_SHARED_SAMPLES says (a worktree elsewhere)
SHARED = Path(os.environ.get("TRACECONV_SHARED_SAMPLES", ROOT.parent / "shared" / "samples")) \
    / "xplane"
BUNDLED = [ROOT / "samples" / "xplane" / "jax_rocm_mi300_conv.xplane.pb.gz",
           DATA / "jax_rocm_te_fused_attn.xplane.pb.gz",
           DATA / "jax_tpu_v6e_inference.xplane.pb.gz",
           DATA / "jax_cpu_mlp.xplane.pb.gz"]
SHARED_FILES = sorted(SHARED.glob("*.xplane.pb")) if SHARED.is_dir() else []
BROKEN = SHARED / "broken" / "openxla__xprof__tpu_inference_2.CORRUPTED_utf8_mangled.xplane.pb"
# PROVENANCE_formats.md: events per file, measured there with its own protobuf walk
PROVENANCE_EVENTS = {"openxla__xprof__34.83.195.179_6003.xplane.pb": 23_128,
                     "openxla__xprof__tpu_inference_2.xplane.pb": 26_723,
                     "AMD-AGI__TraceLens__jax_te_fused_attn_934987a2fc2f.xplane.pb": 1_992,
                     "AMD-AGI__TraceLens__mi300_jax_conv_minimal_08_tw003.xplane.pb": 3_650,
                     "AMD-AGI__TraceLens__mi300_jax_conv_minimal_legacy.xplane.pb": 6_024}
MEMORY_EVENTS = {"MemoryAllocation", "MemoryDeallocation"}


# -- an independent walk of the wire format ------------------------------------------------

def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if byte < 0x80:
            return value, pos


def _fields(data: bytes):
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


class Walk:
    """Per (plane, line): the events' names; plus correlation ids and XLA ops."""

    def __init__(self, data: bytes) -> None:
        self.names: dict[tuple[str, str], Counter] = defaultdict(Counter)
        self.host_ids: Counter = Counter()
        self.device_ids: Counter = Counter()
        self.xla_ops = 0
        self.planes: list[str] = []
        for number, plane in _fields(data):
            if number == 1:
                self._plane(plane)

    def _plane(self, plane: bytes) -> None:
        name, lines, events, stats = "", [], {}, {}
        for number, value in _fields(plane):
            if number == 2:
                name = value.decode()
            elif number == 3:
                lines.append(value)
            elif number in (4, 5):   # map entries: key 1, value 2 (metadata: id 1, name 2,
                key = entry = None   # display_name 4)
                for n, v in _fields(value):
                    key, entry = (v, entry) if n == 1 else (key, v if n == 2 else entry)
                fields = dict((n, v) for n, v in _fields(entry or b"") if n in (2, 4))
                label = (fields.get(4) or fields.get(2) or b"").decode() if number == 4 \
                    else fields.get(2, b"").decode()
                (events if number == 4 else stats)[key] = label
        self.planes.append(name)
        for line in lines:
            line_name = display = ""
            for number, value in _fields(line):
                if number == 2:
                    line_name = value.decode()
                elif number == 11:
                    display = value.decode()
                elif number == 4:
                    self._event(name, display or line_name, value, events, stats)

    def _event(self, plane: str, line: str, event: bytes, events: dict, stats: dict) -> None:
        metadata = 0
        found: dict[str, int] = {}
        for number, value in _fields(event):
            if number == 1:
                metadata = value
            elif number == 4:
                stat = dict(_fields(value))
                if 3 in stat or 4 in stat:
                    found[stats.get(stat.get(1, 0), "")] = _signed(stat.get(3, stat.get(4)))
                elif 5 in stat or 7 in stat:
                    found[stats.get(stat.get(1, 0), "")] = -1   # a string or a ref: present
        self.names[(plane, line)][events.get(metadata, "")] += 1
        if "correlation_id" in found:
            side = self.host_ids if plane.startswith("/host:") else self.device_ids
            side[found["correlation_id"]] += 1
        on_device = plane.startswith("/device:")
        if (on_device and (line == "XLA Ops" or ("hlo_op" in found and line.startswith(
                "Stream #")))) or (not on_device and "hlo_op" in found
                                   and "correlation_id" not in found):
            self.xla_ops += 1   # (a host event naming its op without launching: XLA:CPU)

    @property
    def events(self) -> int:
        return sum(sum(c.values()) for c in self.names.values())


def _raw(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _per_track(trace) -> Counter:
    """(process name without host, track name) → slices + instants."""
    counts: Counter = Counter()
    for table in (trace.slices, trace.instants):
        for track, n in Counter(table.track).items():
            t = trace.tracks[track]
            counts[(trace.processes[t.process].name.split(" (")[0], t.name)] += n
    return counts


ALL = BUNDLED + SHARED_FILES


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_event_is_read_once(path):
    walk = Walk(_raw(path))
    trace = traceconv.load(path)
    assert trace.metadata.source_format == "xplane"
    if path.name in PROVENANCE_EVENTS:
        assert walk.events == PROVENANCE_EVENTS[path.name]
    assert len(trace.slices) + len(trace.instants) == walk.events
    expected = Counter({key: sum(c.values()) for key, c in walk.names.items()})
    assert _per_track(trace) == +expected
    memory = sum(n for c in walk.names.values() for name, n in c.items() if name in MEMORY_EVENTS)
    assert len(trace.instants) == memory
    names = Counter(s.name for s in trace.iter_slices()) + Counter(
        i.name for i in trace.iter_instants())
    assert names == sum(walk.names.values(), Counter())


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_launch_flows_and_xla_ops_match_the_walk(path):
    walk = Walk(_raw(path))
    trace = traceconv.load(path)
    launches = [f for f in trace.iter_flows() if f.category == "launch"]
    shared = [c for c in walk.host_ids if c in walk.device_ids and walk.host_ids[c] == 1]
    assert len(launches) == sum(walk.device_ids[c] for c in shared)
    for flow in launches:
        source, target = trace.slice(flow.source), trace.slice(flow.target)
        assert source.args["correlation_id"] == target.args["correlation_id"]
    ops = [d for _, d in trace.graph.nodes(data=True) if d.get("kind") == "op"]
    executions = walk.xla_ops + sum(sum(c.values()) for (plane, line), c in walk.names.items()
                                    if line == "TensorFlow Ops" and plane.startswith("/device:"))
    assert sum(len(d["slices"]) for d in ops) == executions
    rows = [row for d in ops for row in d["slices"]]
    assert len(set(rows)) == len(rows)   # each execution belongs to one op
    for d in ops:   # one op: one HLO module (or TF op) and one op name
        assert {trace.slice(r).args.get("hlo_module", d.get("hlo_module")) for r in
                d["slices"]} == {d.get("hlo_module")}


def _xprof_reference(data: bytes) -> dict:
    reference = orjson.loads(gzip.decompress((DATA / "xprof_trace_viewer.json.gz").read_bytes()))
    return reference[hashlib.sha256(data).hexdigest()]["lines"]


# Events xprof's trace viewer makes itself from others (a Start/StopRegion pair → Region),
# and those it hides: allocator events (its memory profile reads them) and tf.data's
# prefetch bookkeeping. All of these are measured here: nothing else differs.
XPROF_DERIVED = {"ThreadpoolListener::Region"}
XPROF_HIDDEN = MEMORY_EVENTS | {"PrefetchProduce", "PrefetchConsume"}


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_agrees_with_xprof_trace_viewer(path):
    """Line by line and name by name, xprof draws what traceconv reads, except allocator
    events (xprof's memory profile reads those; here they are instants and blocks); xprof
    also derives rows of its own (Framework Ops, Host Offload Ops) that are not compared."""
    data = _raw(path)
    reference = _xprof_reference(data)
    trace = traceconv.load(path)
    ours: dict[tuple[str, str], Counter] = defaultdict(Counter)
    first: dict[tuple[str, str], int] = {}
    for table, start in ((trace.iter_slices(), "start"), (trace.iter_instants(), "ts")):
        for event in table:
            t = trace.tracks[event.track]
            key = (trace.processes[t.process].name.split(" (")[0], t.name)
            name = event.name
            if start == "start" and event.category == "step" and "step_num" in event.args:
                name = f"{name} {event.args['step_num']}"   # xprof shows host steps so
            ours[key][name] += 1
            if event.name not in XPROF_HIDDEN:
                first[key] = min(first.get(key, 1 << 62), getattr(event, start))
    compared = 0
    for key, line in reference.items():
        plane, name = key.split("|", 1)
        if (plane, name) not in ours or name == "Async XLA Ops":
            continue   # a row xprof made, or one it redraws as "Host Offload Ops"
        compared += 1
        drawn = Counter({k: v for k, v in line["names"].items() if k not in XPROF_DERIVED})
        mine = Counter({k: v for k, v in ours[(plane, name)].items() if k not in XPROF_HIDDEN})
        assert mine == drawn, key
        if line["first_us"] is not None and drawn:
            assert abs(first[(plane, name)] / 1000 - line["first_us"]) < 0.002, key
    assert compared >= 3


def test_jax_cpu_steps_and_host_xla_ops():
    """``tests/data/xplane/gen_jax_cpu.py``: five ``StepTraceAnnotation`` steps; XLA:CPU runs
    the HLO ops as thunks on host threads."""
    trace = traceconv.load(BUNDLED[3])
    steps = [s for s in trace.iter_slices() if s.category == "step"]
    assert [s.args["step_num"] for s in steps] == [0, 1, 2, 3, 4]
    assert all(s.name == "train" for s in steps)
    ops = [d for _, d in trace.graph.nodes(data=True) if d.get("kind") == "op"]
    assert all(d["hlo_module"] for d in ops)
    assert {d["executions"] for d in ops if d["hlo_module"] == "jit_step"} == {5}   # 5 steps
    assert all(trace.slice(r).args["hlo_op"] == d["name"] for d in ops for r in d["slices"])


def test_categories_steps_and_kinds():
    trace = traceconv.load(DATA / "jax_tpu_v6e_inference.xplane.pb.gz")
    kinds = {p.name.split(" (")[0]: p.kind for p in trace.processes}
    assert kinds["/host:CPU"] == ProcessKind.HOST and kinds["/device:TPU:3"] == ProcessKind.DEVICE
    by_line = defaultdict(Counter)
    for s in trace.iter_slices():
        by_line[trace.tracks[s.track].name][s.category] += 1
    assert set(by_line["XLA Ops"]) == {"xla_op"}
    assert set(by_line["XLA Modules"]) == {"device_annotation"}
    assert primary(XPLANE_VOCABULARY.classify("step", "0", True)) == Activity.STEP
    op = next(d for _, d in trace.graph.nodes(data=True) if d.get("type") == "all-reduce")
    assert op["hlo_module"] == "jit__psum" and op["computation"] == 1_342_177_280
    assert trace.metadata.clock_base_ns == 1_741_722_099_081_044_120


@pytest.mark.shared
@pytest.mark.skipif(not SHARED_FILES, reason="../shared/samples is not beside this checkout")
def test_tensorflow_gpu_steps_memory_and_memflow(tmp_path):
    path = SHARED / "openxla__xprof__34.83.195.179_6003.xplane.pb"
    trace = traceconv.load(path)
    assert trace.metadata.framework == "TensorFlow"
    steps = [s for s in trace.iter_slices() if s.category == "step"]
    assert len(steps) == 2   # one "Steps" row each on GPU:4 and GPU:6
    walk = Walk(_raw(path))
    allocations = sum(c["MemoryAllocation"] for c in walk.names.values())
    frees = sum(c["MemoryDeallocation"] for c in walk.names.values())
    orphan = trace.diagnostics.count("xplane.free_without_alloc")
    assert len(trace.memory) == allocations + orphan
    assert sum(b.free_ns is not None for b in trace.memory) == frees
    out = tmp_path / "memflow.svg"
    trace.memflow_svg(out)
    assert out.read_bytes().count(b"<rect") >= len(trace.memory)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "traceconv", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_damaged_file_is_one_located_line(tmp_path):
    data = _raw(BUNDLED[0])
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes(data[: len(data) // 2])
    done = _cli("info", str(cut))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"{cut}:byte " in done.stderr and "runs past the end" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.shared
@pytest.mark.skipif(not BROKEN.exists(), reason="../shared/samples is not beside this checkout")
def test_the_mangled_sample_is_one_located_line():
    done = _cli("info", str(BROKEN))
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "byte 1" in done.stderr and "planes[0]" in done.stderr


def test_detected_by_content_without_extension(tmp_path):
    plain = tmp_path / "capture"
    plain.write_bytes(_raw(BUNDLED[0]))
    assert traceconv.load(plain).metadata.source_format == "xplane"
    assert traceconv.load(BUNDLED[0], format="xprof").metadata.source_format == "xplane"


def test_summary_and_advise_run():
    trace = traceconv.load(BUNDLED[0])
    from traceconv.analysis.advise import advise
    from traceconv.analysis.op_summary import op_summary

    rows = op_summary(trace)
    assert any(r.kind == "kernel" and r.self_device_ns for r in rows)
    assert advise(trace) is not None


@pytest.mark.integration
@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_loads_in_trace_processor(trace_processor, path, tmp_path):
    trace = traceconv.load(path)
    out = tmp_path / "out.pftrace"
    traceconv.save(trace, out)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    events = len(trace.slices) + len(trace.instants)
    assert trace_processor.query("select count(*) as n from slice")[0].n == events
    assert trace_processor.query("select count(*) as n from flow")[0].n == len(trace.flows)
    assert trace_processor.query("select count(*) as n from counter")[0].n == len(trace.counters)


def test_writers_leave_the_trace_unchanged():
    trace = traceconv.load(BUNDLED[1])
    before = trace.counts()
    for fmt in ("chrome", "perfetto"):
        traceconv.registry.get(fmt).load().write(trace, io.BytesIO())
    assert trace.counts() == before


@pytest.mark.shared
def test_sample_is_copied_verbatim():
    if not SHARED_FILES:
        pytest.skip("../shared/samples is not beside this checkout")
    original = SHARED / "AMD-AGI__TraceLens__mi300_jax_conv_minimal_08_tw003.xplane.pb"
    assert _raw(BUNDLED[0]) == original.read_bytes()
