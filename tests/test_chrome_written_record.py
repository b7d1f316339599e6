"""Chrome JSON that traceconv wrote reads back to the model it came from: the metadata
(``traceconv/model/metadata_record.py``), op statistics (``traceconv/model/stats_record.py``)
and the processes and tracks (``traceconv/formats/chrome/written_tracks.py``) of its
``traceconv`` key.

Expected values come from the sources read plainly (``json``, ``gzip``, ``sqlite3``) and from
the written JSON read with ``json``; a ``traceconv`` key that says anything else is input,
trusted no further than its types.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import traceconv
from traceconv.model import Trace
from traceconv.model.validate import validate

ROOT = Path(__file__).resolve().parent.parent
TRTEXEC = ROOT / "samples" / "trtexec"
ENGINE = [TRTEXEC / f"resnet_rtx3090_fp32.engine.{part}.json.gz"
          for part in ("graph", "profile", "timing", "profile.metadata")]
NSYS = ROOT / "samples" / "nsys" / "mock_rtx3080_nsys2026.1.sqlite"


@pytest.mark.slow   # (a subprocess: over 2 s)
def test_trtexec_stated_figures_and_device_survive_chrome_json_on_the_command_line(tmp_path):
    """The issue's reproducer: ``traceconv X --to chrome -o y.json``, then reading y.json."""
    out = tmp_path / "y.json"
    subprocess.run([sys.executable, "-m", "traceconv", *map(str, ENGINE), "--to", "chrome",
                    "-o", str(out)], check=True, capture_output=True, cwd=ROOT)
    summary = json.loads(gzip.decompress(ENGINE[-1].read_bytes()))
    perf, device = summary["performance_summary"], summary["device_information"]
    again = traceconv.load(out).metadata
    assert again.run.walltime_ns == round(perf["Total Host Walltime"] * 1e9)
    assert again.run.throughput_per_s == perf["Throughput"]
    assert (again.run.latency_min_ns, again.run.latency_max_ns) == tuple(
        round(ms * 1e6) for ms in perf["Latency"][:2])
    (found,) = again.devices
    assert found.name == device["Selected Device"]
    assert found.memory_bytes == int(device["Device Global Memory"].removesuffix(" MiB")) << 20
    assert again.source_format == "chrome" and again.attributes["converted_from"] == "trtexec"


def test_nsys_gpus_and_clock_survive_chrome_json(tmp_path):
    with sqlite3.connect(f"file:{NSYS}?mode=ro", uri=True) as db:
        gpus = db.execute("select id, name, totalMemory, computeMajor, computeMinor "
                          "from TARGET_INFO_GPU order by id").fetchall()
    trace = traceconv.load(NSYS)
    traceconv.save(trace, tmp_path / "y.json")
    again = traceconv.load(tmp_path / "y.json")
    assert [(d.id, d.name, d.memory_bytes, d.compute_major, d.compute_minor)
            for d in again.metadata.devices] == gpus
    # nsys's session clock and the reading's findings, not the Chrome reader's own words
    assert again.metadata.clock == trace.metadata.clock != "relative"
    assert again.diagnostics.count("nsys.table_not_read") == trace.diagnostics.count(
        "nsys.table_not_read") > 0
    # no framework is PyTorch's: the file is not read as a Kineto trace
    assert again.metadata.framework is None and again.metadata.attributes["flavour"] != "kineto"


def _overlapping() -> Trace:
    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("python", pid=7), tid=7)
    trace.add_slice(main, 0, 100, "step")
    trace.add_slice(main, 50, 100, "late")   # (crosses step's end: drawn on a lane)
    return trace.freeze()


