"""Allocator snapshots: safe loading, and blocks/segments checked against the snapshot's own
``device_traces`` and ``segments`` counted by plain code here."""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import subprocess
import sys
from collections import Counter

import pytest

import traceconv
from traceconv.analysis.allocation_sites import top_allocation_sites
from traceconv.errors import InputError
from traceconv.formats.torch_snapshot.unpickle import PlainUnpickler
from traceconv.report import render_report

SNAPSHOT = "samples/torch/resnet18_train_snapshot.pickle.gz"


@pytest.fixture(scope="module")
def document() -> dict:
    """The snapshot as plain data (the standard-library unpickler cannot run code here:
    find_class refuses everything, so this is the independent view of the file)."""
    with gzip.open(SNAPSHOT) as f:
        return PlainUnpickler(f).load()


@pytest.fixture(scope="module")
def trace() -> traceconv.Trace:
    return traceconv.load(SNAPSHOT)


def test_detected_by_content(tmp_path):
    odd_name = tmp_path / "memory.bin"
    with gzip.open(SNAPSHOT) as f:
        odd_name.write_bytes(f.read())
    assert traceconv.load(odd_name).metadata.source_format == "torch-snapshot"


def test_one_block_per_traced_alloc(document, trace):
    entries = document["device_traces"][0]
    actions = Counter(e["action"] for e in entries)
    allocated_at_dump = [b for s in document["segments"] for b in s["blocks"]
                         if b["state"] == "active_allocated"]
    traced = [b for b in trace.memory if b.alloc_ns is not None]
    assert len(traced) == actions["alloc"] == 1400
    # every free_completed closes one block, at that entry's time
    freed = sorted(b.free_ns for b in trace.memory if b.free_ns is not None)
    assert freed == sorted(e["time_us"] * 1000 for e in entries
                           if e["action"] == "free_completed")
    # blocks alive at dump = the snapshot's own active_allocated blocks, by address
    alive = {b.address for b in trace.memory if b.free_ns is None}
    assert alive == {b["address"] for b in allocated_at_dump}
    assert trace.diagnostics["torch_snapshot.alloc_before_history"].count == len(
        alive - {e["addr"] for e in entries if e["action"] == "alloc"})


def test_block_fields_follow_the_entry(document, trace):
    entry = next(e for e in document["device_traces"][0] if e["action"] == "alloc")
    block = next(b for b in trace.memory if b.alloc_ns == entry["time_us"] * 1000)
    assert (block.address, block.size, block.device, block.args["stream"]) == (
        entry["addr"], entry["size"], "cuda:0", entry["stream"])
    assert block.args["stack"].count("\n") == len(entry["frames"]) - 1
    requested = next(e for e in document["device_traces"][0]
                     if e["action"] == "free_requested" and e["addr"] == entry["addr"])
    assert block.args["free_requested_ns"] == requested["time_us"] * 1000
    assert block.args["free_requested_ns"] <= block.free_ns


def test_segments_are_reservations(document, trace):
    entries = document["device_traces"][0]
    assert len([r for r in trace.reservations if r.alloc_ns is not None]) == sum(
        e["action"] == "segment_alloc" for e in entries)
    at_dump = {s["address"]: s["total_size"] for s in document["segments"]}
    alive = {r.address: r.size for r in trace.reservations if r.free_ns is None}
    assert alive == at_dump


def test_counters_end_at_the_dump_state(document, trace):
    names = {t.id: t.name for t in trace.tracks}
    last = {}
    for sample in trace.iter_counter_samples():
        last[names[sample.track]] = sample.value
    assert last["cuda:0 reserved bytes"] == sum(s["total_size"] for s in document["segments"])
    # the history records requested sizes (the allocator rounds blocks up)
    assert last["cuda:0 allocated bytes"] == sum(s["requested_size"]
                                                 for s in document["segments"])


def test_annotations_become_slices(document, trace):
    starts = sum(a["stage"] == "START" for a in document["external_annotations"])
    assert len(trace.slices) == starts == 21


def test_top_sites_name_user_code(trace):
    sites = top_allocation_sites(trace.memory, 3)
    assert sites[0].site == "resnet.py:268 _forward_impl"
    assert sites[0].peak_bytes >= sites[1].peak_bytes >= sites[2].peak_bytes
    assert sites[1].site.endswith("(autograd)")


