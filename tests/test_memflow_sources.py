"""The memory-flow SVG of every reader that finds memory blocks, on the project's real files.

For each source: every block is one titled rectangle, the axes and the legend are there,
and each device's peak marker equals the maximum of that device's live-bytes series. The
block counts and peaks are checked against the source documents and the frameworks' own
numbers where they state them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import traceconv
from traceconv.formats.memflow_svg import MemflowOptions, svg_text
from traceconv.model.memory import live_bytes

NS = {"svg": "http://www.w3.org/2000/svg"}
TEXT = "{http://www.w3.org/2000/svg}text"
HERE = Path(__file__).parent

# (file, format, blocks) — the count comes from the source, as the comment says.
SOURCES = [
    # MegEngine static profile, graph_exec mem_chunks with real addresses: 305 static + 242
    # weight chunks, the same counts as StaticMemoryInfo.json of the same model.
    ("data/megengine/resnet50ish_lar_embed_profile.json.gz", "megengine", 547),
    # StaticMemoryInfo.json (logical offsets): 27 static_mem + 20 weight_mem chunks, and
    # 305 + 242 for the ResNet-50-like model.
    ("data/megengine/convnet_static_mem_info/StaticMemoryInfo.json", "megengine-meminfo", 47),
    ("data/megengine/resnet50ish_static_mem_info/StaticMemoryInfo.json.gz",
     "megengine-meminfo", 547),
    # MegEngine's own memory_flow.svg: 677 and 49 tensor rects (formats/megengine.md §6).
    ("data/megengine/train_memory_flow.svg.gz", "megengine-memflow-svg", 677),
    ("data/megengine/infer_traced_memory_flow.svg", "megengine-memflow-svg", 49),
    # Kineto [memory] events paired by Addr: 291 allocs (Bytes > 0) and 277 frees.
    ("../samples/torch/cnn_step5.pt.trace.json", "chrome", 291),
    # export_memory_timeline raw: 42 preexisting + 291 created + 114 version changes.
    ("data/torch_memory/memory_timeline.raw.json.gz", "torch_memory", 447),
]


def load(relative: str, format: str) -> traceconv.Trace:
    return traceconv.load(HERE / relative, format=format)


@pytest.mark.slow
@pytest.mark.parametrize(("relative", "format", "blocks"), SOURCES,
                         ids=["/".join(Path(s[0]).parts[-2:]) for s in SOURCES])
def test_every_source_draws_all_its_blocks(relative, format, blocks):
    trace = load(relative, format)
    assert len(trace.memory) == blocks
    assert_picture(trace)


# The Paddle and MIGraphX readers' samples (their counts are checked in their own tests).
OTHER_SOURCES = ["../samples/paddle/small_3.3.1.paddle_trace.pb",
                 "../samples/paddle/legacy_gpu_synthetic.profile",
                 "../samples/migraphx/synthetic_resnet_perf_rocm7.2.txt"]


@pytest.mark.parametrize("relative", OTHER_SOURCES, ids=lambda p: Path(p).name)
def test_paddle_and_migraphx_blocks_draw_too(relative):
    trace = traceconv.load(HERE / relative)
    assert trace.memory
    assert_picture(trace)


def assert_picture(trace: traceconv.Trace) -> None:
    """One titled rectangle per non-empty block, axes and legend, one true peak per device."""
    root = ET.fromstring(svg_text(trace, MemflowOptions()))
    group = root.find(".//svg:g[@id='blocks']", NS)
    titled = [r for r in group.findall("svg:rect", NS) if r.find("svg:title", NS) is not None]
    assert len(titled) == sum(b.size >= 1 for b in trace.memory)
    for axis in ("address-axis", "time-axis", "legend", "live-bytes"):
        texts = [t.text for t in root.find(f".//svg:g[@id='{axis}']", NS).iter(TEXT)]
        assert len(texts) >= 3, axis
    markers = root.findall(".//svg:g[@class='peak-marker']", NS)
    devices = sorted({b.device for b in trace.memory})
    assert [m.get("data-device", "") for m in markers] == devices
    lo = min(t for b in trace.memory for t in (b.alloc_ns, b.free_ns) if t is not None)
    for device, marker in zip(devices, markers, strict=True):
        series = live_bytes([b for b in trace.memory if b.device == device], start=lo)
        assert int(marker.get("data-peak-bytes")) == int(np.max(series.bytes))


def test_torch_cnn_peak_is_what_pytorch_reported():
    """The [memory] events carry PyTorch's own running total ("Total Allocated")."""
    import orjson

    path = HERE.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"
    events = orjson.loads(path.read_bytes())["traceEvents"]
    reported = max(e["args"]["Total Allocated"] for e in events if e.get("name") == "[memory]")
    trace = load("../samples/torch/cnn_step5.pt.trace.json", "chrome")
    root = ET.fromstring(svg_text(trace, MemflowOptions()))
    (marker,) = root.findall(".//svg:g[@class='peak-marker']", NS)
    assert int(marker.get("data-peak-bytes")) == reported == 2_625_264
    # the memory-timeline export of the same run peaks at the same instant
    timeline = load("data/torch_memory/memory_timeline.raw.json.gz", "torch_memory")
    assert int(marker.get("data-peak-time-ns")) == live_bytes(timeline.memory).peak[0]


