"""rocprof v1/v2 (results.csv/.json/.db, stats CSV) and rocprofv3 CSV files.

Every expected value is computed here from the files themselves with the standard ``csv``,
``json`` and ``sqlite3`` modules, never from the reader.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
import shutil
import sqlite3
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.cli_errors import one_error_line, run
from tests.conftest import DATA, SAMPLES, SHARED
from traceconv.analysis.summary import summarize

HERE = DATA / "rocprof"
V1 = SAMPLES / "rocprof" / "llamacpp_results"
ROUND5 = SHARED.parent / "corpus" / "round5" / "rocprof" / "joursbleu_llamacpp_results"
DOCS = HERE / "ROCm__rocprofiler-sdk__docs_"
DECODE = SAMPLES / "rocprof" / "jimw567__rocprof-unified-viewer__decode_"

Dispatch = tuple[str, int, int]


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def csv_dispatches(path: Path) -> Counter[Dispatch]:
    return Counter((r["KernelName"], int(r["BeginNs"]), int(r["EndNs"])) for r in csv_rows(path))


def json_dispatches(path: Path) -> Counter[Dispatch]:
    events = json.loads(path.read_text())["traceEvents"]
    return Counter((e["args"]["KernelName"], int(e["args"]["BeginNs"]), int(e["args"]["EndNs"]))
                   for e in events if e.get("ph") == "X")


def db_dispatches(path: Path) -> Counter[Dispatch]:
    """(rocprof stored each name with the CSV's double quotes around it)"""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return Counter((name.removeprefix('"').removesuffix('"'), begin, end) for name, begin, end
                       in db.execute('select "KernelName", "BeginNs", "EndNs" from KERN'))


def slices(trace: traceconv.Trace) -> Counter[Dispatch]:
    return Counter((s.name, s.start, s.start + s.dur) for s in trace.iter_slices())


def per_track(trace: traceconv.Trace) -> Counter[tuple[str, str]]:
    return Counter((trace.processes[trace.tracks[s.track].process].name,
                    trace.tracks[s.track].name) for s in trace.iter_slices())


def check_v1_run(stem: Path, dispatches: int) -> None:
    """The same dispatches from the CSV, the JSON and the database, as each file states."""
    expected = csv_dispatches(stem.with_suffix(".csv"))
    assert sum(expected.values()) == dispatches
    assert json_dispatches(stem.with_suffix(".json")) == expected
    assert db_dispatches(stem.with_suffix(".db")) == expected
    queues = Counter((f"GPU {r['gpu-id']}", f"queue {r['queue-id']}")
                     for r in csv_rows(stem.with_suffix(".csv")))
    for suffix in (".csv", ".json", ".db"):
        trace = traceconv.load(stem.with_suffix(suffix))
        assert trace.metadata.source_format == "rocprof"
        assert slices(trace) == expected, suffix
        assert per_track(trace) == queues, suffix


def test_v1_csv_json_and_db_give_the_same_dispatches():
    check_v1_run(V1, 64)


@pytest.mark.shared
def test_v1_shared_run_gives_1963_dispatches_from_each_file():
    if not ROUND5.with_suffix(".csv").is_file():
        pytest.skip("../shared/corpus/round5 is not beside this checkout")
    check_v1_run(ROUND5, 1963)


def test_v1_dispatch_keeps_the_other_columns_as_args():
    row = csv_rows(V1.with_suffix(".csv"))[0]
    for suffix in (".csv", ".json", ".db"):
        args = traceconv.load(V1.with_suffix(suffix)).slice(0).args
        assert args["DispatchNs"] == int(row["DispatchNs"]), suffix
        assert args["CompleteNs"] == int(row["CompleteNs"]), suffix
        assert args["obj"] == row["obj"] and args["grd"] == int(row["grd"]), suffix


def test_v1_json_counts_what_it_does_not_read():
    events = json.loads(V1.with_suffix(".json").read_text())["traceEvents"]
    codes = {d.code: d.count for d in traceconv.load(V1.with_suffix(".json")).diagnostics}
    assert codes["rocprof.empty_event"] == sum(1 for e in events if not e)
    assert codes["rocprof.metadata_event"] == sum(1 for e in events if e.get("ph") == "M")


@pytest.mark.parametrize("path", [V1.with_suffix(".stats.csv"),
                                  Path(f"{DOCS}hip_api_stats.csv")], ids=["v1", "v3"])
def test_stats_rows(path: Path):
    rows = csv_rows(path)
    stats = traceconv.load(path).stats
    assert [(s.name, s.calls, s.total_ns) for s in stats] == [
        (r["Name"], int(r["Calls"]), int(r["TotalDurationNs"])) for r in rows]
    assert [s.ratio for s in stats] == [float(r["Percentage"]) for r in rows]


def test_stats_sections_come_from_the_file_name():
    assert {s.section for s in traceconv.load(V1.with_suffix(".stats.csv")).stats} == {"kernel"}
    assert {s.section for s in traceconv.load(Path(f"{DOCS}hip_api_stats.csv")).stats} == {
        "hip_api"}


@pytest.mark.parametrize("path", [Path(f"{DOCS}kernel_trace.csv"), Path(f"{DECODE}kernel_trace.csv"),
                                  HERE / "csc-training__hip-programming__kernel_trace.csv",
                                  HERE / "amd__HPCTrainingExamples__omp_kernel_trace_head.csv"],
                         ids=["docs", "new-layout", "old-layout", "no-dispatch-id"])
def test_v3_kernel_trace(path: Path):
    rows = csv_rows(path)
    trace = traceconv.load(path)
    assert slices(trace) == Counter((r["Kernel_Name"], int(r["Start_Timestamp"]),
                                     int(r["End_Timestamp"])) for r in rows)
    agent = {r["Agent_Id"]: r["Agent_Id"].removeprefix("Agent ") for r in rows}
    assert per_track(trace) == Counter((f"agent {agent[r['Agent_Id']]}", f"queue {r['Queue_Id']}")
                                       for r in rows)


def test_v3_start_stop_ranges_on_thread_0_are_no_thread_time():
    """rocprofv3 writes a ``roctxRangeStart``/``Stop`` range on thread 0 (it may start and
    stop on different threads): an async track of the process, not host time; push/pop
    ranges and marks stay on their thread."""
    path = HERE / "ROCm__rocprofiler-sdk__docs_marker_api_trace.csv"
    rows = csv_rows(path)
    trace = traceconv.load(path)
    kinds = {s.name: trace.tracks[s.track].kind.value for s in trace.iter_slices()}
    assert kinds == {r["Function"]: "async" if r["Thread_Id"] == "0" else "thread"
                     for r in rows}
    # host time: the outermost push/pop range on thread 717 (it holds the other)
    outer = max((r for r in rows if r["Thread_Id"] != "0"),
                key=lambda r: int(r["End_Timestamp"]) - int(r["Start_Timestamp"]))
    host_seconds = summarize(trace).total_host_time
    assert host_seconds == pytest.approx(
        (int(outer["End_Timestamp"]) - int(outer["Start_Timestamp"])) / 1e9, abs=1e-12)


@pytest.mark.parametrize("path", [Path(f"{DECODE}hip_api_trace.csv"),
                                  HERE / "ROCm__rocm-systems__docs_rccl_trace.csv"],
                         ids=["hip", "rccl"])
def test_v3_api_trace_on_threads(path: Path):
    rows = csv_rows(path)
    trace = traceconv.load(path)
    threads = Counter((int(r["Process_Id"]), int(r["Thread_Id"])) for r in rows)
    got = Counter((trace.processes[trace.tracks[s.track].process].pid, trace.tracks[s.track].tid)
                  for s in trace.iter_slices())
    assert got == threads
    assert Counter(s.name for s in trace.iter_slices()) == Counter(r["Function"] for r in rows)


def test_v3_memory_copies():
    path = Path(f"{DOCS}memory_copy_trace.csv")
    rows = csv_rows(path)
    trace = traceconv.load(path)
    assert slices(trace) == Counter((r["Direction"], int(r["Start_Timestamp"]),
                                     int(r["End_Timestamp"])) for r in rows)