def test_oom_is_an_instant(tmp_path):
    doc = {"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "time_us": 10,
         "frames": []},
        {"action": "oom", "addr": 0, "size": 1 << 40, "stream": 0, "time_us": 12,
         "device_free": 1024, "frames": []},
        {"action": "free_requested", "addr": 4096, "size": 512, "stream": 0, "time_us": 13},
        {"action": "free_completed", "addr": 4096, "size": 512, "stream": 0, "time_us": 14},
        {"action": "mystery", "addr": 0, "size": 0, "stream": 0, "time_us": 15}]]}
    path = tmp_path / "oom.pickle"
    path.write_bytes(pickle.dumps(doc, protocol=5))
    trace = traceconv.load(path)
    (oom,) = list(trace.iter_instants())
    assert (oom.name, oom.ts, oom.args["requested bytes"]) == ("out of memory", 12_000, 1 << 40)
    (block,) = trace.memory
    assert (block.alloc_ns, block.free_ns, block.args["free_requested_ns"]) == (
        10_000, 14_000, 13_000)
    assert trace.diagnostics["torch_snapshot.unknown_action"].example == "mystery"


class Boom:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_code_in_a_pickle_is_refused_not_run(tmp_path, protocol):
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [[Boom()]]},
                                  protocol=protocol))
    with pytest.raises(InputError, match=r"refused to load global (posix|os)\.system"):
        traceconv.load(path, format="torch-snapshot")
    assert not (tmp_path / "pwned").exists()
    result = subprocess.run([sys.executable, "-m", "traceconv", "info", str(path)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "evil.pickle" in result.stderr
    assert not (tmp_path / "pwned").exists()


def test_out_of_band_buffers_are_refused():
    data = pickle.dumps(pickle.PickleBuffer(b"x" * 8), protocol=5, buffer_callback=lambda b: 0)
    with pytest.raises(InputError, match="out-of-band"):
        from traceconv.formats.torch_snapshot.unpickle import load_plain
        load_plain(io.BytesIO(data), "buf.pickle")


def test_memflow_draws_segments_behind_blocks(trace):
    from traceconv.formats.memflow_svg import MemflowOptions, svg_text
    svg = svg_text(trace, MemflowOptions())
    assert svg.index('id="reserved"') < svg.index('id="blocks"')
    assert svg.count('class="r"') == len(trace.reservations)


def test_info_and_summary_list_the_sites(trace):
    from click.testing import CliRunner

    from traceconv.cli.app import app

    expected = top_allocation_sites(trace.memory, 10)
    for command in (["info", SNAPSHOT, "--json"], ["summary", SNAPSHOT, "--json"]):
        result = CliRunner().invoke(app, command)
        assert result.exit_code == 0, result.output
        sites = json.loads(result.output)["allocation_sites"]
        assert [(s["site"], s["peak_bytes"]) for s in sites] == [
            (s.site, s.peak_bytes) for s in expected]


def test_a_snapshot_without_times_is_measured_in_entries(tmp_path):
    """A snapshot taken without ``time_us`` (torch_npu, torch < 2.1) orders its entries
    without timing them: ``info``, the report and the memory-flow legend count entries, and
    never print a duration (4 entries: the span from the first to the last is 3)."""
    doc = {"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "frames": []},
        {"action": "alloc", "addr": 8192, "size": 256, "stream": 0, "frames": []},
        {"action": "free_completed", "addr": 8192, "size": 256, "stream": 0},
        {"action": "free_completed", "addr": 4096, "size": 512, "stream": 0}]]}
    path = tmp_path / "untimed.pickle"
    path.write_bytes(pickle.dumps(doc, protocol=4))
    info = subprocess.run([sys.executable, "-m", "traceconv", "info", str(path)],
                          capture_output=True, text=True, check=True).stdout
    assert "span             3 entries" in info and " ms" not in info
    assert "3 entries" in render_report(traceconv.load(path))
    svg = tmp_path / "m.svg"
    subprocess.run([sys.executable, "-m", "traceconv", "memflow", str(path), "-o", str(svg),
                    "--color-by", "lifetime"], capture_output=True, check=True)
    legend = svg.read_text()
    assert "≤ 10 entries" in legend and "≤ 10 ns" not in legend


def test_the_reports_plot_marks_the_peak_at_its_own_entry(tmp_path):
    """A history longer than the plot's 720 points is drawn as bucket peaks: the peak's
    circle names the entry where it begins, as the pane's text does, and the curve reaches
    the last entry (a hand-built history: the one 1 MiB block lives at entries 1,003-1,004)."""
    entries = []
    for k in range(2000):
        size = 1 << 20 if k == 1003 else 512
        if k == 1004:
            entries.append({"action": "free_completed", "addr": 1 << 30, "size": 1 << 20,
                            "stream": 0})
            continue
        entries.append({"action": "alloc", "addr": (1 << 30) if k == 1003 else 4096 * (k + 1),
                        "size": size, "stream": 0, "frames": []})
    path = tmp_path / "long.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [entries]}, protocol=4))
    html = render_report(traceconv.load(path))
    assert "entry 1,003 after the device" in html
    # 1,002 blocks of 512 B and the 1 MiB one: 1.49 MiB
    assert "allocated peak 1.49 MiB at entry 1,003</title>" in html