def test_a_lane_thread_folds_back_into_its_home_thread(tmp_path):
    traceconv.save(_overlapping(), tmp_path / "y.json")
    written = json.loads((tmp_path / "y.json").read_text())
    threads = {e["args"]["name"] for e in written["traceEvents"] if e.get("name") == "thread_name"}
    assert threads == {"main", "main (overlap lane 1)"}   # two threads in the file
    again = traceconv.load(tmp_path / "y.json")
    assert [t.name for t in again.tracks] == ["main"]
    assert sorted(again.strings.strings[n] for n in again.slices.name) == ["late", "step"]
    assert set(again.slices.track) == {0}


def test_statistics_of_a_paddle_report_survive_chrome_json(tmp_path):
    """Row one of the report's first table, by hand from the text: ParallelExecutor::Run,
    10 calls, 120.5 ms total (``samples/paddle/report_gpu_before.txt``)."""
    path = ROOT / "samples" / "paddle" / "report_gpu_before.txt"
    line = next(x for x in path.read_text().splitlines() if "ParallelExecutor::Run" in x)
    calls, total_ms = line.split()[1:3]
    traceconv.save(traceconv.load(path), tmp_path / "y.json")
    first = traceconv.load(tmp_path / "y.json").stats[0]
    assert (first.name.split("::", 1)[1], first.calls, first.total_ns) == (
        "ParallelExecutor::Run", int(calls), round(float(total_ms) * 1e6))


def test_a_second_conversion_names_the_first_source(tmp_path):
    traceconv.save(traceconv.load(NSYS), tmp_path / "one.json")
    traceconv.save(traceconv.load(tmp_path / "one.json"), tmp_path / "two.json")
    assert traceconv.load(tmp_path / "two.json").metadata.attributes["converted_from"] == "nsys"


def test_a_traceconv_key_that_says_anything_else_is_counted_not_trusted(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps({
        "traceconv": {
            "rank": "2", "world_size": 2**70, "devices": "GPU", "run": [1],
            "clock": 5, "diagnostics": [{"code": "chrome.made_up", "count": 3}, 7],
            "processes": [[1, "p", "no such kind", None, []], ["x"], [1, "p", "host", 1, [3]]],
            "threads": [[1, 1, "t", "thread", 5, 1], [9, 9, "orphan", "thread", None, 9]],
            "counters": "none",
            "lanes": [[1, 2, 3], [1, 3, 2]],   # (each the other's home: neither folds)
            "stats": [{"name": "ok", "calls": 1, "total_ns": 5}, 7],
        },
        "traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 1, "name": "a"},
                        {"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 1, "name": "b"},
                        {"ph": "X", "pid": 1, "tid": 3, "ts": 0, "dur": 1, "name": "c"}]}))
    trace = traceconv.load(path)
    assert validate(trace) == []
    meta = trace.metadata
    assert (meta.rank, meta.world_size, meta.devices, meta.run.stated(), meta.clock) == (
        None, None, [], False, "unknown")
    # 3 bad process rows, the thread with a unit of 5 and the one in no process
    assert trace.diagnostics.count("chrome.written_record_unread") == 5
    assert trace.diagnostics.count("input.unknown_diagnostic") == 3 + 1
    assert len(trace.tracks) == 3 and len(trace.slices) == 3
    # statistics: all rows or none (rows name their parents by place)
    assert trace.stats == [] and trace.diagnostics.count("input.carried_stats_unread") == 2


def test_a_file_of_an_older_traceconv_keeps_what_its_record_does_not_say(tmp_path):
    """Before devices and the run were kept, the key held source, framework, rank and clock:
    the devices Kineto's ``deviceProperties`` gives stay."""
    properties = [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85, "computeMajor": 9,
                   "computeMinor": 0}]
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "traceconv": {"source_format": "chrome", "framework": "PyTorch", "rank": 3,
                      "clock": "unix epoch"},
        "deviceProperties": properties,
        "traceEvents": [{"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 1, "dur": 2,
                         "name": "gemm"}]}))
    meta = traceconv.load(path).metadata
    assert [(d.id, d.name, d.memory_bytes) for d in meta.devices] == [(0, "NVIDIA H100", 85)]
    assert meta.rank == 3 and meta.framework == "PyTorch"
