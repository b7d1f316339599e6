"""Memory-flow SVG: structure, values and scale, on real exports and made-up edge cases."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import pairwise

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.cli import app
from traceconv.formats.memflow_svg import MemflowOptions, svg_text
from traceconv.formats.memflow_svg.layout import split_regions
from traceconv.model import MemoryBlock, Trace
from traceconv.model.memory import live_bytes

NS = {"svg": "http://www.w3.org/2000/svg"}
CNN_PEAK = 3_054_392   # max row total of the CNN's per-category export (see test_torch_memory)

RAW = "torch_memory/memory_timeline.raw.json.gz"   # under tests/data


def svg_of(trace: Trace, **options) -> ET.Element:
    return ET.fromstring(svg_text(trace, MemflowOptions(**options)))


def block_rects(root: ET.Element, cls: str = "b") -> list[ET.Element]:
    group = root.find(".//svg:g[@id='blocks']", NS)
    return [r for r in group.findall("svg:rect", NS) if r.get("class") == cls]


def title(element: ET.Element) -> str:
    return element.find("svg:title", NS).text


def peaks(root: ET.Element) -> list[ET.Element]:
    return root.findall(".//svg:g[@class='peak-marker']", NS)


@pytest.fixture(scope="module")
def cnn(data) -> Trace:
    return traceconv.load(data / RAW, format="torch_memory")


def test_every_block_is_a_titled_rectangle(cnn):
    root = svg_of(cnn, color_by="category")
    rects = block_rects(root)
    assert len(rects) == len(cnn.memory) == 447
    assert all(title(r) for r in rects)
    assert not block_rects(root, "m")
    names = sorted(title(r).split("\n")[0] for r in rects)
    assert names == sorted(b.name for b in cnn.memory)


def test_axes_legend_and_peak(cnn):
    root = svg_of(cnn, color_by="category")
    address = root.find(".//svg:g[@id='address-axis']", NS)
    labels = [t.text for t in address.iter("{http://www.w3.org/2000/svg}text")]
    assert "0x0" in labels and "+1 MiB" in labels and "+3 MiB" in labels
    times = root.find(".//svg:g[@id='time-axis']", NS)
    ticks = [t.text for t in times.iter("{http://www.w3.org/2000/svg}text")]
    assert ticks[:3] == ["0", "50", "100"]                    # the run lasts 482 ms
    assert ticks[-1] == "time (ms) since the first event"
    legend = root.find(".//svg:g[@id='legend']", NS)
    legend_text = [t.text for t in legend.iter("{http://www.w3.org/2000/svg}text")]
    assert legend_text[0] == "colour: category"
    for category in ("activation", "autograd_detail", "gradient", "parameter", "input"):
        assert category in legend_text
    assert "447 of 447 blocks drawn" in legend_text
    (peak,) = peaks(root)
    curve = live_bytes(cnn.memory)
    assert int(peak.get("data-peak-bytes")) == int(curve.bytes.max()) == CNN_PEAK
    assert int(peak.get("data-peak-time-ns")) == curve.peak[0]
    assert int(peak.get("data-alive-blocks")) == 63
    assert title(peak).startswith("peak 2.91 MiB at 84.59 ms · 63 blocks alive")


def test_rectangles_sit_inside_the_plot(cnn):
    root = svg_of(cnn, width=1200, height=700)
    for r in block_rects(root):
        x, y = float(r.get("x")), float(r.get("y"))
        w, h = float(r.get("width")), float(r.get("height"))
        assert w >= 1 and h >= 1
        assert x >= 118 - 0.01 and x + w <= 1200 - 250 - 16 + 1.01
        assert y >= 44 + 86 + 22 - 1.01 and y + h <= 700 - 46 + 0.01


def test_names_are_escaped():
    trace = Trace()
    nasty = 'aten::add<float> & "x" \'y\''
    trace.add_memory_block(MemoryBlock(0x1000, 64, 0, 100, name=nasty, owner_name="op<&>"))
    svg = svg_text(trace, MemflowOptions(color_by="owner"))
    root = ET.fromstring(svg)
    (rect,) = block_rects(root)
    assert title(rect).splitlines()[:2] == [nasty, "owner op: op<&>"]
    assert "<script" not in svg


def test_heap_and_mmap_are_stacked_with_a_break():
    trace = Trace()
    for i in range(10):   # heap blocks, then mmap blocks 45 TB higher
        trace.add_memory_block(MemoryBlock(0x55D0_0000_0000 + i * 4096, 4096, i, i + 5))
        trace.add_memory_block(MemoryBlock(0x7F3A_0000_0000 + i * 65536, 65536, i, None))
    root = svg_of(trace)
    assert root.get("height") == "900"
    rects = block_rects(root)
    assert len(rects) == 20
    heights = sorted(float(r.get("height")) for r in rects)
    assert heights[0] > 5    # a heap block is a tenth of a region of at least 24 px
    address = root.find(".//svg:g[@id='address-axis']", NS)
    labels = [t.text for t in address.iter("{http://www.w3.org/2000/svg}text")]
    assert "0x55d000000000" in labels and "0x7f3a00000000" in labels
    assert any(text and text.endswith("TiB skipped") for text in labels)


def test_zero_duration_and_never_freed_blocks():
    trace = Trace()
    trace.add_memory_block(MemoryBlock(0, 1024, 500, 500, name="instant"))
    trace.add_memory_block(MemoryBlock(1024, 1024, 0, None, name="leak"))
    trace.add_memory_block(MemoryBlock(2048, 1024, None, 900, name="weights"))
    trace.add_memory_block(MemoryBlock(4096, 1024, 100, 1000, name="last"))
    rects = {title(r).split("\n")[0]: r for r in block_rects(svg_of(trace))}
    assert float(rects["instant"].get("width")) == 1.0
    right = 1600 - 250 - 16
    leak = rects["leak"]
    assert float(leak.get("x")) + float(leak.get("width")) == pytest.approx(right, abs=0.02)
    assert float(rects["weights"].get("x")) == 118
    assert "alloc before the start → free 900 ns" in title(rects["weights"])
    assert "→ free never" in title(rects["leak"])


def test_filters_window_and_min_size():
    trace = Trace()
    trace.add_memory_block(MemoryBlock(0, 4096, 0, 10, device="cuda:0"))
    trace.add_memory_block(MemoryBlock(0, 8, 20, 30, device="cuda:0"))
    trace.add_memory_block(MemoryBlock(0, 4096, 50, 60, device="cpu"))
    trace.add_memory_block(MemoryBlock(8192, 0, 50, 60, device="cpu"))
    assert len(block_rects(svg_of(trace))) == 3                      # empty block hidden
    assert len(block_rects(svg_of(trace, device="cuda:0"))) == 2
    assert len(block_rects(svg_of(trace, device="cuda:0", min_size=16))) == 1
    assert len(block_rects(svg_of(trace, start=15, end=40))) == 1
    assert len(peaks(svg_of(trace))) == 2                            # one curve per device
    with pytest.raises(ValueError):
        MemflowOptions(color_by="colour")


@pytest.mark.parametrize("color_by", ["lifetime", "op-type", "category", "owner"])
def test_every_colouring_has_a_legend_entry_per_colour(cnn, color_by):
    root = svg_of(cnn, color_by=color_by)
    colors = {r.get("fill") for r in block_rects(root)}
    legend = root.find(".//svg:g[@id='legend']", NS)
    swatches = {r.get("fill") for r in legend.findall("svg:rect", NS)}
    assert colors <= swatches


def test_op_type_and_owner_come_from_the_graph():
    from traceconv.model.graph import add_op

    trace = Trace()
    conv = add_op(trace.graph, 1, "conv1", "ConvolutionForward")
    trace.add_memory_block(MemoryBlock(0, 64, 0, 10, owner_op=conv, owner_name="conv1"))
    trace.add_memory_block(MemoryBlock(64, 64, 0, 10))
    legend = svg_of(trace, color_by="op-type").find(".//svg:g[@id='legend']", NS)
    labels = [t.text for t in legend.iter("{http://www.w3.org/2000/svg}text")]
    assert "ConvolutionForward" in labels and "no owner op" in labels
    (first, _) = block_rects(svg_of(trace, color_by="owner"))
    assert "owner op: conv1 (ConvolutionForward)" in title(first)


@pytest.mark.slow
def test_28k_blocks_render_fast_and_stay_small():
    rng = np.random.default_rng(7)
    trace = Trace()
    n = 28_000
    starts = np.sort(rng.integers(0, 10**9, n))
    lives = rng.integers(0, 10**6, n)
    sizes = rng.integers(1, 1 << 16, n)
    addresses = rng.integers(0, 1 << 30, n) & ~0xFF
    for a, s, t0, life in zip(addresses.tolist(), sizes.tolist(), starts.tolist(),
                              lives.tolist(), strict=True):
        trace.add_memory_block(MemoryBlock(a, s, t0, t0 + life, device="cuda:0"))
    svg = svg_text(trace, MemflowOptions())   # render time: benchmarks/memflow_bench.py
    assert len(svg) < 8_000_000
    root = ET.fromstring(svg)
    alone, cells = block_rects(root), block_rects(root, "m")
    assert cells and len(alone) + len(cells) <= 20_000
    merged = sum(int(title(c).split(" ")[0].replace(",", "")) for c in cells)
    assert len(alone) + merged == n
    legend = root.find(".//svg:g[@id='legend']", NS)
    legend_text = [t.text for t in legend.iter("{http://www.w3.org/2000/svg}text")]
    assert f"{merged:,} sub-pixel blocks" in legend_text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1 << 47), st.integers(1, 1 << 24)), min_size=1,
                max_size=40))
def test_regions_cover_every_block(blocks):
    address = np.array([a for a, _ in blocks], np.int64)
    size = np.array([s for _, s in blocks], np.int64)
    regions, region_of, skipped = split_regions(np.zeros(len(blocks), np.int64), address, size)
    for i, (a, s) in enumerate(blocks):
        _, low, high = regions[region_of[i]]
        assert low <= a and a + s <= high
    lows = [lo for _, lo, _ in regions]
    assert lows == sorted(lows)
    assert all(prev[2] < nxt[1] for prev, nxt in pairwise(regions))   # disjoint
    assert skipped == sum(nxt[1] - prev[2] for prev, nxt in pairwise(regions))


def test_cli_memflow_writes_the_svg(data, tmp_path):
    out = tmp_path / "cnn.svg"
    result = CliRunner().invoke(app, [
        "memflow", str(data / "torch_memory" / "memory_timeline.raw.json.gz"), "--format",
        "torch_memory", "-o", str(out), "--color-by", "category", "--start", "80ms",
        "--end", "130ms", "--min-size", "1KiB"])
    assert result.exit_code == 0, result.output
    trace = traceconv.load(data / "torch_memory" / "memory_timeline.raw.json.gz")
    first = min(b.alloc_ns for b in trace.memory if b.alloc_ns is not None)
    lo, hi = first + 80_000_000, first + 130_000_000
    expected = sum(b.size >= 1024 and (b.alloc_ns is None or b.alloc_ns <= hi)
                   and (b.free_ns is None or b.free_ns >= lo) for b in trace.memory)
    assert expected == 39
    assert result.output.startswith(f"wrote {out} ({expected} of 447 blocks, ")
    root = ET.parse(out).getroot()
    legend = root.find(".//svg:g[@id='legend']", NS)
    notes = [t.text for t in legend.iter("{http://www.w3.org/2000/svg}text")]
    drawn = len(block_rects(root))
    assert f"{drawn} of 447 blocks drawn" in notes
    assert any(n.endswith("outside the time window") for n in notes)
    assert any(n.endswith("smaller than the minimum size") for n in notes)


def test_convert_to_svg_and_trace_method(data, tmp_path):
    trace = traceconv.load(data / "torch_memory" / "memory_timeline.json.gz", format="torch_memory")
    trace.memflow_svg(tmp_path / "a.svg", width=800, height=500)
    assert ET.parse(tmp_path / "a.svg").getroot().get("width") == "800"
    traceconv.save(trace, tmp_path / "b.svg.gz")
    assert (tmp_path / "b.svg.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_cli_errors_are_one_line(tmp_path):
    empty = tmp_path / "memory_timeline.json"
    empty.write_bytes(b"[]")
    result = CliRunner().invoke(app, ["memflow", str(empty), "--format", "torch_memory"])
    assert result.exit_code == 1   # (an empty timeline holds nothing: refused when read)
    assert result.output.strip() == (f"traceconv: error: {empty}: nothing read: the "
                                     "torch-memory reader found no event, statistic, op or "
                                     "memory block in it")
    result = CliRunner().invoke(app, ["memflow", "x.json", "--start", "3 fortnights"])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["memflow"], ["memory"], ["convert", "--to", "svg"]])
def test_no_blocks_names_the_input_as_given(tmp_path, command):
    """``memflow``, ``memory`` and ``--to svg`` name a trace without memory blocks as every
    input error does: the path as given (memflow named the file alone)."""
    given = tmp_path / "sub" / "no_memory.json"
    given.parent.mkdir()
    given.write_text('{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, '
                     '"ts": 1, "dur": 2}]}')
    output = ["-o", str(tmp_path / "out.svg")] if command[0] != "memory" else []
    result = CliRunner().invoke(app, [*command, str(given), *output])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"traceconv: error: {given}: no memory blocks in this trace (its reader found no "
        "allocations); see `traceconv info`")


@pytest.mark.parametrize(("args", "message"), [
    (["--start", "200ms", "--end", "100ms"], "traceconv: error: the time window ends before "
                                             "it starts"),
    (["--device", "GPU"], "no memory blocks on device 'GPU' (the trace has: '')"),
    (["--pool", "heap"], "no memory blocks on pool 'heap' (the trace has: 'timeline')"),
    (["--min-size", "4QB"], "traceconv: error: unknown size unit 'QB' in '4QB' "
                            "(use B, KiB, MiB, GiB, TiB or kB, MB, GB, TB)"),
])
def test_cli_option_errors(data, tmp_path, args, message):
    out = tmp_path / "x.svg"
    result = CliRunner().invoke(app, ["memflow", str(data / "torch_memory" /
                                                     "memory_timeline.raw.json.gz"),
                                      "-o", str(out), *args])
    assert result.exit_code == 1
    assert result.output.strip().endswith(message)
    assert not out.exists()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1 << 48), st.integers(1, 1 << 30),
                          st.none() | st.integers(0, 10**9), st.none() | st.integers(0, 10**9),
                          st.sampled_from(["cpu", "cuda:0"]), st.text(max_size=12)),
                min_size=1, max_size=30))
def test_any_blocks_give_a_valid_svg_with_one_titled_rect_each(rows):
    trace = Trace()
    for address, size, alloc, free, device, name in rows:
        if alloc is not None and free is not None and free < alloc:
            alloc, free = free, alloc
        trace.add_memory_block(MemoryBlock(address, size, alloc, free, device=device,
                                           name=name.replace("\x00", "")))
    root = svg_of(trace, color_by="lifetime")
    rects = block_rects(root)
    assert len(rects) == len(rows)
    assert all(float(r.get("width")) >= 1 and float(r.get("height")) >= 1 for r in rects)
    assert len(peaks(root)) == len({row[4] for row in rows})
