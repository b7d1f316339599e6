"""Kineto traces from public repositories, views checked against the raw JSON.

- An RTX 3090 trace whose host thread id is not its process id (tid 566744896 in pid 22806):
  Kineto's overhead rows (pid -1: ``Resource``, ``Instrumentation``, ``Activity Buffer
  Request``) go to the thread of the op they interrupted, as torch puts a Kineto event with
  no op of its own on the thread that stopped the profiler (``setKinetoTID``), whatever the
  thread's number; ``summary``, ``diff``'s attribution and the critical path read them the
  same way.
- A ROCm MI300 trace whose stream runs GEMM, PostGSU2, GEMM, ...: ``--sequences`` counts
  each kernel once per sequence, and ``--launch-stats`` keeps every number whole at 80
  columns.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

import traceconv
from traceconv.analysis.activity import Timeline
from traceconv.analysis.attribution import attribute_steps
from traceconv.analysis.critical_path import critical_path
from traceconv.analysis.kernel_patterns import frequent_sequences
from traceconv.analysis.op_summary import op_summary
from traceconv.cli import app

DATA = Path(__file__).parent / "data" / "torch"
TID_NOT_PID = DATA / "bclarkson_rtx3090_overhead_tid.pt.trace.json"
MI300 = DATA / "tracelens_mi300_gemm01_few_tiles.json.gz"
# a number cut by an ellipsis ("10,78…", "…785.0"), which reads as another number
CUT_NUMBER = re.compile(r"(?<![\w#])[-+]?\d[\d,.]*…(?!\w)|(?<!\w)…[\d,.]*\d(?![\w])")


def _ns(value) -> int:
    return round(Decimal(str(value)) * 1000)


def _raw_slices(data: dict) -> list[dict]:
    """The complete events of work (not the profiler's own span), times in ns on the
    trace's clock (``baseTimeNanoseconds`` + ``ts``)."""
    base = data.get("baseTimeNanoseconds", 0)
    return [e | {"start": base + _ns(e["ts"]), "end": base + _ns(e["ts"]) + _ns(e["dur"])}
            for e in data["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"]


def _union(spans: list[tuple[int, int]]) -> int:
    total, reach = 0, min(s for s, _ in spans)
    for s, e in sorted(spans):
        total += max(0, e - max(s, reach))
        reach = max(reach, e)
    return total


def _load_json(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def test_overhead_rows_nest_in_the_op_they_interrupt_whatever_the_thread_id(tmp_path):
    data = _load_json(TID_NOT_PID)
    slices = _raw_slices(data)
    (sync,) = [e for e in slices if e["name"] == "cudaDeviceSynchronize"]
    overhead = [e for e in slices if e["cat"] == "overhead"]
    assert sync["tid"] != sync["pid"] and {e["pid"] for e in overhead} == {-1}
    inside = [(e["start"], e["end"]) for e in overhead
              if sync["start"] <= e["start"] and e["end"] <= sync["end"]]
    assert len(inside) == 6   # four Resource, two Instrumentation
    expected_sync_self = sync["end"] - sync["start"] - _union(inside)
    expected_total = _union([(e["start"], e["end"]) for e in slices])
    assert (expected_sync_self, expected_total) == (169_134_050, 189_546_958)   # (by hand too)

    for path in (TID_NOT_PID, _with_tid_set_to_pid(data, tmp_path)):
        trace = traceconv.load(path)
        rows = {r.name: r for r in op_summary(trace)}
        assert rows["cudaDeviceSynchronize"].self_host_ns == expected_sync_self
        assert sum(r.self_host_ns or 0 for r in rows.values()) == expected_total
        assert {n for n, r in rows.items() if r.kind == "overhead"} == {
            "Resource", "Instrumentation", "Activity Buffer Request"}
        # diff charges each moment to one thing: the same self time (one rule)
        attributed = attribute_steps(trace)
        sync_key = attributed.keys.index(("cudaDeviceSynchronize", "cpu"))
        assert int(attributed.ns[sync_key].sum()) == expected_sync_self
        # the buffer request is the host thread's own time, not a wait on another thread
        path_entries = critical_path(trace).path
        assert not [e for e in path_entries if e.kind == "wait"]
        (request,) = [e for e in slices if e["name"] == "Activity Buffer Request"]
        assert [(e.start_ns, e.end_ns) for e in path_entries
                if e.name == "Activity Buffer Request"] == [(request["start"], request["end"])]


def _with_tid_set_to_pid(data: dict, tmp_path: Path) -> Path:
    """The same trace with the host thread numbered as its process (the OS's main thread)."""
    events = [e | {"tid": e["pid"]} if e.get("tid") == 566744896 else e
              for e in data["traceEvents"]]
    path = tmp_path / "tid_is_pid.pt.trace.json"
    path.write_text(json.dumps(data | {"traceEvents": events}))
    return path


def _kernels() -> list[dict]:
    events = _load_json(MI300)["traceEvents"]
    return sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"),
                  key=lambda e: e["ts"])


def test_sequences_count_each_kernel_once_in_a_row():
    kernels = _kernels()
    names = [e["name"] for e in kernels]
    gemm, post = names[0], names[1]
    assert len(names) == 20 and names == [gemm, post] * 10 and len({e["tid"] for e in kernels}) == 1
    # G P G P ...: "G P G" starts at 0, 2, 4, ... 16 (9 windows, overlapping); counted left
    # to right without overlap: at 0, 4, 8, 12, 16
    starts = [0, 4, 8, 12, 16]
    expected_ns = sum(_ns(kernels[i + k]["dur"]) for i in starts for k in range(3))
    device_ns = sum(_ns(e["dur"]) for e in kernels)
    rows = frequent_sequences(Timeline(traceconv.load(MI300)), 3)
    first = next(r for r in rows if r["sequence"] == [gemm, post, gemm])
    assert (first["count"], first["gpu_ns"]) == (5, expected_ns)
    second = next(r for r in rows if r["sequence"] == [post, gemm, post])
    assert second["count"] == 5   # at 1, 5, 9, 13, 17
    assert all(r["gpu_ns"] <= device_ns for r in rows)


def _nearest_rank(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)), 1) - 1]