def test_v3_counters_without_times_are_statistics():
    path = Path(f"{DOCS}counter_collection.csv")
    rows = csv_rows(path)
    stats = traceconv.load(path).stats
    assert len(stats) == len({r["Dispatch_Id"] for r in rows})
    by_dispatch = {s.extra["Dispatch_Id"]: s.extra for s in stats}
    for r in rows:
        assert by_dispatch[r["Dispatch_Id"]][r["Counter_Name"]] == float(r["Counter_Value"])


def test_v3_counters_with_times_are_dispatches_with_their_values():
    path = HERE / "jimw567__rocprof-unified-viewer__decode_stall_counter_collection.csv"
    rows = csv_rows(path)
    trace = traceconv.load(path)
    assert len(trace.slices) == len({r["Dispatch_Id"] for r in rows})
    by_dispatch = {s.args["Dispatch_Id"]: s.args for s in trace.iter_slices()}
    for r in rows:
        assert by_dispatch[int(r["Dispatch_Id"])][r["Counter_Name"]] == float(r["Counter_Value"])


def test_v3_counters_given_with_their_kernel_trace_are_args_of_the_dispatches():
    counters = csv_rows(Path(f"{DOCS}counter_collection.csv"))
    trace = traceconv.combine([traceconv.load(f"{DOCS}kernel_trace.csv"),
                               traceconv.load(f"{DOCS}counter_collection.csv")])
    assert len(trace.slices) == len(csv_rows(Path(f"{DOCS}kernel_trace.csv")))
    assert not trace.stats
    by_dispatch = {(s.args["Dispatch_Id"], s.name): s.args for s in trace.iter_slices()}
    for r in counters:
        key = (int(r["Dispatch_Id"]), r["Kernel_Name"])
        assert by_dispatch[key][r["Counter_Name"]] == float(r["Counter_Value"])


def test_v3_counters_of_another_run_are_counted_not_joined():
    stall = HERE / "jimw567__rocprof-unified-viewer__decode_stall_counter_collection.csv"
    kernels = {(r["Dispatch_Id"], r["Kernel_Name"]) for r in csv_rows(Path(f"{DECODE}kernel_trace.csv"))}
    dispatches = {(r["Dispatch_Id"], r["Kernel_Name"]) for r in csv_rows(stall)}
    trace = traceconv.combine([traceconv.load(f"{DECODE}kernel_trace.csv"), traceconv.load(stall)])
    codes = {d.code: d.count for d in trace.diagnostics}
    assert codes["rocprof.counter_without_dispatch"] == len(dispatches - kernels) > 0


def test_v3_run_given_together_has_launch_flows():
    kernels, calls = csv_rows(Path(f"{DECODE}kernel_trace.csv")), csv_rows(
        Path(f"{DECODE}hip_api_trace.csv"))
    trace = traceconv.combine([traceconv.load(f"{DECODE}kernel_trace.csv"),
                               traceconv.load(f"{DECODE}hip_api_trace.csv")])
    assert len(trace.slices) == len(kernels) + len(calls)
    launched = {r["Correlation_Id"] for r in calls}
    linked = [r for r in kernels if r["Correlation_Id"] in launched]
    assert len(trace.flows) == len(linked) > 0
    for flow in trace.iter_flows():
        call, dispatch = trace.slice(flow.source), trace.slice(flow.target)
        assert call.args["Correlation_Id"] == dispatch.args["Correlation_Id"]
    codes = {d.code: d.count for d in trace.diagnostics}
    assert codes["rocprof.work_without_call"] == len(kernels) - len(linked)


def test_v3_files_of_another_run_read_with_the_gap_counted():
    docs_kernels = csv_rows(Path(f"{DOCS}kernel_trace.csv"))
    trace = traceconv.combine([traceconv.load(f"{DOCS}kernel_trace.csv"),
                               traceconv.load(HERE / "ROCm__rocm-systems__docs_rccl_trace.csv")])
    rccl = {r["Correlation_Id"] for r in csv_rows(HERE / "ROCm__rocm-systems__docs_rccl_trace.csv")}
    unmatched = sum(1 for r in docs_kernels if r["Correlation_Id"] not in rccl)
    codes = {d.code: d.count for d in trace.diagnostics}
    assert codes["rocprof.work_without_call"] == unmatched == len(docs_kernels) - len(trace.flows)


@pytest.mark.parametrize("path", [V1.with_suffix(".csv"), V1.with_suffix(".json"),
                                  V1.with_suffix(".db"), V1.with_suffix(".stats.csv"),
                                  Path(f"{DOCS}kernel_trace.csv")], ids=lambda p: p.name)
def test_detected_by_content_without_a_name(tmp_path: Path, path: Path):
    plain = tmp_path / "output"
    shutil.copy(path, plain)
    assert traceconv.load(plain).metadata.source_format == "rocprof"


def test_the_chrome_reader_no_longer_takes_the_v1_json():
    from traceconv import registry
    from traceconv.io import Source

    assert registry.detect(Source(V1.with_suffix(".json"))).name == "rocprof"


@pytest.mark.parametrize(("path", "column"), [(V1.with_suffix(".csv"), "EndNs"),
                                              (Path(f"{DOCS}kernel_trace.csv"), "Queue_Id")],
                         ids=["v1", "v3"])
def test_missing_column_is_one_located_line(tmp_path: Path, path: Path, column: str):
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    at = rows[0].index(column)
    cut = tmp_path / path.name
    with cut.open("w", newline="") as f:
        csv.writer(f).writerows([row[:at] + row[at + 1:] for row in rows])
    one_error_line(run("info", str(cut)), str(cut), repr(column))


def test_info_json_counts_and_pftrace(tmp_path: Path):
    result = run("info", "--json", str(V1.with_suffix(".db")))
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert (info["format"], info["slices"], info["processes"]) == ("rocprof", 64, 1)
    out = tmp_path / "run.pftrace"
    assert run("convert", f"{DECODE}kernel_trace.csv", f"{DECODE}hip_api_trace.csv",
               "-o", str(out)).exit_code == 0
    back = traceconv.load(out)
    assert len(back.slices) == (len(csv_rows(Path(f"{DECODE}kernel_trace.csv")))
                                + len(csv_rows(Path(f"{DECODE}hip_api_trace.csv"))))
    summary = run("summary", str(V1.with_suffix(".csv")))
    assert summary.exit_code == 0 and "kernel" in summary.stdout


_NAMES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1,
                 max_size=20)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_NAMES, st.integers(0, 3), st.integers(0, 2**62),
                          st.integers(0, 10**9)), min_size=1, max_size=12))
def test_v1_csv_of_any_names_and_times(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("v1") / "results.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        out.writerow(["Index", "KernelName", "gpu-id", "queue-id", "BeginNs", "EndNs"])
        for index, (name, queue, start, dur) in enumerate(rows):
            out.writerow([index, name, 2, queue, start, start + dur])
    assert slices(traceconv.load(path)) == csv_dispatches(path)


# C++ names as older rocprof wrote them, unquoted: commas, spaces, templates; never a quote
# or a line end (csv would read those as structure), never empty
_UNQUOTED = st.text(st.sampled_from("abcXYZ_:<>()*&, 0123456789"), min_size=1,
                    max_size=40).filter(lambda n: n.strip() == n and n)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_UNQUOTED, st.integers(0, 10**6), st.integers(0, 2**40)),
                min_size=1, max_size=12))
def test_unquoted_names_with_commas_are_joined_back_in_any_layout(tmp_path_factory, rows):
    """The class of the Kokkos file: a name column (first in a statistics file, second in a
    kernel trace) whose unquoted commas split rows. Every row reads whole, with its numbers,
    and the repaired rows are counted."""
    folder = tmp_path_factory.mktemp("unquoted")
    stats, kernels = folder / "results.stats.csv", folder / "results.csv"
    stats.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n' + "".join(
        f"{name},{calls},{total},{total // max(calls, 1)},1.0\n" for name, calls, total in rows))
    kernels.write_text("Index,KernelName,gpu-id,queue-id,BeginNs,EndNs\n" + "".join(
        f"{i},{name},2,0,{total},{total + calls}\n" for i, (name, calls, total) in enumerate(rows)))
    split = sum(1 for name, _, _ in rows if "," in name)
    read = traceconv.load(stats)
    assert [(s.name, s.calls, s.total_ns) for s in read.stats] == rows
    assert read.diagnostics.count("rocprof.name_rejoined") == split
    read = traceconv.load(kernels)
    assert slices(read) == Counter((name, total, total + calls) for name, calls, total in rows)
    assert read.diagnostics.count("rocprof.name_rejoined") == split


