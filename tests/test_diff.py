"""``traceconv diff``: per-op change between two profiles (reports, summaries, timelines)."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

import traceconv
from traceconv.analysis.diff import diff, op_totals
from traceconv.cli import app

DATA = Path(__file__).parent / "data" / "paddle"


def test_before_after_reports_the_memcpy_story():
    before = traceconv.load(DATA / "gpu_before_report.txt")
    after = traceconv.load(DATA / "gpu_after_report.txt")
    rows = {(d.section, d.name): d for d in diff(before, after, sort="calls")}
    memcpy = rows[("memcpy", "GpuMemcpy")]
    assert (memcpy.a.calls, memcpy.b.calls, memcpy.delta["calls"]) == (1200, 600, -600)
    assert memcpy.delta["total_ns"] == 2_500_000 - 6_000_000
    sync = rows[("events", "ParallelExecutor::Run/while/GpuMemcpySync:GPU->CPU")]
    assert (sync.delta["calls"], sync.delta["cpu_ns"]) == (-600, 2_500_000 * 3 // 4 - 4_500_000)
    ordered = diff(before, after, sort="calls")
    assert [abs(d.delta["calls"]) for d in ordered[:2]] == [600, 600]
    # by total (the default) the largest absolute time change leads
    first = diff(before, after)[0]
    assert abs(first.delta["total_ns"]) == max(abs(d.delta["total_ns"] or 0)
                                               for d in diff(before, after))


def test_per_thread_rows_fold_into_their_path():
    totals = op_totals(traceconv.load(DATA / "static_mt_CPU_Default.txt"))
    merged = totals[("events", "conv2d")]
    per_thread = totals[("events per thread", "conv2d")]
    assert merged.calls == per_thread.calls == 24
    assert merged.ratio is not None


def test_two_timelines_of_one_run_differ_by_nothing():
    pb = traceconv.load(DATA / "small_2.6.2.paddle_trace.pb.gz")
    json = traceconv.load(DATA / "small_2.6.2.paddle_trace.json.gz")
    rows = diff(pb, json, sort="calls")
    assert rows and all(d.delta["calls"] == 0 for d in rows)
    step = next(d for d in rows if d.name == "ProfileStep#1")
    # the JSON keeps microseconds: within 1 µs of the protobuf's nanoseconds
    assert abs(step.delta["total_ns"]) < 1_000 and step.a.cpu_ns == step.a.total_ns


def test_cli_table_and_json():
    runner = CliRunner()
    a, b = str(DATA / "gpu_before_report.txt"), str(DATA / "gpu_after_report.txt")
    result = runner.invoke(app, ["diff", a, b, "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert doc["sort"] == "total" and len(doc["rows"]) == 8 + 3 + 3 + 2  # events, overhead, memcpy, memory
    table = runner.invoke(app, ["diff", a, b, "--section", "memcpy", "--sort", "calls", "--wide"])
    assert table.exit_code == 0 and "GpuMemcpy" in table.output and "-600" in table.output
    missing = runner.invoke(app, ["diff", a, str(DATA / "nope.txt")])
    assert missing.exit_code == 1 and len(missing.output.strip().splitlines()) == 1


def test_timeline_ratios_count_nested_time_once():
    from traceconv.model import ProcessKind, Trace

    def trace(child_ns: int) -> Trace:
        t = Trace()
        host = t.add_process("host")
        gpu = t.add_process("GPU 0", kind=ProcessKind.DEVICE)
        thread, stream = t.add_track("t", process=host), t.add_track("s", process=gpu)
        t.add_slice(thread, 0, 100, "step")
        t.add_slice(thread, 10, child_ns, "conv2d")
        t.add_slice(stream, 20, 30, "gemm")
        t.add_slice(stream, 60, 10, "MEMCPY_HtoD")
        return t

    totals = op_totals(trace(60))
    # top-level time of "events": step 100 + gemm 30 (conv2d is inside step)
    assert totals[("events", "step")].ratio == round(100 * 100 / 130, 6)
    assert totals[("events", "conv2d")].ratio == round(100 * 60 / 130, 6)
    assert totals[("events", "gemm")].device_ns == 30 and totals[("events", "gemm")].cpu_ns is None
    assert totals[("memcpy", "MEMCPY_HtoD")].ratio == 100
    (change,) = [d for d in diff(trace(60), trace(40)) if d.name == "conv2d"]
    assert change.delta["total_ns"] == change.delta["cpu_ns"] == -20


SAMPLES = Path(__file__).parent.parent / "samples" / "torch"
LABELLED = orjson.loads((Path(__file__).parent / "data" / "vocabulary" / "names_roles.json")
                        .read_bytes())


def test_a_timelines_copy_section_is_its_copies_and_copy_calls():
    """Hand count with plain json: the device copies and memsets (their categories) and the
    runtime calls that name one, each name once a section, with its calls."""
    import gzip
    from collections import Counter

    path = SAMPLES / "resnet18_train_cuda.pt.trace.json.gz"
    events = orjson.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    expected = Counter(e["name"] for e in events if e.get("ph") == "X" and (
        e.get("cat") in ("gpu_memcpy", "gpu_memset") or e.get("cat") == "cuda_runtime"
        and ("Memcpy" in e["name"] or "Memset" in e["name"])))
    totals = op_totals(traceconv.load(path))
    assert {name: t.calls for (section, name), t in totals.items()
            if section == "memcpy"} == dict(expected) == {"Memset (Device)": 18,
                                                          "cudaMemsetAsync": 18}


def test_a_name_is_in_the_copy_section_as_its_hand_label_says():
    """Every hand-labelled name (tests/data/vocabulary), one slice each on a host thread: in
    ``memcpy`` exactly when it is labelled a copy or a memset (and no device's sync marker);
    the data reader's host copies (Paddle's) are no device copy."""
    names = {name: roles for part in ("harvested", "by_hand")
             for name, roles in LABELLED[part].items() if name not in LABELLED["known_misses"]}
    names |= {"BufferedReader:MemoryCopy": [], "TensorCopy": []}
    trace = traceconv.Trace()
    main = trace.add_track("main", process=trace.add_process("python"))
    for at, name in enumerate(sorted(names)):
        trace.add_slice(main, 10 * at, 5, name)
    sections = {name: section for section, name in op_totals(trace)}
    wrong = {name: sections[name] for name, roles in names.items()
             if (sections[name] == "memcpy")
             != (bool({"memcpy", "memset"} & set(roles)) and "device_sync" not in roles)}
    assert wrong == {}