def test_launch_stats_keep_every_number_whole_at_80_columns():
    events = _load_json(MI300)["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    delays = []
    for f in (e for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g"):
        s = starts[f["id"]]
        (launch,) = [e for e in slices if e["ts"] == s["ts"] and e["tid"] == s["tid"]
                     and e["cat"] != "python_function"]
        (kernel,) = [e for e in slices if e["ts"] == f["ts"] and e["cat"] == "kernel"]
        delays.append(max(0.0, kernel["ts"] - (launch["ts"] + launch["dur"])))
    assert len(delays) == 20
    shown = {f"{_nearest_rank(delays, q):,.1f}" for q in (0.5, 0.9, 0.99)}
    assert shown == {"5,398.0", "9,703.0", "10,785.0"}   # (the cut cells)

    result = CliRunner().invoke(app, ["summary", str(MI300), "--launch-stats"],
                                env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    (delay_line,) = [line for line in lines if line.startswith("launch delay")]
    assert shown <= set(delay_line.split())
    assert not CUT_NUMBER.findall(result.stdout)
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("1 column hidden at 80 columns: --wide shows it (p95)")
               for line in lines)


def test_tables_keep_one_style_at_every_width():
    """critical-path drew a box when its table fitted and light rules when it did not."""
    for columns in ("80", "10000"):
        for args in (["critical-path", str(TID_NOT_PID)], ["summary", str(MI300), "--streams"],
                     ["diff", str(TID_NOT_PID), str(TID_NOT_PID)]):
            result = CliRunner().invoke(app, args, env={"COLUMNS": columns, "NO_COLOR": "1"})
            assert result.exit_code == 0, result.output
            assert not set(result.stdout) & set("┏┃┡│└┌┐┘"), (args, columns, result.stdout)
            assert any(set(line) == {"─"} for line in result.stdout.splitlines())