V3_JSON = HERE / "tracelens_908_cut.rocprofv3.json.gz"
V3_JSON_FULL = SHARED / "rocprof" / "AMD-AGI__TraceLens__908_results.rocprofv3.json.gz"


def check_v3_json(path: Path, dispatches: int) -> None:
    process = json.loads(gzip.decompress(path.read_bytes()))["rocprofiler-sdk-tool"][0]
    # (the name rocprofv3 gives a kernel in its CSV and rocpd: the JSON's formatted one)
    names = {k["kernel_id"]: k["formatted_kernel_name"] for k in process["kernel_symbols"]}
    nodes = {a["id"]["handle"]: a["logical_node_id"] for a in process["agents"]}
    records = process["buffer_records"]["kernel_dispatch"]
    assert len(records) == dispatches
    trace = traceconv.load(path)
    assert slices(trace) == Counter((names[r["dispatch_info"]["kernel_id"]], r["start_timestamp"],
                                     r["end_timestamp"]) for r in records)
    assert per_track(trace) == Counter(
        (f"agent {nodes[r['dispatch_info']['agent_id']['handle']]}",
         f"queue {r['dispatch_info']['queue_id']['handle']}") for r in records)


def test_v3_json_dispatches():
    check_v3_json(V3_JSON, 300)


@pytest.mark.shared
def test_v3_json_full_sample():
    if not V3_JSON_FULL.is_file():
        pytest.skip("../shared/samples is not beside this checkout")
    check_v3_json(V3_JSON_FULL, 43915)


def test_v3_json_api_records_are_calls_with_flows(tmp_path: Path):
    """No public file holds API records: the real file's first dispatch, plus a HIP call of
    the same record shape (kind and operation index its string table) that launched it."""
    document = json.loads(gzip.decompress(V3_JSON.read_bytes()))
    process = document["rocprofiler-sdk-tool"][0]
    dispatch = process["buffer_records"]["kernel_dispatch"][0]
    kinds = process["strings"]["buffer_records"]
    hip = next(i for i, k in enumerate(kinds) if k["kind"] == "HIP_RUNTIME_API")
    launch = kinds[hip]["operations"].index("hipLaunchKernel")
    process["buffer_records"]["kernel_dispatch"] = [dispatch]
    process["buffer_records"]["hip_api"] = [{
        "size": 48, "kind": hip, "operation": launch, "thread_id": dispatch["thread_id"],
        "correlation_id": dispatch["correlation_id"],
        "start_timestamp": dispatch["start_timestamp"] - 900,
        "end_timestamp": dispatch["start_timestamp"] - 100}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(document))
    trace = traceconv.load(path)
    call = next(s for s in trace.iter_slices() if s.name == "hipLaunchKernel")
    assert trace.processes[trace.tracks[call.track].process].pid == process["metadata"]["pid"]
    assert [(f.source, f.target) for f in trace.iter_flows()] == [
        (call.index, next(s.index for s in trace.iter_slices() if s.name != "hipLaunchKernel"))]


VCOPY = HERE / "ROCm__rocm-systems__vcopy_MI300A_ps_file_"


