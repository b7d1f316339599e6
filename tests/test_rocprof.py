"""rocprof v1/v2 (results.csv/.json/.db, stats CSV) and rocprofv3 CSV files.

Every expected value is computed here from the files themselves with the standard ``csv``,
``json`` and ``sqlite3`` modules, never from the reader.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import sqlite3
from collections import Counter
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
                                  HERE / "csc-training__hip-programming__kernel_trace.csv"],
                         ids=["docs", "new-layout", "old-layout"])
def test_v3_kernel_trace(path: Path):
    rows = csv_rows(path)
    trace = traceconv.load(path)
    assert slices(trace) == Counter((r["Kernel_Name"], int(r["Start_Timestamp"]),
                                     int(r["End_Timestamp"])) for r in rows)
    agent = {r["Agent_Id"]: r["Agent_Id"].removeprefix("Agent ") for r in rows}
    assert per_track(trace) == Counter((f"agent {agent[r['Agent_Id']]}", f"queue {r['Queue_Id']}")
                                       for r in rows)


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
    names = {k["kernel_id"]: k["kernel_name"] for k in process["kernel_symbols"]}
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


@pytest.fixture
def rocpd_run(tmp_path: Path) -> Path:
    from tests.rocpd_database import build

    path = tmp_path / "1234_results.db"
    build(path, Path(f"{DECODE}kernel_trace.csv"), Path(f"{DECODE}hip_api_trace.csv"))
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
        # (docs/rocprof.md: queues, allocations, samples, counters... are counted, not read)
        unread = sum(db.execute(f'select count(*) from "{t}{UUID}"').fetchone()[0]
                     for t in ("rocpd_info_queue",))
        allocations = list(db.execute(
            f'select type, address, size, start, "end" from "rocpd_memory_allocate{UUID}" '
            f'order by start'))
        (flows,), = db.execute(
            f'select count(*) from "rocpd_kernel_dispatch{UUID}" k '
            f'join "rocpd_event{UUID}" e on e.id = k.event_id where e.correlation_id in '
            f'(select e2.correlation_id from "rocpd_region{UUID}" r '
            f'join "rocpd_event{UUID}" e2 on e2.id = r.event_id)')
    trace = traceconv.load(rocpd_run)
    assert trace.metadata.source_version == "rocprofv3 rocpd database (allocations, api, kernels)"
    assert slices(trace) == kernels + regions
    device = Counter((trace.processes[trace.tracks[s.track].process].name,
                      trace.tracks[s.track].name) for s in trace.iter_slices() if s.category == "kernel")
    assert device == Counter({(f"agent {a}", f"queue {q}"): n for (a, q), n in queues.items()})
    assert len(trace.flows) == flows > 0
    codes = {d.code: d.count for d in trace.diagnostics}
    assert codes["rocprof.table_not_read"] == unread
    opened = {a[1]: a for a in allocations if a[0] == "ALLOC"}
    freed = {a[1]: a for a in allocations if a[0] == "FREE"}
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (address, a[2], a[4], freed[address][3]) for address, a in opened.items()]
    assert codes["rocprof.free_without_allocation"] == len(freed.keys() - opened.keys()) == 1


def test_rocpd_database_reads_as_its_csv_files(rocpd_run: Path):
    from_csv = traceconv.combine([traceconv.load(f"{DECODE}kernel_trace.csv"),
                                  traceconv.load(f"{DECODE}hip_api_trace.csv")])
    from_db = traceconv.load(rocpd_run)
    assert slices(from_db) == slices(from_csv)
    assert len(from_db.flows) == len(from_csv.flows)


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
    shown = sorted(int(line.split()[-1]) for line in lines if "…" in line or "Unknown" in line)
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
