"""Paddle's old text Profiling Report: every layout, every sample, numbers as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.formats import paddle_report
from traceconv.formats.paddle_report.parser import ReportParser
from traceconv.model import Trace

DATA = Path(__file__).parent / "data" / "paddle"


def events(trace: Trace, report: int = 0):
    return [s for s in trace.stats
            if s.section.startswith("events") and s.extra["report"] == report]


def test_legacy_opdetail_rows_nesting_and_summaries():
    trace = traceconv.load(DATA / "legacy_CPU_OpDetail.txt")
    assert trace.metadata.source_format == "paddle-report"
    rows = events(trace)
    assert len(rows) == 79                       # lines of the Event Summary table
    run, rppc, feed = rows[0], rows[1], rows[2]
    assert (run.name, run.calls, run.total_ns, run.min_ns, run.max_ns, run.avg_ns) == (
        "thread0::Executor::Run", 5, 17_896_400, 3_379_700, 3_678_890, 3_579_270)
    assert run.ratio == 100 and run.extra["thread"] == 0 and run.cpu_ns == run.total_ns
    assert trace.stats[rppc.parent] is run and rppc.depth == 1
    assert trace.stats[feed.parent] is rppc and feed.depth == 2
    compute = next(s for s in rows if s.name == "feed/compute")
    assert trace.stats[compute.parent] is feed and compute.depth == 3
    # self time: feed 0.237293 ms minus prepare_data, infer_shape and compute
    assert feed.self_ns == 237_293 - 30_486 - 28_290 - 52_808 and compute.self_ns == 52_808
    assert compute.extra["path"] == "Executor::Run/Executor::RunPartialPreparedContext/feed/compute"
    overhead = {s.name: s for s in trace.stats if s.section == "overhead"}
    assert overhead["Total time"].total_ns == 17_896_400
    assert overhead["Computation time"].total_ns == 11_396_700
    assert overhead["Computation time"].ratio == pytest.approx(63.6817)
    assert overhead["Framework overhead"].total_ns == 6_499_650
    memcpy = [s for s in trace.stats if s.section == "memcpy"]
    assert [(s.name, s.calls, s.total_ns) for s in memcpy] == [("GpuMemcpy", 0, 0)]


def test_aggregate_breakdown_is_labelled_and_nested():
    trace = traceconv.load(DATA / "legacy_CPU_OpDetail.txt")
    (process,) = trace.processes
    assert process.name.endswith("aggregate breakdown (not a timeline)")
    assert "not a timeline" in trace.metadata.clock
    slices = list(trace.iter_slices())
    assert len(slices) == 79
    run, rppc = slices[0], slices[1]
    assert (run.start, run.dur) == (0, 17_896_400)
    assert run.start <= rppc.start and rppc.end <= run.end
    at_depth_2 = {stat.name for stat in trace.stats if stat.depth == 2}
    ops = [s for s in slices if s.name in at_depth_2]
    assert len(ops) == 20
    assert all(a.end <= b.start for a, b in zip(ops, ops[1:], strict=False))  # side by side


def test_multi_thread_run_has_merged_then_per_thread_report():
    trace = traceconv.load(DATA / "static_mt_CPU_Default.txt")
    merged, per_thread = events(trace, 0), events(trace, 1)
    assert len(merged) == 23 and len(per_thread) == 174
    assert all(s.extra["view"] == "merged" and s.extra["thread"] is None for s in merged)
    # the per-thread report repeats the merged time: a section of its own
    assert {s.section for s in merged} == {"events"}
    assert {s.section for s in per_thread} == {"events per thread"}
    assert {s.extra["window"] for s in merged + per_thread} == {0}
    assert sorted({s.extra["thread"] for s in per_thread}) == list(range(1, 16))
    sched = next(s for s in merged if s.name == "default-0")
    assert trace.stats[sched.parent].name == "StandaloneExecutor::run"
    # overhead is printed only for the merged report
    assert {s.extra["report"] for s in trace.stats if s.section == "overhead"} == {0}


def test_log_with_two_windows_and_foreign_lines():
    trace = traceconv.load(DATA / "legacy_twice_combined_log.txt")
    assert trace.metadata.attributes["paddle.windows"] == 2
    tops = [s for s in trace.stats if s.section == "overhead" and s.name == "Total time"]
    assert [s.total_ns for s in tops] == [22_945_500, 17_457_600]
    assert trace.diagnostics.count("paddle_report.foreign_lines") == 11
    assert len(trace.processes) == 2


def test_place_all_columns_and_nan():
    trace = traceconv.load(DATA / "dygraph_All_Default.txt")
    conv = events(trace)[0]
    assert conv.name == "thread0::conv2d pybind_imperative_func"
    assert (conv.cpu_ns, conv.device_ns, conv.total_ns) == (13_420_174, 0, 13_420_200)
    gpu = traceconv.load(DATA / "legacy_GPU_Default.txt")
    rows = events(gpu)
    assert len(rows) == 22 and all(s.ratio is None and s.total_ns == 0 for s in rows)
    assert all(s.device_ns == 0 and s.cpu_ns is None for s in rows)
    split = [s for s in gpu.stats if s.section == "overhead" and s.parent is not None]
    assert [s.ratio for s in split] == [None, None]


def test_gpu_shapes_memcpy_reorder_overflow_memory():
    log, trace = paddle_report.parse((DATA / "gpu_before_report.txt").read_text())
    (report,) = log.reports
    assert [(m.name, m.calls) for m in report.memcpy] == [
        ("GpuMemcpy", 1200), ("GpuMemcpyAsync", 400), ("GpuMemcpySync", 800)]
    memcpy = [s for s in trace.stats if s.section == "memcpy"]
    first = trace.stats.index(memcpy[0])
    assert [s.parent for s in memcpy] == [None, first, first]
    rows = {r.name: r for r in report.events}
    assert rows["ext_reorder_conv"].reorder_marked and rows["ext_reorder_conv"].ratio == 0.00414938
    assert rows["fetch"].cpu_ms == 28528.321741 and rows["fetch"].gpu_ms == 0
    sync = rows["GpuMemcpySync:GPU->CPU"]
    assert report.events[sync.parent].name == "while" and sync.depth == 2
    (memory,) = log.memory
    assert [(m.event, m.alloc_calls, m.alloc_mb) for m in memory.rows] == [
        ("Place(gpu:0):conv2d/compute", 200, 12.5), ("Place(gpu:0):Unknown", 3, 0.000244141)]
    mem_stats = [s for s in trace.stats if s.section == "memory"]
    assert mem_stats[0].extra["alloc_bytes"] == 12.5 * (1 << 20)


def test_cells_that_touch_and_parallel_executor_overhead():
    text = "\n".join([
        "-" * 25 + ">     Profiling Report     <" + "-" * 25, "Place: All",
        "The Overhead Summary divides the cost of each event into framework overhead or",
        "computation time. OP1.time + OP2.time > ParallelExecutor::Run.time", "",
        "Elapsed time of events: 28528.3", "Accumulated time of events: 30000.5",
        "  Computation time       Total: 30000      Ratio: 105.158%",
        "  Framework overhead     Total: -1471.7    Ratio: -5.1584%", "",
        "Event  Calls  Total  CPU Time (Ratio)  GPU Time (Ratio)  Min.  Max.  Ave.  Ratio.",
        "thread0::ParallelExecutor::Run 1 28528.3 28528.321741 (1.000000)0.000000 (0.000000)"
        "28528.3 28528.3 28528.3 1",
        "  thread1::conv2d 1 -0.5 nan (nan) -nan (-nan) inf -inf nan -nan", ""])
    log, trace = paddle_report.parse(text)
    (report,) = log.reports
    assert report.overhead.parallel_executor and report.overhead.elapsed_ms == 28528.3
    assert report.overhead.accumulated_ms == 30000.5
    # accumulated > elapsed: ParallelExecutor's overhead goes negative
    assert (report.overhead.framework_ms, report.overhead.framework_ratio_pct) == (-1471.7,
                                                                                  -5.1584)
    top, child = report.events
    assert (top.cpu_ms, top.gpu_ms, top.min_ms) == (28528.321741, 0.0, 28528.3)
    assert child.thread == 1 and child.parent == 0 and child.cpu_ms is None


def test_name_that_fills_its_cell_touches_the_calls():
    header = "Event" + " " * 40 + "Calls       Total       Min.        Max.        Ave.        Ratio."
    row = ("        softmax_with_cross_entropy_grad0/prepare_data5           0.014251    "
           "0.002384    0.003495    0.0028502   0.00076474  ")
    digits = ("    conv2d110         1.1         0.1         0.12        0.11        0.5")
    text = "\n".join(["-" * 25 + ">     Profiling Report     <" + "-" * 25, "Place: CPU", "",
                      header, "thread0::run  1  2  2  2  2  1", row, digits, ""])
    log, _ = paddle_report.parse(text)
    rows = log.reports[0].events
    assert [(r.name, r.calls) for r in rows[1:]] == [
        ("softmax_with_cross_entropy_grad0/prepare_data", 5), ("conv2d1", 10)]


def test_older_layouts():
    trace = traceconv.load(DATA / "layout_2019_flat.txt")
    rows = events(trace)
    assert [(s.name, s.calls) for s in rows] == [
        ("thread0::conv2d_grad", 60), ("thread0::conv2d", 60),
        ("thread0::GpuMemcpySync:GPU->CPU", 120)]
    assert rows[2].total_ns == 95 and rows[2].max_ns == 1_234_570_000_000
    collapsed = (DATA / "layout_2020_fullpath_collapsed.txt").read_text()
    spaced = "\n".join(line.replace(" ", "    ") if line.startswith(("Event", "thread"))
                       else line for line in collapsed.splitlines())   # uncollapsed table
    for text in (collapsed, spaced):
        _, flat = paddle_report.parse(text)
        rows = events(flat)
        parents = [None if s.parent is None else flat.stats[s.parent].name for s in rows]
        assert parents == [None, "thread0::fetch", "thread0::fetch/fetch0", None, "thread0::mul"]
        assert rows[2].extra["path"] == "fetch/fetch0/GpuMemcpySync:GPU->CPU"
    flat = traceconv.load(DATA / "layout_2020_fullpath_collapsed.txt")
    (total,) = [s for s in flat.stats if s.name == "Total time"]
    assert total.total_ns == 31_500_000   # "Total time" without the section title


COLLAPSES = {
    "runs of spaces": lambda text: re.sub(r"[ \t]+", " ", text),
    "stripped lines": lambda text: "\n".join(" ".join(line.split())
                                            for line in text.splitlines()),
}


@pytest.mark.parametrize("collapse", COLLAPSES.values(), ids=COLLAPSES.keys())
@pytest.mark.parametrize("name", ["legacy_CPU_OpDetail.txt", "dygraph_All_Default.txt",
                                  "static_mt_CPU_Default.txt", "legacy_twice_combined_log.txt"])
def test_collapsed_whitespace_reads_the_same(name, collapse):
    text = (DATA / name).read_text()
    _, original = paddle_report.parse(text)
    _, collapsed = paddle_report.parse(collapse(text))

    def key(trace):
        return [(s.section, s.name, s.calls, s.total_ns, s.min_ns, s.max_ns, s.ratio,
                 s.cpu_ns, s.device_ns, s.parent, s.depth, s.extra.get("path"))
                for s in trace.stats]

    assert key(collapsed) == key(original)


def test_collapsed_nesting_that_names_cannot_tell_is_counted():
    # a memcpy re-parented under its op: after collapsing, only the row order is left
    text = (DATA / "gpu_before_report.txt").read_text()
    _, collapsed = paddle_report.parse(re.sub(" +", " ", text))
    assert collapsed.diagnostics.count("paddle_report.nesting_guessed") == 6
    rows = {s.name: s for s in collapsed.stats if s.section == "events"}
    assert collapsed.stats[rows["GpuMemcpySync:GPU->CPU"].parent].name == "while"


def test_sniff_is_precise():
    assert paddle_report.sniff(b"\n" + b"-" * 25 + b">     Profiling Report     <"
                               + b"-" * 25 + b"\n", None) > 0.9  # type: ignore[arg-type]
    assert paddle_report.sniff(b"Event Calls Total\nrun 1 2 3\n", None) == 0  # type: ignore[arg-type]


def test_not_a_report_is_one_clean_error(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("hello\n")
    with pytest.raises(traceconv.errors.TraceconvError):
        traceconv.load(path, format="paddle_report")


_LINES = (DATA / "legacy_CPU_OpDetail.txt").read_text().splitlines()
_junk = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c"
                              "\x1c\x1d\x1e\x85\u2028\u2029"), max_size=60)


def _table_lines(text: str) -> int:
    """Lines with a row's shape inside Event Summary tables, read the simple way. A table
    starts at its header, or outside one at a line with a whole row's shape (a name, calls
    and five numbers); a line has a row's shape when its first whole number after a name
    (the calls) starts at or right of the header's "Calls" (of that first row's calls),
    and is no remark (``#``, ``...``). A blank line ends the table unless the next line
    has a row's shape; a code fence ends it; other lines in it are no rows."""
    count, column, blank, seen = 0, None, False, 0
    for line in text.splitlines():
        calls = re.match(r"^\s*\S.*?\s(\d+)(?:\s|$)", line)
        shaped = column is not None and calls is not None and calls.start(1) >= column \
            and not re.match(r"\s*(?:#|\.\.\.|…)", line)
        if column is None and (whole := re.match(r"^\s*\S.*\s(\d+)(\s+[-+\d.e]+){5}\s*$", line)):
            column, blank, seen, shaped = whole.start(1), False, 0, True
        if re.match(r"^\s*Event\s+Calls\s+Total", line):
            column, blank, seen = line.index("Calls"), False, 0
        elif column is None:
            continue
        elif line.lstrip().startswith(("```", "~~~")):
            column = None
        elif not line.strip():
            blank = seen > 0
        elif blank and not shaped:
            column = None
        elif shaped:
            count, seen, blank = count + 1, seen + 1, False
        else:
            blank = False
    return count


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(0, len(_LINES)), chop=st.integers(0, 120), inserts=st.lists(st.tuples(
    st.integers(0, len(_LINES)), _junk), max_size=5), collapse=st.booleans())