def test_megengine_cpu_addresses_are_gap_compressed():
    """Heap (0x5629…) and mmap (0x7f59…) are ~41 TiB apart; the picture stays 900 px high."""
    trace = load("data/megengine/resnet50ish_lar_embed_profile.json.gz", "megengine")
    root = ET.fromstring(svg_text(trace, MemflowOptions()))
    assert root.get("height") == "900"
    labels = [t.text for t in root.find(".//svg:g[@id='address-axis']", NS).iter(TEXT)]
    assert any(x.startswith("0x7f") for x in labels) and any(x.startswith("0x56") for x in labels)
    assert "⋯ 41.2 TiB skipped" in labels
    heights = [float(r.get("height"))
               for r in root.find(".//svg:g[@id='blocks']", NS).findall("svg:rect", NS)]
    assert min(heights) >= 1


def test_shared_corpus_large_trace(shared_samples):
    """49,200 [memory] blocks of the 200-step CPU run: sub-pixel ones merge into cells."""
    path = shared_samples / "torch" / "large" / "large_cpu_200steps.pt.trace.json.gz"
    trace = traceconv.load(path)
    assert len(trace.memory) == 49_200
    svg = svg_text(trace, MemflowOptions())   # render time: benchmarks/memflow_bench.py
    assert len(svg) < 4_000_000
    root = ET.fromstring(svg)
    rects = root.find(".//svg:g[@id='blocks']", NS).findall("svg:rect", NS)
    merged = sum(int(r.find("svg:title", NS).text.split(" ")[0].replace(",", ""))
                 for r in rects if r.get("class") == "m")
    assert sum(r.get("class") == "b" for r in rects) + merged == 49_200


def test_exports_carry_the_live_bytes_counter(tmp_path):
    """Chrome JSON and Perfetto outputs hold the same live-bytes series as the SVG's curve."""
    import orjson
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2

    trace = load("../samples/torch/cnn_step5.pt.trace.json", "chrome")
    trace.save(tmp_path / "cnn.json")
    trace.save(tmp_path / "cnn.pftrace")
    events = orjson.loads((tmp_path / "cnn.json").read_bytes())["traceEvents"]
    chrome = [e["args"]["value"] for e in events
              if e.get("ph") == "C" and e["name"] == "CPU live bytes"]
    packets = perfetto_trace_pb2.Trace.FromString((tmp_path / "cnn.pftrace").read_bytes()).packet
    (uuid,) = [p.track_descriptor.uuid for p in packets if p.HasField("track_descriptor")
               and p.track_descriptor.name == "CPU live bytes"]
    perfetto = [p.track_event.counter_value for p in packets
                if p.HasField("track_event") and p.track_event.track_uuid == uuid]
    # one sample per [memory] event (291 allocs + 277 frees), peaking at PyTorch's total
    assert len(chrome) == len(perfetto) == 568
    assert max(chrome) == max(perfetto) == 2_625_264


def test_megengine_own_picture_redrawn_visible():
    """MegEngine's memory_flow.svg is 45.5 M units tall: none of its 677 rects is 1 unit tall
    and 206 have zero width. Redrawn, all 677 are at least 1 x 1 px in 1600 x 900."""
    import gzip

    path = HERE / "data" / "megengine" / "train_memory_flow.svg.gz"
    original = ET.fromstring(gzip.decompress(path.read_bytes()))
    theirs = [r for r in original.iter("{http://www.w3.org/2000/svg}rect")
              if r.get("{https://megengine.org.cn}type") == "tensor"]
    assert original.get("height") == "45504596.357824" and len(theirs) == 677
    assert not any(float(r.get("height")) >= 1 for r in theirs)
    assert sum(float(r.get("width")) == 0 for r in theirs) == 206
    root = ET.fromstring(svg_text(load("data/megengine/train_memory_flow.svg.gz",
                                       "megengine-memflow-svg"), MemflowOptions()))
    ours = root.find(".//svg:g[@id='blocks']", NS).findall("svg:rect", NS)
    assert (root.get("width"), root.get("height")) == ("1600", "900")
    assert len(ours) == 677
    assert all(float(r.get("width")) >= 1 and float(r.get("height")) >= 1 for r in ours)