def test_v3_json_names_kernels_and_devices_as_the_csv_of_its_run(tmp_path: Path):
    """One vcopy run written as rocprofv3 JSON and as a kernel trace CSV (and stored as a
    rocpd database with the JSON's agents): the same dispatches under the same names, on
    the same device, which the JSON and rocpd also say what it is."""
    from tests.rocpd_database import build

    document = json.loads(gzip.decompress(Path(f"{VCOPY}results.json.gz").read_bytes()))
    process = document["rocprofiler-sdk-tool"][0]
    formatted = {k["kernel_id"]: k["formatted_kernel_name"] for k in process["kernel_symbols"]}
    rows = csv_rows(Path(f"{VCOPY}kernel_trace.csv"))
    expected = Counter((r["Kernel_Name"], int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
                       for r in rows)
    assert {r["Kernel_Name"] for r in rows} == {formatted[int(r["Kernel_Id"])] for r in rows} == {
        "vecCopy(double*, double*, double*, int, int)"}
    gpu = next(a for a in process["agents"] if a["type"] == 2)
    rocpd = tmp_path / "vcopy_results.db"
    build(rocpd, Path(f"{VCOPY}kernel_trace.csv"), agents=process["agents"])
    from_csv = traceconv.load(f"{VCOPY}kernel_trace.csv")
    for trace in (from_csv, traceconv.load(f"{VCOPY}results.json.gz"), traceconv.load(rocpd)):
        assert slices(trace) == expected
        assert per_track(trace) == Counter((f"agent {r['Agent_Id'].removeprefix('Agent ')}",
                                            f"queue {r['Queue_Id']}") for r in rows)
        device = next(p for p in trace.processes if p.kind.value == "device")
        assert device.name == f"agent {gpu['logical_node_id']}"
        if trace is not from_csv:   # (a kernel trace CSV does not say what an agent is)
            assert device.labels == [gpu["product_name"], gpu["name"]] == [
                "AMD Instinct MI300X", "gfx942"]


HSA = HERE / "ROCm__rocprofiler-sdk__docs_hsa_trace.csv"


def test_hsa_calls_are_runtime_calls_in_every_layout(tmp_path: Path):
    """HSA API calls are runtime calls (the layer below HIP), whichever file holds them: the
    CSV, a JSON's hsa_api records, a rocpd database's regions."""
    from tests.rocpd_database import build
    from traceconv.analysis.activity import slice_activity
    from traceconv.model.activity import Activity

    rows = csv_rows(HSA)
    # a JSON with the CSV's calls as hsa_api records (kind and operation index its string
    # table), beside the real file's first dispatch
    document = json.loads(gzip.decompress(V3_JSON.read_bytes()))
    process = document["rocprofiler-sdk-tool"][0]
    kinds = process["strings"]["buffer_records"]
    process["buffer_records"]["kernel_dispatch"] = process["buffer_records"]["kernel_dispatch"][:1]
    records = []
    for r in rows:
        kind = next(i for i, k in enumerate(kinds) if k["kind"] == r["Domain"])
        records.append({"size": 48, "kind": kind,
                        "operation": kinds[kind]["operations"].index(r["Function"]),
                        "thread_id": int(r["Thread_Id"]),
                        "correlation_id": {"internal": int(r["Correlation_Id"]), "external": 0},
                        "start_timestamp": int(r["Start_Timestamp"]),
                        "end_timestamp": int(r["End_Timestamp"])})
    process["buffer_records"]["hsa_api"] = records
    as_json = tmp_path / "hsa_results.json"
    as_json.write_text(json.dumps(document))
    as_rocpd = tmp_path / "hsa_results.db"
    build(as_rocpd, Path(f"{DOCS}kernel_trace.csv"), HSA)
    calls = Counter((r["Function"], int(r["Start_Timestamp"]), int(r["End_Timestamp"]))
                    for r in rows)
    for path in (HSA, as_json, as_rocpd):
        trace = traceconv.load(path)
        activity = slice_activity(trace)
        found = Counter((s.name, s.start, s.start + s.dur) for s in trace.iter_slices()
                        if Activity(activity[s.index]) is Activity.RUNTIME)
        assert found == calls, path.name
    summary = run("summary", "--json", str(HSA))
    assert {r["kind"] for r in json.loads(summary.stdout)["ops"]} == {"runtime"}
    advice = run("advise", "--json", str(HSA))
    assert "framework-overhead" not in {f["rule"] for f in json.loads(advice.stdout)["findings"]}


MEMORY = (Path(f"{DOCS}memory_allocation_trace.csv"), Path(f"{DOCS}scratch_memory_trace.csv"))


def hand_paired(rows: list[dict[str, str]]) -> list[tuple[int, int, int, int | None]]:
    """(address, size, allocated at, freed at) by hand: rocprofv3's rows in time order, a free
    ends the open allocation of its address (scratch memory, which has none: of its queue);
    a block is live from its allocation's end to its free's start."""
    blocks, open_at = [], {}
    for r in sorted(rows, key=lambda r: int(r["Start_Timestamp"])):
        scratch = r["Kind"] == "SCRATCH_MEMORY"
        key = ("queue", r["Queue_Id"]) if scratch else ("address", int(r["Address"], 16))
        if r["Operation"].endswith(("_ALLOCATE", "_ALLOC")):
            open_at[key] = len(blocks)
            blocks.append([0 if scratch else key[1], int(r["Allocation_Size"]),
                           int(r["End_Timestamp"]), None])
        else:
            blocks[open_at.pop(key)][3] = int(r["Start_Timestamp"])
    return [tuple(b) for b in blocks]


def live_peak_and_end(blocks: list[tuple[int, int, int, int | None]]) -> tuple[int, int]:
    """The most bytes live at once, and the bytes live at the end (frees before allocations
    at the same time)."""
    steps = sorted([(a, 1, size) for _, size, a, _ in blocks]
                   + [(f, 0, -size) for _, size, _, f in blocks if f is not None])
    live = peak = 0
    for _, _, change in steps:
        live += change
        peak = max(peak, live)
    return peak, live


@pytest.mark.parametrize(("path", "device", "pool", "peak"),
                         [(MEMORY[0], "agent 0", "REAL", 2 * 1024),
                          (MEMORY[1], "agent 1", "SCRATCH", 1_131_626_496)],
                         ids=["memory-allocation", "scratch-memory"])
def test_v3_memory_allocation_and_scratch_memory_are_blocks(path: Path, device: str, pool: str,
                                                            peak: int):
    rows = csv_rows(path)
    expected = hand_paired(rows)
    assert live_peak_and_end(expected) == (peak, 0)
    trace = traceconv.load(path)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == expected
    assert {(b.device, b.pool) for b in trace.memory} == {(device, pool)}
    track = next(t for t in trace.tracks if t.name == f"{device} {pool} live bytes")
    values = [c.value for c in sorted(trace.iter_counter_samples(), key=lambda c: c.ts)
              if c.track == track.id]
    assert (max(values), values[-1]) == (peak, 0)
    assert not trace.diagnostics.count("rocprof.free_without_alloc")
    result = run("memory", "--json", str(path))
    assert result.exit_code == 0, result.output


def test_a_run_folder_with_allocation_files_reads_as_one_trace(tmp_path: Path):
    """rocprofv3 --runtime-trace writes memory allocation and scratch memory traces beside
    the kernel and HIP API traces of the run: given together, one trace."""
    names = {f"{DECODE}kernel_trace.csv": "1_kernel_trace.csv",
             f"{DECODE}hip_api_trace.csv": "1_hip_api_trace.csv",
             str(MEMORY[0]): "1_memory_allocation_trace.csv",
             str(MEMORY[1]): "1_scratch_memory_trace.csv"}
    for origin, name in names.items():
        shutil.copy(origin, tmp_path / name)
    result = run("info", "--json", *(str(tmp_path / n) for n in names.values()))
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    kernels, calls = csv_rows(Path(f"{DECODE}kernel_trace.csv")), csv_rows(
        Path(f"{DECODE}hip_api_trace.csv"))
    launched = {r["Correlation_Id"] for r in calls}
    blocks = sum(len(hand_paired(csv_rows(p))) for p in MEMORY)
    assert (info["slices"], info["flows"], info["memory_blocks"]) == (
        len(kernels) + len(calls), sum(r["Correlation_Id"] in launched for r in kernels), blocks)


@pytest.fixture
def rocpd_run(tmp_path: Path) -> Path:
    from tests.rocpd_database import build

    path = tmp_path / "1234_results.db"
    build(path, Path(f"{DECODE}kernel_trace.csv"), Path(f"{DECODE}hip_api_trace.csv"),
          allocations=MEMORY)
    return path


def test_rocpd_database_as_plain_sql_reads_it(rocpd_run: Path):
    from tests.rocpd_database import UUID

    with sqlite3.connect(rocpd_run) as db:
        kernels = Counter(db.execute(
            f'select s.display_name, k.start, k."end" from "rocpd_kernel_dispatch{UUID}" k '
            f'join "rocpd_info_kernel_symbol{UUID}" s on s.id = k.kernel_id'))
        regions = Counter(db.execute(
            f'select n.string, r.start, r."end" from "rocpd_region{UUID}" r '
            f'join "rocpd_string{UUID}" n on n.id = r.name_id'))
        queues = Counter(db.execute(
            f'select a.logical_index, k.queue_id from "rocpd_kernel_dispatch{UUID}" k '
            f'join "rocpd_info_agent{UUID}" a on a.id = k.agent_id'))
        # (docs/rocprof.md: queues, samples, args... are counted, not read)
        unread = sum(db.execute(f'select count(*) from "{t}{UUID}"').fetchone()[0]
                     for t in ("rocpd_info_queue",))
        allocations = list(db.execute(
            f'select level, type, address, queue_id, size, start, "end" '
            f'from "rocpd_memory_allocate{UUID}" order by start'))
        (flows,), = db.execute(
            f'select count(*) from "rocpd_kernel_dispatch{UUID}" k '
            f'join "rocpd_event{UUID}" e on e.id = k.event_id where e.correlation_id in '
            f'(select e2.correlation_id from "rocpd_region{UUID}" r '
            f'join "rocpd_event{UUID}" e2 on e2.id = r.event_id)')
    trace = traceconv.load(rocpd_run)
    assert trace.metadata.source_version == (
        "rocprofv3 rocpd database (agents, allocations, api, kernels)")
    assert slices(trace) == kernels + regions
    device = Counter((trace.processes[trace.tracks[s.track].process].name,
                      trace.tracks[s.track].name) for s in trace.iter_slices() if s.category == "kernel")
    assert device == Counter({(f"agent {a}", f"queue {q}"): n for (a, q), n in queues.items()})
    assert len(trace.flows) == flows > 0
    codes = {d.code: d.count for d in trace.diagnostics}
    assert codes["rocprof.table_not_read"] == unread
    # rocpd's own words: a FREE ends the ALLOC of its level and address, scratch memory
    # (address 0) the ALLOC of its queue; a FREE has no agent; a FREE of no ALLOC is memory
    # allocated before the trace (its size: the row's, 0)
    blocks: list[list] = []
    open_at: dict[tuple, int] = {}
    orphans = 0
    for level, kind, address, queue, size, start, end in allocations:
        key = (level, queue if level == "SCRATCH" else address)
        if kind == "ALLOC":
            assert key not in open_at   # (no ALLOC on an open address in these files)
            open_at[key] = len(blocks)
            blocks.append([address, size, end, None])
        elif key in open_at:
            blocks[open_at.pop(key)][3] = start
        else:
            orphans += 1
            blocks.append([address, size, None, start])
    assert [[b.address, b.size, b.alloc_ns, b.free_ns] for b in trace.memory] == blocks
    assert len(blocks) == 11
    assert codes["rocprof.free_without_alloc"] == orphans == 1


def test_rocpd_database_reads_as_its_csv_files(rocpd_run: Path):
    from_csv = traceconv.combine([traceconv.load(f"{DECODE}kernel_trace.csv"),
                                  traceconv.load(f"{DECODE}hip_api_trace.csv")])
    from_db = traceconv.load(rocpd_run)
    assert slices(from_db) == slices(from_csv)
    assert len(from_db.flows) == len(from_csv.flows)
    memory = [traceconv.load(p) for p in MEMORY]
    # (the database adds one FREE of no ALLOC, tests/rocpd_database.py: a block from the start)
    from_start = [(b.address, b.size, b.device) for b in from_db.memory if b.alloc_ns is None]
    assert from_start == [(0x7F0000100000, 0, "")]
    assert sorted((b.address, b.size, b.alloc_ns, b.free_ns, b.device, b.pool)
                  for t in memory for b in t.memory) == sorted(
        (b.address, b.size, b.alloc_ns, b.free_ns, b.device, b.pool) for b in from_db.memory
        if b.alloc_ns is not None)


def test_rocpd_counters_are_args_of_their_dispatch(tmp_path: Path):
    from tests.rocpd_database import UUID, build

    path = tmp_path / "results.db"
    build(path, Path(f"{DOCS}kernel_trace.csv"), counters=Path(f"{DOCS}counter_collection.csv"))
    with sqlite3.connect(path) as db:
        values = list(db.execute(
            f'select k.dispatch_id, c.name, pe.value from "rocpd_pmc_event{UUID}" pe '
            f'join "rocpd_kernel_dispatch{UUID}" k on k.event_id = pe.event_id '
            f'join "rocpd_info_pmc{UUID}" c on c.id = pe.pmc_id'))
    trace = traceconv.load(path)
    by_dispatch = {s.args["Dispatch_Id"]: s.args for s in trace.iter_slices()}
    assert len(values) == len(csv_rows(Path(f"{DOCS}counter_collection.csv")))
    for dispatch, counter, value in values:
        assert by_dispatch[dispatch][counter] == value
    assert "rocprof.counter_without_dispatch" not in {d.code for d in trace.diagnostics}


def test_rocpd_database_of_a_newer_schema_is_one_line(tmp_path: Path):
    from tests.rocpd_database import build

    path = tmp_path / "results.db"
    build(path, Path(f"{DECODE}kernel_trace.csv"), Path(f"{DECODE}hip_api_trace.csv"),
          version="4")
    one_error_line(run("info", str(path)), str(path), "schema version 4")


def test_the_commands_of_the_rocprof_page_run():
    page = (Path(__file__).resolve().parent.parent / "docs" / "rocprof.md").read_text()
    commands = [line.removeprefix("$ traceconv ").split() for line in page.splitlines()
                if line.startswith("$ traceconv ")]
    assert len(commands) == 3
    root = Path(__file__).resolve().parent.parent
    for args in commands:
        result = run(*(str(root / a) if a.startswith("samples/") else a for a in args))
        assert result.exit_code == 0, result.output


# -- real files of other runs (tests/data/rocprof/PROVENANCE.md) ---------------------------

KOKKOS_STATS = HERE / "dalg24__kokkos__results.stats.csv"
HIP_PROGRAMMING = HERE / "shashankparsi__HIP_Programming__"


def right_split_rows(path: Path, numbers: int) -> list[list[str]]:
    """Data rows split at their last ``numbers`` commas: a name with unquoted commas stays
    whole (the fields after it are numbers)."""
    lines = path.read_text().splitlines()[1:]
    return [line.rsplit(",", numbers) for line in lines if line]


def test_an_unquoted_name_with_commas_is_joined_back():
    """Older rocprof v1 did not quote kernel names: a Kokkos template name's commas split
    the row. Every row is read, whole, and the repair counted."""
    rows = right_split_rows(KOKKOS_STATS, 4)
    trace = traceconv.load(KOKKOS_STATS)
    assert [(s.name, s.calls, s.total_ns) for s in trace.stats] == [
        (name.strip('"'), int(calls), int(total)) for name, calls, total, _, _ in rows]
    with KOKKOS_STATS.open(newline="") as f:
        split = sum(1 for row in list(csv.reader(f))[1:] if len(row) > 5)
    assert split == 5
    assert trace.diagnostics.count("rocprof.name_rejoined") == split
    assert not trace.diagnostics.count("rocprof.malformed_row")


@pytest.mark.parametrize(("suffix", "section", "place"), [
    ("results.stats.csv", "kernel", "device_ns"),
    ("results.hip_stats.csv", "hip_api", "cpu_ns"),
    ("results.copy_stats.csv", "memory_copy", "device_ns")])
def test_v1_statistics_files_say_where_their_time_went(suffix: str, section: str, place: str):
    """rocprof v1 ``--stats`` writes kernels, HIP API calls and copies to three files: API
    time is the host's, the others the device's."""
    path = Path(f"{HIP_PROGRAMMING}{suffix}")
    rows = csv_rows(path)
    stats = traceconv.load(path).stats
    assert {s.section for s in stats} == {section}
    assert [getattr(s, place) for s in stats] == [int(r["TotalDurationNs"]) for r in rows]
    other = "cpu_ns" if place == "device_ns" else "device_ns"
    assert {getattr(s, other) for s in stats} == {None}
    total = sum(int(r["TotalDurationNs"]) for r in rows) / 1e9
    result = summarize(traceconv.load(path))
    assert result.total("device" if place == "device_ns" else "host") == pytest.approx(total)


JACOBI = HERE / "amd__HPCTrainingExamples__jacobi_1389712_"


def test_v3_domain_totals_are_host_and_device_and_never_counted_twice():
    """rocprofv3's ``domain_stats.csv`` adds up the run's other statistics files (HIP_API is
    the sum of ``hip_api_stats.csv``): alone, API time is the host's; beside those files it
    is not counted again."""
    sums = {part: sum(int(r["TotalDurationNs"]) for r in csv_rows(Path(f"{JACOBI}{part}.csv")))
            for part in ("kernel_stats", "hip_api_stats")}
    domains = {r["Name"]: int(r["TotalDurationNs"])
               for r in csv_rows(Path(f"{JACOBI}domain_stats.csv"))}
    assert domains == {"HIP_API": sums["hip_api_stats"]}   # (what the file holds)
    alone = summarize(traceconv.load(Path(f"{JACOBI}domain_stats.csv")))
    assert alone.total("host") == pytest.approx(domains["HIP_API"] / 1e9)
    assert alone.total("device") is None
    run_files = [traceconv.load(Path(f"{JACOBI}{part}.csv"))
                 for part in ("domain_stats", "hip_api_stats", "kernel_stats")]
    together = summarize(traceconv.combine(run_files))
    assert together.total("host") == pytest.approx(sums["hip_api_stats"] / 1e9)
    assert together.total("device") == pytest.approx(sums["kernel_stats"] / 1e9)


def test_statistics_are_drawn_for_a_viewer(tmp_path: Path):
    """A statistics file converts to a trace that shows each row (an aggregate breakdown,
    one lane per file's section), not to an empty one."""
    rows = right_split_rows(KOKKOS_STATS, 4)
    out = tmp_path / "stats.pftrace"
    traceconv.convert(KOKKOS_STATS, out)
    back = traceconv.load(out)
    assert sorted(s.dur for s in back.iter_slices()) == sorted(int(r[2]) for r in rows)
    assert {back.tracks[s.track].name for s in back.iter_slices()} == {"kernel"}


def test_summary_at_80_columns_shows_each_rows_calls(monkeypatch):
    """Names that no 80-column cut tells apart (Kokkos templates) leave the other columns
    shown: each row's calls, as the file gives them, and no made-up row number under the
    kind."""
    rows = right_split_rows(KOKKOS_STATS, 4)
    monkeypatch.setenv("COLUMNS", "80")
    result = run("summary", str(KOKKOS_STATS), "-t", "0")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    assert "calls" in next(line for line in lines if line.startswith("#"))
    assert not any(line.strip().isdigit() for line in lines)
    shown = sorted(int(cells[-1]) for line in lines   # (a row's first line: its number first)
                   if len(cells := line.split()) > 3 and cells[0].isdigit())
    assert shown == sorted(int(calls) for _, calls, *_ in rows)


def test_a_counter_collection_without_times_is_read():
    """``rocprof --pmc`` alone writes the v1 layout without BeginNs/EndNs: each dispatch is
    a statistic row carrying its counters."""
    path = Path(f"{HIP_PROGRAMMING}output_vec_add_gpu.csv")
    rows = csv_rows(path)
    stats = traceconv.load(path).stats
    assert [(s.name, s.calls, s.section) for s in stats] == [
        (r["KernelName"], 1, "counters") for r in rows]
    assert [(s.extra["GPUBusy"], s.extra["Wavefronts"]) for s in stats] == [
        (r["GPUBusy"], r["Wavefronts"]) for r in rows]


def test_a_rocprofv2_api_trace_is_read():
    """rocprofv2's file plugin writes API calls without process or thread, a blank line
    after the header and ``Correlation_ID``: every call is a slice on one host thread,
    its correlation id kept."""
    path = HERE / "anghostcici__saltfish__hip_api_trace_hiptrace.csv"
    rows = csv_rows(path)
    trace = traceconv.load(path)
    assert slices(trace) == Counter((r["Function"], int(r["Start_Timestamp"]),
                                     int(r["End_Timestamp"])) for r in rows if r["Function"])
    assert len({s.track for s in trace.iter_slices()}) == 1
    assert sorted(s.args["Correlation_Id"] for s in trace.iter_slices()) == sorted(
        int(r["Correlation_ID"]) for r in rows if r["Function"])


def test_v1_json_places_work_by_its_process():
    """A newer rocprof v1 results.json (MI300A) names its Chrome processes "CPU HIP API",
    "COPY" and "GPU4", and its kernel has no KernelName: copies and the kernel are device
    work on the GPU, the calls host work on their thread, each with its exact ns times."""
    path = Path(f"{HIP_PROGRAMMING}results.json")
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    work = [e for e in events if e.get("ph") == "X"]
    trace = traceconv.load(path)
    device = {p.id for p in trace.processes if p.kind.value == "device"}
    placed = Counter((s.name, s.start, s.start + s.dur,
                      trace.tracks[s.track].process in device) for s in trace.iter_slices())
    assert placed == Counter((e["name"], int(e["args"]["BeginNs"]), int(e["args"]["EndNs"]),
                              names[int(e["pid"])] != "CPU HIP API") for e in work)
    kinds = {s.name: s.category for s in trace.iter_slices()}
    assert kinds["vector_add(float*, float*, float*, int)"] == "kernel"
    assert {kinds["CopyHostToDevice"], kinds["CopyDeviceToHost"]} == {"gpu_memcpy"}


def test_v1_json_flows_join_a_call_to_its_work():
    """Its ``s``/``t`` DataFlow events: each joins the call around the ``s`` time on its
    lane to the work starting at the ``t`` time on its lane (times in µs, as written)."""
    path = Path(f"{HIP_PROGRAMMING}results.json")
    events = json.loads(path.read_text())["traceEvents"]
    lanes: dict[tuple[str, str], list[dict]] = {}
    for e in events:
        if e.get("ph") == "X":
            lanes.setdefault((str(e["pid"]), str(e["tid"])), []).append(e)

    def bound(flow: dict, start_only: bool) -> str:
        lane = lanes[(str(flow["pid"]), str(flow["tid"]))]
        for e in lane:
            ts, dur = int(e["ts"]), int(e["dur"])
            if (ts == flow["ts"]) if start_only else (ts <= flow["ts"] <= ts + dur):
                return e["name"]
        raise AssertionError(flow)

    ends = {(f["id"], f["ph"]): f for f in events if f.get("ph") in ("s", "t")}
    expected = Counter((bound(ends[(i, "s")], False), bound(ends[(i, "t")], True))
                       for i, ph in ends if ph == "s")
    trace = traceconv.load(path)
    assert Counter((trace.slice(f.source).name, trace.slice(f.target).name)
                   for f in trace.iter_flows()) == expected
    assert len(expected) == 3 and sum(expected.values()) == 4
    assert not trace.diagnostics.count("rocprof.flow_not_read")


def test_statistics_given_with_their_trace_count_nothing_twice():
    """A run's kernel trace and its statistics given together: the summary's kernels are
    the trace's dispatches (the statistics' drawing is no call of its own), and the merged
    trace spans the run (the drawing starts where the run does, not at time 0)."""
    from traceconv.analysis.op_summary import op_summary
    from traceconv.api import combine

    rows = csv_rows(V1.with_suffix(".csv"))
    merged = combine([traceconv.load(V1.with_suffix(".csv")),
                      traceconv.load(V1.with_suffix(".stats.csv"))])
    calls = Counter(r["KernelName"] for r in rows)
    summary = {row.name: row.calls for row in op_summary(merged)}
    assert summary == dict(calls)
    first = min(int(r["BeginNs"]) for r in rows)
    assert merged.time_range is not None and merged.time_range[0] == first


def test_counters_without_times_are_refused_a_timeline(tmp_path: Path):
    """Dispatch counters without times are statistic rows only: a timeline of them would
    be empty, so the conversion says so in one line, naming what the file holds."""
    path = Path(f"{HIP_PROGRAMMING}output_vec_add_gpu.csv")
    out = tmp_path / "c.pftrace"
    one_error_line(run(str(path), "-o", str(out)), "nothing to put on a timeline",
                   "(1 statistic row)")
    assert not out.exists()


def test_a_runs_statistics_files_given_together_all_count():
    """rocprof v1 ``--stats`` writes kernels, HIP API calls and copies to three files; given
    together, the summary holds each file's rows: device time is the kernels' and copies'
    totals, host time the API calls'."""
    from traceconv.api import combine

    suffixes = ("results.stats.csv", "results.hip_stats.csv", "results.copy_stats.csv")
    totals = {s: sum(int(r["TotalDurationNs"]) for r in csv_rows(Path(f"{HIP_PROGRAMMING}{s}")))
              for s in suffixes}
    merged = combine([traceconv.load(Path(f"{HIP_PROGRAMMING}{s}")) for s in suffixes])
    result = summarize(merged)
    assert result.total("device") == pytest.approx(
        (totals["results.stats.csv"] + totals["results.copy_stats.csv"]) / 1e9)
    assert result.total("host") == pytest.approx(totals["results.hip_stats.csv"] / 1e9)


def test_statistics_rows_keep_their_calls():
    """A statistics row's calls are in ``summary`` (text and JSON) and order it with
    ``--order-by calls``; ``--sort-by``, which orders a timeline's table, is refused in one
    line instead of being ignored."""
    path = Path(f"{HIP_PROGRAMMING}results.hip_stats.csv")
    rows = csv_rows(path)
    result = run("summary", str(path), "--json", "-t", "0", "--order-by", "calls")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["host_rows"]
    assert {r["name"]: r["calls"] for r in shown} == {r["Name"]: int(r["Calls"]) for r in rows}
    calls = [r["calls"] for r in shown]
    assert calls == sorted(calls, reverse=True)
    result = run("summary", str(path), "--sort-by", "calls")
    assert result.exit_code == 2 and "--order-by" in result.stderr


def test_one_runs_files_are_advised_as_one_trace():
    """``advise`` on a run's kernel and HIP traces judges one trace, as ``info`` reads them:
    the HIP file's launch calls (counted with csv) are there to tell idle gaps apart, so
    gpu-idle does not say the trace has none."""
    files = [Path(f"{DECODE}kernel_trace.csv"), Path(f"{DECODE}hip_api_trace.csv")]
    launches = sum(r["Function"] == "hipLaunchKernel" for r in csv_rows(files[1]))
    result = run("advise", "--json", *map(str, files))
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    assert launches and all("trace" not in f for f in findings)   # (one trace: no labels)
    idle = next(f for f in findings if f["rule"] == "gpu-idle")
    assert idle["cause"] != "no launch calls"


def test_v1_counter_cells_are_numbers_as_rocprofv3_writes_them(tmp_path: Path):
    """rocprof v1 writes a dispatch's counters as ``100.0000000000``: they are numbers in
    the args (as rocprofv3's ``Counter_Value``), not text; other cells keep their text."""
    rows = csv_rows(Path(f"{HIP_PROGRAMMING}output_vec_add_gpu.csv"))
    timed = tmp_path / "results.csv"
    with timed.open("w", newline="") as f:
        writer = csv.DictWriter(f, [*rows[0], "BeginNs", "EndNs"])
        writer.writeheader()
        writer.writerows({**r, "BeginNs": 1000 * i, "EndNs": 1000 * i + 500}
                         for i, r in enumerate(rows, 1))
    args = [s.args for s in traceconv.load(timed).iter_slices()]
    assert [(a["GPUBusy"], a["Wavefronts"], a["obj"]) for a in args] == [
        (float(r["GPUBusy"]), float(r["Wavefronts"]), r["obj"]) for r in rows]


SALTFISH_STATS = HERE / "anghostcici__saltfish__results.stats_head.csv"
BARRIER = "<barrier packet>"
# a kernel, a barrier packet and two collective libraries' kernels (NCCL, MSCCL), by hand
_DEVICE_ROWS = [("gemm_kernel", 100, 400), (BARRIER, 400, 1400),
                ("ncclDevKernel_Generic(ncclDevComm*, channelMasks, ncclWork*)", 1400, 1600),
                ("mscclKernel_Sum_bf16_LL(int, int)", 1600, 1650)]


def test_a_barrier_packets_statistics_row_is_device_waiting_not_kernel_time():
    """rocprof files its AQL barrier packets among the kernels as ``<barrier packet>``: the
    device waiting for the packets it depends on. In a real ``--stats`` file it was the top
    "kernel" (142.977 s of 224.562 s); it is counted as device waiting, in no device total."""
    rows = csv_rows(SALTFISH_STATS)
    waiting = [int(r["TotalDurationNs"]) for r in rows if r["Name"] == BARRIER]
    work = sum(int(r["TotalDurationNs"]) for r in rows if r["Name"] != BARRIER)
    assert waiting == [142_976_988_030]
    result = run("summary", str(SALTFISH_STATS), "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert BARRIER not in [r["name"] for r in shown["rows"]]
    assert shown["total_device_time"] == pytest.approx(work / 1e9)
    assert shown["not_work_time"] == {"device waiting": {"rows": 1,
                                                         "seconds": waiting[0] / 1e9}}
    assert "not counted, device waiting" in run("summary", str(SALTFISH_STATS)).stdout


def _v1_csv(path: Path) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Index", "KernelName", "gpu-id", "queue-id", "BeginNs", "EndNs"])
        writer.writerows([i, name, 0, 0, start, end]
                         for i, (name, start, end) in enumerate(_DEVICE_ROWS))
    return path


def _v1_json(path: Path) -> Path:
    """rocprof v1's JSON puts barrier packets in a process of their own, ``GPU Barriers0``."""
    names = [{"ph": "M", "pid": 6, "name": "process_name", "args": {"name": "GPU0"}},
             {"ph": "M", "pid": 518, "name": "process_name", "args": {"name": "GPU Barriers0"}}]
    events = [{"ph": "X", "name": name, "pid": 518 if name == BARRIER else 6, "tid": 0,
               "ts": str(start // 1000), "dur": str((end - start) // 1000),
               "args": {"Name": name, "BeginNs": str(start), "EndNs": str(end)}}
              for name, start, end in _DEVICE_ROWS]
    path.write_text(json.dumps({"traceEvents": [{}, *names, *events]}))
    return path


def _v3_csv(path: Path) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Kind", "Agent_Id", "Queue_Id", "Kernel_Name", "Start_Timestamp",
                         "End_Timestamp"])
        writer.writerows(["KERNEL_DISPATCH", 2, 1, name, start, end]
                         for name, start, end in _DEVICE_ROWS)
    return path


@pytest.mark.parametrize("write", [_v1_csv, _v1_json, _v3_csv], ids=["v1-csv", "v1-json", "v3-csv"])
def test_barrier_packets_are_device_syncs_and_collectives_communication(tmp_path: Path, write):
    """In every layout a dispatch named ``<barrier packet>`` is a device sync (no work, on
    its GPU: the JSON's ``GPU Barriers0`` process is GPU 0's), NCCL's and MSCCL's kernels
    are communication, the others kernels; the device total is the work's alone."""
    from traceconv.analysis.activity import slice_activity
    from traceconv.model.activity import Activity

    suffix = ".json" if write is _v1_json else "_kernel_trace.csv" if write is _v3_csv else ".csv"
    trace = traceconv.load(write(tmp_path / f"results{suffix}"))
    activity = slice_activity(trace)
    found = {s.name: (Activity(activity[i] & 15).name, Activity(activity[i] & 64).name)
             for i, s in enumerate(trace.iter_slices())}
    assert found == {"gemm_kernel": ("KERNEL", "UNKNOWN"), BARRIER: ("DEVICE_SYNC", "UNKNOWN"),
                     _DEVICE_ROWS[2][0]: ("KERNEL", "COMMUNICATION"),
                     _DEVICE_ROWS[3][0]: ("KERNEL", "COMMUNICATION")}
    assert {trace.processes[p.process].name for p in trace.tracks} == {
        "agent 2" if write is _v3_csv else "GPU 0"}
    work = sum(end - start for name, start, end in _DEVICE_ROWS if name != BARRIER)
    assert summarize(trace).total("device") == pytest.approx(work / 1e9)


AGENT_INFO = HERE / "amd__HPCTrainingExamples__omp_agent_info.csv"
OMP_KERNELS = HERE / "amd__HPCTrainingExamples__omp_kernel_trace_head.csv"


def test_agent_info_labels_the_agents_of_the_run_given_with_it():
    """rocprofv3's ``agent_info.csv`` says what each agent is; the traces name an agent by
    its logical node id (rocprofv3's default agent index). Given with the run's kernel
    trace, it labels that agent's process as the JSON and rocpd layouts do."""
    from traceconv.api import combine

    agents = {r["Logical_Node_Id"]: [r["Product_Name"], r["Name"]] for r in csv_rows(AGENT_INFO)}
    used = {r["Agent_Id"] for r in csv_rows(OMP_KERNELS)}
    assert used == {"4"} and agents["4"] == ["AMD Instinct MI300A", "gfx942"]
    trace = combine([traceconv.load(OMP_KERNELS), traceconv.load(AGENT_INFO, joining=True)])
    assert [(p.name, p.labels) for p in trace.processes] == [
        (f"agent {n}", agents[n]) for n in sorted(used)]
    assert len(trace.slices) == len(csv_rows(OMP_KERNELS))
    alone = traceconv.load(AGENT_INFO, joining=True)
    assert sorted((p.name, p.labels) for p in alone.processes) == sorted(
        (f"agent {n}", list(dict.fromkeys(w for w in words if w))) for n, words in agents.items())
    assert not len(alone.slices)


@pytest.mark.parametrize("command", [("info",), ("summary",), ("advise",), ("report", "-o"),
                                     ("convert", "-o")], ids=lambda c: c[0])
def test_agent_info_alone_is_nothing_read(tmp_path: Path, command: tuple[str, ...]):
    """A run's settings with no trace of the run beside them hold nothing to show: one line
    that says what to give with them, exit 1, no output (alone, or twice over)."""
    out = tmp_path / ("out.html" if command[0] == "report" else "out.pftrace")
    written = (str(out),) if len(command) > 1 else ()
    another = shutil.copy(AGENT_INFO, tmp_path / "another_agent_info.csv")
    for inputs in ((str(AGENT_INFO),), (str(AGENT_INFO), str(another))):
        one_error_line(run(command[0], *inputs, *command[1:], *written), "nothing read",
                       "give it together with the trace CSV files of its run")
        assert not out.exists()
    with_kernels = run(command[0], str(AGENT_INFO), str(OMP_KERNELS), *command[1:], *written)
    assert with_kernels.exit_code == 0, with_kernels.output


def test_a_statistics_table_has_no_clock_and_no_span(tmp_path: Path):
    """A statistics table has totals, no timestamps: ``info`` and ``report`` say it has no
    clock rather than a clock and a span of 0."""
    path = Path(f"{HIP_PROGRAMMING}results.hip_stats.csv")
    info = run("info", str(path))
    assert info.exit_code == 0, info.output
    assert "span             none (no clock: statistics)" in info.stdout
    page = tmp_path / "r.html"
    assert run("report", str(path), "-o", str(page)).exit_code == 0
    html = page.read_text()
    assert "HSA system timestamps" not in html
    assert '<td class="name">span</td><td class="name">none (no clock: statistics)' in html


def test_summary_json_says_how_many_host_rows_it_does_not_show():
    """``summary`` of kernels, copies and calls prints the device table and says how many
    host rows ``--show-host`` prints; ``--json`` says the same number."""
    files = [str(Path(f"{HIP_PROGRAMMING}{s}")) for s in ("results.stats.csv",
                                                         "results.hip_stats.csv")]
    calls = len(csv_rows(Path(files[1])))
    shown = json.loads(run("summary", *files, "--json").stdout)
    assert shown["host_rows_not_shown"] == calls and "host_rows" not in shown
    assert f"{calls:,} rows not shown" in run("summary", *files).stdout
    everything = json.loads(run("summary", *files, "--json", "--show-host").stdout)
    assert len(everything["host_rows"]) == calls and "host_rows_not_shown" not in everything


# rocprof's Percentage cells are each row's share of the file's total: a whole file's rows
# share 100 %. A ROCm issue pasted the first 16 rows of a results.hsa_stats.csv (their
# shares, by the csv module: 99.04 %); LLM170's 47 shares, printed to 16 digits, add up to
# 100 exactly, but to 100.00000000000003 as floats.
ISSUE_1640_HSA_STATS = HERE / "ROCm__ROCm__issue1640_results.hsa_stats.csv"
WHOLE_STATS = [V1.with_suffix(".stats.csv"), HERE / "ByungHyun21__LLM170__results.stats.csv",
               HERE / "dalg24__kokkos__results.stats.csv", Path(f"{DOCS}hip_api_stats.csv"),
               *HERE.glob("shashankparsi__HIP_Programming__results.*stats.csv"),
               *HERE.glob("amd__HPCTrainingExamples__jacobi_*_stats.csv")]


def _share_findings(trace: traceconv.Trace) -> dict[str, str | None]:
    return {d.code: d.example for d in trace.diagnostics
            if d.code in ("rocprof.rows_missing", "rocprof.stated_total_differs")}


@pytest.mark.parametrize("path", [ISSUE_1640_HSA_STATS, SALTFISH_STATS],
                         ids=["issue-paste", "head"])
def test_a_statistics_file_cut_after_its_top_rows_says_rows_are_missing(path: Path):
    rows = csv_rows(path)
    shares = sum(Decimal(r["Percentage"]) for r in rows)
    trace = traceconv.load(path)
    assert len(trace.stats) == len(rows) and shares < 100
    assert _share_findings(trace) == {"rocprof.rows_missing": (
        f"{path} ({len(rows)} rows): 100 % of the time (Percentage) stated, the rows read give "
        f"{shares:.12f}")}


@pytest.mark.parametrize("path", WHOLE_STATS, ids=lambda p: p.name)
def test_a_whole_statistics_files_shares_agree_with_100_percent(path: Path):
    rows = csv_rows(path)
    assert len(rows) == len(traceconv.load(path).stats)
    assert _share_findings(traceconv.load(path)) == {}


# Whole rocprof v1 statistics whose shares are doubles printed in full: each Percentage is
# exactly Python's repr of 100 * TotalDurationNs / (the file's total), so no row is missing
# or edited; yet their printed sum passes 100 by more than the half units of the digits
# printed (HGLiu1998's HIP API shares by 1.06e-14, against 5e-15): the doubles' rounding.
FULL_DOUBLE_SHARES = [HERE / "HGLiu1998__batched_gemm__results.hip_stats.csv",
                      HERE / "HGLiu1998__batched_gemm__results.copy_stats.csv",
                      HERE / "kswirydo__ozaki_tests__results.stats.csv"]


def _half_unit(printed: str) -> Decimal:
    return Decimal(5) * Decimal(10) ** (Decimal(printed).as_tuple().exponent - 1)


@pytest.mark.parametrize("path", FULL_DOUBLE_SHARES, ids=lambda p: p.name)
def test_shares_printed_as_doubles_in_full_agree_with_100_percent(path: Path):
    rows = csv_rows(path)
    total_ns = sum(int(r["TotalDurationNs"]) for r in rows)
    assert [repr(100 * int(r["TotalDurationNs"]) / total_ns) for r in rows] == [
        r["Percentage"] for r in rows]
    trace = traceconv.load(path)
    assert len(trace.stats) == len(rows)
    assert sum(s.calls for s in trace.stats) == sum(int(r["Calls"]) for r in rows)
    assert _share_findings(trace) == {}


def test_full_double_shares_pass_100_by_more_than_their_printed_digits():
    """What the test above holds against: the HIP API shares' sum is off 100 by more than
    the printed digits allow, so only the doubles' own rounding explains it."""
    rows = csv_rows(FULL_DOUBLE_SHARES[0])
    excess = sum(Decimal(r["Percentage"]) for r in rows) - 100
    assert excess > sum(_half_unit(r["Percentage"]) for r in rows)


def test_a_statistics_file_whose_name_tells_no_section_says_its_rows_were_guessed(
        tmp_path: Path):
    """The issue's HSA statistics under rocprof's name are host calls; under a name that
    tells nothing (a paste saved as paste.csv) they are read as v1's kernel statistics,
    and that guess is counted."""
    named = tmp_path / "results.hsa_stats.csv"
    renamed = tmp_path / "paste.csv"
    for path in (named, renamed):
        shutil.copyfile(ISSUE_1640_HSA_STATS, path)
    hsa, guessed = traceconv.load(named), traceconv.load(renamed)
    assert {s.section for s in hsa.stats} == {"hsa_api"}
    assert "rocprof.section_guessed" not in hsa.diagnostics
    assert {s.section for s in guessed.stats} == {"kernel"}
    assert guessed.diagnostics.count("rocprof.section_guessed") == 1


# -- cells written as "..." (a table printed with its long cells cut) -------------------------

_ELIDED_FILES = {   # file -> the columns whose cells are put as "..." (counters, numbers)
    "ROCm__rocprofiler-sdk__docs_counter_collection.csv": ("Counter_Value",),
    "jimw567__rocprof-unified-viewer__decode_stall_counter_collection.csv": ("Counter_Value",),
    "shashankparsi__HIP_Programming__output_vec_add_gpu.csv": ("GPUBusy", "Wavefronts"),
    "csc-training__hip-programming__kernel_trace.csv": ("Grid_Size_X", "Workgroup_Size_X"),
}


def _counter_values(trace: traceconv.Trace) -> list[object]:
    """Every argument of every slice and every extra value of every statistics row."""
    return ([v for s in trace.iter_slices() for v in (s.args or {}).values()]
            + [v for row in trace.stats for v in (row.extra or {}).values()])


@pytest.mark.parametrize("name", sorted(_ELIDED_FILES))
def test_cells_written_as_dots_are_no_value_and_counted(tmp_path, name):
    """Cells put as "..." (fixed seed) in counter and number columns of real files hold no
    value: each is counted (they were read as the text "..."), never a 0, and the rest
    of the file reads as it did: the same slices and rows, every other counter kept."""
    with open(DATA / "rocprof" / name, newline="") as f:
        header, *rows = [row for row in csv.reader(f) if row]
    columns = [header.index(c) for c in _ELIDED_FILES[name]]
    rng = random.Random(1201)
    cells = [(r, c) for r in range(len(rows)) for c in columns]
    elided = rng.sample(cells, max(1, len(cells) // 3))
    for r, c in elided:
        rows[r][c] = "..."
    path = tmp_path / name
    with open(path, "w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows([header, *rows])
    clean = traceconv.load(DATA / "rocprof" / name)
    trace = traceconv.load(path)
    assert trace.diagnostics.count("rocprof.value_elided") == len(elided)
    assert "..." not in _counter_values(trace)
    assert (len(trace.slices), len(trace.stats)) == (len(clean.slices), len(clean.stats))
    if "Counter_Value" in header:   # long format: the counters not cut are all there
        kept = {(row[header.index("Dispatch_Id")], row[header.index("Counter_Name")])
                for row in rows if row[header.index("Counter_Value")] != "..."}
        read = {(str(fields["Dispatch_Id"]), key)
                for fields in ([s.args for s in trace.iter_slices()]
                               + [row.extra for row in trace.stats])
                for key in fields if key not in header}
        assert read == kept
    else:                           # wide: the cell is empty where it was cut, never 0
        values = ([s.args or {} for s in trace.iter_slices()]
                  + [row.extra or {} for row in trace.stats])
        for r, c in elided:
            assert values[r].get(header[c], "") == "", (r, header[c])