def test_random_lines_truncation_and_collapse_never_raise(cut, chop, inserts, collapse):
    lines = list(_LINES[:cut])
    for at, junk in sorted(inserts, reverse=True):
        lines.insert(min(at, len(lines)), junk)
    if lines:
        lines[-1] = lines[-1][:chop]          # a tail cut in the middle of a line
    text = "\n".join(lines)
    if collapse:
        text = re.sub(" +", " ", text)
    parser = ReportParser()
    log = parser.parse_text(text)
    rows = sum(len(r.events) for r in log.reports)
    if not collapse:
        # every table line with a row's shape is a row or a counted, unreadable one (the
        # others are foreign lines, a note)
        assert rows + parser.diagnostics.count("paddle_report.unreadable_row") + \
            parser.diagnostics.count("paddle_report.cut_row") == \
            _table_lines(text)
    if not inserts and not collapse and cut == len(_LINES):
        assert rows == 79 and not parser.diagnostics.count("paddle_report.unreadable_row")


@pytest.mark.slow
def test_report_after_megabytes_of_log_output(tmp_path):
    noise = "".join(f"I1122 09:32:54.{i:06d} 13408 executor.cc:187] step {i}\n"
                    for i in range(20_000))                     # ~1.2 MB of glog lines
    path = tmp_path / "train.log"
    path.write_text(noise + (DATA / "legacy_CPU_OpDetail.txt").read_text())
    trace = traceconv.load(path)
    assert trace.metadata.source_format == "paddle-report"
    assert len(events(trace)) == 79
    assert trace.diagnostics.count("paddle_report.foreign_lines") == 20_000
